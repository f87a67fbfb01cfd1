"""The simulator's avg_pool2d backward reads a gradOutput plane whose rows follow one another in
one run and any other plane row by row: both layouts (rows contiguous, rows strided, columns
strided, float16) give PyTorch's gradient, with padding and windows without real elements."""

from __future__ import annotations

import numpy as np
import pytest

import aclnn_py
from aclnn_py import Tensor
from helpers import assert_close

torch = pytest.importorskip("torch")

# (self shape, kernel, stride, padding, ceil_mode, count_include_pad)
CASES = {
    "k2 s2": ((2, 3, 8, 10), 2, 2, 0, False, True),
    "k3 s2 p1 ceil exclude pad": ((1, 4, 9, 7), 3, 2, 1, True, False),
    "k3 s1 p1": ((2, 2, 6, 5), 3, 1, 1, False, True),
}


def _expected(go, shape, k, s, p, ceil, include_pad):
    return torch.ops.aten.avg_pool2d_backward(torch.from_numpy(go.astype(np.float32)), torch.zeros(shape), [k, k],
                                              [s, s], [p, p], ceil, include_pad, None).numpy()


@pytest.mark.parametrize("layout", ["contiguous", "rows strided", "columns strided"])
@pytest.mark.parametrize("case", list(CASES))
def test_grad_output_layouts(case, layout):
    shape, k, s, p, ceil, include_pad = CASES[case]
    out_hw = torch.nn.functional.avg_pool2d(torch.zeros(shape), k, s, p, ceil, include_pad).shape[-2:]
    rng = np.random.default_rng(5)
    go = rng.standard_normal((*shape[:2], *out_hw)).astype(np.float32)
    expected = _expected(go, shape, k, s, p, ceil, include_pad)
    x = np.zeros(shape, np.float32)
    if layout == "contiguous":
        result = aclnn_py.avg_pool2d_backward(go, x, k, s, p, ceil, include_pad, None, backend="sim")
        assert_close(np.asarray(result), expected, np.float32)
        return
    n, c, h, w = go.shape
    if layout == "rows strided":      # each row followed by 3 unused elements
        storage = np.full((n, c, h, w + 3), np.nan, np.float32)
        storage[..., :w] = go
        strides = [c * h * (w + 3), h * (w + 3), w + 3, 1]
    else:                             # stored transposed: a row's elements h apart
        storage = np.ascontiguousarray(go.transpose(0, 1, 3, 2))
        strides = [c * h * w, h * w, 1, h]
    with Tensor.from_numpy(storage, backend="sim") as buffer:
        view = buffer.view(go.shape, strides)
        with view:
            result = aclnn_py.avg_pool2d_backward(view, x, k, s, p, ceil, include_pad, None, backend="sim")
    assert_close(np.asarray(result), expected, np.float32)


def test_float16_grad_output():
    shape, k, s, p, ceil, include_pad = CASES["k3 s2 p1 ceil exclude pad"]
    out_hw = torch.nn.functional.avg_pool2d(torch.zeros(shape), k, s, p, ceil, include_pad).shape[-2:]
    go = np.random.default_rng(6).standard_normal((*shape[:2], *out_hw)).astype(np.float16)
    result = aclnn_py.avg_pool2d_backward(go, np.zeros(shape, np.float16), k, s, p, ceil, include_pad, None,
                                          backend="sim")
    assert_close(np.asarray(result), _expected(go, shape, k, s, p, ceil, include_pad), np.float16)
