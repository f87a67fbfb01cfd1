"""aclnnMaxUnpool2dBackwardGetWorkspaceSize / aclnnMaxUnpool2dBackward: gradient of max_unpool2d.

C header ``aclnnop/aclnn_max_unpool2d_backward.h``::

    aclnnStatus aclnnMaxUnpool2dBackwardGetWorkspaceSize(
        const aclTensor *gradOutput, const aclTensor *self, const aclTensor *indices,
        const aclIntArray *outputSize, aclTensor *out, uint64_t *workspaceSize,
        aclOpExecutor **executor);
    aclnnStatus aclnnMaxUnpool2dBackward(void *workspace, uint64_t workspaceSize,
                                         aclOpExecutor *executor, aclrtStream stream);

Computes the gradient of ``F.max_unpool2d(self, indices, ..., output_size=outputSize)`` with
respect to ``self``: with H*W and oH*oW flattened,
``out[n, c, i] = gradOutput[n, c, indices[n, c, i]]`` — a gather, i.e.
``gradOutput.flatten(-2).gather(-1, indices.flatten(-2)).view(self.shape)``.  ``self``
contributes only its shape and dtype; a 3-D ``(C, H, W)`` input is one image.

Constraints, in the order CANN checks them (each violation is 161002 unless noted):

1. gradOutput, self, indices, outputSize are required (None: 161001).
2. gradOutput and self dtypes are each FLOAT, FLOAT16, INT8, UINT8, INT16, INT32, INT64 or BOOL;
   gradOutput's dtype can be cast to out's (which is self's here); gradOutput dtype == self dtype;
   indices dtype is INT64 or INT32.
3. self has rank 3 or 4; gradOutput has self's rank; their C (and, 4-D, N) agree; indices has
   self's shape; outputSize has 2 elements and equals gradOutput's last two dims ``(oH, oW)``.
4. An empty gradOutput with a non-empty self is rejected; an empty self succeeds (empty result).

Index values: CANN does not check them.  Phase 1 cannot see device data, and neither the
aclnn documentation's error table nor ``aclnn_max_unpool2d_backward.cpp`` (hicann/ops-nn,
``index/gather_elements/op_api``) has a check; the GatherElements kernel it launches reads
``x[... + index * stride + ...]`` unchecked (``index/gather_elements/op_kernel/arch35/
gather_elements_simt.h``), so an index outside ``[0, oH*oW)`` reads outside gradOutput: undefined
data or an AI Core exception when the stream is synchronised.  Every backend here takes the
defined one of those outcomes: phase 1 succeeds, then the computation fails as a device fault
would, ``AclnnError`` 507015 (ACL_ERROR_RT_AICORE_EXCEPTION) from ``aclrtSynchronizeStream``,
naming the first bad index (in C order), and nothing is written.  The simulator's kernel checks
every index before writing; the numpy backend checks them before its gather.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from .._dtypes import dtype_name
from .._runtime.memory import check_allocation
from .._runtime.tensor import Tensor
from .._numpy import workers as _workers
from ._registry import numpy_dtypes
from .._convert.executor import dtype_of, planned, shape_of
from .._convert.typed import Output, TypedCall
from ._checks import FLOAT16, FLOAT32, check, check_dtype, check_length, check_not_null, check_same_dtype, check_same_shape, shape_str
from .._numpy.plans import NumpyOp, Prepared, plan
from ._dispatch import dispatch, documented
from ._unpool import check_index_range
from .._convert.values import host_array, int_array_arg, tensor_arg
from .._numpy.workers import in_parallel

if TYPE_CHECKING:
    pass

API = "aclnnMaxUnpool2dBackwardGetWorkspaceSize"
KERNEL = "aclnnMaxUnpool2dBackward"

#: The dtypes each rule accepts: the one table of these checks (the simulator's are generated from it).
DTYPE_RULES = {"DTYPES": ("ACL_FLOAT", "ACL_FLOAT16", "ACL_INT8", "ACL_UINT8", "ACL_INT16", "ACL_INT32", "ACL_INT64",
                          "ACL_BOOL"),
               "INDEX_DTYPES": ("ACL_INT64", "ACL_INT32")}
DTYPES = numpy_dtypes(DTYPE_RULES["DTYPES"])
INDEX_DTYPES = numpy_dtypes(DTYPE_RULES["INDEX_DTYPES"])


def _can_cast(source: np.dtype, target: np.dtype) -> bool:
    """CANN's CanCast restricted to DTYPES: no floating -> integral, nothing but BOOL -> BOOL."""
    if target == np.bool_:
        return source == np.bool_
    return not (source.kind == "f" and target.kind in "iu")


def _validate(grad_output: object, self: object, indices: object,
              output_size: object) -> tuple[np.ndarray, np.ndarray, np.ndarray, tuple[int, ...]]:
    """Coerce and check the arguments in CANN's order.

    Returns ``(grad_output, self, indices, output_size)`` with ``output_size`` a tuple of 2 ints.
    """
    grad_output = tensor_arg(API, "gradOutput", grad_output)
    self = tensor_arg(API, "self", self)
    indices = tensor_arg(API, "indices", indices)
    output_size = int_array_arg(API, "outputSize", output_size)
    check_not_null(API, gradOutput=grad_output, self=self, indices=indices, outputSize=output_size)
    assert grad_output is not None and self is not None and indices is not None and output_size is not None  # (just checked)

    check_dtype(API, "gradOutput", grad_output, DTYPES)
    check_dtype(API, "self", self, DTYPES)
    # out is made with self's dtype, so CANN's gradOutput -> out cast rule is checked against it.
    check(API, _can_cast(grad_output.dtype, self.dtype),
          lambda: f"gradOutput dtype {dtype_name(grad_output.dtype)} cannot be cast to out dtype {dtype_name(self.dtype)}")
    check_same_dtype(API, "gradOutput", grad_output, "self", self)
    check_dtype(API, "indices", indices, INDEX_DTYPES)

    _check_geometry(grad_output.shape, self.shape, indices.shape, output_size)
    return grad_output, self, indices, output_size


def _check_geometry(go_shape: tuple[int, ...], self_shape: tuple[int, ...], indices_shape: tuple[int, ...],
                    output_size: tuple[int, ...]) -> None:
    """The checks that depend on shapes and outputSize alone (also run by the npu/sim path to
    decide whether the output may be sized from self)."""
    ndim, go_ndim = len(self_shape), len(go_shape)
    check(API, ndim in (3, 4), lambda: f"self must be 3-D or 4-D, got {ndim}-D shape {shape_str(self_shape)}")
    check(API, go_ndim == ndim,
          lambda: f"gradOutput must have self's rank {ndim}, got {go_ndim}-D shape {shape_str(go_shape)}")
    leading = 1 if ndim == 3 else 2
    check(API, go_shape[:leading] == self_shape[:leading],
          lambda: f"gradOutput and self must agree in {'C' if leading == 1 else 'N and C'}, got gradOutput "
          f"{shape_str(go_shape)} and self {shape_str(self_shape)}")
    check_same_shape(API, "indices", indices_shape, "self", self_shape)
    check_length(API, "outputSize", output_size, 2)
    check(API, output_size == go_shape[-2:],
          lambda: f"outputSize must equal gradOutput's last two dims {shape_str(go_shape[-2:])}, "
          f"got {shape_str(output_size)}")

    check(API, 0 not in go_shape or 0 in self_shape,
          lambda: f"gradOutput is empty ({shape_str(go_shape)}) but self is not ({shape_str(self_shape)})")


def _check_index_range(indices: np.ndarray, output_size: tuple[int, ...]) -> None:
    check_index_range(KERNEL, indices, output_size)


# Indices per chunk: the chunk's indices, their int64 offsets and its results (~1.25 MiB at
# most for int64 indices and results) stay in the cache between the range check, the offset
# sum and the gather that read them again. Measured one thread, medians of 15 interleaved
# rounds (the benchmark's (8,256,28,28) and (8,64,56,56) cases): 2.10 / 2.24 ms at 16 Ki,
# 2.06 / 2.11 at 32 Ki, 2.00 / 1.99 at 64 Ki, 2.07 / 2.05 at 128 Ki; on two threads (minimums
# of 15 rounds) 2.36 / 1.75 at 16 Ki, 1.74 / 1.39 at 32 Ki, 1.59 / 1.26 at 64 Ki.
# Where the (8,256,28,28) case's 2.1 ms go on one thread: range check 0.19, offset sum 0.74
# (an int64 add moves 24 bytes per index: ~0.2 ns each even in L2), gather 1.1 (np.take,
# 0.3 ns per index in cache).  Measured and lost: fancy indexing part[rows, indices] 4.7 ms
# and np.take_along_axis 4.8 (both index with broadcast plane numbers); np.ravel_multi_index,
# which would check the range while it computes the offsets, 2 ns per index against 0.2 for
# the sum; int32 offsets (np.take converts them: 0.52 against 0.31 ns per index); an int32 sum
# into the low halves of int64 offsets (strided: 0.35-0.45 ns per index).
_CHUNK = 1 << 16


def _prepare(grad_output: object, self: object, indices: object, output_size: object) -> Prepared:
    """The numpy path: validate; then each call checks the index range and gathers."""
    grad_output, self, indices, output_size = _validate(grad_output, self, indices, output_size)
    shape, dtype, nbytes = self.shape, self.dtype, self.size * self.itemsize
    nbytes_touched = nbytes + grad_output.size * grad_output.itemsize + indices.size * indices.itemsize
    if not nbytes:
        def run_empty(*_: object) -> np.ndarray:
            check_allocation(nbytes)
            return np.empty(shape, dtype=dtype)
        return plan(run_empty, nbytes_touched), ()
    gather = _gather(self.size // (shape[-2] * shape[-1]), shape[-2] * shape[-1], output_size, dtype)

    def run(grad_output: object, self: object, indices: object, *_: object) -> np.ndarray:
        check_allocation(nbytes)
        index = host_array(API, "indices", indices)
        out = gather(host_array(API, "gradOutput", grad_output), index)
        if out is None:
            _check_index_range(index, output_size)  # raises, naming the first bad index
        assert out is not None
        return out.reshape(shape)

    return plan(run, nbytes_touched), (grad_output, self, indices)


_numpy = NumpyOp(_prepare)


def _gather(planes: int, plane: int, output_size: tuple[int, ...],
            dtype: np.dtype) -> Callable[[np.ndarray, np.ndarray], np.ndarray | None]:
    """The gather of ``planes`` planes of ``plane`` indices into planes of ``oH*oW`` gradients:
    ``out[p, i] = grad_output[p, indices[p, i]]``, or None when an index is out of range.

    One np.take per chunk of planes (faster than take_along_axis or one take per plane): each
    chunk's indices are range-checked, summed with their plane's start within the chunk's part
    of the gradient and gathered from that part while they are in the cache.  The starts are one
    array of the chunk's shape made once: a sum of two contiguous arrays is one SIMD loop, where
    the (planes, 1) column of starts broadcast over the rows was an inner loop per plane (0.33
    vs 0.60 ms for the (8,256,28,28) case's sums, one thread).  The offsets stay int64: np.take
    converts any other index dtype to intp first (int32 offsets: 1.5 vs 1.2 ms for that case's
    gather).  A chunk of one plane gathers at the indices themselves (no sum)."""
    size = output_size[0] * output_size[1]
    starts = np.arange(0, planes * size, size, dtype=np.int64)[:, np.newaxis]
    step = max(1, _CHUNK // plane)
    per_thread = max(1, _workers.MIN_PARALLEL_ELEMENTS // plane)
    # Each plane's start within its chunk's part of the gradient (none for a plane per chunk).
    local = np.repeat(starts[:min(step, planes), 0], plane) if step > 1 else None

    def gather(grad_output: np.ndarray, indices: np.ndarray) -> np.ndarray | None:
        flat = grad_output.reshape(-1)
        rows = indices.reshape(planes, plane)
        unsigned = rows.view(np.uint64 if rows.dtype == np.int64 else np.uint32)
        if planes <= step:  # one chunk (tiny calls): fewer NumPy calls
            # Viewed as unsigned, a negative index is huge: one pass catches both ends.
            return None if int(unsigned.max()) >= size else flat.take(rows + starts, mode="wrap")
        out = np.empty((planes, plane), dtype)
        bad = []

        def work(first: int, last: int) -> None:
            offsets = np.empty((min(step, last - first) if local is not None else 0, plane), np.int64)
            for a in range(first, last, step):
                b = min(a + step, last)
                if int(unsigned[a:b].max()) >= size:
                    bad.append(a)
                    return
                part = flat[a * size:b * size]
                # mode="wrap" is a no-op on these in-range offsets, and faster than "clip"
                # or the default bounds check (1.1 vs 1.3 ms on the benchmark's case)
                if local is None:
                    part.take(rows[a], out=out[a], mode="wrap")
                    continue
                at = offsets[:b - a]
                np.add(rows[a:b], local[:(b - a) * plane].reshape(b - a, plane), out=at)
                part.take(at, out=out[a:b], mode="wrap")

        # The gather is bound by memory latency: planes are split over the worker threads (NumPy
        # releases the GIL in the range check, the sum and the gather; measured before the
        # chunked range check, on a quiet machine: 3.5 ms on 2 threads, 5.7 ms on one).
        in_parallel(planes, work, min_per_thread=per_thread)
        return None if bad else out

    return gather


def _outputs(grad_output: object, self: object, indices: object, output_size: tuple[int, ...] | None) -> list[Output]:
    """out: self's shape and dtype."""
    return [Output(shape_of(self if self is not None else grad_output), dtype_of(self))]


def _shape_checks(grad_output: object, self: object, indices: object, output_size: tuple[int, ...] | None) -> None:
    """The checks the output's size depends on (it is only sized so when they pass)."""
    _check_geometry(shape_of(grad_output), shape_of(self if self is not None else grad_output), shape_of(indices),
                    output_size)  # type: ignore[arg-type]  # (None fails the checks, as it should)


#: The npu/sim path: the two-phase C call, the arguments converted by their declared C types;
#: the library checks them.
#: The outputs the function makes, and from what (their names in CANN's messages: ``dispatch``).
_MADE = {"out": "self's shape and dtype"}

_aclnn = planned(TypedCall("MaxUnpool2dBackward", _outputs, checks=_shape_checks))


@documented
def max_unpool2d_backward(grad_output: ArrayLike | Tensor, self: ArrayLike | Tensor, indices: ArrayLike | Tensor,
                          output_size: Sequence[int], *, backend: str | None = None, stream: object = None) -> np.ndarray | Tensor:
    """Gradient of ``F.max_unpool2d`` with respect to its input: ``grad_output`` gathered at
    ``indices`` (``out[n, c, i] = grad_output[n, c, indices[n, c, i]]`` over flattened planes).

    Mirrors ``aclnnMaxUnpool2dBackwardGetWorkspaceSize`` + ``aclnnMaxUnpool2dBackward``.

    Args:
        grad_output: gradOutput, ``(N, C, oH, oW)`` or ``(C, oH, oW)``; FLOAT, FLOAT16, INT8,
            UINT8, INT16, INT32, INT64 or BOOL, the same dtype as ``self``; not empty unless
            ``self`` is.
        self: the unpooling's input, ``(N, C, H, W)`` or ``(C, H, W)``, same rank and N, C as
            grad_output; only its shape and dtype are used.
        indices: INT64 or INT32, ``self``'s shape; each value in ``[0, oH*oW)`` (a value
            outside is AclnnError 507015 when the computation runs, as the NPU's fault is).
        output_size: outputSize ``[oH, oW]``, equal to grad_output's last two dimensions.
        {backend_and_stream}

    {tensor_arguments}

    Returns:
        out: ``self``'s shape and dtype.

    Raises:
        AclnnError: 161001 if an argument is None; 161002 for a dtype, rank or shape outside the
            constraints above; 507015 for an index out of range.
        TypeError: an argument of the wrong Python type.
    """
    result: np.ndarray | Tensor = dispatch(backend, _numpy, _aclnn, grad_output, self, indices, output_size,
                    stream=stream, made=_MADE)
    return result


# -- registration: what the tools know of this operator (ops/_registry.py) -------------------------

from typing import Any  # noqa: E402

from ._cases import OpCall, random_array  # noqa: E402
from ._registry import Operator, register  # noqa: E402


def _case(rng: np.random.Generator, shape: Sequence[int], dtype: np.dtype,
          index_dtype: np.dtype | str | type = np.int64) -> OpCall:
    """The gradient of unpooling a 2x2/2 max pool: ``self`` is ``[N,] C, H, W``, the output 2H x 2W."""
    *lead, height, width = shape
    out_h, out_w = 2 * height, 2 * width
    rows = 2 * np.arange(height)[:, None] + rng.integers(0, 2, size=(*lead, height, width))
    cols = 2 * np.arange(width)[None, :] + rng.integers(0, 2, size=(*lead, height, width))
    indices = (rows * out_w + cols).astype(index_dtype)
    grad = random_array(rng, (*lead, out_h, out_w), dtype)
    self = random_array(rng, shape, dtype)
    return OpCall("max_unpool2d_backward", (grad, self, indices, [out_h, out_w]),
                  case=f"2x2 windows, {np.dtype(index_dtype).name} indices")


def _torch(torch: Any, grad: Any, self: Any, indices: Any, output_size: Any) -> Any:
    return torch.gather(grad.flatten(-2), -1, indices.long().flatten(-2)).view(self.shape)


def _layer(n: int, c: int, h: int, w: int) -> Any:
    def make(rng: np.random.Generator) -> tuple[Any, ...]:
        x = rng.standard_normal((n, c, h, w), dtype=np.float32)
        # Indices of a 2x2/2 max pool: one position per window of the (2h, 2w) output.
        rows = 2 * np.arange(h)[:, None] + rng.integers(0, 2, size=(n, c, h, w))
        cols = 2 * np.arange(w)[None, :] + rng.integers(0, 2, size=(n, c, h, w))
        indices = (rows * (2 * w) + cols).astype(np.int64)
        return (rng.standard_normal((n, c, 2 * h, 2 * w), dtype=np.float32), x, indices, [2 * h, 2 * w])
    return make


def _fuzz(f: Any) -> list[Any]:
    n, c, h, w = f.small_int(1, 2), f.small_int(1, 3), f.small_int(1, 4), f.small_int(1, 4)
    oh, ow = h * 2, w * 2
    dt = f.pick(f.FLOATS)
    idx = f.rng.integers(0, oh * ow, size=(n, c, h, w)).astype(f.pick([np.int64, np.int32]))
    return [f.filled((n, c, oh, ow), dt), f.filled((n, c, h, w), dt), idx, [oh, ow]]


def _c_arguments(args: list[Any], out_like: Any) -> list[Any]:
    return [*args, out_like(args[1].shape, args[1].dtype)]


OPERATOR = register(Operator(
    max_unpool2d_backward, "MaxUnpool2dBackward", header="aclnn_max_unpool2d_backward.h", package="ops-nn",
    library="libopapi_nn.so", outputs=("out",), case=_case,
    selftest=(((2, 3, 4, 5), tuple(np.dtype(t) for t in (FLOAT32, FLOAT16, np.int32, np.int64, np.int8, np.uint8,
                                                          np.int16, np.bool_)), {}),
              ((3, 4, 5), (FLOAT32,), dict(index_dtype=np.int32))),
    bench=((8, 64, 56, 56), dict(index_dtype="int64")),
    torch=_torch, memory_bound=True, fuzz=_fuzz, c_arguments=_c_arguments, dtypes=DTYPE_RULES, seed=True, shape_only=("self",),
    benchmarks=(("max_unpool2d 2x2 (8,64,56,56)->112", _layer(8, 64, 56, 56)),
                ("max_unpool2d segnet 2x2 (8,256,28,28)->56", _layer(8, 256, 28, 28)),
                ("max_unpool2d tiny (1,1,2,2)", _layer(1, 1, 2, 2)))))
