"""upsample_nearest2d (aclnnUpsampleNearest2d) against PyTorch CPU (legacy nearest), every documented
dtype (values copied exactly), non-contiguous views, empty batches."""

from __future__ import annotations

import numpy as np
import pytest

import aclnn_py
from aclnn_py import bfloat16
from helpers import random_array

DTYPES = [np.dtype(t) for t in (np.float16, np.float32, np.float64, np.uint8)] + [np.dtype(bfloat16)]
CASES = [((2, 3, 5, 6), (7, 13)), ((1, 2, 8, 8), (4, 3)), ((1, 1, 3, 3), (9, 10)), ((2, 2, 13, 13), (26, 26)),
         ((1, 1, 7, 5), (7, 5)), ((1, 1, 1, 1), (3, 2))]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shape, output_size", CASES)
def test_matches_torch(backend, torch, dtype, shape, output_size):
    x = random_array(np.random.default_rng(0), shape, dtype)
    result = aclnn_py.upsample_nearest2d(x, list(output_size), backend=backend)
    wide = x.astype(np.float64) if dtype == bfloat16 else x
    expected = torch.nn.functional.interpolate(torch.from_numpy(wide), size=output_size, mode="nearest").numpy()
    assert result.dtype == dtype and result.shape == shape[:2] + output_size
    np.testing.assert_array_equal(result.astype(np.float64), expected.astype(np.float64))


def test_non_contiguous_views(backend, torch):
    x = random_array(np.random.default_rng(1), (2, 3, 5, 7), np.float32)
    expected = torch.nn.functional.interpolate(torch.from_numpy(x), size=(11, 9), mode="nearest").numpy()
    for view in (np.ascontiguousarray(x.swapaxes(-1, -2)).swapaxes(-1, -2), np.ascontiguousarray(x[:, ::-1])[:, ::-1],
                 np.repeat(x, 2, axis=-1)[..., ::2]):
        np.testing.assert_array_equal(aclnn_py.upsample_nearest2d(view, [11, 9], backend=backend), expected)


def test_empty_batch(backend):
    assert aclnn_py.upsample_nearest2d(np.zeros((0, 3, 4, 4), np.float32), 8, backend=backend).shape == (0, 3, 8, 8)


def test_call_with_cann_names(backend, torch):
    x = random_array(np.random.default_rng(2), (1, 2, 3, 4), np.float32)
    out = np.zeros((1, 2, 6, 8), np.float32)
    aclnn_py.call("aclnnUpsampleNearest2d", x, [6, 8], out, backend=backend)
    np.testing.assert_array_equal(out, torch.nn.functional.interpolate(torch.from_numpy(x), size=(6, 8)).numpy())
