"""aclnnAdaptiveAvgPool2dGetWorkspaceSize / aclnnAdaptiveAvgPool2d: 2-D adaptive average pooling.

C header ``aclnnop/aclnn_adaptive_avg_pool2d.h`` (ops-nn ``pooling/adaptive_avg_pool2d``)::

    aclnnStatus aclnnAdaptiveAvgPool2dGetWorkspaceSize(const aclTensor *self, const aclIntArray *outputSize,
                                                       aclTensor *out, uint64_t *workspaceSize,
                                                       aclOpExecutor **executor);
    aclnnStatus aclnnAdaptiveAvgPool2d(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                       const aclrtStream stream);

Computes ``F.adaptive_avg_pool2d(self, outputSize)``: ``out[i, j]`` is the mean of
``self[hs:he, ws:we]`` with ``hs = floor(i * H / oH)``, ``he = ceil((i + 1) * H / oH)`` (W alike).
Computed in float32 (FLOAT16/BFLOAT16 widened, the result rounded once).

Checks, in CANN's order (each 161002 unless noted):

1. self and outputSize (and out) required (None: 161001).
2. self 3-D (NCL) or 4-D (NCHW); out of self's rank, its leading dims self's.
3. self dtype FLOAT, FLOAT16 or BFLOAT16; out's == self's.
4. out's format == self's.
5. outputSize has 2 elements, each > 0 and equal to out's H, W.
6. An empty self: success, out not written (zeros here).  Atlas A2/A3's code does not check
   self's C, H, W (its documentation asks > 0; 950 checks H, W): an empty plane is accepted.
"""

from __future__ import annotations

import math

from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike

from .._convert.executor import dtype_of, planned, shape_of
from .._convert.typed import Output, TypedCall
from .._convert.values import host_array, int_array_arg, repeated, tensor_arg
from .._numpy import small as _small
from .._numpy.plans import NumpyOp, Prepared, plan
from .._numpy.pooling import adaptive_avg
from .._runtime.memory import check_allocation
from .._runtime.tensor import Tensor
from ._checks import check, check_dtype, check_length, check_min, check_not_null, format_name, shape_str
from ._dispatch import dispatch, documented
from ._registry import numpy_dtypes

API = "aclnnAdaptiveAvgPool2dGetWorkspaceSize"

#: The dtypes each rule accepts: the one table of these checks (the simulator's are generated from it).
DTYPE_RULES = {"DTYPES": ("ACL_FLOAT", "ACL_FLOAT16", "ACL_BF16")}
DTYPES = numpy_dtypes(DTYPE_RULES["DTYPES"])


def _out_shape(shape: tuple[int, ...], output_size: tuple[int, ...] | None) -> tuple[int, ...] | None:
    """out's shape: self's leading dims and outputSize (None where that is no valid [oH, oW])."""
    if output_size is None or len(output_size) != 2 or min(output_size) <= 0:
        return None
    return (*shape[:-2], *output_size)


def _check_rank(shape: tuple[int, ...]) -> None:
    check(API, len(shape) in (3, 4), lambda: f"self must be 3-D or 4-D (NCL or NCHW), got {format_name(len(shape))} "
                                             f"shape {shape_str(shape)}")


def _check_output_size(output_size: tuple[int, ...]) -> None:
    check_length(API, "outputSize", output_size, 2)
    check_min(API, "outputSize", output_size, 0, strict=True)


def _prepare(self: object, output_size: object) -> Prepared:
    """The numpy path: check in CANN's order, then the separable averaging (``_numpy/pooling.py``);
    one matrix product on small planes (``_numpy/small.py``)."""
    self = tensor_arg(API, "self", self)
    size = int_array_arg(API, "outputSize", output_size)
    check_not_null(API, self=self, outputSize=size)
    assert self is not None and size is not None
    _check_rank(self.shape)
    check_dtype(API, "self", self, DTYPES)
    _check_output_size(size)
    shape, dtype = (*self.shape[:-2], *size), self.dtype
    nbytes = math.prod(map(int, shape)) * dtype.itemsize
    height, width = self.shape[-2:]
    if self.size and _small.use_small(self.size // (height * width), height * width, size[0] * size[1]):
        product = _small.product(adaptive_avg, (size[0], size[1]), (height, width), tuple(size), shape[:-2], dtype,
                                 dtype)

        def run_small(self: object, *_: object) -> np.ndarray:
            check_allocation(nbytes)
            return product(host_array(API, "self", self))

        return plan(run_small, nbytes + self.nbytes), (self,)

    def run(self: object, *_: object) -> np.ndarray:
        check_allocation(nbytes)
        x = host_array(API, "self", self)
        if x.size == 0:
            return np.zeros(shape, dtype)
        planes = x.reshape(-1, height, width).astype(np.float32, copy=False)
        return adaptive_avg(planes, size[0], size[1]).astype(dtype, copy=False).reshape(shape)

    return plan(run, nbytes + self.nbytes), (self,)


_numpy = NumpyOp(_prepare)


def _outputs(self: object, output_size: tuple[int, ...] | None) -> list[Output]:
    """out: self's leading dims and outputSize, self's dtype (self's shape as a stand-in where
    outputSize is no valid [oH, oW]: the library then reports it); zeros for an empty self."""
    shape = _out_shape(shape_of(self), output_size)
    return [Output(shape_of(self) if shape is None else shape, dtype_of(self), zero=0 in shape_of(self))]


def _shape_checks(self: object, output_size: tuple[int, ...] | None) -> None:
    """The checks the output's size depends on."""
    _check_rank(shape_of(self))
    assert output_size is not None
    _check_output_size(output_size)


#: The npu/sim path: the two-phase C call, the arguments converted by their declared C types.
_aclnn = planned(TypedCall("AdaptiveAvgPool2d", _outputs, checks=_shape_checks))
_MADE = {"out": "self's leading dims, outputSize and self's dtype"}


@documented
def adaptive_avg_pool2d(self: ArrayLike | Tensor, output_size: int | Sequence[int], *, backend: str | None = None,
                        stream: object = None) -> np.ndarray | Tensor:
    """2-D adaptive average pooling (``F.adaptive_avg_pool2d``): each output cell the mean of its
    window ``[floor(i * H / oH), ceil((i + 1) * H / oH))`` (W alike).

    Mirrors ``aclnnAdaptiveAvgPool2dGetWorkspaceSize`` + ``aclnnAdaptiveAvgPool2d``.

    Args:
        self: ``(N, C, H, W)`` or ``(C, H, W)``; FLOAT, FLOAT16 or BFLOAT16.
        output_size: outputSize ``[oH, oW]`` or one int; values > 0.
        {backend_and_stream}

    {tensor_arguments}

    Returns:
        out: ``[N,] C, oH, oW`` in self's dtype (computed in float32; zeros for an empty self,
        which Atlas A2/A3 accepts without computing).

    Raises:
        AclnnError: 161001 if an argument is None; 161002 for a dtype, rank or outputSize
            outside the constraints above.
        TypeError: an argument of the wrong Python type.
    """
    result: np.ndarray | Tensor = dispatch(backend, _numpy, _aclnn, self, repeated(output_size, 2), stream=stream,
                                           made=_MADE)
    return result


# -- registration: what the tools know of this operator (ops/_registry.py) -------------------------

from typing import Any  # noqa: E402

from ._cases import OpCall, dims, pair, random_array  # noqa: E402
from ._registry import Operator, register  # noqa: E402


def _case(rng: np.random.Generator, shape: Sequence[int], dtype: np.dtype,
          output_size: int | Sequence[int] = (3, 4)) -> OpCall:
    size = list(pair(output_size))
    return OpCall("adaptive_avg_pool2d", (random_array(rng, shape, dtype), size), case=f"to {dims(size)}")


def _torch(torch: Any, self: Any, output_size: Any) -> Any:
    return torch.nn.functional.adaptive_avg_pool2d(self, output_size)


def _layer(n: int, c: int, h: int, w: int, o: int) -> Any:
    def make(rng: np.random.Generator) -> tuple[Any, ...]:
        return (rng.standard_normal((n, c, h, w), dtype=np.float32), [o, o])
    return make


def _fuzz(f: Any) -> list[Any]:
    shape = (f.small_int(1, 2), f.small_int(1, 3), f.small_int(1, 9), f.small_int(1, 9))
    return [f.filled(shape, f.pick(f.FLOATS)), [f.small_int(1, 5), f.small_int(1, 5)]]


def _c_arguments(args: list[Any], out_like: Any) -> list[Any]:
    return [*args, out_like((*args[0].shape[:-2], *args[1]), args[0].dtype)]


OPERATOR = register(Operator(
    adaptive_avg_pool2d, "AdaptiveAvgPool2d", header="aclnn_adaptive_avg_pool2d.h", package="ops-nn",
    library="libopapi_nn.so", outputs=("out",), case=_case,
    selftest=(((2, 3, 9, 10), DTYPES, dict(output_size=(4, 3))),
              ((3, 7, 7), DTYPES[:1], dict(output_size=1))),
    bench=((8, 512, 7, 7), dict(output_size=1)),
    torch=_torch, memory_bound=True, fuzz=_fuzz, c_arguments=_c_arguments, dtypes=DTYPE_RULES,
    benchmarks=(("adaptive_avg_pool2d resnet50 head (32,2048,7,7)->1", _layer(32, 2048, 7, 7, 1)),
                ("adaptive_avg_pool2d vgg (8,512,14,14)->7", _layer(8, 512, 14, 14, 7)),
                ("adaptive_avg_pool2d alexnet (8,256,13,13)->6", _layer(8, 256, 13, 13, 6)),
                ("adaptive_avg_pool2d tiny (1,1,4,4)->2", _layer(1, 1, 4, 4, 2)))))
