#!/usr/bin/env python3
"""Time every available backend against PyTorch CPU, each library in a process of its own.

PyTorch, the numpy backend and the simulator each run in a worker process of their own (a
library's threads keep spinning for a while after its calls and would slow the next library's
call in a shared process), and the workers take turns case by case, round after round, so that
machine noise hits all of them alike; before each sample the run waits until every worker's
threads have gone idle. A sample is one call, or a batch of calls lasting >= 2 ms for the tiny
cases, taken in turn by two worker processes per library (the spread between them is printed),
after the library has run the call for 20 ms (a pause leaves threads and idle cores
asleep, a cold start no loop of calls has). PyTorch is timed with 2 threads and with 1, and its
faster figure is the one compared
(its 2-thread calls sometimes wait a scheduler tick for their second worker). Prints the median
milliseconds per call for each runner, the ratio backend/PyTorch, and the geometric mean of the
ratios per backend, over every case and apart over the seed operators' cases and the others'.  Every
backend's result is checked against PyTorch's in the same run (the tolerance table), and judged under
CANN's test-kit standard against PyTorch's golden (aclnn_py._compare.golden: float inputs raised, FLOAT
to DOUBLE, computed once per case by a PyTorch worker).  With both, ``sim/np`` is the simulator's time
over the numpy backend's (the cases above TARGET_SIM_RATIO listed), and ``dev/np`` that of "simdev",
the simulator on device-resident Tensors (no copies per call); for the memory-bound operators
``np/copy`` is the numpy backend's time over a copy of as many bytes as the call must touch.

    python scripts/bench.py                 # every case, every available backend
    python scripts/bench.py --op conv       # only cases whose name contains "conv"
    python scripts/bench.py --backends numpy --repeats 15
"""

from __future__ import annotations

import argparse
import math
import os
import pickle
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from dataclasses import dataclass
from typing import Callable

import numpy as np

import aclnn_py
from aclnn_py._numpy import blas as _blas  # (the name of NumPy's OpenBLAS kernels)


@dataclass
class Case:
    name: str
    make: Callable[[np.random.Generator], tuple]  # -> the positional arguments of `ours`
    ours: Callable                                # aclnn_py function
    theirs: Callable                              # (torch, *torch_args) -> result
    memory_bound: bool = False                    # timed against the copy of the bytes it touches too
    restorer: Callable = lambda args: lambda: None  # Operator.restorer: an in-place input put back per call
    torch_arguments: Callable = lambda torch, args: tuple(args)  # Operator.torch_arguments
    written: int | None = None                    # Operator.written, the argument written in place: put back per call
    # ^ (None where the operator overwrites it whole: Operator.overwrites)
    seed: bool = False                            # its operator is a seed (Operator.seed): summarised apart


# Layers of real networks (ResNet-50, MobileNetV2, U-Net, ViT-B/16, DeepLab, SegNet, 3-D U-Net),
# batch sizes cut to keep the whole run to a few minutes: each operator's ``Operator.benchmarks``
# (aclnn_py/ops/<op>.py), checked and timed against its ``Operator.torch``.
CASES = [Case(name, make, op.function, op.torch, op.memory_bound, op.restorer, op.torch_arguments,
              None if op.overwrites else op.written, op.seed)
         for op in aclnn_py.ops.OPERATORS for name, make in op.benchmarks]


def available_backends() -> list[str]:
    """numpy, and each of sim and npu that loads; "simdev" (``_device_call``) after sim."""
    names = ["numpy"]
    for name in ("sim", "npu"):
        try:
            from aclnn_py._runtime import loader

            loader.library(name)
        except Exception:
            continue
        names.append(name)
        if name == "sim":
            names.append("simdev")
    return names


# "simdev" is a runner of the sim worker (the simulator on device-resident Tensors), not a
# worker of its own.
def _worker_of(backend: str) -> str:
    return "sim" if backend == "simdev" else backend


# A sample lasts at least this long: a call of a few microseconds is timed as a batch of
# calls (as timeit does), or the clock and one cold cache would dominate it.
_MIN_SAMPLE_SECONDS = 2e-3


def _time_once(fn, number: int = 1) -> float:
    """Seconds per call, over ``number`` consecutive calls."""
    t0 = time.perf_counter()
    for _ in range(number):
        fn()
    return (time.perf_counter() - t0) / number


def _batch_size(fn) -> int:
    """How many calls make one sample of at least _MIN_SAMPLE_SECONDS."""
    per_call = _time_once(fn)
    return max(1, min(10_000, math.ceil(_MIN_SAMPLE_SECONDS / max(per_call, 1e-9))))


def _numpy_result(result):
    """A result of PyTorch or of aclnn_py as NumPy arrays (None kept), for compare_results."""
    if isinstance(result, (tuple, list)):
        return tuple(None if r is None else np.asarray(r) for r in result)
    return np.asarray(result)


def _verify(case, backend_result, torch_result, backend: str, golden=None) -> tuple[str, list[bool], int]:
    """("", verdicts, 0) when the backend's result matches PyTorch's within the tolerance table, else
    (why not, verdicts, ours): verdicts are CANN's standard's, one per output it judged, against
    ``golden`` (aclnn_py._compare.golden: PyTorch CPU at the golden precision) where there is one
    for the output, else against PyTorch's result (the message then says why); ``ours`` counts the
    outputs below the standard whose PyTorch float32 counterpart meets it against the same golden
    (the others: a float32 result of that computation, PyTorch's too, cannot meet it there)."""
    from aclnn_py._compare import compare_results

    name = case.ours.__name__
    report = compare_results(name, backend_result, torch_result, (backend, "torch"), golden=golden)
    verdicts = [o.standard.passed for o in report.outputs if o.standard is not None]
    failed = [o.output for o in report.outputs if not o.passed]
    # Within the tolerance, but below the standard CANN's test kits use: said, not counted as a
    # wrong result, with PyTorch's own float32 result judged against the same golden beside it;
    # and where that standard could not be judged against the golden, why.
    baseline = {o.output: o.standard for o in compare_results(name, torch_result, torch_result, ("torch", "torch"),
                                                              golden=golden).outputs}
    below, ours = [], 0
    for o in report.outputs:
        if o.standard is not None and not o.standard.passed:
            theirs = baseline.get(o.output)
            ours += theirs is None or theirs.passed
            below.append(f"under CANN's standard: {o.output} {o.standard}" + (
                "" if theirs is None else f" (PyTorch's float32 result: {_figures(theirs)})"))
    instead = [f"CANN's standard of {o.output} against {o.golden}" for o in report.outputs
               if o.standard is not None and o.golden.startswith("the reference")]
    if failed:
        return "MISMATCH " + ",".join(failed), verdicts, ours
    return "; ".join(below + instead), verdicts, ours


def _figures(standard) -> str:
    """A standard's figures and verdict, short: ``MERE 1.2e-07, MARE 3.4e-03 -> FAIL``."""
    return str(standard).split("]: ", 1)[-1]


# Below this many bytes touched a call's cost is its per-call overhead, not memory traffic.
_FLOOR_MIN_BYTES = 1 << 20


def _copy_runner(args, result):
    """For a memory-bound case: a copy of as many bytes as the call must touch (its array
    arguments read once, its result written once), the floor no kernel can beat."""
    arrays = [t for a in args for t in (a if isinstance(a, list) else [a]) if isinstance(t, np.ndarray)]
    touched = sum(a.nbytes for a in arrays) + sum(
        r.nbytes for r in (result if isinstance(result, tuple) else (result,)) if r is not None)
    if touched < _FLOOR_MIN_BYTES:
        return None
    src = np.ones(touched // 8, np.float32)     # copying n bytes reads n and writes n
    dst = np.empty_like(src)
    return lambda: np.copyto(dst, src)


def _geomean(values: list[float]) -> float:
    return math.exp(sum(math.log(v) for v in values) / len(values))


# Issue #13's targets, which the summary lists the cases past: a backend's time at most this
# many times PyTorch's on every case, and a memory-bound case's at most this many times the
# copy of the bytes it touches.
TARGET_RATIO = 2.0
TARGET_FLOOR_RATIO = 3.0
# Issue #23's target for the simulator: its time at most this many times the numpy backend's.
TARGET_SIM_RATIO = 3.0


def group_means(named: list[tuple[str, float]]) -> list[tuple[str, float, int]]:
    """``(group, geometric mean, cases)`` of the ratios of ``named`` ``(case name, ratio)``, one
    group for the cases of the seed operators and one for the rest (each case's operator's
    ``Operator.seed``, through CASES), each only if it has cases."""
    seed = {c.name: c.seed for c in CASES}
    groups = [("seed operators", [r for n, r in named if seed[n]]),
              ("the others (issue #23)", [r for n, r in named if not seed[n]])]
    return [(label, _geomean(rs), len(rs)) for label, rs in groups if rs]


def _past(named: list[tuple[str, float]], limit: float) -> str:
    """``name ratio`` of the cases above ``limit``, worst first, or "none"."""
    above = sorted((r for r in named if r[1] > limit), key=lambda r: -r[1])
    return "; ".join(f"{name} {ratio:.2f}x" for name, ratio in above) or "none"


# The matrix product the numpy and PyTorch workers time (_serve's "matmul"): the numpy backend's
# convolutions are mostly float32 matrix products, so its rate bounds them (this machine, AMD
# EPYC with AVX-512, 2 cores: 248-255 GFLOP/s with OPENBLAS_CORETYPE=Haswell, 474 with
# OpenBLAS's own kernels).  PyTorch's is printed beside it for reference only: its CPU
# convolutions run oneDNN's own kernels, not this product (here torch.mm 216 GFLOP/s on 2
# threads, while its conv3d k3 case's 906 MFLOP take 2.0-2.3 ms: 390-450 GFLOP/s).
_MATMUL_SIZE = 1024


def _matmul_rate(torch) -> float:
    """GFLOP/s of the best of 7 float32 ``_MATMUL_SIZE``-square products, by PyTorch when given
    (on the threads the worker set) or NumPy, after 3 untimed ones."""
    n = _MATMUL_SIZE
    a, b = (np.random.default_rng(k).standard_normal((n, n), dtype=np.float32) for k in range(2))
    if torch is not None:
        ta, tb = torch.from_numpy(a), torch.from_numpy(b)
        product = lambda: torch.mm(ta, tb)  # noqa: E731
    else:
        product = lambda: np.matmul(a, b)  # noqa: E731
    for _ in range(3):
        product()
    return 2 * n ** 3 / min(_time_once(product) for _ in range(7)) / 1e9


# -- each library in a process of its own ------------------------------------------------------
#
# PyTorch's OpenMP workers and OpenBLAS's threads keep running for a while after their library's
# call returns (spinning, or yielding in a loop, before they sleep: ~0.1 s for this NumPy's
# OpenBLAS), and in one process with the other library they slow its next call (measured with
# both in this process: PyTorch's 2-thread resnet 3x3 at 17 ms instead of 8 ms alone, a gather at
# 12.7 ms instead of 0.73). So each library runs in a worker process of its own (PyTorch on 2
# threads, PyTorch on one, the
# numpy backend with its copy floor; the simulator), the workers take turns round by round as
# before, and before each sample this process waits until every worker's threads have gone idle
# (their CPU time stops growing; ``_settle``): every sample is timed on a machine the other
# libraries have left alone, as a user running only one of them has it.

def _case_arguments(index: int):
    """The arguments of CASES[index], the same in every worker: its own generator, seeded by
    its place in CASES (not by which cases --op picked)."""
    return CASES[index].make(np.random.default_rng(index))


def _device_call(case, args):
    """A call of the simulator on device-resident data, as a chain of calls on
    ``aclnn_py.Tensor``s has it: the case's arrays (those in lists too, e.g. Cat's) are
    uploaded once, here; the call runs the operator on them, waits for the stream (the
    simulator runs queued kernels there, so a sample holds the kernel's work) and returns the
    output Tensor(s). An in-place operator's device input is put back first from a host
    original kept here (``Tensor.copy_from``: one aclrtMemcpy), as the numpy path's ``restorer``
    puts the array back by one copy (an InplaceCopy call on the device instead cost 10-12 us
    more than the copy on a small input, a tiny case's whole call)."""
    from aclnn_py._runtime import loader

    def put(a):
        return aclnn_py.Tensor.from_numpy(a, backend="sim") if isinstance(a, np.ndarray) else a

    dev = [type(a)(put(t) for t in a) if isinstance(a, (list, tuple)) else put(a) for a in args]
    restore = lambda: None  # noqa: E731
    if case.written is not None and isinstance(args[case.written], np.ndarray):
        target, original = dev[case.written], args[case.written].copy()
        restore = lambda: target.copy_from(original)  # noqa: E731
    # The binding's own wait for this thread's stream (Tensor.numpy() and copy_from wait with
    # it). aclnn_py has no public function for it; capi.aclrtSynchronizeDevice, the C mirror,
    # cost 10 us a call here against 0.6 us, more than a tiny case's whole call.
    synchronize = loader.library("sim").synchronize

    def call():
        restore()
        out = case.ours(*dev, backend="sim")
        synchronize()
        return out
    return call


def _worker_runners(name: str, index: int, torch, device: bool = False, golden: bool = False):
    """``(runners, results, failed, golden)`` of CASES[index] in the worker ``name``
    (``_WORKERS``): runners by name, the result of each runner verified against PyTorch by its
    name, ``{runner: why}`` for a runner that could not be made, and with ``golden`` (a PyTorch
    worker) aclnn_py._compare.golden's result for the case, else None. With ``device``, the sim
    worker adds the runner "simdev" (``_device_call``)."""
    case = CASES[index]
    args = _case_arguments(index)
    runners: dict = {}
    results: dict = {}
    failed: dict = {}
    if device and name == "sim":
        # (before the NumPy-argument call below writes an in-place operator's array)
        try:
            device_call = _device_call(case, args)
            results["simdev"] = _numpy_result(device_call())   # (np.asarray downloads a Tensor)
            runners["simdev"] = lambda: (device_call(), None)[1]  # noqa: E731 (the output dropped after the wait)
        except Exception as exc:  # e.g. an argument the operator takes only as an array
            failed["simdev"] = type(exc).__name__
    # An in-place operator's input is put back before every call, for both libraries alike (the
    # torch tensors share the arrays' memory): a loop of calls never drifts from the case.
    restore = case.restorer(args)
    if torch is not None:
        from aclnn_py._compare import golden as compute_golden

        expected = compute_golden(case.ours.__name__, args) if golden else None
        targs = case.torch_arguments(torch, args)
        call = lambda: (restore(), case.theirs(torch, *targs))[1]  # noqa: E731
        return {name: call}, {name: _numpy_result(call())}, failed, expected
    call = lambda: (restore(), case.ours(*args, backend=name))[1]  # noqa: E731
    result = results[name] = _numpy_result(call())
    runners[name] = call
    if name == "numpy" and case.memory_bound:
        copy = _copy_runner(args, result)
        if copy is not None:
            runners["copy"] = copy
    return runners, results, failed, None


# Before each sample a worker runs the call for this long: the time it took here for a
# threaded call to come back to the speed of back-to-back calls after a pause (the ViT fold on
# the numpy backend's 2 threads, a 50 ms pause, median ms of the next call after warming for
# 0 / 5 / 20 / 50 ms: 1.55 / 1.06 / 0.31 / 0.30, back to back 0.29; PyTorch's 1.10 / 0.91 /
# 0.88 / 0.87). A call longer than this is simply run once more.
_WARM_SECONDS = 0.02


def _serve(name: str, threads: int) -> None:
    """The loop of the worker ``name``: requests pickled on stdin, replies pickled on the real
    stdout (the libraries' own prints go to stderr)."""
    replies = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    requests = sys.stdin.buffer
    torch = None
    if name.startswith("torch"):
        import torch
        # "torch1": PyTorch on one thread, in a process of its own (switching a process's
        # OpenMP pool between 1 and 2 threads from call to call cost PyTorch up to 2x).
        torch.set_num_threads(1 if name == "torch1" else threads)
    runners: dict = {}
    while True:
        request = pickle.load(requests)
        kind = request[0]
        reply: object = None
        if kind == "case":
            try:
                runners = {}  # (the last case's runners, and their device Tensors, released first)
                runners, results, failed, golden = _worker_runners(name, request[1], torch, request[2], request[3])
                reply = ("ok", results, sorted(runners), failed, golden)
            except Exception as exc:  # a backend that cannot run a case is reported, not fatal
                runners = {}
                reply = ("failed", type(exc).__name__, [], {}, None)
        elif kind == "warm":
            for _ in range(request[1]):
                for fn in runners.values():
                    fn()
            reply = {k: _batch_size(fn) for k, fn in runners.items()}
        elif kind == "time":
            # Calls first, untimed, for _WARM_SECONDS: after the wait for idle threads (_settle)
            # the library's threads are asleep, its data out of the cache and the idle cores in
            # a deep sleep state, a cold start no loop of calls has; the sample is the call
            # that follows.
            fn = runners[request[1]]
            warm_until = time.perf_counter() + _WARM_SECONDS
            fn()
            while time.perf_counter() < warm_until:
                fn()
            reply = _time_once(fn, request[2])
        elif kind == "matmul":
            reply = _matmul_rate(torch)
        elif kind == "quit":
            return
        pickle.dump(reply, replies, protocol=pickle.HIGHEST_PROTOCOL)
        replies.flush()


class _Worker:
    """A library timed in a process of its own (``_serve``): ``name`` is "torch" (PyTorch on
    --threads threads), "torch1" (on one) or an aclnn_py backend."""

    def __init__(self, name: str, threads: int) -> None:
        self.name = name
        self.process = subprocess.Popen([sys.executable, __file__, "--worker", name, "--threads", str(threads)],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE)

    def ask(self, *request):
        pickle.dump(request, self.process.stdin, protocol=pickle.HIGHEST_PROTOCOL)
        self.process.stdin.flush()
        try:
            return pickle.load(self.process.stdout)
        except EOFError:
            raise RuntimeError(f"the {self.name} worker died (exit status {self.process.wait()})") from None

    def cpu_ns(self) -> int | None:
        """CPU time of all the worker's threads so far (Linux's per-thread schedstat), or None."""
        total = 0
        try:
            for tid in os.listdir(f"/proc/{self.process.pid}/task"):
                with open(f"/proc/{self.process.pid}/task/{tid}/schedstat") as f:
                    total += int(f.read().split()[0])
        except (OSError, ValueError, IndexError):
            return None
        return total

    def close(self) -> None:
        if self.process.poll() is None:
            try:
                self.ask("quit")
            except (OSError, RuntimeError, EOFError):
                pass
            self.process.wait(timeout=10)


# A worker is idle when its threads used less than this share of one core over the last poll.
_IDLE_SHARE = 0.05
_POLL_SECONDS = 2e-3
# Waiting stops here even if a worker still runs (a library's own housekeeping thread).
_SETTLE_LIMIT_SECONDS = 0.5


def _settle(workers) -> float:
    """Wait until no worker's threads are running; returns the seconds waited. Where the
    threads' CPU time cannot be read, waits the longest spin seen here (0.1 s)."""
    t0 = time.perf_counter()
    before = [w.cpu_ns() for w in workers]
    if any(b is None for b in before):
        time.sleep(0.1)
        return time.perf_counter() - t0
    while time.perf_counter() - t0 < _SETTLE_LIMIT_SECONDS:
        time.sleep(_POLL_SECONDS)
        after = [w.cpu_ns() for w in workers]
        if sum(a - b for a, b in zip(after, before)) < _IDLE_SHARE * _POLL_SECONDS * 1e9:
            break
        before = after
    return time.perf_counter() - t0


def run(cases, backends, repeats, warmup, threads, processes: int = 2) -> dict[str, list[tuple[str, float]]]:
    """Time every case; each backend's result is checked against PyTorch's in the same run (a
    case that does not match is flagged on its line and in the summary). Each library runs in
    ``processes`` worker processes, round r's sample taken by process r % processes: the same
    code in two processes ran up to 1.7x apart here (memory placement, presumably), and the
    spread between a runner's processes is reported."""
    ratios: dict[str, list[tuple[str, float]]] = {b: [] for b in backends}   # (case, time over PyTorch's)
    sim_vs_numpy: list[tuple[str, float]] = []
    dev_vs_numpy: list[tuple[str, float]] = []   # (case, simdev's time over numpy's)
    mismatches: list[str] = []
    below_standard: list[str] = []  # within the tolerance, not under CANN's test-kit standard vs the golden
    verdicts: list[bool] = []       # CANN's standard's, every output of every backend
    ours = 0                        # outputs below it whose PyTorch float32 counterpart meets it
    header = f"{'case':58s} {'torch ms':>9s}" + "".join(f" {b + ' ms':>10s} {'ratio':>6s}" for b in backends)
    if "sim" in backends and "numpy" in backends:
        header += f" {'sim/np':>6s}"
    if "simdev" in backends and "numpy" in backends:
        header += f" {'dev/np':>6s}"
    header += f" {'np/copy':>7s}"
    floor_ratios: list[tuple[str, float]] = []
    spread: dict[str, tuple[float, str]] = {}   # runner -> (largest ratio of its processes' medians, case)
    settled = 0.0
    print(header)
    print("-" * len(header))
    names = dict.fromkeys(["torch", "torch1", *map(_worker_of, backends)])
    workers = {name: [_Worker(name, threads) for _ in range(processes)] for name in names}
    every = [w for ws in workers.values() for w in ws]
    rates: dict[str, float] = {}    # GFLOP/s of _matmul_rate, by library
    try:
        for case in cases:
            index = CASES.index(case)
            owner: dict[str, list[_Worker]] = {}   # runner name -> its workers
            failed: dict[str, str] = {}
            results = {}
            golden = None   # computed once, by the first 2-thread PyTorch worker
            for name, ws in workers.items():
                for worker in ws:
                    status, result, made, runners_failed, computed = worker.ask(
                        "case", index, "simdev" in backends, worker is workers["torch"][0])
                    if status != "ok":
                        failed[name] = result
                        break
                    for k, r in result.items():
                        results.setdefault(k, r)
                    golden = computed if computed is not None else golden
                    for k in made:
                        if k not in ("sim", "simdev") or k in backends:   # (sim's for simdev only: not timed)
                            owner.setdefault(k, []).append(worker)
                    for k, why in runners_failed.items():
                        failed.setdefault(k, why)
            for name in ("torch", "torch1"):
                if name in failed:
                    raise RuntimeError(f"{case.name}: PyTorch failed ({failed[name]})")
            for name in failed:
                for k in [k for k, ws in owner.items() if ws[0].name == name]:
                    del owner[k]
            for b in backends:
                if b in results and b not in failed:
                    why, judged, below_torch = _verify(case, results[b], results["torch"], b, golden)
                    verdicts += judged
                    ours += below_torch
                    if why:
                        (mismatches if why.startswith("MISMATCH") else below_standard).append(f"{case.name} on {b}: {why}")
            batch: dict[tuple[str, int], int] = {}
            for name, ws in workers.items():
                if name not in failed:
                    for i, worker in enumerate(ws):
                        batch.update(((k, i), n) for k, n in worker.ask("warm", warmup).items())
            # PyTorch is timed on 2 threads and on one (two workers) and its faster figure is the
            # one compared (with 2 threads aten's parallel region can wait a scheduler tick for
            # its second worker): taking PyTorch's better configuration per case only ever makes
            # the ratios less favourable to aclnn_py.
            times: dict[str, list[float]] = {k: [] for k in owner}
            by_process: dict[str, list[list[float]]] = {k: [[] for _ in ws] for k, ws in owner.items()}
            for r in range(repeats):
                for k, ws in owner.items():
                    i = r % len(ws)
                    settled += _settle(every)
                    t = ws[i].ask("time", k, batch[(k, i)])
                    times[k].append(t)
                    by_process[k][i].append(t)
            for k, groups in by_process.items():
                medians = [statistics.median(g) for g in groups if g]
                if len(medians) > 1 and max(medians) / min(medians) > spread.get(k, (0.0, ""))[0]:
                    spread[k] = (max(medians) / min(medians), case.name)
            t_ms = min(statistics.median(times[k]) for k in ("torch", "torch1")) * 1e3
            line = f"{case.name:58s} {t_ms:9.3f}"
            ms_of = {}
            for b in backends:
                if b not in times:
                    line += f" {failed.get(b) or failed[_worker_of(b)]:>10s} {'-':>6s}"
                    continue
                ms = ms_of[b] = statistics.median(times[b]) * 1e3
                ratio = ms / t_ms
                ratios[b].append((case.name, ratio))
                line += f" {ms:10.3f} {ratio:6.2f}"
            if "sim" in ms_of and "numpy" in ms_of:
                sim_vs_numpy.append((case.name, ms_of["sim"] / ms_of["numpy"]))
                line += f" {sim_vs_numpy[-1][1]:6.2f}"
            elif "sim" in backends and "numpy" in backends:
                line += f" {'-':>6s}"
            if "simdev" in ms_of and "numpy" in ms_of:
                dev_vs_numpy.append((case.name, ms_of["simdev"] / ms_of["numpy"]))
                line += f" {dev_vs_numpy[-1][1]:6.2f}"
            elif "simdev" in backends and "numpy" in backends:
                line += f" {'-':>6s}"
            if "copy" in times and "numpy" in ms_of:
                floor_ratios.append((case.name, ms_of["numpy"] / (statistics.median(times["copy"]) * 1e3)))
                line += f" {floor_ratios[-1][1]:7.2f}"
            else:
                line += f" {'-':>7s}"
            if any(m.startswith(case.name + " on") for m in mismatches):
                line += "  MISMATCH"
            print(line, flush=True)
        for name in ("torch", "numpy"):
            if name in workers:
                settled += _settle(every)
                rates[name] = workers[name][0].ask("matmul")
    finally:
        for worker in every:
            worker.close()
    if spread:
        print()
        print(f"largest ratio between the medians of one runner's {processes} worker processes on one case:")
        for k, (worst, name) in spread.items():
            print(f"  {k:8s} {worst:5.2f}x  ({name})")
    print()
    for b, named in ratios.items():
        if named:
            rs = [r for _, r in named]
            print(f"{b}: geometric mean ratio {_geomean(rs):.2f}x PyTorch CPU, worst {max(rs):.2f}x over {len(rs)} cases")
            print("  " + "; ".join(f"{label}: {mean:.2f}x over {n} cases" for label, mean, n in group_means(named)))
            print(f"  above {TARGET_RATIO:.1f}x: {_past(named, TARGET_RATIO)}")
    if sim_vs_numpy:
        rs = [r for _, r in sim_vs_numpy]
        print(f"sim/numpy: geometric mean {_geomean(rs):.2f}x, worst {max(rs):.2f}x")
        print("  " + "; ".join(f"{label}: {mean:.2f}x over {n} cases" for label, mean, n in group_means(sim_vs_numpy)))
        print(f"  above {TARGET_SIM_RATIO:.1f}x: {_past(sim_vs_numpy, TARGET_SIM_RATIO)}")
    _device_summary(dev_vs_numpy)
    if floor_ratios:
        print(f"numpy/copy of the bytes touched (memory-bound cases of >= 1 MiB): worst {max(r for _, r in floor_ratios):.2f}x")
        print(f"  above {TARGET_FLOOR_RATIO:.1f}x: {_past(floor_ratios, TARGET_FLOOR_RATIO)}")
    if len(rates) == 2:
        print(f"float32 {_MATMUL_SIZE}-square matrix product in the workers: NumPy {rates['numpy']:.0f} GFLOP/s, "
              f"PyTorch {rates['torch']:.0f} GFLOP/s on {threads} threads (its convolutions do not use it)")
    print(f"waited {settled:.1f} s in all for the other libraries' threads to go idle before samples")
    print("results checked against PyTorch: " + ("all match" if not mismatches else "; ".join(mismatches)))
    print(f"CANN's test-kit standard against PyTorch CPU's golden (float inputs raised: FLOAT16/BFLOAT16 to FLOAT, "
          f"FLOAT to DOUBLE; MERE/MARE thresholds, double thousandth for convolutions), {sum(verdicts)} of "
          f"{len(verdicts)} outputs pass ({ours} of those below it where PyTorch's float32 result meets it): "
          + ("all pass" if not below_standard else "; ".join(below_standard)))
    return ratios


def _device_summary(dev_vs_numpy: list[tuple[str, float]]) -> None:
    """The summary's lines for the simulator on device-resident Tensors ("simdev") over numpy."""
    if dev_vs_numpy:
        rs = [r for _, r in dev_vs_numpy]
        print(f"simdev/numpy (device-resident Tensors, no copies per call): geometric mean {_geomean(rs):.2f}x, "
              f"worst {max(rs):.2f}x over {len(rs)} cases")
        print(f"  above {TARGET_SIM_RATIO:.1f}x: {_past(dev_vs_numpy, TARGET_SIM_RATIO)}")


def _probe():
    """The overhead section's probe: the one registered operator whose entry says
    ``overhead_probe=True`` (its functions take gradOutput (1,1,6,6), self (1,1,4,4), an int
    array of 4 and out (1,1,4,4)), its arguments, and the C programs' -D flags naming it and the
    value they must find at element 5 of the result (the numpy backend's, on the same ones)."""
    (op,) = [o for o in aclnn_py.ops.OPERATORS if o.overhead_probe]
    g = np.ones((1, 1, 6, 6), np.float32)
    x = np.ones((1, 1, 4, 4), np.float32)
    expect = float(np.asarray(op.function(g, x, [1, 1, 1, 1], backend="numpy")).reshape(-1)[5])
    flags = [f"-DPROBE={op.c_name}", f'-DPROBE_HEADER="aclnnop/{op.header}"', f"-DPROBE_EXPECT={expect!r}"]
    return op, g, x, flags


def _build_c(name: str, home: Path, out: Path, probe_flags: list[str], *extra: str) -> Path:
    """Compile ``scripts/<name>.c`` against the simulator toolkit at ``home`` into ``out``."""
    subprocess.run([os.environ.get("CC", "cc"), "-O2", "-std=c11", *extra, *probe_flags, f"-I{home / 'include'}",
                    f"-I{home / 'include' / 'aclnn'}", str(Path(__file__).with_name(f"{name}.c")),
                    f"-L{home / 'lib64'}", "-lopapi", "-lnnopbase", "-lascendcl", f"-Wl,-rpath,{home / 'lib64'}",
                    "-o", str(out)], check=True)
    return out


def _c_program(name: str, home: Path, tmp: str, probe_flags: list[str]) -> Callable[[int], float]:
    """Build ``scripts/<name>.c`` as a program (into ``tmp``) and return a runner: ``run(n)`` runs
    it for ``n`` iterations and returns the microseconds per iteration it prints last."""
    exe = _build_c(name, home, Path(tmp) / name, probe_flags)

    def run(n: int) -> float:
        out = subprocess.run([str(exe), str(n)], check=True, capture_output=True, text=True).stdout
        return float(out.split()[-1])
    return run


def _c_in_process(name: str, home: Path, tmp: str, probe_flags: list[str]) -> Callable[[int], float]:
    """Build ``scripts/<name>.c`` as a shared library (``-DOVERHEAD_LIBRARY``) and load it into
    this process, which has loaded the same toolkit and set up the runtime and device on this
    thread: ``run(n)`` runs its loop for ``n`` iterations here and returns the microseconds per
    iteration."""
    import ctypes

    library = _build_c(name, home, Path(tmp) / f"lib{name}.so", probe_flags, "-shared", "-fPIC", "-DOVERHEAD_LIBRARY")
    function = getattr(ctypes.CDLL(str(library)), f"{name}_run")
    function.restype, function.argtypes = ctypes.c_double, [ctypes.c_long]

    def run(n: int) -> float:
        us = float(function(n))
        if us < 0:
            raise RuntimeError(f"{name}: unexpected result")
        return us
    return run


def overhead(rounds: int = 15, calls: int = 2000) -> None:
    """Per-call host overhead of the binding on tiny tensors against C programs doing the same
    sequence on the simulator, every runner alternating round after round in this one process
    (same case, same run; a round of each runner is ``calls`` calls):

    one-shot, against scripts/overhead.c (device buffers, copies, descriptors, both phases,
    sync, copy back, release): the op function and ``aclnn_py.call`` through the fast entry
    replaying their plans (a repeated geometry, the common case); the op function on the fast
    path marshalling every call (plans off: the helper's one crossing); both on the ABI-mode
    path (fast path off, as without a compiler or with ACLNN_PY_FAST=0).

    repeated, against scripts/overhead_repeatable.c (a repeatable executor: new data copied in,
    phase 2, sync, result copied back): a run of ``aclnn_py.prepare``'s object.

    The C programs run inside this process (built as libraries: on a busy machine a short-lived
    process of its own gets the scheduler's favour that this long-running one does not), on
    the toolkit and device this process has set up; as programs of their own they are shown too.

    Each runner is compared with its C program twice: the median over the rounds of its time over
    the C program's time in the same round, and its fastest round over the C program's fastest
    (noise only ever adds time, so on a busy machine the fastest rounds are the truest)."""
    try:
        from aclnn_py import _fast, sim
        from aclnn_py._convert import executor as _aclnn
        from aclnn_py._runtime import loader

        lib = loader.library("sim")
        home = Path(sim.home())
    except Exception as exc:
        print(f"overhead: simulator not available ({exc})")
        return
    fast_api = _fast.api_for(lib)
    entry = _fast.entry()
    probe, g, x, probe_flags = _probe()
    op = probe.kernel
    out = np.zeros((1, 1, 4, 4), np.float32)

    def timed(fn) -> float:
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        return (time.perf_counter() - t0) / calls * 1e6

    def on_path(fn, *, fast: bool, plans: bool) -> Callable[[], float]:
        def run() -> float:
            lib.fast_api = fast_api if fast else None
            previous = _aclnn.set_plans(plans)
            try:
                fn()  # records the plan where there is one to record
                return timed(fn)
            finally:
                lib.fast_api = fast_api
                _aclnn.set_plans(previous)
        return run

    function = lambda: probe.function(g, x, [1, 1, 1, 1], backend="sim")  # noqa: E731
    via_call = lambda: aclnn_py.call(op, g, x, [1, 1, 1, 1], out, backend="sim")  # noqa: E731
    # Device-resident data: the same call on device Tensors (a new output Tensor per op function
    # call; call writes one given output), nothing waiting per call; each round ends with a
    # synchronisation, so the device's work is inside it (as in scripts/overhead_device.c).
    gt, xt = aclnn_py.Tensor.from_numpy(g, backend="sim"), aclnn_py.Tensor.from_numpy(x, backend="sim")
    out_t = aclnn_py.Tensor.empty(x.shape, x.dtype, backend="sim")
    dev_function = lambda: probe.function(gt, xt, [1, 1, 1, 1], backend="sim")  # noqa: E731
    dev_call = lambda: aclnn_py.call(op, gt, xt, [1, 1, 1, 1], out_t, backend="sim")  # noqa: E731

    # A captured chain of CHAIN such calls, replayed: its time per operator.
    chain = 10

    def replay_timed(graph) -> Callable[[], float]:
        def run() -> float:
            graph.replay()
            lib.synchronize()
            replays = max(1, calls // chain)
            t0 = time.perf_counter()
            for _ in range(replays):
                graph.replay()
            lib.synchronize()
            return (time.perf_counter() - t0) / (replays * chain) * 1e6
        return run

    def device_timed(fn) -> Callable[[], float]:
        def run() -> float:
            fn()
            lib.synchronize()
            t0 = time.perf_counter()
            for _ in range(calls):
                fn()
            lib.synchronize()
            return (time.perf_counter() - t0) / calls * 1e6
        return run

    with tempfile.TemporaryDirectory() as tmp, \
            aclnn_py.prepare(op, g, x, [1, 1, 1, 1], out, backend="sim") as prepared:
        lib.stream()  # the runtime initialised and the device set on this thread, for the C loops
        c_once = _c_in_process("overhead", home, tmp, probe_flags)
        c_repeat = _c_in_process("overhead_repeatable", home, tmp, probe_flags)
        c_once_alone = _c_program("overhead", home, tmp, probe_flags)
        c_repeat_alone = _c_program("overhead_repeatable", home, tmp, probe_flags)
        c_device = _c_in_process("overhead_device", home, tmp, probe_flags)
        run = lambda: prepared(g, x, [1, 1, 1, 1], out)  # noqa: E731
        # (runner, its C counterpart)
        runners: dict[str, tuple[Callable[[], float], str]] = {
            "C program": (lambda: c_once(calls), "C program"),
            "C program, own process": (lambda: c_once_alone(calls), "C program, own process"),
            "op function": (on_path(function, fast=True, plans=True), "C program"),
            "call": (on_path(via_call, fast=True, plans=True), "C program"),
        }
        if fast_api is not None:
            runners["op function, no plan"] = (on_path(function, fast=True, plans=False), "C program")
        runners["op function, ABI mode"] = (on_path(function, fast=False, plans=False), "C program")
        runners["call, ABI mode"] = (on_path(via_call, fast=False, plans=False), "C program")
        runners["C program, device buffers"] = (lambda: c_device(calls), "C program, device buffers")
        runners["op function, device tensors"] = (device_timed(dev_function), "C program, device buffers")
        runners["call, device tensors"] = (device_timed(dev_call), "C program, device buffers")
        with aclnn_py.capture(backend="sim") as graph:
            captured = [dev_function() for _ in range(chain)]
        runners["graph replay, per operator"] = (replay_timed(graph), "C program, device buffers")
        runners["C repeatable"] = (lambda: c_repeat(calls), "C repeatable")
        runners["C repeatable, own process"] = (lambda: c_repeat_alone(calls), "C repeatable, own process")
        runners["prepared run"] = (lambda: timed(run), "C repeatable")
        for fn, _ in runners.values():
            fn()  # warm-up
        times: dict[str, list[float]] = {k: [] for k in runners}
        for _ in range(rounds):
            for k, (fn, _) in runners.items():
                times[k].append(fn())
        np.testing.assert_allclose(out, probe.function(g, x, [1, 1, 1, 1], backend="numpy"), rtol=1e-6)
        np.testing.assert_allclose(out_t.numpy(), out, rtol=1e-6)
        np.testing.assert_allclose(dev_function().numpy(), out, rtol=1e-6)
        for result in captured:
            np.testing.assert_allclose(result.numpy(), out, rtol=1e-6)
        graph.close()
    path = ("fast entry" if entry is not None and fast_api is not None else
            "fast path's helper, no entry" if fast_api is not None else "ABI-mode path only")
    print(f"per-call host overhead, {op} (1,1,6,6) on sim ({path}), {rounds} interleaved rounds of {calls} "
          f"calls: median us, per-round ratio median, fastest-round ratio")
    for k, ts in times.items():
        c = runners[k][1]
        med = statistics.median(ts)
        # each round's ratio to its C program's run in the same round, then their median
        ratio = statistics.median(t / r for t, r in zip(ts, times[c]))
        fastest = min(ts) / min(times[c])
        against = "" if k == c else f"  {ratio:5.1f}x {fastest:5.1f}x {c}"
        print(f"  {k:30s} {med:6.2f} us{against:40s}  (rounds {min(ts):.2f}-{max(ts):.2f} us)")
    for device, host in (("op function, device tensors", "op function"), ("call, device tensors", "call")):
        ratio = statistics.median(t / r for t, r in zip(times[device], times[host]))
        print(f"  {device} over {host} (NumPy arguments): per-round median {ratio:.2f}x")
    if entry is None or fast_api is None:
        print("  (the fast entry is not built, or ACLNN_PY_FAST=0: the op function and call rows take "
              "the same path as the rows below them)")


def blas_kernels() -> str:
    """A line naming the kernels NumPy's OpenBLAS runs here, and the environment variable that
    chose them if one did: the convolution cases are matrix products, and OpenBLAS's kernels for
    one CPU differ by up to 2x (this machine, AMD EPYC with AVX-512: a 1024^2 float32 product at
    248 GFLOP/s with OPENBLAS_CORETYPE=Haswell, 474 with OpenBLAS's own choice)."""
    name = _blas.kernels()
    forced = os.environ.get("OPENBLAS_CORETYPE")
    text = f"NumPy's BLAS kernels: {name or 'unknown (not an OpenBLAS that names them)'}"
    if forced:
        text += f", as OPENBLAS_CORETYPE={forced} in the environment asks"
    return text


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--op", default="", help="only cases whose name contains this text")
    ap.add_argument("--backends", default=None, help="comma-separated backends (default: every available one)")
    ap.add_argument("--repeats", type=int, default=9)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--processes", type=int, default=2, help="worker processes per library (samples alternate)")
    ap.add_argument("--threads", type=int, default=2, help="PyTorch CPU threads")
    ap.add_argument("--no-overhead", action="store_true", help="skip the binding-vs-C per-call overhead")
    ap.add_argument("--worker", help=argparse.SUPPRESS)  # the library a worker process times (_serve)
    opts = ap.parse_args(argv)
    if opts.worker:
        _serve(opts.worker, opts.threads)
        return 0
    import importlib.metadata
    import importlib.util

    if importlib.util.find_spec("torch") is None:
        print("bench.py needs PyTorch CPU as the baseline: pip install torch==2.13.0", file=sys.stderr)
        return 2
    backends = opts.backends.split(",") if opts.backends else available_backends()
    cases = [c for c in CASES if opts.op in c.name]
    print(f"PyTorch {importlib.metadata.version('torch')} (the better of {opts.threads} threads and 1 per case), "
          f"NumPy {np.__version__}, backends {backends}, each library in a process of its own, "
          f"{opts.repeats} repeats, median")
    print(blas_kernels())
    run(cases, backends, opts.repeats, opts.warmup, opts.threads, max(1, opts.processes))
    if not opts.no_overhead:
        print()
        overhead()
    return 0


if __name__ == "__main__":
    sys.exit(main())
