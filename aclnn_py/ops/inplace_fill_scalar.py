"""aclnnInplaceFillScalarGetWorkspaceSize / aclnnInplaceFillScalar: ``selfRef.fill_(value)``, in place.

C header ``aclnnop/aclnn_fill_scalar.h`` (ops-math ``conversion/fill``)::

    aclnnStatus aclnnInplaceFillScalarGetWorkspaceSize(aclTensor* selfRef, const aclScalar* value,
                                                       uint64_t* workspaceSize, aclOpExecutor** executor);
    aclnnStatus aclnnInplaceFillScalar(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
                                       aclrtStream stream);

Every element of selfRef's view is set to ``value`` converted to selfRef's dtype as C's
``static_cast`` converts (a float into an integer tensor truncates, into BOOL is
``|v| >= FLT_EPSILON``); the value is never checked for fitting the dtype (unlike PyTorch).

Constraints, in the order CANN checks them:

1. selfRef and value are required (None: 161001).
2. selfRef's dtype in FLOAT, INT32, INT64, FLOAT16, INT16, INT8, UINT8, DOUBLE, BOOL, COMPLEX64,
   COMPLEX128, BFLOAT16, UINT16, UINT32, UINT64 (A2/A3's list; 161002).
3. selfRef's and value's dtypes promote (``op::PromoteType``; 161002): a UINT16/32/64 tensor
   takes a scalar of its own dtype only (an ``aclnn_py.Scalar`` or a NumPy scalar).
4. At most 8 dims (161002). 5. An empty selfRef: nothing written.
"""

from __future__ import annotations

import numpy as np

from .._convert.executor import planned
from .._convert.typed import TypedCall
from .._dtypes import bfloat16
from .._numpy import elementwise as _ew
from .._numpy.plans import NumpyOp, Prepared, plan
from .._numpy.workers import on_caller
from .._runtime.tensor import Tensor
from ._checks import check_dtype, check_not_null
from ._dispatch import dispatch, documented
from ._elementwise import check_promoted, check_rank, scalar_arg
from ._inplace import written_arg, written_array
from ._registry import numpy_dtypes

API = "aclnnInplaceFillScalarGetWorkspaceSize"

#: The dtypes each rule accepts: the one table of these checks (the simulator's are generated from it).
DTYPE_RULES = {"DTYPES": ("ACL_FLOAT", "ACL_INT32", "ACL_INT64", "ACL_FLOAT16", "ACL_INT16", "ACL_INT8", "ACL_UINT8",
                          "ACL_DOUBLE", "ACL_BOOL", "ACL_COMPLEX64", "ACL_COMPLEX128", "ACL_BF16", "ACL_UINT16",
                          "ACL_UINT32", "ACL_UINT64")}
DTYPES = numpy_dtypes(DTYPE_RULES["DTYPES"])


def _prepare(self_ref: object, value: object) -> Prepared:
    self_ref = written_arg(API, "selfRef", self_ref)
    scalar = scalar_arg(API, "value", value)
    check_not_null(API, selfRef=self_ref, value=scalar)
    assert self_ref is not None and scalar is not None  # (just checked)
    check_dtype(API, "selfRef", self_ref, DTYPES)
    check_promoted(API, "selfRef", self_ref.dtype, "value", scalar.dtype, _ew.promote(self_ref.dtype, scalar.dtype))
    check_rank(API, "selfRef", self_ref.shape)
    filler = _ew.scalar_as(scalar, self_ref.dtype)
    small = on_caller(self_ref.size)

    def run(self_ref: object, *_: object) -> np.ndarray:
        a = written_array(API, "selfRef", self_ref)
        _ew.fill(a, filler, small)
        return a

    return plan(run, self_ref.nbytes), (self_ref, value)


_numpy = NumpyOp(_prepare, floats=True)  # (its plan holds the scalars' values)

#: The npu/sim path: the two-phase C call, selfRef written in place.
_aclnn = planned(TypedCall("InplaceFillScalar"))


@documented
def inplace_fill_scalar(self_ref: np.ndarray | Tensor, value: object, *, backend: str | None = None,
                        stream: object = None) -> np.ndarray | Tensor:
    """``self_ref.fill_(value)``: every element set to ``value``, in place; returns ``self_ref``.

    Mirrors ``aclnnInplaceFillScalarGetWorkspaceSize`` + ``aclnnInplaceFillScalar``.

    Args:
        self_ref: CANN's ``selfRef``, written in place: a writable NumPy array (on npu/sim
            copied to the device and the result copied back into it) or, on npu/sim, a device
            ``aclnn_py.Tensor`` (written where it is, any view); at most 8 dims; FLOAT, INT32,
            INT64, FLOAT16, INT16, INT8, UINT8, DOUBLE, BOOL, COMPLEX64, COMPLEX128, BFLOAT16,
            UINT16, UINT32 or UINT64.
        value: an aclScalar (a number: bool -> BOOL, int -> INT64, float -> DOUBLE, complex
            -> COMPLEX128; a NumPy scalar keeps its dtype, or an ``aclnn_py.Scalar``) whose
            dtype promotes with self_ref's (a UINT16/32/64 self_ref takes its own dtype only);
            converted as C's ``static_cast`` (a float into integers truncates; into BOOL it is
            ``|v| >= FLT_EPSILON``); not checked for fitting the dtype.
        {backend_and_stream}

    {tensor_arguments}

    Returns:
        self_ref itself, every element of its view ``value``.

    Raises:
        AclnnError: 161001 if an argument is None; 161002 for a dtype, a pair of dtypes that
            do not promote, or more than 8 dims.
        TypeError: a self_ref that is not a writable array (or Tensor), or a value that is not
            a number.
    """
    result: np.ndarray | Tensor = dispatch(backend, _numpy, _aclnn, self_ref, value, stream=stream)
    return result


# -- registration: what the tools know of this operator (ops/_registry.py) -------------------------

from typing import Any  # noqa: E402

from ._cases import OpCall, random_array  # noqa: E402
from ._checks import FLOAT32  # noqa: E402
from ._registry import Operator, register  # noqa: E402


def _case(rng: np.random.Generator, shape: Any, dtype: np.dtype, value: Any = 3) -> OpCall:
    """self_ref of ``shape`` and ``dtype``; an int ``value`` as a NumPy scalar of that dtype
    (which every dtype promotes with; BFLOAT16, which has no NumPy scalar a call takes: a
    float), any other the Python number given."""
    scalar = value if not isinstance(value, int) else float(value) if dtype == bfloat16 else \
        np.array(value).astype(dtype)[()]
    return OpCall("inplace_fill_scalar", (random_array(rng, shape, dtype), scalar), case=f"value {value}")


def _torch(torch: Any, self_ref: Any, value: Any) -> Any:
    return self_ref.fill_(value.item() if hasattr(value, "item") else value)


def _fuzz(f: Any) -> list[Any]:
    return [f.filled(f.shape(), f.pick(f.FLOATS)), f.pick((0, 1, -2.5, 1e30, True))]


def _c_arguments(args: list[Any], out_like: Any) -> list[Any]:
    return [args[0], args[1]]


def _buffer(shape: tuple[int, ...], value: float) -> Any:
    def arguments(rng: np.random.Generator) -> tuple[Any, ...]:
        return (rng.standard_normal(shape, dtype=np.float32), value)
    return arguments


OPERATOR = register(Operator(
    inplace_fill_scalar, "InplaceFillScalar", header="aclnn_fill_scalar.h", package="ops-math",
    library="libopapi_math.so", outputs=("selfRef",), inplace="selfRef", overwrites=True,
    case=_case, selftest=(((2, 3, 4, 5), DTYPES, dict()), ((7, 33), (FLOAT32,), dict(value=-0.25))),
    bench=((512, 512, 3, 3), dict(value=0.5)),
    torch=_torch, memory_bound=True, fuzz=_fuzz, c_arguments=_c_arguments, dtypes=DTYPE_RULES,
    benchmarks=(("inplace_fill_scalar bn weight init resnet50 (2048,)", _buffer((2048,), 1.0)),
                ("inplace_fill_scalar conv weight (512,512,3,3)", _buffer((512, 512, 3, 3), 0.5)),
                ("inplace_fill_scalar activation (8,64,56,56)", _buffer((8, 64, 56, 56), -1.0)))))
