"""The numpy backend's matrix product, shared by mm, addmm, matmul and batch_mat_mul.

``product(a, b, compute, out)`` is ``np.matmul``'s product (its broadcasting of batch dims and
1-D operands is torch.matmul's), computed as CANN's cube unit does on A2/A3
(``ops/_matmul.py``): each input rounded to the compute dtype (float32, float16 or
bfloat16), the products summed in float32 (BLAS sgemm), the result rounded once to ``out``.

Threads: a product of at least ``2 * PART_WORK`` multiply-adds is cut into one part per
thread, the calling thread and the backend's workers (``workers.in_pieces``), each part on one
BLAS thread (``blas.single_threaded``), along the batch, ``y``'s columns or ``x``'s rows
(``_in_parts``; a vector times a matrix in two halves along K, ``_vector_in_halves``); how many
threads is ``workers.threads_for``, the rule of every split of the
backend: one per worker on a quiet machine, one on a busy one (``workers.machine_busy``).
OpenBLAS's own threads are never used here: its second thread, when another program holds the
other core, stalls the whole product for a scheduler tick, whereas a worker of ours that has
not started when the caller is done has its part taken by the caller (``in_pieces``).

The operands' layout: a C-contiguous stack times one matrix is one product of the stack's rows
(``_folded``), and on OpenBLAS's SkylakeX kernels a small batch of rows times a transposed
weight goes weight first (``_weight_first``); each says what it measured.

Measured 2026-11-29 on the 2-core machine (4 agents' processes), ms fastest/median, all three
interleaved in one process, 15 rounds: one BLAS thread (the code before) / OpenBLAS on 2
threads / the parts here::

    load 2.3                    one thread        OpenBLAS 2 threads   parts
    32x512 @ 512x1000           0.514/0.553       0.257/0.293          0.382/0.521
    256x512 @ (1000x512)^T      3.01/3.08         1.59/1.67            1.77/1.86
    64x4096 @ 4096x4096         26.6/34.5         15.9/17.3            16.2/26.2
    4x128x768 @ 768x768         4.91/6.81         3.32/3.94            3.05/3.65
    48x(128x64 @ 64x128)        1.17/1.26         1.44/1.55            0.84/1.17

    load 4.0-5.1 (parts forced)
    32x512 @ 512x1000           0.354/0.407       32.0/36.0            0.329/0.406
    256x512 @ (1000x512)^T      2.10/6.24         32.0/36.0            1.36/2.19
    64x4096 @ 4096x4096         43.0/58.0         63.4/128.0           33.8/52.0
    4x128x768 @ 768x768         13.4/24.6         3.59/19.9            7.98/16.0
    48x(128x64 @ 64x128)        1.24/1.90         1.34/1.72            1.26/5.92

and at load 2.5 OpenBLAS's 2 threads took 24-34 ms for 32x512 @ 512x1000 (one thread 0.6) in
every round.  The operators, the code before / now, medians of 15 interleaved rounds at load
2.3: mm VGG fc 64x4096 @ 4096x4096 35.8 -> 18.1 ms, addmm VGG fc 40.1 -> 20.6, matmul BERT
projection 4x128x768 @ 768x768 7.13 -> 4.06, batch_mat_mul BERT scores 1.85 -> 1.22 and
context 1.68 -> 0.99, mm 256x512 @ (1000x512)^T 3.18 -> 1.95, addmm 256x512 -> 1000 3.43 ->
2.26; the small ones gain less (41 rounds: mm 32x512 @ 512x1000 0.60 -> 0.50, matmul 64x512
@ (1000x512)^T 1.30 -> 0.90; the matrix-vector product 4096 @ 4096x1000, bound by memory,
0.80 -> 0.81).  At load 3.9 (busy: one thread) all of them as before (ratios 0.86-1.02).
"""

from __future__ import annotations

import math

import numpy as np

from . import blas, workers

FLOAT32 = np.dtype(np.float32)

#: Multiply-adds of one thread's part of a product (``workers.threads_for``): below twice this a
#: product runs on the calling thread alone.  ~40 us of BLAS on one core here, against ~20-50
#: us to hand a part to a worker and wait for it.
PART_WORK = 1 << 21
#: The same for a vector times a matrix (``_vector_in_halves``), bound by reading the matrix
#: (4 bytes a multiply-add, ~0.7 ms for 4096 x 1000): a quarter of it.
VECTOR_PART_WORK = PART_WORK // 4


def _blas_ready(x: np.ndarray) -> bool:
    """The last two dims are a row- or column-major matrix of float32 (a 1-D operand: unit step)."""
    size = x.dtype.itemsize
    if x.ndim == 1:
        return x.strides[0] == size or x.shape[0] <= 1
    rows, cols = x.shape[-2:]
    rs, cs = x.strides[-2:]
    return (cs == size and (rs == cols * size or rows <= 1)) or (rs == size and (cs == rows * size or cols <= 1))


def operand(x: np.ndarray, compute: np.dtype) -> np.ndarray:
    """``x`` rounded to ``compute`` and held as float32, in a layout BLAS takes."""
    if x.dtype != compute and compute != FLOAT32:
        x = x.astype(compute)
    if x.dtype != FLOAT32:
        return x.astype(FLOAT32)
    return x if _blas_ready(x) else np.ascontiguousarray(x)


def product(a: np.ndarray, b: np.ndarray, compute: np.dtype, out: np.dtype) -> np.ndarray:
    """``a @ b`` (module docstring) as float32 when ``out`` is float32, else rounded to ``out``."""
    x, y = operand(a, compute), operand(b, compute)
    with blas.single_threaded():
        result = _in_parts(*_folded(x, y))
    return result if out == FLOAT32 else result.astype(out)


def _folded(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray, tuple[int, ...] | None]:
    """A C-contiguous stack of matrices times one matrix (or vector), ``x`` (..., M, K) @ ``y``:
    ``x``'s rows all in one matrix (a view), one product of all of them, whose result is a view
    of the stack's (the shape, third); else the operands as they are (None).  NumPy runs a
    product per matrix of the stack, packing ``y`` for each: 4x128x768 @ 768x768 on one BLAS
    thread 7.58 ms as a stack, 6.78 as one 512x768 @ 768x768 (thread time, medians of 41
    interleaved rounds; each element's sum the same, in the same order, on SkylakeX kernels)."""
    if x.ndim < 3 or y.ndim > 2 or not x.flags.c_contiguous:
        return x, y, None
    shape = x.shape[:-1] + y.shape[1:]
    return x.reshape(math.prod(x.shape[:-1]), x.shape[-1]), y, shape


def _in_parts(x: np.ndarray, y: np.ndarray, shape: tuple[int, ...] | None = None) -> np.ndarray:
    """``np.matmul(x, y)`` of float32 operands (given ``shape``, reshaped to it: ``_folded``),
    cut into parts the calling thread and the
    workers take (``workers.in_pieces``; their number ``workers.threads_for``): along the
    batch when both are stacks of as many matrices, else along ``y``'s columns (each part
    reads its own columns of ``y``, the larger operand of a linear layer), else along ``x``'s
    rows (a matrix times a vector)."""
    if shape is not None:
        return _in_parts(x, y).reshape(shape)
    m = x.shape[-2] if x.ndim > 1 else 1
    n = y.shape[-1] if y.ndim > 1 else 1
    batch = np.broadcast_shapes(x.shape[:-2], y.shape[:-2]) if x.ndim > 2 or y.ndim > 2 else ()  # (~3 us)
    work = math.prod(batch) * m * x.shape[-1] * n
    if WEIGHT_FIRST and _weight_first_pays(x, y):
        return _weight_first(x, y, workers.threads_for(work, PART_WORK))
    if x.ndim == 1 and y.ndim == 2 and work >= 2 * VECTOR_PART_WORK:
        return _vector_in_halves(x, y, workers.threads_for(work, VECTOR_PART_WORK))
    threads = workers.threads_for(work, PART_WORK)
    if threads == 1:
        return np.asarray(np.matmul(x, y))
    result = np.empty(batch + x.shape[-2:-1] + y.shape[-1:] if y.ndim > 1 else batch + x.shape[-2:-1], FLOAT32)

    def parts(start: int, stop: int) -> None:
        if along == "batch":
            np.matmul(x[start:stop], y[start:stop], out=result[start:stop])
        elif along == "columns":
            np.matmul(x, y[..., start:stop], out=result[..., start:stop])
        else:
            np.matmul(x[..., start:stop, :], y, out=result[..., start:stop, :] if y.ndim > 1 else result[..., start:stop])

    if x.ndim == y.ndim >= 3 and x.shape[0] == y.shape[0] >= threads:
        along, count = "batch", x.shape[0]
    elif y.ndim > 1 and n >= threads:
        along, count = "columns", n
    elif x.ndim > 1 and m >= threads:
        along, count = "rows", m
    else:
        return np.asarray(np.matmul(x, y))
    workers.in_pieces(count, parts, threads=threads, pieces=threads)
    return result


#: Whether a transposed weight goes first (``_weight_first``): on OpenBLAS's SkylakeX kernels
#: only (measured there and on Haswell's, the kernels of CI's other x86 machines, where the
#: form gains nothing: medians of 15 rounds, one BLAS thread, ``x @ w.T`` against it, K 512, N
#: 1000: M 16 0.87x, 32 0.99x, 64 1.09x, 128 1.07x; 64x4096 @ (4096x4096)^T 1.00x).
WEIGHT_FIRST = blas.corename() == "skylakex"


def _weight_first_pays(x: np.ndarray, y: np.ndarray) -> bool:
    """``x`` (M, K) @ ``y`` (K, N) where ``y`` is a row-major weight read through its transpose
    (column-major) and M is at most K / 8 (``_weight_first``)."""
    if x.ndim != 2 or y.ndim != 2:
        return False
    (m, k), n = x.shape, y.shape[1]
    return n > 1 and k > 1 and 8 * m <= k and y.strides == (y.itemsize, k * y.itemsize)


def _weight_first(x: np.ndarray, y: np.ndarray, threads: int) -> np.ndarray:
    """``x @ y`` of ``_weight_first_pays``' operands as ``(y.T @ x.T).T``: the (N, M) transposed
    result, copied into the row-major (M, N) one.  OpenBLAS packs the first operand of its
    column-major call with copy routines that, on its SkylakeX kernels, read a transposed
    matrix slowly: ``x @ w.T`` gives it the weight ``w`` transposed, ``w @ x.T`` as it is
    (only the small ``x`` transposed); the sums are the same, in the same order (the same bits,
    measured).  One BLAS thread, medians of 15 interleaved rounds, ms, ``x @ w.T`` against
    this form with its copy, K 512 and N 1000: M 16 0.436 / 0.245, 32 0.567 / 0.379, 64 0.725
    / 0.635, 128 1.396 / 1.392, 256 2.040 / 2.284 (the copy's cost grows with M, the packing's
    does not: hence M <= K / 8); 64x4096 @ (4096x4096)^T 29.6 / 25.2, 256x4096 67.3 / 67.6.
    Parts along N, each its rows of the transposed result and their copy (``_in_parts``)."""
    m, n = x.shape[0], y.shape[1]
    w, xt = y.T, x.T
    result = np.empty((m, n), FLOAT32)
    staging = np.empty((n, m), FLOAT32)

    def parts(start: int, stop: int) -> None:
        np.matmul(w[start:stop], xt, out=staging[start:stop])
        result[:, start:stop] = staging[start:stop].T

    if threads > 1 and n >= threads:
        workers.in_pieces(n, parts, threads=threads, pieces=threads)
    else:
        parts(0, n)
    return result


def _vector_in_halves(x: np.ndarray, y: np.ndarray, threads: int) -> np.ndarray:
    """``x @ y`` of a vector and a matrix, as the sum of its two halves along K (each half of
    ``y`` read as one contiguous stream by its own thread), always in two halves added in the
    same order, so the figures do not depend on the threads.  4096 @ 4096x1000, medians of 31
    interleaved rounds at load 6.4-6.9, the split forced: one gemv 0.742 ms, split along the
    columns 0.756 (memory-bound: it gains nothing), in halves along K 0.567; the operator
    (matmul vector) 1.050 split along the columns against 0.676 in halves; busy (one thread,
    both halves on the caller) 0.789 for one gemv against 0.819."""
    half = x.shape[0] // 2
    partial = np.empty((2, y.shape[1]), FLOAT32)

    def halves(start: int, stop: int) -> None:
        for i in range(start, stop):
            lo, hi = (0, half) if i == 0 else (half, x.shape[0])
            np.matmul(x[lo:hi], y[lo:hi], out=partial[i])

    workers.in_pieces(2, halves, threads=min(threads, 2), pieces=2)
    return np.asarray(np.add(partial[0], partial[1]))
