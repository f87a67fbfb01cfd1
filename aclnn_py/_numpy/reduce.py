"""Reductions as the numpy backend computes them: the shared arithmetic of ReduceSum, Mean, the
softmax family (max and sum along one dim) and BatchNorm (per-channel mean and variance).

The simulator's C holds the same (``sim/src/ops/reduce.[ch]``). FLOAT16 and BFLOAT16 are
computed in FLOAT and rounded once at the end (the CANN kernels of these operators cast 16-bit
inputs to float before they reduce: BatchNormV3, SoftmaxV2 / LogSoftmaxV2 and ReduceSum's
fp16 path as their op_api sources build them; the device's summation order is not
verified). NumPy sums FLOAT pairwise, which is as accurate as a float accumulator gets; the
simulator accumulates in double.

The dims rules (wrapping negative dims, duplicates, an empty list meaning every dim) are the
checks' (``ops/_reduce.py``); the functions here take dims already normalised.
"""

from __future__ import annotations

import math

from collections.abc import Sequence

import numpy as np

from .._dtypes import compute_dtype

FLOAT32 = np.dtype(np.float32)


def widened(a: np.ndarray) -> np.ndarray:
    """``a`` in its compute dtype (FLOAT for FLOAT16/BFLOAT16; others as they are)."""
    wide = compute_dtype(a.dtype)
    return a if a.dtype == wide else a.astype(wide)


# -- BatchNorm: statistics per channel (dim 1) ------------------------------------------------

def channels(x: np.ndarray) -> np.ndarray:
    """``x`` of shape (N, C, ...) as a C-contiguous FLOAT (N, C, L) array, L the product of the
    trailing dims (1 for 2-D): a view where ``x`` is a contiguous FLOAT array, else a copy."""
    n, c = x.shape[0], x.shape[1]
    wide = np.ascontiguousarray(x, dtype=FLOAT32)
    return wide.reshape(n, c, -1 if n * c else math.prod(map(int, x.shape[2:])))


def channel_mean(x3: np.ndarray) -> np.ndarray:
    """The mean of each channel of an (N, C, L) FLOAT array (pairwise sums of each row of L,
    then over N), FLOAT of shape (C,)."""
    count = x3.shape[0] * x3.shape[2]
    rows = np.add.reduce(x3, axis=2)
    return np.asarray(np.add.reduce(rows, axis=0) / np.float32(count), FLOAT32)


def centered(x3: np.ndarray, mean: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(x3 - mean, the biased variance of each channel)`` of an (N, C, L) FLOAT array: the
    variance from the centred values (two passes, no cancellation), FLOAT of shape (C,)."""
    d = np.subtract(x3, mean[:, None])
    count = x3.shape[0] * x3.shape[2]
    squares = np.einsum("ncl,ncl->c", d, d) if d.size else np.zeros(x3.shape[1], FLOAT32)
    return d, np.asarray(squares / np.float32(count), FLOAT32)


def channel_sums(g3: np.ndarray, d3: np.ndarray | None = None) -> np.ndarray:
    """Per channel of (N, C, L) FLOAT arrays: the sum of ``g3``, or of ``g3 * d3`` (FLOAT (C,))."""
    if g3.size == 0:
        return np.zeros(g3.shape[1], FLOAT32)
    if d3 is None:
        return np.asarray(np.add.reduce(np.add.reduce(g3, axis=2), axis=0), FLOAT32)
    return np.asarray(np.einsum("ncl,ncl->c", g3, d3), FLOAT32)


def affine(x3: np.ndarray, scale: np.ndarray, shift: np.ndarray | None, out: np.ndarray | None = None) -> np.ndarray:
    """``x3 * scale + shift`` per channel of an (N, C, L) FLOAT array (into ``out`` if given)."""
    result = np.asarray(np.multiply(x3, scale[:, None], out=out))
    if shift is not None:
        np.add(result, shift[:, None], out=result)
    return result


# -- along one dim (the softmax family) ------------------------------------------------------

def log_softmax(x: np.ndarray, dim: int) -> np.ndarray:
    """``log_softmax`` of a FLOAT/DOUBLE array along ``dim`` (normalised): ``x - max - log(sum
    exp(x - max))``, the max subtracted for stability; a new array."""
    if x.ndim == 0:
        return np.zeros_like(x)  # (one element: log 1)
    shifted = np.subtract(x, np.max(x, axis=dim, keepdims=True))
    e = np.exp(shifted)
    with np.errstate(divide="ignore"):
        lse = np.log(np.sum(e, axis=dim, keepdims=True))
    return np.asarray(np.subtract(shifted, lse, out=shifted))


def softmax(x: np.ndarray, dim: int) -> np.ndarray:
    """``softmax`` of a FLOAT/DOUBLE array along ``dim``: ``exp(x - max) / sum``; a new array."""
    if x.ndim == 0:
        return np.ones_like(x)
    e = np.subtract(x, np.max(x, axis=dim, keepdims=True))
    np.exp(e, out=e)
    return np.asarray(np.divide(e, np.sum(e, axis=dim, keepdims=True), out=e))


def log_softmax_backward(grad: np.ndarray, output: np.ndarray, dim: int) -> np.ndarray:
    """``grad - exp(output) * sum(grad, dim)``; a new array."""
    if grad.ndim == 0:
        return np.asarray(grad - np.exp(output) * grad)
    total = np.sum(grad, axis=dim, keepdims=True)
    result = np.exp(output)
    np.multiply(result, total, out=result)
    return np.asarray(np.subtract(grad, result, out=result))


def softmax_backward(grad: np.ndarray, output: np.ndarray, dim: int) -> np.ndarray:
    """``output * (grad - sum(grad * output, dim))``; a new array."""
    if grad.ndim == 0:
        return np.asarray(output * (grad - grad * output))
    product = np.multiply(grad, output)
    total = np.sum(product, axis=dim, keepdims=True)
    np.subtract(grad, total, out=product)
    return np.asarray(np.multiply(product, output, out=product))


# -- over several dims (ReduceSum, Mean) ------------------------------------------------------

def reduce_sum(x: np.ndarray, dims: Sequence[int], keepdim: bool, wide: np.dtype) -> np.ndarray:
    """The sum of ``x`` (already in the dtype summed in) over ``dims`` (normalised, no
    duplicates, not empty) in the accumulator dtype ``wide``."""
    return np.asarray(np.sum(x, axis=tuple(dims), dtype=wide, keepdims=keepdim))


def in_dtype(a: np.ndarray, compute: np.dtype) -> np.ndarray:
    """``a`` converted to ``compute`` (the dtype an operator runs in), then widened to its
    compute dtype (FLOAT for FLOAT16/BFLOAT16)."""
    if a.dtype != compute:
        a = a.astype(compute)
    return widened(a)


def rounded(result: np.ndarray, compute: np.dtype, out: np.dtype) -> np.ndarray:
    """A result computed wide, rounded once to ``compute``, then converted to ``out``."""
    if result.dtype != compute:
        result = result.astype(compute)
    return result.astype(out, copy=False)
