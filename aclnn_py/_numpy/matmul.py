"""The numpy backend's matrix product, shared by mm, addmm, matmul and batch_mat_mul.

``product(a, b, compute, out)`` is ``np.matmul``'s product (its broadcasting of batch dims and
1-D operands is torch.matmul's), computed as CANN's cube unit does on A2/A3
(``ops/_matmul.py``): each input rounded to the compute dtype (float32, float16 or
bfloat16), the products summed in float32 (BLAS sgemm), the result rounded once to ``out``.

BLAS threads: OpenBLAS always runs on one thread here (``blas.single_threaded``); a product of
at least ``PARALLEL_MACS`` multiply-adds is split by rows of the result over the backend's own
workers (``workers.in_parallel``), each a one-thread BLAS call on its rows (a batch of matrices
times one matrix is one tall matrix for this). Measured on the 2-core development machine under
load (other processes busy), medians of 7 calls, OpenBLAS threaded / one thread: 32x512 @
512x1000 0.42 / 0.63 ms; 256x512 @ 512x1000 62 (min 59) / 18 ms (min 2.4); 64x4096 @ 4096x4096
195 / 99 ms: OpenBLAS's second thread, when descheduled, stalls the whole product, which our
workers' independent parts do not.
"""

from __future__ import annotations

import numpy as np

from . import blas, workers

FLOAT32 = np.dtype(np.float32)
#: Products with at least this many multiply-adds are split over the workers (module docstring).
PARALLEL_MACS = 1 << 24


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
    m, n = x.shape[-2] if x.ndim > 1 else 1, y.shape[-1] if y.ndim > 1 else 1
    macs = max(x.size * n, y.size * m)  # (the larger operand's batch times M K N)
    if macs >= PARALLEL_MACS and x.ndim >= 2 and y.ndim == 2 and workers.worker_count() > 1:
        result = _rows_in_parallel(x.reshape(-1, x.shape[-1]), y).reshape(*x.shape[:-1], n)
    else:
        with blas.single_threaded():
            result = np.matmul(x, y)
    return result if out == FLOAT32 else result.astype(out)


def _rows_in_parallel(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """x (R, K) @ y (K, N), the rows of the result split over the workers."""
    result = np.empty((x.shape[0], y.shape[1]), FLOAT32)

    def rows(start: int, stop: int) -> None:
        with blas.single_threaded():
            np.matmul(x[start:stop], y, out=result[start:stop])

    workers.in_parallel(x.shape[0], rows, min_per_thread=8)
    return result
