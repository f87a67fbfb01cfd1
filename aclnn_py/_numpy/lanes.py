"""One kernel over independent slices of its arrays, the slices shared out to the backend's worker
threads (``workers.in_parallel``): the softmax family's rows, a reduction's kept dims, BatchNorm's
channels.  NumPy's ufuncs and reductions release the GIL, so two slices run on two cores.

``over(shape, fixed, work)`` calls ``work(index)`` with ``index`` a tuple of slices selecting one
part of every array of ``shape`` the kernel reads and writes: the parts cut the outermost dim not
in ``fixed`` (the dims a part must hold whole: the softmax dim, the reduced dims), so a part of a
C-contiguous array is one contiguous block where the dims before it are 1.  Each element of a
result is computed by exactly one part, from its own slice alone, in the same order as one call
over the whole array would: the split changes no figure, except in the sums of short rows that
``reduce.last_sums`` hands to BLAS (its kernels may add a row's elements in another order
depending on where the row falls in a block of rows: a last-bit difference, within the
tolerances).

Measured (2-core machine, medians of 200 calls, one process, the split toggled in turn):
softmax (256,1000) dim 1 0.63 -> 0.30 ms with the in-place passes and two parts, log_softmax
likewise; below ``MIN_PART_ELEMENTS`` per part the hand-off (20-50 us to wake a worker and
wait for it) costs more than the half of a multi-pass kernel it saves.
"""

from __future__ import annotations

import math

from collections.abc import Callable, Collection

from .workers import in_parallel, worker_count

Index = tuple[slice, ...]

#: Elements a part must hold to be worth a worker (a multi-pass kernel of 4-5 passes over 64 Ki
#: float32 elements takes ~60-100 us on one core).
MIN_PART_ELEMENTS = 1 << 16


def split_dim(shape: tuple[int, ...], fixed: Collection[int]) -> int | None:
    """The dim the parts cut: the outermost one not in ``fixed`` of size >= 2 (None if none)."""
    for axis, size in enumerate(shape):
        if axis not in fixed and size >= 2:
            return axis
    return None


def over(shape: tuple[int, ...], fixed: Collection[int], work: Callable[[Index], None]) -> None:
    """``work(index)`` over parts of ``shape`` cut along ``split_dim`` (module docstring), one part
    per worker thread when each holds at least ``MIN_PART_ELEMENTS``; else ``work`` of the whole."""
    total = math.prod(shape)
    axis = split_dim(shape, fixed)
    if axis is None or worker_count() < 2 or total < 2 * MIN_PART_ELEMENTS:
        work((slice(None),) * len(shape))
        return
    size = shape[axis]
    lead = (slice(None),) * axis

    def part(start: int, stop: int) -> None:
        work((*lead, slice(start, stop)))

    in_parallel(size, part, min_per_thread=max(1, math.ceil(MIN_PART_ELEMENTS * size / total)))
