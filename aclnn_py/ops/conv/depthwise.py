"""Depthwise convolutions (one channel in and one out per group): every product a multiply-add
or a dot product per kernel tap, BLAS gains nothing (each group's product is a matrix-vector
one) and im2col would cost more than the arithmetic.  Two forms:

* ``DepthwiseEngine`` (the engine ``depthwise``): stride 1, 1-D or 2-D, X and Y rows equally
  long (a "same" convolution's).  No buffer at all: each ``(n, c)`` plane of the source is read
  in place, flattened, and tap ``t`` is one constant flat shift ``e_t`` away (``dX[x] += w[t] *
  dY[x + e_t]``).  A shift that leaves a row reads the neighbouring row's edge columns instead
  of the padding: a copy of the source with those columns zeroed (one per horizontal shift)
  turns them into the padding's zeros, for both gradients.  The result is written in place.
* ``tapwise_products``: the flat engine's form for the other depthwise convolutions (strided,
  3-D, ...), on its phase-split flat buffers (flat.py), in blocks of channels
  (``channel_blocks``).

Finite data only (inf * 0 is NaN; the tap engine takes the rest).
"""

from __future__ import annotations

import math
from typing import TypeAlias

import numpy as np

from .._common import in_parallel
from ._geometry import FLOAT32, Geometry, Gradients

#: ``(corr, cross)`` of ``tapwise_products``, None where not asked for.
_Products: TypeAlias = tuple[np.ndarray | None, np.ndarray | None]
#: ``(X channels, Y channels, groups)`` of a block of the flat engine (``channel_blocks``).
Block: TypeAlias = tuple[slice, slice, int]

# The flat engine's depthwise blocks are about this size per buffer (channel_blocks): a
# block's few buffers stay in a 1 MiB L2 or the last-level cache.
TAPWISE_BYTES = 1 << 20


def channel_blocks(channels: int, length: int) -> list[Block]:
    """The flat engine's blocks of a depthwise convolution's channels, ``length`` floats per
    channel and buffer: about TAPWISE_BYTES each, so that a block's buffers stay in cache from
    when they are built to when they are used (the depthwise benchmark: 22 ms, against 52 ms in
    one block)."""
    step = max(1, TAPWISE_BYTES // (FLOAT32.itemsize * length))
    return [(slice(c0, c0 + step), slice(c0, c0 + step), min(step, channels - c0))
            for c0 in range(0, channels, step)]


def tapwise_products(buf: np.ndarray, taps: list[tuple[int, int]], length: int,
                     weights: np.ndarray | None, other: np.ndarray | None) -> _Products:
    """The flat engine's two products for a depthwise convolution, one tap (``(phase,
    offset)`` in ``buf``) at a time::

        corr[c, j]  = sum_t weights[c, t] * buf[c, phase_t, j + offset_t]
        cross[c, t] = sum_j other[c, j]   * buf[c, phase_t, j + offset_t]

    ``(corr (C, length), cross (C, T))``; None operands skip a product.  corr is one multiply
    and one add per tap, cross one dot product per tap and channel (np.matmul), both on the
    tap's slice while it is in cache.  Measured on the benchmark's depthwise 3x3
    (8,128,56,56), the whole op asked for gradInput only: 16 ms, against 24 ms with im2col +
    batched matmul; for gradWeight only: 10 ms, against 12 ms.
    """
    channels = buf.shape[0]
    corr = None if weights is None else np.empty((channels, length), FLOAT32)
    cross = None if other is None else np.empty((channels, 1, len(taps)), FLOAT32)
    scratch = None if weights is None else np.empty((channels, length), FLOAT32)
    for t, (phase, offset) in enumerate(taps):
        source = buf[:, phase, offset:offset + length]
        if corr is not None and weights is not None and scratch is not None:
            if t == 0:
                np.multiply(source, weights[:, t:t + 1], out=corr)
            else:
                np.multiply(source, weights[:, t:t + 1], out=scratch)
                corr += scratch
        if cross is not None and other is not None:
            np.matmul(other[:, np.newaxis, :], source[:, :, np.newaxis], out=cross[:, :, t:t + 1])
    return corr, None if cross is None else cross[:, 0, :]
