"""Slow, obviously correct 2-D max pooling with indices, and its gradient: one Python loop per
window (PyTorch's rule: the first maximum in row-major window order; padding never chosen)."""

from __future__ import annotations

import numpy as np


def _pooled(size, k, s, p, ceil):
    o = (size + 2 * p - k + (s - 1 if ceil else 0)) // s + 1
    return o - 1 if ceil and (o - 1) * s >= size + p else o


def max_pool2d_with_indices(x, k, s, p, ceil=False):
    x = np.asarray(x, np.float64)
    lead, (H, W) = x.shape[:-2], x.shape[-2:]
    OH, OW = _pooled(H, k[0], s[0], p[0], ceil), _pooled(W, k[1], s[1], p[1], ceil)
    planes = x.reshape(-1, H, W)
    out = np.empty((len(planes), OH, OW))
    idx = np.empty((len(planes), OH, OW), np.int64)
    for n, plane in enumerate(planes):
        for oh in range(OH):
            for ow in range(OW):
                best, where = None, None
                for h in range(oh * s[0] - p[0], oh * s[0] - p[0] + k[0]):
                    for w in range(ow * s[1] - p[1], ow * s[1] - p[1] + k[1]):
                        if 0 <= h < H and 0 <= w < W and (best is None or plane[h, w] > best):
                            best, where = plane[h, w], h * W + w
                out[n, oh, ow], idx[n, oh, ow] = best, where
    return out.reshape(*lead, OH, OW), idx.reshape(*lead, OH, OW)


def max_pool2d_with_indices_backward(grad, shape, indices):
    grad = np.asarray(grad, np.float64).reshape(-1, grad.shape[-2] * grad.shape[-1])
    idx = np.asarray(indices).reshape(grad.shape)
    out = np.zeros((grad.shape[0], shape[-2] * shape[-1]))
    for n in range(grad.shape[0]):
        for j in range(grad.shape[1]):
            out[n, idx[n, j]] += grad[n, j]
    return out.reshape(shape)
