"""im2col_backward (fold) by output phases on the numpy backend: phases summed as stride-1
problems, phases one kernel offset fills copied straight from the columns, phases no offset
reaches zeroed; against the slow loop reference, on every worker thread, in every float dtype,
with inf/NaN kept where their blocks land."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

import aclnn_py
from aclnn_py import bfloat16
from aclnn_py._numpy import plans as _plans
from aclnn_py._numpy import small as _small
from helpers import assert_close, random_array
from reference.im2col_backward import im2col_backward as reference
from aclnn_py._numpy import workers as _workers

_module = importlib.import_module("aclnn_py.ops.im2col_backward")


def _grid(size, kernel, dilation, padding, stride):
    return tuple((size[d] + 2 * padding[d] - dilation[d] * (kernel[d] - 1) - 1) // stride[d] + 1 for d in range(2))


@pytest.fixture
def phases(monkeypatch):
    """The numpy kernel's own choice, the small-matrix path off, every plane its own thread part;
    records the geometries _col2im ran PHASES for."""
    monkeypatch.setattr(_small, "MAX_MATRIX_ELEMENTS", 0)
    monkeypatch.setattr(_workers, "MIN_PARALLEL_ELEMENTS", 1)
    _plans.forget_plans()
    used = []
    original = _module._col2im

    def spy(cols, out, *geometry, **kw):
        used.append(_module._method(*geometry))
        return original(cols, out, *geometry, **kw)

    monkeypatch.setattr(_module, "_col2im", spy)
    yield used
    _plans.forget_plans()


# (batch, C, inputSize, kernelSize, dilation, padding, stride), each taking PHASES.
GEOMETRIES = [
    (2, 3, (8, 8), (3, 3), (1, 1), (1, 1), (2, 2)),      # k3 s2 p1: phase (0, 0) copied straight
    (1, 2, (12, 10), (3, 3), (1, 1), (1, 1), (2, 2)),
    (2, 2, (10, 12), (4, 4), (1, 1), (1, 1), (2, 2)),    # two offsets in every phase
    (1, 3, (12, 12), (5, 5), (1, 1), (2, 2), (2, 2)),    # three offsets in some phases
    (2, 2, (9, 12), (3, 5), (1, 1), (1, 2), (3, 2)),     # odd height, stride 3 rows
    (1, 2, (10, 10), (5, 3), (2, 1), (4, 1), (3, 2)),    # dilated rows, stride 3
    (None, 2, (8, 8), (3, 3), (1, 1), (1, 1), (2, 2)),   # unbatched
]


@pytest.mark.parametrize("geometry", GEOMETRIES)
@pytest.mark.parametrize("dtype", [np.float32, np.float16, bfloat16], ids=str)
def test_phases_match_reference(phases, geometry, dtype):
    batch, channels, size, kernel, dilation, padding, stride = geometry
    grid = _grid(size, kernel, dilation, padding, stride)
    shape = (channels * kernel[0] * kernel[1], grid[0] * grid[1])
    grad = random_array(np.random.default_rng(5), shape if batch is None else (batch,) + shape, dtype)
    for _ in range(2):  # the plan's first call and a call reusing it
        result = aclnn_py.im2col_backward(grad, list(size), list(kernel), list(dilation), list(padding),
                                          list(stride), backend="numpy")
        assert result.dtype == np.dtype(dtype)
        assert_close(result, reference(grad, size, kernel, dilation, padding, stride), dtype)
    assert phases and set(phases) == {_module.PHASES}


def test_phase_copied_straight_is_the_offsets_blocks(phases):
    """k3 s2 p1: output phase (0, 0) is exactly kernel offset (1, 1)'s blocks (no sum at all)."""
    grad = random_array(np.random.default_rng(2), (2, 3 * 9, 16), np.float32)
    result = aclnn_py.im2col_backward(grad, [8, 8], [3, 3], [1, 1], [1, 1], [2, 2], backend="numpy")
    blocks = grad.reshape(2, 3, 3, 3, 4, 4)[:, :, 1, 1]
    np.testing.assert_array_equal(result[:, :, 0::2, 0::2], blocks)


@pytest.mark.parametrize("geometry", GEOMETRIES[:4])
def test_phases_keep_non_finite_values_where_their_blocks_land(phases, geometry):
    batch, channels, size, kernel, dilation, padding, stride = geometry
    grid = _grid(size, kernel, dilation, padding, stride)
    grad = np.zeros((batch, channels * kernel[0] * kernel[1], grid[0] * grid[1]), np.float32)
    grad[0, 0, 0] = np.inf                       # offset (0, 0) of channel 0, first block
    grad[-1, -1, -1] = np.nan                    # the last offset of the last channel, last block
    grad[0, kernel[0] * kernel[1] // 2, grid[0] * grid[1] // 2] = -np.inf
    result = aclnn_py.im2col_backward(grad, list(size), list(kernel), list(dilation), list(padding), list(stride),
                                      backend="numpy")
    expected = reference(grad, size, kernel, dilation, padding, stride)
    for test in (np.isposinf, np.isneginf, np.isnan):
        np.testing.assert_array_equal(test(result), test(expected))
    assert np.all(result[np.isfinite(expected)] == 0)


@pytest.mark.parametrize("geometry", [GEOMETRIES[0], GEOMETRIES[4],
                                      (2, 3, (32, 30), (16, 15), (1, 1), (0, 0), (16, 15))],  # + tiling
                         ids=["k3s2p1", "stride3rows", "tiling"])
def test_phases_and_tiling_read_non_contiguous_columns(monkeypatch, geometry):
    """The phase sums and the tiling copy read the columns through views: transposed, every
    other plane, reversed twice (negative strides); the argument is left as it was."""
    monkeypatch.setattr(_small, "MAX_MATRIX_ELEMENTS", 0)
    monkeypatch.setattr(_workers, "MIN_PARALLEL_ELEMENTS", 1)
    _plans.forget_plans()
    batch, channels, size, kernel, dilation, padding, stride = geometry
    grid = _grid(size, kernel, dilation, padding, stride)
    dense = random_array(np.random.default_rng(9), (batch, channels * kernel[0] * kernel[1], grid[0] * grid[1]),
                         np.float32)
    views = (np.ascontiguousarray(dense.transpose(0, 2, 1)).transpose(0, 2, 1),
             np.repeat(dense, 2, axis=0)[::2],
             np.ascontiguousarray(dense[::-1, :, ::-1])[::-1, :, ::-1])
    expected = reference(dense, size, kernel, dilation, padding, stride)
    for view in views:
        assert view.strides != dense.strides
        before = view.copy()
        result = aclnn_py.im2col_backward(view, list(size), list(kernel), list(dilation), list(padding),
                                          list(stride), backend="numpy")
        assert_close(result, expected, np.float32)
        np.testing.assert_array_equal(view, before)
    _plans.forget_plans()
