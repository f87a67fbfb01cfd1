"""aclnnInplaceAddGetWorkspaceSize / aclnnInplaceAdd: ``selfRef += alpha * other`` (``Tensor.add_``).

C header ``aclnnop/aclnn_add.h`` (ops-math ``math/add``)::

    aclnnStatus aclnnInplaceAddGetWorkspaceSize(const aclTensor* selfRef, const aclTensor* other,
                                                const aclScalar* alpha, uint64_t* workspaceSize,
                                                aclOpExecutor** executor);
    aclnnStatus aclnnInplaceAdd(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
                                aclrtStream stream);

selfRef is declared ``const`` and written all the same (``params.WRITTEN_CONST``): CANN runs
Add with ``out = selfRef``, so the sum is computed as Add computes it (the promoted dtype of
selfRef and other, ``alpha`` applied as A2/A3's Add applies it) and converted to selfRef's
dtype, written through selfRef's view (strides and offset honoured: CANN's ViewCopy).

Constraints, in the order CANN checks them (each violation is 161002 unless noted). Unlike
every other operator, its own shape checks run before the workspaceSize/executor check:

1. selfRef, then other, is required (None: 161001).
2. selfRef and other broadcast, to selfRef's shape (other may broadcast up to selfRef, never
   the reverse).
3. Add's phase 1 with out = selfRef: alpha required (161001); selfRef, then other, dtype in
   FLOAT, FLOAT16, BFLOAT16, DOUBLE, INT8, UINT8, INT16, INT32, INT64, BOOL, COMPLEX64,
   COMPLEX128; they promote; alpha's rule (an integer or BOOL for a BOOL sum, else castable to
   the promoted dtype); the promoted dtype castable to selfRef's (an INT32 selfRef with a FLOAT
   other is refused); at most 8 dims each.
4. An empty selfRef or other: nothing written.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from .._convert.executor import planned
from .._convert.typed import TypedCall
from .._convert.values import host_array, tensor_arg
from .._dtypes import compute_dtype
from .._numpy import elementwise as _ew
from .._numpy.plans import NumpyOp, Prepared, plan
from .._numpy.workers import on_caller, over_parts, scratch
from .._runtime.tensor import Tensor
from ._checks import check_dtype, check_not_null
from ._dispatch import dispatch, documented
from ._elementwise import check_alpha, check_cast_to, check_inplace, check_promoted, check_rank, scalar_arg
from ._inplace import written_arg, written_array
from ._registry import numpy_dtypes

API = "aclnnInplaceAddGetWorkspaceSize"

#: The dtypes each rule accepts: the one table of these checks (the simulator's are generated from it).
DTYPE_RULES = {"DTYPES": ("ACL_FLOAT", "ACL_FLOAT16", "ACL_BF16", "ACL_DOUBLE", "ACL_INT8", "ACL_UINT8", "ACL_INT16",
                          "ACL_INT32", "ACL_INT64", "ACL_BOOL", "ACL_COMPLEX64", "ACL_COMPLEX128")}
DTYPES = numpy_dtypes(DTYPE_RULES["DTYPES"])


def _validate(self_ref: object, other: object, alpha: object) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.dtype]:
    """Coerce and check in CANN's order; returns ``(selfRef, other, alpha, promoted dtype)``."""
    self_ref = written_arg(API, "selfRef", self_ref)
    other = tensor_arg(API, "other", other)
    alpha = scalar_arg(API, "alpha", alpha)
    check_not_null(API, selfRef=self_ref, other=other)
    assert self_ref is not None and other is not None  # (just checked)
    check_inplace(API, "selfRef", self_ref.shape, "other", other.shape)
    check_not_null(API, alpha=alpha)
    assert alpha is not None  # (just checked)
    check_dtype(API, "selfRef", self_ref, DTYPES)
    check_dtype(API, "other", other, DTYPES)
    promoted = check_promoted(API, "selfRef", self_ref.dtype, "other", other.dtype,
                              _ew.promote(self_ref.dtype, other.dtype))
    check_alpha(API, alpha.dtype, promoted)
    check_cast_to(API, promoted, "selfRef", self_ref.dtype)
    check_rank(API, "selfRef", self_ref.shape)
    check_rank(API, "other", other.shape)
    return self_ref, other, alpha, promoted


def _prepare(self_ref: object, other: object, alpha: object) -> Prepared:
    self_ref, other, alpha, promoted = _validate(self_ref, other, alpha)
    factor = None if _ew.is_equal_to_one(alpha) else _ew.add_alpha(alpha, promoted)
    # selfRef, other and the computation all of one dtype NumPy computes in: added in place.
    direct = (self_ref.dtype == other.dtype == promoted == compute_dtype(promoted) and promoted != np.bool_)

    # FLOAT32 of one contiguous shape (an SGD step): in cache-sized pieces.
    pieces = (direct and promoted == np.float32 and factor is not None and self_ref.shape == other.shape
              and self_ref.flags.c_contiguous and other.flags.c_contiguous and self_ref.size > _PIECE)
    small = on_caller(self_ref.size)
    kernel = _ew.compiled(_ew.ADD, self_ref, other, promoted, self_ref.dtype, factor)  # (when not direct)

    def add_into(r: np.ndarray, b: np.ndarray) -> None:
        """selfRef's part ``r`` += its part of ``b`` (times ``factor``): on each worker's part."""
        with np.errstate(over="ignore", invalid="ignore"):
            if pieces and factor is not None:
                _axpy(r.reshape(-1), b.reshape(-1), factor)
            else:
                np.add(r, b if factor is None else np.multiply(b, factor), out=r)

    def run(self_ref: object, other: object, *_: object) -> np.ndarray:
        a, b = written_array(API, "selfRef", self_ref), host_array(API, "other", other)
        if a.size == 0 or b.size == 0:
            return a
        if direct and not small and not np.may_share_memory(a, b):
            over_parts(add_into, a, b)
        elif direct:  # (a small call, or b overlapping a: NumPy's ufuncs buffer an overlap)
            with np.errstate(over="ignore", invalid="ignore"):
                np.add(a, b if factor is None else np.multiply(b, factor), out=a)
        else:
            a[...] = kernel(a, b)
        return a

    return plan(run, 2 * self_ref.nbytes + other.nbytes), (self_ref, other, alpha)


_PIECE = 1 << 15  # elements per piece: the scaled other of a piece stays in the L1/L2 cache


def _axpy(a: np.ndarray, b: np.ndarray, factor: np.ndarray) -> None:
    """``a += factor * b`` over flat FLOAT32 arrays that do not overlap, in pieces scaled into
    a kept scratch row (the calling thread's own: each worker's part has its own row): no fresh
    temporary of a's size (its pages faulted in on every call), and each piece added while it
    is in the cache."""
    row = scratch("inplace_add", (_PIECE,))
    for first in range(0, a.size, _PIECE):
        last = min(first + _PIECE, a.size)
        scaled = np.multiply(b[first:last], factor, out=row[:last - first])
        np.add(a[first:last], scaled, out=a[first:last])


_numpy = NumpyOp(_prepare, floats=True)  # (its plan holds the scalars' values)

#: The npu/sim path: the two-phase C call, selfRef written in place.
_aclnn = planned(TypedCall("InplaceAdd"))


@documented
def inplace_add(self_ref: np.ndarray | Tensor, other: ArrayLike | Tensor, alpha: object = 1, *,
                backend: str | None = None, stream: object = None) -> np.ndarray | Tensor:
    """``self_ref += alpha * other`` (``Tensor.add_``), in place; returns ``self_ref``.

    Mirrors ``aclnnInplaceAddGetWorkspaceSize`` + ``aclnnInplaceAdd``. An SGD step is
    ``inplace_add(weight, grad, -lr)``.

    Args:
        self_ref: CANN's ``selfRef``, written in place: a writable NumPy array (on npu/sim
            copied to the device and the result copied back into it) or, on npu/sim, a device
            ``aclnn_py.Tensor`` (written where it is, any view); at most 8 dims; FLOAT,
            FLOAT16, BFLOAT16, DOUBLE, INT8, UINT8, INT16, INT32, INT64, BOOL, COMPLEX64 or
            COMPLEX128.
        other: a shape that broadcasts to ``self_ref``'s (at most 8 dims); the same dtypes.
            The two promote as PyTorch's categories do (FLOAT16 with BFLOAT16 is FLOAT), and
            the promoted dtype must be castable to ``self_ref``'s (a FLOAT other into an
            integer self_ref is refused).
        alpha: an aclScalar (a number: bool -> BOOL, int -> INT64, float -> DOUBLE, complex
            -> COMPLEX128, or an ``aclnn_py.Scalar``): castable to the promoted dtype, an
            integer or BOOL for BOOL tensors. A2/A3 apply it as a FLOAT to FLOAT16 tensors.
        {backend_and_stream}

    {tensor_arguments}

    Returns:
        self_ref itself, holding the sum (computed in the promoted dtype, FLOAT16 and BFLOAT16
        in FLOAT, rounded once, then converted to self_ref's dtype; integers wrap).

    Raises:
        AclnnError: 161001 if an argument is None; 161002 for a shape, dtype, promotion,
            alpha or rank outside the constraints above.
        TypeError: a self_ref that is not a writable array (or Tensor), or an argument of the
            wrong Python type.
    """
    result: np.ndarray | Tensor = dispatch(backend, _numpy, _aclnn, self_ref, other, alpha, stream=stream)
    return result


# -- registration: what the tools know of this operator (ops/_registry.py) -------------------------

from typing import Any  # noqa: E402

from ._checks import FLOAT32  # noqa: E402
from ._elementwise import fuzz_pair, tensor_case  # noqa: E402
from ._registry import Operator, register  # noqa: E402


def _torch(torch: Any, self_ref: Any, other: Any, alpha: Any = 1) -> Any:
    return self_ref.add_(other, alpha=alpha)


def _fuzz(f: Any) -> list[Any]:
    return [*fuzz_pair(f), f.pick((1, 2, -0.5, 1.0))]


def _c_arguments(args: list[Any], out_like: Any) -> list[Any]:
    return [*args[:2], args[2] if len(args) > 2 else 1]


def _sgd(shape: tuple[int, ...]) -> Any:
    """An SGD step on a weight of ``shape``: ``weight += -lr * grad``."""
    def arguments(rng: np.random.Generator) -> tuple[Any, ...]:
        return (rng.standard_normal(shape, dtype=np.float32), rng.standard_normal(shape, dtype=np.float32), -0.01)
    return arguments


OPERATOR = register(Operator(
    inplace_add, "InplaceAdd", header="aclnn_add.h", package="ops-math", library="libopapi_math.so",
    outputs=("selfRef",), inplace="selfRef",
    case=tensor_case("inplace_add"),
    selftest=(((2, 3, 4, 5), DTYPES, dict()),
              ((4, 6, 7), (FLOAT32,), dict(other_dims=1, extra=(-0.5,)))),
    bench=((512, 512, 3, 3), dict(extra=(-0.01,))),
    torch=_torch, memory_bound=True, fuzz=_fuzz, c_arguments=_c_arguments, dtypes=DTYPE_RULES,
    benchmarks=(("inplace_add sgd resnet50 layer4 conv (512,512,3,3)", _sgd((512, 512, 3, 3))),
                ("inplace_add sgd resnet50 layer3 conv (256,256,3,3)", _sgd((256, 256, 3, 3))),
                ("inplace_add sgd resnet50 fc (1000,2048)", _sgd((1000, 2048))),
                ("inplace_add sgd conv1 (64,3,7,7)", _sgd((64, 3, 7, 7))))))
