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

Measured again per size (2026-11-28, load average 7.5-8.5 on the 2 cores: both variants
interleaved in one process, 40 then 80 rounds, fastest/median ms, one thread vs threaded)::

    product                     run 1 (40 rounds)              run 2 (80 rounds)
    32x512 @ 512x1000           0.355/0.401 vs 0.196/0.249     0.351/0.385 vs 0.192/0.262
    256x512 @ (1000x512)^T      2.25/14.5 vs 1.16/13.5         2.16/12.1 vs 1.59/12.9
    64x4096 @ 4096x4096         41.7/60.4 vs 130.6/172.0       (not rerun)
    64x512 @ (1000x512)^T       0.722/0.818 vs 38.8/48.0       0.734/1.06 vs 0.533/0.701
    4x128x768 @ 768x768         9.40/23.6 vs 2.91/176.0        (not rerun)
    4096 @ 4096x1000 (vector)   0.557/0.807 vs 0.359/11.6      0.574/0.856 vs 0.370/15.8
    48x(128x64 @ (128x64)^T)    1.15/1.40 vs 1.49/1.71         1.26/1.85 vs 1.55/1.98
    48x(128x128 @ 128x64)       1.01/1.20 vs 0.731/0.944       1.07/1.75 vs 0.724/22.9

The threads' fastest rounds win almost everywhere (a quiet machine's case), but only the
smallest plain product (16 M multiply-adds) wins in the medians of both runs too: the others'
medians swing by 10-100x when the second thread waits for a core. Threading products up to
that size (M * K * N <= 2^24) was then tried in ``scripts/bench.py`` under load
average 11: "mm classifier head 32x512 @ 512x1000" 298x PyTorch and "addmm linear 32x512 ->
1000" 139x (against 1.4x and 1.6x one-threaded in the run before, load average 5): a stall of
the second thread costs 100x what it saves. So every product stays on one thread.
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
