"""aclnnReduceSumGetWorkspaceSize / aclnnReduceSum: the sum over some dims.

C header ``aclnnop/aclnn_reduce_sum.h`` (ops-math ``math/reduce_sum``)::

    aclnnStatus aclnnReduceSumGetWorkspaceSize(const aclTensor *self, const aclIntArray *dims, bool keepDims,
                                               aclDataType dtype, aclTensor *out, uint64_t *workspaceSize,
                                               aclOpExecutor **executor);
    aclnnStatus aclnnReduceSum(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                               aclrtStream stream);

Computes ``torch.sum(self, dims, keepdim=keepDims, dtype=dtype)``: self is converted to
``dtype`` (Cast's conversion: ``aclnn_py.cast``) and summed in it: FLOAT16/BFLOAT16 accumulated
in FLOAT (NumPy) or double (sim) and rounded once, FLOAT pairwise in FLOAT (NumPy) or in double
(sim), integers modulo 2^bits of dtype, BOOL as a logical OR (CANN's ReduceAny), complex in
pairs. An empty ``dims`` reduces every dim. (CANN sums a BOOL self with dtype INT64 in FLOAT
below 2^24 elements: the same values.)

Constraints, in the order CANN checks them (each violation is 161002 unless noted):

1. self, dims and out are required (None: 161001).
2. self and out dtype, then ``dtype``, in FLOAT16, FLOAT, INT8, INT16, INT32, INT64, UINT8, BOOL,
   DOUBLE, COMPLEX64, COMPLEX128, BFLOAT16 (A2/A3); out's dtype equals ``dtype``.
3. self has at most 8 dims.
4. Each dim in ``[-max(r, 1), max(r, 1) - 1]`` for self of rank r; none twice after wrapping.
5. An empty self fills out with 0 (out's shape is not checked; a complex out is refused). A 0-d
   self gives out = self converted (out must hold one element: else 561103, as CANN's final copy).
   Otherwise out has the reduced shape, or both have exactly one element.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike, DTypeLike

from .._convert.executor import planned
from .._convert.typed import TypedCall
from .._convert.values import bool_arg, host_array, int_array_arg, tensor_arg
from .._dtypes import aclDataType, dtype_name, to_acl, to_numpy
from .._errors import param_invalid
from .._numpy import elementwise as _ew, reduce as _red
from .._numpy.plans import NumpyOp, Prepared, plan
from .._runtime.memory import check_allocation
from .._runtime.tensor import Tensor
from ._checks import check_dtype, check_not_null
from ._dispatch import dispatch, documented
from ._elementwise import check_rank
from ._reduce import check_dims, reduce_outputs, reduced_shape
from ._registry import numpy_dtypes
from .cast import _acl_dtype, _name  # (the aclDataType argument's conversion and name, as Cast's)

API = "aclnnReduceSumGetWorkspaceSize"

#: The dtypes each rule accepts: the one table of these checks (the simulator's are generated from it).
DTYPE_RULES = {"DTYPES": ("ACL_FLOAT16", "ACL_FLOAT", "ACL_INT8", "ACL_INT16", "ACL_INT32", "ACL_INT64", "ACL_UINT8",
                          "ACL_BOOL", "ACL_DOUBLE", "ACL_COMPLEX64", "ACL_COMPLEX128", "ACL_BF16")}
DTYPES = numpy_dtypes(DTYPE_RULES["DTYPES"])


def check_dtype_argument(api: str, dtype: int, allowed: Sequence[np.dtype]) -> np.dtype:
    """161002 unless the aclDataType value ``dtype`` names one of ``allowed``; its NumPy dtype."""
    if not -(2**31) <= dtype < 2**31:  # (as ``call`` refuses what the C parameter cannot hold)
        raise param_invalid(api, f"dtype = {dtype} does not fit the C parameter's aclDataType")
    if dtype not in {int(to_acl(d)) for d in allowed}:
        names = ", ".join(dtype_name(d) for d in allowed)
        raise param_invalid(api, f"dtype dtype must be one of [{names}], got {_name(dtype)}")
    return to_numpy(dtype)


def sum_in(x: np.ndarray, dims: tuple[int, ...], keepdim: bool, dtype: np.dtype) -> np.ndarray:
    """The sum of ``x`` over ``dims`` with self converted to ``dtype`` and summed in it (the
    rules in the module docstring), a new array of ``dtype``."""
    v = x if x.dtype == dtype else _ew.convert(x, dtype)
    if not dims:
        return v.copy()
    if dtype == np.bool_:
        return np.asarray(np.any(v, axis=dims, keepdims=keepdim))
    wide = _red.widened(v)
    return _red.rounded(_red.reduce_sum(wide, dims, keepdim, wide.dtype), dtype, dtype)


def _prepare(self: object, dims: object, keep_dims: object, dtype: int) -> Prepared:
    """The numpy path: check in CANN's order, then sum."""
    keep = bool_arg(API, "keepDims", keep_dims)
    self = tensor_arg(API, "self", self)
    values = int_array_arg(API, "dims", dims)
    check_not_null(API, self=self, dims=values)
    assert self is not None and values is not None  # (just checked)
    check_dtype(API, "self", self, DTYPES)
    made = _outputs(self, values, keep, dtype)[0].dtype  # (out: checked before dtype, as CANN)
    check_dtype(API, "out", np.empty(0, made), DTYPES)
    to = check_dtype_argument(API, dtype, DTYPES)
    check_rank(API, "self", self.shape)
    reduced = check_dims(API, "dims", values, "self", self.ndim)
    shape = reduced_shape(self.shape, reduced, keep)
    if self.size == 0 and _ew.is_complex(to):
        raise param_invalid(API, f"out dtype must not be complex for an empty self, got {dtype_name(to)}")
    nbytes = self.nbytes + 2 * self.size * to.itemsize

    def run(self: object, *_: object) -> np.ndarray:
        check_allocation(nbytes)
        x = host_array(API, "self", self)
        if x.size == 0:
            return np.zeros(shape, to)
        return sum_in(x, reduced, keep, to).reshape(shape)

    return plan(run, nbytes), (self,)


_numpy = NumpyOp(_prepare)


_outputs = reduce_outputs(API, "dims")


#: The npu/sim path: the two-phase C call, the arguments converted by their declared C types.
_aclnn = planned(TypedCall("ReduceSum", _outputs))
_MADE = {"out": "the reduced shape of self and dtype"}


@documented
def reduce_sum(self: ArrayLike | Tensor, dims: Sequence[int], keep_dims: bool, dtype: DTypeLike | aclDataType, *,
               backend: str | None = None, stream: object = None) -> np.ndarray | Tensor:
    """The sum of ``self`` over ``dims`` in ``dtype`` (``torch.sum(self, dims, keepdim, dtype=dtype)``).

    Mirrors ``aclnnReduceSumGetWorkspaceSize`` + ``aclnnReduceSum``.

    Args:
        self: at most 8 dims; FLOAT16, FLOAT, INT8, INT16, INT32, INT64, UINT8, BOOL, DOUBLE,
            COMPLEX64, COMPLEX128 or BFLOAT16.
        dims: the dims to sum over (negative ones count from the end; none twice); empty: every dim.
        keep_dims: keep each summed dim with size 1.
        dtype: the dtype self is converted to and summed in (one of the same; an ``aclDataType``
            or a NumPy dtype-like): the result's. BOOL sums as "any".
        {backend_and_stream}

    {tensor_arguments}

    Returns:
        out: the reduced shape, ``dtype`` (an empty self gives zeros).

    Raises:
        AclnnError: 161001 if self or dims is None; 161002 for a dtype outside the list, more
            than 8 dims, or a dim out of range or given twice.
        TypeError: an argument of the wrong Python type.
    """
    result: np.ndarray | Tensor = dispatch(backend, _numpy, _aclnn, self, dims, keep_dims, _acl_dtype(dtype, API),
                                           stream=stream, made=_MADE)
    return result


# -- registration: what the tools know of this operator (ops/_registry.py) -------------------------

from typing import Any  # noqa: E402

from ._reduce import reduce_registration  # noqa: E402
from ._registry import Operator, register  # noqa: E402


def _torch(torch: Any, self: Any, dims: Any, keep: bool, dtype: Any) -> Any:
    dims = list(dims) or list(range(self.dim()))
    if self.dtype == torch.bool:
        return self.any(dims[0]) if len(dims) == 1 and not keep else torch.sum(self, dims, keep) > 0
    return torch.sum(self, dims, keep) if dims else self.clone()


OPERATOR = register(Operator(
    reduce_sum, "ReduceSum", header="aclnn_reduce_sum.h", package="ops-math", library="libopapi_math.so",
    selftest=(((4, 5, 6), DTYPES, dict()), ((2, 3, 4, 5), DTYPES[:2], dict(dims=(0, 2, 3), keep=True)),
              ((3, 7), DTYPES[:1], dict(dims=()))),
    bench=((8, 64, 56, 56), dict(dims=(0, 2, 3))),
    torch=_torch, dtypes=DTYPE_RULES,
    **reduce_registration("reduce_sum", "dims", API, _outputs, _acl_dtype, (
        ("reduce_sum linear bias grad (256,1000) dims [0]", (256, 1000), [0]),
        ("reduce_sum conv bias grad (8,64,56,56) dims [0,2,3]", (8, 64, 56, 56), [0, 2, 3]),
        ("reduce_sum loss total (256,1000) all", (256, 1000), [])))))
