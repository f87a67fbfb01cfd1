"""Run one aclnn operator on the default backend, and on the CANN simulator when it was built,
and check each result against a hand-computed one.

    python examples/quickstart.py

The default backend is ``npu`` on an Atlas host with CANN, else ``numpy``; set
ACLNN_PY_BACKEND=sim (or npu / numpy) to choose another. The simulator is built by
``pip install -e .`` where a C compiler is found (not with ACLNN_PY_SKIP_SIM=1).
"""

import numpy as np

import aclnn_py

# AvgPool2dBackward of a 2x2/2 average pool over a 4x4 image: every input pixel receives a
# quarter of the gradient of the one window that covers it.
x = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
grad_output = np.array([[[[1.0, 2.0], [3.0, 4.0]]]], dtype=np.float32)
expected = np.kron(grad_output[0, 0], np.ones((2, 2), np.float32)) / 4

default = aclnn_py.get_backend()
for backend in dict.fromkeys([default, "sim"]):
    try:
        grad_input = aclnn_py.avg_pool2d_backward(
            grad_output, x, kernel_size=[2, 2], stride=[2, 2], padding=[0, 0],
            ceil_mode=False, count_include_pad=True, divisor_override=0, cube_math_type=0,
            backend=backend,
        )
    except aclnn_py.BackendUnavailable as exc:
        # Only the simulator may be missing here (installed with ACLNN_PY_SKIP_SIM=1).
        print(f"backend: {backend} is not available: {str(exc).splitlines()[0]}")
        continue
    assert np.allclose(grad_input[0, 0], expected), f"unexpected result on {backend}"
    if backend == default:
        print(f"backend: {backend} (the default)")
        print("aclnnAvgPool2dBackward grad_input:")
        print(grad_input[0, 0])
    else:
        print(f"backend: {backend}: the same grad_input")
print("ok")
