"""What the reducing operators (ReduceSum, Mean, the softmax family, BatchNorm) share above the
numpy backend's arithmetic (``_numpy/reduce.py``): the dims rules and their checks, with the
simulator's messages word for word (``sim/src/ops/reduce.c``).

CANN's rule (ReduceSum, Mean, Softmax, LogSoftmax and their backwards' ``CheckDim``): a dim
lies in ``[-max(r, 1), max(r, 1) - 1]`` for a tensor of rank r (a 0-d tensor takes -1 and 0),
negative dims count from the end, a dim given twice after that wrapping is refused, and an
empty dims list (ReduceSum, Mean) means every dim.
"""

from __future__ import annotations

from collections.abc import Sequence

from .._errors import param_invalid
from ._checks import shape_str


def dim_range(rank: int) -> tuple[int, int]:
    """The dims a tensor of ``rank`` takes: ``[-max(r, 1), max(r, 1) - 1]``."""
    top = max(rank, 1)
    return -top, top - 1


def check_dim(api: str, name: str, dim: int, tensor: str, rank: int) -> int:
    """161002 unless ``dim`` is in range for ``tensor`` of ``rank``; returns it wrapped (0 for a
    0-d tensor)."""
    low, high = dim_range(rank)
    if not low <= dim <= high:
        raise param_invalid(api, f"{name} = {dim} must be in [{low}, {high}] for {tensor} of rank {rank}")
    return dim % max(rank, 1)


def check_dims(api: str, name: str, dims: Sequence[int], tensor: str, rank: int) -> tuple[int, ...]:
    """The dims to reduce of ``tensor`` of ``rank``: each in range, none twice after wrapping
    (161002 naming ``name``); an empty list is every dim (none for a 0-d tensor)."""
    low, high = dim_range(rank)
    seen: list[int] = []
    for dim in dims:
        if not low <= dim <= high:
            raise param_invalid(api, f"{name} value {dim} must be in [{low}, {high}] for {tensor} of rank {rank}, "
                                     f"got {shape_str(dims)}")
        wrapped = dim % max(rank, 1)
        if wrapped in seen:
            raise param_invalid(api, f"{name} must not name dim {wrapped} twice, got {shape_str(dims)}")
        seen.append(wrapped)
    if not dims:
        return tuple(range(rank))
    return tuple(d for d in seen if d < rank)


def reduced_shape(shape: Sequence[int], dims: Sequence[int], keepdim: bool) -> tuple[int, ...]:
    """``shape`` with ``dims`` reduced: each kept as 1 (``keepdim``) or removed."""
    if keepdim:
        return tuple(1 if i in dims else d for i, d in enumerate(shape))
    return tuple(d for i, d in enumerate(shape) if i not in dims)
