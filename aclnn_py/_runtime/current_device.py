"""The calling thread's device id: the last ``set_device`` of the thread, else the
``ACLNN_PY_DEVICE`` environment variable (read when first needed), else 0. Kept apart from
``device.set_device``, which opens the device on a loaded backend, so that ``library`` can read
it without depending on the loader.
"""

from __future__ import annotations

import os
import threading

DEVICE_VAR = "ACLNN_PY_DEVICE"
DEVICE_MAX = 2**31 - 1  # aclrtSetDevice's deviceId is an int32_t

_local = threading.local()
_default: int | None = None


def _env_default() -> int:
    global _default
    if _default is None:
        text = os.environ.get(DEVICE_VAR, "").strip()
        if not text:
            _default = 0
        else:
            try:
                value = int(text)
            except ValueError:
                raise ValueError(f"environment variable {DEVICE_VAR}={text!r}: a device id must be an int >= 0") from None
            if not 0 <= value <= DEVICE_MAX:
                raise ValueError(f"environment variable {DEVICE_VAR}={text!r}: a device id must be an int "
                                 f"from 0 to {DEVICE_MAX}")
            _default = value
    return _default


def get_device() -> int:
    """The device of the calling thread's npu/sim calls: the last ``set_device`` of this
    thread, else ``$ACLNN_PY_DEVICE``, else 0."""
    device: int | None = getattr(_local, "device", None)
    return _env_default() if device is None else device


def record(device: int) -> None:
    """Make ``device`` (checked by ``set_device``) the calling thread's device."""
    _local.device = device
