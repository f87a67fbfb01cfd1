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

The dense engine (tiny problems, where NumPy's per-call overhead is the cost).  Pad X once,
view its windows as ``(N, groups, C/groups, *y_size, *kernel)`` with strides, and contract with
one einsum per product.  The input gradient correlates the reversed kernel with dY spread to
every ``stride``-th position of a zero buffer.

The flat engine (the fast path for everything else).  Split the padded X of each spatial dimension into the phases
``u = a*s + r``: tap ``t`` reads phase ``r = t*d % s`` at phase coordinate ``a = o + t*d // s``,
a stride-1 shift.  Each phase image gets the extent ``E = y_size + max shift`` and is stored
channel-first with ``(n, a...)`` flattened into one axis, so for *every* output position tap
``t`` sits a constant offset away: its im2col row is one contiguous slice of the flat buffer.
Output positions with some ``a >= y_size`` are computed too and dropped (a few per cent of extra
work).  im2col then is a few block copies per ~4 MiB chunk, and the products are ``np.matmul``
calls that OpenBLAS runs on every core.  ``input_grad`` splits dX the same way: the positions
with ``x + lo = a*s + r`` receive only the taps with ``t*d % s == r``, each a stride-1
correlation of dY with the reversed shifts, so a strided input gradient needs no scatter-add.

The tap engine (the fallback of the flat engine).  When padding or dilation is so large that the flat buffers would
be much bigger than the data (possible for valid transposed convolutions), loop over the kernel
taps and connect strided slices of X and Y directly (one einsum per tap).  Memory then stays
proportional to the data.

All arrays here are float32; the op converts before and rounds after.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

FLOAT32 = np.dtype(np.float32)

# im2col is built in chunks of about this size, so that copies and products stay in cache.
_CHUNK_BYTES = 4 << 20
# Problems up to this many multiply-adds (and padded elements) use the dense engine.
_DENSE_WORK = 1 << 15
_DENSE_ELEMENTS = 1 << 16
# The flat engine is used while its buffers are at most this many times the data (+ a constant).
_FLAT_OVERHEAD = 4
_FLAT_SLACK_ELEMENTS = 1 << 16
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
    at the flat position of ``(n, a)``; everything else is zero.
    """
    batch, channels = src.shape[:2]
    image = math.prod(extents)
    buf = np.zeros((channels, len(phases), batch * image + slack), FLOAT32)
    channel_first = src.swapaxes(0, 1)
    for p, dims in enumerate(phases):
        dst, source = [slice(None), slice(None)], [slice(None), slice(None)]
        for size, extent, (step, base) in zip(src.shape[2:], extents, dims):
            connection = axis_slices(size, extent, step, base)
            if connection is None:
                break
            dst.append(connection[0])
            source.append(connection[1])
        else:
            plane = buf[:, p, :batch * image].reshape(channels, batch, *extents)
            plane[tuple(dst)] = channel_first[tuple(source)]
    return buf


def _im2col_chunks(buf: np.ndarray, taps: list[tuple[int, int]], length: int):
    """Yield ``(start, stop, cols)`` with ``cols[c, t, j] = buf[c, phase_t, start + j + offset_t]``
    for ``j < stop - start``, chunk after chunk of ``[0, length)``.  ``cols`` is reused."""
    channels = buf.shape[0]
    rows = channels * len(taps)
    width = max(64, min(length, _CHUNK_BYTES // (FLOAT32.itemsize * rows)))
    cols = np.empty((channels, len(taps), width + _ROW_PAD), FLOAT32)
    for start in range(0, length, width):
        stop = min(length, start + width)
        view = cols[:, :, :stop - start]
        for t, (phase, offset) in enumerate(taps):
            view[:, t] = buf[:, phase, start + offset:stop + offset]
        yield start, stop, view


def _correlate(buf: np.ndarray, taps: list[tuple[int, int]], wmat: np.ndarray, length: int) -> np.ndarray:
    """``out[g, i, j] = sum_{c, t} wmat[g, i, c*T + t] * buf[g*Cg + c, phase_t, j + offset_t]``."""
    groups, rows, _ = wmat.shape
    out = np.empty((groups, rows, length), FLOAT32)
    for start, stop, cols in _im2col_chunks(buf, taps, length):
        np.matmul(wmat, cols.reshape(groups, -1, stop - start), out=out[:, :, start:stop])
    return out


class LoweredConv:
    """The convolution ``X (N, Cx, *x_size) -> Y (N, Cy, *y_size)`` whose three products give
    the gradients (module docstring).  All sizes are validated, non-empty and consistent.

    Use: ``xb = conv.prepare(x)`` once, then ``conv.forward(xb, w)`` and/or
    ``conv.weight_grad(xb, dy)``; ``conv.input_grad(dy, w)`` stands alone.
    """

    def __init__(self, batch: int, x_channels: int, y_channels: int, x_size: tuple[int, ...],
                 y_size: tuple[int, ...], kernel: tuple[int, ...], stride: tuple[int, ...],
                 dilation: tuple[int, ...], pad_lo: tuple[int, ...], groups: int) -> None:
        self.batch, self.x_channels, self.y_channels = batch, x_channels, y_channels
        self.x_size, self.y_size, self.kernel = x_size, y_size, kernel
        self.stride, self.dilation, self.pad_lo, self.groups = stride, dilation, pad_lo, groups
        self._data = batch * (x_channels * math.prod(x_size) + y_channels * math.prod(y_size))

        # The dense engine's padded X and dilated, padded dY (see _dense_*).
        self._reach = tuple((k - 1) * d for k, d in zip(kernel, dilation))
        self._padded = tuple((y - 1) * s + r + 1 for y, s, r in zip(y_size, stride, self._reach))
        self._spread = tuple(x + r for x, r in zip(x_size, self._reach))
        work = batch * y_channels * (x_channels // groups) * math.prod(y_size) * math.prod(kernel)
        dense = batch * (x_channels * math.prod(self._padded) + y_channels * math.prod(self._spread))
        if work <= _DENSE_WORK and dense <= _DENSE_ELEMENTS:
            self.engine = "dense"
            return

        # The flat engine's layout of X: per dimension the tap -> (phase residue, shift) map.
        per_dim = [[(t * d % s, t * d // s) for t in range(k)] for k, s, d in zip(kernel, stride, dilation)]
        residues = [sorted({r for r, _ in dim}) for dim in per_dim]
        self._extents = tuple(y + max(q for _, q in dim) for y, dim in zip(y_size, per_dim))
        strides = _c_strides(self._extents)
        combos = list(itertools.product(*residues))
        index = {combo: p for p, combo in enumerate(combos)}
        self._phases = [tuple((s, r - lo) for s, r, lo in zip(stride, combo, pad_lo)) for combo in combos]
        self._taps = [(index[tuple(r for r, _ in tap)], sum(q * st for (_, q), st in zip(tap, strides)))
                      for tap in itertools.product(*per_dim)]
        self._slack = max(offset for _, offset in self._taps)
        self._length = batch * math.prod(self._extents)
        flat = x_channels * len(combos) * (self._length + self._slack)
        self.engine = "flat" if self._fits(flat) else "tap"

    def _fits(self, elements: int) -> bool:
        return elements <= _FLAT_OVERHEAD * self._data + _FLAT_SLACK_ELEMENTS

    def _subscripts(self, spec: str) -> str:
        """einsum subscripts with ``_`` for the spatial and ``^`` for the kernel dimensions."""
        rank = len(self.kernel)
        return spec.replace("_", "xyz"[:rank]).replace("^", "abc"[:rank])

    # -- X-space input: forward and weight_grad ------------------------------------------

    def prepare(self, x: np.ndarray) -> np.ndarray:
        """X in the layout forward/weight_grad read."""
        if self.engine == "dense":
            return _spread(x, self._padded, (1,) * len(self.kernel), self.pad_lo)
        if self.engine == "flat":
            return _flat_buffer(x, self._extents, self._phases, self._slack)
        return x

    def forward(self, xb: np.ndarray, w: np.ndarray) -> np.ndarray:
        """Y = conv(X, W), shape ``(N, Cy, *y_size)``."""
        if self.engine == "dense":
            windows = self._windows(xb, self.y_size, self.stride)
            y = np.einsum(self._subscripts("ngj_^,gij^->ngi_"), windows, self._grouped_weight(w))
            return y.reshape(self.batch, self.y_channels, *self.y_size)
        if self.engine == "tap":
            return self._tap_forward(xb, w)
        wmat = w.reshape(self.groups, self.y_channels // self.groups, -1)
        out = _correlate(xb, self._taps, wmat, self._length)
        return _crop(out.reshape(self.y_channels, self.batch, *self._extents), self.y_size)

    def weight_grad(self, xb: np.ndarray, dy: np.ndarray) -> np.ndarray:
        """dW, shape ``(Cy, Cx/groups, *kernel)``."""
        groups = self.groups
        cy_g, cx_g = self.y_channels // groups, self.x_channels // groups
        if self.engine == "dense":
            windows = self._windows(xb, self.y_size, self.stride)
            dw = np.einsum(self._subscripts("ngi_,ngj_^->gij^"), _grouped(dy, groups), windows)
            return dw.reshape(self.y_channels, cx_g, *self.kernel)
        if self.engine == "tap":
            return self._tap_weight_grad(xb, dy)
        length = self._length
        dy_flat = _flat_buffer(dy, self._extents, [((1, 0),) * len(self.y_size)], 0)
        dy_flat = dy_flat.reshape(groups, cy_g, length)
        if cx_g == 1:
            # Depthwise-like: each tap is a product with one X row per group, so take one BLAS
            # call per tap on a few groups at a time (their rows stay in cache across taps).
            out = np.empty((groups, cy_g, len(self._taps)), FLOAT32)
            step = max(1, _CHUNK_BYTES // (FLOAT32.itemsize * length * (cy_g + 1)))
            for g0 in range(0, groups, step):
                g1 = min(groups, g0 + step)
                for t, (phase, offset) in enumerate(self._taps):
                    np.matmul(dy_flat[g0:g1], xb[g0:g1, phase, offset:offset + length, np.newaxis],
                              out=out[g0:g1, :, t:t + 1])
        else:
            out = np.zeros((groups, cy_g, cx_g * len(self._taps)), FLOAT32)
            for start, stop, cols in _im2col_chunks(xb, self._taps, length):
                out += np.matmul(dy_flat[:, :, start:stop], cols.reshape(groups, -1, stop - start).swapaxes(1, 2))
        return out.reshape(self.y_channels, cx_g, *self.kernel)

    # -- Y-space input: input_grad --------------------------------------------------------

    def input_grad(self, dy: np.ndarray, w: np.ndarray) -> np.ndarray:
        """dX = conv^T(dY, W), shape ``(N, Cx, *x_size)``."""
        if self.engine == "dense":
            return self._dense_input_grad(dy, w)
        if self.engine == "tap":
            return self._tap_input_grad(dy, w)
        dims = []           # per dimension: {residue: [(tap, shift)]}, output-phase a ranges
        for x, k, s, d, lo in zip(self.x_size, self.kernel, self.stride, self.dilation, self.pad_lo):
            by_residue: dict[int, list[tuple[int, int]]] = {}
            for t in range(k):
                by_residue.setdefault(t * d % s, []).append((t, t * d // s))
            # Phase coordinates a with x = a*s + r - lo inside [0, x): [ceil((lo-r)/s), ceil((x+lo-r)/s)).
            ranges = {r: (-((r - lo) // s), -((r - lo - x) // s)) for r in by_residue}
            ranges = {r: span for r, span in ranges.items() if span[1] > span[0]}
            dims.append((by_residue, ranges))

        shape = (self.batch, self.x_channels) + self.x_size
        if any(not ranges for _, ranges in dims):
            return np.zeros(shape, FLOAT32)   # no tap reaches X along some dimension
        a_min = tuple(min(lo for lo, _ in ranges.values()) for _, ranges in dims)
        a_max = tuple(max(hi for _, hi in ranges.values()) for _, ranges in dims)
        q_max = tuple(max(q for taps in by_residue.values() for _, q in taps) for by_residue, _ in dims)
        extents = tuple(hi - lo + q for lo, hi, q in zip(a_min, a_max, q_max))
        image = math.prod(extents)
        if not self._fits((self.x_channels + self.y_channels) * self.batch * image):
            return self._tap_input_grad(dy, w)

        # dY placed so that buffer position b holds dY[o = b + a_min - q_max]: output phase
        # position a (stored at j = a - a_min) reads tap t at j + (q_max - shift_t).
        strides = _c_strides(extents)
        slack = sum(q * st for q, st in zip(q_max, strides))
        dyq = _flat_buffer(dy, extents, [tuple((1, lo - q) for lo, q in zip(a_min, q_max))], slack)
        length = self.batch * image
        groups = self.groups
        cy_g, cx_g = self.y_channels // groups, self.x_channels // groups
        w_taps = w.reshape(groups, cy_g, cx_g, -1)
        kernel_strides = _c_strides(self.kernel)

        dx = (np.zeros if any(s > 1 for s in self.stride) else np.empty)(shape, FLOAT32)
        for phase in itertools.product(*(sorted(ranges) for _, ranges in dims)):
            # The taps of this output phase: every dimension's tap has this residue.
            per_dim = [by_residue[r] for (by_residue, _), r in zip(dims, phase)]
            tap_ids, taps = [], []
            for combo in itertools.product(*per_dim):
                tap_ids.append(sum(t * ks for (t, _), ks in zip(combo, kernel_strides)))
                taps.append((0, sum((q - shift) * st for (_, shift), q, st in zip(combo, q_max, strides))))
            wmat = w_taps[..., tap_ids].transpose(0, 2, 1, 3).reshape(groups, cx_g, -1)
            out = _correlate(dyq, taps, wmat, length).reshape(self.x_channels, self.batch, *extents)
            src, dst = [slice(None), slice(None)], [slice(None), slice(None)]
            for (_, ranges), r, lo_a, s, lo in zip(dims, phase, a_min, self.stride, self.pad_lo):
                first, last = ranges[r]
                src.append(slice(first - lo_a, last - lo_a))
                x0 = first * s + r - lo
                dst.append(slice(x0, x0 + (last - first - 1) * s + 1, s))
            dx[tuple(dst)] = out[tuple(src)].swapaxes(0, 1)
        return dx

    # -- the dense engine ----------------------------------------------------------------

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


def _crop(channel_first: np.ndarray, size: tuple[int, ...]) -> np.ndarray:
    """``(C, N, *extents)`` -> the contiguous ``(N, C, *size)`` corner."""
    corner = channel_first[(slice(None), slice(None)) + tuple(slice(0, s) for s in size)]
    return np.ascontiguousarray(corner.swapaxes(0, 1))
