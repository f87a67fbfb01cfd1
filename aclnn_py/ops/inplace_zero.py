"""aclnnInplaceZeroGetWorkspaceSize / aclnnInplaceZero: ``selfRef.zero_()``, in place.

C header ``aclnnop/aclnn_zero.h`` (ops-math ``math/zero_op``)::

    aclnnStatus aclnnInplaceZeroGetWorkspaceSize(aclTensor* selfRef, uint64_t* workspaceSize,
                                                 aclOpExecutor** executor);
    aclnnStatus aclnnInplaceZero(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
                                 aclrtStream stream);

Every element of selfRef's view is set to 0 (strides and offset honoured: CANN's ViewCopy).

Constraints, in the order CANN checks them:

1. selfRef is required (None: 161001).
2. selfRef's dtype in INT8, INT32, INT64, UINT8, FLOAT16, FLOAT, BOOL, DOUBLE, INT16, UINT16,
   COMPLEX128, COMPLEX64, BFLOAT16 (A2/A3's list; 161002). No rank limit.
3. An empty selfRef: nothing written.
"""

from __future__ import annotations

import numpy as np

from .._convert.executor import planned
from .._convert.typed import TypedCall
from .._numpy import elementwise as _ew
from .._numpy.plans import NumpyOp, Prepared, plan
from .._runtime.tensor import Tensor
from ._checks import check_dtype, check_not_null
from ._dispatch import dispatch, documented
from ._inplace import written_arg, written_array
from ._registry import numpy_dtypes

API = "aclnnInplaceZeroGetWorkspaceSize"

#: The dtypes each rule accepts: the one table of these checks (the simulator's are generated from it).
DTYPE_RULES = {"DTYPES": ("ACL_INT8", "ACL_INT32", "ACL_INT64", "ACL_UINT8", "ACL_FLOAT16", "ACL_FLOAT", "ACL_BOOL",
                          "ACL_DOUBLE", "ACL_INT16", "ACL_UINT16", "ACL_COMPLEX128", "ACL_COMPLEX64", "ACL_BF16")}
DTYPES = numpy_dtypes(DTYPE_RULES["DTYPES"])


def _prepare(self_ref: object) -> Prepared:
    self_ref = written_arg(API, "selfRef", self_ref)
    check_not_null(API, selfRef=self_ref)
    assert self_ref is not None  # (just checked)
    check_dtype(API, "selfRef", self_ref, DTYPES)

    def run(self_ref: object) -> np.ndarray:
        a = written_array(API, "selfRef", self_ref)
        _ew.fill(a, _ZERO, False)  # (a memset, or on the worker threads when large)
        return a

    return plan(run, self_ref.nbytes), (self_ref,)


_numpy = NumpyOp(_prepare)


#: The value written: 0 has the same all-zero bytes in every dtype of the list (``elementwise.fill``).
_ZERO = np.zeros((), np.uint8)

#: The npu/sim path: the two-phase C call, selfRef written in place.
_aclnn = planned(TypedCall("InplaceZero"))


@documented
def inplace_zero(self_ref: np.ndarray | Tensor, *, backend: str | None = None,
                 stream: object = None) -> np.ndarray | Tensor:
    """``self_ref.zero_()``: every element set to 0, in place; returns ``self_ref``.

    Mirrors ``aclnnInplaceZeroGetWorkspaceSize`` + ``aclnnInplaceZero`` (e.g. clearing the
    gradients before a training step).

    Args:
        self_ref: CANN's ``selfRef``, written in place: a writable NumPy array (on npu/sim
            copied to the device and the result copied back into it) or, on npu/sim, a device
            ``aclnn_py.Tensor`` (written where it is, any view); any rank; INT8, INT32, INT64,
            UINT8, FLOAT16, FLOAT, BOOL, DOUBLE, INT16, UINT16, COMPLEX128, COMPLEX64 or
            BFLOAT16.
        {backend_and_stream}

    {tensor_arguments}

    Returns:
        self_ref itself, all zeros (only the elements of its view are written).

    Raises:
        AclnnError: 161001 if self_ref is None; 161002 for a dtype outside the list above.
        TypeError: a self_ref that is not a writable array (or Tensor).
    """
    result: np.ndarray | Tensor = dispatch(backend, _numpy, _aclnn, self_ref, stream=stream)
    return result


# -- registration: what the tools know of this operator (ops/_registry.py) -------------------------

from typing import Any  # noqa: E402

from ._cases import OpCall, random_array  # noqa: E402
from ._checks import FLOAT32  # noqa: E402
from ._registry import Operator, register  # noqa: E402


def _case(rng: np.random.Generator, shape: Any, dtype: np.dtype) -> OpCall:
    return OpCall("inplace_zero", (random_array(rng, shape, dtype),))


def _torch(torch: Any, self_ref: Any) -> Any:
    return self_ref.zero_()


def _fuzz(f: Any) -> list[Any]:
    return [f.filled(f.shape(), f.pick(f.FLOATS))]


def _c_arguments(args: list[Any], out_like: Any) -> list[Any]:
    return [args[0]]


def _gradient(shape: tuple[int, ...]) -> Any:
    """A gradient buffer of ``shape`` cleared before the next step (``optimizer.zero_grad``)."""
    def arguments(rng: np.random.Generator) -> tuple[Any, ...]:
        return (rng.standard_normal(shape, dtype=np.float32),)
    return arguments


OPERATOR = register(Operator(
    inplace_zero, "InplaceZero", header="aclnn_zero.h", package="ops-math", library="libopapi_math.so",
    outputs=("selfRef",), inplace="selfRef", overwrites=True,
    case=_case, selftest=(((2, 3, 4, 5), DTYPES, dict()), ((7, 33), (FLOAT32,), dict())),
    bench=((512, 512, 3, 3), dict()),
    torch=_torch, memory_bound=True, fuzz=_fuzz, c_arguments=_c_arguments, dtypes=DTYPE_RULES,
    benchmarks=(("inplace_zero grad resnet50 layer4 conv (512,512,3,3)", _gradient((512, 512, 3, 3))),
                ("inplace_zero grad resnet50 fc (1000,2048)", _gradient((1000, 2048))),
                ("inplace_zero grad activation (8,64,56,56)", _gradient((8, 64, 56, 56))))))
