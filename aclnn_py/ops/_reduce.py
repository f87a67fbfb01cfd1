"""What the reducing operators (ReduceSum, Mean, the softmax family, BatchNorm) share above the
numpy backend's arithmetic (``_numpy/reduce.py``): the dims rules and their checks, with the
simulator's messages word for word (``sim/src/ops/reduce.c``).

CANN's rule (ReduceSum, Mean, Softmax, LogSoftmax and their backwards' ``CheckDim``): a dim
lies in ``[-max(r, 1), max(r, 1) - 1]`` for a tensor of rank r (a 0-d tensor takes -1 and 0),
negative dims count from the end, a dim given twice after that wrapping is refused, and an
empty dims list (ReduceSum, Mean) means every dim.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .._errors import param_invalid
from ._cases import OpCall, random_array
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


# -- registrations of the softmax family ------------------------------------------------------

def lane_case(op: str, backward: bool, log: bool) -> Callable[..., OpCall]:
    """The argument maker of a softmax-family operator: ``self`` of ``shape`` (forward), or
    gradOutput and the forward ``output`` (a real (log-)softmax of random values), and ``dim``."""
    def make(rng: np.random.Generator, shape: Sequence[int], dtype: np.dtype, dim: int = -1) -> OpCall:
        x = random_array(rng, shape, dtype)
        if not backward:
            return OpCall(op, (x, dim), case=f"dim {dim}")
        wide = x.astype(np.float64)
        shifted = wide - wide.max(axis=dim, keepdims=True) if wide.ndim else wide * 0
        lse = np.log(np.exp(shifted).sum(axis=dim, keepdims=True)) if wide.ndim else shifted
        output = (shifted - lse) if log else np.exp(shifted - lse)
        return OpCall(op, (random_array(rng, shape, dtype), output.astype(dtype), dim), case=f"dim {dim}")
    return make


def lane_layers(op: str, backward: bool, log: bool) -> tuple[tuple[str, Any], ...]:
    """Real-layer benchmark cases of a softmax-family operator: classifier heads (ImageNet's
    1000 classes, CIFAR's 10) over dim 1, and a transformer's attention scores over the last dim."""
    def case(shape: tuple[int, ...], dim: int) -> Any:
        def arguments(rng: np.random.Generator) -> tuple[Any, ...]:
            return lane_case(op, backward, log)(rng, shape, np.dtype(np.float32), dim).args
        return arguments
    return ((f"{op} classifier head (256,1000) dim 1", case((256, 1000), 1)),
            (f"{op} cifar head (128,10) dim 1", case((128, 10), 1)),
            (f"{op} attention scores (8,12,128,128) dim -1", case((8, 12, 128, 128), -1)))
