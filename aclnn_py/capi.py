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
* Host buffers are NumPy arrays: ``aclrtMemcpy(dst, destMax, src, count, kind)`` takes an
  ndarray on the host side and a device pointer (as returned by ``aclrtMalloc``) on the other.
* Anywhere a handle is expected, the owning wrappers of ``aclnn_py.tensor`` (``Tensor``,
  ``IntArray``, ``BoolArray``, ...) are accepted too; ``None`` is NULL.
* Handles created here are raw: release them with the matching ``aclDestroy*`` /
  ``aclrtFree`` exactly as in C (the owning wrappers do it for you).

Operators beyond the five whose headers aclnn_py ships (``capi.aclnnAddGetWorkspaceSize``...)
are declared when first used from the installed toolkit's own ``include/aclnnop/`` header
(cffi's ABI mode needs the prototype) and fail with ``AclnnError`` 200001 naming the function
where no header declares it or no library exports it.

The binding itself initialises the runtime lazily for the high-level API. ``aclInit`` and
``aclFinalize`` called here are seen by it: after ``aclFinalize`` the backend is unusable
for the rest of the process, as in CANN.
"""

from __future__ import annotations

import numpy as np

from . import _backend
from ._dtypes import aclDataType, aclFormat
from ._errors import ACL_ERROR_REPEAT_INITIALIZE, ACLNN_ERR_PARAM_INVALID, AclnnError

ACL_SUCCESS = 0
ACL_MEM_MALLOC_HUGE_FIRST = 0
ACL_MEM_MALLOC_HUGE_ONLY = 1
ACL_MEM_MALLOC_NORMAL_ONLY = 2
ACL_MEMCPY_HOST_TO_HOST = 0
ACL_MEMCPY_HOST_TO_DEVICE = 1
ACL_MEMCPY_DEVICE_TO_HOST = 2
ACL_MEMCPY_DEVICE_TO_DEVICE = 3
ACL_MEMCPY_DEFAULT = 4

globals().update({m.name: int(m) for m in aclDataType})
globals().update({m.name: int(m) for m in aclFormat})


def _lib():
    from . import _ffi

    name = _backend.get_backend()
    if name == "numpy":
        raise AclnnError(ACLNN_ERR_PARAM_INVALID, "aclnn_py.capi",
                         "the C-API mirror needs backend 'npu' or 'sim'; the current backend is 'numpy' "
                         "(set ACLNN_PY_BACKEND=sim, or aclnn_py.set_backend('sim'))")
    return _ffi.library(name)


def _h(value):
    """A raw handle from a wrapper, a cdata, or None (NULL)."""
    if value is None:
        return _lib().ffi.NULL
    return getattr(value, "handle", value)


def _host_ptr(lib, value):
    if isinstance(value, np.ndarray):
        if not value.flags.c_contiguous:
            raise TypeError("aclrtMemcpy: host arrays must be C-contiguous")
        return lib.ffi.cast("void *", value.ctypes.data)
    if isinstance(value, int):
        return lib.ffi.cast("void *", value)
    return value


def _out(ctype: str, api: str, *args):
    lib = _lib()
    p = lib.ffi.new(ctype)
    lib.call(api, *args, p)
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
    lib.call("aclFinalize")
    lib.note_external_finalize()


def aclGetRecentErrMsg() -> str:
    return _lib().recent_error()


def aclrtSetDevice(deviceId: int) -> None:
    _lib().call("aclrtSetDevice", deviceId)


def aclrtResetDevice(deviceId: int) -> None:
    _lib().call("aclrtResetDevice", deviceId)


def aclrtGetDevice() -> int:
    return _out("int32_t *", "aclrtGetDevice")


def aclrtGetDeviceCount() -> int:
    return _out("uint32_t *", "aclrtGetDeviceCount")


def aclrtGetSocName() -> str:
    lib = _lib()
    p = lib.fn("aclrtGetSocName")()
    return "" if p == lib.ffi.NULL else lib.ffi.string(p).decode()


def aclrtCreateContext(deviceId: int):
    lib = _lib()
    p = lib.ffi.new("aclrtContext *")
    lib.call("aclrtCreateContext", p, deviceId)
    return p[0]


def aclrtDestroyContext(context) -> None:
    _lib().call("aclrtDestroyContext", context)


def aclrtSetCurrentContext(context) -> None:
    _lib().call("aclrtSetCurrentContext", context)


def aclrtGetCurrentContext():
    return _out("aclrtContext *", "aclrtGetCurrentContext")


def aclrtCreateStream():
    return _out("aclrtStream *", "aclrtCreateStream")


def aclrtDestroyStream(stream) -> None:
    _lib().call("aclrtDestroyStream", stream)


def aclrtSynchronizeStream(stream) -> None:
    _lib().call("aclrtSynchronizeStream", stream)


def aclrtSynchronizeDevice() -> None:
    _lib().call("aclrtSynchronizeDevice")


def aclrtMalloc(size: int, policy: int = ACL_MEM_MALLOC_HUGE_FIRST):
    lib = _lib()
    p = lib.ffi.new("void **")
    lib.call("aclrtMalloc", p, size, policy)
    return p[0]


def aclrtFree(devPtr) -> None:
    _lib().call("aclrtFree", devPtr)


def aclrtMallocHost(size: int):
    lib = _lib()
    p = lib.ffi.new("void **")
    lib.call("aclrtMallocHost", p, size)
    return p[0]


def aclrtFreeHost(hostPtr) -> None:
    _lib().call("aclrtFreeHost", hostPtr)


def aclrtMemcpy(dst, destMax: int, src, count: int, kind: int) -> None:
    lib = _lib()
    lib.call("aclrtMemcpy", _host_ptr(lib, dst), destMax, _host_ptr(lib, src), count, kind)


def aclrtMemcpyAsync(dst, destMax: int, src, count: int, kind: int, stream) -> None:
    lib = _lib()
    lib.call("aclrtMemcpyAsync", _host_ptr(lib, dst), destMax, _host_ptr(lib, src), count, kind, stream)


def aclrtMemset(devPtr, maxCount: int, value: int, count: int) -> None:
    _lib().call("aclrtMemset", devPtr, maxCount, value, count)


def aclrtCreateEvent():
    return _out("aclrtEvent *", "aclrtCreateEvent")


def aclrtRecordEvent(event, stream) -> None:
    _lib().call("aclrtRecordEvent", event, stream)


def aclrtSynchronizeEvent(event) -> None:
    _lib().call("aclrtSynchronizeEvent", event)


def aclrtEventElapsedTime(startEvent, endEvent) -> float:
    lib = _lib()
    p = lib.ffi.new("float *")
    lib.call("aclrtEventElapsedTime", p, startEvent, endEvent)
    return float(p[0])


def aclrtDestroyEvent(event) -> None:
    _lib().call("aclrtDestroyEvent", event)


# -- aclnn meta ------------------------------------------------------------------------------

def aclCreateTensor(viewDims, dataType: int, stride, offset: int, format: int, storageDims, tensorData):
    """Returns the raw ``aclTensor*``; ``AclnnError`` where CANN returns NULL."""
    lib = _lib()
    ffi = lib.ffi
    view = ffi.new("int64_t[]", list(viewDims) or [0])
    st = ffi.NULL if stride is None else ffi.new("int64_t[]", list(stride) or [0])
    storage = ffi.new("int64_t[]", list(storageDims) or [0])
    handle = lib.fn("aclCreateTensor")(view, len(viewDims), int(dataType), st, offset, int(format),
                                       storage, len(storageDims), _h(tensorData))
    if handle == ffi.NULL:
        raise AclnnError(ACLNN_ERR_PARAM_INVALID, "aclCreateTensor", lib.recent_error())
    return handle


def _create_array(api: str, ctype: str, values):
    lib = _lib()
    values = list(values)
    handle = lib.fn(api)(lib.ffi.new(f"{ctype}[]", values or [0]), len(values))
    if handle == lib.ffi.NULL:
        raise AclnnError(ACLNN_ERR_PARAM_INVALID, api, lib.recent_error())
    return handle


def aclCreateIntArray(value):
    return _create_array("aclCreateIntArray", "int64_t", value)


def aclCreateBoolArray(value):
    return _create_array("aclCreateBoolArray", "bool", value)


def aclCreateFloatArray(value):
    return _create_array("aclCreateFloatArray", "float", value)


def aclCreateScalar(value, dataType: int):
    from ._dtypes import to_numpy

    lib = _lib()
    held = np.asarray(value, dtype=to_numpy(dataType))
    handle = lib.fn("aclCreateScalar")(lib.ffi.cast("void *", held.ctypes.data), int(dataType))
    if handle == lib.ffi.NULL:
        raise AclnnError(ACLNN_ERR_PARAM_INVALID, "aclCreateScalar", lib.recent_error())
    return handle


def _destroy(api: str):
    def destroy(handle) -> None:
        _lib().call(api, _h(handle))

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
        lib.call(api, *(_h(a) if a is None or hasattr(a, "handle") else a for a in args), size, executor)
        return int(size[0]), executor[0]

    get_workspace_size.__name__ = get_workspace_size.__qualname__ = api
    get_workspace_size.__doc__ = f"``{api}(<inputs and outputs in C order>) -> (workspace_size, executor)``."
    return get_workspace_size


def _phase2(api: str):
    def launch(workspace, workspaceSize: int, executor, stream) -> None:
        lib = _lib()
        lib.call(api, lib.ffi.NULL if workspace is None else workspace, workspaceSize, executor, stream)

    launch.__name__ = launch.__qualname__ = api
    launch.__doc__ = f"``{api}(workspace, workspaceSize, executor, stream)``: queue the kernel on ``stream``."
    return launch


OPERATORS = ("aclnnIm2colBackward", "aclnnMaxUnpool2dBackward", "aclnnReflectionPad2dBackward",
             "aclnnAvgPool2dBackward", "aclnnConvolutionBackward")

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
