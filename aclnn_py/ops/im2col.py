"""aclnnIm2colGetWorkspaceSize / aclnnIm2col: im2col (``F.unfold``), the sliding blocks of an
image as columns.

C header ``aclnnop/aclnn_im2col.h`` (ops-math, ``libopapi_math.so``)::

    aclnnStatus aclnnIm2colGetWorkspaceSize(
        const aclTensor *self, const aclIntArray *kernelSize, const aclIntArray *dilation,
        const aclIntArray *padding, const aclIntArray *stride, const aclTensor *out,
        uint64_t *workspaceSize, aclOpExecutor **executor);
    aclnnStatus aclnnIm2col(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                            aclrtStream stream);

``out`` is declared ``const`` and written all the same (``_convert/params.py`` WRITTEN_CONST:
``call`` and ``prepare`` write it back).

Computes ``F.unfold(self, kernelSize, dilation, padding, stride)``:
``out[n, c*kH*kW + i*kW + j, bh*Lw + bw] = self[n, c, bh*sH - pH + i*dH, bw*sW - pW + j*dW]``,
0 outside the image, with the block grid ``Ld = floor((size + 2p - (d*(k-1) + 1)) / s) + 1``.
A 3-D ``(C, H, W)`` self gives a 2-D ``(C*kH*kW, Lh*Lw)`` out.  A copy: exact for every dtype.

Constraints, in the order CANN (Atlas A2/A3) checks them; each violation is 161002 unless noted:

1. self, kernelSize, dilation, padding and stride are required (None: 161001).
2. self's dtype is FLOAT, FLOAT16 or BFLOAT16 (out, made here, has it; CANN casts into an
   ``out`` of another of these dtypes, the documented list: its code checks no out dtype).
3. self is 3-D or 4-D, every dim but a 4-D self's first > 0.
4. kernelSize, dilation, padding and stride each have 2 elements; kernelSize, stride and
   dilation > 0, padding >= 0.
5. The block grid has ``Lh >= 1`` and ``Lw >= 1``.
6. An empty self (N == 0) gives an empty result.
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
from .._convert.values import INT64_MAX, host_array, int_array_arg, repeated, tensor_arg
from .._numpy import gather as _gather
from .._numpy.plans import NumpyOp, Prepared, plan
from ._checks import FLOAT32, check, check_dtype, check_length, check_min, check_not_null, shape_str
from ._dispatch import dispatch, documented
from ._im2col import block_count, block_numerator
from ._registry import numpy_dtypes

API = "aclnnIm2colGetWorkspaceSize"

#: The dtypes each rule accepts: the one table of these checks (the simulator's are generated from it).
DTYPE_RULES = {"DTYPES": ("ACL_FLOAT", "ACL_FLOAT16", "ACL_BF16")}
DTYPES = numpy_dtypes(DTYPE_RULES["DTYPES"])


@functools.lru_cache(maxsize=1024)
def _grid(shape: tuple[int, ...], kernel_size: tuple[int, ...], dilation: tuple[int, ...], padding: tuple[int, ...],
          stride: tuple[int, ...]) -> tuple[int, int]:
    """Checks 3-5 (module docstring) on self's shape and the arrays; the block grid (Lh, Lw)."""
    ndim = len(shape)
    check(API, ndim in (3, 4), lambda: f"self must be 3-D or 4-D, got {ndim}-D shape {shape_str(shape)}")
    check(API, 0 not in shape[ndim - 3:],
          lambda: f"self dims but a 4-D self's first must be > 0, got self {shape_str(shape)}")
    arrays = {"kernelSize": kernel_size, "dilation": dilation, "padding": padding, "stride": stride}
    for name, values in arrays.items():
        check_length(API, name, values, 2)
    for name, values in (("kernelSize", kernel_size), ("stride", stride), ("dilation", dilation)):
        check_min(API, name, values, 0, strict=True)
    check_min(API, "padding", padding, 0, strict=False)
    grid = []
    for d in range(2):
        numerator = block_numerator(shape[-2 + d], kernel_size[d], dilation[d], padding[d], stride[d])
        grid.append(block_count(numerator, stride[d]) if abs(numerator) <= INT64_MAX else 0)
    check(API, min(grid) >= 1 and grid[0] * grid[1] * kernel_size[0] * kernel_size[1] * shape[-3] <= INT64_MAX,
          lambda: f"the block grid [Lh, Lw] must be at least [1, 1] (and its out fit int64), got {shape_str(grid)} "
                  f"(self {shape_str(shape)}, kernelSize = {shape_str(kernel_size)}, dilation = {shape_str(dilation)}, "
                  f"padding = {shape_str(padding)}, stride = {shape_str(stride)})")
    return grid[0], grid[1]


def _out_shape(shape: tuple[int, ...], kernel_size: tuple[int, ...], grid: tuple[int, int]) -> tuple[int, ...]:
    return shape[:-3] + (shape[-3] * kernel_size[0] * kernel_size[1], grid[0] * grid[1])


def _check(self: Any, kernel_size: tuple[int, ...], dilation: tuple[int, ...], padding: tuple[int, ...],
           stride: tuple[int, ...]) -> tuple[int, ...]:
    """Checks 2-5 on coerced arguments (self: anything with shape and dtype); out's shape."""
    check_dtype(API, "self", self, DTYPES)
    shape = tuple(self.shape)
    return _out_shape(shape, kernel_size, _grid(shape, kernel_size, dilation, padding, stride))


def _prepare(self: object, kernel_size: object, dilation: object, padding: object, stride: object) -> Prepared:
    """The numpy path: validate; then one strided view of the padded image's blocks, copied."""
    self = tensor_arg(API, "self", self)
    arrays = [int_array_arg(API, name, value) for name, value in
              (("kernelSize", kernel_size), ("dilation", dilation), ("padding", padding), ("stride", stride))]
    check_not_null(API, self=self, kernelSize=arrays[0], dilation=arrays[1], padding=arrays[2], stride=arrays[3])
    assert self is not None
    k, d, p, s = (a for a in arrays if a is not None)
    out_shape = _check(self, k, d, p, s)
    grid = _grid(tuple(self.shape), k, d, p, s)
    nbytes = math.prod(map(int, out_shape)) * self.dtype.itemsize
    if self.size and _gather.use_gather(math.prod(out_shape)):
        plane = tuple(self.shape[-2:])
        taken = _gather.gather(_unfold, (k, d, p, s, grid), plane, out_shape, self.size // math.prod(plane))

        def run_small(self: object, *_: object) -> np.ndarray:
            check_allocation(nbytes)
            return taken(host_array(API, "self", self))

        return plan(run_small, nbytes + self.nbytes), (self,)

    def run(self: object, *_: object) -> np.ndarray:
        check_allocation(nbytes)
        return _unfold(host_array(API, "self", self), k, d, p, s, grid).reshape(out_shape)

    return plan(run, nbytes + self.nbytes), (self,)


_numpy = NumpyOp(_prepare)


def _unfold(x: np.ndarray, kernel: tuple[int, ...], dilation: tuple[int, ...], padding: tuple[int, ...],
            stride: tuple[int, ...], grid: tuple[int, int]) -> np.ndarray:
    """``(..., C, kH, kW, Lh, Lw)``: the blocks of the zero-padded image, one strided view
    copied (the copy is out's layout)."""
    (ph, pw), (lh, lw) = padding, grid
    height, width = x.shape[-2:]
    if ph or pw:
        padded = np.zeros(x.shape[:-2] + (height + 2 * ph, width + 2 * pw), x.dtype)
        padded[..., ph:ph + height, pw:pw + width] = x
    else:
        padded = x
    *lead, sh, sw = padded.strides
    sizes = (kernel[0], kernel[1], lh, lw)
    steps = (dilation[0] * sh, dilation[1] * sw, stride[0] * sh, stride[1] * sw)
    # (a dim of one never steps: its step, which may not fit in a C long, is 0 then)
    view = np.lib.stride_tricks.as_strided(padded, padded.shape[:-2] + sizes,
                                           (*lead, *(t if n > 1 else 0 for n, t in zip(sizes, steps))), writeable=False)
    return np.ascontiguousarray(view)


def _outputs(self: object, kernel_size: Any, dilation: Any, padding: Any, stride: Any) -> list[Output]:
    """out: ``([N,] C*kH*kW, Lh*Lw)``, self's dtype (a stand-in of self's rank less one where
    the checks refuse the arguments: the library then reports the argument at fault)."""
    try:
        shape: tuple[int, ...] = _check(self, kernel_size, dilation, padding, stride)
    except Exception:
        shape = (0,) * max(len(shape_of(self)) - 1, 0)
    return [Output(shape, dtype_of(self))]


#: The npu/sim path: the two-phase C call, the arguments converted by their declared C types;
#: the library checks them. out is sized only when the arguments pass the shape checks.
_aclnn = planned(TypedCall("Im2col", _outputs, checks=_check))

#: The outputs the function makes, and from what (their names in CANN's messages: ``dispatch``).
_MADE = {"out": "the block grid and self's dtype"}


@documented
def im2col(self: ArrayLike | Tensor, kernel_size: int | Sequence[int], dilation: int | Sequence[int],
           padding: int | Sequence[int], stride: int | Sequence[int], *, backend: str | None = None,
           stream: object = None) -> np.ndarray | Tensor:
    """The sliding blocks of an image as columns, ``F.unfold(self, kernel_size, dilation,
    padding, stride)``.

    Mirrors ``aclnnIm2colGetWorkspaceSize`` + ``aclnnIm2col``.

    Args:
        self: ``(N, C, H, W)`` or ``(C, H, W)``, dims but a 4-D self's first > 0; FLOAT,
            FLOAT16 or BFLOAT16.
        kernel_size: ``[kH, kW]`` or one int; > 0.
        dilation: ``[dH, dW]`` or one int; > 0.
        padding: ``[pH, pW]`` (both sides) or one int; >= 0.
        stride: ``[sH, sW]`` or one int; > 0.
        {backend_and_stream}

    The block grid is ``Ld = (size + 2p - d*(k-1) - 1) // s + 1`` per dimension, at least 1.

    {tensor_arguments}

    Returns:
        out: ``(N, C*kH*kW, Lh*Lw)`` (``(C*kH*kW, Lh*Lw)`` for a 3-D self), self's dtype.

    Raises:
        AclnnError: 161001 if an argument is None; 161002 for a dtype, rank, shape or array
            outside the constraints above.
        TypeError: an argument of the wrong Python type.
    """
    result: np.ndarray | Tensor = dispatch(backend, _numpy, _aclnn, self, repeated(kernel_size, 2),
                                           repeated(dilation, 2), repeated(padding, 2), repeated(stride, 2),
                                           stream=stream, made=_MADE)
    return result


# -- registration: what the tools know of this operator (ops/_registry.py) -------------------------

from ._cases import OpCall, dims, pair, random_array  # noqa: E402
from ._registry import Operator, register  # noqa: E402


def _case(rng: np.random.Generator, shape: Sequence[int], dtype: np.dtype, kernel: int | Sequence[int] = 3,
          dilation: int | Sequence[int] = 1, padding: int | Sequence[int] = 1,
          stride: int | Sequence[int] = 1) -> OpCall:
    """The blocks of an ``[N,] C, H, W`` self."""
    k, d, p, s = map(pair, (kernel, dilation, padding, stride))
    return OpCall("im2col", (random_array(rng, shape, dtype), list(k), list(d), list(p), list(s)),
                  case=f"k{dims(k)} d{dims(d)} p{dims(p)} s{dims(s)}")


def _torch(torch: Any, self: Any, kernel_size: Any, dilation: Any, padding: Any, stride: Any) -> Any:
    return torch.nn.functional.unfold(self, kernel_size, dilation, padding, stride)


def _layer(n: int, c: int, h: int, w: int, k: int, s: int, p: int) -> Any:
    def make(rng: np.random.Generator) -> tuple[Any, ...]:
        return (rng.standard_normal((n, c, h, w), dtype=np.float32), [k, k], [1, 1], [p, p], [s, s])
    return make


def _fuzz(f: Any) -> list[Any]:
    n, c, h, w = f.small_int(1, 2), f.small_int(1, 3), f.small_int(2, 7), f.small_int(2, 7)
    k, d, p, s = f.small_int(1, 2), f.small_int(1, 2), f.small_int(0, 1), f.small_int(1, 2)
    return [f.filled((n, c, h, w), f.pick(f.FLOATS[:2])), [k, k], [d, d], [p, p], [s, s]]


def _c_arguments(args: list[Any], out_like: Any) -> list[Any]:
    shape = _check(args[0], *(tuple(a) for a in args[1:5]))
    return [*args, out_like(shape, args[0].dtype)]


OPERATOR = register(Operator(
    im2col, "Im2col", header="aclnn_im2col.h", package="ops-math", library="libopapi_math.so",
    outputs=("out",), case=_case,
    selftest=(((2, 3, 7, 6), DTYPES, dict(kernel=(3, 2), dilation=(1, 2), padding=(1, 0), stride=(2, 1))),
              ((3, 5, 5), (FLOAT32,), dict(kernel=2, stride=2, padding=0))),
    bench=((8, 64, 28, 28), dict(kernel=3, dilation=1, padding=1, stride=1)),
    torch=_torch, memory_bound=True, fuzz=_fuzz, c_arguments=_c_arguments, dtypes=DTYPE_RULES,
    benchmarks=(("im2col resnet 3x3 (8,64,56,56)", _layer(8, 64, 56, 56, 3, 1, 1)),
                ("im2col stem 7x7 s2 (8,3,224,224)", _layer(8, 3, 224, 224, 7, 2, 3)),
                ("im2col vit 16x16 s16 (8,3,224,224)", _layer(8, 3, 224, 224, 16, 16, 0)),
                ("im2col tiny (1,1,4,4)", _layer(1, 1, 4, 4, 3, 1, 1)))))
