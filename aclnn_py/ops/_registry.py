"""The operator registry: every operator the binding ships is declared once, by its own module.

Each ``ops/<op>.py`` ends with ``OPERATOR = register(Operator(...))``: its Python function, C
name, header, package and library, output names, the argument maker the tools share, the
selftest cases, the ``bench`` default case, the PyTorch reference, the real-layer cases of
``scripts/bench.py`` and the argument generator of ``scripts/fuzz.py``. ``ops/__init__.py``
imports each operator module (one line per operator), which registers it; everything else
(the package's exports, ``capi``, ``call``, ``info``, ``selftest``, ``bench``, ``compare``, the
scripts, the simulator's build) iterates ``operators()`` and names no operator itself.

``header``, ``package`` and ``library`` must be string literals in that declaration: the
simulator's build reads them from the module's text (``aclnn_py/_ffi/op_packages.py``) inside
pip's isolated build environment, where ``aclnn_py`` cannot be imported. ``tests/test_registry.py``
checks that both readings agree, and that every tool offers exactly the registered operators.

The dtype checks have one table too: each module's ``DTYPE_RULES = {rule: (aclDataType name, ...)}``
(a literal near its top; ``Operator.dtypes``). The module checks with ``numpy_dtypes(rule)``; the
simulator's build generates ``aclsim_dtype_rules.h`` from the same text, whose
``ACLSIM_DTYPES_<C name>_<rule>`` the C checks use. ``tests/ops/test_dtype_rules.py`` feeds every
dtype to every tensor parameter on both backends and compares the outcomes.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._convert.executor import declare_unread
from .._dtypes import aclDataType, bfloat16, to_numpy
from ._cases import OpCall

#: ``(forward input shape, dtypes, parameters of the argument maker)``: one selftest case per dtype.
SelftestCase = tuple[tuple[int, ...], Sequence[np.dtype], dict[str, Any]]
#: ``(label, make)``: ``make(rng)`` returns the positional arguments of the operator's function.
BenchmarkCase = tuple[str, Callable[["np.random.Generator"], tuple[Any, ...]]]  # (a string: numpy.random loads lazily)


_NARROW_FLOATS = (np.dtype(np.float16), bfloat16)

#: The precision of the golden CANN's accuracy checker computes on the CPU, by input dtype: FLOAT16 and
#: BFLOAT16 inputs raised to FLOAT, FLOAT to DOUBLE; a call mixing two of these raises every one of them
#: to FLOAT (MindStudio msprobe, msprobe/pytorch/api_accuracy_checker/run_ut/run_ut.py: RAISE_PRECISION
#: and generate_cpu_params; its api_accuracy_checker.md: "标杆（CPU高精度）"). (That tool leaves the FLOAT
#: inputs of conv1d/conv2d unraised, hf_32_standard_api, as the NPU computes them at HFLOAT32; the
#: tools here raise them too: a DOUBLE golden is nearer the exact result than a FLOAT one.)
GOLDEN_PRECISION: dict[np.dtype, np.dtype] = {np.dtype(np.float16): np.dtype(np.float32),
                                              bfloat16: np.dtype(np.float32),
                                              np.dtype(np.float32): np.dtype(np.float64)}


def golden_dtype(args: Sequence[Any]) -> np.dtype | None:
    """The dtype ``GOLDEN_PRECISION`` raises the floating-point arrays of ``args`` (and of its tensor
    lists) to, or None when none of them is FLOAT16, BFLOAT16 or FLOAT."""
    found = {a.dtype for v in args for a in (v if isinstance(v, (list, tuple)) else (v,))
             if isinstance(a, np.ndarray) and a.dtype in GOLDEN_PRECISION}
    if not found:
        return None
    return GOLDEN_PRECISION[found.pop()] if len(found) == 1 else np.dtype(np.float32)


@dataclass(frozen=True)
class Operator:
    """One operator: what every tool needs to know about it (see the module docstring)."""

    function: Callable[..., Any]                       # the public function (its __name__ is the Python name)
    c_name: str                                        # aclnn<c_name>GetWorkspaceSize and aclnn<c_name>
    header: str                                        # its header in include/aclnnop/
    package: str                                       # the CANN operator package that defines it
    library: str                                       # that package's library (libopapi_<pkg>.so)
    outputs: tuple[str, ...]                           # C names of the outputs, in the order returned
    case: Callable[..., OpCall]                        # (rng, shape, dtype, **params) -> consistent arguments
    selftest: tuple[SelftestCase, ...]                 # `python -m aclnn_py selftest`
    bench: tuple[tuple[int, ...], dict[str, Any]]      # `python -m aclnn_py bench` default (shape, params)
    torch: Callable[..., Any]                          # (torch, *args in float32) -> the result (tests' oracle)
    benchmarks: tuple[BenchmarkCase, ...] = ()         # scripts/bench.py: layers of real networks
    memory_bound: bool = False                         # scripts/bench.py times it against a copy too
    fuzz: Callable[[Any], list[Any]] | None = None     # scripts/fuzz.py: (fuzzer) -> near-valid arguments
    c_arguments: Callable[[list[Any], Callable[..., Any]], list[Any]] | None = field(default=None)
    # ^ (function arguments, out_like(shape, dtype)) -> the C argument list of `call`/`prepare`
    overhead_probe: bool = False                       # scripts/bench.py's per-call overhead probe (one operator:
    # ^ its functions take gradOutput (1,1,6,6), self (1,1,4,4), an int array of 4, out; scripts/overhead*.c call it)
    dtypes: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    # ^ the module's DTYPE_RULES: {rule: aclDataType names}, generated into the simulator's C checks
    precision: str = "MERE/MARE threshold"             # the CANN test-kit standard its float outputs are judged by
    # ^ (aclnn_py/_compare.py judges): THRESHOLD, or DOUBLE_THOUSANDTH for convolutions
    shape_only: tuple[str, ...] = ()                   # tensor arguments whose data it never reads (their
    # ^ shape, dtype and format only): not uploaded on sim, whose C operator declares the same (INPUTS_READ)
    inplace: str | None = None                         # the C name of the argument it writes in place
    # ^ (selfRef; also its one output): the tools copy that argument before each call (``fresh``)
    overwrites: bool = False                           # it writes every element of that argument from the
    # ^ other arguments alone, never reading its values (InplaceZero): a timed loop needs no ``restorer``,
    # ^ and an ndarray passed for it is not copied to the device, only back (every backend)
    seed: bool = False                                 # one of the five backward operators the project
    # ^ began with (the rest came for a CNN training step, issue #23): scripts/bench.py sums their cases apart

    @property
    def written(self) -> int | None:
        """The position of the argument written in place among the function's arguments
        (its snake_case name, e.g. ``self_ref`` for ``selfRef``), or None."""
        if self.inplace is None:
            return None
        snake = re.sub(r"(?<!^)(?=[A-Z])", "_", self.inplace).lower()
        return list(inspect.signature(self.function).parameters).index(snake)

    def fresh(self, args: Sequence[Any]) -> tuple[Any, ...]:
        """``args`` for one more call: for an in-place operator, a copy of the argument it
        writes (an ndarray, or a device ``Tensor`` by a round trip through the host), so that
        repeated calls, and the reference computed after them, all see the original input."""
        index = self.written
        if index is None or index >= len(args):
            return tuple(args)
        value = args[index]
        copied = np.array(value) if isinstance(value, np.ndarray) else type(value).from_numpy(
            value.numpy(), backend=value.lib.backend)
        return (*args[:index], copied, *args[index + 1:])

    def torch_arguments(self, torch: Any, args: Sequence[Any], *, widen: bool = False,
                        golden: bool = False) -> tuple[Any, ...]:
        """``args`` as the PyTorch reference (``Operator.torch``) takes them: each ndarray, and each
        array of a tensor list, a torch tensor sharing its memory (a copy only where PyTorch cannot
        share it: negative strides); with ``widen``, FLOAT16 and BFLOAT16 arrays as float32 copies
        (the reference then computes in float32, as the device accumulates); with ``golden``, every
        FLOAT16, BFLOAT16 and FLOAT array as a copy in ``golden_dtype(args)`` (the golden CANN's
        standard presumes); every other value (integer and bool arrays, numbers, int lists, None) as
        it is. The one conversion the tests, selftest and bench use."""
        raised = golden_dtype(args) if golden else None

        def tensor(a: np.ndarray) -> Any:
            if raised is not None and a.dtype in GOLDEN_PRECISION:
                a = a.astype(raised)
            elif widen and a.dtype in _NARROW_FLOATS:
                a = a.astype(np.float32)
            elif any(s < 0 for s in a.strides):
                a = np.ascontiguousarray(a)
            return torch.from_numpy(a)

        def convert(value: Any) -> Any:
            if isinstance(value, np.ndarray):
                return tensor(value)
            if isinstance(value, (list, tuple)) and any(isinstance(v, np.ndarray) for v in value):
                return [convert(v) for v in value]  # (a tensor list)
            return value
        return tuple(convert(a) for a in args)

    def restorer(self, args: Sequence[Any]) -> Callable[[], None]:
        """A function that puts back, before a call, the values the argument written in place
        holds now (an ndarray of ``args``), so that a timed loop of in-place calls runs on the
        same input every time; for any other operator, and one that ``overwrites`` its argument
        (each call's result is the same whatever that argument holds), one that does nothing."""
        index = self.written
        if index is None or self.overwrites or index >= len(args) or not isinstance(args[index], np.ndarray):
            return _nothing
        target = args[index]
        original = target.copy()
        return lambda: np.copyto(target, original)


    @property
    def name(self) -> str:
        """The Python name, e.g. ``xxx_backward``."""
        return str(self.function.__name__)

    @property
    def kernel(self) -> str:
        """Phase 2's C function, e.g. ``aclnnXxxBackward``."""
        return f"aclnn{self.c_name}"

    @property
    def api(self) -> str:
        """Phase 1's C function, e.g. ``aclnnXxxBackwardGetWorkspaceSize``."""
        return f"aclnn{self.c_name}GetWorkspaceSize"


def _nothing() -> None:
    """The restorer of an operator that writes none of its arguments."""


def numpy_dtypes(names: Sequence[str]) -> tuple[np.dtype, ...]:
    """The NumPy dtypes of aclDataType names (a rule of an operator's ``DTYPE_RULES``, the one
    table both the numpy backend's and the simulator's dtype checks read)."""
    return tuple(to_numpy(aclDataType[name]) for name in names)


#: The CANN test-kit standards an operator's floating-point outputs can be judged by (``precision``).
THRESHOLD, DOUBLE_THOUSANDTH = "MERE/MARE threshold", "double thousandth"

_OPERATORS: list[Operator] = []


def register(operator: Operator) -> Operator:
    """Add ``operator`` to the registry (each operator module does, once, at import)."""
    if any(op.name == operator.name or op.c_name == operator.c_name for op in _OPERATORS):
        raise ValueError(f"operator {operator.name} ({operator.c_name}) is registered twice")
    _OPERATORS.append(operator)
    declare_unread(operator.api, operator.shape_only, operator.inplace if operator.overwrites else None)
    return operator


def operators() -> tuple[Operator, ...]:
    """Every registered operator, in the order ``ops/__init__.py`` imports them."""
    return tuple(_OPERATORS)


def by_name(name: str) -> Operator:
    """The operator of a Python name (``xxx_backward``) or a C name (``XxxBackward``,
    ``aclnnXxxBackward``); KeyError if none."""
    for op in operators():
        if name in (op.name, op.c_name, op.kernel):
            return op
    raise KeyError(name)
