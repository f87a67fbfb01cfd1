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
from typing import TypeAlias, Unpack

import numpy as np

from .._common import in_parallel
from ._geometry import FLOAT32, Geometry, GeometryArgs, Gradients

#: ``(corr, cross)`` of ``tapwise_products``, None where not asked for.
_Products: TypeAlias = tuple[np.ndarray | None, np.ndarray | None]
#: ``(X channels, Y channels, groups)`` of a block of the flat engine (``channel_blocks``).
Block: TypeAlias = tuple[slice, slice, int]

# DepthwiseEngine works on blocks of (image, channel) planes of about this many bytes per
# array (a block's source, its masked copies, the other operand, the result, the scratch).
# Each block costs ~30 NumPy calls of ~1.5-2 us besides its passes, which favours large blocks
# over L2-sized ones: the benchmark's depthwise 3x3 (8,128,56,56), both gradients, one thread,
# medians of 7: 25.7 ms at 32 KiB, 14.5 at 64 KiB, 10.6 at 128 KiB, 9.5 at 256 KiB, 9.1 at
# 512 KiB, 8.7 at 1 MiB, 9.6 at 4 MiB (the arrays then leave the last-level cache).
BLOCK_BYTES = 1 << 20
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


def applies(geometry: Geometry) -> bool:
    """Whether ``DepthwiseEngine`` computes this convolution: depthwise, stride 1, 1-D or 2-D
    with X's and Y's rows equally long (a shift of the flat plane is a shift of the image)."""
    return (geometry.x_channels == geometry.groups == geometry.y_channels
            and all(s == 1 for s in geometry.stride) and len(geometry.kernel) <= 2
            and geometry.x_size[1:] == geometry.y_size[1:])


class DepthwiseEngine(Geometry):
    """Both gradients of a depthwise stride-1 convolution on the planes in place (module
    docstring).  For an ordinary convolution the result is dX (X's planes), read from dY::

        dX[n, c, p] = sum_t w[c, t] * dY[n, c, p + e_t]       e_t = sum_d (lo_d - t_d*dil_d) * pitch_d
        dW[c, t]    = sum_{n, p} X[n, c, p] * dY[n, c, p + e_t]

    (``p`` a flat position); for a transposed one it is the forward product Y read from X with
    the opposite shifts, and ``dW[c, t] = sum dY[n, c, p] * X[n, c, p - e_t]``."""

    name = "depthwise"

    def __init__(self, *geometry: Unpack[GeometryArgs]) -> None:
        super().__init__(*geometry)
        # The result's planes (out) and the source planes the taps read.
        out_size, src_size = (self.y_size, self.x_size) if self.transposed else (self.x_size, self.y_size)
        self._out_plane, self._src_plane = math.prod(out_size), math.prod(src_size)
        width = out_size[-1] if len(out_size) == 2 else 0
        sign = -1 if self.transposed else 1
        #: Per tap: its weight index, flat shift, first and last out position it reaches, and the
        #: masked source it reads (an index into the shifts of ``self._masks``; -1 the source).
        self._taps: list[tuple[int, int, int, int, int]] = []
        #: Per horizontal shift (2-D): the source's columns to zero so that the positions whose
        #: reads leave their row read zeros.
        self._masks: list[slice] = []
        shifts: dict[int, int] = {}
        for t, tap in enumerate(np.ndindex(*self.kernel)):
            shift = [sign * (lo - i * d) for i, d, lo in zip(tap, self.dilation, self.pad_lo)]
            mask = -1
            if width:
                across = shift[-1]
                if abs(across) >= width:
                    continue            # every read leaves the row: the tap reaches nothing
                if across:
                    if across not in shifts:
                        shifts[across] = len(self._masks)
                        self._masks.append(slice(width + across, width) if across < 0 else slice(0, across))
                    mask = shifts[across]
            flat = shift[-1] + (shift[0] * width if width else 0)
            first, last = max(0, -flat), min(self._out_plane, self._src_plane - flat)
            if first < last:
                self._taps.append((t, flat, first, last, mask))
        # The tap reaching most positions first: it sets the result (the rest is zeroed), the
        # others add to it.
        self._taps.sort(key=lambda tap: tap[2] - tap[3])
        self._width = width

    def gradients(self, x: np.ndarray, dy: np.ndarray, w: np.ndarray, want_input: bool, want_weight: bool) -> Gradients:
        """``(gradInput, gradWeight)``, None where not wanted (``Geometry``)."""
        src, other = (x, dy) if self.transposed else (dy, x)
        batch, channels = self.batch, self.groups
        src = np.ascontiguousarray(src).reshape(batch, channels, self._src_plane)
        other = np.ascontiguousarray(other).reshape(batch, channels, self._out_plane)
        weights = w.reshape(channels, -1)
        out_shape = (batch, channels) + (self.y_size if self.transposed else self.x_size)
        out = np.empty(out_shape, FLOAT32) if want_input else None
        out_planes = None if out is None else out.reshape(batch, channels, self._out_plane)
        taps = len(weights[0])
        blocks = self._blocks()
        partials: list[np.ndarray] = []

        def work(first: int, last: int) -> None:
            n_max = max(b[1] - b[0] for b in blocks[first:last])
            c_max = max(b[3] - b[2] for b in blocks[first:last])
            masked = [np.empty((n_max, c_max, self._src_plane), FLOAT32) for _ in self._masks]
            scratch = np.empty((n_max, c_max, self._out_plane), FLOAT32) if want_input else None
            cross = np.empty((n_max, c_max, taps), FLOAT32) if want_weight else None
            dw = np.zeros((channels, taps), FLOAT32) if want_weight else None
            for n0, n1, c0, c1 in blocks[first:last]:
                nb, cb = n1 - n0, c1 - c0
                block = src[n0:n1, c0:c1]
                sources = [block]
                for buffer, columns in zip(masked, self._masks):
                    copy = buffer[:nb, :cb]
                    np.copyto(copy, block)
                    copy.reshape(nb, cb, -1, self._width)[..., columns] = 0
                    sources.append(copy)
                w_block = weights[c0:c1]
                if out_planes is not None and scratch is not None:
                    self._correlate(sources, w_block, out_planes[n0:n1, c0:c1], scratch[:nb, :cb])
                if dw is not None and cross is not None:
                    self._cross(sources, other[n0:n1, c0:c1], cross[:nb, :cb])
                    dw[c0:c1] += cross[:nb, :cb].sum(axis=0)
            if dw is not None:
                partials.append(dw)

        in_parallel(len(blocks), work)
        grad_weight = None
        if want_weight:
            grad_weight = partials[0]
            for partial in partials[1:]:
                grad_weight += partial
            grad_weight = grad_weight.reshape(w.shape)
        return out, grad_weight

    def _blocks(self) -> list[tuple[int, int, int, int]]:
        """``(n0, n1, c0, c1)``: the blocks of planes, about BLOCK_BYTES per array."""
        plane = max(self._out_plane, self._src_plane) * FLOAT32.itemsize
        per_block = max(1, BLOCK_BYTES // plane)
        step_c = -(-self.groups // -(-self.groups // per_block))       # equal parts of the channels
        step_n = max(1, per_block // self.groups) if step_c == self.groups else 1
        return [(n0, min(self.batch, n0 + step_n), c0, min(self.groups, c0 + step_c))
                for n0 in range(0, self.batch, step_n) for c0 in range(0, self.groups, step_c)]

    def _correlate(self, sources: list[np.ndarray], weights: np.ndarray, out: np.ndarray, scratch: np.ndarray) -> None:
        """``out[.., p] = sum_t weights[:, t] * source_t[.., p + e_t]`` on one block."""
        if not self._taps:
            out[...] = 0
            return
        for k, (t, shift, first, last, mask) in enumerate(self._taps):
            source = sources[mask + 1][..., first + shift:last + shift]
            weight = weights[:, t:t + 1]
            if k == 0:
                out[..., :first] = 0
                out[..., last:] = 0
                np.multiply(source, weight, out=out[..., first:last])
            else:
                part = scratch[..., first:last]
                np.multiply(source, weight, out=part)
                np.add(out[..., first:last], part, out=out[..., first:last])

    def _cross(self, sources: list[np.ndarray], other: np.ndarray, cross: np.ndarray) -> None:
        """``cross[n, c, t] = sum_p other[n, c, p] * source_t[n, c, p + e_t]`` on one block
        (0 for the taps that reach nothing)."""
        if len(self._taps) < cross.shape[2]:
            cross[...] = 0
        for t, shift, first, last, mask in self._taps:
            source = sources[mask + 1][..., first + shift:last + shift]
            np.matmul(other[..., np.newaxis, first:last], source[..., np.newaxis],
                      out=cross[..., t:t + 1, np.newaxis])
