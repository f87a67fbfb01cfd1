"""What MaxUnpool2d and its gradient share: the check of every index against ``[0, oH*oW)``
(the simulator's ``sim/src/ops/unpool_common.[ch]``, in the same words) and the unpooled shape."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .._errors import ACL_ERROR_RT_AICORE_EXCEPTION, AclnnError
from ._checks import shape_str


def unpooled_shape(self_shape: Sequence[int], output_size: Sequence[int]) -> tuple[int, ...]:
    """A ``([N,] C, H, W)`` self's planes grown to ``outputSize = [oH, oW]``."""
    return tuple(self_shape[:-2]) + tuple(output_size)


def check_index_range(kernel: str, indices: np.ndarray, output_size: tuple[int, ...]) -> None:
    """The device fault an index outside ``[0, oH*oW)`` stands for, raised before anything is
    written: AclnnError 507015 from aclrtSynchronizeStream naming the first bad index (C order)."""
    plane = output_size[0] * output_size[1]
    # Viewed as unsigned, a negative index is huge: one pass catches both ends.
    unsigned = indices.view(np.uint64 if indices.dtype == np.int64 else np.uint32)
    if indices.size and int(unsigned.max()) >= plane:
        at = np.unravel_index(int(np.argmax(unsigned >= plane)), indices.shape)  # type: ignore[operator]
        raise AclnnError(ACL_ERROR_RT_AICORE_EXCEPTION, "aclrtSynchronizeStream",
                         f"{kernel}: indices{shape_str(at)} = {int(indices[at])} is outside [0, {plane}) "
                         f"(outputSize = {shape_str(output_size)}); nothing was written")
