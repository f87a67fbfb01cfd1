"""Slow, obviously correct adaptive average pooling and its gradient: one loop per window."""

from __future__ import annotations

import math

import numpy as np


def _window(i, size, o):
    return (i * size) // o, math.ceil((i + 1) * size / o)


def adaptive_avg_pool2d(x, output_size):
    x = np.asarray(x, np.float64)
    H, W = x.shape[-2:]
    oh, ow = output_size
    out = np.empty((*x.shape[:-2], oh, ow))
    for i in range(oh):
        h0, h1 = _window(i, H, oh)
        for j in range(ow):
            w0, w1 = _window(j, W, ow)
            out[..., i, j] = x[..., h0:h1, w0:w1].mean(axis=(-2, -1))
    return out


def adaptive_avg_pool2d_backward(grad, shape):
    grad = np.asarray(grad, np.float64)
    H, W = shape[-2:]
    oh, ow = grad.shape[-2:]
    out = np.zeros(shape)
    for i in range(oh):
        h0, h1 = _window(i, H, oh)
        for j in range(ow):
            w0, w1 = _window(j, W, ow)
            out[..., h0:h1, w0:w1] += grad[..., i, j, None, None] / ((h1 - h0) * (w1 - w0))
    return out
