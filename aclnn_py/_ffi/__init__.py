"""The cffi layer (ABI mode), the package's lowest: declarations read from include/
(``ffi()``, ``constants_ffi()``), toolkit discovery, ELF and operator-header reading, custom
operator packages. It imports nothing of the package but the simulator's build module; loading
a backend's libraries is ``aclnn_py._runtime.loader``'s.
"""

from __future__ import annotations

import functools
import os
import sys
import threading
import weakref
from typing import TYPE_CHECKING

from .declarations import constants_cdef, include_dir, read_cdef

if TYPE_CHECKING:
    from cffi import FFI


#: Every ``cffi.FFI`` the package has made (``new_ffi``): a forked child renews their locks.
_made: weakref.WeakSet[FFI] = weakref.WeakSet()


def new_ffi() -> FFI:
    """A new ``cffi.FFI``: the package makes each of its FFI objects here, so that a forked
    child can renew its lock (``_new_locks_in_child``)."""
    import cffi

    f = cffi.FFI()
    _made.add(f)
    return f


@functools.lru_cache(maxsize=1)
def ffi() -> FFI:
    """The one ``cffi.FFI`` holding every declaration of the binding's headers (``include_dir()``)."""
    f = new_ffi()
    f.cdef(read_cdef(include_dir()))
    return f


@functools.lru_cache(maxsize=1)
def constants_ffi() -> FFI:
    """A ``cffi.FFI`` of the same headers' integer constants only (``#define`` lines and enums):
    what ``aclnn_py._constants`` reads at import, for a fraction of ``ffi()``'s parsing."""
    f = new_ffi()
    f.cdef(constants_cdef(read_cdef(include_dir())))
    return f


def _new_locks_in_child() -> None:
    """In a forked child, where only the forking thread runs: cffi parses declarations and C
    types (a type string's first use: ``ffi.new("float *")``) under a lock of the FFI object
    and a lock of its parser module that every FFI shares, either of which another thread of
    the parent may have held at the fork (it would never be released, and the child's next
    parse would wait for ever: ``scripts/fuzz.py --seed 2911`` found a child stuck so in its
    first BatchNormBackward call)."""
    for made in list(_made):
        made._lock = threading.Lock()  # type: ignore[attr-defined]
    parser = sys.modules.get("cffi.cparser")
    if parser is not None and getattr(parser, "lock", None) is not None:
        parser.lock = threading.Lock()  # type: ignore[attr-defined]


os.register_at_fork(after_in_child=_new_locks_in_child)


__all__ = ["constants_ffi", "ffi", "new_ffi"]
