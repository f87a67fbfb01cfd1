"""``python -m aclnn_py selftest [--backend B]``: the first command on a new host.

Runs every operator on representative cases, in every dtype its aclnn documentation lists, with
seeded random inputs, on the backend under test (default: the current default backend), and
compares each output with a reference under the per-dtype tolerances of ``aclnn_py.compare`` and
reports each under the standard CANN's operator test kits use (MERE/MARE thresholds per dtype,
"double thousandth" for convolutions, binary consistency for integers: ``aclnn_py.compare``'s
``judge``). Prints one row per output: op, dtype, case, max abs err, max rel err, the CANN
standard's figures and verdict, ok (the tolerance's verdict; outputs below the standard are
listed after the table).

The reference is the numpy backend. When the backend under test *is* numpy, comparing it with
itself would prove nothing, so the reference is then PyTorch CPU (the project's test oracle)
if it is installed; without PyTorch there is nothing to compare against, which is reported and
is not a failure.

CANN's standard is judged against a golden computed more precisely than the result, as that
standard presumes: wherever PyTorch is installed, PyTorch CPU's result on the case's inputs raised
to the golden precision (FLOAT16 and BFLOAT16 to FLOAT, FLOAT to DOUBLE: ``aclnn_py.compare``'s
``golden``), whichever the reference. Without PyTorch, or where its function fails on the raised
inputs, the standard is judged against the reference, and the output's line below the table says so.

An operator the backend does not provide (an older CANN without it, or one this build of the
binding has not wired to the backend yet) is reported as ``n/a`` and is not a failure.

Exit status: 0 if every available case matched, 1 on any mismatch or error, 2 if the backend
cannot be used at all.
"""

from __future__ import annotations

import math

import argparse
import sys
import time
import traceback
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, TextIO

import numpy as np

import aclnn_py

from .._runtime import backend as _backend
from .._dtypes import bfloat16, dtype_name
from .._errors import ACL_ERROR_API_NOT_SUPPORT, AclnnError
from .._ffi.discovery import BackendUnavailable
from .._compare import (OUTPUT_NAMES, Comparison, compare_results, cube_math_type_of, format_error, format_table,
                        resolve_op, standard_cell)
from .._compare import golden as compute_golden
from ..ops._registry import by_name, operators
from ..ops._cases import OpCall
from .._numpy.progress import Progress

def cases(seed: int = 0) -> list[OpCall]:
    """The selftest's cases: every documented dtype of every operator, plus a few parameter
    forms in float32 (each operator's ``Operator.selftest``). Shapes are small and odd-sized so
    that edges, padding and partial windows are exercised and the simulator stays fast."""
    specs = [(op.case, shape, np.dtype(dt), params)
             for op in operators() for shape, dtypes, params in op.selftest for dt in dtypes]
    # One generator per case: a case's data does not depend on which cases ran before it.
    return [build(np.random.default_rng([seed, i]), shape, dt, **params)
            for i, (build, shape, dt, params) in enumerate(specs)]


# -- the PyTorch reference (for --backend numpy) ----------------------------------------------

def _torch_reference(call: OpCall, like: Any = None) -> Any:
    """The result of ``call`` computed by PyTorch CPU (the operator's ``Operator.torch``):
    float16/bfloat16 inputs are computed in float32 and rounded once, as the numpy backend and
    the NPU's float32 accumulation do. An integer output takes the integer dtype of the tested
    backend's (``like``: indices are INT32 or INT64 where PyTorch's are int64), every other
    output the case's dtype."""
    import torch

    op = by_name(call.op)
    result = op.torch(torch, *op.torch_arguments(torch, op.fresh(call.args), widen=True))
    def dtype(tested: Any) -> Any:
        kind = getattr(getattr(tested, "dtype", None), "kind", "")
        return tested.dtype if kind in "iu" and kind else call.dtype

    if isinstance(result, (tuple, list)):
        tested = like if isinstance(like, tuple) and len(like) == len(result) else (None,) * len(result)
        return tuple(None if r is None else r.numpy().astype(dtype(a)) for r, a in zip(result, tested))
    return result.numpy().astype(dtype(like))


def _torch_available() -> bool:
    try:
        import torch  # noqa: F401
    except ImportError:
        return False
    return True


# -- running ----------------------------------------------------------------------------------

@dataclass
class CaseResult:
    call: OpCall
    status: str                       # "ok", "FAIL", "ERROR", "n/a"
    comparison: Comparison | None = None
    message: str = ""                 # the error, or why the case is n/a


def _unavailable(exc: BaseException) -> str | None:
    """Why an exception means "this backend does not provide the operator", or None."""
    if isinstance(exc, NotImplementedError):
        return str(exc) or "not implemented on this backend"
    if isinstance(exc, AclnnError) and exc.status == ACL_ERROR_API_NOT_SUPPORT:
        return f"the library does not export it ({exc.api})"
    return None


def run_case(call: OpCall, backend: str, reference: str, golden: bool | None = None) -> CaseResult:
    """Run one case on ``backend`` and on ``reference`` (a backend name, or ``"torch"``); with
    ``golden`` (default: where PyTorch is installed), CANN's standard judged against the golden
    (``aclnn_py.compare``'s ``golden``)."""
    _, fn = resolve_op(call.op, aclnn_py)
    op = by_name(call.op)
    try:
        actual = fn(*op.fresh(call.args), backend=backend)  # (an in-place operator writes a copy)
    except Exception as exc:
        reason = _unavailable(exc)
        if reason is not None:
            return CaseResult(call, "n/a", message=reason)
        return CaseResult(call, "ERROR", message=f"on {backend}: {_describe(exc)}")
    try:
        if reference == "torch":
            expected = _torch_reference(call, actual)
        else:
            expected = fn(*op.fresh(call.args), backend=reference)
        if golden is None:
            golden = _torch_available()
        comparison = compare_results(call.op, actual, expected, (backend, reference),
                                     cube_math_type_of(fn, call.args, {}),
                                     golden=compute_golden(call.op, call.args) if golden else None)
    except Exception as exc:
        return CaseResult(call, "ERROR", message=f"on {reference} (reference): {_describe(exc)}")
    return CaseResult(call, "ok" if comparison.passed else "FAIL", comparison)


def _describe(exc: BaseException) -> str:
    text = f"{type(exc).__name__}: {exc}"
    if not isinstance(exc, (AclnnError, BackendUnavailable, NotImplementedError)):
        # An unexpected exception is a bug somewhere: say where.
        frame = traceback.extract_tb(exc.__traceback__)[-1]
        text += f" (at {frame.filename}:{frame.lineno})"
    return text


def _rows(results: Sequence[CaseResult]) -> list[list[str]]:
    rows = []
    for r in results:
        multi = len(OUTPUT_NAMES.get(r.call.op, ())) > 1
        if r.comparison is None:
            rows.append([r.call.op, dtype_name(r.call.dtype), r.call.case, "-", "-", "-", r.status])
            continue
        for o in r.comparison:
            op = f"{r.call.op}:{o.output}" if multi else r.call.op
            rows.append([op, o.dtype, r.call.case, format_error(o.max_abs), format_error(o.max_rel),
                         standard_cell(o), "ok" if o.passed else "FAIL"])
    return rows


def run_selftest(backend: str | None = None, ops: Sequence[str] | None = None, seed: int = 0, *,
                 out: TextIO | None = None, progress: bool | None = None) -> int:
    """Run the selftest, print its table to ``out`` (stdout), and return the exit status."""
    out = sys.stdout if out is None else out
    backend = _backend.resolve(backend)
    if backend == "numpy":
        if not _torch_available():
            print("selftest: the backend under test is numpy, and the other reference, PyTorch, is not "
                  "installed: nothing to compare against (pip install torch to compare numpy with it; "
                  "use --backend sim or --backend npu to test those backends against numpy).", file=out)
            return 0
        reference = "torch"
    else:
        reference = "numpy"
        try:
            from .._runtime import loader

            loader.library(backend).stream()  # libraries load, aclInit, the device opens
        except (BackendUnavailable, AclnnError) as exc:
            print(f"selftest: backend {backend!r} cannot be used:\n{exc}\n"
                  "(`python -m aclnn_py info` shows what was found)", file=out)
            return 2

    selected = [c for c in cases(seed) if not ops or c.op in ops]
    with_golden = _torch_available()
    print(f"aclnn_py selftest: {backend} vs {'PyTorch CPU' if reference == 'torch' else reference}, "
          f"{len(selected)} cases, seed {seed}; CANN's standard against "
          + ("PyTorch CPU's golden (float inputs raised: FLOAT16/BFLOAT16 to FLOAT, FLOAT to DOUBLE)" if with_golden
             else "the reference (no PyTorch for the golden)"), file=out, flush=True)
    started = time.perf_counter()
    results = []
    with Progress(f"selftest on {backend}", len(selected), "cases", enabled=progress) as shown:
        for i, call in enumerate(selected):
            results.append(run_case(call, backend, reference, with_golden))
            shown.update(i + 1)
    elapsed = time.perf_counter() - started

    print(format_table(["op", "dtype", "case", "max abs err", "max rel err", "CANN standard", "ok"], _rows(results)),
          file=out)
    for r in results:
        if r.status == "ERROR":
            print(f"ERROR {r.call.describe()}: {r.message}", file=out)
        elif r.status == "FAIL":
            for o in r.comparison or ():
                if not o.passed:
                    print(f"FAIL {r.call.describe()} {o.output}: {o.mismatched} of {math.prod(map(int, o.shape))} "
                          f"elements outside rtol={o.tolerance.rtol:g} atol={o.tolerance.atol:g} "
                          f"({o.tolerance.name}), cosine {o.cosine:.6f}"
                          + (f"; {o.note}" if o.note else ""), file=out)
    for r in results:  # reported, not failed: see aclnn_py.compare on what the standard presumes
        for o in r.comparison or ():
            if o.standard is not None and not o.standard.passed:
                print(f"below CANN's standard: {r.call.describe()} {o.output}: {o.standard}"
                      + (f" (against {o.golden})" if o.golden else ""), file=out)
            elif with_golden and o.golden.startswith("the reference"):
                print(f"CANN's standard against {o.golden}: {r.call.describe()} {o.output}", file=out)
    judged = [o.standard for r in results for o in r.comparison or () if o.standard is not None]
    print(f"CANN's standard: {sum(j.passed for j in judged)} of {len(judged)} outputs pass", file=out)
    counts = {s: sum(r.status == s for r in results) for s in ("ok", "FAIL", "ERROR", "n/a")}
    summary = (f"{len(results)} cases in {elapsed:.1f} s: {counts['ok']} ok, {counts['FAIL']} mismatched, "
               f"{counts['ERROR']} errors")
    skipped = sorted({r.call.op for r in results if r.status == "n/a"})
    if skipped:
        reasons = {r.call.op: r.message for r in results if r.status == "n/a"}
        summary += f", {counts['n/a']} not available on {backend}:\n" + "\n".join(
            f"  {op}: {reasons[op]}" for op in skipped)
    print(summary, file=out)
    failed = counts["FAIL"] + counts["ERROR"]
    print("selftest FAILED" if failed else "selftest passed", file=out)
    return 1 if failed else 0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--backend", choices=_backend.BACKENDS,
                        help="the backend under test (default: the current default backend)")
    parser.add_argument("--op", action="append", choices=list(OUTPUT_NAMES), metavar="OP",
                        help="only this operator (repeatable); one of: " + ", ".join(OUTPUT_NAMES))
    parser.add_argument("--seed", type=int, default=0, help="seed of the random inputs (default 0)")


def run(args: argparse.Namespace) -> int:
    return run_selftest(args.backend, args.op, args.seed)


__all__ = ["CaseResult", "cases", "run_case", "run_selftest"]
