"""Slow, obviously correct convolution gradients: loops over output positions and kernel taps,
float64 accumulation.  For tiny shapes only."""

from __future__ import annotations

import itertools

import numpy as np


def _sides(values, spatial):
    """(before, after) per spatial dimension; 4 values are [top, bottom, left, right]."""
    values = list(values)
    if len(values) == spatial:
        return values, values
    return [values[0], values[2]], [values[1], values[3]]


def convolution_backward(grad_output, input, weight, stride, padding, dilation, transposed, groups):
    """``(grad_input, grad_weight, grad_bias)`` in float64, all three always computed.

    Normal convolution: output position ``o`` and tap ``t`` connect input position
    ``x = o*stride + t*dilation - pad_before`` (when it lies inside the input).
    Transposed convolution: input position ``o`` and tap ``t`` reach output position
    ``y = o*stride + t*dilation - pad_before`` (when it lies inside gradOutput); output padding
    needs no term of its own, it only makes gradOutput longer.
    """
    go = np.asarray(grad_output).astype(np.float64)
    x = np.asarray(input).astype(np.float64)
    w = np.asarray(weight).astype(np.float64)
    spatial = x.ndim - 2
    before, _ = _sides(padding, spatial)
    grad_input, grad_weight = np.zeros_like(x), np.zeros_like(w)
    kernel = w.shape[2:]

    if transposed:
        # weight (Cin, Cout/groups, *k); input position o -> gradOutput position y.
        cin_g, cout_g = x.shape[1] // groups, w.shape[1]
        sources, targets = x.shape[2:], go.shape[2:]
    else:
        # weight (Cout, Cin/groups, *k); gradOutput position o -> input position x.
        cin_g, cout_g = w.shape[1], go.shape[1] // groups
        sources, targets = go.shape[2:], x.shape[2:]

    for o in itertools.product(*(range(n) for n in sources)):
        for t in itertools.product(*(range(k) for k in kernel)):
            p = tuple(o[d] * stride[d] + t[d] * dilation[d] - before[d] for d in range(spatial))
            if not all(0 <= p[d] < targets[d] for d in range(spatial)):
                continue
            for g in range(groups):
                ci = slice(g * cin_g, (g + 1) * cin_g)
                co = slice(g * cout_g, (g + 1) * cout_g)
                if transposed:
                    # out[n, co, p] += input[n, ci, o] * w[ci, co, t]
                    grad_input[(slice(None), ci) + o] += go[(slice(None), co) + p] @ w[(ci, slice(None)) + t].T
                    grad_weight[(ci, slice(None)) + t] += x[(slice(None), ci) + o].T @ go[(slice(None), co) + p]
                else:
                    # out[n, co, o] += input[n, ci, p] * w[co, ci, t]
                    grad_input[(slice(None), ci) + p] += go[(slice(None), co) + o] @ w[(co, slice(None)) + t]
                    grad_weight[(co, slice(None)) + t] += go[(slice(None), co) + o].T @ x[(slice(None), ci) + p]

    grad_bias = go.sum(axis=tuple(d for d in range(go.ndim) if d != 1))
    return grad_input, grad_weight, grad_bias
