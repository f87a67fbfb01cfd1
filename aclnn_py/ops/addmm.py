"""aclnnAddmmGetWorkspaceSize / aclnnAddmm: ``out = beta * self + alpha * (mat1 @ mat2)``
(``torch.addmm``; a linear layer's forward with ``self`` its bias).

C header ``aclnnop/aclnn_addmm.h`` (ops-nn ``matmul/mat_mul_v3``; its aclnnInplaceAddmm and
aclnnAddmmWeightNz are not provided here)::

    aclnnStatus aclnnAddmmGetWorkspaceSize(const aclTensor *self, const aclTensor *mat1, const aclTensor *mat2,
                                           const aclScalar *beta, const aclScalar *alpha, aclTensor *out,
                                           int8_t cubeMathType, uint64_t *workspaceSize, aclOpExecutor **executor);
    aclnnStatus aclnnAddmm(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream);

alpha and beta are read as FLOAT whatever their dtype (CANN's ``ToFloat``; never checked).
If ``|alpha| <= FLT_EPSILON``, out = beta * self broadcast to [M, N] and the product is never
computed (a NaN in mat1 does not reach out); else if ``|beta| <= FLT_EPSILON``, out = alpha *
(mat1 @ mat2) and self is ignored. The product is computed as Mm's (``ops/_matmul.py``; A2/A3
raise FLOAT16 and BFLOAT16 pairs to float32 intermediates, which the float32 sums here are),
the sum in float32, rounded once to out's dtype.

Constraints, in the order CANN checks them (each violation is 161002 unless noted):

1. self, mat1, mat2, beta, alpha, out (``call`` only) are not None (161001).
2. mat1, mat2, self, out dtypes in FLOAT, FLOAT16, BFLOAT16; cubeMathType in -1..4.
3. mat1 and mat2 are 2-D; mat1's K (last dim) equals mat2's first dim.
4. self has 1 or 2 dims and broadcasts with [M, N] (CANN's test is symmetric: a self that
   passes it but cannot be expanded to [M, N], e.g. [2, N] with M = 1, fails at the final
   copy, 561103).
5. out is empty when M or N is 0, else its first two dims are [M, N] (``call`` only: the
   function makes it, of the inputs' dtype when they agree, else FLOAT).
6. An empty self, M = 0 or N = 0 give an empty result (nothing written); K = 0 gives
   beta * self.
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
from ._checks import check, check_dtype, check_not_null, shape_str
from ._dispatch import dispatch, documented
from ._elementwise import scalar_arg
from ._registry import numpy_dtypes

API = "aclnnAddmmGetWorkspaceSize"

#: The dtypes each rule accepts: the one table of these checks (the simulator's are generated from it).
DTYPE_RULES = {"DTYPES": ("ACL_FLOAT", "ACL_FLOAT16", "ACL_BF16")}
DTYPES = numpy_dtypes(DTYPE_RULES["DTYPES"])


def _shape_checks(self: object, mat1: object, mat2: object, beta: object, alpha: object,
                  cube_math_type: int) -> tuple[int, int]:
    """CANN's shape checks of mat1, mat2 and self; [M, N]."""
    s, a, b = shape_of(self), shape_of(mat1), shape_of(mat2)
    _matmul.check_rank(API, "mat1", a, 2)
    _matmul.check_rank(API, "mat2", b, 2)
    _matmul.check_k(API, "mat1", a, "mat2", b, 0)
    m, n = a[0], b[1]
    check(API, 1 <= len(s) <= 2, lambda: f"self must be 1-D or 2-D, got {len(s)}-D shape {shape_str(s)}")
    padded = (1,) * (2 - len(s)) + tuple(s)
    check(API, all(p == q or p == 1 or q == 1 for p, q in zip(padded, (m, n))),
          lambda: f"self {shape_str(s)} and [M, N] = {shape_str((m, n))} do not broadcast")
    return m, n


def _expandable(self_shape: tuple[int, ...], m: int, n: int) -> None:
    """The final copy's requirement (561103): self expands to [M, N]."""
    padded = (1,) * (2 - len(self_shape)) + tuple(self_shape)
    if any(p not in (1, q) for p, q in zip(padded, (m, n))):
        raise _matmul.copy_failure(API, f"self {shape_str(self_shape)} cannot be expanded to [M, N] = "
                                        f"{shape_str((m, n))}: the result cannot be copied into out")


def _prepare(self: object, mat1: object, mat2: object, beta: object, alpha: object,
             cube_math_type: object) -> Prepared:
    """The numpy path: check in CANN's order, then the product and the sum."""
    cube = c_int(API, "cubeMathType", cube_math_type, 8)
    self = tensor_arg(API, "self", self)
    mat1 = tensor_arg(API, "mat1", mat1)
    mat2 = tensor_arg(API, "mat2", mat2)
    beta_value, alpha_value = scalar_arg(API, "beta", beta), scalar_arg(API, "alpha", alpha)
    check_not_null(API, self=self, mat1=mat1, mat2=mat2, beta=beta_value, alpha=alpha_value)
    assert self is not None and mat1 is not None and mat2 is not None  # (just checked)
    assert beta_value is not None and alpha_value is not None
    check_dtype(API, "mat1", mat1, DTYPES)
    check_dtype(API, "mat2", mat2, DTYPES)
    check_dtype(API, "self", self, DTYPES)
    _matmul.check_cube_math_type(API, cube)
    m, n = _shape_checks(self, mat1, mat2, beta, alpha, cube)
    empty = self.size == 0 or m == 0 or n == 0
    if not empty:
        _expandable(self.shape, m, n)
    compute = _matmul.compute_dtype(mat1.dtype, mat2.dtype, cube)
    out = _matmul.result_dtype(self.dtype, mat1.dtype, mat2.dtype)
    a_, b_ = np.float32(_matmul.scalar_float(alpha_value)), np.float32(_matmul.scalar_float(beta_value))
    use_product, use_bias = abs(a_) > _matmul.FLT_EPSILON, abs(b_) > _matmul.FLT_EPSILON or \
        abs(a_) <= _matmul.FLT_EPSILON

    def run(self: object, mat1: object, mat2: object, *_: object) -> np.ndarray:
        check_allocation(m * n * out.itemsize)
        if empty:
            return np.zeros((m, n), out)
        if use_product:
            result = _np_matmul.product(host_array(API, "mat1", mat1), host_array(API, "mat2", mat2), compute,
                                        _np_matmul.FLOAT32)
            if a_ != 1:
                result *= a_
        else:
            result = np.zeros((m, n), np.float32)
        if use_bias:
            bias = host_array(API, "self", self).astype(np.float32, copy=False)
            result += bias if b_ == 1 else b_ * bias
        return result if out == _np_matmul.FLOAT32 else result.astype(out)

    return plan(run, self.nbytes + mat1.nbytes + mat2.nbytes + m * n * out.itemsize), \
        (self, mat1, mat2, beta, alpha, cube)


#: beta and alpha key the plans by their values when they are floats (its run reads them from prepare).
_numpy = NumpyOp(_prepare, floats=True)


def _outputs(self: object, mat1: object, mat2: object, beta: object, alpha: object,
             cube_math_type: int) -> list[Output]:
    """out: [M, N], the inputs' dtype (FLOAT when they differ); zeros (an empty self writes none)."""
    a, b = shape_of(mat1), shape_of(mat2)
    shape = (a[0], b[1]) if len(a) == len(b) == 2 else (0, 0)  # (refused by the checks otherwise)
    return [Output(shape, _matmul.result_dtype(dtype_of(self), dtype_of(mat1), dtype_of(mat2)), zero=True)]


#: The npu/sim path: the two-phase C call, the arguments converted by their declared C types.
_aclnn = planned(TypedCall("Addmm", _outputs, checks=_shape_checks))
_MADE = {"out": "[M, N] and the inputs' dtype (FLOAT when they differ)"}


@documented
def addmm(self: ArrayLike | Tensor, mat1: ArrayLike | Tensor, mat2: ArrayLike | Tensor, beta: object = 1,
          alpha: object = 1, cube_math_type: int = 0, *, backend: str | None = None,
          stream: object = None) -> np.ndarray | Tensor:
    """``beta * self + alpha * (mat1 @ mat2)`` (``torch.addmm``).

    Mirrors ``aclnnAddmmGetWorkspaceSize`` + ``aclnnAddmm``.

    Args:
        self: the bias, 1-D or 2-D, broadcast to [M, N]; FLOAT, FLOAT16 or BFLOAT16.
        mat1: (M, K); the same dtypes; any strides.
        mat2: (K, N); the same dtypes; any strides (a linear layer's transposed weight is read
            as it is).
        beta: an aclScalar (a number or an ``aclnn_py.Scalar``), read as FLOAT; at most
            FLT_EPSILON in magnitude: self is ignored.
        alpha: the same; at most FLT_EPSILON in magnitude: the product is not computed.
        cube_math_type: cubeMathType, as ``mm``'s (0 KEEP_DTYPE by default).
        {backend_and_stream}

    {tensor_arguments}

    Returns:
        out: (M, N), the inputs' dtype (FLOAT when they differ), rounded once.

    Raises:
        AclnnError: 161001 if an argument is None; 161002 for a dtype, cubeMathType, rank, K or
            broadcast outside the constraints in the module docstring; 561103 for a self that
            broadcasts with [M, N] but does not expand to it.
        TypeError: an argument of the wrong Python type.
    """
    result: np.ndarray | Tensor = dispatch(backend, _numpy, _aclnn, self, mat1, mat2, beta, alpha, cube_math_type,
                                           stream=stream, made=_MADE)
    return result


# -- registration: what the tools know of this operator (ops/_registry.py) -------------------------

from typing import Any  # noqa: E402

from ._cases import OpCall, random_array  # noqa: E402
from ._registry import Operator, register  # noqa: E402


def _case(rng: np.random.Generator, shape: Any, dtype: np.dtype, n: int = 7, beta: float = 0.5,
          alpha: float = 2.0, cube_math_type: int = 0) -> OpCall:
    """mat1 (M, K) from ``shape`` (its last dim K, the rest M), mat2 (K, n), a bias (n)."""
    m, k = math.prod(map(int, shape[:-1])), int(shape[-1])
    return OpCall("addmm", (random_array(rng, (n,), dtype), random_array(rng, (m, k), dtype),
                            random_array(rng, (k, n), dtype), beta, alpha, cube_math_type),
                  case=f"beta {beta} alpha {alpha}")


def _torch(torch: Any, self: Any, mat1: Any, mat2: Any, beta: Any = 1, alpha: Any = 1, cube_math_type: int = 0) -> Any:
    return torch.addmm(self, mat1, mat2, beta=beta, alpha=alpha)


def _fuzz(f: Any) -> list[Any]:
    m, k, n = f.small_int(0, 9), f.small_int(0, 9), f.small_int(0, 9)
    dtype = f.pick(f.FLOATS)
    bias = f.pick(((n,), (m, n), (1, n), (m, 1), (), (2, n)))
    return [f.filled(bias, dtype), f.filled((m, k), dtype), f.filled((k, n), dtype), f.pick((1, 0.5, 0)),
            f.pick((1, 2.0, 0)), f.pick((0, 1, 2, 5))]


def _c_arguments(args: list[Any], out_like: Any) -> list[Any]:
    s, a, b = args[0], args[1], args[2]
    return [*args[:5], out_like((a.shape[0], b.shape[1]), _matmul.result_dtype(s.dtype, a.dtype, b.dtype)), args[5]]


def _linear(m: int, k: int, n: int) -> Any:
    """A linear layer's forward: bias (n) + x (m, k) @ W^T, W (n, k) read through its transpose."""
    def make(rng: np.random.Generator) -> tuple[Any, ...]:
        x = rng.standard_normal((m, k), dtype=np.float32)
        w = rng.standard_normal((n, k), dtype=np.float32) / float(np.sqrt(k))
        return (rng.standard_normal(n, dtype=np.float32), x, w.T, 1, 1, 0)
    return make


OPERATOR = register(Operator(
    addmm, "Addmm", header="aclnn_addmm.h", package="ops-nn", library="libopapi_nn.so", outputs=("out",),
    case=_case, selftest=(((32, 48), DTYPES, dict()), ((16, 24), DTYPES[:1], dict(beta=0.0, alpha=1.0))),
    bench=((256, 512), dict(n=1000)),
    torch=_torch, fuzz=_fuzz, c_arguments=_c_arguments, dtypes=DTYPE_RULES,
    benchmarks=(("addmm linear 32x512 -> 1000 (classifier head)", _linear(32, 512, 1000)),
                ("addmm linear 256x512 -> 1000 (classifier head)", _linear(256, 512, 1000)),
                ("addmm linear 64x4096 -> 4096 (VGG fc)", _linear(64, 4096, 4096)))))
