"""The winograd engine: the input gradient of an ordinary 2-D 3x3 convolution, stride 1, no
dilation (ResNet's and VGG's 3x3 layers), by Winograd's minimal filtering F(2x2, 3x3).

The input gradient is a stride-1 correlation of dY, padded by ``2 - lo`` in front, with the
kernel reversed and its channel axes swapped: ``dX[n, ci, x] = sum_{co, t} Wf[ci, co, t] *
dYp[n, co, x + t]``.  F(2x2, 3x3) (Lavin & Gray, "Fast Algorithms for Convolutional Neural
Networks", 2016) computes each 2x2 block of dX from a 4x4 tile of dYp (tiles 2 apart) as
``A^T [(G Wf G^T) . (B^T d B)] A``: 16 matrix products ``(Cx/g, Cy/g) @ (Cy/g, tiles)``, one per
element of the 4x4 transformed tile, hold 16 multiply-adds per 2x2 outputs and channel pair
where im2col's product holds 36 - a 2.25x smaller BLAS product, for transforms that are a few
additions per element.  The arrays are laid out spatial axes first and (N, channels) last, so
the transforms are NumPy passes over long contiguous runs, in blocks of tile rows shared among
the worker threads.

Chosen for gradInput alone: when gradWeight is wanted too, the flat engine's one im2col in Y
space feeds both products, which costs less than Winograd plus a separate gradWeight (the
benchmark's resnet 3x3 (8,64,56,56), one thread, CPU time: 38 ms against 44 ms).  gradInput
alone, 2 cores, wall, interleaved with the flat engine: (8,128,28,28) 11.9 ms against 14.8,
(8,256,14,14) 10.8 against 14.1, (8,64,56,56) 13.9 against 13.9.  Forced (tests), it computes gradWeight with the
engine chosen for gradWeight alone.

Finite data only (the zeros of the padding, and the transforms' cancellations, would turn inf
into NaN).  The transforms round differently from a direct sum: a few float32 ulps of the
largest terms, inside the tolerances of tests/helpers.py.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Unpack, cast

import numpy as np

from ._geometry import FLOAT32, Engine, Geometry, GeometryArgs, Gradients, axis_slices
from . import flat
from .._common import in_parallel

# Chosen when both channel counts per group are at least this: per 2x2 outputs and channel
# pair the BLAS product saves 20 of 36 multiply-adds (~2.25x), while the transforms cost about
# 16 loads, stores and additions per element and channel on each side - below the saving
# once each channel meets >= 16 channels of the other side (ResNet's 3x3 layers have 64-512).
MIN_CHANNELS = 16

# G of F(2x2, 3x3): the kernel transform.
_G = np.array([[1.0, 0.0, 0.0], [0.5, 0.5, 0.5], [0.5, -0.5, 0.5], [0.0, 0.0, 1.0]], np.float32)


def applies(g: Geometry) -> bool:
    """An ordinary 2-D convolution with a 3x3 kernel, stride 1 and dilation 1."""
    return (not g.transposed and len(g.kernel) == 2 and g.kernel == (3, 3) and g.stride == (1, 1)
            and g.dilation == (1, 1))


def worthwhile(g: Geometry) -> bool:
    """Enough channels per group for the smaller product to pay for the transforms."""
    return min(g.x_channels, g.y_channels) // g.groups >= MIN_CHANNELS


class WinogradEngine(Geometry):
    name = "winograd"

    def __init__(self, *geometry: Unpack[GeometryArgs], both: Engine | None) -> None:
        super().__init__(*geometry)
        #: The engine that computes both gradients when both are wanted (None: this one).
        self._both = both
        h, w = self.x_size
        self._tiles = ((h + 1) // 2, (w + 1) // 2)
        # dY placed at offset 2 - lo in a zero image covering every tile's 4x4 reads.
        self._padded = tuple(2 * t + 2 for t in self._tiles)
        self._front = tuple(2 - lo for lo in self.pad_lo)
        self._weight_engine: Engine | None = None

    def gradients(self, x: np.ndarray, dy: np.ndarray, w: np.ndarray, want_input: bool, want_weight: bool) -> Gradients:
        """``(gradInput, gradWeight)``, None where not wanted (``Geometry``)."""
        if want_weight and self._both is not None:
            return self._both.gradients(x, dy, w, want_input, want_weight)
        grad_weight = None
        if want_weight:
            if self._weight_engine is None:
                from . import LoweredConv

                self._weight_engine = LoweredConv(*self.geometry()).choose(False)
            grad_weight = self._weight_engine.gradients(x, dy, w, False, True)[1]
        return (self._input_grad(dy, w) if want_input else None), grad_weight

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
        d = np.empty((hp, wp, batch, cy), FLOAT32)
        box = [axis_slices(extent, size, 1, front)
               for extent, size, front in zip(self._padded, dy.shape[2:], self._front)]
        if any(c is None for c in box):
            d[...] = 0
        else:
            (src_h, dst_h), (src_w, dst_w) = cast(list[tuple[slice, slice]], box)   # none is None (above)
            d[:dst_h.start] = 0
            d[dst_h.stop:] = 0
            d[dst_h, :dst_w.start] = 0
            d[dst_h, dst_w.stop:] = 0
            d[dst_h, dst_w] = dy[:, :, src_h, src_w].transpose(2, 3, 0, 1)

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

    def _tile_rows(self, d: np.ndarray, u: np.ndarray, nb: int, t1: np.ndarray, v: np.ndarray, m: np.ndarray,
                   r: np.ndarray, y: np.ndarray) -> None:
        """``y (2, 2, nb, tw, N, Cx)``: the output blocks of ``nb`` tile rows from their padded dY
        rows ``d (2*nb + 2, Wp, N, Cy)`` (the other arrays are scratch of their shapes)."""
        groups = self.groups
        cy, cx = self.y_channels, self.x_channels
        cy_g, cx_g = cy // groups, cx // groups
        tw = self._tiles[1]
        # B^T d B, rows then columns: V (4, 4, nb, tw, N, Cy).
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
