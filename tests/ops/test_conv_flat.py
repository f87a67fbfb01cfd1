"""The flat engine's chunking of its products (aclnn_py.ops.conv.flat._chunk_ranges)."""

from __future__ import annotations

import numpy as np
import pytest

from aclnn_py.ops.conv.flat import _chunk_ranges


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
