"""``python -m aclnn_py bench OP``: time one operator on one backend.

Runs ``--warmup`` untimed calls, then ``--repeats`` timed ones, and prints the median, min and
max. On ``npu`` and ``sim`` the inputs are copied to the device once (``aclnn_py.Tensor``) and
each call is timed on the device: an event recorded on the stream before the call and one after
it (``aclrtRecordEvent``), ``aclrtEventElapsedTime`` between them; so the figure is the device
work, without host copies. The host time of each call (launch plus waiting for the end event)
is reported too. On ``numpy`` the figure is wall time.

The case: the forward input's shape (``--shape N,C,H,W``; default per operator, below), the
dtype, and the operator's other parameters, each overridable with ``--param NAME=VALUE``
(a Python literal: ``--param kernel_size=5 --param stride=(2,1)``). The names are the operator
functions' Python parameter names.

A progress line is shown on stderr (when it is a terminal, or with ``--progress always``) once a
run has taken more than a second.
"""

from __future__ import annotations

import argparse
import ast
import inspect
import json
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

import aclnn_py
from numpy.typing import DTypeLike

from .._runtime import backend as _backend
from .._dtypes import bfloat16, dtype_name
from .._errors import AclnnError
from .._ffi.discovery import BackendUnavailable
from .._compare import resolve_op
from ..ops._registry import by_name, operators
from ..ops._cases import OpCall
from .._numpy.progress import Progress

# op -> (the forward input's default shape, default parameters): each operator's ``Operator.bench``,
# mid-sized layers of a CNN.
DEFAULTS: dict[str, tuple[tuple[int, ...], dict[str, Any]]] = {op.name: op.bench for op in operators()}

DTYPES = {"float32": np.dtype(np.float32), "float16": np.dtype(np.float16), "bfloat16": bfloat16,
          "float64": np.dtype(np.float64), "complex64": np.dtype(np.complex64),
          "complex128": np.dtype(np.complex128), "int8": np.dtype(np.int8), "uint8": np.dtype(np.uint8),
          "int16": np.dtype(np.int16), "int32": np.dtype(np.int32), "int64": np.dtype(np.int64),
          "bool": np.dtype(np.bool_)}


@dataclass
class Timing:
    """Milliseconds per call: every sample, and its median, min and max."""

    samples: list[float]

    @property
    def median(self) -> float:
        return statistics.median(self.samples)

    @property
    def min(self) -> float:
        return min(self.samples)

    @property
    def max(self) -> float:
        return max(self.samples)

    def to_dict(self) -> dict[str, Any]:
        return {"median": self.median, "min": self.min, "max": self.max, "samples": self.samples}


@dataclass
class BenchResult:
    op: str
    backend: str
    call: OpCall
    warmup: int
    repeats: int
    device: Timing | None   # aclrt events (npu, sim)
    host: Timing            # wall time per call; on npu/sim including the wait for the device

    def to_dict(self) -> dict[str, Any]:
        return {"op": self.op, "backend": self.backend, "dtype": dtype_name(self.call.dtype),
                "inputs": [list(a.shape) for a in self.call.args if isinstance(a, np.ndarray)],
                "case": self.call.case, "warmup": self.warmup, "repeats": self.repeats,
                "device_ms": self.device.to_dict() if self.device else None, "host_ms": self.host.to_dict()}


def make_call(op: str, shape: Sequence[int] | None = None, dtype: DTypeLike = "float32",
              params: dict[str, Any] | None = None,
              seed: int = 0) -> OpCall:
    """The benchmark case of ``op``: its defaults, overridden by ``shape``/``dtype``/``params``."""
    if op not in DEFAULTS:
        raise ValueError(f"unknown operator {op!r}; expected one of {', '.join(DEFAULTS)}")
    default_shape, builder_params = DEFAULTS[op]
    default_params = shown_params(builder_params)
    merged = {**default_params, **(params or {})}
    unknown = sorted(set(merged) - set(default_params))
    if unknown:
        raise ValueError(f"{op} has no parameter {', '.join(unknown)}; its parameters are "
                         f"{', '.join(f'{k}={v!r}' for k, v in default_params.items())}")
    dt = DTYPES[dtype] if isinstance(dtype, str) else np.dtype(dtype)
    to_builder = {shown: name for name, shown in _PYTHON_NAMES.items()}
    call: OpCall = by_name(op).case(np.random.default_rng(seed), tuple(shape or default_shape), dt,
                                     **{to_builder.get(k, k): v for k, v in merged.items()})
    return call


# The case builders' short names -> the operator functions' Python names, which users see.
_PYTHON_NAMES = {"kernel": "kernel_size"}


def shown_params(params: dict[str, object]) -> dict[str, object]:
    """A case's parameters under the names users see (the operators' Python names)."""
    return {_PYTHON_NAMES.get(k, k): v for k, v in params.items()}


def _release(result: object) -> None:
    """Close the device Tensors an op call returned."""
    for r in result if isinstance(result, tuple) else (result,):
        if r is not None and hasattr(r, "close"):
            r.close()


def _time_host(fn: Callable[[], object], warmup: int, repeats: int, progress: Progress,
               restore: Callable[[], None] = lambda: None) -> Timing:
    """``restore()`` runs untimed before each call (an in-place operator's input put back)."""
    samples = []
    for i in range(warmup + repeats):
        restore()
        start = time.perf_counter()
        fn()
        elapsed = time.perf_counter() - start
        if i >= warmup:
            samples.append(elapsed * 1e3)
        progress.update(i + 1)
    return Timing(samples)


def _time_device(lib: Any, fn: Callable[[list[Any]], object], args: tuple[Any, ...], warmup: int, repeats: int,
                 progress: Progress, written: int | None = None) -> tuple[Timing, Timing]:
    """Device time between two events around each call, and the host time of each call;
    ``written``: the argument an in-place operator writes, uploaded again (untimed) before
    each call."""
    from .._runtime.tensor import Tensor

    ffi = lib.ffi
    stream = lib.stream()
    device_args: list[Any] = []
    events = []
    try:
        device_args = [Tensor.from_numpy(a, backend=lib.backend) if isinstance(a, np.ndarray) else a for a in args]
        for _ in range(2):
            p = ffi.new("aclrtEvent *")
            lib.call("aclrtCreateEvent", p)
            events.append(p[0])
        start, end = events
        elapsed = ffi.new("float *")
        device, host = [], []
        for i in range(warmup + repeats):
            if written is not None and i:
                original = np.ascontiguousarray(args[written])
                device_args[written].buffer.upload(original.ctypes.data, original.nbytes)
            began = time.perf_counter()
            lib.call("aclrtRecordEvent", start, stream)
            result = fn(device_args)
            lib.call("aclrtRecordEvent", end, stream)
            lib.call("aclrtSynchronizeEvent", end)
            took = time.perf_counter() - began
            lib.call("aclrtEventElapsedTime", elapsed, start, end)
            if not any(result is a for a in device_args):  # (an in-place operator returns its argument)
                _release(result)
            lib.synchronize()  # frees the call's workspace
            if i >= warmup:
                device.append(float(elapsed[0]))
                host.append(took * 1e3)
            progress.update(i + 1)
        return Timing(device), Timing(host)
    finally:
        for event in events:
            lib.fn("aclrtDestroyEvent")(event)
        for t in device_args:
            if isinstance(t, Tensor):
                t.close()


def benchmark(call: OpCall, backend: str | None = None, *, warmup: int = 3, repeats: int = 20,
              progress: bool | None = None) -> BenchResult:
    """Time ``call`` on ``backend`` (default: the current backend); see the module docstring.

    ``progress``: True/False to force the progress line on/off, None for "on a terminal".
    """
    if warmup < 0 or repeats < 1:
        raise ValueError(f"warmup must be >= 0 and repeats >= 1, got warmup={warmup}, repeats={repeats}")
    backend = _backend.resolve(backend)
    _, fn = resolve_op(call.op, aclnn_py)
    op = by_name(call.op)
    args = op.fresh(call.args)  # (an in-place operator's written argument: a copy, put back before each call)
    with Progress(f"bench {call.op} on {backend}", warmup + repeats, "calls", enabled=progress) as shown:
        if backend == "numpy":
            host = _time_host(lambda: fn(*args, backend="numpy"), warmup, repeats, shown, op.restorer(args))
            return BenchResult(call.op, backend, call, warmup, repeats, None, host)
        from .._runtime import loader

        lib = loader.library(backend)
        device, host = _time_device(lib, lambda args: fn(*args, backend=backend), call.args,
                                    warmup, repeats, shown, op.written)
        return BenchResult(call.op, backend, call, warmup, repeats, device, host)


def format_result(result: BenchResult) -> str:
    def line(label: str, t: Timing) -> str:
        return f"  {label:<30} median {t.median:10.3f} ms   min {t.min:10.3f} ms   max {t.max:10.3f} ms"

    lines = [f"{result.call.describe()} on {result.backend}",
             f"  {result.repeats} repeats after {result.warmup} warm-up calls"]
    if result.device is not None:
        lines.append(line("device time (aclrt events)", result.device))
        lines.append(line("host time (call + wait)", result.host))
    else:
        lines.append(line("wall time", result.host))
    return "\n".join(lines)


# -- command line ---------------------------------------------------------------------------

def _shape(text: str) -> tuple[int, ...]:
    try:
        dims = tuple(int(d) for d in text.replace("x", ",").split(",") if d.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a shape like 8,64,56,56, got {text!r}") from None
    if not dims or min(dims) < 0:
        raise argparse.ArgumentTypeError(f"expected a shape like 8,64,56,56, got {text!r}")
    return dims


def _param(text: str) -> tuple[str, object]:
    name, sep, value = text.partition("=")
    if not sep or not name.strip():
        raise argparse.ArgumentTypeError(f"expected NAME=VALUE, got {text!r}")
    try:
        return name.strip(), ast.literal_eval(value.strip())
    except (ValueError, SyntaxError):
        return name.strip(), value.strip()  # a bare word, e.g. index_dtype=int32


def _defaults_text() -> str:
    lines = ["default cases (forward input shape; parameters):"]
    for op, (shape, params) in DEFAULTS.items():
        builder = by_name(op).case
        lines.append(f"  {op}: {','.join(map(str, shape))}; "
                     + ", ".join(f"{k}={v!r}" for k, v in shown_params(params).items()))
        doc = inspect.getdoc(builder)
        if doc:
            lines.append(f"      {doc.splitlines()[0]}")
    return "\n".join(lines)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("op", choices=list(DEFAULTS), metavar="OP", help="one of: " + ", ".join(DEFAULTS))
    parser.add_argument("--backend", choices=_backend.BACKENDS, help="default: the current default backend")
    parser.add_argument("--shape", type=_shape, help="the forward input's shape, e.g. 8,64,56,56")
    parser.add_argument("--dtype", choices=list(DTYPES), default="float32", metavar="DTYPE",
                        help="float32 (default), float16, bfloat16, float64, complex64, complex128, int8, uint8, "
                             "int16, int32, int64 or bool")
    parser.add_argument("--param", type=_param, action="append", default=[], metavar="NAME=VALUE",
                        help="override one of the operator's parameters (repeatable)")
    parser.add_argument("--repeats", type=int, default=20, help="timed calls (default 20)")
    parser.add_argument("--warmup", type=int, default=3, help="untimed calls first (default 3)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random inputs (default 0)")
    parser.add_argument("--progress", choices=("auto", "always", "never"), default="auto",
                        help="the progress line on stderr: auto = when stderr is a terminal")
    parser.add_argument("--json", action="store_true", help="print the result as JSON (with every sample)")
    parser.epilog = _defaults_text()


def run(args: argparse.Namespace) -> int:
    try:
        call = make_call(args.op, args.shape, args.dtype, dict(args.param), args.seed)
    except (ValueError, TypeError) as exc:
        print(f"bench: {exc}", file=sys.stderr)
        return 2
    progress = {"auto": None, "always": True, "never": False}[args.progress]
    try:
        result = benchmark(call, args.backend, warmup=args.warmup, repeats=args.repeats, progress=progress)
    except BackendUnavailable as exc:
        print(f"bench: {exc}", file=sys.stderr)
        return 2
    except (AclnnError, NotImplementedError, ValueError, TypeError) as exc:
        print(f"bench: {call.describe()} failed: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    print(json.dumps(result.to_dict(), indent=2) if args.json else format_result(result))
    return 0


__all__ = ["DEFAULTS", "BenchResult", "Timing", "benchmark", "format_result", "make_call"]
