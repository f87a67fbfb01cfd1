"""aclnnBatchNormBackwardGetWorkspaceSize / aclnnBatchNormBackward: the gradients of batch
normalisation (``native_batch_norm_backward``), each computed when ``outputMask`` asks for it.

C header ``aclnnop/aclnn_batch_norm_backward.h`` (ops-nn ``norm/batch_norm_grad_v3``)::

    aclnnStatus aclnnBatchNormBackwardGetWorkspaceSize(const aclTensor *gradOut, const aclTensor *input,
                                                       const aclTensor *weight, const aclTensor *runningMean,
                                                       const aclTensor *runningVar, const aclTensor *saveMean,
                                                       const aclTensor *saveInvstd, bool training, double eps,
                                                       const aclBoolArray *outputMask, aclTensor *gradInput,
                                                       aclTensor *gradWeight, aclTensor *gradBias,
                                                       uint64_t *workspaceSize, aclOpExecutor **executor);
    aclnnStatus aclnnBatchNormBackward(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                       const aclrtStream stream);

**saveInvstd is read as the biased batch variance, as on Atlas A2/A3** (what aclnnBatchNorm
stores there; ops-nn passes it with eps to BNTrainingUpdateGrad/BNTrainingReduceGrad):
``invstd = 1/sqrt(saveInvstd + eps)``. NULL optionals stand for weight 1, runningMean 0,
runningVar 1, saveMean 0, saveInvstd 1. Computed in FLOAT (FLOAT16/BFLOAT16 converted first),
the per-channel sums accumulated in double on both backends, each result rounded once.

* training: ``x_hat = (x - saveMean) * invstd``; gradInput = ``weight * invstd / n * (n * g - sum(g)
  - x_hat * sum(g * x_hat))``; gradWeight = ``sum(g * x_hat)``; gradBias = ``sum(g)`` (sums per
  channel, over every dim but 1; n the elements per channel).
* eval: ``invstd = 1/sqrt(runningVar + eps)``; gradInput = ``g * weight * invstd``; gradWeight =
  ``sum(g * (x - runningMean) * invstd)``; gradBias = ``sum(g)``.

Constraints, in the order CANN checks them (each violation is 161002 unless noted):

1. gradOut and input are required (None: 161001).
2. An empty input or gradOut succeeds before any other check (the function's gradWeight and
   gradBias are then 0).
3. outputMask is required and not empty (161001); it has 3 values (A2/A3 read three whatever its
   length; the doc requires 3); a true value's gradient is required (161001).
4. gradOut and input dtype in FLOAT, FLOAT16, BFLOAT16 and equal; then each asked-for gradient and
   each given weight, runningMean, runningVar, saveMean, saveInvstd in the same list.
5. input and gradOut have 2 to 8 dims and the same shape; gradInput (if asked for) too.
6. weight, runningMean and runningVar, each if given, are 1-D of length C (input's dim 1).
7. saveMean, saveInvstd, gradWeight and gradBias, each if given (the gradients if asked for), are
   1-D of length C: A2/A3's phase 1 does not check these (its kernels would read or write past
   them; Ascend 950's does), refused here rather than touched out of bounds.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from .._convert.executor import dtype_of, planned, shape_of
from .._convert.params import Param
from .._convert.typed import Output, TypedCall
from .._convert.values import bool_arg, bool_array_arg, host_array, plain_value, tensor_arg
from .._errors import param_invalid, param_nullptr
from .._numpy import lanes as _lanes, reduce as _red
from .._numpy.ufunc_buffer import ufunc_buffer
from .._numpy.plans import NumpyOp, Prepared, plan
from .._runtime.memory import check_allocation
from .._runtime.tensor import Tensor
from ._checks import FLOAT32, check_dtype, check_not_null, check_same_dtype, check_same_shape, shape_str
from ._dispatch import dispatch, documented
from ._registry import numpy_dtypes
from .batch_norm import MAX_DIMS, MIN_DIMS, channels_of

API = "aclnnBatchNormBackwardGetWorkspaceSize"

#: The dtypes each rule accepts: the one table of these checks (the simulator's are generated from it).
DTYPE_RULES = {"DTYPES": ("ACL_FLOAT", "ACL_FLOAT16", "ACL_BF16")}
DTYPES = numpy_dtypes(DTYPE_RULES["DTYPES"])
_GRADS = ("gradInput", "gradWeight", "gradBias")
_OPTIONAL = ("weight", "runningMean", "runningVar", "saveMean", "saveInvstd")


def _check_rank(name: str, shape: tuple[int, ...]) -> None:
    if not MIN_DIMS <= len(shape) <= MAX_DIMS:
        raise param_invalid(API, f"{name} must have {MIN_DIMS} to {MAX_DIMS} dims, got {len(shape)}-D shape "
                                 f"{shape_str(shape)}")


def _check_channels(name: str, shape: tuple[int, ...] | None, c: int) -> None:
    if shape is not None and shape != (c,):
        raise param_invalid(API, f"{name} shape must be [C] = [{c}] (input's dim 1), got {shape_str(shape)}")


def _check_mask(mask: tuple[bool, ...] | None) -> tuple[bool, bool, bool]:
    if mask is None or not mask:
        raise param_nullptr(API, f"outputMask must not be NULL or empty, got {'NULL' if mask is None else '[]'}")
    if len(mask) != 3:
        raise param_invalid(API, f"outputMask must have 3 elements, got {len(mask)}")
    return mask[0], mask[1], mask[2]


def _prepare(grad_out: object, input: object, weight: object, running_mean: object, running_var: object,
             save_mean: object, save_invstd: object, training: object, eps: object, output_mask: object) -> Prepared:
    """The numpy path: check in CANN's order, then differentiate."""
    training = bool_arg(API, "training", training)
    e = plain_value(API, Param("eps", "double", "float"), eps)
    assert isinstance(e, float)
    g, x = tensor_arg(API, "gradOut", grad_out), tensor_arg(API, "input", input)
    optional = dict(zip(_OPTIONAL, (tensor_arg(API, n, v) for n, v in zip(
        _OPTIONAL, (weight, running_mean, running_var, save_mean, save_invstd)))))
    mask_values = bool_array_arg(API, "outputMask", output_mask)
    check_not_null(API, gradOut=g, input=x)
    assert g is not None and x is not None
    c = channels_of(x.shape)
    if x.size == 0 or g.size == 0:
        def empty(*_: object) -> tuple[np.ndarray | None, ...]:
            mask = (True, True, True) if not mask_values or len(mask_values) != 3 else mask_values
            return (np.empty(x.shape, g.dtype) if mask[0] else None, *(np.zeros(c, g.dtype) if m else None
                                                                        for m in mask[1:]))
        return plan(empty, 0), ()
    mask = _check_mask(mask_values)
    check_dtype(API, "gradOut", g, DTYPES)
    check_dtype(API, "input", x, DTYPES)
    check_same_dtype(API, "gradOut", g, "input", x)
    for name, value in optional.items():
        if value is not None:
            check_dtype(API, name, value, DTYPES)
    _check_rank("input", x.shape)
    _check_rank("gradOut", g.shape)
    check_same_shape(API, "gradOut", g, "input", x)
    for name, value in optional.items():
        _check_channels(name, None if value is None else value.shape, c)
    shape, dtype = x.shape, g.dtype
    e32 = np.float32(e)
    nbytes = 3 * x.size * 4

    def run(grad_out: object, input: object, *tensors: object) -> tuple[np.ndarray | None, ...]:
        # (this call's arrays, not those the plan was made from: a cached plan serves every call
        # of the same layout)
        check_allocation(nbytes)
        g3 = _red.channels(host_array(API, "gradOut", grad_out))
        x3 = _red.channels(host_array(API, "input", input))
        w, rm, rv, sm, sv = (None if v is None else host_array(API, n, v).astype(FLOAT32)
                             for n, v in zip(_OPTIONAL, tensors[:len(_OPTIONAL)]))
        n = np.float32(g3.shape[0] * g3.shape[2])
        mean = (sm if training else rm)
        var = (sv if training else rv)
        invstd = np.float32(1) / np.sqrt((np.ones(c, FLOAT32) if var is None else var) + e32)
        scale = invstd if w is None else invstd * w
        want_gd = training or mask[1]
        sum_g, sum_gd = np.empty(c, FLOAT32), np.empty(c, FLOAT32)
        dx = np.empty(g3.shape, FLOAT32) if mask[0] else None

        if g3.shape[2] <= _red.SHORT_CHANNEL:
            _along_rows(g3, x3, mean, dx, sum_g, sum_gd, want_gd, training, invstd, scale, n)
            return _results(dx, sum_g, sum_gd, invstd)

        buffer = _red.lane_buffer(g3.shape, 1)  # (its broadcasts of a channel's figures)

        def part(index: _lanes.Index) -> None:
            """Every figure of the channels ``index[1]`` (independent of the others')."""
            with ufunc_buffer(buffer):
                _channels(index)

        def _channels(index: _lanes.Index) -> None:
            ch = index[1]
            gp, xp = g3[index], x3[index]
            out = None if dx is None else dx[index]
            # x - mean in gradInput's own memory where it is made (it is overwritten after its
            # last use): no fresh array of x's size a call
            d = xp if mean is None else np.subtract(xp, mean[ch, None], out=out)
            if want_gd:
                sum_g[ch], sum_gd[ch] = _red.channel_sums(gp, d)
            else:
                sum_g[ch] = _red.channel_sums(gp)
            if out is None:
                return
            if training:
                np.multiply(d, -(invstd[ch] * invstd[ch] * sum_gd[ch] / n)[:, None], out=out)
                np.add(out, gp, out=out)
                np.subtract(out, (sum_g[ch] / n)[:, None], out=out)
                np.multiply(out, scale[ch, None], out=out)
            else:
                np.multiply(gp, scale[ch, None], out=out)

        _lanes.over(g3.shape, (0, 2), part, passes=7 if training else 3)
        return _results(dx, sum_g, sum_gd, invstd)

    def _results(dx: np.ndarray | None, sum_g: np.ndarray, sum_gd: np.ndarray,
                 invstd: np.ndarray) -> tuple[np.ndarray | None, ...]:
        grad_input = None if dx is None else dx.reshape(shape).astype(dtype, copy=False)
        grad_weight = (sum_gd * invstd).astype(dtype) if mask[1] else None
        grad_bias = sum_g.astype(dtype) if mask[2] else None
        return grad_input, grad_weight, grad_bias

    return plan(run, nbytes), (g, x, *optional.values())


def _along_rows(g3: np.ndarray, x3: np.ndarray, mean: np.ndarray | None, dx: np.ndarray | None,
                sum_g: np.ndarray, sum_gd: np.ndarray, want_gd: bool, training: bool, invstd: np.ndarray,
                scale: np.ndarray, n: np.float32) -> None:
    """``run``'s figures for short channels (L <= ``reduce.SHORT_CHANNEL``), the same
    arithmetic on the same values as its parts over channels, so the same bits: the sums over
    the whole arrays, then each elementwise pass along (N, C*L) rows with each channel's figure
    repeated L times (``reduce.along_rows``: one NumPy loop of C*L elements per image, not one
    of L per (image, channel)), the rows in parts over the worker threads (``lanes.over``).
    ResNet's layer4 (8,512,7,7), medians of 41 interleaved rounds, ms parts over channels /
    along rows: training 0.838 / 0.645 thread time, 0.575 / 0.448 and 0.586 / 0.461 wall (load
    average 2.6); eval 0.635 / 0.534 thread time."""
    n_images = g3.shape[0]
    rows_g = g3.reshape(n_images, -1)
    if mean is None:
        d3 = x3
    else:  # (x - mean in gradInput's memory where it is made, as the parts do)
        d3 = np.empty(g3.shape, FLOAT32) if dx is None else dx
        rows_x, mean_rows = _red.along_rows(x3, mean)
        np.subtract(rows_x, mean_rows, out=d3.reshape(n_images, -1))
    if want_gd:
        sum_g[...], sum_gd[...] = _red.channel_sums(g3, d3)
    else:
        sum_g[...] = _red.channel_sums(g3)
    if dx is None:
        return
    if training:
        _, c1, c2, c3 = _red.along_rows(g3, -(invstd * invstd * sum_gd / n), sum_g / n, scale)
    else:
        _, c3 = _red.along_rows(g3, scale)
    rows_dx, rows_d = dx.reshape(n_images, -1), d3.reshape(n_images, -1)

    def part(index: _lanes.Index) -> None:
        o, gp = rows_dx[index], rows_g[index]
        if training:
            np.multiply(rows_d[index], c1, out=o)
            np.add(o, gp, out=o)
            np.subtract(o, c2, out=o)
            np.multiply(o, c3, out=o)
        else:
            np.multiply(gp, c3, out=o)

    _lanes.over(rows_dx.shape, (1,), part, passes=5 if training else 2)


_numpy = NumpyOp(_prepare, floats=True)  # (its plan holds eps by value)


def _outputs(grad_out: object, input: object, weight: object, running_mean: object, running_var: object,
             save_mean: object, save_invstd: object, training: bool, eps: float,
             output_mask: tuple[bool, ...] | None) -> list[Output]:
    """gradInput: input's shape; gradWeight and gradBias: [C] (zeros, for an empty input); each
    gradOut's dtype, each None where outputMask does not ask for it."""
    mask = output_mask if output_mask is not None and len(output_mask) == 3 else (True, True, True)
    shape, dtype = shape_of(input), dtype_of(grad_out)
    c = (channels_of(shape),)
    return [Output(shape if mask[0] else None, dtype), Output(c if mask[1] else None, dtype, zero=True),
            Output(c if mask[2] else None, dtype, zero=True)]


#: The npu/sim path: the two-phase C call, the arguments converted by their declared C types.
_aclnn = planned(TypedCall("BatchNormBackward", _outputs))
_MADE = {"gradInput": "input's shape and gradOut's dtype", "gradWeight": "shape [C] and gradOut's dtype",
         "gradBias": "shape [C] and gradOut's dtype"}


@documented
def batch_norm_backward(grad_out: ArrayLike | Tensor, input: ArrayLike | Tensor, weight: ArrayLike | Tensor | None,
                        running_mean: ArrayLike | Tensor | None, running_var: ArrayLike | Tensor | None,
                        save_mean: ArrayLike | Tensor | None, save_invstd: ArrayLike | Tensor | None,
                        training: bool, eps: float, output_mask: Any, *, backend: str | None = None,
                        stream: object = None) -> tuple[Any, Any, Any]:
    """The gradients of batch normalisation over dim 1 (``native_batch_norm_backward``), with
    Atlas A2/A3's saveInvstd: the biased batch variance ``batch_norm`` returns there.

    Mirrors ``aclnnBatchNormBackwardGetWorkspaceSize`` + ``aclnnBatchNormBackward``.

    Args:
        grad_out: gradOut, input's shape; FLOAT, FLOAT16 or BFLOAT16, input's dtype.
        input: the forward input (N, C, ...), 2 to 8 dims.
        weight: (C,) or None (1).
        running_mean: (C,) or None (0); read in eval.
        running_var: (C,) or None (1); read in eval.
        save_mean: (C,) or None (0); the batch mean, read when training.
        save_invstd: (C,) or None (1); **the biased batch variance** (as ``batch_norm`` returns
            it on A2/A3), read when training: ``invstd = 1/sqrt(save_invstd + eps)``.
        training: the forward pass's mode.
        eps: added to the variance (used as FLOAT).
        output_mask: three bools: whether to compute gradInput, gradWeight, gradBias.
        {backend_and_stream}

    {tensor_arguments}

    Returns:
        (grad_input, grad_weight, grad_bias): input's shape, (C,) and (C,), each gradOut's
        dtype, None where output_mask says False (zeros for the weight and bias gradients of an
        empty input).

    Raises:
        AclnnError: 161001 if gradOut, input or outputMask is None (or empty); 161002 for a
            dtype, rank, shape or mask length outside the constraints in the module docstring.
        TypeError: an argument of the wrong Python type.
    """
    result = dispatch(backend, _numpy, _aclnn, grad_out, input, weight, running_mean, running_var, save_mean,
                      save_invstd, training, eps, output_mask, stream=stream, made=_MADE)
    return result[0], result[1], result[2]


# -- registration: what the tools know of this operator (ops/_registry.py) -------------------------

from ._cases import OpCall, random_array  # noqa: E402


def _case(rng: np.random.Generator, shape: Any, dtype: np.dtype, training: bool = True,
          mask: tuple[bool, bool, bool] = (True, True, True)) -> OpCall:
    c = shape[1]
    x = random_array(rng, shape, dtype)
    dims = (0, *range(2, len(shape)))
    wide = x.astype(np.float32)
    stats = [wide.mean(dims).astype(dtype), wide.var(dims).astype(dtype)]  # (what batch_norm saves on A2/A3)
    running = [random_array(rng, (c,), dtype), (np.abs(random_array(rng, (c,), FLOAT32)) + 0.5).astype(dtype)]
    return OpCall("batch_norm_backward", (random_array(rng, shape, dtype), x, random_array(rng, (c,), dtype),
                                          *running, *stats, training, 1e-5, list(mask)),
                  case=f"{'training' if training else 'eval'} mask {''.join('1' if m else '0' for m in mask)}")


def _torch(torch: Any, grad: Any, input: Any, weight: Any, rm: Any, rv: Any, sm: Any, sv: Any, training: bool,
           eps: float, mask: Any) -> Any:
    """PyTorch's backward, given A2/A3's saveInvstd (the variance) as its inverse std."""
    invstd = None if sv is None else 1 / torch.sqrt(sv + eps)
    grads = torch.ops.aten.native_batch_norm_backward(grad, input, weight, rm, rv, sm, invstd, training, eps,
                                                      [bool(m) for m in mask])
    return tuple(g if m else None for g, m in zip(grads, mask))


def _fuzz(f: Any) -> list[Any]:
    shape = (f.small_int(1, 4), f.small_int(1, 4), *[f.small_int(1, 4) for _ in range(f.small_int(0, 2))])
    dt = f.pick(f.FLOATS)
    c = shape[1] if not f.chance(0.1) else shape[1] + 1
    optional = [None if f.chance(0.2) else f.filled((c,), dt) for _ in range(5)]
    mask = [f.chance(0.8) for _ in range(3 if not f.chance(0.1) else f.small_int(0, 4))]
    return [f.filled(shape, dt), f.filled(shape, dt), *optional, f.chance(0.7), 1e-5, mask]


def _c_arguments(args: list[Any], out_like: Any) -> list[Any]:
    mask = list(args[9]) if len(args[9]) == 3 else [True, True, True]
    c = (channels_of(args[1].shape),)
    made = [out_like(args[1].shape, args[0].dtype), out_like(c, args[0].dtype), out_like(c, args[0].dtype)]
    return [*args[:10], *(m if keep else None for m, keep in zip(made, mask))]


def _layer(shape: tuple[int, ...]) -> Any:
    def arguments(rng: np.random.Generator) -> tuple[Any, ...]:
        x = rng.standard_normal(shape, dtype=np.float32)
        dims = (0, *range(2, len(shape)))
        c = shape[1]
        return (rng.standard_normal(shape, dtype=np.float32), x, np.ones(c, np.float32), None, None,
                x.mean(dims), x.var(dims), True, 1e-5, [True, True, True])
    return arguments


from ._registry import Operator, register  # noqa: E402

OPERATOR = register(Operator(
    batch_norm_backward, "BatchNormBackward", header="aclnn_batch_norm_backward.h", package="ops-nn",
    library="libopapi_nn.so", outputs=_GRADS, case=_case,
    selftest=(((4, 3, 5, 6), DTYPES, dict()), ((6, 5), DTYPES[:1], dict(training=False)),
              ((2, 4, 3, 3, 2), DTYPES[:1], dict(mask=(True, False, True)))),
    bench=((8, 64, 56, 56), dict()),
    torch=_torch, memory_bound=True, fuzz=_fuzz, c_arguments=_c_arguments, dtypes=DTYPE_RULES,
    benchmarks=(("batch_norm_backward resnet layer4 bn (8,512,7,7)", _layer((8, 512, 7, 7))),
                ("batch_norm_backward resnet layer1 bn (8,64,56,56)", _layer((8, 64, 56, 56))),
                ("batch_norm_backward resnet conv1 bn (8,64,112,112)", _layer((8, 64, 112, 112))))))
