"""aclnnIm2colBackwardGetWorkspaceSize / aclnnIm2colBackward: col2im, the gradient of im2col.

C header ``aclnnop/aclnn_im2col_backward.h``::

    aclnnStatus aclnnIm2colBackwardGetWorkspaceSize(
        const aclTensor *gradOutput, const aclIntArray *inputSize, const aclIntArray *kernelSize,
        const aclIntArray *dilation, const aclIntArray *padding, const aclIntArray *stride,
        aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor);
    aclnnStatus aclnnIm2colBackward(void *workspace, uint64_t workspaceSize,
                                    aclOpExecutor *executor, aclrtStream stream);

Computes ``torch.nn.functional.fold(gradOutput, inputSize, kernelSize, dilation, padding,
stride)``.  gradOutput is ``(N, C*kH*kW, L)`` or unbatched ``(C*kH*kW, L)``; the result is
``(N, C, H, W)`` / ``(C, H, W)`` with ``(H, W) = inputSize``.  Column ``l = bh*L1 + bw`` at
kernel offset ``(i, j)`` adds ``gradOutput[n, c*kH*kW + i*kW + j, l]`` into
``out[n, c, bh*sH - pH + i*dH, bw*sW - pW + j*dW]`` when that position lies inside the image;
overlapping blocks accumulate and positions in the padding are dropped.

Constraints, in the order CANN checks them (each violation is 161002 unless noted):

1. gradOutput, inputSize, kernelSize, dilation, padding, stride are required (None: 161001).
2. gradOutput dtype is FLOAT, FLOAT16 or BFLOAT16 (A2/A3).  The result has gradOutput's dtype
   (CANN would also cast into an ``out`` of another of these dtypes).
3. gradOutput has rank 2 or 3 (out, built here, has rank + 1).
4. inputSize, kernelSize, dilation, padding, stride each have exactly 2 elements.
5. kernelSize > 0, stride > 0, dilation > 0, padding >= 0; and inputSize > 0 as the aclnn
   documentation states (CANN's code does not check inputSize; see below).
6. gradOutput.shape[-2] is divisible by kH*kW.
7. gradOutput.shape[-1] == L0*L1 with ``Ld = (inputSize[d] + 2*padding[d] - dilation[d]*
   (kernelSize[d] - 1) - 1 + stride[d]) / stride[d]`` (C division, truncating toward zero).
8. An empty gradOutput succeeds: CANN leaves ``out`` untouched; the freshly made result here is
   zeros.

Deliberate deviations of the numpy backend, each rejecting what CANN would accept only to
compute garbage: arithmetic that leaves int64 is 161002 (CANN's C arithmetic would wrap), and so
is a negative ``Ld`` (CANN compares ``L0*L1`` as size_t, so two negative factors could match).
An inputSize of 0 is rejected as documented although CANN's code would accept it.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike

from .._dtypes import compute_dtype
from .._runtime.memory import check_allocation
from .._runtime.tensor import Tensor
from .._numpy import workers as _workers
from .._numpy import small as _small
from ._registry import numpy_dtypes
from .._numpy.ufunc_buffer import ufunc_buffer
from .._convert.executor import dtype_of, planned, shape_of
from .._convert.typed import Output, TypedCall
from ._checks import FLOAT32, check, check_dtype, check_length, check_not_null, check_min, shape_str
from .._convert.values import INT64_MAX, INT64_MIN, host_array, int_array_arg, repeated, tensor_arg
from .._numpy.plans import NumpyOp, Prepared, plan
from ._dispatch import dispatch, documented
from ._im2col import block_count, block_numerator
from .._numpy.workers import in_parallel

if TYPE_CHECKING:
    pass

API = "aclnnIm2colBackwardGetWorkspaceSize"

#: The dtypes each rule accepts: the one table of these checks (the simulator's are generated from it).
DTYPE_RULES = {"DTYPES": ("ACL_FLOAT", "ACL_FLOAT16", "ACL_BF16")}
DTYPES = numpy_dtypes(DTYPE_RULES["DTYPES"])


def _validate(grad_output: object, input_size: object, kernel_size: object, dilation: object, padding: object,
              stride: object) -> tuple[np.ndarray, tuple[int, ...], tuple[int, ...], tuple[int, ...], tuple[int, ...], tuple[int, ...], tuple[int, int]]:
    """Coerce and check the arguments in CANN's order.

    Returns ``(grad_output, input_size, kernel_size, dilation, padding, stride, grid)`` with the
    int arrays as tuples of two ints and ``grid = (L0, L1)``, the block grid.
    """
    grad_output = tensor_arg(API, "gradOutput", grad_output)
    input_size = int_array_arg(API, "inputSize", input_size)
    kernel_size = int_array_arg(API, "kernelSize", kernel_size)
    dilation = int_array_arg(API, "dilation", dilation)
    padding = int_array_arg(API, "padding", padding)
    stride = int_array_arg(API, "stride", stride)
    check_not_null(API, gradOutput=grad_output, inputSize=input_size, kernelSize=kernel_size, dilation=dilation,
                   padding=padding, stride=stride)
    assert grad_output is not None and input_size is not None and kernel_size is not None  # (just checked)
    assert dilation is not None and padding is not None and stride is not None

    check_dtype(API, "gradOutput", grad_output, DTYPES)
    grid = _check_geometry(grad_output.shape, input_size, kernel_size, dilation, padding, stride)
    return grad_output, input_size, kernel_size, dilation, padding, stride, grid


@functools.lru_cache(maxsize=1024)
def _check_geometry(shape: tuple[int, ...], input_size: tuple[int, ...], kernel_size: tuple[int, ...], dilation: tuple[int, ...], padding: tuple[int, ...],
                    stride: tuple[int, ...]) -> tuple[int, int]:
    """The checks that depend on shapes and int arrays alone (cached: repeated calls with the
    same geometry skip them); returns the block grid ``(L0, L1)``."""
    ndim = len(shape)
    check(API, ndim in (2, 3), lambda: f"gradOutput must be 2-D or 3-D, got {ndim}-D shape {shape_str(shape)}")

    arrays = {"inputSize": input_size, "kernelSize": kernel_size, "dilation": dilation,
              "padding": padding, "stride": stride}
    for name, values in arrays.items():
        check_length(API, name, values, 2)
    for name, values in (("kernelSize", kernel_size), ("stride", stride), ("dilation", dilation)):
        check_min(API, name, values, 0, strict=True)
    check_min(API, "padding", padding, 0, strict=False)
    check_min(API, "inputSize", input_size, 0, strict=True)

    kernel_area = kernel_size[0] * kernel_size[1]
    check(API, kernel_area <= INT64_MAX,
          lambda: f"kernelSize[0] * kernelSize[1] overflows int64, kernelSize = {shape_str(kernel_size)}")
    rows = shape[-2]
    check(API, rows % kernel_area == 0,
          lambda: f"gradOutput.shape[-2] = {rows} must be divisible by kernelSize[0] * kernelSize[1] = "
          f"{kernel_area} (kernelSize = {shape_str(kernel_size)})")

    grid: list[int] = []
    for d in range(2):
        numerator = block_numerator(input_size[d], kernel_size[d], dilation[d], padding[d], stride[d])
        check(API, INT64_MIN <= numerator <= INT64_MAX,
              lambda: f"the block count along dim {d} overflows int64 (inputSize = {shape_str(input_size)}, "
              f"padding = {shape_str(padding)}, dilation = {shape_str(dilation)}, "
              f"kernelSize = {shape_str(kernel_size)})")
        blocks = block_count(numerator, stride[d])
        check(API, blocks >= 0,
              lambda: f"the kernel does not fit along dim {d}: inputSize = {shape_str(input_size)}, "
              f"padding = {shape_str(padding)}, kernelSize = {shape_str(kernel_size)}, "
              f"dilation = {shape_str(dilation)} give {blocks} blocks")
        grid.append(blocks)
    length = shape[-1]
    check(API, length == grid[0] * grid[1],
          lambda: f"gradOutput.shape[-1] = {length} must equal the number of blocks {grid[0]} * {grid[1]} = "
          f"{grid[0] * grid[1]} (inputSize = {shape_str(input_size)}, kernelSize = {shape_str(kernel_size)}, "
          f"dilation = {shape_str(dilation)}, padding = {shape_str(padding)}, stride = {shape_str(stride)})")

    out_shape = (shape[0],) * (ndim == 3) + (rows // kernel_area, input_size[0], input_size[1])
    check(API, np.prod(out_shape, dtype=object) <= INT64_MAX,
          lambda: f"the number of out elements overflows int64 (out shape {shape_str(out_shape)})")
    return grid[0], grid[1]


def _hits(blocks: int, size: int, offset: int, stride: int) -> tuple[int, int, int]:
    """The blocks ``[first, last)`` whose position ``b*stride + offset`` lies in ``[0, size)``,
    and the position of ``first``.  ``offset`` is ``i*dilation - padding``."""
    first = (stride - 1 - offset) // stride if offset < 0 else 0
    last = min(blocks, (size - offset + stride - 1) // stride) if size > offset else 0
    return first, max(first, last), first * stride + offset


def _prepare(grad_output: object, input_size: object, kernel_size: object, dilation: object, padding: object,
             stride: object) -> Prepared:
    """The numpy path: validate, then sum the columns back (one matrix product when tiny)."""
    grad_output, size, kernel, dilation, padding, stride, grid = _validate(
        grad_output, input_size, kernel_size, dilation, padding, stride)
    batched = grad_output.ndim == 3
    batch, rows, length = grad_output.shape if batched else (1, *grad_output.shape)
    area = kernel[0] * kernel[1]
    channels = rows // area
    dtype = grad_output.dtype
    nbytes = batch * channels * size[0] * size[1] * grad_output.itemsize
    geometry = (size, kernel, dilation, padding, stride, grid)
    planes, wide = batch * channels, compute_dtype(dtype)
    lead = grad_output.shape[:-2] + (channels,)     # ([N,] C) of the result
    out_shape = lead + tuple(size)
    product = (_small.product(_col2im_planes, geometry, (area, length), tuple(size), lead, dtype, dtype)
               if _small.use_small(planes, area * length, size[0] * size[1]) else None)
    # The planes are independent: large calls share them among the worker threads (NumPy
    # releases the GIL in the copies and adds, which run on one core each).  Two threads, the
    # benchmark's cases, interleaved rounds (the machine shared, so medians of the quieter runs):
    # k3 s2 p1 (8,64,56,56) 0.97 against 1.58 ms, ViT k16 s16 (8,3,224,224) 0.27 against 0.37.
    # The region costs ~50 us here (issue #13, per-thread timestamps, 60 calls): the caller's
    # part starts ~20 us after the call, the worker's ~18 us after that, and the call returns
    # ~30 us after both parts end (the caller, done first, sleeps and is woken); the ViT case's
    # parts take 0.20 ms each, against 0.35 ms for the whole on one thread. A caller's part of
    # 54-58% instead of half: ViT 0.243 against 0.265 ms, k3 s2 0.63 against 0.61 (in_parallel
    # splits evenly; not changed here).
    per_thread = max(1, _workers.MIN_PARALLEL_ELEMENTS // max(1, area * length))

    def run(grad_output: object, *_: object) -> np.ndarray:
        check_allocation(nbytes)
        grad = host_array(API, "gradOutput", grad_output)
        if product is not None:
            return product(grad)
        image = np.empty((planes, *size), dtype=wide)
        cols = grad.reshape(planes, area * length)  # (a view wherever the strides allow)

        def work(first: int, last: int) -> None:
            with ufunc_buffer():
                _col2im(cols[first:last], image[first:last], *geometry)

        in_parallel(planes, work, min_per_thread=per_thread)
        return image.reshape(out_shape).astype(dtype, copy=False)

    return plan(run, nbytes + grad_output.size * grad_output.itemsize), (grad_output,)


_numpy = NumpyOp(_prepare)


def _col2im_planes(planes: np.ndarray, size: tuple[int, ...], kernel: tuple[int, ...], dilation: tuple[int, ...],
                   padding: tuple[int, ...], stride: tuple[int, ...], grid: tuple[int, int]) -> np.ndarray:
    """``_col2im`` of a stack of float32 one-channel planes ``(n, kH*kW, L)`` -> ``(n, H, W)``
    (the small path builds its matrix with it)."""
    out = np.empty((planes.shape[0], *size), dtype=compute_dtype(planes.dtype))
    _col2im(planes.reshape(planes.shape[0], -1), out, size, kernel, dilation, padding, stride, grid)
    return out


# The three ways _col2im adds the kernel offsets' blocks into the image: strided slices, each
# add one short NumPy inner loop per image row and plane (kH*kW passes of them); shifts of whole
# flat planes, where a block row is as long as an image row (stride 1, L1 == W: a "same"
# convolution), long inner loops; and per output phase (position mod stride), each phase
# a stride-1 problem that flat shifts solve, written into the image once (one pass of short
# loops in all, instead of kH*kW).
#
# What PHASES costs, and what did not make it cheaper (issue #13; the benchmark's k3 s2 p1
# (8,64,56,56) case, NumPy 2.4, 2-core EPYC VM with 1 MiB L2 per core, medians of 30-60
# interleaved rounds). One thread, with the columns warm in L3, ~1.0-1.1 ms: the phase (0, 0) copy
# 0.15, the sums 0.16 + 0.14 + 0.37 (phases (0, 1), (1, 0), (1, 1)), the three strided copies into
# the image 0.10 each. Three costs no NumPy formulation avoids: every image element is written
# once through a stride-2 view (the phases interleave along the columns; NumPy's strided copy
# moves one float a cycle, 0.23-0.25 ns here: 1.6 M elements ~0.38 ms); the columns, 14.4 MB, are
# read once (a kernel offset's blocks are 3 KiB runs 28 KiB apart, and read at ~45 GB/s, about the
# rate of a contiguous copy's reads: ~0.3 ms); five adds of hot data (~0.045 ms each). That is
# ~0.9 ms of the ~1.0; on two threads ~0.6 ms, of which the parallel region itself ~0.05
# (``_prepare``). The benchmark's floor, a one-thread copy of as many bytes, runs in L3 at ~105
# GB/s (0.18-0.2 ms), so ~2.5-2.7x of it is this design's bound. Each tried, ~same or slower:
# blocks of 5-164 planes (so that a block's image and sums stay in cache; the ~23 NumPy calls per
# block, ~45 us, outweigh it: 1.8-6.3 ms at the time; now 1.24-2.57 ms against 1.14 for the
# whole); the same with the fewest calls, written for this case alone (1.7-2.7 ms); the kernel
# rows summed first as whole rows, every kernel column at once, then the column phases (1.8-2.1
# ms); the offsets first copied kernel-offset-major (0.8 ms for that copy alone); each kernel
# row's offsets summed first with their wrapped columns set by copies (no band arrays), then the
# rows added, in kept scratch arrays (minimum one-thread CPU of four alternations 0.95-1.10
# against 0.92-1.15 ms: no consistent gain); the last add of each phase written straight into the
# image's stride-2 view (minimum 1.13 against 0.99: 27-element rows); all sums first, then the
# four copies in blocks of 32 planes (1.36 against 1.14); the interleave as complex64 (a float32
# cast to complex64 is (x, 0); the same cast viewed one float on is (0, x); their complex sum is
# the pair, exact for inf and NaN: 0.22 against 0.19 ms for the two strided copies of a row phase)
# or as uint64 bit fields (0.27 against 0.19). (The 1.7-6.3 ms figures are from before
# UFUNC_BUFFER, with NumPy's default ufunc buffer.)
SLICES, FLAT, PHASES = "slices", "flat", "phases"

# An axis' placements: (kernel index, offset) pairs, block b of that index landing at position
# b*stride + offset (in the image) or b + offset (in a phase).
_Terms = list[tuple[int, int]]


def _phase_terms(kernel: int, dilation: int, padding: int, stride: int, phase: int) -> _Terms:
    """The kernel indices landing on positions ``phase + stride*t`` and their offsets in t."""
    return [(i, (i * dilation - padding - phase) // stride) for i in range(kernel)
            if (i * dilation - padding) % stride == phase]


def _method(size: tuple[int, ...], kernel: tuple[int, ...], dilation: tuple[int, ...], padding: tuple[int, ...],
            stride: tuple[int, ...], grid: tuple[int, int]) -> str:
    """FLAT where the pitches agree at stride 1; PHASES where every phase's row is a block row
    long (and the kernel has more than one offset per phase on average: else the phases' one
    pass of writes is all the work slices would do); else SLICES."""
    (width, (kw, dw, pw, sw), l1) = size[1], (kernel[1], dilation[1], padding[1], stride[1]), grid[1]
    if stride == (1, 1):
        return FLAT if l1 == width else SLICES
    phases_w = [b for b in range(min(sw, width)) if _phase_terms(kw, dw, pw, sw, b)]
    if kernel[0] * kernel[1] > stride[0] * stride[1] and phases_w and all(
            len(range(b, width, sw)) == l1 for b in phases_w):
        return PHASES
    return SLICES


def _col2im(cols: np.ndarray, out: np.ndarray, size: tuple[int, ...], kernel: tuple[int, ...],
            dilation: tuple[int, ...], padding: tuple[int, ...], stride: tuple[int, ...], grid: tuple[int, int],
            *, method: str | None = None) -> None:
    """Fill ``out``, ``(P, H, W)``, with the images of the ``P`` one-channel column planes
    ``cols`` ``(P, kH*kW*L)`` by one of the ``_method`` ways (``method`` forces one where it
    applies)."""
    (height, width), (kh, kw), (dh, dw), (ph, pw), (sh, sw) = size, kernel, dilation, padding, stride
    if (kh, kw) == (sh, sw) and (dh == 1 or kh == 1) and (dw == 1 or kw == 1) and ph == pw == 0 and cols.size:
        _untile(cols, out, kernel, grid)
        return
    method = method or _method(size, kernel, dilation, padding, stride, grid)
    if cols.size == 0:
        out[...] = 0
        return
    # A view wherever the strides allow it (always for contiguous data).
    cols = cols.reshape(cols.shape[0], kh, kw, *grid)
    if method == PHASES:
        # One buffer for every phase (the first is the largest), mapped and cached once.
        scratch = np.empty(out.shape[0] * len(range(0, height, sh)) * len(range(0, width, sw)), out.dtype)
        for a in range(min(sh, height)):
            rows = _phase_terms(kh, dh, ph, sh, a)
            for b in range(min(sw, width)):
                terms = _phase_terms(kw, dw, pw, sw, b)
                if not (rows and terms):
                    out[:, a::sh, b::sw] = 0
                    continue
                shape = (out.shape[0], len(range(a, height, sh)), len(range(b, width, sw)))
                if len(rows) == len(terms) == 1 and rows[0][1] == terms[0][1] == 0 and shape[1:] == grid:
                    # One kernel offset filling the phase: copied there straight.
                    out[:, a::sh, b::sw] = cols[:, rows[0][0], terms[0][0]]
                    continue
                phase = scratch[:math.prod(shape)].reshape(shape)
                _set_flat(cols, phase, rows, terms)
                out[:, a::sh, b::sw] = phase
        return
    rows = [(i, i * dh - ph) for i in range(kh)]
    terms = [(j, j * dw - pw) for j in range(kw)]
    if method == FLAT:
        _set_flat(cols, out, rows, terms)
    else:
        out[...] = 0
        _add_slices(cols, out, rows, terms, stride, (0, width))


def _add_slices(cols: np.ndarray, out: np.ndarray, rows: _Terms, terms: _Terms, stride: tuple[int, ...],
                columns: tuple[int, int]) -> None:
    """Add the blocks of ``cols`` ``(P, kH, kW, L0, L1)`` placed by ``rows`` x ``terms`` (see
    ``_Terms``) that land in columns ``[x0, x1)`` of ``out`` ``(P, n, m)``, one strided
    slice-add per kernel offset."""
    (height, (l0, l1), (sh, sw), (x0, x1)) = out.shape[1], cols.shape[3:], stride, columns
    for i, row_offset in rows:
        row_first, row_last, row_start = _hits(l0, height, row_offset, sh)
        if row_first == row_last:
            continue
        target_rows = slice(row_start, row_start + (row_last - row_first - 1) * sh + 1, sh)
        for j, offset in terms:
            col_first, col_last, col_start = _hits(l1, x1 - x0, offset - x0, sw)
            if col_first == col_last:
                continue
            target = out[:, target_rows, x0 + col_start:x0 + col_start + (col_last - col_first - 1) * sw + 1:sw]
            np.add(target, cols[:, i, j, row_first:row_last, col_first:col_last], out=target)


def _set_flat(cols: np.ndarray, out: np.ndarray, rows: _Terms, terms: _Terms) -> None:
    """Set ``out`` to the sum ``_add_slices`` would add to it at stride 1, when a block row is
    a row of ``out`` (L1 == m).

    Block ``(bh, bw)`` lands at ``(bh + row offset, bw + offset)``: with equal pitches that is
    flat position ``block + shift``, so each kernel offset is one add of whole flat planes (a
    long NumPy inner loop instead of one per row); the first two offsets are written together,
    piece by piece between the places where one starts or ends (their sum where both land, as
    one pass instead of a zero fill and two adds). Where ``bw + offset`` leaves ``[0, m)`` the
    flat add wraps into the next or previous row: only the columns within the largest offset
    of the left and right edges receive such values. Those bands are summed apart with slices,
    each offset's right after its flat add (its blocks still in the cache), and written last."""
    height, width = out.shape[1:]
    l0, l1 = cols.shape[3:]
    planes = out.reshape(out.shape[0], height * width)
    blocks = cols.reshape(*cols.shape[:3], l0 * l1)
    area = height * width
    left = min(width, max(0, max(offset for _, offset in terms)))
    right = max(left, width - max(0, -min(offset for _, offset in terms)))
    bands = [(x0, x1, np.zeros((out.shape[0], height, x1 - x0), out.dtype))
             for x0, x1 in ((0, left), (right, width)) if x0 < x1]
    adds = []  # (first, last position, (kernel offset), (row offset, offset), shift) of those reaching out
    for i, row_offset in rows:
        for j, offset in terms:
            shift = row_offset * width + offset     # position - block position
            if max(0, shift) < min(area, l0 * l1 + shift):
                adds.append((max(0, shift), min(area, l0 * l1 + shift), (i, j), (row_offset, offset), shift))

    def add_to_bands(i: int, j: int, row_offset: int, offset: int) -> None:
        for x0, x1, band in bands:
            _add_slices(cols, band, [(i, row_offset)], [(j, offset - x0)], (1, 1), (0, x1 - x0))

    pair = adds[:2]
    cuts = sorted({0, area, *(t for first, last, *_ in pair for t in (first, last))})
    for a, b in zip(cuts[:-1], cuts[1:]):
        parts = [blocks[:, i, j, a - shift:b - shift] for first, last, (i, j), _, shift in pair
                 if first <= a and b <= last]
        if len(parts) == 2:
            np.add(parts[0], parts[1], out=planes[:, a:b])
        else:
            planes[:, a:b] = parts[0] if parts else 0
    for _, _, (i, j), (row_offset, offset), _ in pair:
        add_to_bands(i, j, row_offset, offset)
    for first, last, (i, j), (row_offset, offset), shift in adds[2:]:
        target = planes[:, first:last]
        np.add(target, blocks[:, i, j, first - shift:last - shift], out=target)
        add_to_bands(i, j, row_offset, offset)
    for x0, x1, band in bands:
        out[:, :, x0:x1] = band


def _untile(cols: np.ndarray, out: np.ndarray, kernel: tuple[int, ...], grid: tuple[int, int]) -> None:
    """``_col2im`` when the patches tile the image (kernel == stride, no dilation or padding:
    a ViT patch embedding): every position receives at most one column element, so the whole
    operation is one transposing copy, and zeros past the last patch (the remainder of the
    floor division that gave ``grid``)."""
    (kh, kw), (l0, l1) = kernel, grid
    planes = cols.shape[0]
    out[:, l0 * kh:] = 0
    out[:, :l0 * kh, l1 * kw:] = 0
    tiled = out[:, :l0 * kh, :l1 * kw].view()
    tiled.shape = (planes, l0, kh, l1, kw)      # a view by construction (raises otherwise)
    # Copied through a view of the image in the columns' axis order, which NumPy iterates ~25%
    # faster than the columns transposed to the image's order (0.40 vs 0.53 ms CPU, medians of
    # 15 interleaved rounds, the benchmark's (8,3,224,224) ViT case). Measured again with 20 ms
    # of calls before each sample (scripts/bench.py's warm-up), one thread, 31 rounds: the
    # image's order 0.406 ms, this one 0.407, the same. Two copies with long inner loops
    # instead (through a (P, kH, L, kW) buffer, then rows of W) were slower: 0.52 against 0.41.
    # This copy is the bound of any NumPy way (issue #13): no two floats adjacent in the image
    # are adjacent in the columns, so each moves alone, at ~0.29 ns here (inner loops of kW
    # floats; 0.23 for 28-float ones). The same copy as a ufunc (np.positive into the view,
    # either axis innermost) 0.59-0.63 ms against 0.35; by one kernel column or row at a time
    # 0.39-0.73.
    np.copyto(tiled.transpose(0, 2, 4, 1, 3), cols.reshape(planes, kh, kw, l0, l1))


def _outputs(grad_output: object, input_size: object, kernel_size: object, dilation: object, padding: object,
             stride: object) -> list[Output]:
    """The result, ``([N,] C, H, W)``, zeros first: CANN writes nothing for an empty gradOutput."""
    return [Output(_out_shape(shape_of(grad_output), input_size, kernel_size), dtype_of(grad_output), zero=True)]


def _shape_checks(grad_output: object, *arrays: tuple[int, ...] | None) -> None:
    """The checks the output's size depends on (it is only sized so when they pass)."""
    _check_geometry(shape_of(grad_output), *arrays)


#: The npu/sim path: the two-phase C call, the arguments converted by their declared C types;
#: the library checks them.
#: The outputs the function makes, and from what (their names in CANN's messages: ``dispatch``).
_MADE = {"out": "gradOutput's dtype and the shape inputSize and kernelSize give"}

_aclnn = planned(TypedCall("Im2colBackward", _outputs, checks=_shape_checks))


def _out_shape(shape: tuple[int, ...], input_size: object, kernel_size: object) -> tuple[int, ...]:
    """``([N,] C, H, W)``: rank gradOutput + 1 always, so that a bad argument is reported for
    itself, not as an out-rank mismatch; as far as the arguments allow, the shape they ask for
    (the library sees the real request; nothing is allocated when the shape checks refuse)."""
    if len(shape) < 2:
        return (1,) * (len(shape) + 1)
    kernel = _ints(kernel_size)
    area = kernel[0] * kernel[1] if len(kernel) == 2 and min(kernel) > 0 else 1
    size = _ints(input_size)
    height, width = size if len(size) == 2 else (1, 1)
    return (*shape[:-2], shape[-2] // area, height, width)


def _ints(values: Any) -> list[int]:  # anything: what is not ints is the library's to report
    try:
        return [int(v) for v in values]
    except Exception:  # the library reports the argument
        return []


@documented
def im2col_backward(grad_output: ArrayLike | Tensor, input_size: Sequence[int], kernel_size: int | Sequence[int],
                    dilation: int | Sequence[int], padding: int | Sequence[int], stride: int | Sequence[int], *,
                    backend: str | None = None, stream: object = None) -> np.ndarray | Tensor:
    """col2im (``torch.nn.functional.fold``): sum the sliding-block columns of ``grad_output``
    back into an image, the gradient of im2col (``F.unfold``).

    Mirrors ``aclnnIm2colBackwardGetWorkspaceSize`` + ``aclnnIm2colBackward``.

    Args:
        grad_output: gradOutput, ``(N, C*kH*kW, L)`` or unbatched ``(C*kH*kW, L)``, with
            ``L = L0*L1`` the number of blocks; FLOAT, FLOAT16 or BFLOAT16.
        input_size: inputSize ``[H, W]``, the image size; values > 0.
        kernel_size: kernelSize ``[kH, kW]`` or one int for both; values > 0.
        dilation: ``[dH, dW]`` or one int; values > 0.
        padding: ``[pH, pW]`` or one int; values >= 0.
        stride: ``[sH, sW]`` or one int; values > 0. ``Ld = (inputSize[d] + 2*padding[d] -
            dilation[d]*(kernelSize[d] - 1) - 1) // stride[d] + 1`` must give ``L0*L1 == L``.
        {backend_and_stream}

    {tensor_arguments}

    Returns:
        out: ``(N, C, H, W)`` (or ``(C, H, W)``) with grad_output's dtype; overlapping blocks
        add up, positions in the padding are dropped, an empty grad_output gives zeros.

    Raises:
        AclnnError: 161001 if an argument is None; 161002 for a dtype, rank, length or value
            outside the constraints above (also a block count L that does not match).
        TypeError: an argument of the wrong Python type (a list where a tensor belongs, a
            float where an int belongs, a dtype with no aclDataType).
    """
    result: np.ndarray | Tensor = dispatch(backend, _numpy, _aclnn, grad_output, input_size, repeated(kernel_size, 2),
                    repeated(dilation, 2), repeated(padding, 2), repeated(stride, 2),
                    stream=stream, made=_MADE)
    return result


# -- registration: what the tools know of this operator (ops/_registry.py) -------------------------

from ._cases import OpCall, dims, pair, random_array  # noqa: E402
from ._registry import Operator, register  # noqa: E402


def _case(rng: np.random.Generator, shape: Sequence[int], dtype: np.dtype, kernel: int | Sequence[int] = 3,
          dilation: int | Sequence[int] = 1, padding: int | Sequence[int] = 1,
          stride: int | Sequence[int] = 1) -> OpCall:
    """col2im folding the columns of an im2col over an ``[N,] C, H, W`` image."""
    *lead, channels, height, width = shape
    k, d, p, s = map(pair, (kernel, dilation, padding, stride))
    blocks = [(size + 2 * pp - dd * (kk - 1) - 1) // ss + 1
              for size, kk, dd, pp, ss in zip((height, width), k, d, p, s)]
    grad = random_array(rng, (*lead, channels * k[0] * k[1], blocks[0] * blocks[1]), dtype)
    return OpCall("im2col_backward", (grad, [height, width], list(k), list(d), list(p), list(s)),
                  case=f"k{dims(k)} d{dims(d)} p{dims(p)} s{dims(s)}")


def _torch(torch: Any, grad: Any, size: Any, kernel: Any, dilation: Any, padding: Any, stride: Any) -> Any:
    return torch.nn.functional.fold(grad, size, kernel, dilation=dilation, padding=padding, stride=stride)


def _layer(n: int, c: int, h: int, w: int, k: int, s: int, p: int) -> Any:
    def make(rng: np.random.Generator) -> tuple[Any, ...]:
        blocks = ((h + 2 * p - (k - 1) - 1) // s + 1) * ((w + 2 * p - (k - 1) - 1) // s + 1)
        return (rng.standard_normal((n, c * k * k, blocks), dtype=np.float32), [h, w], [k, k], [1, 1], [p, p],
                [s, s])
    return make


def _fuzz(f: Any) -> list[Any]:
    c, kh, kw = f.small_int(1, 3), f.small_int(1, 3), f.small_int(1, 3)
    h, w = f.small_int(kh, 7), f.small_int(kw, 7)
    ph, pw, sh, sw = f.small_int(0, 1), f.small_int(0, 1), f.small_int(1, 2), f.small_int(1, 2)
    l0, l1 = (h + 2 * ph - kh) // sh + 1, (w + 2 * pw - kw) // sw + 1
    lead = (f.small_int(1, 2),) if f.chance(0.7) else ()
    return [f.filled(lead + (c * kh * kw, l0 * l1), f.pick(f.FLOATS)), [h, w], [kh, kw], [1, 1], [ph, pw], [sh, sw]]


def _c_arguments(args: list[Any], out_like: Any) -> list[Any]:
    g, size, kernel = args[0], args[1], args[2]
    return [*args, out_like((*g.shape[:-2], g.shape[-2] // (kernel[0] * kernel[1]), *size), g.dtype)]


OPERATOR = register(Operator(
    im2col_backward, "Im2colBackward", header="aclnn_im2col_backward.h", package="ops-cv",
    library="libopapi_cv.so", outputs=("out",), case=_case,
    selftest=(((2, 3, 7, 8), DTYPES, dict(kernel=(2, 3), dilation=(1, 2), padding=(1, 0), stride=(2, 1))),
              ((3, 6, 5), (FLOAT32,), dict(kernel=2, dilation=1, padding=1, stride=2))),
    bench=((8, 64, 56, 56), dict(kernel=3, dilation=1, padding=1, stride=1)),
    torch=_torch, memory_bound=True, fuzz=_fuzz, c_arguments=_c_arguments, dtypes=DTYPE_RULES, seed=True,
    benchmarks=(("im2col_backward conv layer k3 (8,64,56,56)", _layer(8, 64, 56, 56, 3, 1, 1)),
                ("im2col_backward k3 s2 p1 (8,64,56,56)", _layer(8, 64, 56, 56, 3, 2, 1)),
                ("im2col_backward vit patches k16 s16 (8,3,224,224)", _layer(8, 3, 224, 224, 16, 16, 0)),
                ("im2col_backward tiny (1,1,4,4)", _layer(1, 1, 4, 4, 2, 2, 0)))))
