"""threshold_backward (aclnnThresholdBackward): values against PyTorch for every documented
dtype, broadcasting, NaN, views (the invalid inputs: invalid_cases.py)."""

from __future__ import annotations

import numpy as np
import pytest

import aclnn_py
from aclnn_py.ops.threshold_backward import DTYPES
from helpers import assert_close, random_array


def _torch(torch, g, x, threshold):
    def t(a):
        return torch.from_numpy(a.astype(np.float32) if a.dtype.kind not in "iub" else a)
    return torch.ops.aten.threshold_backward(t(g), t(x), threshold).numpy()


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_every_documented_dtype_matches_torch(backend, torch, dtype):
    rng = np.random.default_rng(0)
    g, x = random_array(rng, (2, 3, 4, 5), dtype), random_array(rng, (3, 1, 5), dtype)
    for threshold in (0, 1) if dtype.kind in "iu" else (0, 0.25):
        result = aclnn_py.threshold_backward(g, x, threshold, backend=backend)
        assert result.dtype == dtype and result.shape == (2, 3, 4, 5)
        assert_close(result, _torch(torch, g, x, threshold).astype(dtype), dtype)


def test_nan_self_passes_and_threshold_is_a_float(backend):
    g = np.full(4, 2.0, np.float16)
    x = np.array([np.nan, 0.0, 0.1, -np.inf], np.float16)
    np.testing.assert_array_equal(aclnn_py.threshold_backward(g, x, 0, backend=backend), [2, 0, 2, 0])
    ints = np.array([1, 2, 3], np.int32)
    np.testing.assert_array_equal(aclnn_py.threshold_backward(ints, ints, 1.5, backend=backend), [0, 2, 3])
    np.testing.assert_array_equal(aclnn_py.threshold_backward(ints, ints, True, backend=backend), [0, 2, 3])


def test_views_and_empty(backend):
    base = np.arange(-12, 12, dtype=np.float32).reshape(4, 6)
    np.testing.assert_array_equal(aclnn_py.threshold_backward(base.T, base.T[::-1], 0, backend=backend),
                                  np.where(base.T[::-1] > 0, base.T, 0))
    empty = aclnn_py.threshold_backward(np.zeros((0, 2), np.float32), np.zeros((1, 2), np.float32), 0, backend=backend)
    assert empty.shape == (0, 2)


def test_call_on_both_backends(backend):
    g, x = np.ones((2, 3), np.float32), np.array([-1.0, 0.0, 1.0], np.float32)
    out = np.full((2, 3), 9.0, np.float32)
    aclnn_py.call("aclnnThresholdBackward", g, x, 0.0, out, backend=backend)
    np.testing.assert_array_equal(out, [[0, 0, 1], [0, 0, 1]])
