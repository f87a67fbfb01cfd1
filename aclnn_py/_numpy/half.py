"""FLOAT to FLOAT16 as NumPy's cast rounds it (round to nearest, ties to even), in integer passes
over the bits: the same bits as ``np.copyto(out, x, casting="unsafe")``, ~2x faster.

NumPy's FLOAT to FLOAT16 cast converts one element at a time in software (this NumPy is built
for x86-64-v2, which has no F16C instruction): ~4.5 ns an element here, against ~0.15 ns for
one SIMD pass of a ufunc over an array that stays in the L2 cache.  ``float_to_half`` computes
the result in ~13 such passes over blocks of ``BLOCK`` elements:

* the normal range (|x| from 2**-14 up to the largest value that rounds below infinity, and
  the ones that round to infinity just above 65504) as ``(|bits| + 0xFFF + odd) >> 13`` with
  the exponent re-biased, ``odd`` the lowest bit kept (ties to even);
* the sign from bit 31 to bit 15;
* everything else (FLOAT16 subnormals and zeros, overflow, infinity, NaN with its payload),
  found as the elements whose re-biased result falls outside the normal range, converted by
  NumPy's own cast: a few elements in a block of real data (an activation of N(0, 1) values
  has ~5 in 100 000 below 2**-14).

A large conversion runs on the worker threads too, the workers by NumPy's own cast (``convert``).

Every one of the 2**32 FLOAT bit patterns gives the bits NumPy's cast gives (checked once,
exhaustively; ``tests/ops/test_half.py`` checks the special values, every FLOAT16 boundary
and midpoint and their neighbours, and a random sweep).

Measured (one thread, (8,64,56,56) N(0, 1) FLOAT, interleaved rounds, median ms, load 1.2):
NumPy's cast 8.7; this with blocks of 16 Ki / 32 Ki / 64 Ki / 128 Ki elements 5.7 / 4.6 / 4.0 /
4.3.  Each pass costs ~0.15-0.3 ms of it: the ufunc passes are bound by the L2 cache's
bandwidth, so the count of passes is the cost (variants with the sign kept in place, or the
rounding done as a FLOAT add of a power of two, took as many passes or more).
"""

from __future__ import annotations

import numpy as np

from . import workers
from .workers import scratch

#: Elements of one block: its ~11 bytes an element of scratch stay in a core's L2 cache.
BLOCK = 1 << 16

_U32, _U16 = np.dtype(np.uint32), np.dtype(np.uint16)
_MAGNITUDE = np.uint32(0x7FFFFFFF)
_ONE = np.uint32(1)
_SHIFT = np.uint32(13)
# Re-bias the exponent (127 -> 15, less the smallest normal 0x400) and round: 0xFFF + odd.
_REBIAS = np.uint32((0xFFF - (112 << 23) - (0x400 << 13)) % (1 << 32))
_NORMAL_TOP = np.uint32(0x7C00 - 0x400)  # (infinity's bits less 0x400: the normal range's top)
_SIGN_SHIFT = np.uint32(16)
_SIGN = np.uint32(0x8000)
_SMALLEST_NORMAL = np.uint16(0x400)


def convert(out: np.ndarray, x: np.ndarray) -> None:
    """``float_to_half(out, x)``, a large one on the worker threads too (``workers.threads_for``)
    in two ways at once: the calling thread in ``float_to_half``'s blocks from the start, each
    worker by NumPy's own cast (``numpy_cast``) from the end (``workers.in_pieces``' ``back``),
    until they meet.

    Split into parts each thread converts by ``float_to_half``, the threads hand the GIL back
    and forth at each of its ~13 ufunc calls a block, and a hand-off a thread has to wait for
    costs ~30-50 us here (a thread woken on another core): on two threads it took as long as on
    one or longer ((8,64,56,56), 60 interleaved rounds, median / best ms: one thread 6.0 / 4.25,
    parts of ``float_to_half`` in blocks of 64 Ki 6.6 / 5.0, of 256 Ki 6.1 / 5.6).  NumPy's cast
    (~1.4 ns an element against ``float_to_half``'s ~0.95, thread time) is one call a take,
    which holds no GIL while it runs: the caller keeps its ufunc calls nearly to itself.  Same
    case, 80 rounds, median / 10th percentile / best ms, the parts before / one thread / this:
    6.16 / 4.19 / 3.16, 4.18 / 3.24 / 3.14, 5.87 / 3.87 / 3.28; (1000,2048) 6.20 / 4.36 / 3.62,
    4.21 / 3.91 / 3.78, 5.57 / 3.65 / 2.96 (this 2-vCPU VM at load 2.8-2.9 from other programs,
    its workers forced on: none of it is a quiet machine's figure)."""
    size = x.size
    threads = workers.threads_for(size, workers.MIN_PARALLEL_ELEMENTS)
    if threads <= 1:
        float_to_half(out, x)
        return
    u = x.reshape(-1)
    o = out.reshape(-1)
    blocks = -(-size // BLOCK)

    def ours(start: int, stop: int) -> None:
        float_to_half(o[start * BLOCK:stop * BLOCK], u[start * BLOCK:stop * BLOCK])

    def numpys(start: int, stop: int) -> None:
        numpy_cast(o[start * BLOCK:stop * BLOCK], u[start * BLOCK:stop * BLOCK])

    workers.in_pieces(blocks, ours, threads=threads, pieces=blocks, guided=True, back=numpys)


def numpy_cast(out: np.ndarray, x: np.ndarray) -> None:
    """``out`` (FLOAT16) = ``x`` (FLOAT) by NumPy's own cast: ``float_to_half``'s bits."""
    with np.errstate(over="ignore"):  # (as the caller's cast: infinity, no warning)
        np.copyto(out, x, casting="unsafe")


def float_to_half(out: np.ndarray, x: np.ndarray) -> None:
    """``out`` (FLOAT16) = ``x`` (FLOAT, of ``out``'s shape) as NumPy's cast converts it; both
    C-contiguous."""
    u = x.reshape(-1).view(_U32)
    o = out.reshape(-1).view(_U16)
    for start in range(0, u.size, BLOCK):
        _block(o[start:start + BLOCK], u[start:start + BLOCK])


def _block(o: np.ndarray, u: np.ndarray) -> None:
    n = u.size
    a = scratch("half.a", (n,)).view(_U32)
    t = scratch("half.t", (n,)).view(_U32)
    outside = scratch("half.outside", (-(-n // 4),)).view(np.bool_)[:n]
    np.bitwise_and(u, _MAGNITUDE, out=a)
    np.right_shift(a, _SHIFT, out=t)
    np.bitwise_and(t, _ONE, out=t)          # the lowest bit kept: ties go to it being 0
    np.add(t, a, out=t)
    np.add(t, _REBIAS, out=t)
    np.right_shift(t, _SHIFT, out=t)        # the FLOAT16 bits less 0x400, for the normal range
    np.greater(t, _NORMAL_TOP, out=outside)  # (below the range it wraps to above it)
    special = np.flatnonzero(outside)
    np.right_shift(u, _SIGN_SHIFT, out=a)
    np.bitwise_and(a, _SIGN, out=a)
    np.add(t, a, out=t)
    np.copyto(o, t, casting="unsafe")       # (the low 16 bits)
    np.add(o, _SMALLEST_NORMAL, out=o)
    if special.size:
        with np.errstate(over="ignore"):  # (as the caller's cast: infinity, no warning)
            o[special] = u[special].view(np.float32).astype(np.float16).view(_U16)
