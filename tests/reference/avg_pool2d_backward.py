"""Slow, obviously correct average-pool backward: one explicit window per gradOutput element,
accumulated in float64."""

from __future__ import annotations

import numpy as np


def avg_pool2d_backward(grad_output, self_shape, kernel, stride, padding, count_include_pad,
                        divisor_override) -> np.ndarray:
    """Spread each ``gradOutput[n, c, oh, ow] / divisor`` over the real pixels of its window.

    ``kernel``, ``stride``, ``padding`` are ``(H, W)`` pairs; ``divisor_override`` is None or 0
    for "no override".  The windows are those of the gradOutput cells, so ceil mode needs no
    special case here: it only decides how many cells there are.
    """
    grad = np.asarray(grad_output).astype(np.float64)
    batched = len(self_shape) == 4
    if not batched:
        grad = grad[np.newaxis]
    height, width = self_shape[-2:]
    kh, kw = kernel
    sh, sw = stride
    ph, pw = padding
    batch, channels, out_h, out_w = grad.shape
    out = np.zeros((batch, channels, height, width))
    for n in range(batch):
        for c in range(channels):
            for oh in range(out_h):
                for ow in range(out_w):
                    # The window in input coordinates, and the same window clipped to the
                    # padded input (for countIncludePad) and to the real input.
                    top, left = oh * sh - ph, ow * sw - pw
                    bottom, right = top + kh, left + kw
                    padded_rows = min(bottom, height + ph) - top
                    padded_cols = min(right, width + pw) - left
                    rows = range(max(top, 0), min(bottom, height))
                    cols = range(max(left, 0), min(right, width))
                    if divisor_override:
                        divisor = divisor_override
                    elif count_include_pad:
                        divisor = padded_rows * padded_cols
                    else:
                        divisor = len(rows) * len(cols)
                    for y in rows:
                        for x in cols:
                            out[n, c, y, x] += grad[n, c, oh, ow] / divisor
    return out if batched else out[0]
