"""Small problems as one matrix product: the numpy backend's path for tiny spatial sizes.

The col2im, reflection-pad and average-pool gradients are linear maps from each
(image, channel) plane of gradOutput to the same plane of gradInput, fixed by the shapes and
parameters. Their vectorised kernels make one NumPy call per kernel offset or border piece,
~1 us each whatever the size: on a 4x4 image that overhead is the whole cost (a reflection pad
of a (1, 1, 4, 4) image took 23 us in its kernel vs 6 us for PyTorch). On such sizes the
op's own kernel is instead run once on the identity basis to obtain its matrix, cached per
shape and parameters, and every call is a single matrix product (~3 us).

The matrix comes from the same kernel that handles large inputs, so both paths compute the
same function; the tests force each path on the same cases. Inputs with inf or NaN take
the kernel: inf x 0 in the product would spread NaN over the whole plane.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from .._dtypes import compute_dtype

# The small path is taken when the matrix (plane in x plane out elements) is at most this big
# (256 KiB of float32) and the product does at most _MAX_WORK multiply-adds: beyond that the
# per-offset kernels, which touch each element once or k times, are cheaper.
MAX_MATRIX_ELEMENTS = 1 << 16
_MAX_WORK = 1 << 20
_CACHED_MATRICES = 256


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


def apply(kernel: Callable[..., np.ndarray], params: tuple[Any, ...], grad: np.ndarray, in_plane: tuple[int, ...],
          out_plane: tuple[int, ...], out_dtype: np.dtype) -> np.ndarray:
    """``kernel(x, *params)`` applied to every plane of ``grad`` (leading dims, then
    ``in_plane``) as one matrix product; a new array ``grad.shape[:-len(in_plane)] + out_plane``.

    ``kernel`` (a module-level function) maps a float32 array ``(batch, *in_plane)`` to
    ``(batch, *out_plane)``; with the hashable ``params`` and ``in_plane`` it keys the cache.
    """
    lead = grad.shape[:grad.ndim - len(in_plane)]
    rows = grad.reshape(-1, math.prod(in_plane))
    wide = compute_dtype(grad.dtype)
    if rows.dtype != wide:
        rows = rows.astype(wide)
    if np.isfinite(rows).all():
        # np.dot skips matmul's gufunc machinery (~0.3 us of a ~6 us call on these sizes)
        out = np.dot(rows, _matrix(kernel, params, in_plane))
    else:
        # An inf or NaN input times the matrix's zeros would be NaN everywhere: such inputs take
        # the kernel, which keeps each value inside its window.
        out = kernel(rows.reshape(-1, *in_plane), *params)
    result: np.ndarray = out.reshape(*lead, *out_plane).astype(out_dtype, copy=False)
    return result
