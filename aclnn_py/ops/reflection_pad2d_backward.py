"""aclnnReflectionPad2dBackwardGetWorkspaceSize / aclnnReflectionPad2dBackward: gradient of
reflection padding.

C header ``aclnnop/aclnn_pad2d_backward.h`` (shared with ReplicationPad2dBackward)::

    aclnnStatus aclnnReflectionPad2dBackwardGetWorkspaceSize(
        const aclTensor *gradOutput, const aclTensor *self, const aclIntArray *padding,
        aclTensor *gradInput, uint64_t *workspaceSize, aclOpExecutor **executor);
    aclnnStatus aclnnReflectionPad2dBackward(void *workspace, uint64_t workspaceSize,
                                             aclOpExecutor *executor, const aclrtStream stream);

Computes ``torch.ops.aten.reflection_pad2d_backward(gradOutput, self, padding)``, the gradient
of ``F.pad(self, padding, mode="reflect")``.  ``padding = [left, right, top, bottom]``.  Every
gradOutput element at padded position ``(y, x)`` is added to gradInput at its reflected source
``(r(y - top, H), r(x - left, W))`` with ``r(t, n) = -t if t < 0, 2*(n-1) - t if t >= n, else t``.
Doc example: gradOutput ``[[[1,1,1,1,1,1,1]]]``, self ``[[[1,1,1,1,1]]]``, padding
``[1,1,0,0]`` give ``[[[1,2,1,2,1]]]``.  FLOAT16 and BFLOAT16 are computed in FLOAT.

Constraints, in the order CANN checks them (each violation is 161002 unless noted):

1. gradOutput, self, padding are required (None: 161001).
2. gradOutput and self dtypes are each FLOAT, FLOAT16, BFLOAT16 (A2/A3), DOUBLE, COMPLEX64 or
   COMPLEX128, and equal (gradInput, made here, has self's dtype).  gradOutput, self and
   gradInput have the same format: the binding gives each tensor its rank's format (NCL, NCHW,
   ND, ...), so tensors of different ranks are reported here, before any shape check, as CANN
   reports them when the binding calls it.
3. self has rank 3 or 4; gradOutput has self's rank; padding has 4 elements, all >= 0 (the
   documented rule; CANN's current code only enforces it for BFLOAT16); ``left, right < W`` and
   ``top, bottom < H``; for BFLOAT16, ``top == bottom == 0`` or every pad <= 7;
   ``gradOutput.shape[-2:] == (H + top + bottom, W + left + right)``.
4. Empty tensors: 3-D self with H or W == 0, or 4-D self with C, H or W == 0, is rejected; an
   empty leading dim succeeds (empty result).

Deliberate deviation: CANN compares only gradOutput's last two dims with self's; the numpy
backend also requires the leading dims to agree (161002), as there is no other way to read them.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike

from .._dtypes import bfloat16, compute_dtype
from .._runtime.memory import check_allocation
from .._runtime.tensor import Tensor
from .._convert.executor import dtype_of, planned, shape_of
from .._convert.typed import Output, TypedCall
from .._numpy import small as _small
from ._registry import numpy_dtypes
from ._checks import FLOAT32, check, check_dtype, check_length, check_min, check_not_null, check_same_dtype, format_name, shape_str
from .._numpy.plans import NumpyOp, Prepared, plan
from ._dispatch import dispatch, documented
from ._pad2d import check_pads_below, padded_hw
from .._convert.values import host_array, int_array_arg, repeated, tensor_arg

API = "aclnnReflectionPad2dBackwardGetWorkspaceSize"

#: The dtypes each rule accepts: the one table of these checks (the simulator's are generated from it).
DTYPE_RULES = {"DTYPES": ("ACL_FLOAT", "ACL_FLOAT16", "ACL_BF16", "ACL_DOUBLE", "ACL_COMPLEX64", "ACL_COMPLEX128")}
DTYPES = numpy_dtypes(DTYPE_RULES["DTYPES"])

_BF16_MAX_PAD = 7


def _validate(grad_output: object, self: object, padding: object) -> tuple[np.ndarray, np.ndarray, tuple[int, ...]]:
    """Coerce and check the arguments in CANN's order.

    Returns ``(grad_output, self, padding)`` with ``padding`` a tuple of 4 ints.
    """
    grad_output = tensor_arg(API, "gradOutput", grad_output)
    self = tensor_arg(API, "self", self)
    padding = int_array_arg(API, "padding", padding)
    check_not_null(API, gradOutput=grad_output, self=self, padding=padding)
    assert grad_output is not None and self is not None and padding is not None  # (just checked)

    check_dtype(API, "gradOutput", grad_output, DTYPES)
    check_dtype(API, "self", self, DTYPES)
    check_same_dtype(API, "gradOutput", grad_output, "self", self)
    # gradInput has self's shape and each tensor the binding's format for its rank (ND in the
    # aclnn documentation's samples): CANN compares the three formats before any shape.
    formats = [format_name(grad_output.ndim), format_name(self.ndim), format_name(self.ndim)]
    check(API, formats[0] == formats[1],
          lambda: f"gradOutput, self and gradInput must have the same format, got {', '.join(formats)} "
          f"(shapes {shape_str(grad_output.shape)}, {shape_str(self.shape)}, {shape_str(self.shape)})")

    _check_geometry(grad_output.shape, self.shape, self.dtype == bfloat16, padding)
    return grad_output, self, padding


@functools.lru_cache(maxsize=1024)
def _check_geometry(go_shape: tuple[int, ...], self_shape: tuple[int, ...], is_bfloat16: bool,
                    padding: tuple[int, ...]) -> None:
    """The checks that depend on shapes and padding alone (cached: repeated calls with the
    same geometry skip them)."""
    check(API, len(self_shape) in (3, 4), lambda: f"self must be 3-D or 4-D, got {len(self_shape)}-D shape {shape_str(self_shape)}")
    check(API, len(go_shape) == len(self_shape),
          lambda: f"gradOutput must have self's rank {len(self_shape)}, got {len(go_shape)}-D shape "
          f"{shape_str(go_shape)}")
    check_length(API, "padding", padding, 4)
    check_min(API, "padding", padding, 0, strict=False)
    check_pads_below(API, padding, self_shape)
    if is_bfloat16:
        check(API, padding[2] == padding[3] == 0 or max(padding) <= _BF16_MAX_PAD,
              lambda: f"for BFLOAT16 with top or bottom padding every padding value must be <= {_BF16_MAX_PAD}, "
              f"got padding = {shape_str(padding)}")
    expected = padded_hw(self_shape, padding)
    check(API, go_shape[-2:] == expected,
          lambda: f"gradOutput last two dims must be [H + top + bottom, W + left + right] = {shape_str(expected)}, "
          f"got gradOutput {shape_str(go_shape)} (self {shape_str(self_shape)}, padding = {shape_str(padding)})")
    check(API, go_shape[:-2] == self_shape[:-2],
          lambda: f"gradOutput leading dims must equal self's, got gradOutput {shape_str(go_shape)} and self "
          f"{shape_str(self_shape)} (CANN does not compare them)")

    if 0 in self_shape:
        check(API, 0 not in self_shape[1:],
              lambda: f"an empty self may only have its first dim 0 (N of NCHW, C of CHW), got self "
              f"{shape_str(self_shape)}")


def _axis_parts(pad_before: int, size: int, pad_after: int) -> list[tuple[slice, slice, bool]]:
    """How one padded axis folds back onto ``size`` input positions.

    Each part is ``(gradOutput slice, gradInput slice, reversed)``: the interior first, then each
    border strip, which lands mirrored one step inside the edge it was reflected at.
    """
    parts = [(slice(pad_before, pad_before + size), slice(0, size), False)]
    if pad_before:
        parts.append((slice(0, pad_before), slice(1, pad_before + 1), True))
    if pad_after:
        parts.append((slice(pad_before + size, pad_before + size + pad_after),
                      slice(size - 1 - pad_after, size - 1), True))
    return parts


def _core(pad_before: int, size: int, pad_after: int) -> tuple[int, int]:
    """The input positions ``[lo, hi)`` of one axis that no border strip reaches (maybe none)."""
    lo = min(size, pad_before + 1) if pad_before else 0
    hi = size - 1 - pad_after if pad_after else size
    return lo, max(lo, hi)


def _clip(part: tuple[slice, slice, bool], lo: int, hi: int) -> tuple[slice, slice, bool] | None:
    """``part`` restricted to the gradInput positions ``[lo, hi)``, its target relative to ``lo``."""
    source, target, flipped = part
    start, stop = max(target.start, lo), min(target.stop, hi)
    if start >= stop:
        return None
    if flipped:
        source = slice(source.stop - (stop - target.start), source.stop - (start - target.start))
    else:
        source = slice(source.start + (start - target.start), source.start + (stop - target.start))
    return source, slice(start - lo, stop - lo), flipped


_SMALL = 1 << 15  # gradOutput elements up to which the plain kernel is used


def _prepare(grad_output: object, self: object, padding: object) -> Prepared:
    """The numpy path: validate, then fold the borders back (one matrix product when tiny)."""
    grad_output, self, padding = _validate(grad_output, self, padding)
    shape, dtype, nbytes = self.shape, self.dtype, self.size * self.itemsize
    in_plane, out_plane = grad_output.shape[-2:], shape[-2:]
    small = self.size and _small.use_small(self.size // (shape[-2] * shape[-1]), in_plane[0] * in_plane[1],
                                           shape[-2] * shape[-1])
    kernel = (_small.product(_fold_planes, padding, in_plane, out_plane, shape[:-2], grad_output.dtype, dtype)
              if small else None)

    def run(grad_output: object, *_: object) -> np.ndarray:
        check_allocation(nbytes)
        grad = host_array(API, "gradOutput", grad_output)
        if kernel is not None:
            return kernel(grad)
        return _fold(grad, shape, dtype, padding)

    return plan(run, nbytes + grad_output.size * grad_output.itemsize), (grad_output,)


_numpy = NumpyOp(_prepare)


def _fold_planes(planes: np.ndarray, left: int, right: int, top: int, bottom: int) -> np.ndarray:
    """``_fold`` of a stack of float32 planes (the small path builds its matrix with it)."""
    shape = (planes.shape[0], planes.shape[1] - top - bottom, planes.shape[2] - left - right)
    return _fold(planes, shape, planes.dtype, (left, right, top, bottom))


def _fold(grad_output: np.ndarray, shape: tuple[int, ...], dtype: np.dtype, padding: tuple[int, ...]) -> np.ndarray:
    """Copy the interior, then add the mirrored border strips.

    Only the bands along the edges that the strips reach need sums; the core between them is a
    plain copy, so FLOAT16/BFLOAT16 are widened to FLOAT in the bands alone.
    """
    left, right, top, bottom = padding
    height, width = shape[-2:]
    grad_input = np.empty(shape, dtype=dtype)
    if grad_input.size == 0:
        return grad_input
    rows, cols = _axis_parts(top, height, bottom), _axis_parts(left, width, right)
    pieces = itertools.islice(itertools.product(rows, cols), 1, None)  # all but the interior
    if grad_output.size <= _SMALL:
        # Small inputs: fewer NumPy calls beat touching fewer elements. Accumulate the whole
        # result in the compute dtype and add each of the eight border pieces once.
        sums = grad_output[..., rows[0][0], cols[0][0]].astype(compute_dtype(dtype))
        for (rows_from, rows_to, rows_flip), (cols_from, cols_to, cols_flip) in pieces:
            source = grad_output[..., rows_from, cols_from]
            sums[..., rows_to, cols_to] += source[..., ::-1 if rows_flip else 1, ::-1 if cols_flip else 1]
        return sums.astype(dtype, copy=False)
    np.copyto(grad_input, grad_output[..., rows[0][0], cols[0][0]])

    (row_lo, row_hi), (col_lo, col_hi) = _core(top, height, bottom), _core(left, width, right)
    # Top and bottom bands span the full width; left and right ones fill the core rows.
    bands = [((0, row_lo), (0, width)), ((row_hi, height), (0, width)),
             ((row_lo, row_hi), (0, col_lo)), ((row_lo, row_hi), (col_hi, width))]
    accumulate = compute_dtype(dtype)
    for (r0, r1), (c0, c1) in bands:
        if r0 == r1 or c0 == c1:
            continue
        band = grad_input[..., r0:r1, c0:c1]
        sums = band if accumulate == dtype else band.astype(accumulate)
        # Every piece but the first, the interior, which the band already holds.
        for row_part, col_part in itertools.islice(itertools.product(rows, cols), 1, None):
            row_clip, col_clip = _clip(row_part, r0, r1), _clip(col_part, c0, c1)
            if row_clip is None or col_clip is None:
                continue
            (rows_from, rows_to, rows_flip), (cols_from, cols_to, cols_flip) = row_clip, col_clip
            source = grad_output[..., rows_from, cols_from]
            source = source[..., ::-1 if rows_flip else 1, ::-1 if cols_flip else 1]
            target = sums[..., rows_to, cols_to]
            np.add(target, source, out=target)
        if sums is not band:
            band[...] = sums
    return grad_input


def _outputs(grad_output: object, self: object, padding: tuple[int, ...] | None) -> list[Output]:
    """gradInput: self's shape and dtype."""
    return [Output(shape_of(self if self is not None else grad_output), dtype_of(self))]


def _shape_checks(grad_output: object, self: object, padding: tuple[int, ...] | None) -> None:
    """The checks the output's size depends on (it is only sized so when they pass)."""
    _check_geometry(shape_of(grad_output), shape_of(self), dtype_of(self) == bfloat16, padding)


#: The npu/sim path: the two-phase C call, the arguments converted by their declared C types;
#: the library checks them.
#: The outputs the function makes, and from what (their names in CANN's messages: ``dispatch``).
_MADE = {"gradInput": "self's shape and dtype"}

_aclnn = planned(TypedCall("ReflectionPad2dBackward", _outputs, checks=_shape_checks))


@documented
def reflection_pad2d_backward(grad_output: ArrayLike | Tensor, self: ArrayLike | Tensor,
                              padding: int | Sequence[int], *, backend: str | None = None, stream: object = None) -> np.ndarray | Tensor:
    """Gradient of reflection padding (``F.pad(self, padding, mode="reflect")``): each element
    of a mirrored border of ``grad_output`` is added back to the element it mirrors.

    Mirrors ``aclnnReflectionPad2dBackwardGetWorkspaceSize`` + ``aclnnReflectionPad2dBackward``.

    Args:
        grad_output: gradOutput, ``(N, C, H + top + bottom, W + left + right)`` or the 3-D
            ``(C, ...)`` form; FLOAT, FLOAT16, BFLOAT16, DOUBLE, COMPLEX64 or COMPLEX128, the
            same dtype and rank as ``self``.
        self: the padding's input, ``(N, C, H, W)`` or ``(C, H, W)`` with ``H, W > 0`` (and
            ``C > 0`` when 4-D); only its shape and dtype are used.
        padding: ``[left, right, top, bottom]`` or one int for all four; values >= 0,
            ``left, right < W`` and ``top, bottom < H``; for BFLOAT16 ``top == bottom == 0``
            or every value <= 7.
        {backend_and_stream}

    {tensor_arguments}

    Returns:
        gradInput: ``self``'s shape and dtype (FLOAT16 and BFLOAT16 accumulate in FLOAT).

    Raises:
        AclnnError: 161001 if an argument is None; 161002 for a dtype, rank, shape or padding
            outside the constraints above.
        TypeError: an argument of the wrong Python type.
    """
    result: np.ndarray | Tensor = dispatch(backend, _numpy, _aclnn, grad_output, self, repeated(padding, 4),
                    stream=stream, made=_MADE)
    return result


# -- registration: what the tools know of this operator (ops/_registry.py) -------------------------

from typing import Any  # noqa: E402

from ._cases import OpCall, random_array  # noqa: E402
from ._registry import Operator, register  # noqa: E402


def _case(rng: np.random.Generator, shape: Sequence[int], dtype: np.dtype,
          padding: Sequence[int] = (1, 1, 1, 1)) -> OpCall:
    """``padding = [left, right, top, bottom]`` around an ``[N,] C, H, W`` self."""
    *lead, height, width = shape
    left, right, top, bottom = padding
    grad = random_array(rng, (*lead, height + top + bottom, width + left + right), dtype)
    self = random_array(rng, shape, dtype)
    return OpCall("reflection_pad2d_backward", (grad, self, list(padding)), case=f"pad {list(padding)}")


def _torch(torch: Any, grad: Any, self: Any, padding: Any) -> Any:
    return torch.ops.aten.reflection_pad2d_backward(grad, self, padding)


def _layer(n: int, c: int, h: int, w: int, pad: int) -> Any:
    def make(rng: np.random.Generator) -> tuple[Any, ...]:
        x = rng.standard_normal((n, c, h, w), dtype=np.float32)
        return (rng.standard_normal((n, c, h + 2 * pad, w + 2 * pad), dtype=np.float32), x, [pad] * 4)
    return make


def _fuzz(f: Any) -> list[Any]:
    n, c, h, w = f.small_int(1, 2), f.small_int(1, 3), f.small_int(2, 6), f.small_int(2, 6)
    pads = [f.small_int(0, w - 1), f.small_int(0, w - 1), f.small_int(0, h - 1), f.small_int(0, h - 1)]
    dt = f.pick(f.FLOATS)
    return [f.filled((n, c, h + pads[2] + pads[3], w + pads[0] + pads[1]), dt), f.filled((n, c, h, w), dt), pads]


def _c_arguments(args: list[Any], out_like: Any) -> list[Any]:
    return [*args, out_like(args[1].shape, args[1].dtype)]


OPERATOR = register(Operator(
    reflection_pad2d_backward, "ReflectionPad2dBackward", header="aclnn_pad2d_backward.h", package="ops-math",
    library="libopapi_math.so", outputs=("gradInput",), case=_case,
    selftest=(((2, 3, 6, 7), DTYPES, dict(padding=(2, 1, 3, 1))),
              ((3, 5, 4), (FLOAT32,), dict(padding=(3, 3, 0, 2)))),
    bench=((8, 64, 56, 56), dict(padding=(3, 3, 3, 3))),
    torch=_torch, memory_bound=True, fuzz=_fuzz, c_arguments=_c_arguments, dtypes=DTYPE_RULES, seed=True, overhead_probe=True,
    shape_only=("self",),
    benchmarks=(("reflection_pad2d p3 (8,3,224,224)", _layer(8, 3, 224, 224, 3)),
                ("reflection_pad2d p1 (8,64,224,224)", _layer(8, 64, 224, 224, 1)),
                ("reflection_pad2d tiny (1,1,4,4)", _layer(1, 1, 4, 4, 1)))))
