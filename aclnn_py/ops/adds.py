"""aclnnAddsGetWorkspaceSize / aclnnAdds: ``out = self + alpha * other`` for a scalar ``other``.

C header ``aclnnop/aclnn_add.h`` (ops-math ``math/add``, with Add)::

    aclnnStatus aclnnAddsGetWorkspaceSize(const aclTensor* self, const aclScalar* other, const aclScalar* alpha,
                                          aclTensor* out, uint64_t* workspaceSize, aclOpExecutor** executor);
    aclnnStatus aclnnAdds(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor, aclrtStream stream);

Computes ``torch.add(self, other, alpha=alpha)`` in the dtype A2/A3's ``PromoteTypeScalar``
gives (the first rule that applies): either complex -> the promotion of the two; a floating
self -> self's dtype (FLOAT16 with a DOUBLE scalar stays FLOAT16, the scalar rounded to it); a
DOUBLE scalar with a FLOAT out -> FLOAT; a floating scalar or a BOOL self -> the promotion;
else self's dtype (INT32 with an INT64 scalar stays INT32). The scalar and alpha are converted
to it (alpha as Add's), the result converted to out's dtype.

Constraints, in the order CANN checks them (each violation is 161002 unless noted):

1. self, other, alpha, out are required (None: 161001).
2. self dtype in FLOAT, FLOAT16, BFLOAT16, DOUBLE, INT8, UINT8, INT16, INT32, INT64, BOOL,
   COMPLEX64, COMPLEX128 (the scalar's dtype is not listed).
3. The computed dtype exists (a BOOL self with a UINT16 scalar has none); alpha as Add's; the
   computed dtype castable to out's, and out's dtype in the list above (``call`` only).
4. self has at most 8 dims; out has self's shape.
5. An empty self gives an empty result.

The function makes out of the computed dtype, except that an integer or BOOL self with a
DOUBLE scalar gets a FLOAT out (so CANN computes in FLOAT, as PyTorch gives FLOAT).
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
from ._elementwise import check_alpha, check_promoted, check_rank, scalar_arg
from ._registry import numpy_dtypes

API = "aclnnAddsGetWorkspaceSize"

#: The dtypes each rule accepts: the one table of these checks (the simulator's are generated from it).
DTYPE_RULES = {"DTYPES": ("ACL_FLOAT", "ACL_FLOAT16", "ACL_BF16", "ACL_DOUBLE", "ACL_INT8", "ACL_UINT8", "ACL_INT16",
                          "ACL_INT32", "ACL_INT64", "ACL_BOOL", "ACL_COMPLEX64", "ACL_COMPLEX128")}
DTYPES = numpy_dtypes(DTYPE_RULES["DTYPES"])


def _validate(self: object, other: object, alpha: object) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.dtype,
                                                                    np.dtype]:
    """Coerce and check in CANN's order; returns ``(self, other, alpha, computed dtype, out dtype)``."""
    self = tensor_arg(API, "self", self)
    other = scalar_arg(API, "other", other)
    alpha = scalar_arg(API, "alpha", alpha)
    check_not_null(API, self=self, other=other, alpha=alpha)
    assert self is not None and other is not None and alpha is not None  # (just checked)
    check_dtype(API, "self", self, DTYPES)
    out = _ew.result_dtype_with_scalar(self.dtype, other.dtype, bf16_as_float=False) or self.dtype
    computed = check_promoted(API, "self", self.dtype, "other", other.dtype,
                              _ew.scalar_promote(self.dtype, other.dtype, out, bf16_as_float=False))
    check_alpha(API, alpha.dtype, computed)
    check_rank(API, "self", self.shape)
    return self, other, alpha, computed, out


def _prepare(self: object, other: object, alpha: object) -> Prepared:
    self, other, alpha, computed, out = _validate(self, other, alpha)
    nbytes = self.size * out.itemsize
    scalar = _ew.scalar_as(other, computed)
    factor = None if _ew.is_equal_to_one(alpha) else _ew.add_alpha(alpha, computed)
    kernel = _ew.compiled(_ew.ADD, self, scalar, computed, out, factor)

    def run(self: object, *_: object) -> np.ndarray:
        check_allocation(nbytes)
        a = host_array(API, "self", self)
        if a.size == 0:
            return np.empty(a.shape, out)
        return kernel(a, scalar)

    return plan(run, nbytes + self.nbytes), (self, other, alpha)


_numpy = NumpyOp(_prepare, floats=True)  # (its plan holds the scalars' values)


def _outputs(self: object, other: object, alpha: object) -> list[Output]:
    """out: self's shape, the dtype the module docstring gives."""
    scalar, dtype = scalar_arg(API, "other", other), dtype_of(self)
    if scalar is not None:
        dtype = _ew.result_dtype_with_scalar(dtype, scalar.dtype, bf16_as_float=False) or dtype
    return [Output(shape_of(self), dtype)]


def _shape_checks(self: object, other: object, alpha: object) -> None:
    check_rank(API, "self", shape_of(self))


#: The npu/sim path: the two-phase C call, the arguments converted by their declared C types.
_aclnn = planned(TypedCall("Adds", _outputs, checks=_shape_checks))
_MADE = {"out": "self's shape and the dtype computed for self and other"}


@documented
def adds(self: ArrayLike | Tensor, other: object, alpha: object = 1, *, backend: str | None = None,
         stream: object = None) -> np.ndarray | Tensor:
    """``self + alpha * other`` for a scalar ``other`` (``torch.add(tensor, number)``).

    Mirrors ``aclnnAddsGetWorkspaceSize`` + ``aclnnAdds``.

    Args:
        self: any shape of at most 8 dims; FLOAT, FLOAT16, BFLOAT16, DOUBLE, INT8, UINT8,
            INT16, INT32, INT64, BOOL, COMPLEX64 or COMPLEX128.
        other: an aclScalar (a number: bool -> BOOL, int -> INT64, float -> DOUBLE, complex
            -> COMPLEX128; a NumPy scalar keeps its dtype; or an ``aclnn_py.Scalar``). A
            floating self keeps its dtype (the scalar is rounded to it); an integer self
            with an integer scalar keeps self's.
        alpha: an aclScalar, castable to the computed dtype (a float alpha with an integer
            self and integer scalar is refused), an integer or BOOL for a BOOL computation.
        {backend_and_stream}

    {tensor_arguments}

    Returns:
        out: self's shape; self's dtype for a floating self or an integer scalar, FLOAT for
        an integer or BOOL self with a float scalar, the promotion for a BOOL self with an
        integer scalar or a complex one (FLOAT16/BFLOAT16 computed in FLOAT, rounded once).

    Raises:
        AclnnError: 161001 if an argument is None; 161002 for a dtype, promotion, alpha or
            rank outside the constraints in the module docstring.
        TypeError: an argument of the wrong Python type.
    """
    result: np.ndarray | Tensor = dispatch(backend, _numpy, _aclnn, self, other, alpha, stream=stream, made=_MADE)
    return result


# -- registration: what the tools know of this operator (ops/_registry.py) -------------------------

from typing import Any  # noqa: E402

from ._checks import FLOAT32  # noqa: E402
from ._elementwise import scalar_case, scalar_layers  # noqa: E402
from ._registry import Operator, register  # noqa: E402


def _torch(torch: Any, self: Any, other: Any, alpha: Any = 1) -> Any:
    return torch.add(self, other, alpha=alpha)


def _fuzz(f: Any) -> list[Any]:
    return [f.filled(f.shape(), f.pick(f.FLOATS)), f.pick((0.5, -3, True, 2.0)), f.pick((1, 2, -0.5))]


def _c_arguments(args: list[Any], out_like: Any) -> list[Any]:
    alpha = args[2] if len(args) > 2 else 1
    return [args[0], args[1], alpha, out_like(args[0].shape, _outputs(args[0], args[1], alpha)[0].dtype)]


OPERATOR = register(Operator(
    adds, "Adds", header="aclnn_add.h", package="ops-math", library="libopapi_math.so", outputs=("out",),
    case=scalar_case("adds"),
    selftest=(((2, 3, 4, 5), DTYPES, dict(other=True)),
              ((4, 6, 7), (FLOAT32,), dict(other=0.75, extra=(-2,)))),
    bench=((8, 64, 56, 56), dict()),
    torch=_torch, memory_bound=True, fuzz=_fuzz, c_arguments=_c_arguments, dtypes=DTYPE_RULES,
    benchmarks=scalar_layers("adds", lambda a: (a, 0.5, 1))))
