"""The simulator's convolution backward on its gemm path with one image per call, where the
matrix products use the helper threads and the lowering of each chunk (im2col into cols, and the
scatter of cols back into gradInput) is shared out to them by B channel too
(src/ops/convolution_backward.c lower_chunk): stride, padding, dilation, groups, transposed,
2-D and 3-D, each big enough for a shared chunk.  The oracle is PyTorch CPU
(aten.convolution_backward); float32 tolerance of the one table, scaled by the sum's length."""

from __future__ import annotations

import numpy as np
import pytest

import aclnn_py
from helpers import assert_close

torch = pytest.importorskip("torch")

# (input shape, weight shape, stride, padding, dilation, transposed, groups)
CASES = {
    "3x3 s1 p1": ((1, 32, 64, 64), (16, 32, 3, 3), 1, 1, 1, False, 1),
    "3x3 s2 p1 d2": ((1, 32, 65, 63), (16, 32, 3, 3), 2, 1, 2, False, 1),
    "groups 2": ((1, 64, 48, 48), (32, 32, 3, 3), 1, 1, 1, False, 2),
    "transposed k4 s2": ((1, 32, 40, 40), (32, 16, 4, 4), 2, 1, 1, True, 1),
    "3-D k3": ((1, 16, 24, 24, 24), (8, 16, 3, 3, 3), 1, 1, 1, False, 1),
}


@pytest.mark.parametrize("case", list(CASES))
def test_one_image_with_shared_lowering(case):
    x_shape, w_shape, s, p, d, transposed, groups = CASES[case]
    rng = np.random.default_rng(0)
    x = rng.standard_normal(x_shape).astype(np.float32)
    w = rng.standard_normal(w_shape).astype(np.float32)
    rank = len(x_shape) - 2
    fwd = torch.nn.functional.conv_transpose2d if transposed else (
        torch.nn.functional.conv2d if rank == 2 else torch.nn.functional.conv3d)
    y = fwd(torch.from_numpy(x), torch.from_numpy(w), None, s, p, **({} if transposed else {"dilation": d}),
            groups=groups)
    g = rng.standard_normal(tuple(y.shape)).astype(np.float32)
    args = ([w_shape[1] * groups if transposed else w_shape[0]], [s] * rank, [p] * rank, [d] * rank, transposed,
            [0] * rank, groups, [True, True, False])
    gi, gw, _ = aclnn_py.convolution_backward(g, x, w, *args, backend="sim")
    want = torch.ops.aten.convolution_backward(torch.from_numpy(g), torch.from_numpy(x), torch.from_numpy(w), *args)
    taps = int(np.prod(w_shape[2:]))
    assert_close(np.asarray(gi), want[0].numpy(), np.float32, scale=np.sqrt(w_shape[0] * taps))
    assert_close(np.asarray(gw), want[1].numpy(), np.float32, scale=np.sqrt(np.prod(y.shape[2:])))
