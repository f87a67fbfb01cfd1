"""max_unpool2d (aclnnMaxUnpool2d): values against PyTorch CPU, views, index faults."""

from __future__ import annotations

import numpy as np
import pytest

import aclnn_py
from aclnn_py import AclnnError
from aclnn_py.ops.max_unpool2d import _pool_indices
from helpers import random_array

DTYPES = [np.float32, np.float16, np.int8, np.uint8, np.int16, np.int32, np.int64, np.float64]


def _torch_unpool(torch, x, indices, output_size):
    """F.max_unpool2d in float64 (exact for these values), as a 4-D batch, cast back."""
    four = x if x.ndim == 4 else x[None]
    idx = indices if indices.ndim == 4 else indices[None]
    out = torch.nn.functional.max_unpool2d(torch.from_numpy(four.astype(np.float64)),
                                           torch.from_numpy(idx.astype(np.int64)), 2, output_size=output_size)
    result = out.numpy().astype(x.dtype)
    return result if x.ndim == 4 else result[0]


@pytest.mark.parametrize("index_dtype", [np.int64, np.int32], ids=str)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shape", [(2, 3, 4, 5), (3, 4, 5), (1, 1, 1, 1)], ids=str)
def test_matches_torch(backend, torch, shape, dtype, index_dtype):
    rng = np.random.default_rng(0)
    x = random_array(rng, shape, dtype)
    indices = _pool_indices(rng, shape, index_dtype)
    output_size = [2 * shape[-2], 2 * shape[-1]]
    result = aclnn_py.max_unpool2d(x, indices, output_size, backend=backend)
    assert result.dtype == x.dtype
    np.testing.assert_array_equal(result, _torch_unpool(torch, x, indices, output_size))


@pytest.mark.parametrize("shape", [(2, 3, 32, 33), (3, 1000, 3, 4)], ids=str)
def test_plane_by_plane_and_blocks(backend, torch, shape):
    """Planes of >= 1024 inputs scattered one by one, and more small planes than one block
    of offset indices holds (max_unpool2d._PLANE_BY_PLANE, _BLOCK_INDICES)."""
    rng = np.random.default_rng(2)
    x = random_array(rng, shape, np.float32)
    indices = _pool_indices(rng, shape, np.int64)
    output_size = [2 * shape[-2], 2 * shape[-1]]
    result = aclnn_py.max_unpool2d(x, indices, output_size, backend=backend)
    np.testing.assert_array_equal(result, _torch_unpool(torch, x, indices, output_size))
    indices[-1, -1, -1, 0] = -1  # (in the last block: the whole check names it)
    with pytest.raises(AclnnError) as info:
        aclnn_py.max_unpool2d(x, indices, output_size, backend=backend)
    where = ", ".join(str(n - 1) for n in shape[:-1])
    assert f"indices[{where}, 0] = -1 is outside [0, {4 * shape[-2] * shape[-1]})" in str(info.value)


def test_output_size_larger_than_the_pooling(backend):
    x = np.arange(1, 5, dtype=np.float32).reshape(1, 1, 2, 2)
    indices = np.array([[[[0, 6], [13, 19]]]], np.int64)
    result = aclnn_py.max_unpool2d(x, indices, [4, 5], backend=backend)
    expected = np.zeros(20, np.float32)
    expected[[0, 6, 13, 19]] = [1, 2, 3, 4]
    np.testing.assert_array_equal(result, expected.reshape(1, 1, 4, 5))


def test_repeated_index_last_wins(backend):
    x = np.array([[[1.0, 2.0], [3.0, 4.0]]], np.float32)
    indices = np.array([[[5, 5], [0, 5]]], np.int64)
    result = aclnn_py.max_unpool2d(x, indices, [3, 3], backend=backend)
    assert result[0, 0, 0] == 3 and result[0, 1, 2] == 4 and np.count_nonzero(result) == 2


def test_non_contiguous_inputs(backend, torch):
    rng = np.random.default_rng(1)
    x = random_array(rng, (2, 3, 4, 5), np.float32)
    indices = _pool_indices(rng, (2, 3, 4, 5), np.int64)
    expected = _torch_unpool(torch, x, indices, [8, 10])
    for vx, vi in ((np.asfortranarray(x), np.asfortranarray(indices)),
                   (np.repeat(x, 2, axis=-1)[..., ::2], np.repeat(indices, 2, axis=-1)[..., ::2]),
                   (np.ascontiguousarray(x.swapaxes(2, 3)).swapaxes(2, 3),
                    np.ascontiguousarray(indices.swapaxes(0, 1)).swapaxes(0, 1))):
        np.testing.assert_array_equal(aclnn_py.max_unpool2d(vx, vi, [8, 10], backend=backend), expected)


def test_empty_batch(backend):
    result = aclnn_py.max_unpool2d(np.zeros((0, 2, 3, 3), np.float32), np.zeros((0, 2, 3, 3), np.int64), [6, 6],
                                   backend=backend)
    assert result.shape == (0, 2, 6, 6)


@pytest.mark.parametrize("bad", [16, -1, 2**40])
def test_index_out_of_range_is_a_device_fault_naming_it(backend, bad):
    indices = np.array([[[[0, 1], [4, 5]]]], np.int64)
    indices[0, 0, 1, 0] = bad
    with pytest.raises(AclnnError) as info:
        aclnn_py.max_unpool2d(np.ones((1, 1, 2, 2), np.float32), indices, [4, 4], backend=backend)
    assert info.value.status == 507015
    assert f"indices[0, 0, 1, 0] = {bad} is outside [0, 16)" in str(info.value)


def test_call_by_cann_names_writes_out(backend, torch):
    rng = np.random.default_rng(2)
    x = random_array(rng, (2, 3, 4, 5), np.float32)
    indices = _pool_indices(rng, (2, 3, 4, 5), np.int32)
    out = np.full((2, 3, 8, 10), 7.0, np.float32)
    aclnn_py.call("aclnnMaxUnpool2d", self=x, indices=indices, outputSize=[8, 10], out=out, backend=backend)
    np.testing.assert_array_equal(out, _torch_unpool(torch, x, indices, [8, 10]))
