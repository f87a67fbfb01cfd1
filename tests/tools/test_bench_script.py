"""scripts/bench.py's timing run: each library in a worker process of its own, every result
checked against PyTorch's, and the wait for the workers' threads to go idle. Timings are
printed, never asserted."""

from __future__ import annotations

import functools
import gc
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from helpers import load_script

from aclnn_py._runtime import pool

ROOT = Path(__file__).resolve().parents[2]


def test_every_tiny_case_timed_in_worker_processes_and_checked(torch):
    bench = load_script("bench")
    tiny = [c.name for c in bench.CASES if "tiny" in c.name]
    assert len(tiny) >= 5  # one per operator at least
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "bench.py"), "--op", "tiny", "--repeats", "2",
                           "--warmup", "1", "--no-overhead", "--backends", "numpy,sim,simdev"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "each library in a process of its own" in out
    assert re.search(r"^NumPy's BLAS kernels: ", out, re.M), out
    for name in tiny:
        # torch ms, then (ms, ratio) for numpy, sim and simdev, then sim/np and dev/np
        ms_ratio = r" +\d+\.\d+ +\d+\.\d\d"
        assert re.search(rf"^{re.escape(name)} +\d+\.\d+{ms_ratio * 3} +\d+\.\d\d +\d+\.\d\d", out, re.M), out
    assert re.search(rf"^numpy: geometric mean ratio \d+\.\d\dx PyTorch CPU, worst \d+\.\d\dx over {len(tiny)} cases", out, re.M)
    # the seed operators' cases and the others' apart, for each backend (numpy, sim, simdev) and
    # for sim/numpy
    assert len(re.findall(r"^  seed operators: \d+\.\d\dx over \d+ cases; the others \(issue #23\): \d+\.\d\dx "
                          r"over \d+ cases$", out, re.M)) == 4, out
    assert re.search(r"^sim/numpy: geometric mean \d+\.\d\dx, worst \d+\.\d\dx\n.*\n  above 3\.0x: ", out, re.M), out
    # each backend's cases past issue #13's per-case target, listed under its mean
    assert len(re.findall(r"^  above 2\.0x: (none|.+ \d+\.\d\dx)$", out, re.M)) == 3, out
    # the simulator on device-resident Tensors over numpy, and its cases past issue #23's target
    assert re.search(rf"^simdev/numpy .*: geometric mean \d+\.\d\dx, worst \d+\.\d\dx over {len(tiny)} cases\n"
                     r"  above 3\.0x: (none|.+ \d+\.\d\dx)$", out, re.M), out
    assert re.search(r"^float32 1024-square matrix product in the workers: NumPy \d+ GFLOP/s, "
                     r"PyTorch \d+ GFLOP/s on 2 threads", out, re.M), out
    assert "results checked against PyTorch: all match" in out
    assert re.search(r"^CANN's test-kit standard against PyTorch CPU's golden .*, (\d+) of \1 outputs pass "
                     r"\(0 of those below it where PyTorch's float32 result meets it\): all pass$", out, re.M), out
    # two worker processes per library (the default): the spread between them is reported
    for runner in ("torch", "torch1", "numpy", "sim", "simdev"):
        assert re.search(rf"^  {runner} +\d+\.\d\dx  \(.+\)$", out, re.M), out


def test_a_backend_that_cannot_run_a_case_is_reported_not_fatal(torch):
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "bench.py"), "--op", "avg_pool2d tiny", "--repeats", "1",
                           "--warmup", "0", "--no-overhead", "--backends", "numpy,nosuchbackend"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert re.search(r"^avg_pool2d tiny .* +\d+\.\d\d +[A-Za-z]+Error +-", done.stdout, re.M), done.stdout


def _live(lib) -> dict[str, int]:
    """The simulator's live handles and device blocks, after the queued work and the collector
    (the caching allocator's blocks given back: they are the binding's on purpose)."""
    lib.synchronize()
    gc.collect()
    pool.trim_all()
    c = lib.ffi.new("aclsimCounters *")
    lib.call("aclsimGetCounters", c)
    return {f: getattr(c, f) for f in ("tensors", "tensor_lists", "executors", "device_blocks", "device_bytes")}


@pytest.mark.parametrize("name", ["inplace_add sgd conv1 (64,3,7,7)", "cat densenet121 dense block (8,[256,32],28,28)"])
def test_the_device_runner_verifies_restores_and_releases(name, sim_lib, torch, monkeypatch):
    """simdev: the arrays (a tensor list's too) uploaded once, each call on the device Tensors
    matching PyTorch, an in-place input put back before each call (without it three calls of
    InplaceAdd would add three times), and every Tensor released once the runners are gone."""
    bench = load_script("bench")
    index = [c.name for c in bench.CASES].index(name)
    case = bench.CASES[index]
    args = bench._case_arguments(index)
    expected = bench._numpy_result(case.theirs(torch, *case.torch_arguments(torch, args)))
    kinds: list[set[str]] = []   # the types of the array arguments of each call of the operator
    ours = case.ours

    @functools.wraps(ours)
    def recorded(*call_args, **kwargs):
        kinds.append({type(t).__name__ for a in call_args for t in (a if isinstance(a, list) else [a])
                      if hasattr(t, "shape")})
        return ours(*call_args, **kwargs)
    monkeypatch.setattr(case, "ours", recorded)

    def run() -> None:
        runners, results, failed, _ = bench._worker_runners("sim", index, None, device=True)
        assert failed == {} and sorted(runners) == ["sim", "simdev"]
        assert bench._verify(case, results["simdev"], expected, "simdev")[0] == ""
        for runner, kind in (("simdev", "Tensor"), ("sim", "ndarray")):
            kinds.clear()
            runners[runner]()
            assert kinds == [{kind}], runner
        call = bench._device_call(case, bench._case_arguments(index))  # (the runner's call, its output kept)
        for _ in range(3):
            out = call()
        assert bench._verify(case, bench._numpy_result(out), expected, "simdev")[0] == ""

    run()  # (warm: the stream, the plans, the caches)
    before = _live(sim_lib)
    run()
    assert _live(sim_lib) == before


class _Worker:
    """A stand-in for bench._Worker: CPU time that grows by ``step`` ns at every read."""

    def __init__(self, step: int | None) -> None:
        self.step, self.ns = step, 0

    def cpu_ns(self):
        if self.step is None:
            return None
        self.ns += self.step
        return self.ns


def test_settle_waits_while_a_worker_runs_and_not_when_all_are_idle():
    bench = load_script("bench")
    busy = bench._settle([_Worker(0), _Worker(int(bench._POLL_SECONDS * 1e9))])  # one core busy
    assert busy >= bench._SETTLE_LIMIT_SECONDS
    idle = bench._settle([_Worker(0), _Worker(1000)])  # 1 us per poll: idle
    assert idle < bench._SETTLE_LIMIT_SECONDS
    assert bench._settle([_Worker(None)]) >= 0.1  # no per-thread CPU times: the fixed wait


def test_the_blas_kernels_are_named_with_the_variable_that_chose_them():
    """The header line names OpenBLAS's kernels: those OPENBLAS_CORETYPE asks for when it is set
    (OpenBLAS honours it; Haswell's run on every x86-64 CPU with AVX2), and says so."""
    code = "import sys; sys.path.insert(0, 'tests'); from helpers import load_script; print(load_script('bench').blas_kernels())"
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_CORETYPE"}
    forced = subprocess.run([sys.executable, "-c", code], env={**env, "OPENBLAS_CORETYPE": "Haswell"}, cwd=ROOT,
                            capture_output=True, text=True, timeout=120)
    assert forced.returncode == 0, forced.stderr
    assert forced.stdout.strip() == "NumPy's BLAS kernels: Haswell, as OPENBLAS_CORETYPE=Haswell in the environment asks"
    own = subprocess.run([sys.executable, "-c", code], env=env, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert own.returncode == 0, own.stderr
    assert re.fullmatch(r"NumPy's BLAS kernels: \w+", own.stdout.strip()), own.stdout


def test_the_cases_past_a_target_are_listed_worst_first():
    bench = load_script("bench")
    named = [("a", 1.5), ("b", 3.25), ("c", 2.0), ("d", 2.5)]
    assert bench._past(named, 2.0) == "b 3.25x; d 2.50x"     # 2.0 itself is within the target
    assert bench._past(named, 4.0) == "none"


def test_the_summary_groups_cases_by_whether_their_operator_is_a_seed():
    bench = load_script("bench")
    seeds = {"im2col_backward", "max_unpool2d_backward", "reflection_pad2d_backward", "avg_pool2d_backward",
             "convolution_backward"}   # the five backwards the project began with (tests/test_registry.py)
    seed_case = next(c.name for c in bench.CASES if c.ours.__name__ in seeds)
    others = [c.name for c in bench.CASES if c.ours.__name__ not in seeds][:2]
    groups = bench.group_means([(seed_case, 2.0), (others[0], 1.0), (others[1], 4.0)])
    assert groups == [("seed operators", pytest.approx(2.0), 1), ("the others (issue #23)", pytest.approx(2.0), 2)]
    assert bench.group_means([(others[0], 3.0)]) == [("the others (issue #23)", pytest.approx(3.0), 1)]
    assert sum(c.seed for c in bench.CASES) == sum(c.ours.__name__ in seeds for c in bench.CASES) > 0
    assert bench.TARGET_SIM_RATIO == 3.0


def test_verify_judges_the_standard_against_the_golden_and_says_when_it_cannot(torch):
    # the tolerance's verdict against PyTorch's float32 result, CANN's standard against the golden
    from aclnn_py._compare import Golden, golden

    bench = load_script("bench")
    case = next(c for c in bench.CASES if c.ours.__name__ == "reduce_sum")
    row = np.concatenate([[1.0], np.full(100, 2.5e-8), [-1.0, 1e-5]]).astype(np.float32)
    x = np.stack([row, 2 * row])
    right = x.astype(np.float64).sum(axis=1).astype(np.float32)   # the exact sum, rounded once
    lost = np.array([1e-5, 2e-5], np.float32)                     # the small terms lost: within the tolerance
    g = golden("reduce_sum", (x, [1], False, np.float32))
    assert bench._verify(case, right, lost, "sim", g) == ("", [True], 0)
    # below the standard where PyTorch's float32 result meets it: counted as ours, its figures beside
    why, verdicts, ours = bench._verify(case, lost, right, "sim", g)
    assert verdicts == [False] and ours == 1 and why.startswith("under CANN's standard: out MERE/MARE threshold")
    assert re.search(r"\(PyTorch's float32 result: MERE \S+, MARE \S+ -> pass\)$", why), why
    # ... and where PyTorch's own result is below it too, not counted
    assert bench._verify(case, lost, lost, "sim", g)[1:] == ([False], 0)
    why, verdicts, _ = bench._verify(case, right, lost, "sim", Golden(None, "no golden: it failed"))
    assert verdicts == [False] and "CANN's standard of out against the reference (no golden: it failed)" in why
    assert bench._verify(case, right + 1, lost, "sim", g)[0] == "MISMATCH out"
