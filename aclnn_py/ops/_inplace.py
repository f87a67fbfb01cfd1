"""What the in-place operators (InplaceAdd, InplaceZero, InplaceCopy, InplaceFillScalar) share on
the numpy backend: their ``selfRef``, the caller's own array, written where it is.

On npu/sim the same argument goes through ``TypedCall``'s in-place path (``Call.inplace``), which
coerces it with the same ``values.output_tensor``, so a read-only array gets the same TypeError
on every backend.
"""

from __future__ import annotations

import numpy as np

from .._convert.values import output_tensor


def written_arg(api: str, name: str, value: object) -> np.ndarray | None:
    """The numpy backend's in-place argument: a writable ndarray (written in place), or None
    (NULL: the operator's checks report it). A device ``Tensor`` needs backend npu or sim."""
    array = output_tensor(api, name, value)
    if array is None or isinstance(array, np.ndarray):
        return array
    raise TypeError(f"{api}: {name} is an aclnn_py.Tensor, which needs backend 'npu' or 'sim'")


def written_array(api: str, name: str, value: object) -> np.ndarray:
    """The in-place argument of a plan's call (its dtype and shape checked already): the
    caller's ndarray, whose writability the plan's key does not cover, so checked each call."""
    if type(value) is not np.ndarray or not value.flags.writeable:
        array = written_arg(api, name, value)
        assert array is not None  # (the checks refused None)
        return array
    return value
