"""The winograd engine's blocks of tiles (aclnn_py.ops.conv.winograd._block_shape, _blocks):
whole tile rows while they fit BLOCK_BYTES, else even pieces of a row; every tile in exactly
one block; and the gradients from blocks cut anywhere against the slow reference."""

from __future__ import annotations

import numpy as np
import pytest

import aclnn_py
from aclnn_py.ops import conv
from aclnn_py.ops.conv import winograd
from helpers import assert_close, random_array
from reference.convolution_backward import convolution_backward as reference


@pytest.mark.parametrize("tw", [1, 2, 7, 28])
@pytest.mark.parametrize("per_position", [1, 64, 512, 4096])
@pytest.mark.parametrize("block_bytes", [1, 4096, 1 << 16, 4 << 20])
def test_block_shape(monkeypatch, tw, per_position, block_bytes):
    monkeypatch.setattr(winograd, "BLOCK_BYTES", block_bytes)
    rows, columns = winograd._block_shape(tw, per_position)
    tile = 16 * per_position * 4      # bytes of one tile's 16 transformed positions
    fit = max(1, block_bytes // tile)
    assert rows >= 1 and 1 <= columns <= tw
    assert rows * columns <= fit                     # a block fits (or is one tile)
    if fit >= tw:
        assert columns == tw and rows == fit // tw   # whole rows, as many as fit
    else:
        assert rows == 1
        pieces = -(-tw // columns)
        assert pieces == -(-tw // fit)               # no more pieces than needed ...
        assert tw - (pieces - 1) * columns >= columns - pieces   # ... and about even


@pytest.mark.parametrize("first, last", [(0, 1), (0, 5), (3, 10)])
@pytest.mark.parametrize("rows, columns, tw", [(1, 1, 3), (2, 5, 5), (3, 2, 5), (4, 3, 7)])
def test_blocks_cover_every_tile_once_row_by_row(first, last, rows, columns, tw):
    seen = []
    blocks = list(winograd._blocks(first, last, rows, tw, columns))
    for i0, nb, j0, nc in blocks:
        assert 1 <= nb <= rows and 1 <= nc <= columns
        seen += [(i, j) for i in range(i0, i0 + nb) for j in range(j0, j0 + nc)]
    assert sorted(seen) == [(i, j) for i in range(first, last) for j in range(tw)]
    assert [(i0, j0) for i0, _, j0, _ in blocks] == sorted((i0, j0) for i0, _, j0, _ in blocks)


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
