"""aclnnMaxUnpool2dBackward: the official C sample in Python, then the same in one line.

The official sample is the example in the operator's documentation (hicann/ops-nn,
index/gather_elements/docs/aclnnMaxUnpool2dBackward.md); c/max_unpool2d_backward.cpp is our
C++ program that behaves like it. This port makes the same calls in the same order through
``aclnn_py.capi``, the low-level mirror of the C API, and prints the same lines; then
``aclnn_py.max_unpool2d_backward`` computes the same result from NumPy arrays in one call.

    python examples/max_unpool2d_backward.py                   # npu if present, else sim
    ACLNN_PY_BACKEND=sim python examples/max_unpool2d_backward.py
"""

import numpy as np

import aclnn_py
from aclnn_py import capi as acl

from _common import create_acl_tensor, report_same, select_backend


def main() -> None:
    select_backend()

    # 1. Runtime, device, stream. (A failing call raises aclnn_py.AclnnError.)
    device_id = 0
    acl.aclInit(None)
    acl.aclrtSetDevice(device_id)
    stream = acl.aclrtCreateStream()

    # 2. Inputs and output on the device, and outputSize.
    n, c, h, w = 1, 3, 2, 2
    output_size_values = [3, 1]
    grad_output_host = np.arange(9, dtype=np.float32).reshape(n, c, *output_size_values)
    self_host = np.ones((n, c, h, w), dtype=np.float32)
    indices_host = np.array([0, 1, 2, 1, 2, 0, 1, 1, 1, 0, 0, 0], dtype=np.int32).reshape(n, c, h, w)
    out_host = np.zeros((n, c, h, w), dtype=np.float32)

    grad_output_addr, grad_output = create_acl_tensor(grad_output_host, acl.ACL_FLOAT)
    self_addr, self_tensor = create_acl_tensor(self_host, acl.ACL_FLOAT)
    indices_addr, indices = create_acl_tensor(indices_host, acl.ACL_INT32)
    output_size = acl.aclCreateIntArray(output_size_values)
    out_addr, out = create_acl_tensor(out_host, acl.ACL_FLOAT)

    # 3. Phase one checks the parameters and sizes the workspace; phase two queues the work.
    workspace_size, executor = acl.aclnnMaxUnpool2dBackwardGetWorkspaceSize(
        grad_output, self_tensor, indices, output_size, out)
    workspace = None
    if workspace_size > 0:
        workspace = acl.aclrtMalloc(workspace_size, acl.ACL_MEM_MALLOC_HUGE_FIRST)
    acl.aclnnMaxUnpool2dBackward(workspace, workspace_size, executor, stream)

    # 4. Wait for the stream.
    acl.aclrtSynchronizeStream(stream)

    # 5. Copy the result back and print it with the C sample's printf format (Python's
    # %-formatting takes it as is: it ignores the "l" of %ld).
    result = np.zeros_like(out_host)
    acl.aclrtMemcpy(result, result.nbytes, out_addr, result.nbytes, acl.ACL_MEMCPY_DEVICE_TO_HOST)
    for i, value in enumerate(result.ravel()):
        print("result[%ld] is: %f" % (i, value))

    # 6. Destroy the descriptors, free the device memory, release stream and device.
    acl.aclDestroyTensor(grad_output)
    acl.aclDestroyTensor(self_tensor)
    acl.aclDestroyTensor(indices)
    acl.aclDestroyIntArray(output_size)
    acl.aclDestroyTensor(out)
    acl.aclrtFree(grad_output_addr)
    acl.aclrtFree(self_addr)
    acl.aclrtFree(indices_addr)
    acl.aclrtFree(out_addr)
    if workspace_size > 0:
        acl.aclrtFree(workspace)
    acl.aclrtDestroyStream(stream)
    acl.aclrtResetDevice(device_id)

    # 7. The same computation in one high-level call. It comes before aclFinalize because
    # the high-level API runs on the same CANN runtime (it sets the device and creates its own
    # stream as needed), and after aclFinalize CANN cannot be used again in this process.
    high_level = aclnn_py.max_unpool2d_backward(grad_output_host, self_host, indices_host, output_size_values)
    report_same("aclnn_py.max_unpool2d_backward", high_level, result)

    acl.aclFinalize()


if __name__ == "__main__":
    main()
