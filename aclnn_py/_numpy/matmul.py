"""The numpy backend's matrix product, shared by mm, addmm, matmul and batch_mat_mul.

``product(a, b, compute, out)`` is ``np.matmul``'s product (its broadcasting of batch dims and
1-D operands is torch.matmul's), computed as CANN's cube unit does on A2/A3
(``ops/_matmul.py``): each input rounded to the compute dtype (float32, float16 or
bfloat16), the products summed in float32 (BLAS sgemm), the result rounded once to ``out``.

BLAS threads: OpenBLAS runs on one thread here (``blas.single_threaded``). Measured on the
2-core development machine under load (other agents' processes busy), medians of 7 calls,
OpenBLAS threaded / one thread: 32x512 @ 512x1000 0.42 / 0.63 ms; 256x512 @ 512x1000 62 (min
59) / 18 ms (min 2.4); 64x4096 @ 4096x4096 195 / 99 ms: OpenBLAS's second thread, when
descheduled, stalls the whole product. Splitting a large product's rows over the backend's
(pinned) workers, each on one BLAS thread, was tried and measured worse still there (median 53,
min 33 ms for 256x512 @ 512x1000, against 24 / 2.6 on one thread, alternating in one process).
"""

from __future__ import annotations

import numpy as np

from . import blas

FLOAT32 = np.dtype(np.float32)


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
        result: np.ndarray = np.matmul(x, y)
    return result if out == FLOAT32 else result.astype(out)
