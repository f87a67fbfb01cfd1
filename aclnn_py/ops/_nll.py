"""What aclnnNLLLoss and aclnnNLLLossBackward share on the numpy backend: the reduction check,
the (self, target) shape pairing, and the target values' range, which no phase 1 can see.

Target values (both operators): CANN's phase 1 cannot read device data, and its host code has
no range check; the kernel reads ``self[n, target[n]]`` and ``weight[target[n]]`` (ops-nn
``loss/nll_loss/op_kernel``; the 950 kernel calls ``TargetCheck`` on each), so a target outside
``[0, C)`` that is not ``ignoreIndex`` reads outside its row: undefined data or an AI Core
exception at synchronisation. Every backend here takes the defined one: phase 1 succeeds, then
the computation fails as a device fault does, ``AclnnError`` 507015 from
``aclrtSynchronizeStream``, naming the first such target (in C order); nothing is written.
The simulator's words are the same (``sim/src/ops/nll_common.c``).
"""

from __future__ import annotations

import math

import numpy as np

from .._errors import ACL_ERROR_RT_AICORE_EXCEPTION, AclnnError
from ._checks import check, shape_str

#: reduction: 0 none, 1 mean, 2 sum (CANN's values).
NONE, MEAN, SUM = 0, 1, 2


def check_reduction(api: str, reduction: int) -> None:
    check(api, NONE <= reduction <= SUM,
          lambda: f"reduction must be 0 (none), 1 (mean) or 2 (sum), got {reduction}")


def check_ranks(api: str, self_shape: tuple[int, ...], target_shape: tuple[int, ...]) -> None:
    """self 1-D or 2-D, then target at most 1-D."""
    check(api, len(self_shape) in (1, 2),
          lambda: f"self must be 1-D (C) or 2-D (N, C), got {len(self_shape)}-D shape {shape_str(self_shape)}")
    check(api, len(target_shape) <= 1,
          lambda: f"target must be 0-D or 1-D, got {len(target_shape)}-D shape {shape_str(target_shape)}")


def check_weight(api: str, weight_shape: tuple[int, ...], classes: int) -> None:
    check(api, weight_shape == (classes,),
          lambda: f"weight must be 1-D of size C = {classes}, got shape {shape_str(weight_shape)}")


def check_one_element(api: str, name: str, shape: tuple[int, ...]) -> None:
    check(api, math.prod(map(int, shape)) == 1, lambda: f"{name} must have exactly one element, got shape {shape_str(shape)}")


def classes_of(self_shape: tuple[int, ...]) -> int:
    return self_shape[-1]


def gather(kernel: str, target: np.ndarray, classes: int, ignore_index: int) -> tuple[np.ndarray, np.ndarray | None]:
    """(the targets as int64 with ignored rows at 0, the float32 mask of rows not ignored, or
    None when every row is kept): the rows' classes, after the range check of the module
    docstring (507015 for the first target outside [0, C) that is not ignoreIndex)."""
    t = target.reshape(-1).astype(np.int64, copy=False)
    # The common case in one pass: every target inside [0, C) and ignoreIndex outside it.
    if not 0 <= ignore_index < classes and (t.size == 0 or int(np.maximum.reduce(t.view(np.uint64))) < classes):
        return t, None
    kept = t != ignore_index
    # Viewed as unsigned, a negative target is huge: one comparison catches both ends.
    outside = kept & (t.view(np.uint64) >= classes)
    if outside.any():
        first = int(np.argmax(outside))
        at = "target" if target.ndim == 0 else f"target[{first}]"
        raise AclnnError(ACL_ERROR_RT_AICORE_EXCEPTION, "aclrtSynchronizeStream",
                         f"{kernel}: {at} = {int(t[first])} is outside [0, {classes}) and is not ignoreIndex "
                         f"({ignore_index}); nothing was written")
    return np.where(kept, t, 0), kept.astype(np.float32)
