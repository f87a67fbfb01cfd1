"""aclnnMaxUnpool2dGetWorkspaceSize / aclnnMaxUnpool2d: the partial inverse of max pooling.

C header ``aclnnop/aclnn_max_unpool2d.h`` (ops-nn, ``libopapi_nn.so``)::

    aclnnStatus aclnnMaxUnpool2dGetWorkspaceSize(
        const aclTensor *self, const aclTensor *indices, const aclIntArray *outputSize,
        aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor);
    aclnnStatus aclnnMaxUnpool2d(void *workspace, uint64_t workspaceSize,
                                 aclOpExecutor *executor, aclrtStream stream);

Computes ``F.max_unpool2d(self, indices, kernel_size, output_size=outputSize)`` without
kernel or stride: zeros of ``([N,] C, oH, oW)``, then with H*W and oH*oW flattened
``out[n, c, indices[n, c, i]] = self[n, c, i]`` (a scatter; ScatterElements on CANN).  A 3-D
``(C, H, W)`` self is one image.  Where indices repeat, the last element in C order wins here
(CANN does not say which).

Index values: CANN checks none; an index outside ``[0, oH*oW)`` writes outside the plane on the
device.  Every backend here fails instead, as a device fault: ``AclnnError`` 507015
(ACL_ERROR_RT_AICORE_EXCEPTION) from ``aclrtSynchronizeStream`` naming the first bad index (C
order), with nothing written (as the gradient's gather, ``_unpool.py``).

Constraints, in the order CANN (Atlas A2/A3) checks them; each violation is 161002 unless noted:

1. self, indices and outputSize are required (None: 161001).
2. self's dtype is FLOAT, FLOAT16, INT8, UINT8, INT16, INT32, INT64 or DOUBLE (out, made here,
   has it too); indices' is INT32 or INT64.
3. self is 3-D or 4-D; indices has self's shape.
4. Every dim of self after the first is > 0.
5. outputSize has 2 elements, both > 0, and ``oH * oW >= H * W``.
6. An empty self (its first dim 0) gives an empty result.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from .._runtime.memory import check_allocation
from .._runtime.tensor import Tensor
from .._convert.executor import dtype_of, planned, safe_shape, shape_of
from .._convert.typed import Output, TypedCall
from .._convert.values import host_array, int_array_arg, tensor_arg
from .._numpy.plans import NumpyOp, Prepared, plan
from .._numpy.workers import over_parts
from ._checks import FLOAT32, check, check_dtype, check_length, check_min, check_not_null, shape_str
from ._dispatch import dispatch, documented
from ._registry import numpy_dtypes
from ._unpool import check_index_range, unpooled_shape

API = "aclnnMaxUnpool2dGetWorkspaceSize"
KERNEL = "aclnnMaxUnpool2d"

#: The dtypes each rule accepts: the one table of these checks (the simulator's are generated from it).
DTYPE_RULES = {"DTYPES": ("ACL_FLOAT", "ACL_FLOAT16", "ACL_INT8", "ACL_UINT8", "ACL_INT16", "ACL_INT32", "ACL_INT64",
                          "ACL_DOUBLE"),
               "INDEX_DTYPES": ("ACL_INT32", "ACL_INT64")}
DTYPES = numpy_dtypes(DTYPE_RULES["DTYPES"])
INDEX_DTYPES = numpy_dtypes(DTYPE_RULES["INDEX_DTYPES"])


@functools.lru_cache(maxsize=1024)
def _out_shape(self_shape: tuple[int, ...], indices_shape: tuple[int, ...],
               output_size: tuple[int, ...]) -> tuple[int, ...]:
    """Checks 3-5 (module docstring) on the shapes and outputSize; out's shape."""
    ndim = len(self_shape)
    check(API, ndim in (3, 4), lambda: f"self must be 3-D or 4-D, got {ndim}-D shape {shape_str(self_shape)}")
    check(API, len(indices_shape) == ndim,
          lambda: f"indices must have self's rank {ndim}, got {len(indices_shape)}-D shape {shape_str(indices_shape)}")
    check(API, indices_shape == self_shape,
          lambda: f"indices shape must equal self shape, got {shape_str(indices_shape)} and {shape_str(self_shape)}")
    check(API, 0 not in self_shape[1:],
          lambda: f"self dims after the first must be > 0, got self {shape_str(self_shape)}")
    check_length(API, "outputSize", output_size, 2)
    check_min(API, "outputSize", output_size, 0, strict=True)
    height, width = self_shape[-2:]
    check(API, output_size[0] * output_size[1] >= height * width,
          lambda: f"outputSize [oH, oW] = {shape_str(output_size)} must hold self's H * W = {height * width} "
                  f"positions (oH * oW >= H * W)")
    return unpooled_shape(self_shape, output_size)


def _check(self: Any, indices: Any, output_size: tuple[int, ...]) -> tuple[int, ...]:
    """Checks 2-5 on coerced arguments (tensors: anything with shape and dtype); out's shape."""
    check_dtype(API, "self", self, DTYPES)
    check_dtype(API, "indices", indices, INDEX_DTYPES)
    return _out_shape(tuple(self.shape), tuple(indices.shape), output_size)


def _prepare(self: object, indices: object, output_size: object) -> Prepared:
    """The numpy path: validate; then each call checks the index range and scatters."""
    self = tensor_arg(API, "self", self)
    indices = tensor_arg(API, "indices", indices)
    output_size = int_array_arg(API, "outputSize", output_size)
    check_not_null(API, self=self, indices=indices, outputSize=output_size)
    assert self is not None and indices is not None and output_size is not None  # (just checked)
    out_shape = _check(self, indices, output_size)
    # An out of more elements than int64 counts, which the binding cannot make on npu and sim:
    # it passes a stand-in of ones there (``executor.safe_shape``), which the library's check
    # of out refuses; the same error here.
    made = safe_shape(out_shape)
    check(API, made == out_shape, lambda: f"out shape must be {shape_str(out_shape)} (self's with outputSize "
                                          f"as its last two dims), got {shape_str(made)}")
    dtype, plane = self.dtype, self.shape[-2] * self.shape[-1]
    planes, out_plane = self.size // plane if plane else 0, output_size[0] * output_size[1]
    nbytes = planes * out_plane * dtype.itemsize
    # Each plane's indices offset by its start in the flat out: one assignment for all planes.
    starts = (np.arange(planes, dtype=np.int64) * out_plane)[:, None]

    def run(self: object, indices: object, *_: object) -> np.ndarray:
        check_allocation(nbytes)
        index = host_array(API, "indices", indices)
        out = np.zeros((planes, out_plane), dtype)  # (calloc's pages come zeroed: no pass of ours)
        if planes:
            x = host_array(API, "self", self).reshape(planes, plane)
            rows = index.reshape(planes, plane)
            if index.size <= _SMALL_INDICES:  # (one check, one assignment: the blocks cost more)
                check_index_range(KERNEL, index, output_size)
                out.reshape(-1)[(rows + starts[:planes]).ravel()] = x.ravel()
                return out.reshape(out_shape)
            over_parts(functools.partial(_scatter, whole=index), out, x, rows, keep=1)
        return out.reshape(out_shape)

    def _scatter(out: np.ndarray, x: np.ndarray, index: np.ndarray, whole: np.ndarray) -> None:
        """Each value at its index in whole planes (a plane is never cut: an index repeated
        within it keeps its last value, as one assignment does), each block of planes' index
        range checked first (``check_index_range`` on all of them, ``whole``, where one is out:
        its first bad index, raised before out is returned)."""
        # Fancy assignment, not np.put (10x slower on ResNet-sized planes) nor put_along_axis
        # (1.1-1.3x).  Large planes one by one, by their own indices: no offset array; small
        # ones by offset indices.  In blocks of planes whose indices stay in the cache from
        # their range check on (not a pass of its own over them all).  One thread, thread CPU,
        # medians of 30, against the range check and one assignment by offset indices over all
        # planes: (8,64,56,56) 8.1 + 0.7 -> 5.0 + 0.7 ms, (8,256,14,14) 1.55 + 0.17 -> 1.40 + 0.17
        # (one by one: 1.77); then the checks moved into the blocks, whole call: 5.94 -> 5.50 ms,
        # 1.54 -> 1.52.
        block = max(1, _BLOCK_INDICES // plane)
        by_plane = plane >= _PLANE_BY_PLANE
        at = None if by_plane else np.empty((min(block, len(index)), plane), np.int64)
        flat = out.reshape(-1)
        unsigned = index.view(f"u{index.itemsize}")  # (a negative index: huge)
        for a in range(0, len(index), block):
            n = min(block, len(index) - a)
            if int(unsigned[a:a + n].max()) >= out_plane:
                check_index_range(KERNEL, whole, output_size)
            if at is None:
                for b in range(a, a + n):
                    out[b][index[b]] = x[b]
                continue
            np.add(index[a:a + n], starts[a:a + n], out=at[:n])
            flat[at[:n].ravel()] = x[a:a + n].ravel()

    return plan(run, nbytes + self.nbytes + indices.nbytes), (self, indices)


#: Planes of at least this many inputs are scattered one by one (``_prepare``'s ``_scatter``),
#: smaller ones in blocks of ``_BLOCK_INDICES`` offset indices (256 KiB).
_PLANE_BY_PLANE = 1 << 10
_BLOCK_INDICES = 1 << 15
#: Up to this many inputs in all, the range check of every index and one assignment by offset
#: indices (as before the blocks): (1,1,2,2) 14 -> 22 us through the blocks (medians of 6
#: alternating processes).
_SMALL_INDICES = 1 << 12

_numpy = NumpyOp(_prepare)


def _outputs(self: object, indices: object, output_size: tuple[int, ...] | None) -> list[Output]:
    """out: self's planes grown to outputSize, self's dtype (self's shape where the checks refuse
    the arguments: the library then reports the argument at fault)."""
    try:
        assert output_size is not None
        shape: tuple[int, ...] = _out_shape(tuple(shape_of(self)), tuple(shape_of(indices)), output_size)
    except Exception:
        shape = tuple(shape_of(self))
    return [Output(shape, dtype_of(self))]


#: The npu/sim path: the two-phase C call, the arguments converted by their declared C types;
#: the library checks them. out is sized only when the arguments pass the shape checks.
_aclnn = planned(TypedCall("MaxUnpool2d", _outputs, checks=_check))

#: The outputs the function makes, and from what (their names in CANN's messages: ``dispatch``).
_MADE = {"out": "self's shape with outputSize as its last two dims, self's dtype"}


@documented
def max_unpool2d(self: ArrayLike | Tensor, indices: ArrayLike | Tensor, output_size: Sequence[int], *,
                 backend: str | None = None, stream: object = None) -> np.ndarray | Tensor:
    """The partial inverse of max pooling: zeros with each value of ``self`` at its index,
    ``out[n, c, indices[n, c, i]] = self[n, c, i]`` over flattened planes.

    Mirrors ``aclnnMaxUnpool2dGetWorkspaceSize`` + ``aclnnMaxUnpool2d``.

    Args:
        self: ``(N, C, H, W)`` or ``(C, H, W)``, dims after the first > 0; FLOAT, FLOAT16,
            INT8, UINT8, INT16, INT32, INT64 or DOUBLE.
        indices: INT32 or INT64, self's shape; each value in ``[0, oH*oW)`` (a value outside
            is AclnnError 507015 when the computation runs, as the NPU's fault is).
        output_size: ``[oH, oW]``, both > 0, ``oH * oW >= H * W``.
        {backend_and_stream}

    {tensor_arguments}

    Returns:
        out: ``([N,] C, oH, oW)`` of self's dtype.

    Raises:
        AclnnError: 161001 if an argument is None; 161002 for a dtype, rank, shape or
            outputSize outside the constraints above; 507015 for an index out of range.
        TypeError: an argument of the wrong Python type.
    """
    result: np.ndarray | Tensor = dispatch(backend, _numpy, _aclnn, self, indices, output_size, stream=stream,
                                           made=_MADE)
    return result


# -- registration: what the tools know of this operator (ops/_registry.py) -------------------------

from ._cases import OpCall, random_array  # noqa: E402
from ._registry import Operator, register  # noqa: E402


def _pool_indices(rng: np.random.Generator, shape: Sequence[int], index_dtype: Any) -> np.ndarray:
    """The argmax indices of a 2x2 stride-2 max pooling of an ``(..., 2H, 2W)`` input."""
    *lead, h, w = shape
    rows = 2 * np.arange(h)[:, None] + rng.integers(0, 2, (*lead, h, w))
    cols = 2 * np.arange(w)[None, :] + rng.integers(0, 2, (*lead, h, w))
    return np.asarray(rows * (2 * w) + cols).astype(index_dtype)


def _case(rng: np.random.Generator, shape: Sequence[int], dtype: np.dtype,
          index_dtype: np.dtype | str | type = np.int64) -> OpCall:
    """Unpooling of a 2x2 stride-2 max pooling's ``[N,] C, H, W`` result."""
    indices = _pool_indices(rng, shape, index_dtype)
    return OpCall("max_unpool2d", (random_array(rng, shape, dtype), indices, [2 * shape[-2], 2 * shape[-1]]),
                  case=f"2x2 windows, {np.dtype(index_dtype).name} indices")


def _torch(torch: Any, self: Any, indices: Any, output_size: Any) -> Any:
    flat = torch.zeros((*self.shape[:-2], output_size[0] * output_size[1]), dtype=self.dtype)
    flat.scatter_(-1, indices.long().flatten(-2), self.flatten(-2))
    return flat.view(*self.shape[:-2], *output_size)


def _layer(n: int, c: int, h: int, w: int) -> Any:
    def make(rng: np.random.Generator) -> tuple[Any, ...]:
        return (rng.standard_normal((n, c, h, w), dtype=np.float32),
                _pool_indices(rng, (n, c, h, w), np.int64), [2 * h, 2 * w])
    return make


def _fuzz(f: Any) -> list[Any]:
    n, c, h, w = f.small_int(1, 2), f.small_int(1, 3), f.small_int(1, 4), f.small_int(1, 4)
    indices = np.arange(4 * h * w, dtype=np.int64)[: h * w].reshape(h, w) * 2
    return [f.filled((n, c, h, w), f.pick(f.FLOATS[:2])), np.broadcast_to(indices, (n, c, h, w)).copy(),
            [2 * h, 2 * w]]


def _c_arguments(args: list[Any], out_like: Any) -> list[Any]:
    shape = _out_shape(tuple(args[0].shape), tuple(args[1].shape), tuple(args[2]))
    return [*args, out_like(shape, args[0].dtype)]


OPERATOR = register(Operator(
    max_unpool2d, "MaxUnpool2d", header="aclnn_max_unpool2d.h", package="ops-nn", library="libopapi_nn.so",
    outputs=("out",), case=_case,
    selftest=(((2, 3, 4, 5), DTYPES, dict()),
              ((3, 4, 5), (FLOAT32,), dict(index_dtype=np.int32))),
    bench=((8, 64, 56, 56), dict()),
    torch=_torch, memory_bound=True, fuzz=_fuzz, c_arguments=_c_arguments, dtypes=DTYPE_RULES,
    benchmarks=(("max_unpool2d forward 2x2 (8,64,56,56)", _layer(8, 64, 56, 56)),
                ("max_unpool2d forward 2x2 (8,256,14,14)", _layer(8, 256, 14, 14)),
                ("max_unpool2d forward tiny (1,1,2,2)", _layer(1, 1, 2, 2)))))
