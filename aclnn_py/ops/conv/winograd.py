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
transforms are NumPy passes over long contiguous runs, in blocks of tile rows shared among the
worker threads.

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
from collections.abc import Callable
from typing import Unpack, cast

import numpy as np

from ._geometry import FLOAT32, Geometry, GeometryArgs, Gradients, axis_slices, spread
from . import flat
from .._common import in_parallel

# Chosen when both channel counts per group are at least this: per 2x2 outputs and channel
# pair the BLAS product saves 20 of 36 multiply-adds (~2.25x), while the transforms cost about
# 16 loads, stores and additions per element and channel on each side - a cost per element
# that the saving, growing with the channels the element meets, passes at a few dozen.
# Measured (one BLAS thread, process CPU time, Winograd over the flat engine, each mask, 3x3
# pad 1, Cin = Cout = C, (8, C, 28, 28) and (4, C, 56, 56)): C = 16: 0.9-3.2, 32: 0.9-2.5,
# 48: 0.87-1.04, 64: 0.82-0.90, 96 and 128: 0.70-0.77.  (ResNet's 3x3 layers have 64-512.)
MIN_CHANNELS = 64

# G of F(2x2, 3x3): the kernel transform.
_G = np.array([[1.0, 0.0, 0.0], [0.5, 0.5, 0.5], [0.5, -0.5, 0.5], [0.0, 0.0, 1.0]], np.float32)


def applies(g: Geometry) -> bool:
    """An ordinary 2-D convolution with a 3x3 kernel and stride 1 (any dilation: _Dilated)."""
    return not g.transposed and len(g.kernel) == 2 and g.kernel == (3, 3) and g.stride == (1, 1)


def worthwhile(g: Geometry) -> bool:
    """Enough channels per group for the smaller product to pay for the transforms."""
    return min(g.x_channels, g.y_channels) // g.groups >= MIN_CHANNELS


class WinogradEngine(Geometry):
    name = "winograd"

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
        largest buffers; the transforms' are about CHUNK_BYTES per worker."""
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
        return (self._input_grad(dy, w) if want_input else None), (self._weight_grad(x, dy) if want_weight else None)

    def _input_grad(self, dy: np.ndarray, w: np.ndarray) -> np.ndarray:
        # Every array is laid out spatial axes first, (N, channels) last: the transforms then
        # combine whole contiguous (N x channels) blocks (long vectorised loops), and each of the
        # 16 products is one (N*tiles, Cy) @ (Cy, Cx) BLAS product.
        batch, groups = self.batch, self.groups
        cy, cx = self.y_channels, self.x_channels
        cy_g, cx_g = cy // groups, cx // groups
        th, tw = self._tiles
        hp, wp = self._padded

        # dYp: (Hp, Wp, N, Cy), zero outside dY.
        d = _spatial_first(dy, self._padded, self._front)

        # G Wf G^T with Wf[g, ci, co] = W[g*cy_g + co, ci] reversed, as (16, groups, Cy/g, Cx/g).
        wf = w.reshape(groups, cy_g, cx_g, 3, 3)[..., ::-1, ::-1]
        u = np.einsum("ai,bj,gocij->abgoc", _G, _G, wf, optimize=True)
        u = np.ascontiguousarray(u, FLOAT32).reshape(16, groups, cy_g, cx_g)

        h, w_ = self.x_size
        out = np.empty((batch, cx, h, w_), FLOAT32)
        # Blocks of tile rows whose transformed tiles take about flat.CHUNK_BYTES: the buffers are
        # made once per thread and stay in cache from the transform to the product to the output.
        step = max(1, flat.CHUNK_BYTES // (16 * tw * batch * max(cx, cy) * FLOAT32.itemsize))
        shapes: dict[str, Callable[[int], tuple[int, ...]]] = {"t1": lambda nb: (4, nb, wp, batch, cy), "v": lambda nb: (4, 4, nb, tw, batch, cy),
                  "m": lambda nb: (16, nb * tw * batch, cx), "r": lambda nb: (2, 4, nb, tw, batch, cx),
                  "y": lambda nb: (2, 2, nb, tw, batch, cx)}
        starts = list(range(0, th, step))

        def run(first: int, last: int) -> None:
            scratch = {name: np.empty(math.prod(shape(step)), FLOAT32) for name, shape in shapes.items()}
            for i0 in starts[first:last]:
                nb = min(step, th - i0)
                # contiguous views of the scratch buffers for this block
                t1, v, m, r, y = (scratch[name][:math.prod(shape(nb))].reshape(shape(nb))
                                  for name, shape in shapes.items())
                self._tile_rows(d[2 * i0:2 * (i0 + nb) + 2], u, nb, t1, v, m, r, y)
                # y[p, q, i, j, n, c] is dX[n, c, 2(i0 + i) + p, 2j + q].
                rows = min(2 * nb, h - 2 * i0)
                self._place(y, out[:, :, 2 * i0:2 * i0 + rows], rows, w_)

        # The blocks are independent: shared among the worker threads (the transforms are
        # single-threaded NumPy passes; each block's products are BLAS calls of their own).
        # Measured, 2 cores, gradInput of (8,128,28,28): 11.9 ms wall, 15.5 ms in one thread.
        in_parallel(len(starts), run)
        return out

    def _weight_grad(self, x: np.ndarray, dy: np.ndarray) -> np.ndarray:
        """dW by F(3x3, 2x2), the same identity read for the weight: ``dW[t] = sum_o dY[o] Xp[o + t]``
        (Xp: X padded by lo in front) sums, over the 2x2 blocks of dY, ``G^T [(A dY_b A^T) .
        (B^T Xp_b B)] G`` with ``Xp_b`` the 4x4 tile of Xp under the block; the sum over the blocks
        commutes with ``G^T . G``, so it is 16 products ``(Cy/g, blocks*N) @ (blocks*N, Cx/g)``
        summed in the transformed domain (2.25x fewer multiply-adds than im2col's) and one tiny
        transform at the end.  ``A = (A^T)^T`` and ``G`` are F(2x2, 3x3)'s: for a correlation,
        ``[p == i + t] = sum_k A^T[i, k] G[k, t] B^T[k, p]`` holds whichever of (i, t) is the
        filter.  X's transform is the input gradient's transform of dY (_data_transform)."""
        batch, groups = self.batch, self.groups
        cy, cx = self.y_channels, self.x_channels
        cy_g, cx_g = cy // groups, cx // groups
        th, tw = self._y_tiles
        xp = _spatial_first(x, (2 * th + 2, 2 * tw + 2), self.pad_lo)       # (Hp, Wp, N, Cx)
        dyp = _spatial_first(dy, (2 * th, 2 * tw), (0, 0))                  # (2th, 2tw, N, Cy)
        wp = 2 * tw + 2
        # Blocks of tile rows as in _input_grad; each worker sums its blocks' products.
        step = max(1, flat.CHUNK_BYTES // (16 * tw * batch * max(cx, cy) * FLOAT32.itemsize))
        shapes: dict[str, Callable[[int], tuple[int, ...]]] = {
            "t1": lambda nb: (4, nb, wp, batch, cx), "v": lambda nb: (4, 4, nb, tw, batch, cx),
            "s1": lambda nb: (4, nb, 2 * tw, batch, cy), "u": lambda nb: (4, 4, nb, tw, batch, cy)}
        starts = list(range(0, th, step))
        sums: list[np.ndarray] = []

        def run(first: int, last: int) -> None:
            scratch = {name: np.empty(math.prod(shape(step)), FLOAT32) for name, shape in shapes.items()}
            total = np.zeros((16, groups, cy_g, cx_g), FLOAT32)
            product = np.empty_like(total)
            for i0 in starts[first:last]:
                nb = min(step, th - i0)
                t1, v, s1, u = (scratch[name][:math.prod(shape(nb))].reshape(shape(nb))
                                for name, shape in shapes.items())
                _data_transform(xp[2 * i0:2 * (i0 + nb) + 2], nb, tw, t1, v)
                _block_transform(dyp[2 * i0:2 * (i0 + nb)], s1, u)
                um, vm = u.reshape(16, -1, cy), v.reshape(16, -1, cx)
                for g in range(groups):
                    np.matmul(um[:, :, g * cy_g:(g + 1) * cy_g].swapaxes(1, 2), vm[:, :, g * cx_g:(g + 1) * cx_g],
                              out=product[:, g])
                total += product
            sums.append(total)     # list.append is atomic

        in_parallel(len(starts), run)
        m = sums[0] if len(sums) == 1 else np.sum(sums, axis=0)
        dw = np.einsum("ak,bl,abgoc->gockl", _G, _G, m.reshape(4, 4, groups, cy_g, cx_g), optimize=True)
        return np.ascontiguousarray(dw, FLOAT32).reshape(cy, cx_g, 3, 3)

    def _tile_rows(self, d: np.ndarray, u: np.ndarray, nb: int, t1: np.ndarray, v: np.ndarray, m: np.ndarray,
                   r: np.ndarray, y: np.ndarray) -> None:
        """``y (2, 2, nb, tw, N, Cx)``: the output blocks of ``nb`` tile rows from their padded dY
        rows ``d (2*nb + 2, Wp, N, Cy)`` (the other arrays are scratch of their shapes)."""
        groups = self.groups
        cy, cx = self.y_channels, self.x_channels
        cy_g, cx_g = cy // groups, cx // groups
        tw = self._tiles[1]
        _data_transform(d, nb, tw, t1, v)
        # The 16 products: M (16, nb*tw*N, Cx).
        vm = v.reshape(16, -1, cy)
        if groups == 1:
            np.matmul(vm, u[:, 0], out=m)
        else:
            for g in range(groups):
                m[:, :, g * cx_g:(g + 1) * cx_g] = np.matmul(vm[:, :, g * cy_g:(g + 1) * cy_g], u[:, g])
        m6 = m.reshape((4, 4) + r.shape[2:])
        # A^T M A with A^T = [[1, 1, 1, 0], [0, 1, -1, -1]]: rows then columns.
        np.add(m6[0], m6[1], out=r[0])
        r[0] += m6[2]
        np.subtract(m6[1], m6[2], out=r[1])
        r[1] -= m6[3]
        np.add(r[:, 0], r[:, 1], out=y[:, 0])
        y[:, 0] += r[:, 2]
        np.subtract(r[:, 1], r[:, 2], out=y[:, 1])
        y[:, 1] -= r[:, 3]

    @staticmethod
    def _place(y: np.ndarray, out: np.ndarray, rows: int, width: int) -> None:
        """``out (N, Cx, rows, width)[n, c, 2i + p, 2j + q] = y[p, q, i, j, n, c]``."""
        batch, cx = out.shape[:2]
        hh, wh = rows // 2, width // 2
        out[:, :, :2 * hh, :2 * wh].reshape(batch, cx, hh, 2, wh, 2)[...] = \
            y[:, :, :hh, :wh].transpose(4, 5, 2, 0, 3, 1)
        if rows % 2:
            out[:, :, rows - 1, :2 * wh].reshape(batch, cx, wh, 2)[...] = y[0, :, hh, :wh].transpose(2, 3, 1, 0)
        if width % 2:
            out[:, :, :, width - 1] = y[:, 0, :, wh].transpose(2, 3, 1, 0).reshape(batch, cx, -1)[:, :, :rows]


def _spatial_first(src: np.ndarray, extents: tuple[int, ...], front: tuple[int, ...]) -> np.ndarray:
    """``src (N, C, H, W)`` as ``(*extents, N, C)`` at offset ``front``, zero elsewhere."""
    batch, channels = src.shape[:2]
    out = np.empty(extents + (batch, channels), FLOAT32)
    box = [axis_slices(extent, size, 1, f) for extent, size, f in zip(extents, src.shape[2:], front)]
    if any(c is None for c in box):
        out[...] = 0
        return out
    (src_h, dst_h), (src_w, dst_w) = cast(list[tuple[slice, slice]], box)   # none is None (above)
    out[:dst_h.start] = 0
    out[dst_h.stop:] = 0
    out[dst_h, :dst_w.start] = 0
    out[dst_h, dst_w.stop:] = 0
    out[dst_h, dst_w] = src[:, :, src_h, src_w].transpose(2, 3, 0, 1)
    return out


def _data_transform(d: np.ndarray, nb: int, tw: int, t1: np.ndarray, v: np.ndarray) -> None:
    """``v (4, 4, nb, tw, N, C)``: ``B^T d_tile B`` of the 4x4 tiles (2 apart) of ``d (2*nb + 2,
    2*tw + 2, N, C)``, rows then columns (``t1 (4, nb, 2*tw + 2, N, C)`` is scratch)."""
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
        xq = self._split(x, self.x_phase, g.pad_lo) if want_weight else x
        dyq = self._split(dy, self.y_phase, (0, 0))
        dxq, dw = self.inner.gradients(xq, dyq, w, want_input, want_weight)
        if dxq is None:
            return None, dw
        (dh, dw_), (hq, wq) = g.dilation, self.x_phase
        channels = dxq.shape[1]
        # (N*dh*dw, C, hq, wq) -> (N, C, hq*dh, wq*dw), cropped to X (at pad_lo).
        whole = dxq.reshape(g.batch, dh, dw_, channels, hq, wq).transpose(0, 3, 4, 1, 5, 2)
        whole = whole.reshape(g.batch, channels, hq * dh, wq * dw_)
        (lo_h, lo_w), (h, w_) = g.pad_lo, g.x_size
        return np.ascontiguousarray(whole[:, :, lo_h:lo_h + h, lo_w:lo_w + w_]), dw

    def _split(self, a: np.ndarray, phase_size: tuple[int, ...], front: tuple[int, ...]) -> np.ndarray:
        """``a (N, C, H, W)`` placed at ``front`` in zeros ``(N, C, ph*dh, pw*dw)``, its phases
        stacked in the batch: ``(N*dh*dw, C, ph, pw)`` with ``[n*dh*dw + rh*dw + rw, c, i, j] =
        padded[n, c, i*dh + rh, j*dw + rw]``."""
        (dh, dw), (ph, pw) = self.g.dilation, phase_size
        batch, channels = a.shape[:2]
        out = np.empty((batch, dh, dw, channels, ph, pw), FLOAT32)
        padded = spread(a, (ph * dh, pw * dw), (1, 1), front)
        out[...] = padded.reshape(batch, channels, ph, dh, pw, dw).transpose(0, 3, 5, 1, 2, 4)
        return out.reshape(batch * dh * dw, channels, ph, pw)
