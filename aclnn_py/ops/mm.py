"""aclnnMmGetWorkspaceSize / aclnnMm: the matrix product of two 2-D tensors (``torch.mm``).

C header ``aclnnop/aclnn_mm.h`` (ops-nn ``matmul/mat_mul_v3``)::

    aclnnStatus aclnnMmGetWorkspaceSize(const aclTensor *self, const aclTensor *mat2, aclTensor *out,
                                        int8_t cubeMathType, uint64_t *workspaceSize, aclOpExecutor **executor);
    aclnnStatus aclnnMm(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream);

Computes ``out = self @ mat2`` in the dtype cubeMathType and CANN's A2/A3 table give the pair
(``ops/_matmul.py``: float16 pairs in float16, bfloat16 pairs in bfloat16, the rest in float32,
USE_FP16 in float16), the products summed in float32 and rounded once to out's dtype (a
FLOAT out of two FLOAT16 inputs gets the float32 sums). Strided and transposed views are
read as they are (CANN's matmuls take transposed operands natively).

Constraints, in the order CANN checks them (each violation is 161002 unless noted):

1. out (``call`` only), then self, then mat2 are not None (161001).
2. self, mat2, out dtypes in FLOAT, FLOAT16, BFLOAT16; cubeMathType in -1..4.
3. mat2 is 2-D, then self is 2-D; self's K (last dim) equals mat2's first dim.
4. out is 2-D and [M, N] (``call`` only: the function makes it, of self's dtype when the two
   agree, else FLOAT).
5. An empty out gives an empty result; K = 0 gives zeros.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike

from .._convert.executor import dtype_of, planned, shape_of
from .._convert.typed import Output, TypedCall
from .._convert.values import c_int, host_array, tensor_arg
from .._numpy import matmul as _np_matmul
from .._numpy.plans import NumpyOp, Prepared, plan
from .._runtime.memory import check_allocation
from .._runtime.tensor import Tensor
from . import _matmul
from ._checks import check_dtype, check_not_null
from ._dispatch import dispatch, documented
from ._registry import numpy_dtypes

API = "aclnnMmGetWorkspaceSize"

#: The dtypes each rule accepts: the one table of these checks (the simulator's are generated from it).
DTYPE_RULES = {"DTYPES": ("ACL_FLOAT", "ACL_FLOAT16", "ACL_BF16")}
DTYPES = numpy_dtypes(DTYPE_RULES["DTYPES"])


def _shape_checks(self: object, mat2: object, cube_math_type: int) -> tuple[int, int]:
    """CANN's shape checks of self and mat2; [M, N]."""
    a, b = shape_of(self), shape_of(mat2)
    _matmul.check_rank(API, "mat2", b, 2)
    _matmul.check_rank(API, "self", a, 2)
    _matmul.check_k(API, "self", a, "mat2", b, 0)
    return a[0], b[1]


def _prepare(self: object, mat2: object, cube_math_type: object) -> Prepared:
    """The numpy path: check in CANN's order, then the product."""
    cube = c_int(API, "cubeMathType", cube_math_type, 8)
    self = tensor_arg(API, "self", self)
    mat2 = tensor_arg(API, "mat2", mat2)
    check_not_null(API, self=self, mat2=mat2)
    assert self is not None and mat2 is not None  # (just checked)
    check_dtype(API, "self", self, DTYPES)
    check_dtype(API, "mat2", mat2, DTYPES)
    _matmul.check_cube_math_type(API, cube)
    m, n = _shape_checks(self, mat2, cube)
    compute = _matmul.compute_dtype(self.dtype, mat2.dtype, cube)
    out = _matmul.result_dtype(self.dtype, mat2.dtype)

    def run(self: object, mat2: object, *_: object) -> np.ndarray:
        check_allocation(m * n * out.itemsize)
        return _np_matmul.product(host_array(API, "self", self), host_array(API, "mat2", mat2), compute, out)

    return plan(run, self.nbytes + mat2.nbytes + m * n * out.itemsize), (self, mat2, cube)


_numpy = NumpyOp(_prepare)


def _outputs(self: object, mat2: object, cube_math_type: int) -> list[Output]:
    """out: [M, N], the inputs' dtype (FLOAT when they differ)."""
    a, b = shape_of(self), shape_of(mat2)
    shape = (a[0], b[1]) if len(a) == len(b) == 2 else (0, 0)  # (refused by the checks otherwise)
    return [Output(shape, _matmul.result_dtype(dtype_of(self), dtype_of(mat2)))]


#: The npu/sim path: the two-phase C call, the arguments converted by their declared C types.
_aclnn = planned(TypedCall("Mm", _outputs, checks=_shape_checks))
_MADE = {"out": "[M, N] and the inputs' dtype (FLOAT when they differ)"}


@documented
def mm(self: ArrayLike | Tensor, mat2: ArrayLike | Tensor, cube_math_type: int = 0, *, backend: str | None = None,
       stream: object = None) -> np.ndarray | Tensor:
    """The matrix product ``self @ mat2`` of two 2-D tensors (``torch.mm``).

    Mirrors ``aclnnMmGetWorkspaceSize`` + ``aclnnMm``.

    Args:
        self: (M, K); FLOAT, FLOAT16 or BFLOAT16; any strides (a transposed view is read as it is).
        mat2: (K, N); the same dtypes.
        cube_math_type: cubeMathType: 0 KEEP_DTYPE (default), 1 ALLOW_FP32_DOWN_PRECISION,
            2 USE_FP16, 3 USE_HF32, 4 USE_FP32_ADD, -1 FP16FP32_KEEP_DTYPE (A2/A3). USE_FP16
            rounds FLOAT and BFLOAT16 inputs to FLOAT16 (two BFLOAT16 inputs stay BFLOAT16);
            HF32 is computed as FLOAT here (its rounding is not verified).
        {backend_and_stream}

    {tensor_arguments}

    Returns:
        out: (M, N), the inputs' dtype (FLOAT when they differ); products summed in float32,
        rounded once.

    Raises:
        AclnnError: 161001 if an argument is None; 161002 for a dtype, cubeMathType, rank or K
            outside the constraints in the module docstring.
        TypeError: an argument of the wrong Python type.
    """
    result: np.ndarray | Tensor = dispatch(backend, _numpy, _aclnn, self, mat2, cube_math_type, stream=stream,
                                           made=_MADE)
    return result


# -- registration: what the tools know of this operator (ops/_registry.py) -------------------------

from typing import Any  # noqa: E402

from ._cases import OpCall, random_array  # noqa: E402
from ._registry import Operator, register  # noqa: E402


def _case(rng: np.random.Generator, shape: Any, dtype: np.dtype, n: int = 7, cube_math_type: int = 0) -> OpCall:
    """self (M, K) from ``shape`` (its last dim K, the rest M), mat2 (K, n)."""
    m, k = math.prod(map(int, shape[:-1])), int(shape[-1])
    return OpCall("mm", (random_array(rng, (m, k), dtype), random_array(rng, (k, n), dtype), cube_math_type),
                  case=f"cubeMathType {cube_math_type}")


def _torch(torch: Any, self: Any, mat2: Any, cube_math_type: int = 0) -> Any:
    return torch.mm(self, mat2)


def _fuzz(f: Any) -> list[Any]:
    m, k, n = f.small_int(0, 9), f.small_int(0, 9), f.small_int(0, 9)
    dtype = f.pick(f.FLOATS)
    return [f.filled((m, k), dtype), f.filled((k, f.pick((n, n + 1))), dtype), f.pick((0, 1, 2, 3, 4, -1, 5))]


def _c_arguments(args: list[Any], out_like: Any) -> list[Any]:
    a, b = args[0], args[1]
    return [a, b, out_like((a.shape[0], b.shape[1]), _matmul.result_dtype(a.dtype, b.dtype)), args[2]]


def _layer(m: int, k: int, n: int, transposed: bool = False) -> Any:
    """x (m, k) @ W^T for a linear layer of weight W (n, k): the weight read through its transpose."""
    def make(rng: np.random.Generator) -> tuple[Any, ...]:
        x = rng.standard_normal((m, k), dtype=np.float32)
        w = rng.standard_normal((n, k), dtype=np.float32) / float(np.sqrt(k))
        return (x, w.T if transposed else np.ascontiguousarray(w.T), 0)
    return make


OPERATOR = register(Operator(
    mm, "Mm", header="aclnn_mm.h", package="ops-nn", library="libopapi_nn.so", outputs=("out",), case=_case,
    selftest=(((32, 48), DTYPES, dict()), ((16, 24), DTYPES[:1], dict(cube_math_type=2))),
    bench=((256, 512), dict(n=1000)),
    torch=_torch, fuzz=_fuzz, c_arguments=_c_arguments, dtypes=DTYPE_RULES,
    benchmarks=(("mm classifier head 32x512 @ 512x1000", _layer(32, 512, 1000)),
                ("mm classifier head 256x512 @ (1000x512)^T", _layer(256, 512, 1000, transposed=True)),
                ("mm VGG fc 64x4096 @ 4096x4096", _layer(64, 4096, 4096)))))
