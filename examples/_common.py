"""What the examples share: the backend they run on, the sample's CreateAclTensor, and the
check of the high-level call.

The examples call the C API mirror (``aclnn_py.capi``), which needs the real CANN libraries
(``npu``) or the simulator toolkit (``sim``); the pure-NumPy backend has no C API.
"""

from __future__ import annotations

import os
import sys

import numpy as np

import aclnn_py
from aclnn_py import capi as acl


def select_backend() -> str:
    """$ACLNN_PY_BACKEND if set, else ``npu`` where CANN and a device are found, else ``sim``."""
    # With ACLNN_PY_BACKEND unset, get_backend() is the automatic choice: "npu" or "numpy".
    name = os.environ.get("ACLNN_PY_BACKEND") or ("npu" if aclnn_py.get_backend() == "npu" else "sim")
    if name == "numpy":
        sys.exit("this example calls the C API through aclnn_py.capi; run it with ACLNN_PY_BACKEND=npu or sim")
    aclnn_py.set_backend(name)
    return name


def create_acl_tensor(host: np.ndarray, data_type: int, fmt: int = acl.ACL_FORMAT_ND):
    """The samples' CreateAclTensor: copy ``host`` to new device memory and describe it.

    Returns ``(device address, aclTensor)``; the caller frees both, as the samples do."""
    size = host.nbytes
    device_addr = acl.aclrtMalloc(size, acl.ACL_MEM_MALLOC_HUGE_FIRST)
    acl.aclrtMemcpy(device_addr, size, host, size, acl.ACL_MEMCPY_HOST_TO_DEVICE)
    strides = [s // host.itemsize for s in host.strides]
    tensor = acl.aclCreateTensor(host.shape, data_type, strides, 0, fmt, host.shape, device_addr)
    return device_addr, tensor


def report_same(call: str, high_level, two_phase) -> None:
    """Print that the high-level result equals the two-phase one, or exit with an error."""
    pairs = list(zip(high_level, two_phase)) if isinstance(high_level, (tuple, list)) else [(high_level, two_phase)]
    same = all(np.shape(a) == np.shape(b) and np.allclose(a, b, rtol=1e-5, atol=1e-6) for a, b in pairs)
    if not same:
        sys.exit(f"{call} differs from the two-phase result")
    print(f"{call} matches the two-phase result")
