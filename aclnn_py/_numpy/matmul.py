"""The numpy backend's matrix product, shared by mm, addmm, matmul and batch_mat_mul.

``product(a, b, compute, out)`` is ``np.matmul``'s product (its broadcasting of batch dims and
1-D operands is torch.matmul's), computed as CANN's cube unit does on A2/A3
(``ops/_matmul.py``): each input rounded to the compute dtype (float32, float16 or
bfloat16), the products summed in float32 (BLAS sgemm, threaded by OpenBLAS itself: the call
runs on the calling thread, not on the backend's workers, so ``blas.single_threaded`` does not
apply), the result rounded once to ``out``.

An operand BLAS cannot take as it is (strides other than a row- or column-major matrix: a
transposed view it takes directly) is copied contiguous first: NumPy's matmul would otherwise
run its slow loop.
"""

from __future__ import annotations

import numpy as np

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
    result: np.ndarray = np.matmul(operand(a, compute), operand(b, compute))
    return result if out == FLOAT32 else result.astype(out)
