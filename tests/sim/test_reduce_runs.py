"""The simulator's ReduceSum/Mean over one contiguous run of FLOAT (a global pool's H*W), or over
runs of a contiguous last reduced dim (batch statistics over [0, 2, 3], pieces of 4096 crossing
runs), sums the pieces where they lie instead of gathering them (ops/reduce.c sum_range): the
same bits as the gathered path, which a view with the reduced dims in another memory order
takes (the elements in the same index order); PyTorch is the oracle of the values."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import aclnn_py

from helpers import assert_close


@pytest.mark.parametrize("shape, dims", [((8, 64, 7, 7), [2, 3]), ((3, 5, 9000), [2]), ((4, 6, 33, 35), [1, 2, 3]),
                                         ((3, 4, 61, 67), [0, 2, 3]), ((2, 9, 50, 101), [0, 3]),
                                         ((5, 3, 7, 9), [0, 2, 3])])
@pytest.mark.parametrize("out_dtype", [np.float32, np.float16])
def test_contiguous_run_gives_the_gathered_bits(sim_lib, shape, dims, out_dtype):
    x = np.random.default_rng(len(shape) + len(dims)).standard_normal(shape).astype(np.float32)
    # the same values with the last two dims swapped in memory: the reduced dims are no one run
    swapped = np.ascontiguousarray(np.swapaxes(x, -1, -2)).swapaxes(-1, -2)
    assert not swapped.flags.c_contiguous
    with aclnn_py.use_backend("sim"):
        fast = aclnn_py.mean(x, dims, False, out_dtype)
        gathered = aclnn_py.mean(swapped, dims, False, out_dtype)
        total = aclnn_py.reduce_sum(x, dims, False, np.float32)
        total_gathered = aclnn_py.reduce_sum(swapped, dims, False, np.float32)
    assert fast.dtype == out_dtype
    np.testing.assert_array_equal(fast.view(np.uint8), gathered.view(np.uint8))
    np.testing.assert_array_equal(total.view(np.uint8), total_gathered.view(np.uint8))
    want = torch.from_numpy(x).double().mean(dim=dims).numpy().astype(out_dtype)
    assert_close(fast, want, out_dtype)
