"""aclnnMulsGetWorkspaceSize / aclnnMuls: ``out = self * other`` for a scalar ``other``.

C header ``aclnnop/aclnn_mul.h`` (ops-math ``math/mul``, with Mul)::

    aclnnStatus aclnnMulsGetWorkspaceSize(const aclTensor* self, const aclScalar* other, aclTensor* out,
                                          uint64_t* workspaceSize, aclOpExecutor** executor);
    aclnnStatus aclnnMuls(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor, aclrtStream stream);

Computes ``torch.mul(self, other)`` in the dtype A2/A3's ``InferTensorScalarDtype`` gives (the
first rule that applies): either complex -> the promotion of the two; a FLOAT, FLOAT16 or
DOUBLE self -> self's dtype, a BFLOAT16 self -> FLOAT; a BOOL self with a DOUBLE scalar, or a
DOUBLE scalar with a FLOAT out -> FLOAT; a floating scalar or a BOOL self -> the promotion;
else self's dtype. The scalar is converted to it, the result converted to out's dtype.

Constraints, in the order CANN checks them (each violation is 161002 unless noted):

1. self, other, out are required (None: 161001).
2. self, then out, dtype in FLOAT, FLOAT16, BFLOAT16, DOUBLE, INT8, UINT8, INT16, INT32,
   INT64, BOOL, COMPLEX64, COMPLEX128 (the scalar's dtype is not listed).
3. A2/A3 check no promotion or cast here (a FLOAT result into an INT32 out is converted by
   the final cast, truncating). Deviation: where the computed dtype does not exist (a BOOL
   self with a UINT16 scalar), CANN fails after phase 1; here it is 161002 in phase 1.
4. out has self's shape (no rank check on A2/A3).
5. An empty self gives an empty result.

The function makes out of the computed dtype, except that a BFLOAT16 self keeps BFLOAT16 and
an integer or BOOL self with a DOUBLE scalar gets FLOAT (as PyTorch gives).
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
from ._elementwise import check_promoted, scalar_arg
from ._registry import numpy_dtypes

API = "aclnnMulsGetWorkspaceSize"

#: The dtypes each rule accepts: the one table of these checks (the simulator's are generated from it).
DTYPE_RULES = {"DTYPES": ("ACL_FLOAT", "ACL_FLOAT16", "ACL_BF16", "ACL_DOUBLE", "ACL_INT8", "ACL_UINT8", "ACL_INT16",
                          "ACL_INT32", "ACL_INT64", "ACL_BOOL", "ACL_COMPLEX64", "ACL_COMPLEX128")}
DTYPES = numpy_dtypes(DTYPE_RULES["DTYPES"])


def _validate(self: object, other: object) -> tuple[np.ndarray, np.ndarray, np.dtype, np.dtype]:
    """Coerce and check in CANN's order; returns ``(self, other, computed dtype, out dtype)``."""
    self = tensor_arg(API, "self", self)
    other = scalar_arg(API, "other", other)
    check_not_null(API, self=self, other=other)
    assert self is not None and other is not None  # (just checked)
    check_dtype(API, "self", self, DTYPES)
    out = _ew.result_dtype_with_scalar(self.dtype, other.dtype, bf16_as_float=True) or self.dtype
    computed = check_promoted(API, "self", self.dtype, "other", other.dtype,
                              _ew.scalar_promote(self.dtype, other.dtype, out, bf16_as_float=True))
    return self, other, computed, out


def _prepare(self: object, other: object) -> Prepared:
    self, other, computed, out = _validate(self, other)
    nbytes = self.size * out.itemsize
    scalar = _ew.scalar_as(other, computed)
    kernel = _ew.compiled(_ew.MUL, self, scalar, computed, out)

    def run(self: object, *_: object) -> np.ndarray:
        check_allocation(nbytes)
        a = host_array(API, "self", self)
        if a.size == 0:
            return np.empty(a.shape, out)
        return kernel(a, scalar)

    return plan(run, nbytes + self.nbytes), (self, other)


_numpy = NumpyOp(_prepare, floats=True)  # (its plan holds the scalars' values)


def _outputs(self: object, other: object) -> list[Output]:
    """out: self's shape, the dtype the module docstring gives."""
    scalar, dtype = scalar_arg(API, "other", other), dtype_of(self)
    if scalar is not None:
        dtype = _ew.result_dtype_with_scalar(dtype, scalar.dtype, bf16_as_float=True) or dtype
    return [Output(shape_of(self), dtype)]


#: The npu/sim path: the two-phase C call, the arguments converted by their declared C types.
_aclnn = planned(TypedCall("Muls", _outputs))
_MADE = {"out": "self's shape and the dtype computed for self and other"}


@documented
def muls(self: ArrayLike | Tensor, other: object, *, backend: str | None = None,
         stream: object = None) -> np.ndarray | Tensor:
    """``self * other`` for a scalar ``other`` (``torch.mul(tensor, number)``).

    Mirrors ``aclnnMulsGetWorkspaceSize`` + ``aclnnMuls``.

    Args:
        self: any shape; FLOAT, FLOAT16, BFLOAT16, DOUBLE, INT8, UINT8, INT16, INT32, INT64,
            BOOL, COMPLEX64 or COMPLEX128.
        other: an aclScalar (a number: bool -> BOOL, int -> INT64, float -> DOUBLE, complex
            -> COMPLEX128; a NumPy scalar keeps its dtype; or an ``aclnn_py.Scalar``),
            converted to the computed dtype (module docstring).
        {backend_and_stream}

    {tensor_arguments}

    Returns:
        out: self's shape; self's dtype for a floating self or an integer scalar (BFLOAT16
        computed in FLOAT), FLOAT for an integer or BOOL self with a float scalar, the
        promotion for a BOOL self with an integer scalar or a complex one.

    Raises:
        AclnnError: 161001 if an argument is None; 161002 for a dtype outside the list or a
            self and scalar with no common dtype.
        TypeError: an argument of the wrong Python type.
    """
    result: np.ndarray | Tensor = dispatch(backend, _numpy, _aclnn, self, other, stream=stream, made=_MADE)
    return result


# -- registration: what the tools know of this operator (ops/_registry.py) -------------------------

from typing import Any  # noqa: E402

from ._checks import FLOAT32  # noqa: E402
from ._elementwise import scalar_case, scalar_layers  # noqa: E402
from ._registry import Operator, register  # noqa: E402


def _torch(torch: Any, self: Any, other: Any) -> Any:
    return torch.mul(self, other)


def _fuzz(f: Any) -> list[Any]:
    return [f.filled(f.shape(), f.pick(f.FLOATS)), f.pick((0.5, -3, True, 2.0))]


def _c_arguments(args: list[Any], out_like: Any) -> list[Any]:
    return [args[0], args[1], out_like(args[0].shape, _outputs(args[0], args[1])[0].dtype)]


OPERATOR = register(Operator(
    muls, "Muls", header="aclnn_mul.h", package="ops-math", library="libopapi_math.so", outputs=("out",),
    case=scalar_case("muls"),
    selftest=(((2, 3, 4, 5), DTYPES, dict(other=True)),
              ((4, 6, 7), (FLOAT32,), dict(other=-0.75))),
    bench=((8, 64, 56, 56), dict()),
    torch=_torch, memory_bound=True, fuzz=_fuzz, c_arguments=_c_arguments, dtypes=DTYPE_RULES,
    benchmarks=scalar_layers("muls", lambda a: (a, 0.5))))
