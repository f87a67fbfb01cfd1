"""aclnnBatchMatMulGetWorkspaceSize / aclnnBatchMatMul: a batch of matrix products of 3-D
tensors (``torch.bmm``, with a batch of 1 on either side broadcast).

C header ``aclnnop/aclnn_batch_matmul.h`` (ops-nn ``matmul/batch_mat_mul_v3``)::

    aclnnStatus aclnnBatchMatMulGetWorkspaceSize(const aclTensor *self, const aclTensor *mat2, aclTensor *out,
                                                 int8_t cubeMathType, uint64_t *workspaceSize,
                                                 aclOpExecutor **executor);
    aclnnStatus aclnnBatchMatMul(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                 aclrtStream stream);

``out[b] = self[b] @ mat2[b]`` (a batch of 1 repeated), each product as Mm's
(``ops/_matmul.py``), the products summed in float32, rounded once to out's dtype.

Constraints, in the order CANN checks them (each violation is 161002 unless noted):

1. On A2/A3 cubeMathType 4 (USE_FP32_ADD) is replaced by 0 before any check.
2. self, mat2, out (``call`` only) are not None (161001).
3. self, mat2, out dtypes in FLOAT, FLOAT16, BFLOAT16; cubeMathType in -1..3.
4. self, mat2, out are 3-D; self's K (last dim) equals mat2's second; the batches are equal
   or one is 1; out is [B, M, N] (``call`` only: the function makes it, of the inputs' dtype
   when they agree, else FLOAT).
5. An empty out gives an empty result; K = 0 gives zeros, except with a self batch of 1 and a
   larger mat2 batch, whose zeros CANN copies from self's batch: 561103 (read from CANN's
   code, not verified on a device).
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

API = "aclnnBatchMatMulGetWorkspaceSize"

#: The dtypes each rule accepts: the one table of these checks (the simulator's are generated from it).
DTYPE_RULES = {"DTYPES": ("ACL_FLOAT", "ACL_FLOAT16", "ACL_BF16")}
DTYPES = numpy_dtypes(DTYPE_RULES["DTYPES"])


def _shape_checks(self: object, mat2: object, cube_math_type: int) -> tuple[int, int, int]:
    """CANN's shape checks of self and mat2; [B, M, N]."""
    a, b = shape_of(self), shape_of(mat2)
    _matmul.check_rank(API, "self", a, 3)
    _matmul.check_rank(API, "mat2", b, 3)
    _matmul.check_k(API, "self", a, "mat2", b, -2)
    batch = _matmul.broadcast_batch(API, a, b)
    return batch[0], a[1], b[2]


def _prepare(self: object, mat2: object, cube_math_type: object) -> Prepared:
    """The numpy path: check in CANN's order, then the products."""
    cube = c_int(API, "cubeMathType", cube_math_type, 8)
    cube = 0 if cube == 4 else cube
    self = tensor_arg(API, "self", self)
    mat2 = tensor_arg(API, "mat2", mat2)
    check_not_null(API, self=self, mat2=mat2)
    assert self is not None and mat2 is not None  # (just checked)
    check_dtype(API, "self", self, DTYPES)
    check_dtype(API, "mat2", mat2, DTYPES)
    _matmul.check_cube_math_type(API, cube)
    shape = _shape_checks(self, mat2, cube)
    if self.shape[2] == 0 and self.shape[0] != shape[0] and 0 not in shape:
        raise _matmul.copy_failure(API, f"K is 0 and self's batch {self.shape[0]} is not out's {shape[0]}: its zeros "
                                        f"cannot be copied into out")
    compute = _matmul.compute_dtype(self.dtype, mat2.dtype, cube)
    out = _matmul.result_dtype(self.dtype, mat2.dtype)
    nbytes = math.prod(map(int, shape)) * out.itemsize

    def run(self: object, mat2: object, *_: object) -> np.ndarray:
        check_allocation(nbytes)
        return _np_matmul.product(host_array(API, "self", self), host_array(API, "mat2", mat2), compute, out)

    return plan(run, self.nbytes + mat2.nbytes + nbytes), (self, mat2, cube)


_numpy = NumpyOp(_prepare)


def _outputs(self: object, mat2: object, cube_math_type: int) -> list[Output]:
    """out: [B, M, N], the inputs' dtype (FLOAT when they differ)."""
    a, b = shape_of(self), shape_of(mat2)
    shape = (max(a[0], b[0]) if min(a[0], b[0]) != 0 else 0, a[1], b[2]) if len(a) == len(b) == 3 else (0, 0, 0)
    return [Output(shape, _matmul.result_dtype(dtype_of(self), dtype_of(mat2)))]


#: The npu/sim path: the two-phase C call, the arguments converted by their declared C types.
_aclnn = planned(TypedCall("BatchMatMul", _outputs, checks=_shape_checks))
_MADE = {"out": "[B, M, N] and the inputs' dtype (FLOAT when they differ)"}


@documented
def batch_mat_mul(self: ArrayLike | Tensor, mat2: ArrayLike | Tensor, cube_math_type: int = 0, *,
                  backend: str | None = None, stream: object = None) -> np.ndarray | Tensor:
    """A batch of matrix products ``self[b] @ mat2[b]`` (``torch.bmm``; a batch of 1 broadcasts).

    Mirrors ``aclnnBatchMatMulGetWorkspaceSize`` + ``aclnnBatchMatMul``.

    Args:
        self: (B1, M, K); FLOAT, FLOAT16 or BFLOAT16; any strides (transposed matrices included).
        mat2: (B2, K, N), B2 equal to B1 or either 1; the same dtypes.
        cube_math_type: cubeMathType, as ``mm``'s (0 KEEP_DTYPE by default); 4 is 0 on A2/A3.
        {backend_and_stream}

    {tensor_arguments}

    Returns:
        out: (max(B1, B2), M, N), the inputs' dtype (FLOAT when they differ), rounded once.

    Raises:
        AclnnError: 161001 if an argument is None; 161002 for a dtype, cubeMathType, rank, K or
            batch outside the constraints in the module docstring; 561103 for K = 0 with a self
            batch of 1 broadcast.
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
    """self (B, M, K) from ``shape`` (its last two dims M, K, the rest B), mat2 (B, K, n)."""
    b, m, k = math.prod(map(int, shape[:-2])), int(shape[-2]), int(shape[-1])
    return OpCall("batch_mat_mul", (random_array(rng, (b, m, k), dtype), random_array(rng, (b, k, n), dtype),
                                    cube_math_type), case=f"cubeMathType {cube_math_type}")


def _torch(torch: Any, self: Any, mat2: Any, cube_math_type: int = 0) -> Any:
    return torch.matmul(self, mat2)


def _fuzz(f: Any) -> list[Any]:
    b1, b2, m, k, n = f.pick((1, 3)), f.pick((1, 3, 2)), f.small_int(0, 6), f.small_int(0, 6), f.small_int(0, 6)
    dtype = f.pick(f.FLOATS)
    return [f.filled((b1, m, k), dtype), f.filled((b2, f.pick((k, k + 1)), n), dtype), f.pick((0, 1, 2, 4, 5))]


def _c_arguments(args: list[Any], out_like: Any) -> list[Any]:
    a, b = args[0], args[1]
    return [a, b, out_like((max(a.shape[0], b.shape[0]), a.shape[1], b.shape[2]),
                           _matmul.result_dtype(a.dtype, b.dtype)), args[2]]


def _attention(batch: int, heads: int, seq: int, d: int, scores: bool) -> Any:
    """BERT-like attention: scores Q @ K^T (K read through its transpose), or probabilities @ V."""
    def make(rng: np.random.Generator) -> tuple[Any, ...]:
        q = rng.standard_normal((batch * heads, seq, d), dtype=np.float32)
        if scores:
            k = rng.standard_normal((batch * heads, seq, d), dtype=np.float32)
            return (q, k.transpose(0, 2, 1), 0)
        p = rng.random((batch * heads, seq, seq), dtype=np.float32)
        return (p, q, 0)
    return make


OPERATOR = register(Operator(
    batch_mat_mul, "BatchMatMul", header="aclnn_batch_matmul.h", package="ops-nn", library="libopapi_nn.so",
    outputs=("out",), case=_case, selftest=(((3, 16, 24), DTYPES, dict()), ((2, 8, 12), DTYPES[:1], dict())),
    bench=((96, 128, 64), dict(n=128)),
    torch=_torch, fuzz=_fuzz, c_arguments=_c_arguments, dtypes=DTYPE_RULES,
    benchmarks=(("batch_mat_mul BERT attention scores 4x12 heads 128x64 @ (128x64)^T", _attention(4, 12, 128, 64, True)),
                ("batch_mat_mul BERT attention context 4x12 heads 128x128 @ 128x64", _attention(4, 12, 128, 64, False)))))
