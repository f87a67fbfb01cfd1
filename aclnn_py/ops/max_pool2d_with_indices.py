"""aclnnMaxPool2dWithIndicesGetWorkspaceSize / aclnnMaxPool2dWithIndices: 2-D max pooling with the
position of each maximum.

C header ``aclnnop/aclnn_max_pool2d_with_indices.h`` (ops-nn ``pooling/max_pool3d_with_argmax_v2``)::

    aclnnStatus aclnnMaxPool2dWithIndicesGetWorkspaceSize(
        const aclTensor *self, const aclIntArray *kernelSize, const aclIntArray *stride,
        const aclIntArray *padding, const aclIntArray *dilation, bool ceilMode, aclTensor *out,
        aclTensor *indices, uint64_t *workspaceSize, aclOpExecutor **executor);
    aclnnStatus aclnnMaxPool2dWithIndices(void *workspace, uint64_t workspaceSize,
                                          aclOpExecutor *executor, aclrtStream stream);

Computes ``F.max_pool2d(self, kernelSize, stride, padding, dilation, ceilMode,
return_indices=True)``.  On Atlas A2/A3 ``indices`` holds flat positions ``h * W + w`` in the
unpadded input plane (not the bit-mask of aclnnMaxPool2dWithMask), as INT32 or INT64, the dtype
of the indices tensor; padding acts as -inf and is never chosen.  Ties keep the first maximum in
row-major window order (PyTorch's rule; CANN's tie-breaking is not verified).  CANN documents
NaN and -Inf inputs as unsupported on A2/A3; here a NaN wins its window, as in PyTorch.

Checks, in CANN's order (each 161002 unless noted):

1. self, kernelSize, stride, padding, dilation (and out, indices) required (None: 161001).
2. self dtype FLOAT, FLOAT16 or BFLOAT16; out dtype == self's; indices dtype INT32 or INT64.
3. self 3-D (C, H, W; NCL) or 4-D (N, C, H, W; NCHW), out of the same format.
4. kernelSize has 1 or 2 elements, stride 0, 1 or 2 (0: the kernel), padding 1 or 2,
   dilation 1 or 2.
5. kernelSize > 0; stride > 0; 0 <= padding <= kernelSize / 2; dilation 1 (Atlas A2/A3).
6. self's C, H, W != 0; outH, outW > 0, with ``o = floor((in + 2p - (k-1) - 1 + (ceil ? s-1 :
   0)) / s) + 1``, less one in ceil mode if the last window starts at or after ``in + p``; out
   and indices of shape ``[N,] C, outH, outW``.
7. N = 0: success, empty results.
"""

from __future__ import annotations

import math

from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike, DTypeLike

from .._convert.executor import dtype_of, planned, shape_of
from .._convert.typed import Output, TypedCall
from .._convert.values import bool_arg, host_array, int_array_arg, repeated, tensor_arg
from .._dtypes import bfloat16
from .._numpy.plans import NumpyOp, Prepared, plan
from .._numpy.pooling import expand, max_pool_planes, pooled_size
from .._runtime.memory import check_allocation
from .._runtime.tensor import Tensor
from ._checks import check, check_dtype, check_not_null, format_name, shape_str
from ._dispatch import dispatch, documented
from ._pooling import MaxWindow, max_window, pooled_plane
from ._registry import numpy_dtypes

API = "aclnnMaxPool2dWithIndicesGetWorkspaceSize"

#: The dtypes each rule accepts: the one table of these checks (the simulator's are generated from it).
DTYPE_RULES = {"DTYPES": ("ACL_FLOAT", "ACL_FLOAT16", "ACL_BF16"), "INDEX_DTYPES": ("ACL_INT32", "ACL_INT64")}
DTYPES = numpy_dtypes(DTYPE_RULES["DTYPES"])
INDEX_DTYPES = numpy_dtypes(DTYPE_RULES["INDEX_DTYPES"])


def _geometry(shape: tuple[int, ...], kernel: tuple[int, ...] | None, stride: tuple[int, ...] | None,
              padding: tuple[int, ...] | None, dilation: tuple[int, ...] | None,
              ceil_mode: bool) -> tuple[MaxWindow, tuple[int, ...]]:
    """Checks 3-6 (shapes and lists only): the windows and out's shape."""
    check(API, len(shape) in (3, 4), lambda: f"self must be 3-D or 4-D (NCL or NCHW), got {format_name(len(shape))} "
                                             f"shape {shape_str(shape)}")
    assert kernel is not None and stride is not None and padding is not None and dilation is not None
    window = max_window(API, kernel, stride, padding, dilation, ceil_mode)
    return window, (*shape[:-2], *pooled_plane(API, "self", shape, window))


def _prepare(self: object, kernel_size: object, stride: object, padding: object, dilation: object,
             ceil_mode: object, index_dtype: int) -> Prepared:
    """The numpy path: check in CANN's order, then the window maxima (``_numpy/pooling.py``)."""
    ceil_mode = bool_arg(API, "ceilMode", ceil_mode)
    self = tensor_arg(API, "self", self)
    kernel = int_array_arg(API, "kernelSize", kernel_size)
    strides = int_array_arg(API, "stride", stride)
    pads = int_array_arg(API, "padding", padding)
    dilations = int_array_arg(API, "dilation", dilation)
    check_not_null(API, self=self, kernelSize=kernel, stride=strides, padding=pads, dilation=dilations)
    assert self is not None
    check_dtype(API, "self", self, DTYPES)
    window, out_shape = _geometry(self.shape, kernel, strides, pads, dilations, ceil_mode)
    dtype, idx_dtype = self.dtype, INDEX_DTYPES[index_dtype]
    count = math.prod(map(int, out_shape))
    nbytes = count * (dtype.itemsize + idx_dtype.itemsize)
    height, width = self.shape[-2:]

    def run(self: object, *_: object) -> tuple[np.ndarray, np.ndarray]:
        check_allocation(nbytes)
        x = host_array(API, "self", self)
        planes = x.reshape(-1, height, width)
        if x.dtype == bfloat16:
            planes = planes.astype(np.float32)
        values, indices = max_pool_planes(planes, (out_shape[-2], out_shape[-1]), window.k, window.s, window.p, window.d)
        return values.astype(dtype, copy=False).reshape(out_shape), indices.astype(idx_dtype).reshape(out_shape)

    return plan(run, nbytes + self.nbytes), (self,)


def _numpy_as(index_dtype: int) -> NumpyOp:
    """The numpy path giving indices of ``INDEX_DTYPES[index_dtype]``."""
    def prepare(self: object, kernel_size: object, stride: object, padding: object, dilation: object,
                ceil_mode: object) -> Prepared:
        return _prepare(self, kernel_size, stride, padding, dilation, ceil_mode, index_dtype)
    return NumpyOp(prepare)


#: The numpy path, by indices dtype (as ``_aclnn``).
_numpy = (_numpy_as(0), _numpy_as(1))


def _shape_checks(self: object, kernel: tuple[int, ...] | None, stride: tuple[int, ...] | None,
                  padding: tuple[int, ...] | None, dilation: tuple[int, ...] | None, ceil_mode: bool) -> None:
    """The checks the outputs' size depends on (they are only sized so when these pass)."""
    _geometry(shape_of(self), kernel, stride, padding, dilation, ceil_mode)


def _outputs_as(index_dtype: np.dtype) -> TypedCall:
    def outputs(self: object, kernel: tuple[int, ...] | None, stride: tuple[int, ...] | None,
                padding: tuple[int, ...] | None, dilation: tuple[int, ...] | None, ceil_mode: bool) -> list[Output]:
        """out and indices: the pooled shape (self's where the checks fail: the library then
        names the argument at fault), self's dtype and ``index_dtype``."""
        try:
            shape = _geometry(shape_of(self), kernel, stride, padding, dilation, ceil_mode)[1]
        except Exception:
            shape = shape_of(self)
        return [Output(shape, dtype_of(self)), Output(shape, index_dtype)]
    return TypedCall("MaxPool2dWithIndices", outputs, checks=_shape_checks)


#: The npu/sim path, one per indices dtype: the two-phase C call, the arguments converted by
#: their declared C types; the library checks them.
_aclnn = {i: planned(_outputs_as(dt)) for i, dt in enumerate(INDEX_DTYPES)}
_MADE = {"out": "the pooled shape and self's dtype", "indices": "the pooled shape and indices_dtype"}


@documented
def max_pool2d_with_indices(self: ArrayLike | Tensor, kernel_size: int | Sequence[int], stride: int | Sequence[int],
                            padding: int | Sequence[int], dilation: int | Sequence[int] = 1, ceil_mode: bool = False,
                            *, indices_dtype: DTypeLike = np.int32, backend: str | None = None,
                            stream: object = None) -> tuple[np.ndarray | Tensor, np.ndarray | Tensor]:
    """2-D max pooling with the position of each maximum (``F.max_pool2d(...,
    return_indices=True)``).

    Mirrors ``aclnnMaxPool2dWithIndicesGetWorkspaceSize`` + ``aclnnMaxPool2dWithIndices``.
    Atlas A2/A3 behaviour: ``indices`` are flat positions ``h * W + w`` in the input plane
    (what ``max_pool2d_with_indices_backward`` consumes), dilation must be 1.

    Args:
        self: ``(N, C, H, W)`` or ``(C, H, W)``; FLOAT, FLOAT16 or BFLOAT16; C, H, W > 0.
        kernel_size: ``[k]``, ``[kH, kW]`` or one int; values > 0.
        stride: ``[]`` (= kernel_size), ``[s]``, ``[sH, sW]`` or one int; values > 0.
        padding: ``[p]``, ``[pH, pW]`` or one int; ``0 <= p <= k / 2`` per axis (-inf padding).
        dilation: ``[d]``, ``[dH, dW]`` or one int; 1 on Atlas A2/A3.
        ceil_mode: round the pooled size up (the last window must start inside the input or
            its left padding).
        indices_dtype: the dtype of ``indices``, INT32 (the default: what the backward takes
            on Atlas A2/A3) or INT64.
        {backend_and_stream}

    {tensor_arguments}

    Returns:
        ``(out, indices)``: ``[N,] C, outH, outW`` with
        ``o = floor((in + 2p - k + (ceil_mode ? s - 1 : 0)) / s) + 1`` (less one in ceil mode
        when the last window would start at or after ``in + p``); out in self's dtype.

    Raises:
        AclnnError: 161001 if an argument is None; 161002 for a dtype, rank, list or size
            outside the constraints above.
        TypeError: an argument of the wrong Python type, or an indices_dtype not INT32/INT64.
    """
    index = _index_dtype(indices_dtype)
    args = (self, repeated(kernel_size, 1), repeated(stride, 1), repeated(padding, 1), repeated(dilation, 1), ceil_mode)
    result: tuple[np.ndarray | Tensor, np.ndarray | Tensor] = dispatch(
        backend, _numpy[index], _aclnn[index], *args, stream=stream, made=_MADE)
    return result


def _index_dtype(value: DTypeLike) -> int:
    """The position in ``INDEX_DTYPES`` of ``value`` (a dtype or what names one)."""
    key = (type(value), value) if type(value) in _NAMING_TYPES else None
    found = _INDEX_OF.get(key) if key is not None else None
    if found is not None:
        return found
    try:
        index = INDEX_DTYPES.index(np.dtype(value))
    except (TypeError, ValueError):
        raise TypeError(f"{API}: indices_dtype must be int32 or int64, got {value!r}") from None
    if key is not None and len(_INDEX_OF) < _NAMES_KEPT:
        _INDEX_OF[key] = index
    return index


# The indices dtypes named so far (by the name's exact type and value: np.dtype("int32") ==
# "int32", but an int32 is not any object equal to it), so that a call does not make a dtype.
_NAMING_TYPES = (type, str, type(INDEX_DTYPES[0]), type(INDEX_DTYPES[1]))
_NAMES_KEPT = 64
_INDEX_OF: dict[object, int] = {}


# -- registration: what the tools know of this operator (ops/_registry.py) -------------------------

from typing import Any  # noqa: E402

from ._cases import OpCall, dims, pair, random_array  # noqa: E402
from ._registry import Operator, register  # noqa: E402


def _case(rng: np.random.Generator, shape: Sequence[int], dtype: np.dtype, kernel: int | Sequence[int] = 3,
          stride: int | Sequence[int] = 2, padding: int | Sequence[int] = 1, ceil_mode: bool = False) -> OpCall:
    """Max pooling of an ``[N,] C, H, W`` self."""
    k, s, p = map(pair, (kernel, stride, padding))
    return OpCall("max_pool2d_with_indices", (random_array(rng, shape, dtype), list(k), list(s), list(p), [1, 1],
                                              ceil_mode),
                  case=f"k{dims(k)} s{dims(s)} p{dims(p)} {'ceil' if ceil_mode else 'floor'}")


def _torch(torch: Any, self: Any, kernel: Any, stride: Any, padding: Any, dilation: Any = 1,
           ceil_mode: bool = False) -> Any:
    out, indices = torch.nn.functional.max_pool2d(self, kernel, stride or None, padding, dilation, ceil_mode,
                                                  return_indices=True)
    return out, indices.int()  # (INT32: the function's default, which the backward takes on A2/A3)


def _layer(n: int, c: int, h: int, w: int, k: int, s: int, p: int, ceil: bool = False) -> Any:
    def make(rng: np.random.Generator) -> tuple[Any, ...]:
        return (rng.standard_normal((n, c, h, w), dtype=np.float32), [k, k], [s, s], [p, p], [1, 1], ceil)
    return make


def _fuzz(f: Any) -> list[Any]:
    n, c, h, w = f.small_int(1, 2), f.small_int(1, 3), f.small_int(2, 7), f.small_int(2, 7)
    k = f.small_int(1, min(h, w))
    return [f.filled((n, c, h, w), f.pick(f.FLOATS)), [k], [f.small_int(1, 3)], [f.small_int(0, k // 2)], [1],
            f.chance(0.5)]


def _c_arguments(args: list[Any], out_like: Any) -> list[Any]:
    x, kernel, stride, padding, _, ceil = args
    k, p = expand(kernel), expand(padding)
    s = expand(stride, k)
    shape = (*x.shape[:-2], *(pooled_size(x.shape[-2 + a], k[a], s[a], p[a], ceil) for a in (0, 1)))
    return [*args, out_like(shape, x.dtype), out_like(shape, np.int32)]


OPERATOR = register(Operator(
    max_pool2d_with_indices, "MaxPool2dWithIndices", header="aclnn_max_pool2d_with_indices.h", package="ops-nn",
    library="libopapi_nn.so", outputs=("out", "indices"), case=_case,
    selftest=(((2, 3, 9, 10), DTYPES, dict(kernel=(3, 2), stride=(2, 1), padding=(1, 1), ceil_mode=True)),
              ((3, 8, 7), DTYPES[:1], dict(kernel=2, stride=2, padding=0))),
    bench=((8, 64, 112, 112), dict(kernel=3, stride=2, padding=1, ceil_mode=False)),
    torch=_torch, memory_bound=True, fuzz=_fuzz, c_arguments=_c_arguments, dtypes=DTYPE_RULES,
    benchmarks=(("max_pool2d resnet stem k3 s2 p1 (8,64,112,112)", _layer(8, 64, 112, 112, 3, 2, 1)),
                ("max_pool2d vgg k2 s2 (8,128,112,112)", _layer(8, 128, 112, 112, 2, 2, 0)),
                ("max_pool2d vgg k2 s2 (8,512,28,28)", _layer(8, 512, 28, 28, 2, 2, 0)),
                ("max_pool2d tiny (1,1,4,4)", _layer(1, 1, 4, 4, 2, 2, 0)))))
