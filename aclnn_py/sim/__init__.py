"""The CANN-compatible CPU simulator: a toolkit home built from the C sources in ``src/``.

``home()`` is a directory laid out like an installed CANN toolkit (``include/``, ``lib64/``,
``set_env.sh``) whose libraries have CANN's names, symbols, signatures and status codes, so
the ``sim`` backend loads them through the same cffi path as the real ones and the official
C samples build and run against it unchanged.  The toolkit is compiled by ``pip install``
(see ``setup.py``) or by ``python -m aclnn_py.sim build``.

``$ACLNN_PY_SIM_HOME`` overrides the location (e.g. a toolkit built with ``--out``).
"""

from __future__ import annotations

import os
from typing import Any
from pathlib import Path

from . import _build

__all__ = ["SimNotBuiltError", "home", "include_dir", "libraries", "ensure_built"]

#: The CANN-named libraries a process loads, in dependency order (the runtime and nnopbase
#: names are filters of lib64/libaclsim.so, which holds the simulator's code and state).
LOAD_ORDER = ("libascendcl.so", "libnnopbase.so", "libopapi.so")


class SimNotBuiltError(RuntimeError):
    """The simulator toolkit has not been built (or is incomplete)."""


def _location() -> Path:
    env = os.environ.get("ACLNN_PY_SIM_HOME", "").strip()
    return Path(env) if env else _build.DEFAULT_HOME


def home() -> str:
    """The simulator's toolkit home (absolute path); raises ``SimNotBuiltError`` if not built."""
    where = _location()
    if not _build.is_built(where):
        missing = [n for n in _build.ALL_LIBRARIES if not (where / "lib64" / n).is_file()]
        raise SimNotBuiltError(
            f"aclnn_py: the CANN simulator is not built at {where} "
            f"(missing: {', '.join(missing) or 'include/'}). Build it with `python -m aclnn_py.sim build`"
            " or reinstall aclnn_py with a C compiler available (`pip install -e .` in its checkout; set"
            " $CC if the compiler is not `cc`)."
        )
    return str(where.resolve())


def ensure_built(**kwargs: Any) -> str:
    """Build the toolkit (at ``$ACLNN_PY_SIM_HOME`` or the package's ``toolkit/``) if it is
    missing or older than the sources, and return its home.  Needs a C compiler when it has
    to build; keyword arguments go to ``_build.build``."""
    return str(_build.build(_location(), **kwargs))


def libraries() -> dict[str, str]:
    """{file name: absolute path} of the CANN-named libraries a process loads, in load order."""
    lib64 = Path(home()) / "lib64"
    return {name: str(lib64 / name) for name in LOAD_ORDER}


def include_dir() -> str:
    """The header directory: the toolkit's ``include/``, or the binding's own headers (the
    same files; ``aclnn_py.get_include()``) where the toolkit has not been built."""
    where = _location() / "include"
    if (where / "acl" / "acl.h").is_file():
        return str(where.resolve())
    found = _build.source_include_dir()
    if found is None:
        raise SimNotBuiltError(f"aclnn_py: no headers found (looked in {where} and beside the package)")
    return str(found)
