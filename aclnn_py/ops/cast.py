"""aclnnCastGetWorkspaceSize / aclnnCast: ``out = self`` converted to ``dtype``.

C header ``aclnnop/aclnn_cast.h`` (ops-math ``math/cast``)::

    aclnnStatus aclnnCastGetWorkspaceSize(const aclTensor *self, const aclDataType dtype, aclTensor *out,
                                          uint64_t *workspaceSize, aclOpExecutor **executor);
    aclnnStatus aclnnCast(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream);

Computes ``self.to(dtype)``. There is no CanCast check: complex to real keeps the real part;
floating to an integer truncates toward zero and maps NaN to 0 (documented; values out of the
integer's range are not verified: saturated to INT64, then wrapped to the width); to BOOL is
"non-zero"; integers narrow modulo 2^bits.

Constraints, in the order CANN checks them (each violation is 161002 unless noted):

1. self and out are required (None: 161001).
2. self dtype, then ``dtype``, in FLOAT16, FLOAT, DOUBLE, INT8, UINT8, INT16, INT32, INT64,
   UINT16, UINT32, UINT64, BOOL, COMPLEX64, COMPLEX128, BFLOAT16 (A2/A3).
3. out's dtype in the same list (the documented list; ``call`` only);
   self has at most 8 dims; out has self's shape.
4. An empty self gives an empty result.

CANN never compares out's dtype with ``dtype`` in phase 1 (its final copy fails, 561103):
``call`` on sim reports 561103 there too; the function makes out of ``dtype``.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, DTypeLike

from .._convert.executor import planned, shape_of
from .._convert.typed import Output, TypedCall
from .._convert.values import host_array, tensor_arg
from .._dtypes import aclDataType, dtype_name, to_acl, to_numpy
from .._errors import param_invalid
from .._numpy import elementwise as _ew
from .._numpy.plans import NumpyOp, Prepared, plan
from .._runtime.memory import check_allocation
from .._runtime.tensor import Tensor
from ._checks import check_dtype, check_not_null
from ._dispatch import dispatch, documented
from ._elementwise import check_rank
from ._registry import numpy_dtypes

API = "aclnnCastGetWorkspaceSize"

#: The dtypes each rule accepts: the one table of these checks (the simulator's are generated from it).
DTYPE_RULES = {"DTYPES": ("ACL_FLOAT16", "ACL_FLOAT", "ACL_DOUBLE", "ACL_INT8", "ACL_UINT8", "ACL_INT16", "ACL_INT32",
                          "ACL_INT64", "ACL_UINT16", "ACL_UINT32", "ACL_UINT64", "ACL_BOOL", "ACL_COMPLEX64",
                          "ACL_COMPLEX128", "ACL_BF16")}
DTYPES = numpy_dtypes(DTYPE_RULES["DTYPES"])


def _acl_dtype(value: object, api: str = API) -> int:
    """The aclDataType value of ``dtype``: an aclDataType or its int value (as ``call`` passes
    the C parameter), or a NumPy dtype-like (TypeError for one CANN has no type for); ``api``
    names the operator (ReduceSum's ``dtype`` is converted so too)."""
    if isinstance(value, (bool, np.bool_)) or value is None:
        raise TypeError(f"{api}: dtype must be an aclDataType or a NumPy dtype, got {type(value).__name__}")
    if isinstance(value, (int, np.integer)):
        return int(value)
    try:
        return int(to_acl(np.dtype(value)))  # type: ignore[call-overload]
    except TypeError as exc:
        raise TypeError(f"{api}: dtype: {exc}") from None


def _name(acl: int) -> str:
    """The name the simulator's messages give an aclDataType value."""
    try:
        return dtype_name(to_numpy(acl))
    except TypeError:
        pass
    try:
        return aclDataType(acl).name.removeprefix("ACL_").removeprefix("DT_")
    except ValueError:
        return "UNKNOWN"


def _prepare(self: object, dtype: int) -> Prepared:
    """The numpy path: check in CANN's order, then convert."""
    if not -(2**31) <= dtype < 2**31:  # (as ``call`` refuses what the C parameter cannot hold)
        raise param_invalid(API, f"dtype = {dtype} does not fit the C parameter's const aclDataType")
    self = tensor_arg(API, "self", self)
    check_not_null(API, self=self)
    assert self is not None  # (just checked)
    check_dtype(API, "self", self, DTYPES)
    if dtype not in {int(to_acl(d)) for d in DTYPES}:
        names = ", ".join(dtype_name(d) for d in DTYPES)
        raise param_invalid(API, f"dtype dtype must be one of [{names}], got {_name(dtype)}")
    check_rank(API, "self", self.shape)
    to = to_numpy(dtype)
    nbytes = self.size * to.itemsize

    def run(self: object, *_: object) -> np.ndarray:
        check_allocation(nbytes)
        return _ew.convert(host_array(API, "self", self), to)

    return plan(run, nbytes + self.nbytes), (self, dtype)


_numpy = NumpyOp(_prepare)


def _outputs(self: object, dtype: int) -> list[Output]:
    """out: self's shape, ``dtype`` (FLOAT where NumPy has no such type: the library refuses it)."""
    try:
        to = to_numpy(dtype)
    except TypeError:
        to = np.dtype(np.float32)
    return [Output(shape_of(self), to)]


#: The npu/sim path: the two-phase C call, the arguments converted by their declared C types.
_aclnn = planned(TypedCall("Cast", _outputs))
_MADE = {"out": "self's shape and dtype"}


@documented
def cast(self: ArrayLike | Tensor, dtype: DTypeLike | aclDataType, *, backend: str | None = None,
         stream: object = None) -> np.ndarray | Tensor:
    """``self`` converted to ``dtype`` (``Tensor.to(dtype)``).

    Mirrors ``aclnnCastGetWorkspaceSize`` + ``aclnnCast``.

    Args:
        self: any shape of at most 8 dims; FLOAT16, FLOAT, DOUBLE, INT8, UINT8, INT16, INT32,
            INT64, UINT16, UINT32, UINT64, BOOL, COMPLEX64, COMPLEX128 or BFLOAT16.
        dtype: the result's dtype, one of the same: an ``aclDataType`` or a NumPy dtype-like
            (``np.float16``, ``"int32"``, ``aclnn_py.bfloat16``).
        {backend_and_stream}

    {tensor_arguments}

    Returns:
        out: self's shape, ``dtype``. Complex to real keeps the real part; floating to an
        integer truncates toward zero (NaN -> 0; beyond INT64 saturated, then wrapped);
        integers narrow modulo 2^bits; BOOL is "non-zero".

    Raises:
        AclnnError: 161001 if self is None; 161002 for a dtype outside the list or more than
            8 dims.
        TypeError: an argument of the wrong Python type (``dtype`` with no aclDataType).
    """
    result: np.ndarray | Tensor = dispatch(backend, _numpy, _aclnn, self, _acl_dtype(dtype), stream=stream,
                                           made=_MADE)
    return result


# -- registration: what the tools know of this operator (ops/_registry.py) -------------------------

from typing import Any  # noqa: E402

from ._cases import OpCall, random_array  # noqa: E402
from ._elementwise import scalar_layers  # noqa: E402
from ._registry import Operator, register  # noqa: E402


def _case(rng: np.random.Generator, shape: Any, dtype: np.dtype, to: Any = None) -> OpCall:
    """self of ``dtype`` cast to ``to`` (by default ``dtype``: the tools compare a result of the
    first argument's dtype; tests/ops/test_cast.py holds every pair)."""
    to = dtype if to is None else np.dtype(to)
    return OpCall("cast", (random_array(rng, shape, dtype), to), case=f"to {dtype_name(to)}")


def _torch(torch: Any, self: Any, to: Any) -> Any:
    """``self.to(to)`` (to BFLOAT16: FLOAT, which NumPy holds; the tools round it to the case's
    dtype)."""
    to = np.dtype(to)
    return self.to(torch.float32 if to == np.dtype("bfloat16") else getattr(torch, str(to)))


def _fuzz(f: Any) -> list[Any]:
    return [f.filled(f.shape(), f.pick(f.FLOATS)), f.pick(f.FLOATS)]


def _c_arguments(args: list[Any], out_like: Any) -> list[Any]:
    return [args[0], _acl_dtype(args[1]), out_like(args[0].shape, np.dtype(args[1]))]


OPERATOR = register(Operator(
    cast, "Cast", header="aclnn_cast.h", package="ops-math", library="libopapi_math.so", outputs=("out",),
    case=_case, selftest=(((2, 3, 4, 5), DTYPES, dict()),),
    bench=((8, 64, 56, 56), dict()),
    torch=_torch, memory_bound=True, fuzz=_fuzz, c_arguments=_c_arguments, dtypes=DTYPE_RULES,
    benchmarks=scalar_layers("cast", lambda a: (a, np.float16))))
