"""Compile the fast path: the helper library ``aclnn_py/_fast/libaclnn_py_fast.so`` and the
per-call entry, the CPython extension ``aclnn_py/_fast/_entry.abi3.so``.

Standard library only and free of package-relative imports: ``setup.py`` loads this file by
path (as it loads ``aclnn_py/sim/_build.py``), inside pip's isolated build environment. The
helper includes no Python or CANN header and links nothing: the binding loads it with cffi's
ABI mode and hands it CANN's function pointers, so one build serves every Python 3 and both
backends. The extension compiles the same ``fastcall.c`` into ``entry.c`` against the stable
ABI of CPython 3.11 (``Py_LIMITED_API``), so one build serves CPython 3.11 and later; it needs
the Python headers of the interpreter running the build (``sysconfig``'s include directory),
and is skipped with a warning where they are missing. ``python -m aclnn_py._fast.build``
rebuilds both by hand.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

HERE = Path(__file__).resolve().parent
SOURCE = "fastcall.c"
LIBRARY = "libaclnn_py_fast.so"
ENTRY_SOURCE = "entry.c"
#: The extension's file name: the stable ABI's suffix, which CPython 3.11+ imports.
ENTRY = "_entry.abi3.so"
CFLAGS = ("-std=c11", "-O2", "-fPIC", "-shared", "-fvisibility=hidden", "-Wall", "-Wextra")


class FastBuildError(RuntimeError):
    """The helper could not be compiled."""


def _compiler() -> list[str]:
    cc = os.environ.get("CC", "").strip()
    argv = shlex.split(cc) if cc else ["cc"]
    if shutil.which(argv[0]) is None:
        raise FastBuildError(f"aclnn_py: no C compiler ({argv[0]!r} not found) for the fast path")
    return argv


def _compile(argv: list[str], out: Path, what: str) -> Path:
    tmp = out.with_name(out.name + ".tmp")
    cmd = argv + ["-o", str(tmp)]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise FastBuildError(f"aclnn_py: compiling {what} failed (exit {proc.returncode}).\n"
                             f"command: {' '.join(shlex.quote(a) for a in cmd)}\n{proc.stderr.strip()}")
    os.replace(tmp, out)
    return out


def build(out_dir: str | os.PathLike[str] = HERE, *, src_dir: str | os.PathLike[str] = HERE,
          werror: bool = False) -> Path:
    """Compile ``src_dir/fastcall.c`` into ``out_dir/libaclnn_py_fast.so``; returns its path."""
    argv = _compiler() + list(CFLAGS) + (["-Werror"] if werror else []) + [str(Path(src_dir) / SOURCE)]
    return _compile(argv, Path(out_dir) / LIBRARY, "the fast path")


def build_entry(out_dir: str | os.PathLike[str] = HERE, *, src_dir: str | os.PathLike[str] = HERE,
                werror: bool = False, include: str | None = None) -> Path:
    """Compile ``src_dir/entry.c`` (which includes ``fastcall.c``) into ``out_dir/_entry.abi3.so``
    against the Python headers at ``include`` (default: this interpreter's); returns its path."""
    include = include or sysconfig.get_paths()["include"]
    if not (Path(include) / "Python.h").is_file():
        raise FastBuildError(f"aclnn_py: no Python.h in {include} (install the Python development headers) "
                             "for the fast path's entry")
    argv = (_compiler() + list(CFLAGS) + (["-Werror"] if werror else [])
            + [f"-I{include}", f"-I{src_dir}", str(Path(src_dir) / ENTRY_SOURCE)])
    return _compile(argv, Path(out_dir) / ENTRY, "the fast path's entry")


if __name__ == "__main__":
    werror = "--werror" in sys.argv[1:]
    try:
        print(build(werror=werror))
        print(build_entry(werror=werror))
    except FastBuildError as exc:
        print(exc, file=sys.stderr)
        sys.exit(1)
