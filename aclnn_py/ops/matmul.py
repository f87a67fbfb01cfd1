"""aclnnMatmulGetWorkspaceSize / aclnnMatmul: the matrix product of tensors of 1 to 6 dims
(``torch.matmul``).

C header ``aclnnop/aclnn_matmul.h`` (ops-nn ``matmul/mat_mul_v3``; its aclnnMatmulWeightNz is not
provided here)::

    aclnnStatus aclnnMatmulGetWorkspaceSize(const aclTensor *self, const aclTensor *mat2, aclTensor *out,
                                            int8_t cubeMathType, uint64_t *workspaceSize, aclOpExecutor **executor);
    aclnnStatus aclnnMatmul(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream);

The result's shape is torch.matmul's: 1-D @ 1-D is a 0-d dot product (computed in the inputs'
promoted dtype: cubeMathType is ignored); (M, K) @ (K) is [M]; (K) @ (K, N) is [N]; the batch
dims (all but the last two; a 2-D operand has none) broadcast; a 1-D operand's padded dim is
removed. Each product is computed as Mm's (``ops/_matmul.py``), the products summed in
float32, rounded once to out's dtype.

Constraints, in the order CANN checks them (each violation is 161002 unless noted):

1. self, mat2, out (``call`` only) are not None (161001).
2. self, mat2, out dtypes in FLOAT, FLOAT16, BFLOAT16; cubeMathType in -1..4.
3. self and mat2 have at most 6 dims (both first), then at least 1; self's K (last dim)
   equals mat2's first dim (mat2 1-D or 2-D) or second-to-last (3-D and more); when both have
   2 dims or more, their batch dims broadcast.
4. CANN never checks out's shape: the result is reshaped into out, any shape of the same
   element count passes, another count fails at the final copy (561103; ``call`` on sim. The
   function makes out of the result's shape, of the inputs' dtype when they agree, else FLOAT).
5. An empty out gives an empty result; K = 0 gives zeros.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike

from .._convert.executor import dtype_of, planned, shape_of
from .._convert.typed import Output, TypedCall
from .._convert.values import c_int, host_array, tensor_arg
from .._errors import AclnnError
from .._numpy import matmul as _np_matmul
from .._numpy.plans import NumpyOp, Prepared, plan
from .._runtime.memory import check_allocation
from .._runtime.tensor import Tensor
from . import _matmul
from ._checks import check_dtype, check_not_null
from ._dispatch import dispatch, documented
from ._registry import numpy_dtypes

API = "aclnnMatmulGetWorkspaceSize"

#: The dtypes each rule accepts: the one table of these checks (the simulator's are generated from it).
DTYPE_RULES = {"DTYPES": ("ACL_FLOAT", "ACL_FLOAT16", "ACL_BF16")}
DTYPES = numpy_dtypes(DTYPE_RULES["DTYPES"])


def _shape_checks(self: object, mat2: object, cube_math_type: int) -> tuple[int, ...]:
    """CANN's shape checks of self and mat2; the result's shape."""
    return _matmul.matmul_shape(API, shape_of(self), shape_of(mat2))


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
    shape = _shape_checks(self, mat2, cube)
    dot = self.ndim == 1 and mat2.ndim == 1
    compute = _matmul.compute_dtype(self.dtype, mat2.dtype, 0 if dot else cube)
    out = _matmul.result_dtype(self.dtype, mat2.dtype)
    nbytes = math.prod(map(int, shape)) * out.itemsize

    def run(self: object, mat2: object, *_: object) -> np.ndarray:
        check_allocation(nbytes)
        return np.asarray(_np_matmul.product(host_array(API, "self", self), host_array(API, "mat2", mat2), compute,
                                             out))

    return plan(run, self.nbytes + mat2.nbytes + nbytes), (self, mat2, cube)


_numpy = NumpyOp(_prepare)


def _outputs(self: object, mat2: object, cube_math_type: int) -> list[Output]:
    """out: torch.matmul's shape, the inputs' dtype (FLOAT when they differ)."""
    try:
        shape = _shape_checks(self, mat2, cube_math_type)
    except AclnnError:
        shape = (0,)  # (refused by the checks)
    return [Output(shape, _matmul.result_dtype(dtype_of(self), dtype_of(mat2)))]


#: The npu/sim path: the two-phase C call, the arguments converted by their declared C types.
_aclnn = planned(TypedCall("Matmul", _outputs, checks=_shape_checks))
_MADE = {"out": "torch.matmul's shape and the inputs' dtype (FLOAT when they differ)"}


@documented
def matmul(self: ArrayLike | Tensor, mat2: ArrayLike | Tensor, cube_math_type: int = 0, *,
           backend: str | None = None, stream: object = None) -> np.ndarray | Tensor:
    """The matrix product ``self @ mat2`` of tensors of 1 to 6 dims (``torch.matmul``).

    Mirrors ``aclnnMatmulGetWorkspaceSize`` + ``aclnnMatmul``.

    Args:
        self: 1 to 6 dims, (..., M, K) or (K); FLOAT, FLOAT16 or BFLOAT16; any strides.
        mat2: 1 to 6 dims, (..., K, N) or (K); the same dtypes. Batch dims broadcast.
        cube_math_type: cubeMathType, as ``mm``'s (0 KEEP_DTYPE by default); ignored for a
            1-D @ 1-D dot product.
        {backend_and_stream}

    {tensor_arguments}

    Returns:
        out: torch.matmul's shape, the inputs' dtype (FLOAT when they differ), rounded once.

    Raises:
        AclnnError: 161001 if an argument is None; 161002 for a dtype, cubeMathType, rank, K or
            batch broadcast outside the constraints in the module docstring.
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
    """self of ``shape`` (..., M, K), mat2 (K, n) shared by the batch."""
    return OpCall("matmul", (random_array(rng, shape, dtype), random_array(rng, (shape[-1], n), dtype),
                             cube_math_type), case=f"cubeMathType {cube_math_type}")


def _torch(torch: Any, self: Any, mat2: Any, cube_math_type: int = 0) -> Any:
    return torch.matmul(self, mat2)


def _fuzz(f: Any) -> list[Any]:
    k = f.small_int(0, 6)
    a = f.pick(((k,), (3, k), (2, 3, k), (1, 2, 3, k), (7, k, 2)))
    b = f.pick(((k,), (k, 4), (2, k, 4), (4, 1, k, 4), (3, 2, k), (k + 1, 2)))
    dtype = f.pick(f.FLOATS)
    return [f.filled(a, dtype), f.filled(b, dtype), f.pick((0, 1, 2, 4, 6))]


def _c_arguments(args: list[Any], out_like: Any) -> list[Any]:
    made = _outputs(args[0], args[1], args[2])[0]
    return [args[0], args[1], out_like(made.shape, made.dtype), args[2]]


def _layers(a: tuple[int, ...], b: tuple[int, ...], transposed: bool = False) -> Any:
    def make(rng: np.random.Generator) -> tuple[Any, ...]:
        x = rng.standard_normal(a, dtype=np.float32)
        w = rng.standard_normal(b[::-1] if transposed else b, dtype=np.float32) / float(np.sqrt(a[-1]))
        return (x, w.T if transposed else w, 0)
    return make


OPERATOR = register(Operator(
    matmul, "Matmul", header="aclnn_matmul.h", package="ops-nn", library="libopapi_nn.so", outputs=("out",),
    case=_case, selftest=(((2, 16, 24), DTYPES, dict()), ((24,), DTYPES[:1], dict())),
    bench=((8, 128, 768), dict(n=768)),
    torch=_torch, fuzz=_fuzz, c_arguments=_c_arguments, dtypes=DTYPE_RULES,
    benchmarks=(("matmul classifier head 64x512 @ (1000x512)^T", _layers((64, 512), (512, 1000), transposed=True)),
                ("matmul BERT projection 4x128x768 @ 768x768", _layers((4, 128, 768), (768, 768))),
                ("matmul vector 4096 @ 4096x1000", _layers((4096,), (4096, 1000))))))
