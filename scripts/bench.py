#!/usr/bin/env python3
"""Time every available backend against PyTorch CPU, interleaved in one run.

For each case the runners (PyTorch CPU with 2 threads, then each aclnn_py backend) are
called in turn, round after round, so that machine noise hits all of them alike; a sample is
one call, or a batch of calls lasting >= 2 ms for the tiny cases. Prints the median
milliseconds per call for each runner, the ratio backend/PyTorch, and the geometric mean of the
ratios per backend.

    python scripts/bench.py                 # every case, every available backend
    python scripts/bench.py --op conv       # only cases whose name contains "conv"
    python scripts/bench.py --backends numpy --repeats 15
"""

from __future__ import annotations

import argparse
import math
import os
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


@dataclass
class Case:
    name: str
    make: Callable[[np.random.Generator], dict]   # -> {"np": args tuple, "kw": kwargs}
    ours: Callable                                # aclnn_py function
    theirs: Callable                              # (torch, *torch_args) -> result


def _f32(rng, *shape):
    return rng.standard_normal(shape, dtype=np.float32)


def _conv_case(name, n, cin, hw, cout, k, *, stride=1, pad=0, dil=1, groups=1, transposed=False, out_pad=0):
    rank = len(hw)

    def make(rng):
        x = _f32(rng, n, cin, *hw)
        if transposed:
            w = _f32(rng, cin, cout // groups, *([k] * rank))
            out = [(i - 1) * stride - 2 * pad + dil * (k - 1) + out_pad + 1 for i in hw]
        else:
            w = _f32(rng, cout, cin // groups, *([k] * rank))
            out = [(i + 2 * pad - dil * (k - 1) - 1) // stride + 1 for i in hw]
        g = _f32(rng, n, cout, *out)
        args = (g, x, w, [cout], [stride] * rank, [pad] * rank, [dil] * rank, transposed,
                [out_pad] * rank, groups, [True, True, True])
        return args

    def theirs(torch, g, x, w, bias, s, p, d, t, op, grp, mask):
        return torch.ops.aten.convolution_backward(g, x, w, bias, s, p, d, t, op, grp, mask)

    return Case(name, make, aclnn_py.convolution_backward, theirs)


def _avg_case(name, n, c, h, w, k, s, p, ceil, cip):
    def make(rng):
        x = _f32(rng, n, c, h, w)
        oh = _pool_out(h, k, s, p, ceil)
        ow = _pool_out(w, k, s, p, ceil)
        g = _f32(rng, n, c, oh, ow)
        return (g, x, [k, k], [s, s], [p, p], ceil, cip, 0)

    def theirs(torch, g, x, k, s, p, ceil, cip, div):
        return torch.ops.aten.avg_pool2d_backward(g, x, k, s, p, ceil, cip, None)

    return Case(name, make, aclnn_py.avg_pool2d_backward, theirs)


def _pool_out(size, k, s, p, ceil):
    out = (size + 2 * p - k + (s - 1 if ceil else 0)) // s + 1
    if ceil and (out - 1) * s >= size + p:
        out -= 1
    return out


def _reflect_case(name, n, c, h, w, pad):
    def make(rng):
        x = _f32(rng, n, c, h, w)
        g = _f32(rng, n, c, h + 2 * pad, w + 2 * pad)
        return (g, x, [pad] * 4)

    def theirs(torch, g, x, padding):
        return torch.ops.aten.reflection_pad2d_backward(g, x, padding)

    return Case(name, make, aclnn_py.reflection_pad2d_backward, theirs)


def _unpool_case(name, n, c, h, w):
    def make(rng):
        x = _f32(rng, n, c, h, w)
        # Indices of a 2x2/2 max pool: one position per window of the (2h, 2w) output.
        dy = rng.integers(0, 2, size=(n, c, h, w))
        dx = rng.integers(0, 2, size=(n, c, h, w))
        rows = 2 * np.arange(h)[:, None] + dy
        cols = 2 * np.arange(w)[None, :] + dx
        idx = (rows * (2 * w) + cols).astype(np.int64)
        g = _f32(rng, n, c, 2 * h, 2 * w)
        return (g, x, idx, [2 * h, 2 * w])

    def theirs(torch, g, x, idx, size):
        return torch.gather(g.flatten(-2), -1, idx.flatten(-2)).view(x.shape)

    return Case(name, make, aclnn_py.max_unpool2d_backward, theirs)


def _fold_case(name, n, c, h, w, k, s, p):
    def make(rng):
        lh = (h + 2 * p - (k - 1) - 1) // s + 1
        lw = (w + 2 * p - (k - 1) - 1) // s + 1
        g = _f32(rng, n, c * k * k, lh * lw)
        return (g, [h, w], [k, k], [1, 1], [p, p], [s, s])

    def theirs(torch, g, size, k, d, p, s):
        return torch.nn.functional.fold(g, size, k, dilation=d, padding=p, stride=s)

    return Case(name, make, aclnn_py.im2col_backward, theirs)


CASES = [
    _conv_case("conv2d resnet 3x3 (8,64,56,56)", 8, 64, (56, 56), 64, 3, pad=1),
    _conv_case("conv2d 1x1 stride 2 (8,256,56,56)->512", 8, 256, (56, 56), 512, 1, stride=2),
    _conv_case("conv2d depthwise 3x3 (8,128,56,56)", 8, 128, (56, 56), 128, 3, pad=1, groups=128),
    _conv_case("conv2d transposed k4 s2 (8,64,28,28)->32", 8, 64, (28, 28), 32, 4, stride=2, pad=1, transposed=True),
    _conv_case("conv1d k5 (16,64,1024)", 16, 64, (1024,), 64, 5, pad=2),
    _conv_case("conv3d k3 (2,16,16,32,32)", 2, 16, (16, 32, 32), 16, 3, pad=1),
    _conv_case("conv2d tiny (1,1,4,4)", 1, 1, (4, 4), 1, 3, pad=1),
    _avg_case("avg_pool2d k3 s2 p1 floor (8,64,112,112)", 8, 64, 112, 112, 3, 2, 1, False, True),
    _avg_case("avg_pool2d k3 s2 p1 ceil excl-pad (8,64,112,112)", 8, 64, 112, 112, 3, 2, 1, True, False),
    _avg_case("avg_pool2d tiny (1,1,4,4)", 1, 1, 4, 4, 2, 2, 0, False, True),
    _reflect_case("reflection_pad2d p3 (8,3,224,224)", 8, 3, 224, 224, 3),
    _reflect_case("reflection_pad2d p1 (8,64,224,224)", 8, 64, 224, 224, 1),
    _reflect_case("reflection_pad2d tiny (1,1,4,4)", 1, 1, 4, 4, 1),
    _unpool_case("max_unpool2d 2x2 (8,64,56,56)->112", 8, 64, 56, 56),
    _unpool_case("max_unpool2d tiny (1,1,2,2)", 1, 1, 2, 2),
    _fold_case("im2col_backward conv layer k3 (8,64,56,56)", 8, 64, 56, 56, 3, 1, 1),
    _fold_case("im2col_backward tiny (1,1,4,4)", 1, 1, 4, 4, 2, 2, 0),
]


def available_backends() -> list[str]:
    names = ["numpy"]
    for name in ("sim", "npu"):
        try:
            from aclnn_py import _ffi

            _ffi.library(name)
        except Exception:
            continue
        names.append(name)
    return names


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


def run(cases, backends, repeats, warmup, torch) -> dict[str, list[float]]:
    rng = np.random.default_rng(0)
    ratios: dict[str, list[float]] = {b: [] for b in backends}
    header = f"{'case':48s} {'torch ms':>9s}" + "".join(f" {b + ' ms':>10s} {'ratio':>6s}" for b in backends)
    print(header)
    print("-" * len(header))
    for case in cases:
        args = case.make(rng)
        targs = tuple(torch.from_numpy(a) if isinstance(a, np.ndarray) else a for a in args)
        runners = {"torch": lambda: case.theirs(torch, *targs)}
        for b in backends:
            runners[b] = (lambda b=b: case.ours(*args, backend=b))
        times: dict[str, list[float]] = {k: [] for k in runners}
        failed: dict[str, str] = {}
        for _ in range(warmup):
            for k, fn in runners.items():
                if k in failed:
                    continue
                try:
                    fn()
                except Exception as exc:  # a backend that cannot run a case is reported, not fatal
                    failed[k] = type(exc).__name__
        batch = {k: _batch_size(fn) for k, fn in runners.items() if k not in failed}
        for _ in range(repeats):
            for k, fn in runners.items():
                if k not in failed:
                    times[k].append(_time_once(fn, batch[k]))
        t_ms = statistics.median(times["torch"]) * 1e3
        line = f"{case.name:48s} {t_ms:9.3f}"
        for b in backends:
            if b in failed:
                line += f" {failed[b]:>10s} {'-':>6s}"
                continue
            ms = statistics.median(times[b]) * 1e3
            ratio = ms / t_ms
            ratios[b].append(ratio)
            line += f" {ms:10.3f} {ratio:6.2f}"
        print(line, flush=True)
    print()
    for b, rs in ratios.items():
        if rs:
            geo = math.exp(sum(math.log(r) for r in rs) / len(rs))
            print(f"{b}: geometric mean ratio {geo:.2f}x PyTorch CPU, worst {max(rs):.2f}x over {len(rs)} cases")
    return ratios


def overhead(rounds: int = 7, calls: int = 3000) -> None:
    """Per-call host overhead of the binding on tiny tensors vs scripts/overhead.c doing the
    same sequence (device buffers, copies, descriptors, both phases, sync, copy back, release)
    on the simulator, alternating them round after round in this one process: the fast path
    replaying a plan (a repeated geometry, the common case), the fast path marshalling every
    call (plans off), and the ABI-mode path (fast path off, as without a compiler or with
    ACLNN_PY_FAST=0)."""
    try:
        from aclnn_py import _fast, _ffi, sim
        from aclnn_py.ops import _aclnn

        lib = _ffi.library("sim")
        home = Path(sim.home())
    except Exception as exc:
        print(f"overhead: simulator not available ({exc})")
        return
    source = Path(__file__).with_name("overhead.c")
    cc = os.environ.get("CC", "cc")
    fast_api = _fast.api_for(lib)
    with tempfile.TemporaryDirectory() as tmp:
        exe = Path(tmp) / "overhead"
        subprocess.run([cc, "-O2", "-std=c11", f"-I{home / 'include'}", f"-I{home / 'include' / 'aclnn'}",
                        str(source), f"-L{home / 'lib64'}", "-lopapi", "-lnnopbase", "-lascendcl",
                        f"-Wl,-rpath,{home / 'lib64'}", "-o", str(exe)], check=True)
        g = np.ones((1, 1, 6, 6), np.float32)
        x = np.ones((1, 1, 4, 4), np.float32)

        def python_us(fast: bool, plans: bool) -> float:
            lib._fast_api = fast_api if fast else None
            _aclnn.PLANS = plans
            try:
                aclnn_py.reflection_pad2d_backward(g, x, [1, 1, 1, 1], backend="sim")  # records the plan
                t0 = time.perf_counter()
                for _ in range(calls):
                    aclnn_py.reflection_pad2d_backward(g, x, [1, 1, 1, 1], backend="sim")
                return (time.perf_counter() - t0) / calls * 1e6
            finally:
                lib._fast_api = fast_api
                _aclnn.PLANS = True

        def c_us() -> float:
            out = subprocess.run([str(exe), str(calls)], check=True, capture_output=True, text=True).stdout
            return float(out.split()[-1])

        runners = {"C program": c_us}
        if fast_api is not None:
            runners["fast path, plan"] = lambda: python_us(True, True)
            runners["fast path, no plan"] = lambda: python_us(True, False)
        runners["ABI-mode path"] = lambda: python_us(False, False)
        for run in runners.values():
            run()  # warm-up
        times: dict[str, list[float]] = {k: [] for k in runners}
        for _ in range(rounds):
            for k, run in runners.items():
                times[k].append(run())
    c_med = statistics.median(times["C program"])
    print(f"per-call host overhead, ReflectionPad2dBackward (1,1,6,6) on sim, median of {rounds} rounds "
          f"of {calls} calls:")
    for k, ts in times.items():
        med = statistics.median(ts)
        # each round's ratio to the C program's run next to it, then their median
        ratio = statistics.median(t / c for t, c in zip(ts, times["C program"]))
        print(f"  {k:20s} {med:6.1f} us  {med / c_med:5.1f}x C  (per-round ratio median {ratio:.1f}x, "
              f"rounds {min(ts):.1f}-{max(ts):.1f} us)")
    if fast_api is None:
        print("  (the fast path's helper is not built or ACLNN_PY_FAST=0: ABI-mode path only)")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--op", default="", help="only cases whose name contains this text")
    ap.add_argument("--backends", default=None, help="comma-separated backends (default: every available one)")
    ap.add_argument("--repeats", type=int, default=9)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--threads", type=int, default=2, help="PyTorch CPU threads")
    ap.add_argument("--no-overhead", action="store_true", help="skip the binding-vs-C per-call overhead")
    opts = ap.parse_args(argv)
    try:
        import torch
    except ImportError:
        print("bench.py needs PyTorch CPU as the baseline: pip install torch==2.13.0", file=sys.stderr)
        return 2
    torch.set_num_threads(opts.threads)
    backends = opts.backends.split(",") if opts.backends else available_backends()
    cases = [c for c in CASES if opts.op in c.name]
    print(f"PyTorch {torch.__version__} ({opts.threads} threads), NumPy {np.__version__}, "
          f"backends {backends}, {opts.repeats} repeats, median")
    run(cases, backends, opts.repeats, opts.warmup, torch)
    if not opts.no_overhead:
        print()
        overhead()
    return 0


if __name__ == "__main__":
    sys.exit(main())
