"""The winograd engine: both gradients of an ordinary 2-D 3x3 or 3-D 3x3x3 convolution, stride
1 (ResNet's and VGG's 3x3 layers, 3-D U-Net's 3x3x3 ones), by Winograd's minimal filtering
F(2x2, 3x3) and F(2x2x2, 3x3x3).  One implementation for both ranks: every transform is
separable, one 1-D pass set per axis (below, the 2-D case; 3-D adds a depth axis: 4x4x4
tiles, 64 products, 3.375x fewer multiply-adds than im2col's 27 per output).

The input gradient is a stride-1 correlation of dY, padded by ``2 - lo`` in front, with the
kernel reversed and its channel axes swapped: ``dX[n, ci, x] = sum_{co, t} Wf[ci, co, t] *
dYp[n, co, x + t]``.  F(2x2, 3x3) (Lavin & Gray, "Fast Algorithms for Convolutional Neural
Networks", 2016) computes each 2x2 block of dX from a 4x4 tile of dYp (tiles 2 apart) as
``A^T [(G Wf G^T) . (B^T d B)] A``: 16 matrix products ``(Cx/g, Cy/g) @ (Cy/g, tiles)``, one per
element of the 4x4 transformed tile, hold 16 multiply-adds per 2x2 outputs and channel pair
where im2col's product holds 36 - a 2.25x smaller BLAS product, for transforms that are a few
additions per element.  The weight gradient is the same identity read for the weight: on the
input gradient's transformed tiles of dY with X's 2x2 blocks as the filter (F(3x3, 2x2),
_fused), or on its own tiles with dY's 2x2 blocks as the filter (_weight_grad): 16 products
``(Cy/g, tiles) @ (tiles, Cx/g)`` summed over the tiles.  The arrays are laid out spatial axes first and (N, channels) last, so the
transforms are NumPy passes over long contiguous runs, in blocks of tiles (BLOCK_BYTES) shared among the
worker threads.  Those copies and the blocks' buffers are the threads' scratch arrays
(_common.scratch), kept from call to call: fresh ones were fresh pages, faulted in and zeroed
by the kernel on every call.

Chosen for every mask (LoweredConv) once both channel counts per group reach MIN_CHANNELS
(2-D) or MIN_CHANNELS_3D (3-D).  Measured against the flat engine (its one im2col in Y space feeds both products), one BLAS
thread, process CPU time, interleaved, the benchmark's cases: resnet 3x3 (8,64,56,56) both
gradients 36 ms against 47; (8,128,28,28) gradWeight alone 14 ms against 20.  gradInput alone,
2 cores, wall, interleaved with the flat engine: (8,128,28,28) 11.9 ms against 14.8,
(8,256,14,14) 10.8 against 14.1, (8,64,56,56) 13.9 against 13.9.

The 1-D passes run the first spatial axis first, the last one (short runs of N x channels
floats, 2 apart) last.  Measured the other way round (last axis first, while the data is least
expanded): 2-D 3% slower on one thread (its blocks are whole rows of tiles, thin along the
first axis: rows first makes the smaller intermediate), 3-D no faster.

Finite data only (the zeros of the padding, and the transforms' cancellations, would turn inf
into NaN).  The transforms round differently from a direct sum: a few float32 ulps of the
largest terms, inside the tolerances of tests/helpers.py.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Callable, Iterator, Sequence
from typing import Unpack

import numpy as np

from ._geometry import FLOAT32, Geometry, GeometryArgs, Gradients, PartialSums, add_grouped_products, connect, zero_outside
from ..workers import MIN_PARALLEL_ELEMENTS, in_parallel, scratch

# Chosen when both channel counts per group are at least this.  Cost model, per 2x2 outputs,
# with C channels per group on each side: the BLAS products take 16 C^2 multiply-adds against
# the flat engine's 36 C^2 (its im2col: 9 copies per element), while Winograd's transforms and
# copies take a fixed number of NumPy passes per element and channel, k C: its time over the
# flat engine's ~ (16 a C + k_w) / (36 a C + k_f), below 1 once C passes ~ (k_w - k_f) / 20a.
# The batch and spatial size scale both alike (cache effects stayed inside the noise).
# Measured (2 cores, wall, min of 4 alternating processes per engine, after the blocks'
# changes; Winograd over flat for both gradients / gradInput / gradWeight+bias, 3x3 pad 1,
# Cin = Cout = C, batch 8): C = 48: 56x56 0.98 / 0.81 / 1.23, 28x28 1.21 / 1.02 / 1.12, 14x14
# 1.19 / 1.08 / 1.03; C = 64: 56x56 0.90 / 0.84 / 1.03, 28x28 1.14 / 1.09 / 1.05, 14x14 0.98
# / 0.85 / 0.85; C = 96: 28x28 0.62 / 0.87 / 0.96, 14x14 0.78 / 0.68 / 0.77; an earlier grid
# the same: C = 128 0.59-0.82, 256 0.50-0.62, 32 0.75-1.63.  64 is where it breaks even (the
# ResNet stage 1 layer, (8,64,56,56) both: 24.4 ms against 27.0); before, one BLAS thread,
# process CPU time: C = 48: 0.87-1.04, 64: 0.82-0.90, 96 and 128: 0.70-0.77.
MIN_CHANNELS = 64
# The same for 3-D 3x3x3 kernels, F(2x2x2, 3x3x3): per 2x2x2 outputs 64 C^2 multiply-adds
# against the flat engine's 216 C^2 (3.375x fewer), for transforms of three 1-D pass sets whose
# cost per element does not depend on C (memory-bound: ~116 floats written per tile and
# (N x channel), close to the 112 minimum of separable passes), so the same model holds.
# The products' K is C (16-32 here): OpenBLAS sgemm of (512, 16) @ (16, 16) ran at 82 GFLOP/s
# on one thread, (256, 32) @ (32, 32) at 103, against 170-220 for the flat engine's shapes.
# Measured (both gradients, pad 1, Cin = Cout = C, Winograd's time over the flat engine's,
# interleaved in one process, min of 15, 2 cores, wall (process CPU time); load 1.4-2.7, so
# three runs each): (2,C,16,32,32): C = 8 1.54 (1.56), 12 1.25 (1.19), 16 0.95-1.01 (0.85-0.91),
# 24 0.59-0.83 (0.65-0.69); U-Net (1,32,32,32,32) 0.59-0.62 (0.61-0.62).  16 is where it
# breaks even on the wall clock, with 10-15% less CPU time (the conv3d k3 bench case).
# Measured again since (the flat engine's stride-1 products now by rows, _row_products),
# Winograd's time over the flat engine's, interleaved in one process, medians of 15-21 (one
# thread: thread CPU time; two: wall), load 4.2-4.8: (2,16,16,32,32) both gradients 1.20 (1.10 on
# two threads), the forward product 1.05 (1.04); (2,24,16,32,32) 1.12 (1.05), forward 1.11
# (1.04); U-Net (1,32,32,32,32) 0.92 (0.88), forward 0.93 (0.86).  Below 24 channels the flat
# engine is no slower on a quiet machine and faster on a busy one (the transforms' passes are
# memory-bound): it takes the conv3d k3 bench case again.
MIN_CHANNELS_3D = 24

# The transforms and products run in blocks of tiles (whole tile rows, or even pieces of one
# tile row when it is larger) whose 16 transformed tiles take about this much; the block's other
# buffers take about twice as much again, all of them the threads' scratch (WORKSPACE_BYTES).
# Measured (one thread, process CPU time, min of 12-15, in-process toggle, interleaved;
# 4 MiB / 2 MiB / 1 MiB / 256 KiB / 64 KiB): resnet 3x3 (8,64,56,56) 28.4-30.0 / 28.4-28.5 /
# 28.4-28.7 / 34.2 / 51.3 ms, gradInput (8,128,28,28) 11.4-12.2 / 11.7 / 11.1-11.3 / 13.5 /
# 21.3, gradWeight (8,128,28,28) 11.2-11.7 / 10.8-11.1 / 10.7-10.9 / 12.9 / 21.2, dilated d2
# 54.6-56.2 / 55.0-55.9 / 57.5-57.8 / 73.1 / 73.0 (its phases' tile rows, 2.4 MiB, in 2 or
# 3 pieces below 4 MiB).  Smaller blocks lose to the ~30 NumPy calls and 16 products per
# block; 2 cores, wall, min of 15 (noisy): resnet 25.0 -> 24.4 ms at 2 MiB, dilated 40.1 ->
# 41.6.  (Pieces of a row also keep a large layer's blocks, e.g. (32,512,56,56)'s 29 MiB tile
# rows, inside the scratch arrays.)
BLOCK_BYTES = 2 << 20
# What the passes cost, in units of T = tiles x N x channels floats (one transformed position's
# array; resnet 3x3 (8,64,56,56): T = 0.4 M floats, 1.6 MB), one thread, that case: gradInput:
# dY spatial first (read 4T, write 4T, 1.35 ms), the data transform (8 passes, read 48T, write
# 24T, 3.2 ms), 16 products (~8 ms), the inverse (8 passes, read 48T, write 24T, 1.4 ms), dX
# put in place (read 4T, write 4T, 1.9 ms); gradWeight: X spatial first (1.35 ms), its data
# transform (3.2 ms), dY's block transform (8 passes, read 36T, write 24T, 1.4-2.4 ms), 16
# products (~8 ms).  Each pass runs at 35-100 GB/s: the transforms are about as few NumPy
# passes as separable 1-D sums allow (row stage, then column stage written straight into the
# products' layout); removing dY's copy and negation passes (signs folded into the final
# transform) measured 1.42 -> 1.31 ms per call, an inverse by one (4, 16) BLAS product 1.4 ->
# 0.9 ms but it needs the slower (p, q, i, j) placement: neither worth its code.

# G of F(2x2, 3x3): the kernel transform, one 1-D factor per axis.
_G = np.array([[1.0, 0.0, 0.0], [0.5, 0.5, 0.5], [0.5, -0.5, 0.5], [0.0, 0.0, 1.0]], np.float32)
#: The kernel ranks the engine handles: 2-D F(2x2, 3x3) and 3-D F(2x2x2, 3x3x3).
RANKS = (2, 3)


@functools.cache
def _kernel_transform(rank: int, reversed_kernel: bool) -> np.ndarray:
    """G (x) G (x) ...: the kernel transform of ``rank`` axes as one (4^rank, 3^rank) matrix,
    ``[4a + b, 3i + j] = G[a, i] G[b, j]`` in 2-D, optionally with the kernel reversed (columns in
    reverse order: reversing every axis of a 3x3(x3) kernel reverses its flat taps).  One matrix
    product per call instead of an einsum: 0.7 ms of the 7.6 ms gradInput of resnet 3x3
    (8,128,28,28) went to einsum's two bmm passes."""
    g = _G
    for _ in range(rank - 1):
        g = np.kron(g, _G)
    return np.ascontiguousarray(g[:, ::-1] if reversed_kernel else g)


def applies(g: Geometry) -> bool:
    """An ordinary 2-D or 3-D convolution with a 3x3(x3) kernel and stride 1 (any dilation: _Dilated)."""
    rank = len(g.kernel)
    return (not g.transposed and rank in RANKS and g.kernel == (3,) * rank and g.stride == (1,) * rank)


def worthwhile(g: Geometry) -> bool:
    """Enough channels per group for the smaller product to pay for the transforms."""
    least = MIN_CHANNELS if len(g.kernel) == 2 else MIN_CHANNELS_3D
    return min(g.x_channels, g.y_channels) // g.groups >= least


#: A block's scratch array shapes, by name, from the block's tile counts per axis.
_Shapes = dict[str, Callable[[tuple[int, ...]], tuple[int, ...]]]


class WinogradEngine(Geometry):
    name = "winograd"
    blas_in_workers = True     # each block's products, on the worker that transformed it
    checks_data = False

    def __init__(self, *geometry: Unpack[GeometryArgs]) -> None:
        super().__init__(*geometry)
        rank = len(self.kernel)
        #: A dilated convolution is computed as the undilated one of its phases (_Dilated).
        self._dilated = None if self.dilation == (1,) * rank else _Dilated(self)
        self._positions = 4 ** rank
        self._tiles = tuple((x + 1) // 2 for x in self.x_size)
        # dY placed at offset 2 - lo in a zero image covering every tile's 4x4 reads.
        self._padded = tuple(2 * t + 2 for t in self._tiles)
        self._front = tuple(2 - lo for lo in self.pad_lo)
        # The weight gradient tiles Y instead: 2x2 blocks of dY, 4x4 tiles of X padded by lo.
        self._y_tiles = tuple((y + 1) // 2 for y in self.y_size)
        #: Whether the weight gradient runs on the input gradient's tiles of dY (_fused), over X's
        #: 2x2 blocks, rather than on its own (_weight_grad), over Y's: when X has no more tiles
        #: than Y.  Measured (one thread, CPU time, min of 9-11, interleaved, load 3-4): both
        #: gradients, fused against separate: conv3d k3 (2,16,16,32,32) 12.1 against 14.3 ms,
        #: unet k3 (1,32,32,32,32) 29.0 / 32.7, resnet 3x3 (8,64,56,56) 26.9 / 28.5,
        #: (8,128,28,28) 20.6 / 21.3 (gradWeight alone 11.0 / 11.1); but dilated d2
        #: (4,256,32,32), whose phases are unpadded (X's 9x9 tiles, Y's 8x8): 69-71 / 62.
        self._fused_weight = math.prod(self._tiles) <= math.prod(self._y_tiles)
        self._x_blocks = tuple(2 * t for t in self._tiles)

    @property
    def elements(self) -> int:
        """Elements of the padded copies of X and dY (the dilation phases' when dilated), the
        largest buffers; the transforms' are about 3-4 x BLOCK_BYTES per worker."""
        if self._dilated is not None:
            inner = self._dilated.inner
            return inner.elements + inner.batch * (inner.x_channels * math.prod(inner.x_size)
                                                   + inner.y_channels * math.prod(inner.y_size))
        dy_copy = self.y_channels * math.prod(self._padded)
        if self._fused_weight:
            return self.batch * (dy_copy + self.x_channels * math.prod(self._x_blocks))
        y_padded = tuple(2 * t + 2 for t in self._y_tiles)
        return self.batch * (max(self.x_channels * math.prod(y_padded), dy_copy) + self.y_channels * math.prod(y_padded))

    def gradients(self, x: np.ndarray, dy: np.ndarray, w: np.ndarray, want_input: bool, want_weight: bool) -> Gradients:
        """``(gradInput, gradWeight)``, None where not wanted (``Geometry``)."""
        if self._dilated is not None:
            return self._dilated.gradients(x, dy, w, want_input, want_weight)
        # dY laid out spatial first once for both gradients (one pass over dY, 1.4 ms of the
        # resnet 3x3 (8,64,56,56) call): the fused weight gradient reads its transformed tiles,
        # the separate one the view of the padded copy at dY's origin, zero past dY (_weight_dy).
        fused = want_weight and self._fused_weight
        d = _spatial_first(dy, self._padded, self._front, "winograd dy") if want_input or fused else None
        xb = _spatial_first(x, self._x_blocks, (0,) * len(self._tiles), "winograd x") if fused else None
        grad_input, grad_weight = self._fused(d, xb, w, want_input) if d is not None else (None, None)
        if want_weight and not fused:
            grad_weight = self._weight_grad(x, dy, d)
        return grad_input, grad_weight

    def _weight_dy(self, dy: np.ndarray, d: np.ndarray | None) -> np.ndarray:
        """dY as ``(2*t0, 2*t1, ..., N, Cy)`` over the weight gradient's 2x2 blocks, zero past
        dY: a view of the input gradient's copy ``d`` when it reaches that far, else a copy."""
        extents = tuple(2 * t for t in self._y_tiles)
        if d is not None and all(f + e <= size for f, e, size in zip(self._front, extents, d.shape)):
            return d[tuple(slice(f, f + e) for f, e in zip(self._front, extents))]
        return _spatial_first(dy, extents, (0,) * len(extents), "winograd dy")

    def _fused(self, d: np.ndarray, x: np.ndarray | None, w: np.ndarray, want_input: bool) -> Gradients:
        """dX (if ``want_input``) and dW (if ``x`` is given) from ``d (*padded, N, Cy)``: dY padded
        by ``2 - lo`` in front, zero outside dY, in one pass over the tiles of dX.

        dX by F(2, 3) per axis.  dW by the same tiles of dY read for the weight: ``dW[t] =
        sum_x X[x] dY[x + lo - t]``, and for the 2 (per axis) positions ``x = 2b + i`` of block
        b the dY they meet are the 4-element window ``D_b`` of the padded dY at ``2b`` (the input
        gradient's tile): ``dW[2 - e] = sum_b sum_i X_b[i] D_b[i + e]``, F(3, 2) with X's block
        as the filter, ``G^T [(A X_b) . (B^T D_b)]`` per axis (``[p == i + t] = sum_k A^T[i, k]
        G[k, t] B^T[k, p]`` holds whichever of (i, t) is the filter).  ``B^T D_b B`` is the input
        gradient's transformed tile: the weight gradient adds only the cheap transform of X's
        2x2(x2) blocks (_block_transform) and 4^rank products ``(Cy/g, blocks*N) @ (blocks*N,
        Cx/g)`` summed in the transformed domain, then one tiny transform with the kernel
        reversed (e = 2 - t).  (Before, it transformed 4x4 tiles of padded X and 2x2 blocks of
        dY: a second data transform.)"""
        # Every array is laid out spatial axes first, (N, channels) last: the transforms then
        # combine whole contiguous (N x channels) blocks (long vectorised loops), and each of the
        # 4^rank products is one (N*tiles, Cy) @ (Cy, Cx) BLAS product.
        batch, groups, rank = self.batch, self.groups, len(self.kernel)
        cy, cx = self.y_channels, self.x_channels
        cy_g, cx_g = cy // groups, cx // groups
        positions = self._positions
        want_weight = x is not None

        # G Wf G^T with Wf[g, ci, co] = W[g*cy_g + co, ci] reversed, as (positions, groups, Cy/g, Cx/g).
        # (The calling thread's scratch array, like the other per-call buffers: fresh pages cost.)
        u = (np.matmul(_kernel_transform(rank, True), w.reshape(-1, 3 ** rank).T,
                       out=scratch("winograd u", (positions, cy * cx_g))).reshape(positions, groups, cy_g, cx_g)
             if want_input else None)

        out = np.empty((batch, cx) + self.x_size, FLOAT32) if want_input else None
        # Blocks of tiles (_block_shape): the buffers are made once per thread and stay in
        # cache from the transform to the product to the output.
        block = _block_shape(self._tiles, batch * max(cx, cy), positions)
        shapes: _Shapes = {**_data_shapes("t", rank, batch, cy)}
        if want_input:
            shapes.update({"m": lambda n: (positions, math.prod(n) * batch, cx), **_inverse_shapes("r", rank, batch, cx)})
        if want_weight:
            shapes.update(_data_shapes("s", rank, batch, cx, 0))
        sums = PartialSums("winograd sums", (positions, groups, cy_g, cx_g)) if want_weight else None

        def run(first: int, last: int) -> None:
            # Overlaid: the data transform's intermediates, X's block transform, the inverse's stages.
            views_of = _tile_buffers(shapes, block, [[name for name in shapes if name[0] == chain and
                                                      name != f"t{rank - 1}"] for chain in "tsr"])
            if sums is not None:
                total, product = sums.claim(first)
            for start, n in _blocks(first, last, block, self._tiles):
                views = views_of(n)
                data = views[:rank]
                _data_transform(d[tuple(slice(2 * s, 2 * (s + k) + 2) for s, k in zip(start, n))], n, data)
                vm = data[-1].reshape(positions, -1, cy)
                if want_weight:
                    assert x is not None
                    blocks = views[-rank:]
                    _block_transform(x[tuple(slice(2 * s, 2 * (s + k)) for s, k in zip(start, n))], blocks)
                    xm = blocks[-1].reshape(positions, -1, cx)
                    add_grouped_products(total, product, vm, xm)
                if out is None or u is None:
                    continue
                # The products: M (positions, tiles*N, Cx).
                m, inverse = views[rank], views[rank + 1:2 * rank + 1]
                if groups == 1:
                    np.matmul(vm, u[:, 0], out=m)
                else:
                    for g in range(groups):
                        m[:, :, g * cx_g:(g + 1) * cx_g] = np.matmul(vm[:, :, g * cy_g:(g + 1) * cy_g], u[:, g])
                y = _inverse_transform(m.reshape((4,) * rank + n + (batch, cx)), inverse)
                # y[i, p, j, q, n, c] is dX[n, c, 2(i0 + i) + p, 2(j0 + j) + q] (2-D): the block
                # of dX spatial axes first, put in place by one transposing copy whose inner loop
                # runs along dX's rows.  (Laid out (p, q, i, j, n, c) its inner loop was q's 2
                # elements: 3.5 ms of resnet 3x3 (8,64,56,56)'s gradInput on one thread.)
                extents = tuple(min(2 * k, size - 2 * s) for s, k, size in zip(start, n, self.x_size))
                target = (slice(None), slice(None)) + tuple(slice(2 * s, 2 * s + e) for s, e in zip(start, extents))
                out[target] = y.reshape(tuple(2 * k for k in n) + (batch, cx))[tuple(slice(e) for e in extents)] \
                    .transpose((rank, rank + 1) + tuple(range(rank)))

        # The tile rows (first axis) are independent: shared evenly among the worker threads,
        # each taking its share in blocks (the transforms are single-threaded NumPy passes;
        # each block's products are BLAS calls of their own).  Measured, 2 cores, gradInput of
        # (8,128,28,28): 11.9 ms wall, 15.5 ms in one thread.  (Whole blocks shared out left
        # the workers 8 and 6 of its 14 tile rows, 4 and 3 blocks of resnet (8,64,56,56)'s 7.)
        in_parallel(self._tiles[0], run)
        if sums is None:
            return out, None
        m = sums.total()
        # G^T M G per channel pair, kernel reversed: (Cy*Cx/g, positions) @ (positions, 3^rank)
        # is dW's layout.
        dw: np.ndarray = np.matmul(m.reshape(positions, -1).T, _kernel_transform(rank, True))
        return out, dw.reshape((cy, cx_g) + self.kernel)

    def _weight_grad(self, x: np.ndarray, dy: np.ndarray, d: np.ndarray | None) -> np.ndarray:
        """dW by F(3x3, 2x2) (F(3x3x3, 2x2x2) in 3-D), the same identity read for the weight:
        ``dW[t] = sum_o dY[o] Xp[o + t]`` (Xp: X padded by lo in front) sums, over the 2x2 blocks
        of dY, ``G^T [(A dY_b A^T) . (B^T Xp_b B)] G`` with ``Xp_b`` the 4x4 tile of Xp under the
        block; the sum over the blocks commutes with ``G^T . G``, so it is 4^rank products
        ``(Cy/g, blocks*N) @ (blocks*N, Cx/g)`` summed in the transformed domain (2.25x, 3-D
        3.375x, fewer multiply-adds than im2col's) and one tiny transform at the end.
        ``A = (A^T)^T`` and ``G`` are F(2, 3)'s: for a correlation, ``[p == i + t] = sum_k
        A^T[i, k] G[k, t] B^T[k, p]`` holds whichever of (i, t) is the filter, axis by axis.
        X's transform is the input gradient's transform of dY (_data_transform).
        ``d``: the input gradient's copy of dY, if made (_weight_dy)."""
        batch, groups, rank = self.batch, self.groups, len(self.kernel)
        cy, cx = self.y_channels, self.x_channels
        cy_g, cx_g = cy // groups, cx // groups
        positions = self._positions
        tiles = self._y_tiles
        xp = _spatial_first(x, tuple(2 * t + 2 for t in tiles), self.pad_lo, "winograd x")   # (*padded, N, Cx)
        dyp = self._weight_dy(dy, d)                                                     # (*2 tiles, N, Cy)
        # Blocks of tiles as in _input_grad; each worker sums its blocks' products.
        block = _block_shape(tiles, batch * max(cx, cy), positions)
        shapes: _Shapes = {**_data_shapes("t", rank, batch, cx), **_data_shapes("s", rank, batch, cy, 0)}
        sums = PartialSums("winograd sums", (positions, groups, cy_g, cx_g))

        def run(first: int, last: int) -> None:
            views_of = _tile_buffers(shapes, block, [[f"t{k}" for k in range(rank - 1)],
                                                     [f"s{k}" for k in range(rank - 1)]])
            total, product = sums.claim(first)
            for start, n in _blocks(first, last, block, tiles):
                views = views_of(n)
                _data_transform(xp[tuple(slice(2 * s, 2 * (s + k) + 2) for s, k in zip(start, n))], n, views[:rank])
                _block_transform(dyp[tuple(slice(2 * s, 2 * (s + k)) for s, k in zip(start, n))], views[rank:])
                um, vm = views[-1].reshape(positions, -1, cy), views[rank - 1].reshape(positions, -1, cx)
                add_grouped_products(total, product, um, vm)

        in_parallel(tiles[0], run)
        m = sums.total()
        # G^T M G per channel pair: (Cy*Cx/g, positions) @ (positions, 3^rank) is dW's layout.
        dw: np.ndarray = np.matmul(m.reshape(positions, -1).T, _kernel_transform(rank, False))
        return dw.reshape((cy, cx_g) + self.kernel)


def _data_shapes(prefix: str, rank: int, batch: int, channels: int, margin: int = 2, step: int = 2) -> _Shapes:
    """The scratch shapes of the separable transform of a block of tiles ``n``, one stage per axis:
    stage k (``prefix + k``) is ``(4,)*(k+1) + n[:k+1] + (step*n[j] + margin for the later axes)
    + (N, C)``, the last one the transformed tiles (tiles ``step`` apart: 2 here, 3 for the
    polyphase engine's F(3x3, 2x2))."""
    def stage(k: int) -> Callable[[tuple[int, ...]], tuple[int, ...]]:
        return lambda n: (4,) * (k + 1) + n[:k + 1] + tuple(step * t + margin for t in n[k + 1:]) + (batch, channels)
    return {f"{prefix}{k}": stage(k) for k in range(rank)}


def _inverse_shapes(prefix: str, rank: int, batch: int, channels: int) -> _Shapes:
    """The scratch shapes of the inverse transform's stages: stage k is ``(n[0], 2, ..., n[k], 2)
    + (4,)*(rank-k-1) + n[k+1:] + (N, C)``, the last one the output blocks ``(n[0], 2, n[1], 2, ...)``."""
    def stage(k: int) -> Callable[[tuple[int, ...]], tuple[int, ...]]:
        return lambda n: (tuple(e for t in n[:k + 1] for e in (t, 2)) + (4,) * (rank - k - 1) + n[k + 1:]
                          + (batch, channels))
    return {f"{prefix}{k}": stage(k) for k in range(rank)}


def _block_shape(tiles: tuple[int, ...], per_position: int, positions: int) -> tuple[int, ...]:
    """Tiles per block along each axis, for ``tiles`` per axis: whole trailing planes/rows while
    their ``positions`` transformed tiles of ``per_position`` floats each fit BLOCK_BYTES (several
    along the first axis if they fit), else even pieces along the first axis that does not fit
    whole (one along the axes before it)."""
    fit = max(1, BLOCK_BYTES // (positions * per_position * FLOAT32.itemsize))
    shape = [1] * len(tiles)
    inner = 1
    for k in range(len(tiles) - 1, -1, -1):
        cap = fit // inner
        if k == 0:
            shape[0] = cap
        elif cap >= tiles[k]:
            shape[k] = tiles[k]
            inner *= tiles[k]
            continue
        else:
            pieces = -(-tiles[k] // cap)
            shape[k] = -(-tiles[k] // pieces)
        break
    return tuple(shape)


def _blocks(first: int, last: int, block: tuple[int, ...],
            tiles: tuple[int, ...]) -> Iterator[tuple[tuple[int, ...], tuple[int, ...]]]:
    """``(start, counts)``: the blocks of ``block`` tiles (the last ones along an axis or the
    range cropped) covering first-axis tiles ``[first, last)`` of ``tiles``, in C order."""
    for i0 in range(first, last, block[0]):
        for rest in itertools.product(*(range(0, t, b) for t, b in zip(tiles[1:], block[1:]))):
            start = (i0,) + rest
            yield start, (min(block[0], last - i0),) + tuple(min(b, t - s) for s, b, t in
                                                              zip(rest, block[1:], tiles[1:]))


def _tile_buffers(shapes: _Shapes, block: tuple[int, ...],
                  overlaid: Sequence[Sequence[str]] = ()) -> Callable[[tuple[int, ...]], list[np.ndarray]]:
    """The calling thread's scratch buffers of ``shapes(block)`` (one array carved in pieces), as
    a function of a block's tile counts ``n`` (at most ``block``) giving the contiguous views of
    ``shapes(n)``, in the order of ``shapes`` (kept per ``n``: a layer's blocks take one or two
    shapes).  The sequences of names in ``overlaid`` (buffers never live at the same time) share
    one region, each laid out from its start; every other name has a region of its own."""
    sizes = {name: math.prod(shape(block)) for name, shape in shapes.items()}
    shared = {name for names in overlaid for name in names}
    offsets: dict[str, int] = {}
    end = 0
    for name in shapes:
        if name not in shared:
            offsets[name] = end
            end += sizes[name]
    region = end
    for names in overlaid:
        at = region
        for name in names:
            offsets[name] = at
            at += sizes[name]
        end = max(end, at)
    whole = scratch("winograd tiles", (end,))
    kept: dict[tuple[int, ...], list[np.ndarray]] = {}

    def views(n: tuple[int, ...]) -> list[np.ndarray]:
        found = kept.get(n)
        if found is None:
            found = kept[n] = [whole[offsets[name]:offsets[name] + math.prod(shape(n))].reshape(shape(n))
                               for name, shape in shapes.items()]
        return found
    return views


def _spatial_first(src: np.ndarray, extents: tuple[int, ...], front: tuple[int, ...], name: str) -> np.ndarray:
    """``src (N, C, *spatial)`` as ``(*extents, N, C)`` at offset ``front``, zero elsewhere: the
    calling thread's scratch array ``name``."""
    batch, channels = src.shape[:2]
    rank = len(extents)
    out = scratch(name, extents + (batch, channels))
    box = connect(extents, src.shape[2:], (1,) * rank, front)
    if box is None:
        out[...] = 0
        return out
    sources = [c[0] for c in box]
    targets = [c[1] for c in box]
    out[:targets[0].start] = 0
    out[targets[0].stop:] = 0
    order = tuple(range(2, 2 + rank)) + (0, 1)

    def rows(first: int, last: int) -> None:
        into = out[targets[0].start + first:targets[0].start + last]
        zero_outside(into, targets[1:], 1)
        into[(slice(None),) + tuple(targets[1:])] = \
            src[(slice(None), slice(None), slice(sources[0].start + first, sources[0].start + last))
                + tuple(sources[1:])].transpose(order)

    # The transpose reads src with a stride of a whole plane between neighbours of out: bound
    # by memory latency, it runs on the worker threads in blocks of rows (resnet 3x3
    # (8,64,56,56): 1.5 ms per copy on one thread).
    height = targets[0].stop - targets[0].start
    per_row = math.prod(extents[1:]) * batch * channels
    in_parallel(height, rows, min_per_thread=max(1, MIN_PARALLEL_ELEMENTS // per_row))
    return out


def _data_transform(d: np.ndarray, n: tuple[int, ...], stages: list[np.ndarray], step: int = 2) -> None:
    """``stages[-1] (4,)*rank + n + (N, C)``: ``B^T d_tile B`` of the 4x4(x4) tiles (``step``
    apart) of ``d (*(step*n + 4 - step), N, C)``, one 1-D pass set per axis (``stages[k]``,
    shapes _data_shapes, is the result of the first k + 1 axes')."""
    src = d
    for k, dst in enumerate(stages):
        lead = (slice(None),) * (2 * k)      # the earlier axes' positions and tiles
        taps = [src[lead + (slice(i, i + step * (n[k] - 1) + 1, step),)] for i in range(4)]
        into = (slice(None),) * k
        np.subtract(taps[0], taps[2], out=dst[into + (0,)])
        np.add(taps[1], taps[2], out=dst[into + (1,)])
        np.subtract(taps[2], taps[1], out=dst[into + (2,)])
        np.subtract(taps[1], taps[3], out=dst[into + (3,)])
        src = dst


def _block_transform(dy: np.ndarray, stages: list[np.ndarray]) -> None:
    """``stages[-1] (4,)*rank + n + (N, C)``: ``A b A^T`` of the 2x2(x2) blocks ``b`` of ``dy
    (*(2*n), N, C)``, ``A = [[1, 0], [1, 1], [1, -1], [0, -1]]``, one pass set per axis."""
    src = dy
    for k, dst in enumerate(stages):
        lead = (slice(None),) * (2 * k)      # the earlier axes' positions and tiles
        first, second = src[lead + (slice(0, None, 2),)], src[lead + (slice(1, None, 2),)]
        into = (slice(None),) * k
        np.copyto(dst[into + (0,)], first)
        np.add(first, second, out=dst[into + (1,)])
        np.subtract(first, second, out=dst[into + (2,)])
        np.negative(second, out=dst[into + (3,)])
        src = dst


def _inverse_transform(m: np.ndarray, stages: list[np.ndarray]) -> np.ndarray:
    """``A^T m A`` of the transformed products ``m (4,)*rank + n + (N, C)``, one pass set per axis
    with ``A^T = [[1, 1, 1, 0], [0, 1, -1, -1]]``: ``stages[k]`` (_inverse_shapes) holds the first
    k + 1 axes' outputs next to their tiles; the last one, ``(n[0], 2, n[1], 2, ..., N, C)``, is
    returned."""
    rank = len(stages)
    src = m
    for k, dst in enumerate(stages):
        lead = (slice(None),) * (2 * k)     # the earlier axes' tiles and outputs
        # src[..., a, ...] with this axis' tiles moved next to the earlier ones
        order = _moved(src.ndim - 1, 2 * k + rank - k - 1, 2 * k)
        taps = [src[lead + (a,)].transpose(order) for a in range(4)]
        into = (slice(None),) * (2 * k + 1)
        np.add(taps[0], taps[1], out=dst[into + (0,)])
        dst[into + (0,)] += taps[2]
        np.subtract(taps[1], taps[2], out=dst[into + (1,)])
        dst[into + (1,)] -= taps[3]
        src = dst
    return src


@functools.cache
def _moved(ndim: int, source: int, destination: int) -> tuple[int, ...]:
    """The axes of ``ndim`` dimensions with axis ``source`` moved to ``destination``
    (np.moveaxis's order, without its per-call checks)."""
    axes = list(range(ndim))
    axes.insert(destination, axes.pop(source))
    return tuple(axes)


class _Dilated:
    """A stride-1 convolution dilated by ``d`` (per axis) is ``prod(d)`` undilated ones: output
    ``o = a*d + r`` reads padded X at ``o + t*d = (a + t)*d + r``, so phase ``r`` of Y is the
    undilated convolution of phase ``r`` of padded X.  The phases are stacked in the batch
    (every phase padded to the largest one's size with zeros, which add no term) and handed to
    an undilated WinogradEngine; dX comes back by the inverse rearrangement.  Three copies of
    the data buy the smaller products (DeepLab's dilated 3x3 layers)."""

    def __init__(self, g: Geometry) -> None:
        self.g = g
        self.y_phase = tuple(-(-y // d) for y, d in zip(g.y_size, g.dilation))    # ceil(y / d)
        self.x_phase = tuple(y + 2 for y in self.y_phase)
        count = math.prod(g.dilation)
        rank = len(g.kernel)
        self.inner = WinogradEngine(g.batch * count, g.x_channels, g.y_channels, self.x_phase, self.y_phase,
                                    g.kernel, g.stride, (1,) * rank, (0,) * rank, g.groups, False)

    def gradients(self, x: np.ndarray, dy: np.ndarray, w: np.ndarray, want_input: bool, want_weight: bool) -> Gradients:
        g = self.g
        rank = len(g.kernel)
        xq = self._split(x, self.x_phase, g.pad_lo, "winograd phases x") if want_weight else x
        dyq = self._split(dy, self.y_phase, (0,) * rank, "winograd phases dy")
        dxq, dw = self.inner.gradients(xq, dyq, w, want_input, want_weight)
        if dxq is None:
            return None, dw
        # (N*prod(d), C, *phase) -> dX (N, C, *spatial): x = i*d + r - lo of phase r, position i
        # (every x lies in one phase: phase*d >= lo + size).  Phase by phase, on the worker threads.
        phases = self._phases()
        dxq_split = dxq.reshape((g.batch,) + g.dilation + (dxq.shape[1],) + self.x_phase)
        dx = np.empty((g.batch, dxq.shape[1]) + g.x_size, FLOAT32)
        every = (slice(None), slice(None))

        def place(first: int, last: int) -> None:
            for phase in phases[first:last]:
                box = self._box(g.x_size, self.x_phase, phase, g.pad_lo)
                if box is not None:
                    dx[every + tuple(b[1] for b in box)] = \
                        dxq_split[(slice(None),) + phase + (slice(None),) + tuple(b[0] for b in box)]

        in_parallel(len(phases), place)
        return dx, dw

    def _phases(self) -> list[tuple[int, ...]]:
        return list(itertools.product(*(range(d) for d in self.g.dilation)))

    def _box(self, size: tuple[int, ...], phase_size: tuple[int, ...], phase: tuple[int, ...],
             front: tuple[int, ...]) -> list[tuple[slice, slice]] | None:
        """Per dimension (slice of phase positions i, slice of positions ``i*d + r - front`` of
        an array of ``size``) where they connect, or None if nothing does."""
        return connect(size, phase_size, self.g.dilation, [r - f for r, f in zip(phase, front)])

    def _split(self, a: np.ndarray, phase_size: tuple[int, ...], front: tuple[int, ...], name: str) -> np.ndarray:
        """``a (N, C, *spatial)`` placed at ``front`` in zeros ``(N, C, *(phase*d))``, its phases
        stacked in the batch: ``(N*prod(d), C, *phase)`` with ``[n*dh*dw + rh*dw + rw, c, i, j] =
        padded[n, c, i*dh + rh, j*dw + rw]`` in 2-D (the calling thread's scratch array ``name``).
        Phase by phase, on the worker threads: each copy reads every d-th element of a row."""
        dilation = self.g.dilation
        batch, channels = a.shape[:2]
        out = scratch(name, (batch,) + dilation + (channels,) + phase_size)
        phases = self._phases()
        every = (slice(None), slice(None))

        def fill(first: int, last: int) -> None:
            for phase in phases[first:last]:
                target = out[(slice(None),) + phase]
                box = self._box(a.shape[2:], phase_size, phase, front)
                if box is None:
                    target[...] = 0
                    continue
                inside = [b[0] for b in box]
                zero_outside(target, inside, 2)
                target[every + tuple(inside)] = a[every + tuple(b[1] for b in box)]

        in_parallel(len(phases), fill)
        return out.reshape((batch * math.prod(dilation), channels) + phase_size)
