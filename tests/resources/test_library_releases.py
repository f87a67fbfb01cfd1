"""The library's own handles (a thread's streams, the devices, the runtime) and the releases
waiting for a stream: every step runs whatever the others do."""

from __future__ import annotations

import gc
import subprocess
import sys
import threading

import numpy as np
import pytest

import aclnn_py
from aclnn_py._runtime import pool
from aclnn_py import Tensor


def counters(lib) -> dict[str, int]:
    pool.trim_all()  # (the caching allocator's blocks are the binding's on purpose)
    c = lib.ffi.new("aclsimCounters *")
    lib.call("aclsimGetCounters", c)
    return {f: getattr(c, f) for f, _ in lib.ffi.typeof("aclsimCounters").fields}


def _failing_fn(lib, monkeypatch, failing: str, calls: list[str]):
    real = lib.fn

    def fn(name: str):
        f = real(name)

        def wrapper(*args):
            calls.append(name)
            if name == failing:
                raise RuntimeError(f"{name} failed")
            return f(*args)
        return wrapper

    monkeypatch.setattr(lib, "fn", fn)


def test_synchronize_runs_every_waiting_release_and_raises_the_first_error(sim_lib):
    sim_lib.synchronize()
    ran: list[int] = []
    first, second = OSError("first"), ValueError("second")

    def failing(n: int, error: BaseException):
        def release() -> None:
            ran.append(n)
            raise error
        return release

    sim_lib.defer(lambda: ran.append(1))
    sim_lib.defer(failing(2, second))
    sim_lib.defer(lambda: ran.append(3))
    sim_lib.defer(failing(4, first))
    assert sim_lib.pending()[0] == 4
    with pytest.raises(OSError) as info:
        sim_lib.synchronize()
    assert info.value is first and ran == [4, 3, 2, 1]
    assert sim_lib.pending() == (0, 0)


def test_a_failed_wait_still_runs_the_waiting_releases(sim_lib, monkeypatch):
    sim_lib.synchronize()
    ran: list[int] = []
    sim_lib.defer(lambda: ran.append(1))
    calls: list[str] = []
    with monkeypatch.context() as m:
        _failing_fn(sim_lib, m, "aclrtSynchronizeStream", calls)
        with pytest.raises(RuntimeError, match="aclrtSynchronizeStream failed"):
            sim_lib.synchronize()
    assert ran == [1] and sim_lib.pending() == (0, 0)


def test_a_thread_that_ends_releases_its_stream_even_when_a_wait_fails(sim_lib, monkeypatch):
    gc.collect()
    sim_lib.synchronize()
    before = counters(sim_lib)
    g = Tensor.from_numpy(np.ones((1, 1, 2, 2), np.float32), backend="sim")
    x = Tensor.from_numpy(np.ones((1, 1, 4, 4), np.float32), backend="sim")
    calls: list[str] = []
    results: list[object] = []

    def work() -> None:
        # device Tensors in and out: the call's temporaries wait for this thread's stream
        results.append(aclnn_py.avg_pool2d_backward(g, x, [2], [2], [0], False, True, None, backend="sim"))
        _failing_fn(sim_lib, monkeypatch, "aclrtSynchronizeStream", calls)

    t = threading.Thread(target=work)
    t.start()
    t.join()
    monkeypatch.undo()
    gc.collect()
    assert "aclrtSynchronizeStream" in calls and "aclrtDestroyStream" in calls
    results.pop().close()  # (its values are undefined: the wait for them failed)
    g.close()
    x.close()
    gc.collect()
    assert counters(sim_lib) == before  # its stream destroyed, its temporaries freed


def test_teardown_finishes_whatever_fails_on_the_way():
    script = """
from aclnn_py._runtime import loader

lib = loader.library("sim")
lib.stream()
calls = []
real = lib.fn

def fn(name):
    f = real(name)
    def wrapper(*args):
        calls.append(name)
        if name == "aclrtSynchronizeStream":
            raise RuntimeError("cannot wait")
        return f(*args)
    return wrapper

lib.fn = fn
lib.teardown()
lib.teardown()  # once
print(" ".join(calls))
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["aclrtSynchronizeStream", "aclrtDestroyStream", "aclrtResetDevice",
                                   "aclFinalize"]


def test_cached_makes_a_value_once_per_library_and_key(sim_lib):
    made: list[object] = []

    def make(lib):
        made.append(lib)
        return object()

    key = "tests/resources: a value"
    first = sim_lib.cached(key, make)
    assert sim_lib.cached(key, make) is first and made == [sim_lib]
    assert sim_lib.cached(key + " 2", make) is not first and len(made) == 2
    from aclnn_py._convert.executor import _functions

    assert _functions(sim_lib) is _functions(sim_lib)  # the per-call path's table, looked up once
    assert _functions(sim_lib).aclrtMalloc is sim_lib.fn("aclrtMalloc")
