"""aclnnConvolutionGetWorkspaceSize / aclnnConvolution: a 1-D, 2-D or 3-D convolution, plain or
transposed, grouped, strided, dilated, with an optional bias.

C header ``aclnnop/aclnn_convolution.h`` (ops-nn, ``libopapi_nn.so``)::

    aclnnStatus aclnnConvolutionGetWorkspaceSize(
        const aclTensor *input, const aclTensor *weight, const aclTensor *bias,
        const aclIntArray *stride, const aclIntArray *padding, const aclIntArray *dilation,
        bool transposed, const aclIntArray *outputPadding, const int64_t groups,
        aclTensor *output, int8_t cubeMathType, uint64_t *workspaceSize, aclOpExecutor **executor);
    aclnnStatus aclnnConvolution(void *workspace, const uint64_t workspaceSize,
                                 aclOpExecutor *executor, aclrtStream stream);

Computes ``torch.ops.aten.convolution(input, weight, bias, stride, padding, dilation,
transposed, outputPadding, groups)`` for rank 3 (NCL), 4 (NCHW) and 5 (NCDHW) tensors:

* ``transposed=False``: ``weight (Cout, Cin/groups, *k)``, output ``(N, Cout, *out)`` with
  ``out = (in + padLo + padHi - dilation*(k-1) - 1) // stride + 1``.
* ``transposed=True``: ``weight (Cin, Cout/groups, *k)``, output ``(N, Cout, *out)`` with
  ``out = (in-1)*stride - padLo - padHi + dilation*(k-1) + outputPadding + 1``.
* padding: one value per spatial dimension (both sides), or pairs: ``[left, right]`` for a
  1-D non-transposed convolution and ``[top, bottom, left, right]`` for 2-D (asymmetric).
* bias (optional): ``(Cout,)``, added to every output position of its channel.

How it is computed (numpy backend): in float32 (float16/bfloat16 tensors are widened, the
result rounded once to output's dtype, as CANN computes in the wider "upper" dtype and casts),
by the same lowered convolution the gradients use (``_numpy/conv``): a convolution's output is
the product a transposed convolution's gradInput is, and the other way round
(``LoweredConv.output``).  The simulator shares its lowering with the convolution gradients likewise
(``sim/src/ops/conv_lowering.c``).  The output has input's dtype.

Constraints, in the order CANN (Atlas A2/A3) checks them; each violation is 161002 unless noted:

1. input, weight, stride, padding and dilation are required, and outputPadding when transposed
   (None: 161001).  bias may be None.
2. Dtypes: bias, input, weight (and output) are FLOAT, FLOAT16 or BFLOAT16; they may differ.
3. Ranks: input is 3-D, 4-D or 5-D and weight (and output) have its rank; bias is 1-D of length
   weight.shape[0] (transposed: weight.shape[1] * groups); stride and dilation have rank-2
   elements; padding rank-2 or pairs as above (2-D: 2 or 4; a transposed 1-D/3-D convolution
   one per dimension); transposed: outputPadding rank-2.
4. Values: weight's spatial dims > 0, stride > 0, dilation > 0, and (added here: the documented
   range, which CANN's phase 1 does not check) padding >= 0; not transposed and input not
   empty: ``in + padLo + padHi >= dilation*(k-1) + 1`` per dimension; groups > 0; not
   transposed: ``weight.shape[1] * groups == input.shape[1]``; transposed:
   ``weight.shape[0] == input.shape[1]`` and ``0 <= outputPadding < stride`` or ``<
   dilation`` per dimension; ``weight.shape[0] % groups == 0``; transposed: input.shape[1] > 0
   and, input not empty, ``dilation*(k-1) - padding <= 255`` along H and W (1-D: L; 3-D also
   >= 0), reading padding[0] for H (1-D: L) and padding[1] for W as CANN does (3-D:
   padding[1], padding[2]).
5. The output shape: if input or weight is empty, the output must be empty and no inferred
   size negative; a transposed output size must not be negative.
6. cubeMathType is 0 (KEEP_DTYPE), 1 (ALLOW_FP32_DOWN_PRECISION), 2 (USE_FP16), 3 (USE_HF32)
   or 4 (USE_FP32_ADD): a precision hint for the NPU's cube unit (the numpy backend computes in
   FLOAT).  An empty output succeeds with nothing computed.

Arithmetic on the parameters is exact; a size that leaves int64 is 161002.  Not enforced, as
CANN's phase 1 does not enforce them either: the other documented A2/A3 ranges (e.g. kernel H/W
<= 255 transposed, groups <= 65535).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import ArrayLike

from .._dtypes import dtype_name
from .._errors import param_invalid
from .._runtime.memory import check_allocation
from .._runtime.tensor import Tensor
from .._convert.executor import dtype_of, planned
from .._convert.typed import Output, TypedCall
from .._convert.values import (INT64_MAX, bool_arg, c_int, host_array, int_array_arg, repeated, spatial_dims,
                               tensor_arg)
from .._numpy.conv import forward, lowered
from .._numpy.plans import NumpyOp, Prepared, plan
from ._checks import FLOAT32, check, check_dtype, check_min, check_not_null, shape_str
from ._conv import check_room, fits, output_size, sides, transposed_output_size
from ._dispatch import dispatch, documented
from ._registry import numpy_dtypes

API = "aclnnConvolutionGetWorkspaceSize"

#: The dtypes each rule accepts: the one table of these checks (the simulator's are generated from it).
DTYPE_RULES = {"DTYPES": ("ACL_FLOAT", "ACL_FLOAT16", "ACL_BF16")}
DTYPES = numpy_dtypes(DTYPE_RULES["DTYPES"])
CUBE_MATH_TYPES = {0: "KEEP_DTYPE", 1: "ALLOW_FP32_DOWN_PRECISION", 2: "USE_FP16", 3: "USE_HF32", 4: "USE_FP32_ADD"}
#: CANN's limit on a transposed convolution's dilation * (kernel - 1) - padding.
TRANSPOSED_REACH = 255


class _Params(NamedTuple):
    """A checked call: the output's shape, and the lowered convolution's padding before."""

    out_shape: tuple[int, ...]
    pad_lo: tuple[int, ...]
    empty: bool


def _coerce(input: object, weight: object, bias: object, stride: object, padding: object, dilation: object,
            transposed: object, output_padding: object, groups: object,
            cube_math_type: object) -> tuple[Any, ...]:
    """Python types and C ranges, in the order the binding converts them for the C call, then
    the required arguments (161001, in CANN's order)."""
    transposed = bool_arg(API, "transposed", transposed)
    groups = c_int(API, "groups", groups, 64)
    cube_math_type = c_int(API, "cubeMathType", cube_math_type, 8)
    input = tensor_arg(API, "input", input)
    weight = tensor_arg(API, "weight", weight)
    bias = tensor_arg(API, "bias", bias)
    stride = int_array_arg(API, "stride", stride)
    padding = int_array_arg(API, "padding", padding)
    dilation = int_array_arg(API, "dilation", dilation)
    output_padding = int_array_arg(API, "outputPadding", output_padding)
    check_not_null(API, input=input, weight=weight, stride=stride, padding=padding, dilation=dilation)
    if transposed:
        check_not_null(API, outputPadding=output_padding)
    return input, weight, bias, stride, padding, dilation, transposed, output_padding, groups, cube_math_type


_VALIDATED: dict[tuple[object, ...], _Params] = {}
_MAX_VALIDATED = 1024


def _check(input: Any, weight: Any, bias: Any, stride: tuple[int, ...], padding: tuple[int, ...],
           dilation: tuple[int, ...], transposed: bool, output_padding: tuple[int, ...] | None, groups: int,
           cube_math_type: int) -> _Params:
    """Checks 2-6 (module docstring) on coerced arguments (tensors: anything with shape, ndim
    and dtype); cached by their shapes, dtypes and values (a training loop repeats them)."""
    key = (input.shape, input.dtype, weight.shape, weight.dtype, None if bias is None else (bias.shape, bias.dtype),
           stride, padding, dilation, transposed, output_padding, groups, cube_math_type)
    known = _VALIDATED.get(key)
    if known is None:
        known = _checked(input.shape, input.dtype, weight.shape, weight.dtype, bias, stride, padding, dilation,
                         transposed, output_padding, groups, cube_math_type)
        if len(_VALIDATED) >= _MAX_VALIDATED:
            _VALIDATED.clear()
        _VALIDATED[key] = known
    return known


def _checked(in_shape: tuple[int, ...], in_dtype: np.dtype, w_shape: tuple[int, ...], w_dtype: np.dtype, bias: Any,
             stride: tuple[int, ...], padding: tuple[int, ...], dilation: tuple[int, ...], transposed: bool,
             output_padding: tuple[int, ...] | None, groups: int, cube_math_type: int) -> _Params:
    # 2. dtypes: bias first.
    if bias is not None:
        check_dtype(API, "bias", bias, DTYPES)
    check(API, in_dtype in DTYPES, lambda: _dtype_message("input", in_dtype))
    check(API, w_dtype in DTYPES, lambda: _dtype_message("weight", w_dtype))

    # 3. Ranks and lengths.
    rank = len(in_shape)
    check(API, rank in (3, 4, 5), lambda: f"input must be 3-D (NCL), 4-D (NCHW) or 5-D (NCDHW), got {rank}-D shape "
                                          f"{shape_str(in_shape)}")
    check(API, len(w_shape) == rank, lambda: f"weight must have input's rank {rank}, got {len(w_shape)}-D shape "
                                             f"{shape_str(w_shape)}")
    if bias is not None:
        length, rule = (w_shape[1] * groups, "weight.shape[1] * groups") if transposed else (w_shape[0], "weight.shape[0]")
        check(API, bias.ndim == 1 and bias.shape[0] == length,
              lambda: f"bias must be 1-D of length {rule} = {length}, got {shape_str(bias.shape)}")
    spatial = rank - 2
    for name, values in (("stride", stride), ("dilation", dilation)):
        check(API, len(values) == spatial, lambda: f"{name} must have {spatial} element(s) for a {rank}-D input, got "
                                                   f"{shape_str(values)}")
    pairs = rank == 4 or (rank == 3 and not transposed)
    check(API, len(padding) == spatial or (pairs and len(padding) == 2 * spatial),
          lambda: f"padding must have {spatial} element(s){f' or {2 * spatial}' if pairs else ''} for a "
                  f"{'transposed ' if transposed else ''}{rank}-D input, got {shape_str(padding)}")
    if transposed:
        assert output_padding is not None
        check(API, len(output_padding) == spatial,
              lambda: f"outputPadding must have {spatial} element(s) for a {rank}-D input, got "
                      f"{shape_str(output_padding)}")

    # 4. Values.
    kernel = w_shape[2:]
    check(API, min(kernel) > 0, lambda: f"weight spatial dims must be > 0, got weight {shape_str(w_shape)}")
    check_min(API, "stride", stride, 0, strict=True)
    check_min(API, "dilation", dilation, 0, strict=True)
    check_min(API, "padding", padding, 0, strict=False)
    pad_lo, pad_hi = sides(padding, spatial)
    totals = [min(lo + hi, INT64_MAX) for lo, hi in zip(pad_lo, pad_hi)]
    input_empty = 0 in in_shape
    if not transposed and not input_empty:
        for d in range(spatial):
            check_room(API, d, in_shape[2 + d], totals[d], kernel[d], in_shape, w_shape, padding, dilation)
    check(API, groups > 0, lambda: f"groups must be > 0, got {groups}")
    cin = in_shape[1]
    if transposed:
        assert output_padding is not None
        check(API, w_shape[0] == cin,
              lambda: f"transposed: weight.shape[0] = {w_shape[0]} must equal input.shape[1] = {cin}")
        check(API, all(0 <= p and (p < s or p < d) for p, s, d in zip(output_padding, stride, dilation)),
              lambda: f"transposed: outputPadding must be >= 0 and < stride or < dilation in every dimension, got "
                      f"outputPadding = {shape_str(output_padding)}, stride = {shape_str(stride)}, dilation = "
                      f"{shape_str(dilation)}")
    else:
        check(API, w_shape[1] * groups == cin, lambda: f"input.shape[1] = {cin} must equal weight.shape[1] * groups "
                                                       f"= {w_shape[1]} * {groups}")
    check(API, w_shape[0] % groups == 0,
          lambda: f"weight.shape[0] = {w_shape[0]} must be divisible by groups = {groups}")
    if transposed:
        check(API, cin > 0, lambda: f"transposed: input.shape[1] must be > 0, got input {shape_str(in_shape)}")
        if not input_empty:
            _check_transposed_reach(kernel, padding, dilation)

    # 5. The output shape.
    if transposed:
        assert output_padding is not None
        cout = w_shape[1] * groups
        sizes = [transposed_output_size(i, k, s, d, t, p)
                 for i, k, s, d, t, p in zip(in_shape[2:], kernel, stride, dilation, totals, output_padding)]
    else:
        cout = w_shape[0]
        sizes = [output_size(i, k, s, d, t) if i + t >= (k - 1) * d + 1 else -1
                 for i, k, s, d, t in zip(in_shape[2:], kernel, stride, dilation, totals)]
    out_shape = (in_shape[0], cout, *sizes)
    check(API, fits(*out_shape) and min(out_shape) >= 0 and (cout == 0 or fits(math.prod(out_shape))),
          lambda: f"output shape {shape_str(out_shape)} (inferred from input {shape_str(in_shape)}, weight "
                  f"{shape_str(w_shape)} and the parameters) must not have a negative size")
    empty = input_empty or 0 in w_shape
    check(API, not empty or 0 in out_shape,
          lambda: f"output must be empty when input or weight is empty, got output {shape_str(out_shape)} (input "
                  f"{shape_str(in_shape)}, weight {shape_str(w_shape)})")

    # 6. cubeMathType.
    if cube_math_type not in CUBE_MATH_TYPES:
        names = [f"{v} ({n})" for v, n in CUBE_MATH_TYPES.items()]
        raise param_invalid(API, f"cubeMathType must be {', '.join(names[:-1])} or {names[-1]}, got {cube_math_type}")
    return _Params(out_shape, pad_lo, empty or 0 in out_shape)


def _dtype_message(name: str, dtype: np.dtype) -> str:
    names = ", ".join(dtype_name(d) for d in DTYPES)
    return f"{name} dtype must be one of [{names}], got {dtype_name(dtype)}"


def _check_transposed_reach(kernel: tuple[int, ...], padding: tuple[int, ...], dilation: tuple[int, ...]) -> None:
    """CANN's limit on ``dilation*(k-1) - padding`` of a non-empty transposed convolution, with
    the padding element its code reads for each of H and W (module docstring, check 4)."""
    spatial = len(kernel)
    if spatial == 1:
        dims = [(0, "L", padding[0])]
    elif spatial == 2:
        dims = [(0, "H", padding[0]), (1, "W", padding[1])]
    else:
        dims = [(1, "H", padding[1]), (2, "W", padding[2])]
    for d, label, pad in dims:
        value = dilation[d] * (kernel[d] - 1) - pad
        low = 0 if spatial == 3 else None
        check(API, value <= TRANSPOSED_REACH and (low is None or value >= low),
              lambda: f"transposed: dilation * (kernel - 1) - padding along {label} must be "
                      f"{'in [0, ' if low is not None else '<= '}{TRANSPOSED_REACH}{']' if low is not None else ''}, "
                      f"got {value} (weight kernel {shape_str(kernel)}, padding = {shape_str(padding)}, dilation = "
                      f"{shape_str(dilation)})")


def _prepare(input: object, weight: object, bias: object, stride: object, padding: object, dilation: object,
             transposed: object, output_padding: object, groups: object, cube_math_type: object) -> Prepared:
    """The numpy path: validate (every check, for a signature not seen before), then plan the
    convolution in float32: the engine is chosen here, once (``_numpy/conv``)."""
    args = _coerce(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups,
                   cube_math_type)
    x, w, b, stride_, _, dilation_, transposed_, _, groups_, _ = args
    p = _check(*args)
    out_shape, out_dtype = p.out_shape, x.dtype
    nbytes = math.prod(out_shape) * out_dtype.itemsize
    coerced = (x, w, b)
    touched = nbytes + x.nbytes + w.nbytes
    if p.empty:
        def run_empty(*_: object) -> np.ndarray:
            check_allocation(nbytes)
            return np.zeros(out_shape, out_dtype)
        return plan(run_empty, touched), coerced

    # The lowered convolution X -> Y: X is input and Y output, whose output is the forward
    # product; transposed, X is the output and Y input, whose output is the input gradient.
    batch, cin, cout = x.shape[0], x.shape[1], out_shape[1]
    conv: Any
    if transposed_:
        conv = lowered(batch, cout, cin, out_shape[2:], x.shape[2:], w.shape[2:], stride_, dilation_, p.pad_lo,
                       groups_, False)
    else:
        conv = forward(batch, cin, cout, x.shape[2:], out_shape[2:], w.shape[2:], stride_, dilation_, p.pad_lo,
                       groups_)
    bias_shape = (1, cout) + (1,) * (len(out_shape) - 2)

    def run(input: object, weight: object, bias: object, *_: object) -> np.ndarray:
        check_allocation(nbytes)
        data = host_array(API, "input", input)
        kernel = host_array(API, "weight", weight)
        result: np.ndarray = conv.output(data if data.dtype == FLOAT32 else data.astype(FLOAT32),
                             kernel if kernel.dtype == FLOAT32 else kernel.astype(FLOAT32))
        if bias is not None:
            result += host_array(API, "bias", bias).astype(FLOAT32, copy=False).reshape(bias_shape)
        return result if out_dtype == FLOAT32 else result.astype(out_dtype)

    return plan(run, touched), coerced


_numpy = NumpyOp(_prepare)


def _outputs(input: object, weight: object, bias: object, stride: Any, padding: Any, dilation: Any, transposed: bool,
             output_padding: Any, groups: int, cube_math_type: int) -> list[Output]:
    """output: the inferred shape, input's dtype.  Arguments the checks refuse before the output
    shape get a stand-in of input's rank (the library then reports the argument at fault, in its
    own order); cubeMathType, checked after the output shape, does not count here."""
    try:
        shape = _check(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups,
                       0).out_shape
    except Exception:
        shape = (0,) * len(getattr(input, "shape", (0, 0, 0, 0)))
    return [Output(shape, dtype_of(input))]


#: The npu/sim path: the two-phase C call, the arguments converted by their declared C types;
#: the library checks them. The output is sized only when the arguments pass the shape checks.
_aclnn = planned(TypedCall("Convolution", _outputs, checks=_check))

#: The outputs the function makes, and from what (their names in CANN's messages: ``dispatch``).
_MADE = {"output": "the inferred shape and input's dtype"}


@documented
def convolution(input: ArrayLike | Tensor, weight: ArrayLike | Tensor, bias: ArrayLike | Tensor | None,
                stride: int | Sequence[int], padding: int | Sequence[int], dilation: int | Sequence[int],
                transposed: bool, output_padding: int | Sequence[int] | None, groups: int, cube_math_type: int = 0,
                *, backend: str | None = None, stream: object = None) -> np.ndarray | Tensor:
    """A 1-D, 2-D or 3-D (transposed) convolution, as ``aten.convolution`` computes it.

    Mirrors ``aclnnConvolutionGetWorkspaceSize`` + ``aclnnConvolution``.

    Args:
        input: ``(N, Cin, *in)``, rank 3 (NCL), 4 (NCHW) or 5 (NCDHW); FLOAT, FLOAT16 or
            BFLOAT16.
        weight: ``(Cout, Cin/groups, *k)``, or ``(Cin, Cout/groups, *k)`` when transposed;
            input's rank; FLOAT, FLOAT16 or BFLOAT16 (may differ from input's); kernel sizes > 0.
        bias: None, or ``(Cout,)``; FLOAT, FLOAT16 or BFLOAT16.
        stride: one value per spatial dimension, or one int for all; values > 0.
        padding: one value per spatial dimension (both sides), ``[left, right]`` (1-D, not
            transposed), ``[top, bottom, left, right]`` (2-D), or one int for all; values >= 0.
        dilation: one value per spatial dimension, or one int; values > 0.
        transposed: a transposed convolution (the adjoint of a convolution).
        output_padding: read only when transposed (may be None otherwise): one value per
            spatial dimension, or one int; ``0 <= output_padding`` and ``< stride`` or
            ``< dilation``.
        groups: > 0; ``Cin = weight.shape[1] * groups`` (transposed: ``weight.shape[0] = Cin``);
            ``weight.shape[0]`` divisible by groups.
        cube_math_type: 0 KEEP_DTYPE, 1 ALLOW_FP32_DOWN_PRECISION, 2 USE_FP16, 3 USE_HF32,
            4 USE_FP32_ADD: a precision hint for the NPU's cube unit (the numpy backend
            computes in FLOAT; A2/A3 accept every value with every dtype).
        {backend_and_stream}

    The output size per spatial dimension is ``(in + padLo + padHi - dilation*(k-1) - 1) //
    stride + 1``, or transposed ``(in-1)*stride - padLo - padHi + dilation*(k-1) +
    output_padding + 1``.

    {tensor_arguments}

    Returns:
        output, ``(N, Cout, *out)`` of input's dtype.

    Raises:
        AclnnError: 161001 if a required argument is None; 161002 for a dtype, rank, length,
            value or shape outside the constraints above.
        TypeError: an argument of the wrong Python type.
    """
    spatial = spatial_dims(input, weight)
    result: np.ndarray | Tensor = dispatch(
        backend, _numpy, _aclnn, input, weight, bias, repeated(stride, spatial), repeated(padding, spatial),
        repeated(dilation, spatial), transposed, repeated(output_padding, spatial), groups, cube_math_type,
        stream=stream, made=_MADE)
    return result


# -- registration: what the tools know of this operator (ops/_registry.py) -------------------------

from ._cases import OpCall, dims, pair, random_array  # noqa: E402
from ._registry import DOUBLE_THOUSANDTH, Operator, register  # noqa: E402


def _case(rng: np.random.Generator, shape: Sequence[int], dtype: np.dtype, out_channels: int,
          kernel: int | Sequence[int] = 3, stride: int | Sequence[int] = 1, padding: int | Sequence[int] = 1,
          dilation: int | Sequence[int] = 1, groups: int = 1, transposed: bool = False, bias: bool = True,
          cube_math_type: int = 0) -> OpCall:
    """A 2-D (transposed) convolution of an ``N, C, H, W`` input."""
    channels = shape[1]
    k, s, p, d = map(pair, (kernel, stride, padding, dilation))
    w_shape = (channels, out_channels // groups, *k) if transposed else (out_channels, channels // groups, *k)
    x = random_array(rng, shape, dtype)
    w = random_array(rng, w_shape, dtype)
    b = random_array(rng, (out_channels,), dtype) if bias else None
    words = [f"{'transposed ' if transposed else ''}k{dims(k)} s{dims(s)} p{dims(p)} d{dims(d)}"]
    if groups > 1:
        words.append(f"groups {groups}")
    if cube_math_type:
        words.append(f"cubeMathType {cube_math_type}")
    return OpCall("convolution", (x, w, b, list(s), list(p), list(d), transposed, [0, 0], groups, cube_math_type),
                  case=" ".join(words))


def _torch(torch: Any, input: Any, weight: Any, bias: Any, stride: Any, padding: Any, dilation: Any,
           transposed: bool, output_padding: Any, groups: int, cube_math_type: int = 0) -> Any:
    return torch.ops.aten.convolution(input, weight, bias, stride, padding, dilation, transposed,
                                      output_padding if transposed else [0] * len(stride), groups)


def _layer(n: int, cin: int, hw: tuple[int, ...], cout: int, k: int, *, stride: int = 1, pad: int = 0,
           dil: int = 1, groups: int = 1, transposed: bool = False, bias: bool = False) -> Any:
    rank = len(hw)

    def make(rng: np.random.Generator) -> tuple[Any, ...]:
        x = rng.standard_normal((n, cin, *hw), dtype=np.float32)
        w_shape = (cin, cout // groups) if transposed else (cout, cin // groups)
        w = rng.standard_normal((*w_shape, *([k] * rank)), dtype=np.float32)
        b = rng.standard_normal((cout,), dtype=np.float32) if bias else None
        return (x, w, b, [stride] * rank, [pad] * rank, [dil] * rank, transposed, [0] * rank, groups)
    return make


def _fuzz(f: Any) -> list[Any]:
    n, groups = f.small_int(1, 2), f.small_int(1, 2)
    cin, cout = groups * f.small_int(1, 2), groups * f.small_int(1, 2)
    h, w, k = f.small_int(3, 7), f.small_int(3, 7), f.small_int(1, 3)
    s, p, d = f.small_int(1, 2), f.small_int(0, 1), f.small_int(1, 2)
    dt = f.pick(f.FLOATS[:2])
    bias = f.filled((cout,), dt) if f.chance(0.5) else None
    return [f.filled((n, cin, h, w), dt), f.filled((cout, cin // groups, k, k), dt), bias, [s, s], [p, p], [d, d],
            False, [0, 0], groups]


def _c_arguments(args: list[Any], out_like: Any) -> list[Any]:
    x, w, b, stride, padding, dilation, transposed, output_padding, groups = args[:9]
    cube = args[9] if len(args) > 9 else 0
    shape = _check(x, w, b, tuple(stride), tuple(padding), tuple(dilation), transposed,
                   None if output_padding is None else tuple(output_padding), groups, cube).out_shape
    return [*args[:9], out_like(shape, x.dtype), cube]


OPERATOR = register(Operator(
    convolution, "Convolution", header="aclnn_convolution.h", package="ops-nn", library="libopapi_nn.so",
    outputs=("output",), case=_case,
    selftest=(((2, 4, 7, 6), DTYPES, dict(out_channels=6, kernel=3, stride=(2, 1), padding=1, groups=2)),
              ((2, 4, 5, 5), (FLOAT32,), dict(out_channels=3, kernel=3, stride=2, padding=1, transposed=True,
                                               cube_math_type=1))),
    bench=((8, 64, 28, 28), dict(out_channels=64, kernel=3, stride=1, padding=1, dilation=1, groups=1,
                                 transposed=False, bias=True, cube_math_type=0)),
    torch=_torch, fuzz=_fuzz, c_arguments=_c_arguments, dtypes=DTYPE_RULES,
    # MindStudio's accuracy checker holds conv1d and conv2d to the double thousandth in both directions
    # (msprobe api_precision_compare.py: a ThousandthStandard API's forward and backward rows alike;
    # api_accuracy_checker.md: "仅conv1d和conv2d使用该指标"), as ConvolutionBackward is here
    precision=DOUBLE_THOUSANDTH,
    benchmarks=(
        ("convolution 2d resnet 3x3 (8,64,56,56)", _layer(8, 64, (56, 56), 64, 3, pad=1)),
        ("convolution 2d resnet 3x3 (8,128,28,28)", _layer(8, 128, (28, 28), 128, 3, pad=1)),
        ("convolution 2d resnet stem 7x7 s2 (8,3,224,224)", _layer(8, 3, (224, 224), 64, 7, stride=2, pad=3)),
        ("convolution 2d resnet 1x1 (8,256,56,56)->64", _layer(8, 256, (56, 56), 64, 1)),
        ("convolution 2d resnet 1x1 stride 2 (8,256,56,56)->512", _layer(8, 256, (56, 56), 512, 1, stride=2)),
        ("convolution 2d vgg 3x3 bias (4,128,112,112)", _layer(4, 128, (112, 112), 128, 3, pad=1, bias=True)),
        ("convolution 2d depthwise 3x3 (8,128,56,56)", _layer(8, 128, (56, 56), 128, 3, pad=1, groups=128)),
        ("convolution 2d transposed k4 s2 (8,64,28,28)->32", _layer(8, 64, (28, 28), 32, 4, stride=2, pad=1,
                                                            transposed=True)),
        ("convolution 1d k5 (16,64,1024)", _layer(16, 64, (1024,), 64, 5, pad=2)),
        ("convolution 3d k3 (2,16,16,32,32)", _layer(2, 16, (16, 32, 32), 16, 3, pad=1)),
        ("convolution 2d tiny bias (1,1,4,4)", _layer(1, 1, (4, 4), 1, 3, pad=1, bias=True)))))
