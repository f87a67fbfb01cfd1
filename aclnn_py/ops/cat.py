"""aclnnCatGetWorkspaceSize / aclnnCat: ``out = torch.cat(tensors, dim)``.

C header ``aclnnop/aclnn_cat.h`` (ops-math ``conversion/concat_d``)::

    aclnnStatus aclnnCatGetWorkspaceSize(const aclTensorList* tensors, int64_t dim, aclTensor* out,
                                         uint64_t* workspaceSize, aclOpExecutor** executor);
    aclnnStatus aclnnCat(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
                         const aclrtStream stream);

The tensors are promoted to a common dtype (``op::PromoteType``, folded left to right),
concatenated along ``dim`` and converted to out's dtype (each first converted to the promoted
dtype: an INT32 2049 among FLOAT16 tensors is 2048). 1-D tensors of shape [0] are dropped
first, as legacy PyTorch does.

Constraints, in the order CANN checks them (each violation is 161002 unless noted):

1. tensors required, and each element (None: 161001). With every tensor dropped (an empty
   list included) the call succeeds: out is not checked and nothing is written.
2. out required (161001; ``call`` only: the function makes it).
3. Each tensor's dtype, then out's, in FLOAT, INT32, INT64, FLOAT16, INT16, INT8, UINT8,
   DOUBLE, COMPLEX64, BFLOAT16, BOOL (A2/A3's list); they promote, not to COMPLEX128; the
   promoted dtype castable to out's.
4. The first tensor at most 8 dims; ``dim`` in [-rank, rank - 1]; every tensor of the first
   one's rank and shape except in ``dim``.
5. With every tensor empty the call succeeds and writes nothing; otherwise out has the
   concatenated shape.

(The storage-format checks of CANN's step 5, all tensors and out in one format, are not
made: this binding's tensors carry the format of their rank.)
"""

from __future__ import annotations

import math

from collections.abc import Sequence
from typing import cast

import numpy as np

from .._convert.executor import dtype_of, planned, shape_of
from .._convert.typed import Output, TypedCall
from .._convert.values import int_arg, sequence_arg, tensor_arg
from .._dtypes import dtype_name
from .._errors import param_invalid
from .._numpy import elementwise as _ew
from .._numpy.plans import NumpyOp, Prepared, plan
from .._runtime.memory import check_allocation
from .._runtime.tensor import Tensor
from ._checks import check_dtype, check_not_null, shape_str
from ._dispatch import dispatch, documented
from ._elementwise import check_promoted, check_rank
from ._registry import numpy_dtypes

API = "aclnnCatGetWorkspaceSize"

#: The dtypes each rule accepts: the one table of these checks (the simulator's are generated from it).
DTYPE_RULES = {"DTYPES": ("ACL_FLOAT", "ACL_INT32", "ACL_INT64", "ACL_FLOAT16", "ACL_INT16", "ACL_INT8", "ACL_UINT8",
                          "ACL_DOUBLE", "ACL_COMPLEX64", "ACL_BF16", "ACL_BOOL")}
DTYPES = numpy_dtypes(DTYPE_RULES["DTYPES"])


def _dropped(shape: Sequence[int]) -> bool:
    """A 1-D tensor of shape [0]: dropped before everything else."""
    return len(shape) == 1 and shape[0] == 0


def _promoted(kept: Sequence[tuple[int, np.dtype]]) -> np.dtype | None:
    """The common dtype of the kept tensors ``(index, dtype)`` (None: they do not promote)."""
    promoted: np.dtype | None = kept[0][1]
    for _, dt in kept:
        promoted = None if promoted is None else _ew.promote(promoted, dt)
    return promoted


def _shape_checks(tensors: object, dim: object) -> tuple[int, ...] | None:
    """The checks the output's shape depends on (shapes only, of tensors already coerced);
    returns it (with a 0 when every tensor is empty: nothing is written), or None when every
    tensor is dropped (no output is checked or written)."""
    shapes = [(i, tuple(shape_of(t))) for i, t in enumerate(cast("list[object]", tensors))]
    kept = [(i, s) for i, s in shapes if not _dropped(s)]
    if not kept:
        return None
    index, first = kept[0]
    check_rank(API, "tensors[0]", first)
    rank = len(first)
    if not -rank <= int(dim) < rank or rank == 0:  # type: ignore[call-overload]
        raise param_invalid(API, f"dim {dim} is out of range [{-rank}, {rank - 1}] for tensors of {rank} dims")
    axis = int(dim) % rank  # type: ignore[call-overload]
    total = 0
    for i, s in kept:
        if len(s) != rank or any(a != b for d, (a, b) in enumerate(zip(s, first)) if d != axis):
            raise param_invalid(API, f"tensors[{i}] shape {shape_str(s)} must match the first tensor's shape "
                                     f"{shape_str(first)} except in dim {axis}")
        total += s[axis]
    return first[:axis] + (total,) + first[axis + 1:]


def _validate(tensors: object, dim: object) -> tuple[list[np.ndarray], int, np.dtype | None, tuple[int, ...] | None]:
    """Coerce and check in CANN's order; returns ``(tensors, dim, promoted dtype, out shape)``
    (the last two None when nothing is written)."""
    dim = int_arg(API, "dim", dim)
    arrays: list[np.ndarray | None] = [] if tensors is None else [
        tensor_arg(API, f"tensors[{i}]", t) for i, t in enumerate(sequence_arg(API, "tensors", tensors, "aclTensorList"))]
    check_not_null(API, tensors=tensors)
    check_not_null(API, **{f"tensors[{i}]": a for i, a in enumerate(arrays)})
    present = [a for a in arrays if a is not None]
    kept = [(i, a) for i, a in enumerate(present) if not _dropped(a.shape)]
    if not kept:
        return present, dim, None, None
    for i, a in kept:
        check_dtype(API, f"tensors[{i}]", a, DTYPES)
    # out's dtype next: the function makes out of the promoted dtype (FLOAT where there is none)
    check_dtype(API, "out", np.empty(0, _promoted([(i, a.dtype) for i, a in kept]) or np.float32), DTYPES)
    promoted = kept[0][1].dtype
    for i, a in kept:
        promoted = check_promoted(API, "the promoted", promoted, f"tensors[{i}]", a.dtype,
                                  _ew.promote(promoted, a.dtype))
    if promoted == np.complex128:
        raise param_invalid(API, "the tensors promote to COMPLEX128, which Cat does not compute")
    shape = _shape_checks(present, dim)
    return present, dim, promoted, shape


def _prepare(tensors: object, dim: object) -> Prepared:
    arrays, dim, promoted, shape = _validate(tensors, dim)
    if promoted is None or shape is None or 0 in shape:  # (nothing to concatenate: an empty result)
        empty = np.empty((0,) if shape is None else shape, np.float32 if promoted is None else promoted)
        return plan(lambda *_: empty.copy(), 0), (arrays, dim)
    axis = dim % len(shape)
    nbytes = math.prod(map(int, shape)) * promoted.itemsize
    # Tensors all of the promoted dtype, none dropped: one NumPy copy (the parts' bytes as they
    # are), with no per-part set-up; faster at every size measured than the parts' conversions
    # on the worker threads (a copy is bound by memory, not by one thread).
    whole = all(a.dtype == promoted and not _dropped(a.shape) for a in arrays)

    def run(tensors: object, *_: object) -> np.ndarray:
        check_allocation(nbytes)
        out = np.empty(shape, promoted)
        if whole:
            np.concatenate(tensors, axis=axis, out=out)  # type: ignore[call-overload]
            return out
        at = 0
        for a in tensors:  # type: ignore[attr-defined]
            if _dropped(a.shape):
                continue
            part = out[(slice(None),) * axis + (slice(at, at + a.shape[axis]),)]
            at += a.shape[axis]
            if a.size:
                _ew.convert_into(part, a)  # (on the worker threads when large)
        return out

    return plan(run, 2 * nbytes), (arrays, dim)


_numpy = NumpyOp(_prepare, tensor_lists=True)


def _outputs(tensors: object, dim: object) -> list[Output]:
    """out: the concatenated shape, the promoted dtype (a stand-in of one element where nothing
    is written; FLOAT where the dtypes do not promote: the library reports them)."""
    items = [] if tensors is None else [t for t in tensors if t is not None]  # type: ignore[attr-defined]
    kept = [(i, dtype_of(t)) for i, t in enumerate(items) if not _dropped(shape_of(t))]
    promoted = (_promoted(kept) if kept else None) or np.dtype(np.float32)
    try:
        shape = _shape_checks(items, dim)
    except Exception:
        shape = (1,)  # (a stand-in: the library reports the argument at fault)
    return [Output(shape if shape is not None else (0,), promoted)]


def _checks(tensors: object, dim: object) -> None:
    """The shape checks that guard out's allocation."""
    if tensors is None or any(t is None for t in tensors):  # type: ignore[attr-defined]
        raise TypeError("a NULL tensor: the library reports it")
    _shape_checks(tensors, dim)


#: The npu/sim path: the two-phase C call, the tensors as an aclTensorList.
_aclnn = planned(TypedCall("Cat", _outputs, checks=_checks))
_MADE = {"out": "the tensors' concatenated shape and promoted dtype"}


@documented
def cat(tensors: Sequence[object], dim: int = 0, *, backend: str | None = None,
        stream: object = None) -> np.ndarray | Tensor:
    """``torch.cat(tensors, dim)``: the tensors concatenated along ``dim``.

    Mirrors ``aclnnCatGetWorkspaceSize`` + ``aclnnCat``.

    Args:
        tensors: an aclTensorList: a list or tuple of tensors of one rank (at most 8 dims)
            whose shapes agree except in ``dim``; FLOAT, INT32, INT64, FLOAT16, INT16, INT8,
            UINT8, DOUBLE, COMPLEX64, BFLOAT16 or BOOL, promoting as PyTorch's categories do
            (not to COMPLEX128). 1-D tensors of shape [0] are dropped first.
        dim: the dimension to concatenate along, in [-rank, rank - 1].
        {backend_and_stream}

    {tensor_arguments}

    Returns:
        out: the concatenated shape, the promoted dtype (each tensor converted to it). With
        nothing to concatenate (every tensor dropped or empty) an empty result.

    Raises:
        AclnnError: 161001 if tensors or an element is None; 161002 for a dtype, promotion,
            rank, dim or shape outside the constraints above.
        TypeError: tensors not a sequence, an element not an array, or a dim not an int.
    """
    result: np.ndarray | Tensor = dispatch(backend, _numpy, _aclnn, tensors, dim, stream=stream, made=_MADE)
    return result


# -- registration: what the tools know of this operator (ops/_registry.py) -------------------------

from typing import Any  # noqa: E402

from ._cases import OpCall, random_array  # noqa: E402
from ._checks import FLOAT32  # noqa: E402
from ._registry import Operator, register  # noqa: E402


def _case(rng: np.random.Generator, shape: Any, dtype: np.dtype, dim: int = 1, parts: tuple[int, ...] = (2, 3, 1),
          other_dtype: Any = None) -> OpCall:
    """``len(parts)`` tensors of ``shape`` with ``parts`` entries in ``dim``, the last of
    ``other_dtype`` (default: ``dtype``)."""
    axis = dim % len(shape)
    shapes = [tuple(shape[:axis]) + (p,) + tuple(shape[axis + 1:]) for p in parts]
    dtypes = [dtype] * (len(parts) - 1) + [dtype if other_dtype is None else np.dtype(other_dtype)]
    return OpCall("cat", ([random_array(rng, s, d) for s, d in zip(shapes, dtypes)], dim),  # type: ignore[arg-type]
                  case=f"dim {dim} parts {list(parts)}" + (f" last {np.dtype(other_dtype)}" if other_dtype else ""))


def _torch(torch: Any, tensors: Any, dim: int = 0) -> Any:
    return torch.cat(list(tensors), dim)


def _fuzz(f: Any) -> list[Any]:
    shape = [f.small_int(1, 4) for _ in range(f.small_int(1, 4))]
    dim = f.small_int(-len(shape), len(shape) - 1)
    items = []
    for _ in range(f.small_int(0, 4)):
        s = list(shape)
        s[dim] = f.small_int(0, 3)
        items.append(f.filled(tuple(s), f.pick(f.FLOATS)))
    return [items, dim]


def _c_arguments(args: list[Any], out_like: Any) -> list[Any]:
    tensors, dim = args[0], args[1] if len(args) > 1 else 0
    kept = [t for t in tensors if not _dropped(t.shape)]
    if not kept:
        return [tensors, dim, out_like((0,), np.float32)]  # (what the function returns)
    promoted = _promoted([(i, t.dtype) for i, t in enumerate(kept)]) or np.dtype(np.float32)
    try:
        shape = _shape_checks(kept, dim) or (0,)
    except Exception:
        shape = (1,)
    return [tensors, dim, out_like(shape, promoted)]


def _channels(batch: int, channels: Sequence[int], size: int) -> Any:
    """A channel concatenation of feature maps ``(batch, c, size, size)``."""
    def arguments(rng: np.random.Generator) -> tuple[Any, ...]:
        return ([rng.standard_normal((batch, c, size, size), dtype=np.float32) for c in channels], 1)
    return arguments


OPERATOR = register(Operator(
    cat, "Cat", header="aclnn_cat.h", package="ops-math", library="libopapi_math.so", outputs=("out",),
    case=_case, selftest=(((2, 4, 3, 5), DTYPES, dict()),
                          ((3, 5), (FLOAT32,), dict(dim=-1, parts=(0, 4, 2))),
                          ((2, 3), (FLOAT32,), dict(dim=0, parts=(1, 2), other_dtype=np.float16))),
    bench=((8, 32, 28, 28), dict(parts=(64, 32, 32, 32))),
    torch=_torch, memory_bound=True, fuzz=_fuzz, c_arguments=_c_arguments, dtypes=DTYPE_RULES,
    benchmarks=(("cat inception-v3 mixed_5b (8,[64,64,96,32],35,35)", _channels(8, (64, 64, 96, 32), 35)),
                ("cat densenet121 dense block (8,[256,32],28,28)", _channels(8, (256, 32), 28)),
                ("cat googlenet inception 4a (8,[192,208,48,64],14,14)", _channels(8, (192, 208, 48, 64), 14)))))
