"""aclnnInplaceCopyGetWorkspaceSize / aclnnInplaceCopy: ``selfRef.copy_(src)``, in place.

C header ``aclnnop/aclnn_copy.h`` (ops-math ``conversion/view_copy``)::

    aclnnStatus aclnnInplaceCopyGetWorkspaceSize(aclTensor* selfRef, const aclTensor* src,
                                                 uint64_t* workspaceSize, aclOpExecutor** executor);
    aclnnStatus aclnnInplaceCopy(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
                                 const aclrtStream stream);

src is converted to selfRef's dtype (as Cast converts: a float into an integer truncates toward
zero, a complex into a real type keeps the real part), broadcast to selfRef's shape and written
through selfRef's view (strides and offset honoured: CANN's ViewCopy). There is no CanCast
check: any pair of listed dtypes is copied. A src that overlaps selfRef is read first.

Constraints, in the order CANN checks them (each violation is 161002 unless noted):

1. selfRef and src are required (None: 161001).
2. selfRef's, then src's, dtype in INT8, INT16, INT32, INT64, UINT8, UINT16, UINT32, UINT64,
   FLOAT16, FLOAT, BOOL, DOUBLE, COMPLEX64, COMPLEX128, BFLOAT16. (CANN's code also lists the
   FP8 types FLOAT8_E5M2, FLOAT8_E4M3FN, HIFLOAT8 and FLOAT8_E8M0, which its doc leaves out:
   neither backend converts them yet, so they are refused here.)
3. At most 8 dims each; src broadcasts to selfRef's shape (never the reverse).
4. An empty selfRef or src: nothing written.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from .._convert.executor import planned
from .._convert.typed import TypedCall
from .._convert.values import host_array, tensor_arg
from .._numpy import elementwise as _ew
from .._numpy.plans import NumpyOp, Prepared, plan
from .._runtime.tensor import Tensor
from ._checks import check_dtype, check_not_null
from ._dispatch import dispatch, documented
from ._elementwise import check_inplace, check_rank
from ._inplace import written_arg, written_array
from ._registry import numpy_dtypes

API = "aclnnInplaceCopyGetWorkspaceSize"

#: The dtypes each rule accepts: the one table of these checks (the simulator's are generated from it).
DTYPE_RULES = {"DTYPES": ("ACL_INT8", "ACL_INT16", "ACL_INT32", "ACL_INT64", "ACL_UINT8", "ACL_UINT16", "ACL_UINT32",
                          "ACL_UINT64", "ACL_FLOAT16", "ACL_FLOAT", "ACL_BOOL", "ACL_DOUBLE", "ACL_COMPLEX64",
                          "ACL_COMPLEX128", "ACL_BF16")}
DTYPES = numpy_dtypes(DTYPE_RULES["DTYPES"])


def _prepare(self_ref: object, src: object) -> Prepared:
    self_ref = written_arg(API, "selfRef", self_ref)
    src = tensor_arg(API, "src", src)
    check_not_null(API, selfRef=self_ref, src=src)
    assert self_ref is not None and src is not None  # (just checked)
    check_dtype(API, "selfRef", self_ref, DTYPES)
    check_dtype(API, "src", src, DTYPES)
    check_rank(API, "selfRef", self_ref.shape)
    check_rank(API, "src", src.shape)
    check_inplace(API, "selfRef", self_ref.shape, "src", src.shape)

    def run(self_ref: object, src: object) -> np.ndarray:
        a, b = written_array(API, "selfRef", self_ref), host_array(API, "src", src)
        if a.size == 0 or b.size == 0:
            return a
        if np.may_share_memory(a, b):
            a[...] = _ew.convert(b, a.dtype)  # (src read whole before selfRef is written)
        else:
            _ew.convert_into(a, b)
        return a

    return plan(run, self_ref.nbytes + src.nbytes), (self_ref, src)


_numpy = NumpyOp(_prepare)

#: The npu/sim path: the two-phase C call, selfRef written in place.
_aclnn = planned(TypedCall("InplaceCopy"))


@documented
def inplace_copy(self_ref: np.ndarray | Tensor, src: ArrayLike | Tensor, *, backend: str | None = None,
                 stream: object = None) -> np.ndarray | Tensor:
    """``self_ref.copy_(src)``: ``src`` converted and broadcast into ``self_ref``, in place;
    returns ``self_ref``.

    Mirrors ``aclnnInplaceCopyGetWorkspaceSize`` + ``aclnnInplaceCopy``.

    Args:
        self_ref: CANN's ``selfRef``, written in place: a writable NumPy array (on npu/sim
            copied to the device and the result copied back into it) or, on npu/sim, a device
            ``aclnn_py.Tensor`` (written where it is, any view); at most 8 dims; INT8, INT16,
            INT32, INT64, UINT8, UINT16, UINT32, UINT64, FLOAT16, FLOAT, BOOL, DOUBLE,
            COMPLEX64, COMPLEX128 or BFLOAT16.
        src: a shape that broadcasts to ``self_ref``'s (at most 8 dims); the same dtypes, any
            pair (no castability check: a float into an integer truncates toward zero, NaN to
            0; a complex into a real type keeps the real part; anything into BOOL is
            "non-zero").
        {backend_and_stream}

    {tensor_arguments}

    Returns:
        self_ref itself, holding src (only the elements of its view are written).

    Raises:
        AclnnError: 161001 if an argument is None; 161002 for a dtype, rank or shape outside
            the constraints above.
        TypeError: a self_ref that is not a writable array (or Tensor), or a src that is not
            an array.
    """
    result: np.ndarray | Tensor = dispatch(backend, _numpy, _aclnn, self_ref, src, stream=stream)
    return result


# -- registration: what the tools know of this operator (ops/_registry.py) -------------------------

from typing import Any  # noqa: E402

from ._cases import OpCall, random_array  # noqa: E402
from ._checks import FLOAT32  # noqa: E402
from ._elementwise import fuzz_pair  # noqa: E402
from ._registry import Operator, register  # noqa: E402


def _case(rng: np.random.Generator, shape: Any, dtype: np.dtype, src_dims: int | None = None,
          src_dtype: Any = None) -> OpCall:
    """self_ref of ``shape`` and ``dtype``; src of its trailing ``src_dims`` dims (broadcast),
    of ``src_dtype`` (default: the same)."""
    src_shape = tuple(shape)[len(shape) - src_dims:] if src_dims is not None else tuple(shape)
    src = random_array(rng, src_shape, dtype if src_dtype is None else src_dtype)
    words = [f"src {list(src_shape)}" if src_dims is not None else "", f"from {np.dtype(src.dtype)}" if src_dtype else ""]
    return OpCall("inplace_copy", (random_array(rng, shape, dtype), src), case=" ".join(w for w in words if w))


def _torch(torch: Any, self_ref: Any, src: Any) -> Any:
    return self_ref.copy_(src)


def _fuzz(f: Any) -> list[Any]:
    return list(fuzz_pair(f))


def _c_arguments(args: list[Any], out_like: Any) -> list[Any]:
    return [args[0], args[1]]


def _copy(shape: tuple[int, ...], src_shape: tuple[int, ...], dtype: Any, src_dtype: Any) -> Any:
    def arguments(rng: np.random.Generator) -> tuple[Any, ...]:
        return (rng.standard_normal(shape, dtype=np.float32).astype(dtype),
                rng.standard_normal(src_shape, dtype=np.float32).astype(src_dtype))
    return arguments


OPERATOR = register(Operator(
    inplace_copy, "InplaceCopy", header="aclnn_copy.h", package="ops-math", library="libopapi_math.so",
    outputs=("selfRef",), inplace="selfRef", overwrites=True,
    case=_case, selftest=(((2, 3, 4, 5), DTYPES, dict()),
                          ((4, 6, 7), (FLOAT32,), dict(src_dims=1)),
                          ((3, 5), (FLOAT32,), dict(src_dtype=np.float16))),
    bench=((512, 512, 3, 3), dict()),
    torch=_torch, memory_bound=True, fuzz=_fuzz, c_arguments=_c_arguments, dtypes=DTYPE_RULES,
    benchmarks=(("inplace_copy weight resnet50 layer4 conv (512,512,3,3)",
                 _copy((512, 512, 3, 3), (512, 512, 3, 3), np.float32, np.float32)),
                ("inplace_copy float32 master into float16 weight (512,512,3,3)",
                 _copy((512, 512, 3, 3), (512, 512, 3, 3), np.float16, np.float32)),
                ("inplace_copy bias broadcast (8,128,28,28) from (128,1,1)",
                 _copy((8, 128, 28, 28), (128, 1, 1), np.float32, np.float32)))))
