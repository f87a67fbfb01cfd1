"""The simulator's MaxUnpool2dBackward kernel (src/ops/max_unpool2d_backward.c): its whole-plane
paths (indices and output planes contiguous: one vectorised range check per plane, then
out[i] = gradOutput[k[i]] straight from the indices) and the row-by-row path of other layouts,
for every element size and both index dtypes, odd sizes, sizes split over the worker threads,
and an index out of range found by either path (the first one reported, nothing written).
The oracle is PyTorch CPU's gather."""

from __future__ import annotations

import numpy as np
import pytest

import aclnn_py
from aclnn_py import AclnnError, Tensor

torch = pytest.importorskip("torch")

UNPOOL = "aclnnMaxUnpool2dBackward"


def reference(go: np.ndarray, indices: np.ndarray) -> np.ndarray:
    flat = torch.from_numpy(np.ascontiguousarray(go)).flatten(-2)
    index = torch.from_numpy(np.ascontiguousarray(indices).astype(np.int64)).flatten(-2)
    return flat.gather(-1, index).view(indices.shape).numpy()


def problem(rng, shape, out_hw, dtype, index_dtype):
    go = (rng.standard_normal((*shape[:-2], *out_hw)) * 50).astype(dtype)
    indices = rng.integers(0, out_hw[0] * out_hw[1], size=shape).astype(index_dtype)
    return go, indices


# Enough planes and work for two worker threads (kernels/parallel.h: 2^22 in all, a plane's
# cost in the kernel's units twice its indices plus its gradOutput plane).
THREADS = ((2, 128, 128, 129), (256, 258))


# Element sizes 1, 2, 4, 8 (each has its own copy loop); odd planes; planes split over threads.
@pytest.mark.parametrize("index_dtype", [np.int64, np.int32], ids=str)
@pytest.mark.parametrize("dtype", [np.int8, np.float16, np.float32, np.int64, np.bool_], ids=str)
@pytest.mark.parametrize("shape, out_hw", [((1, 1, 1, 1), (1, 1)), ((3, 5, 7, 9), (11, 13)), ((7, 3, 5), (9, 4)),
                                           THREADS],
                         ids=["1x1", "odd", "3d", "threads"])
def test_whole_plane_gather(shape, out_hw, dtype, index_dtype):
    go, indices = problem(np.random.default_rng(1), shape, out_hw, dtype, index_dtype)
    result = aclnn_py.max_unpool2d_backward(go, np.zeros(shape, dtype), indices, list(out_hw), backend="sim")
    assert result.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(result, reference(go, indices))


@pytest.mark.parametrize("layout", ["rows apart", "columns strided", "transposed"])
@pytest.mark.parametrize("index_dtype", [np.int64, np.int32], ids=str)
def test_other_index_layouts(layout, index_dtype):
    """Indices whose planes are not one run of elements take the row-by-row path."""
    rng = np.random.default_rng(2)
    shape, out_hw = (2, 3, 6, 5), (9, 8)
    go, indices = problem(rng, shape, out_hw, np.float32, index_dtype)
    n, c, h, w = shape
    if layout == "rows apart":
        storage = np.zeros((n, c, h, w + 3), index_dtype)
        storage[..., :w] = indices
        strides = [c * h * (w + 3), h * (w + 3), w + 3, 1]
    elif layout == "columns strided":
        storage = np.zeros((n, c, h, 2 * w), index_dtype)
        storage[..., ::2] = indices
        strides = [c * h * 2 * w, h * 2 * w, 2 * w, 2]
    else:
        storage = np.ascontiguousarray(indices.transpose(0, 1, 3, 2))
        strides = [c * h * w, h * w, 1, h]
    with Tensor.from_numpy(storage, backend="sim") as base, base.view(shape, strides) as view:
        result = aclnn_py.max_unpool2d_backward(go, np.zeros(shape, np.float32), view, list(out_hw), backend="sim")
        np.testing.assert_array_equal(result.numpy(), reference(go, indices))


@pytest.mark.parametrize("index_dtype", [np.int64, np.int32], ids=str)
@pytest.mark.parametrize("flat", [True, False], ids=["whole planes", "rows"])
@pytest.mark.parametrize("bad", [-1, 256 * 258, 2**31 - 1], ids=["negative", "plane size", "huge"])
def test_first_index_out_of_range_and_nothing_written(bad, flat, index_dtype):
    """Two bad indices, in different planes split over the threads: the first (row-major) one is
    named, and the output keeps what it held."""
    rng = np.random.default_rng(3)
    shape, out_hw = THREADS
    go, indices = problem(rng, shape, out_hw, np.float32, index_dtype)
    indices[1, 90, 3, 4] = bad
    indices[0, 40, 64, 66] = bad
    n, c, h, w = shape
    if flat:
        storage, strides = indices, [c * h * w, h * w, w, 1]
    else:
        storage = np.zeros((n, c, h, w + 1), index_dtype)
        storage[..., :w] = indices
        strides = [c * h * (w + 1), h * (w + 1), w + 1, 1]
    before = np.full(shape, 7.0, np.float32)
    with Tensor.from_numpy(storage, backend="sim") as base, base.view(shape, strides) as view, \
            Tensor.from_numpy(before, backend="sim") as out:
        with pytest.raises(AclnnError) as info:
            aclnn_py.call(UNPOOL, go, np.zeros(shape, np.float32), view, list(out_hw), out, backend="sim")
            out.numpy()
        assert info.value.status == 507015
        assert f"indices[0, 40, 64, 66] = {bad} is outside [0, {256 * 258})" in info.value.message
        assert "nothing was written" in info.value.message
        np.testing.assert_array_equal(out.numpy(), before)


@pytest.mark.parametrize("bad", [-2**63, -2**62, 2**63 - 1, 2**62, 256 * 258 + 1], ids=str)
def test_int64_extremes_out_of_range(bad):
    """The whole-plane range check of int64 indices (one OR of k and size - 1 - k, unsigned, per
    element) at the ends of int64, where a subtraction wraps: each is refused, nothing written."""
    shape, out_hw = THREADS
    go, indices = problem(np.random.default_rng(4), shape, out_hw, np.float32, np.int64)
    indices[1, 100, 127, 128] = bad
    before = np.full(shape, 3.0, np.float32)
    with Tensor.from_numpy(before, backend="sim") as out:
        with pytest.raises(AclnnError) as info:
            aclnn_py.call(UNPOOL, go, np.zeros(shape, np.float32), indices, list(out_hw), out, backend="sim")
            out.numpy()
        assert info.value.status == 507015
        assert f"indices[1, 100, 127, 128] = {bad} is outside [0, {256 * 258})" in info.value.message
        np.testing.assert_array_equal(out.numpy(), before)


@pytest.mark.parametrize("index_dtype", [np.int64, np.int32], ids=str)
def test_first_and_last_index_of_a_plane_are_in_range(index_dtype):
    """0 and oH*oW - 1, the ends of the valid range, in every position of a plane: gathered."""
    shape, out_hw = (2, 3, 17, 19), (40, 41)
    go, _ = problem(np.random.default_rng(5), shape, out_hw, np.float32, index_dtype)
    indices = np.where(np.indices(shape).sum(0) % 2 == 0, 0, 40 * 41 - 1).astype(index_dtype)
    result = aclnn_py.max_unpool2d_backward(go, np.zeros(shape, np.float32), indices, list(out_hw), backend="sim")
    np.testing.assert_array_equal(result, reference(go, indices))
