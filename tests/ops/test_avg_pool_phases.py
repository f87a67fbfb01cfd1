"""avg_pool2d_backward's phase engine on the numpy backend (large calls: planes in blocks on the
worker threads, each axis spread phase by phase, the k2 s2 tiling written as doubled words):
against the slow loop reference and PyTorch, with blocks and thread parts forced small so that
every call crosses them."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

import aclnn_py
from aclnn_py import bfloat16
from aclnn_py._numpy import plans as _plans
from aclnn_py._numpy import small as _small
from helpers import assert_close, pool_windows, random_array
from reference.avg_pool2d_backward import avg_pool2d_backward as reference
from aclnn_py._numpy import workers as _workers

_module = importlib.import_module("aclnn_py.ops.avg_pool2d_backward")


@pytest.fixture
def engine(monkeypatch):
    """Every call on the phase engine: no small-call matrix, no membership product, blocks of a
    few planes and every part of >= 1 plane on a thread of its own; plans made anew."""
    monkeypatch.setattr(_small, "MAX_MATRIX_ELEMENTS", 0)
    monkeypatch.setattr(_module, "_SMALL", -1)
    monkeypatch.setattr(_module, "_BLAS_ADVANTAGE", 0)
    monkeypatch.setattr(_module, "_BLOCK_BYTES", 1)            # one plane per block
    monkeypatch.setattr(_workers, "MIN_PARALLEL_ELEMENTS", 1)  # every thread a part
    _plans.forget_plans()
    calls = []
    original = _module._phase_grad
    monkeypatch.setattr(_module, "_phase_grad", lambda *a: calls.append(a[3:]) or original(*a))
    yield calls
    _plans.forget_plans()


def _pooled(size, k, s, p, ceil_mode):
    """The forward output size, from the definition (not the op's)."""
    span = size + 2 * p - k
    count = (-(-span // s) if ceil_mode else span // s) + 1
    if ceil_mode and (count - 1) * s >= size + p:
        count -= 1
    return count


def _run(self_shape, kernel, stride, padding, ceil_mode, count_include_pad, divisor, dtype=np.float32, seed=0,
         grad=None):
    rng = np.random.default_rng(seed)
    pooled = tuple(_pooled(self_shape[-2 + d], kernel[d], stride[d], padding[d], ceil_mode) for d in range(2))
    if grad is None:
        grad = random_array(rng, tuple(self_shape[:-2]) + pooled, dtype)
    self = np.zeros(self_shape, dtype)
    result = aclnn_py.avg_pool2d_backward(grad, self, list(kernel), list(stride), list(padding), ceil_mode,
                                          count_include_pad, divisor, backend="numpy")
    return grad, result


# (self shape, kernel, stride, padding): even and odd sizes, stride 1 to 3, padding, kernels
# wider than the stride (overlapping windows: pieces summed in pairs and further slices added),
# narrower (pixels no window covers), equal (tiling, 2 wide: the doubled words; 1 or 3 wide: phases).
GEOMETRIES = [
    ((2, 3, 12, 12), (3, 3), (2, 2), (1, 1)),
    ((2, 3, 13, 11), (3, 3), (2, 2), (1, 1)),
    ((1, 4, 9, 10), (3, 2), (2, 1), (1, 0)),
    ((2, 2, 10, 14), (2, 2), (2, 2), (0, 0)),
    ((2, 2, 9, 7), (2, 2), (2, 2), (0, 0)),          # floor drops the last row and column
    ((2, 2, 12, 9), (3, 1), (3, 1), (0, 0)),
    ((1, 3, 8, 12), (1, 2), (1, 2), (0, 0)),
    ((1, 2, 11, 13), (5, 5), (2, 3), (2, 1)),
    ((1, 2, 10, 10), (7, 5), (2, 2), (3, 2)),        # >2 slices in a phase (added one by one)
    ((2, 2, 9, 11), (2, 2), (3, 3), (1, 0)),         # stride > kernel
    ((1, 2, 6, 12), (4, 3), (1, 1), (0, 1)),         # stride 1: one phase longer than the source rows
    ((3, 5, 7), (3, 3), (2, 2), (1, 1)),             # 3-D (C, H, W)
]


@pytest.mark.parametrize("geometry", GEOMETRIES)
@pytest.mark.parametrize("ceil_mode", [False, True])
@pytest.mark.parametrize("count_include_pad", [True, False])
def test_engine_matches_reference(engine, geometry, ceil_mode, count_include_pad):
    self_shape, kernel, stride, padding = geometry
    for divisor in (None, 3, -2):
        grad, result = _run(self_shape, kernel, stride, padding, ceil_mode, count_include_pad, divisor)
        expected = reference(grad, self_shape, kernel, stride, padding, count_include_pad, divisor)
        assert_close(result, expected, np.float32)
    assert engine, "the phase engine did not run"


@pytest.mark.parametrize("self_shape", [(8, 16, 28, 28), (3, 7, 20, 24)])
def test_engine_tiles_match_reference(engine, self_shape):
    grad, result = _run(self_shape, (2, 2), (2, 2), (0, 0), False, True, None)
    phases_h, phases_w, _ = engine[-1]
    assert _module._tiles(phases_h, self_shape[-2] // 2, 2) and _module._tiles(phases_w, self_shape[-1] // 2, 2)
    assert_close(result, reference(grad, self_shape, (2, 2), (2, 2), (0, 0), True, None), np.float32)


def test_engine_matches_torch_at_a_layer(torch, engine):
    """The benchmark's layers, smaller batch, with the default blocks and threads."""
    for shape, k, s, p, ceil, incl in (((2, 8, 112, 112), 3, 2, 1, False, True),
                                       ((2, 8, 112, 112), 3, 2, 1, True, False),
                                       ((2, 32, 28, 28), 2, 2, 0, False, True)):
        _plans.forget_plans()
        grad, result = _run(shape, (k, k), (s, s), (p, p), ceil, incl, None)
        expected = torch.ops.aten.avg_pool2d_backward(torch.from_numpy(grad), torch.zeros(shape), [k, k], [s, s],
                                                      [p, p], ceil, incl, None).numpy()
        assert_close(result, expected, np.float32)


@pytest.mark.parametrize("kernel, stride, padding", [((3, 3), (2, 2), (1, 1)), ((2, 2), (2, 2), (0, 0))])
def test_engine_keeps_non_finite_values_in_their_windows(engine, kernel, stride, padding):
    shape = (1, 2, 12, 12)
    pooled = tuple(_pooled(12, kernel[d], stride[d], padding[d], False) for d in range(2))
    grad = np.zeros((1, 2) + pooled, np.float32)
    grad[0, 0, 0, 0] = np.inf
    grad[0, 1, -1, -1] = np.nan
    _, result = _run(shape, kernel, stride, padding, False, True, None, grad=grad)
    expected = reference(grad, shape, kernel, stride, padding, True, None)
    np.testing.assert_array_equal(np.isposinf(result), np.isposinf(expected))
    np.testing.assert_array_equal(np.isnan(result), np.isnan(expected))
    assert np.isposinf(result).any() and np.isnan(result).any()
    finite = np.isfinite(expected)
    assert np.all(result[finite] == 0)


@pytest.mark.parametrize("dtype", [np.float16, bfloat16])
@pytest.mark.parametrize("kernel, stride, padding", [((3, 3), (2, 2), (1, 1)), ((2, 2), (2, 2), (0, 0))])
def test_engine_rounds_low_precision_once(engine, dtype, kernel, stride, padding):
    """float16/bfloat16: computed in float32 and rounded once, as the float32 engine's result."""
    grad, result = _run((2, 3, 14, 14), kernel, stride, padding, False, True, None, dtype=dtype)
    assert result.dtype == np.dtype(dtype)
    _plans.forget_plans()
    _, wide = _run((2, 3, 14, 14), kernel, stride, padding, False, True, None, grad=grad.astype(np.float32))
    np.testing.assert_array_equal(result, wide.astype(dtype))
    assert_close(result, reference(grad, (2, 3, 14, 14), kernel, stride, padding, True, None), dtype)


def test_engine_reads_strided_gradients(engine):
    rng = np.random.default_rng(3)
    grad = random_array(rng, (2, 3, 7, 7), np.float32)
    views = [np.ascontiguousarray(grad.transpose(0, 1, 3, 2)).transpose(0, 1, 3, 2),
             np.repeat(grad, 2, axis=3)[..., ::2], grad[::-1][::-1]]
    expected = reference(grad, (2, 3, 14, 14), (3, 3), (2, 2), (1, 1), True, None)
    for view in views:
        _plans.forget_plans()
        _, result = _run((2, 3, 14, 14), (3, 3), (2, 2), (1, 1), False, True, None, grad=view)
        assert_close(result, expected, np.float32)


def test_phases_tile_each_axis():
    """Each phase's non-accumulating pieces tile its positions, the widest first."""
    for size, k, s, p, o in pool_windows(range(1, 12), range(1, 6), range(1, 5)):
        for phase in _module._phases(size, o, k, s, p):
            assert phase.length == len(range(phase.residue, size, s))
            written = [piece for piece in phase.pieces if not piece.add]
            covered = sorted(t for piece in written for t in range(piece.first, piece.last))
            assert covered == list(range(phase.length))
            widths = [piece.last - piece.first for piece in written]
            assert widths[0] == max(widths)


@pytest.mark.parametrize("self_shape, k, s, p, ceil_mode, count_include_pad", [
    ((1, 4, 28, 28), 2, 2, 0, False, True),          # tiling: the product rule must not send it away
    ((1, 2, 112, 112), 3, 2, 1, False, True),
    ((1, 2, 112, 112), 3, 2, 1, True, False),
])
def test_engine_is_taken_for_the_benchmark_layers(monkeypatch, self_shape, k, s, p, ceil_mode, count_include_pad):
    """With the module's own rule constants, the benchmark's layers (one image) run on the engine."""
    _plans.forget_plans()
    calls = []
    original = _module._phase_grad
    monkeypatch.setattr(_module, "_phase_grad", lambda *a: calls.append(a[3:]) or original(*a))
    try:
        grad, result = _run(self_shape, (k, k), (s, s), (p, p), ceil_mode, count_include_pad, None)
    finally:
        _plans.forget_plans()
    assert calls, "not the phase engine"
    assert_close(result, reference(grad, self_shape, (k, k), (s, s), (p, p), count_include_pad, None), np.float32)
