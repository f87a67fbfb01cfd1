"""Loading a backend's libraries: ``library("npu")`` loads CANN found by
``discovery.find_cann()``; ``library("sim")`` loads the simulator toolkit built from the
project's C sources. Both go through the same ``Library`` class and the same declarations
(``aclnn_py._ffi.ffi()``). The two cannot share a process: their libraries carry the same names
(``libascendcl.so``...), and the dynamic loader would bind one's dependencies to the other's.
"""

from __future__ import annotations

import functools
import os
import threading

from .. import sim
from .._ffi import ffi
from .._ffi.discovery import BackendUnavailable, Toolkit, find_cann, toolkit_at
from .library import Library

_lock = threading.Lock()
#: The loaded libraries by backend name (at most one): op calls look theirs up here first
#: (``ops/_dispatch.py``).
LOADED: dict[str, Library] = {}


def _toolkit(name: str) -> Toolkit:
    if name == "npu":
        return find_cann()
    if name == "sim":
        try:
            home = sim.home()
        except Exception as exc:
            raise BackendUnavailable(f"backend 'sim': {exc}") from exc
        toolkit, reason = toolkit_at(home, "aclnn_py.sim.home()")
        if toolkit is None:
            raise BackendUnavailable(f"backend 'sim': the simulator toolkit at {home} is incomplete: {reason}; "
                                     "rebuild it with `python -m aclnn_py.sim build`")
        return toolkit
    raise ValueError(f"backend {name!r} has no C libraries")


def library(name: str) -> Library:
    """The loaded libraries of backend ``name`` (``"npu"`` or ``"sim"``), loaded once."""
    lib = LOADED.get(name)
    if lib is not None:
        return lib
    with _lock:
        lib = LOADED.get(name)
        if lib is not None:
            return lib
        other = next(iter(LOADED), None)
        if other is not None:
            raise BackendUnavailable(
                f"backend {name!r} cannot be loaded: this process already loaded backend {other!r}, "
                "and both provide libascendcl.so/libnnopbase.so/libopapi.so; use one of them per process")
        toolkit = _toolkit(name)
        # The simulator-only API (aclsimGetCounters) is in libaclsim.so, which no CANN has.
        extra = (toolkit.lib_dir / "libaclsim.so",) if name == "sim" else ()
        try:
            lib = Library(name, toolkit, ffi(), extra)
        except OSError as exc:
            raise BackendUnavailable(f"backend {name!r}: loading {toolkit.home} failed: {exc}") from exc
        LOADED[name] = lib
        return lib


def _new_lock_in_child() -> None:
    """In a forked child, where only the forking thread runs: the lock another thread of the
    parent held at the fork (a first ``library()`` call loading a backend) would never be
    released, and the child's first call would wait for ever."""
    global _lock
    _lock = threading.Lock()


os.register_at_fork(after_in_child=_new_lock_in_child)


def loaded_backends() -> tuple[str, ...]:
    """The backends whose libraries this process has loaded (at most one)."""
    return tuple(LOADED)


@functools.lru_cache(maxsize=1)
def npu_present() -> bool:
    """True where CANN is found, loads, and reports at least one device."""
    try:
        find_cann()
        lib = library("npu")
        count = lib.ffi.new("uint32_t *")
        return bool(lib.fn("aclrtGetDeviceCount")(count) == 0 and count[0] > 0)
    except Exception:
        return False


__all__ = ["library", "loaded_backends", "npu_present"]
