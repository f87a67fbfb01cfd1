"""Slow, obviously correct max_unpool2d backward: one Python loop per gradInput element."""

from __future__ import annotations

import numpy as np


def max_unpool2d_backward(grad_output, self, indices, output_size) -> np.ndarray:
    """``out[n, c, h, w] = gradOutput[n, c, idx // oW, idx % oW]`` with ``idx = indices[n, c, h, w]``."""
    grad = np.asarray(grad_output)
    idx = np.asarray(indices)
    batched = np.ndim(self) == 4
    if not batched:
        grad, idx = grad[np.newaxis], idx[np.newaxis]
    out_w = output_size[1]
    out = np.zeros(idx.shape, dtype=grad.dtype)
    batch, channels, height, width = idx.shape
    for n in range(batch):
        for c in range(channels):
            for h in range(height):
                for w in range(width):
                    flat = int(idx[n, c, h, w])
                    out[n, c, h, w] = grad[n, c, flat // out_w, flat % out_w]
    return out if batched else out[0]
