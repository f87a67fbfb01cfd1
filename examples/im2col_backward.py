"""aclnnIm2colBackward (col2im): the official C sample in Python, then the same in one line.

The official sample is the example in the operator's documentation (hicann/ops-cv,
image/col2im/docs/aclnnIm2colBackward.md); c/im2col_backward.cpp is our C++ program that
behaves like it. This port makes the same calls in the same order through ``aclnn_py.capi``,
the low-level mirror of the C API, and prints the same lines; then ``aclnn_py.im2col_backward``
computes the same result from NumPy arrays in one call.

    python examples/im2col_backward.py                         # npu if present, else sim
    ACLNN_PY_BACKEND=sim python examples/im2col_backward.py
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

    # 2. Inputs and output on the device, and the integer parameters.
    grad_host = np.array([[0.1, 1.1], [2.1, 3.1], [4.1, 5.1], [6.1, 7.1]], dtype=np.float32)
    out_host = np.zeros((1, 1, 1), dtype=np.float32)
    input_size_values, kernel_size_values = [1, 1], [2, 2]
    dilation_values, padding_values, stride_values = [1, 1], [1, 1], [1, 2]

    grad_addr, grad = create_acl_tensor(grad_host, acl.ACL_FLOAT)
    out_addr, out = create_acl_tensor(out_host, acl.ACL_FLOAT)
    input_size = acl.aclCreateIntArray(input_size_values)
    kernel_size = acl.aclCreateIntArray(kernel_size_values)
    dilation = acl.aclCreateIntArray(dilation_values)
    padding = acl.aclCreateIntArray(padding_values)
    stride = acl.aclCreateIntArray(stride_values)

    # 3. Phase one checks the parameters and sizes the workspace; phase two queues the work.
    workspace_size, executor = acl.aclnnIm2colBackwardGetWorkspaceSize(
        grad, input_size, kernel_size, dilation, padding, stride, out)
    workspace = None
    if workspace_size > 0:
        workspace = acl.aclrtMalloc(workspace_size, acl.ACL_MEM_MALLOC_HUGE_FIRST)
    acl.aclnnIm2colBackward(workspace, workspace_size, executor, stream)

    # 4. Wait for the stream.
    acl.aclrtSynchronizeStream(stream)

    # 5. Copy the result back and print it with the C sample's printf format (Python's
    # %-formatting takes it as is: it ignores the "l" of %ld).
    result = np.zeros_like(out_host)
    acl.aclrtMemcpy(result, result.nbytes, out_addr, result.nbytes, acl.ACL_MEMCPY_DEVICE_TO_HOST)
    for i, value in enumerate(result.ravel()):
        print("result[%ld] is: %f" % (i, value))

    # 6. Destroy the descriptors, free the device memory, release stream and device.
    acl.aclDestroyTensor(grad)
    acl.aclDestroyTensor(out)
    acl.aclDestroyIntArray(input_size)
    acl.aclDestroyIntArray(kernel_size)
    acl.aclDestroyIntArray(dilation)
    acl.aclDestroyIntArray(padding)
    acl.aclDestroyIntArray(stride)
    acl.aclrtFree(grad_addr)
    acl.aclrtFree(out_addr)
    if workspace_size > 0:
        acl.aclrtFree(workspace)
    acl.aclrtDestroyStream(stream)
    acl.aclrtResetDevice(device_id)

    # 7. The same computation in one high-level call. It comes before aclFinalize because
    # the high-level API runs on the same CANN runtime (it sets the device and creates its own
    # stream as needed), and after aclFinalize CANN cannot be used again in this process.
    high_level = aclnn_py.im2col_backward(grad_host, input_size_values, kernel_size_values,
                                          dilation_values, padding_values, stride_values)
    report_same("aclnn_py.im2col_backward", high_level, result)

    acl.aclFinalize()


if __name__ == "__main__":
    main()
