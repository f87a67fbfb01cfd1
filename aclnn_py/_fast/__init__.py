"""The fast path of the per-call sequence, two native pieces built at install next to the
simulator where a C compiler exists (``build.py``):

* ``libaclnn_py_fast.so`` (``fastcall.c``), the helper: one aclnn call's device buffers,
  copies, descriptors, both phases, synchronisation and releases in a single cffi crossing
  (ABI mode: no Python headers, no CPython ABI). ``_convert/executor.py``'s ``Call`` describes a call
  to it when the call's arguments are new (the "no plan" path).
* ``_entry.abi3.so`` (``entry.c``, which compiles ``fastcall.c`` in), a CPython extension on
  the stable ABI of CPython 3.11+: the per-call entry of the five op functions (``planned``)
  and of ``aclnn_py.call``. It reads the Python arguments itself, finds the plan recorded for
  their geometry (a hash table keyed by everything the Python path's checks depend on) and runs
  it in one crossing; a new geometry goes through the Python path, which records its plan once
  the call succeeded.

Both take CANN's functions as the pointers the binding resolved from the libraries it loaded
(``FastApi``), so they run on real CANN exactly as on the simulator. Without them (no compiler
at install: ``ACLNN_PY_SKIP_SIM=1``; no Python headers: the extension alone is missing), or with
``ACLNN_PY_FAST=0`` in the environment, calls take the ABI-mode path of ``_convert/executor.py`` (one
cffi crossing per C call), with the same results and errors.
"""

from __future__ import annotations

import os
import platform
import sys
import threading
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn

from .._errors import AclnnError

HERE = Path(__file__).resolve().parent
LIBRARY = HERE / "libaclnn_py_fast.so"
ENTRY = HERE / "_entry.abi3.so"
ENV = "ACLNN_PY_FAST"

#: CANN's functions handed to the helper, in the order of its api_t.
API_FUNCTIONS = ("aclrtMalloc", "aclrtFree", "aclrtMemcpy", "aclrtMemset", "aclCreateTensor", "aclDestroyTensor",
                 "aclCreateIntArray", "aclDestroyIntArray", "aclCreateBoolArray", "aclDestroyBoolArray",
                 "aclDestroyAclOpExecutor", "aclrtSynchronizeStream", "aclCreateScalar", "aclDestroyScalar",
                 "aclCreateTensorList", "aclDestroyTensorList")

# Item kinds and failure stages of fastcall.c.
HOST_IN, HOST_OUT, POINTER, INT_ARRAY, BOOL_ARRAY, VALUE, HOST_INOUT, SCALAR, FLOAT_VALUE = 1, 2, 3, 4, 5, 6, 7, 8, 9
TENSOR_LIST, DEVICE_IN = 10, 11
MAX_ARGS, MAX_DIMS, MAX_ARRAY, MAX_FLOATS, MAX_LIST = 30, 8, 64, 8, 64
STAGE_API = {1: "aclrtMalloc", 2: "aclrtMemcpy", 3: "aclCreateTensor", 4: "aclCreateIntArray",
             5: "aclCreateBoolArray", 6: "aclrtMemset", 8: "aclrtMalloc", 10: "aclrtSynchronizeStream",
             11: "aclrtMemcpy", 13: "aclCreateScalar", 14: "aclCreateTensorList"}
AT_CREATE_TENSOR, AT_PHASE1, AT_PHASE2, AT_DESCRIPTION = 3, 7, 9, 12

ENTRY_VERSION = 12  # entry.c's: an entry built from other sources is not used
ABI_VERSION = 7  # fastcall.c's: a helper built from other sources is not used

_CDEF = """
int32_t aclnnpy_fast_abi_version(void);
int64_t aclnnpy_fast_call(const void *api, void *phase1, void *phase2, void *stream,
                          const int64_t *desc, int64_t desc_len, void *const *pointers);
typedef struct { int32_t launched; int32_t count; uint64_t nbytes; void *blocks[31]; } aclnnpy_deferred;
int64_t aclnnpy_fast_call_async(const void *api, void *phase1, void *phase2, void *stream,
                                const int64_t *desc, int64_t desc_len, void *const *pointers, aclnnpy_deferred *later);
"""

# The helper calls phase 1 through a prototype of 64-bit integer slots: sound on the ABIs where
# every pointer or integer argument travels as one such slot (fastcall.c's comment).
ABIS = {("linux", "x86_64"), ("linux", "aarch64")}

_lock = threading.Lock()
_state: list[tuple[Any, Any] | None] = []  # [(ffi, lib) or None], loaded once


def _new_lock_in_child() -> None:
    """A forked child's lock (``aclnn_py._ffi._new_locks_in_child``): a parent thread may have
    been loading the helper."""
    global _lock
    _lock = threading.Lock()


os.register_at_fork(after_in_child=_new_lock_in_child)


def enabled() -> bool:
    """Whether ``ACLNN_PY_FAST`` allows the fast path (unset or anything but 0/off/no)."""
    return os.environ.get(ENV, "1").strip().lower() not in ("0", "off", "no", "false")


def helper() -> tuple[Any, Any] | None:
    """``(ffi, lib)`` of the loaded helper, or None when it is not built or is disabled."""
    if _state:
        return _state[0]
    with _lock:
        if not _state:
            loaded = None
            if enabled() and (sys.platform, platform.machine()) in ABIS and LIBRARY.is_file():
                from .._ffi import new_ffi

                ffi = new_ffi()
                ffi.cdef(_CDEF)
                try:
                    library = ffi.dlopen(str(LIBRARY))
                    if getattr(library, "aclnnpy_fast_abi_version")() == ABI_VERSION:
                        loaded = (ffi, library)
                except (OSError, AttributeError):  # not a library, or one without the version
                    loaded = None
            _state.append(loaded)
    return _state[0]


def reset() -> None:
    """Forget the loaded state (tests: re-read ``ACLNN_PY_FAST``)."""
    with _lock:
        _state.clear()
        _entry_state.clear()
        _entry_problem.clear()


class _Miss:
    """The entry's answer when it has no plan: the call takes the Python path."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "MISS"


MISS = _Miss()
_entry_state: list[Any] = []  # [the set-up extension module, or None], loaded once
_entry_problem: list[str] = []  # why entry() found none to use (not built, or built from other sources)
REBUILD = "python -m aclnn_py._fast.build"


def describe() -> tuple[bool, str]:
    """Whether calls on npu and sim take the per-call entry, and what keeps them off it (with
    the fix): ``python -m aclnn_py info`` prints it.  Loads the entry as a call would."""
    if not enabled():
        return False, f"off: ${ENV}={os.environ.get(ENV)!r} (unset it to turn it on)"
    if (sys.platform, platform.machine()) not in ABIS:
        return False, f"not available on {sys.platform}/{platform.machine()} (the ABI-mode path runs instead)"
    if entry() is not None:
        return True, f"on ({ENTRY.name} built from these sources)"
    why = _entry_problem[-1] if _entry_problem else "the per-call entry could not be loaded"
    return False, f"off: {why}; build it with `{REBUILD}` (a C compiler and Python's headers)"


def entry() -> Any:
    """The per-call entry (the ``_entry`` extension, set up), or None where it is not built,
    is of other sources, or ``ACLNN_PY_FAST`` turns the fast path off."""
    if _entry_state:
        return _entry_state[0]
    with _lock:
        if not _entry_state:
            module = None
            if enabled() and (sys.platform, platform.machine()) in ABIS:
                try:
                    from . import _entry as module  # type: ignore[attr-defined, no-redef]
                except ImportError:
                    module = None
                    _entry_problem.append(f"the per-call entry {ENTRY.name} is not built")
                if module is not None and module.abi_version() != (ABI_VERSION, ENTRY_VERSION):
                    built = module.abi_version()
                    module = None
                    _entry_problem.append(f"{ENTRY.name} was built from other sources (versions {built}, these "
                                          f"sources {(ABI_VERSION, ENTRY_VERSION)})")
                    warnings.warn(f"aclnn_py: {_entry_problem[-1]}: calls take the slower ABI-mode path until it is "
                                  f"rebuilt with `{REBUILD}`", RuntimeWarning, stacklevel=2)
                if module is not None:
                    import numpy as np

                    from .._runtime.tensor import DeviceBuffer, Tensor

                    from .._runtime import library, queued

                    module.setup(np.ndarray, np.empty, address, failed, api_for, MISS, Tensor, device_done)
                    # device_done's common case done in C: the same entries in the same lists; the
                    # releases of the outputs it makes (outputs.c) off their common case: Python's
                    module.set_device_hooks(library.nothing, queued.blocking, queued.PACKAGE, queued.KEPT, library,
                                            Tensor.release_handle, DeviceBuffer.release_block, os,
                                            queued.BLOCKING.key)
                    module.set_state_type(library.ThreadStreams)
                    module.set_tensor_type(Tensor)
            _entry_state.append(module)
    return _entry_state[0]


def address(cdata: Any) -> int:
    """The address a cffi pointer or array holds (the entry caches it per object)."""
    return int(_address_ffi().cast("uintptr_t", cdata))


_ffi_for_addresses: list[Any] = []


def _address_ffi() -> Any:
    if not _ffi_for_addresses:
        from .._ffi import new_ffi

        _ffi_for_addresses.append(new_ffi())
    return _ffi_for_addresses[0]


def failed(lib: Any, op: str, result: int) -> NoReturn:
    """Raise the error the ABI-mode path raises for the helper's failure ``result`` (the status
    in the low 32 bits, the stage above them) of operator ``op`` on backend library ``lib``."""
    status, stage = result & 0xFFFFFFFF, result >> 32
    if status >= 2**31:
        status -= 2**32
    if stage == AT_PHASE1:
        raise AclnnError(status, f"{op}GetWorkspaceSize", lib.recent_error())
    if stage == AT_PHASE2:
        raise AclnnError(status, op, lib.recent_error())
    message = lib.recent_error()
    if stage == AT_CREATE_TENSOR and not message:
        message = "could not create a tensor"
    raise AclnnError(status, STAGE_API.get(stage, "aclnn_py fast path"), message)


def device_done(lib: Any, op: str, release: Callable[[], None] | None, nbytes: int, ok: bool) -> None:
    """After a device plan's phase 2 was launched (the entry calls it when it does not do this
    itself): ``release`` (the entry's release of the call's own device memory, ``nbytes`` of
    NumPy inputs' copies and workspace, or None) runs once the stream is past the call's work,
    and a call that succeeded is remembered for an error of that work (``Call.__exit__``'s
    rule on the Python path)."""
    if release is not None:
        lib.defer(release, nbytes)
    else:
        lib.mark_queued()
    if ok:
        lib.queued_call(op)


class FastApi:
    """One backend library's function table for the helper (made once per ``Library``)."""

    def __init__(self, lib: Any, ffi: Any, helper_lib: Any) -> None:
        self.ffi = ffi
        self.call = helper_lib.aclnnpy_fast_call
        self.call_async = helper_lib.aclnnpy_fast_call_async
        self.table = ffi.new("void *[]", [ffi.cast("void *", lib.ffi.cast("void *", lib.fn(n))) for n in API_FUNCTIONS])
        # op -> (phase1, phase2) as void *, and per phase-1 parameter "float", "double" or None
        # (any other), or None: not eligible
        self.ops: dict[str, tuple[Any, Any, tuple[str | None, ...]] | None] = {}

    def phases(self, lib: Any, op: str) -> tuple[Any, Any, tuple[str | None, ...]] | None:
        """The phase functions of ``op`` as ``void *`` and which of its phase-1 parameters are
        ``float`` or ``double``, when they are all pointers, integers or at most ``MAX_FLOATS``
        floats and doubles (the helper's calling convention), else None."""
        try:
            return self.ops[op]
        except KeyError:
            pass
        phase1 = lib.fn(f"{op}GetWorkspaceSize")
        phase2 = lib.fn(op)
        fn_type = lib.ffi.typeof(phase1)
        params = fn_type.args
        floats = tuple(t.cname if t.kind == "primitive" and t.cname in ("float", "double") else None for t in params)
        ok = (len(params) <= MAX_ARGS + 2 and not fn_type.ellipsis and _integral(fn_type.result)
              and sum(f is not None for f in floats) <= MAX_FLOATS
              and all(t.kind == "pointer" or (t.kind in ("primitive", "enum") and (_integral(t) or f is not None))
                      for t, f in zip(params, floats)))
        entry = (self.ffi.cast("void *", lib.ffi.cast("void *", phase1)),
                 self.ffi.cast("void *", lib.ffi.cast("void *", phase2)), floats) if ok else None
        self.ops[op] = entry
        return entry


def _integral(t: Any) -> bool:
    return t.kind == "enum" or (t.kind == "primitive" and t.cname not in ("float", "double", "long double"))


def api_for(lib: Any) -> FastApi | None:
    """The ``FastApi`` of backend library ``lib``, or None when the fast path is off."""
    known: FastApi | None | bool = getattr(lib, "fast_api", False)
    if known is not False:
        assert known is None or isinstance(known, FastApi)
        return known
    h = helper()
    api = None if h is None else FastApi(lib, h[0], h[1])
    lib.fast_api = api
    return api
