"""adaptive_avg_pool2d (aclnnAdaptiveAvgPool2d) against PyTorch CPU and the slow reference."""

from __future__ import annotations

import numpy as np
import pytest

import aclnn_py
from aclnn_py import bfloat16
from helpers import assert_close, random_array
from reference.adaptive_avg_pool2d import adaptive_avg_pool2d as reference

DTYPES = [np.dtype(np.float32), np.dtype(np.float16), np.dtype(bfloat16)]
CASES = [((2, 3, 9, 10), (4, 3)), ((3, 7, 7), (1, 1)), ((2, 2, 5, 5), (7, 3)), ((1, 4, 14, 14), (7, 7)),
         ((2, 1, 13, 13), (6, 6))]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shape, output_size", CASES)
def test_matches_torch(backend, torch, dtype, shape, output_size):
    x = random_array(np.random.default_rng(0), shape, dtype)
    result = aclnn_py.adaptive_avg_pool2d(x, list(output_size), backend=backend)
    expected = torch.nn.functional.adaptive_avg_pool2d(torch.from_numpy(x.astype(np.float32)), output_size)
    assert result.dtype == dtype and result.shape == shape[:-2] + output_size
    assert_close(result, expected.numpy().astype(dtype), dtype)
    assert_close(result, reference(x.astype(np.float32), output_size).astype(dtype), dtype)


def test_non_contiguous_views(backend):
    x = random_array(np.random.default_rng(1), (2, 3, 9, 8), np.float32)
    expected = reference(x, (4, 3))
    for view in (np.ascontiguousarray(x.swapaxes(-1, -2)).swapaxes(-1, -2), np.ascontiguousarray(x[:, ::-1])[:, ::-1],
                 np.repeat(x, 2, axis=-1)[..., ::2]):
        assert_close(aclnn_py.adaptive_avg_pool2d(view, [4, 3], backend=backend), expected, np.float32)


@pytest.mark.parametrize("shape", [(0, 3, 4, 4), (2, 0, 4, 4), (2, 3, 0, 4)])
def test_empty_self_succeeds(backend, shape):
    result = aclnn_py.adaptive_avg_pool2d(np.zeros(shape, np.float32), [2, 2], backend=backend)
    assert result.shape == shape[:-2] + (2, 2) and not result.any()


def test_call_with_cann_names(backend):
    x = random_array(np.random.default_rng(2), (1, 2, 5, 6), np.float32)
    out = np.zeros((1, 2, 2, 3), np.float32)
    aclnn_py.call("aclnnAdaptiveAvgPool2d", x, [2, 3], out, backend=backend)
    assert_close(out, reference(x, (2, 3)), np.float32)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_many_planes_one_product_matches_torch(backend, torch, dtype, monkeypatch):
    # Too many planes for the small path: the kernel averages by one product with
    # pooling.plane_matrix (windows that neither tile the plane nor make one mean).
    from aclnn_py._numpy import pooling
    used = []
    original = pooling.plane_matrix
    monkeypatch.setattr(pooling, "plane_matrix", lambda *a: (used.append(a), original(*a))[1])
    x = random_array(np.random.default_rng(4), (2, 200, 13, 13), dtype)
    result = aclnn_py.adaptive_avg_pool2d(x, [6, 5], backend=backend)
    expected = torch.nn.functional.adaptive_avg_pool2d(torch.from_numpy(x.astype(np.float32)), (6, 5))
    assert result.dtype == dtype and result.shape == (2, 200, 6, 5)
    assert_close(result, expected.numpy().astype(dtype), dtype)
    if backend == "numpy":
        assert used == [(13, 13, 6, 5)]


@pytest.mark.parametrize("size, out, marks", [
    (13, 6, [(0, 3, 2, 2, np.inf), (1, 7, 12, 0, np.nan), (1, 8, 5, 6, -np.inf)]),
    # 7 -> 4: windows of 2, 3, 3 and 2 elements; an inf that is a short window's last element
    # (the gathers once masked it in as inf * 0 = NaN), and a -inf in the middle of the plane.
    (7, 4, [(0, 0, 6, 6, np.inf), (0, 1, 1, 1, np.inf), (1, 2, 6, 0, -np.inf), (1, 3, 3, 3, -np.inf)]),
])
def test_inf_and_nan_stay_in_their_windows(backend, torch, size, out, marks):
    # The product would spread inf * 0 = NaN over the whole plane: such data takes the gathers.
    x = random_array(np.random.default_rng(5), (2, 200, size, size), np.float32)
    for n, c, h, w, value in marks:
        x[n, c, h, w] = value
    with np.errstate(all="raise"):  # (no warning from the gathers either)
        result = aclnn_py.adaptive_avg_pool2d(x, [out, out], backend=backend)
    expected = torch.nn.functional.adaptive_avg_pool2d(torch.from_numpy(x), out).numpy()
    assert np.array_equal(np.isnan(result), np.isnan(expected))
    assert np.array_equal(np.isinf(result), np.isinf(expected)) and np.isinf(result).any()
    finite = np.isfinite(expected)
    assert_close(result[finite], expected[finite], np.float32)
