"""The tap engine: one einsum per kernel tap between strided slices of X and Y.

For every tap ``t`` the positions it connects are a strided box of Y and a strided box of X
(``axis_slices``); each product is the sum over taps of one channel contraction on those boxes::

    forward       Y[.., o]   += W[:, :, t] . X[.., o*s + t*d - lo]
    weight_grad   dW[:, :, t] = sum_{n, o} dY[n, :, o] X[n, :, o*s + t*d - lo]
    input_grad    dX[.., x]  += W[:, :, t]^T . dY[.., o]          (x = o*s + t*d - lo)

It forms exactly the terms of the sums and no other: no zero stands for padding or a stride gap,
so inf and NaN follow IEEE semantics (a position no term reaches is 0; a NaN in dY reaches every
tap of its window, zero weights included).  That makes it the engine for data holding inf or
NaN, and the fallback when the flat engine's buffers would be much larger than the data (huge
padding or dilation): memory stays proportional to the data.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator

import numpy as np

from ._geometry import FLOAT32, Geometry, Gradients, axis_slices, grouped

#: A tap's (index into Y, index into X) of the positions it connects (``TapEngine._connections``).
_Connection = tuple[tuple[slice, ...], tuple[slice, ...]]


class TapEngine(Geometry):
    name = "tap"
    blas_in_workers = False
    checks_data = False     # its results are the IEEE ones: not checked

    def gradients(self, x: np.ndarray, dy: np.ndarray, w: np.ndarray, want_input: bool, want_weight: bool) -> Gradients:
        """``(gradInput, gradWeight)``, None where not wanted (``Geometry``)."""
        grad_weight = self._weight_grad(x, dy) if want_weight else None
        if not want_input:
            return None, grad_weight
        return self._forward(x, w) if self.transposed else self._input_grad(dy, w), grad_weight

    def _connections(self) -> Iterator[_Connection | None]:
        """Per tap (weight order): (index into Y, index into X) of the positions it connects,
        or None where it connects none.  Indices are for ``(N, groups, C/groups, *size)``."""
        per_dim = [[axis_slices(x, y, s, t * d - lo) for t in range(k)]
                   for x, y, k, s, d, lo in zip(self.x_size, self.y_size, self.kernel, self.stride,
                                                  self.dilation, self.pad_lo)]
        lead = (slice(None),) * 3
        for tap in itertools.product(*per_dim):
            connected = [c for c in tap if c is not None]
            if len(connected) < len(tap):
                yield None
            else:
                yield lead + tuple(c[0] for c in connected), lead + tuple(c[1] for c in connected)

    def _weight_grad(self, x: np.ndarray, dy: np.ndarray) -> np.ndarray:
        xg, dyg = grouped(x, self.groups), grouped(dy, self.groups)
        out = np.zeros((self.groups, dyg.shape[2], xg.shape[2], math.prod(self.kernel)), FLOAT32)
        for t, connection in enumerate(self._connections()):
            if connection is not None:
                y_index, x_index = connection
                out[..., t] = np.einsum(self.subscripts("ngi_,ngj_->gij"), dyg[y_index], xg[x_index])
        return out.reshape(self.y_channels, xg.shape[2], *self.kernel)

    def _forward(self, x: np.ndarray, w: np.ndarray) -> np.ndarray:
        xg = grouped(x, self.groups)
        w_taps = w.reshape(self.groups, self.y_channels // self.groups, xg.shape[2], -1)
        y = np.zeros((self.batch, self.groups, w_taps.shape[1]) + self.y_size, FLOAT32)
        for t, connection in enumerate(self._connections()):
            if connection is not None:
                y_index, x_index = connection
                y[y_index] += np.einsum(self.subscripts("gij,ngj_->ngi_"), w_taps[..., t], xg[x_index])
        return y.reshape(self.batch, self.y_channels, *self.y_size)

    def _input_grad(self, dy: np.ndarray, w: np.ndarray) -> np.ndarray:
        dyg = grouped(dy, self.groups)
        w_taps = w.reshape(self.groups, dyg.shape[2], self.x_channels // self.groups, -1)
        dx = np.zeros((self.batch, self.groups, w_taps.shape[2]) + self.x_size, FLOAT32)
        for t, connection in enumerate(self._connections()):
            if connection is not None:
                y_index, x_index = connection
                dx[x_index] += np.einsum(self.subscripts("gij,ngi_->ngj_"), w_taps[..., t], dyg[y_index])
        return dx.reshape(self.batch, self.x_channels, *self.x_size)
