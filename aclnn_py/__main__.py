"""``python -m aclnn_py {info,ops,selftest,bench}``: tools for a host with (or without) an NPU."""

from __future__ import annotations

import argparse
import importlib
import re
import sys

# subcommand -> (module of aclnn_py.tools, one-line help)
COMMANDS = {
    "info": ("info", "which backends are usable, what was found where, and how to fix what is missing"),
    "ops": ("ops", "every operator the toolkit's headers declare: its library, and whether the binding "
                   "can declare it (and why not)"),
    "selftest": ("selftest", "run every operator on representative cases and compare with a reference "
                             "(the first command on a new host)"),
    "bench": ("bench", "time one operator: warm-up, repeats, median/min/max (device time on npu/sim)"),
}


def plain(text: str | None) -> str:
    """A docstring as help text: reStructuredText's inline literals (````x````) and the ``::`` of
    literal blocks and *emphasis* are markup for a renderer, not for a terminal."""
    text = re.sub(r"``(.+?)``", r"\1", text or "")
    text = re.sub(r"(?<![\w*])\*(\w[^*\n]*?)\*(?![\w*])", r"\1", text)  # *emphasis*
    return re.sub(r"(\S)::$", r"\1:", re.sub(r"\s+::$", "", text, flags=re.M), flags=re.M)


def parser() -> argparse.ArgumentParser:
    from . import __version__

    top = argparse.ArgumentParser(prog="python -m aclnn_py",
                                  description="Tools for aclnn_py on a host with or without an NPU.")
    top.add_argument("--version", action="version", version=f"aclnn_py {__version__}")
    sub = top.add_subparsers(dest="command", metavar="{" + ",".join(COMMANDS) + "}")
    for name, (module, help_text) in COMMANDS.items():
        tool = importlib.import_module(f"aclnn_py.tools.{module}")
        p = sub.add_parser(name, help=help_text, description=plain(tool.__doc__),
                           formatter_class=argparse.RawDescriptionHelpFormatter)
        tool.add_arguments(p)
        p.epilog = plain(p.epilog) or None
        p.set_defaults(run=tool.run)
    return top


def main(argv: list[str] | None = None) -> int:
    top = parser()
    args = top.parse_args(argv)
    if args.command is None:
        top.print_help(sys.stderr)
        return 2
    status: int = args.run(args)
    return status


if __name__ == "__main__":
    sys.exit(main())
