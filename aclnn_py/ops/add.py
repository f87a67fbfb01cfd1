"""aclnnAddGetWorkspaceSize / aclnnAdd: ``out = self + alpha * other`` with broadcasting.

C header ``aclnnop/aclnn_add.h`` (ops-math ``math/add``)::

    aclnnStatus aclnnAddGetWorkspaceSize(const aclTensor* self, const aclTensor* other, const aclScalar* alpha,
                                         aclTensor* out, uint64_t* workspaceSize, aclOpExecutor** executor);
    aclnnStatus aclnnAdd(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor, aclrtStream stream);

Computes ``torch.add(self, other, alpha=alpha)`` in the promoted dtype of self and other
(PyTorch's category promotion: FLOAT16 with INT64 is FLOAT16, FLOAT16 with BFLOAT16 is FLOAT),
then converted to ``out``'s dtype. ``alpha`` is converted to the promoted dtype (a FLOAT for a
FLOAT16 computation, as A2/A3's fused axpy takes it); a BOOL computation is
``self or (alpha and other)``.

Constraints, in the order CANN checks them (each violation is 161002 unless noted):

1. self, other, alpha, out are required (None: 161001).
2. self, then other, dtype in FLOAT, FLOAT16, BFLOAT16, DOUBLE, INT8, UINT8, INT16, INT32,
   INT64, BOOL, COMPLEX64, COMPLEX128 (A2/A3's list).
3. self and other promote to a common dtype; alpha: an integer or BOOL when that is BOOL, else
   castable to it (a DOUBLE alpha with INT32 tensors is refused); the promoted dtype castable
   to out's, and out's dtype one of the list above (``call`` only: the function makes out of
   the promoted dtype). CANN's code lists no dtypes for out; one outside the documented list
   (FP8, UINT16, ...) fails in its final Cast, after phase 1: here it is 161002 in phase 1.
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
from ._elementwise import check_alpha, check_broadcast, check_promoted, check_rank, scalar_arg
from ._registry import numpy_dtypes

API = "aclnnAddGetWorkspaceSize"

#: The dtypes each rule accepts: the one table of these checks (the simulator's are generated from it).
DTYPE_RULES = {"DTYPES": ("ACL_FLOAT", "ACL_FLOAT16", "ACL_BF16", "ACL_DOUBLE", "ACL_INT8", "ACL_UINT8", "ACL_INT16",
                          "ACL_INT32", "ACL_INT64", "ACL_BOOL", "ACL_COMPLEX64", "ACL_COMPLEX128")}
DTYPES = numpy_dtypes(DTYPE_RULES["DTYPES"])


def _validate(self: object, other: object, alpha: object) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.dtype]:
    """Coerce and check in CANN's order; returns ``(self, other, alpha, promoted dtype)``."""
    self = tensor_arg(API, "self", self)
    other = tensor_arg(API, "other", other)
    alpha = scalar_arg(API, "alpha", alpha)
    check_not_null(API, self=self, other=other, alpha=alpha)
    assert self is not None and other is not None and alpha is not None  # (just checked)
    check_dtype(API, "self", self, DTYPES)
    check_dtype(API, "other", other, DTYPES)
    promoted = check_promoted(API, "self", self.dtype, "other", other.dtype, _ew.promote(self.dtype, other.dtype))
    check_alpha(API, alpha.dtype, promoted)
    _shape_checks(self, other, alpha)
    return self, other, alpha, promoted


def _shape_checks(self: object, other: object, alpha: object) -> tuple[int, ...]:
    """The checks the output's shape depends on; returns it."""
    check_rank(API, "self", shape_of(self))
    check_rank(API, "other", shape_of(other))
    return check_broadcast(API, "self", shape_of(self), "other", shape_of(other))


def _prepare(self: object, other: object, alpha: object) -> Prepared:
    self, other, alpha, promoted = _validate(self, other, alpha)
    shape = check_broadcast(API, "self", self.shape, "other", other.shape)
    nbytes = math.prod(map(int, shape)) * promoted.itemsize
    factor = None if _ew.is_equal_to_one(alpha) else _ew.add_alpha(alpha, promoted)
    kernel = _ew.compiled(_ew.ADD, self, other, promoted, promoted, factor)

    def run(self: object, other: object, *_: object) -> np.ndarray:
        check_allocation(nbytes)
        a, b = host_array(API, "self", self), host_array(API, "other", other)
        if a.size == 0 or b.size == 0:
            return np.empty(shape, promoted)
        return kernel(a, b)

    return plan(run, nbytes + self.nbytes + other.nbytes), (self, other, alpha)


_numpy = NumpyOp(_prepare, floats=True)  # (its plan holds the scalars' values)


def _outputs(self: object, other: object, alpha: object) -> list[Output]:
    """out: the broadcast shape, the promoted dtype (FLOAT where there is none: the library
    reports the dtypes)."""
    promoted = _ew.promote(dtype_of(self), dtype_of(other)) or np.dtype(np.float32)
    shape = _ew.broadcast(shape_of(self), shape_of(other))
    return [Output(shape if shape is not None else shape_of(self), promoted)]


#: The npu/sim path: the two-phase C call, the arguments converted by their declared C types.
_aclnn = planned(TypedCall("Add", _outputs, checks=_shape_checks))
_MADE = {"out": "the broadcast shape of self and other and their promoted dtype"}


@documented
def add(self: ArrayLike | Tensor, other: ArrayLike | Tensor, alpha: object = 1, *, backend: str | None = None,
        stream: object = None) -> np.ndarray | Tensor:
    """``self + alpha * other`` (``torch.add``), broadcasting self and other.

    Mirrors ``aclnnAddGetWorkspaceSize`` + ``aclnnAdd``.

    Args:
        self: any shape of at most 8 dims; FLOAT, FLOAT16, BFLOAT16, DOUBLE, INT8, UINT8,
            INT16, INT32, INT64, BOOL, COMPLEX64 or COMPLEX128.
        other: a shape that broadcasts with ``self``'s (at most 8 dims); the same dtypes. The
            two promote as PyTorch's categories do (FLOAT16 with INT64 is FLOAT16, FLOAT16
            with BFLOAT16 is FLOAT); pairs that do not promote are refused.
        alpha: an aclScalar (a number: bool -> BOOL, int -> INT64, float -> DOUBLE, complex
            -> COMPLEX128, or an ``aclnn_py.Scalar``): castable to the promoted dtype (a
            float alpha with integer tensors is refused), an integer or BOOL for BOOL tensors.
        {backend_and_stream}

    {tensor_arguments}

    Returns:
        out: the broadcast shape, the promoted dtype (FLOAT16 and BFLOAT16 computed in FLOAT
        and rounded once; integers wrap).

    Raises:
        AclnnError: 161001 if an argument is None; 161002 for a dtype, promotion, alpha, rank
            or broadcast outside the constraints above.
        TypeError: an argument of the wrong Python type.
    """
    result: np.ndarray | Tensor = dispatch(backend, _numpy, _aclnn, self, other, alpha, stream=stream, made=_MADE)
    return result


# -- registration: what the tools know of this operator (ops/_registry.py) -------------------------

from typing import Any  # noqa: E402

from ._checks import FLOAT32  # noqa: E402
from ._elementwise import fuzz_pair, tensor_case, tensor_layers  # noqa: E402
from ._registry import Operator, register  # noqa: E402


def _torch(torch: Any, self: Any, other: Any, alpha: Any = 1) -> Any:
    return torch.add(self, other, alpha=alpha)


def _fuzz(f: Any) -> list[Any]:
    return [*fuzz_pair(f), f.pick((1, 2, -0.5, 1.0))]


def _c_arguments(args: list[Any], out_like: Any) -> list[Any]:
    shape = np.broadcast_shapes(args[0].shape, args[1].shape)
    return [*args[:2], args[2] if len(args) > 2 else 1, out_like(shape, _ew.promote(args[0].dtype, args[1].dtype))]


OPERATOR = register(Operator(
    add, "Add", header="aclnn_add.h", package="ops-math", library="libopapi_math.so", outputs=("out",),
    case=tensor_case("add"),
    selftest=(((2, 3, 4, 5), DTYPES, dict()),
              ((4, 6, 7), (FLOAT32,), dict(other_dims=1, extra=(-0.5,)))),
    bench=((8, 64, 56, 56), dict()),
    torch=_torch, memory_bound=True, fuzz=_fuzz, c_arguments=_c_arguments, dtypes=DTYPE_RULES,
    benchmarks=tensor_layers("add", lambda a, b: (a, b, 1))))
