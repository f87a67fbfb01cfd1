"""The winograd engine: both gradients of an ordinary 2-D 3x3 convolution, stride 1, no
dilation (ResNet's and VGG's 3x3 layers), by Winograd's minimal filtering F(2x2, 3x3).

The input gradient is a stride-1 correlation of dY, padded by ``2 - lo`` in front, with the
kernel reversed and its channel axes swapped: ``dX[n, ci, x] = sum_{co, t} Wf[ci, co, t] *
dYp[n, co, x + t]``.  F(2x2, 3x3) (Lavin & Gray, "Fast Algorithms for Convolutional Neural
Networks", 2016) computes each 2x2 block of dX from a 4x4 tile of dYp (tiles 2 apart) as
``A^T [(G Wf G^T) . (B^T d B)] A``: 16 matrix products ``(Cx/g, Cy/g) @ (Cy/g, tiles)``, one per
element of the 4x4 transformed tile, hold 16 multiply-adds per 2x2 outputs and channel pair
where im2col's product holds 36 - a 2.25x smaller BLAS product, for transforms that are a few
additions per element.  The weight gradient is the same identity with dY's 2x2 blocks as the
filter (F(3x3, 2x2), _weight_grad): 16 products ``(Cy/g, tiles) @ (tiles, Cx/g)`` summed over
the tiles.  The arrays are laid out spatial axes first and (N, channels) last, so the
transforms are NumPy passes over long contiguous runs, in blocks of tiles (BLOCK_BYTES) shared among the
worker threads.  Those copies and the blocks' buffers are the threads' scratch arrays
(_geometry.scratch), kept from call to call: fresh ones were fresh pages, faulted in and zeroed
by the kernel on every call.

Chosen for every mask (LoweredConv) once both channel counts per group reach MIN_CHANNELS.
Measured against the flat engine (its one im2col in Y space feeds both products), one BLAS
thread, process CPU time, interleaved, the benchmark's cases: resnet 3x3 (8,64,56,56) both
gradients 36 ms against 47; (8,128,28,28) gradWeight alone 14 ms against 20.  gradInput alone,
2 cores, wall, interleaved with the flat engine: (8,128,28,28) 11.9 ms against 14.8,
(8,256,14,14) 10.8 against 14.1, (8,64,56,56) 13.9 against 13.9.

Finite data only (the zeros of the padding, and the transforms' cancellations, would turn inf
into NaN).  The transforms round differently from a direct sum: a few float32 ulps of the
largest terms, inside the tolerances of tests/helpers.py.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from typing import Unpack, cast

import numpy as np

from ._geometry import FLOAT32, Geometry, GeometryArgs, Gradients, axis_slices, scratch
from .._common import MIN_PARALLEL_ELEMENTS, in_parallel

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

# G of F(2x2, 3x3): the kernel transform.
_G = np.array([[1.0, 0.0, 0.0], [0.5, 0.5, 0.5], [0.5, -0.5, 0.5], [0.0, 0.0, 1.0]], np.float32)
# G (x) G: the 2-D kernel transform as one (16, 9) matrix, ``[4a + b, 3i + j] = G[a, i] G[b, j]``,
# and the same with the kernel reversed (columns in reverse order: reversing both axes of a
# 3x3 kernel reverses its 9 flat taps).  One matrix product per call instead of an einsum:
# 0.7 ms of the 7.6 ms gradInput of resnet 3x3 (8,128,28,28) went to einsum's two bmm passes.
_GG = np.kron(_G, _G)
_GG_REVERSED = np.ascontiguousarray(_GG[:, ::-1])


def applies(g: Geometry) -> bool:
    """An ordinary 2-D convolution with a 3x3 kernel and stride 1 (any dilation: _Dilated)."""
    return not g.transposed and len(g.kernel) == 2 and g.kernel == (3, 3) and g.stride == (1, 1)


def worthwhile(g: Geometry) -> bool:
    """Enough channels per group for the smaller product to pay for the transforms."""
    return min(g.x_channels, g.y_channels) // g.groups >= MIN_CHANNELS


class WinogradEngine(Geometry):
    name = "winograd"
    blas_in_workers = True     # each block's 16 products, on the worker that transformed it

    def __init__(self, *geometry: Unpack[GeometryArgs]) -> None:
        super().__init__(*geometry)
        #: A dilated convolution is computed as the undilated one of its phases (_Dilated).
        self._dilated = None if self.dilation == (1, 1) else _Dilated(self)
        h, w = self.x_size
        self._tiles = ((h + 1) // 2, (w + 1) // 2)
        # dY placed at offset 2 - lo in a zero image covering every tile's 4x4 reads.
        self._padded = tuple(2 * t + 2 for t in self._tiles)
        self._front = tuple(2 - lo for lo in self.pad_lo)
        # The weight gradient tiles Y instead: 2x2 blocks of dY, 4x4 tiles of X padded by lo.
        self._y_tiles = tuple((y + 1) // 2 for y in self.y_size)

    @property
    def elements(self) -> int:
        """Elements of the padded copies of X and dY (the dilation phases' when dilated), the
        largest buffers; the transforms' are about 3 x BLOCK_BYTES per worker."""
        if self._dilated is not None:
            inner = self._dilated.inner
            return inner.elements + inner.batch * (inner.x_channels * math.prod(inner.x_size)
                                                   + inner.y_channels * math.prod(inner.y_size))
        y_padded = tuple(2 * t + 2 for t in self._y_tiles)
        return self.batch * (max(self.x_channels * math.prod(y_padded), self.y_channels * math.prod(self._padded))
                             + self.y_channels * math.prod(y_padded))

    def gradients(self, x: np.ndarray, dy: np.ndarray, w: np.ndarray, want_input: bool, want_weight: bool) -> Gradients:
        """``(gradInput, gradWeight)``, None where not wanted (``Geometry``)."""
        if self._dilated is not None:
            return self._dilated.gradients(x, dy, w, want_input, want_weight)
        # dY laid out spatial first once for both gradients (one pass over dY, 1.4 ms of the
        # resnet 3x3 (8,64,56,56) call): the weight gradient reads the view of the input
        # gradient's padded copy at dY's origin, zero past dY like its own (_weight_dy).
        d = _spatial_first(dy, self._padded, self._front, "winograd dy") if want_input else None
        grad_input = self._input_grad(d, w) if d is not None else None
        return grad_input, (self._weight_grad(x, dy, d) if want_weight else None)

    def _weight_dy(self, dy: np.ndarray, d: np.ndarray | None) -> np.ndarray:
        """dY as ``(2*th, 2*tw, N, Cy)`` over the weight gradient's 2x2 blocks, zero past dY:
        a view of the input gradient's copy ``d`` when it reaches that far, else a copy."""
        extents = tuple(2 * t for t in self._y_tiles)
        if d is not None and all(f + e <= size for f, e, size in zip(self._front, extents, d.shape)):
            (fh, fw), (eh, ew) = self._front, extents
            return d[fh:fh + eh, fw:fw + ew]
        return _spatial_first(dy, extents, (0, 0), "winograd dy")

    def _input_grad(self, d: np.ndarray, w: np.ndarray) -> np.ndarray:
        """dX from ``d (Hp, Wp, N, Cy)``: dY padded by ``2 - lo`` in front, zero outside dY."""
        # Every array is laid out spatial axes first, (N, channels) last: the transforms then
        # combine whole contiguous (N x channels) blocks (long vectorised loops), and each of the
        # 16 products is one (N*tiles, Cy) @ (Cy, Cx) BLAS product.
        batch, groups = self.batch, self.groups
        cy, cx = self.y_channels, self.x_channels
        cy_g, cx_g = cy // groups, cx // groups
        th, tw = self._tiles

        # G Wf G^T with Wf[g, ci, co] = W[g*cy_g + co, ci] reversed, as (16, groups, Cy/g, Cx/g).
        u = np.matmul(_GG_REVERSED, w.reshape(-1, 9).T).reshape(16, groups, cy_g, cx_g)

        h, w_ = self.x_size
        out = np.empty((batch, cx, h, w_), FLOAT32)
        # Blocks of nb x nc tiles (_block_shape): the buffers are made once per thread and stay in
        # cache from the transform to the product to the output.
        step, width = _block_shape(tw, batch * max(cx, cy))
        shapes: dict[str, Callable[[int, int], tuple[int, ...]]] = {
            "t1": lambda nb, nc: (4, nb, 2 * nc + 2, batch, cy), "v": lambda nb, nc: (4, 4, nb, nc, batch, cy),
            "m": lambda nb, nc: (16, nb * nc * batch, cx), "r": lambda nb, nc: (nb, 2, 4, nc, batch, cx),
            "y": lambda nb, nc: (nb, 2, nc, 2, batch, cx)}

        def run(first: int, last: int) -> None:
            buffers = _tile_buffers(shapes, step, width)
            for i0, nb, j0, nc in _blocks(first, last, step, tw, width):
                # contiguous views of the scratch buffers for this block
                t1, v, m, r, y = (buffers[name][:math.prod(shape(nb, nc))].reshape(shape(nb, nc))
                                  for name, shape in shapes.items())
                self._tile_block(d[2 * i0:2 * (i0 + nb) + 2, 2 * j0:2 * (j0 + nc) + 2], u, nb, nc, t1, v, m, r, y)
                # y[i, p, j, q, n, c] is dX[n, c, 2(i0 + i) + p, 2(j0 + j) + q]: the block of dX
                # spatial axes first, put in place by one transposing copy whose inner loop runs
                # along dX's rows.  (Laid out (p, q, i, j, n, c) its inner loop was q's 2
                # elements: 3.5 ms of resnet 3x3 (8,64,56,56)'s gradInput on one thread.)
                rows, cols = min(2 * nb, h - 2 * i0), min(2 * nc, w_ - 2 * j0)
                out[:, :, 2 * i0:2 * i0 + rows, 2 * j0:2 * j0 + cols] = \
                    y.reshape(2 * nb, 2 * nc, batch, cx)[:rows, :cols].transpose(2, 3, 0, 1)

        # The tile rows are independent: shared evenly among the worker threads, each taking
        # its share in blocks of ``step`` rows (the transforms are single-threaded NumPy passes;
        # each block's products are BLAS calls of their own).  Measured, 2 cores, gradInput of
        # (8,128,28,28): 11.9 ms wall, 15.5 ms in one thread.  (Whole blocks shared out left
        # the workers 8 and 6 of its 14 tile rows, 4 and 3 blocks of resnet (8,64,56,56)'s 7.)
        in_parallel(th, run)
        return out

    def _weight_grad(self, x: np.ndarray, dy: np.ndarray, d: np.ndarray | None) -> np.ndarray:
        """dW by F(3x3, 2x2), the same identity read for the weight: ``dW[t] = sum_o dY[o] Xp[o + t]``
        (Xp: X padded by lo in front) sums, over the 2x2 blocks of dY, ``G^T [(A dY_b A^T) .
        (B^T Xp_b B)] G`` with ``Xp_b`` the 4x4 tile of Xp under the block; the sum over the blocks
        commutes with ``G^T . G``, so it is 16 products ``(Cy/g, blocks*N) @ (blocks*N, Cx/g)``
        summed in the transformed domain (2.25x fewer multiply-adds than im2col's) and one tiny
        transform at the end.  ``A = (A^T)^T`` and ``G`` are F(2x2, 3x3)'s: for a correlation,
        ``[p == i + t] = sum_k A^T[i, k] G[k, t] B^T[k, p]`` holds whichever of (i, t) is the
        filter.  X's transform is the input gradient's transform of dY (_data_transform).
        ``d``: the input gradient's copy of dY, if made (_weight_dy)."""
        batch, groups = self.batch, self.groups
        cy, cx = self.y_channels, self.x_channels
        cy_g, cx_g = cy // groups, cx // groups
        th, tw = self._y_tiles
        xp = _spatial_first(x, (2 * th + 2, 2 * tw + 2), self.pad_lo, "winograd x")   # (Hp, Wp, N, Cx)
        dyp = self._weight_dy(dy, d)                                          # (2th, 2tw, N, Cy)
        # Blocks of tiles as in _input_grad; each worker sums its blocks' products.
        step, width = _block_shape(tw, batch * max(cx, cy))
        shapes: dict[str, Callable[[int, int], tuple[int, ...]]] = {
            "t1": lambda nb, nc: (4, nb, 2 * nc + 2, batch, cx), "v": lambda nb, nc: (4, 4, nb, nc, batch, cx),
            "s1": lambda nb, nc: (4, nb, 2 * nc, batch, cy), "u": lambda nb, nc: (4, 4, nb, nc, batch, cy)}
        sums: list[np.ndarray] = []

        def run(first: int, last: int) -> None:
            buffers = _tile_buffers(shapes, step, width)
            total = np.zeros((16, groups, cy_g, cx_g), FLOAT32)
            product = np.empty_like(total)
            for i0, nb, j0, nc in _blocks(first, last, step, tw, width):
                t1, v, s1, u = (buffers[name][:math.prod(shape(nb, nc))].reshape(shape(nb, nc))
                                for name, shape in shapes.items())
                _data_transform(xp[2 * i0:2 * (i0 + nb) + 2, 2 * j0:2 * (j0 + nc) + 2], nb, nc, t1, v)
                _block_transform(dyp[2 * i0:2 * (i0 + nb), 2 * j0:2 * (j0 + nc)], s1, u)
                um, vm = u.reshape(16, -1, cy), v.reshape(16, -1, cx)
                for g in range(groups):
                    np.matmul(um[:, :, g * cy_g:(g + 1) * cy_g].swapaxes(1, 2), vm[:, :, g * cx_g:(g + 1) * cx_g],
                              out=product[:, g])
                total += product
            sums.append(total)     # list.append is atomic

        in_parallel(th, run)
        m = sums[0] if len(sums) == 1 else np.sum(sums, axis=0)
        # G^T M G per channel pair: (Cy*Cx/g, 16) @ (16, 9) is dW's layout (Cy, Cx/g, 3, 3).
        dw: np.ndarray = np.matmul(m.reshape(16, -1).T, _GG)
        return dw.reshape(cy, cx_g, 3, 3)

    def _tile_block(self, d: np.ndarray, u: np.ndarray, nb: int, nc: int, t1: np.ndarray, v: np.ndarray,
                    m: np.ndarray, r: np.ndarray, y: np.ndarray) -> None:
        """``y (nb, 2, nc, 2, N, Cx)``: the output blocks of ``nb x nc`` tiles from their padded dY
        ``d (2*nb + 2, 2*nc + 2, N, Cy)`` (the other arrays are scratch of their shapes)."""
        groups = self.groups
        cy, cx = self.y_channels, self.x_channels
        cy_g, cx_g = cy // groups, cx // groups
        _data_transform(d, nb, nc, t1, v)
        # The 16 products: M (16, nb*tw*N, Cx).
        vm = v.reshape(16, -1, cy)
        if groups == 1:
            np.matmul(vm, u[:, 0], out=m)
        else:
            for g in range(groups):
                m[:, :, g * cx_g:(g + 1) * cx_g] = np.matmul(vm[:, :, g * cy_g:(g + 1) * cy_g], u[:, g])
        # A^T M A with A^T = [[1, 1, 1, 0], [0, 1, -1, -1]]: rows then columns, from
        # mt[a, i, b, j] = M[a, b, i, j] into r[i, p, b, j] into y[i, p, j, q].
        mt = m.reshape((4, 4, nb, nc) + r.shape[4:]).swapaxes(1, 2)
        np.add(mt[0], mt[1], out=r[:, 0])
        r[:, 0] += mt[2]
        np.subtract(mt[1], mt[2], out=r[:, 1])
        r[:, 1] -= mt[3]
        np.add(r[:, :, 0], r[:, :, 1], out=y[:, :, :, 0])
        y[:, :, :, 0] += r[:, :, 2]
        np.subtract(r[:, :, 1], r[:, :, 2], out=y[:, :, :, 1])
        y[:, :, :, 1] -= r[:, :, 3]


def _block_shape(tw: int, per_position: int) -> tuple[int, int]:
    """``(rows, columns)`` of tiles per block, for tile rows of ``tw`` tiles: whole tile rows
    while one row's 16 transformed tiles of ``per_position`` floats each fit BLOCK_BYTES, else
    even pieces of one row."""
    fit = max(1, BLOCK_BYTES // (16 * per_position * FLOAT32.itemsize))
    if fit >= tw:
        return fit // tw, tw
    pieces = -(-tw // fit)
    return 1, -(-tw // pieces)


def _blocks(first: int, last: int, rows: int, tw: int, columns: int) -> Iterator[tuple[int, int, int, int]]:
    """``(i0, nb, j0, nc)``: the blocks of ``rows x columns`` tiles (the last ones of a row or
    of the range cropped) covering tile rows ``[first, last)`` of ``tw`` tiles, row by row."""
    for i0 in range(first, last, rows):
        for j0 in range(0, tw, columns):
            yield i0, min(rows, last - i0), j0, min(columns, tw - j0)


def _tile_buffers(shapes: dict[str, Callable[[int, int], tuple[int, ...]]], rows: int,
                  columns: int) -> dict[str, np.ndarray]:
    """The calling thread's scratch buffers of ``shapes(rows, columns)`` (one array carved in pieces)."""
    sizes = {name: math.prod(shape(rows, columns)) for name, shape in shapes.items()}
    whole = scratch("winograd tiles", (sum(sizes.values()),))
    buffers = {}
    start = 0
    for name, size in sizes.items():
        buffers[name] = whole[start:start + size]
        start += size
    return buffers


def _spatial_first(src: np.ndarray, extents: tuple[int, ...], front: tuple[int, ...], name: str) -> np.ndarray:
    """``src (N, C, H, W)`` as ``(*extents, N, C)`` at offset ``front``, zero elsewhere: the
    calling thread's scratch array ``name``."""
    batch, channels = src.shape[:2]
    out = scratch(name, extents + (batch, channels))
    box = [axis_slices(extent, size, 1, f) for extent, size, f in zip(extents, src.shape[2:], front)]
    if any(c is None for c in box):
        out[...] = 0
        return out
    (src_h, dst_h), (src_w, dst_w) = cast(list[tuple[slice, slice]], box)   # none is None (above)
    out[:dst_h.start] = 0
    out[dst_h.stop:] = 0

    def rows(first: int, last: int) -> None:
        into = slice(dst_h.start + first, dst_h.start + last)
        out[into, :dst_w.start] = 0
        out[into, dst_w.stop:] = 0
        out[into, dst_w] = src[:, :, src_h.start + first:src_h.start + last, src_w].transpose(2, 3, 0, 1)

    # The transpose reads src with a stride of a whole plane between neighbours of out: bound
    # by memory latency, it runs on the worker threads in blocks of rows (resnet 3x3
    # (8,64,56,56): 1.5 ms per copy on one thread).
    height = dst_h.stop - dst_h.start
    in_parallel(height, rows, min_per_thread=max(1, MIN_PARALLEL_ELEMENTS // (extents[1] * batch * channels)))
    return out


def _data_transform(d: np.ndarray, nb: int, tw: int, t1: np.ndarray, v: np.ndarray) -> None:
    """``v (4, 4, nb, tw, N, C)``: ``B^T d_tile B`` of the 4x4 tiles (2 apart) of ``d (2*nb + 2,
    2*tw + 2, N, C)`` (``tw``: the block's tile columns), rows then columns (``t1 (4, nb,
    2*tw + 2, N, C)`` is scratch)."""
    rows = [d[k:k + 2 * nb - 1:2] for k in range(4)]
    np.subtract(rows[0], rows[2], out=t1[0])
    np.add(rows[1], rows[2], out=t1[1])
    np.subtract(rows[2], rows[1], out=t1[2])
    np.subtract(rows[1], rows[3], out=t1[3])
    cols = [t1[:, :, k:k + 2 * tw - 1:2] for k in range(4)]
    np.subtract(cols[0], cols[2], out=v[:, 0])
    np.add(cols[1], cols[2], out=v[:, 1])
    np.subtract(cols[2], cols[1], out=v[:, 2])
    np.subtract(cols[1], cols[3], out=v[:, 3])


def _block_transform(dy: np.ndarray, s1: np.ndarray, u: np.ndarray) -> None:
    """``u (4, 4, nb, tw, N, C)``: ``A b A^T`` of the 2x2 blocks ``b`` of ``dy (2*nb, 2*tw, N, C)``,
    ``A = [[1, 0], [1, 1], [1, -1], [0, -1]]``, rows then columns (``s1 (4, nb, 2*tw, N, C)``
    is scratch)."""
    top, bottom = dy[0::2], dy[1::2]
    np.copyto(s1[0], top)
    np.add(top, bottom, out=s1[1])
    np.subtract(top, bottom, out=s1[2])
    np.negative(bottom, out=s1[3])
    left, right = s1[:, :, 0::2], s1[:, :, 1::2]
    np.copyto(u[:, 0], left)
    np.add(left, right, out=u[:, 1])
    np.subtract(left, right, out=u[:, 2])
    np.negative(right, out=u[:, 3])


class _Dilated:
    """A stride-1 convolution dilated by ``d = (dh, dw)`` is ``dh*dw`` undilated ones: output
    ``o = a*d + r`` reads padded X at ``o + t*d = (a + t)*d + r``, so phase ``r`` of Y is the
    undilated convolution of phase ``r`` of padded X.  The phases are stacked in the batch
    (every phase padded to the largest one's size with zeros, which add no term) and handed to
    an undilated WinogradEngine; dX comes back by the inverse rearrangement.  Three copies of
    the data buy the 2.25x smaller products (DeepLab's dilated 3x3 layers)."""

    def __init__(self, g: Geometry) -> None:
        self.g = g
        self.y_phase = tuple(-(-y // d) for y, d in zip(g.y_size, g.dilation))    # ceil(y / d)
        self.x_phase = tuple(y + 2 for y in self.y_phase)
        count = math.prod(g.dilation)
        self.inner = WinogradEngine(g.batch * count, g.x_channels, g.y_channels, self.x_phase, self.y_phase,
                                    g.kernel, g.stride, (1, 1), (0, 0), g.groups, False)

    def gradients(self, x: np.ndarray, dy: np.ndarray, w: np.ndarray, want_input: bool, want_weight: bool) -> Gradients:
        g = self.g
        xq = self._split(x, self.x_phase, g.pad_lo, "winograd phases x") if want_weight else x
        dyq = self._split(dy, self.y_phase, (0, 0), "winograd phases dy")
        dxq, dw = self.inner.gradients(xq, dyq, w, want_input, want_weight)
        if dxq is None:
            return None, dw
        # (N*dh*dw, C, hq, wq) -> dX (N, C, H, W): x = i*d + r - lo of phase r, position i
        # (every x lies in one phase: hq*dh >= lo + H).  Phase by phase, on the worker threads.
        g_dh, g_dw = g.dilation
        phases = self._phases()
        dxq6 = dxq.reshape((g.batch, g_dh, g_dw, dxq.shape[1]) + self.x_phase)
        dx = np.empty((g.batch, dxq.shape[1]) + g.x_size, FLOAT32)

        def place(first: int, last: int) -> None:
            for rh, rw in phases[first:last]:
                box = self._box(g.x_size, self.x_phase, (rh, rw), g.pad_lo)
                if box is not None:
                    (ih, xh), (iw, xw) = box
                    dx[:, :, xh, xw] = dxq6[:, rh, rw, :, ih, iw]

        in_parallel(len(phases), place)
        return dx, dw

    def _phases(self) -> list[tuple[int, int]]:
        return [(rh, rw) for rh in range(self.g.dilation[0]) for rw in range(self.g.dilation[1])]

    def _box(self, size: tuple[int, ...], phase_size: tuple[int, ...], phase: tuple[int, int],
             front: tuple[int, ...]) -> tuple[tuple[slice, slice], tuple[slice, slice]] | None:
        """Per dimension (slice of phase positions i, slice of positions ``i*d + r - front`` of
        an array of ``size``) where they connect, or None if nothing does."""
        box = [axis_slices(n, extent, d, r - f)
               for n, extent, d, r, f in zip(size, phase_size, self.g.dilation, phase, front)]
        if box[0] is None or box[1] is None:
            return None
        return box[0], box[1]

    def _split(self, a: np.ndarray, phase_size: tuple[int, ...], front: tuple[int, ...], name: str) -> np.ndarray:
        """``a (N, C, H, W)`` placed at ``front`` in zeros ``(N, C, ph*dh, pw*dw)``, its phases
        stacked in the batch: ``(N*dh*dw, C, ph, pw)`` with ``[n*dh*dw + rh*dw + rw, c, i, j] =
        padded[n, c, i*dh + rh, j*dw + rw]`` (the calling thread's scratch array ``name``).
        Phase by phase, on the worker threads: each copy reads every d-th element of a row."""
        (dh, dw), (ph, pw) = self.g.dilation, phase_size
        batch, channels = a.shape[:2]
        out = scratch(name, (batch, dh, dw, channels, ph, pw))
        phases = self._phases()

        def fill(first: int, last: int) -> None:
            for rh, rw in phases[first:last]:
                target = out[:, rh, rw]
                box = self._box(a.shape[2:], phase_size, (rh, rw), front)
                if box is None:
                    target[...] = 0
                    continue
                (ih, sh), (iw, sw) = box
                target[:, :, :ih.start] = 0
                target[:, :, ih.stop:] = 0
                target[:, :, ih, :iw.start] = 0
                target[:, :, ih, iw.stop:] = 0
                target[:, :, ih, iw] = a[:, :, sh, sw]

        in_parallel(len(phases), fill)
        return out.reshape(batch * dh * dw, channels, ph, pw)
