"""``python -m aclnn_py.sim home`` prints the toolkit home; ``... build`` compiles it."""

from __future__ import annotations

import sys

USAGE = """usage: python -m aclnn_py.sim {home,include,build} [options]

  home      print the simulator toolkit home (for ASCEND_HOME_PATH / ASCEND_CUSTOM_PATH)
  include   print the header directory
  build     compile the toolkit (see `python -m aclnn_py.sim build --help`)
"""


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] in ("-h", "--help"):
        print(USAGE, end="")
        return 0 if argv else 2
    command, rest = argv[0], argv[1:]
    if command == "build":
        from . import _build

        return _build.main(rest)
    if command in ("home", "include") and not rest:
        from . import SimNotBuiltError, home, include_dir

        try:
            print(home() if command == "home" else include_dir())
        except SimNotBuiltError as exc:
            print(exc, file=sys.stderr)
            return 1
        return 0
    print(USAGE, end="", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
