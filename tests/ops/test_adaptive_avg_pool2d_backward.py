"""adaptive_avg_pool2d_backward (aclnnAdaptiveAvgPool2dBackward) against PyTorch's autograd of
adaptive_avg_pool2d and the slow reference."""

from __future__ import annotations

import numpy as np
import pytest

import aclnn_py
from aclnn_py import bfloat16
from helpers import assert_close, random_array
from reference.adaptive_avg_pool2d import adaptive_avg_pool2d_backward as reference

DTYPES = [np.dtype(np.float32), np.dtype(np.float16), np.dtype(bfloat16)]
CASES = [((2, 3, 9, 10), (4, 3)), ((3, 7, 7), (1, 1)), ((2, 2, 5, 5), (7, 3)), ((1, 4, 14, 14), (7, 7)),
         ((2, 1, 13, 13), (6, 6))]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shape, output_size", CASES)
def test_matches_torch_autograd(backend, torch, dtype, shape, output_size):
    rng = np.random.default_rng(0)
    x = random_array(rng, shape, dtype)
    grad = random_array(rng, shape[:-2] + output_size, dtype)
    result = aclnn_py.adaptive_avg_pool2d_backward(grad, x, backend=backend)
    tx = torch.from_numpy(x.astype(np.float32)).requires_grad_(True)
    out = torch.nn.functional.adaptive_avg_pool2d(tx, output_size)
    (expected,) = torch.autograd.grad(out, tx, torch.from_numpy(grad.astype(np.float32)))
    assert result.dtype == dtype and result.shape == shape
    assert_close(result, expected.numpy().astype(dtype), dtype)
    assert_close(result, reference(grad.astype(np.float32), shape).astype(dtype), dtype)


def test_non_contiguous_views(backend):
    rng = np.random.default_rng(1)
    grad = random_array(rng, (2, 3, 4, 3), np.float32)
    x = random_array(rng, (2, 3, 9, 8), np.float32)
    expected = reference(grad, x.shape)
    for view in (np.ascontiguousarray(grad.swapaxes(-1, -2)).swapaxes(-1, -2),
                 np.ascontiguousarray(grad[:, ::-1])[:, ::-1], np.repeat(grad, 2, axis=-1)[..., ::2]):
        assert_close(aclnn_py.adaptive_avg_pool2d_backward(view, x[..., ::-1], backend=backend), expected, np.float32)


@pytest.mark.parametrize("go_shape, self_shape", [((0, 3, 2, 2), (0, 3, 4, 4)), ((2, 3, 0, 2), (2, 3, 4, 4)),
                                                  ((2, 3, 2, 2), (2, 3, 0, 4))])
def test_empty_gives_zeros(backend, go_shape, self_shape):
    result = aclnn_py.adaptive_avg_pool2d_backward(np.ones(go_shape, np.float32), np.zeros(self_shape, np.float32),
                                                   backend=backend)
    assert result.shape == self_shape and not result.any()


def test_call_with_cann_names(backend):
    rng = np.random.default_rng(2)
    grad, x = random_array(rng, (1, 2, 2, 3), np.float32), random_array(rng, (1, 2, 5, 6), np.float32)
    out = np.zeros(x.shape, np.float32)
    aclnn_py.call("aclnnAdaptiveAvgPool2dBackward", grad, x, out, backend=backend)
    assert_close(out, reference(grad, x.shape), np.float32)


@pytest.mark.parametrize("size, out", [(7, 4), (13, 6), (8, 4)])
def test_inf_and_nan_of_the_gradient_stay_in_their_windows(backend, torch, size, out):
    """An inf or NaN of gradOutput reaches its own window's elements only, as in PyTorch (7 -> 4
    and 13 -> 6: windows that do not tile the plane, where averaging matrices would spread
    inf * 0 = NaN over it; 8 -> 4: tiling windows)."""
    rng = np.random.default_rng(11)
    x = random_array(rng, (2, 3, size, size), np.float32)
    grad = random_array(rng, (2, 3, out, out), np.float32)
    grad[0, 0, 1, 1], grad[0, 0, 0, out - 1], grad[1, 2, out - 1, 0] = np.inf, np.nan, -np.inf
    grad[1, 2, out - 1, 1] = np.inf  # (beside the -inf: their shared elements are NaN)
    with np.errstate(all="raise"):
        result = aclnn_py.adaptive_avg_pool2d_backward(grad, x, backend=backend)
    tx = torch.from_numpy(x).requires_grad_(True)
    (expected,) = torch.autograd.grad(torch.nn.functional.adaptive_avg_pool2d(tx, out), tx, torch.from_numpy(grad))
    expected = expected.numpy()
    assert np.array_equal(np.isnan(result), np.isnan(expected)) and np.isnan(result).any()
    assert np.array_equal(np.isinf(result), np.isinf(expected)) and np.isinf(result).any()
    assert np.array_equal(np.signbit(result[np.isinf(result)]), np.signbit(expected[np.isinf(expected)]))
    finite = np.isfinite(expected)
    assert_close(result[finite], expected[finite], np.float32)
