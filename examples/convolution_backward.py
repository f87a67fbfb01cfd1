"""aclnnConvolutionBackward: the official C sample in Python, then the same in one line.

The official sample is the example in the operator's documentation (hicann/ops-nn,
conv/convolution_backward/docs/aclnnConvolutionBackward.md); c/convolution_backward.cpp is our
C++ program that behaves like it. This port makes the same calls in the same order through
``aclnn_py.capi``, the low-level mirror of the C API, and prints the same lines; then
``aclnn_py.convolution_backward`` computes the same three gradients from NumPy arrays in one
call.

    python examples/convolution_backward.py                    # npu if present, else sim
    ACLNN_PY_BACKEND=sim python examples/convolution_backward.py
"""

import numpy as np

import aclnn_py
from aclnn_py import capi as acl

from _common import create_acl_tensor, report_same, select_backend


def copy_back(device_addr, like: np.ndarray) -> np.ndarray:
    """A host array shaped like ``like`` holding the device memory at ``device_addr``."""
    host = np.zeros_like(like)
    acl.aclrtMemcpy(host, host.nbytes, device_addr, host.nbytes, acl.ACL_MEMCPY_DEVICE_TO_HOST)
    return host


def main() -> None:
    select_backend()

    # 1. Runtime, device, stream. (A failing call raises aclnn_py.AclnnError.)
    device_id = 0
    acl.aclInit(None)
    acl.aclrtSetDevice(device_id)
    stream = acl.aclrtCreateStream()

    # 2. Inputs and outputs on the device (4-D ones NCHW, gradBias ND, as the sample), and the
    # convolution parameters.
    grad_output_host = np.ones((2, 2, 7, 7), dtype=np.float32)
    input_host = np.ones((2, 2, 7, 7), dtype=np.float32)
    weight_host = np.ones((2, 2, 1, 1), dtype=np.float32)
    bias_sizes_values = [2]
    stride_values, padding_values, dilation_values = [1, 1], [0, 0], [1, 1]
    transposed = False
    output_padding_values = [0, 0]
    groups = 1
    output_mask_values = [True, True, True]  # gradInput, gradWeight, gradBias
    cube_math_type = 1  # ALLOW_FP32_DOWN_PRECISION
    grad_input_host = np.ones_like(input_host)
    grad_weight_host = np.ones_like(weight_host)
    grad_bias_host = np.ones(bias_sizes_values, dtype=np.float32)

    grad_output_addr, grad_output = create_acl_tensor(grad_output_host, acl.ACL_FLOAT, acl.ACL_FORMAT_NCHW)
    input_addr, input_tensor = create_acl_tensor(input_host, acl.ACL_FLOAT, acl.ACL_FORMAT_NCHW)
    weight_addr, weight = create_acl_tensor(weight_host, acl.ACL_FLOAT, acl.ACL_FORMAT_NCHW)
    grad_input_addr, grad_input = create_acl_tensor(grad_input_host, acl.ACL_FLOAT, acl.ACL_FORMAT_NCHW)
    grad_weight_addr, grad_weight = create_acl_tensor(grad_weight_host, acl.ACL_FLOAT, acl.ACL_FORMAT_NCHW)
    grad_bias_addr, grad_bias = create_acl_tensor(grad_bias_host, acl.ACL_FLOAT)
    bias_sizes = acl.aclCreateIntArray(bias_sizes_values)
    stride = acl.aclCreateIntArray(stride_values)
    padding = acl.aclCreateIntArray(padding_values)
    dilation = acl.aclCreateIntArray(dilation_values)
    output_padding = acl.aclCreateIntArray(output_padding_values)
    output_mask = acl.aclCreateBoolArray(output_mask_values)

    # 3. Phase one checks the parameters and sizes the workspace; phase two queues the work.
    workspace_size, executor = acl.aclnnConvolutionBackwardGetWorkspaceSize(
        grad_output, input_tensor, weight, bias_sizes, stride, padding, dilation, transposed,
        output_padding, groups, output_mask, cube_math_type, grad_input, grad_weight, grad_bias)
    workspace = None
    if workspace_size > 0:
        workspace = acl.aclrtMalloc(workspace_size, acl.ACL_MEM_MALLOC_HUGE_FIRST)
    acl.aclnnConvolutionBackward(workspace, workspace_size, executor, stream)

    # 4. Wait for the stream.
    acl.aclrtSynchronizeStream(stream)

    # 5. Copy the results back and print them with the C sample's printf format (Python's
    # %-formatting takes it as is: it ignores the "l" of %ld).
    results = (copy_back(grad_input_addr, grad_input_host), copy_back(grad_weight_addr, grad_weight_host),
               copy_back(grad_bias_addr, grad_bias_host))
    for label, result in zip(("gradInputResult", "gradWeightResult", "gradBiasResult"), results):
        for i, value in enumerate(result.ravel()):
            print("%s[%ld] is: %f" % (label, i, value))

    # 6. Destroy the descriptors, free the device memory, release stream and device.
    for tensor in (grad_output, input_tensor, weight, grad_input, grad_weight, grad_bias):
        acl.aclDestroyTensor(tensor)
    for array in (bias_sizes, stride, padding, dilation, output_padding):
        acl.aclDestroyIntArray(array)
    acl.aclDestroyBoolArray(output_mask)
    for device_addr in (grad_output_addr, input_addr, weight_addr, grad_input_addr, grad_weight_addr,
                        grad_bias_addr):
        acl.aclrtFree(device_addr)
    if workspace_size > 0:
        acl.aclrtFree(workspace)
    acl.aclrtDestroyStream(stream)
    acl.aclrtResetDevice(device_id)

    # 7. The same computation in one high-level call. It comes before aclFinalize because
    # the high-level API runs on the same CANN runtime (it sets the device and creates its own
    # stream as needed), and after aclFinalize CANN cannot be used again in this process.
    high_level = aclnn_py.convolution_backward(grad_output_host, input_host, weight_host, bias_sizes_values,
                                               stride_values, padding_values, dilation_values, transposed,
                                               output_padding_values, groups, output_mask_values, cube_math_type)
    report_same("aclnn_py.convolution_backward", high_level, results)

    acl.aclFinalize()


if __name__ == "__main__":
    main()
