"""aclnnMulGetWorkspaceSize / aclnnMul: ``out = self * other`` with broadcasting.

C header ``aclnnop/aclnn_mul.h`` (ops-math ``math/mul``)::

    aclnnStatus aclnnMulGetWorkspaceSize(const aclTensor* self, const aclTensor* other, aclTensor* out,
                                         uint64_t* workspaceSize, aclOpExecutor** executor);
    aclnnStatus aclnnMul(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor, aclrtStream stream);

Computes ``torch.mul(self, other)`` in the promoted dtype of self and other (PyTorch's category
promotion, as Add), then converted to ``out``'s dtype; BOOL times BOOL is their "and".

Constraints, in the order CANN checks them (each violation is 161002 unless noted):

1. self, other, out are required (None: 161001).
2. self, other, then out dtype in FLOAT, FLOAT16, BFLOAT16, DOUBLE, INT8, UINT8, INT16, INT32,
   INT64, BOOL, COMPLEX64, COMPLEX128 (A2/A3's list; out is listed here, unlike Add's).
3. self and other promote to a common dtype, castable to out's (``call`` only: the function
   makes out of the promoted dtype).
4. self and other have at most 8 dims and broadcast; out has the broadcast shape.
5. An empty self or other gives an empty result, nothing computed.
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
from ._checks import check_dtype, check_not_null
from ._dispatch import dispatch, documented
from ._elementwise import check_broadcast, check_promoted, check_rank
from ._registry import numpy_dtypes

API = "aclnnMulGetWorkspaceSize"

#: The dtypes each rule accepts: the one table of these checks (the simulator's are generated from it).
DTYPE_RULES = {"DTYPES": ("ACL_FLOAT", "ACL_FLOAT16", "ACL_BF16", "ACL_DOUBLE", "ACL_INT8", "ACL_UINT8", "ACL_INT16",
                          "ACL_INT32", "ACL_INT64", "ACL_BOOL", "ACL_COMPLEX64", "ACL_COMPLEX128")}
DTYPES = numpy_dtypes(DTYPE_RULES["DTYPES"])


def _validate(self: object, other: object) -> tuple[np.ndarray, np.ndarray, np.dtype]:
    """Coerce and check in CANN's order; returns ``(self, other, promoted dtype)``."""
    self = tensor_arg(API, "self", self)
    other = tensor_arg(API, "other", other)
    check_not_null(API, self=self, other=other)
    assert self is not None and other is not None  # (just checked)
    check_dtype(API, "self", self, DTYPES)
    check_dtype(API, "other", other, DTYPES)
    promoted = check_promoted(API, "self", self.dtype, "other", other.dtype, _ew.promote(self.dtype, other.dtype))
    _shape_checks(self, other)
    return self, other, promoted


def _shape_checks(self: object, other: object) -> tuple[int, ...]:
    """The checks the output's shape depends on; returns it."""
    check_rank(API, "self", shape_of(self))
    check_rank(API, "other", shape_of(other))
    return check_broadcast(API, "self", shape_of(self), "other", shape_of(other))


def _prepare(self: object, other: object) -> Prepared:
    self, other, promoted = _validate(self, other)
    shape = check_broadcast(API, "self", self.shape, "other", other.shape)
    nbytes = math.prod(map(int, shape)) * promoted.itemsize
    kernel = _ew.compiled(_ew.MUL, self, other, promoted, promoted)

    def run(self: object, other: object) -> np.ndarray:
        check_allocation(nbytes)
        a, b = host_array(API, "self", self), host_array(API, "other", other)
        if a.size == 0 or b.size == 0:
            return np.empty(shape, promoted)
        return kernel(a, b)

    return plan(run, nbytes + self.nbytes + other.nbytes), (self, other)


_numpy = NumpyOp(_prepare)


def _outputs(self: object, other: object) -> list[Output]:
    """out: the broadcast shape, the promoted dtype (FLOAT where there is none: the library
    reports the dtypes)."""
    promoted = _ew.promote(dtype_of(self), dtype_of(other)) or np.dtype(np.float32)
    shape = _ew.broadcast(shape_of(self), shape_of(other))
    return [Output(shape if shape is not None else shape_of(self), promoted)]


#: The npu/sim path: the two-phase C call, the arguments converted by their declared C types.
_aclnn = planned(TypedCall("Mul", _outputs, checks=_shape_checks))
_MADE = {"out": "the broadcast shape of self and other and their promoted dtype"}


@documented
def mul(self: ArrayLike | Tensor, other: ArrayLike | Tensor, *, backend: str | None = None,
        stream: object = None) -> np.ndarray | Tensor:
    """``self * other`` (``torch.mul``), broadcasting self and other.

    Mirrors ``aclnnMulGetWorkspaceSize`` + ``aclnnMul``.

    Args:
        self: any shape of at most 8 dims; FLOAT, FLOAT16, BFLOAT16, DOUBLE, INT8, UINT8,
            INT16, INT32, INT64, BOOL, COMPLEX64 or COMPLEX128.
        other: a shape that broadcasts with ``self``'s (at most 8 dims); the same dtypes. The
            two promote as PyTorch's categories do (FLOAT16 with INT64 is FLOAT16, FLOAT16
            with BFLOAT16 is FLOAT); pairs that do not promote are refused.
        {backend_and_stream}

    {tensor_arguments}

    Returns:
        out: the broadcast shape, the promoted dtype (FLOAT16 and BFLOAT16 computed in FLOAT
        and rounded once; integers wrap; BOOL is "and").

    Raises:
        AclnnError: 161001 if an argument is None; 161002 for a dtype, promotion, rank or
            broadcast outside the constraints above.
        TypeError: an argument of the wrong Python type.
    """
    result: np.ndarray | Tensor = dispatch(backend, _numpy, _aclnn, self, other, stream=stream, made=_MADE)
    return result


# -- registration: what the tools know of this operator (ops/_registry.py) -------------------------

from typing import Any  # noqa: E402

from ._checks import FLOAT32  # noqa: E402
from ._elementwise import fuzz_pair, tensor_case, tensor_layers  # noqa: E402
from ._registry import Operator, register  # noqa: E402


def _torch(torch: Any, self: Any, other: Any) -> Any:
    return torch.mul(self, other)


def _fuzz(f: Any) -> list[Any]:
    return list(fuzz_pair(f))


def _c_arguments(args: list[Any], out_like: Any) -> list[Any]:
    shape = np.broadcast_shapes(args[0].shape, args[1].shape)
    return [*args[:2], out_like(shape, _ew.promote(args[0].dtype, args[1].dtype))]


OPERATOR = register(Operator(
    mul, "Mul", header="aclnn_mul.h", package="ops-math", library="libopapi_math.so", outputs=("out",),
    case=tensor_case("mul"),
    selftest=(((2, 3, 4, 5), DTYPES, dict()),
              ((4, 6, 7), (FLOAT32,), dict(other_dims=2))),
    bench=((8, 64, 56, 56), dict()),
    torch=_torch, memory_bound=True, fuzz=_fuzz, c_arguments=_c_arguments, dtypes=DTYPE_RULES,
    benchmarks=tensor_layers("mul", lambda a, b: (a, b))))
