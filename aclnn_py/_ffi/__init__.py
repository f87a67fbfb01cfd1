"""The cffi layer (ABI mode), the package's lowest: declarations read from include/
(``ffi()``, ``constants_ffi()``), toolkit discovery, ELF and operator-header reading, custom
operator packages. It imports nothing of the package but the simulator's build module; loading
a backend's libraries is ``aclnn_py._runtime.loader``'s.
"""

from __future__ import annotations

import functools
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


__all__ = ["constants_ffi", "ffi"]
