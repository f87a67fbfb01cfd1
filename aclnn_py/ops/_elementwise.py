"""What the elementwise operators (Add, Adds, Mul, Muls, ...) share above the numpy backend's
arithmetic (``_numpy/elementwise.py``): their checks, with the simulator's messages word for
word (``sim/src/ops/elementwise.c``), their aclScalar arguments, and the pieces of their
registrations (argument makers, PyTorch references, fuzz generators, real-layer benchmarks).

Each operator's module keeps only its own: its dtype table, the order of its checks, its rule
of the computed dtype, and its registration.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .._convert.arrays import Scalar
from .._convert.values import python_scalar
from .._dtypes import dtype_name
from .._errors import param_invalid
from .._numpy import elementwise as _ew
from ._cases import OpCall, random_array
from ._checks import shape_str

#: Elementwise operators take tensors of at most this many dims (OP_CHECK_MAX_DIM).
MAX_DIMS = 8


def scalar_arg(api: str, name: str, value: object) -> np.ndarray | None:
    """An aclScalar argument's value, a 0-d array of its dtype (None stays None): an
    ``aclnn_py.Scalar``'s own, or a number's as ``call`` converts it (bool -> BOOL, int ->
    INT64, float -> DOUBLE, complex -> COMPLEX128; a NumPy scalar keeps its dtype)."""
    if value is None:
        return None
    if isinstance(value, Scalar):
        return value.value
    return python_scalar(api, name, value)


def check_promoted(api: str, name_a: str, a: np.dtype, name_b: str, b: np.dtype, promoted: np.dtype | None) -> np.dtype:
    """161002 unless ``a`` and ``b`` promote (``promoted`` is what the operator's rule gave)."""
    if promoted is None:
        raise param_invalid(api, f"{name_a} dtype {dtype_name(a)} and {name_b} dtype {dtype_name(b)} cannot be "
                                 "promoted to a common dtype")
    return promoted


def check_alpha(api: str, alpha: np.dtype, promoted: np.dtype) -> None:
    """Add's rule for ``alpha``: an integer or BOOL for a BOOL computation, else castable."""
    if promoted == np.bool_:
        if not (_ew.is_integral(alpha) or alpha == np.bool_):
            raise param_invalid(api, f"alpha dtype {dtype_name(alpha)} cannot be cast to the promoted dtype BOOL "
                                     "(it must be an integer or BOOL)")
    elif not _ew.can_cast(alpha, promoted):
        raise param_invalid(api, f"alpha dtype {dtype_name(alpha)} cannot be cast to the promoted dtype "
                                 f"{dtype_name(promoted)}")


def check_rank(api: str, name: str, shape: Sequence[int]) -> None:
    if len(shape) > MAX_DIMS:
        raise param_invalid(api, f"{name} must have at most {MAX_DIMS} dims, got {len(shape)}-D shape "
                                 f"{shape_str(shape)}")


def check_broadcast(api: str, name_a: str, a: Sequence[int], name_b: str, b: Sequence[int]) -> tuple[int, ...]:
    """The broadcast shape of ``a`` and ``b``; 161002 where they do not broadcast."""
    shape = _ew.broadcast(a, b)
    if shape is None:
        raise param_invalid(api, f"{name_a} shape {shape_str(a)} and {name_b} shape {shape_str(b)} cannot be "
                                 "broadcast")
    return shape


def check_cast_to(api: str, promoted: np.dtype, name: str, dtype: np.dtype) -> None:
    """161002 unless ``op::CanCast(promoted, dtype)``, ``dtype`` that of the tensor ``name``."""
    if not _ew.can_cast(promoted, dtype):
        raise param_invalid(api, f"the promoted dtype {dtype_name(promoted)} cannot be cast to {name} dtype "
                                 f"{dtype_name(dtype)}")


def check_inplace(api: str, name_dst: str, dst: Sequence[int], name_src: str, src: Sequence[int]) -> None:
    """An in-place operator's source broadcasts to its destination's shape (any rank: it may
    run before the rank checks): 161002 where the two do not broadcast, or broadcast to
    another shape."""
    shape = check_broadcast(api, name_dst, dst, name_src, src)
    if shape != tuple(dst):
        raise param_invalid(api, f"{name_src} shape {shape_str(src)} must broadcast to {name_dst} shape "
                                 f"{shape_str(dst)} (the broadcast shape must be {name_dst}'s)")


# -- registrations ---------------------------------------------------------------------------

def tensor_case(op: str, default_extra: tuple[Any, ...] = ()) -> Callable[..., OpCall]:
    """The argument maker of a tensor-tensor operator: ``self`` of ``shape``, ``other`` of the
    trailing ``other_dims`` dims of it (broadcast), both ``dtype``; ``extra`` (by default
    ``default_extra``) follows."""
    def make(rng: np.random.Generator, shape: Sequence[int], dtype: np.dtype, other_dims: int | None = None,
             extra: tuple[Any, ...] = default_extra) -> OpCall:
        other_shape = tuple(shape)[len(shape) - other_dims:] if other_dims is not None else tuple(shape)
        return OpCall(op, (random_array(rng, shape, dtype), random_array(rng, other_shape, dtype), *extra),
                      case=f"other {list(other_shape)}" if other_dims is not None else "")
    return make


def scalar_case(op: str) -> Callable[..., OpCall]:
    """The argument maker of a tensor-scalar operator: ``self`` of ``shape`` and ``dtype``, the
    scalar ``other`` (a Python float), ``extra`` after it."""
    def make(rng: np.random.Generator, shape: Sequence[int], dtype: np.dtype, other: float = 0.75,
             extra: tuple[Any, ...] = ()) -> OpCall:
        return OpCall(op, (random_array(rng, shape, dtype), other, *extra), case=f"other {other}")
    return make


def tensor_layers(op: str, make: Callable[[np.ndarray, np.ndarray], tuple[Any, ...]]) -> tuple[tuple[str, Any], ...]:
    """Real-layer benchmark cases of the tensor-tensor operator ``op``: ResNet and VGG
    activations, a per-channel bias, a classifier head; ``make(self, other)`` gives the arguments."""
    def case(self_shape: tuple[int, ...], other_shape: tuple[int, ...]) -> Any:
        def arguments(rng: np.random.Generator) -> tuple[Any, ...]:
            return make(rng.standard_normal(self_shape, dtype=np.float32),
                        rng.standard_normal(other_shape, dtype=np.float32))
        return arguments
    return ((f"{op} resnet block (8,64,56,56)", case((8, 64, 56, 56), (8, 64, 56, 56))),
            (f"{op} vgg conv3 (8,256,56,56)", case((8, 256, 56, 56), (8, 256, 56, 56))),
            (f"{op} channel bias (8,128,28,28) with (128,1,1)", case((8, 128, 28, 28), (128, 1, 1))),
            (f"{op} linear head (256,1000) with (1000,)", case((256, 1000), (1000,))))


def scalar_layers(op: str, make: Callable[[np.ndarray], tuple[Any, ...]]) -> tuple[tuple[str, Any], ...]:
    """Real-layer benchmark cases of the one-tensor operator ``op`` (ResNet and VGG activations,
    a classifier head's weight); ``make(self)`` gives the arguments."""
    def case(shape: tuple[int, ...]) -> Any:
        def arguments(rng: np.random.Generator) -> tuple[Any, ...]:
            return make(rng.standard_normal(shape, dtype=np.float32))
        return arguments
    return ((f"{op} resnet block (8,64,56,56)", case((8, 64, 56, 56))),
            (f"{op} vgg conv3 (8,256,56,56)", case((8, 256, 56, 56))),
            (f"{op} linear weight (1000,2048)", case((1000, 2048))))


def fuzz_pair(f: Any) -> tuple[np.ndarray, np.ndarray]:
    """Two near-valid tensors for the fuzzer: shapes that broadcast, or now and then not."""
    shape = [f.small_int(1, 4) for _ in range(f.small_int(0, 4))]
    other = [1 if f.chance(0.3) else d for d in shape[f.small_int(0, len(shape)):]]
    if other and f.chance(0.1):
        other[0] += 1
    dt = f.pick(f.FLOATS)
    return f.filled(tuple(shape), dt), f.filled(tuple(other), f.pick((dt, *f.FLOATS)))
