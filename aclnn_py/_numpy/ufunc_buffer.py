"""The NumPy ufunc buffer the memory-bound numpy kernels run with (their ``work`` parts, on every
thread): one setting for all of them."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

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


@contextlib.contextmanager
def ufunc_buffer() -> Iterator[None]:
    """The calling thread's ufunc buffer at ``UFUNC_BUFFER`` elements inside the block
    (NumPy keeps the setting per thread: a worker thread's own is set by its own work)."""
    previous = np.setbufsize(UFUNC_BUFFER)
    try:
        yield
    finally:
        np.setbufsize(previous)
