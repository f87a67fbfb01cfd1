"""aclnnReluGetWorkspaceSize / aclnnRelu: ``out = max(self, 0)``.

C header ``aclnnop/aclnn_relu.h`` (ops-nn ``activation/relu``)::

    aclnnStatus aclnnReluGetWorkspaceSize(const aclTensor* self, const aclTensor* out, uint64_t* workspaceSize,
                                          aclOpExecutor** executor);
    aclnnStatus aclnnRelu(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor, const aclrtStream stream);

CANN declares ``out`` const and writes it: ``aclnn_py.call`` writes it back like any output
(``_convert/params.py``, ``WRITTEN_CONST``). Computes ``torch.relu(self)`` in self's dtype
(a NaN stays NaN, as in PyTorch; the device's NaN handling is not verified).

Constraints, in the order CANN checks them (each violation is 161002 unless noted):

1. workspaceSize and executor, then self and out, are required (None: 161001).
2. self, then out, dtype in FLOAT, FLOAT16, BFLOAT16, INT8, INT32, INT64 (A2/A3's list in
   ops-nn's current code and doc; no UINT8); out's dtype equals self's (``call`` only: the
   function makes out).
3. out has self's shape; self and out have at most 8 dims.
4. An empty self gives an empty result.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from .._convert.executor import dtype_of, planned, shape_of
from .._convert.typed import Output, TypedCall
from .._convert.values import host_array, tensor_arg
from .._numpy import elementwise as _ew
from .._numpy.plans import NumpyOp, Prepared, plan
from .._runtime.memory import check_allocation
from .._runtime.tensor import Tensor
from ._checks import check_dtype, check_not_null
from ._dispatch import dispatch, documented
from ._elementwise import check_rank
from ._registry import numpy_dtypes

API = "aclnnReluGetWorkspaceSize"

#: The dtypes each rule accepts: the one table of these checks (the simulator's are generated from it).
DTYPE_RULES = {"DTYPES": ("ACL_FLOAT", "ACL_FLOAT16", "ACL_BF16", "ACL_INT8", "ACL_INT32", "ACL_INT64")}
DTYPES = numpy_dtypes(DTYPE_RULES["DTYPES"])


def _prepare(self: object) -> Prepared:
    """The numpy path: check in CANN's order, then ``max(self, 0)`` in self's dtype."""
    self = tensor_arg(API, "self", self)
    check_not_null(API, self=self)
    assert self is not None  # (just checked)
    check_dtype(API, "self", self, DTYPES)
    check_rank(API, "self", self.shape)
    dtype, nbytes, zero = self.dtype, self.nbytes, np.zeros((), self.dtype)
    kernel = _ew.compiled(_ew.MAX, self, zero, dtype, dtype)

    def run(self: object) -> np.ndarray:
        check_allocation(nbytes)
        return kernel(host_array(API, "self", self), zero)

    return plan(run, 2 * nbytes), (self,)


_numpy = NumpyOp(_prepare)


def _outputs(self: object) -> list[Output]:
    """out: self's shape and dtype."""
    return [Output(shape_of(self), dtype_of(self))]


#: The npu/sim path: the two-phase C call, the arguments converted by their declared C types.
_aclnn = planned(TypedCall("Relu", _outputs))
_MADE = {"out": "self's shape and dtype"}


@documented
def relu(self: ArrayLike | Tensor, *, backend: str | None = None, stream: object = None) -> np.ndarray | Tensor:
    """``max(self, 0)`` elementwise (``torch.relu``).

    Mirrors ``aclnnReluGetWorkspaceSize`` + ``aclnnRelu``.

    Args:
        self: any shape of at most 8 dims; FLOAT, FLOAT16, BFLOAT16, INT8, INT32 or INT64.
        {backend_and_stream}

    {tensor_arguments}

    Returns:
        out: self's shape and dtype (a NaN stays NaN).

    Raises:
        AclnnError: 161001 if self is None; 161002 for a dtype outside the list or more than
            8 dims.
        TypeError: an argument of the wrong Python type.
    """
    result: np.ndarray | Tensor = dispatch(backend, _numpy, _aclnn, self, stream=stream, made=_MADE)
    return result


# -- registration: what the tools know of this operator (ops/_registry.py) -------------------------

from typing import Any  # noqa: E402

from ._cases import OpCall, random_array  # noqa: E402
from ._elementwise import scalar_layers  # noqa: E402
from ._registry import Operator, register  # noqa: E402


def _case(rng: np.random.Generator, shape: Any, dtype: np.dtype) -> OpCall:
    return OpCall("relu", (random_array(rng, shape, dtype),))


def _torch(torch: Any, self: Any) -> Any:
    return torch.relu(self)


def _fuzz(f: Any) -> list[Any]:
    return [f.filled(f.shape(), f.pick(f.FLOATS))]


def _c_arguments(args: list[Any], out_like: Any) -> list[Any]:
    return [args[0], out_like(args[0].shape, args[0].dtype)]


OPERATOR = register(Operator(
    relu, "Relu", header="aclnn_relu.h", package="ops-nn", library="libopapi_nn.so", outputs=("out",),
    case=_case, selftest=(((2, 3, 4, 5), DTYPES, dict()), ((7, 33), DTYPES[:1], dict())),
    bench=((8, 64, 56, 56), dict()),
    torch=_torch, memory_bound=True, fuzz=_fuzz, c_arguments=_c_arguments, dtypes=DTYPE_RULES,
    benchmarks=scalar_layers("relu", lambda a: (a,))))
