"""aclnnBatchNormGetWorkspaceSize / aclnnBatchNorm: batch normalisation over dim 1 (the channels),
training or eval, updating the running statistics in place.

C header ``aclnnop/aclnn_batch_norm.h`` (ops-nn ``norm/batch_norm_v3``)::

    aclnnStatus aclnnBatchNormGetWorkspaceSize(const aclTensor *input, const aclTensor *weight,
                                               const aclTensor *bias, aclTensor *runningMean,
                                               aclTensor *runningVar, bool training, double momentum,
                                               double eps, aclTensor *output, aclTensor *saveMean,
                                               aclTensor *saveInvstd, uint64_t *workspaceSize,
                                               aclOpExecutor **executor);
    aclnnStatus aclnnBatchNorm(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                               aclrtStream stream);

runningMean and runningVar are read and written in place (``_convert/params.py``,
``READ_AND_WRITTEN``). Computes ``torch.native_batch_norm`` with statistics over every dim but 1,
in FLOAT (FLOAT16/BFLOAT16 inputs converted first, the result rounded once). The mean's sum is
accumulated in double (the variance's too on the simulator; NumPy's in float, whose relative
error of ~1e-6 scales every output alike); CANN's A2/A3 BatchNormV3 kernels reduce in float (a
two-pass full reduce, or per-lane Welford updates whose lanes are added pairwise), an order not
reproduced here. momentum and eps are used as FLOAT (CANN casts them; no range check).

* training: ``y = (x - mean) * (weight / sqrt(var + eps)) + bias`` (the multiplier formed first,
  as A2/A3's BatchNormV3 kernels form it) with the batch's mean and biased variance;
  ``runningMean = (1 - momentum) * runningMean + momentum * mean`` and
  ``runningVar = (1 - momentum) * runningVar + momentum * var * n / (n - 1)`` (n the elements per
  channel); saveMean = mean. **saveInvstd holds the biased variance on Atlas A2/A3**, which we
  follow (ops-nn's aclnnBatchNorm doc: "saveInvstd indicates the variance of the input" for
  Atlas training and A2/A3; only Ascend 950 stores ``1/sqrt(var + eps)``), and
  BatchNormBackward reads it back so. With n == 1 the running variance takes the factor of the
  path A2/A3 take: NaN on BatchNormV3's (4-D/5-D input with C >= 64), 0 on BNTrainingUpdate's.
* eval: ``y = (x - runningMean) / sqrt(runningVar + eps) * weight + bias``, computed as CANN's
  BNInfer computes it: ``m = weight / sqrt(runningVar + eps)``, ``y = x * m + (bias - m *
  runningMean)`` (so an inf input gives BNInfer's inf or NaN, e.g. NaN for an inf weight where
  x and runningMean share a sign); a NULL runningMean is 0 and a NULL runningVar 1 (PyTorch
  refuses eval without them); saveMean and saveInvstd are not written. A NULL weight is 1 and a
  NULL bias 0.

Constraints, in the order CANN checks them (each violation is 161002 unless noted):

1. input and output, and when training saveMean and saveInvstd, are required (None: 161001).
2. An empty input succeeds before any other check: saveMean (if given) is filled with 0,
   saveInvstd with NaN, output is not written.
3. input, output, (training) saveMean, saveInvstd, then each given weight, bias, runningMean,
   runningVar dtype in FLOAT, FLOAT16, BFLOAT16 (A2/A3); no equality is checked.
4. input and output have 2 to 8 dims; output has input's shape.
5. weight, bias, runningMean, runningVar, each if given, are 1-D of length C (input's dim 1).
6. When training, saveMean and saveInvstd have shape [C].
"""

from __future__ import annotations

import math

from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from .._convert.executor import dtype_of, planned, shape_of
from .._convert.params import Param
from .._convert.typed import Output, TypedCall
from .._convert.values import bool_arg, host_array, plain_value, tensor_arg
from .._errors import param_invalid
from .._numpy import reduce as _red
from .._numpy.plans import NumpyOp, Prepared, plan
from .._runtime.memory import check_allocation
from .._runtime.tensor import Tensor
from ._checks import FLOAT32, check_dtype, check_not_null, shape_str
from ._dispatch import dispatch, documented
from ._registry import numpy_dtypes

API = "aclnnBatchNormGetWorkspaceSize"

#: The dtypes each rule accepts: the one table of these checks (the simulator's are generated from it).
DTYPE_RULES = {"DTYPES": ("ACL_FLOAT", "ACL_FLOAT16", "ACL_BF16")}
DTYPES = numpy_dtypes(DTYPE_RULES["DTYPES"])
#: The ranks input may have.
MIN_DIMS, MAX_DIMS = 2, 8
#: The channel count at and above which A2/A3 take BatchNormV3's path for 4-D/5-D input.
V3_MIN_CHANNELS = 64


def channels_of(shape: tuple[int, ...]) -> int:
    """C, input's dim 1 (1 for an input of fewer dims: the checks refuse it unless it is empty)."""
    return shape[1] if len(shape) > 1 else 1


def unbiased_factor(shape: tuple[int, ...]) -> np.float32:
    """``n / (n - 1)`` of the running variance's update; with n == 1 the factor of A2/A3's
    path: NaN on BatchNormV3's (4-D/5-D, C >= 64), else 0 (BNTrainingUpdate)."""
    n = math.prod(map(int, shape)) // channels_of(shape)
    if n > 1:
        return np.float32(n / (n - 1))
    return np.float32(np.nan if len(shape) in (4, 5) and shape[1] >= V3_MIN_CHANNELS else 0.0)


def _real(name: str, value: object) -> float:
    result = plain_value(API, Param(name, "double", "float"), value)
    assert isinstance(result, float)  # (a float parameter's value)
    return result


def _prepare(input: object, weight: object, bias: object, running_mean: object, running_var: object,
             training: object, momentum: object, eps: object) -> Prepared:
    """The numpy path: check in CANN's order, then normalise."""
    training = bool_arg(API, "training", training)
    m, e = np.float32(_real("momentum", momentum)), np.float32(_real("eps", eps))
    input = tensor_arg(API, "input", input)
    weight, bias = tensor_arg(API, "weight", weight), tensor_arg(API, "bias", bias)
    running_mean = tensor_arg(API, "runningMean", running_mean)
    running_var = tensor_arg(API, "runningVar", running_var)
    check_not_null(API, input=input)
    assert input is not None  # (just checked)
    shape, c = input.shape, channels_of(input.shape)
    if input.size == 0:
        def empty(*_: object) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | None]:
            if not training:
                return np.empty(shape, input.dtype), None, None
            return np.empty(shape, input.dtype), np.zeros(c, input.dtype), np.full(c, np.nan, input.dtype)
        return plan(empty, 0), ()
    check_dtype(API, "input", input, DTYPES)
    optional = {"weight": weight, "bias": bias, "runningMean": running_mean, "runningVar": running_var}
    for name, value in optional.items():
        if value is not None:
            check_dtype(API, name, value, DTYPES)
    if not MIN_DIMS <= input.ndim <= MAX_DIMS:
        raise param_invalid(API, f"input must have {MIN_DIMS} to {MAX_DIMS} dims, got {input.ndim}-D shape "
                                 f"{shape_str(shape)}")
    for name, value in optional.items():
        if value is not None and value.shape != (c,):
            raise param_invalid(API, f"{name} shape must be [C] = [{c}] (input's dim 1), got {shape_str(value.shape)}")
    factor = unbiased_factor(shape)
    nbytes = 3 * input.size * 4

    def run(input: object, weight: object, bias: object, running_mean: object, running_var: object,
            *_: object) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | None]:
        # (this call's arrays, not those the plan was made from: a cached plan serves every call
        # of the same layout)
        check_allocation(nbytes)
        with np.errstate(all="ignore"):  # (inf and NaN data give their values without a warning, as on a device)
            return normalized(input, weight, bias, running_mean, running_var)

    def normalized(input: object, weight: object, bias: object, running_mean: object,
                   running_var: object) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | None]:
        x = host_array(API, "input", input)
        x3 = _red.channels(x)
        w, b, running_mean, running_var = (None if v is None else host_array(API, n, v) for n, v in (
            ("weight", weight), ("bias", bias), ("runningMean", running_mean), ("runningVar", running_var)))
        w = None if w is None else w.astype(FLOAT32)
        b = None if b is None else b.astype(FLOAT32)
        if not training:
            rm = np.zeros(c, FLOAT32) if running_mean is None else running_mean.astype(FLOAT32)
            rv = np.ones(c, FLOAT32) if running_var is None else running_var.astype(FLOAT32)
            # As CANN's BNInfer: multiplier = weight / sqrt(var + eps), addend = bias -
            # multiplier * mean, output = x * multiplier + addend.
            root = np.sqrt(rv + e)
            scale = np.float32(1) / root if w is None else w / root
            shift = (np.float32(0) if b is None else b) - scale * rm  # (a NULL bias is zeros)
            y = _red.affine(x3, scale, shift)
            return y.reshape(shape).astype(x.dtype, copy=False), None, None
        mean = _red.channel_mean(x3)
        d, var = _red.centered(x3, mean)
        root = np.sqrt(var + e)  # (weight / sqrt(var + eps), as A2/A3's BatchNormV3 forms it)
        scale = np.float32(1) / root if w is None else w / root
        y = _red.affine(d, scale, b, out=d)
        if running_mean is not None:
            np.copyto(running_mean, (np.float32(1) - m) * running_mean.astype(FLOAT32) + m * mean, casting="unsafe")
        if running_var is not None:
            update = (np.float32(1) - m) * running_var.astype(FLOAT32) + m * (var * factor)
            np.copyto(running_var, update, casting="unsafe")
        dtype = x.dtype
        return y.reshape(shape).astype(dtype, copy=False), mean.astype(dtype, copy=False), var.astype(dtype, copy=False)

    return plan(run, nbytes), (input, weight, bias, running_mean, running_var)


_numpy = NumpyOp(_prepare, floats=True)  # (its plan holds momentum and eps by value)


def _outputs(input: object, weight: object, bias: object, running_mean: object, running_var: object,
             training: bool, momentum: float, eps: float) -> list[Output]:
    """output: input's shape and dtype; saveMean and saveInvstd (training only): [C], input's dtype."""
    shape = shape_of(input)
    save = Output((channels_of(shape),) if training else None, dtype_of(input))
    return [Output(shape, dtype_of(input)), save, save]


#: The npu/sim path: the two-phase C call, the arguments converted by their declared C types.
_aclnn = planned(TypedCall("BatchNorm", _outputs))
_MADE = {"output": "input's shape and dtype", "saveMean": "input's dtype and shape [C]",
         "saveInvstd": "input's dtype and shape [C]"}


@documented
def batch_norm(input: ArrayLike | Tensor, weight: ArrayLike | Tensor | None, bias: ArrayLike | Tensor | None,
               running_mean: ArrayLike | Tensor | None, running_var: ArrayLike | Tensor | None, training: bool,
               momentum: float, eps: float, *, backend: str | None = None,
               stream: object = None) -> tuple[Any, Any, Any, Any, Any]:
    """Batch normalisation over dim 1 (``torch.native_batch_norm``), updating the running
    statistics in place when training.

    Mirrors ``aclnnBatchNormGetWorkspaceSize`` + ``aclnnBatchNorm`` (Atlas A2/A3 behaviour).

    Args:
        input: (N, C, ...), 2 to 8 dims; FLOAT, FLOAT16 or BFLOAT16.
        weight: (C,) or None (1); the same dtypes, each independent of input's.
        bias: (C,) or None (0).
        running_mean: (C,) or None; read in eval (None: 0), updated in place when training:
            ``(1 - momentum) * running_mean + momentum * mean`` (a NumPy array is written, a
            device ``Tensor`` updated on the device).
        running_var: (C,) or None; read in eval (None: 1), updated in place when training with
            the unbiased batch variance (``n / (n - 1)``; with n == 1 see the module docstring).
        training: batch statistics and running updates (True) or the running statistics (False).
        momentum: the running statistics' update weight (used as FLOAT).
        eps: added to the variance (used as FLOAT).
        {backend_and_stream}

    {tensor_arguments}

    Returns:
        (running_mean, running_var, output, save_mean, save_invstd), CANN's outputs in its
        order (as ``aclnn_py.call`` returns them): the running statistics given (updated in
        place when training; None where None was given); output of input's shape and dtype; when training,
        save_mean the batch mean and save_invstd **the biased batch variance** (what Atlas A2/A3
        store there, not ``1/sqrt(var + eps)`` as Ascend 950 and PyTorch do), each (C,) of
        input's dtype (the function's choice; ``call`` takes any of the three dtypes there);
        None for both in eval. An empty input gives an empty output, save_mean 0 and
        save_invstd NaN (training).

    Raises:
        AclnnError: 161001 if input is None; 161002 for a dtype, rank or shape outside the
            constraints in the module docstring.
        TypeError: an argument of the wrong Python type.
    """
    result = dispatch(backend, _numpy, _aclnn, input, weight, bias, running_mean, running_var, training, momentum,
                      eps, stream=stream, made=_MADE)
    # (the running statistics are updated where they are, on every backend)
    return running_mean, running_var, *result


# -- registration: what the tools know of this operator (ops/_registry.py) -------------------------

from ._cases import OpCall, random_array  # noqa: E402
from ._registry import Operator, register  # noqa: E402


def _case(rng: np.random.Generator, shape: Any, dtype: np.dtype, training: bool = True,
          stats: bool | None = None) -> OpCall:
    """Running statistics by default in eval only: the tools run ours and their reference on the
    same arrays, which training updates in place (tests/ops/test_batch_norm.py checks the updates)."""
    c = shape[1]
    stats = not training if stats is None else stats
    weight, bias = random_array(rng, (c,), dtype), random_array(rng, (c,), dtype)
    mean = random_array(rng, (c,), dtype) if stats else None
    var = (np.abs(random_array(rng, (c,), FLOAT32)) + 0.5).astype(dtype) if stats else None
    return OpCall("batch_norm", (random_array(rng, shape, dtype), weight, bias, mean, var, training, 0.1, 1e-5),
                  case=f"{'training' if training else 'eval'}{'' if stats else ' no running stats'}")


def _torch(torch: Any, input: Any, weight: Any, bias: Any, mean: Any, var: Any, training: bool, momentum: float,
           eps: float) -> Any:
    """PyTorch's batch norm, with A2/A3's saveInvstd (the biased variance) in place of its inverse std."""
    c = input.shape[1]
    given = mean is not None, var is not None
    mean = torch.zeros(c) if mean is None else mean.clone()
    var = torch.ones(c) if var is None else var.clone()
    output = torch.nn.functional.batch_norm(input, mean, var, weight, bias, training, momentum, eps)
    stats = (mean if given[0] else None, var if given[1] else None)
    if not training:
        return *stats, output, None, None
    dims = [0] + list(range(2, input.dim()))
    return *stats, output, input.mean(dims), input.var(dims, unbiased=False)


def _fuzz(f: Any) -> list[Any]:
    shape = (f.small_int(1, 4), f.small_int(1, 4), *[f.small_int(1, 4) for _ in range(f.small_int(0, 2))])
    dt = f.pick(f.FLOATS)
    c = shape[1] if not f.chance(0.1) else shape[1] + 1
    training = f.chance(0.7)
    # (running statistics only in eval: the tools call twice with the same arrays, which training updates)
    stats = [None if f.chance(0.2) or (k > 1 and training) else f.filled((c,), dt) for k in range(4)]
    return [f.filled(shape, dt), *stats, training, 0.1, 1e-5]


def _c_arguments(args: list[Any], out_like: Any) -> list[Any]:
    c = channels_of(args[0].shape)
    saves = [out_like((c,), args[0].dtype), out_like((c,), args[0].dtype)] if args[5] else [None, None]
    return [*args[:8], out_like(args[0].shape, args[0].dtype), *saves]


def _layer(shape: tuple[int, ...], training: bool) -> Any:
    def arguments(rng: np.random.Generator) -> tuple[Any, ...]:
        c = shape[1]
        return (rng.standard_normal(shape, dtype=np.float32), np.ones(c, np.float32), np.zeros(c, np.float32),
                np.zeros(c, np.float32), np.ones(c, np.float32), training, 0.1, 1e-5)
    return arguments


OPERATOR = register(Operator(
    batch_norm, "BatchNorm", header="aclnn_batch_norm.h", package="ops-nn", library="libopapi_nn.so",
    outputs=("runningMean", "runningVar", "output", "saveMean", "saveInvstd"), case=_case,
    selftest=(((4, 3, 5, 6), DTYPES, dict()), ((6, 5), DTYPES, dict(training=False)),
              ((2, 4, 3, 3, 2), DTYPES[:1], dict(training=False, stats=False))),
    bench=((8, 64, 56, 56), dict()),
    torch=_torch, memory_bound=True, fuzz=_fuzz, c_arguments=_c_arguments, dtypes=DTYPE_RULES,
    # (the eval case first: the smallest, which tests/test_registry.py runs through ours and then
    # PyTorch with the same arrays, which training would have updated in between)
    benchmarks=(("batch_norm resnet layer4 bn (8,512,7,7) eval", _layer((8, 512, 7, 7), False)),
                ("batch_norm resnet conv1 bn (8,64,112,112) training", _layer((8, 64, 112, 112), True)),
                ("batch_norm resnet layer1 bn (8,64,56,56) training", _layer((8, 64, 56, 56), True)),
                ("batch_norm resnet layer4 bn (8,512,7,7) training", _layer((8, 512, 7, 7), True)),
                ("batch_norm resnet layer1 bn (8,64,56,56) eval", _layer((8, 64, 56, 56), False)))))
