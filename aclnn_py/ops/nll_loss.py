"""aclnnNLLLossGetWorkspaceSize / aclnnNLLLoss: the negative log-likelihood loss and its total
weight (``torch.ops.aten.nll_loss_forward``).

C header ``aclnnop/aclnn_nll_loss.h`` (ops-nn ``loss/nll_loss``)::

    aclnnStatus aclnnNLLLossGetWorkspaceSize(const aclTensor *self, const aclTensor *target,
                                             const aclTensor *weight, int64_t reduction, int64_t ignoreIndex,
                                             aclTensor *out, aclTensor *totalWeightOut,
                                             uint64_t *workspaceSize, aclOpExecutor **executor);
    aclnnStatus aclnnNLLLoss(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream);

With ``self`` the log-probabilities (N, C) (or (C): one sample) and ``t = target``:
``l[n] = -weight[t[n]] * self[n, t[n]]``, 0 where ``t[n] == ignoreIndex``;
``totalWeight = sum of weight[t[n]]`` over the rows not ignored. reduction 0 (none): ``out = l``;
1 (mean): ``sum(l) / totalWeight`` (NaN when every row is ignored, as in PyTorch); 2 (sum):
``sum(l)``. Computed in FLOAT (A2/A3 compute FLOAT16 in FLOAT and BFLOAT16 in BFLOAT16 with
float accumulation; here both in FLOAT), rounded once to out's dtype.

Constraints, in the order CANN checks them (each violation is 161002 unless noted):

1. self, target, weight (required: CANN has no default weight), out, totalWeightOut are not
   None (161001).
2. weight's dtype equals self's; self's dtype can be cast to out's and to totalWeightOut's;
   self in FLOAT, FLOAT16, BFLOAT16; target in INT64, INT32, UINT8. Beyond CANN's code (which
   takes any dtype FLOAT can be cast to: DOUBLE, COMPLEX), out and totalWeightOut must be
   FLOAT, FLOAT16 or BFLOAT16, the documented list (``call`` only: the function makes both
   of self's dtype).
3. reduction in 0 (none), 1 (mean), 2 (sum); ignoreIndex is any int64 (PyTorch's default
   -100 is the function's default).
4. self is 1-D or 2-D; target is 0-D or 1-D; (self 1-D, target 0-D) or (self 2-D, target 1-D
   of the same N); weight is 1-D of size C; out is [N] for reduction none with a 2-D self,
   else at most 1-D with one element (``call`` only); totalWeightOut has one element (any
   rank); an empty self with C = 0 and a non-empty target is refused.
5. An empty self: reduction none gives an empty result; mean gives NaN, sum 0, and a total
   weight of 0.

totalWeightOut is not written by CANN with reduction none; the function's is then 0.
A target outside [0, C) that is not ignoreIndex: 507015 when the computation runs
(``ops/_nll.py``).
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike

from .._convert.executor import dtype_of, planned, shape_of
from .._convert.typed import Output, TypedCall
from .._convert.values import c_int, host_array, tensor_arg
from .._numpy.plans import NumpyOp, Prepared, plan
from .._runtime.memory import check_allocation
from .._runtime.tensor import Tensor
from . import _nll
from ._checks import check, check_dtype, check_not_null, check_same_dtype, shape_str
from ._dispatch import dispatch, documented
from ._registry import numpy_dtypes

API = "aclnnNLLLossGetWorkspaceSize"
KERNEL = "aclnnNLLLoss"

#: The dtypes each rule accepts: the one table of these checks (the simulator's are generated from it).
DTYPE_RULES = {"SELF": ("ACL_FLOAT", "ACL_FLOAT16", "ACL_BF16"),
               "TARGET": ("ACL_INT64", "ACL_INT32", "ACL_UINT8")}
DTYPES = numpy_dtypes(DTYPE_RULES["SELF"])
TARGET_DTYPES = numpy_dtypes(DTYPE_RULES["TARGET"])


def _shape_checks(self: object, target: object, weight: object, reduction: int, ignore_index: int) -> None:
    """CANN's shape checks (step 4; out's shape is the function's own)."""
    s, t, w = shape_of(self), shape_of(target), shape_of(weight)
    _nll.check_ranks(API, s, t)
    check(API, (len(s) == 1 and len(t) == 0) or (len(s) == 2 and t == s[:1]),
          lambda: f"target must be [N] = {shape_str(s[:1])} for a 2-D self, or 0-D for a 1-D self; got self "
                  f"{shape_str(s)} and target {shape_str(t)}")
    _nll.check_weight(API, w, _nll.classes_of(s))
    check(API, not (0 in s and s[-1] == 0 and math.prod(map(int, t)) > 0),
          lambda: f"self {shape_str(s)} has C = 0 but target {shape_str(t)} is not empty")


def _out_shape(self_shape: tuple[int, ...], reduction: int) -> tuple[int, ...]:
    return self_shape[:1] if reduction == _nll.NONE and len(self_shape) == 2 else ()


def _prepare(self: object, target: object, weight: object, reduction: object, ignore_index: object) -> Prepared:
    """The numpy path: check in CANN's order, then the loss."""
    reduction = c_int(API, "reduction", reduction, 64)
    ignore_index = c_int(API, "ignoreIndex", ignore_index, 64)
    self = tensor_arg(API, "self", self)
    target = tensor_arg(API, "target", target)
    weight = tensor_arg(API, "weight", weight)
    check_not_null(API, self=self, target=target, weight=weight)
    assert self is not None and target is not None and weight is not None  # (just checked)
    check_same_dtype(API, "weight", weight, "self", self)
    check_dtype(API, "self", self, DTYPES)
    check_dtype(API, "target", target, TARGET_DTYPES)
    _nll.check_reduction(API, reduction)
    _shape_checks(self, target, weight, reduction, ignore_index)
    dtype, shape, classes = self.dtype, _out_shape(self.shape, reduction), self.shape[-1]
    nbytes = self.nbytes + target.nbytes + weight.nbytes
    results = math.prod(map(int, shape)) * dtype.itemsize + dtype.itemsize
    # Each row's first element in the flat self: the picked elements are these plus the rows'
    # classes (one take, not a 2-D fancy index).
    starts = np.arange(0, self.size, classes) if classes else np.zeros(0, np.intp)

    def run(self: object, target: object, weight: object, *_: object) -> tuple[np.ndarray, np.ndarray]:
        check_allocation(results)
        x, t, w = (host_array(API, "self", self), host_array(API, "target", target),
                   host_array(API, "weight", weight))
        if x.size == 0:
            empty = np.empty(shape, dtype) if reduction == _nll.NONE else \
                np.asarray(np.nan if reduction == _nll.MEAN else 0, dtype)
            return empty, np.zeros((), dtype)
        rows, kept = _nll.gather(KERNEL, t, classes, ignore_index)
        picked = x.reshape(-1).take(starts + rows)
        weights = w[rows]
        if weights.dtype != np.float32:
            weights, picked = weights.astype(np.float32), picked.astype(np.float32)
        if kept is not None:
            weights = weights * kept
        losses = -weights * picked
        if kept is not None:
            losses[kept == 0] = 0.0  # an ignored row is 0, whatever self holds there
        if reduction == _nll.NONE:
            return losses.reshape(shape).astype(dtype, copy=False), np.zeros((), dtype)
        # (ndarray.sum is this reduce, behind a Python wrapper)
        summed, total = float(np.add.reduce(losses, dtype=np.float64)), float(np.add.reduce(weights, dtype=np.float64))
        if reduction == _nll.MEAN:
            summed = summed / total if total else float(np.float64(summed) * np.inf if summed else np.nan)
        return np.asarray(summed, dtype), np.asarray(total, dtype)

    return plan(run, nbytes), (self, target, weight, reduction, ignore_index)


_numpy = NumpyOp(_prepare)


def _outputs(self: object, target: object, weight: object, reduction: int, ignore_index: int) -> list[Output]:
    """out: [N] (none, 2-D self) or 0-D; totalWeightOut: 0-D (zeros: unwritten with none); self's dtype."""
    s = shape_of(self)
    return [Output(_out_shape(s, reduction) if len(s) in (1, 2) else (), dtype_of(self)),
            Output((), dtype_of(self), zero=True)]


#: The npu/sim path: the two-phase C call, the arguments converted by their declared C types.
_aclnn = planned(TypedCall("NLLLoss", _outputs, checks=_shape_checks))
_MADE = {"out": "self's dtype, [N] for reduction none, else 0-D", "totalWeightOut": "self's dtype, 0-D"}


@documented
def nll_loss(self: ArrayLike | Tensor, target: ArrayLike | Tensor, weight: ArrayLike | Tensor,
             reduction: int = 1, ignore_index: int = -100, *, backend: str | None = None,
             stream: object = None) -> tuple[np.ndarray | Tensor, np.ndarray | Tensor]:
    """The negative log-likelihood loss (``torch.nn.functional.nll_loss``) and its total weight.

    Mirrors ``aclnnNLLLossGetWorkspaceSize`` + ``aclnnNLLLoss``.

    Args:
        self: log-probabilities, (N, C) or (C) for one sample; FLOAT, FLOAT16 or BFLOAT16.
        target: the class of each row, (N) or 0-D; INT64, INT32 or UINT8. A value outside
            [0, C) that is not ``ignore_index`` fails when the computation runs (507015).
        weight: the weight of each class, (C); self's dtype (required, as in CANN: pass ones
            for PyTorch's default).
        reduction: 0 none, 1 mean (default), 2 sum.
        ignore_index: rows with this target add nothing, to the loss or the total weight.
        {backend_and_stream}

    {tensor_arguments}

    Returns:
        (out, totalWeightOut): out is [N] for reduction none with a 2-D self, else 0-D;
        totalWeightOut is 0-D, the sum of the kept rows' weights (0 for reduction none, which
        CANN does not write); both of self's dtype. Mean over no kept row is NaN.

    Raises:
        AclnnError: 161001 if a tensor is None; 161002 for a dtype, reduction or shape outside
            the constraints in the module docstring; 507015 for a target out of range.
        TypeError: an argument of the wrong Python type.
    """
    result: tuple[np.ndarray | Tensor, np.ndarray | Tensor] = dispatch(
        backend, _numpy, _aclnn, self, target, weight, reduction, ignore_index, stream=stream, made=_MADE)
    return result


# -- registration: what the tools know of this operator (ops/_registry.py) -------------------------

from typing import Any  # noqa: E402

from ._cases import OpCall, random_array  # noqa: E402
from ._registry import Operator, register  # noqa: E402


def _log_probabilities(rng: np.random.Generator, n: int, c: int, dtype: np.dtype) -> np.ndarray:
    x: np.ndarray = random_array(rng, (n, c), np.float32)
    logp: np.ndarray = x - np.log(np.exp(x).sum(axis=1, keepdims=True))
    return logp.astype(dtype)


def _case(rng: np.random.Generator, shape: Any, dtype: np.dtype, reduction: int = 1, ignore_index: int = -100,
          target_dtype: Any = np.int64) -> OpCall:
    """self (N, C) = ``shape``, a target per row (some rows ``ignore_index`` when it is a class)."""
    n, c = math.prod(map(int, shape[:-1])), int(shape[-1])  # (any shape: its last dim is C, the rest N)
    target = rng.integers(0, c, size=n).astype(target_dtype)
    weight = (rng.random(c, dtype=np.float32) + 0.5).astype(dtype)
    return OpCall("nll_loss", (_log_probabilities(rng, n, c, dtype), target, weight, reduction, ignore_index),
                  case=f"reduction {reduction}")


def _torch(torch: Any, self: Any, target: Any, weight: Any, reduction: int = 1, ignore_index: int = -100) -> Any:
    return torch.ops.aten.nll_loss_forward(self, target.long(), weight, reduction, ignore_index)


def _fuzz(f: Any) -> list[Any]:
    n, c = f.pick((0, 1, 3, 32)), f.pick((1, 5, 10))
    dtype = f.pick(f.FLOATS)
    return [f.filled((n, c), dtype), f.filled((n,), f.pick((np.int64, np.int32, np.uint8))),
            f.filled((c,), dtype), f.pick((0, 1, 2, 3, -1)), f.pick((-100, 0, 1))]


def _c_arguments(args: list[Any], out_like: Any) -> list[Any]:
    self, reduction = args[0], args[3]
    return [*args[:5], out_like(_out_shape(self.shape, reduction), self.dtype), out_like((), self.dtype)]


def _classifier(n: int, c: int, reduction: int) -> Any:
    return lambda rng: _case(rng, (n, c), np.dtype(np.float32), reduction).args


OPERATOR = register(Operator(
    nll_loss, "NLLLoss", header="aclnn_nll_loss.h", package="ops-nn", library="libopapi_nn.so",
    outputs=("out", "totalWeightOut"), case=_case,
    selftest=(((16, 10), DTYPES, dict()), ((16, 10), DTYPES[:1], dict(reduction=0)),
              ((16, 10), DTYPES[:1], dict(reduction=2, ignore_index=3, target_dtype=np.int32))),
    bench=((256, 1000), dict()),
    torch=_torch, fuzz=_fuzz, c_arguments=_c_arguments, dtypes=DTYPE_RULES,
    benchmarks=(("nll_loss classifier head 32x1000 mean", _classifier(32, 1000, 1)),
                ("nll_loss classifier head 256x1000 mean", _classifier(256, 1000, 1)),
                ("nll_loss classifier head 256x1000 none", _classifier(256, 1000, 0)))))
