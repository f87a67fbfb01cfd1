"""The flat engine's chunking of its products (aclnn_py._numpy.conv.flat._chunk_ranges)."""

from __future__ import annotations

import numpy as np
import pytest

from aclnn_py._numpy.conv.flat import _chunk_ranges
from helpers import assert_close
from aclnn_py._numpy import workers as _workers


def _segments(rng):
    count = int(rng.integers(1, 6))
    segments = []
    pos = int(rng.integers(0, 5))
    for _ in range(count):
        length = int(rng.integers(1, 40))
        segments.append((pos, pos + length))
        pos += length + int(rng.integers(1, 10))
    return segments


@pytest.mark.parametrize("seed", range(40))
def test_chunks_cover_the_segments_in_order(seed):
    rng = np.random.default_rng(seed)
    segments = _segments(rng)
    width = int(rng.integers(1, 50))
    chunks = _chunk_ranges(segments, width)
    needed = np.zeros(segments[-1][1] + 1, bool)
    for first, last in segments:
        needed[first:last] = True
    covered = np.zeros_like(needed)
    previous = segments[0][0]
    for start, stop in chunks:
        assert previous <= start < stop <= start + width       # in order, disjoint, at most width
        assert needed[start] and needed[stop - 1]             # starts and ends on needed positions
        covered[start:stop] = True
        previous = stop
    assert np.array_equal(covered & needed, needed)
    # A chunk ends short of width only at the end of a segment.
    ends = {last for _, last in segments}
    assert all(stop - start == width or stop in ends for start, stop in chunks)


def test_short_segments_share_chunks():
    # Images of 1024 positions 4 apart (conv1d k5): full chunks across the gaps, the last
    # image's margin left out.
    segments = [(n * 1028, n * 1028 + 1024) for n in range(4)]
    assert _chunk_ranges(segments, 3000) == [(0, 3000), (3000, 4108)]
    assert _chunk_ranges([(0, 100), (120, 220)], 30) == [(0, 30), (30, 60), (60, 90), (90, 100), (120, 150),
                                                        (150, 180), (180, 210), (210, 220)]


@pytest.mark.parametrize("seed", range(20))
def test_im2col_chunks_hold_each_taps_window(monkeypatch, seed):
    """Taps in runs (one phase, offsets a constant step apart, up or down) and alone: every
    chunk's rows are the taps' windows of buf, as slices would give them."""
    from aclnn_py._numpy.conv import flat
    from aclnn_py._numpy.conv.flat import _im2col, _im2col_chunks, _tap_runs

    monkeypatch.setattr(flat, "CHUNK_BYTES", 1)    # chunks of 64 positions

    rng = np.random.default_rng(seed)
    channels, phases, length = int(rng.integers(1, 4)), int(rng.integers(1, 3)), int(rng.integers(5, 300))
    taps = []
    for _ in range(int(rng.integers(1, 5))):
        phase, step, count = int(rng.integers(0, phases)), int(rng.integers(-3, 4)), int(rng.integers(1, 5))
        base = int(rng.integers(0, 5)) + max(0, -step) * (count - 1)
        taps += [(phase, base + k * step) for k in range(count)]
    slack = max(offset for _, offset in taps)
    buf = rng.standard_normal((channels, phases, length + slack)).astype(np.float32)
    assert sum(count for _, count, _ in _tap_runs(taps)) == len(taps)
    gap = int(rng.integers(0, length // 2))
    segments = [(0, length // 2 - gap), (length // 2, length)] if gap else [(0, length)]
    seen = 0
    chunks, width = _im2col_chunks(buf, taps, segments)
    scratch = None if len(taps) == 1 else np.empty((channels, len(taps), width + 16), np.float32)
    for start, stop in chunks:
        assert stop - start <= width
        cols = _im2col(buf, taps, _tap_runs(taps), start, stop, scratch)
        seen += stop - start
        for t, (phase, offset) in enumerate(taps):
            np.testing.assert_array_equal(cols[:, t], buf[:, phase, start + offset:stop + offset])
    assert seen >= sum(last - first for first, last in segments)


def test_tap_runs():
    from aclnn_py._numpy.conv.flat import _tap_runs

    # A 3x3 kernel reversed (offsets down by 1 along a row), a tap of another phase, a run up.
    taps = [(0, 8), (0, 7), (0, 6), (0, 4), (0, 3), (0, 2), (1, 0), (0, 1), (0, 2)]
    assert _tap_runs(taps) == [(0, 3, -1), (3, 3, -1), (6, 1, 0), (7, 2, 1)]
    assert _tap_runs([(0, 0), (1, 0), (0, 1), (1, 1)]) == [(0, 1, 0), (1, 1, 0), (2, 1, 0), (3, 1, 0)]


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("want", ["both", "corr", "cross"])
def test_im2col_products_over_chunks_shared_by_the_workers(monkeypatch, seed, want):
    """Many small chunks, shared among the worker threads (each its own cols and BLAS calls),
    give the sums of the docstring exactly as written, for any grouping and segments; the
    result is the same on every call (the workers' partial sums added in chunk order)."""
    from aclnn_py._numpy.conv import flat
    from aclnn_py._numpy.conv.flat import _im2col_products

    monkeypatch.setattr(flat, "CHUNK_BYTES", 1)    # chunks of 64 positions: many per worker
    rng = np.random.default_rng(100 + seed)
    groups, cg, rows = int(rng.integers(1, 3)), int(rng.integers(1, 4)), int(rng.integers(1, 5))
    length = int(rng.integers(65, 700))
    taps = [(int(rng.integers(0, 2)), int(rng.integers(0, 9))) for _ in range(int(rng.integers(1, 6)))]
    slack = max(offset for _, offset in taps)
    buf = rng.standard_normal((groups * cg, 2, length + slack)).astype(np.float32)
    wmat = rng.standard_normal((groups, rows, cg * len(taps))).astype(np.float32) if want != "cross" else None
    other = rng.standard_normal((groups, rows, length)).astype(np.float32) if want != "corr" else None
    cut = int(rng.integers(1, length))
    segments = [(0, cut), (cut, length)] if seed % 2 else [(0, length)]

    corr, cross = _im2col_products(buf, taps, length, wmat, other, segments)
    # cols[g, c*T + t, j] = buf[g*Cg + c, phase_t, j + offset_t], built slowly.
    cols = np.stack([np.stack([buf[g * cg + c, phase, offset:offset + length] for c in range(cg)
                               for phase, offset in taps]) for g in range(groups)]).astype(np.float64)
    if wmat is not None:
        assert_close(corr, np.einsum("gik,gkj->gij", wmat.astype(np.float64), cols), np.float32, scale=4.0)
    else:
        assert corr is None
    if other is not None:
        assert_close(cross, np.einsum("gij,gkj->gik", other.astype(np.float64), cols), np.float32, scale=16.0)
        again = _im2col_products(buf, taps, length, wmat, other, segments)[1]
        np.testing.assert_array_equal(again, cross)
    else:
        assert cross is None


@pytest.mark.parametrize("workers", [2, 3, 4])
def test_flat_buffer_pieces_shared_by_the_workers(monkeypatch, workers):
    """The (phase, channel) pieces of a flat buffer's copy, split among 2-4 workers (so that a
    part starts and ends inside a phase's channels), give the same buffer as one thread: each
    phase's data where its positions connect, zeros elsewhere and in the slack."""

    from aclnn_py._numpy.conv import flat

    monkeypatch.setattr(_workers, "_WORKERS", workers)
    monkeypatch.setattr(flat, "PARALLEL_COPY_ELEMENTS", 1)
    rng = np.random.default_rng(workers)
    src = rng.standard_normal((2, 3, 7, 9), dtype=np.float32)
    extents = (5, 6)
    # Four stride-2 phases, one starting before the source (padding), one reaching past it.
    phases = [((2, -1), (2, -1)), ((2, -1), (2, 0)), ((2, 0), (2, -1)), ((2, 0), (2, 0))]
    parallel = flat._flat_buffer(src, extents, phases, 5, True, "test flat").copy()
    serial = flat._flat_buffer(src, extents, phases, 5, False, "test flat")
    np.testing.assert_array_equal(parallel, serial)
    image = 2 * 5 * 6
    assert not parallel[:, :, image:].any()
    for p, ((sh, bh), (sw, bw)) in enumerate(phases):
        plane = parallel[:, p, :image].reshape(3, 2, *extents)
        for a in range(extents[0]):
            for b in range(extents[1]):
                h, w = a * sh + bh, b * sw + bw
                inside = 0 <= h < 7 and 0 <= w < 9
                want = src[:, :, h, w].T if inside else np.zeros((3, 2), np.float32)
                np.testing.assert_array_equal(plane[:, :, a, b], want)


@pytest.mark.parametrize("kernel, stride, checks_data", [
    ((1, 1), (2, 2), True),     # one tap per product: OpenBLAS's own threads, data checked first
    ((1, 1), (1, 1), True),
    ((3, 3), (1, 1), False),    # cols copied on the worker threads: results checked after
    ((3, 3), (2, 2), False),
])
def test_inf_checked_in_the_data_or_the_results(monkeypatch, kernel, stride, checks_data):
    """A flat engine whose products run on OpenBLAS's threads has its data checked for inf/NaN
    before them (straight to the tap engine); the others compute, find NaN in their results and
    hand over to the tap engine.  Both give the IEEE results of the reference."""
    import aclnn_py
    from aclnn_py._numpy import conv
    from helpers import random_array, record_engines
    from reference.convolution_backward import convolution_backward as reference

    monkeypatch.setattr(conv, "forced", "flat")
    conv._choose.cache_clear()
    rng = np.random.default_rng(3)
    pad = kernel[0] // 2
    out = tuple((9 + 2 * pad - k) // s + 1 for k, s in zip(kernel, stride))
    x = random_array(rng, (2, 6, 9, 9), np.float32)
    w = random_array(rng, (5, 6) + kernel, np.float32)
    go = random_array(rng, (2, 5) + out, np.float32)
    x[1, 2, 4, 4] = np.inf
    go[0, 1, 0, 0] = np.nan
    geometry = conv.lowered(2, 6, 5, (9, 9), out, kernel, stride, (1, 1), (pad, pad), 1, False)
    assert geometry.choose(True).checks_data is checks_data
    ran = record_engines(monkeypatch)
    got = aclnn_py.convolution_backward(go, x, w, [5], list(stride), [pad, pad], [1, 1], False, [0, 0], 1,
                                        [True, True, False], backend="numpy")
    conv._choose.cache_clear()
    assert ran == (["tap"] if checks_data else ["flat", "tap"])
    want = reference(go, x, w, list(stride), [pad, pad], [1, 1], False, 1)
    for g, e in zip(got[:2], want[:2]):
        np.testing.assert_array_equal(np.isnan(g), np.isnan(e))
        np.testing.assert_array_equal(np.isinf(g), np.isinf(e))
        finite = np.isfinite(e)
        assert_close(g[finite], e[finite], np.float32)


# (batch, Cx, Cy, x_size, kernel, stride, dilation, pad, groups, stacked): an ordinary convolution's
# Y-space lowering, whose output phases share their taps when the kernel is a multiple of the stride.
_PHASES = [
    (2, 3, 4, (9, 10), (4, 4), (2, 2), (1, 1), (1, 1), 1, True),       # k4 s2: shifts 0, 1 in every phase
    (1, 4, 6, (11, 8), (4, 4), (2, 2), (1, 1), (1, 1), 2, True),       # grouped
    (2, 2, 3, (13,), (6,), (3,), (1,), (2,), 1, True),                 # 1-D k6 s3
    (1, 2, 2, (6, 7, 6), (4, 2, 4), (2, 2, 2), (1, 1, 1), (1, 0, 1), 1, True),
    (2, 3, 4, (9, 9), (4, 2), (2, 1), (1, 1), (0, 0), 1, True),        # one phase along the second axis
    (2, 3, 4, (9, 9), (3, 3), (2, 2), (1, 1), (1, 1), 1, False),       # k3 s2: 2 taps in one phase, 1 in the other
    (2, 3, 4, (12, 12), (4, 4), (2, 2), (2, 2), (1, 1), 1, False),     # dilated: every tap in phase 0
]


@pytest.mark.parametrize("case", _PHASES)
@pytest.mark.parametrize("want", [(True, True), (True, False), (False, True)])
def test_output_phases_sharing_their_taps_make_one_product(case, want):
    """Where every output phase of dX reads the same taps of dY's buffer, the phases' products
    are one product of their stacked weights (and X's stacked phases): the gradients of the
    slow reference, and those of the product per phase."""
    from aclnn_py._numpy.conv.flat import FlatEngine
    from reference.convolution_backward import convolution_backward as reference

    batch, cx, cy, x_size, kernel, stride, dilation, pad, groups, stacked = case
    y_size = tuple((x + 2 * p - d * (k - 1) - 1) // s + 1
                   for x, k, s, d, p in zip(x_size, kernel, stride, dilation, pad))
    engine = FlatEngine(batch, cx, cy, x_size, y_size, kernel, stride, dilation, pad, groups, False, space="y")
    assert engine._stacked is stacked
    rng = np.random.default_rng(sum(x_size) + groups)
    x = rng.standard_normal((batch, cx) + x_size).astype(np.float32)
    dy = rng.standard_normal((batch, cy) + y_size).astype(np.float32)
    w = rng.standard_normal((cy, cx // groups) + kernel).astype(np.float32)
    got = engine.gradients(x, dy, w, *want)
    engine._stacked = False
    per_phase = engine.gradients(x, dy, w, *want)
    expected = reference(dy, x, w, list(stride), list(pad), list(dilation), False, groups)
    for g, p, e, wanted in zip(got, per_phase, expected[:2], want):
        if not wanted:
            assert g is None
            continue
        assert_close(g, e, np.float32, scale=4.0)
        assert_close(g, p, np.float32, scale=4.0)
