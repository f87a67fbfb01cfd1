"""Run one aclnn operator on the default backend and check it against a hand-computed result.

    python examples/quickstart.py

The default backend is ``npu`` on an Atlas host with CANN, else ``numpy``; set
ACLNN_PY_BACKEND=sim (or npu / numpy) to choose.
"""

import numpy as np

import aclnn_py

# AvgPool2dBackward of a 2x2/2 average pool over a 4x4 image: every input pixel receives a
# quarter of the gradient of the one window that covers it.
x = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
grad_output = np.array([[[[1.0, 2.0], [3.0, 4.0]]]], dtype=np.float32)

grad_input = aclnn_py.avg_pool2d_backward(
    grad_output, x, kernel_size=[2, 2], stride=[2, 2], padding=[0, 0],
    ceil_mode=False, count_include_pad=True, divisor_override=0, cube_math_type=0,
)
expected = np.kron(grad_output[0, 0], np.ones((2, 2), np.float32)) / 4

print(f"backend: {aclnn_py.get_backend()}")
print("aclnnAvgPool2dBackward grad_input:")
print(grad_input[0, 0])
assert np.allclose(grad_input[0, 0], expected), "unexpected result"
print("ok")
