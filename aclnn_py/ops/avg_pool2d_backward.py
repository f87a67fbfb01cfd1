"""aclnnAvgPool2dBackward: the gradient of 2-D average pooling with respect to its input.

C API (header ``aclnnop/aclnn_avgpool2d_backward.h``)::

    aclnnStatus aclnnAvgPool2dBackwardGetWorkspaceSize(
        const aclTensor *gradOutput, const aclTensor *self, const aclIntArray *kernelSize,
        const aclIntArray *stride, const aclIntArray *padding, bool ceilMode,
        bool countIncludePad, int64_t divisorOverride, int8_t cubeMathType,
        aclTensor *gradInput, uint64_t *workspaceSize, aclOpExecutor **executor);
    aclnnStatus aclnnAvgPool2dBackward(
        void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream);

It computes ``torch.ops.aten.avg_pool2d_backward(grad_output, self, kernel_size, stride, padding,
ceil_mode, count_include_pad, divisor_override)``, with this CANN -> aten mapping:

* kernelSize ``[k]`` -> ``(k, k)``; ``[kH, kW]`` -> ``(kH, kW)``.
* stride ``None`` or ``[]`` -> the kernel size; ``[s]`` -> ``(s, s)``; ``[sH, sW]``.
* padding ``[p]`` -> ``(p, p)``; ``[pH, pW]``.
* divisorOverride ``0`` (or ``None`` here) -> ``divisor_override=None``; any other value, negative
  included, divides every window by that value.
* cubeMathType has no aten counterpart: it tells the NPU's cube unit which precision it may use
  (0 KEEP_DTYPE, 1 ALLOW_FP32_DOWN_PRECISION, 2 USE_FP16, 3 USE_HF32).  The numpy backend always
  computes in float32 (float16 and bfloat16 are widened and the result rounded back), so it only
  validates the value.

What is computed, per output cell ``(oh, ow)`` and per axis (shown for H)::

    start = oh * sH - pH                      # first row of the window (< 0: in the padding)
    end   = min(start + kH, H + pH)           # clipped to the padded input
    divisor = divisorOverride                  if divisorOverride != 0
            = (end - start) * (W-axis ditto)   if countIncludePad
            = real rows * real columns         otherwise (real = inside [0, H) x [0, W))
    gradInput[real rows, real columns] += gradOutput[oh, ow] / divisor

The pooled size per axis is ``o = floor((H + 2p - k + (ceilMode ? s - 1 : 0)) / s) + 1``, minus
one if ``ceilMode`` and the last window would start at or after ``H + p`` (it must start inside
the input or its left padding).  A 3-D input ``(C, H, W)`` is one image (NCL format).

Checks, in order (1-7 and 9 as CANN makes them; the first failure decides the status):

1. gradOutput, self, kernelSize or padding missing -> 161001 (stride may be missing).
2. gradOutput and self dtype in {FLOAT, FLOAT16, BFLOAT16}; gradOutput dtype == gradInput dtype
   (gradInput has self's dtype) -> else 161002.
3. Format: gradOutput and self are 3-D (NCL) or 4-D (NCHW) -- other ranks would be ND, which is
   rejected; a 4-D gradOutput needs a 4-D (NCHW) gradInput -> else 161002.
4. gradOutput and gradInput have the same rank; kernelSize has 1 or 2 elements, all > 0; stride
   has at most 2 elements, all > 0; padding has at most 2 elements -> else 161002.
5. padding is not empty and ``kH >= 2 * pH``, ``kW >= 2 * pW`` (padding <= kernelSize / 2)
   -> else 161002.
6. cubeMathType in {0, 1, 2, 3}, and not 2 (USE_FP16) with BFLOAT16 input -> else 161002.
7. self shape == gradInput shape: holds by construction (this binding allocates gradInput).
8. Shapes CANN's phase 1 lets through (the NPU then fails later or computes garbage) but the
   documentation calls unsupported; every backend of this binding rejects them with 161002:
   padding < 0; gradOutput N / C != self N / C; gradOutput H / W != the pooled size above.
   Sizes are Python ints; a padded extent ``H + 2p`` beyond int64 is 161002 too.
9. Any empty tensor (a zero dimension) -> success, gradInput is all zeros.

The divisor range check of older products (|divisorOverride| <= 255 on Atlas training/inference
series) is not applied: this binding emulates Atlas A2/A3, which accepts any divisor.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import TYPE_CHECKING, NamedTuple

import numpy as np
from numpy.typing import ArrayLike

from .._dtypes import bfloat16, dtype_name
from .._errors import param_invalid
from .._runtime.memory import check_allocation
from .._runtime.tensor import Tensor
from .._numpy import workers as _workers
from .._numpy import small as _small
from ._registry import numpy_dtypes
from .._numpy.pooling import avg_divisors, pooled_size
from .._numpy.ufunc_buffer import ufunc_buffer
from .._convert.executor import dtype_of, planned, shape_of
from .._convert.typed import Output, TypedCall
from .._convert.values import c_int
from ._checks import FLOAT32, check_dtype, check_min, check_not_null, format_name, shape_str
from .._convert.values import INT64_MAX, bool_arg, host_array, int_array_arg, repeated, tensor_arg
from .._numpy.plans import NumpyOp, Prepared, plan
from ._dispatch import dispatch, documented
from .._numpy.workers import in_parallel, scratch

if TYPE_CHECKING:
    pass

API = "aclnnAvgPool2dBackwardGetWorkspaceSize"

#: The dtypes each rule accepts: the one table of these checks (the simulator's are generated from it).
DTYPE_RULES = {"DTYPES": ("ACL_FLOAT", "ACL_FLOAT16", "ACL_BF16")}
_DTYPES = numpy_dtypes(DTYPE_RULES["DTYPES"])
_CUBE_MATH_TYPES = {0: "KEEP_DTYPE", 1: "ALLOW_FP32_DOWN_PRECISION", 2: "USE_FP16", 3: "USE_HF32"}
_USE_FP16 = 2

# How _spread chooses between one strided slice per window offset and one matrix product with
# the (size x o) 0/1 window-membership matrix.  Per element of the other axes the slices do
# (offsets x o) adds, the product (size x o) multiply-adds at BLAS speed, measured ~24x faster
# per element; so the product wins when size <= 24 x offsets (kernel 5 and up on 112 pixels,
# kernel 3 up to 72 pixels) and on small arrays, where the cost of each slice is overhead.  The
# membership matrix is built only up to _MAX_MEMBERSHIP elements (else slices, whatever the
# cost); the small ones are cached.
_BLAS_ADVANTAGE = 24
_SMALL = 4096
_MAX_MEMBERSHIP = 1 << 22
_CACHED_MEMBERSHIP = 1 << 16


class _Params(NamedTuple):
    """Validated, normalised arguments: every list expanded to an (H, W) pair."""

    kH: int
    kW: int
    sH: int
    sW: int
    pH: int
    pW: int
    ceil_mode: bool
    count_include_pad: bool
    divisor_override: int  # 0 = none
    cube_math_type: int


def _pooled_size(size: int, k: int, s: int, p: int, ceil_mode: bool) -> int:
    """Forward output size along one axis (the shared pooling formula, ``_numpy/pooling.py``)."""
    return pooled_size(size, k, s, p, ceil_mode)


def _validate(grad_output: object, self: object, kernel_size: object, stride: object, padding: object,
              ceil_mode: object, count_include_pad: object, divisor_override: object,
              cube_math_type: object) -> tuple[np.ndarray, np.ndarray, _Params]:
    """Coerce and check every argument in CANN's order; return gradOutput, self and the
    normalised parameters."""
    # 1. Python types (TypeError) and C ranges, in the order the binding converts them for the
    #    C call, then required arguments (None -> 161001; stride may be None).
    ceil_mode = bool_arg(API, "ceilMode", ceil_mode)
    count_include_pad = bool_arg(API, "countIncludePad", count_include_pad)
    divisor = 0 if divisor_override is None else c_int(API, "divisorOverride", divisor_override, 64)
    cube_math_type = c_int(API, "cubeMathType", cube_math_type, 8)
    grad_output = tensor_arg(API, "gradOutput", grad_output)
    self = tensor_arg(API, "self", self)
    kernel = int_array_arg(API, "kernelSize", kernel_size)
    strides = int_array_arg(API, "stride", stride)
    pads = int_array_arg(API, "padding", padding)
    check_not_null(API, gradOutput=grad_output, self=self, kernelSize=kernel, padding=pads)
    assert grad_output is not None and self is not None and kernel is not None and pads is not None  # (just checked)

    # 2. Dtypes.
    check_dtype(API, "gradOutput", grad_output, _DTYPES)
    check_dtype(API, "self", self, _DTYPES)
    if grad_output.dtype != self.dtype:
        # gradInput is made with self's dtype.
        raise param_invalid(API, f"gradOutput dtype must equal gradInput dtype, got {dtype_name(grad_output.dtype)} "
                                 f"and {dtype_name(self.dtype)}")

    return grad_output, self, _check_geometry(grad_output.shape, self.shape, self.dtype == bfloat16, kernel, strides,
                                              pads, ceil_mode, count_include_pad, divisor, cube_math_type)


@functools.lru_cache(maxsize=1024)
def _check_geometry(go_shape: tuple[int, ...], self_shape: tuple[int, ...], is_bfloat16: bool, kernel: tuple[int, ...], strides: tuple[int, ...] | None,
                    pads: tuple[int, ...], ceil_mode: bool, count_include_pad: bool, divisor: int,
                    cube_math_type: int) -> _Params:
    """Steps 3 on: the checks that depend on shapes and parameters alone (cached: repeated
    calls with the same geometry skip them); returns the normalised parameters."""
    # 3. Formats: the binding describes 3-D tensors as NCL, 4-D as NCHW, anything else as ND.
    #    gradInput is made with self's shape.
    for name, shape in (("gradOutput", go_shape), ("self", self_shape)):
        if len(shape) not in (3, 4):
            raise param_invalid(API, f"{name} format must be NCHW or NCL, got {format_name(len(shape))} "
                                     f"(shape {shape_str(shape)})")
    if len(go_shape) == 4 and len(self_shape) != 4:
        raise param_invalid(API, f"a 4-D gradOutput needs gradOutput and gradInput in NCHW, got NCHW and "
                                 f"{format_name(len(self_shape))}")

    # 4. Ranks and list lengths / values.  (NumPy shapes are never negative.)
    if len(go_shape) != len(self_shape):
        raise param_invalid(API, f"gradOutput and gradInput must be both 3-D or both 4-D, got {shape_str(go_shape)} "
                                 f"and {shape_str(self_shape)}")
    if len(kernel) not in (1, 2):
        raise param_invalid(API, f"kernelSize must have 1 or 2 elements, got {shape_str(kernel)}")
    check_min(API, "kernelSize", kernel, 0, strict=True)
    if strides is not None:
        if len(strides) > 2:
            raise param_invalid(API, f"stride must have 0, 1 or 2 elements, got {shape_str(strides)}")
        check_min(API, "stride", strides, 0, strict=True)
    if len(pads) > 2:
        raise param_invalid(API, f"padding must have 1 or 2 elements, got {shape_str(pads)}")

    # 5. Padding.
    if not pads:
        raise param_invalid(API, "padding must have 1 or 2 elements, got []")
    kH, kW = kernel * 2 if len(kernel) == 1 else kernel
    pH, pW = pads * 2 if len(pads) == 1 else pads
    if kH < 2 * pH or kW < 2 * pW:
        raise param_invalid(API, f"padding must be <= kernelSize / 2, got kernelSize = {shape_str(kernel)}, "
                                 f"padding = {shape_str(pads)}")

    # 6. Cube math type.
    if cube_math_type not in _CUBE_MATH_TYPES:
        raise param_invalid(API, f"cubeMathType must be 0 (KEEP_DTYPE), 1 (ALLOW_FP32_DOWN_PRECISION), "
                                 f"2 (USE_FP16) or 3 (USE_HF32), got {cube_math_type}")
    if cube_math_type == _USE_FP16 and is_bfloat16:
        raise param_invalid(API, "cubeMathType 2 (USE_FP16) is not supported for BFLOAT16 input")

    # Beyond CANN's phase-1 checks: shapes the documentation calls unsupported.
    if pH < 0 or pW < 0:
        raise param_invalid(API, f"padding values must be >= 0, got padding = {shape_str(pads)}")
    if go_shape[:-2] != self_shape[:-2]:
        raise param_invalid(API, f"gradOutput and self must have the same {'N and C' if len(self_shape) == 4 else 'C'}, "
                                 f"got gradOutput {shape_str(go_shape)} and self {shape_str(self_shape)}")
    if not strides:
        sH, sW = kH, kW
    else:
        sH, sW = strides * 2 if len(strides) == 1 else strides
    H, W = self_shape[-2:]
    for size, k, st, pad in ((H, kH, sH, pH), (W, kW, sW, pW)):
        if max(size + 2 * pad, size + 2 * pad - k + (st - 1 if ceil_mode else 0)) > INT64_MAX:
            raise param_invalid(API, f"the pooled size overflows int64 (self {shape_str(self_shape)}, kernelSize = "
                                     f"{shape_str(kernel)}, stride = {shape_str(strides or ())}, padding = "
                                     f"{shape_str(pads)})")
    expected = (_pooled_size(H, kH, sH, pH, ceil_mode), _pooled_size(W, kW, sW, pW, ceil_mode))
    if go_shape[-2:] != expected:
        raise param_invalid(API, f"gradOutput H, W must be the pooled size of self, {shape_str(expected)} for "
                                 f"self {shape_str(self_shape)}, kernelSize = {shape_str(kernel)}, stride = "
                                 f"{shape_str(strides or ())}, padding = {shape_str(pads)}, "
                                 f"ceilMode = {str(ceil_mode).lower()}; got gradOutput {shape_str(go_shape)}")

    return _Params(kH, kW, sH, sW, pH, pW, ceil_mode, count_include_pad, divisor, cube_math_type)


def _membership(size: int, o: int, k: int, s: int, p: int) -> np.ndarray:
    """The (size, o) float32 matrix with 1 where window o covers x (read-only)."""
    start = np.arange(o, dtype=np.int64) * s - p
    offset = np.arange(size, dtype=np.int64)[:, None] - start  # |offset| < size + p: no overflow
    member = ((offset >= 0) & (offset < k)).astype(np.float32)
    member.flags.writeable = False
    return member


_cached_membership = functools.lru_cache(maxsize=64)(_membership)


def _product_pays(size: int, o: int, offsets: int, elements: int) -> bool:
    """Whether ``_spread`` takes the membership product along an axis of ``size`` (``o``
    windows, ``offsets`` window offsets reaching the axis) for a source of ``elements``."""
    return (size <= _BLAS_ADVANTAGE * offsets or elements <= _SMALL) and size * o <= _MAX_MEMBERSHIP


def _spread(src: np.ndarray, axis: int, size: int, k: int, s: int, p: int) -> np.ndarray:
    """Backward of window-summing along ``axis``: ``dst[x] = sum of src[o] over windows o holding x``.

    Window ``o`` covers ``x = o*s - p + i`` for ``0 <= i < k``, clipped to ``[0, size)``.  ``axis``
    is one of the last two.  Returns an array shaped like ``src`` with ``size`` along ``axis``,
    never a view of ``src`` unless the spread is the identity.
    """
    o = src.shape[axis]
    if k == s and p == 0 and o * k == size:
        # Windows tile the axis exactly: every x receives exactly one src value (the test
        # _prepare makes too).
        return src if k == 1 else np.repeat(src, k, axis=axis)

    offsets = _offsets(size, o, k, s, p)
    product_pays = _product_pays(size, o, sum(map(len, offsets)), src.size)
    # The product multiplies every value by the 0 entries too, and 0 * inf is NaN: only finite
    # data may take it, or an inf/NaN gradient would leak out of its window.  (A finite sum
    # proves every element finite; an overflowing one merely costs the faster path.)
    if product_pays and np.isfinite(src.sum()):
        member = (_cached_membership if size * o <= _CACHED_MEMBERSHIP else _membership)(size, o, k, s, p)
        spread: np.ndarray = np.matmul(src, member.T) if axis == src.ndim - 1 else np.matmul(member, src)
        return spread

    # Per phase (the positions x = r + s*t of one residue r), a sum of shifted slices
    # (``_phases``), each piece one operation of strided slices.
    shape = list(src.shape)
    shape[axis] = size
    dst = np.empty(shape, dtype=src.dtype)
    for phase in _phases(size, o, k, s, p):
        target = np.moveaxis(dst, axis, -1)[..., phase.residue::s]
        for piece in phase.pieces:
            _apply_piece(piece, np.moveaxis(src, axis, -1), target, False)
    return dst


# -- the phase engine: large calls, planes in cache-sized blocks on the worker threads ----------
#
# Along one axis, the positions x = r + s*t of one residue r (a phase) receive the windows
# o = t + shift of the offsets i with (i - p) mod s == r: a phase is a sum of shifted slices
# of the source (``_Piece``s, as ``_spread`` sums them). Per block of planes the engine divides
# the gradient by its divisor map into a block buffer, spreads it along W into a second one
# (OH, W) and along H into the result's rows. NumPy's ufuncs cost ~18 ns per inner loop here
# (with NumPy's default buffer, see UFUNC_BUFFER: an add of (64, 56, 55) rows 0.080 ms, of the
# same elements as one flat run 0.016 ms), its copies far less (a column-strided copy of
# (64, 56, 56) 0.05 ms), so every add of a W phase runs over a flat run and only copies go
# through short rows: a W phase is summed flat in a buffer of the
# source's row pitch (a piece spanning the whole phase writes the junk of its row ends into
# that pitch's spare columns, or where a later piece overwrites it), then copied to its
# columns; an H phase is whole rows, added in place.


class _Piece(NamedTuple):
    """Positions ``[first, last)`` of a phase receive ``sum(src[t + w] for w in shifts)``;
    ``add`` adds the (one) shifted slice to what the positions hold."""

    first: int
    last: int
    shifts: tuple[int, ...]
    add: bool


class _Phase(NamedTuple):
    """Phase ``residue`` of an axis: ``length`` positions ``residue + stride*t``, and its pieces
    in the order they are applied (a first piece spanning the phase may run flat)."""

    residue: int
    length: int
    pieces: tuple[_Piece, ...]


def _offsets(size: int, o: int, k: int, s: int, p: int) -> list[range]:
    """The window offsets i that reach some x in [0, size): window o reaches it with
    i in [p - o*s, p - o*s + size).  These ranges form one run unless windows are further
    apart than the axis is long (and then there are at most two windows)."""
    if s <= size:
        return [range(max(0, p - (o - 1) * s), min(k, size + p))]
    return [range(max(0, p - j * s), min(k, p - j * s + size)) for j in reversed(range(o))]


def _phases(size: int, o: int, k: int, s: int, p: int) -> tuple[_Phase, ...]:
    """The phases of the spread along one axis (``_spread``'s slices, as data): per phase the
    first two slices written together, piece by piece between the places where one starts or
    ends (their sum where both cover t, zeros where none does), then each further slice added;
    the widest piece of the first two first."""
    used = sorted({i for run in _offsets(size, o, k, s, p) for i in run})
    phases = []
    for r in range(min(s, size)):
        n = len(range(r, size, s))
        slices = []  # (first t, last t + 1, window - t) of each offset's slice in this phase
        for i in used:
            if (i - p) % s == r:
                shift = (i - p - r) // s
                if max(0, shift) < min(n, o + shift):
                    slices.append((max(0, shift), min(n, o + shift), -shift))
        pair, rest = slices[:2], slices[2:]
        cuts = sorted({0, n, *(t for first, last, _ in pair for t in (first, last))})
        pieces = [_Piece(a, b, tuple(w for first, last, w in pair if first <= a and b <= last), False)
                  for a, b in zip(cuts[:-1], cuts[1:])]
        pieces.sort(key=lambda piece: piece.first - piece.last)  # the widest first (a stable sort)
        pieces += [_Piece(first, last, (w,), True) for first, last, w in rest]
        phases.append(_Phase(r, n, tuple(pieces)))
    return tuple(phases)


def _apply_piece(piece: _Piece, src: np.ndarray, dst: np.ndarray, flat: bool) -> None:
    """Piece ``piece`` of a phase whose positions are ``dst``'s last axis, from ``src``'s last
    axis (both ``(rows, m)``, ``m`` the source's length): over the flat run from the piece's
    first position in the first row to its last in the last row when ``flat`` (the values
    between the rows' pieces are junk), else row by row."""
    a, b, shifts = piece.first, piece.last, piece.shifts
    if flat:
        pitch = src.shape[-1]
        dst, src = dst.reshape(-1), src.reshape(-1)
        end = (dst.size // pitch - 1) * pitch + b
        target = dst[a:end]
        parts = [src[a + w:end + w] for w in shifts]
    else:
        target = dst[..., a:b]
        parts = [src[..., a + w:b + w] for w in shifts]
    if piece.add:
        np.add(target, parts[0], out=target)
    elif len(parts) == 2:
        np.add(parts[0], parts[1], out=target)
    elif parts:
        np.copyto(target, parts[0])
    else:
        target[...] = 0


def _spread_w(src: np.ndarray, dst: np.ndarray, phases: tuple[_Phase, ...], stride: int, buffer: np.ndarray) -> None:
    """``dst`` ``(B, OH, W)`` = the spread of ``src`` ``(B, OH, OW)`` along the last axis;
    ``buffer`` ``(B*OH, pitch)`` with ``pitch >= OW`` and every phase's count (the pieces run
    flat only where ``pitch == OW``)."""
    rows, pitch = buffer.shape
    flat_ok = pitch == src.shape[2]
    for phase in phases:
        columns = dst[..., phase.residue::stride]
        first = phase.pieces[0]     # (a phase has at least one piece: _phases)
        if len(phase.pieces) == 1 and len(first.shifts) == 1 and (
                first.first, first.last) == (0, phase.length):
            w = first.shifts[0]
            np.copyto(columns, src[..., w:w + phase.length])      # one slice: copied straight
            continue
        for index, piece in enumerate(phase.pieces):
            # A piece may run flat where its junk lands only where later pieces write: the
            # first of the pieces written (they tile the phase), or one spanning the phase.
            spans = (piece.first, piece.last) == (0, phase.length)
            _apply_piece(piece, src.reshape(rows, -1), buffer, flat_ok and ((index == 0 and not piece.add) or spans))
        np.copyto(columns, buffer[:, :phase.length].reshape(columns.shape))


def _spread_h(src: np.ndarray, dst: np.ndarray, phases: tuple[_Phase, ...], stride: int) -> None:
    """``dst`` ``(B, H, W)`` = the spread of ``src`` ``(B, OH, W)`` along the middle axis
    (whole rows: each piece one operation with rows of W as its inner loops)."""
    for phase in phases:
        rows = dst[:, phase.residue::stride]
        for piece in phase.pieces:
            _apply_piece(piece, src.transpose(0, 2, 1), rows.transpose(0, 2, 1), False)


# Planes per block: the block's gradient, W-spread and result buffers, in float32, take about
# this many bytes. Fewer planes keep them in a core's cache, more spread the per-block calls
# (~20 NumPy calls) over more work: the (8,64,112,112) k3 s2 p1 case, one thread, interleaved
# rounds, median ms for blocks of 0.25 / 0.5 / 1 / 2 / 4 / 8 MiB and all 512 planes at once:
# 5.8 / 3.7 / 3.1 / 2.8 / 2.7 / 2.8 / 3.4.
_BLOCK_BYTES = 4 << 20


# Windows tiling the plane 2 wide (k2 s2 without padding, as most pooling layers): each value
# goes to 2 neighbours of a row, written at once as one uint64 holding its bits twice (the
# bits times 2**32 + 1); then each such row to its kH rows, copied as one item of the row's
# size. The (8,256,28,28) case, one 382-plane block, interleaved medians: 0.05 ms against
# 0.09 for the phases' column-strided copies (1 thread).
_TWICE = np.uint64(0x100000001)


def _tiles(phases: tuple[_Phase, ...], windows: int, stride: int) -> bool:
    """Whether the windows tile an axis exactly: ``stride`` phases, each the ``windows``
    source values unshifted."""
    return len(phases) == stride and all(
        phase.pieces == (_Piece(0, windows, (0,), False),) for phase in phases)


def _phase_grad(grad: np.ndarray, out: np.ndarray, scale: np.float32 | np.ndarray, phases_h: tuple[_Phase, ...],
                phases_w: tuple[_Phase, ...], stride: tuple[int, int]) -> None:
    """``out`` ``(P, H, W)`` (any float dtype) = the gradient of the pooled planes ``grad``
    ``(P, OH, OW)``, each divided by ``scale`` in float32 (the divisor, or its (OH, OW) map),
    spread along W and then H; in float32, rounded once into ``out``; planes in blocks on the
    worker threads."""
    planes, (oh, ow), (height, width) = grad.shape[0], grad.shape[1:], out.shape[1:]
    per_plane = 4 * (oh * ow + oh * width + height * width)
    block = max(1, _BLOCK_BYTES // per_plane)
    direct = out.dtype == np.float32
    tiles = stride[1] in (1, 2) and _tiles(phases_h, oh, stride[0]) and _tiles(phases_w, ow, stride[1])

    def work(start: int, stop: int) -> None:
        with ufunc_buffer():
            _work(start, stop)

    def _work(start: int, stop: int) -> None:
        size = min(block, stop - start)
        # The thread's scratch arrays, kept from call to call (fresh ones are fresh pages).
        divided = scratch("avg_pool divided", (size, oh, ow))
        sums = scratch("avg_pool sums", (size * oh, max(ow, *(phase.length for phase in phases_w))))
        spread = scratch("avg_pool spread", (size, oh, width))
        result = None if direct else scratch("avg_pool result", (size, height, width))
        for first in range(start, stop, size):
            last = min(stop, first + size)
            n = last - first
            target = out[first:last] if result is None else result[:n]
            np.divide(grad[first:last], scale, out=divided[:n], dtype=np.float32)
            if tiles:
                if stride[1] == 1:
                    spread[:n] = divided[:n]
                else:
                    np.multiply(divided[:n].view(np.uint32), _TWICE, out=spread[:n].view(np.uint64))
                row = np.dtype((np.void, 4 * width))
                rows = target.view(row).reshape(n, oh, stride[0])
                for a in range(stride[0]):
                    rows[:, :, a] = spread[:n].view(row)[..., 0]
            else:
                _spread_w(divided[:n], spread[:n], phases_w, stride[1], sums[:n * oh])
                _spread_h(spread[:n], target, phases_h, stride[0])
            if result is not None:
                out[first:last] = result[:n]

    in_parallel(planes, work, min_per_thread=max(1, _workers.MIN_PARALLEL_ELEMENTS // max(1, height * width)))


def _prepare(grad_output: object, self: object, kernel_size: object, stride: object, padding: object,
             ceil_mode: object, count_include_pad: object, divisor_override: object,
             cube_math_type: object) -> Prepared:
    """The numpy backend: validate, then divide each gradient by its window's divisor once
    and spread it over the window, along W and then along H (a window is a rectangle, so the
    spread is separable): by the phase engine (``_phase_grad``), or by ``_pool_grad`` where an
    axis takes the membership product; one matrix product on small planes. Computes in
    float32; cubeMathType does not change the numbers."""
    grad_output, self, params = _validate(grad_output, self, kernel_size, stride, padding, ceil_mode,
                                          count_include_pad, divisor_override, cube_math_type)
    shape, dtype, nbytes = self.shape, self.dtype, self.size * self.itemsize
    H, W = shape[-2:]
    OH, OW = grad_output.shape[-2:]
    empty = grad_output.size == 0 or self.size == 0
    small = not empty and _small.use_small(self.size // (H * W), OH * OW, H * W)
    kernel = (_small.product(_pool_grad, (H, W, params), (OH, OW), (H, W), shape[:-2], grad_output.dtype, dtype)
              if small else None)

    # The phase engine unless an axis' spread is the membership product's (decided per call:
    # the tests vary the rule's constants); the divisor map made once per geometry.
    scale = None if empty or small else _scale(H, W, OH, OW, params)
    phases = None if scale is None else (_phases(H, OH, params.kH, params.sH, params.pH),
                                         _phases(W, OW, params.kW, params.sW, params.pW))
    # Per axis, the window offsets reaching it, or None where the windows tile it (which
    # _spread copies, never taking the product).
    offsets = tuple(None if k == s and p == 0 and o * k == size else sum(map(len, _offsets(size, o, k, s, p)))
                    for size, o, k, s, p in ((H, OH, params.kH, params.sH, params.pH),
                                             (W, OW, params.kW, params.sW, params.pW)))

    def run(grad_output: object, *_: object) -> np.ndarray:
        check_allocation(nbytes)
        if empty:
            return np.zeros(shape, dtype=dtype)
        grad = host_array(API, "gradOutput", grad_output)
        if kernel is not None:
            return kernel(grad)
        # (The sources _spread would see: the gradient along W, its W-spread along H.)
        if phases is not None and not (
                offsets[0] is not None and _product_pays(H, OH, offsets[0], grad.size // OW * W)
                or offsets[1] is not None and _product_pays(W, OW, offsets[1], grad.size)):
            assert scale is not None
            out = np.empty(shape, dtype)
            _phase_grad(grad.reshape(-1, OH, OW), out.reshape(-1, H, W), scale, *phases, (params.sH, params.sW))
            return out
        return _pool_grad(grad, H, W, params).astype(dtype, copy=False)

    return plan(run, nbytes + grad_output.size * grad_output.itemsize), (grad_output,)


_numpy = NumpyOp(_prepare)


def _pool_grad(grad_output: np.ndarray, H: int, W: int, params: _Params) -> np.ndarray:
    """The gradient of ``(..., OH, OW)`` pooled planes over ``(..., H, W)`` inputs, in float32."""
    OH, OW = grad_output.shape[-2:]
    # A fresh float32 array: from here on the kernel writes only into arrays it allocated.
    grad = np.divide(grad_output, _scale(H, W, OH, OW, params), dtype=np.float32)
    grad = _spread(grad, grad.ndim - 1, W, params.kW, params.sW, params.pW)
    return _spread(grad, grad.ndim - 2, H, params.kH, params.sH, params.pH)


def _scale(H: int, W: int, OH: int, OW: int, params: _Params) -> np.float32 | np.ndarray:
    """What each gradient value is divided by (the forward's divisors, ``_numpy/pooling.py``)."""
    return avg_divisors((H, W), (OH, OW), (params.kH, params.kW), (params.sH, params.sW), (params.pH, params.pW),
                        params.count_include_pad, params.divisor_override)


def _outputs(grad_output: object, self: object, *_: object) -> list[Output]:
    """gradInput: self's shape and dtype. With an empty gradOutput CANN succeeds without writing
    anything: the zeros the gradient is are set here."""
    return [Output(shape_of(self if self is not None else grad_output), dtype_of(self),
                   zero=0 in shape_of(grad_output))]


def _shape_checks(grad_output: object, self: object, kernel_size: tuple[int, ...] | None,
                  stride: tuple[int, ...] | None, padding: tuple[int, ...] | None, ceil_mode: bool,
                  count_include_pad: bool, divisor: int, cube_math_type: int) -> None:
    """The checks the output's size depends on (it is only sized so when they pass)."""
    _check_geometry(shape_of(grad_output), shape_of(self if self is not None else grad_output),
                    dtype_of(self) == bfloat16, kernel_size, stride, padding,
                    ceil_mode, count_include_pad, divisor, cube_math_type)


#: The npu/sim path: the two-phase C call, the arguments converted by their declared C types
#: (a None divisorOverride is 0: none); the library checks them.
#: The outputs the function makes, and from what (their names in CANN's messages: ``dispatch``).
_MADE = {"gradInput": "self's shape and dtype"}

_aclnn = planned(TypedCall("AvgPool2dBackward", _outputs, checks=_shape_checks, none_is={"divisorOverride": 0}))


@documented
def avg_pool2d_backward(grad_output: ArrayLike | Tensor, self: ArrayLike | Tensor, kernel_size: int | Sequence[int],
                        stride: int | Sequence[int] | None, padding: int | Sequence[int], ceil_mode: bool,
                        count_include_pad: bool, divisor_override: int | None, cube_math_type: int = 0, *,
                        backend: str | None = None, stream: object = None) -> np.ndarray | Tensor:
    """Gradient of 2-D average pooling (``F.avg_pool2d``) with respect to its input: each
    gradient value is divided by its window's divisor and added to every input cell of the
    window (``aten.avg_pool2d_backward``).

    Mirrors ``aclnnAvgPool2dBackwardGetWorkspaceSize`` + ``aclnnAvgPool2dBackward``.

    Args:
        grad_output: gradOutput, ``(N, C, OH, OW)`` or ``(C, OH, OW)``; FLOAT, FLOAT16 or
            BFLOAT16, the same dtype and rank as ``self``, ``(OH, OW)`` the pooled size of
            ``self`` for these parameters.
        self: the pooling's input, ``(N, C, H, W)`` or ``(C, H, W)`` (only its shape and dtype
            are used).
        kernel_size: ``[k]``, ``[kH, kW]`` or one int; values > 0.
        stride: ``None`` or ``[]`` (= kernel_size), ``[s]``, ``[sH, sW]`` or one int; values > 0.
        padding: ``[p]``, ``[pH, pW]`` or one int; ``0 <= p <= k / 2`` per axis.
        ceil_mode: round the pooled size up (the last window must start inside the input or
            its left padding).
        count_include_pad: count padding cells in the divisor.
        divisor_override: ``None`` or 0 for the window's size, else the divisor of every
            window (may be negative); int64.
        cube_math_type: 0 KEEP_DTYPE, 1 ALLOW_FP32_DOWN_PRECISION, 2 USE_FP16 (not with
            BFLOAT16), 3 USE_HF32: a precision hint for the NPU's cube unit (the numpy backend
            always computes in FLOAT).
        {backend_and_stream}

    {tensor_arguments}

    Returns:
        gradInput: ``self``'s shape and dtype (zeros when a tensor is empty).

    Raises:
        AclnnError: 161001 if grad_output, self, kernel_size or padding is None; 161002 for a
            dtype, rank, length, value or pooled size outside the constraints above.
        TypeError: an argument of the wrong Python type.
    """
    result: np.ndarray | Tensor = dispatch(backend, _numpy, _aclnn, grad_output, self, repeated(kernel_size, 1), repeated(stride, 1),
                    repeated(padding, 1), ceil_mode, count_include_pad, divisor_override, cube_math_type,
                    stream=stream, made=_MADE)
    return result


# -- registration: what the tools know of this operator (ops/_registry.py) -------------------------

from typing import Any  # noqa: E402

from ._cases import OpCall, dims, pair, random_array  # noqa: E402
from ._registry import Operator, register  # noqa: E402


def _case(rng: np.random.Generator, shape: Sequence[int], dtype: np.dtype, kernel: int | Sequence[int] = 3,
          stride: int | Sequence[int] = 2, padding: int | Sequence[int] = 1, ceil_mode: bool = False,
          count_include_pad: bool = True, divisor_override: int = 0, cube_math_type: int = 0) -> OpCall:
    """Average pooling of an ``[N,] C, H, W`` self."""
    *lead, height, width = shape
    k, s, p = map(pair, (kernel, stride, padding))
    pooled = [_pooled_size(size, kk, ss, pp, ceil_mode) for size, kk, ss, pp in zip((height, width), k, s, p)]
    grad = random_array(rng, (*lead, *pooled), dtype)
    self = random_array(rng, shape, dtype)
    words = [f"k{dims(k)} s{dims(s)} p{dims(p)}", "ceil" if ceil_mode else "floor",
             "incl-pad" if count_include_pad else "excl-pad"]
    if divisor_override:
        words.append(f"divisor {divisor_override}")
    if cube_math_type:
        words.append(f"cubeMathType {cube_math_type}")
    return OpCall("avg_pool2d_backward", (grad, self, list(k), list(s), list(p), ceil_mode, count_include_pad,
                                          divisor_override, cube_math_type), case=" ".join(words))


def _torch(torch: Any, grad: Any, self: Any, kernel: Any, stride: Any, padding: Any, ceil_mode: bool,
           count_include_pad: bool, divisor: int | None, cube_math_type: int = 0) -> Any:
    return torch.ops.aten.avg_pool2d_backward(grad, self, kernel, stride, padding, ceil_mode, count_include_pad,
                                              divisor or None)


def _layer(n: int, c: int, h: int, w: int, k: int, s: int, p: int, ceil: bool, count_include_pad: bool) -> Any:
    def make(rng: np.random.Generator) -> tuple[Any, ...]:
        x = rng.standard_normal((n, c, h, w), dtype=np.float32)
        pooled = (n, c, _pooled_size(h, k, s, p, ceil), _pooled_size(w, k, s, p, ceil))
        return (rng.standard_normal(pooled, dtype=np.float32), x, [k, k], [s, s], [p, p], ceil, count_include_pad, 0)
    return make


def _fuzz(f: Any) -> list[Any]:
    n, c, h, w = f.small_int(1, 2), f.small_int(1, 3), f.small_int(2, 7), f.small_int(2, 7)
    k = f.small_int(1, min(h, w))
    s = f.small_int(1, 3)
    p = f.small_int(0, k // 2)
    oh, ow = (h + 2 * p - k) // s + 1, (w + 2 * p - k) // s + 1
    dt = f.pick(f.FLOATS)
    return [f.filled((n, c, oh, ow), dt), f.filled((n, c, h, w), dt), [k], [s], [p], False, f.chance(0.5),
            f.pick([None, 0, 3])]


def _c_arguments(args: list[Any], out_like: Any) -> list[Any]:
    *head, divisor = args[:8]
    return [*head, divisor or 0, args[8] if len(args) > 8 else 0, out_like(args[1].shape, args[1].dtype)]


OPERATOR = register(Operator(
    avg_pool2d_backward, "AvgPool2dBackward", header="aclnn_avgpool2d_backward.h", package="ops-nn",
    library="libopapi_nn.so", outputs=("gradInput",), case=_case,
    selftest=(((2, 3, 9, 10), _DTYPES, dict(kernel=(3, 2), stride=(2, 1), padding=(1, 1), ceil_mode=True,
                                            count_include_pad=False)),
              ((3, 8, 7), (FLOAT32,), dict(kernel=2, stride=2, padding=0, divisor_override=3, cube_math_type=1))),
    bench=((8, 64, 56, 56), dict(kernel=3, stride=2, padding=1, ceil_mode=False, count_include_pad=True,
                                 divisor_override=0, cube_math_type=0)),
    torch=_torch, memory_bound=True, fuzz=_fuzz, c_arguments=_c_arguments, dtypes=DTYPE_RULES, seed=True, shape_only=("self",),
    benchmarks=(("avg_pool2d k3 s2 p1 floor (8,64,112,112)", _layer(8, 64, 112, 112, 3, 2, 1, False, True)),
                ("avg_pool2d k3 s2 p1 ceil excl-pad (8,64,112,112)", _layer(8, 64, 112, 112, 3, 2, 1, True, False)),
                ("avg_pool2d k2 s2 (8,256,28,28)", _layer(8, 256, 28, 28, 2, 2, 0, False, True)),
                ("avg_pool2d tiny (1,1,4,4)", _layer(1, 1, 4, 4, 2, 2, 0, False, True)))))
