"""What the matrix products share (mm, addmm, matmul, batch_mat_mul): cubeMathType, the compute
dtype CANN's A2/A3 rule table gives each pair of inputs, the result dtype the functions make,
and the shape rules (the K agreement, batch broadcasting, torch.matmul's result shape). The
simulator's side is ``sim/src/ops/matmul_common.[ch]``, with the same messages.

cubeMathType (ops-nn ``op_api_def_nn.h``; A2/A3, DAV_2201): -1 FP16FP32_KEEP_DTYPE (accepted
on A2/A3 only; treated as 0), 0 KEEP_DTYPE, 1 ALLOW_FP32_DOWN_PRECISION (float32 in HF32), 2
USE_FP16, 3 USE_HF32, 4 USE_FP32_ADD; any other value is 161002. A2/A3 refuse no
dtype/cubeMathType pair in phase 1 (the doc's "not supported" pairs, bfloat16 with USE_FP16 or
USE_HF32, bfloat16 mixed with float16 or float32, pass with a warning in the code). The compute
dtype (``matmul_util.cpp``'s A2/A3 table): bfloat16 with bfloat16 stays bfloat16; otherwise
USE_FP16 computes in float16; float16 with float16 in float16; anything else in float32. HF32
(1, 3) keeps float32's exponent with a shorter mantissa; its rounding is not verified and is
computed here as float32. The cube unit sums the products of 16-bit inputs in float32.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .._constants import ACLNN_ERR_INNER_NULLPTR
from .._dtypes import bfloat16
from .._errors import AclnnError
from ._checks import FLOAT16, FLOAT32, check, shape_str

BFLOAT16: np.dtype = np.dtype(bfloat16)

CUBE_MATH_TYPES = {-1: "FP16FP32_KEEP_DTYPE", 0: "KEEP_DTYPE", 1: "ALLOW_FP32_DOWN_PRECISION", 2: "USE_FP16",
                   3: "USE_HF32", 4: "USE_FP32_ADD"}
USE_FP16 = 2


def check_cube_math_type(api: str, cube_math_type: int) -> None:
    check(api, cube_math_type in CUBE_MATH_TYPES,
          lambda: "cubeMathType must be -1 (FP16FP32_KEEP_DTYPE), 0 (KEEP_DTYPE), 1 (ALLOW_FP32_DOWN_PRECISION), "
                  f"2 (USE_FP16), 3 (USE_HF32) or 4 (USE_FP32_ADD), got {cube_math_type}")


def compute_dtype(a: np.dtype, b: np.dtype, cube_math_type: int) -> np.dtype:
    """The dtype the cube unit computes ``a @ b`` in (module docstring)."""
    if a == BFLOAT16 and b == BFLOAT16:
        return BFLOAT16
    if cube_math_type == USE_FP16 or (a == FLOAT16 and b == FLOAT16):
        return FLOAT16
    return FLOAT32


def result_dtype(*dtypes: np.dtype) -> np.dtype:
    """The dtype the functions make ``out`` of: the inputs' own when they agree, else FLOAT
    (PromoteType among FLOAT, FLOAT16 and BFLOAT16)."""
    return dtypes[0] if all(d == dtypes[0] for d in dtypes) else FLOAT32


def check_rank(api: str, name: str, shape: Sequence[int], rank: int) -> None:
    check(api, len(shape) == rank, lambda: f"{name} must be {rank}-D, got {len(shape)}-D shape {shape_str(shape)}")


def check_k(api: str, name_a: str, a: Sequence[int], name_b: str, b: Sequence[int], b_dim: int) -> None:
    """a's last dim equals b's dim ``b_dim`` (0 or -2): K."""
    check(api, a[-1] == b[b_dim],
          lambda: f"{name_a} {shape_str(a)} and {name_b} {shape_str(b)} do not agree in K: {name_a}'s last dim must "
                  f"equal {name_b}'s {'first' if b_dim == 0 else 'second-to-last'} dim")


def broadcast_batch(api: str, a: Sequence[int], b: Sequence[int], name_a: str = "self",
                    name_b: str = "mat2") -> tuple[int, ...]:
    """The broadcast of the batch dims of a and b (all but their last two), or 161002."""
    x, y = tuple(a[:-2]), tuple(b[:-2])
    width = max(len(x), len(y))
    x, y = (1,) * (width - len(x)) + x, (1,) * (width - len(y)) + y
    check(api, all(p == q or p == 1 or q == 1 for p, q in zip(x, y)),
          lambda: f"the batch dims of {name_a} {shape_str(a)} and {name_b} {shape_str(b)} do not broadcast")
    return tuple(q if p == 1 else p for p, q in zip(x, y))


def matmul_shape(api: str, a: Sequence[int], b: Sequence[int]) -> tuple[int, ...]:
    """aclnnMatmul's checks of self (a) and mat2 (b), in CANN's order; the result's shape
    (torch.matmul's: 1-D operands' padded dims removed)."""
    for name, shape in (("self", a), ("mat2", b)):
        check(api, len(shape) <= 6, lambda: f"{name} must have 1 to 6 dims, got {len(shape)}-D shape {shape_str(shape)}")
    for name, shape in (("self", a), ("mat2", b)):
        check(api, len(shape) >= 1, lambda: f"{name} must have 1 to 6 dims, got {len(shape)}-D shape {shape_str(shape)}")
    check_k(api, "self", a, "mat2", b, 0 if len(b) <= 2 else -2)
    if len(a) == 1 and len(b) == 1:
        return ()
    if len(b) == 1:
        return tuple(a[:-1])
    if len(a) == 1:
        return (*b[:-2], b[-1])
    return (*broadcast_batch(api, a, b), a[-2], b[-1])


def copy_failure(api: str, message: str) -> AclnnError:
    """561103 (ACLNN_ERR_INNER_NULLPTR): a result CANN's final copy into out cannot take, which
    phase 1 reports from its graph building, not from a parameter check."""
    return AclnnError(ACLNN_ERR_INNER_NULLPTR, api, f"{api}: {message}")


#: |alpha| or |beta| at most this (FLT_EPSILON) counts as 0 in Addmm (``aclnn_addmm.cpp``).
FLT_EPSILON = float(np.finfo(np.float32).eps)


def scalar_float(value: np.ndarray) -> float:
    """An aclScalar read with ``ToFloat()``, whatever its dtype (a complex one: its real part)."""
    return float(np.float32(np.real(value)))
