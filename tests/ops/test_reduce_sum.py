"""reduce_sum (aclnnReduceSum): values against PyTorch for every documented dtype, dims rules
(negative, empty = all, keep_dims), self converted to dtype first, transposed views, 0-d and
empty self, and ``call`` with CANN's parameter names."""

from __future__ import annotations

import numpy as np
import pytest

import aclnn_py
from aclnn_py import bfloat16
from aclnn_py.ops.reduce_sum import DTYPES
from helpers import assert_close, random_array


def _torch_sum(torch, x, dims, keep, dtype):
    wide = x.astype(np.float32) if dtype in (np.float16, bfloat16) else x.astype(dtype)
    t = torch.from_numpy(wide)
    dims = dims or list(range(x.ndim))
    if dtype == np.bool_:
        return (t.to(torch.int64).sum(dims, keep) > 0).numpy()
    return t.sum(dims, keep).numpy().astype(dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("dims, keep", [([1], False), ([0, -1], True), ([], False), ([-2], True)], ids=str)
def test_matches_torch(backend, torch, dtype, dims, keep):
    x = random_array(np.random.default_rng(0), (4, 5, 6), dtype)
    ours = aclnn_py.reduce_sum(x, dims, keep, dtype, backend=backend)
    theirs = _torch_sum(torch, x, dims, keep, dtype)
    assert ours.dtype == dtype and ours.shape == theirs.shape
    if dtype.kind in "iub":
        np.testing.assert_array_equal(ours, theirs)
    else:
        assert_close(ours, theirs, dtype, scale=30)


def test_converted_to_dtype_first_and_wrapping(backend):
    x = np.array([[100, 100, 100], [1, 2, 3]], np.int32)
    np.testing.assert_array_equal(aclnn_py.reduce_sum(x, [1], False, np.int8, backend=backend), [44, 6])  # 300 mod 256
    f = np.array([[0.7, 1.9], [-1.5, 2.5]], np.float32)
    each = f.astype(np.float16).astype(np.float32)  # converted to FLOAT16 first, summed in float, rounded once
    np.testing.assert_array_equal(aclnn_py.reduce_sum(f, [1], False, np.float16, backend=backend),
                                  each.sum(1).astype(np.float16))
    np.testing.assert_array_equal(aclnn_py.reduce_sum(f, [0], False, np.bool_, backend=backend), [True, True])


def test_views_zero_d_empty_and_call(backend):
    x = random_array(np.random.default_rng(1), (6, 4, 5), np.float32)
    view = x.transpose(2, 0, 1)[:, ::2]
    assert_close(aclnn_py.reduce_sum(view, [1, 2], False, np.float32, backend=backend),
                 view.astype(np.float64).sum((1, 2)), np.dtype(np.float32), scale=10)
    scalar = np.asarray(2.5, np.float32)
    assert aclnn_py.reduce_sum(scalar, [], False, np.float32, backend=backend) == 2.5
    assert aclnn_py.reduce_sum(scalar, [-1], True, np.float32, backend=backend) == 2.5
    np.testing.assert_array_equal(aclnn_py.reduce_sum(np.zeros((0, 3), np.int32), [0], False, np.int32,
                                                      backend=backend), [0, 0, 0])
    out = np.full((6, 1, 1), 9.0, np.float32)
    aclnn_py.call("aclnnReduceSum", self=x, dims=[1, 2], keepDims=True, dtype=aclnn_py.aclDataType.ACL_FLOAT, out=out,
                  backend=backend)
    assert_close(out, x.sum((1, 2), keepdims=True), np.dtype(np.float32), scale=10)
