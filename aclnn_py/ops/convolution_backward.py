"""aclnnConvolutionBackwardGetWorkspaceSize / aclnnConvolutionBackward: the gradients of a 1-D,
2-D or 3-D (transposed) convolution.

C header ``aclnnop/aclnn_convolution_backward.h``::

    aclnnStatus aclnnConvolutionBackwardGetWorkspaceSize(
        const aclTensor *gradOutput, const aclTensor *input, const aclTensor *weight,
        const aclIntArray *biasSizes, const aclIntArray *stride, const aclIntArray *padding,
        const aclIntArray *dilation, bool transposed, const aclIntArray *outputPadding,
        int groups, const aclBoolArray *outputMask, int8_t cubeMathType,
        aclTensor *gradInput, aclTensor *gradWeight, aclTensor *gradBias,
        uint64_t *workspaceSize, aclOpExecutor **executor);
    aclnnStatus aclnnConvolutionBackward(void *workspace, uint64_t workspaceSize,
                                         aclOpExecutor *executor, aclrtStream stream);

Computes ``(gradInput, gradWeight, gradBias) = torch.ops.aten.convolution_backward(gradOutput,
input, weight, biasSizes, stride, padding, dilation, transposed, outputPadding, groups,
outputMask)``; a gradient whose outputMask bit is False is not computed (returned as None).

* ``transposed=False``: ``weight (Cout, Cin/groups, *k)``, ``gradOutput (N, Cout, *out)`` with
  ``out = (in + padLo + padHi - dilation*(k-1) - 1) // stride + 1``.
* ``transposed=True``: ``input (N, Cin, *in)`` is the transposed convolution's input,
  ``weight (Cin, Cout/groups, *k)``, ``gradOutput (N, Cout, *out)`` with
  ``out = (in-1)*stride - padLo - padHi + dilation*(k-1) + outputPadding + 1``.
* ``gradBias[c] = sum over N and space of gradOutput[:, c]``; length ``biasSizes[0]`` (= Cout).
* Padding and outputPadding have one value per spatial dimension (both sides alike), or for
  2-D four values ``[top, bottom, left, right]`` (asymmetric padding).  A 4-element
  outputPadding follows the same layout; output padding only ever extends the bottom/right edge
  of a transposed convolution's output, so its top and left entries must be 0 (this binding's
  definition: CANN documents no meaning for them) and ``[0, h, 0, w]`` equals ``[h, w]``.

How it is computed (numpy backend): in float32 (float16/bfloat16 inputs are widened, results
rounded once), through one ordinary convolution X -> Y (``conv.LoweredConv``): X is
``input`` and Y is ``gradOutput`` normally, and the other way round when transposed (a
transposed convolution is the adjoint of a convolution).  gradWeight is that convolution's
weight gradient; gradInput is its input gradient (normal) or its forward product applied to
gradOutput (transposed); gradBias is a sum.  The kernels turn the products into matrix
products on shifted slices of a flat buffer, which OpenBLAS runs on every core, one lowering
feeding both gradients (depthwise convolutions: batched matrix-vector products over each
block's im2col instead; 3x3 and 3x3x3 stride-1 layers with many channels: Winograd's minimal
filtering, 2.25x and 3.375x fewer multiply-adds).  ``conv/__init__.py`` lists the engines and how one is chosen.

Constraints, in the order CANN (Atlas A2/A3) checks them; each violation is 161002 unless noted:

1. gradOutput, input, weight, stride, padding, dilation, outputPadding and outputMask are
   required (None: 161001); outputMask must have exactly 3 elements (161001, as CANN reports
   it).  biasSizes may be None.
2. gradOutput, input and weight dtypes are FLOAT, FLOAT16 or BFLOAT16.  They may differ: CANN
   computes in the promoted type; here every product is float32 either way.  The results have
   the dtypes CANN's documentation prescribes: gradInput that of input, gradWeight that of
   weight, gradBias that of gradOutput.
3. gradOutput, input and weight are 3-D (NCL), 4-D (NCHW) or 5-D (NCDHW).
4. stride >= 1, padding >= 0, dilation >= 1; transposed: outputPadding >= 0 and, as documented,
   outputPadding < stride per dimension (CANN's code checks the latter only for 3-D, where it
   also accepts outputPadding < dilation); not transposed: outputPadding all 0; 1 <= groups and,
   as documented, groups <= 65535.
5. cubeMathType is 0 (KEEP_DTYPE), 1 (ALLOW_FP32_DOWN_PRECISION), 2 (USE_FP16) or 3
   (USE_HF32).  A2/A3 accept every value with every dtype.  It changes only the precision of
   the NPU's cube unit; this backend always computes in float32.
6. If input or weight is empty, checks 7-9 are replaced by rule 10.
7. gradOutput, input and weight have the same rank; gradOutput is not empty; if outputMask[2]
   and biasSizes is given, biasSizes == [gradOutput.shape[1]] (the gradBias shape CANN checks);
   stride and dilation have rank-2 elements; padding and outputPadding rank-2, or 4 for 2-D.
8. With (X, Y) = (input, gradOutput), or (gradOutput, input) when transposed:
   Y.shape[1] == weight.shape[0]; X.shape[1] is divisible by weight.shape[1] and
   X.shape[1] / weight.shape[1] == groups; depthwise (X.shape[1] == groups): Y.shape[1] is a
   multiple of groups.  Added here because the convolution is undefined otherwise (CANN checks it
   only for empty tensors): weight.shape[0] is divisible by groups.
9. Added here: gradOutput.shape[0] == input.shape[0] (the batch).  Per spatial dimension, for
   every rank (CANN's code skips 1-D/2-D non-transposed, its documentation does not):
   ``span = X_d - outputPadding_d + padLo_d + padHi_d - ((k_d-1)*dilation_d + 1) >= 0`` and
   ``Y_d == span // stride_d + 1``.  Non-transposed, this is the output-size formula above;
   transposed, it is CANN's form of it, which accepts a gradOutput up to stride-1 elements
   longer than the formula (those positions receive nothing and get no gradient).  For 2-D
   transposed with 4-element padding CANN's code reads padding[0] for H and padding[1] for W;
   this check uses top+bottom and left+right.
10. Empty input or weight: if outputMask[2], biasSizes is given, has 1 element and equals
    gradOutput.shape[1] (transposed: weight.shape[1] * groups); if outputMask[0], input.shape[0]
    or input.shape[1] is 0; the ranks are equal (added here: the rules below need it); the
    length rules of 7; weight.shape[0] is divisible by groups; unless transposed with
    input.shape[0] == 0, X.shape[1] == weight.shape[1] * groups whenever either is non-zero;
    transposed: weight.shape[0] > 0 and == input.shape[1]; otherwise per spatial dimension
    ``input_d + padLo_d + padHi_d >= (k_d-1)*dilation_d + 1``.  The requested gradients are zeros.

Arithmetic on the parameters is exact; a value that leaves int64 is 161002 (CANN would wrap).
Not enforced, as CANN's parameter check does not enforce them either (the NPU kernels may
still refuse them later): the documented A2/A3 ranges for non-transposed kernels, strides,
padding and dilation (e.g. kernel H/W <= 255).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NamedTuple, TypeAlias

import numpy as np
from numpy.typing import ArrayLike

from .._errors import param_invalid, param_nullptr
from .._runtime.memory import check_allocation
from .._runtime.tensor import Tensor
from .._convert.executor import dtype_of, planned, shape_of
from .._convert.typed import Output, TypedCall
from .._convert.values import c_int
from ._checks import FLOAT32, check_dtype, check_min, check_not_null, shape_str
from .._convert.values import INT64_MAX, INT64_MIN, bool_arg, bool_array_arg, host_array, int_array_arg, repeated, spatial_dims, tensor_arg
from .._numpy.workers import MIN_PARALLEL_ELEMENTS, in_parallel
from .._numpy.plans import NumpyOp, Prepared, plan
from ._conv import check_room, fits, output_size, reach as conv_reach, sides, transposed_output_size
from ._dispatch import dispatch, documented
from ._registry import numpy_dtypes
from .._numpy.conv import lowered

if TYPE_CHECKING:
    pass

API = "aclnnConvolutionBackwardGetWorkspaceSize"

#: The dtypes each rule accepts: the one table of these checks (the simulator's are generated from it).
DTYPE_RULES = {"DTYPES": ("ACL_FLOAT", "ACL_FLOAT16", "ACL_BF16")}
DTYPES = numpy_dtypes(DTYPE_RULES["DTYPES"])
FORMATS = {3: "NCL", 4: "NCHW", 5: "NCDHW"}
MAX_GROUPS = 65535
CUBE_MATH_TYPES = {0: "KEEP_DTYPE", 1: "ALLOW_FP32_DOWN_PRECISION", 2: "USE_FP16", 3: "USE_HF32"}


class _Params(NamedTuple):
    """Validated arguments, normalised to one value per spatial dimension."""

    grad_output: np.ndarray
    input: np.ndarray
    weight: np.ndarray
    transposed: bool
    groups: int
    output_mask: tuple[bool, bool, bool]
    stride: tuple[int, ...]
    dilation: tuple[int, ...]
    pad_lo: tuple[int, ...]
    pad_hi: tuple[int, ...]
    bias_length: int
    empty: bool


def _check_lengths(rank: int, stride: tuple[int, ...], padding: tuple[int, ...], dilation: tuple[int, ...], output_padding: tuple[int, ...]) -> None:
    """Check 7's array lengths: one per spatial dimension, or 4 for 2-D padding/outputPadding."""
    spatial = rank - 2
    for i, (name, values) in enumerate((("stride", stride), ("dilation", dilation), ("padding", padding),
                                        ("outputPadding", output_padding))):
        if len(values) != spatial and not (i >= 2 and rank == 4 and len(values) == 4):
            also = " (or 4)" if i >= 2 and rank == 4 else ""
            raise param_invalid(API, f"{name} must have {spatial} element{'s' if spatial > 1 else ''}{also} for a "
                                     f"{rank}-D input, got {shape_str(values)}")


def _validate(grad_output: object, input: object, weight: object, bias_sizes: object, stride: object, padding: object,
              dilation: object, transposed: object, output_padding: object, groups: object, output_mask: object,
              cube_math_type: object) -> _Params:
    """Coerce and check the arguments in CANN's order (module docstring, checks 1-10)."""
    # 1. Python types (TypeError) and C ranges, in the order the binding converts them for the
    #    C call, then required arguments (161001, in CANN's order; biasSizes may be None).
    transposed = bool_arg(API, "transposed", transposed)
    groups = c_int(API, "groups", groups, 32)
    cube_math_type = c_int(API, "cubeMathType", cube_math_type, 8)
    grad_output = tensor_arg(API, "gradOutput", grad_output)
    input = tensor_arg(API, "input", input)
    weight = tensor_arg(API, "weight", weight)
    bias_sizes = int_array_arg(API, "biasSizes", bias_sizes)
    stride = int_array_arg(API, "stride", stride)
    padding = int_array_arg(API, "padding", padding)
    dilation = int_array_arg(API, "dilation", dilation)
    output_padding = int_array_arg(API, "outputPadding", output_padding)
    output_mask = bool_array_arg(API, "outputMask", output_mask)
    check_not_null(API, gradOutput=grad_output, input=input, weight=weight, stride=stride, padding=padding,
                   dilation=dilation, outputPadding=output_padding, outputMask=output_mask)
    assert grad_output is not None and input is not None and weight is not None and stride is not None  # (checked)
    assert padding is not None and dilation is not None and output_padding is not None and output_mask is not None
    if len(output_mask) != 3:
        raise param_nullptr(API, f"outputMask must have 3 elements (gradInput, gradWeight, gradBias), "
                                 f"got {len(output_mask)}")

    return _check(grad_output, input, weight, bias_sizes, stride, padding, dilation, transposed,
                  output_padding, groups, output_mask, cube_math_type)


def _check_cached(grad_output: np.ndarray, input: np.ndarray, weight: np.ndarray, bias_sizes: tuple[int, ...] | None, stride: tuple[int, ...], padding: tuple[int, ...],
                  dilation: tuple[int, ...], transposed: bool, output_padding: tuple[int, ...], groups: int,
                  output_mask: tuple[bool, bool, bool], cube_math_type: int) -> _Params:
    """``_check`` on coerced arguments (the tensors: anything with shape, ndim, size and dtype),
    for the npu/sim path's output sizes (the numpy path has its plans: ``_prepare``)."""
    # Checks 2-10 depend on shapes, dtypes and the coerced parameters alone: a repeated call
    # with the same ones skips them (a tiny convolution spent ~10 us here).
    key = (grad_output.shape, grad_output.dtype, input.shape, input.dtype, weight.shape, weight.dtype,
           bias_sizes, stride, padding, dilation, transposed, output_padding, groups, output_mask, cube_math_type)
    known = _VALIDATED.get(key)
    if known is not None:
        return _Params(grad_output, input, weight, *known)
    params = _check(grad_output, input, weight, bias_sizes, stride, padding, dilation, transposed,
                    output_padding, groups, output_mask, cube_math_type)
    if len(_VALIDATED) >= _MAX_VALIDATED:
        _VALIDATED.clear()
    _VALIDATED[key] = params[3:]
    return params


_VALIDATED: dict[tuple[object, ...], tuple[Any, ...]] = {}  # the key's parts -> _Params[3:]
_MAX_VALIDATED = 1024


def _check(grad_output: np.ndarray, input: np.ndarray, weight: np.ndarray, bias_sizes: tuple[int, ...] | None, stride: tuple[int, ...], padding: tuple[int, ...],
           dilation: tuple[int, ...], transposed: bool, output_padding: tuple[int, ...], groups: int, output_mask: tuple[bool, bool, bool],
           cube_math_type: int) -> _Params:
    """Checks 2-10 on coerced arguments."""
    tensors = (("gradOutput", grad_output), ("input", input), ("weight", weight))

    # 2. dtypes.
    for name, tensor in tensors:
        check_dtype(API, name, tensor, DTYPES)

    # 3. Formats: the rank decides NCL / NCHW / NCDHW.
    for name, tensor in tensors:
        if tensor.ndim not in FORMATS:
            raise param_invalid(API, f"{name} must be 3-D (NCL), 4-D (NCHW) or 5-D (NCDHW), "
                                     f"got {tensor.ndim}-D shape {shape_str(tensor.shape)}")

    # 4. Parameter values.
    check_min(API, "stride", stride, 1, strict=False)
    check_min(API, "padding", padding, 0, strict=False)
    check_min(API, "dilation", dilation, 1, strict=False)
    if transposed:
        check_min(API, "outputPadding", output_padding, 0, strict=False)
        if len(output_padding) == 4 and len(stride) == 2:
            if output_padding[0] or output_padding[2]:
                raise param_invalid(API, f"outputPadding [top, bottom, left, right] may only extend the bottom "
                                         f"and right edges: top and left must be 0, got {shape_str(output_padding)}")
            ends: tuple[int, ...] = (output_padding[1], output_padding[3])
        else:
            ends = output_padding
        # Arrays of the wrong length are reported by check 7.
        if len(ends) == len(stride) and any(p >= s for p, s in zip(ends, stride)):
            raise param_invalid(API, f"when transposed, outputPadding must be < stride in every dimension, "
                                     f"got outputPadding = {shape_str(output_padding)}, stride = {shape_str(stride)}")
    elif any(output_padding):
        raise param_invalid(API, f"when not transposed, outputPadding must be all 0, got {shape_str(output_padding)}")
    if not 1 <= groups <= MAX_GROUPS:
        raise param_invalid(API, f"groups must be in [1, {MAX_GROUPS}], got {groups}")

    # 5. cubeMathType.
    if cube_math_type not in CUBE_MATH_TYPES:
        names = [f"{v} ({n})" for v, n in CUBE_MATH_TYPES.items()]
        raise param_invalid(API, f"cubeMathType must be {', '.join(names[:-1])} or {names[-1]}, got {cube_math_type}")

    # 6. Empty input or weight: rule 10 instead of 7-9.
    if input.size == 0 or weight.size == 0:
        return _validate_empty(grad_output, input, weight, bias_sizes, stride, padding, dilation,
                               transposed, output_padding, groups, output_mask)

    # 7. Shapes and array lengths.
    rank = input.ndim
    _check_ranks(grad_output, input, weight)
    if grad_output.size == 0:
        raise param_invalid(API, f"gradOutput and weight must not be empty, got {shape_str(grad_output.shape)} and "
                                 f"{shape_str(weight.shape)}")
    if output_mask[2] and bias_sizes is not None and bias_sizes != (grad_output.shape[1],):
        raise param_invalid(API, f"biasSizes must be [gradOutput.shape[1]] = [{grad_output.shape[1]}] "
                                 f"(the shape of gradBias), got {shape_str(bias_sizes)}")
    _check_lengths(rank, stride, padding, dilation, output_padding)

    # 8. Channels and groups; (X, Y) are the lowered convolution's input and output.
    if transposed:
        (x_name, x), (y_name, y) = ("gradOutput", grad_output), ("input", input)
    else:
        (x_name, x), (y_name, y) = ("input", input), ("gradOutput", grad_output)
    x_channels, y_channels = x.shape[1], y.shape[1]
    w_out, w_in = weight.shape[:2]
    if y_channels != w_out:
        raise param_invalid(API, f"{y_name}.shape[1] = {y_channels} must equal weight.shape[0] = {w_out}")
    if w_in == 0 or x_channels % w_in or x_channels // w_in != groups:
        raise param_invalid(API, f"{x_name}.shape[1] = {x_channels} must equal weight.shape[1] * groups = "
                                 f"{w_in} * {groups}")
    if x_channels == groups and (y_channels < groups or y_channels % groups):
        raise param_invalid(API, f"depthwise ({x_name}.shape[1] == groups = {groups}): "
                                 f"{y_name}.shape[1] = {y_channels} must be a multiple of groups")
    if w_out % groups:
        raise param_invalid(API, f"weight.shape[0] = {w_out} must be divisible by groups = {groups}")

    # 9. Batch and spatial sizes.
    if grad_output.shape[0] != input.shape[0]:
        raise param_invalid(API, f"gradOutput.shape[0] = {grad_output.shape[0]} must equal input.shape[0] = "
                                 f"{input.shape[0]}")
    spatial = rank - 2
    pad_lo, pad_hi = sides(padding, spatial)
    extra = sides(output_padding, spatial)[1] if transposed else (0,) * spatial
    for d in range(spatial):
        size, out, k = input.shape[2 + d], grad_output.shape[2 + d], weight.shape[2 + d]
        total = min(pad_lo[d] + pad_hi[d], INT64_MAX)  # the simulator saturates this sum
        reach = conv_reach(k, dilation[d])
        if transposed:
            # CANN's form: with X = gradOutput, room = X - outputPadding + padding - reach >= 0 and
            # input == room / stride + 1 (a gradOutput up to stride - 1 longer is accepted).
            room = out - extra[d] + total - reach
            if not (reach <= INT64_MAX and fits(out - extra[d], out - extra[d] + total, room)) or room < 0 \
                    or size != room // stride[d] + 1:
                expected = transposed_output_size(size, k, stride[d], dilation[d], total, extra[d])
                raise param_invalid(API, f"transposed: gradOutput spatial dim {d} = {out} does not fit input spatial "
                                         f"dim {size}: gradOutput should be (input - 1) * stride - padding + dilation "
                                         f"* (kernel - 1) + outputPadding + 1 = {expected if fits(expected) else -1} "
                                         f"(input {shape_str(input.shape)}, weight {shape_str(weight.shape)}, "
                                         f"stride = {shape_str(stride)}, padding = {shape_str(padding)}, dilation = "
                                         f"{shape_str(dilation)}, outputPadding = {shape_str(output_padding)})")
            continue
        check_room(API, d, size, total, k, input.shape, weight.shape, padding, dilation)
        expected = output_size(size, k, stride[d], dilation[d], total)
        if out != expected:
            raise param_invalid(API, f"gradOutput spatial dim {d} = {out} must be (in + padding - (kernel - 1) * "
                                     f"dilation - 1) / stride + 1 = {expected} (input {shape_str(input.shape)}, "
                                     f"weight {shape_str(weight.shape)}, stride = {shape_str(stride)}, padding = "
                                     f"{shape_str(padding)}, dilation = {shape_str(dilation)})")

    return _Params(grad_output, input, weight, transposed, groups, output_mask, stride, dilation,
                   pad_lo, pad_hi, grad_output.shape[1], False)


def _check_ranks(grad_output: np.ndarray, input: np.ndarray, weight: np.ndarray) -> None:
    if not grad_output.ndim == input.ndim == weight.ndim:
        raise param_invalid(API, f"gradOutput, input and weight must have the same rank, got "
                                 f"{shape_str(grad_output.shape)}, {shape_str(input.shape)}, {shape_str(weight.shape)}")


def _validate_empty(grad_output: np.ndarray, input: np.ndarray, weight: np.ndarray, bias_sizes: tuple[int, ...] | None, stride: tuple[int, ...], padding: tuple[int, ...],
                    dilation: tuple[int, ...], transposed: bool, output_padding: tuple[int, ...], groups: int,
                    output_mask: tuple[bool, bool, bool]) -> _Params:
    """Check 10: input or weight is empty; the requested gradients will be zeros."""
    bias_length = 0
    if output_mask[2]:
        if bias_sizes is None:
            raise param_invalid(API, "biasSizes must be given when outputMask[2] is True and input or weight is "
                                     "empty")
        if len(bias_sizes) != 1:
            raise param_invalid(API, f"biasSizes must have 1 element, got {shape_str(bias_sizes)}")
        if transposed:
            bias_length, rule = weight.shape[1] * groups, "weight.shape[1] * groups"
        else:
            bias_length, rule = grad_output.shape[1], "gradOutput.shape[1]"
        if bias_sizes[0] != bias_length:
            raise param_invalid(API, f"biasSizes must be [{rule}] = [{bias_length}], got {shape_str(bias_sizes)}")
    if output_mask[0] and input.shape[0] != 0 and input.shape[1] != 0:
        raise param_invalid(API, f"with an empty weight or input and outputMask[0], input N or C must be 0, got "
                                 f"input {shape_str(input.shape)}")
    rank = input.ndim
    _check_ranks(grad_output, input, weight)
    _check_lengths(rank, stride, padding, dilation, output_padding)

    w_out, w_in = weight.shape[:2]
    if w_out % groups:
        raise param_invalid(API, f"weight.shape[0] = {w_out} must be divisible by groups = {groups}")
    x_name, x = ("gradOutput", grad_output) if transposed else ("input", input)
    if not (transposed and input.shape[0] == 0) and (x.shape[1] or w_in):
        if w_in == 0 or x.shape[1] != w_in * groups:
            raise param_invalid(API, f"{x_name}.shape[1] = {x.shape[1]} must equal weight.shape[1] * groups = "
                                     f"{w_in} * {groups}")
    spatial = rank - 2
    pad_lo, pad_hi = sides(padding, spatial)
    if transposed:
        if w_out <= 0 or w_out != input.shape[1]:
            raise param_invalid(API, f"transposed: weight.shape[0] = {w_out} must be > 0 and equal input.shape[1] = "
                                     f"{input.shape[1]}")
    else:
        for d in range(spatial):
            check_room(API, d, input.shape[2 + d], min(pad_lo[d] + pad_hi[d], INT64_MAX), weight.shape[2 + d],
                       input.shape, weight.shape, padding, dilation)
    return _Params(grad_output, input, weight, transposed, groups, output_mask, stride, dilation,
                   pad_lo, pad_hi, bias_length, True)


def _prepare(grad_output: object, input: object, weight: object, bias_sizes: object, stride: object, padding: object,
             dilation: object, transposed: object, output_padding: object, groups: object, output_mask: object,
             cube_math_type: object) -> Prepared:
    """The numpy path: validate (every check, for a signature not seen before), then plan the
    requested gradients in float32: the lowered convolution is chosen here, once, and a call's
    ``run`` only converts the dtypes that are not float32, runs the engine and sums gradBias."""
    p = _validate(grad_output, input, weight, bias_sizes, stride, padding, dilation, transposed,
                  output_padding, groups, output_mask, cube_math_type)
    want_input, want_weight, want_bias = p.output_mask
    in_shape, in_dtype = p.input.shape, p.input.dtype
    w_shape, w_dtype = p.weight.shape, p.weight.dtype
    go_dtype = p.grad_output.dtype
    bias_length = p.bias_length
    nbytes = (want_input * p.input.size * in_dtype.itemsize + want_weight * p.weight.size * w_dtype.itemsize
              + want_bias * bias_length * go_dtype.itemsize)
    coerced = (p.grad_output, p.input, p.weight)
    touched = nbytes + p.grad_output.nbytes + p.input.nbytes + p.weight.nbytes

    if p.empty:
        def run_empty(*_: object) -> Gradients:
            check_allocation(nbytes)
            return (np.zeros(in_shape, in_dtype) if want_input else None,
                    np.zeros(w_shape, w_dtype) if want_weight else None,
                    np.zeros((bias_length,), go_dtype) if want_bias else None)
        return plan(run_empty, touched), coerced

    # The products are computed in float32: a float16/bfloat16 tensor is widened, a result
    # rounded once to its dtype (``_widen``: None where the tensor is float32 already).
    go_wide, in_wide, w_wide = _widen(go_dtype), _widen(in_dtype), _widen(w_dtype)
    go_shape = p.grad_output.shape
    bias_rows = (go_shape[0], go_shape[1], -1)  # gradBias: one reduction, the inner axis pairwise
    conv = None
    if want_input or want_weight:
        x_shape, y_shape = (go_shape, in_shape) if p.transposed else (in_shape, go_shape)
        conv = lowered(x_shape[0], x_shape[1], y_shape[1], x_shape[2:], y_shape[2:], w_shape[2:],
                       p.stride, p.dilation, p.pad_lo, p.groups, p.transposed)
    transposed_ = p.transposed

    def run(grad_output: object, input: object, weight: object, *_: object) -> Gradients:
        check_allocation(nbytes)
        grad_out = host_array(API, "gradOutput", grad_output)
        if go_wide:
            grad_out = grad_out.astype(FLOAT32)
        grad_input = grad_weight = grad_bias = None
        if conv is not None:
            inp = host_array(API, "input", input)
            w = host_array(API, "weight", weight)
            if in_wide:
                inp = inp.astype(FLOAT32)
            if w_wide:
                w = w.astype(FLOAT32)
            if transposed_:
                grad_input, grad_weight = conv.gradients(grad_out, inp, w, want_input, want_weight)
            else:
                grad_input, grad_weight = conv.gradients(inp, grad_out, w, want_input, want_weight)
            if in_wide and grad_input is not None:
                grad_input = grad_input.astype(in_dtype)
            if w_wide and grad_weight is not None:
                grad_weight = grad_weight.astype(w_dtype)
        if want_bias:
            grad_bias = _bias_sums(grad_out.reshape(bias_rows))
            if go_wide:
                grad_bias = grad_bias.astype(go_dtype)
        return grad_input, grad_weight, grad_bias

    return plan(run, touched), coerced


def _bias_sums(rows: np.ndarray) -> np.ndarray:
    """gradBias: the sum of ``rows`` (N, C, L) over N and L, each channel's inner axis pairwise,
    the channels shared among the worker threads for a large gradOutput (a pass over it at
    memory speed, ~0.45 ms on one thread for the depthwise 3x3 (8,128,56,56) case)."""
    channels = rows.shape[1]
    if rows.size < 2 * MIN_PARALLEL_ELEMENTS:   # one part: no closure, no in_parallel (a tiny call's ~1 us)
        total: np.ndarray = np.add.reduce(rows, axis=(0, 2))
        return total
    sums = np.empty(channels, rows.dtype)

    def work(first: int, last: int) -> None:
        np.add.reduce(rows[:, first:last], axis=(0, 2), out=sums[first:last])

    in_parallel(channels, work, min_per_thread=max(1, MIN_PARALLEL_ELEMENTS * channels // max(1, rows.size)))
    return sums


def _widen(dtype: np.dtype) -> bool:
    """Whether a tensor of ``dtype`` is converted to float32 for the products (not float32)."""
    return dtype != FLOAT32


_numpy = NumpyOp(_prepare)


def _outputs(grad_output: object, input: object, weight: object, bias_sizes: object, stride: object, padding: object,
             dilation: object, transposed: bool, output_padding: object, groups: int,
             output_mask: tuple[bool, ...] | None, cube_math_type: int) -> list[Output]:
    """Like torch_npu, outputMask is passed as given; an output is made for each True entry and
    NULL passed for the others (None returned there)."""
    want = [False, False, False] if output_mask is None else list(output_mask[:3])
    want += [False] * (3 - len(want))
    channels = shape_of(grad_output)[1:2] or (0,)
    return [Output(shape_of(input) if want[0] else None, dtype_of(input)),
            Output(shape_of(weight) if want[1] else None, dtype_of(weight)),
            Output(channels if want[2] else None, dtype_of(grad_output))]


#: The npu/sim path: the two-phase C call, the arguments converted by their declared C types;
#: the library checks them. The outputs are sized from the tensors only when the arguments pass
#: the shape checks (``_check_cached``: device tensors have the shape, ndim, size and dtype they
#: read, and a missing value fails them as it should).
#: The outputs the function makes, and from what (their names in CANN's messages: ``dispatch``).
_MADE = {"gradInput": "input's shape and dtype", "gradWeight": "weight's shape and dtype",
         "gradBias": "gradOutput's dtype and channel count"}

_aclnn = planned(TypedCall("ConvolutionBackward", _outputs, checks=_check_cached))


Gradients: TypeAlias = tuple[np.ndarray | Tensor | None, np.ndarray | Tensor | None, np.ndarray | Tensor | None]
"""``(grad_input, grad_weight, grad_bias)``, each None where output_mask is False."""


@documented
def convolution_backward(grad_output: ArrayLike | Tensor, input: ArrayLike | Tensor, weight: ArrayLike | Tensor,
                         bias_sizes: Sequence[int] | None, stride: int | Sequence[int], padding: int | Sequence[int],
                         dilation: int | Sequence[int], transposed: bool, output_padding: int | Sequence[int],
                         groups: int, output_mask: Sequence[bool], cube_math_type: int = 0, *,
                         backend: str | None = None, stream: object = None
                         ) -> Gradients:
    """The gradients of a 1-D, 2-D or 3-D (transposed) convolution,
    ``(grad_input, grad_weight, grad_bias)`` as ``aten.convolution_backward`` computes them.

    Mirrors ``aclnnConvolutionBackwardGetWorkspaceSize`` + ``aclnnConvolutionBackward``.

    Args:
        grad_output: gradOutput, ``(N, Cout, *out)``; FLOAT, FLOAT16 or BFLOAT16; rank 3, 4 or
            5, the rank of input and weight; not empty unless input or weight is.
        input: the convolution's input ``(N, Cin, *in)``, same N as grad_output; FLOAT,
            FLOAT16 or BFLOAT16 (the dtypes may differ; every product is FLOAT here).
        weight: ``(Cout, Cin/groups, *k)``, or ``(Cin, Cout/groups, *k)`` when transposed;
            FLOAT, FLOAT16 or BFLOAT16; ``weight.shape[0]`` divisible by groups.
        bias_sizes: ``None`` or ``[Cout]`` (the gradBias length, checked when output_mask[2]).
        stride: one value per spatial dimension, or one int for all; values >= 1.
        padding: one value per spatial dimension (both sides), ``[top, bottom, left, right]``
            for 2-D, or one int for all; values >= 0.
        dilation: one value per spatial dimension, or one int; values >= 1.
        transposed: the forward was a transposed convolution.
        output_padding: one value per spatial dimension (4 for 2-D, top/left 0), or one int;
            all 0 unless transposed, then ``0 <= output_padding < stride``.
        groups: ``1 <= groups <= 65535``, dividing the channel counts as above.
        output_mask: 3 bools: which of grad_input, grad_weight, grad_bias to compute.
        cube_math_type: 0 KEEP_DTYPE, 1 ALLOW_FP32_DOWN_PRECISION, 2 USE_FP16, 3 USE_HF32: a
            precision hint for the NPU's cube unit (the numpy backend computes in FLOAT).
        {backend_and_stream}

    Every spatial size must match: ``out = (in + padLo + padHi - dilation*(k-1) - 1) // stride
    + 1``, or transposed ``out = (in-1)*stride - padLo - padHi + dilation*(k-1) +
    output_padding + 1`` (up to stride-1 longer, as CANN accepts).

    {tensor_arguments}

    Returns:
        ``(grad_input, grad_weight, grad_bias)``: input's shape and dtype, weight's shape and
        dtype, ``(Cout,)`` of grad_output's dtype; None where output_mask is False.

    Raises:
        AclnnError: 161001 if a required argument is None or output_mask has not 3 elements;
            161002 for a dtype, rank, length, value or shape outside the constraints above.
        TypeError: an argument of the wrong Python type.
    """
    spatial = spatial_dims(weight, input, grad_output)
    result: Gradients = dispatch(backend, _numpy, _aclnn, grad_output, input, weight, bias_sizes,
                                 repeated(stride, spatial), repeated(padding, spatial), repeated(dilation, spatial),
                                 transposed, repeated(output_padding, spatial), groups, output_mask, cube_math_type,
                    stream=stream, made=_MADE)
    return result


# -- registration: what the tools know of this operator (ops/_registry.py) -------------------------

from ._cases import OpCall, dims, pair, random_array  # noqa: E402
from ._registry import DOUBLE_THOUSANDTH, Operator, register  # noqa: E402


def _case(rng: np.random.Generator, shape: Sequence[int], dtype: np.dtype, out_channels: int,
          kernel: int | Sequence[int] = 3, stride: int | Sequence[int] = 1, padding: int | Sequence[int] = 1,
          dilation: int | Sequence[int] = 1, groups: int = 1, transposed: bool = False,
          cube_math_type: int = 0) -> OpCall:
    """All three gradients of a 2-D (transposed) convolution of an ``N, C, H, W`` input."""
    batch, channels, height, width = shape
    k, s, p, d = map(pair, (kernel, stride, padding, dilation))
    sizes = zip((height, width), k, s, p, d)
    if transposed:
        weight_shape = (channels, out_channels // groups, *k)
        out = [(i - 1) * ss - 2 * pp + dd * (kk - 1) + 1 for i, kk, ss, pp, dd in sizes]
    else:
        weight_shape = (out_channels, channels // groups, *k)
        out = [(i + 2 * pp - dd * (kk - 1) - 1) // ss + 1 for i, kk, ss, pp, dd in sizes]
    grad = random_array(rng, (batch, out_channels, *out), dtype)
    x = random_array(rng, shape, dtype)
    weight = random_array(rng, weight_shape, dtype)
    words = [f"{'transposed ' if transposed else ''}k{dims(k)} s{dims(s)} p{dims(p)} d{dims(d)}"]
    if groups > 1:
        words.append(f"groups {groups}")
    if cube_math_type:
        words.append(f"cubeMathType {cube_math_type}")
    return OpCall("convolution_backward", (grad, x, weight, [out_channels], list(s), list(p), list(d), transposed,
                                           [0, 0], groups, [True, True, True], cube_math_type),
                  case=" ".join(words))


def _torch(torch: Any, grad: Any, input: Any, weight: Any, bias_sizes: Any, stride: Any, padding: Any,
           dilation: Any, transposed: bool, output_padding: Any, groups: int, output_mask: Any,
           cube_math_type: int = 0) -> Any:
    return torch.ops.aten.convolution_backward(grad, input, weight, bias_sizes, stride, padding, dilation,
                                               transposed, output_padding, groups, output_mask)


def _layer(n: int, cin: int, hw: tuple[int, ...], cout: int, k: int, *, stride: int = 1, pad: int = 0,
           dil: int = 1, groups: int = 1, transposed: bool = False, out_pad: int = 0,
           mask: tuple[bool, bool, bool] = (True, True, True)) -> Any:
    rank = len(hw)

    def make(rng: np.random.Generator) -> tuple[Any, ...]:
        x = rng.standard_normal((n, cin, *hw), dtype=np.float32)
        if transposed:
            w = rng.standard_normal((cin, cout // groups, *([k] * rank)), dtype=np.float32)
            out = [(i - 1) * stride - 2 * pad + dil * (k - 1) + out_pad + 1 for i in hw]
        else:
            w = rng.standard_normal((cout, cin // groups, *([k] * rank)), dtype=np.float32)
            out = [(i + 2 * pad - dil * (k - 1) - 1) // stride + 1 for i in hw]
        g = rng.standard_normal((n, cout, *out), dtype=np.float32)
        return (g, x, w, [cout], [stride] * rank, [pad] * rank, [dil] * rank, transposed, [out_pad] * rank, groups,
                list(mask))
    return make


def _fuzz(f: Any) -> list[Any]:
    n, groups = f.small_int(1, 2), f.small_int(1, 2)
    cin, cout = groups * f.small_int(1, 2), groups * f.small_int(1, 2)
    h, w, k = f.small_int(3, 7), f.small_int(3, 7), f.small_int(1, 3)
    s, p, d = f.small_int(1, 2), f.small_int(0, 1), f.small_int(1, 2)
    oh, ow = (h + 2 * p - d * (k - 1) - 1) // s + 1, (w + 2 * p - d * (k - 1) - 1) // s + 1
    dt = f.pick(f.FLOATS[:2])
    return [f.filled((n, cout, oh, ow), dt), f.filled((n, cin, h, w), dt), f.filled((cout, cin // groups, k, k), dt),
            [cout], [s, s], [p, p], [d, d], False, [0, 0], groups, [f.chance(0.7), f.chance(0.7), f.chance(0.7)]]


def _c_arguments(args: list[Any], out_like: Any) -> list[Any]:
    go, x, w, mask = args[0], args[1], args[2], args[10]
    grads = [out_like(x.shape, x.dtype) if mask[0] else None, out_like(w.shape, w.dtype) if mask[1] else None,
             out_like((w.shape[0],), go.dtype) if mask[2] else None]
    return [*args[:11], args[11] if len(args) > 11 else 0, *grads]


# Layers of real networks (ResNet-50, MobileNetV2, U-Net, ViT-B/16, DeepLab, 3-D U-Net), batch sizes cut
# to keep scripts/bench.py to a few minutes. Masks: "FTF"/"FTT" is a network's first layer (no gradInput
# wanted), "TFF" gradInput alone.
_W, _WB, _I = (False, True, False), (False, True, True), (True, False, False)

OPERATOR = register(Operator(
    convolution_backward, "ConvolutionBackward", header="aclnn_convolution_backward.h", package="ops-nn",
    library="libopapi_nn.so", outputs=("gradInput", "gradWeight", "gradBias"), case=_case,
    selftest=(((2, 4, 7, 6), DTYPES, dict(out_channels=6, kernel=3, stride=(2, 1), padding=1, groups=2)),
              ((2, 4, 5, 5), (FLOAT32,), dict(out_channels=3, kernel=3, stride=2, padding=1, transposed=True,
                                               cube_math_type=3))),
    bench=((8, 64, 28, 28), dict(out_channels=64, kernel=3, stride=1, padding=1, dilation=1, groups=1,
                                 transposed=False, cube_math_type=0)),
    torch=_torch, fuzz=_fuzz, c_arguments=_c_arguments, dtypes=DTYPE_RULES, seed=True, precision=DOUBLE_THOUSANDTH,
    benchmarks=(
        ("conv2d resnet 3x3 (8,64,56,56)", _layer(8, 64, (56, 56), 64, 3, pad=1)),
        ("conv2d resnet 3x3 gradInput only (8,128,28,28)", _layer(8, 128, (28, 28), 128, 3, pad=1, mask=_I)),
        ("conv2d resnet 3x3 gradWeight+bias (8,128,28,28)", _layer(8, 128, (28, 28), 128, 3, pad=1, mask=_WB)),
        ("conv2d resnet stem 7x7 s2 gradWeight (8,3,224,224)", _layer(8, 3, (224, 224), 64, 7, stride=2, pad=3,
                                                                      mask=_W)),
        ("conv2d 1x1 stride 2 (8,256,56,56)->512", _layer(8, 256, (56, 56), 512, 1, stride=2)),
        ("conv2d vit patch 16x16 s16 gradWeight+bias (8,3,224,224)", _layer(8, 3, (224, 224), 768, 16, stride=16,
                                                                            mask=_WB)),
        ("conv2d depthwise 3x3 (8,128,56,56)", _layer(8, 128, (56, 56), 128, 3, pad=1, groups=128)),
        ("conv2d depthwise 3x3 s2 (8,96,112,112)", _layer(8, 96, (112, 112), 96, 3, stride=2, pad=1, groups=96)),
        ("conv2d dilated 3x3 d2 (4,256,32,32)", _layer(4, 256, (32, 32), 256, 3, pad=2, dil=2)),
        ("conv2d transposed k4 s2 (8,64,28,28)->32", _layer(8, 64, (28, 28), 32, 4, stride=2, pad=1,
                                                            transposed=True)),
        ("conv2d unet up k2 s2 transposed (8,128,32,32)->64", _layer(8, 128, (32, 32), 64, 2, stride=2,
                                                                     transposed=True)),
        ("conv1d k5 (16,64,1024)", _layer(16, 64, (1024,), 64, 5, pad=2)),
        ("conv3d k3 (2,16,16,32,32)", _layer(2, 16, (16, 32, 32), 16, 3, pad=1)),
        ("conv3d unet k3 (1,32,32,32,32)->32", _layer(1, 32, (32, 32, 32), 32, 3, pad=1)),
        ("conv3d unet up k2 s2 transposed (1,64,16,16,16)->32", _layer(1, 64, (16, 16, 16), 32, 2, stride=2,
                                                                       transposed=True)),
        ("conv2d tiny (1,1,4,4)", _layer(1, 1, (4, 4), 1, 3, pad=1)),
        ("conv2d tiny gradWeight (1,2,6,6)->2 s2", _layer(1, 2, (6, 6), 2, 3, stride=2, pad=1, mask=_W)))))
