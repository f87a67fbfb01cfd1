"""The device of each thread, and the streams callers pass with ``stream=``.

``set_device(i)`` makes device ``i`` the calling thread's device for its later npu/sim calls;
``get_device()`` tells which it is. A thread that never called ``set_device`` uses the
``ACLNN_PY_DEVICE`` environment variable (a device id, read when first needed) or else
device 0. Each thread has its own stream per device, created on first use and released when
the thread ends.
"""

from __future__ import annotations

import numbers
import operator

from .._errors import ACL_ERROR_RT_INVALID_DEVICEID, AclnnError
from .._ffi import ffi
from . import current_device, loader
from .backend import get_backend


def set_device(device: int) -> None:
    """Make ``device`` (an int >= 0) the calling thread's device for its later npu/sim calls
    (other threads keep theirs).

    Work this thread left queued on its previous device is waited for first. When the npu or
    sim backend is loaded, or is the current backend (``get_backend()``, which loads it), the
    device is opened at once (``aclrtSetDevice``: the C-API mirror ``aclnn_py.capi`` then works
    on it too), so a device the runtime does not have raises its ``AclnnError`` here (107001
    on the simulator, which has ``$ACLSIM_DEVICE_COUNT`` devices, default 1); otherwise the
    same error comes from the first npu/sim call. On the numpy backend the device is recorded
    and has no effect. An id no runtime can have (above 2**31 - 1, aclrtSetDevice's int32_t)
    is that 107001 on every backend.
    """
    if isinstance(device, bool) or not isinstance(device, numbers.Integral):
        raise TypeError(f"set_device: device must be an int, got {type(device).__name__}")
    value = operator.index(device)
    if value < 0:
        raise ValueError(f"set_device: device must be >= 0, got {value}")
    if value > current_device.DEVICE_MAX:
        # No runtime has it (aclrtSetDevice takes an int32_t): the runtime's answer for a device
        # it lacks, on every backend (numpy records the device for a later npu/sim call).
        raise AclnnError(ACL_ERROR_RT_INVALID_DEVICEID, "aclrtSetDevice",
                         f"invalid device id {value} (device ids are int32_t: at most {current_device.DEVICE_MAX})")
    names = loader.loaded_backends()
    if not names:
        current = get_backend()
        names = (current,) if current != "numpy" else ()
    for name in names:
        loader.library(name).use_device(value)
    current_device.record(value)


_CData: type | None = None


def stream_address(stream: object) -> int:
    """The address of the ``aclrtStream`` a caller passed as ``stream=``: an int, a cffi
    ``aclrtStream`` (``aclnn_py.capi.aclrtCreateStream()``), or an object with torch_npu's
    stream interface (``npu_stream``, or a ``cuda_stream``-like int attribute). TypeError for
    anything else, ValueError for NULL (``stream=None`` means the thread's own stream)."""
    global _CData
    value: object = stream
    if not isinstance(value, numbers.Integral):
        if _CData is None:
            import _cffi_backend

            _CData = _cffi_backend._CDataBase
        if isinstance(value, _CData):
            kind = ffi().typeof(value).kind  # type: ignore[arg-type]
            if kind != "pointer":
                raise TypeError(f"stream=: a cffi stream must be an aclrtStream pointer, got {ffi().typeof(value).cname}")  # type: ignore[arg-type]
            value = int(ffi().cast("uintptr_t", value))  # type: ignore[arg-type]
        else:
            for attribute in ("npu_stream", "cuda_stream"):
                inner = getattr(value, attribute, None)
                if inner is not None:
                    value = inner
                    break
            else:
                raise TypeError(f"stream= must be an aclrtStream (an int address, a cffi aclrtStream, or a "
                                f"torch_npu stream), got {type(stream).__name__}")
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"stream=: {type(stream).__name__}'s stream handle must be an int, got {type(value).__name__}")
    address = operator.index(value)
    if address == 0:
        raise ValueError("stream= is NULL; pass stream=None for the thread's own stream")
    if not 0 < address < 2**64:
        raise ValueError(f"stream= {address} is not an address")
    return address
