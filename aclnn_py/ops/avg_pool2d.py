"""aclnnAvgPool2dGetWorkspaceSize / aclnnAvgPool2d: 2-D average pooling.

C header ``aclnnop/aclnn_avgpool2d.h`` (ops-nn ``pooling/avg_pool3_d``)::

    aclnnStatus aclnnAvgPool2dGetWorkspaceSize(
        const aclTensor *self, const aclIntArray *kernelSize, const aclIntArray *strides,
        const aclIntArray *paddings, const bool ceilMode, const bool countIncludePad,
        const int64_t divisorOverride, const int8_t cubeMathType, aclTensor *out,
        uint64_t *workspaceSize, aclOpExecutor **executor);
    aclnnStatus aclnnAvgPool2d(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                               aclrtStream stream);

Computes ``F.avg_pool2d(self, k, s, p, ceilMode, countIncludePad, divisorOverride or None)``,
with the windows and divisors its backward divides by (``_numpy/pooling.py``).
kernelSize ``[k]`` -> (k, k), ``[kH, kW, ...]`` -> (kH, kW) (CANN ignores extra values);
strides ``[]`` -> the kernel, ``[s]``, ``[sH, sW]``; paddings ``[p]`` or ``[pH, pW]``.  The pooled
size is ``o = trunc((in + 2p - k + (ceil ? s-1 : 0)) / s) + 1`` (less one in ceil mode when the
last window would start at or after ``in + p``): CANN's division truncates toward zero, so a
window longer than the padded input gives 1 where PyTorch refuses.  Computed in float32.

Checks, in CANN's order (each 161002 unless noted):

1. self, kernelSize, strides, paddings (and out) required (None: 161001).
2. self dtype FLOAT, FLOAT16 or BFLOAT16; out's == self's.
3. self 3-D (NCL) or 4-D (NCHW); other ranks are ND, which is refused.
4. kernelSize values > 0, strides > 0, paddings >= 0.
5. self's C, H, W != 0; kernelSize at least 1 element, paddings 1 or 2, strides at most 2;
   kH >= 2 pH and kW >= 2 pW; outH, outW > 0 and out of shape ``[N,] C, outH, outW``.
6. cubeMathType in 0..4.
7. N = 0: success, an empty result.
8. Atlas A2/A3, FLOAT self: cubeMathType 1, 3 or 4 is refused where CANN takes its global path
   (the window is the whole plane, no padding) or its cube path (the plane not a long strip,
   ``kH*kW <= 255`` or both <= 20, kH, kW <= 255, ``|divisorOverride| <= 255``, not ceil mode,
   C < 65536); the AvgPool3D path of every other case accepts them.
"""

from __future__ import annotations

import math

import functools
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike

from .._convert.executor import dtype_of, planned, shape_of
from .._convert.typed import Output, TypedCall
from .._convert.values import INT64_MAX, bool_arg, c_int, host_array, int_array_arg, repeated, tensor_arg
from .._errors import param_invalid
from .._numpy import small as _small
from .._numpy.plans import NumpyOp, Prepared, plan
from .._numpy.pooling import avg_divisors, avg_pool_sums, pooled_size
from .._runtime.memory import check_allocation
from .._runtime.tensor import Tensor
from ._checks import FLOAT32, check, check_dtype, check_min, check_not_null, format_name, shape_str
from ._dispatch import dispatch, documented
from ._registry import numpy_dtypes

API = "aclnnAvgPool2dGetWorkspaceSize"


class _Params(NamedTuple):
    """Validated, normalised arguments: every list expanded to an (H, W) pair."""

    kH: int
    kW: int
    sH: int
    sW: int
    pH: int
    pW: int
    ceil_mode: bool
    count_include_pad: bool
    divisor_override: int  # 0 = none
    cube_math_type: int


#: The dtypes each rule accepts: the one table of these checks (the simulator's are generated from it).
DTYPE_RULES = {"DTYPES": ("ACL_FLOAT", "ACL_FLOAT16", "ACL_BF16")}
DTYPES = numpy_dtypes(DTYPE_RULES["DTYPES"])


@functools.lru_cache(maxsize=256)
def _geometry(shape: tuple[int, ...], is_float: bool, kernel: tuple[int, ...], strides: tuple[int, ...],
              pads: tuple[int, ...], ceil_mode: bool, count_include_pad: bool, divisor: int,
              cube_math_type: int) -> tuple[_Params, tuple[int, ...]]:
    """Checks 3-8 (shapes, lists and flags only): the normalised parameters and out's shape."""
    check(API, len(shape) in (3, 4), lambda: f"self must be 3-D or 4-D (NCL or NCHW), got {format_name(len(shape))} "
                                             f"shape {shape_str(shape)}")
    check_min(API, "kernelSize", kernel, 0, strict=True)
    check_min(API, "strides", strides, 0, strict=True)
    check_min(API, "paddings", pads, 0, strict=False)
    check(API, 0 not in shape[-3:], lambda: f"self C, H and W must not be 0, got {shape_str(shape)}")
    check(API, len(kernel) >= 1, "kernelSize must have at least 1 element, got []")
    check(API, len(pads) in (1, 2), lambda: f"paddings must have 1 or 2 elements, got {shape_str(pads)}")
    check(API, len(strides) <= 2, lambda: f"strides must have 0, 1 or 2 elements, got {shape_str(strides)}")
    kH, kW = (kernel[0], kernel[0]) if len(kernel) == 1 else kernel[:2]
    pH, pW = (pads[0], pads[0]) if len(pads) == 1 else pads
    check(API, kH >= 2 * pH and kW >= 2 * pW, lambda: f"paddings must be <= kernelSize / 2, got kernelSize = "
                                                      f"{shape_str(kernel)}, paddings = {shape_str(pads)}")
    sH, sW = (kH, kW) if not strides else (strides[0], strides[0]) if len(strides) == 1 else strides
    H, W = shape[-2:]
    if max(H + 2 * pH + sH, W + 2 * pW + sW) > INT64_MAX:
        raise param_invalid(API, f"the pooled size of self {shape_str(shape)} overflows int64")
    out_hw = (pooled_size(H, kH, sH, pH, ceil_mode, toward_zero=True),
              pooled_size(W, kW, sW, pW, ceil_mode, toward_zero=True))
    check(API, min(out_hw) > 0, lambda: f"outH and outW must be > 0, got {shape_str(out_hw)} for self {shape_str(shape)}")
    params = _Params(kH, kW, sH, sW, pH, pW, ceil_mode, count_include_pad, divisor, cube_math_type)
    return params, (*shape[:-2], *out_hw)


def _check_cube(shape: tuple[int, ...], is_float: bool, params: _Params) -> None:
    """Checks 6 and 8: cubeMathType (after out's shape, so not part of what sizes it)."""
    cube_math_type, divisor, ceil_mode = params.cube_math_type, params.divisor_override, params.ceil_mode
    kH, kW, pH, pW = params.kH, params.kW, params.pH, params.pW
    H, W = shape[-2:]
    check(API, 0 <= cube_math_type <= 4, lambda: f"cubeMathType must be in [0, 4], got {cube_math_type}")
    if is_float and cube_math_type in (1, 3, 4):
        global_path = (H, W) == (kH, kW) and pH == pW == 0
        cube_path = (W // H < 2 and H // W < 2 and (kH * kW <= 255 or max(kH, kW) <= 20) and max(kH, kW) <= 255
                     and -255 <= divisor <= 255 and not ceil_mode and shape[-3] < 65536)
        if global_path or cube_path:
            raise param_invalid(API, f"cubeMathType {cube_math_type} is not supported for a FLOAT self here on "
                                     f"Atlas A2/A3 (its global/cube path takes 0 KEEP_DTYPE or 2 USE_FP16)")


def _validate(self: object, kernel_size: object, strides: object, paddings: object, ceil_mode: object,
              count_include_pad: object, divisor_override: object,
              cube_math_type: object) -> tuple[np.ndarray, _Params, tuple[int, ...]]:
    ceil_mode = bool_arg(API, "ceilMode", ceil_mode)
    count_include_pad = bool_arg(API, "countIncludePad", count_include_pad)
    divisor = 0 if divisor_override is None else c_int(API, "divisorOverride", divisor_override, 64)
    cube = c_int(API, "cubeMathType", cube_math_type, 8)
    self = tensor_arg(API, "self", self)
    kernel = int_array_arg(API, "kernelSize", kernel_size)
    stride = int_array_arg(API, "strides", strides)
    pads = int_array_arg(API, "paddings", paddings)
    check_not_null(API, self=self, kernelSize=kernel, strides=stride, paddings=pads)
    assert self is not None and kernel is not None and stride is not None and pads is not None
    check_dtype(API, "self", self, DTYPES)
    params, out_shape = _geometry(self.shape, self.dtype == FLOAT32, kernel, stride, pads, ceil_mode,
                                  count_include_pad, divisor, cube)
    _check_cube(self.shape, self.dtype == FLOAT32, params)
    return self, params, out_shape


def _prepare(*args: object) -> Prepared:
    """The numpy path: check in CANN's order, then the window sums (``_numpy/pooling.py``) over
    the divisor map (shared with the backward); one matrix product on small planes."""
    self, params, out_shape = _validate(*args)
    dtype = self.dtype
    nbytes = math.prod(map(int, out_shape)) * dtype.itemsize
    H, W = self.shape[-2:]
    OH, OW = out_shape[-2:]
    if self.size and OH * OW and _small.use_small(self.size // (H * W), H * W, OH * OW):
        product = _small.product(_pooled, ((OH, OW), params), (H, W), (OH, OW), out_shape[:-2], dtype, dtype)

        def run_small(self: object, *_: object) -> np.ndarray:
            check_allocation(nbytes)
            return product(host_array(API, "self", self))

        return plan(run_small, nbytes + self.nbytes), (self,)

    scale = _divisors((H, W), (OH, OW), params)

    def run(self: object, *_: object) -> np.ndarray:
        check_allocation(nbytes)
        x = host_array(API, "self", self)
        planes = x.reshape(-1, H, W).astype(np.float32, copy=False)
        return _pooled(planes, (OH, OW), params, scale).astype(dtype, copy=False).reshape(out_shape)

    return plan(run, nbytes + self.nbytes), (self,)


def _divisors(hw: tuple[int, int], out_hw: tuple[int, int], params: _Params) -> np.float32 | np.ndarray:
    return avg_divisors(hw, out_hw, (params.kH, params.kW), (params.sH, params.sW), (params.pH, params.pW),
                        params.count_include_pad, params.divisor_override)


def _pooled(planes: np.ndarray, out_hw: tuple[int, int], params: _Params,
            scale: np.float32 | np.ndarray | None = None) -> np.ndarray:
    """The float32 planes ``(batch, H, W)`` average-pooled to ``(batch, *out_hw)`` float32:
    the window sums over the divisor map ``scale`` (made here if None: the kernel ``_small``
    takes the matrix of)."""
    if scale is None:
        scale = _divisors(planes.shape[-2:], out_hw, params)
    sums = avg_pool_sums(planes, out_hw, (params.kH, params.kW), (params.sH, params.sW), (params.pH, params.pW))
    np.divide(sums, scale, out=sums)
    return sums


_numpy = NumpyOp(_prepare)


def _out_shape(self: object, kernel: tuple[int, ...] | None, strides: tuple[int, ...] | None,
               pads: tuple[int, ...] | None, ceil_mode: bool, count_include_pad: bool, divisor: int,
               cube_math_type: int) -> tuple[int, ...]:
    assert kernel is not None and strides is not None and pads is not None
    return _geometry(shape_of(self), dtype_of(self) == FLOAT32, kernel, strides, pads, ceil_mode, count_include_pad,
                     divisor, cube_math_type)[1]


def _checks(self: object, *rest: object) -> None:
    """Every shape-only check (out is only sized when they pass)."""
    _out_shape(self, *rest)  # type: ignore[arg-type]
    kernel, strides, pads, ceil_mode, count_include_pad, divisor, cube = rest
    _check_cube(shape_of(self), dtype_of(self) == FLOAT32,
                _geometry(shape_of(self), dtype_of(self) == FLOAT32, kernel, strides, pads, ceil_mode,
                          count_include_pad, divisor, cube)[0])


def _outputs(self: object, *rest: object) -> list[Output]:
    """out: the pooled shape (self's as a stand-in where the checks fail) and self's dtype."""
    try:
        shape = _out_shape(self, *rest)  # type: ignore[arg-type]
    except Exception:
        shape = shape_of(self)
    return [Output(shape, dtype_of(self))]


#: The npu/sim path: the two-phase C call, the arguments converted by their declared C types (a None
#: divisorOverride is 0: none).
_aclnn = planned(TypedCall("AvgPool2d", _outputs, checks=_checks, none_is={"divisorOverride": 0}))
_MADE = {"out": "the pooled shape and self's dtype"}


@documented
def avg_pool2d(self: ArrayLike | Tensor, kernel_size: int | Sequence[int], strides: int | Sequence[int],
               paddings: int | Sequence[int], ceil_mode: bool = False, count_include_pad: bool = True,
               divisor_override: int | None = None, cube_math_type: int = 0, *, backend: str | None = None,
               stream: object = None) -> np.ndarray | Tensor:
    """2-D average pooling (``F.avg_pool2d``).

    Mirrors ``aclnnAvgPool2dGetWorkspaceSize`` + ``aclnnAvgPool2d``.

    Args:
        self: ``(N, C, H, W)`` or ``(C, H, W)``; FLOAT, FLOAT16 or BFLOAT16; C, H, W > 0.
        kernel_size: ``[k]``, ``[kH, kW]`` or one int; values > 0.
        strides: ``[]`` (= kernel_size), ``[s]``, ``[sH, sW]`` or one int; values > 0.
        paddings: ``[p]``, ``[pH, pW]`` or one int; ``0 <= p <= k / 2`` per axis.
        ceil_mode: round the pooled size up (the last window must start inside the input or
            its left padding).
        count_include_pad: count padding cells in the divisor.
        divisor_override: ``None`` or 0 for the window's size, else the divisor of every window.
        cube_math_type: 0..4 (a precision hint for the NPU; on Atlas A2/A3 a FLOAT self refuses
            1, 3 and 4 on CANN's global and cube paths: module docstring).  The numpy backend
            always computes in FLOAT.
        {backend_and_stream}

    {tensor_arguments}

    Returns:
        out: ``[N,] C, outH, outW`` (CANN's pooled size, truncating division) in self's dtype.

    Raises:
        AclnnError: 161001 if an argument is None; 161002 for a dtype, rank, list, size or
            cubeMathType outside the constraints above.
        TypeError: an argument of the wrong Python type.
    """
    result: np.ndarray | Tensor = dispatch(
        backend, _numpy, _aclnn, self, repeated(kernel_size, 1), repeated(strides, 1),
        repeated(paddings, 1), ceil_mode, count_include_pad, divisor_override, cube_math_type, stream=stream,
        made=_MADE)
    return result


# -- registration: what the tools know of this operator (ops/_registry.py) -------------------------

from typing import Any  # noqa: E402

from ._cases import OpCall, dims, pair, random_array  # noqa: E402
from ._registry import Operator, register  # noqa: E402


def _case(rng: np.random.Generator, shape: Sequence[int], dtype: np.dtype, kernel: int | Sequence[int] = 3,
          stride: int | Sequence[int] = 2, padding: int | Sequence[int] = 1, ceil_mode: bool = False,
          count_include_pad: bool = True, divisor_override: int = 0) -> OpCall:
    k, s, p = map(pair, (kernel, stride, padding))
    words = f"k{dims(k)} s{dims(s)} p{dims(p)} {'ceil' if ceil_mode else 'floor'} " \
            f"{'incl-pad' if count_include_pad else 'excl-pad'}" + (f" divisor {divisor_override}" if divisor_override else "")
    return OpCall("avg_pool2d", (random_array(rng, shape, dtype), list(k), list(s), list(p), ceil_mode,
                                 count_include_pad, divisor_override, 0), case=words)


def _torch(torch: Any, self: Any, kernel: Any, stride: Any, padding: Any, ceil_mode: bool = False,
           count_include_pad: bool = True, divisor: int | None = None, cube_math_type: int = 0) -> Any:
    return torch.nn.functional.avg_pool2d(self, kernel, stride or None, padding, ceil_mode, count_include_pad,
                                          divisor or None)


def _layer(n: int, c: int, h: int, w: int, k: int, s: int, p: int, ceil: bool = False, incl: bool = True) -> Any:
    def make(rng: np.random.Generator) -> tuple[Any, ...]:
        return (rng.standard_normal((n, c, h, w), dtype=np.float32), [k, k], [s, s], [p, p], ceil, incl, 0, 0)
    return make


def _fuzz(f: Any) -> list[Any]:
    n, c, h, w = f.small_int(1, 2), f.small_int(1, 3), f.small_int(2, 7), f.small_int(2, 7)
    k = f.small_int(1, min(h, w))
    return [f.filled((n, c, h, w), f.pick(f.FLOATS)), [k], [f.small_int(1, 3)], [f.small_int(0, k // 2)],
            f.chance(0.5), f.chance(0.5), f.pick([0, 3]), 0]


def _c_arguments(args: list[Any], out_like: Any) -> list[Any]:
    x, kernel, stride, pads, ceil = args[:5]
    k = (kernel[0], kernel[0]) if len(kernel) == 1 else tuple(kernel[:2])
    s = k if not stride else (stride[0], stride[0]) if len(stride) == 1 else tuple(stride)
    p = (pads[0], pads[0]) if len(pads) == 1 else tuple(pads)
    shape = (*x.shape[:-2], *(pooled_size(x.shape[-2 + a], k[a], s[a], p[a], ceil, toward_zero=True) for a in (0, 1)))
    return [*args[:6], args[6] or 0, args[7], out_like(shape, x.dtype)]


OPERATOR = register(Operator(
    avg_pool2d, "AvgPool2d", header="aclnn_avgpool2d.h", package="ops-nn", library="libopapi_nn.so",
    outputs=("out",), case=_case,
    selftest=(((2, 3, 9, 10), DTYPES, dict(kernel=(3, 2), stride=(2, 1), padding=(1, 1), ceil_mode=True,
                                           count_include_pad=False)),
              ((3, 8, 7), DTYPES[:1], dict(kernel=2, stride=2, padding=0, divisor_override=3))),
    bench=((8, 64, 112, 112), dict(kernel=3, stride=2, padding=1)),
    torch=_torch, memory_bound=True, fuzz=_fuzz, c_arguments=_c_arguments, dtypes=DTYPE_RULES,
    benchmarks=(("avg_pool2d fwd k3 s2 p1 (8,64,112,112)", _layer(8, 64, 112, 112, 3, 2, 1)),
                ("avg_pool2d fwd densenet transition k2 s2 (8,128,56,56)", _layer(8, 128, 56, 56, 2, 2, 0)),
                ("avg_pool2d fwd inception k3 s1 p1 excl-pad (8,192,35,35)", _layer(8, 192, 35, 35, 3, 1, 1, False, False)),
                ("avg_pool2d fwd tiny (1,1,4,4)", _layer(1, 1, 4, 4, 2, 2, 0)))))
