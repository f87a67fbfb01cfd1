"""aclnnMeanGetWorkspaceSize / aclnnMean: the mean over some dims.

C header ``aclnnop/aclnn_mean.h`` (ops-math ``math/reduce_mean``; its aclnnMeanV2 is not part of
aclnn_py)::

    aclnnStatus aclnnMeanGetWorkspaceSize(const aclTensor *self, const aclIntArray *dim, bool keepDim,
                                          aclDataType dtype, aclTensor *out, uint64_t *workspaceSize,
                                          aclOpExecutor **executor);
    aclnnStatus aclnnMean(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                          aclrtStream stream);

Computes ``torch.mean(self, dim, keepdim=keepDim, dtype=dtype)``: self is converted to ``dtype``
and averaged in it (FLOAT16/BFLOAT16 summed wide and rounded once), then converted to out's
dtype. An empty ``dim`` reduces every dim; a 0-d self is passed through. Integer dtypes are
accepted (PyTorch refuses them; CANN runs them on the AI CPU, whose rounding is not verified):
here the int64 sum divided as a double, truncated toward zero.

Constraints, in the order CANN checks them (each violation is 161002 unless noted):

1. self, dim and out are required (None: 161001).
2. self dtype, then ``dtype``, then out dtype in FLOAT, INT32, INT64, FLOAT16, INT16, INT8, UINT8,
   DOUBLE, BFLOAT16, COMPLEX64, COMPLEX128 (no BOOL).
3. self's dtype casts to ``dtype``, and ``dtype`` to out's (CanCast: no floating to integer, no
   complex to real).
4. Each dim in ``[-max(r, 1), max(r, 1) - 1]`` for self of rank r; none twice after wrapping.
5. self and out have at most 8 dims.
6. An empty self fills out with NaN (0 for an integer out; out's shape is not checked);
   otherwise out has the reduced shape, or both have exactly one element.
"""

from __future__ import annotations

import math

from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike, DTypeLike

from .._convert.values import bool_arg, host_array, int_array_arg, tensor_arg
from .._convert.executor import planned
from .._convert.typed import TypedCall
from .._dtypes import aclDataType, dtype_name
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
from .cast import _acl_dtype
from .reduce_sum import check_dtype_argument

API = "aclnnMeanGetWorkspaceSize"

#: The dtypes each rule accepts: the one table of these checks (the simulator's are generated from it).
DTYPE_RULES = {"DTYPES": ("ACL_FLOAT", "ACL_INT32", "ACL_INT64", "ACL_FLOAT16", "ACL_INT16", "ACL_INT8", "ACL_UINT8",
                          "ACL_DOUBLE", "ACL_BF16", "ACL_COMPLEX64", "ACL_COMPLEX128")}
DTYPES = numpy_dtypes(DTYPE_RULES["DTYPES"])


def mean_in(x: np.ndarray, dims: tuple[int, ...], keepdim: bool, dtype: np.dtype) -> np.ndarray:
    """The mean of ``x`` over ``dims`` with x converted to ``dtype`` and averaged in it, a new
    array of ``dtype`` (integers: the int64 sum divided as a double, truncated toward zero)."""
    v = x if x.dtype == dtype else _ew.convert(x, dtype)
    if not dims:
        return v.copy()
    count = math.prod(map(int, [x.shape[d] for d in dims]))
    if _ew.is_integral(dtype):
        total = np.sum(v, axis=dims, dtype=np.int64, keepdims=keepdim)
        return _ew.convert(np.asarray(total / np.float64(count)), dtype)
    wide = _red.widened(v)
    total = _red.reduce_sum(wide, dims, keepdim, wide.dtype)
    return _red.rounded(np.asarray(total / np.asarray(count, wide.dtype)), dtype, dtype)


def _prepare(self: object, dim: object, keep_dim: object, dtype: int) -> Prepared:
    """The numpy path: check in CANN's order, then average."""
    keep = bool_arg(API, "keepDim", keep_dim)
    self = tensor_arg(API, "self", self)
    values = int_array_arg(API, "dim", dim)
    check_not_null(API, self=self, dim=values)
    assert self is not None and values is not None  # (just checked)
    check_dtype(API, "self", self, DTYPES)
    to = check_dtype_argument(API, dtype, DTYPES)
    if not _ew.can_cast(self.dtype, to):
        raise param_invalid(API, f"self dtype {dtype_name(self.dtype)} cannot be cast to dtype {dtype_name(to)}")
    reduced = check_dims(API, "dim", values, "self", self.ndim)
    check_rank(API, "self", self.shape)
    shape = reduced_shape(self.shape, reduced, keep)
    nbytes = self.nbytes + 2 * self.size * 8

    def run(self: object, *_: object) -> np.ndarray:
        check_allocation(nbytes)
        x = host_array(API, "self", self)
        if x.size == 0:
            return _ew.convert(np.full(shape, np.nan), to)
        return mean_in(x, reduced, keep, to).reshape(shape)

    return plan(run, nbytes), (self,)


_numpy = NumpyOp(_prepare)


_outputs = reduce_outputs(API, "dim")


#: The npu/sim path: the two-phase C call, the arguments converted by their declared C types.
_aclnn = planned(TypedCall("Mean", _outputs))
_MADE = {"out": "the reduced shape of self and dtype"}


@documented
def mean(self: ArrayLike | Tensor, dim: Sequence[int], keep_dim: bool, dtype: DTypeLike | aclDataType, *,
         backend: str | None = None, stream: object = None) -> np.ndarray | Tensor:
    """The mean of ``self`` over ``dim`` in ``dtype`` (``torch.mean(self, dim, keepdim, dtype=dtype)``).

    Mirrors ``aclnnMeanGetWorkspaceSize`` + ``aclnnMean``.

    Args:
        self: at most 8 dims; FLOAT, INT32, INT64, FLOAT16, INT16, INT8, UINT8, DOUBLE, BFLOAT16,
            COMPLEX64 or COMPLEX128.
        dim: the dims to average over (negative ones count from the end; none twice); empty:
            every dim.
        keep_dim: keep each averaged dim with size 1.
        dtype: the dtype self is converted to and averaged in (one of the same, castable from
            self's; an ``aclDataType`` or a NumPy dtype-like): the result's. An integer mean is
            truncated toward zero.
        {backend_and_stream}

    {tensor_arguments}

    Returns:
        out: the reduced shape, ``dtype`` (an empty self gives NaN, 0 for an integer dtype).

    Raises:
        AclnnError: 161001 if self or dim is None; 161002 for a dtype outside the list or not
            castable, a dim out of range or given twice, or more than 8 dims.
        TypeError: an argument of the wrong Python type.
    """
    result: np.ndarray | Tensor = dispatch(backend, _numpy, _aclnn, self, dim, keep_dim, _acl_dtype(dtype, API),
                                           stream=stream, made=_MADE)
    return result


# -- registration: what the tools know of this operator (ops/_registry.py) -------------------------

from typing import Any  # noqa: E402

from ._reduce import reduce_registration  # noqa: E402
from ._registry import Operator, register  # noqa: E402


def _torch(torch: Any, self: Any, dims: Any, keep: bool, dtype: Any) -> Any:
    dims = list(dims) or list(range(self.dim()))
    if not dims:
        return self.clone()
    if not (self.is_floating_point() or self.is_complex()):
        count = float(np.prod([self.shape[d] for d in dims]))  # (integers: truncated, as the module says)
        return torch.trunc(self.to(torch.float64).sum(dims, keep) / count).to(self.dtype)
    return torch.mean(self, dims, keep)


OPERATOR = register(Operator(
    mean, "Mean", header="aclnn_mean.h", package="ops-math", library="libopapi_math.so",
    selftest=(((4, 5, 6), DTYPES, dict()), ((2, 3, 4, 5), DTYPES[:1], dict(dims=(2, 3), keep=True)),
              ((3, 7), DTYPES[:1], dict(dims=()))),
    bench=((8, 2048, 7, 7), dict(dims=(2, 3))),
    torch=_torch, dtypes=DTYPE_RULES,
    **reduce_registration("mean", "dim", API, _outputs, _acl_dtype, (
        ("mean resnet global pool (8,2048,7,7) dim [2,3]", (8, 2048, 7, 7), [2, 3]),
        ("mean loss (256,1000) all", (256, 1000), []),
        ("mean batch stats (8,64,56,56) dim [0,2,3]", (8, 64, 56, 56), [0, 2, 3])))))
