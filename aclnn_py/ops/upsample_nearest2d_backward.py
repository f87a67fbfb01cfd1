"""aclnnUpsampleNearest2dBackwardGetWorkspaceSize / aclnnUpsampleNearest2dBackward: the gradient of
legacy nearest resizing with respect to its input.

C header ``aclnnop/aclnn_upsample_nearest_2d_backward.h`` (ops-cv ``image/upsample_nearest2d_grad``)::

    aclnnStatus aclnnUpsampleNearest2dBackwardGetWorkspaceSize(
        const aclTensor *gradOut, const aclIntArray *outputSize, const aclIntArray *inputSize,
        double scalesH, double scalesW, aclTensor *gradInput, uint64_t *workspaceSize,
        aclOpExecutor **executor);
    aclnnStatus aclnnUpsampleNearest2dBackward(void *workspace, uint64_t workspaceSize,
                                               aclOpExecutor *executor, aclrtStream stream);

Computes aten ``upsample_nearest2d_backward``: ``gradInput[h, w]`` is the sum of the gradients of
the outputs copied from ``(h, w)``; an output row's source is ``floor(h' / scalesH)`` when
scalesH > 0, else ``floor(h' * H / oH)`` (at most H - 1; W alike: PyTorch's rule, the index maps
of ``_numpy/pooling.py``).  How CANN's kernel uses the scales is not verified.  Computed in
float32 (FLOAT16 and BFLOAT16 as CANN does).  NCHW only here (the binding describes 4-D
tensors as NCHW), so inputSize is ``[N, C, H, W]``.

Checks, in CANN's order (each 161002 unless noted):

1. gradOut, outputSize, inputSize (and gradInput) required (None: 161001).
2. gradOut dtype FLOAT, FLOAT16 or BFLOAT16; gradInput's == gradOut's.
3. gradOut 4-D; outputSize 2 elements; inputSize 4 elements.
4. gradInput's N, C == gradOut's.
5. inputSize H, W > 0 and outputSize values > 0; gradOut of shape ``[N, C, oH, oW]`` (N, C from
   inputSize); gradInput's H, W == inputSize's (CANN checks this on one path only; always here).
6. An empty gradOut or gradInput: success, a zero gradient.
"""

from __future__ import annotations

import math

from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike

from .._convert.executor import dtype_of, planned, shape_of
from .._convert.typed import Output, TypedCall
from .._convert.values import float_arg, host_array, int_array_arg, tensor_arg
from .._numpy.plans import NumpyOp, Prepared, plan
from .._numpy.pooling import nearest_grad
from .._runtime.memory import check_allocation
from .._runtime.tensor import Tensor
from ._checks import check, check_dtype, check_length, check_not_null, format_name, shape_str
from ._dispatch import dispatch, documented
from ._registry import numpy_dtypes

API = "aclnnUpsampleNearest2dBackwardGetWorkspaceSize"

#: The dtypes each rule accepts: the one table of these checks (the simulator's are generated from it).
DTYPE_RULES = {"DTYPES": ("ACL_FLOAT", "ACL_FLOAT16", "ACL_BF16")}
DTYPES = numpy_dtypes(DTYPE_RULES["DTYPES"])


def _made_shape(go: tuple[int, ...], input_size: tuple[int, ...] | None) -> tuple[int, ...]:
    """gradInput's shape: inputSize, or gradOut's as a stand-in where inputSize is no valid shape."""
    if input_size is None or len(input_size) != 4 or min(input_size) < 0:
        return go
    return input_size


def _geometry(go: tuple[int, ...], out_size: tuple[int, ...], in_size: tuple[int, ...],
              grad_input: tuple[int, ...]) -> None:
    """Checks 3-5."""
    check(API, len(go) == 4, lambda: f"gradOut must be 4-D (NCHW), got {format_name(len(go))} shape {shape_str(go)}")
    check_length(API, "outputSize", out_size, 2)
    check_length(API, "inputSize", in_size, 4)
    check(API, len(grad_input) == 4 and grad_input[:2] == go[:2],
          lambda: f"gradInput N and C must equal gradOut's, got gradInput {shape_str(grad_input)} and gradOut "
          f"{shape_str(go)}")
    check(API, min(in_size[2:]) > 0 and min(out_size) > 0,
          lambda: f"inputSize H, W and outputSize must be > 0, got inputSize {shape_str(in_size)} and outputSize "
          f"{shape_str(out_size)}")
    expected = (*in_size[:2], *out_size)
    check(API, go == expected, lambda: f"gradOut shape must be {shape_str(expected)}, got {shape_str(go)}")
    check(API, grad_input[2:] == in_size[2:], lambda: f"gradInput H, W must equal inputSize's, got gradInput "
                                                      f"{shape_str(grad_input)} and inputSize {shape_str(in_size)}")


def _prepare(grad_out: object, output_size: object, input_size: object, scales_h: object,
             scales_w: object) -> Prepared:
    """The numpy path: check in CANN's order, then one run sum per axis (``_numpy/pooling.py``)."""
    sh, sw = float_arg(API, "scalesH", scales_h), float_arg(API, "scalesW", scales_w)
    grad_out = tensor_arg(API, "gradOut", grad_out)
    out_size = int_array_arg(API, "outputSize", output_size)
    in_size = int_array_arg(API, "inputSize", input_size)
    check_not_null(API, gradOut=grad_out, outputSize=out_size, inputSize=in_size)
    assert grad_out is not None and out_size is not None and in_size is not None
    check_dtype(API, "gradOut", grad_out, DTYPES)
    shape = _made_shape(grad_out.shape, in_size)
    _geometry(grad_out.shape, out_size, in_size, shape)
    dtype = grad_out.dtype
    nbytes = math.prod(map(int, shape)) * dtype.itemsize
    empty = grad_out.size == 0 or 0 in shape

    def run(grad_out: object, *_: object) -> np.ndarray:
        check_allocation(nbytes)
        if empty:
            return np.zeros(shape, dtype)
        grad = host_array(API, "gradOut", grad_out)
        planes = grad.reshape(-1, *grad.shape[-2:]).astype(np.float32, copy=False)
        return nearest_grad(planes, shape[2], shape[3], (sh, sw)).astype(dtype, copy=False).reshape(shape)

    return plan(run, nbytes + grad_out.nbytes), (grad_out,)


_numpy = NumpyOp(_prepare, floats=True)  # (its plan holds scalesH and scalesW by value)


def _outputs(grad_out: object, output_size: object, input_size: tuple[int, ...] | None, *_: object) -> list[Output]:
    """gradInput: inputSize's shape (gradOut's as a stand-in where inputSize is none), gradOut's
    dtype; zeros when a tensor is empty (CANN writes nothing then)."""
    shape = _made_shape(shape_of(grad_out), input_size)
    return [Output(shape, dtype_of(grad_out), zero=0 in shape or 0 in shape_of(grad_out))]


def _shape_checks(grad_out: object, output_size: tuple[int, ...] | None, input_size: tuple[int, ...] | None,
                  *_: object) -> None:
    assert output_size is not None and input_size is not None
    _geometry(shape_of(grad_out), output_size, input_size, _made_shape(shape_of(grad_out), input_size))


#: The npu/sim path: the two-phase C call, the arguments converted by their declared C types.
_aclnn = planned(TypedCall("UpsampleNearest2dBackward", _outputs, checks=_shape_checks))
_MADE = {"gradInput": "inputSize and gradOut's dtype"}


@documented
def upsample_nearest2d_backward(grad_out: ArrayLike | Tensor, output_size: Sequence[int], input_size: Sequence[int],
                                scales_h: float = 0.0, scales_w: float = 0.0, *, backend: str | None = None,
                                stream: object = None) -> np.ndarray | Tensor:
    """Gradient of legacy nearest resizing (``aten.upsample_nearest2d_backward``): each input cell
    the sum of the gradients of the outputs copied from it.

    Mirrors ``aclnnUpsampleNearest2dBackwardGetWorkspaceSize`` + ``aclnnUpsampleNearest2dBackward``.

    Args:
        grad_out: gradOut, ``(N, C, oH, oW)``; FLOAT, FLOAT16 or BFLOAT16.
        output_size: outputSize, the forward's ``[oH, oW]``; values > 0.
        input_size: inputSize, the forward input's ``[N, C, H, W]``; H, W > 0.
        scales_h: the forward's H scale factor (<= 0: unset, the sizes decide).
        scales_w: the forward's W scale factor (<= 0: unset).
        {backend_and_stream}

    {tensor_arguments}

    Returns:
        gradInput: ``input_size`` in gradOut's dtype (computed in float32).

    Raises:
        AclnnError: 161001 if an argument is None; 161002 for a dtype, rank, length or shape
            outside the constraints above.
        TypeError: an argument of the wrong Python type.
    """
    result: np.ndarray | Tensor = dispatch(backend, _numpy, _aclnn, grad_out, output_size, input_size, scales_h,
                                           scales_w, stream=stream, made=_MADE)
    return result


# -- registration: what the tools know of this operator (ops/_registry.py) -------------------------

from typing import Any  # noqa: E402

from ._cases import OpCall, dims, pair, random_array  # noqa: E402
from ._registry import Operator, register  # noqa: E402


def _case(rng: np.random.Generator, shape: Sequence[int], dtype: np.dtype,
          output_size: int | Sequence[int] = (7, 13)) -> OpCall:
    size = list(pair(output_size))
    return OpCall("upsample_nearest2d_backward", (random_array(rng, (*shape[:2], *size), dtype), size, list(shape),
                                                  0.0, 0.0), case=f"from {dims(size)}")


def _torch(torch: Any, grad: Any, output_size: Any, input_size: Any, scales_h: float = 0.0,
           scales_w: float = 0.0) -> Any:
    return torch.ops.aten.upsample_nearest2d_backward(grad, list(output_size), list(input_size),
                                                      scales_h if scales_h > 0 else None,
                                                      scales_w if scales_w > 0 else None)


def _layer(n: int, c: int, h: int, w: int, oh: int, ow: int) -> Any:
    def make(rng: np.random.Generator) -> tuple[Any, ...]:
        return (rng.standard_normal((n, c, oh, ow), dtype=np.float32), [oh, ow], [n, c, h, w], 0.0, 0.0)
    return make


def _fuzz(f: Any) -> list[Any]:
    n, c, h, w = f.small_int(1, 2), f.small_int(1, 3), f.small_int(1, 6), f.small_int(1, 6)
    oh, ow = f.small_int(1, 12), f.small_int(1, 12)
    return [f.filled((n, c, oh, ow), f.pick(f.FLOATS)), [oh, ow], [n, c, h, w], 0.0, 0.0]


def _c_arguments(args: list[Any], out_like: Any) -> list[Any]:
    return [*args[:3], *(args[3:5] if len(args) > 3 else (0.0, 0.0)), out_like(tuple(args[2]), args[0].dtype)]


OPERATOR = register(Operator(
    upsample_nearest2d_backward, "UpsampleNearest2dBackward", header="aclnn_upsample_nearest_2d_backward.h",
    package="ops-cv", library="libopapi_cv.so", outputs=("gradInput",), case=_case,
    selftest=(((2, 3, 5, 6), DTYPES, dict(output_size=(7, 13))),
              ((1, 2, 8, 8), DTYPES[:1], dict(output_size=(4, 3)))),
    bench=((8, 256, 28, 28), dict(output_size=(56, 56))),
    torch=_torch, memory_bound=True, fuzz=_fuzz, c_arguments=_c_arguments, dtypes=DTYPE_RULES,
    benchmarks=(("upsample_nearest2d_backward fpn x2 (8,256,28,28)<-56", _layer(8, 256, 28, 28, 56, 56)),
                ("upsample_nearest2d_backward unet x2 (8,128,64,64)<-128", _layer(8, 128, 64, 64, 128, 128)),
                ("upsample_nearest2d_backward yolo x2 (8,256,13,13)<-26", _layer(8, 256, 13, 13, 26, 26)),
                ("upsample_nearest2d_backward tiny (1,1,2,2)<-4", _layer(1, 1, 2, 2, 4, 4)))))
