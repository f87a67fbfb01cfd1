"""The simulator's avg_pool2d backward path for windows that tile the plane (kernel = stride, no
padding, float32 gradInput with unit column stride: src/ops/avgpool2d_backward.c
avgpool_planes_tiled): each divided gradOutput value written to its window, the rows and columns
in no window zero, partial windows of ceil mode, both divisor rules and divisorOverride,
gradInput rows apart in memory (the gaps untouched), planes split over the worker threads, and
-0 in gradOutput giving +0 as PyTorch's sums do.  The oracle is PyTorch CPU."""

from __future__ import annotations

import numpy as np
import pytest

import aclnn_py
from aclnn_py import Tensor
from helpers import assert_close

torch = pytest.importorskip("torch")

API = "aclnnAvgPool2dBackward"

# (self shape, kernel (kh, kw), ceil_mode, count_include_pad, divisor_override)
CASES = {
    "k2 floor, a row and a column left over": ((2, 3, 9, 7), (2, 2), False, True, None),
    "k2 ceil, partial windows, include pad": ((2, 3, 9, 7), (2, 2), True, True, None),
    "k2 ceil, partial windows, exclude pad": ((2, 3, 9, 7), (2, 2), True, False, None),
    "k3 floor": ((1, 4, 10, 11), (3, 3), False, True, None),
    "k2x3 ceil": ((2, 2, 7, 8), (2, 3), True, False, None),
    "k1": ((1, 2, 5, 6), (1, 1), False, True, None),
    "divisor override": ((1, 3, 9, 9), (2, 2), True, True, 3),
    "3-D input": ((3, 8, 6), (2, 2), False, True, None),
}


def _expected(go, shape, kernel, ceil, include_pad, divisor):
    four = len(shape) == 4
    g = torch.from_numpy(go if four else go[None])
    x = torch.zeros(shape if four else (1, *shape))
    out = torch.ops.aten.avg_pool2d_backward(g, x, list(kernel), list(kernel), [0, 0], ceil, include_pad,
                                             divisor).numpy()
    return out if four else out[0]


def _problem(case, seed=7):
    shape, kernel, ceil, include_pad, divisor = CASES[case]
    x = torch.zeros(shape)
    out_hw = torch.nn.functional.avg_pool2d(x, kernel, kernel, 0, ceil, include_pad, divisor).shape[-2:]
    go = np.random.default_rng(seed).standard_normal((*shape[:-2], *out_hw)).astype(np.float32)
    return go, shape, kernel, ceil, include_pad, divisor


@pytest.mark.parametrize("case", list(CASES))
def test_tiled_windows(case):
    go, shape, kernel, ceil, include_pad, divisor = _problem(case)
    result = aclnn_py.avg_pool2d_backward(go, np.zeros(shape, np.float32), list(kernel), list(kernel), [0, 0], ceil,
                                          include_pad, divisor, backend="sim")
    assert_close(np.asarray(result), _expected(go, shape, kernel, ceil, include_pad, divisor), np.float32)


@pytest.mark.parametrize("case", ["k2 floor, a row and a column left over", "k2x3 ceil"])
def test_grad_input_rows_apart(case):
    """gradInput a view whose rows are 5 elements apart: each row written, the gaps keep their
    bytes."""
    go, shape, kernel, ceil, include_pad, divisor = _problem(case, seed=8)
    n, c, h, w = shape
    storage = np.full((n, c, h, w + 5), 42.0, np.float32)
    with Tensor.from_numpy(storage, backend="sim") as base, \
            base.view(shape, [c * h * (w + 5), h * (w + 5), w + 5, 1]) as out:
        aclnn_py.call(API, go, np.zeros(shape, np.float32), list(kernel), list(kernel), [0, 0], ceil, include_pad,
                      divisor or 0, 0, out, backend="sim")
        got = base.numpy()
    assert_close(got[..., :w], _expected(go, shape, kernel, ceil, include_pad, divisor), np.float32)
    np.testing.assert_array_equal(got[..., w:], 42.0)


def test_planes_over_worker_threads():
    """Enough planes and work for two threads (kernels/parallel.h: 2^22 in all, a plane's cost
    its gradInput and gradOutput elements)."""
    shape = (8, 256, 56, 56)
    go = np.random.default_rng(9).standard_normal((8, 256, 28, 28)).astype(np.float32)
    result = aclnn_py.avg_pool2d_backward(go, np.zeros(shape, np.float32), 2, 2, 0, False, True, None, backend="sim")
    assert_close(np.asarray(result), _expected(go, shape, (2, 2), False, True, None), np.float32)


def test_negative_zero_gives_positive_zero():
    go = np.array([[[[-0.0, 1.0], [-0.0, -2.0]]]], np.float32)
    result = np.asarray(aclnn_py.avg_pool2d_backward(go, np.zeros((1, 1, 4, 4), np.float32), 2, 2, 0, False, True,
                                                     None, backend="sim"))
    expected = _expected(go, (1, 1, 4, 4), (2, 2), False, True, None)
    np.testing.assert_array_equal(result, expected)
    np.testing.assert_array_equal(np.signbit(result), np.signbit(expected))
    assert (result == 0).sum() == 8 and not np.signbit(result[result == 0]).any()
