"""Pooling windows, the one place the numpy backend's pooling operators take them from.

* ``pooled_size``: the output length of a window sliding along one axis (PyTorch's
  ``pooling_output_shape``, which CANN's max/avg pools follow), ceil mode and dilation included;
* ``avg_pool_sums`` / ``avg_divisors``: the window sums of average pooling (zero padding) and
  what each window is divided by (the backward's divisors too);
* ``expand``: a CANN int list of length 1 or 2 (0 for a stride: the kernel) as an (H, W) pair;
* ``max_pool_planes``: the maximum of each window of ``(planes, H, W)`` and its flat position
  ``h * W + w`` in the unpadded plane;
* ``adaptive_matrix``: the ``(o, size)`` averaging matrix of adaptive pooling's windows
  ``[floor(i * size / o), ceil((i + 1) * size / o))``;
* ``nearest_source``: the source index of each output position of legacy nearest resizing.

Sizes are Python ints (no overflow); the operators check them before they reach a kernel.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

import numpy as np

from . import blas, lanes, matmul
from .workers import MIN_PARALLEL_ELEMENTS, in_parallel, threads_for

#: ``max_pool_planes`` works on at most this many planes at a time (the padded copy, the running
#: maximum and the winning tap of a block stay in the cache).
_BLOCK_ELEMENTS = 1 << 16
_NO_TAP = 255
#: Window elements (planes x outputs x taps) up to which ``max_pool_planes`` gathers every window
#: at once and takes its first maximum by ``argmax``: ~10 NumPy calls in all instead of ~5 a tap,
#: ~1-3 us each whatever the size.
SMALL_WINDOWS = 1 << 12


def pooled_size(size: int, k: int, s: int, p: int, ceil_mode: bool, d: int = 1, toward_zero: bool = False) -> int:
    """Windows of ``k`` taps ``d`` apart, ``s`` apart, over ``size`` padded by ``p`` each side:
    ``floor((size + 2p - d(k-1) - 1 + (ceil ? s-1 : 0)) / s) + 1``, minus one in ceil mode when
    the last window would start at or after ``size + p`` (it must start inside the input or its
    left padding).  ``toward_zero``: the division truncates (aclnnAvgPool2d's rule, which gives 1
    where a window is longer than the padded input)."""
    numerator = size + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil_mode else 0)
    o = (-(-numerator // s) if toward_zero and numerator < 0 else numerator // s) + 1
    if ceil_mode and (o - 1) * s >= size + p:
        o -= 1
    return o


def expand(values: Sequence[int], default: Sequence[int] | None = None) -> tuple[int, int]:
    """``[v]`` -> ``(v, v)``, ``[a, b, ...]`` -> ``(a, b)``; ``[]`` -> ``default`` (the
    kernel size, for a stride)."""
    if not values:
        assert default is not None
        return default[0], default[1]
    return (values[0], values[0]) if len(values) == 1 else (values[0], values[1])


def max_pool_planes(x: np.ndarray, out_hw: tuple[int, int], k: tuple[int, int], s: tuple[int, int],
                    p: tuple[int, int], d: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
    """Max pooling of the ``(planes, H, W)`` array ``x`` (FLOAT16 or FLOAT32): the maximum of
    each window and the flat index ``h * W + w`` of its first maximum in row-major window order
    (PyTorch's rule), padding never chosen (it acts as -inf).  A window whose real elements are
    all -inf gives -inf and its first real element's index; a NaN wins over any number (the
    last NaN of the window), as in PyTorch.  Returns ``(values, int64 indices)``."""
    planes, height, width = x.shape
    oh, ow = out_hw
    if 0 < planes * oh * ow * k[0] * k[1] <= SMALL_WINDOWS and not (x.dtype.kind == "f" and np.isnan(x).any()):
        return _small_max_pool(x, out_hw, k, s, p, d)  # (argmax: a NaN would not win last)
    values = np.empty((planes, oh, ow), x.dtype)
    indices = np.empty((planes, oh, ow), np.int64)
    if planes == 0 or oh == 0 or ow == 0:
        return values, indices
    # The padded extent the windows reach (a ceil-mode window may pass the right padding).
    ph_total = max(height + 2 * p[0], (oh - 1) * s[0] + d[0] * (k[0] - 1) + 1)
    pw_total = max(width + 2 * p[1], (ow - 1) * s[1] + d[1] * (k[1] - 1) + 1)
    rows = np.arange(oh, dtype=np.int64) * s[0] - p[0]
    cols = np.arange(ow, dtype=np.int64) * s[1] - p[1]
    # The first real element of each window, and each tap's offset from the window's start.
    first = (np.maximum(rows, 0)[:, None] * width + np.maximum(cols, 0)[None, :])
    base = rows[:, None] * width + cols[None, :]
    taps = [(i, j) for i in range(k[0]) for j in range(k[1])]
    has_nan = x.dtype.kind == "f" and bool(np.isnan(x).any())
    block = max(1, _BLOCK_ELEMENTS // (ph_total * pw_total))
    tap_dtype = np.uint8 if len(taps) < _NO_TAP else np.int64
    none = _NO_TAP if tap_dtype == np.uint8 else len(taps)
    # Each tap's offset from its window's start (the "none" entry: 0, fixed below).
    lookup = np.zeros(none + 1, np.int64)
    lookup[:len(taps)] = [i * d[0] * width + j * d[1] for i, j in taps]

    def work(start: int, stop: int) -> None:
        padded = np.full((min(block, stop - start), ph_total, pw_total), -np.inf, x.dtype)
        best = np.empty((padded.shape[0], oh, ow), x.dtype)
        tap = np.empty((padded.shape[0], oh, ow), tap_dtype)
        mask = np.empty((padded.shape[0], oh, ow), np.bool_)
        step = np.empty((padded.shape[0], oh, ow), tap_dtype)
        for a in range(start, stop, block):
            n = min(block, stop - a)
            pad, bst, tp, msk, stp = padded[:n], best[:n], tap[:n], mask[:n], step[:n]
            pad[:, p[0]:p[0] + height, p[1]:p[1] + width] = x[a:a + n]
            bst.fill(-np.inf)
            tp.fill(none)
            for t, (i, j) in enumerate(taps):
                window = pad[:, i * d[0]:i * d[0] + (oh - 1) * s[0] + 1:s[0],
                             j * d[1]:j * d[1] + (ow - 1) * s[1] + 1:s[1]]
                np.greater(window, bst, out=msk)
                if has_nan:
                    msk |= np.isnan(window)
                # Branchless (a masked copy branches per element: ~3x slower on random data):
                # the maximum (NaN-propagating, as the mask's NaN rule), and tp += msk * (t - tp)
                # in tp's wrapping integer arithmetic.
                np.maximum(bst, window, out=bst)
                np.subtract(tap_dtype(t), tp, out=stp)
                np.multiply(stp, msk, out=stp)
                np.add(tp, stp, out=tp)
            values[a:a + n] = bst
            # The index of the winning tap; a window without one (all -inf): its first real element.
            np.add(base, lookup[tp], out=indices[a:a + n])
            lost = tp == none
            if lost.any():
                indices[a:a + n][lost] = np.broadcast_to(first, lost.shape)[lost]

    in_parallel(planes, work, min_per_thread=max(1, block))
    return values, indices


def _small_max_pool(x: np.ndarray, out_hw: tuple[int, int], k: tuple[int, int], s: tuple[int, int],
                    p: tuple[int, int], d: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
    """``max_pool_planes`` of a small problem without NaN (``SMALL_WINDOWS``): every window
    gathered from the -inf-padded planes, its first maximum by ``argmax``."""
    planes, height, width = x.shape
    ph_total, pw_total, positions, index_of, starts, first = _small_geometry(height, width, out_hw, k, s, p, d)
    # No window reaches padding (none, and no ceil-mode window past the edge): the windows come
    # straight from the planes, and a window's first tap is its first real element.
    unpadded = ph_total == height and pw_total == width
    if unpadded:
        padded = x
    else:
        padded = np.full((planes, ph_total, pw_total), -np.inf, x.dtype)
        padded[:, p[0]:p[0] + height, p[1]:p[1] + width] = x
    # (take, the ufunc's reduce and the method: NumPy's wrappers cost more than these sizes)
    windows = padded.reshape(planes, -1).take(positions, axis=1)  # (planes, outputs, taps)
    values = np.maximum.reduce(windows, axis=-1)
    indices = index_of.take(windows.argmax(axis=-1) + starts)
    if not unpadded:
        lost = values == -np.inf  # (every real element -inf, or none: its first real element)
        if lost.any():
            indices[lost] = np.broadcast_to(first, lost.shape)[lost]
    return values.reshape(planes, *out_hw), indices.reshape(planes, *out_hw)


@functools.lru_cache(maxsize=64)
def _small_geometry(height: int, width: int, out_hw: tuple[int, int], k: tuple[int, int], s: tuple[int, int],
                    p: tuple[int, int], d: tuple[int, int]
                    ) -> tuple[int, int, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``_small_max_pool``'s fixed arrays (read-only): the padded plane's extent, each window's
    tap positions in it ``(outputs, taps)``, the unpadded plane's index of each window's tap
    (flat), each window's first tap there, and each window's first real element's index."""
    (oh, ow), taps = out_hw, k[0] * k[1]
    ph_total = max(height + 2 * p[0], (oh - 1) * s[0] + d[0] * (k[0] - 1) + 1)
    pw_total = max(width + 2 * p[1], (ow - 1) * s[1] + d[1] * (k[1] - 1) + 1)
    rows = np.arange(oh)[:, None, None, None] * s[0] + np.arange(k[0])[None, None, :, None] * d[0]
    cols = np.arange(ow)[None, :, None, None] * s[1] + np.arange(k[1])[None, None, None, :] * d[1]
    positions = (rows * pw_total + cols).reshape(oh * ow, taps).astype(np.int64)
    index_of = ((rows - p[0]) * width + (cols - p[1])).reshape(-1).astype(np.int64)
    starts = np.arange(oh * ow, dtype=np.int64) * taps
    first = (np.maximum(np.arange(oh) * s[0] - p[0], 0)[:, None] * width
             + np.maximum(np.arange(ow) * s[1] - p[1], 0)[None, :]).reshape(-1).astype(np.int64)
    for a in (positions, index_of, starts, first):
        a.flags.writeable = False
    return ph_total, pw_total, positions, index_of, starts, first


@functools.lru_cache(maxsize=64)
def adaptive_bounds(size: int, o: int) -> tuple[np.ndarray, np.ndarray]:
    """The windows of adaptive pooling along one axis: ``start[i] = floor(i * size / o)``,
    ``end[i] = ceil((i + 1) * size / o)`` (int64 arrays of length ``o``; read-only)."""
    i = np.arange(o, dtype=np.int64)
    start = (i * size) // o
    end = -((-(i + 1) * size) // o)
    start.flags.writeable = end.flags.writeable = False
    return start, end


@functools.lru_cache(maxsize=64)
def adaptive_matrix(size: int, o: int) -> np.ndarray:
    """The ``(o, size)`` float32 matrix whose row ``i`` is ``1 / len`` over window ``i`` and 0
    elsewhere: ``matrix @ v`` averages each window of ``v`` (read-only)."""
    start, end = adaptive_bounds(size, o)
    at = np.arange(size, dtype=np.int64)
    inside = (at[None, :] >= start[:, None]) & (at[None, :] < end[:, None])
    matrix: np.ndarray = (inside / (end - start)[:, None]).astype(np.float32)
    matrix.flags.writeable = False
    return matrix


@functools.lru_cache(maxsize=64)
def nearest_source(o: int, size: int, scale: float = 0.0) -> np.ndarray:
    """Legacy nearest resizing along one axis: the source index of each of the ``o`` outputs,
    ``min(floor(i * size / o), size - 1)``, or ``min(floor(i / scale), size - 1)`` with a given
    scale factor ``scale > 0`` (PyTorch's rule, computed in float32 as it does; ``o == size`` and
    ``o == 2 * size`` are PyTorch's exact shortcuts: read-only)."""
    if o == size or o == 2 * size:  # (PyTorch's shortcuts, which ignore a given scale)
        source: np.ndarray = np.arange(o, dtype=np.int64) // (o // size)
    else:
        ratio = np.float32(1.0 / scale) if scale > 0 else np.float32(size) / np.float32(o)
        source = np.minimum(np.floor(np.arange(o, dtype=np.float32) * ratio).astype(np.int64), size - 1)
    source.flags.writeable = False
    return source


def adaptive_avg(x: np.ndarray, oh: int, ow: int) -> np.ndarray:
    """Adaptive average pooling of the float32 ``(planes, H, W)`` array to ``(planes, oh, ow)``:
    the separable averaging matrices (``adaptive_matrix``) applied along W, then along H, each
    as one matrix product over every plane (one mean where the output is 1x1)."""
    planes, height, width = x.shape
    if (oh, ow) == (1, 1):  # (the planes' sums in parts over the worker threads: ``lanes``)
        rows = x.reshape(planes, height * width)
        mean = np.empty(planes, np.float32)

        def part(index: lanes.Index) -> None:
            # einsum's sum of each contiguous row (vector lanes, float32), not ``last_sums``' BLAS
            # product with ones: rows of a few dozen elements (resnet50 head (32,2048,7,7): 49)
            # are too short for a product.  Thread CPU, one thread, medians of 40: 0.86 -> 0.65
            # ms; the largest error against float64 sums of N(3, 10) rows 4.5e-5 (BLAS 5.4e-5).
            np.einsum("ij->i", rows[index], out=mean[index[0]])

        lanes.over(rows.shape, (1,), part)
        mean /= np.float32(height * width)
        return mean.reshape(planes, 1, 1)
    if height % oh == 0 and width % ow == 0:  # windows that tile the plane: strided sums, no products
        kh, kw = height // oh, width // ow
        cols = x[:, :, 0::kw].copy()
        for j in range(1, kw):
            cols += x[:, :, j::kw]
        sums = cols[:, 0::kh].copy()
        for i in range(1, kh):
            sums += cols[:, i::kh]
        sums /= np.float32(kh * kw)
        return sums
    if height * width * oh * ow <= PLANE_MATRIX_ELEMENTS and planes:
        # One matrix product of every plane (``plane_matrix``; the backend's thread rule,
        # ``matmul.product``).  An inf or NaN input gives a non-finite mean in its window but,
        # times the matrix's zeros, NaN in the others: then the gathers' exact windows.
        with np.errstate(invalid="ignore", over="ignore"):
            means = matmul.product(x.reshape(planes, height * width), plane_matrix(height, width, oh, ow),
                                   matmul.FLOAT32, matmul.FLOAT32)
            finite = np.isfinite(np.add.reduce(means, axis=None))
        if finite:
            return means.reshape(planes, oh, ow)
    return _adaptive_means(_adaptive_means(x, 2, width, ow), 1, height, oh)


#: The size of ``plane_matrix`` up to which ``adaptive_avg`` averages by one matrix product of
#: the planes (a multiply-add per element of it and plane) rather than by ``_adaptive_means``'
#: gathers (~4 NumPy passes per window offset).  Alexnet's (8,256,13,13) -> 6x6, a 169x36 matrix:
#: 1.84 -> 0.27 ms (one BLAS thread, medians of 31 calls, load 2).
PLANE_MATRIX_ELEMENTS = 1 << 16


@functools.lru_cache(maxsize=64)
def plane_matrix(height: int, width: int, oh: int, ow: int) -> np.ndarray:
    """The ``(height * width, oh * ow)`` float32 matrix of adaptive averaging of a C-order
    plane (``plane @ matrix`` is the C-order means): the product of the separable matrices,
    ``1 / (window height * window width)`` in a window, 0 outside (read-only)."""
    rows, cols = adaptive_matrix(height, oh), adaptive_matrix(width, ow)
    matrix = np.ascontiguousarray(np.einsum("ah,bw->hwab", rows, cols).reshape(height * width, oh * ow))
    matrix.flags.writeable = False
    return matrix


def _adaptive_means(x: np.ndarray, axis: int, size: int, o: int) -> np.ndarray:
    """The means of adaptive pooling's windows along ``axis``: one gather of each window's t-th
    element per offset t (added only where the window has one: a mask multiplied in would turn
    an inf of the window's last element into NaN), no matrix products (small ones lose to their
    call overhead and to BLAS threads on a busy machine)."""
    start, end = adaptive_bounds(size, o)
    length = end - start
    shape = [1, 1, 1]
    shape[axis] = o
    sums = x.take(start, axis=axis)
    for t in range(1, int(length.max())):
        taken = x.take(np.minimum(start + t, end - 1), axis=axis)
        np.add(sums, taken, out=sums, where=(t < length).reshape(shape))
    sums /= length.astype(np.float32).reshape(shape)
    return sums


def adaptive_avg_grad(grad: np.ndarray, height: int, width: int) -> np.ndarray:
    """The gradient of ``adaptive_avg`` for the float32 ``(planes, oh, ow)`` gradient: each value
    divided by its window's area and spread over the window (the transposed matrices)."""
    planes, oh, ow = grad.shape
    if height % oh == 0 and width % ow == 0:  # windows that tile the plane: each share broadcast over its window
        kh, kw = height // oh, width // ow
        out = np.empty((planes, oh, kh, ow, kw), np.float32)
        out[...] = (grad / np.float32(kh * kw))[:, :, None, :, None]
        return out.reshape(planes, height, width)
    with np.errstate(invalid="ignore", over="ignore"):
        finite = np.isfinite(np.add.reduce(grad, axis=None))
    if not finite:  # (the products would spread inf * 0 = NaN over the planes: slice sums)
        return _adaptive_grad_slices(grad, height, width)
    with blas.on_caller():  # (BLAS's own threads on a quiet machine only)
        rows = grad.reshape(planes * oh, ow) @ adaptive_matrix(width, ow)  # (planes * oh, W)
        cols = rows.reshape(planes, oh, width).transpose(0, 2, 1).reshape(planes * width, oh)
        out = (cols @ adaptive_matrix(height, oh)).reshape(planes, width, height)
    return np.ascontiguousarray(out.transpose(0, 2, 1))


def _adaptive_grad_slices(grad: np.ndarray, height: int, width: int) -> np.ndarray:
    """``adaptive_avg_grad`` by adding each window's share into its slice, along W then along H:
    an inf or NaN of the gradient reaches its window's elements only (as in PyTorch and the
    simulator), where a product with the averaging matrices gives NaN outside it too."""
    planes, oh, ow = grad.shape
    (hs, he), (ws, we) = adaptive_bounds(height, oh), adaptive_bounds(width, ow)
    rows = np.zeros((planes, oh, width), np.float32)
    with np.errstate(invalid="ignore", over="ignore"):
        for j in range(ow):
            rows[:, :, ws[j]:we[j]] += (grad[:, :, j] / np.float32(we[j] - ws[j]))[:, :, None]
        out = np.zeros((planes, height, width), np.float32)
        for i in range(oh):
            out[:, hs[i]:he[i], :] += (rows[:, i, :] / np.float32(he[i] - hs[i]))[:, None, :]
    return out


def avg_pool_sums(x: np.ndarray, out_hw: tuple[int, int], k: tuple[int, int], s: tuple[int, int],
                  p: tuple[int, int]) -> np.ndarray:
    """The sum of each window of average pooling over the float32 ``(planes, H, W)`` array, zero
    padded (``(planes, oh, ow)`` float32): separable, along W then along H, one strided slice
    per window offset, over blocks of planes."""
    planes, height, width = x.shape
    oh, ow = out_hw
    sums = np.empty((planes, oh, ow), np.float32)
    if planes == 0 or oh == 0 or ow == 0:
        return sums
    hp = max(height + 2 * p[0], (oh - 1) * s[0] + k[0])
    wp = max(width + 2 * p[1], (ow - 1) * s[1] + k[1])
    block = max(1, _BLOCK_ELEMENTS // (hp * wp))

    def work(start: int, stop: int) -> None:
        padded = np.zeros((min(block, stop - start), hp, wp), np.float32)
        cols = np.empty((padded.shape[0], hp, ow), np.float32)
        for a in range(start, stop, block):
            n = min(block, stop - a)
            pad, col, out = padded[:n], cols[:n], sums[a:a + n]
            pad[:, p[0]:p[0] + height, p[1]:p[1] + width] = x[a:a + n]
            np.copyto(col, pad[:, :, 0:(ow - 1) * s[1] + 1:s[1]])
            for j in range(1, k[1]):
                col += pad[:, :, j:j + (ow - 1) * s[1] + 1:s[1]]
            np.copyto(out, col[:, 0:(oh - 1) * s[0] + 1:s[0]])
            for i in range(1, k[0]):
                out += col[:, i:i + (oh - 1) * s[0] + 1:s[0]]

    in_parallel(planes, work, min_per_thread=max(1, block))
    return sums


def avg_window_sizes(size: int, o: int, k: int, s: int, p: int, count_include_pad: bool) -> int | np.ndarray:
    """Per output index along one axis: the window length the divisor counts.

    An int when every window has the same length (the common case), else an int64 array.
    Written so no intermediate leaves int64: start >= -p and size + 2p was checked.
    """
    last_end = (o - 1) * s - p + k
    if count_include_pad and last_end <= size + p:
        return k
    if not count_include_pad and p == 0 and last_end <= size:
        return k
    start = np.arange(o, dtype=np.int64) * s - p
    end = start + np.minimum(k, size + p - start)  # clipped to the padded input
    if count_include_pad:
        return end - start
    return np.minimum(end, size) - np.maximum(start, 0)


def avg_divisors(hw: tuple[int, int], out_hw: tuple[int, int], k: tuple[int, int], s: tuple[int, int],
                 p: tuple[int, int], count_include_pad: bool, divisor_override: int) -> np.float32 | np.ndarray:
    """What each window of average pooling is divided by (aclnnAvgPool2d and its backward): the
    override, or the (oh, ow) float32 map of each window's divisor (PyTorch's rule)."""
    if divisor_override:
        return np.float32(divisor_override)
    rows = avg_window_sizes(hw[0], out_hw[0], k[0], s[0], p[0], count_include_pad)
    cols = avg_window_sizes(hw[1], out_hw[1], k[1], s[1], p[1], count_include_pad)
    # PyTorch divides by float(int64 count).  Counts are < 2**63, so a product of two is
    # exact as a Python int, exact in float64 where it matters, and finite in float32.
    if isinstance(rows, int) and isinstance(cols, int):
        return np.float32(rows * cols)
    rows = np.broadcast_to(np.asarray(rows, np.float64), (out_hw[0],))
    cols = np.broadcast_to(np.asarray(cols, np.float64), (out_hw[1],))
    scale: np.ndarray = np.multiply.outer(rows, cols).astype(np.float32)
    return scale


@functools.lru_cache(maxsize=64)
def repeat_factor(o: int, size: int, scale: float = 0.0) -> int:
    """``k`` where legacy nearest resizing of ``size`` to ``o`` copies each cell to ``k``
    consecutive outputs (``nearest_source`` is ``i // k``), else 0 (kept from call to call: the
    check is most of a tiny call's cost)."""
    k = o // size
    return k if o == k * size and np.array_equal(nearest_source(o, size, scale), np.arange(o) // k) else 0


def nearest_grad(grad: np.ndarray, height: int, width: int, scales: tuple[float, float]) -> np.ndarray:
    """The gradient of legacy nearest resizing for the float32 ``(planes, oh, ow)`` gradient:
    each input cell the sum of the outputs it was copied to.  The index maps are non-decreasing,
    so each cell's outputs are one run per axis: one ``np.add.reduceat`` per axis (cells no
    output reads stay 0); a whole ``kh x kw`` block per cell: ``_repeated_grad``."""
    planes, oh, ow = grad.shape
    kh, kw = repeat_factor(oh, height, scales[0]), repeat_factor(ow, width, scales[1])
    if kh and kw and planes and grad.size >= REPEATED_GRAD_ELEMENTS:
        return _repeated_grad(grad, kh, kw)
    axes = [(2, width, ow, scales[1]), (1, height, oh, scales[0])]
    if height * ow < oh * width:  # (the smaller intermediate first: (planes, H, ow), not (planes, oh, W))
        axes.reverse()
    for axis, size, o, scale in axes:
        k = repeat_factor(o, size, scale)
        if k:  # k outputs per cell: k strided adds
            at: list[slice] = [slice(None)] * 3
            at[axis] = slice(0, None, k)
            summed = grad[tuple(at)].copy()
            for j in range(1, k):
                at[axis] = slice(j, None, k)
                summed += grad[tuple(at)]
            grad = summed
            continue
        # Each run of equal sources (non-decreasing) is one read cell: index arrays of the
        # gradient's length, never of the input's (an inputSize of 2^31 with a small gradient
        # had made ~40 GB of them)
        source = nearest_source(o, size, scale)
        starts = np.flatnonzero(np.concatenate(([True], source[1:] != source[:-1]))) if o else source[:0]
        shape = list(grad.shape)
        shape[axis] = size
        summed = np.zeros(shape, np.float32)
        index: list[slice | np.ndarray] = [slice(None)] * 3
        index[axis] = source[starts]
        summed[tuple(index)] = np.add.reduceat(grad, starts, axis=axis)
        grad = summed
    return grad


#: The gradient elements from which ``nearest_grad`` takes ``_repeated_grad``: below, its blocks
#: and thread rule cost more than the two strided sums (us, medians of 30 interleaved calls,
#: strided / repeated: (1,1,4,4) 23 / 37, (2,16,16,16) 37 / 47; (4,32,32,32) 184 / 170,
#: (8,64,32,32) 786 / 638).
REPEATED_GRAD_ELEMENTS = 1 << 15


def _repeated_grad(grad: np.ndarray, kh: int, kw: int) -> np.ndarray:
    """``nearest_grad`` where each cell was copied to a ``kh x kw`` block (x2 upsampling): per
    block of planes, the ``kh`` rows of a cell added first (whole rows, contiguous), then the
    ``kw`` columns of those sums (strided), the row sums kept in the cache between the two.
    Measured against the two axes' strided sums over the whole array (thread CPU, one thread,
    medians of 20): unet x2 (8,128,64,64)<-128 31.7 -> 12.0 ms, fpn (8,256,28,28)<-56 10.6 ->
    4.7, yolo (8,256,13,13)<-26 2.4 -> 1.4."""
    planes, oh, ow = grad.shape
    height, width = oh // kh, ow // kw
    out = np.empty((planes, height, width), np.float32)
    rows = grad.reshape(planes, height, kh, ow)
    block = max(1, _BLOCK_ELEMENTS // (height * ow))

    def work(start: int, stop: int) -> None:
        summed = np.empty((min(block, stop - start), height, ow), np.float32)
        for a in range(start, stop, block):
            n = min(block, stop - a)
            part, total = summed[:n], out[a:a + n]
            _sum_of(rows[a:a + n], 2, kh, part)
            _sum_of(part, 2, kw, total, strided=True)

    # Split over the threads (``threads_for``'s rule) from 1 Mi gradient elements a thread: wall,
    # medians of 40, load 2.7, split / one thread: unet 23.3 / 30.9 ms, fpn 8.2 / 10.3, but
    # yolo (1.4 Mi elements) 1.84 / 1.33.
    per_thread = max(block, 4 * MIN_PARALLEL_ELEMENTS // (oh * ow))
    in_parallel(planes, work, min_per_thread=per_thread, serial=threads_for(planes, per_thread) == 1)
    return out


def _sum_of(x: np.ndarray, axis: int, k: int, out: np.ndarray, strided: bool = False) -> None:
    """``out`` = the sum over ``t < k`` of ``x``'s ``t``-th index along ``axis`` (``strided``:
    its slice ``t::k``), added in order of ``t``."""
    def at(t: int) -> np.ndarray:
        index: list[slice | int] = [slice(None)] * x.ndim
        index[axis] = slice(t, None, k) if strided else t
        return x[tuple(index)]

    if k == 1:
        np.copyto(out, at(0))
        return
    np.add(at(0), at(1), out=out)
    for t in range(2, k):
        out += at(t)
