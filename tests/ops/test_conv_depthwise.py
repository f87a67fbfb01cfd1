"""The numpy backend's depthwise convolutions (aclnn_py/_numpy/conv/depthwise.py): the in-place
engine against the slow reference and PyTorch, where it is chosen and where not."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import aclnn_py
from aclnn_py._numpy import conv
from aclnn_py._numpy.conv import depthwise
from helpers import assert_close, random_array, record_engines
from reference.convolution_backward import convolution_backward as reference

# (N, C, input size, kernel, padding, dilation, transposed): stride 1, depthwise, X's and Y's
# rows equally long (the engine's domain).
CASES = {
    "2d 3x3 same": (2, 4, (7, 6), (3, 3), (1, 1), (1, 1), False),
    "2d 5x5 dilated same": (2, 3, (9, 8), (5, 5), (4, 4), (2, 2), False),
    "2d rows cropped (Y shorter)": (2, 3, (7, 6), (3, 3), (0, 0, 1, 1), (1, 1), False),
    "2d rows padded (Y taller)": (1, 2, (5, 6), (3, 3), (2, 1, 1, 1), (1, 1), False),
    "2d left padding only": (2, 3, (6, 7), (3, 3), (1, 1, 2, 0), (1, 1), False),
    "2d even kernel": (2, 3, (6, 5), (2, 2), (1, 0, 1, 0), (1, 1), False),
    "2d 1x3": (1, 3, (4, 9), (1, 3), (0, 1), (1, 1), False),
    "2d 3x1": (2, 2, (8, 3), (3, 1), (1, 0), (1, 1), False),
    "2d taps beyond the row": (2, 2, (4, 3), (1, 3), (0, 4), (1, 4), False),
    "2d one column": (2, 3, (5, 1), (3, 1), (1, 0), (1, 1), False),
    "1d same": (2, 3, (9,), (3,), (1,), (1,), False),
    "1d valid dilated": (2, 3, (11,), (3,), (0,), (2,), False),
    "1d taps beyond the data": (1, 2, (3,), (3,), (4,), (4,), False),
    "2d transposed same": (2, 4, (5, 6), (3, 3), (1, 1), (1, 1), True),
    "2d transposed rows": (1, 3, (4, 5), (3, 3), (0, 1), (1, 1), True),
    "1d transposed": (2, 3, (6,), (3,), (0,), (2,), True),
}

MASKS = [m for m in itertools.product([False, True], repeat=3) if any(m[:2])]


def _arrays(rng, batch, channels, size, kernel, padding, dilation, transposed):
    spatial = len(size)
    lo, hi = (padding, padding) if len(padding) == spatial else ((padding[0], padding[2]), (padding[1], padding[3]))
    if transposed:
        out = [(i - 1) - a - b + d * (k - 1) + 1 for i, a, b, d, k in zip(size, lo, hi, dilation, kernel)]
    else:
        out = [i + a + b - d * (k - 1) for i, a, b, d, k in zip(size, lo, hi, dilation, kernel)]
    return (random_array(rng, (batch, channels, *out), np.float32),
            random_array(rng, (batch, channels, *size), np.float32),
            random_array(rng, (channels, 1, *kernel), np.float32))


def _check(case, mask, backend="numpy"):
    batch, channels, size, kernel, padding, dilation, transposed = CASES[case]
    grad_output, x, w = _arrays(np.random.default_rng(0), *CASES[case])
    stride = [1] * len(size)
    result = aclnn_py.convolution_backward(grad_output, x, w, [channels], stride, list(padding), list(dilation),
                                           transposed, [0] * len(size), channels, list(mask), backend=backend)
    expected = reference(grad_output, x, w, stride, padding, dilation, transposed, channels)
    for wanted, got, want, shape in zip(mask, result, expected, (x.shape, w.shape, (channels,))):
        if not wanted:
            assert got is None
            continue
        assert got.dtype == np.float32 and got.shape == shape
        assert_close(got, want, np.float32)


def _force(monkeypatch, pieces=False):
    monkeypatch.setattr(conv, "forced", "depthwise")
    if pieces:
        monkeypatch.setattr(depthwise, "COLS_BYTES", 1)      # one row per block, on every worker


@pytest.mark.parametrize("mask", MASKS, ids=str)
@pytest.mark.parametrize("case", list(CASES))
def test_matches_reference(monkeypatch, case, mask):
    _force(monkeypatch)
    _check(case, mask)


@pytest.mark.parametrize("mask", MASKS, ids=str)
@pytest.mark.parametrize("case", ["2d 3x3 same", "2d left padding only", "2d transposed rows", "1d valid dilated"])
def test_one_row_per_block_matches_reference(monkeypatch, case, mask):
    """Blocks of one row of one plane, shared among the worker threads (each its own partial
    gradWeight)."""
    _force(monkeypatch, pieces=True)
    _check(case, mask)


@pytest.mark.parametrize("case", list(CASES))
def test_applies_to_the_cases(case):
    """(The tiny cases take the dense engine unless forced: the choice is tested on larger ones.)"""
    batch, channels, size, kernel, padding, dilation, transposed = CASES[case]
    grad_output, x, _ = _arrays(np.random.default_rng(0), *CASES[case])
    shapes = (grad_output.shape, x.shape) if transposed else (x.shape, grad_output.shape)
    lo = padding[:len(size)] if len(padding) == len(size) else (padding[0], padding[2])
    assert depthwise.applies(conv.lowered(*lowered_args(shapes, kernel, (1,) * len(size), dilation, lo, channels,
                                                        transposed)))


@pytest.mark.parametrize("transposed", [False, True])
@pytest.mark.parametrize("want_input", [False, True])
def test_is_chosen_for_a_layer(transposed, want_input):
    """The benchmark's depthwise 3x3 (8,128,56,56) layer, each gradient set."""
    geometry = lowered_args(((8, 128, 56, 56), (8, 128, 56, 56)), (3, 3), (1, 1), (1, 1), (1, 1), 128, transposed)
    assert conv.lowered(*geometry).choose(want_input).name == "depthwise"


def lowered_args(shapes, kernel, stride, dilation, lo, groups, transposed):
    (xs, ys) = shapes
    return (xs[0], xs[1], ys[1], tuple(xs[2:]), tuple(ys[2:]), tuple(kernel), tuple(stride), tuple(dilation),
            tuple(lo), groups, transposed)


@pytest.mark.parametrize("shapes, kernel, stride, dilation, lo, groups", [
    (((2, 4, 9, 9), (2, 4, 5, 5)), (3, 3), (2, 2), (1, 1), (1, 1), 4),               # strided
    (((2, 4, 5, 5, 5), (2, 4, 5, 5, 5)), (3, 3, 3), (1, 1, 1), (1, 1, 1), (1, 1, 1), 4),   # 3-D
    (((2, 4, 7, 7), (2, 4, 5, 5)), (3, 3), (1, 1), (1, 1), (0, 0), 4),               # rows shorter in Y
    (((2, 4, 7, 7), (2, 8, 7, 7)), (3, 3), (1, 1), (1, 1), (1, 1), 4),               # channel multiplier 2
    (((2, 4, 7, 7), (2, 4, 7, 7)), (3, 3), (1, 1), (1, 1), (1, 1), 2),               # grouped, not depthwise
    (((2, 4, 5), (2, 4, 10)), (2,), (1,), (1,), (3,), 4),                             # padding beyond the reach
])
def test_not_chosen_elsewhere(shapes, kernel, stride, dilation, lo, groups):
    geometry = lowered_args(shapes, kernel, stride, dilation, lo, groups, False)
    assert not depthwise.applies(conv.lowered(*geometry))
    assert conv.lowered(*geometry).choose(True).name != "depthwise"


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_inf_and_nan_take_the_tap_engine(bad, monkeypatch):
    """IEEE results: the zeros the engine reads in place of padding would turn inf into NaN."""
    grad_output, x, w = _arrays(np.random.default_rng(1), *CASES["2d 3x3 same"])
    grad_output[1, 2, 3, 0] = bad
    x[0, 1, 0, 5] = -bad
    geometry = lowered_args((x.shape, grad_output.shape), (3, 3), (1, 1), (1, 1), (1, 1), 4, False)
    ran = record_engines(monkeypatch)
    result = aclnn_py.convolution_backward(grad_output, x, w, [4], [1, 1], [1, 1], [1, 1], False, [0, 0], 4,
                                           [True, True, True], backend="numpy")
    chosen = conv.lowered(*geometry).choose(True)
    # Data checked before the products (a tiny problem's), or the results after (LoweredConv.gradients).
    assert ran == (["tap"] if chosen.checks_data else [chosen.name, "tap"])
    expected = reference(grad_output, x, w, [1, 1], (1, 1), (1, 1), False, 4)
    for got, want in zip(result, expected):
        np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
        assert_close(got, want, np.float32)


@pytest.mark.parametrize("pieces", [None, "planes", "rows"])
@pytest.mark.parametrize("size, padding, dilation", [((20, 17), (1, 1), (1, 1)), ((13, 16), (1, 2), (1, 2)), ((12, 10), (0, 1), (1, 1))])
@pytest.mark.parametrize("mask", [(True, True, True), (True, False, False)], ids=["all", "input"])
def test_larger_layers_match_torch(monkeypatch, torch, pieces, size, padding, dilation, mask):
    """Blocks of several channels and images, against PyTorch: both gradients and
    gradInput alone."""
    _force(monkeypatch)
    if pieces == "planes":
        monkeypatch.setattr(depthwise, "COLS_BYTES", 3 * 9 * size[0] * size[1] * 4)   # 3 planes per block
    if pieces == "rows":
        monkeypatch.setattr(depthwise, "COLS_BYTES", 3 * 9 * size[1] * 4)   # 3 rows per block, fewer in the last
    channels = 5
    rng = np.random.default_rng(2)
    x = random_array(rng, (3, channels, *size), np.float32)
    w = random_array(rng, (channels, 1, 3, 3), np.float32)
    out = [s + 2 * p - d * 2 for s, p, d in zip(size, padding, dilation)]
    grad_output = random_array(rng, (3, channels, *out), np.float32)
    geometry = lowered_args((x.shape, grad_output.shape), (3, 3), (1, 1), dilation, padding, channels, False)
    assert conv.lowered(*geometry).choose(True).name == "depthwise"      # (forced: it applies)
    result = aclnn_py.convolution_backward(grad_output, x, w, [channels], [1, 1], list(padding), list(dilation),
                                           False, [0, 0], channels, list(mask), backend="numpy")
    expected = torch.ops.aten.convolution_backward(
        torch.from_numpy(grad_output), torch.from_numpy(x), torch.from_numpy(w), [channels], [1, 1], list(padding),
        list(dilation), False, [0, 0], channels, list(mask))
    for wanted, got, want in zip(mask, result, expected):
        if wanted:
            assert_close(got, want.numpy(), np.float32)
        else:
            assert got is None


def test_taps_read_inside_the_padded_planes():
    """The im2col's strided view reads every tap's window inside its padded plane (the view is
    not bounds-checked), on random geometries of the engine's domain."""
    rng = np.random.default_rng(3)
    checked = 0
    while checked < 300:
        rank = int(rng.integers(1, 3))
        kernel = tuple(int(k) for k in rng.integers(1, 6, rank))
        dilation = tuple(int(d) for d in rng.integers(1, 4, rank))
        lo = tuple(int(rng.integers(0, (k - 1) * d + 1)) for k, d in zip(kernel, dilation))
        hi = tuple(int(h) for h in rng.integers(0, 6, rank))
        size = tuple(int(s) for s in rng.integers(1, 9, rank))
        out = tuple(s + a + b - (k - 1) * d for s, a, b, k, d in zip(size, lo, hi, kernel, dilation))
        if min(out) < 1 or (rank == 2 and (out[1] != size[1])):
            continue
        transposed = bool(rng.integers(0, 2))
        geometry = lowered_args(((2, 3, *size), (2, 3, *out)), kernel, (1,) * rank, dilation, lo, 3, transposed)
        assert depthwise.applies(conv.lowered(*geometry))
        engine = depthwise.DepthwiseEngine(*geometry)
        reach = sum((k - 1) * step for k, step in zip(kernel, engine._tap_steps))
        first = engine._lead + engine._first_shift + min(0, reach)
        last = engine._lead + engine._first_shift + max(0, reach) + engine._out_plane
        assert 0 <= first and last <= engine._padded, (geometry, first, last, engine._padded)
        checked += 1


def test_busy_machine_gives_the_same_bits(monkeypatch):
    """On one thread while the machine is busy, over the same parts: the same results, gradWeight's
    partial sums included."""
    from aclnn_py._numpy import workers

    _force(monkeypatch, pieces=True)
    monkeypatch.setattr(depthwise, "MIN_PARALLEL_ELEMENTS", 1)     # split this small case when quiet
    serial = []
    split = depthwise.in_parallel
    monkeypatch.setattr(depthwise, "in_parallel", lambda *a, **k: (serial.append(k["serial"]), split(*a, **k)))
    grad_output, x, w = _arrays(np.random.default_rng(3), *CASES["2d 3x3 same"])
    runs = []
    for busy in (False, True):
        monkeypatch.setattr(workers, "machine_busy", lambda busy=busy: busy)
        runs.append(aclnn_py.convolution_backward(grad_output, x, w, [4], [1, 1], [1, 1], [1, 1], False, [0, 0], 4,
                                                  [True, True, True], backend="numpy"))
    assert serial == [workers._WORKERS == 1, True]
    for quiet, busy in zip(*runs):
        np.testing.assert_array_equal(quiet, busy)
