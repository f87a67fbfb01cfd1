"""aclnnAdaptiveAvgPool2dBackwardGetWorkspaceSize / aclnnAdaptiveAvgPool2dBackward: the gradient of
2-D adaptive average pooling with respect to its input.

C header ``aclnnop/aclnn_adaptive_avg_pool2d_backward.h`` (ops-nn ``pooling/adaptive_avg_pool2d_grad``)::

    aclnnStatus aclnnAdaptiveAvgPool2dBackwardGetWorkspaceSize(const aclTensor *gradOutput, const aclTensor *self,
                                                               aclTensor *out, uint64_t *workspaceSize,
                                                               aclOpExecutor **executor);
    aclnnStatus aclnnAdaptiveAvgPool2dBackward(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                               const aclrtStream stream);

Computes aten ``_adaptive_avg_pool2d_backward(gradOutput, self)``: each ``gradOutput[i, j]`` is
divided by its window's area and added to every element of its window, the forward's windows
for self's (H, W) and gradOutput's (oH, oW) (``adaptive_avg_pool2d``).  Computed in float32.

Checks, in CANN's order (each 161002 unless noted):

1. gradOutput and self (and out) required (None: 161001).
2. gradOutput has self's rank.
3. out 3-D or 4-D, of self's rank; out's and gradOutput's dims before the last two are self's.
4. gradOutput and self dtype FLOAT, FLOAT16 or BFLOAT16, equal.
5. gradOutput's format == self's.
6. Beyond CANN's phase 1 (which leaves it unchecked): out's H, W == self's (out is self's
   gradient).
7. An empty self or gradOutput: success, a zero gradient.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from .._convert.executor import dtype_of, planned, shape_of
from .._convert.typed import Output, TypedCall
from .._convert.values import host_array, tensor_arg
from .._numpy.plans import NumpyOp, Prepared, plan
from .._numpy.pooling import adaptive_avg_grad
from .._runtime.memory import check_allocation
from .._runtime.tensor import Tensor
from ._checks import check, check_dtype, check_not_null, check_same_dtype, shape_str
from ._dispatch import dispatch, documented
from ._registry import numpy_dtypes

API = "aclnnAdaptiveAvgPool2dBackwardGetWorkspaceSize"

#: The dtypes each rule accepts: the one table of these checks (the simulator's are generated from it).
DTYPE_RULES = {"DTYPES": ("ACL_FLOAT", "ACL_FLOAT16", "ACL_BF16")}
DTYPES = numpy_dtypes(DTYPE_RULES["DTYPES"])


def _check_shapes(go: tuple[int, ...], self: tuple[int, ...]) -> None:
    """Checks 2-3 (out has self's shape here)."""
    check(API, len(go) == len(self), lambda: f"gradOutput must have self's rank, got gradOutput {shape_str(go)} "
                                             f"and self {shape_str(self)}")
    check(API, len(self) in (3, 4), lambda: f"out must be 3-D or 4-D, got {shape_str(self)}")
    check(API, go[:-2] == self[:-2], lambda: f"gradOutput's dims before H, W must be self's, got gradOutput "
                                             f"{shape_str(go)} and self {shape_str(self)}")


def _prepare(grad_output: object, self: object) -> Prepared:
    """The numpy path: check in CANN's order, then the transposed averaging matrices."""
    grad_output = tensor_arg(API, "gradOutput", grad_output)
    self = tensor_arg(API, "self", self)
    check_not_null(API, gradOutput=grad_output, self=self)
    assert grad_output is not None and self is not None
    _check_shapes(grad_output.shape, self.shape)
    check_dtype(API, "gradOutput", grad_output, DTYPES)
    check_dtype(API, "self", self, DTYPES)
    check_same_dtype(API, "gradOutput", grad_output, "self", self)
    shape, dtype = self.shape, self.dtype
    nbytes = self.size * dtype.itemsize
    empty = self.size == 0 or grad_output.size == 0

    def run(grad_output: object, *_: object) -> np.ndarray:
        check_allocation(nbytes)
        if empty:
            return np.zeros(shape, dtype)
        grad = host_array(API, "gradOutput", grad_output)
        planes = grad.reshape(-1, *grad.shape[-2:]).astype(np.float32, copy=False)
        return adaptive_avg_grad(planes, shape[-2], shape[-1]).astype(dtype, copy=False).reshape(shape)

    return plan(run, nbytes + grad_output.nbytes), (grad_output,)


_numpy = NumpyOp(_prepare)


def _outputs(grad_output: object, self: object) -> list[Output]:
    """out: self's shape and dtype (zeros when a tensor is empty: CANN writes nothing then)."""
    return [Output(shape_of(self if self is not None else grad_output), dtype_of(self),
                   zero=0 in shape_of(self) or 0 in shape_of(grad_output))]


#: The npu/sim path: the two-phase C call, the arguments converted by their declared C types.
_aclnn = planned(TypedCall("AdaptiveAvgPool2dBackward", _outputs))
_MADE = {"out": "self's shape and dtype"}


@documented
def adaptive_avg_pool2d_backward(grad_output: ArrayLike | Tensor, self: ArrayLike | Tensor, *,
                                 backend: str | None = None, stream: object = None) -> np.ndarray | Tensor:
    """Gradient of ``F.adaptive_avg_pool2d`` with respect to its input
    (``aten._adaptive_avg_pool2d_backward``): each gradient value divided by its window's area
    and spread over the window.

    Mirrors ``aclnnAdaptiveAvgPool2dBackwardGetWorkspaceSize`` + ``aclnnAdaptiveAvgPool2dBackward``.

    Args:
        grad_output: gradOutput, ``[N,] C, oH, oW``; FLOAT, FLOAT16 or BFLOAT16, self's dtype
            and rank and leading dims.
        self: the forward's input, ``(N, C, H, W)`` or ``(C, H, W)`` (only its shape and dtype
            are used).
        {backend_and_stream}

    {tensor_arguments}

    Returns:
        out: self's shape and dtype (zeros when a tensor is empty).

    Raises:
        AclnnError: 161001 if an argument is None; 161002 for a dtype, rank or shape outside
            the constraints above.
        TypeError: an argument of the wrong Python type.
    """
    result: np.ndarray | Tensor = dispatch(backend, _numpy, _aclnn, grad_output, self, stream=stream, made=_MADE)
    return result


# -- registration: what the tools know of this operator (ops/_registry.py) -------------------------

from collections.abc import Sequence  # noqa: E402
from typing import Any  # noqa: E402

from ._cases import OpCall, dims, pair, random_array  # noqa: E402
from ._registry import Operator, register  # noqa: E402


def _case(rng: np.random.Generator, shape: Sequence[int], dtype: np.dtype,
          output_size: int | Sequence[int] = (3, 4)) -> OpCall:
    size = pair(output_size)
    return OpCall("adaptive_avg_pool2d_backward", (random_array(rng, (*shape[:-2], *size), dtype),
                                                   random_array(rng, shape, dtype)), case=f"from {dims(size)}")


def _torch(torch: Any, grad: Any, self: Any) -> Any:
    return torch.ops.aten._adaptive_avg_pool2d_backward(grad, self)


def _layer(n: int, c: int, h: int, w: int, o: int) -> Any:
    def make(rng: np.random.Generator) -> tuple[Any, ...]:
        return (rng.standard_normal((n, c, o, o), dtype=np.float32), rng.standard_normal((n, c, h, w), dtype=np.float32))
    return make


def _fuzz(f: Any) -> list[Any]:
    n, c = f.small_int(1, 2), f.small_int(1, 3)
    dt = f.pick(f.FLOATS)
    return [f.filled((n, c, f.small_int(1, 5), f.small_int(1, 5)), dt), f.filled((n, c, f.small_int(1, 9),
                                                                                   f.small_int(1, 9)), dt)]


def _c_arguments(args: list[Any], out_like: Any) -> list[Any]:
    return [*args, out_like(args[1].shape, args[1].dtype)]


OPERATOR = register(Operator(
    adaptive_avg_pool2d_backward, "AdaptiveAvgPool2dBackward", header="aclnn_adaptive_avg_pool2d_backward.h",
    package="ops-nn", library="libopapi_nn.so", outputs=("out",), case=_case,
    selftest=(((2, 3, 9, 10), DTYPES, dict(output_size=(4, 3))),
              ((3, 7, 7), DTYPES[:1], dict(output_size=1))),
    bench=((8, 512, 7, 7), dict(output_size=1)),
    torch=_torch, memory_bound=True, fuzz=_fuzz, c_arguments=_c_arguments, dtypes=DTYPE_RULES, shape_only=("self",),
    benchmarks=(("adaptive_avg_pool2d_backward resnet50 head (32,2048,7,7)<-1", _layer(32, 2048, 7, 7, 1)),
                ("adaptive_avg_pool2d_backward vgg (8,512,14,14)<-7", _layer(8, 512, 14, 14, 7)),
                ("adaptive_avg_pool2d_backward alexnet (8,256,13,13)<-6", _layer(8, 256, 13, 13, 6)),
                ("adaptive_avg_pool2d_backward tiny (1,1,4,4)<-2", _layer(1, 1, 4, 4, 2)))))
