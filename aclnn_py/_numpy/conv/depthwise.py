"""Depthwise convolutions (one channel in and one out per group): each group's product is a
matrix-vector one, so that the cost is in the passes over the data, not the arithmetic.  Two
forms:

* ``DepthwiseEngine`` (the engine ``depthwise``): stride 1, 1-D or 2-D, X's and Y's rows
  equally long (a "same" convolution's).  Each ``(n, c)`` plane of the source is read in place,
  flattened: tap ``t`` is one constant flat shift ``e_t`` away (``dX[p] = sum_t w[t] * dY[p +
  e_t]``), linear in the tap's indices.  A block of planes is copied once into zero-padded
  planes, its im2col is then one strided copy for all taps, and both products are reductions
  over it: ``(1, T) @ (T, P)`` per plane for the result (np.matmul, BLAS gemv), ``T`` dot
  products per plane for gradWeight (np.einsum).  A shift that leaves a row reads the
  neighbouring row's edge columns instead of the padding: those columns of the im2col are
  zeroed.  The result is written in place; no flat buffer, no copy back.
* ``tapwise_products``: the flat engine's form for the other depthwise convolutions (strided,
  3-D, ...), on its phase-split flat buffers (flat.py), in blocks of channels
  (``channel_blocks``).

Finite data only (inf * 0 is NaN; the tap engine takes the rest).
"""

from __future__ import annotations

import math
from typing import TypeAlias, Unpack

import numpy as np

from ..workers import MIN_PARALLEL_ELEMENTS, in_parallel, scratch, threads_for
from ._geometry import FLOAT32, Geometry, GeometryArgs, Gradients

#: ``(corr, cross)`` of ``tapwise_products``, None where not asked for.
_Products: TypeAlias = tuple[np.ndarray | None, np.ndarray | None]
#: ``(X channels, Y channels, groups)`` of a block of the flat engine (``channel_blocks``).
Block: TypeAlias = tuple[slice, slice, int]

# DepthwiseEngine's im2col is built for blocks of planes (or of rows of one plane) of about
# this many bytes.  Each block costs ~10 NumPy calls and a strided view (~10 us) besides its
# passes, which favoured blocks beyond a 1 MiB L2 on a quiet machine: the benchmark's
# depthwise 3x3 (8,128,56,56), both gradients, one thread, ms, minimums of 10 interleaved rounds:
# 10.7 at 256 KiB, 8.3 at 512 KiB, 7.3 at 1 MiB, 6.8 at 2 MiB, 6.5 at 4 MiB.
# The same blocks with a multiply-add and a dot product per tap on masked copies of the source
# (no im2col): 8.7 at best; gradInput alone 4.0 against 6.0 ms, gradWeight alone 4.0 against 3.5.
# gradWeight's dot products are an einsum, not the batched matrix @ vector np.matmul: NumPy
# holds the GIL through much of those (a second thread's NumPy loop ran at ~1/3 of its speed
# beside them, at full speed beside an einsum or a vector @ matrix np.matmul), so that they did
# not get faster on two threads (gradWeight alone 4.0 -> 3.9 ms, einsum 5.9 -> 3.3).  Both
# gradients, minimums of 25 rounds: einsum 7.6 ms on one thread, 4.4 on two; np.matmul 5.7, 4.9.
# Measured again at load 6 (the machine shared with other programs, whose data evict ours
# from the last-level cache), blocks that stay in a core's L2 win, the im2col being read back
# by the products; thread CPU ms on one thread, medians of 15-21 interleaved rounds: forward
# product alone 12.2 at 256 KiB, 10.1 at 512 KiB, 9.7 at 1 MiB, 10.4 at 1.5 MiB, 11.6 at 2 MiB,
# 15.3 at 4 MiB; both gradients 24.4 at 512 KiB, 24.0 at 1 MiB, 26.0 at 2 MiB, 29.1 at 4 MiB.
COLS_BYTES = 1 << 20
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
    (8,128,56,56) (before DepthwiseEngine took it), the whole op asked for gradInput only:
    16 ms, against 24 ms with im2col + batched matmul on the flat buffers; for gradWeight only:
    10 ms, against 12 ms.
    """
    channels = buf.shape[0]
    # corr and the per-tap product are the calling thread's scratch arrays (fresh ones were
    # fresh pages on every call: the depthwise 3x3 s2 (8,96,112,112) case faulted ~8000 a call);
    # the caller copies corr out before its next products.
    corr = None if weights is None else scratch("depthwise corr", (channels, length))
    cross = None if other is None else np.empty((channels, 1, len(taps)), FLOAT32)
    product = None if weights is None else scratch("depthwise product", (channels, length))
    for t, (phase, offset) in enumerate(taps):
        source = buf[:, phase, offset:offset + length]
        if corr is not None and weights is not None and product is not None:
            if t == 0:
                np.multiply(source, weights[:, t:t + 1], out=corr)
            else:
                np.multiply(source, weights[:, t:t + 1], out=product)
                corr += product
        if cross is not None and other is not None:
            np.matmul(other[:, np.newaxis, :], source[:, :, np.newaxis], out=cross[:, :, t:t + 1])
    return corr, None if cross is None else cross[:, 0, :]


def applies(geometry: Geometry) -> bool:
    """Whether ``DepthwiseEngine`` computes this convolution: depthwise, stride 1, 1-D or 2-D
    with X's and Y's rows equally long (a shift of the flat plane is a shift of the image), and
    no padding before the data beyond the kernel's reach (the padded copies of the planes then
    stay within a kernel's reach of the data's size)."""
    return (geometry.x_channels == geometry.groups == geometry.y_channels
            and all(s == 1 for s in geometry.stride) and len(geometry.kernel) <= 2
            and geometry.x_size[1:] == geometry.y_size[1:]
            and all(lo <= (k - 1) * d for lo, k, d in zip(geometry.pad_lo, geometry.kernel, geometry.dilation)))


class DepthwiseEngine(Geometry):
    """Both gradients of a depthwise stride-1 convolution on the planes in place (module
    docstring).  For an ordinary convolution the result is dX (X's planes), read from dY::

        dX[n, c, p] = sum_t w[c, t] * dY[n, c, p + e_t]       e_t = sum_d (lo_d - t_d*dil_d) * pitch_d
        dW[c, t]    = sum_{n, p} X[n, c, p] * dY[n, c, p + e_t]

    (``p`` a flat position, the terms whose ``dY`` position is outside the image left out); for
    a transposed one it is the forward product Y read from X with the opposite shifts, and
    ``dW[c, t] = sum dY[n, c, p] * X[n, c, p - e_t]``."""

    name = "depthwise"
    blas_in_workers = True     # each block's matrix-vector products
    checks_data = False

    def __init__(self, *geometry: Unpack[GeometryArgs]) -> None:
        super().__init__(*geometry)
        # The result's planes (out) and the source planes the taps read.
        out_size, src_size = (self.y_size, self.x_size) if self.transposed else (self.x_size, self.y_size)
        self._out_plane, self._src_plane = math.prod(out_size), math.prod(src_size)
        #: Positions per row (2-D; 1 for 1-D, whose "rows" are single positions).
        self._width = width = out_size[-1] if len(out_size) == 2 else 1
        pitches = (width, 1)[2 - len(out_size):]
        sign = -1 if self.transposed else 1
        # e_t is linear in the tap's indices: e_t = first + sum_d t_d * step_d.
        self._first_shift = sign * sum(lo * pitch for lo, pitch in zip(self.pad_lo, pitches))
        self._tap_steps = tuple(-sign * d * pitch for d, pitch in zip(self.dilation, pitches))
        shifts = [self._first_shift + sum(t * step for t, step in zip(tap, self._tap_steps))
                  for tap in np.ndindex(*self.kernel)]
        # A padded copy of a source plane holds zeros where the taps read beyond it.
        self._lead = max(0, -min(shifts))
        self._padded = self._lead + max(self._src_plane, self._out_plane + max(shifts))
        #: Per kernel column (2-D): the out columns whose reads leave their row, to be zeroed.
        self._leaving: list[tuple[int, slice]] = []
        if len(out_size) == 2:
            for j in range(self.kernel[1]):
                across = sign * (self.pad_lo[1] - j * self.dilation[1])
                if across:
                    self._leaving.append((j, slice(0, min(width, -across)) if across < 0
                                          else slice(max(0, width - across), width)))

    def gradients(self, x: np.ndarray, dy: np.ndarray, w: np.ndarray, want_input: bool, want_weight: bool) -> Gradients:
        """``(gradInput, gradWeight)``, None where not wanted (``Geometry``)."""
        src, other = (x, dy) if self.transposed else (dy, x)
        batch, channels, taps = self.batch, self.groups, math.prod(self.kernel)
        src = src.reshape(batch, channels, self._src_plane)
        other = other.reshape(batch, channels, self._out_plane)
        weights = w.reshape(channels, 1, taps)
        out = None
        if want_input:
            out = np.empty((batch, channels) + (self.y_size if self.transposed else self.x_size), FLOAT32)
        out_planes = None if out is None else out.reshape(batch, channels, self._out_plane)
        blocks = self._blocks()
        partials: dict[int, np.ndarray] = {}     # by first block: summed in the parts' order

        def work(first: int, last: int) -> None:
            n_max, c_max, length = (max(b[i + 1] - b[i] for b in blocks[first:last]) for i in (0, 2, 4))
            # Zeros around each plane's copy (written once: the copies write between them).
            padded = np.zeros((n_max, c_max, self._padded), FLOAT32)
            cols = np.empty((n_max, c_max, taps, length), FLOAT32)
            cross = np.empty((n_max, c_max, taps), FLOAT32) if want_weight else None
            dw = np.zeros((channels, taps), FLOAT32) if want_weight else None
            planes = None
            # Blocks of whole planes share one view of the taps (its making costs ~10 us).
            whole = None if length < self._out_plane else self._tap_view(padded, 0, length)
            for n0, n1, c0, c1, p0, p1 in blocks[first:last]:
                nb, cb = n1 - n0, c1 - c0
                if planes != (n0, c0):      # (a plane cut in blocks of rows is copied once)
                    np.copyto(padded[:nb, :cb, self._lead:self._lead + self._src_plane], src[n0:n1, c0:c1])
                    planes = (n0, c0)
                block = cols[:nb, :cb, :, :p1 - p0]
                taps_view = whole[:nb, :cb] if whole is not None else self._tap_view(padded[:nb, :cb], p0, p1)
                self._im2col(taps_view, block)
                if out_planes is not None:
                    np.matmul(weights[c0:c1], block, out=out_planes[n0:n1, c0:c1, np.newaxis, p0:p1])
                if dw is not None and cross is not None:
                    part = cross[:nb, :cb]
                    np.einsum("nctl,ncl->nct", block, other[n0:n1, c0:c1, p0:p1], out=part)
                    dw[c0:c1] += part.sum(axis=0)
            if dw is not None:
                partials[first] = dw

        # One part per worker thread whatever the load (each part its own partial gradWeight,
        # summed in the parts' order): on one thread while the machine is busy.
        serial = threads_for(batch * channels * self._out_plane * taps, MIN_PARALLEL_ELEMENTS) == 1
        in_parallel(len(blocks), work, serial=serial)
        grad_weight = None
        if want_weight:
            order = sorted(partials)
            grad_weight = partials[order[0]]
            for partial in (partials[first] for first in order[1:]):
                grad_weight += partial
            grad_weight = grad_weight.reshape(w.shape)
        return out, grad_weight

    def _blocks(self) -> list[tuple[int, int, int, int, int, int]]:
        """``(n0, n1, c0, c1, p0, p1)``: images, channels and out positions of the blocks, about
        COLS_BYTES of im2col each: several planes, or whole rows of one plane."""
        taps, plane = math.prod(self.kernel), self._out_plane
        row_bytes = taps * self._width * FLOAT32.itemsize
        rows = plane // self._width
        if rows * row_bytes > COLS_BYTES:
            step = max(1, COLS_BYTES // row_bytes) * self._width
            return [(n, n + 1, c, c + 1, p0, min(plane, p0 + step))
                    for n in range(self.batch) for c in range(self.groups) for p0 in range(0, plane, step)]
        per_block = COLS_BYTES // (rows * row_bytes)
        step_c = -(-self.groups // -(-self.groups // per_block))       # equal parts of the channels
        step_n = max(1, per_block // self.groups) if step_c == self.groups else 1
        return [(n0, min(self.batch, n0 + step_n), c0, min(self.groups, c0 + step_c), 0, plane)
                for n0 in range(0, self.batch, step_n) for c0 in range(0, self.groups, step_c)]

    def _tap_view(self, padded: np.ndarray, p0: int, p1: int) -> np.ndarray:
        """The view ``(.., *kernel, p1 - p0)`` of the padded planes ``padded`` whose element
        ``[.., t, p - p0]`` is the source at ``p + e_t`` (0 outside it): the taps' shifts are
        linear in their indices, so one strided view holds them all."""
        itemsize = FLOAT32.itemsize
        return np.lib.stride_tricks.as_strided(
            padded[..., self._lead + self._first_shift + p0:], shape=padded.shape[:2] + self.kernel + (p1 - p0,),
            strides=padded.strides[:2] + tuple(step * itemsize for step in self._tap_steps) + (itemsize,),
            writeable=False)

    def _im2col(self, taps: np.ndarray, cols: np.ndarray) -> None:
        """``cols[.., t, :]`` = ``taps[.., t, :]`` (``_tap_view``) in one copy, then the columns
        whose reads left their row zeroed."""
        into = cols.reshape(taps.shape)
        np.copyto(into, taps)
        if self._leaving:
            image = into.reshape(into.shape[:-1] + (-1, self._width))
            for j, columns in self._leaving:
                image[:, :, :, j, :, columns] = 0
