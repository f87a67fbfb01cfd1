"""The dense engine: tiny problems, where NumPy's per-call overhead is the cost.

Its matrix form: the 0/1 *unfold matrix* ``U (prod x_size, taps * prod y_size)`` of the
geometry, cached, turns every product into matrix products: ``cols = X @ U``, ``Y = W @ cols``,
``dW = dY @ cols^T``, ``dX = (W^T @ dY) @ U^T`` (the (1,1,4,4) benchmark case: ~25 us instead
of ~65 us for the einsums).  Geometries whose U would be large take its einsum form: pad X once,
view its windows as ``(N, groups, C/groups, *y_size, *kernel)`` with strides, and contract with
one einsum per product; the input gradient correlates the reversed kernel with dY spread to
every ``stride``-th position of a zero buffer.  Finite data only (the zeros of U, of the padding
and of the spread buffer would turn inf into NaN).
"""

from __future__ import annotations

import functools
import itertools
import math
from typing import Unpack

import numpy as np

from ._geometry import FLOAT32, Geometry, GeometryArgs, Gradients, grouped, spread

# Problems up to this many multiply-adds (and padded elements) use the dense engine: around
# there one call of the flat engine's dozen NumPy calls (~5 us each) costs more than the work.
DENSE_WORK = 1 << 15
DENSE_ELEMENTS = 1 << 16
# ... and, while the unfold matrix has at most this many elements (256 KiB), its matrix form.
UNFOLD_ELEMENTS = 1 << 16


class DenseEngine(Geometry):
    name = "dense"
    blas_in_workers = False
    checks_data = True      # tiny: a Python sum of its data

    def __init__(self, *geometry: Unpack[GeometryArgs]) -> None:
        super().__init__(*geometry)
        self._reach = tuple((k - 1) * d for k, d in zip(self.kernel, self.dilation))
        self._padded = tuple((y - 1) * s + r + 1 for y, s, r in zip(self.y_size, self.stride, self._reach))
        self._spread = tuple(x + r for x, r in zip(self.x_size, self._reach))
        self.unfold_elements = math.prod(self.x_size) * math.prod(self.kernel) * math.prod(self.y_size)

    @property
    def padded_elements(self) -> int:
        """Elements of the einsum form's padded X and spread dY."""
        return self.batch * (self.x_channels * math.prod(self._padded) + self.y_channels * math.prod(self._spread))

    def gradients(self, x: np.ndarray, dy: np.ndarray, w: np.ndarray, want_input: bool, want_weight: bool) -> Gradients:
        """``(gradInput, gradWeight)``, None where not wanted (``Geometry``)."""
        if self.unfold_elements <= UNFOLD_ELEMENTS:
            return self._unfold_gradients(x, dy, w, want_input, want_weight)
        xb = spread(x, self._padded, (1,) * len(self.kernel), self.pad_lo)
        grad_weight = self._weight_grad(xb, dy) if want_weight else None
        if not want_input:
            return None, grad_weight
        return self._forward(xb, w) if self.transposed else self._input_grad(dy, w), grad_weight

    def _unfold_gradients(self, x: np.ndarray, dy: np.ndarray, w: np.ndarray, want_input: bool,
                          want_weight: bool) -> Gradients:
        u = unfold_matrix(self.x_size, self.y_size, self.kernel, self.stride, self.dilation, self.pad_lo)
        groups, batch = self.groups, self.batch
        cy_g, cx_g = self.y_channels // groups, self.x_channels // groups
        taps, y_plane = math.prod(self.kernel), math.prod(self.y_size)
        wg = w.reshape(groups, cy_g, cx_g * taps)
        dyg = dy.reshape(batch, groups, cy_g, y_plane)
        cols: np.ndarray | None = None
        if want_weight or (want_input and self.transposed):
            # cols[n, g, c*T + t, o]: X at the position tap t of output o reads.
            cols = (x.reshape(-1, u.shape[0]) @ u).reshape(batch, groups, cx_g * taps, y_plane)
        grad_weight: np.ndarray | None = None
        grad_input: np.ndarray | None = None
        if want_weight:
            assert cols is not None
            per_image = np.matmul(dyg, cols.swapaxes(2, 3))   # (N, groups, Cy/groups, Cx/groups * T)
            # One image: no sum over the batch (a reduction's call costs ~0.9 us on a tiny call).
            grad_weight = (per_image[0] if batch == 1 else per_image.sum(axis=0)).reshape(
                self.y_channels, cx_g, *self.kernel)
        if want_input and self.transposed:
            assert cols is not None
            grad_input = np.matmul(wg, cols).reshape(batch, self.y_channels, *self.y_size)
        elif want_input:
            dcols = np.matmul(wg.swapaxes(1, 2), dyg)          # (N, groups, Cx/groups * T, P_y)
            grad_input = (dcols.reshape(-1, u.shape[1]) @ u.T).reshape(batch, self.x_channels, *self.x_size)
        return grad_input, grad_weight

    def _forward(self, xb: np.ndarray, w: np.ndarray) -> np.ndarray:
        windows = self._windows(xb, self.y_size, self.stride)
        y: np.ndarray = np.einsum(self.subscripts("ngj_^,gij^->ngi_"), windows, self._grouped_weight(w))
        return y.reshape(self.batch, self.y_channels, *self.y_size)

    def _weight_grad(self, xb: np.ndarray, dy: np.ndarray) -> np.ndarray:
        windows = self._windows(xb, self.y_size, self.stride)
        dw: np.ndarray = np.einsum(self.subscripts("ngi_,ngj_^->gij^"), grouped(dy, self.groups), windows)
        return dw.reshape(self.y_channels, self.x_channels // self.groups, *self.kernel)

    def _input_grad(self, dy: np.ndarray, w: np.ndarray) -> np.ndarray:
        # dX[x] = sum_t W[t] * dY[o] with o*s = x + lo - t*d: spread dY to every s-th position,
        # pad it by (k-1)*d - lo in front, and correlate with the kernel reversed.
        front = tuple(r - lo for r, lo in zip(self._reach, self.pad_lo))
        spread_dy = spread(dy, self._spread, self.stride, front)
        windows = self._windows(spread_dy, self.x_size, (1,) * len(self.kernel))
        flipped = self._grouped_weight(w)[(Ellipsis,) + (slice(None, None, -1),) * len(self.kernel)]
        dx: np.ndarray = np.einsum(self.subscripts("ngi_^,gij^->ngj_"), windows, flipped)
        return dx.reshape(self.batch, self.x_channels, *self.x_size)

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
        return w.reshape(self.groups, self.y_channels // self.groups, *w.shape[1:])


@functools.lru_cache(maxsize=256)
def unfold_matrix(x_size: tuple[int, ...], y_size: tuple[int, ...], kernel: tuple[int, ...],
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
