"""The NumPy ufunc buffer the memory-bound numpy kernels run with (their ``work`` parts, on every
thread): one setting for all of them."""

from __future__ import annotations

import numpy as np

# The elements of NumPy's ufunc buffer while a kernel runs (NumPy's default: 8192). Ufuncs
# iterate operands that are not one flat run (planes of rows, a plane's strided offsets)
# through a buffered iterator, and with the default buffer each inner loop cost ~0.2 us more
# here: an add of (64, 783) rows 13 us with 8192, 7 us with 16 to 784; the benchmark's cases
# on one thread, interleaved rounds, median ms with 8192 / 1024 / 256: im2col k3 s2 p1
# (8,64,56,56) 1.89 / 1.61 / 1.62, conv layer k3 (8,64,56,56) 4.50 / 4.46 / 4.56; avg_pool
# k3 s2 p1 (8,64,112,112) ceil 2.80 / 2.70 / 2.76, k2 s2 (8,256,28,28) 0.56 / 0.49 / 0.48.
# (The buffer only batches casts and misaligned data: the numbers computed are the same.)
UFUNC_BUFFER = 1024

# A ufunc of a broadcast operand (a row's max, a channel's bias) over runs of a few hundred to a
# few thousand elements: with the default buffer NumPy's iterator fills its buffer across runs,
# copying the broadcast operand out for each, where a buffer one run long gives one inner loop a
# run with the operand's stride 0 and no copy.  Thread time, median ms, buffer 8192 / one run:
# (256, 1000) - (256, 1) 0.21 / 0.064 (0.061 without broadcast); (8, 64, 3136) * (64, 1)
# 1.40 / 0.70; (8, 128, 784) * (128, 1) 0.77 / 0.38; (1024, 256) * (1024, 1) 0.23 / 0.15;
# (12288, 128) - (12288, 1) 1.31 / 1.47 (shorter runs: the inner loop's set-up dominates).
#: The shortest run ``run_buffer`` sizes the buffer for.
SHORTEST_RUN = 256
#: The elements of a call below which ``run_buffer`` keeps the caller's buffer (setting it and
#: back costs ~5 us; the copies it saves are a few us at this size).
BROADCAST_ELEMENTS = 1 << 15
_DEFAULT = 8192  # (NumPy's: a run this long never spans two in one buffer)


def run_buffer(run: int, size: int) -> int | None:
    """The ufunc buffer for a broadcast of ``size`` elements over runs of ``run`` (a multiple
    of 16, as NumPy takes it), or None to keep the caller's (a small call, runs too short or
    long enough already)."""
    return -(-run // 16) * 16 if SHORTEST_RUN <= run < _DEFAULT and size >= BROADCAST_ELEMENTS else None


def inner_run(shape: tuple[int, ...], *operands: tuple[int, ...]) -> int:
    """The elements of the innermost run of ``shape`` (its trailing dims) in which every operand
    (a shape broadcasting to it) is either whole or broadcast throughout: the run NumPy's
    iterator walks with one stride per operand."""
    run, pattern = 1, None
    for axis in range(1, len(shape) + 1):
        size = shape[-axis]
        if size == 1:
            continue
        here = tuple(len(o) >= axis and o[-axis] == size for o in operands)
        if pattern is not None and here != pattern:
            break
        pattern = here
        run *= size
    return run


class ufunc_buffer:
    """The calling thread's ufunc buffer at ``elements`` (default ``UFUNC_BUFFER``; None: left
    as it is) inside the ``with`` block (NumPy keeps the setting per thread: a worker thread's
    own is set by its own work).  A class, not a generator's context manager: with None (every
    small call) entering and leaving cost ~0.3 us, not ~1.8 us."""

    __slots__ = ("_elements", "_previous")

    def __init__(self, elements: int | None = UFUNC_BUFFER) -> None:
        self._elements = elements
        self._previous = 0

    def __enter__(self) -> None:
        if self._elements is not None:
            self._previous = np.setbufsize(self._elements)

    def __exit__(self, *_: object) -> None:
        if self._elements is not None:
            np.setbufsize(self._previous)
