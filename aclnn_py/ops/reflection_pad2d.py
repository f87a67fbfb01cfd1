"""aclnnReflectionPad2dGetWorkspaceSize / aclnnReflectionPad2d: reflection padding of the last two
dims.

C header ``aclnnop/aclnn_reflection_pad2d.h`` (ops-math, ``libopapi_math.so``)::

    aclnnStatus aclnnReflectionPad2dGetWorkspaceSize(
        const aclTensor *self, const aclIntArray *padding, aclTensor *out,
        uint64_t *workspaceSize, aclOpExecutor **executor);
    aclnnStatus aclnnReflectionPad2d(void *workspace, uint64_t workspaceSize,
                                     aclOpExecutor *executor, const aclrtStream stream);

Computes ``F.pad(self, padding, mode="reflect")`` with ``padding = [left, right, top, bottom]``:
``out[..., y, x] = self[..., r(y - top, H), r(x - left, W)]`` with ``r(t, n) = -t if t < 0,
2*(n-1) - t if t >= n, else t`` (the mirror excludes the edge element).  Doc example: the 3x3
``0..8`` padded by ``[2, 2, 2, 2]`` has the first row ``8 7 6 7 8 7 6``.  A negative pad crops
(CANN's phase 1 accepts it; PyTorch's formula).  A pure copy: every dtype is exact.

Constraints, in the order CANN (Atlas A2/A3) checks them; each violation is 161002 unless noted:

1. self and padding are required (None: 161001).
2. self's dtype is FLOAT, INT32, INT64, FLOAT16, INT16, DOUBLE, INT8, UINT8, BOOL, BFLOAT16,
   COMPLEX64 or COMPLEX128 (out, made here, has it too).
3. self is 3-D ``(C, H, W)`` or 4-D ``(N, C, H, W)``; padding has 4 elements; ``left, right <
   W`` and ``top, bottom < H``; the padded sizes ``H + top + bottom`` and ``W + left + right``
   are >= 0 (added here: the shape out would need).
4. An empty self or out: rejected when 3-D, and when 4-D with C, H or W == 0; N == 0 gives an
   empty result.
"""

from __future__ import annotations

import math

import functools
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from .._runtime.memory import check_allocation
from .._runtime.tensor import Tensor
from .._convert.executor import dtype_of, planned, shape_of
from .._convert.typed import Output, TypedCall
from .._convert.values import host_array, int_array_arg, repeated, tensor_arg
from .._numpy import gather as _gather
from .._numpy.plans import NumpyOp, Prepared, plan
from .._numpy.workers import PIECE_ELEMENTS as _PIECE_ELEMENTS, over_parts
from ._checks import FLOAT32, check, check_dtype, check_length, check_not_null, shape_str
from ._dispatch import dispatch, documented
from ._pad2d import check_pads_below, padded_hw
from ._registry import numpy_dtypes

API = "aclnnReflectionPad2dGetWorkspaceSize"

#: The dtypes each rule accepts: the one table of these checks (the simulator's are generated from it).
DTYPE_RULES = {"DTYPES": ("ACL_FLOAT", "ACL_INT32", "ACL_INT64", "ACL_FLOAT16", "ACL_INT16", "ACL_DOUBLE", "ACL_INT8",
                          "ACL_UINT8", "ACL_BOOL", "ACL_BF16", "ACL_COMPLEX64", "ACL_COMPLEX128")}
DTYPES = numpy_dtypes(DTYPE_RULES["DTYPES"])


@functools.lru_cache(maxsize=1024)
def _out_shape(self_shape: tuple[int, ...], padding: tuple[int, ...]) -> tuple[int, ...]:
    """Checks 3-4 (module docstring) on self's shape and the padding; the output's shape."""
    out_shape = _padded_shape(self_shape, padding)
    if 0 in self_shape or 0 in out_shape:
        check(API, len(self_shape) == 4 and 0 not in self_shape[1:] + out_shape[1:],
              lambda: f"self and out may only be empty in N (dim 0 of a 4-D self), got self {shape_str(self_shape)} "
                      f"and out {shape_str(out_shape)}")
    return out_shape


def _padded_shape(self_shape: tuple[int, ...], padding: tuple[int, ...]) -> tuple[int, ...]:
    """Check 3: the shape out must have."""
    check(API, len(self_shape) in (3, 4),
          lambda: f"self must be 3-D or 4-D, got {len(self_shape)}-D shape {shape_str(self_shape)}")
    check_length(API, "padding", padding, 4)
    check_pads_below(API, padding, self_shape)
    out_shape = self_shape[:-2] + padded_hw(self_shape, padding)
    check(API, min(out_shape[-2:]) >= 0,
          lambda: f"the padded sizes [H + top + bottom, W + left + right] = {shape_str(out_shape[-2:])} must be >= 0 "
                  f"(self {shape_str(self_shape)}, padding = {shape_str(padding)})")
    return out_shape


def _check(self: Any, padding: tuple[int, ...]) -> tuple[int, ...]:
    """Checks 2-4 on coerced arguments (self: anything with shape and dtype); out's shape."""
    check_dtype(API, "self", self, DTYPES)
    return _out_shape(tuple(self.shape), padding)


def _prepare(self: object, padding: object) -> Prepared:
    """The numpy path: validate, then copy the interior and mirror the borders (slices)."""
    self = tensor_arg(API, "self", self)
    padding = int_array_arg(API, "padding", padding)
    check_not_null(API, self=self, padding=padding)
    assert self is not None and padding is not None  # (just checked)
    out_shape = _check(self, padding)
    dtype = self.dtype
    nbytes = math.prod(map(int, out_shape)) * dtype.itemsize
    if self.size and _gather.use_gather(math.prod(out_shape)):
        planes = self.size // (self.shape[-2] * self.shape[-1])
        taken = _gather.gather(_padded, (padding,), tuple(self.shape[-2:]), out_shape, planes)

        def run_small(self: object, *_: object) -> np.ndarray:
            check_allocation(nbytes)
            return taken(host_array(API, "self", self))

        return plan(run_small, nbytes + self.nbytes), (self,)

    def run(self: object, *_: object) -> np.ndarray:
        check_allocation(nbytes)
        return _pad(host_array(API, "self", self), out_shape, padding)

    return plan(run, nbytes + self.nbytes), (self,)


_numpy = NumpyOp(_prepare)


def _pad(x: np.ndarray, out_shape: tuple[int, ...], padding: tuple[int, ...]) -> np.ndarray:
    """The padded copy, plane by plane (``_pad_planes``), on the worker threads when large."""
    out = np.empty(out_shape, x.dtype)
    if out.size:
        # Small planes on one thread in pieces that stay in the cache from the interior's copy to
        # the columns mirrored from it.  Thread CPU, one thread, interleaved medians of 40,
        # against one piece: p1 (8,256,28,28) 1.90 -> 1.32 ms.  (Large planes gain little and
        # pay each piece's ~7 us: pieces of 2 Mi elements, p1 (8,64,112,112) 4.89 -> 4.60 ms,
        # p3 (8,3,224,224) 0.67 -> 0.71.)
        small = out_shape[-2] * out_shape[-1] <= _PIECE_ELEMENTS // 16
        piece = _PIECE_ELEMENTS if small else None
        over_parts(lambda o, planes: _pad_planes(o, planes, padding), out, x, keep=2, piece_elements=piece)
    return out


def _padded(x: np.ndarray, padding: tuple[int, ...]) -> np.ndarray:
    """The planes ``(batch, H, W)`` of ``x`` padded (the kernel ``_gather`` maps)."""
    left, right, top, bottom = padding
    batch, height, width = x.shape
    return _pad(x, (batch, height + top + bottom, width + left + right), padding)


def _pad_planes(out: np.ndarray, x: np.ndarray, padding: tuple[int, ...]) -> None:
    """``x``'s planes padded into ``out``'s: the interior rows (self's, then the left and
    right strips mirrored from self's columns), then the top and bottom strips mirrored from
    out's own whole rows (corners included: contiguous rows, where mirrored columns of out take
    a strided pass over every row of it; p3 (8,3,224,224), one thread: 0.26 -> 0.15 + 0.03 ms
    for the strips)."""
    left, right, top, bottom = padding
    height, width = x.shape[-2:]
    if min(padding) < 0:
        # Cropping on some side: one gather per axis of the reflected sources.
        rows = [_reflect(y - top, height) for y in range(out.shape[-2])]
        cols = [_reflect(c - left, width) for c in range(out.shape[-1])]
        np.take(np.take(x, rows, axis=-2), cols, axis=-1, out=out)
        return
    middle = out[..., top:top + height, :]
    middle[..., left:left + width] = x
    if left:
        middle[..., :left] = x[..., left:0:-1]
    if right:
        middle[..., left + width:] = x[..., _backwards(width - 2, right)]
    if top:
        out[..., :top, :] = out[..., 2 * top:top:-1, :]
    if bottom:
        end = top + height
        out[..., end:, :] = out[..., _backwards(end - 2, bottom), :]


def _backwards(start: int, count: int) -> slice:
    """``count`` positions from ``start`` down (a stop of -1 would mean the last one)."""
    stop = start - count
    return slice(start, stop if stop >= 0 else None, -1)


def _reflect(t: int, n: int) -> int:
    return -t if t < 0 else 2 * (n - 1) - t if t >= n else t


def _outputs(self: object, padding: tuple[int, ...] | None) -> list[Output]:
    """out: the padded shape, self's dtype (a stand-in of self's shape where the checks refuse
    the padding: the library then reports the argument at fault)."""
    try:
        assert padding is not None
        shape: tuple[int, ...] = _padded_shape(tuple(shape_of(self)), padding)
    except Exception:
        shape = tuple(shape_of(self))
    return [Output(shape, dtype_of(self))]


#: The npu/sim path: the two-phase C call, the arguments converted by their declared C types;
#: the library checks them. out is sized only when the arguments pass the shape checks.
_aclnn = planned(TypedCall("ReflectionPad2d", _outputs, checks=_check))

#: The outputs the function makes, and from what (their names in CANN's messages: ``dispatch``).
_MADE = {"out": "self's padded shape and dtype"}


@documented
def reflection_pad2d(self: ArrayLike | Tensor, padding: int | Sequence[int], *, backend: str | None = None,
                     stream: object = None) -> np.ndarray | Tensor:
    """Reflection padding of the last two dims, ``F.pad(self, padding, mode="reflect")``.

    Mirrors ``aclnnReflectionPad2dGetWorkspaceSize`` + ``aclnnReflectionPad2d``.

    Args:
        self: ``(N, C, H, W)`` or ``(C, H, W)``; FLOAT, FLOAT16, BFLOAT16, DOUBLE, INT8, UINT8,
            INT16, INT32, INT64, BOOL, COMPLEX64 or COMPLEX128.  Empty only in N (4-D).
        padding: ``[left, right, top, bottom]`` or one int for all four; ``left, right < W``
            and ``top, bottom < H``; a negative value crops.
        {backend_and_stream}

    {tensor_arguments}

    Returns:
        out: ``(..., H + top + bottom, W + left + right)`` of self's dtype.

    Raises:
        AclnnError: 161001 if an argument is None; 161002 for a dtype, rank, shape or padding
            outside the constraints above.
        TypeError: an argument of the wrong Python type.
    """
    result: np.ndarray | Tensor = dispatch(backend, _numpy, _aclnn, self, repeated(padding, 4), stream=stream,
                                           made=_MADE)
    return result


# -- registration: what the tools know of this operator (ops/_registry.py) -------------------------

from ._cases import OpCall, random_array  # noqa: E402
from ._registry import Operator, register  # noqa: E402


def _case(rng: np.random.Generator, shape: Sequence[int], dtype: np.dtype,
          padding: Sequence[int] = (1, 1, 1, 1)) -> OpCall:
    """``padding = [left, right, top, bottom]`` around an ``[N,] C, H, W`` self."""
    return OpCall("reflection_pad2d", (random_array(rng, shape, dtype), list(padding)), case=f"pad {list(padding)}")


def _torch(torch: Any, self: Any, padding: Any) -> Any:
    if self.dtype == torch.bool:  # (PyTorch pads no bools: a reflection only moves elements, so pad them as bytes)
        return torch.nn.functional.pad(self.to(torch.uint8), padding, mode="reflect").bool()
    return torch.nn.functional.pad(self, padding, mode="reflect")


def _layer(n: int, c: int, h: int, w: int, pad: int) -> Any:
    def make(rng: np.random.Generator) -> tuple[Any, ...]:
        return (rng.standard_normal((n, c, h, w), dtype=np.float32), [pad] * 4)
    return make


def _fuzz(f: Any) -> list[Any]:
    n, c, h, w = f.small_int(1, 2), f.small_int(1, 3), f.small_int(2, 6), f.small_int(2, 6)
    pads = [f.small_int(0, w - 1), f.small_int(0, w - 1), f.small_int(0, h - 1), f.small_int(0, h - 1)]
    return [f.filled((n, c, h, w), f.pick(f.FLOATS)), pads]


def _c_arguments(args: list[Any], out_like: Any) -> list[Any]:
    return [*args, out_like(_out_shape(tuple(args[0].shape), tuple(args[1])), args[0].dtype)]


OPERATOR = register(Operator(
    reflection_pad2d, "ReflectionPad2d", header="aclnn_reflection_pad2d.h", package="ops-math",
    library="libopapi_math.so", outputs=("out",), case=_case,
    selftest=(((2, 3, 6, 7), DTYPES, dict(padding=(2, 1, 3, 1))),
              ((3, 5, 4), (FLOAT32,), dict(padding=(3, 3, 0, 2)))),
    bench=((8, 64, 56, 56), dict(padding=(3, 3, 3, 3))),
    torch=_torch, memory_bound=True, fuzz=_fuzz, c_arguments=_c_arguments, dtypes=DTYPE_RULES,
    benchmarks=(("reflection_pad2d forward p3 (8,3,224,224)", _layer(8, 3, 224, 224, 3)),
                ("reflection_pad2d forward p1 (8,64,112,112)", _layer(8, 64, 112, 112, 1)),
                ("reflection_pad2d forward p1 (8,256,28,28)", _layer(8, 256, 28, 28, 1)),
                ("reflection_pad2d forward tiny (1,1,4,4)", _layer(1, 1, 4, 4, 1)))))
