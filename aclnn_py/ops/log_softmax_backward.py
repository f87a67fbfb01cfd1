"""aclnnLogSoftmaxBackwardGetWorkspaceSize / aclnnLogSoftmaxBackward: the gradient of
``log_softmax``.

C header ``aclnnop/aclnn_logsoftmax_backward.h`` (ops-nn ``activation/log_softmax_grad``)::

    aclnnStatus aclnnLogSoftmaxBackwardGetWorkspaceSize(const aclTensor *gradOutput, const aclTensor *output,
                                                        int64_t dim, aclTensor *out, uint64_t *workspaceSize,
                                                        aclOpExecutor **executor);
    aclnnStatus aclnnLogSoftmaxBackward(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                        aclrtStream stream);

Computes ``out = gradOutput - exp(output) * sum(gradOutput, dim)`` (PyTorch's
``_log_softmax_backward_data``), in gradOutput's dtype (FLOAT16/BFLOAT16 in FLOAT, rounded
once), then converted to out's dtype, which CANN does not check in phase 1 (one outside the
documented FLOAT, FLOAT16, BFLOAT16 fails in its final Cast; refused here after the inputs'
dtypes, as documented; the function makes gradOutput's).

Constraints, in the order CANN checks them (each violation is 161002 unless noted):

1. output, then gradOutput, then out are required (None: 161001).
2. An empty gradOutput or output succeeds before any other check (A2/A3).
3. output, then gradOutput, dtype in FLOAT, FLOAT16, BFLOAT16; the two equal.
4. gradOutput and output have at most 8 dims; output and out have gradOutput's shape.
5. dim in ``[-max(r, 1), max(r, 1) - 1]`` for gradOutput of rank r (after the shapes, unlike
   SoftmaxBackward).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from .._convert.executor import planned
from .._convert.typed import TypedCall
from .._convert.values import int_arg, tensor_arg
from .._numpy import reduce as _red
from .._numpy.plans import NumpyOp, Prepared, plan
from .._runtime.tensor import Tensor
from ._checks import check_dtype, check_not_null, check_same_dtype, check_same_shape
from ._dispatch import dispatch, documented
from ._elementwise import check_rank
from ._reduce import check_dim, lane_outputs, lane_plan
from ._registry import numpy_dtypes

API = "aclnnLogSoftmaxBackwardGetWorkspaceSize"

#: The dtypes each rule accepts: the one table of these checks (the simulator's are generated from it).
DTYPE_RULES = {"DTYPES": ("ACL_FLOAT", "ACL_FLOAT16", "ACL_BF16")}
DTYPES = numpy_dtypes(DTYPE_RULES["DTYPES"])


def _prepare(grad_output: object, output: object, dim: object) -> Prepared:
    """The numpy path: check in CANN's order, then compute in gradOutput's dtype."""
    dim = int_arg(API, "dim", dim)
    grad_output = tensor_arg(API, "gradOutput", grad_output)
    output = tensor_arg(API, "output", output)
    check_not_null(API, output=output, gradOutput=grad_output)
    assert grad_output is not None and output is not None  # (just checked)
    dtype = grad_output.dtype
    if grad_output.size == 0 or output.size == 0:
        shape = grad_output.shape
        return plan(lambda *_: np.empty(shape, dtype), 0), ()
    check_dtype(API, "output", output, DTYPES)
    check_dtype(API, "gradOutput", grad_output, DTYPES)
    check_same_dtype(API, "gradOutput", grad_output, "output", output)
    check_rank(API, "gradOutput", grad_output.shape)
    check_rank(API, "output", output.shape)
    check_same_shape(API, "output", output, "gradOutput", grad_output)
    wrapped = check_dim(API, "dim", dim, "gradOutput", grad_output.ndim)
    return lane_plan(API, _red.log_softmax_backward, ("gradOutput", "output"), (grad_output, output), dtype,
                     wrapped)


_numpy = NumpyOp(_prepare)


#: The npu/sim path: the two-phase C call, the arguments converted by their declared C types.
_aclnn = planned(TypedCall("LogSoftmaxBackward", lane_outputs))
_MADE = {"out": "gradOutput's shape and dtype"}


@documented
def log_softmax_backward(grad_output: ArrayLike | Tensor, output: ArrayLike | Tensor, dim: int, *,
                         backend: str | None = None, stream: object = None) -> np.ndarray | Tensor:
    """The gradient of ``log_softmax`` along ``dim``: ``grad_output - exp(output) *
    sum(grad_output, dim)``.

    Mirrors ``aclnnLogSoftmaxBackwardGetWorkspaceSize`` + ``aclnnLogSoftmaxBackward``.

    Args:
        grad_output: gradOutput, at most 8 dims; FLOAT, FLOAT16 or BFLOAT16.
        output: the forward result (log-probabilities), gradOutput's shape and dtype.
        dim: in ``[-max(r, 1), max(r, 1) - 1]`` for gradOutput of rank r.
        {backend_and_stream}

    {tensor_arguments}

    Returns:
        out: gradOutput's shape and dtype.

    Raises:
        AclnnError: 161001 if an argument is None; 161002 for a dtype, rank, shape or dim outside
            the constraints in the module docstring.
        TypeError: an argument of the wrong Python type.
    """
    result: np.ndarray | Tensor = dispatch(backend, _numpy, _aclnn, grad_output, output, dim, stream=stream,
                                           made=_MADE)
    return result


# -- registration: what the tools know of this operator (ops/_registry.py) -------------------------

from typing import Any  # noqa: E402

from ._reduce import lane_registration  # noqa: E402
from ._registry import Operator, register  # noqa: E402


def _torch(torch: Any, grad: Any, output: Any, dim: int) -> Any:
    return torch.ops.aten._log_softmax_backward_data(grad, output, dim, grad.dtype)


OPERATOR = register(Operator(
    log_softmax_backward, "LogSoftmaxBackward", header="aclnn_logsoftmax_backward.h", package="ops-nn",
    library="libopapi_nn.so",
    selftest=(((8, 10), DTYPES, dict()), ((2, 3, 4, 5), DTYPES[:1], dict(dim=1))),
    torch=_torch, dtypes=DTYPE_RULES, **lane_registration("log_softmax_backward", backward=True, log=True)))
