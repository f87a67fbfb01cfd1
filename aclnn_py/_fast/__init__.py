"""The fast path of the per-call sequence: ``libaclnn_py_fast.so`` (``fastcall.c``), built at
install next to the simulator where a C compiler exists, does one aclnn call's device buffers,
copies, descriptors, both phases, synchronisation and releases in a single cffi crossing.

Why a helper library loaded by cffi's ABI mode rather than an API-mode extension: it needs
no Python headers and no CPython ABI (one build for every Python 3, the wheel stays
``py3-none``), and it takes CANN's functions as the pointers the binding already resolved
from the libraries it loaded, so it runs on real CANN exactly as on the simulator.

Without the library (no compiler at install: ``ACLNN_PY_SKIP_SIM=1``), or with
``ACLNN_PY_FAST=0`` in the environment, every call takes the ABI-mode path of
``aclnn_py/ops/_aclnn.py``.
"""

from __future__ import annotations

import os
import platform
import sys
import threading
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
LIBRARY = HERE / "libaclnn_py_fast.so"
ENV = "ACLNN_PY_FAST"

#: CANN's functions handed to the helper, in the order of its api_t.
API_FUNCTIONS = ("aclrtMalloc", "aclrtFree", "aclrtMemcpy", "aclrtMemset", "aclCreateTensor", "aclDestroyTensor",
                 "aclCreateIntArray", "aclDestroyIntArray", "aclCreateBoolArray", "aclDestroyBoolArray",
                 "aclDestroyAclOpExecutor", "aclrtSynchronizeStream")

# Item kinds and failure stages of fastcall.c.
HOST_IN, HOST_OUT, POINTER, INT_ARRAY, BOOL_ARRAY, VALUE = 1, 2, 3, 4, 5, 6
MAX_ARGS, MAX_DIMS, MAX_ARRAY = 30, 8, 64
STAGE_API = {1: "aclrtMalloc", 2: "aclrtMemcpy", 3: "aclCreateTensor", 4: "aclCreateIntArray",
             5: "aclCreateBoolArray", 6: "aclrtMemset", 8: "aclrtMalloc", 10: "aclrtSynchronizeStream",
             11: "aclrtMemcpy"}
AT_CREATE_TENSOR, AT_PHASE1, AT_PHASE2, AT_DESCRIPTION = 3, 7, 9, 12

ABI_VERSION = 1  # fastcall.c's: a helper built from other sources is not used

_CDEF = """
int32_t aclnnpy_fast_abi_version(void);
int64_t aclnnpy_fast_call(const void *api, void *phase1, void *phase2, void *stream,
                          const int64_t *desc, int64_t desc_len, void *const *pointers);
"""

# The helper calls phase 1 through a prototype of 64-bit integer slots: sound on the ABIs where
# every pointer or integer argument travels as one such slot (fastcall.c's comment).
ABIS = {("linux", "x86_64"), ("linux", "aarch64")}

_lock = threading.Lock()
_state: list[tuple[Any, Any] | None] = []  # [(ffi, lib) or None], loaded once


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
                import cffi

                ffi = cffi.FFI()
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


class FastApi:
    """One backend library's function table for the helper (made once per ``Library``)."""

    def __init__(self, lib: Any, ffi: Any, helper_lib: Any) -> None:
        self.ffi = ffi
        self.call = helper_lib.aclnnpy_fast_call
        self.table = ffi.new("void *[]", [ffi.cast("void *", lib.ffi.cast("void *", lib.fn(n))) for n in API_FUNCTIONS])
        self.ops: dict[str, tuple[Any, Any] | None] = {}  # op -> (phase1, phase2) as void *, or None: not eligible

    def phases(self, lib: Any, op: str) -> tuple[Any, Any] | None:
        """The phase functions of ``op`` as ``void *`` when its phase-1 parameters are all
        pointers or integers (the helper's calling convention), else None."""
        try:
            return self.ops[op]
        except KeyError:
            pass
        phase1 = lib.fn(f"{op}GetWorkspaceSize")
        phase2 = lib.fn(op)
        fn_type = lib.ffi.typeof(phase1)
        params = fn_type.args
        ok = (len(params) <= MAX_ARGS + 2 and not fn_type.ellipsis and _integral(fn_type.result)
              and all(t.kind == "pointer" or (t.kind in ("primitive", "enum") and _integral(t)) for t in params))
        entry = (self.ffi.cast("void *", lib.ffi.cast("void *", phase1)),
                 self.ffi.cast("void *", lib.ffi.cast("void *", phase2))) if ok else None
        self.ops[op] = entry
        return entry


def _integral(t: Any) -> bool:
    return t.kind == "enum" or (t.kind == "primitive" and t.cname not in ("float", "double", "long double"))


def api_for(lib: Any) -> FastApi | None:
    """The ``FastApi`` of backend library ``lib``, or None when the fast path is off."""
    known: FastApi | None | bool = getattr(lib, "_fast_api", False)
    if known is not False:
        assert known is None or isinstance(known, FastApi)
        return known
    h = helper()
    api = None if h is None else FastApi(lib, h[0], h[1])
    lib._fast_api = api
    return api
