"""The polyphase engine (aclnn_py._numpy.conv.polyphase): a kernel twice the stride as a stride-1 2x2
convolution of the stacked phases, by Winograd F(3x3, 2x2) - against the float64 reference for
random geometries, blocks and threads, and chosen where its cost model says."""

from __future__ import annotations

import numpy as np
import pytest

import aclnn_py

from aclnn_py._numpy import conv
from aclnn_py._numpy.conv import polyphase, winograd
from helpers import assert_close, random_array, record_engines
from reference.convolution_backward import convolution_backward as reference
from aclnn_py._numpy import workers as _workers

# The Winograd transforms round differently from a direct sum: the kernel's and tiles' sums of
# up to 4 and 16 terms before the products, a few float32 ulps of the largest terms.
_SCALE = 4.0


@pytest.fixture
def forced(monkeypatch):
    def force(name: str | None) -> None:
        monkeypatch.setattr(conv, "forced", name)
        conv._choose.cache_clear()
    yield force
    conv._choose.cache_clear()


def _transposed(rng, batch, cin, size, cout, stride, pad, groups):
    """Arguments of a transposed convolution with kernel 2*stride: input (batch, cin, *size)."""
    kernel = tuple(2 * s for s in stride)
    out = tuple((n - 1) * s - 2 * p + k for n, s, p, k in zip(size, stride, pad, kernel))
    return (random_array(rng, (batch, cout) + out, np.float32), random_array(rng, (batch, cin) + size, np.float32),
            random_array(rng, (cin, cout // groups) + kernel, np.float32))


def _ordinary(rng, batch, cin, size, cout, stride, pad, groups):
    kernel = tuple(2 * s for s in stride)
    out = tuple((n + 2 * p - k) // s + 1 for n, s, p, k in zip(size, stride, pad, kernel))
    return (random_array(rng, (batch, cout) + out, np.float32), random_array(rng, (batch, cin) + size, np.float32),
            random_array(rng, (cout, cin // groups) + kernel, np.float32))


def _check(arrays, stride, pad, transposed, groups, mask):
    go, x, w = arrays
    got = aclnn_py.convolution_backward(go, x, w, [w.shape[1] * groups if transposed else w.shape[0]],
                                        list(stride), list(pad), [1, 1], transposed, [0, 0], groups, list(mask),
                                        backend="numpy")
    want = reference(go, x, w, list(stride), list(pad), [1, 1], transposed, groups)
    for wanted, g, e in zip(mask, got, want):
        if wanted:
            assert_close(g, e, np.float32, scale=_SCALE)
        else:
            assert g is None
    return got


@pytest.mark.parametrize("seed", range(40))
def test_transposed_gradients_match_the_reference(forced, seed):
    rng = np.random.default_rng(seed)
    stride = (int(rng.integers(1, 4)), int(rng.integers(1, 4)))
    pad = tuple(int(rng.integers(0, 2 * s)) for s in stride)
    groups = int(rng.choice([1, 1, 2]))
    cin, cout = groups * int(rng.integers(1, 4)), groups * int(rng.integers(1, 4))
    size = (int(rng.integers(2, 9)), int(rng.integers(2, 9)))
    batch = int(rng.integers(1, 4))
    mask = [bool(rng.integers(0, 2)), bool(rng.integers(0, 2)), bool(rng.integers(0, 2))]
    mask[int(rng.integers(0, 2))] = True
    if any((n - 1) * s - 2 * p + 2 * s < 1 for n, s, p in zip(size, stride, pad)):
        pad = (0, 0)
    forced("polyphase")
    assert conv.lowered(*_geometry(batch, cin, cout, size, stride, pad, groups, True)).choose(mask[0]).name == "polyphase"
    _check(_transposed(rng, batch, cin, size, cout, stride, pad, groups), stride, pad, True, groups, mask)


@pytest.mark.parametrize("seed", range(20))
def test_ordinary_weight_gradient_alone_matches_the_reference(forced, seed):
    # gradWeight alone of an ordinary convolution is X space too; its gradInput is not this engine's.
    rng = np.random.default_rng(1000 + seed)
    stride = (int(rng.integers(1, 4)), int(rng.integers(1, 4)))
    pad = tuple(int(rng.integers(0, 2 * s)) for s in stride)
    groups = int(rng.choice([1, 2]))
    cin, cout = groups * int(rng.integers(1, 4)), groups * int(rng.integers(1, 4))
    size = tuple(2 * s + int(rng.integers(0, 9)) for s in stride)
    forced("polyphase")
    _check(_ordinary(rng, int(rng.integers(1, 3)), cin, size, cout, stride, pad, groups), stride, pad, False, groups,
           (False, True, bool(seed % 2)))


def _geometry(batch, cin, cout, size, stride, pad, groups, transposed):
    """LoweredConv's arguments for a transposed convolution of input (batch, cin, *size)."""
    kernel = tuple(2 * s for s in stride)
    out = tuple((n - 1) * s - 2 * p + k for n, s, p, k in zip(size, stride, pad, kernel))
    # Lowered: X is the gradient of the transposed output (cout channels), Y its input (cin).
    return batch, cout, cin, out, size, kernel, stride, (1, 1), pad, groups, transposed


@pytest.mark.parametrize("block_bytes", [1, 1 << 12])
def test_blocks_of_one_tile_and_row_pieces_shared_by_the_threads(forced, monkeypatch, block_bytes):
    # Tiny blocks: many blocks per worker, tile rows cut in pieces (width < tiles per row).
    monkeypatch.setattr(winograd, "BLOCK_BYTES", block_bytes)
    rng = np.random.default_rng(7)
    forced("polyphase")
    arrays = _transposed(rng, 2, 3, (13, 11), 4, (2, 2), (1, 1), 1)
    first = _check(arrays, (2, 2), (1, 1), True, 1, (True, True, True))
    # The workers' sums are added in tile-row order: the same bits on every call.
    again = _check(arrays, (2, 2), (1, 1), True, 1, (True, True, True))
    for a, b in zip(first, again):
        np.testing.assert_array_equal(a, b)


def test_results_outlive_the_next_call(forced):
    # Neither result is a scratch array: the next call, other data, leaves them.
    rng = np.random.default_rng(11)
    forced("polyphase")
    first = _transposed(rng, 2, 4, (6, 5), 4, (2, 2), (1, 1), 1)
    got = _check(first, (2, 2), (1, 1), True, 1, (True, True, False))
    kept = [g.copy() for g in got[:2]]
    _check(_transposed(rng, 2, 4, (6, 5), 4, (2, 2), (1, 1), 1), (2, 2), (1, 1), True, 1, (True, True, False))
    for k, g in zip(kept, got[:2]):
        np.testing.assert_array_equal(k, g)


def test_inf_and_nan_go_to_the_tap_engine(forced, monkeypatch):
    # The transforms would turn inf into NaN where the direct sum has inf: finite data only.
    rng = np.random.default_rng(5)
    go, x, w = _transposed(rng, 1, 64, (6, 6), 32, (2, 2), (1, 1), 1)
    go[0, 0, 3, 3] = np.inf
    lowered = conv.lowered(*_geometry(1, 64, 32, (6, 6), (2, 2), (1, 1), 1, True))
    ran = record_engines(monkeypatch)
    got = aclnn_py.convolution_backward(go, x, w, [32], [2, 2], [1, 1], [1, 1], True, [0, 0], 1,
                                        [True, True, False], backend="numpy")
    assert ran == [lowered.choose(True).name, "tap"]
    want = reference(go, x, w, [2, 2], [1, 1], [1, 1], True, 1)
    np.testing.assert_array_equal(np.isposinf(got[0]), np.isposinf(want[0]))
    np.testing.assert_array_equal(np.isnan(got[1]), np.isnan(want[1]))


@pytest.mark.parametrize("cin, cout, stride, want_input, transposed, size, engine", [
    (128, 64, (2, 2), True, True, 24, "polyphase"),     # 256 stacked, 128 out, 8 rows of tiles
    (128, 64, (2, 2), True, True, 21, "flat"),          # 7 rows of tiles: fewer than 4 per worker
    (64, 32, (2, 2), True, True, 24, "flat"),           # the benchmark's k4 s2 layer: 128 stacked
    (256, 32, (2, 2), True, True, 24, "flat"),          # 128 stacked
    (64, 64, (2, 2), True, True, 24, "flat"),           # 256 stacked but 64 out
    (128, 256, (1, 1), True, True, 24, "polyphase"),    # k2 s1: one phase of 256 channels, 128 out
    (128, 128, (1, 1), True, True, 24, "flat"),         # k2 s1: one phase of 128 channels
    (64, 128, (2, 2), True, False, 48, "flat"),         # an ordinary convolution's gradInput: not X space
    (64, 128, (2, 2), False, False, 48, "polyphase"),   # its gradWeight alone is
])
def test_chosen_by_the_cost_model(forced, monkeypatch, cin, cout, stride, want_input, transposed, size, engine):
    forced(None)
    monkeypatch.setattr(_workers, "_WORKERS", 2)
    conv._choose.cache_clear()
    sizes = (size, size)
    if transposed:
        geometry = _geometry(1, cin, cout, sizes, stride, (1, 1), 1, True)
    else:
        kernel = tuple(2 * s for s in stride)
        out = tuple((n + 2 - k) // s + 1 for n, s, k in zip(sizes, stride, kernel))
        geometry = (1, cin, cout, sizes, out, kernel, stride, (1, 1), (1, 1), 1, False)
    assert conv.lowered(*geometry).choose(want_input).name == engine
    conv._choose.cache_clear()


def test_not_for_other_kernels_or_dilation():
    g = conv.lowered(2, 64, 64, (10, 10), (5, 5), (3, 3), (2, 2), (1, 1), (0, 0), 1, True)
    assert not polyphase.applies(g)
    g = conv.lowered(2, 64, 64, (10, 10), (4, 4), (4, 4), (2, 2), (2, 2), (0, 0), 1, True)
    assert not polyphase.applies(g)
    g = conv.lowered(2, 64, 64, (10, 10, 10), (5, 5, 5), (4, 4, 4), (2, 2, 2), (1, 1, 1), (1, 1, 1), 1, True)
    assert not polyphase.applies(g)
