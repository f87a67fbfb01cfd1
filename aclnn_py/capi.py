"""The low-level mirror of the C API: every aclnn entry point and the runtime calls the
official samples use, under their C names and in their C parameter order, on the current
backend (``npu`` or ``sim``).

How the mirror differs from C:

* A failing status raises ``AclnnError`` (``.status``, ``.api``, ``.message`` = the
  ``aclGetRecentErrMsg()`` text) instead of being returned; success returns ``None`` or the
  outputs. ``aclInit`` returns the status instead when it is ``ACL_ERROR_REPEAT_INITIALIZE``
  (100002), which CANN's own callers treat as success.
* Output parameters are returned, not passed: ``aclrtCreateStream() -> stream``,
  ``aclrtMalloc(size, policy) -> devPtr``, ``aclrtGetDeviceCount() -> count``,
  ``aclrtEventElapsedTime(start, end) -> ms``, and every
  ``aclnnXxxGetWorkspaceSize(...) -> (workspace_size, executor)``.
* Arrays are Python sequences and their lengths are implied: ``aclCreateTensor(viewDims,
  dataType, stride, offset, format, storageDims, tensorData)``, ``aclCreateIntArray(values)``,
  ``aclCreateBoolArray(values)``. ``stride=None`` means contiguous.
* Host buffers are NumPy arrays (or any C-contiguous buffer): ``aclrtMemcpy(dst, destMax,
  src, count, kind)`` takes one on the host side and a device pointer (as returned by
  ``aclrtMalloc``, or an int address where ``kind`` makes that side device memory) on the
  other. A host buffer smaller than ``destMax`` / ``count``, or a read-only destination, is
  refused before the library runs (``ValueError`` / ``TypeError``); so are sizes that are not
  ``size_t`` and views (``aclCreateTensor``) reaching outside their storage.
* Anywhere a handle is expected, the owning wrappers of ``aclnn_py._runtime.tensor`` (``Tensor``,
  ``IntArray``, ``BoolArray``, ...) are accepted too; ``None`` is NULL.
* Handles created here are raw: release them with the matching ``aclDestroy*`` /
  ``aclrtFree`` exactly as in C (the owning wrappers do it for you).

Every other function of the runtime and nnopbase headers (``acl/acl_rt.h``, ``acl/acl_base_rt.h``,
``aclnn/acl_meta.h``, ``aclnn/aclnn_base.h``: CANN 9.1.0's 417 in all) is mirrored *raw*: same
name, C parameters in C order, passed to cffi as given (ints, ``None`` for NULL, cdata; make
output parameters with ``capi.new("aclrtStreamStatus *")`` and read ``p[0]``). A function that
returns ``aclError`` raises ``AclnnError`` on a non-zero status and returns ``None``; any other
returns the C value.

Operators beyond the five whose headers aclnn_py ships (``capi.aclnnAddGetWorkspaceSize``...)
are declared when first used from the installed toolkit's own ``include/aclnnop/`` header
(cffi's ABI mode needs the prototype) and fail with ``AclnnError`` 200001 naming the function
where no header declares it or no library exports it.

The binding itself initialises the runtime lazily for the high-level API. ``aclInit`` and
``aclFinalize`` called here are seen by it: after ``aclFinalize`` the backend is unusable
for the rest of the process, as in CANN.
"""

from __future__ import annotations

import inspect
import numbers
import operator
import re
from collections.abc import Sequence
from typing import Any, TypeAlias

import numpy as np

from ._runtime import backend as _backend
from ._dtypes import aclDataType, aclFormat, to_numpy
# (each ``X as X``: also the mirror's own names, as in C)
from ._constants import (ACL_MEM_MALLOC_HUGE_FIRST as ACL_MEM_MALLOC_HUGE_FIRST,
                         ACL_MEM_MALLOC_HUGE_ONLY as ACL_MEM_MALLOC_HUGE_ONLY,
                         ACL_MEM_MALLOC_NORMAL_ONLY as ACL_MEM_MALLOC_NORMAL_ONLY,
                         ACL_MEMCPY_DEFAULT as ACL_MEMCPY_DEFAULT,
                         ACL_MEMCPY_DEVICE_TO_DEVICE as ACL_MEMCPY_DEVICE_TO_DEVICE,
                         ACL_MEMCPY_DEVICE_TO_HOST as ACL_MEMCPY_DEVICE_TO_HOST,
                         ACL_MEMCPY_HOST_TO_DEVICE as ACL_MEMCPY_HOST_TO_DEVICE,
                         ACL_MEMCPY_HOST_TO_HOST as ACL_MEMCPY_HOST_TO_HOST, ACL_SUCCESS as ACL_SUCCESS)
from ._ffi.prototypes import prototypes, python_type as _python_type
from ._errors import ACL_ERROR_REPEAT_INITIALIZE, ACLNN_ERR_PARAM_INVALID, AclnnError
from .ops._registry import operators as _operators
from ._convert.arrays import BoolArray, FloatArray, IntArray
from ._runtime.tensor import _contiguous, _dims, _index, check_view
from ._convert.values import scalar_value

CData: TypeAlias = Any
"""A raw cffi pointer: a handle, or device memory."""
Memory: TypeAlias = Any
"""Host memory (a NumPy array or any C-contiguous buffer), or a device pointer (``CData``, or an
int address where the copy kind makes that side device memory)."""

globals().update({m.name: int(m) for m in aclDataType})
globals().update({m.name: int(m) for m in aclFormat})


def _lib():
    from ._runtime import loader

    name = _backend.get_backend()
    if name == "numpy":
        raise AclnnError(ACLNN_ERR_PARAM_INVALID, "aclnn_py.capi",
                         "the C-API mirror needs backend 'npu' or 'sim'; the current backend is 'numpy' "
                         "(set ACLNN_PY_BACKEND=sim, or aclnn_py.set_backend('sim'))")
    return loader.library(name)


def _h(value):
    """A raw handle from a wrapper, a cdata, or None (NULL)."""
    if value is None:
        return _lib().ffi.NULL
    return getattr(value, "handle", value)


def _size(api: str, name: str, value) -> int:
    """A ``size_t`` argument: an int in [0, 2**64) (TypeError / ValueError naming it, not
    cffi's OverflowError)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{api}: {name} must be an int, got {type(value).__name__}")
    v = operator.index(value)
    if not 0 <= v < 2**64:
        raise ValueError(f"{api}: {name} = {v} must be in [0, 2**64) (a size_t)")
    return v


# (dst, src) is device memory, for the copy kinds that say so; any other kind (DEFAULT, or one
# the runtime infers or rejects) may take host memory on either side.
_DEVICE_SIDES = {ACL_MEMCPY_HOST_TO_HOST: (False, False), ACL_MEMCPY_HOST_TO_DEVICE: (True, False),
                 ACL_MEMCPY_DEVICE_TO_HOST: (False, True), ACL_MEMCPY_DEVICE_TO_DEVICE: (True, True)}


def _memory_ptr(lib, api: str, name: str, value, nbytes: int, what: str, *, writable: bool, device: bool):
    """The C pointer for a memory argument of a copy.

    Host memory is given as a Python object (NumPy array, ``bytearray``, any buffer): it must
    be C-contiguous, hold at least ``nbytes`` bytes (``what`` names the size parameter) and, as
    a destination, be writable. Device pointers are cdata (as ``aclrtMalloc`` returns them) or,
    where ``device`` (the copy kind says this side is device memory), an int address (e.g. a
    torch_npu ``data_ptr()``); the library checks device ranges. An int is refused where the
    side may be host memory: its size could not be checked."""
    if value is None:
        return lib.ffi.NULL
    if isinstance(value, lib.ffi.CData):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        if value == 0:
            return lib.ffi.NULL
        if not device:
            raise TypeError(f"{api}: {name} is an int address, accepted only where the copy kind makes it device "
                            "memory; pass host memory as the NumPy array or buffer itself (its size is checked)")
        if not 0 < value < 2**64:
            raise ValueError(f"{api}: {name} = {value} is not an address")
        return lib.ffi.cast("void *", value)
    try:
        view = memoryview(value)
    except TypeError:
        raise TypeError(f"{api}: {name} must be a NumPy array, a buffer or a device pointer, "
                        f"got {type(value).__name__}") from None
    with view:
        if not view.c_contiguous:
            raise TypeError(f"{api}: host memory {name} must be C-contiguous")
        if writable and view.readonly:
            raise TypeError(f"{api}: host {name} ({type(value).__name__}) is read-only; "
                            "the destination must be writable")
        if nbytes > view.nbytes:
            raise ValueError(f"{api}: {what} = {nbytes} exceeds the {view.nbytes} bytes of host {name}")
    return lib.ffi.from_buffer(value, require_writable=writable)


def _copy_args(lib, api: str, dst, destMax, src, count, kind):
    destMax = _size(api, "destMax", destMax)
    count = _size(api, "count", count)
    kind = _c_int(api, "kind", kind, enum=True)
    dst_device, src_device = _DEVICE_SIDES.get(kind, (False, False))
    # The library writes count bytes after checking count <= destMax, so a host dst must hold
    # destMax bytes (what the caller claims it has room for); a host src must hold count.
    return (_memory_ptr(lib, api, "dst", dst, destMax, "destMax", writable=True, device=dst_device), destMax,
            _memory_ptr(lib, api, "src", src, count, "count", writable=False, device=src_device), count, kind)


def _call(lib, api: str, *args) -> None:
    """``lib.call``, with cffi's OverflowError for an argument its C type cannot hold turned
    into a ValueError naming the function (the mirror passes the caller's values through)."""
    try:
        lib.call(api, *args)
    except OverflowError as exc:
        raise ValueError(f"{api}: an argument does not fit its C parameter type ({exc})") from None


def _out(ctype: str, api: str, *args):
    lib = _lib()
    p = lib.ffi.new(ctype)
    _call(lib, api, *args, p)
    return p[0]


# -- runtime ---------------------------------------------------------------------------------

def aclInit(configPath: str | None = None) -> int:
    lib = _lib()
    status = lib.fn("aclInit")(configPath.encode() if configPath else lib.ffi.NULL)
    if status not in (0, ACL_ERROR_REPEAT_INITIALIZE):
        lib.check(status, "aclInit")
    lib.note_external_init()
    return status


def aclFinalize() -> None:
    lib = _lib()
    _call(lib, "aclFinalize")
    lib.note_external_finalize()


def aclGetRecentErrMsg() -> str:
    return _lib().recent_error()


def aclrtSetDevice(deviceId: int) -> None:
    _call(_lib(), "aclrtSetDevice", deviceId)


def aclrtResetDevice(deviceId: int) -> None:
    _call(_lib(), "aclrtResetDevice", deviceId)


def aclrtGetDevice() -> int:
    return _out("int32_t *", "aclrtGetDevice")


def aclrtGetDeviceCount() -> int:
    return _out("uint32_t *", "aclrtGetDeviceCount")


def aclrtGetSocName() -> str:
    lib = _lib()
    p = lib.fn("aclrtGetSocName")()
    return "" if p == lib.ffi.NULL else lib.ffi.string(p).decode()


def aclrtCreateContext(deviceId: int) -> CData:
    lib = _lib()
    p = lib.ffi.new("aclrtContext *")
    _call(lib, "aclrtCreateContext", p, deviceId)
    return p[0]


def aclrtDestroyContext(context: CData) -> None:
    _call(_lib(), "aclrtDestroyContext", context)


def aclrtSetCurrentContext(context: CData) -> None:
    _call(_lib(), "aclrtSetCurrentContext", context)


def aclrtGetCurrentContext() -> CData:
    return _out("aclrtContext *", "aclrtGetCurrentContext")


def aclrtCreateStream() -> CData:
    return _out("aclrtStream *", "aclrtCreateStream")


def aclrtDestroyStream(stream: CData) -> None:
    _call(_lib(), "aclrtDestroyStream", stream)


def aclrtSynchronizeStream(stream: CData) -> None:
    _call(_lib(), "aclrtSynchronizeStream", stream)


def aclrtSynchronizeDevice() -> None:
    _call(_lib(), "aclrtSynchronizeDevice")


def aclrtMalloc(size: int, policy: int = ACL_MEM_MALLOC_HUGE_FIRST) -> CData:
    lib = _lib()
    p = lib.ffi.new("void **")
    _call(lib, "aclrtMalloc", p, _size("aclrtMalloc", "size", size),
          _c_int("aclrtMalloc", "policy", policy, enum=True))
    return p[0]


def aclrtFree(devPtr: CData) -> None:
    _call(_lib(), "aclrtFree", devPtr)


def aclrtMallocHost(size: int) -> CData:
    lib = _lib()
    p = lib.ffi.new("void **")
    _call(lib, "aclrtMallocHost", p, _size("aclrtMallocHost", "size", size))
    return p[0]


def aclrtFreeHost(hostPtr: CData) -> None:
    _call(_lib(), "aclrtFreeHost", hostPtr)


def aclrtMemcpy(dst: Memory, destMax: int, src: Memory, count: int, kind: int) -> None:
    """Host memory (``dst``/``src``) is checked against ``destMax``/``count`` (see ``_memory_ptr``)."""
    lib = _lib()
    _call(lib, "aclrtMemcpy", *_copy_args(lib, "aclrtMemcpy", dst, destMax, src, count, kind))


def aclrtMemcpyAsync(dst: Memory, destMax: int, src: Memory, count: int, kind: int, stream: CData) -> None:
    """As ``aclrtMemcpy``; the host memory must stay alive until the stream is synchronised."""
    lib = _lib()
    _call(lib, "aclrtMemcpyAsync", *_copy_args(lib, "aclrtMemcpyAsync", dst, destMax, src, count, kind), _h(stream))


def aclrtMemset(devPtr: CData | int, maxCount: int, value: int, count: int) -> None:
    """``devPtr`` is device memory (the library checks its range); host objects are refused."""
    lib = _lib()
    _call(lib, "aclrtMemset", _device_ptr(lib, "aclrtMemset", "devPtr", devPtr),
             _size("aclrtMemset", "maxCount", maxCount), _c_int("aclrtMemset", "value", value),
             _size("aclrtMemset", "count", count))


def _c_int(api: str, name: str, value, *, enum: bool = False) -> int:
    """An ``int32_t`` argument (a byte value), or with ``enum`` a C enum value (CANN's enums
    have no negative members, so C compilers, and cffi, make them unsigned) as an int that fits."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{api}: {name} must be an int, got {type(value).__name__}")
    v = operator.index(value)
    low = 0 if enum else -(2**31)
    if not low <= v < 2**31:
        raise ValueError(f"{api}: {name} = {v} is not {'a value of its enum' if enum else 'an int32'}")
    return v


def _device_ptr(lib, api: str, name: str, value):
    """A device pointer: cdata (as ``aclrtMalloc`` returns it), an int address, or None."""
    if value is None:
        return lib.ffi.NULL
    if isinstance(value, lib.ffi.CData):
        return value
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 2**64:
        return lib.ffi.cast("void *", value)
    raise TypeError(f"{api}: {name} must be a device pointer (from aclrtMalloc), got {type(value).__name__}")


def aclrtCreateEvent() -> CData:
    return _out("aclrtEvent *", "aclrtCreateEvent")


def aclrtRecordEvent(event: CData, stream: CData) -> None:
    _call(_lib(), "aclrtRecordEvent", event, stream)


def aclrtSynchronizeEvent(event: CData) -> None:
    _call(_lib(), "aclrtSynchronizeEvent", event)


def aclrtEventElapsedTime(startEvent: CData, endEvent: CData) -> float:
    lib = _lib()
    p = lib.ffi.new("float *")
    _call(lib, "aclrtEventElapsedTime", p, startEvent, endEvent)
    return float(p[0])


def aclrtDestroyEvent(event: CData) -> None:
    _call(_lib(), "aclrtDestroyEvent", event)


# -- aclnn meta ------------------------------------------------------------------------------

def aclCreateTensor(viewDims: Sequence[int], dataType: int, stride: Sequence[int] | None, offset: int, format: int,
                    storageDims: Sequence[int], tensorData: CData | int | None) -> CData:
    """Returns the raw ``aclTensor*``; ``AclnnError`` where CANN returns NULL. ``ValueError``
    where the view (``viewDims``, ``stride``, ``offset``, in elements) reaches outside
    ``storageDims`` or has a negative dimension, stride or offset, and where ``tensorData`` is
    NULL under a non-empty storage: an operator would read or write outside the memory given.
    The storage itself must lie in the memory at ``tensorData`` (as in C; the simulator checks)."""
    api = "aclCreateTensor"
    lib = _lib()
    ffi = lib.ffi
    view_dims = _dims(api, "viewDims", viewDims)
    storage_dims = _dims(api, "storageDims", storageDims)
    strides = _contiguous(view_dims) if stride is None else _dims(api, "stride", stride)
    offset = _index(api, "offset", offset)
    if any(d < 0 for d in storage_dims):
        raise ValueError(f"{api}: storageDims must not have negative dimensions, got {list(storage_dims)}")
    storage = 1
    for d in storage_dims:
        storage *= d
    check_view(api, view_dims, strides, offset, storage)
    data = _h(tensorData)
    if isinstance(data, int) and not isinstance(data, bool):
        data = _device_ptr(lib, api, "tensorData", data)
    if data == ffi.NULL and storage and 0 not in view_dims:
        raise ValueError(f"{api}: tensorData is NULL but the storage {list(storage_dims)} is not empty")
    handle = lib.fn(api)(ffi.new("int64_t[]", list(view_dims) or [0]), len(view_dims),
                         _c_int(api, "dataType", dataType),
                         ffi.NULL if stride is None else ffi.new("int64_t[]", list(strides) or [0]), offset,
                         _c_int(api, "format", format), ffi.new("int64_t[]", list(storage_dims) or [0]),
                         len(storage_dims), data)
    if handle == ffi.NULL:
        raise AclnnError(ACLNN_ERR_PARAM_INVALID, api, lib.recent_error())
    return handle


def _create_array(wrapper, values):
    return wrapper.create(_lib(), values)  # the owning wrapper's checks and call: one source


def aclCreateIntArray(value: Sequence[int]) -> CData:
    return _create_array(IntArray, value)


def aclCreateBoolArray(value: Sequence[bool]) -> CData:
    return _create_array(BoolArray, value)


def aclCreateFloatArray(value: Sequence[float]) -> CData:
    return _create_array(FloatArray, value)


def aclCreateScalar(value: complex, dataType: int) -> CData:
    lib = _lib()
    held = scalar_value("aclCreateScalar", value, to_numpy(_c_int("aclCreateScalar", "dataType", dataType)))
    handle = lib.fn("aclCreateScalar")(lib.ffi.cast("void *", held.ctypes.data), int(dataType))
    if handle == lib.ffi.NULL:
        raise AclnnError(ACLNN_ERR_PARAM_INVALID, "aclCreateScalar", lib.recent_error())
    return handle


def _destroy(api: str):
    def destroy(handle: object) -> None:
        _call(_lib(), api, _h(handle))

    destroy.__name__ = destroy.__qualname__ = api
    destroy.__doc__ = f"``{api}`` (NULL is a no-op, as in CANN)."
    return destroy


aclDestroyTensor = _destroy("aclDestroyTensor")
aclDestroyIntArray = _destroy("aclDestroyIntArray")
aclDestroyBoolArray = _destroy("aclDestroyBoolArray")
aclDestroyFloatArray = _destroy("aclDestroyFloatArray")
aclDestroyScalar = _destroy("aclDestroyScalar")
aclSetAclOpExecutorRepeatable = _destroy("aclSetAclOpExecutorRepeatable")
aclSetAclOpExecutorRepeatable.__doc__ = "Keep the executor after phase 2; free it with aclDestroyAclOpExecutor."
aclDestroyAclOpExecutor = _destroy("aclDestroyAclOpExecutor")
aclDestroyAclOpExecutor.__doc__ = "Free a repeatable executor."


# -- the operators: aclnnXxxGetWorkspaceSize / aclnnXxx ---------------------------------------

def _phase1(api: str):
    def get_workspace_size(*args):
        lib = _lib()
        ffi = lib.ffi
        size = ffi.new("uint64_t *")
        executor = ffi.new("aclOpExecutor **")
        _call(lib, api, *(_h(a) if a is None or hasattr(a, "handle") else a for a in args), size, executor)
        return int(size[0]), executor[0]

    get_workspace_size.__name__ = get_workspace_size.__qualname__ = api
    get_workspace_size.__doc__ = f"``{api}(<inputs and outputs in C order>) -> (workspace_size, executor)``."
    return get_workspace_size


def _phase2(api: str):
    def launch(workspace, workspaceSize: int, executor, stream) -> None:
        lib = _lib()
        _call(lib, api, lib.ffi.NULL if workspace is None else workspace, workspaceSize, executor, stream)

    launch.__name__ = launch.__qualname__ = api
    launch.__doc__ = f"``{api}(workspace, workspaceSize, executor, stream)``: queue the kernel on ``stream``."
    return launch


# -- the rest of the runtime and nnopbase API, raw ----------------------------------------------

#: The headers whose every function the mirror reaches (what they include comes too).
RAW_HEADERS = ("acl/acl.h", "aclnn/aclnn_base.h")


def new(ctype: str, init: Any = None) -> CData:
    """``ffi.new(ctype, init)`` of the current backend's library: memory for a raw function's
    output parameter (``new("int32_t *")``), a struct (``new("aclrtMemcpyBatchAttr *")``) or an
    array (``new("aclrtStream[]", 4)``); freed when the returned object is garbage-collected."""
    return _lib().ffi.new(ctype, init)


def _raw(api: str, ret: str, params: list[tuple[str, str]], enums: set[str]):
    status = ret == "aclError"

    def call(*args: Any) -> Any:
        lib = _lib()
        args = tuple(lib.ffi.NULL if a is None else _h(a) for a in args)
        if status:
            _call(lib, api, *args)
            return None
        try:
            return lib.fn(api)(*args)
        except OverflowError as exc:
            raise ValueError(f"{api}: an argument does not fit its C parameter type ({exc})") from None

    call.__name__ = call.__qualname__ = api
    call.__doc__ = (f"Raw mirror of ``{api}``: the C arguments in C order"
                    + (", raising ``AclnnError`` on a non-zero status." if status else ", returning the C value."))
    call.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [inspect.Parameter("args", inspect.Parameter.VAR_POSITIONAL, annotation="Any") if name == "" else
         inspect.Parameter(name, inspect.Parameter.POSITIONAL_ONLY,
                           annotation="int" if c_type.removeprefix("const ") in enums else _python_type(c_type))
         for c_type, name in params],
        return_annotation="None" if status else "Any")
    return call


def _raw_functions() -> dict[str, Any]:
    from ._ffi.declarations import enum_declarations, include_dir, read_cdef

    cdef = read_cdef(include_dir(), RAW_HEADERS)
    enums = set(re.findall(r"\}\s*(\w+)\s*;", " ".join(enum_declarations(cdef))))
    return {name: _raw(name, ret, params, enums) for name, (ret, params) in prototypes(cdef).items()}


for _name, _function in _raw_functions().items():
    globals().setdefault(_name, _function)
del _name, _function


# The registered operators (aclnn_py/ops/_registry.py), as the C names of their phase 2.
OPERATORS = tuple(op.kernel for op in _operators())

for _op in OPERATORS:
    globals()[f"{_op}GetWorkspaceSize"] = _phase1(f"{_op}GetWorkspaceSize")
    globals()[_op] = _phase2(_op)
del _op


def __getattr__(name: str):
    # Any other aclnn operator the loaded library exports, resolved when first used.
    if name.startswith("aclnn") and name.endswith("GetWorkspaceSize"):
        return _phase1(name)
    if name.startswith("aclnn"):
        return _phase2(name)
    raise AttributeError(f"module 'aclnn_py.capi' has no attribute {name!r}")
