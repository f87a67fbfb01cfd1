"""Slow, obviously correct reflection-pad backward: one Python loop per gradOutput element,
accumulated in float64 (complex128 for complex data)."""

from __future__ import annotations

import numpy as np


def _reflect(t: int, n: int) -> int:
    if t < 0:
        return -t
    if t >= n:
        return 2 * (n - 1) - t
    return t


def reflection_pad2d_backward(grad_output, self, padding) -> np.ndarray:
    """Add every gradOutput element into gradInput at its reflected source position."""
    grad = np.asarray(grad_output)
    wide = np.complex128 if np.iscomplexobj(grad) else np.float64
    grad = grad.astype(wide)
    left, _, top, _ = padding
    height, width = np.shape(self)[-2:]
    lead = np.shape(self)[:-2]
    grad = grad.reshape((-1,) + grad.shape[-2:])
    out = np.zeros((grad.shape[0], height, width), dtype=wide)
    for p in range(grad.shape[0]):
        for y in range(grad.shape[1]):
            for x in range(grad.shape[2]):
                out[p, _reflect(y - top, height), _reflect(x - left, width)] += grad[p, y, x]
    return out.reshape(lead + (height, width))
