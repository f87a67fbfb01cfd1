"""mean (aclnnMean): values against PyTorch for every documented dtype (integers: the truncated
mean, which PyTorch does not offer, against a float64 reference), dims rules, views, 0-d and
empty self (NaN), and ``call`` with an out of another dtype (sim)."""

from __future__ import annotations

import numpy as np
import pytest

import aclnn_py
from aclnn_py import bfloat16
from aclnn_py.ops.mean import DTYPES
from helpers import assert_close, random_array


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("dims, keep", [([1], False), ([0, -1], True), ([], False)], ids=str)
def test_matches_torch(backend, torch, dtype, dims, keep):
    x = random_array(np.random.default_rng(0), (4, 5, 6), dtype)
    ours = aclnn_py.mean(x, dims, keep, dtype, backend=backend)
    axes = tuple(dims) or tuple(range(3))
    if dtype.kind in "iu":
        theirs = np.trunc(x.astype(np.float64).sum(axes, keepdims=keep) / np.prod([x.shape[d] for d in axes]))
        np.testing.assert_array_equal(ours, theirs.astype(dtype))
        return
    wide = x.astype(np.float32) if dtype in (np.float16, bfloat16) else x
    theirs = torch.mean(torch.from_numpy(wide), list(axes), keep).numpy().astype(dtype)
    assert ours.dtype == dtype
    assert_close(ours, theirs, dtype, scale=4)


def test_views_zero_d_empty(backend):
    x = random_array(np.random.default_rng(1), (6, 4, 5), np.float32)
    view = x.transpose(2, 0, 1)[:, ::2]
    assert_close(aclnn_py.mean(view, [1, 2], False, np.float32, backend=backend),
                 view.astype(np.float64).mean((1, 2)), np.dtype(np.float32))
    assert aclnn_py.mean(np.asarray(2.5, np.float32), [], False, np.float32, backend=backend) == 2.5
    assert np.isnan(aclnn_py.mean(np.zeros((0, 3), np.float32), [0], False, np.float32, backend=backend)).all()
    np.testing.assert_array_equal(aclnn_py.mean(np.zeros((0, 3), np.int32), [0], False, np.int32,
                                                backend=backend), [0, 0, 0])


def test_call_with_another_out_dtype(sim_lib):
    x = np.arange(12, dtype=np.int32).reshape(3, 4)
    out = np.zeros(3, np.float32)
    aclnn_py.call("aclnnMean", x, [1], False, aclnn_py.aclDataType.ACL_INT32, out, backend="sim")
    np.testing.assert_array_equal(out, [1, 5, 9])  # the truncated INT32 mean, converted to FLOAT
