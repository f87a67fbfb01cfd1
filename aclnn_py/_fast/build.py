"""Compile the fast path's helper library, ``aclnn_py/_fast/libaclnn_py_fast.so``.

Standard library only and free of package-relative imports: ``setup.py`` loads this file by
path (as it loads ``aclnn_py/sim/_build.py``), inside pip's isolated build environment. The
library includes no Python or CANN header and links nothing: the binding loads it with cffi's
ABI mode and hands it CANN's function pointers, so one build serves every Python 3 and both
backends. ``python -m aclnn_py._fast.build`` rebuilds it by hand.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
SOURCE = "fastcall.c"
LIBRARY = "libaclnn_py_fast.so"
CFLAGS = ("-std=c11", "-O2", "-fPIC", "-shared", "-fvisibility=hidden", "-Wall", "-Wextra")


class FastBuildError(RuntimeError):
    """The helper could not be compiled."""


def build(out_dir: str | os.PathLike[str] = HERE, *, src_dir: str | os.PathLike[str] = HERE,
          werror: bool = False) -> Path:
    """Compile ``src_dir/fastcall.c`` into ``out_dir/libaclnn_py_fast.so``; returns its path."""
    cc = os.environ.get("CC", "").strip()
    argv = shlex.split(cc) if cc else ["cc"]
    if shutil.which(argv[0]) is None:
        raise FastBuildError(f"aclnn_py: no C compiler ({argv[0]!r} not found) for the fast path")
    out = Path(out_dir) / LIBRARY
    tmp = out.with_name(out.name + ".tmp")
    cmd = argv + list(CFLAGS) + (["-Werror"] if werror else []) + ["-o", str(tmp), str(Path(src_dir) / SOURCE)]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise FastBuildError(f"aclnn_py: compiling the fast path failed (exit {proc.returncode}).\n"
                             f"command: {' '.join(shlex.quote(a) for a in cmd)}\n{proc.stderr.strip()}")
    os.replace(tmp, out)
    return out


if __name__ == "__main__":
    try:
        print(build(werror="--werror" in sys.argv[1:]))
    except FastBuildError as exc:
        print(exc, file=sys.stderr)
        sys.exit(1)
