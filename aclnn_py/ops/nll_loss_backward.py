"""aclnnNLLLossBackwardGetWorkspaceSize / aclnnNLLLossBackward: the gradient of NLLLoss with
respect to self (``torch.ops.aten.nll_loss_backward``).

C header ``aclnnop/aclnn_nll_loss_backward.h`` (ops-nn ``loss/nll_loss_grad``)::

    aclnnStatus aclnnNLLLossBackwardGetWorkspaceSize(const aclTensor *gradOutput, const aclTensor *self,
                                                     const aclTensor *target, const aclTensor *weight,
                                                     int64_t reduction, int64_t ignoreIndex,
                                                     const aclTensor *totalWeight, aclTensor *out,
                                                     uint64_t *workspaceSize, aclOpExecutor **executor);
    aclnnStatus aclnnNLLLossBackward(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                     aclrtStream stream);

``out`` has self's shape and is 0 except ``out[n, t[n]] = -weight[t[n]] * g[n]`` on the rows
whose target is not ignoreIndex, with ``g[n] = gradOutput[n]`` (reduction none), ``gradOutput``
(sum) or ``gradOutput / totalWeight`` (mean: the *given* totalWeight, not recomputed). Only
self's shape is read, never its data. Computed in FLOAT, rounded once to out's dtype.

Constraints, in the order CANN checks them (each violation is 161002 unless noted):

1. gradOutput, self, target, weight, totalWeight, out are not None (161001).
2. weight's, gradOutput's and totalWeight's dtypes equal self's; self's dtype can be cast to
   out's; self in FLOAT, FLOAT16, BFLOAT16; target in INT64, INT32, UINT8. Beyond CANN's code,
   out must be FLOAT, FLOAT16 or BFLOAT16, its documented list (``call`` only).
3. reduction in 0 (none), 1 (mean), 2 (sum).
4. self is 1-D or 2-D; target is 0-D or 1-D; unless (self 1-D, target 0-D), target's first
   dim equals self's (CANN's check is this loose: a 1-D self with a 1-D target of length C
   passes; here its first target is the sample's class, what the device does being not
   verified; a 2-D self with a 0-D target, which CANN's check reads a missing dim of, is
   refused); weight is 1-D of size C; totalWeight has one element; gradOutput is [N] for
   reduction none with a 2-D self, else at most 1-D with one element; out has self's shape.
5. An empty self gives an empty result.

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

API = "aclnnNLLLossBackwardGetWorkspaceSize"
KERNEL = "aclnnNLLLossBackward"

#: The dtypes each rule accepts: the one table of these checks (the simulator's are generated from it).
DTYPE_RULES = {"SELF": ("ACL_FLOAT", "ACL_FLOAT16", "ACL_BF16"),
               "TARGET": ("ACL_INT64", "ACL_INT32", "ACL_UINT8")}
DTYPES = numpy_dtypes(DTYPE_RULES["SELF"])
TARGET_DTYPES = numpy_dtypes(DTYPE_RULES["TARGET"])


def _shape_checks(grad_output: object, self: object, target: object, weight: object, reduction: int,
                  ignore_index: int, total_weight: object) -> None:
    """CANN's shape checks (step 4; out's shape is the function's own)."""
    g, s, t = shape_of(grad_output), shape_of(self), shape_of(target)
    _nll.check_ranks(API, s, t)
    if not (len(s) == 1 and len(t) == 0):
        check(API, len(t) == 1 and t[0] == s[0],
              lambda: f"target's first dim must equal self's, got self {shape_str(s)} and target {shape_str(t)}")
    _nll.check_weight(API, shape_of(weight), _nll.classes_of(s))
    _nll.check_one_element(API, "totalWeight", shape_of(total_weight))
    if reduction == _nll.NONE and len(s) == 2:
        check(API, g == s[:1], lambda: f"gradOutput must be [N] = {shape_str(s[:1])} for reduction none, "
                                       f"got {shape_str(g)}")
    else:
        check(API, len(g) <= 1 and math.prod(map(int, g)) == 1,
              lambda: f"gradOutput must be at most 1-D with one element, got {shape_str(g)}")


def _prepare(grad_output: object, self: object, target: object, weight: object, reduction: object,
             ignore_index: object, total_weight: object) -> Prepared:
    """The numpy path: check in CANN's order, then scatter the gradient."""
    reduction = c_int(API, "reduction", reduction, 64)
    ignore_index = c_int(API, "ignoreIndex", ignore_index, 64)
    grad_output = tensor_arg(API, "gradOutput", grad_output)
    self = tensor_arg(API, "self", self)
    target = tensor_arg(API, "target", target)
    weight = tensor_arg(API, "weight", weight)
    total_weight = tensor_arg(API, "totalWeight", total_weight)
    check_not_null(API, gradOutput=grad_output, self=self, target=target, weight=weight, totalWeight=total_weight)
    assert grad_output is not None and self is not None and target is not None  # (just checked)
    assert weight is not None and total_weight is not None
    check_same_dtype(API, "weight", weight, "self", self)
    check_same_dtype(API, "gradOutput", grad_output, "self", self)
    check_same_dtype(API, "totalWeight", total_weight, "self", self)
    check_dtype(API, "self", self, DTYPES)
    check_dtype(API, "target", target, TARGET_DTYPES)
    _nll.check_reduction(API, reduction)
    _shape_checks(grad_output, self, target, weight, reduction, ignore_index, total_weight)
    dtype, shape, classes = self.dtype, self.shape, self.shape[-1]
    nbytes = self.nbytes + target.nbytes + weight.nbytes
    size = math.prod(map(int, shape))
    result_bytes = size * dtype.itemsize
    # Each row's first element in the flat gradient: the written elements are these plus the
    # rows' classes (one flat put, not a 2-D fancy index of a fresh arange a call: 32x1000 mean
    # the op 24.7 -> 21.5 us thread time with the copies below skipped, median of 41 interleaved
    # rounds).
    starts = np.arange(0, size, classes) if classes else np.zeros(0, np.intp)

    def run(grad_output: object, self: object, target: object, weight: object, reduction_: object,
            ignore_: object, total_weight: object) -> np.ndarray:
        check_allocation(result_bytes)
        if 0 in shape:
            return np.empty(shape, dtype)
        t, w = host_array(API, "target", target), host_array(API, "weight", weight)
        g = host_array(API, "gradOutput", grad_output).astype(np.float32, copy=False).reshape(-1)
        rows, kept = _nll.gather(KERNEL, t.reshape(-1)[:1] if len(shape) == 1 and t.ndim else t, classes,
                                 ignore_index)
        if reduction == _nll.MEAN:
            g = g / host_array(API, "totalWeight", total_weight).astype(np.float32, copy=False).reshape(-1)[0]
        values = w.take(rows).astype(np.float32, copy=False)  # (a new array: negated in place)
        np.negative(values, out=values)
        values *= g
        if kept is not None:
            values = np.where(kept > 0, values, 0.0)
        out = np.zeros(size, np.float32)
        out.put(starts + rows, values)
        return out.reshape(shape).astype(dtype, copy=False)

    return plan(run, nbytes), (grad_output, self, target, weight, reduction, ignore_index, total_weight)


_numpy = NumpyOp(_prepare)


def _outputs(grad_output: object, self: object, target: object, weight: object, reduction: int,
             ignore_index: int, total_weight: object) -> list[Output]:
    """out: self's shape and dtype."""
    return [Output(shape_of(self), dtype_of(self))]


#: The npu/sim path: the two-phase C call, the arguments converted by their declared C types.
_aclnn = planned(TypedCall("NLLLossBackward", _outputs, checks=_shape_checks))
_MADE = {"out": "self's shape and dtype"}


@documented
def nll_loss_backward(grad_output: ArrayLike | Tensor, self: ArrayLike | Tensor, target: ArrayLike | Tensor,
                      weight: ArrayLike | Tensor, reduction: int, ignore_index: int,
                      total_weight: ArrayLike | Tensor, *, backend: str | None = None,
                      stream: object = None) -> np.ndarray | Tensor:
    """The gradient of ``nll_loss`` with respect to ``self``.

    Mirrors ``aclnnNLLLossBackwardGetWorkspaceSize`` + ``aclnnNLLLossBackward``.

    Args:
        grad_output: gradOutput, [N] for reduction none with a 2-D self, else one element;
            self's dtype.
        self: the forward's log-probabilities, (N, C) or (C); FLOAT, FLOAT16 or BFLOAT16 (its
            shape and dtype are read, not its data).
        target: the forward's target, (N) or 0-D; INT64, INT32 or UINT8. A value outside
            [0, C) that is not ``ignore_index`` fails when the computation runs (507015).
        weight: the class weights, (C); self's dtype.
        reduction: 0 none, 1 mean, 2 sum (the forward's).
        ignore_index: the forward's; those rows get no gradient.
        total_weight: totalWeight, the forward's totalWeightOut (one element; mean divides by
            it); self's dtype.
        {backend_and_stream}

    {tensor_arguments}

    Returns:
        out: self's shape and dtype, 0 but at each kept row's target.

    Raises:
        AclnnError: 161001 if a tensor is None; 161002 for a dtype, reduction or shape outside
            the constraints in the module docstring; 507015 for a target out of range.
        TypeError: an argument of the wrong Python type.
    """
    result: np.ndarray | Tensor = dispatch(backend, _numpy, _aclnn, grad_output, self, target, weight, reduction,
                                           ignore_index, total_weight, stream=stream, made=_MADE)
    return result


# -- registration: what the tools know of this operator (ops/_registry.py) -------------------------

from typing import Any  # noqa: E402

from ._cases import OpCall, random_array  # noqa: E402
from ._registry import Operator, register  # noqa: E402


def _case(rng: np.random.Generator, shape: Any, dtype: np.dtype, reduction: int = 1, ignore_index: int = -100,
          target_dtype: Any = np.int64) -> OpCall:
    """gradOutput for self (N, C) = ``shape`` and a total weight as the forward's."""
    n, c = math.prod(map(int, shape[:-1])), int(shape[-1])  # (any shape: its last dim is C, the rest N)
    target = rng.integers(0, c, size=n).astype(target_dtype)
    weight = (rng.random(c, dtype=np.float32) + 0.5).astype(dtype)
    grad = random_array(rng, (n,) if reduction == _nll.NONE else (), dtype)
    total = np.asarray(weight.astype(np.float32)[target].sum() * (target != ignore_index).mean(), dtype)
    return OpCall("nll_loss_backward", (grad, random_array(rng, (n, c), dtype), target, weight, reduction,
                                        ignore_index, total), case=f"reduction {reduction}")


def _torch(torch: Any, grad: Any, self: Any, target: Any, weight: Any, reduction: int, ignore_index: int,
           total_weight: Any) -> Any:
    return torch.ops.aten.nll_loss_backward(grad, self, target.long(), weight, reduction, ignore_index,
                                            total_weight)


def _fuzz(f: Any) -> list[Any]:
    n, c, reduction = f.pick((0, 1, 3, 32)), f.pick((1, 5, 10)), f.pick((0, 1, 2, 3))
    dtype = f.pick(f.FLOATS)
    return [f.filled((n,) if reduction == 0 else (), dtype), f.filled((n, c), dtype),
            f.filled((n,), f.pick((np.int64, np.int32, np.uint8))), f.filled((c,), dtype), reduction,
            f.pick((-100, 0, 1)), f.filled((), dtype)]


def _c_arguments(args: list[Any], out_like: Any) -> list[Any]:
    return [*args[:7], out_like(args[1].shape, args[1].dtype)]


def _classifier(n: int, c: int, reduction: int) -> Any:
    return lambda rng: _case(rng, (n, c), np.dtype(np.float32), reduction).args


OPERATOR = register(Operator(
    nll_loss_backward, "NLLLossBackward", header="aclnn_nll_loss_backward.h", package="ops-nn",
    library="libopapi_nn.so", outputs=("out",), case=_case,
    selftest=(((16, 10), DTYPES, dict()), ((16, 10), DTYPES[:1], dict(reduction=0)),
              ((16, 10), DTYPES[:1], dict(reduction=2, ignore_index=3, target_dtype=np.uint8))),
    bench=((256, 1000), dict()),
    torch=_torch, fuzz=_fuzz, c_arguments=_c_arguments, dtypes=DTYPE_RULES, shape_only=("self",),
    benchmarks=(("nll_loss_backward classifier head 32x1000 mean", _classifier(32, 1000, 1)),
                ("nll_loss_backward classifier head 256x1000 mean", _classifier(256, 1000, 1)),
                ("nll_loss_backward classifier head 256x1000 none", _classifier(256, 1000, 0)))))
