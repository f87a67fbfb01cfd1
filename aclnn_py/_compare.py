"""Precision comparison: run one operator call on two backends and measure how far apart the
results are, against per-dtype tolerances.

``compare(op, *args, backends=("npu", "numpy"), **kwargs)`` calls
``op(*args, **kwargs, backend=b)`` for each of the two backends on the same inputs; the
first backend is the one under test, the second the reference. Each output (the registry's
``Operator.outputs``) gets an ``OutputComparison``: max abs error, max rel error, cosine
similarity, the tolerance applied and whether it passed.

The tolerance table below is the only one the project's tools use: ``python -m aclnn_py
selftest`` judges its cases with it too.

How a result passes: same shape and dtype as the reference; NaN where the reference has NaN,
the same infinities; every other element within ``atol * scale + rtol * |reference|``, where
``scale = max(1, max |reference|)``. The scaling makes ``atol`` relative to the data: a
reduction's rounding error grows with the size of the values summed, which near a result
that cancels to ~0 is the size of the data, not of the result. Integer and bool results must
be equal.

What is reported: ``max_abs`` is the largest ``|actual - reference|``; ``max_rel`` the
largest ``|actual - reference| / |reference|`` over the elements above the absolute floor
(``|reference| >= atol * scale``, all non-zero ones for exact dtypes), where a relative error
is meaningful; ``cosine`` the cosine similarity of the two results as flat vectors (1.0 when
they point the same way, and for two all-zero results).

Beside these figures, each output is judged under the standard CANN's operator test kits use
(``Standard``, the ``standard`` field of each output; ``judge`` below): floating-point outputs by
the ecosystem threshold standard of opbase's operator precision standard (the mean and the
largest relative error, MERE and MARE, under a per-dtype threshold), with the small-value domain
of MindStudio's accuracy checker; convolutions (the operators registered with
``precision="double thousandth"``) by the "double thousandth" rule those kits apply to conv1d
and conv2d; integer and bool outputs by binary consistency. The standard is reported beside the
verdict, which stays the tolerance's. It presumes a golden computed more precisely than the result
(msprobe's CPU golden raises FLOAT16/BFLOAT16 inputs to FLOAT and FLOAT to DOUBLE): between two
results of the same precision (the simulator's float32 sum against NumPy's, in another order) an
element that cancels to near zero can exceed MARE though both are right. ``golden`` computes that
golden with PyTorch CPU; ``compare_results(..., golden=)`` judges the standard against it
(selftest and scripts/bench.py do, where PyTorch is installed), ``compare`` against its reference
backend.

``cube_math_type``: the operators with that parameter take the NPU cube unit's precision
mode. The numpy backend always computes in float32, but the NPU may not: with
1 (ALLOW_FP32_DOWN_PRECISION) or 3 (USE_HF32) it rounds float32 inputs to HFLOAT32 (11
significant bits), with 2 (USE_FP16) to float16. For float32 results the tolerance is then
widened to the ``HFLOAT32`` row or the float16 row of the table; other dtypes are unaffected
(float16 and bfloat16 inputs are already that coarse).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterator, Sequence
from typing import Any
from dataclasses import dataclass

import numpy as np
from numpy.typing import DTypeLike

from ._ffi.discovery import BackendUnavailable
from ._dtypes import bfloat16, dtype_name
from . import ops
from .ops._registry import DOUBLE_THOUSANDTH, THRESHOLD, by_name, golden_dtype, operators


@dataclass(frozen=True)
class Tolerance:
    """``|actual - reference| <= atol * max(1, max|reference|) + rtol * |reference|``."""

    rtol: float
    atol: float
    name: str  # the table row that supplied it, e.g. "FLOAT" or "HFLOAT32 (cubeMathType=3)"

    @property
    def exact(self) -> bool:
        return self.rtol == 0 and self.atol == 0


# Per result dtype. Both sides of a comparison may sum the same terms in a different order (the
# NPU splits reductions across cores), so each row allows a few roundings of the result dtype.
TOLERANCES: dict[np.dtype, Tolerance] = {
    # float64 eps is 2.2e-16: even reductions over thousands of terms stay far below 1e-10,
    # while any real defect (a wrong index, divisor or border) is orders of magnitude above.
    np.dtype(np.float64): Tolerance(1e-10, 1e-10, "DOUBLE"),
    np.dtype(np.complex128): Tolerance(1e-10, 1e-10, "COMPLEX128"),
    # float32 eps is 1.2e-7; sums over up to ~1000 terms in another order stay below 1e-4.
    np.dtype(np.float32): Tolerance(1e-4, 1e-4, "FLOAT"),
    np.dtype(np.complex64): Tolerance(1e-4, 1e-4, "COMPLEX64"),
    # Two units in the last place (float16: 2 * 2^-10 relative at worst, bfloat16: 2 * 2^-7):
    # one because two float32 results a few roundings apart can round to neighbouring values,
    # one because the device may round an intermediate (e.g. the divided gradient) to the dtype.
    np.dtype(np.float16): Tolerance(2e-3, 2e-3, "FLOAT16"),
    bfloat16: Tolerance(1.6e-2, 1.6e-2, "BFLOAT16"),
}

# float32 results computed by a cube unit that rounds its inputs to HFLOAT32 (1 + 10 bits of
# significand): each product is off by up to 2^-10 relative to its size.
HFLOAT32 = Tolerance(1e-3, 1e-3, "HFLOAT32")

_CUBE_MATH_WIDENING = {
    1: (HFLOAT32, "cubeMathType=1 ALLOW_FP32_DOWN_PRECISION"),
    2: (TOLERANCES[np.dtype(np.float16)], "cubeMathType=2 USE_FP16"),
    3: (HFLOAT32, "cubeMathType=3 USE_HF32"),
}

_EXACT = Tolerance(0.0, 0.0, "exact")


def tolerance(dtype: DTypeLike, cube_math_type: int = 0) -> Tolerance:
    """The tolerance for a result of ``dtype`` (exact for integer and bool results).

    ``cube_math_type`` 1 or 3 widens float32 to HFLOAT32 precision, 2 to float16 precision.
    """
    dt = np.dtype(dtype)
    row = TOLERANCES.get(dt)
    if row is None:
        return _EXACT
    if dt == np.float32 and cube_math_type in _CUBE_MATH_WIDENING:
        wide, why = _CUBE_MATH_WIDENING[cube_math_type]
        return Tolerance(wide.rtol, wide.atol, f"{wide.name} ({why})")
    return row


# -- the standard CANN's operator test kits judge by -------------------------------------------

#: The ecosystem threshold standard (opbase's ops_precision_standard, floating-point computation):
#: an output passes when MERE < T and MARE < 10 T, where the relative error of an element is
#: ``|actual - golden| / (|golden| + 1e-7)``. T per output dtype; HIFLOAT32's row applies to float32
#: results a cube unit computed at HFLOAT32 precision (cubeMathType 1 and 3), FLOAT16's to
#: cubeMathType 2. (FLOAT64 is not in the standard: its results are held to FLOAT's T.)
CANN_THRESHOLDS: dict[str, float] = {"FLOAT16": 2.0**-10, "BFLOAT16": 2.0**-7, "FLOAT": 2.0**-13,
                                     "HFLOAT32": 2.0**-11}
RELATIVE_EPSILON = 1e-7
#: MindStudio's accuracy checker's small-value domain: a golden value below ``small`` in magnitude
#: has no meaningful relative error; it passes when its absolute error is at most ``absolute``.
SMALL_VALUES: dict[str, tuple[float, float]] = {"FLOAT": (1e-6, 1e-9), "FLOAT16": (1e-3, 1e-5),
                                                 "BFLOAT16": (1e-3, 1e-5)}
#: The "double thousandth" rule (conv1d/conv2d in MindStudio's accuracy checker): more than 99.9%
#: of the elements within a relative error of 0.1%.
THOUSANDTH = 1e-3
BINARY = "binary consistency"  # integer and bool outputs (THRESHOLD, DOUBLE_THOUSANDTH: ops/_registry.py)


@dataclass(frozen=True)
class Standard:
    """One output judged under a CANN test-kit standard: its name, the rule with its numbers,
    the verdict, and the figures the rule reads (name, value)."""

    name: str                                 # THRESHOLD, DOUBLE_THOUSANDTH or BINARY
    rule: str                                 # e.g. "MERE < 2^-13, MARE < 10 x 2^-13 (FLOAT)"
    passed: bool
    figures: tuple[tuple[str, float], ...]

    def __str__(self) -> str:
        shown = ", ".join(f"{k} {format_error(v) if k != 'within' else f'{v:.5f}'}" for k, v in self.figures)
        return f"{self.name} [{self.rule}]: {shown} -> {'pass' if self.passed else 'FAIL'}"


def _threshold_row(dtype: np.dtype, cube_math_type: int) -> str:
    name = dtype_name(dtype)
    if name == "FLOAT" and cube_math_type in (1, 3):
        return "HFLOAT32"
    if name == "FLOAT" and cube_math_type == 2:
        return "FLOAT16"
    return name if name in CANN_THRESHOLDS else "FLOAT"


def judge(actual: np.ndarray, expected: np.ndarray, precision: str = THRESHOLD,
          cube_math_type: int = 0) -> Standard:
    """``actual`` against the golden ``expected`` (same shape; of the result's dtype or a wider one,
    ``golden``'s) under the standard CANN's operator test kits use: binary consistency for integer
    and bool results, else ``precision`` (``THRESHOLD`` or ``DOUBLE_THOUSANDTH``), the threshold
    row the result's dtype's. A NaN or infinity where the golden value differs fails every
    standard."""
    dt = actual.dtype
    if not (np.issubdtype(dt, np.inexact) or dt == bfloat16):
        differ = int(np.count_nonzero(actual != expected))
        size = max(int(expected.size), 1)
        return Standard(BINARY, "every element equal", differ == 0, (("differing", differ / size),))
    a = actual.astype(np.float64).ravel()
    g = expected.astype(np.float64).ravel()
    finite = np.isfinite(a) & np.isfinite(g)
    nonfinite_bad = int(np.count_nonzero(~finite & ~((a == g) | (np.isnan(a) & np.isnan(g)))))
    a, g = a[finite], g[finite]
    relative = np.abs(a - g) / (np.abs(g) + RELATIVE_EPSILON)
    inf_nan = (("inf/nan differing", float(nonfinite_bad)),) if nonfinite_bad else ()
    if precision == DOUBLE_THOUSANDTH:
        within = float(np.count_nonzero(relative <= THOUSANDTH)) / max(relative.size, 1) if relative.size else 1.0
        return Standard(DOUBLE_THOUSANDTH, "over 99.9% of elements within 0.1% relative error",
                        within > 1 - THOUSANDTH and not nonfinite_bad, (("within", within),) + inf_nan)
    row = _threshold_row(dt, cube_math_type)
    t = CANN_THRESHOLDS[row]
    small, absolute = SMALL_VALUES.get("FLOAT" if row == "HFLOAT32" else row, SMALL_VALUES["FLOAT"])
    normal = np.abs(g) >= small
    mere = float(relative[normal].mean()) if normal.any() else 0.0
    mare = float(relative[normal].max(initial=0.0))
    small_bad = int(np.count_nonzero(np.abs(a - g)[~normal] > absolute))
    exponent = round(-np.log2(t))
    rule = f"MERE < 2^-{exponent}, MARE < 10 x 2^-{exponent} ({row}); |golden| < {small:g}: abs err <= {absolute:g}"
    figures = (("MERE", mere), ("MARE", mare)) + ((("small-value errors", float(small_bad)),) if small_bad else ())
    return Standard(THRESHOLD, rule, mere < t and mare < 10 * t and small_bad == 0 and not nonfinite_bad,
                    figures + inf_nan)


@dataclass(frozen=True)
class OutputComparison:
    """How one output of the backend under test compares with the reference."""

    output: str               # the C name of the output: out, gradInput, gradWeight, ...
    dtype: str                # the aclnn documentation's dtype name: FLOAT, FLOAT16, INT64, ...
    shape: tuple[int, ...]
    max_abs: float
    max_rel: float
    cosine: float
    mismatched: int           # elements outside the tolerance
    passed: bool
    tolerance: Tolerance
    note: str = ""            # why it failed when not for the numbers (shape, dtype, NaN)
    standard: Standard | None = None  # the CANN test-kit standard's verdict, reported (None: no comparable result)
    golden: str = ""          # what ``standard`` was judged against when a golden was given ("": the reference)


@dataclass(frozen=True)
class Comparison:
    """The result of ``compare``: one ``OutputComparison`` per output (iterable, indexable)."""

    op: str
    backends: tuple[str, str]  # (under test, reference)
    outputs: tuple[OutputComparison, ...]

    @property
    def passed(self) -> bool:
        return all(o.passed for o in self.outputs)

    @property
    def meets_standard(self) -> bool:
        """Every output also passes the CANN test-kit standard (reported; ``passed`` is the tolerance's)."""
        return all(o.standard is None or o.standard.passed for o in self.outputs)

    def __iter__(self) -> Iterator[OutputComparison]:
        return iter(self.outputs)

    def __len__(self) -> int:
        return len(self.outputs)

    def __getitem__(self, index: int) -> OutputComparison:
        return self.outputs[index]

    def __str__(self) -> str:
        tested, reference = self.backends
        title = f"{self.op}: {tested} vs {reference} -> {'ok' if self.passed else 'MISMATCH'}"
        rows = [[o.output, o.dtype, format_error(o.max_abs), format_error(o.max_rel), f"{o.cosine:.6f}",
                 f"rtol={o.tolerance.rtol:g} atol={o.tolerance.atol:g}", standard_cell(o), "ok" if o.passed else "FAIL"]
                for o in self.outputs]
        return title + "\n" + format_table(
            ["output", "dtype", "max abs err", "max rel err", "cosine", "tolerance", "CANN standard", "ok"], rows)


def standard_cell(o: OutputComparison) -> str:
    """The CANN standard's verdict and figures in a table cell: ``threshold MERE 1.2e-08 MARE
    3.4e-07 pass``."""
    if o.standard is None:
        return "-"
    short = {THRESHOLD: "threshold", DOUBLE_THOUSANDTH: "double 1/1000", BINARY: "binary"}[o.standard.name]
    figures = " ".join(f"{k} {v:.5f}" if k == "within" else f"{k} {format_error(v)}" for k, v in o.standard.figures)
    return f"{short} {figures} {'pass' if o.standard.passed else 'FAIL'}"


# The C names of each operator's outputs, in the order the Python function returns them.
OUTPUT_NAMES = {op.name: op.outputs for op in operators()}
# The standard each operator's floating-point outputs are judged by (``Operator.precision``).
PRECISION = {op.name: op.precision for op in operators()}


def resolve_op(op: str | Callable[..., Any], namespace: object = None) -> tuple[str, Callable[..., Any]]:
    """``(name, function)`` of an operator given by its function or its name.

    Names are looked up when called on ``namespace`` (default: ``aclnn_py.ops``; the tools pass
    the ``aclnn_py`` package), so a replaced function (a test's monkeypatch, a user's wrapper)
    is the one that runs.
    """
    if callable(op):
        return getattr(op, "__name__", type(op).__name__), op
    if not isinstance(op, str):
        raise TypeError(f"op must be an aclnn_py operator function or its name, got {type(op).__name__}")
    if op not in OUTPUT_NAMES:
        raise ValueError(f"unknown operator {op!r}; expected one of {', '.join(OUTPUT_NAMES)}")
    return op, getattr(ops if namespace is None else namespace, op)


def cube_math_type_of(fn: Callable[..., Any], args: Sequence[Any], kwargs: dict[str, Any]) -> int:
    """The ``cube_math_type`` a call passes (0 when the function has no such parameter)."""
    try:
        bound = inspect.signature(fn).bind_partial(*args, **kwargs)
    except (TypeError, ValueError):
        return int(kwargs.get("cube_math_type", 0))
    value = bound.arguments.get("cube_math_type", 0)
    return int(value) if isinstance(value, (int, np.integer)) else 0


@dataclass(frozen=True)
class Golden:
    """What CANN's standard judges results against (``golden``): ``result`` as the operator returns
    it (NumPy arrays, None for an output not computed), or None when there is none; ``source``
    says what it is, or why there is none."""

    result: Any
    source: str


def golden(op: str, args: Sequence[Any]) -> Golden:
    """The golden CANN's standard presumes for operator ``op`` (its Python or C name) on ``args``
    (NumPy arrays and values, as its function takes them): PyTorch CPU's result (``Operator.torch``)
    with every FLOAT16, BFLOAT16 and FLOAT input raised to the precision of ``GOLDEN_PRECISION``
    (FLOAT16/BFLOAT16 to FLOAT, FLOAT to DOUBLE; integer and bool inputs as they are), and tensors
    PyTorch creates meanwhile in that dtype too. Floating-point outputs stay in the raised dtype.

    ``Golden(None, why)`` where PyTorch is not installed or its function fails on the raised inputs
    (an argument it takes in one dtype only); the callers then judge against their reference and
    say why."""
    try:
        import torch
    except ImportError:
        return Golden(None, "no golden: PyTorch is not installed")
    operator = by_name(op)
    raised = golden_dtype(args)
    what = f"PyTorch CPU, float inputs in {dtype_name(raised)}" if raised is not None else "PyTorch CPU"
    default = torch.get_default_dtype()
    try:
        if raised == np.float64:
            torch.set_default_dtype(torch.float64)  # (a reference that makes a float tensor: in DOUBLE too)
        result = operator.torch(torch, *operator.torch_arguments(torch, operator.fresh(args), golden=True))
    except Exception as exc:  # noqa: BLE001 (any failure of PyTorch's function: reported, not raised)
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        return Golden(None, f"no golden: {what} failed ({type(exc).__name__}: {reason[:120]})")
    finally:
        torch.set_default_dtype(default)

    def host(r: Any) -> Any:
        if r is None or isinstance(r, np.ndarray):
            return r
        if isinstance(r, torch.Tensor):
            return (r.float() if r.dtype == torch.bfloat16 else r).numpy()
        return np.asarray(r)
    if isinstance(result, (tuple, list)):
        return Golden(tuple(host(r) for r in result), what)
    return Golden(host(result), what)


def default_backends() -> tuple[str, str]:
    """``(under test, reference)`` for this machine: ``("npu", "numpy")`` where an NPU is
    present, else ``("sim", "numpy")`` where the simulator loads (``BackendUnavailable`` saying
    both were looked for otherwise: comparing numpy with itself tells nothing)."""
    from ._runtime import loader

    if "sim" not in loader.loaded_backends() and loader.npu_present():
        return ("npu", "numpy")
    try:
        loader.library("sim")
    except BackendUnavailable as exc:
        raise BackendUnavailable(f"compare: no backend to compare with numpy on this machine: no NPU, and the "
                                 f"simulator does not load ({exc}); pass backends=(tested, reference)") from exc
    return ("sim", "numpy")


def compare(op: str | Callable[..., Any], *args: Any, backends: tuple[str, str] | None = None,
            rtol: float | None = None, atol: float | None = None, **kwargs: Any) -> Comparison:
    """Run ``op(*args, **kwargs)`` on two backends and compare the results.

    Args:
        op: an operator function (``aclnn_py.<op>``) or its Python name.
        *args: the operator's arguments, as for a normal call (NumPy arrays; device
            ``Tensor`` objects are accepted and copied to the host for the numpy backend).
        **kwargs: the operator's keyword arguments, likewise.
        backends: ``(under test, reference)``; default: ``("npu", "numpy")`` where an NPU is
            present, else ``("sim", "numpy")`` (``default_backends``). ``npu`` and ``sim``
            cannot be compared with each other in one process (they load libraries of the
            same names).
        rtol, atol: override the table's tolerance for every output.

    Returns:
        A ``Comparison``: ``.passed``, and one ``OutputComparison`` per output (``max_abs``,
        ``max_rel``, ``cosine``, ``passed``, ``tolerance``). Outputs that are None on both
        backends (a False ``output_mask`` entry) are left out.

    Raises:
        Whatever the operator raises on either backend (``AclnnError``, ``BackendUnavailable``).
    """
    if "backend" in kwargs:
        raise TypeError("compare: pass backends=(tested, reference), not backend=")
    if backends is None:
        backends = default_backends()
    if len(backends) != 2:
        raise ValueError(f"compare: backends must name two backends (tested, reference), got {backends!r}")
    name, fn = resolve_op(op)
    cube_math_type = cube_math_type_of(fn, args, kwargs)
    tested, reference = backends
    # (an in-place operator writes a copy on each backend: both compute from the original input)
    fresh = by_name(name).fresh
    actual = fn(*fresh(_for_backend(args, tested)), **kwargs, backend=tested)
    expected = fn(*fresh(_for_backend(args, reference)), **kwargs, backend=reference)
    return compare_results(name, actual, expected, (tested, reference), cube_math_type, rtol=rtol, atol=atol)


def compare_results(op: str, actual: Any, expected: Any, backends: tuple[str, str], cube_math_type: int = 0, *,
                    rtol: float | None = None, atol: float | None = None, golden: Golden | None = None) -> Comparison:
    """Compare two results of operator ``op`` that were computed already (``compare`` without
    the calls: an array, a ``Tensor``, or a tuple of them / None, as the operator returns).
    With ``golden`` (``golden()``), CANN's standard judges each output against the golden's
    output of the same shape, else (no golden, or none for that output) against ``expected``
    and ``OutputComparison.golden`` says why; the tolerance's verdict is always ``expected``'s."""
    actual, expected = _outputs(actual), _outputs(expected)
    if len(actual) != len(expected):
        raise ValueError(f"compare: {op} returned {len(actual)} outputs on {backends[0]} "
                         f"but {len(expected)} on {backends[1]}")
    names = OUTPUT_NAMES.get(op) or tuple(f"out{i}" if len(actual) > 1 else "out" for i in range(len(actual)))
    goldens = _outputs(golden.result) if golden is not None and golden.result is not None else []
    results = []
    for i, (out_name, a, e) in enumerate(zip(names, actual, expected)):
        if a is None and e is None:
            continue
        tol = tolerance(getattr(e if e is not None else a, "dtype", np.float64), cube_math_type)
        if rtol is not None or atol is not None:
            tol = Tolerance(tol.rtol if rtol is None else rtol, tol.atol if atol is None else atol, "given")
        g = goldens[i] if len(goldens) == len(actual) else None
        source = "" if golden is None else golden.source if g is not None else (
            f"the reference ({golden.source})" if golden.result is None else "the reference (the golden has no such output)")
        results.append(measure(out_name, a, e, tol, PRECISION.get(op, THRESHOLD), cube_math_type,
                               golden=g, golden_source=source))
    return Comparison(op, (backends[0], backends[1]), tuple(results))


def measure(output: str, actual: Any, expected: Any, tol: Tolerance, precision: str = THRESHOLD,
            cube_math_type: int = 0, *, golden: np.ndarray | None = None, golden_source: str = "") -> OutputComparison:
    """Compare one result with its reference (both NumPy arrays, or None): the figures, the
    tolerance's verdict (``passed``) and the CANN standard's (``standard``, from ``judge``), the
    latter against ``golden`` where it is given with the result's shape, else against the
    reference; ``golden_source`` (``OutputComparison.golden``) names what it was judged against."""
    if actual is None or expected is None:
        present = expected if actual is None else actual
        missing = "the tested backend" if actual is None else "the reference"
        return OutputComparison(output, dtype_name(present.dtype), tuple(present.shape), np.inf, np.inf, 0.0,
                                int(np.size(present)), False, tol, f"no result from {missing}")
    a, e = np.asarray(actual), np.asarray(expected)
    if a.shape != e.shape or a.dtype != e.dtype:
        note = (f"result {dtype_name(a.dtype)}{list(a.shape)} but reference "
                f"{dtype_name(e.dtype)}{list(e.shape)}")
        return OutputComparison(output, dtype_name(e.dtype), tuple(e.shape), np.inf, np.inf, 0.0,
                                int(e.size), False, tol, note)

    wide = np.complex128 if np.iscomplexobj(e) else np.float64
    a64, e64 = a.astype(wide).ravel(), e.astype(wide).ravel()
    # Non-finite values must agree exactly: NaN with NaN, an infinity with the same infinity.
    finite = np.isfinite(a64) & np.isfinite(e64)
    nonfinite_mismatch = ~finite & ~((a64 == e64) | (np.isnan(a64) & np.isnan(e64)))
    diff = np.zeros(a64.shape)
    diff[finite] = np.abs(a64[finite] - e64[finite])
    diff[nonfinite_mismatch] = np.inf
    magnitude = np.zeros(e64.shape)
    magnitude[finite] = np.abs(e64[finite])

    scale = max(1.0, float(magnitude.max(initial=0.0)))
    floor = tol.atol * scale
    if tol.exact:
        bad = diff > 0
    else:
        bad = diff > floor + tol.rtol * magnitude
    above_floor = (magnitude > 0) & (magnitude >= floor)
    max_rel = float((diff[above_floor] / magnitude[above_floor]).max(initial=0.0))
    if nonfinite_mismatch.any():
        max_rel = np.inf
    mismatched = int(bad.sum())
    note = "NaN or infinity where the reference differs" if nonfinite_mismatch.any() else ""
    against, judged_by = e, golden_source
    if golden is not None and np.shape(golden) == a.shape:
        # (an integer or bool result: the golden's values in its dtype, as the device's wrap: PyTorch sums int8 in int64)
        exact = not (np.issubdtype(a.dtype, np.inexact) or a.dtype == bfloat16)
        against = np.asarray(golden).astype(a.dtype) if exact else np.asarray(golden)
    elif golden is not None:
        judged_by = f"the reference (the golden's shape {list(np.shape(golden))} is not the result's)"
    standard = judge(a, against, precision, cube_math_type) if not np.iscomplexobj(e) else None
    return OutputComparison(output, dtype_name(e.dtype), tuple(e.shape), float(diff.max(initial=0.0)), max_rel,
                            _cosine(a64[finite], e64[finite]), mismatched, mismatched == 0, tol, note, standard,
                            judged_by)


def _cosine(a: np.ndarray, e: np.ndarray) -> float:
    norm_a, norm_e = float(np.linalg.norm(a)), float(np.linalg.norm(e))
    if norm_a == 0 and norm_e == 0:
        return 1.0
    if norm_a == 0 or norm_e == 0:
        return 0.0
    return float(np.clip(np.real(np.vdot(e, a)) / (norm_a * norm_e), -1.0, 1.0))


def _outputs(result: Any) -> list[Any]:
    """An operator's result as a list of host arrays (or None)."""
    results = list(result) if isinstance(result, tuple) else [result]
    return [r if r is None or isinstance(r, np.ndarray) else r.numpy() for r in results]


def _for_backend(args: Sequence[Any], backend: str) -> tuple[Any, ...]:
    """The arguments for one backend: device Tensors become host copies for numpy."""
    if backend != "numpy":
        return tuple(args)
    from ._runtime.tensor import Tensor

    return tuple(a.numpy() if isinstance(a, Tensor) else a for a in args)


def format_error(value: float) -> str:
    """An error figure for a table: 0, 1.234e-05, inf."""
    if value == 0:
        return "0"
    if not np.isfinite(value):
        return str(value)
    return f"{value:.3e}"


def format_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A plain-text table: left-aligned columns, a rule under the header."""
    widths = [max(len(str(c)) for c in column) for column in zip(headers, *rows)]
    lines = ["  ".join(str(c).ljust(w) for c, w in zip(line, widths)).rstrip() for line in [headers, *rows]]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


__all__ = ["CANN_THRESHOLDS", "Comparison", "Golden", "HFLOAT32", "OutputComparison", "Standard", "TOLERANCES",
           "Tolerance", "compare", "compare_results", "golden", "judge", "measure", "tolerance"]
