"""The cffi layer (ABI mode), the package's lowest: declarations read from include/
(``ffi()``, ``constants_ffi()``), toolkit discovery, ELF and operator-header reading, custom
operator packages. It imports nothing of the package but the simulator's build module; loading
a backend's libraries is ``aclnn_py._runtime.loader``'s.
"""

from __future__ import annotations

import functools
import os
import threading
from typing import TYPE_CHECKING

from .declarations import constants_cdef, include_dir, read_cdef

if TYPE_CHECKING:
    from cffi import FFI


@functools.lru_cache(maxsize=1)
def ffi() -> FFI:
    """The one ``cffi.FFI`` holding every declaration of the binding's headers (``include_dir()``)."""
    import cffi

    f = cffi.FFI()
    f.cdef(read_cdef(include_dir()))
    return f


@functools.lru_cache(maxsize=1)
def constants_ffi() -> FFI:
    """A ``cffi.FFI`` of the same headers' integer constants only (``#define`` lines and enums):
    what ``aclnn_py._constants`` reads at import, for a fraction of ``ffi()``'s parsing."""
    import cffi

    f = cffi.FFI()
    f.cdef(constants_cdef(read_cdef(include_dir())))
    return f


def _new_locks_in_child() -> None:
    """In a forked child, where only the forking thread runs: cffi parses declarations and C
    types under a lock of the FFI object, which another thread of the parent may have held at
    the fork (it would never be released, and the child's next parse would wait for ever)."""
    for made in (ffi, constants_ffi):
        if made.cache_info().currsize:
            made()._lock = threading.Lock()  # type: ignore[attr-defined]


os.register_at_fork(after_in_child=_new_locks_in_child)


__all__ = ["constants_ffi", "ffi"]
