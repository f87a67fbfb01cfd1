"""Reductions as the numpy backend computes them: the shared arithmetic of ReduceSum, Mean, the
softmax family (max and sum along one dim) and BatchNorm (per-channel mean and variance).

The simulator's C holds the same (``sim/src/ops/reduce.[ch]``). FLOAT16 and BFLOAT16 are
computed in FLOAT and rounded once at the end (the CANN kernels of these operators cast 16-bit
inputs to float before they reduce: BatchNormV3, SoftmaxV2 / LogSoftmaxV2 and ReduceSum's
fp16 path as their op_api sources build them; the device's summation order is not
verified). NumPy sums FLOAT pairwise, which is as accurate as a float accumulator gets; the
simulator accumulates in double, and so do both backends for BatchNorm's per-channel sums
(``double_channel_sums``).

The dims rules (wrapping negative dims, duplicates, an empty list meaning every dim) are the
checks' (``ops/_reduce.py``); the functions here take dims already normalised.
"""

from __future__ import annotations

import functools
import math

from collections.abc import Callable, Sequence

import numpy as np

from .._dtypes import compute_dtype
from . import blas, lanes, workers
from .ufunc_buffer import run_buffer, ufunc_buffer

FLOAT32 = np.dtype(np.float32)


def widened(a: np.ndarray) -> np.ndarray:
    """``a`` in its compute dtype (FLOAT for FLOAT16/BFLOAT16; others as they are)."""
    wide = compute_dtype(a.dtype)
    return a if a.dtype == wide else a.astype(wide)


#: Rows at most this long are summed as a BLAS product with a ones vector (``last_sums``):
#: NumPy's own loop adds such a row in 8 running sums (its pairwise summation starts above 128
#: elements), BLAS in its vector lanes, so the accuracy is alike, but NumPy pays ~30 ns of loop
#: set-up per row.  Measured (float32, one thread, fastest of 300): (16384, 49) 0.50 -> 0.16 ms,
#: (12288, 128) 0.57 -> 0.32 ms, (4096, 196) 0.29 -> 0.14 ms.  A longer row is cut into
#: blocks of ``block_length`` (at most this, a divisor of its length) summed so, and the blocks'
#: sums then summed so in turn: the error stays that of NumPy's pairwise sum (which adds blocks
#: of 128 in 8 running sums), against twice it for whole 1000-long rows by BLAS.
#: Measured (float32, one thread, thread time, median of 50 ms, NumPy's sum / in blocks; max
#: error against float64, x 1e-6): rows (256, 1000) 0.071 / 0.046 (8.9 / 8.8); all of (256,
#: 1000) 0.065 / 0.024 (70 / 9.3); (8, 64, 56, 56) over (0, 2, 3) 0.47 / 0.34 (51 / 48).  The
#: blocks' sums by BLAS, not NumPy's sum (~35 ns of loop set-up per row of blocks): reduce_sum
#: of (8, 64, 56, 56) over (0, 2, 3) 0.168 -> 0.161 ms thread time; max error against float64,
#: mean of 5 arrays x 1e-6, NumPy's / BLAS: rows (256, 1000) 34 / 33, (512, 3136) 121 / 78,
#: (64, 12544) 392 / 290.
SHORT_ROW = 128


def block_length(length: int) -> int:
    """The length of the blocks ``last_sums`` cuts a row of ``length`` into: the row itself up
    to ``SHORT_ROW``, else its largest divisor from ``SHORT_ROW / 2`` to ``SHORT_ROW``, else 0
    (no blocks: NumPy's sum)."""
    return _block_length(length, SHORT_ROW)


@functools.lru_cache(maxsize=256)
def _block_length(length: int, short: int) -> int:
    if length <= short:
        return length
    return next((b for b in range(short, short // 2 - 1, -1) if b and length % b == 0), 0)


def last_sums(a: np.ndarray, keepdims: bool = False) -> np.ndarray:
    """The sums along the last axis of a FLOAT/DOUBLE array (``SHORT_ROW``); its dtype."""
    shape = a.shape
    length = shape[-1] if shape else 0
    block = _block_length(length, SHORT_ROW) if length else 0
    if block and a.dtype in _BLAS_DTYPES and a.strides[-1] == a.itemsize and a.size >= 2 * block:
        # (one matrix where ``a`` is C-contiguous; else a stack of them, each row still a view)
        rows = a.reshape(-1, block) if a.flags.c_contiguous else a.reshape(*shape[:-1], length // block, block)
        ones = _ones(block, a.dtype)
        if a.size < ONE_THREAD_PRODUCT:  # (OpenBLAS's own rule: no thread to hold back)
            blocks = np.matmul(rows, ones)
        else:
            with blas.single_threaded():  # (called from the worker threads: one BLAS thread each)
                blocks = np.matmul(rows, ones)
        if length > block:
            # (the blocks' sums, a C-contiguous array, summed so again: NumPy's reduction of rows
            # of a few dozen blocks paid its ~35 ns of set-up per row)
            blocks = last_sums(blocks.reshape(*shape[:-1], length // block))
        return np.asarray(blocks.reshape((*shape[:-1], 1) if keepdims else shape[:-1]))
    return np.asarray(np.add.reduce(a, axis=-1, keepdims=True) if keepdims else np.add.reduce(a, axis=-1))


_BLAS_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


#: Rows from which ``reduce_sum`` sums leading dims by ``first_sums``.  Thread time of
#: reduce_sum over dim 0, median of 200 interleaved calls, NumPy's sum / first_sums ms (max error
#: against float64 x 1e-6): (4096, 64) 0.185 / 0.065 (297 / 62); (1024, 256) 0.081 / 0.053
#: (94 / 26); (256, 1000) 0.065 / 0.056 (21 / 12); (128, 4096) 0.157 / 0.155; (64, 1000) 0.021 /
#: 0.021; with few rows NumPy's is faster: (8, 64*56*56) 0.46 / 0.52.
MANY_ROWS = 128


def first_sums(a: np.ndarray) -> np.ndarray:
    """The sums over the first axis of a 2-D FLOAT/DOUBLE array with contiguous rows: a BLAS
    product of a ones vector with it, in vector lanes (``MANY_ROWS``)."""
    ones = _ones(a.shape[0], a.dtype)
    if a.size < ONE_THREAD_PRODUCT:  # (OpenBLAS's own rule: no thread to hold back)
        return np.asarray(np.matmul(ones, a))
    with blas.single_threaded():  # (called from the worker threads: one BLAS thread each)
        return np.asarray(np.matmul(ones, a))

#: Products of fewer elements OpenBLAS runs on the calling thread whatever its thread count:
#: ``last_sums`` and ``first_sums`` skip ``blas.single_threaded`` for them, whose setting and
#: restoring the count costs ~6 us a call here, more than a small product (a (128, 10) product
#: ~2.7 us; last_sums of it 13.5 -> ~4 us, of (64, 128) 13.8 -> ~5 us, with the ones vector
#: kept too).  OpenBLAS's source threads a gemv from 2304 * GEMM_MULTITHREAD_THRESHOLD (4 by
#: default) elements, but NumPy's OpenBLAS (SkylakeX kernels, 2 threads) ran these products
#: on the caller alone, process CPU time / wall time 1.00 (median of 15 batches of 20):
#: (2048,125), (2048,128), (256,1000), (64,4096), (2400,125), (3000,125); at (1024,1000)
#: 0.63.  With 1 << 18 (was 2304 * 4) the (256,1000) cases skip it: thread time, medians of 41
#: interleaved rounds, load 2.5, ms: reduce_sum over all 0.132 -> 0.104, over dim 0 0.095 ->
#: 0.068, mean over all 0.160 -> 0.126, softmax_backward 0.427 -> 0.378, log_softmax_backward
#: 0.422 -> 0.382.
ONE_THREAD_PRODUCT = 1 << 18


@functools.lru_cache(maxsize=64)
def _ones(length: int, dtype: np.dtype) -> np.ndarray:
    """A read-only ones vector, kept from call to call (the ``last_sums`` product's)."""
    ones = np.ones(length, dtype)
    ones.flags.writeable = False
    return ones


# -- BatchNorm: statistics per channel (dim 1) ------------------------------------------------

def channels(x: np.ndarray) -> np.ndarray:
    """``x`` of shape (N, C, ...) as a C-contiguous FLOAT (N, C, L) array, L the product of the
    trailing dims (1 for 2-D): a view where ``x`` is a contiguous FLOAT array, else a copy."""
    n, c = x.shape[0], x.shape[1]
    wide = np.ascontiguousarray(x, dtype=FLOAT32)
    return wide.reshape(n, c, -1 if n * c else math.prod(map(int, x.shape[2:])))


#: Elements of the DOUBLE buffer ``double_channel_sums`` converts a run of rows into (2 MiB).
#: ResNet's conv1 (8,64,112,112), medians ms, one thread: the whole array in one NumPy reduction
#: with dtype DOUBLE 5.3, in buffers of 64 Ki 4.9, 256 Ki 2.8 (FLOAT in BLAS blocks, as before: 1.8).
DOUBLE_RUN = 1 << 18
#: Images whose products ``double_channel_sums`` adds in FLOAT before converting, and the
#: elements of a run of that sum (128 KiB, in cache). ResNet's conv1 (8,64,112,112) sum(g * d),
#: medians ms / largest error against float64: each product converted 5.2 / 2.0e-5, FLOAT sums of
#: 8 images 3.8 / 5.0e-5, one FLOAT einsum 1.9 / 7.0e-4 (layer1 (8,64,56,56): 1.19, 0.56, 0.41).
PRODUCT_IMAGES, PRODUCT_RUN = 8, 1 << 15


def _runs(c: int, length: int, elements: int) -> int:
    """Rows of ``length`` in a run of about ``elements`` (at least one, at most ``c``)."""
    return max(1, min(c, elements // length))


def double_channel_sums(a3: np.ndarray, b3: np.ndarray | None = None) -> np.ndarray:
    """The sums of each channel of an (N, C, L) FLOAT array accumulated in DOUBLE, (C,); with
    ``b3``, (2, C): those and the sums of the products ``a3 * b3``. Each element is converted,
    ``DOUBLE_RUN`` elements at a time (a run of channels of every image, else of one image's;
    ``a3`` as ``channels`` makes it, or a part of it over C), into a DOUBLE buffer summed by
    ``last_sums``; the products are first added over up to ``PRODUCT_IMAGES`` images in FLOAT
    (einsum), in runs of ``PRODUCT_RUN``. (A float accumulator over the ~10^5 O(1) elements of a
    channel ends ~10 ulps off a mean or gradient sum near 0, which BatchNorm's outputs cancel
    against: ResNet's conv1 output MARE 2.5e-4 -> 9.7e-5 against the float64 golden.)"""
    n, c, length = a3.shape
    sums = np.zeros((1 if b3 is None else 2, c))
    if a3.size == 0:
        return np.asarray(sums[0] if b3 is None else sums)
    together = n * length <= DOUBLE_RUN  # (every image's rows of a run of channels at once)
    rows = _runs(c, n * length, DOUBLE_RUN) if together else _runs(c, length, DOUBLE_RUN)
    buffer = np.empty((n if together else 1, rows, length))
    for i in range(0, n, n if together else 1):
        images = slice(i, n if together else i + 1)
        for first in range(0, c, rows):
            part = buffer[:, :min(first + rows, c) - first]
            np.copyto(part, a3[images, first:first + rows])
            sums[0, first:first + rows] += np.add.reduce(last_sums(part), axis=0)
    if b3 is None:
        return np.asarray(sums[0])
    rows = _runs(c, length, PRODUCT_RUN)
    product, wide = np.empty((rows, length), FLOAT32), np.empty((rows, length))
    for i in range(0, n, PRODUCT_IMAGES):
        images = slice(i, i + PRODUCT_IMAGES)
        for first in range(0, c, rows):
            k = min(first + rows, c) - first
            np.einsum("ncl,ncl->cl", a3[images, first:first + k], b3[images, first:first + k], out=product[:k])
            np.copyto(wide[:k], product[:k])
            sums[1, first:first + k] += last_sums(wide[:k])
    return sums


def channel_mean(x3: np.ndarray) -> np.ndarray:
    """The mean of each channel of an (N, C, L) FLOAT array (``double_channel_sums`` rounded
    once), FLOAT of shape (C,)."""
    count = x3.shape[0] * x3.shape[2]
    return np.asarray(double_channel_sums(x3) / max(count, 1), FLOAT32)


def centered(x3: np.ndarray, mean: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(x3 - mean, the biased variance of each channel)`` of an (N, C, L) FLOAT array: the
    variance from the centred values (two passes, no cancellation), FLOAT of shape (C,)."""
    with ufunc_buffer(lane_buffer(x3.shape, 1)):
        d = np.subtract(x3, mean[:, None])
    count = x3.shape[0] * x3.shape[2]
    squares = np.einsum("ncl,ncl->c", d, d) if d.size else np.zeros(x3.shape[1], FLOAT32)
    return d, np.asarray(squares / np.float32(count), FLOAT32)


def channel_sums(g3: np.ndarray, d3: np.ndarray | None = None) -> np.ndarray:
    """Per channel of (N, C, L) FLOAT arrays: the sum of ``g3`` (C,), or with ``d3`` those and the
    sums of ``g3 * d3`` (2, C), accumulated in DOUBLE (``double_channel_sums``), FLOAT."""
    return np.asarray(double_channel_sums(g3, d3), FLOAT32)


#: Channel rows (L, the product of the trailing dims) up to which ``affine`` works on (N, C*L)
#: rows with each channel's figure repeated L times (``along_rows``): a broadcast over N alone,
#: one NumPy inner loop of C*L elements per image, where the per-channel broadcast runs one
#: loop of L per (image, channel).  ResNet's layer4 (8,512,7,7), one thread, medians of 31
#: calls: ``affine`` 0.287 -> 0.175 ms; at L = 3136 (8,64,56,56) the channel split wins (1.30
#: against 1.72 ms).  BatchNormBackward's elementwise passes run along rows too below it
#: (``ops/batch_norm_backward._along_rows``: 0.84 -> 0.65 ms thread time at (8,512,7,7)).
SHORT_CHANNEL = 256


def along_rows(x3: np.ndarray, *figures: np.ndarray) -> tuple[np.ndarray, ...]:
    """A C-contiguous (N, C, L) array as (N, C*L) rows, and each per-channel ``figure`` (C,)
    repeated L times (C*L,), the channel's run in every row."""
    n, c, length = x3.shape
    return (x3.reshape(n, c * length), *(np.repeat(f, length) for f in figures))


def affine(x3: np.ndarray, scale: np.ndarray, shift: np.ndarray | None, out: np.ndarray | None = None) -> np.ndarray:
    """``x3 * scale + shift`` per channel of a C-contiguous (N, C, L) FLOAT array (into ``out``
    if given, C-contiguous too): short channels along rows (``SHORT_CHANNEL``), in parts of
    images (``workers.over_parts``), else in parts over C (``lanes.over``) on the worker
    threads."""
    result = np.empty(x3.shape, FLOAT32) if out is None else out
    if x3.shape[2] <= SHORT_CHANNEL:
        rows, *repeated = along_rows(x3, scale, *(() if shift is None else (shift,)))

        def flat(o: np.ndarray, xp: np.ndarray, sp: np.ndarray, *hp: np.ndarray) -> None:
            np.multiply(xp, sp, out=o)
            if hp:
                np.add(o, hp[0], out=o)

        workers.over_parts(flat, result.reshape(rows.shape), rows, *repeated)
        return result
    buffer = lane_buffer(x3.shape, 1)

    def part(index: lanes.Index) -> None:
        r, ch = result[index], index[1]
        with ufunc_buffer(buffer):
            np.multiply(x3[index], scale[ch, None], out=r)
            if shift is not None:
                np.add(r, shift[ch, None], out=r)

    lanes.over(x3.shape, (0, 2), part, passes=2)
    return result


# -- along one dim (the softmax family) ------------------------------------------------------

def _sums(a: np.ndarray, dim: int) -> np.ndarray:
    """The sums of ``a`` along ``dim``, kept as a dim of 1."""
    if dim == a.ndim - 1:
        return last_sums(a, keepdims=True)
    return np.asarray(np.add.reduce(a, axis=dim, keepdims=True))


def lane_max(a: np.ndarray, dim: int) -> np.ndarray:
    """The max of ``a`` along ``dim``, kept as a dim of 1, ignoring NaN (``np.fmax``): the
    softmax family's shift, where a lane holding a NaN gives NaN everywhere whichever max is
    taken (its sum of exps is NaN), so the results are NumPy ``max``'s; but fmax's reduction
    loop skips max's NaN bookkeeping.  (A lane with +inf and NaN now subtracts inf from inf
    where max's NaN gave no warning: the shift's invalid warning is off, an infinite max gives
    NaN quietly either way.)  Measured (float32, one thread, median ms, load 1.4-2.1):
    rows (12288, 128) 1.69 -> 1.09, (1024, 128) 0.135 -> 0.082, (256, 1000) 0.041 -> 0.033.

    Along the last dim of a C-contiguous array the lanes are the flat array's segments of its
    length, reduced by ``np.fmax.reduceat`` (the same maxima: a max is exact in any order, and
    fmax skips NaN alike), which skips the reduction's set-up per lane: thread time, median of
    11 interleaved rounds, fmax.reduce / reduceat us: (12288, 128) 1244 / 807, (256, 1000)
    42 / 22, (128, 10) 10.5 / 6.2."""
    if dim == a.ndim - 1 and a.size and a.flags.c_contiguous:
        starts = _lane_starts(a.size, a.shape[-1])
        return np.asarray(np.fmax.reduceat(a.reshape(-1), starts).reshape(*a.shape[:-1], 1))
    return np.asarray(np.fmax.reduce(a, axis=dim, keepdims=True))


@functools.lru_cache(maxsize=64)
def _lane_starts(size: int, length: int) -> np.ndarray:
    """The flat index of each lane's first element, lanes of ``length`` in ``size`` elements
    (``lane_max``'s segments): read-only, kept from call to call."""
    starts = np.arange(0, size, length, dtype=np.intp)
    starts.flags.writeable = False
    return starts


# Each computes into a new array, in place on it pass after pass, over parts of the rows shared
# out to the worker threads (``lanes.over``: every part holds whole lanes along ``dim``); its
# broadcasts of a lane's max or sum with the ufunc buffer of ``lane_buffer``.

@functools.lru_cache(maxsize=256)
def lane_buffer(shape: tuple[int, ...], dim: int) -> int | None:
    """``ufunc_buffer.run_buffer`` of a broadcast along ``dim`` of an array of ``shape``: its
    runs are the dims after ``dim`` (the last dim where ``dim`` is the last).  Kept from call to
    call (~1 us of a small call's Python)."""
    run = math.prod(shape[dim + 1:]) if dim < len(shape) - 1 else shape[-1]
    return run_buffer(run, math.prod(shape))


#: The largest value with which ``softmax`` takes ``exp(x)`` unshifted: exp of it does not
#: overflow (e^64 ~ 6e27), nor does a lane's sum of them.
UNSHIFTED_RANGE = 64.0
#: The smallest sum of a lane's ``exp(x)`` with which ``softmax`` keeps the unshifted quotient:
#: every exp that is not a normal number (below ~1.2e-38, rounded or flushed) is then below
#: 1.2e-38 / 2**-60 ~ 1.4e-20 of the sum, its quotient off by less than that.
SMALLEST_UNSHIFTED_SUM = 2.0 ** -60


def log_softmax(x: np.ndarray, dim: int) -> np.ndarray:
    """``log_softmax`` of a FLOAT/DOUBLE array along ``dim`` (normalised): ``x - log(sum
    exp(x))``, stable as ``softmax`` is: where no value is above ``UNSHIFTED_RANGE`` (a NaN or
    +inf fails the test) ``exp(x)`` is summed unshifted and each lane's ``log`` of its sum
    subtracted from ``x`` in one pass; else, and for a lane whose sum is below
    ``SMALLEST_UNSHIFTED_SUM`` (each lane's result depends on that lane alone), ``x - max -
    log(sum exp(x - max))``; a new array.

    The unshifted form rounds as PyTorch's CPU kernel does (``x - (max + log(sum exp(x -
    max)))``: one per-lane figure rounded, then one subtraction); it skips the lane max and the
    pass writing ``x - max``.  Thread time, one part, medians of 21-61 interleaved rounds, ms
    shifted / unshifted: (256,1000) dim 1 0.385 / 0.364, (128,10) dim 1 0.0389 / 0.0354,
    (8,12,128,128) dim -1 (lanes of 128: a lane max and a broadcast cost most there) 4.42 /
    2.82.  Max error against float64 PyTorch (absolute, x 1e-7), shifted / unshifted / PyTorch's
    float32: (256,1000) 9.9 / 7.9 / 10.4; (128,10) 4.7 / 3.8 / 4.7; (8,12,128,128) 9.2 / 8.2 /
    9.3 (relative to the result, x 1e-7: 1.2 / 1.2 / 1.2; 2.1 / 5.7 / 1.5; 1.5 / 2.7 / 1.4:
    log(sum) is off by a few ulps of the sum, as ``max + log(...)`` is, which shows most in
    results near 0)."""
    out = np.empty(x.shape, x.dtype)
    if x.ndim == 0:
        out[...] = 0  # (one element: log 1)
        return out
    # (a NaN or +inf: shifted; the ufunc's reduce, not np.max's wrapper: ~1.5 us less)
    unshifted = x.size > 0 and bool(np.maximum.reduce(x, axis=None) <= UNSHIFTED_RANGE)
    buffer = lane_buffer(x.shape, dim)
    smallest = x.dtype.type(SMALLEST_UNSHIFTED_SUM)

    def shifted(v: np.ndarray, o: np.ndarray) -> None:
        shift = lane_max(v, dim)
        # (an infinite max: NaN, as PyTorch, ``lane_max``; a lane of -inf: log 0.  One errstate
        # for both: ~2 us a call less, the other passes raise neither.)
        with ufunc_buffer(buffer), np.errstate(invalid="ignore", divide="ignore"):
            np.subtract(v, shift, out=o)
            # exp(o) only to be summed: into a scratch array the thread keeps (no fresh pages a
            # call; A/B at load 1.7, median ms old/new: (256,1000) 0.80/0.62 split, 0.81/0.75 one
            # thread; (128,10) 0.104/0.066 one thread; (8,12,128,128) 3.52/3.20 split, 5.38/5.29)
            e = workers.scratch("lanes.exp", o.shape) if o.dtype == FLOAT32 else np.empty_like(o)
            np.exp(o, out=e)
            lse = np.log(_sums(e, dim))
            np.subtract(o, lse, out=o)

    def part(index: lanes.Index) -> None:
        o, v = out[index], x[index]
        if not unshifted:
            shifted(v, o)
            return
        e = workers.scratch("lanes.exp", o.shape) if o.dtype == FLOAT32 else np.empty_like(o)
        np.exp(v, out=e)
        total = _sums(e, dim)
        # (no lane's sum is NaN here: a min, not ``(total >= smallest).all()``, ~1 us less)
        if np.minimum.reduce(total, axis=None) >= smallest:  # (no log 0: nothing to warn of, no errstate's ~2 us)
            with ufunc_buffer(buffer):
                np.subtract(v, np.log(total), out=o)
            return
        kept = total >= smallest
        # (a lane of -inf: log 0, and -inf - -inf; such lanes are recomputed shifted)
        with ufunc_buffer(buffer), np.errstate(invalid="ignore", divide="ignore"):
            np.subtract(v, np.log(total), out=o)
        again = np.empty_like(o)  # (a lane of very negative values: shifted)
        shifted(v, again)
        np.copyto(o, again, where=~kept)

    lanes.over(x.shape, (dim,), part, passes=4 if unshifted else 5)
    return out


def softmax(x: np.ndarray, dim: int) -> np.ndarray:
    """``softmax`` of a FLOAT/DOUBLE array along ``dim``: ``exp(x - max) / sum``; a new array.

    Where no value is above ``UNSHIFTED_RANGE`` (one max over the whole array; a NaN fails
    the test), each lane as ``exp(x) / sum``: the same quotient (the max cancels) with no lane
    max and no broadcast subtraction, each exp of an exact argument (``x - max`` is rounded
    first); a lane whose sum of exps is below ``SMALLEST_UNSHIFTED_SUM`` (every value very
    negative, a lane of -inf) is then computed again with its max subtracted, so each lane's
    result depends on that lane alone (any split of the lanes gives the same bits).
    Thread time, one thread, median of 30 interleaved calls, ms with the max / unshifted (max
    relative error against float64 PyTorch, x 1e-7): (8,12,128,128) dim -1 (lanes of 128,
    where a lane's max and a broadcast cost ~0.1 us a lane in NumPy's loop set-up) 5.94 / 3.31
    (5.4 / 3.0); (256,1000) dim 1 0.49 / 0.39 (4.8 / 2.8); (128,10) dim 1 0.033 / 0.021.
    The lanes' sums tested instead of a min over the whole array (one pass fewer), thread
    time, one thread, median of 21 interleaved rounds, ms before / after: (256,1000) dim 1
    0.531 / 0.485, (8,12,128,128) dim -1 3.35 / 3.01, (128,10) dim 1 0.0391 / 0.0380."""
    out = np.empty(x.shape, x.dtype)
    if x.ndim == 0:
        out[...] = 1
        return out
    # (a NaN or +inf: shifted; the ufunc's reduce, not np.max's wrapper: ~1.5 us less)
    unshifted = x.size > 0 and bool(np.maximum.reduce(x, axis=None) <= UNSHIFTED_RANGE)
    buffer = lane_buffer(x.shape, dim)
    smallest = x.dtype.type(SMALLEST_UNSHIFTED_SUM)

    def shifted_exp(v: np.ndarray, into: np.ndarray) -> None:
        with ufunc_buffer(buffer), np.errstate(invalid="ignore"):  # (an infinite max: NaN, as PyTorch)
            np.subtract(v, lane_max(v, dim), out=into)
        np.exp(into, out=into)

    def part(index: lanes.Index) -> None:
        o, v = out[index], x[index]
        if not unshifted:
            shifted_exp(v, o)
            total = _sums(o, dim)
        else:
            np.exp(v, out=o)
            total = _sums(o, dim)
            if not np.minimum.reduce(total, axis=None) >= smallest:  # (a lane of very negative values: shifted)
                kept = total >= smallest
                again = np.empty_like(o)
                shifted_exp(v, again)
                np.copyto(o, again, where=~kept)
                total = np.where(kept, total, _sums(again, dim))
        with ufunc_buffer(buffer):
            np.divide(o, total, out=o)

    lanes.over(x.shape, (dim,), part, passes=3 if unshifted else 4)
    return out


def log_softmax_backward(grad: np.ndarray, output: np.ndarray, dim: int) -> np.ndarray:
    """``grad - exp(output) * sum(grad, dim)``; a new array."""
    if grad.ndim == 0:
        return np.asarray(grad - np.exp(output) * grad)
    out = np.empty(grad.shape, grad.dtype)

    buffer = lane_buffer(grad.shape, dim)

    def part(index: lanes.Index) -> None:
        o, g = out[index], grad[index]
        np.exp(output[index], out=o)
        with ufunc_buffer(buffer):
            np.multiply(o, _sums(g, dim), out=o)
        np.subtract(g, o, out=o)

    lanes.over(grad.shape, (dim,), part, passes=4)
    return out


#: The longest lane ``softmax_backward`` sums by ``np.vecdot``: OpenBLAS may run a longer dot
#: product (above 10000 elements) on threads of its own, which the worker threads' parts would
#: fight over (``blas``); einsum beyond it.
LONGEST_DOT_LANE = 8192
_vecdot: Callable[[np.ndarray, np.ndarray], np.ndarray] | None = getattr(np, "vecdot", None)


def _einsum_dot(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The dot product of each lane along the last dim of ``a`` and ``b``."""
    return np.asarray(np.einsum("...i,...i->...", a, b))


def softmax_backward(grad: np.ndarray, output: np.ndarray, dim: int) -> np.ndarray:
    """``output * (grad - sum(grad * output, dim))``; a new array.

    Along the last dim the sums are each lane's dot product (``np.einsum``: one pass that
    reads both arrays and writes nothing, in vector lanes as ``last_sums``' BLAS rows), not a
    product written out and summed.  Thread time, one thread, median of 21 interleaved rounds,
    ms before / after (max error relative to the largest |result| against float64, x 1e-8):
    (256,1000) dim 1 0.356 / 0.251 (6.5 / 6.3); (8,12,128,128) dim -1 2.92 / 2.20 (6.1 / 6.8);
    (128,10) dim 1 0.0139 / 0.0120.  Lanes up to ``LONGEST_DOT_LANE`` by ``np.vecdot`` (NumPy 2:
    BLAS's dot per lane, in its vector lanes too) rather than einsum: thread time, medians of
    101 calls, us einsum / vecdot (max absolute error of the sums against float64, x 1e-7):
    (256,1000) 63.6 / 36.4 (186 / 86); (12288,128) 278 / 226 (45 / 25); (128,10) 4.0 / 3.2."""
    if grad.ndim == 0:
        return np.asarray(output * (grad - grad * output))
    out = np.empty(grad.shape, grad.dtype)
    last = dim == grad.ndim - 1
    dot = _vecdot if last and grad.shape[-1] <= LONGEST_DOT_LANE and _vecdot is not None else _einsum_dot

    buffer = lane_buffer(grad.shape, dim)

    def part(index: lanes.Index) -> None:
        o, g, y = out[index], grad[index], output[index]
        if last:
            total = dot(g, y)[..., None]
        else:
            np.multiply(g, y, out=o)
            total = _sums(o, dim)
        with ufunc_buffer(buffer):
            np.subtract(g, total, out=o)
        np.multiply(o, y, out=o)

    lanes.over(grad.shape, (dim,), part, passes=3 if last else 4)
    return out


# -- over several dims (ReduceSum, Mean) ------------------------------------------------------

def reduce_sum(x: np.ndarray, dims: Sequence[int], keepdim: bool, wide: np.dtype) -> np.ndarray:
    """The sum of ``x`` (already in the dtype summed in) over ``dims`` (normalised, no
    duplicates, not empty) in the accumulator dtype ``wide``: the kept dims' parts shared out to
    the worker threads (``lanes.over``).  Where the trailing dims are reduced and ``x`` is a
    C-contiguous FLOAT/DOUBLE array, they are summed as rows by ``last_sums`` (BLAS, in blocks)
    and the other reduced dims then by NumPy's sum of those rows' sums; where only leading dims
    are, by ``first_sums``."""
    axes = tuple(dims)
    contiguous = x.flags.c_contiguous and x.size > 0
    kept_shape, lead, rows, others, leading, how = _sum_layout(x.shape, axes, x.dtype, wide, contiguous)
    # Every dim: one row, never split; the part's own call without the part (thread time, median
    # of 41 interleaved rounds: (256, 1000) 25.9 -> 21.1 us, (4, 4) 6.0 -> 3.1 us).
    if how == _BY_ROWS and lead == 0:
        total = last_sums(x.reshape(rows))
        return np.asarray(total.reshape(kept_shape) if keepdim else total.reshape(()))
    kept = np.empty(kept_shape, wide)

    def part(index: lanes.Index) -> None:
        piece, target = x[index], kept[index]
        if how == _BY_COLUMNS:  # (a part cuts the first kept dim of size > 1: its columns stay views)
            target[...] = first_sums(piece.reshape(leading, -1)).reshape(target.shape)
            return
        if how == _BY_ROWS:  # (a part cuts a dim before the run: its rows stay views)
            sums = last_sums(piece.reshape(*piece.shape[:lead], rows))
            if others:
                np.sum(sums, axis=others, keepdims=True, out=target.reshape(target.shape[:lead]))
            else:
                target[...] = sums.reshape(target.shape)
            return
        np.sum(piece, axis=axes, dtype=wide, keepdims=True, out=target)

    lanes.over(x.shape, axes, part)
    return kept if keepdim else kept.reshape([n for i, n in enumerate(x.shape) if i not in axes])


_BY_NUMPY, _BY_ROWS, _BY_COLUMNS = 0, 1, 2


@functools.lru_cache(maxsize=256)
def _sum_layout(shape: tuple[int, ...], axes: tuple[int, ...], dtype: np.dtype, wide: np.dtype,
                contiguous: bool) -> tuple[tuple[int, ...], int, int, tuple[int, ...], int, int]:
    """How ``reduce_sum`` sums an array of ``shape``, kept from call to call (its Python was
    most of a small call: thread time of ``reduce_sum`` over every dim of (4, 4) 7.9 -> 5.8 us,
    of (256, 1000) 35.4 -> 32.9 us): (the kept shape, the dims
    before the trailing run of reduced ones, the elements of that run, the reduced dims before
    it, the elements of the leading run of reduced dims, which of NumPy's sum / ``last_sums``
    rows / ``first_sums`` columns)."""
    kept_shape = tuple(1 if i in axes else n for i, n in enumerate(shape))
    lead = len(shape)  # (the dims before the trailing run of reduced ones)
    while lead and lead - 1 in axes:
        lead -= 1
    rows = math.prod(shape[lead:])
    others = tuple(d for d in axes if d < lead)
    front = len(axes)  # (the leading run of reduced dims, where the others are kept)
    leading = math.prod(shape[:front])
    if lead < len(shape) and dtype == wide and contiguous:
        how = _BY_ROWS
    elif (axes == tuple(range(front)) and leading >= MANY_ROWS and dtype == wide and dtype in _BLAS_DTYPES
          and contiguous):
        how = _BY_COLUMNS
    else:
        how = _BY_NUMPY
    return kept_shape, lead, rows, others, leading, how


def in_dtype(a: np.ndarray, compute: np.dtype) -> np.ndarray:
    """``a`` converted to ``compute`` (the dtype an operator runs in), then widened to its
    compute dtype (FLOAT for FLOAT16/BFLOAT16)."""
    if a.dtype != compute:
        a = a.astype(compute)
    return widened(a)


def rounded(result: np.ndarray, compute: np.dtype, out: np.dtype) -> np.ndarray:
    """A result computed wide, rounded once to ``compute``, then converted to ``out``."""
    if result.dtype != compute:
        result = result.astype(compute)
    return result.astype(out, copy=False)
