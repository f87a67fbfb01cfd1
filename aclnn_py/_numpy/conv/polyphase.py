"""The polyphase engine: the forward product and the weight gradient of a 2-D convolution whose
kernel is twice its stride (a transposed convolution's k4 s2 upsampling layer, DCGAN's and
U-Net decoders'; k2 s1), by Winograd's minimal filtering on its stride phases.

With ``s`` the stride, tap ``t = q*s + r`` (``q`` in {0, 1}, ``r`` in [0, s)) of output ``o``
reads padded X at ``o*s + t = (o + q)*s + r``: phase ``r`` of X at ``o + q``.  So the
convolution is a stride-1 2x2 convolution of the ``s_h*s_w`` phases of X stacked as channels::

    Y[co, o]  = sum_{r, c, q} W[co, c, q*s + r] * Xs[(r, c), o + q]      Xs[(r, c), a] = Xp[c, a*s + r]
    dW[co, c, q*s + r] = sum_o dY[co, o] * Xs[(r, c), o + q]

and a 2x2 stride-1 convolution is what F(3x3, 2x2) computes with 16 multiplies per 3x3 outputs
and channel pair, where the direct sum (or im2col's product) takes 36: 2.25x fewer multiply-adds
in BLAS.  Both products read the same 4x4 tiles of Xs (3 apart), transformed once by ``B^T d B``
(the B of F(2x2, 3x3): the two algorithms share their interpolation points 0, 1, -1, inf):

* forward: 16 products ``(tiles*N, s_h*s_w*Cx/g) @ (.., Cy/g)`` of the transformed tiles with the
  kernel transformed by ``A w A^T``, and the 3x3 outputs of each tile by ``G^T m G``;
* weight: the same identity read for the weight (F(2x2, 3x3)): dY's 3x3 blocks transformed by
  ``G b G^T`` are the filters, 16 products ``(Cy/g, tiles*N) @ (tiles*N, ..)`` summed over the
  tiles in the transformed domain, then ``A^T m A`` gives the 2x2 taps of every phase.

(``A`` and ``G`` are F(2x2, 3x3)'s, winograd.py.)  The 1/2 factors of ``G`` are folded into the
kernel transform and the final weight transform, so the tile passes are additions only.
The arrays are laid out spatial first, (N, channels) last, and processed in blocks of tile rows
shared among the worker threads, as in winograd.py (whose block helpers this reuses); each block's
products are BLAS calls on its worker, single-threaded meanwhile (``blas_in_workers``).

Chosen (LoweredConv) in X space - a transposed convolution's gradients, an ordinary one's
gradWeight alone - once both sides have enough channels per group (each phase of X counts as
channels) and there are enough rows of tiles to share (worthwhile).  The gain is modest (up to
30% of the wall time, measured below): NumPy's transform passes cost about what the products
save.  Finite data only (the transforms' cancellations would turn inf into NaN).
"""

from __future__ import annotations

import math
from typing import Unpack

import numpy as np

from ._geometry import FLOAT32, Geometry, GeometryArgs, Gradients, PartialSums, add_grouped_products, connect, zero_outside
from .winograd import _Shapes, _block_shape, _block_transform, _blocks, _data_shapes, _data_transform, _spatial_first, _tile_buffers
from ..workers import in_parallel, scratch, worker_count

# Chosen when the stacked phases have at least MIN_STACKED channels per group, Y at least
# MIN_CHANNELS, and every worker thread at least MIN_ROWS_PER_WORKER rows of tiles: with fewer
# channels the transforms' passes (NumPy's ~26 GB/s) cost about what the multiply-adds they
# save do; with few rows of tiles the threads' shares of whole rows are uneven and each block's
# products are short ones re-reading the whole transformed kernel.  Measured (wall time, median
# of 9 calls, each after 20 ms of calls, both gradients of a transposed k4 s2 layer, 2 threads,
# twice; (batch, stacked, Cy, input size): polyphase/flat): (8, 128, 64, 28) 0.94 (the
# benchmark's case: 4.6 against 4.9 ms), (8, 64, 32, 56) 1.11, (8, 256, 128, 28) 0.84, (4, 256,
# 128, 56) 0.78, (8, 512, 256, 14) 1.20 and (8, 1024, 512, 14) 1.72 (5 rows of tiles).  (Earlier
# thresholds of 64 and 32 came from process CPU time, which hides the serial passes.)
MIN_STACKED = 256
MIN_CHANNELS = 128
MIN_ROWS_PER_WORKER = 4

# F(2x2, 3x3)'s A (4x2): the 2-tap kernel transform (rows: the 4 interpolation points).
_A = np.array([[1.0, 0.0], [1.0, 1.0], [1.0, -1.0], [0.0, -1.0]], np.float32)
# G = diag(_HALF) @ G1: F(2x2, 3x3)'s G with its 1/2 factors taken out, folded into the kernel
# transform (forward: the output transform is G^T m G) and into the final weight transform.
_HALF = np.array([1.0, 0.5, 0.5, 1.0], np.float32)
# The weight's final transform ``A^T (h h^T . m) A`` as one (4, 16) matrix on the 16 positions:
# ``[2i + j, 4a + b] = h_a h_b A[a, i] A[b, j]``.
_WEIGHT_TRANSFORM = (np.kron(_A, _A) * np.kron(_HALF, _HALF)[:, np.newaxis]).T.copy()


def applies(g: Geometry) -> bool:
    """A 2-D undilated convolution whose kernel is twice its stride in both dimensions."""
    return (len(g.kernel) == 2 and g.dilation == (1, 1)
            and all(k == 2 * s for k, s in zip(g.kernel, g.stride)))


def worthwhile(g: Geometry) -> bool:
    """Enough channels per group on both sides of the products (MIN_STACKED, MIN_CHANNELS) and
    enough rows of 3x3 output tiles for every worker thread (MIN_ROWS_PER_WORKER)."""
    return (math.prod(g.stride) * g.x_channels // g.groups >= MIN_STACKED
            and g.y_channels // g.groups >= MIN_CHANNELS
            and -(-g.y_size[0] // 3) >= MIN_ROWS_PER_WORKER * worker_count())


class PolyphaseEngine(Geometry):
    name = "polyphase"
    blas_in_workers = True     # each block's 16 products, on the worker that transformed it
    checks_data = False

    def __init__(self, *geometry: Unpack[GeometryArgs]) -> None:
        super().__init__(*geometry)
        self._phases = math.prod(self.stride)
        self._tiles = tuple(-(-y // 3) for y in self.y_size)
        # The stacked phases Xs over every tile's 4x4 reads; dY over every tile's 3x3 block.
        self._extent = tuple(3 * t + 1 for t in self._tiles)
        self._dy_extent = tuple(3 * t for t in self._tiles)

    @property
    def elements(self) -> int:
        """Elements of the stacked phases and the padded dY, the largest buffers (the blocks'
        are about 3 x BLOCK_BYTES per worker)."""
        return self.batch * (self._phases * self.x_channels * math.prod(self._extent)
                             + self.y_channels * math.prod(self._dy_extent))

    def gradients(self, x: np.ndarray, dy: np.ndarray, w: np.ndarray, want_input: bool, want_weight: bool) -> Gradients:
        """``(forward(X, W) if want_input, dW if want_weight)``: X space only (a transposed
        convolution's gradInput, or gradWeight alone; LoweredConv).  Both come from one pass over
        the blocks of tiles: each block's transformed tiles feed both products."""
        assert self.transposed or not want_input
        batch, g = self.batch, self.groups
        cs, cy = self._phases * self.x_channels, self.y_channels
        cs_g, cy_g = cs // g, cy // g
        th, tw = self._tiles
        oh, ow = self.y_size
        xs = self._stacked(x).reshape(self._extent + (batch, cs))
        u = self._kernel_transform(w) if want_input else None
        d = _spatial_first(dy, self._dy_extent, (0, 0), "polyphase dy") if want_weight else None
        out = np.empty((batch, cy, oh, ow), FLOAT32) if want_input else None
        block = _block_shape(self._tiles, batch * max(cs, cy), 16)
        if block[1] == tw:
            # At least as many tiles x N per block as either side has channels: the products'
            # inner dimension for the weight (a sum over tiles), and each block's accumulation of
            # the 16 (Cy, phases*Cx) products costs no more than its own transformed tiles.
            block = (max(block[0], -(-max(cs, cy) // (batch * tw))), tw)
        shapes: _Shapes = _data_shapes("t", 2, batch, cs, 1, 3)
        if want_input:
            shapes.update({"m": lambda n: (16, n[0] * n[1] * batch, cy), "r": lambda n: (n[0], 3, 4, n[1], batch, cy),
                           "y": lambda n: (n[0], 3, n[1], 3, batch, cy)})
        if want_weight:
            shapes.update({"s1": lambda n: (4, n[0], 3 * n[1], batch, cy), "ub": lambda n: (4, 4, n[0], n[1], batch, cy)})
        sums = PartialSums("polyphase sums", (16, g, cy_g, cs_g)) if want_weight else None

        def run(first: int, last: int) -> None:
            views_of = _tile_buffers(shapes, block)
            total, product = sums.claim(first) if sums is not None else (None, None)
            for (i0, j0), (nb, nc) in _blocks(first, last, block, self._tiles):
                views = dict(zip(shapes, views_of((nb, nc))))
                v = views["t1"]
                _data_transform(xs[3 * i0:3 * (i0 + nb) + 1, 3 * j0:3 * (j0 + nc) + 1], (nb, nc), [views["t0"], v], 3)
                vm = v.reshape(16, -1, cs)
                if u is not None and out is not None:
                    m = views["m"]
                    if g == 1:
                        np.matmul(vm, u[:, 0], out=m)
                    else:
                        for k in range(g):
                            m[:, :, k * cy_g:(k + 1) * cy_g] = np.matmul(vm[:, :, k * cs_g:(k + 1) * cs_g], u[:, k])
                    y = _output_transform(m, nb, nc, views["r"], views["y"])
                    rows, cols = min(3 * nb, oh - 3 * i0), min(3 * nc, ow - 3 * j0)
                    out[:, :, 3 * i0:3 * i0 + rows, 3 * j0:3 * j0 + cols] = \
                        y.reshape(3 * nb, 3 * nc, batch, cy)[:rows, :cols].transpose(2, 3, 0, 1)
                if d is not None and total is not None and product is not None:
                    ub = views["ub"]
                    _dy_block_transform(d[3 * i0:3 * (i0 + nb), 3 * j0:3 * (j0 + nc)], views["s1"], ub)
                    um = ub.reshape(16, -1, cy)
                    add_grouped_products(total, product, um, vm)

        in_parallel(th, run)
        return out, (None if sums is None else self._weight_taps(sums.total()))

    def _stacked(self, x: np.ndarray) -> np.ndarray:
        """``Xs (eh, ew, N, groups, phases, Cx/g)``: phase ``r`` of X padded by lo, at ``a`` where
        ``x = a*s + r - lo`` lies in X, zero elsewhere (the calling thread's scratch array)."""
        sw, (lo_h, lo_w) = self.stride[1], self.pad_lo
        g = self.groups
        cx_g = self.x_channels // g
        out = scratch("polyphase x", self._extent + (self.batch, g, self._phases, cx_g))
        source = x.reshape(self.batch, g, cx_g, *self.x_size)

        def fill(first: int, last: int) -> None:
            for p in range(first, last):
                rh, rw = divmod(p, sw)
                target = out[:, :, :, :, p]
                box = connect(self.x_size, self._extent, self.stride, (rh - lo_h, rw - lo_w))
                if box is None:
                    target[...] = 0
                    continue
                (ah, xh), (aw, xw) = box
                zero_outside(target, [ah, aw])
                target[ah, aw] = source[:, :, :, xh, xw].transpose(3, 4, 0, 1, 2)

        in_parallel(self._phases, fill)
        return out

    def _kernel_transform(self, w: np.ndarray) -> np.ndarray:
        """``(16, groups, phases*Cx/g, Cy/g)``: ``h h^T . (A w_r A^T)`` of every phase's 2x2 taps
        ``w_r[q] = W[.., q*s + r]``, channels ordered as the stacked phases'."""
        (sh, sw), g = self.stride, self.groups
        cy, cx_g = self.y_channels, self.x_channels // g
        # (Cy, Cx/g, qh, rh, qw, rw) -> (qh, qw, Cy, rh, rw, Cx/g): transformed along qh, then qw,
        # into (4, 4, Cy, phases, Cx/g) = (16, groups, Cy/g, phases*Cx/g), last two axes swapped.
        taps = w.reshape(cy, cx_g, 2, sh, 2, sw).transpose(2, 4, 0, 3, 5, 1)
        # A w A^T: winograd's transform of 2x2 blocks, here the one block of each phase's taps
        # (axes qh, qw), additions only (a (16, 4) @ (4, ...) BLAS product took 0.13 ms of the k4
        # s2 case's 0.4).
        # The stages and the result are the calling thread's scratch arrays (fresh ones were
        # fresh pages: 0.52 ms a call for the k4 s2 case's, against 0.08 kept).
        rest = taps.shape[2:]
        stages = [scratch("polyphase w rows", (4, 1, 2) + rest), scratch("polyphase w blocks", (4, 4, 1, 1) + rest)]
        _block_transform(taps, stages)
        u = stages[-1].reshape((4, 4) + rest)
        u[1:3] *= 0.5
        u[:, 1:3] *= 0.5
        out = scratch("polyphase u", (16, g, self._phases * cx_g, cy // g))
        np.copyto(out, u.reshape(16, g, cy // g, self._phases * cx_g).swapaxes(2, 3))
        return out

    def _weight_taps(self, m: np.ndarray) -> np.ndarray:
        """dW from the workers' sums of the 16 products (added in tile-row order: the same
        result on every call), by ``A^T (h h^T . m) A`` and the phases put back in place."""
        (sh, sw), cy = self.stride, self.y_channels
        cx_g = self.x_channels // self.groups
        # (4 = (qh, qw), Cy, (rh, rw, Cx/g)) -> dW (Cy, Cx/g, qh*sh + rh, qw*sw + rw).
        taps = np.matmul(_WEIGHT_TRANSFORM, m.reshape(16, -1)).reshape(2, 2, cy, sh, sw, cx_g)
        return np.ascontiguousarray(taps.transpose(2, 5, 0, 3, 1, 4)).reshape(cy, cx_g, 2 * sh, 2 * sw)


def _output_transform(m: np.ndarray, nb: int, nc: int, r: np.ndarray, y: np.ndarray) -> np.ndarray:
    """``y (nb, 3, nc, 3, N, C)``: the 3x3 outputs ``G1^T m G1`` of each tile from the products
    ``m (16, nb*nc*N, C)``, ``G1^T = [[1, 1, 1, 0], [0, 1, -1, 0], [0, 1, 1, 1]]``, rows then
    columns: from ``mt[a, i, b, j] = m[a, b, i, j]`` into ``r[i, p, b, j]`` into ``y[i, p, j, q]``."""
    mt = m.reshape((4, 4, nb, nc) + y.shape[4:]).swapaxes(1, 2)
    np.add(mt[1], mt[2], out=r[:, 0])
    np.subtract(mt[1], mt[2], out=r[:, 1])
    np.add(r[:, 0], mt[3], out=r[:, 2])
    r[:, 0] += mt[0]
    np.add(r[:, :, 1], r[:, :, 2], out=y[:, :, :, 0])
    np.subtract(r[:, :, 1], r[:, :, 2], out=y[:, :, :, 1])
    np.add(y[:, :, :, 0], r[:, :, 3], out=y[:, :, :, 2])
    y[:, :, :, 0] += r[:, :, 0]
    return y


def _dy_block_transform(d: np.ndarray, s1: np.ndarray, u: np.ndarray) -> None:
    """``u (4, 4, nb, nc, N, C)``: ``G1 b G1^T`` of the 3x3 blocks ``b`` of ``d (3*nb, 3*nc, N, C)``,
    ``G1 = [[1, 0, 0], [1, 1, 1], [1, -1, 1], [0, 0, 1]]`` (G without its halves), rows then
    columns (``s1 (4, nb, 3*nc, N, C)`` is scratch)."""
    top, middle, bottom = d[0::3], d[1::3], d[2::3]
    np.copyto(s1[0], top)
    np.add(top, bottom, out=s1[1])
    np.subtract(s1[1], middle, out=s1[2])
    s1[1] += middle
    np.copyto(s1[3], bottom)
    left, centre, right = s1[:, :, 0::3], s1[:, :, 1::3], s1[:, :, 2::3]
    np.copyto(u[:, 0], left)
    np.add(left, right, out=u[:, 1])
    np.subtract(u[:, 1], centre, out=u[:, 2])
    u[:, 1] += centre
    np.copyto(u[:, 3], right)
