"""The winograd engine (aclnn_py._numpy.conv.winograd): its blocks of tiles (_block_shape, _blocks:
whole trailing rows/planes while they fit BLOCK_BYTES, else even pieces; every tile in exactly
one block), and its gradients, 2-D F(2x2, 3x3) and 3-D F(2x2x2, 3x3x3), from blocks cut
anywhere, against the slow reference (float64)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import aclnn_py
from aclnn_py._numpy import conv
from aclnn_py._numpy.conv import LoweredConv, winograd
from aclnn_py._numpy.conv.winograd import WinogradEngine
from helpers import assert_close, random_array, record_engines
from reference.convolution_backward import convolution_backward as reference


@pytest.mark.parametrize("tiles", [(1,), (7,), (28,), (1, 2), (3, 7), (5, 28), (2, 3, 5), (4, 16, 16), (3, 1, 30)])
@pytest.mark.parametrize("per_position", [1, 64, 512, 4096])
@pytest.mark.parametrize("block_bytes", [1, 4096, 1 << 16, 4 << 20])
def test_block_shape(monkeypatch, tiles, per_position, block_bytes):
    monkeypatch.setattr(winograd, "BLOCK_BYTES", block_bytes)
    positions = 4 ** len(tiles)
    shape = winograd._block_shape(tiles, per_position, positions)
    tile = positions * per_position * 4      # bytes of one tile's transformed positions
    fit = max(1, block_bytes // tile)
    assert len(shape) == len(tiles) and all(b >= 1 for b in shape)
    assert all(b <= t for b, t in zip(shape[1:], tiles[1:]))
    assert np.prod(shape) <= fit                     # a block fits (or is one tile)
    # Some axis k is cut: whole extents after it, one tile before it.
    cut = max([k for k in range(1, len(tiles)) if np.prod(tiles[k:]) > fit], default=0)
    assert all(b == 1 for b in shape[:cut]) and shape[cut + 1:] == tiles[cut + 1:]
    if cut == 0:
        assert shape[0] == fit // int(np.prod(tiles[1:]))   # as many whole planes as fit
    else:
        cap = fit // int(np.prod(tiles[cut + 1:]))
        pieces = -(-tiles[cut] // shape[cut])
        assert shape[cut] <= cap and pieces == -(-tiles[cut] // cap)   # no more pieces than needed ...
        assert tiles[cut] - (pieces - 1) * shape[cut] >= shape[cut] - pieces   # ... and about even


@pytest.mark.parametrize("first, last", [(0, 1), (0, 5), (3, 10)])
@pytest.mark.parametrize("block, tiles", [((1, 1), (0, 3)), ((2, 5), (0, 5)), ((3, 2), (0, 5)), ((4, 3), (0, 7)),
                                          ((1, 2, 3), (0, 3, 7)), ((2, 4, 4), (0, 4, 4)), ((1,), (0,))])
def test_blocks_cover_every_tile_once_in_order(first, last, block, tiles):
    tiles = (last,) + tiles[1:]
    seen = []
    blocks = list(winograd._blocks(first, last, block, tiles))
    for start, n in blocks:
        assert all(1 <= k <= b for k, b in zip(n, block))
        seen += list(itertools.product(*(range(s, s + k) for s, k in zip(start, n))))
    assert sorted(seen) == list(itertools.product(range(first, last), *(range(t) for t in tiles[1:])))
    assert [start for start, _ in blocks] == sorted(start for start, _ in blocks)


# (N, C, size, padding, dilation): odd and even widths, so the last piece of a row is cropped.
CASES = [(2, 8, (9, 11), (1, 1), (1, 1)), (1, 8, (10, 13), (0, 2), (1, 1)), (2, 8, (11, 12), (2, 2), (2, 1))]


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("mask", [(True, True, True), (True, False, False), (False, True, False)])
@pytest.mark.parametrize("block_bytes", [16 * 2 * 8 * 4 * 2, 16 * 2 * 8 * 4 * 3])
def test_pieces_of_a_tile_row_match_the_reference(monkeypatch, case, mask, block_bytes):
    """BLOCK_BYTES of 2 or 3 tiles (batch 2, 8 channels): rows cut into pieces of 2 or 3 tiles."""
    batch, channels, size, padding, dilation = case
    monkeypatch.setattr(conv, "forced", "winograd")
    monkeypatch.setattr(winograd, "BLOCK_BYTES", block_bytes)
    rng = np.random.default_rng(len(size) + size[1])
    out = tuple(i + 2 * p - 2 * d for i, p, d in zip(size, padding, dilation))
    dy = random_array(rng, (batch, channels) + out, np.float32)
    x = random_array(rng, (batch, channels) + size, np.float32)
    w = random_array(rng, (channels, channels, 3, 3), np.float32)
    got = aclnn_py.convolution_backward(dy, x, w, [channels], [1, 1], list(padding), list(dilation), False,
                                        [0, 0], 1, list(mask), backend="numpy")
    want = reference(dy, x, w, [1, 1], list(padding), list(dilation), False, 1)
    for wanted, g, e in zip(mask, got, want):
        if wanted:
            assert_close(g, e, np.float32)
        else:
            assert g is None


def _op_case(rng, batch, cin, cout, size, padding, dilation, groups, mask, dtype=np.float32):
    """The op's gradients and the reference's (float64) for a 3x3(x3) stride-1 convolution."""
    rank = len(size)
    out = tuple(i + 2 * p - 2 * d for i, p, d in zip(size, padding, dilation))
    dy = random_array(rng, (batch, cout) + out, dtype)
    x = random_array(rng, (batch, cin) + size, dtype)
    w = random_array(rng, (cout, cin // groups) + (3,) * rank, dtype)
    got = aclnn_py.convolution_backward(dy, x, w, [cout], [1] * rank, list(padding), list(dilation), False,
                                        [0] * rank, groups, list(mask), backend="numpy")
    want = reference(*(a.astype(np.float64) for a in (dy, x, w)), [1] * rank, list(padding), list(dilation),
                     False, groups)
    return got, want


# 3-D (N, Cin, Cout, size, padding, dilation, groups): odd and even sizes (a cropped last tile
# along each axis), padding 0, 1 and 2 per axis, dilation (the phases), groups, batch 1-3.
CASES_3D = [(1, 3, 4, (5, 6, 7), (1, 1, 1), (1, 1, 1), 1),
            (2, 4, 6, (6, 5, 4), (0, 2, 1), (1, 1, 1), 2),
            (3, 2, 3, (7, 8, 6), (2, 1, 0), (2, 1, 2), 1),
            (2, 6, 4, (4, 9, 5), (1, 0, 2), (1, 3, 1), 2),
            (1, 8, 8, (3, 3, 3), (0, 0, 0), (1, 1, 1), 1)]
MASKS = [m for m in itertools.product([False, True], repeat=3) if any(m[:2])]


@pytest.mark.parametrize("case", CASES_3D)
@pytest.mark.parametrize("mask", MASKS, ids=str)
@pytest.mark.parametrize("block_bytes", [1, 64 * 2 * 8 * 4 * 3, 2 << 20])
def test_3d_matches_the_reference(monkeypatch, case, mask, block_bytes):
    """F(2x2x2, 3x3x3) and F(3x3x3, 2x2x2), forced, in blocks of one tile, of pieces of a tile
    row (3 tiles) and of whole planes."""
    batch, cin, cout, size, padding, dilation, groups = case
    monkeypatch.setattr(conv, "forced", "winograd")
    monkeypatch.setattr(winograd, "BLOCK_BYTES", block_bytes)
    got, want = _op_case(np.random.default_rng(sum(size)), batch, cin, cout, size, padding, dilation, groups, mask)
    for wanted, g, e in zip(mask, got, want):
        if wanted:
            assert_close(g, e, np.float32)
        else:
            assert g is None


@pytest.mark.parametrize("size, lo, hi", [((9, 11), (0, 2), (2, 1)), ((6, 7, 5), (2, 0, 1), (1, 2, 0)),
                                          ((5, 4, 6), (0, 1, 2), (0, 0, 1)), ((4, 5, 3), (1, 2, 0), (2, 0, 2))])
@pytest.mark.parametrize("dilation", [1, 2])
@pytest.mark.parametrize("want_input, want_weight", [(True, True), (True, False), (False, True)])
@pytest.mark.parametrize("fused", [True, False])
def test_asymmetric_padding_matches_the_reference(size, lo, hi, dilation, want_input, want_weight, fused):
    """Any pad_lo/pad_hi (the output size from the geometry; the op has no 3-D asymmetric
    padding): the engine against the reference of the explicitly padded input, with the weight
    gradient on the input gradient's tiles (fused) and on its own (chosen by the shapes
    otherwise: test_fused_weight_gradient_follows_the_tiles)."""
    rng = np.random.default_rng(sum(size) + dilation)
    rank, batch, cin, cout, groups = len(size), 2, 4, 6, 2
    out = tuple(i + a + b - 2 * dilation for i, a, b in zip(size, lo, hi))
    x = random_array(rng, (batch, cin) + size, np.float32)
    dy = random_array(rng, (batch, cout) + out, np.float32)
    w = random_array(rng, (cout, cin // groups) + (3,) * rank, np.float32)
    engine = WinogradEngine(batch, cin, cout, size, out, (3,) * rank, (1,) * rank, (dilation,) * rank, lo, groups,
                            False)
    engine._fused_weight = fused
    inner = engine if engine._dilated is None else engine._dilated.inner
    inner._fused_weight = fused
    dx, dw = engine.gradients(x, dy, w, want_input, want_weight)
    padded = np.pad(x, [(0, 0), (0, 0)] + list(zip(lo, hi)))
    want_dx, want_dw, _ = reference(dy.astype(np.float64), padded.astype(np.float64), w.astype(np.float64),
                                    [1] * rank, [0] * rank, [dilation] * rank, False, groups)
    crop = (slice(None), slice(None)) + tuple(slice(a, a + n) for a, n in zip(lo, size))
    if want_input:
        assert_close(dx, want_dx[crop], np.float32)
    else:
        assert dx is None
    if want_weight:
        assert_close(dw, want_dw, np.float32)
    else:
        assert dw is None


@pytest.mark.parametrize("block_bytes", [64 * 3 * 16 * 4 * 5, 2 << 20])
def test_3d_layer_split_among_threads_and_blocks(monkeypatch, block_bytes):
    """A layer the size of a small U-Net one, chosen (not forced): its first-axis tiles shared
    among the worker threads, in blocks of pieces of a tile row or of whole planes; long
    reductions (the weight gradient sums 3 x 14 x 15 x 16 positions)."""
    monkeypatch.setattr(winograd, "BLOCK_BYTES", block_bytes)
    batch, channels, size = 3, 32, (14, 15, 16)
    geometry = (batch, channels, channels, size, size, (3, 3, 3), (1, 1, 1), (1, 1, 1), (1, 1, 1), 1, False)
    assert LoweredConv(*geometry)._pick(True, None).name == "winograd"
    got, want = _op_case(np.random.default_rng(5), batch, channels, channels, size, (1, 1, 1), (1, 1, 1), 1,
                         (True, True, True))
    # The weight gradient sums 10 k products in the transformed domain, whose terms are up to
    # 2^3 x 2^3 times the direct ones (the data and dY transforms' coefficients add up to 2 per
    # axis), 64 sums then recombined into 27 taps: measured, its largest error 2.6e-4 of values
    # up to 433 (1.6 x the float32 tolerance; the flat engine's 1.2e-4, the input gradient's
    # 4e-5), the same as the suite's other long reductions (scale 4).
    for g, e, scale in zip(got, want, (1, 4, 1)):
        assert_close(g, e, np.float32, scale=scale)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_3d_half_precision_through_the_op(dtype):
    """float16/bfloat16 data widened to float32, computed by the chosen winograd engine and
    rounded once: within the dtype's tolerance of the float64 reference of the same values."""
    from aclnn_py import bfloat16
    dt = np.dtype(np.float16) if dtype == "float16" else np.dtype(bfloat16)
    channels, size = winograd.MIN_CHANNELS_3D, (5, 6, 4)
    geometry = (1, channels, channels, size, size, (3, 3, 3), (1, 1, 1), (1, 1, 1), (1, 1, 1), 1, False)
    assert LoweredConv(*geometry)._pick(True, None).name == "winograd"
    got, want = _op_case(np.random.default_rng(7), 1, channels, channels, size, (1, 1, 1), (1, 1, 1), 1,
                         (True, True, True), dt)
    for g, e in zip(got, want):
        assert g.dtype == dt
        assert_close(g, e, dt)


def _choice(channels, kernel=(3, 3, 3), stride=(1, 1, 1), groups=1, dilation=1, want_input=True):
    size = (24, 25, 26)[:len(kernel)]
    y = tuple((s + 2 * dilation - dilation * (k - 1) - 1) // st + 1 for s, k, st in zip(size, kernel, stride))
    return LoweredConv(2, channels, channels, size, y, kernel, stride, (dilation,) * len(kernel),
                       (dilation,) * len(kernel), groups, False).choose(want_input).name


@pytest.mark.parametrize("want_input", [True, False])
def test_3d_choice_follows_the_channels_per_group(want_input):
    """3x3x3 stride-1 layers with MIN_CHANNELS_3D channels per group go to Winograd (dilated
    too); fewer, other kernels, strides and ranks go elsewhere."""
    least = winograd.MIN_CHANNELS_3D
    assert _choice(least, want_input=want_input) == "winograd"
    assert _choice(least, dilation=2, want_input=want_input) == "winograd"
    assert _choice(2 * least, groups=2, want_input=want_input) == "winograd"
    assert _choice(least - 1, want_input=want_input) == "flat"
    assert _choice(2 * least - 2, groups=2, want_input=want_input) == "flat"
    assert _choice(least, kernel=(3, 3, 2), want_input=want_input) == "flat"
    assert _choice(least, stride=(1, 2, 1), want_input=want_input) == "flat"
    assert _choice(least, kernel=(3,), stride=(1,), want_input=want_input) == "flat"


def test_3d_inf_and_nan_go_to_the_tap_engine(monkeypatch):
    """Non-finite data: the exact tap engine (Winograd's zeros and cancellations would turn
    inf into NaN), with IEEE results matching the reference."""
    channels, size = winograd.MIN_CHANNELS_3D, (4, 5, 4)
    geometry = (1, channels, channels, size, size, (3, 3, 3), (1, 1, 1), (1, 1, 1), (1, 1, 1), 1, False)
    lowered = LoweredConv(*geometry)
    rng = np.random.default_rng(3)
    x = random_array(rng, (1, channels) + size, np.float32)
    dy = random_array(rng, (1, channels) + size, np.float32)
    w = random_array(rng, (channels, channels, 3, 3, 3), np.float32)
    assert lowered.choose(True).name == "winograd"
    x[0, 1, 2, 3, 1] = np.inf
    dy[0, 2, 1, 1, 1] = np.nan
    ran = record_engines(monkeypatch)
    got = aclnn_py.convolution_backward(dy, x, w, [channels], [1] * 3, [1] * 3, [1] * 3, False, [0] * 3, 1,
                                        [True, True, True], backend="numpy")
    want = reference(dy.astype(np.float64), x.astype(np.float64), w.astype(np.float64), [1] * 3, [1] * 3, [1] * 3,
                     False, 1)
    assert ran == ["winograd", "tap"]
    for g, e in zip(got, want):
        assert_close(g, e, np.float32, scale=4)


@pytest.mark.parametrize("shape", [(2, 16, (16, 32, 32)), (1, 32, (32, 32, 32)), (1, 32, (3, 3, 3))])
def test_3d_buffers_stay_within_the_flat_budget(shape):
    """The padded copies (the largest buffers) within the flat engine's budget: the engine is
    chosen, and its elements bound by FLAT_OVERHEAD x the data."""
    batch, channels, size = shape
    geometry = (batch, channels, channels, size, size, (3, 3, 3), (1, 1, 1), (1, 1, 1), (1, 1, 1), 1, False)
    lowered = LoweredConv(*geometry)
    engine = WinogradEngine(*geometry)
    assert engine.elements <= conv.FLAT_OVERHEAD * lowered.data_elements + conv.FLAT_SLACK_ELEMENTS


def test_fused_weight_gradient_follows_the_tiles():
    """The weight gradient runs on the input gradient's tiles (over X's) when X has no more tiles
    than Y (same padding), on its own (over Y's) otherwise (no padding; dilation phases)."""
    def fused(size, pad, dilation=1, rank=3):
        y = tuple(s + 2 * pad - 2 * dilation for s in size)
        return WinogradEngine(1, 32, 32, size, y, (3,) * rank, (1,) * rank, (dilation,) * rank, (pad,) * rank, 1,
                              False)
    assert fused((16, 32, 32), 1)._fused_weight and fused((9, 8), 1, rank=2)._fused_weight
    assert fused((7, 8, 9), 2)._fused_weight
    assert not fused((16, 32, 32), 0)._fused_weight
    assert not fused((32, 32), 2, 2, rank=2)._dilated.inner._fused_weight


def test_tile_buffers_overlay_only_the_named_sequences():
    """_tile_buffers: each name's view has its shape; names outside ``overlaid`` own their
    memory; each overlaid sequence is laid out from one shared start, its names apart."""
    shapes = {"a": lambda n: (2, n[0]), "b": lambda n: (3, n[0]), "c": lambda n: (n[0],), "d": lambda n: (4, n[0]),
              "e": lambda n: (5,)}
    views = winograd._tile_buffers(shapes, (4,), [["b", "c"], ["d"]])
    for n in [(4,), (3,)]:
        got = dict(zip(shapes, views(n)))
        assert {name: v.shape for name, v in got.items()} == {name: shape(n) for name, shape in shapes.items()}
        assert all(v.flags.c_contiguous for v in got.values())
        overlapping = {(p, q) for p, q in itertools.combinations(shapes, 2) if np.shares_memory(got[p], got[q])}
        # d (4 x 4 at the shared start) reaches c past b's whole block (3 x 4) only when n is 4
        assert overlapping == ({("b", "d"), ("c", "d")} if n == (4,) else {("b", "d")})
    assert views((4,))[0] is views((4,))[0]      # kept per block shape
