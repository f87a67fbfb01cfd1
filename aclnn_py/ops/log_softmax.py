"""aclnnLogSoftmaxGetWorkspaceSize / aclnnLogSoftmax: ``log_softmax`` along one dim.

C header ``aclnnop/aclnn_logsoftmax.h`` (ops-nn ``activation/log_softmax_v2``)::

    aclnnStatus aclnnLogSoftmaxGetWorkspaceSize(const aclTensor *self, int64_t dim, aclTensor *out,
                                                uint64_t *workspaceSize, aclOpExecutor **executor);
    aclnnStatus aclnnLogSoftmax(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                aclrtStream stream);

Computes ``torch.log_softmax(self, dim)``, stable for large values (the numpy backend subtracts
each lane's max where a value is above 64: ``_numpy/reduce.log_softmax``). Unlike Softmax,
self is first converted to out's dtype and the operation runs in out's dtype (FLOAT16 and
BFLOAT16 in FLOAT, rounded once). A 0-d self gives 0.

Constraints, in the order CANN checks them (each violation is 161002 unless noted):

1. self and out are required (None: 161001).
2. dim in ``[-max(r, 1), max(r, 1) - 1]`` for self of rank r (before the dtypes).
3. self, then out, dtype in FLOAT, FLOAT16, DOUBLE, BFLOAT16 (A2/A3).
4. self and out have at most 8 dims; out has self's shape.
5. An empty self gives an empty result (after every check above).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from .._convert.executor import planned
from .._convert.typed import TypedCall
from .._convert.values import int_arg, tensor_arg
from .._numpy import reduce as _red
from .._numpy.plans import NumpyOp, Prepared
from .._runtime.tensor import Tensor
from ._checks import check_dtype, check_not_null
from ._dispatch import dispatch, documented
from ._elementwise import check_rank
from ._reduce import check_dim, lane_outputs, lane_plan
from ._registry import numpy_dtypes

API = "aclnnLogSoftmaxGetWorkspaceSize"

#: The dtypes each rule accepts: the one table of these checks (the simulator's are generated from it).
DTYPE_RULES = {"DTYPES": ("ACL_FLOAT", "ACL_FLOAT16", "ACL_DOUBLE", "ACL_BF16")}
DTYPES = numpy_dtypes(DTYPE_RULES["DTYPES"])


def _prepare(self: object, dim: object) -> Prepared:
    """The numpy path: check in CANN's order, then compute in out's dtype (here self's)."""
    dim = int_arg(API, "dim", dim)
    self = tensor_arg(API, "self", self)
    check_not_null(API, self=self)
    assert self is not None  # (just checked)
    wrapped = check_dim(API, "dim", dim, "self", self.ndim)
    check_dtype(API, "self", self, DTYPES)
    check_rank(API, "self", self.shape)
    dtype = self.dtype
    return lane_plan(API, _red.log_softmax, ("self",), (self,), dtype, wrapped)


_numpy = NumpyOp(_prepare)


#: The npu/sim path: the two-phase C call, the arguments converted by their declared C types.
_aclnn = planned(TypedCall("LogSoftmax", lane_outputs))
_MADE = {"out": "self's shape and dtype"}


@documented
def log_softmax(self: ArrayLike | Tensor, dim: int, *, backend: str | None = None,
                stream: object = None) -> np.ndarray | Tensor:
    """``log_softmax`` of ``self`` along ``dim`` (``torch.log_softmax``).

    Mirrors ``aclnnLogSoftmaxGetWorkspaceSize`` + ``aclnnLogSoftmax``.

    Args:
        self: at most 8 dims; FLOAT, FLOAT16, DOUBLE or BFLOAT16 (computed in FLOAT for the
            16-bit types, rounded once).
        dim: in ``[-max(r, 1), max(r, 1) - 1]`` for self of rank r.
        {backend_and_stream}

    {tensor_arguments}

    Returns:
        out: self's shape and dtype.

    Raises:
        AclnnError: 161001 if self is None; 161002 for dim out of range, a dtype outside the
            list or more than 8 dims.
        TypeError: an argument of the wrong Python type.
    """
    result: np.ndarray | Tensor = dispatch(backend, _numpy, _aclnn, self, dim, stream=stream, made=_MADE)
    return result


# -- registration: what the tools know of this operator (ops/_registry.py) -------------------------

from typing import Any  # noqa: E402

from ._reduce import lane_registration  # noqa: E402
from ._registry import Operator, register  # noqa: E402


def _torch(torch: Any, self: Any, dim: int) -> Any:
    return torch.log_softmax(self, dim)


OPERATOR = register(Operator(
    log_softmax, "LogSoftmax", header="aclnn_logsoftmax.h", package="ops-nn", library="libopapi_nn.so",
    selftest=(((8, 10), DTYPES, dict()), ((2, 3, 4, 5), DTYPES[:1], dict(dim=1)), ((7,), DTYPES[:1], dict(dim=0))),
    torch=_torch, dtypes=DTYPE_RULES, **lane_registration("log_softmax", backward=False, log=True)))
