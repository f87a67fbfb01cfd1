"""Small problems as one matrix product: the numpy backend's path for tiny spatial sizes.

Average pooling and the col2im, reflection-pad and average-pool gradients are linear maps
from each (image, channel) plane of their input to the same plane of their output, fixed by
the shapes and parameters. Their vectorised kernels make one NumPy call per kernel offset or border piece,
~1 us each whatever the size: on a 4x4 image that overhead is the whole cost (a reflection pad
of a (1, 1, 4, 4) image took 23 us in its kernel vs 6 us for PyTorch). On such sizes the
op's own kernel is instead run once on the identity basis to obtain its matrix, cached per
shape and parameters, and every call is a single matrix product (~3 us).

The matrix comes from the same kernel that handles large inputs, so both paths compute the
same function; the tests force each path on the same cases. Inputs with inf or NaN take
the kernel: inf x 0 in the product would spread NaN over the whole plane.
"""

from __future__ import annotations

import contextlib
import functools
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from .._dtypes import compute_dtype
from . import blas

# The small path is taken when the matrix (plane in x plane out elements) is at most this big
# (256 KiB of float32) and the product does at most _MAX_WORK multiply-adds: beyond that the
# per-offset kernels, which touch each element once or k times, are cheaper.
MAX_MATRIX_ELEMENTS = 1 << 16
_MAX_WORK = 1 << 20
_CACHED_MATRICES = 256
# OpenBLAS (0.3.x) runs a product of more multiply-adds than this on its own threads (its
# SMP_THRESHOLD_MIN times GEMM_MULTITHREAD_THRESHOLD, 65536 x 4); such a product here then goes
# through ``blas.on_caller`` (one thread while the machine is busy): a second BLAS thread that
# waits for a core another program holds stalled these ~10 us products for 6-36 ms under load.
_BLAS_THREADED_WORK = 1 << 18


def use_small(planes: int, plane_in: int, plane_out: int) -> bool:
    """Whether ``planes`` planes of ``plane_in -> plane_out`` elements take the matrix path."""
    size = plane_in * plane_out
    return 0 < size <= MAX_MATRIX_ELEMENTS and planes * size <= _MAX_WORK


@functools.lru_cache(maxsize=_CACHED_MATRICES)
def _matrix(kernel: Callable[..., np.ndarray], params: tuple[Any, ...], in_plane: tuple[int, ...]) -> np.ndarray:
    n = math.prod(in_plane)
    basis = np.eye(n, dtype=np.float32).reshape(n, *in_plane)
    matrix = np.ascontiguousarray(kernel(basis, *params).reshape(n, -1), dtype=np.float32)
    matrix.flags.writeable = False
    return matrix


# Up to this many elements, summing them as Python numbers tells whether all are finite sooner
# than np.isfinite(x).all(), whose two NumPy calls cost ~1 us whatever the size (measured:
# 0.2 us for 4 elements, 0.8 us for 64, 1.8 us for 128, against 1.0-1.3 us).
_PYTHON_SUM = 64


def _finite(rows: np.ndarray) -> bool:
    """Whether every element of ``rows`` is finite. The Python sum is exact enough: float32 or
    float16 values cannot overflow it; a float64 or complex one that does only sends a finite
    input to the kernel, which computes the same."""
    if rows.size <= _PYTHON_SUM:
        return math.isfinite(abs(sum(rows.ravel().tolist())))
    return bool(np.isfinite(rows).all())


def product(kernel: Callable[..., np.ndarray], params: tuple[Any, ...], in_plane: tuple[int, ...],
            out_plane: tuple[int, ...], lead: tuple[int, ...], in_dtype: np.dtype,
            out_dtype: np.dtype) -> Callable[[np.ndarray], np.ndarray]:
    """``kernel(x, *params)`` as one matrix product: a function of ``grad``, ``lead`` planes of
    ``in_plane`` elements of ``in_dtype`` in C order (in any shape), returning a new array
    ``lead + out_plane`` of ``out_dtype``, the same map for every plane.

    ``kernel`` (a module-level function) maps a float32 array ``(batch, *in_plane)`` to
    ``(batch, *out_plane)``; with the hashable ``params`` and ``in_plane`` it keys the cache.
    """
    matrix = _matrix(kernel, params, in_plane)
    rows_shape, out_shape = (math.prod(lead), math.prod(in_plane)), lead + out_plane
    wide = compute_dtype(in_dtype)
    widen, narrow = in_dtype != wide, out_dtype != wide
    threaded = rows_shape[0] * matrix.size > _BLAS_THREADED_WORK

    def apply(grad: np.ndarray) -> np.ndarray:
        rows = grad.reshape(rows_shape)
        if widen:
            rows = rows.astype(wide)
        if _finite(rows):
            # np.dot skips matmul's gufunc machinery (~0.3 us of a ~6 us call on these sizes)
            with blas.on_caller() if threaded else contextlib.nullcontext():
                out = np.dot(rows, matrix)
        else:
            # An inf or NaN input times the matrix's zeros would be NaN everywhere: such inputs
            # take the kernel, which keeps each value inside its window.
            out = kernel(rows.reshape(-1, *in_plane), *params)
        result: np.ndarray = out.reshape(out_shape)
        return result.astype(out_dtype) if narrow else result

    return apply
