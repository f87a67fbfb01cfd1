"""The patch engine: kernel == stride, no dilation, no leading padding (ViT patch embedding,
U-Net and 3-D U-Net up-convolutions).

The windows then tile X without overlap: X cropped to ``y_size * kernel`` *is* its im2col
matrix after one reshape and transpose, ``cols (groups, Cx/g * T, N * P_y)``, and every product
is one matrix product on it (no chunking, no scatter-add)::

    forward       Y  = W (g, Cy/g, Cx/g*T) @ cols
    weight_grad   dW = dY (g, Cy/g, N*P_y) @ cols^T
    input_grad    cols(dX) = W^T @ dY, put back by the inverse transpose; positions of X past
                  ``y_size * kernel`` (the remainder of a floor division) are 0.

The products run image by image where that saves a copy: cols is laid out ``(C, *kernel, N,
*y_size)``, so image n's matrix is a view, and Y, dY and cols(dX) keep their (N, C, ...) layout.
The weight gradient of an ordinary convolution reads the patches image-major instead, ``(N,
*y_size, C, *kernel)`` (_patches): copied from X in runs of a window's width rather than every
kernel-th element.

Its products hold exactly the terms of the sums (no zero stands for padding), yet it is chosen
for finite data only, as the other BLAS engines: LoweredConv sends inf and NaN to the tap engine
by one rule.
"""

from __future__ import annotations

import math

import numpy as np

from ._geometry import FLOAT32, Geometry, Gradients


def applies(g: Geometry) -> bool:
    """The windows tile X: kernel == stride, dilation 1 (or kernel 1), no leading padding, and
    no window reaches past X (trailing padding in the last window)."""
    return all(k == s and (d == 1 or k == 1) and lo == 0 and y * k <= x
               for k, s, d, lo, x, y in zip(g.kernel, g.stride, g.dilation, g.pad_lo, g.x_size, g.y_size))


class PatchEngine(Geometry):
    name = "patch"
    blas_in_workers = False
    checks_data = True      # its two products on OpenBLAS's threads

    def gradients(self, x: np.ndarray, dy: np.ndarray, w: np.ndarray, want_input: bool, want_weight: bool) -> Gradients:
        """``(gradInput, gradWeight)``, None where not wanted (``Geometry``)."""
        groups, batch = self.groups, self.batch
        cx_g, cy_g = self.x_channels // groups, self.y_channels // groups
        rank = len(self.kernel)
        taps, y_plane = math.prod(self.kernel), math.prod(self.y_size)
        cols: np.ndarray | None = None
        per_image: np.ndarray | None = None
        if want_input and self.transposed:
            cols = self._cols(x)
            # The same as (N, g, Cx/g * T, P_y): image n's matrix is a view (rows N*P_y apart).
            per_image = cols.reshape(groups, cx_g * taps, batch, y_plane).transpose(2, 0, 1, 3)
        elif want_weight:
            # The patches image-major, (N, P_y, g, Cx/g * T): X's rows are copied in runs of a
            # window's width (the layout above gathers every kernel-th element: ViT's 16x16
            # patches of (8,3,224,224), 0.33 against 0.71 ms in cache, 2.7 ms cold).  Both views
            # follow; only the weight gradient reads them.
            patches = self._patches(x).reshape(batch, y_plane, groups, cx_g * taps)
            per_image = patches.transpose(0, 2, 3, 1)
            cols = patches.reshape(batch * y_plane, groups, cx_g * taps).transpose(1, 2, 0)
        dy_image = dy.reshape(batch, groups, cy_g, y_plane)
        w_mat = w.reshape(groups, cy_g, -1)
        grad_weight: np.ndarray | None = None
        grad_input: np.ndarray | None = None
        if want_weight:
            assert cols is not None and per_image is not None
            if cx_g * taps <= y_plane:
                # Per image, summed: the N partial products (Cy x Cx/g*T each) are smaller than
                # dY, whose copy the single product needs (U-Net's up-convolutions).
                grad_weight = np.matmul(dy_image, per_image.swapaxes(2, 3)).sum(axis=0)
            else:
                # One product over N*P_y: (N, Cy, *y) -> (g, Cy/g, N*P_y), one copy of dY
                # (ViT's patches: 768 x 768 partial products per image against 196 positions).
                dy_mat = np.ascontiguousarray(dy_image.transpose(1, 2, 0, 3)).reshape(groups, cy_g, -1)
                grad_weight = np.matmul(dy_mat, cols.swapaxes(1, 2))
            grad_weight = grad_weight.reshape(self.y_channels, cx_g, *self.kernel)
        if want_input and self.transposed:
            assert per_image is not None
            # Image by image, straight into Y's layout (N, g, Cy/g, P_y).
            grad_input = np.matmul(w_mat, per_image).reshape(batch, self.y_channels, *self.y_size)
        elif want_input:
            dcols = np.matmul(w_mat.swapaxes(1, 2), dy_image)          # (N, g, Cx/g * T, P_y)
            dcols = dcols.reshape((batch, self.x_channels) + self.kernel + self.y_size)
            dx = np.empty((batch, self.x_channels) + self.x_size, FLOAT32)
            covered = self._covered(dx)
            # covered[n, c, a0, k0, a1, k1, ...] = dcols[n, c, k0, k1, ..., a0, a1, ...]
            order = [0, 1] + [x for d in range(rank) for x in (2 + rank + d, 2 + d)]
            np.copyto(covered, dcols.transpose(order))
            self._zero_rest(dx)
            grad_input = dx
        return grad_input, grad_weight

    def _covered(self, a: np.ndarray) -> np.ndarray:
        """The view ``(N, C, y0, k0, y1, k1, ...)`` of the part of ``a (N, C, *x_size)`` the
        windows tile."""
        box = a[(slice(None), slice(None)) + tuple(slice(0, y * k) for y, k in zip(self.y_size, self.kernel))]
        split = [v for y, k in zip(self.y_size, self.kernel) for v in (y, k)]
        view = box.view()
        view.shape = a.shape[:2] + tuple(split)     # a view by construction (raises otherwise)
        return view

    def _patches(self, x: np.ndarray) -> np.ndarray:
        """X's patches as ``(N, *y_size, C, *kernel)`` (one copy)."""
        rank = len(self.kernel)
        order = [0] + [2 + 2 * d for d in range(rank)] + [1] + [3 + 2 * d for d in range(rank)]
        return np.ascontiguousarray(self._covered(x).transpose(order))

    def _cols(self, x: np.ndarray) -> np.ndarray:
        """X's patches as ``(groups, Cx/g * T, N * P_y)`` (one copy)."""
        rank = len(self.kernel)
        covered = self._covered(x)
        # -> (C, k0, k1, ..., N, y0, y1, ...)
        order = [1] + [3 + 2 * d for d in range(rank)] + [0] + [2 + 2 * d for d in range(rank)]
        cols = np.ascontiguousarray(covered.transpose(order))
        return cols.reshape(self.groups, self.x_channels // self.groups * math.prod(self.kernel), -1)

    def _zero_rest(self, dx: np.ndarray) -> None:
        """Zero dX past the tiled box, dimension by dimension."""
        for d, (y, k) in enumerate(zip(self.y_size, self.kernel)):
            dx[(slice(None),) * (2 + d) + (slice(y * k, None),)] = 0
