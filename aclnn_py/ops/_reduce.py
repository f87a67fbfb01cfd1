"""What the reducing operators (ReduceSum, Mean, the softmax family, BatchNorm) share above the
numpy backend's arithmetic (``_numpy/reduce.py``): the dims rules and their checks, with the
simulator's messages word for word (``sim/src/ops/reduce.c``); and what the sibling operators
share in their modules: the softmax family's numpy run, out and registration fields
(``lane_*``), ReduceSum's and Mean's out and registration fields (``reduce_*``). Each operator
module keeps its checks in CANN's order, its docstrings and its registration's literals.

CANN's rule (ReduceSum, Mean, Softmax, LogSoftmax and their backwards' ``CheckDim``): a dim
lies in ``[-max(r, 1), max(r, 1) - 1]`` for a tensor of rank r (a 0-d tensor takes -1 and 0),
negative dims count from the end, a dim given twice after that wrapping is refused, and an
empty dims list (ReduceSum, Mean) means every dim.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .._convert.executor import dtype_of, shape_of
from .._convert.typed import Output
from .._convert.values import host_array
from .._dtypes import compute_dtype, to_numpy
from .._errors import param_invalid
from .._numpy import reduce as _red
from .._numpy.plans import Prepared, plan
from .._runtime.memory import check_allocation
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


def lane_outputs(first: object, *_: object) -> list[Output]:
    """A softmax-family operator's out: its first tensor's shape and dtype."""
    return [Output(shape_of(first), dtype_of(first))]


def lane_plan(api: str, kernel: Callable[..., np.ndarray], names: Sequence[str], tensors: tuple[Any, ...],
              dtype: np.dtype, dim: int) -> Prepared:
    """The numpy run of a softmax-family operator whose checks passed: ``tensors`` (named
    ``names``) converted to ``dtype`` and widened, ``kernel(*arrays, dim)``, the result rounded
    once to ``dtype`` (an empty input gives an empty result)."""
    nbytes = (len(names) + 2) * int(tensors[0].size) * 8
    # Tensors already in ``dtype``, which is its own compute dtype (FLOAT, DOUBLE): no
    # conversion, no rounding (the plan's signature fixes the dtypes; the same bits, ~2 us less
    # a call: thread time of the plan run of softmax_backward (128,10) 18.9 -> 16.5 us, median of
    # 41 interleaved rounds).
    plain = compute_dtype(dtype) == dtype and all(t.dtype == dtype for t in tensors)

    def run(*arrays: object) -> np.ndarray:
        check_allocation(nbytes)
        values = [host_array(api, name, a) for name, a in zip(names, arrays)]
        if values[0].size == 0:
            return np.empty(values[0].shape, dtype)
        if plain:
            return kernel(*values, dim)
        return _red.rounded(kernel(*(_red.in_dtype(v, dtype) for v in values), dim), dtype, dtype)

    return plan(run, nbytes), tensors


def lane_registration(op: str, backward: bool, log: bool) -> dict[str, Any]:
    """The ``Operator`` fields a softmax-family operator shares with its siblings (the module
    gives its names, header, package, library, dtypes, torch reference and selftest): cases,
    real layers, fuzz and C arguments; ``log`` picks LogSoftmax's output."""
    arity = 3 if backward else 2

    def fuzz(f: Any) -> list[Any]:
        shape = f.shape()
        dt = f.pick(f.FLOATS)
        tensors = [f.filled(shape, dt)]
        if backward:
            tensors.append(f.filled(shape if not f.chance(0.1) else (*shape, 2), dt))
        return [*tensors, f.small_int(-len(shape) - 1, len(shape))]

    def c_arguments(args: list[Any], out_like: Any) -> list[Any]:
        return [*args[:arity], out_like(args[0].shape, args[0].dtype)]

    return dict(outputs=("out",), case=lane_case(op, backward, log), bench=((256, 1000), dict(dim=1)),
                memory_bound=True, fuzz=fuzz, c_arguments=c_arguments, benchmarks=lane_layers(op, backward, log))


# -- ReduceSum and Mean -----------------------------------------------------------------------

def reduce_outputs(api: str, dims_name: str) -> Callable[[object, Sequence[int] | None, bool, int], list[Output]]:
    """The out of ReduceSum / Mean (``dims_name`` their dims parameter): self's shape reduced over
    the dims, the aclDataType ``dtype`` (FLOAT where NumPy has no such type: the library refuses it)."""
    def outputs(self: object, dims: Sequence[int] | None, keep: bool, dtype: int) -> list[Output]:
        try:
            to = to_numpy(dtype)
        except TypeError:
            to = np.dtype(np.float32)
        shape = shape_of(self)
        try:
            reduced = check_dims(api, dims_name, dims or (), "self", len(shape))
        except Exception:
            reduced = ()
        return [Output(reduced_shape(shape, reduced, keep), to)]
    return outputs


def reduce_registration(op: str, dims_name: str, api: str,
                        outputs: Callable[[object, Sequence[int] | None, bool, int], list[Output]],
                        to_acl_dtype: Callable[[object, str], int],
                        layers: Sequence[tuple[str, tuple[int, ...], list[int]]]) -> dict[str, Any]:
    """The ``Operator`` fields ReduceSum and Mean share (arguments self, dims, keep, dtype;
    ``to_acl_dtype`` converts dtype as ``call`` does): case, fuzz, C arguments and real-layer
    cases ``(label, shape, dims)`` of float32 data."""
    def case(rng: np.random.Generator, shape: Any, dtype: np.dtype, dims: Any = (1,), keep: bool = False) -> OpCall:
        return OpCall(op, (random_array(rng, shape, dtype), list(dims), keep, dtype),
                      case=f"{dims_name} {list(dims)}{' keep' if keep else ''}")

    def fuzz(f: Any) -> list[Any]:
        shape = f.shape()
        dt = f.pick(f.FLOATS)
        dims = [f.small_int(-len(shape) - 1, len(shape)) for _ in range(f.small_int(0, 3))]
        return [f.filled(shape, dt), dims, f.chance(0.5), dt]

    def c_arguments(args: list[Any], out_like: Any) -> list[Any]:
        acl = to_acl_dtype(args[3], api)
        (made,) = outputs(args[0], args[1], args[2], acl)
        return [*args[:3], acl, out_like(made.shape, made.dtype)]

    def layer(shape: tuple[int, ...], dims: list[int]) -> Any:
        def arguments(rng: np.random.Generator) -> tuple[Any, ...]:
            return rng.standard_normal(shape, dtype=np.float32), dims, False, np.float32
        return arguments

    return dict(outputs=("out",), case=case, memory_bound=True, fuzz=fuzz, c_arguments=c_arguments,
                benchmarks=tuple((label, layer(shape, dims)) for label, shape, dims in layers))
