"""max_unpool2d_backward (aclnnMaxUnpool2dBackward): gather values, dtypes, errors."""

from __future__ import annotations

import numpy as np
import pytest

import aclnn_py
from aclnn_py._numpy import plans as _plans
from helpers import assert_close, random_array
from reference.max_unpool2d_backward import max_unpool2d_backward as reference
from aclnn_py._numpy import workers as _workers

API = "aclnnMaxUnpool2dBackwardGetWorkspaceSize"

DTYPES = [np.dtype(t) for t in (np.float32, np.float16, np.int8, np.uint8, np.int16, np.int32, np.int64, np.bool_)]
INDEX_DTYPES = [np.dtype(np.int64), np.dtype(np.int32)]


def _problem(rng, self_shape, output_size, dtype, index_dtype=np.int64):
    """(gradOutput, self, indices) with random in-range indices (any gather is legal)."""
    grad_output = random_array(rng, self_shape[:-2] + tuple(output_size), dtype)
    self = random_array(rng, self_shape, dtype)
    indices = rng.integers(0, output_size[0] * output_size[1], size=self_shape).astype(index_dtype)
    return grad_output, self, indices


@pytest.mark.parametrize("index_dtype", INDEX_DTYPES, ids=str)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("self_shape, output_size", [((2, 3, 3, 4), (5, 7)), ((3, 2, 2), (4, 5))])
def test_matches_reference(backend, self_shape, output_size, dtype, index_dtype):
    rng = np.random.default_rng(0)
    grad_output, self, indices = _problem(rng, self_shape, output_size, dtype, index_dtype)
    result = aclnn_py.max_unpool2d_backward(grad_output, self, indices, list(output_size), backend=backend)
    assert result.dtype == dtype and result.shape == self_shape
    assert_close(result, reference(grad_output, self, indices, output_size), dtype)


@pytest.fixture
def gather_choices(monkeypatch):
    """Set the numpy gather's chunk and per-thread sizes (plans made before are forgotten)."""
    import sys

    kernel = sys.modules["aclnn_py.ops.max_unpool2d_backward"]

    def choose(chunk, per_thread):
        monkeypatch.setattr(kernel, "_CHUNK", chunk)
        monkeypatch.setattr(_workers, "MIN_PARALLEL_ELEMENTS", per_thread)
        _plans.forget_plans()

    yield choose
    _plans.forget_plans()


@pytest.mark.parametrize("index_dtype", INDEX_DTYPES, ids=str)
@pytest.mark.parametrize("chunk, per_thread", [(7, 1), (1, 5), (6, 1), (12, 1), (18, 1 << 16), (1 << 16, 1)])
def test_numpy_gather_in_chunks_and_threads(gather_choices, chunk, per_thread, index_dtype):
    """Large inputs are gathered on every worker thread, in chunks of planes: forced here
    (chunks of one plane or a few, the last one short; parts down to one plane; one chunk for
    all) on a small problem."""
    gather_choices(chunk, per_thread)
    rng = np.random.default_rng(4)
    grad_output, self, indices = _problem(rng, (3, 5, 2, 3), (4, 5), np.float32, index_dtype)
    for _ in range(2):  # the plan's first call, and a call reusing it
        result = aclnn_py.max_unpool2d_backward(grad_output, self, indices, [4, 5], backend="numpy")
        assert_close(result, reference(grad_output, self, indices, (4, 5)), np.float32)


@pytest.mark.parametrize("index_dtype", INDEX_DTYPES, ids=str)
@pytest.mark.parametrize("chunk, per_thread", [(6, 1), (12, 1), (1 << 16, 1)])
@pytest.mark.parametrize("bad", [[(2, 4, 1, 2)], [(1, 0, 0, 0), (2, 4, 1, 2)], [(0, 3, 1, 0), (0, 0, 0, 1)]])
@pytest.mark.parametrize("value", [-1, 20, 2**31 - 1])
def test_numpy_index_out_of_range_in_any_chunk(gather_choices, chunk, per_thread, index_dtype, bad, value):
    """An index out of range anywhere (a later chunk, another thread's part, several) is 507015
    naming the first one in C order, also once the call's plan is cached."""
    gather_choices(chunk, per_thread)
    rng = np.random.default_rng(5)
    grad_output, self, indices = _problem(rng, (3, 5, 2, 3), (4, 5), np.float32, index_dtype)
    aclnn_py.max_unpool2d_backward(grad_output, self, indices, [4, 5], backend="numpy")  # caches the plan
    for at in bad:
        indices[at] = value
    first = min(bad)
    with pytest.raises(aclnn_py.AclnnError) as caught:
        aclnn_py.max_unpool2d_backward(grad_output, self, indices, [4, 5], backend="numpy")
    assert caught.value.status == 507015 and caught.value.api == "aclrtSynchronizeStream"
    assert f"indices[{', '.join(map(str, first))}] = {value} is outside [0, 20)" in caught.value.message


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("self_shape, output_size", [
    ((2, 3, 5, 6), (10, 12)),
    ((4, 3, 3), (6, 6)),
    ((1, 2, 32, 40), (64, 80)),    # large planes: one gather call per plane
])
def test_matches_torch_gather(backend, torch, self_shape, output_size, dtype):
    rng = np.random.default_rng(1)
    grad_output, self, indices = _problem(rng, self_shape, output_size, dtype)
    result = aclnn_py.max_unpool2d_backward(grad_output, self, indices, output_size, backend=backend)
    expected = torch.from_numpy(grad_output).flatten(-2).gather(-1, torch.from_numpy(indices).flatten(-2))
    assert_close(result, expected.view(self_shape).numpy(), dtype)


@pytest.mark.parametrize("self_shape", [(2, 3, 4, 5), (3, 8, 6), (1, 1, 20, 64)])
def test_matches_torch_autograd_of_max_unpool2d(backend, torch, self_shape):
    # Indices as a real 2x2 max pool produces them; grad of F.max_unpool2d w.r.t. its input.
    rng = np.random.default_rng(2)
    image = torch.from_numpy(random_array(rng, self_shape[:-2] + (2 * self_shape[-2], 2 * self_shape[-1]), np.float32))
    pooled, indices = torch.nn.functional.max_pool2d(image, 2, return_indices=True)
    pooled.requires_grad_(True)
    output_size = tuple(image.shape[-2:])
    unpooled = torch.nn.functional.max_unpool2d(pooled, indices, 2, output_size=output_size)
    grad_output = torch.from_numpy(random_array(rng, tuple(unpooled.shape), np.float32))
    (expected,) = torch.autograd.grad(unpooled, pooled, grad_output)
    result = aclnn_py.max_unpool2d_backward(grad_output.numpy(), pooled.detach().numpy(), indices.numpy(),
                                            list(output_size), backend=backend)
    assert_close(result, expected.numpy(), np.float32)


@pytest.mark.parametrize("index_dtype", INDEX_DTYPES, ids=str)
def test_non_contiguous_and_negative_strides(backend, index_dtype):
    rng = np.random.default_rng(3)
    grad_output, self, indices = _problem(rng, (2, 3, 4, 5), (6, 8), np.float32, index_dtype)
    views = [
        np.ascontiguousarray(grad_output.swapaxes(-1, -2)).swapaxes(-1, -2),
        np.ascontiguousarray(grad_output[:, ::-1, ::-1])[:, ::-1, ::-1],
    ]
    index_views = [
        np.repeat(indices, 2, axis=-1)[..., ::2],
        np.ascontiguousarray(indices[..., ::-1, ::-1])[..., ::-1, ::-1],
    ]
    expected = reference(grad_output, self, indices, (6, 8))
    for g in views:
        for idx in index_views:
            before = (g.copy(), idx.copy())
            result = aclnn_py.max_unpool2d_backward(g, self[:, :, ::-1], idx, (6, 8), backend=backend)
            assert_close(result, expected, np.float32)
            np.testing.assert_array_equal(g, before[0])
            np.testing.assert_array_equal(idx, before[1])
    flipped = grad_output[..., ::-1]
    assert_close(aclnn_py.max_unpool2d_backward(flipped, self, indices, (6, 8), backend=backend),
                 reference(flipped, self, indices, (6, 8)), np.float32)


def test_result_is_a_new_array(backend):
    grad_output = np.arange(4, dtype=np.float32).reshape(1, 2, 2)
    indices = np.array([[[0, 1], [2, 3]]])
    result = aclnn_py.max_unpool2d_backward(grad_output, np.zeros((1, 2, 2), np.float32), indices, [2, 2],
                                            backend=backend)
    np.testing.assert_array_equal(result, grad_output)
    assert not np.shares_memory(result, grad_output)


@pytest.mark.parametrize("self_shape, grad_shape", [
    ((0, 3, 2, 2), (0, 3, 4, 4)),
    ((2, 0, 2, 2), (2, 0, 4, 4)),
    ((2, 3, 0, 2), (2, 3, 4, 4)),
    ((0, 2, 2), (0, 4, 4)),
    ((2, 2, 0), (2, 4, 4)),
    ((2, 3, 0, 2), (2, 3, 0, 4)),
])
def test_empty_self_gives_empty_result(backend, self_shape, grad_shape):
    for dtype in (np.float32, np.bool_):
        result = aclnn_py.max_unpool2d_backward(np.zeros(grad_shape, dtype), np.zeros(self_shape, dtype),
                                                np.zeros(self_shape, np.int64), grad_shape[-2:], backend=backend)
        assert result.shape == self_shape and result.dtype == dtype


# --- errors ------------------------------------------------------------------------------
# The invalid inputs are in invalid_cases.py (one table for every operator, run on every backend
# by test_invalid_cases.py); here are the valid baselines those cases change.

VALID = dict(grad_output=np.zeros((2, 3, 4, 6), np.float32), self=np.zeros((2, 3, 2, 3), np.float32),
             indices=np.zeros((2, 3, 2, 3), np.int64), output_size=[4, 6])


def _call(backend, **changes):
    args = dict(VALID, **changes)
    return aclnn_py.max_unpool2d_backward(*args.values(), backend=backend)


def test_valid_baseline(backend):
    assert _call(backend).shape == (2, 3, 2, 3)


def _f32(*shape):
    return np.zeros(shape, np.float32)
