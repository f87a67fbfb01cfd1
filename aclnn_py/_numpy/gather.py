"""Small data-movement problems as one gather: the numpy backend's path for tiny planes.

Reflection padding, nearest upsampling and im2col copy each element of a plane of their output
from one element of the same (image, channel) plane of their input, or write a zero (im2col's
padding): a fixed map of the shapes and parameters. Their vectorised kernels make one NumPy
call per border strip or window offset, ~1 us each whatever the size, and on a 4x4 image that
overhead is the whole call. On such sizes the op's own kernel is instead run once on a plane
holding each element's position, which gives the map (cached per shape and parameters), and
every call is one ``take`` of it.

The map comes from the same kernel that handles large inputs and a gather copies values
bit for bit, so both paths give the same bits for every dtype, NaN and -0.0 included; the
tests force each path on the same cases (``MAX_GATHER_ELEMENTS``).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any

import numpy as np

# The gather is taken when a call writes at most this many elements: a take copies an element
# in a few ns, the kernels' slices ~1 ns but each slice costs ~1 us, so beyond a few thousand
# elements a plane the kernel is as cheap and needs no map.
MAX_GATHER_ELEMENTS = 1 << 14
_CACHED_MAPS = 256


def use_gather(out_elements: int) -> bool:
    """Whether a call writing ``out_elements`` elements takes the gather."""
    return 0 < out_elements <= MAX_GATHER_ELEMENTS


@functools.lru_cache(maxsize=_CACHED_MAPS)
def _sources(kernel: Callable[..., np.ndarray], params: tuple[Any, ...],
             in_plane: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray | None]:
    """The input element each output element of a plane copies (its flat index), and the
    output elements that are zeros (None where there is none)."""
    n = math.prod(in_plane)
    # Positions counted from 1: a 0 in the kernel's result is a zero it wrote. (float64 holds
    # them exactly; the kernels copy, whatever the dtype.)
    plane = np.arange(1, n + 1, dtype=np.float64).reshape(1, *in_plane)
    found = kernel(plane, *params).reshape(-1)
    zero = found == 0
    sources = np.where(zero, 1, found).astype(np.intp) - 1
    sources.flags.writeable = False
    if not zero.any():
        return sources, None
    zeros = np.flatnonzero(zero)
    zeros.flags.writeable = False
    return sources, zeros


def gather(kernel: Callable[..., np.ndarray], params: tuple[Any, ...], in_plane: tuple[int, ...],
           out_shape: tuple[int, ...], planes: int) -> Callable[[np.ndarray], np.ndarray]:
    """``kernel(x, *params)`` as one gather: a function of ``x``, ``planes`` planes of
    ``in_plane`` elements in C order (in any shape), returning a new array of ``out_shape``
    (``planes`` output planes in C order) of ``x``'s dtype.

    ``kernel`` (a module-level function) maps an array ``(batch, *in_plane)`` to its
    ``(batch, ...)`` result, each element a copy of one of the same plane's or a zero; with
    the hashable ``params`` and ``in_plane`` it keys the cache."""
    sources, zeros = _sources(kernel, params, in_plane)
    rows_shape = (planes, math.prod(in_plane))

    def apply(x: np.ndarray) -> np.ndarray:
        # (mode clip: the indices are in range, and it skips take's check of them)
        out = x.reshape(rows_shape).take(sources, axis=1, mode="clip")
        if zeros is not None:
            out[:, zeros] = 0
        return out.reshape(out_shape)

    return apply
