"""Backend selection: ``npu`` (real CANN), ``sim`` (the C simulator), ``numpy`` (pure NumPy).

Precedence, highest first: the ``backend=`` keyword of an op call, the innermost
``use_backend(...)`` block of the current thread/task, ``set_backend(...)``, the
``ACLNN_PY_BACKEND`` environment variable, and finally the automatic default (``npu`` where
CANN and a device are found, else ``numpy``). ``sim`` is never chosen automatically.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator

from typing import TYPE_CHECKING

from .._environ import Setting
from .._errors import ACLNN_ERR_PARAM_INVALID, AclnnError
from . import loader

if TYPE_CHECKING:
    from .library import Library

BACKENDS = ("npu", "sim", "numpy")
ENV_VAR = "ACLNN_PY_BACKEND"

_chosen: str | None = None
_scoped: contextvars.ContextVar[str | None] = contextvars.ContextVar("aclnn_py_backend", default=None)
_auto: str | None = None
_env = Setting(ENV_VAR, str)  # read on every call without backend=: parsed only when it changes


def _check_name(name: object, where: str) -> str:
    if not isinstance(name, str):
        raise TypeError(f"{where}: backend must be a str, one of {BACKENDS}, got {type(name).__name__}")
    if name not in BACKENDS:
        raise ValueError(f"{where}: unknown backend {name!r}; expected one of {BACKENDS}")
    return name


def _automatic() -> str:
    global _auto
    if _auto is None:
        _auto = "npu" if loader.npu_present() else "numpy"
    return _auto


def get_backend() -> str:
    """The backend an op call without ``backend=`` runs on in this thread/task."""
    scoped = _scoped.get()
    if scoped is not None:
        return scoped
    if _chosen is not None:
        return _chosen
    env = _env.get()
    if env:
        return _check_name(env, f"environment variable {ENV_VAR}")
    return _automatic()


def set_backend(name: str) -> None:
    """Make ``name`` the process-wide default backend (``use_backend`` blocks still win)."""
    global _chosen
    _chosen = _check_name(name, "set_backend")


@contextlib.contextmanager
def use_backend(name: str) -> Iterator[str]:
    """Run the block's op calls on ``name`` (scoped to this thread / asyncio task)."""
    token = _scoped.set(_check_name(name, "use_backend"))
    try:
        yield name
    finally:
        _scoped.reset(token)


def resolve(backend: str | None) -> str:
    """The backend for one call: the ``backend=`` keyword if given, else ``get_backend()``."""
    if backend is None:
        return get_backend()
    return _check_name(backend, "backend=")


def device_library(backend: str | None) -> Library:
    """The loaded libraries of the backend a device object (``Tensor``, ``IntArray``...) is
    made on; AclnnError 161002 on numpy, which has no device."""
    name = resolve(backend)
    if name == "numpy":
        raise AclnnError(ACLNN_ERR_PARAM_INVALID, "aclnn_py.Tensor",
                         "device tensors need backend 'npu' or 'sim' (the current backend is 'numpy')")
    return loader.library(name)
