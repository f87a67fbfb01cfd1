"""aclnnUpsampleNearest2dGetWorkspaceSize / aclnnUpsampleNearest2d: legacy nearest-neighbour resizing.

C header ``aclnnop/aclnn_upsample_nearest_2d.h`` (ops-cv ``image/resize_nearest_neighbor_v2``)::

    aclnnStatus aclnnUpsampleNearest2dGetWorkspaceSize(const aclTensor *self, const aclIntArray *outputSize,
                                                       aclTensor *out, uint64_t *workspaceSize,
                                                       aclOpExecutor **executor);
    aclnnStatus aclnnUpsampleNearest2d(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                       const aclrtStream stream);

Computes ``F.interpolate(self, size=outputSize, mode="nearest")`` (not nearest-exact):
``out[..., h, w] = self[..., min(floor(h * H / oH), H - 1), min(floor(w * W / oW), W - 1)]``
(the index maps of ``_numpy/pooling.py``; the ratio in float32 as PyTorch computes it).  Values
are copied exactly.

Checks, in CANN's order (each 161002 unless noted):

1. self and outputSize (and out) required (None: 161001).
2. self dtype FLOAT16, FLOAT, DOUBLE, UINT8 or BFLOAT16 (Atlas A2/A3); out's == self's.
3. outputSize has 2 elements; self 4-D (NCHW); self's H, W != 0; outputSize values != 0;
   self's C != 0.  (A negative outputSize passes here and fails check 5.)
4. out's N, C == self's.
5. out's H, W == outputSize.
6. Atlas A2/A3: every dim of self and out <= INT32_MAX.
7. N = 0: success, an empty result.
"""

from __future__ import annotations

import math

from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike

from .._convert.executor import dtype_of, planned, shape_of
from .._convert.typed import Output, TypedCall
from .._convert.values import host_array, int_array_arg, repeated, tensor_arg
from .._numpy import gather as _gather
from .._numpy.plans import NumpyOp, Prepared, plan
from .._numpy.workers import over_parts
from .._numpy.pooling import nearest_source
from .._runtime.memory import check_allocation
from .._runtime.tensor import Tensor
from ._checks import check, check_dtype, check_length, check_not_null, format_name, shape_str
from ._dispatch import dispatch, documented
from ._registry import numpy_dtypes

API = "aclnnUpsampleNearest2dGetWorkspaceSize"
INT32_MAX = 2**31 - 1

#: The dtypes each rule accepts: the one table of these checks (the simulator's are generated from it).
DTYPE_RULES = {"DTYPES": ("ACL_FLOAT16", "ACL_FLOAT", "ACL_DOUBLE", "ACL_UINT8", "ACL_BF16")}
DTYPES = numpy_dtypes(DTYPE_RULES["DTYPES"])


def _geometry(shape: tuple[int, ...], size: tuple[int, ...]) -> tuple[int, ...]:
    """Checks 3-6 (out made from outputSize): out's shape."""
    check_length(API, "outputSize", size, 2)
    check(API, len(shape) == 4, lambda: f"self must be 4-D (NCHW), got {format_name(len(shape))} shape "
                                        f"{shape_str(shape)}")
    check(API, shape[2] != 0 and shape[3] != 0, lambda: f"self H and W must not be 0, got {shape_str(shape)}")
    check(API, 0 not in size, lambda: f"outputSize values must not be 0, got {shape_str(size)}")
    check(API, shape[1] != 0, lambda: f"self C must not be 0, got {shape_str(shape)}")
    check(API, min(size) > 0, lambda: f"out H, W must equal outputSize, got outputSize {shape_str(size)}")
    out = (shape[0], shape[1], *size)
    check(API, max(*shape, *out) <= INT32_MAX, lambda: f"every dim of self and out must be <= {INT32_MAX} on "
                                                       f"Atlas A2/A3, got self {shape_str(shape)} and out "
                                                       f"{shape_str(out)}")
    return out


def _prepare(self: object, output_size: object) -> Prepared:
    """The numpy path: check in CANN's order, then gather rows and columns by the index maps."""
    self = tensor_arg(API, "self", self)
    size = int_array_arg(API, "outputSize", output_size)
    check_not_null(API, self=self, outputSize=size)
    assert self is not None and size is not None
    check_dtype(API, "self", self, DTYPES)
    out_shape = _geometry(self.shape, size)
    dtype = self.dtype
    nbytes = math.prod(map(int, out_shape)) * dtype.itemsize
    H, W = self.shape[-2:]
    # The index maps are made at the first run, after the allocation check that counts them
    # beside the result (an outputSize of 2^31 rows makes 16 GB of them: made in prepare, before
    # any check, they had got the process killed; scripts/fuzz.py --seed 2914).
    index_bytes = 8 * (size[0] + size[1])
    sources: list[tuple[np.ndarray, np.ndarray]] = []
    if self.size and _gather.use_gather(math.prod(out_shape)):
        taken = _gather.gather(_upsampled, (tuple(size),), (H, W), out_shape, self.size // (H * W))

        def run_small(self: object, *_: object) -> np.ndarray:
            check_allocation(nbytes)
            return taken(host_array(API, "self", self))

        return plan(run_small, nbytes + self.nbytes), (self,)

    def run(self: object, *_: object) -> np.ndarray:
        check_allocation(nbytes + index_bytes)
        x = host_array(API, "self", self)
        if x.size == 0:
            return np.empty(out_shape, dtype)
        if not sources:
            sources.append((nearest_source(size[0], H), nearest_source(size[1], W)))
        rows, cols = sources[0]
        out = np.empty(out_shape, dtype)
        # (mode clip: the indices are in range, and take's out= is buffered in its default mode)
        over_parts(lambda o, planes: np.take(planes.take(rows, axis=-2), cols, axis=-1, out=o, mode="clip"), out, x,
                   keep=2)
        return out

    return plan(run, nbytes + self.nbytes), (self,)


_numpy = NumpyOp(_prepare)


def _upsampled(x: np.ndarray, size: tuple[int, ...]) -> np.ndarray:
    """The planes ``(batch, H, W)`` of ``x`` upsampled to ``size`` (the kernel ``_gather``
    maps: the rows, then the columns, by the index maps)."""
    height, width = x.shape[-2:]
    return np.take(x.take(nearest_source(size[0], height), axis=-2), nearest_source(size[1], width), axis=-1)


def _outputs(self: object, output_size: tuple[int, ...] | None) -> list[Output]:
    """out: self's N, C and outputSize (self's shape as a stand-in where outputSize is no valid
    [oH, oW]: the library then reports it), self's dtype."""
    shape = shape_of(self)
    valid = output_size is not None and len(output_size) == 2 and min(output_size) > 0 and len(shape) == 4
    return [Output((*shape[:2], *output_size) if valid and output_size is not None else shape, dtype_of(self))]


def _shape_checks(self: object, output_size: tuple[int, ...] | None) -> None:
    assert output_size is not None
    _geometry(shape_of(self), output_size)


#: The npu/sim path: the two-phase C call, the arguments converted by their declared C types.
_aclnn = planned(TypedCall("UpsampleNearest2d", _outputs, checks=_shape_checks))
_MADE = {"out": "self's N, C, outputSize and self's dtype"}


@documented
def upsample_nearest2d(self: ArrayLike | Tensor, output_size: int | Sequence[int], *, backend: str | None = None,
                       stream: object = None) -> np.ndarray | Tensor:
    """Nearest-neighbour resizing of ``(N, C, H, W)`` to ``(N, C, oH, oW)``
    (``F.interpolate(mode="nearest")``, the legacy rule ``src = min(floor(dst * H / oH), H - 1)``).

    Mirrors ``aclnnUpsampleNearest2dGetWorkspaceSize`` + ``aclnnUpsampleNearest2d``.

    Args:
        self: ``(N, C, H, W)``; FLOAT16, FLOAT, DOUBLE, UINT8 or BFLOAT16; C, H, W > 0.
        output_size: outputSize ``[oH, oW]`` or one int; values > 0.
        {backend_and_stream}

    {tensor_arguments}

    Returns:
        out: ``(N, C, oH, oW)`` in self's dtype (values copied exactly).

    Raises:
        AclnnError: 161001 if an argument is None; 161002 for a dtype, rank or size outside the
            constraints above (every dim <= INT32_MAX on Atlas A2/A3).
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
          output_size: int | Sequence[int] = (7, 13)) -> OpCall:
    size = list(pair(output_size))
    return OpCall("upsample_nearest2d", (random_array(rng, shape, dtype), size), case=f"to {dims(size)}")


def _torch(torch: Any, self: Any, output_size: Any) -> Any:
    return torch.nn.functional.interpolate(self, size=list(output_size), mode="nearest")


def _layer(n: int, c: int, h: int, w: int, oh: int, ow: int) -> Any:
    def make(rng: np.random.Generator) -> tuple[Any, ...]:
        return (rng.standard_normal((n, c, h, w), dtype=np.float32), [oh, ow])
    return make


def _fuzz(f: Any) -> list[Any]:
    shape = (f.small_int(1, 2), f.small_int(1, 3), f.small_int(1, 6), f.small_int(1, 6))
    return [f.filled(shape, f.pick(f.FLOATS)), [f.small_int(1, 12), f.small_int(1, 12)]]


def _c_arguments(args: list[Any], out_like: Any) -> list[Any]:
    return [*args, out_like((*args[0].shape[:2], *args[1]), args[0].dtype)]


OPERATOR = register(Operator(
    upsample_nearest2d, "UpsampleNearest2d", header="aclnn_upsample_nearest_2d.h", package="ops-cv",
    library="libopapi_cv.so", outputs=("out",), case=_case,
    selftest=(((2, 3, 5, 6), DTYPES, dict(output_size=(7, 13))),
              ((1, 2, 8, 8), DTYPES[1:2], dict(output_size=(4, 3)))),
    bench=((8, 256, 28, 28), dict(output_size=(56, 56))),
    torch=_torch, memory_bound=True, fuzz=_fuzz, c_arguments=_c_arguments, dtypes=DTYPE_RULES,
    benchmarks=(("upsample_nearest2d fpn x2 (8,256,28,28)->56", _layer(8, 256, 28, 28, 56, 56)),
                ("upsample_nearest2d unet x2 (8,128,64,64)->128", _layer(8, 128, 64, 64, 128, 128)),
                ("upsample_nearest2d yolo x2 (8,256,13,13)->26", _layer(8, 256, 13, 13, 26, 26)),
                ("upsample_nearest2d tiny (1,1,2,2)->4", _layer(1, 1, 2, 2, 4, 4)))))
