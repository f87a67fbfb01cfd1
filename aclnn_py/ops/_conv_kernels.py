"""NumPy kernels of convolution_backward: a grouped, strided, dilated, padded N-d convolution
lowered to BLAS matrix products.

Every gradient aclnnConvolutionBackward returns is one of three products of one *lowered*
convolution ``X (N, Cx, *x_size) -> Y (N, Cy, *y_size)`` with weight ``W (Cy, Cx/groups, *kernel)``
(for ``transposed=False`` X is ``input``; for ``transposed=True`` X is ``gradOutput``, because a
transposed convolution is the adjoint of this one).  With ``u = x + pad_lo`` the padded
coordinate and ``t`` a kernel tap, output ``o`` reads ``u = o*stride + t*dilation``::

    forward       Y[n, co, o]   = sum_{ci, t}      W[co, ci, t] * X[n, ci, o*s + t*d - lo]
    weight_grad   dW[co, ci, t] = sum_{n, o}       dY[n, co, o] * X[n, ci, o*s + t*d - lo]
    input_grad    dX[n, ci, x]  = sum_{co, t, o : o*s + t*d = x + lo}  W[co, ci, t] * dY[n, co, o]

(channels ``co``/``ci`` within one group).  Positions outside X read as zero.

Three engines compute these, chosen by problem size:

The dense engine (tiny problems, where NumPy's per-call overhead is the cost).  Its matrix
form: the 0/1 *unfold matrix* ``U (prod x_size, taps * prod y_size)`` of the geometry, cached,
turns every product into matrix products: ``cols = X @ U``, ``Y = W @ cols``, ``dW = dY @
cols^T``, ``dX = (W^T @ dY) @ U^T`` (the (1,1,4,4) benchmark case: ~25 us instead of ~65 us
for the einsums).  Geometries whose U would be large take its einsum form instead: pad X once, view its windows
as ``(N, groups, C/groups, *y_size, *kernel)`` with strides, and contract with one einsum per
product; the input gradient correlates the reversed kernel with dY spread to every
``stride``-th position of a zero buffer.

The flat engine (the fast path for everything else).  Every product is a correlation of one
*flat buffer* with the kernel: a tensor split into stride phases per spatial dimension, each
phase image padded to a common extent and stored channel-first with ``(n, position)``
flattened into one axis, so that for every output position tap ``t`` sits a constant offset
away and its im2col row is one contiguous slice.  Output positions in the padding of the
extents are computed too and dropped (a few per cent of extra work).  Both gradients a call
needs come from one lowering:

* transposed (gradInput = forward): X in phases ``u = a*s + r``; tap ``t`` reads phase
  ``r = t*d % s`` at ``a = o + t*d // s``.  ``Y = W @ cols`` and ``dW = dY @ cols^T``.
* ordinary (gradInput = input_grad): dY, lowered per output phase of dX.  The positions with
  ``x + lo = a*s + r`` receive only the taps with ``t*d % s == r``, a stride-1 correlation of
  dY with the reversed shifts (no scatter-add): ``dX_r = W_r^T @ cols``; the same cols give
  ``dW_r = X_r @ cols^T`` with ``X_r`` the phase of X at the positions of dX_r.

The products are im2col in ~4 MiB chunks and ``np.matmul`` calls that OpenBLAS runs on every
core (_im2col_products), except for depthwise convolutions (one channel in and one out per
group), where BLAS gains nothing: one multiply-add or dot product per tap (_tapwise_products),
on blocks of channels built, used and dropped while in cache.

The tap engine (the fallback of the flat engine).  When padding or dilation is so large that the flat buffers would
be much bigger than the data (possible for valid transposed convolutions), loop over the kernel
taps and connect strided slices of X and Y directly (one einsum per tap).  Memory then stays
proportional to the data.

Data holding inf or NaN always takes the tap engine: the others multiply zeros standing for
padding and stride gaps, and inf x 0 is NaN.  The tap engine forms exactly the terms of the
sums above (IEEE semantics, as the simulator): a position no term reaches is 0, and a NaN in dY
reaches every tap of its window, zero weights included.

All arrays here are float32; the op converts before and rounds after.
"""

from __future__ import annotations

import functools
import itertools
import math

import numpy as np

FLOAT32 = np.dtype(np.float32)

# im2col is built in chunks of about this size, so that copies and products stay in cache.
_CHUNK_BYTES = 4 << 20
# Problems up to this many multiply-adds (and padded elements) use the dense engine.
_DENSE_WORK = 1 << 15
_DENSE_ELEMENTS = 1 << 16
# ... and, while the unfold matrix has at most this many elements, finite data takes its
# matrix form (_unfold_matrix).
_UNFOLD_ELEMENTS = 1 << 16
# The flat engine is used while its buffers are at most this many times the data (+ a constant).
_FLAT_OVERHEAD = 4
_FLAT_SLACK_ELEMENTS = 1 << 16
# Depthwise convolutions are computed in blocks of channels of about this size per buffer
# (LoweredConv._blocks): a block's few buffers stay in this machine's 1 MiB L2 / the L3.
_TAPWISE_BYTES = 1 << 20
# Extra floats per cols row: a power-of-two row stride makes the rows collide in the cache.
_ROW_PAD = 16


def axis_slices(size: int, extent: int, step: int, base: int) -> tuple[slice, slice] | None:
    """Connect ``a in [0, extent)`` with source position ``a*step + base`` where it lies in
    ``[0, size)``: ``(slice of a, slice of source positions)``, or None if nothing connects."""
    first = max(0, (step - 1 - base) // step)
    last = min(extent, (size - base + step - 1) // step) if size > base else 0
    if last <= first:
        return None
    start = first * step + base
    return slice(first, last), slice(start, start + (last - first - 1) * step + 1, step)


def _c_strides(extents: tuple[int, ...]) -> tuple[int, ...]:
    strides, acc = [], 1
    for extent in reversed(extents):
        strides.append(acc)
        acc *= extent
    return tuple(reversed(strides))


def _flat_buffer(src: np.ndarray, extents: tuple[int, ...], phases: list, slack: int) -> np.ndarray:
    """``src (N, C, *size)`` laid out as ``(C, len(phases), N*prod(extents) + slack)``.

    Phase ``p`` holds ``src[n, c, a*step + base]`` (per dimension ``(step, base) = phases[p][i]``)
    at the flat position of ``(n, a)``; everything else is zero.  Only that rest is zeroed: the
    data is written once.
    """
    batch, channels = src.shape[:2]
    image = math.prod(extents)
    buf = np.empty((channels, len(phases), batch * image + slack), FLOAT32)
    buf[:, :, batch * image:] = 0
    channel_first = src.swapaxes(0, 1)
    for p, dims in enumerate(phases):
        plane = buf[:, p, :batch * image].reshape(channels, batch, *extents)
        connections = [axis_slices(size, extent, step, base)
                       for size, extent, (step, base) in zip(src.shape[2:], extents, dims)]
        if any(c is None for c in connections):
            plane[...] = 0
            continue
        _zero_outside(plane, [dst for dst, _ in connections])
        plane[(Ellipsis,) + tuple(dst for dst, _ in connections)] = \
            channel_first[(Ellipsis,) + tuple(source for _, source in connections)]
    return buf


def _zero_outside(plane: np.ndarray, box: list[slice]) -> None:
    """Zero ``plane (C, N, *extents)`` outside ``plane[:, :, *box]`` (unit-step slices)."""
    lead = plane.ndim - len(box)
    for i, window in enumerate(box):
        head = (slice(None),) * (lead + i)
        plane[head + (slice(0, window.start),)] = 0
        plane[head + (slice(window.stop, None),)] = 0


def _im2col_chunks(buf: np.ndarray, taps: list[tuple[int, int]], length: int):
    """Yield ``(start, stop, cols)`` with ``cols[c, t, j] = buf[c, phase_t, start + j + offset_t]``
    for ``j < stop - start``, chunk after chunk of ``[0, length)``.  ``cols`` is reused; with a
    single tap (a 1x1 kernel) it is a view of ``buf``, no copy."""
    channels = buf.shape[0]
    rows = channels * len(taps)
    width = max(64, min(length, _CHUNK_BYTES // (FLOAT32.itemsize * rows)))
    if len(taps) == 1:
        phase, offset = taps[0]
        for start in range(0, length, width):
            stop = min(length, start + width)
            yield start, stop, buf[:, phase:phase + 1, start + offset:stop + offset]
        return
    cols = np.empty((channels, len(taps), width + _ROW_PAD), FLOAT32)
    for start in range(0, length, width):
        stop = min(length, start + width)
        view = cols[:, :, :stop - start]
        for t, (phase, offset) in enumerate(taps):
            view[:, t] = buf[:, phase, start + offset:stop + offset]
        yield start, stop, view


def _im2col_products(buf: np.ndarray, taps: list[tuple[int, int]], length: int,
                     wmat: np.ndarray | None, other: np.ndarray | None):
    """The flat engine's two products on one im2col pass over ``buf (C, phases, >= length + max
    offset)``, with ``Cg = C / groups`` channels per group and ``T = len(taps)``::

        corr[g, i, j]        = sum_{c, t} wmat[g, i, c*T + t] * buf[g*Cg + c, phase_t, j + offset_t]
        cross[g, i, c*T + t] = sum_j      other[g, i, j]      * buf[g*Cg + c, phase_t, j + offset_t]

    ``(corr, cross)``; a product whose operand (``wmat (groups, rows, Cg*T)``, ``other (groups,
    rows, length)``) is None is skipped.  Chosen for every convolution but the depthwise ones:
    the products become matrix products of ~4 MiB im2col chunks that OpenBLAS runs on every
    core.  Feeding both gradients from one pass saves the second im2col (15.5 M floats copied
    per pass on the benchmark's resnet 3x3 (8,64,56,56)): both products there took 54 ms in one
    pass against 63 ms in two, the transposed k4 s2 case's 10.3 ms against 11.3 ms.
    """
    groups = (wmat if wmat is not None else other).shape[0]
    taps_per_group = buf.shape[0] // groups * len(taps)
    corr = None if wmat is None else np.empty((groups, wmat.shape[1], length), FLOAT32)
    cross = None if other is None else np.zeros((groups, other.shape[1], taps_per_group), FLOAT32)
    for start, stop, cols in _im2col_chunks(buf, taps, length):
        cols = cols.reshape(groups, taps_per_group, stop - start)
        if corr is not None:
            np.matmul(wmat, cols, out=corr[:, :, start:stop])
        if cross is not None:
            cross += np.matmul(other[:, :, start:stop], cols.swapaxes(1, 2))
    return corr, cross


def _tapwise_products(buf: np.ndarray, taps: list[tuple[int, int]], length: int,
                      weights: np.ndarray | None, other: np.ndarray | None):
    """The same two products for a depthwise convolution (one channel in and one out per
    group), one tap at a time::

        corr[c, j]  = sum_t weights[c, t] * buf[c, phase_t, j + offset_t]
        cross[c, t] = sum_j other[c, j]   * buf[c, phase_t, j + offset_t]

    ``(corr (C, length), cross (C, T))``; None operands skip a product.  Chosen for depthwise
    convolutions, where every product of a group is a matrix-vector one: BLAS gains nothing,
    and im2col would cost more than the arithmetic.  corr is one multiply and one add per tap,
    cross one dot product per tap and channel (np.matmul), both on the tap's slice while it is
    in cache.  The caller passes blocks of channels (LoweredConv._blocks).  Measured on the
    benchmark's depthwise 3x3 (8,128,56,56), the whole op asked for gradInput only: 16 ms,
    against 24 ms with im2col + batched matmul; for gradWeight only: 10 ms, against 12 ms.
    """
    channels = buf.shape[0]
    corr = None if weights is None else np.empty((channels, length), FLOAT32)
    cross = None if other is None else np.empty((channels, 1, len(taps)), FLOAT32)
    scratch = None if weights is None else np.empty((channels, length), FLOAT32)
    for t, (phase, offset) in enumerate(taps):
        source = buf[:, phase, offset:offset + length]
        if corr is not None:
            if t == 0:
                np.multiply(source, weights[:, t:t + 1], out=corr)
            else:
                np.multiply(source, weights[:, t:t + 1], out=scratch)
                corr += scratch
        if cross is not None:
            np.matmul(other[:, np.newaxis, :], source[:, :, np.newaxis], out=cross[:, :, t:t + 1])
    return corr, None if cross is None else cross[:, 0, :]


class LoweredConv:
    """The convolution ``X (N, Cx, *x_size) -> Y (N, Cy, *y_size)`` whose products give the
    gradients (module docstring).  All sizes are validated, non-empty and consistent.

    ``transposed`` says which gradients ``gradients`` computes: those of a transposed
    convolution (gradInput = forward(gradOutput), lowered in the space of X) or of an ordinary
    one (gradInput = input_grad(gradOutput), lowered in the space of Y).  Either way it
    computes the requested gradients together, lowering the convolution once for both.
    """

    def __init__(self, batch: int, x_channels: int, y_channels: int, x_size: tuple[int, ...],
                 y_size: tuple[int, ...], kernel: tuple[int, ...], stride: tuple[int, ...],
                 dilation: tuple[int, ...], pad_lo: tuple[int, ...], groups: int, transposed: bool) -> None:
        self.batch, self.x_channels, self.y_channels = batch, x_channels, y_channels
        self.x_size, self.y_size, self.kernel = x_size, y_size, kernel
        self.stride, self.dilation, self.pad_lo, self.groups = stride, dilation, pad_lo, groups
        self.transposed = transposed
        self._data = batch * (x_channels * math.prod(x_size) + y_channels * math.prod(y_size))
        # One channel in and one out per group: the flat engine takes _tapwise_products.
        self._depthwise = x_channels == groups == y_channels

        # The dense engine's padded X and dilated, padded dY (see _dense_*).
        self._reach = tuple((k - 1) * d for k, d in zip(kernel, dilation))
        self._padded = tuple((y - 1) * s + r + 1 for y, s, r in zip(y_size, stride, self._reach))
        self._spread = tuple(x + r for x, r in zip(x_size, self._reach))
        work = batch * y_channels * (x_channels // groups) * math.prod(y_size) * math.prod(kernel)
        dense = batch * (x_channels * math.prod(self._padded) + y_channels * math.prod(self._spread))
        self._unfold_size = math.prod(x_size) * math.prod(kernel) * math.prod(y_size)
        if work <= _DENSE_WORK and dense <= _DENSE_ELEMENTS:
            self.engine = "dense"
            return
        elements = self._plan_x_space() if transposed else self._plan_y_space()
        self.engine = "flat" if elements is not None and self._fits(elements) else "tap"

    def _plan_x_space(self) -> int:
        """The flat engine's layout of X for forward and weight_grad; returns its size."""
        per_dim = [[(t * d % s, t * d // s) for t in range(k)]     # tap -> (phase residue, shift)
                   for k, s, d in zip(self.kernel, self.stride, self.dilation)]
        residues = [sorted({r for r, _ in dim}) for dim in per_dim]
        self._extents = tuple(y + max(q for _, q in dim) for y, dim in zip(self.y_size, per_dim))
        strides = _c_strides(self._extents)
        combos = list(itertools.product(*residues))
        index = {combo: p for p, combo in enumerate(combos)}
        self._phases = [tuple((s, r - lo) for s, r, lo in zip(self.stride, combo, self.pad_lo))
                        for combo in combos]
        self._taps = [(index[tuple(r for r, _ in tap)], sum(q * st for (_, q), st in zip(tap, strides)))
                      for tap in itertools.product(*per_dim)]
        self._slack = max(offset for _, offset in self._taps)
        self._length = self.batch * math.prod(self._extents)
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
        phases = list(itertools.product(*(sorted(ranges) for _, ranges in dims)))

        # dY placed so that buffer position b holds dY[o = b + a_min - q_max]: output phase
        # position a (stored at j = a - a_min) reads tap t at j + (q_max - shift_t).
        strides = _c_strides(self._extents)
        self._slack = sum(q * st for q, st in zip(q_max, strides))
        self._dy_layout = [tuple((1, lo - q) for lo, q in zip(a_min, q_max))]
        # Plane p of X holds it at the positions of output phase p: j -> x = (j + a_min)*s + r - lo.
        self._x_layout = [tuple((s, lo_a * s + r - lo)
                                for r, lo_a, s, lo in zip(phase, a_min, self.stride, self.pad_lo))
                          for phase in phases]
        kernel_strides = _c_strides(self.kernel)
        self._phase_plan = []   # per output phase: tap ids, taps into dY's buffer, dX slices (from, to)
        for phase in phases:
            # The taps of this output phase: every dimension's tap has this residue.
            per_dim = [by_residue[r] for (by_residue, _), r in zip(dims, phase)]
            tap_ids, taps = [], []
            for combo in itertools.product(*per_dim):
                tap_ids.append(sum(t * ks for (t, _), ks in zip(combo, kernel_strides)))
                taps.append((0, sum((q - shift) * st for (_, shift), q, st in zip(combo, q_max, strides))))
            src, dst = [], []
            for (_, ranges), r, lo_a, s, lo in zip(dims, phase, a_min, self.stride, self.pad_lo):
                first, last = ranges[r]
                src.append(slice(first - lo_a, last - lo_a))
                x0 = first * s + r - lo
                dst.append(slice(x0, x0 + (last - first - 1) * s + 1, s))
            self._phase_plan.append((tap_ids, taps, tuple(src), tuple(dst)))
        buffers = self.x_channels * (1 + len(phases)) + self.y_channels      # dX phase, X phases, dY
        return buffers * self._length + self.y_channels * self._slack

    def _fits(self, elements: int) -> bool:
        return elements <= _FLAT_OVERHEAD * self._data + _FLAT_SLACK_ELEMENTS

    def _subscripts(self, spec: str) -> str:
        """einsum subscripts with ``_`` for the spatial and ``^`` for the kernel dimensions."""
        rank = len(self.kernel)
        return spec.replace("_", "xyz"[:rank]).replace("^", "abc"[:rank])

    def _blocks(self, length: int):
        """``(X channels, Y channels, groups)`` of the blocks computed one after the other.
        A depthwise convolution's channels are independent: blocks of about _TAPWISE_BYTES
        (``length`` floats per channel) keep each block's buffers in cache from when they are
        built to when they are used (the depthwise benchmark: 22 ms, against 52 ms in one
        block).  Any other convolution is one block."""
        if not self._depthwise:
            return [(slice(None), slice(None), self.groups)]
        step = max(1, _TAPWISE_BYTES // (FLOAT32.itemsize * length))
        return [(slice(c0, c0 + step), slice(c0, c0 + step), min(step, self.groups - c0))
                for c0 in range(0, self.groups, step)]

    def _products(self, buf, taps, length, w_op, other):
        """_tapwise_products for a depthwise convolution, _im2col_products otherwise; ``w_op``
        and ``other`` are in _im2col_products' grouped layout."""
        if self._depthwise:
            corr, cross = _tapwise_products(buf, taps, length, None if w_op is None else w_op[:, 0, :],
                                            None if other is None else other[:, 0, :])
            return (None if corr is None else corr[:, np.newaxis, :],
                    None if cross is None else cross[:, np.newaxis, :])
        return _im2col_products(buf, taps, length, w_op, other)

    def gradients(self, x: np.ndarray, dy: np.ndarray, w: np.ndarray, want_input: bool, want_weight: bool):
        """``(gradInput, gradWeight)`` of the (transposed) convolution, None where not wanted.
        gradInput is ``forward(X, W)`` (shape of Y) when transposed, else ``input_grad(dY, W)``
        (shape of X); gradWeight is ``weight_grad(X, dY)``, shape ``(Cy, Cx/groups, *kernel)``."""
        if self.engine != "tap" and not _all_finite(x, dy, w if want_input else None):
            # The other engines multiply zeros standing for padding and stride gaps, which is
            # harmless for finite data only (inf * 0 is NaN).  The tap engine forms exactly the
            # reference's terms: a position no term reaches stays 0, a NaN reaches every tap.
            return self._tap_gradients(x, dy, w, want_input, want_weight)
        if self.engine == "dense":
            if self._unfold_size <= _UNFOLD_ELEMENTS:
                return self._unfold_gradients(x, dy, w, want_input, want_weight)
            xb = _spread(x, self._padded, (1,) * len(self.kernel), self.pad_lo)
            grad_weight = self._dense_weight_grad(xb, dy) if want_weight else None
            if not want_input:
                return None, grad_weight
            return self._dense_forward(xb, w) if self.transposed else self._dense_input_grad(dy, w), grad_weight
        if self.engine == "tap":
            return self._tap_gradients(x, dy, w, want_input, want_weight)
        w_in = w if want_input else None
        if self.transposed:
            return self._forward_and_weight_grad(x, w_in, dy if want_weight else None)
        return self._input_and_weight_grad(dy, w_in, x if want_weight else None)

    # -- the flat engine, X space: forward and weight_grad -------------------------------

    def _forward_and_weight_grad(self, x: np.ndarray, w: np.ndarray | None, dy: np.ndarray | None):
        """``(Y = conv(X, W) if w is given, dW if dy is given)``, lowering X once for both:
        ``Y = W @ cols`` and ``dW = dY @ cols^T``."""
        length = self._length
        cy_g, cx_g = self.y_channels // self.groups, self.x_channels // self.groups
        y = None if w is None else np.empty((self.batch, self.y_channels) + self.y_size, FLOAT32)
        dw = None if dy is None else np.empty((self.y_channels, cx_g) + self.kernel, FLOAT32)
        crop = (slice(None), slice(None)) + tuple(slice(0, size) for size in self.y_size)
        for xs, ys, groups in self._blocks(length):
            xb = _flat_buffer(x[:, xs], self._extents, self._phases, self._slack)
            w_op = None if w is None else w[ys].reshape(groups, cy_g, -1)
            other = None
            if dy is not None:
                dy_flat = _flat_buffer(dy[:, ys], self._extents, [((1, 0),) * len(self.y_size)], 0)
                other = dy_flat.reshape(groups, cy_g, length)
            corr, cross = self._products(xb, self._taps, length, w_op, other)
            if corr is not None:
                y[:, ys] = corr.reshape(groups * cy_g, self.batch, *self._extents)[crop].swapaxes(0, 1)
            if cross is not None:
                dw[ys] = cross.reshape(groups * cy_g, cx_g, *self.kernel)
        return y, dw

    # -- the flat engine, Y space: input_grad and weight_grad ----------------------------

    def _input_and_weight_grad(self, dy: np.ndarray, w: np.ndarray | None, x: np.ndarray | None):
        """``(dX = conv^T(dY, W) if w is given, dW if x is given)``, lowering dY once for both.

        Output phase ``x + lo = a*s + r`` of dX correlates dY with the taps ``t*d % s == r``
        (shift ``q_t = t*d // s``): ``dX_r = W_r^T @ cols``.  The same cols give ``dW_r = X_r @
        cols^T``, with ``X_r`` the phase of X at the positions of dX_r: ``dW[t] = sum_a dY[a -
        q_t] X[a*s + r - lo]`` is the weight gradient's sum in the coordinates of dX."""
        length = self._length
        cy_g, cx_g = self.y_channels // self.groups, self.x_channels // self.groups
        dx = dw = None
        if w is not None:
            shape = (self.batch, self.x_channels) + self.x_size
            dx = (np.empty if self._covers_x else np.zeros)(shape, FLOAT32)
        if x is not None:
            dw = np.zeros((self.y_channels, cx_g, math.prod(self.kernel)), FLOAT32)
        for xs, ys, groups in self._blocks(length):
            dyq = _flat_buffer(dy[:, ys], self._extents, self._dy_layout, self._slack)
            xq = None if x is None else _flat_buffer(x[:, xs], self._extents, self._x_layout, 0)
            w_taps = None if w is None else w[ys].reshape(groups, cy_g, cx_g, -1)
            dw_taps = None if x is None else dw[ys].reshape(groups, cy_g, cx_g, -1)
            for p, (tap_ids, taps, src, dst) in enumerate(self._phase_plan):
                w_op = None
                if w is not None:
                    w_op = w_taps[..., tap_ids].transpose(0, 2, 1, 3).reshape(groups, cx_g, -1)
                other = None if x is None else xq[:, p].reshape(groups, cx_g, length)
                corr, cross = self._products(dyq, taps, length, w_op, other)
                if cross is not None:
                    dw_taps[..., tap_ids] = cross.reshape(groups, cx_g, cy_g, len(taps)).transpose(0, 2, 1, 3)
                if corr is not None:
                    out = corr.reshape(groups * cx_g, self.batch, *self._extents)
                    dx[(slice(None), xs) + dst] = out[(slice(None), slice(None)) + src].swapaxes(0, 1)
        return dx, None if x is None else dw.reshape(self.y_channels, cx_g, *self.kernel)

    # -- the dense engine ----------------------------------------------------------------

    def _unfold_gradients(self, x: np.ndarray, dy: np.ndarray, w: np.ndarray, want_input: bool,
                          want_weight: bool):
        """The dense engine's matrix form (module docstring): ``gradients`` with U."""
        u = _unfold_matrix(self.x_size, self.y_size, self.kernel, self.stride, self.dilation, self.pad_lo)
        groups, batch = self.groups, self.batch
        cy_g, cx_g = self.y_channels // groups, self.x_channels // groups
        taps, y_plane = math.prod(self.kernel), math.prod(self.y_size)
        wg = w.reshape(groups, cy_g, cx_g * taps)
        dyg = dy.reshape(batch, groups, cy_g, y_plane)
        cols = None
        if want_weight or (want_input and self.transposed):
            # cols[n, g, c*T + t, o]: X at the position tap t of output o reads.
            cols = (x.reshape(-1, u.shape[0]) @ u).reshape(batch, groups, cx_g * taps, y_plane)
        grad_weight = grad_input = None
        if want_weight:
            grad_weight = np.matmul(dyg, cols.swapaxes(2, 3)).sum(axis=0).reshape(
                self.y_channels, cx_g, *self.kernel)
        if want_input and self.transposed:
            grad_input = np.matmul(wg, cols).reshape(batch, self.y_channels, *self.y_size)
        elif want_input:
            dcols = np.matmul(wg.swapaxes(1, 2), dyg)          # (N, groups, Cx/groups * T, P_y)
            grad_input = (dcols.reshape(-1, u.shape[1]) @ u.T).reshape(batch, self.x_channels, *self.x_size)
        return grad_input, grad_weight

    def _dense_forward(self, xb: np.ndarray, w: np.ndarray) -> np.ndarray:
        windows = self._windows(xb, self.y_size, self.stride)
        y = np.einsum(self._subscripts("ngj_^,gij^->ngi_"), windows, self._grouped_weight(w))
        return y.reshape(self.batch, self.y_channels, *self.y_size)

    def _dense_weight_grad(self, xb: np.ndarray, dy: np.ndarray) -> np.ndarray:
        windows = self._windows(xb, self.y_size, self.stride)
        dw = np.einsum(self._subscripts("ngi_,ngj_^->gij^"), _grouped(dy, self.groups), windows)
        return dw.reshape(self.y_channels, self.x_channels // self.groups, *self.kernel)

    def _windows(self, padded: np.ndarray, out_size: tuple[int, ...], stride: tuple[int, ...]) -> np.ndarray:
        """The read-only view ``(N, groups, C/groups, *out_size, *kernel)`` of a contiguous
        ``padded (N, C, ...)``: window ``o`` starts at ``o*stride``, its taps ``dilation`` apart."""
        batch, channels = padded.shape[:2]
        per_group = channels // self.groups
        n_stride, c_stride, *space = padded.strides
        shape = (batch, self.groups, per_group) + out_size + self.kernel
        strides = ((n_stride, c_stride * per_group, c_stride) + tuple(s * b for s, b in zip(stride, space))
                   + tuple(d * b for d, b in zip(self.dilation, space)))
        view = np.ndarray(shape, FLOAT32, padded, 0, strides)
        view.flags.writeable = False
        return view

    def _grouped_weight(self, w: np.ndarray) -> np.ndarray:
        cy_g = self.y_channels // self.groups
        return w.reshape(self.groups, cy_g, *w.shape[1:])

    def _dense_input_grad(self, dy: np.ndarray, w: np.ndarray) -> np.ndarray:
        # dX[x] = sum_t W[t] * dY[o] with o*s = x + lo - t*d: spread dY to every s-th position,
        # pad it by (k-1)*d - lo in front, and correlate with the kernel reversed.
        front = tuple(r - lo for r, lo in zip(self._reach, self.pad_lo))
        spread = _spread(dy, self._spread, self.stride, front)
        windows = self._windows(spread, self.x_size, (1,) * len(self.kernel))
        flipped = self._grouped_weight(w)[(Ellipsis,) + (slice(None, None, -1),) * len(self.kernel)]
        dx = np.einsum(self._subscripts("ngi_^,gij^->ngj_"), windows, flipped)
        return dx.reshape(self.batch, self.x_channels, *self.x_size)

    # -- the tap engine ------------------------------------------------------------------

    def _tap_gradients(self, x: np.ndarray, dy: np.ndarray, w: np.ndarray, want_input: bool,
                       want_weight: bool):
        grad_weight = self._tap_weight_grad(x, dy) if want_weight else None
        if not want_input:
            return None, grad_weight
        return self._tap_forward(x, w) if self.transposed else self._tap_input_grad(dy, w), grad_weight

    def _tap_connections(self):
        """Per tap (weight order): (index into Y, index into X) of the positions it connects,
        or None where it connects none.  Indices are for ``(N, groups, C/groups, *size)``."""
        per_dim = [[axis_slices(x, y, s, t * d - lo) for t in range(k)]
                   for x, y, k, s, d, lo in zip(self.x_size, self.y_size, self.kernel, self.stride,
                                                  self.dilation, self.pad_lo)]
        lead = (slice(None),) * 3
        for tap in itertools.product(*per_dim):
            if any(c is None for c in tap):
                yield None
            else:
                yield lead + tuple(c[0] for c in tap), lead + tuple(c[1] for c in tap)


    def _tap_weight_grad(self, x: np.ndarray, dy: np.ndarray) -> np.ndarray:
        xg, dyg = _grouped(x, self.groups), _grouped(dy, self.groups)
        out = np.zeros((self.groups, dyg.shape[2], xg.shape[2], math.prod(self.kernel)), FLOAT32)
        for t, connection in enumerate(self._tap_connections()):
            if connection is not None:
                y_index, x_index = connection
                out[..., t] = np.einsum(self._subscripts("ngi_,ngj_->gij"), dyg[y_index], xg[x_index])
        return out.reshape(self.y_channels, xg.shape[2], *self.kernel)

    def _tap_forward(self, x: np.ndarray, w: np.ndarray) -> np.ndarray:
        xg = _grouped(x, self.groups)
        w_taps = w.reshape(self.groups, self.y_channels // self.groups, xg.shape[2], -1)
        y = np.zeros((self.batch, self.groups, w_taps.shape[1]) + self.y_size, FLOAT32)
        for t, connection in enumerate(self._tap_connections()):
            if connection is not None:
                y_index, x_index = connection
                y[y_index] += np.einsum(self._subscripts("gij,ngj_->ngi_"), w_taps[..., t], xg[x_index])
        return y.reshape(self.batch, self.y_channels, *self.y_size)

    def _tap_input_grad(self, dy: np.ndarray, w: np.ndarray) -> np.ndarray:
        dyg = _grouped(dy, self.groups)
        w_taps = w.reshape(self.groups, dyg.shape[2], self.x_channels // self.groups, -1)
        dx = np.zeros((self.batch, self.groups, w_taps.shape[2]) + self.x_size, FLOAT32)
        for t, connection in enumerate(self._tap_connections()):
            if connection is not None:
                y_index, x_index = connection
                dx[x_index] += np.einsum(self._subscripts("gij,ngi_->ngj_"), w_taps[..., t], dyg[y_index])
        return dx.reshape(self.batch, self.x_channels, *self.x_size)


@functools.lru_cache(maxsize=256)
def _unfold_matrix(x_size: tuple[int, ...], y_size: tuple[int, ...], kernel: tuple[int, ...],
                   stride: tuple[int, ...], dilation: tuple[int, ...], pad_lo: tuple[int, ...]) -> np.ndarray:
    """The 0/1 matrix ``U (prod x_size, T * prod y_size)`` with ``U[p, t*P_y + o] = 1`` where tap
    ``t`` of output position ``o`` reads X position ``p`` (``x = o*stride + t*dilation - lo``;
    taps reading padding have no entry).  Read-only: it is cached per geometry."""
    x_plane, y_plane = math.prod(x_size), math.prod(y_size)
    u = np.zeros((x_plane, math.prod(kernel) * y_plane), FLOAT32)
    outputs = np.indices(y_size).reshape(len(y_size), -1)             # (rank, P_y)
    for t, tap in enumerate(itertools.product(*(range(k) for k in kernel))):
        xs = np.stack([o * s + q * d - lo for o, s, q, d, lo in zip(outputs, stride, tap, dilation, pad_lo)])
        inside = np.all((xs >= 0) & (xs < np.array(x_size)[:, None]), axis=0)
        rows = np.ravel_multi_index(tuple(xs[:, inside]), x_size)
        u[rows, t * y_plane + np.flatnonzero(inside)] = 1.0
    u.flags.writeable = False
    return u


def _all_finite(*arrays: np.ndarray | None) -> bool:
    """No inf or NaN in any of ``arrays`` (None skipped).  A sum is one pass without a mask
    array; a finite sum proves finite data, and the rare overflow of a sum of finite values
    only costs the exact (slower) engine."""
    with np.errstate(over="ignore", invalid="ignore"):
        return all(a is None or math.isfinite(float(np.add.reduce(a, axis=None))) for a in arrays)


def _grouped(a: np.ndarray, groups: int) -> np.ndarray:
    """``(N, C, ...)`` viewed as ``(N, groups, C/groups, ...)``."""
    return a.reshape(a.shape[0], groups, a.shape[1] // groups, *a.shape[2:])


def _spread(src: np.ndarray, extents: tuple[int, ...], steps: tuple[int, ...], bases: tuple[int, ...]) -> np.ndarray:
    """Zeros ``(N, C, *extents)`` holding ``src[..., q]`` at ``q*step + base`` (where inside)."""
    out = np.zeros(src.shape[:2] + extents, FLOAT32)
    dst, source = [slice(None), slice(None)], [slice(None), slice(None)]
    for size, extent, step, base in zip(src.shape[2:], extents, steps, bases):
        connection = axis_slices(extent, size, step, base)
        if connection is None:
            return out
        source.append(connection[0])
        dst.append(connection[1])
    out[tuple(dst)] = src[tuple(source)]
    return out
