"""aclnnThresholdBackwardGetWorkspaceSize / aclnnThresholdBackward: the gradient of
``threshold`` (ReLU's with ``threshold = 0``).

C header ``aclnnop/aclnn_threshold_backward.h`` (ops-nn ``activation/threshold_grad_v2_d``)::

    aclnnStatus aclnnThresholdBackwardGetWorkspaceSize(const aclTensor *gradOutput, const aclTensor *self,
                                                       const aclScalar *threshold, aclTensor *out,
                                                       uint64_t *workspaceSize, aclOpExecutor **executor);
    aclnnStatus aclnnThresholdBackward(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                       const aclrtStream stream);

Computes ``torch.ops.aten.threshold_backward(gradOutput, self, threshold)``: gradOutput where
self > threshold, else 0, self and gradOutput broadcast. The threshold is converted to FLOAT
and self compared as a FLOAT; a NaN self passes the gradient (as PyTorch; ops-nn's doc).

Constraints, in the order CANN checks them (each violation is 161002 unless noted):

1. threshold, then out (workspaceSize), then gradOutput and self are required (None: 161001).
2. gradOutput, then self, dtype in FLOAT, FLOAT16, BFLOAT16, INT32, INT8, UINT8 (A2/A3; no
   INT64); gradOutput's dtype equals self's, and out's (``call`` only: the function makes out).
3. gradOutput and self have at most 8 dims and broadcast; out has the broadcast shape.
4. An empty gradOutput or self gives an empty result.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike

from .._convert.executor import dtype_of, planned, shape_of
from .._convert.typed import Output, TypedCall
from .._convert.values import host_array, tensor_arg
from .._numpy import elementwise as _ew
from .._numpy.plans import NumpyOp, Prepared, plan
from .._runtime.memory import check_allocation
from .._runtime.tensor import Tensor
from ._checks import check_dtype, check_not_null, check_same_dtype
from ._dispatch import dispatch, documented
from ._elementwise import check_broadcast, check_rank, scalar_arg
from ._registry import numpy_dtypes

API = "aclnnThresholdBackwardGetWorkspaceSize"

#: The dtypes each rule accepts: the one table of these checks (the simulator's are generated from it).
DTYPE_RULES = {"DTYPES": ("ACL_FLOAT", "ACL_FLOAT16", "ACL_BF16", "ACL_INT32", "ACL_INT8", "ACL_UINT8")}
DTYPES = numpy_dtypes(DTYPE_RULES["DTYPES"])


def _prepare(grad_output: object, self: object, threshold: object) -> Prepared:
    """The numpy path: check in CANN's order, then select."""
    grad_output = tensor_arg(API, "gradOutput", grad_output)
    self = tensor_arg(API, "self", self)
    value = scalar_arg(API, "threshold", threshold)
    check_not_null(API, threshold=value, gradOutput=grad_output, self=self)
    assert grad_output is not None and self is not None and value is not None  # (just checked)
    check_dtype(API, "gradOutput", grad_output, DTYPES)
    check_dtype(API, "self", self, DTYPES)
    check_same_dtype(API, "gradOutput", grad_output, "self", self)
    shape = _shape_checks(grad_output, self, threshold)
    dtype = self.dtype
    real = np.real(value) if _ew.is_complex(value.dtype) else value.astype(np.float64)
    kernel = _ew.compiled(_ew.threshold_backward(np.float32(real)), grad_output, self, dtype, dtype)
    nbytes = math.prod(map(int, shape)) * dtype.itemsize

    def run(grad_output: object, self: object, *_: object) -> np.ndarray:
        check_allocation(nbytes)
        g, s = host_array(API, "gradOutput", grad_output), host_array(API, "self", self)
        if g.size == 0 or s.size == 0:
            return np.empty(shape, dtype)
        return kernel(g, s)

    return plan(run, nbytes + grad_output.nbytes + self.nbytes), (grad_output, self, threshold)


_numpy = NumpyOp(_prepare, floats=True)  # (its plan holds the scalars' values)


def _shape_checks(grad_output: object, self: object, threshold: object) -> tuple[int, ...]:
    """The checks the output's shape depends on; returns it."""
    check_rank(API, "gradOutput", shape_of(grad_output))
    check_rank(API, "self", shape_of(self))
    return check_broadcast(API, "self", shape_of(self), "gradOutput", shape_of(grad_output))


def _outputs(grad_output: object, self: object, threshold: object) -> list[Output]:
    """out: the broadcast shape, self's dtype."""
    shape = _ew.broadcast(shape_of(self), shape_of(grad_output))
    return [Output(shape if shape is not None else shape_of(self), dtype_of(self))]


#: The npu/sim path: the two-phase C call, the arguments converted by their declared C types.
_aclnn = planned(TypedCall("ThresholdBackward", _outputs, checks=_shape_checks))
_MADE = {"out": "the broadcast shape of self and gradOutput and self's dtype"}


@documented
def threshold_backward(grad_output: ArrayLike | Tensor, self: ArrayLike | Tensor, threshold: object, *,
                       backend: str | None = None, stream: object = None) -> np.ndarray | Tensor:
    """Gradient of ``threshold``: ``grad_output`` where ``self > threshold``, else 0 (with
    ``threshold = 0``, ReLU's gradient).

    Mirrors ``aclnnThresholdBackwardGetWorkspaceSize`` + ``aclnnThresholdBackward``.

    Args:
        grad_output: gradOutput, a shape that broadcasts with ``self``'s (at most 8 dims);
            FLOAT, FLOAT16, BFLOAT16, INT32, INT8 or UINT8, self's dtype.
        self: the forward input, at most 8 dims; the same dtypes.
        threshold: an aclScalar (a number or an ``aclnn_py.Scalar``), converted to FLOAT;
            self is compared with it as a FLOAT (a NaN self passes the gradient).
        {backend_and_stream}

    {tensor_arguments}

    Returns:
        out: the broadcast shape of self and gradOutput, self's dtype.

    Raises:
        AclnnError: 161001 if an argument is None; 161002 for a dtype, rank or broadcast
            outside the constraints in the module docstring.
        TypeError: an argument of the wrong Python type.
    """
    result: np.ndarray | Tensor = dispatch(backend, _numpy, _aclnn, grad_output, self, threshold, stream=stream,
                                           made=_MADE)
    return result


# -- registration: what the tools know of this operator (ops/_registry.py) -------------------------

from typing import Any  # noqa: E402

from ._checks import FLOAT32  # noqa: E402
from ._elementwise import fuzz_pair, tensor_case, tensor_layers  # noqa: E402
from ._registry import Operator, register  # noqa: E402


def _torch(torch: Any, grad: Any, self: Any, threshold: Any = 0) -> Any:
    return torch.ops.aten.threshold_backward(grad, self, threshold)


def _fuzz(f: Any) -> list[Any]:
    grad, self = fuzz_pair(f)
    return [grad, self.astype(grad.dtype), f.pick((0, 0.5, -1, 0.0))]


def _c_arguments(args: list[Any], out_like: Any) -> list[Any]:
    return [*args[:3], out_like(np.broadcast_shapes(args[0].shape, args[1].shape), args[1].dtype)]


OPERATOR = register(Operator(
    threshold_backward, "ThresholdBackward", header="aclnn_threshold_backward.h", package="ops-nn",
    library="libopapi_nn.so", outputs=("out",), case=tensor_case("threshold_backward", (0,)),
    selftest=(((2, 3, 4, 5), DTYPES, dict()),
              ((4, 6, 7), (FLOAT32,), dict(extra=(0.25,)))),
    bench=((8, 64, 56, 56), dict()),
    torch=_torch, memory_bound=True, fuzz=_fuzz, c_arguments=_c_arguments, dtypes=DTYPE_RULES,
    benchmarks=tensor_layers("threshold_backward", lambda g, x: (g, x, 0))))
