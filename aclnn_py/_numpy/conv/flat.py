"""The flat engine: every product a correlation of one *flat buffer* with the kernel.

A tensor is split into stride phases per spatial dimension, each phase image padded to a
common extent and stored channel-first with ``(n, position)`` flattened into one axis, so that
for every output position tap ``t`` sits a constant offset away and its im2col row is one
contiguous slice.  Output positions in the padding of the extents are computed too and dropped
(a few per cent of extra work).  Both gradients a call needs come from one lowering, in one of
two spaces:

* X space (``space="x"``: forward and weight_grad; a transposed convolution's gradients, and
  gradWeight alone of an ordinary one): X in phases ``u = a*s + r``; tap ``t`` reads phase
  ``r = t*d % s`` at ``a = o + t*d // s``.  ``Y = W @ cols`` and ``dW = dY @ cols^T``: the long
  axis (batch x positions) is the products' contiguous inner dimension, and for a network's
  first layer (few input channels, gradInput not wanted) the matrix products are
  ``(Cout, L) @ (L, Cin*T)`` rather than ``Cin``-row ones per phase.
* Y space (``space="y"``: input_grad and weight_grad of an ordinary convolution): dY, lowered
  per output phase of dX.  The positions with ``x + lo = a*s + r`` receive only the taps with
  ``t*d % s == r``, a stride-1 correlation of dY with the reversed shifts (no scatter-add):
  ``dX_r = W_r^T @ cols``; the same cols give ``dW_r = X_r @ cols^T`` with ``X_r`` the phase of
  X at the positions of dX_r.  Where every phase reads the same taps (a kernel a multiple of the
  stride: k4 s2), the phases' products are one, their ``W_r^T`` stacked: one im2col pass.

Where the positions of a product are those of an array in its own layout - gradWeight alone
in X space (the positions of dY) and a stride-1 convolution in Y space (its one output phase is
all of dX, at the positions of X) - the cols are built in that array's order instead, whole rows
at a time, so that the array is read (dY, X) or written (dX) in place rather than copied into or
out of a flat layout (_row_products).

The products are im2col in ~4 MiB chunks and ``np.matmul`` calls that OpenBLAS runs on every
core while the machine is quiet, on one while it is busy (``blas.on_caller``; _im2col_products; a kernel row's neighbouring taps copied by one call, _tap_runs; each
image's trailing rows of the first dimension left out where a chunk would end in them,
_chunk_ranges), except for depthwise convolutions (one channel in and one out per
group), where BLAS gains nothing: one multiply-add or dot product per tap on blocks of channels
built, used and dropped while in cache (depthwise.py).  Finite data only (the zeros of
the padding would turn inf into NaN).
"""

from __future__ import annotations

import itertools
import math
from types import EllipsisType
from collections.abc import Callable
from typing import TypeAlias, Unpack

import numpy as np

from ..blas import single_threaded
from ..workers import in_parallel, scratch, worker_count
from . import depthwise
from ._geometry import FLOAT32, Geometry, GeometryArgs, Gradients, c_strides, connect, ordered_sum, zero_outside

#: Per dimension ``(step, base)``: where a flat buffer's phase reads its source (_flat_buffer).
_Phase: TypeAlias = tuple[tuple[int, int], ...]
#: ``(phase, offset)`` of a tap in a flat buffer.
_Tap: TypeAlias = tuple[int, int]
#: ``(corr, cross)`` of _im2col_products / depthwise.tapwise_products, None where not asked for.
_Products: TypeAlias = tuple[np.ndarray | None, np.ndarray | None]

# im2col is built in chunks of about this size: the chunk and the products' operands stay in
# a core's share of the last-level cache (every x86-64 and aarch64 server part has >= 4 MiB).
CHUNK_BYTES = 4 << 20
# A flat buffer's copy runs on the worker threads in parts of at least this many elements,
# shared by (phase, channel) pieces (the stem's X has 3 channels and 4 phases).  Measured (whole
# call, median of 15, each after 20 ms of calls, three alternations, Haswell kernels): 2^19
# against 2^21, the stem 14.8-15.0 against 15.3-15.4 ms, conv1d k5 8.15-8.20 against 8.21-8.37,
# conv3d k3 and the transposed k4 s2 case the same within 0.1 ms.  (Earlier, split by channel
# only and at 2^21: the stem's dY 14.4 -> 13.1 ms in two parts; conv3d k3's X (0.67 M) and the
# 3-D U-Net's (1.3 M) 3-5% slower in two parts, before the threads were held to their cores.)
PARALLEL_COPY_ELEMENTS = 1 << 19
# Extra floats per cols row: a power-of-two row stride makes the rows collide in the cache.
_ROW_PAD = 16


class FlatEngine(Geometry):
    name = "flat"

    def __init__(self, *geometry: Unpack[GeometryArgs], space: str) -> None:
        super().__init__(*geometry)
        self.space = space
        # One channel in and one out per group: depthwise.tapwise_products.
        self._depthwise = self.x_channels == self.groups == self.y_channels
        # A depthwise convolution's blocks run on the worker threads (_each_block).
        self.blas_in_workers = self._depthwise
        #: Elements of the buffers, or None when no tap reaches X (the tap engine then finds no
        #: connection: all gradients but the bias are zero).
        self.elements = self._plan_x_space() if space == "x" else self._plan_y_space()
        # One tap per product (a 1x1 kernel's): the cols are views, the products run on
        # OpenBLAS's own threads (_im2col_products), so the data are checked before them.
        products = [] if self.elements is None else [self._taps] if space == "x" else \
            [taps for _, taps, _, _ in self._phase_plan]
        self.checks_data = bool(products) and not self._depthwise and all(len(taps) == 1 for taps in products)

    def gradients(self, x: np.ndarray, dy: np.ndarray, w: np.ndarray, want_input: bool, want_weight: bool) -> Gradients:
        """``(gradInput, gradWeight)``, None where not wanted (``Geometry``).  In X space
        gradInput is the forward product, so an ordinary convolution takes X space only for
        gradWeight alone."""
        w_in = w if want_input else None
        if self.space == "x":
            assert self.transposed or not want_input
            if self._by_rows(self._taps):
                return self._forward_and_weight_grad_by_rows(x, w_in, dy if want_weight else None)
            return self._forward_and_weight_grad(x, w_in, dy if want_weight else None)
        # Stride 1: one output phase, all of dX at the positions of X.
        if self.stride == (1,) * len(self.stride) and self._by_rows(self._phase_plan[0][1]):
            return self._input_and_weight_grad_by_rows(dy, w_in, x if want_weight else None)
        return self._input_and_weight_grad(dy, w_in, x if want_weight else None)

    def _plan_x_space(self) -> int:
        """The flat engine's layout of X for forward and weight_grad; returns its size."""
        per_dim = [[(t * d % s, t * d // s) for t in range(k)]     # tap -> (phase residue, shift)
                   for k, s, d in zip(self.kernel, self.stride, self.dilation)]
        residues = [sorted({r for r, _ in dim}) for dim in per_dim]
        self._extents = tuple(y + max(q for _, q in dim) for y, dim in zip(self.y_size, per_dim))
        strides = c_strides(self._extents)
        combos = list(itertools.product(*residues))
        index = {combo: p for p, combo in enumerate(combos)}
        self._phases: list[_Phase] = [tuple((s, r - lo) for s, r, lo in zip(self.stride, combo, self.pad_lo))
                        for combo in combos]
        self._taps: list[_Tap] = [(index[tuple(r for r, _ in tap)], sum(q * st for (_, q), st in zip(tap, strides)))
                      for tap in itertools.product(*per_dim)]
        self._slack = max(offset for _, offset in self._taps)
        self._length = self.batch * math.prod(self._extents)
        self._segments = self._output_segments(self.y_size[0])
        return self.x_channels * len(combos) * (self._length + self._slack)

    def _plan_y_space(self) -> int | None:
        """The flat engine's layout of dY (and X) for input_grad and weight_grad, per output
        phase of dX (``_input_and_weight_grad``); returns its size, or None when no tap reaches
        X (all gradients are zero: the tap engine finds no connection)."""
        dims = []           # per dimension: {residue: [(tap, shift)]}, output-phase a ranges
        for size, k, s, d, lo in zip(self.x_size, self.kernel, self.stride, self.dilation, self.pad_lo):
            by_residue: dict[int, list[tuple[int, int]]] = {}
            for t in range(k):
                by_residue.setdefault(t * d % s, []).append((t, t * d // s))
            # Phase coordinates a with x = a*s + r - lo inside [0, x): [ceil((lo-r)/s), ceil((x+lo-r)/s)).
            ranges = {r: (-((r - lo) // s), -((r - lo - size) // s)) for r in by_residue}
            ranges = {r: span for r, span in ranges.items() if span[1] > span[0]}
            dims.append((by_residue, ranges))
        if any(not ranges for _, ranges in dims):
            return None
        # Every position of dX is in some output phase (else the rest must be zeroed) when each
        # dimension's phases cover all residues its positions have.
        self._covers_x = all(len(ranges) == min(s, size) for (_, ranges), s, size in
                             zip(dims, self.stride, self.x_size))
        a_min = tuple(min(lo for lo, _ in ranges.values()) for _, ranges in dims)
        a_max = tuple(max(hi for _, hi in ranges.values()) for _, ranges in dims)
        q_max = tuple(max(q for taps in by_residue.values() for _, q in taps) for by_residue, _ in dims)
        self._extents = tuple(hi - lo + q for lo, hi, q in zip(a_min, a_max, q_max))
        self._length = self.batch * math.prod(self._extents)
        self._segments = self._output_segments(a_max[0] - a_min[0])
        phases = list(itertools.product(*(sorted(ranges) for _, ranges in dims)))

        # dY placed so that buffer position b holds dY[o = b + a_min - q_max]: output phase
        # position a (stored at j = a - a_min) reads tap t at j + (q_max - shift_t).
        strides = c_strides(self._extents)
        self._slack = sum(q * st for q, st in zip(q_max, strides))
        self._dy_layout: list[_Phase] = [tuple((1, lo - q) for lo, q in zip(a_min, q_max))]
        # Plane p of X holds it at the positions of output phase p: j -> x = (j + a_min)*s + r - lo.
        self._x_layout: list[_Phase] = [tuple((s, lo_a * s + r - lo)
                                for r, lo_a, s, lo in zip(phase, a_min, self.stride, self.pad_lo))
                          for phase in phases]
        kernel_strides = c_strides(self.kernel)
        self._phase_plan: list[tuple[list[int], list[_Tap], tuple[slice, ...], tuple[slice, ...]]] = []   # per output phase: tap ids, taps into dY's buffer, dX slices (from, to)
        for phase in phases:
            # The taps of this output phase: every dimension's tap has this residue.
            per_dim = [by_residue[r] for (by_residue, _), r in zip(dims, phase)]
            tap_ids: list[int] = []
            taps: list[_Tap] = []
            for combo in itertools.product(*per_dim):
                tap_ids.append(sum(t * ks for (t, _), ks in zip(combo, kernel_strides)))
                taps.append((0, sum((q - shift) * st for (_, shift), q, st in zip(combo, q_max, strides))))
            src: list[slice] = []
            dst: list[slice] = []
            for (_, ranges), r, lo_a, s, lo in zip(dims, phase, a_min, self.stride, self.pad_lo):
                first, last = ranges[r]
                src.append(slice(first - lo_a, last - lo_a))
                x0 = first * s + r - lo
                dst.append(slice(x0, x0 + (last - first - 1) * s + 1, s))
            self._phase_plan.append((tap_ids, taps, tuple(src), tuple(dst)))
        # Whether every output phase reads the same taps of dY's buffer (a kernel a multiple of the
        # stride: k4 s2's phases each take shifts 0 and 1 per axis): the phases' products are
        # then one product of their weights stacked (_input_and_weight_grad).
        self._stacked = (not self._depthwise and len(phases) > 1
                         and all(taps == self._phase_plan[0][1] for _, taps, _, _ in self._phase_plan))
        # dX's phases (all of them at once when stacked), X's phases, dY.
        buffers = self.x_channels * ((len(phases) if self._stacked else 1) + len(phases)) + self.y_channels
        return buffers * self._length + self.y_channels * self._slack

    def _output_segments(self, rows: int) -> list[tuple[int, int]]:
        """The ranges of flat positions the products compute: of each image, its first ``rows``
        rows of the first dimension; the trailing ones (the extents' margin past the outputs)
        are outputs of no one, and ``other`` holds zeros there (_im2col_products)."""
        image = math.prod(self._extents)
        run = rows * math.prod(self._extents[1:])
        if run == image:
            return [(0, self._length)]
        return [(n * image, n * image + run) for n in range(self.batch)]

    def _blocks(self, length: int) -> list[depthwise.Block]:
        """``(X channels, Y channels, groups)`` of the blocks computed one after the other: a
        depthwise convolution's blocks of channels (``depthwise.channel_blocks``), any other
        convolution one block."""
        if not self._depthwise:
            return [(slice(None), slice(None), self.groups)]
        return depthwise.channel_blocks(self.groups, length)

    def _each_block(self, length: int, block: Callable[[slice, slice, int], None]) -> None:
        """``block(xs, ys, groups)`` for every block of ``_blocks``.  A depthwise convolution's
        blocks are independent and its products are NumPy ufuncs and dot products, which run on
        one core each: the blocks are shared among the worker threads (one per core).  Other
        convolutions are one block whose products BLAS threads itself."""
        blocks = self._blocks(length)

        def run(first: int, last: int) -> None:
            for xs, ys, groups in blocks[first:last]:
                block(xs, ys, groups)

        in_parallel(len(blocks), run)

    def _copies_in_parallel(self) -> bool:
        """Whether the flat buffers' copies may use the worker threads: a convolution other than
        a depthwise one is one block, run on the calling thread (_each_block)."""
        return not self._depthwise

    def _products(self, buf: np.ndarray, taps: list[_Tap], length: int, w_op: np.ndarray | None,
                  other: np.ndarray | None) -> _Products:
        """depthwise.tapwise_products for a depthwise convolution, _im2col_products otherwise;
        ``w_op`` and ``other`` are in _im2col_products' grouped layout."""
        if self._depthwise:
            corr, cross = depthwise.tapwise_products(buf, taps, length, None if w_op is None else w_op[:, 0, :],
                                            None if other is None else other[:, 0, :])
            return (None if corr is None else corr[:, np.newaxis, :],
                    None if cross is None else cross[:, np.newaxis, :])
        return _im2col_products(buf, taps, length, w_op, other, self._segments)

    def _forward_and_weight_grad(self, x: np.ndarray, w: np.ndarray | None, dy: np.ndarray | None) -> Gradients:
        """``(Y = conv(X, W) if w is given, dW if dy is given)``, lowering X once for both:
        ``Y = W @ cols`` and ``dW = dY @ cols^T``."""
        length = self._length
        cy_g, cx_g = self.y_channels // self.groups, self.x_channels // self.groups
        y = None if w is None else np.empty((self.batch, self.y_channels) + self.y_size, FLOAT32)
        dw = None if dy is None else np.empty((self.y_channels, cx_g) + self.kernel, FLOAT32)
        crop = (slice(None), slice(None)) + tuple(slice(0, size) for size in self.y_size)

        parallel = self._copies_in_parallel()

        def block(xs: slice, ys: slice, groups: int) -> None:
            xb = _flat_buffer(x[:, xs], self._extents, self._phases, self._slack, parallel, "flat x")
            w_op = None if w is None else w[ys].reshape(groups, cy_g, -1)
            other = None
            if dy is not None:
                dy_flat = _flat_buffer(dy[:, ys], self._extents, [((1, 0),) * len(self.y_size)], 0, parallel,
                                       "flat dy")
                other = dy_flat.reshape(groups, cy_g, length)
            corr, cross = self._products(xb, self._taps, length, w_op, other)
            if corr is not None:
                assert y is not None
                y[:, ys] = corr.reshape(groups * cy_g, self.batch, *self._extents)[crop].swapaxes(0, 1)
            if cross is not None:
                assert dw is not None
                dw[ys] = cross.reshape(groups * cy_g, cx_g, *self.kernel)

        self._each_block(length, block)
        return y, dw

    def _by_rows(self, taps: list[_Tap]) -> bool:
        """Whether the products take ``_row_products`` (cols in the natural order of the
        positions): more than one tap (a 1x1 kernel's cols are views of the buffer, no copy),
        not depthwise (depthwise.tapwise_products)."""
        return len(taps) > 1 and not self._depthwise

    def _forward_and_weight_grad_by_rows(self, x: np.ndarray, w: np.ndarray | None, dy: np.ndarray | None) -> Gradients:
        """``_forward_and_weight_grad`` by ``_row_products``: Y written and dY read in place,
        in their own layout, rather than copied out of and into flat buffers (the stem 7x7 s2
        (8,3,224,224)'s dY: 1.6 ms of 13.5)."""
        groups = self.groups
        cy_g, cx_g = self.y_channels // groups, self.x_channels // groups
        buf = _flat_buffer(x, self._extents, self._phases, self._slack, self._copies_in_parallel(), "flat x")
        y = None if w is None else np.empty((self.batch, self.y_channels) + self.y_size, FLOAT32)
        w_op = None if w is None else w.reshape(groups, cy_g, -1)
        cross = self._row_products(buf, self._taps, self.y_size, w_op, y, dy)
        return y, None if cross is None else cross.reshape(self.y_channels, cx_g, *self.kernel)

    def _row_products(self, buf: np.ndarray, taps: list[_Tap], sizes: tuple[int, ...], w_op: np.ndarray | None,
                      out: np.ndarray | None, other: np.ndarray | None) -> np.ndarray | None:
        """``_im2col_products`` with the positions in the natural order of an array ``(N, C,
        *sizes)`` instead of the flat buffer's: each tap's rows of positions are slices of the
        buffer (its extents' margin left out), so ``corr`` goes straight into ``out`` and
        ``other`` is read in place, both ``(N, C, *sizes)`` arrays (a chunk of them one strided
        view), no copy into or out of a flat layout.

        ``corr[g, i, p] = sum_{c, t} w_op[g, i, c*T + t] * buf[g*Cg + c, phase_t, p + offset_t]``
        into ``out`` (None: not wanted); returns ``cross[g, i, c*T + t] = sum_p buf[...] *
        other[n, g*rows + i, p]`` (None when ``other`` is), as _im2col_products.  Chunks of whole rows of the last
        axis within one plane of the axes before it (in 1-D: pieces of each sequence), about
        CHUNK_BYTES of cols each, as many as a multiple of the worker threads, shared among the
        workers with their own cols, sums and single-threaded BLAS calls (as _im2col_products)."""
        groups, channels = self.groups, buf.shape[0]
        taps_per_group = channels // groups * len(taps)
        runs = _tap_runs(taps)
        rank = len(sizes)
        row_length = sizes[-1]
        rows = sizes[-2] if rank >= 2 else 1
        row_stride = self._extents[-1]
        plane_strides = c_strides(self._extents)[:max(0, rank - 2)]
        planes = list(itertools.product(range(self.batch), *(range(size) for size in sizes[:-2])))
        per_position = channels * len(taps) * FLOAT32.itemsize
        # Pieces of a plane: of its rows (whole rows), or of its one row (1-D).
        along = rows if rank >= 2 else row_length
        pieces = min(along, -(-rows * row_length * per_position // CHUNK_BYTES))
        workers = worker_count()
        while len(planes) * pieces % workers and pieces < along:
            pieces += 1
        bounds = [along * i // pieces for i in range(pieces + 1)]
        chunks = []
        for plane in planes:
            for a, b in zip(bounds, bounds[1:]):
                if rank >= 2:
                    chunks.append((plane, (a, b), (0, row_length)))
                else:
                    chunks.append((plane, (0, 1), (a, b)))
        width = max((r1 - r0) * (c1 - c0) for _, (r0, r1), (c0, c1) in chunks)
        image = math.prod(self._extents)
        item = buf.itemsize
        sums: list[tuple[int, np.ndarray]] = []

        def region(array: np.ndarray, plane: tuple[int, ...], r: tuple[int, int], c: tuple[int, int]) -> np.ndarray:
            """The chunk's positions of ``array (N, C, *sizes)`` as ``(groups, C/g, positions)``, a view."""
            index = (plane[0], slice(None)) + plane[1:] + ((slice(*r),) if rank >= 2 else ()) + (slice(*c),)
            view = array[index].view()
            view.shape = (groups, array.shape[1] // groups, -1)    # a view by construction (raises otherwise)
            return view

        def work(first: int, last: int) -> None:
            cols = scratch("flat cols", (channels, len(taps), width + _ROW_PAD))
            cross_t = None if other is None else np.zeros((groups, taps_per_group, other.shape[1] // groups), FLOAT32)
            for plane, (r0, r1), (c0, c1) in chunks[first:last]:
                start = (plane[0] * image + sum(i * st for i, st in zip(plane[1:], plane_strides))
                         + r0 * row_stride + c0)
                count_rows, count_cols = r1 - r0, c1 - c0
                view = cols[:, :, :count_rows * count_cols]
                for t0, count, step in runs:
                    phase, offset = taps[t0]
                    source = np.ndarray((channels, count, count_rows, count_cols), FLOAT32, buf,
                                        (phase * buf.shape[2] + start + offset) * item,
                                        (buf.strides[0], step * item, row_stride * item, item))
                    target = view[:, t0:t0 + count].view()
                    target.shape = (channels, count, count_rows, count_cols)
                    target[...] = source
                part = view.reshape(groups, taps_per_group, -1)
                if out is not None and w_op is not None:
                    np.matmul(w_op, part, out=region(out, plane, (r0, r1), (c0, c1)))
                if cross_t is not None and other is not None:
                    cross_t += np.matmul(part, region(other, plane, (r0, r1), (c0, c1)).swapaxes(1, 2))
            if cross_t is not None:
                sums.append((first, cross_t))     # list.append is atomic

        with single_threaded():
            in_parallel(len(chunks), work)
        return None if other is None else ordered_sum(sums).swapaxes(1, 2)

    def _input_and_weight_grad(self, dy: np.ndarray, w: np.ndarray | None, x: np.ndarray | None) -> Gradients:
        """``(dX = conv^T(dY, W) if w is given, dW if x is given)``, lowering dY once for both.

        Output phase ``x + lo = a*s + r`` of dX correlates dY with the taps ``t*d % s == r``
        (shift ``q_t = t*d // s``): ``dX_r = W_r^T @ cols``.  The same cols give ``dW_r = X_r @
        cols^T``, with ``X_r`` the phase of X at the positions of dX_r: ``dW[t] = sum_a dY[a -
        q_t] X[a*s + r - lo]`` is the weight gradient's sum in the coordinates of dX."""
        length = self._length
        cy_g, cx_g = self.y_channels // self.groups, self.x_channels // self.groups
        dx: np.ndarray | None = None
        dw: np.ndarray | None = None
        if w is not None:
            shape = (self.batch, self.x_channels) + self.x_size
            dx = (np.empty if self._covers_x else np.zeros)(shape, FLOAT32)
        if x is not None:
            dw = np.zeros((self.y_channels, cx_g, math.prod(self.kernel)), FLOAT32)

        parallel = self._copies_in_parallel()

        def stacked(dyq: np.ndarray, xq: np.ndarray | None, w_taps: np.ndarray | None, dw_taps: np.ndarray | None,
                    xs: slice, groups: int) -> None:
            # Every phase reads the same taps (_plan_y_space): one im2col pass and one product
            # whose rows are (X channel, phase), both the weights' rows and X's phases (xq is
            # (C, phases, L)): ``P`` times the rows of each phase's product, P times fewer cols.
            # Measured on the transposed k4 s2 (8,64,28,28)->32 forward (4 phases of 32 rows).
            phases = len(self._phase_plan)
            taps = self._phase_plan[0][1]
            w_op = None if w_taps is None else np.stack(
                [_phase_weight(w_taps, tap_ids) for tap_ids, _, _, _ in self._phase_plan], axis=2
            ).reshape(groups, cx_g * phases, -1)
            other = None if xq is None else xq.reshape(groups, cx_g * phases, length)
            corr, cross = self._products(dyq, taps, length, w_op, other)
            corr_phases = None if corr is None else corr.reshape(groups * cx_g, phases, self.batch, *self._extents)
            cross_phases = None if cross is None else cross.reshape(groups, cx_g, phases, -1)
            for p, (tap_ids, _, src, dst) in enumerate(self._phase_plan):
                if cross_phases is not None:
                    assert dw_taps is not None
                    _put_phase_weight_grad(dw_taps, cross_phases[:, :, p], tap_ids)
                if corr_phases is not None:
                    assert dx is not None
                    dx[(slice(None), xs) + dst] = corr_phases[:, p][(slice(None), slice(None)) + src].swapaxes(0, 1)

        def block(xs: slice, ys: slice, groups: int) -> None:
            dyq = _flat_buffer(dy[:, ys], self._extents, self._dy_layout, self._slack, parallel, "flat dy")
            xq = None if x is None else _flat_buffer(x[:, xs], self._extents, self._x_layout, 0, parallel, "flat x")
            w_taps = None if w is None else w[ys].reshape(groups, cy_g, cx_g, -1)
            dw_taps = None if dw is None else dw[ys].reshape(groups, cy_g, cx_g, -1)
            if self._stacked:
                stacked(dyq, xq, w_taps, dw_taps, xs, groups)
                return
            for p, (tap_ids, taps, src, dst) in enumerate(self._phase_plan):
                w_op = None if w_taps is None else _phase_weight(w_taps, tap_ids)
                other = None if xq is None else xq[:, p].reshape(groups, cx_g, length)
                corr, cross = self._products(dyq, taps, length, w_op, other)
                if cross is not None:
                    assert dw_taps is not None
                    _put_phase_weight_grad(dw_taps, cross, tap_ids)
                if corr is not None:
                    assert dx is not None
                    out = corr.reshape(groups * cx_g, self.batch, *self._extents)
                    dx[(slice(None), xs) + dst] = out[(slice(None), slice(None)) + src].swapaxes(0, 1)

        self._each_block(length, block)
        return dx, None if dw is None else dw.reshape(self.y_channels, cx_g, *self.kernel)

    def _input_and_weight_grad_by_rows(self, dy: np.ndarray, w: np.ndarray | None, x: np.ndarray | None) -> Gradients:
        """``_input_and_weight_grad`` of a stride-1 convolution by ``_row_products``: its one
        output phase is all of dX at the positions of X (``x = j``), so dX is written in place
        and X read in place, with no flat copy of X and no copy of dX out of a flat layout
        (conv1d k5 (16,64,1024): 0.3 and 0.4 ms of ~7.5 on one thread)."""
        (tap_ids, taps, _, _), = self._phase_plan
        groups = self.groups
        cy_g, cx_g = self.y_channels // groups, self.x_channels // groups
        dyq = _flat_buffer(dy, self._extents, self._dy_layout, self._slack, self._copies_in_parallel(), "flat dy")
        dx = None if w is None else np.empty((self.batch, self.x_channels) + self.x_size, FLOAT32)
        w_op = None if w is None else _phase_weight(w.reshape(groups, cy_g, cx_g, -1), tap_ids)
        cross = self._row_products(dyq, taps, self.x_size, w_op, dx, x)
        if cross is None:
            return dx, None
        dw = np.zeros((groups, cy_g, cx_g, math.prod(self.kernel)), FLOAT32)
        _put_phase_weight_grad(dw, cross, tap_ids)
        return dx, dw.reshape(self.y_channels, cx_g, *self.kernel)


def _phase_weight(w_taps: np.ndarray, tap_ids: list[int]) -> np.ndarray:
    """``W_r^T`` of an output phase, ``(groups, Cx/g, Cy/g * T_r)``, from ``w_taps (groups,
    Cy/g, Cx/g, T)`` at the phase's taps (the operand of its dX product, Y space)."""
    groups, _, cx_g, _ = w_taps.shape
    return w_taps[..., tap_ids].transpose(0, 2, 1, 3).reshape(groups, cx_g, -1)


def _put_phase_weight_grad(dw_taps: np.ndarray, cross: np.ndarray, tap_ids: list[int]) -> None:
    """``dw_taps (groups, Cy/g, Cx/g, T)`` at an output phase's taps from its products' cross
    ``(groups, Cx/g, Cy/g * T_r)`` (Y space)."""
    groups, cy_g, cx_g, _ = dw_taps.shape
    dw_taps[..., tap_ids] = cross.reshape(groups, cx_g, cy_g, len(tap_ids)).transpose(0, 2, 1, 3)


def _flat_buffer(src: np.ndarray, extents: tuple[int, ...], phases: list[_Phase], slack: int,
                 parallel: bool, name: str) -> np.ndarray:
    """``src (N, C, *size)`` laid out as ``(C, len(phases), N*prod(extents) + slack)``.

    Phase ``p`` holds ``src[n, c, a*step + base]`` (per dimension ``(step, base) = phases[p][i]``)
    at the flat position of ``(n, a)``; everything else is zero.  Only that rest is zeroed: the
    data is written once.  ``parallel``: the (phase, channel) pieces are shared among the worker
    threads (the copy swaps N and C and, for a strided phase, reads every s-th element: bound by memory
    latency, not bandwidth; the stem's dY (8,64,112,112): 1.7 ms on one thread, 1.0 on two);
    only from a thread that is not one of the workers.  The buffer is the calling thread's
    scratch array ``name``: valid until its next ``_flat_buffer`` of that name.
    """
    batch, channels = src.shape[:2]
    image = math.prod(extents)
    buf = scratch(name, (channels, len(phases), batch * image + slack))
    channel_first = src.swapaxes(0, 1)
    connections = [connect(src.shape[2:], extents, [step for step, _ in dims], [base for _, base in dims])
                   for dims in phases]

    def fill(first: int, last: int) -> None:
        # Units [first, last) of (phase, channel), phase-major: per phase one range of channels.
        for p, box in enumerate(connections):
            c0, c1 = max(0, first - p * channels), min(channels, last - p * channels)
            if c0 >= c1:
                continue
            buf[c0:c1, p, batch * image:] = 0
            plane = buf[c0:c1, p, :batch * image].reshape(c1 - c0, batch, *extents)
            if box is None:
                plane[...] = 0
                continue
            zero_outside(plane, [dst for dst, _ in box], plane.ndim - len(box))
            into: tuple[EllipsisType | slice, ...] = (Ellipsis, *(dst for dst, _ in box))
            source_index: tuple[EllipsisType | slice, ...] = (Ellipsis, *(source for _, source in box))
            plane[into] = channel_first[c0:c1][source_index]

    units = len(phases) * channels
    if parallel:
        in_parallel(units, fill, min_per_thread=max(1, PARALLEL_COPY_ELEMENTS // (batch * image)))
    else:
        fill(0, units)
    return buf



def _im2col_chunks(buf: np.ndarray, taps: list[_Tap],
                   segments: list[tuple[int, int]]) -> tuple[list[tuple[int, int]], int]:
    """``(chunks, width)``: the ranges ``[start, stop)`` of flat positions that one im2col chunk
    each covers (at most about CHUNK_BYTES of cols, _chunk_ranges over ``segments``) and their
    widest.  More than one chunk: as many as a multiple of the worker threads, of even widths,
    so that the threads' shares of the chunks are equal (the stem's 15 chunks of ~1.4 ms each
    went 7 and 8 to the two threads: 14.8 -> 14.2 ms in 16)."""
    rows = buf.shape[0] * len(taps)
    longest = max(last - first for first, last in segments)
    width = max(64, min(longest, CHUNK_BYTES // (FLOAT32.itemsize * rows)))
    total = sum(last - first for first, last in segments)
    count = -(-total // width)
    if count > 1:
        workers = worker_count()
        width = max(64, -(-total // (-(-count // workers) * workers)))
    return _chunk_ranges(segments, width), width


def _im2col(buf: np.ndarray, taps: list[_Tap], runs: list[tuple[int, int, int]], start: int, stop: int,
            cols: np.ndarray | None) -> np.ndarray:
    """``cols[c, t, j] = buf[c, phase_t, start + j + offset_t]`` for ``j < stop - start``, in the
    scratch ``cols (C, T, >= stop - start)``; with a single tap (a 1x1 kernel, ``cols`` None) a
    view of ``buf``, no copy."""
    if cols is None:
        phase, offset = taps[0]
        return buf[:, phase:phase + 1, start + offset:stop + offset]
    channels = buf.shape[0]
    item = buf.itemsize
    view = cols[:, :, :stop - start]
    for first, count, step in runs:
        phase, offset = taps[first]
        if count == 1:
            view[:, first] = buf[:, phase, start + offset:stop + offset]
            continue
        # The run's rows are windows ``step`` apart of one phase: one overlapping view of
        # the contiguous buf (np.ndarray checks it lies inside; as_strided costs 3 us a call).
        view[:, first:first + count] = np.ndarray(
            (channels, count, stop - start), FLOAT32, buf,
            (phase * buf.shape[2] + start + offset) * item, (buf.strides[0], step * item, item))
    return view


def _tap_runs(taps: list[_Tap]) -> list[tuple[int, int, int]]:
    """``(first, count, step)``: the taps split into runs of consecutive taps in one phase whose
    offsets go by a constant ``step`` (a kernel row of a stride-1 convolution: its taps are
    neighbours), each copied by one NumPy call (conv3d k3: 9 calls per chunk instead of 27)."""
    runs: list[tuple[int, int, int]] = []
    first = 0
    while first < len(taps):
        count, step = 1, 0
        phase, offset = taps[first]
        if first + 1 < len(taps) and taps[first + 1][0] == phase:
            step = taps[first + 1][1] - offset
            while (first + count < len(taps) and taps[first + count][0] == phase
                   and taps[first + count][1] == offset + count * step):
                count += 1
        runs.append((first, count, step))
        first += count
    return runs


def _chunk_ranges(segments: list[tuple[int, int]], width: int) -> list[tuple[int, int]]:
    """Ranges of at most ``width`` positions covering the ``segments`` (sorted, disjoint) in
    order.  A chunk runs on across a gap (computing positions no one needs) rather than end
    short inside it: a gap is skipped only where a chunk would end in it anyway, so segments
    shorter than a chunk (conv1d's 1024-position images, with 4 positions between them) keep
    full chunks (measured: chunks cut at every image were 2-9% slower there)."""
    chunks: list[tuple[int, int]] = []
    pos = segments[0][0]
    i = 0
    while i < len(segments):
        first, last = segments[i]
        pos = max(pos, first)
        if pos >= last:
            i += 1
            continue
        stop = pos + width
        while i + 1 < len(segments) and segments[i + 1][0] < stop:
            i += 1
        stop = min(stop, segments[i][1])
        chunks.append((pos, stop))
        pos = stop
    return chunks


def _im2col_products(buf: np.ndarray, taps: list[_Tap], length: int,
                     wmat: np.ndarray | None, other: np.ndarray | None,
                     segments: list[tuple[int, int]]) -> _Products:
    """The flat engine's two products on one im2col pass over ``buf (C, phases, >= length + max
    offset)``, with ``Cg = C / groups`` channels per group and ``T = len(taps)``::

        corr[g, i, j]        = sum_{c, t} wmat[g, i, c*T + t] * buf[g*Cg + c, phase_t, j + offset_t]
        cross[g, i, c*T + t] = sum_j      other[g, i, j]      * buf[g*Cg + c, phase_t, j + offset_t]

    ``(corr, cross)``; a product whose operand (``wmat (groups, rows, Cg*T)``, ``other (groups,
    rows, length)``) is None is skipped.  Only the positions in ``segments`` (ranges of
    ``[0, length)``) are computed: corr's others are left unset, and cross sums over those
    only, the others being zeros of ``other`` (FlatEngine._output_segments: each image's
    trailing rows, 2 of a 3-D layer's 18-34 planes).  Chosen where _row_products is not (a
    strided convolution's output phases in Y space, a 1x1 kernel) and no depthwise engine is:
    the products become matrix products of ~4 MiB im2col chunks.  Feeding both gradients from
    one pass saves the second im2col (15.5 M floats copied per pass on the benchmark's resnet 3x3
    (8,64,56,56)): both products there took 54 ms in one pass against 63 ms in two, the
    transposed k4 s2 case's 10.3 ms against 11.3 ms.

    Where the chunks are copies (more than one tap), they are shared among the worker threads,
    each with its own cols and its own single-threaded BLAS calls (_blas.single_threaded), so
    that one worker's copy overlaps the other's product and no product waits for BLAS's threads
    to meet.  Measured against one caller with OpenBLAS on both cores (2 cores, wall, min of
    15, alternating processes, twice): conv3d k3 (2,16,16,32,32) 12.2 -> 11.4 ms, 3-D U-Net
    29.5 -> 27.0, transposed k4 s2 8.8 -> 8.0, conv1d k5 12.0 -> 10.5, stem 16.3 -> 15.6.
    (Earlier, with both workers' OpenBLAS calls on all threads, sharing lost.)  A 1x1 kernel's
    chunks are views, no copy to overlap: its large products stay with BLAS's own threads
    (1x1 stride 2 (8,256,56,56)->512: 27.4-30.9 ms threaded, 31.0-32.7 shared).
    """
    operand = wmat if wmat is not None else other
    assert operand is not None   # the caller asks for at least one product
    assert buf.flags.c_contiguous    # a flat buffer (_flat_buffer): _im2col's views address it
    groups = operand.shape[0]
    taps_per_group = buf.shape[0] // groups * len(taps)
    # Scratch arrays (_numpy/workers.py): the caller copies corr out before its next products.
    corr = None if wmat is None else scratch("flat corr", (groups, wmat.shape[1], length))
    chunks, width = _im2col_chunks(buf, taps, segments)
    runs = _tap_runs(taps)
    sums: list[tuple[int, np.ndarray]] = []
    cols_copied = len(taps) > 1

    def work(first: int, last: int) -> None:
        cols = None if not cols_copied else scratch("flat cols", (buf.shape[0], len(taps), width + _ROW_PAD))
        # cross is accumulated transposed, (groups, Cg*T, rows): the long chunk axis is then the
        # inner dimension of the first operand, which OpenBLAS's sgemm runs 10-20% faster than as
        # the transposed second one (conv3d k3 (2,16,16,32,32): 186 against 155 GFLOP/s).
        cross_t = None if other is None else np.zeros((groups, taps_per_group, other.shape[1]), FLOAT32)
        for start, stop in chunks[first:last]:
            part = _im2col(buf, taps, runs, start, stop, cols).reshape(groups, taps_per_group, stop - start)
            if corr is not None and wmat is not None:
                np.matmul(wmat, part, out=corr[:, :, start:stop])
            if cross_t is not None and other is not None:
                cross_t += np.matmul(part, other[:, :, start:stop].swapaxes(1, 2))
        if cross_t is not None:
            sums.append((first, cross_t))     # list.append is atomic

    if cols_copied and len(chunks) >= 2:
        with single_threaded():
            in_parallel(len(chunks), work)
    else:
        work(0, len(chunks))
    if other is None:
        return corr, None
    cross = ordered_sum(sums)
    return corr, cross.swapaxes(1, 2)
