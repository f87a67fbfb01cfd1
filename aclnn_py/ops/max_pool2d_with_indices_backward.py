"""aclnnMaxPool2dWithIndicesBackwardGetWorkspaceSize / aclnnMaxPool2dWithIndicesBackward: the gradient
of 2-D max pooling with respect to its input.

C header ``aclnnop/aclnn_max_pool2d_with_indices_backward.h`` (ops-nn
``pooling/max_pool3d_grad_with_argmax``)::

    aclnnStatus aclnnMaxPool2dWithIndicesBackwardGetWorkspaceSize(
        const aclTensor *gradOutput, const aclTensor *self, const aclTensor *indices,
        const aclIntArray *kernelSize, const aclIntArray *stride, const aclIntArray *padding,
        const aclIntArray *dilation, bool ceilMode, aclTensor *gradInput, uint64_t *workspaceSize,
        aclOpExecutor **executor);
    aclnnStatus aclnnMaxPool2dWithIndicesBackward(void *workspace, uint64_t workspaceSize,
                                                  aclOpExecutor *executor, aclrtStream stream);

Computes aten ``max_pool2d_with_indices_backward``: gradInput is zeros of self's shape, and each
``gradOutput[n, c, oh, ow]`` is added at the flat position ``indices[n, c, oh, ow]`` (``h * W +
w``, what aclnnMaxPool2dWithIndices writes on Atlas A2/A3) of its plane; overlapping windows
accumulate.  Summed in float32 order-independently here (float64, rounded once); CANN's
default is non-deterministic.

Atlas A2/A3 dtypes (CANN's code): self FLOAT only, gradOutput and gradInput self's dtype;
indices INT32 or INT8 (the documentation lists INT32 only).  FLOAT16/BFLOAT16 and INT64
indices, which the forward accepts, are refused here as on A2/A3 (950 accepts them).

Checks, in CANN's order (each 161002 unless noted):

1. gradOutput, self, indices, kernelSize, stride, padding, dilation required (None: 161001).
2. self dtype FLOAT; gradOutput's and gradInput's == self's; indices INT32 or INT8.
3. self, gradOutput and gradInput of one format (3-D NCL or 4-D NCHW); self, gradInput,
   gradOutput and indices each 3-D or 4-D.
4. The window lists as aclnnMaxPool2dWithIndices checks them (lengths, then values; dilation 1).
5. self's C, H, W != 0; outH, outW > 0 and gradOutput of shape ``[N,] C, outH, outW`` (the
   forward's pooled size); indices of gradOutput's shape (CANN ignores the result of this
   check; its documentation requires it, and so does every backend here).
6. An empty self: success, an empty result.

Index values are not checked in phase 1 (CANN documents them as ``[0, H * W)``): a value outside
is the device fault it would be, AclnnError 507015 from ``aclrtSynchronizeStream`` naming the
first bad index in C order, and nothing is written.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike

from .._convert.executor import dtype_of, planned, shape_of
from .._convert.typed import Output, TypedCall
from .._convert.values import bool_arg, host_array, int_array_arg, repeated, tensor_arg
from .._errors import ACL_ERROR_RT_AICORE_EXCEPTION, AclnnError
from .._numpy.plans import NumpyOp, Prepared, plan
from .._numpy.workers import MIN_PARALLEL_ELEMENTS, in_parallel, threads_for
from .._runtime.memory import check_allocation
from .._runtime.tensor import Tensor
from ._checks import check, check_dtype, check_not_null, check_same_dtype, check_same_shape, format_name, shape_str
from ._dispatch import dispatch, documented
from ._pooling import max_window, pooled_plane
from ._registry import numpy_dtypes

API = "aclnnMaxPool2dWithIndicesBackwardGetWorkspaceSize"
KERNEL = "aclnnMaxPool2dWithIndicesBackward"

#: The dtypes each rule accepts: the one table of these checks (the simulator's are generated from it).
DTYPE_RULES = {"DTYPES": ("ACL_FLOAT",), "INDEX_DTYPES": ("ACL_INT32", "ACL_INT8")}
DTYPES = numpy_dtypes(DTYPE_RULES["DTYPES"])
INDEX_DTYPES = numpy_dtypes(DTYPE_RULES["INDEX_DTYPES"])


def _check_geometry(go_shape: tuple[int, ...], self_shape: tuple[int, ...], idx_shape: tuple[int, ...],
                    kernel: tuple[int, ...] | None, stride: tuple[int, ...] | None, padding: tuple[int, ...] | None,
                    dilation: tuple[int, ...] | None, ceil_mode: bool) -> None:
    """Checks 3-5: what depends on shapes and the lists alone (gradInput has self's shape)."""
    formats = [format_name(len(s)) for s in (self_shape, go_shape, self_shape)]
    check(API, len(set(formats)) == 1, lambda: f"self, gradOutput and gradInput must have one format, got "
                                               f"{', '.join(formats)}")
    for name, shape in (("self", self_shape), ("gradInput", self_shape), ("gradOutput", go_shape),
                        ("indices", idx_shape)):
        check(API, len(shape) in (3, 4), lambda: f"{name} must be 3-D or 4-D (NCL or NCHW), got "
                                                 f"{format_name(len(shape))} shape {shape_str(shape)}")
    assert kernel is not None and stride is not None and padding is not None and dilation is not None
    window = max_window(API, kernel, stride, padding, dilation, ceil_mode)
    expected = (*self_shape[:-2], *pooled_plane(API, "self", self_shape, window))
    check(API, go_shape == expected, lambda: f"gradOutput shape must be {shape_str(expected)}, the pooled size of "
                                             f"self {shape_str(self_shape)}, got {shape_str(go_shape)}")
    check_same_shape(API, "indices", idx_shape, "gradOutput", go_shape)


def _prepare(grad_output: object, self: object, indices: object, kernel_size: object, stride: object,
             padding: object, dilation: object, ceil_mode: object) -> Prepared:
    """The numpy path: check in CANN's order; each call checks the index range, then sums each
    gradient at its index (one ``np.add.at`` per block of planes, in FLOAT: at most a few
    windows share an input; measured 10 ms against ``np.bincount``'s float64 35 ms for the resnet
    stem's (8,64,112,112), fastest of 30)."""
    ceil_mode = bool_arg(API, "ceilMode", ceil_mode)
    grad_output = tensor_arg(API, "gradOutput", grad_output)
    self = tensor_arg(API, "self", self)
    indices = tensor_arg(API, "indices", indices)
    kernel = int_array_arg(API, "kernelSize", kernel_size)
    strides = int_array_arg(API, "stride", stride)
    pads = int_array_arg(API, "padding", padding)
    dilations = int_array_arg(API, "dilation", dilation)
    check_not_null(API, gradOutput=grad_output, self=self, indices=indices, kernelSize=kernel, stride=strides,
                   padding=pads, dilation=dilations)
    assert grad_output is not None and self is not None and indices is not None
    check_dtype(API, "self", self, DTYPES)
    check_same_dtype(API, "gradOutput", grad_output, "self", self)
    check_dtype(API, "indices", indices, INDEX_DTYPES)
    _check_geometry(grad_output.shape, self.shape, indices.shape, kernel, strides, pads, dilations, ceil_mode)
    shape, dtype = self.shape, self.dtype
    nbytes = self.size * dtype.itemsize
    plane = shape[-2] * shape[-1]
    planes = self.size // plane if plane else 0
    touched = nbytes + grad_output.nbytes + indices.nbytes
    starts = np.arange(0, planes * plane, plane, dtype=np.int64)[:, None]  # (each plane's in the flat sums)

    def run(grad_output: object, self: object, indices: object, *_: object) -> np.ndarray:
        check_allocation(nbytes)
        if not nbytes:
            return np.zeros(shape, dtype)
        given = host_array(API, "indices", indices)
        index = given.reshape(planes, -1)
        grad = host_array(API, "gradOutput", grad_output).reshape(planes, -1)
        sums = np.zeros(planes * plane, np.float32)
        # In blocks of planes whose indices stay in the cache from their range check to their
        # offsets (one pass over them in memory, not three), the offset indices too.  Whole
        # call, one thread, thread CPU, interleaved medians of 40, against the range check and
        # one np.add.at over all planes: resnet stem k3 s2 p1 (8,64,112,112) 8.3 -> 6.6 ms.
        unsigned = index.view(f"u{index.itemsize}")  # (a negative index: huge)
        block = max(1, _BLOCK_INDICES // max(1, index.shape[1]))

        def work(first: int, last: int) -> None:
            at = np.empty((min(block, last - first), index.shape[1]), np.int64)
            for a in range(first, last, block):
                n = min(block, last - a)
                if int(unsigned[a:a + n].max(initial=0)) >= plane:  # (the whole check: its first bad index)
                    _check_index_range(index, plane, indices_shape=given.shape)
                np.add(index[a:a + n], starts[a:a + n], out=at[:n])
                np.add.at(sums, at[:n].ravel(), grad[a:a + n].ravel())

        # Planes are independent: split over the threads by the backend's rule (``threads_for``)
        # from 1 Mi gradient elements a thread.  Wall, medians of 40, load 2.7 (the cores full),
        # split / one thread: vgg k2 s2 (8,128,112,112) 37.7 / 42.5 ms; but (8,512,28,28)
        # (0.8 Mi elements) 11.6 / 8.2, resnet stem (1.6 Mi) 22.3 / 21.4.
        per_thread = max(block, 4 * MIN_PARALLEL_ELEMENTS // max(1, index.shape[1]))
        in_parallel(planes, work, min_per_thread=per_thread, serial=threads_for(planes, per_thread) == 1)
        return sums.astype(dtype, copy=False).reshape(shape)

    return plan(run, touched), (grad_output, self, indices)


def _check_index_range(index: np.ndarray, plane: int, indices_shape: tuple[int, ...]) -> None:
    """The device fault an index outside ``[0, H * W)`` stands for (module docstring), with the
    simulator's words."""
    if index.size and (int(index.min()) < 0 or int(index.max()) >= plane):
        flat = int(np.argmax((index < 0) | (index >= plane)))
        at = np.unravel_index(flat, indices_shape)
        raise AclnnError(ACL_ERROR_RT_AICORE_EXCEPTION, "aclrtSynchronizeStream",
                         f"{KERNEL}: indices{shape_str(at)} = {int(index.reshape(-1)[flat])} is outside "
                         f"[0, {plane}) (the H * W of self); nothing was written")


#: The offset indices ``_prepare``'s kernel takes at a time (256 KiB: in a core's L2 cache).
_BLOCK_INDICES = 1 << 15

_numpy = NumpyOp(_prepare)


def _outputs(grad_output: object, self: object, *_: object) -> list[Output]:
    """gradInput: self's shape and dtype."""
    return [Output(shape_of(self if self is not None else grad_output), dtype_of(self))]


def _shape_checks(grad_output: object, self: object, indices: object, kernel: tuple[int, ...] | None,
                  stride: tuple[int, ...] | None, padding: tuple[int, ...] | None, dilation: tuple[int, ...] | None,
                  ceil_mode: bool) -> None:
    """The checks the output's size depends on (it is only sized so when they pass)."""
    _check_geometry(shape_of(grad_output), shape_of(self), shape_of(indices), kernel, stride, padding, dilation,
                    ceil_mode)


#: The npu/sim path: the two-phase C call, the arguments converted by their declared C types.
_aclnn = planned(TypedCall("MaxPool2dWithIndicesBackward", _outputs, checks=_shape_checks))
_MADE = {"gradInput": "self's shape and dtype"}


@documented
def max_pool2d_with_indices_backward(grad_output: ArrayLike | Tensor, self: ArrayLike | Tensor,
                                     indices: ArrayLike | Tensor, kernel_size: int | Sequence[int],
                                     stride: int | Sequence[int], padding: int | Sequence[int],
                                     dilation: int | Sequence[int] = 1, ceil_mode: bool = False, *,
                                     backend: str | None = None, stream: object = None) -> np.ndarray | Tensor:
    """Gradient of 2-D max pooling with respect to its input: each gradient value added at its
    maximum's position (``aten.max_pool2d_with_indices_backward``).

    Mirrors ``aclnnMaxPool2dWithIndicesBackwardGetWorkspaceSize`` +
    ``aclnnMaxPool2dWithIndicesBackward``.  Atlas A2/A3: FLOAT only, INT32 (or INT8) indices,
    dilation 1.

    Args:
        grad_output: gradOutput, ``[N,] C, outH, outW`` (the forward's pooled size); FLOAT.
        self: the forward's input, ``(N, C, H, W)`` or ``(C, H, W)``; FLOAT; C, H, W > 0 (only
            its shape is used).
        indices: gradOutput's shape; INT32 or INT8; flat positions ``h * W + w`` in ``[0, H * W)``
            (as ``max_pool2d_with_indices`` writes them; a value outside is AclnnError 507015
            when the computation runs, as the NPU's fault is).
        kernel_size: ``[k]``, ``[kH, kW]`` or one int; values > 0.
        stride: ``[]`` (= kernel_size), ``[s]``, ``[sH, sW]`` or one int; values > 0.
        padding: ``[p]``, ``[pH, pW]`` or one int; ``0 <= p <= k / 2`` per axis.
        dilation: ``[d]``, ``[dH, dW]`` or one int; 1 on Atlas A2/A3.
        ceil_mode: the forward's rounding of the pooled size.
        {backend_and_stream}

    {tensor_arguments}

    Returns:
        gradInput: self's shape and dtype.

    Raises:
        AclnnError: 161001 if an argument is None; 161002 for a dtype, rank, list or shape
            outside the constraints above; 507015 for an index out of range.
        TypeError: an argument of the wrong Python type.
    """
    result: np.ndarray | Tensor = dispatch(
        backend, _numpy, _aclnn, grad_output, self, indices, repeated(kernel_size, 1), repeated(stride, 1),
        repeated(padding, 1), repeated(dilation, 1), ceil_mode, stream=stream, made=_MADE)
    return result


# -- registration: what the tools know of this operator (ops/_registry.py) -------------------------

from typing import Any  # noqa: E402

from .._numpy.pooling import max_pool_planes, pooled_size  # noqa: E402
from ._cases import OpCall, dims, pair, random_array  # noqa: E402
from ._registry import Operator, register  # noqa: E402


def _pool(rng: np.random.Generator, shape: Sequence[int], k: Sequence[int], s: Sequence[int], p: Sequence[int],
          ceil: bool, index_dtype: Any = np.int32) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A random FLOAT self, a random gradient of its pooled shape, and its real indices."""
    x = rng.standard_normal(tuple(shape), dtype=np.float32)
    out_hw = (pooled_size(shape[-2], k[0], s[0], p[0], ceil), pooled_size(shape[-1], k[1], s[1], p[1], ceil))
    _, idx = max_pool_planes(x.reshape(-1, *x.shape[-2:]), out_hw, (k[0], k[1]), (s[0], s[1]), (p[0], p[1]), (1, 1))
    lead = tuple(shape[:-2])
    grad = rng.standard_normal((*lead, *out_hw), dtype=np.float32)
    return grad, x, idx.reshape(*lead, *out_hw).astype(index_dtype)


def _case(rng: np.random.Generator, shape: Sequence[int], dtype: np.dtype, kernel: int | Sequence[int] = 3,
          stride: int | Sequence[int] = 2, padding: int | Sequence[int] = 1, ceil_mode: bool = False,
          index_dtype: Any = np.int32) -> OpCall:
    """The gradient of max pooling an ``[N,] C, H, W`` self (its real indices)."""
    k, s, p = map(pair, (kernel, stride, padding))
    grad, x, idx = _pool(rng, shape, k, s, p, ceil_mode, index_dtype)
    return OpCall("max_pool2d_with_indices_backward", (grad.astype(dtype), x.astype(dtype), idx, list(k), list(s),
                                                       list(p), [1, 1], ceil_mode),
                  case=f"k{dims(k)} s{dims(s)} p{dims(p)} {'ceil' if ceil_mode else 'floor'} "
                       f"{np.dtype(index_dtype).name} indices")


def _torch(torch: Any, grad: Any, self: Any, indices: Any, kernel: Any, stride: Any, padding: Any, dilation: Any,
           ceil_mode: bool) -> Any:
    return torch.ops.aten.max_pool2d_with_indices_backward(grad, self, kernel, stride, padding, dilation, ceil_mode,
                                                           indices.long())


def _layer(n: int, c: int, h: int, w: int, k: int, s: int, p: int) -> Any:
    def make(rng: np.random.Generator) -> tuple[Any, ...]:
        return (*_pool(rng, (n, c, h, w), (k, k), (s, s), (p, p), False), [k, k], [s, s], [p, p], [1, 1], False)
    return make


def _fuzz(f: Any) -> list[Any]:
    n, c, h, w = f.small_int(1, 2), f.small_int(1, 3), f.small_int(2, 7), f.small_int(2, 7)
    k = f.small_int(1, min(h, w))
    s, p = f.small_int(1, 3), f.small_int(0, k // 2)
    grad, x, idx = _pool(f.rng, (n, c, h, w), (k, k), (s, s), (p, p), False)
    return [grad, x, idx, [k], [s], [p], [1], False]


def _c_arguments(args: list[Any], out_like: Any) -> list[Any]:
    return [*args, out_like(args[1].shape, args[1].dtype)]


OPERATOR = register(Operator(
    max_pool2d_with_indices_backward, "MaxPool2dWithIndicesBackward",
    header="aclnn_max_pool2d_with_indices_backward.h", package="ops-nn", library="libopapi_nn.so",
    outputs=("gradInput",), case=_case,
    selftest=(((2, 3, 9, 10), DTYPES, dict(kernel=(3, 2), stride=(2, 1), padding=(1, 1), ceil_mode=True)),
              ((3, 8, 7), DTYPES, dict(kernel=2, stride=2, padding=0, index_dtype=np.int8))),
    bench=((8, 64, 112, 112), dict(kernel=3, stride=2, padding=1, ceil_mode=False)),
    torch=_torch, memory_bound=True, fuzz=_fuzz, c_arguments=_c_arguments, dtypes=DTYPE_RULES, shape_only=("self",),
    benchmarks=(("max_pool2d_backward resnet stem k3 s2 p1 (8,64,112,112)", _layer(8, 64, 112, 112, 3, 2, 1)),
                ("max_pool2d_backward vgg k2 s2 (8,128,112,112)", _layer(8, 128, 112, 112, 2, 2, 0)),
                ("max_pool2d_backward vgg k2 s2 (8,512,28,28)", _layer(8, 512, 28, 28, 2, 2, 0)),
                ("max_pool2d_backward tiny (1,1,4,4)", _layer(1, 1, 4, 4, 2, 2, 0)))))
