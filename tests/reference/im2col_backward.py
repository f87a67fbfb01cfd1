"""Slow, obviously correct col2im: one Python loop per element, float64 accumulation."""

from __future__ import annotations

import numpy as np


def im2col_backward(grad_output, input_size, kernel_size, dilation, padding, stride) -> np.ndarray:
    """``F.fold`` written out: each column entry lands at its image position or is dropped."""
    cols = np.asarray(grad_output).astype(np.float64)
    batched = cols.ndim == 3
    if not batched:
        cols = cols[np.newaxis]
    height, width = input_size
    kh, kw = kernel_size
    batch, rows, length = cols.shape
    channels = rows // (kh * kw)
    blocks_w = (width + 2 * padding[1] - dilation[1] * (kw - 1) - 1) // stride[1] + 1 if length else 0
    out = np.zeros((batch, channels, height, width))
    for n in range(batch):
        for c in range(channels):
            for i in range(kh):
                for j in range(kw):
                    for l in range(length):
                        y = (l // blocks_w) * stride[0] - padding[0] + i * dilation[0]
                        x = (l % blocks_w) * stride[1] - padding[1] + j * dilation[1]
                        if 0 <= y < height and 0 <= x < width:
                            out[n, c, y, x] += cols[n, c * kh * kw + i * kw + j, l]
    return out if batched else out[0]
