"""Device ``Tensor`` arguments through the fast path (issue #25): the op functions and ``call``
with device Tensors (and a mix with NumPy arrays) replay a recorded plan in one crossing, their
new outputs from the caching allocator (``aclnn_py/_runtime/pool.py``). Results, errors and
releases are the ABI-mode path's and the numpy backend's; a block freed while queued work may
still use it is not handed out before that work is done (the simulator runs queued work only
when the stream is synchronised, so a too-early reuse shows as wrong data). These tests run on
every path: with the entry (plans asserted), with ``ACLNN_PY_FAST=0`` and without the entry
(``test_entry.py``'s ``test_suite_without_the_entry``)."""

from __future__ import annotations

import gc
import os
import sys

import numpy as np
import pytest

import aclnn_py
from aclnn_py import AclnnError, Tensor, _fast
from aclnn_py._runtime import pool

from helpers import assert_close, raised, run_in_threads

CALL = sys.modules["aclnn_py.call"]
PAD = sys.modules["aclnn_py.ops.reflection_pad2d_backward"]
OP = "aclnnReflectionPad2dBackward"
P = [1, 1, 1, 1]


def counters(lib) -> dict[str, int]:
    pool.trim_all()  # (the caching allocator's blocks are the binding's on purpose)
    c = lib.ffi.new("aclsimCounters *")
    lib.call("aclsimGetCounters", c)
    return {f: getattr(c, f) for f, _ in lib.ffi.typeof("aclsimCounters").fields}


def _entry_on(lib) -> bool:
    return _fast.enabled() and _fast.entry() is not None and _fast.api_for(lib) is not None


@pytest.fixture
def lib(sim_lib):
    if _entry_on(sim_lib):
        PAD._aclnn.clear()
        CALL._PLANS.clear()
    return sim_lib


def _dev(a):
    return Tensor.from_numpy(np.ascontiguousarray(a), backend="sim")


def _data(seed=0):
    # Small whole numbers: the gradient's sums of up to four of them are exact in any order, so
    # the simulator's result equals the numpy backend's bit for bit by construction (that path
    # sums by a BLAS product, whose order depends on the CPU's OpenBLAS kernel).
    rng = np.random.default_rng(seed)
    return rng.integers(-64, 64, (2, 3, 6, 6)).astype(np.float32), np.zeros((2, 3, 4, 4), np.float32)


def test_device_tensor_calls_replay_a_plan_and_equal_numpy(lib):
    g, x = _data()
    want = aclnn_py.reflection_pad2d_backward(g, x, P, backend="numpy")
    gt, xt = _dev(g), _dev(x)
    for args in ((gt, xt), (gt, xt), (g, xt), (g, xt), (gt, x), (gt, x)):
        out = aclnn_py.reflection_pad2d_backward(*args, P, backend="sim")
        assert type(out) is Tensor and out.shape == want.shape and out.dtype == want.dtype
        np.testing.assert_array_equal(out.numpy(), want)
    if _entry_on(lib):
        assert [planned for _, planned in PAD._aclnn.plans()] == [True, True, True]


def test_every_operator_with_device_tensors_against_numpy(lib):
    rng = np.random.default_rng(3)
    g, x = rng.standard_normal((1, 2, 4, 4)).astype(np.float32), np.zeros((1, 2, 4, 4), np.float32)
    w = rng.standard_normal((2, 2, 3, 3)).astype(np.float32)
    idx = np.array([[[[0, 3], [9, 14]]] * 2], np.int64)
    cols = rng.standard_normal((1, 8, 4)).astype(np.float32)
    g2 = g[..., :2, :2].copy()
    calls = [
        (aclnn_py.avg_pool2d_backward, (g2, x, [2, 2], [2, 2], [0, 0], False, True, 0), (0, 1)),
        (aclnn_py.max_unpool2d_backward, (g, x[..., :2, :2].copy(), idx, [4, 4]), (0, 1, 2)),
        (aclnn_py.im2col_backward, (cols, [4, 4], [2, 2], [1, 1], [0, 0], [2, 2]), (0,)),
        (aclnn_py.convolution_backward, (g2, x, w, [2], [1, 1], [0, 0], [1, 1], False, [0, 0], 1,
                                         [True, True, False]), (0, 1, 2)),
    ]
    for fn, args, tensors in calls:
        want = fn(*args, backend="numpy")
        device = tuple(_dev(a) if i in tensors else a for i, a in enumerate(args))
        for _ in range(3):
            got = fn(*device, backend="sim")
            for a, b in zip(got if isinstance(got, tuple) else (got,), want if isinstance(want, tuple) else (want,)):
                if b is None:
                    assert a is None
                else:
                    assert type(a) is Tensor
                    assert_close(a.numpy(), b, b.dtype, scale=4)


def test_call_with_device_tensors_replays_and_writes_the_output(lib):
    g, x = _data(1)
    want = aclnn_py.reflection_pad2d_backward(g, x, P, backend="numpy")
    gt, xt = _dev(g), _dev(x)
    out = Tensor.empty(want.shape, want.dtype, backend="sim")
    for inputs in ((gt, xt), (gt, xt), (g, xt), (g, xt)):
        assert aclnn_py.call(OP, *inputs, P, out, backend="sim") is out
        np.testing.assert_array_equal(out.numpy(), want)
    if _entry_on(lib):
        assert [planned for _, planned in CALL._PLANS.plans()] == [True, True]


def test_a_tensor_at_two_places_is_not_replayed_wrongly(lib):
    rng = np.random.default_rng(5)
    a, b, c = (rng.standard_normal((1, 2, 3, 3)).astype(np.float32) for _ in range(3))
    w = rng.standard_normal((2, 2, 1, 1)).astype(np.float32)
    ta, tb, tc = _dev(a), _dev(b), _dev(c)

    def weight_grad(go, x, backend):
        return aclnn_py.convolution_backward(go, x, w, [2], [1, 1], [0, 0], [1, 1], False, [0, 0], 1,
                                             [False, True, False], backend=backend)[1]

    for (go, x), (tgo, tx) in (((a, a), (ta, ta)), ((a, a), (ta, ta)), ((b, c), (tb, tc)), ((b, c), (tb, tc)),
                               ((a, a), (ta, ta))):
        want = weight_grad(go, x, "numpy")
        assert_close(weight_grad(tgo, tx, "sim").numpy(), want, want.dtype, scale=4)


def test_same_errors_on_every_path(lib, monkeypatch):
    g, x = _data()
    gt, bad = _dev(g), _dev(np.zeros((2, 3, 5, 4), np.float32))
    closed = _dev(x)
    closed.close()
    runs = [
        lambda: aclnn_py.reflection_pad2d_backward(gt, bad, P, backend="sim"),
        lambda: aclnn_py.reflection_pad2d_backward(gt, closed, P, backend="sim"),
        lambda: aclnn_py.reflection_pad2d_backward(gt, _dev(x), [1, 1, 1], backend="sim"),
        lambda: aclnn_py.call(OP, gt, bad, P, Tensor.empty((2, 3, 5, 4), np.float32, backend="sim"), backend="sim"),
    ]
    fast = [raised(r) for r in runs]
    again = [raised(r) for r in runs]  # (a failed call stores no plan: the checks run again)
    monkeypatch.setattr(lib, "fast_api", None)
    abi = [raised(r) for r in runs]
    assert fast == again == abi
    assert "closed Tensor" in str(fast[1][-1])


def test_a_block_is_not_reused_while_queued_work_may_use_it(lib):
    """The simulator runs queued work at the synchronisation: an output dropped before that,
    whose block a new Tensor took and filled, would be read (by the next call) or overwritten
    (by the first) after the fill."""
    g, x = _data(2)
    gt, xt = _dev(g), _dev(x)
    lib.synchronize()
    want1 = aclnn_py.reflection_pad2d_backward(g, x, P, backend="numpy")
    first = aclnn_py.reflection_pad2d_backward(gt, xt, P, backend="sim")  # queued, not run
    address = int(lib.ffi.cast("uintptr_t", first.buffer.ptr))
    assert lib.has_pending()
    # the queued call reads ``first`` after the fill below if its block were taken now
    second = aclnn_py.call(OP, _dev(np.pad(want1, ((0, 0), (0, 0), (1, 1), (1, 1)))), first, P,
                           Tensor.empty(x.shape, x.dtype, backend="sim"), backend="sim")
    del first
    gc.collect()
    filler = np.full(x.shape, 7.0, np.float32)
    taken = [Tensor.from_numpy(filler, backend="sim") for _ in range(4)]
    assert all(int(lib.ffi.cast("uintptr_t", t.buffer.ptr)) != address for t in taken)
    lib.synchronize()
    for t in taken:
        np.testing.assert_array_equal(t.numpy(), filler)
    np.testing.assert_array_equal(second.numpy(), np.zeros_like(x) + second.numpy())  # ran
    # once the stream is past the work, the block is handed out again (the cache at work)
    after = [Tensor.empty(x.shape, x.dtype, backend="sim") for _ in range(8)]
    assert address in [int(lib.ffi.cast("uintptr_t", t.buffer.ptr)) for t in after]


def test_chains_of_device_calls_leak_nothing(lib):
    g, x = _data(3)
    gc.collect()
    lib.synchronize()
    before = counters(lib)
    gt, xt = _dev(g), _dev(x)
    want = aclnn_py.reflection_pad2d_backward(g, x, P, backend="numpy")
    outs = []
    for i in range(600):
        out = aclnn_py.reflection_pad2d_backward(gt if i % 2 else g, xt, P, backend="sim")
        if i % 3 == 0:
            out.close()
        else:
            outs.append(out)
        if len(outs) > 5:
            outs.pop(0)
    np.testing.assert_array_equal(outs[-1].numpy(), want)
    with pytest.raises(AclnnError):
        aclnn_py.reflection_pad2d_backward(gt, _dev(np.zeros((2, 3, 5, 4), np.float32)), P, backend="sim")
    del outs, out, gt, xt
    gc.collect()
    lib.synchronize()
    assert counters(lib) == before


def test_threads_run_device_chains(lib):
    g, x = _data(4)
    want = aclnn_py.reflection_pad2d_backward(g, x, P, backend="numpy")

    def work() -> None:
        gt, xt = _dev(g), _dev(x)
        for _ in range(200):
            out = aclnn_py.reflection_pad2d_backward(gt, xt, P, backend="sim")
        np.testing.assert_array_equal(out.numpy(), want)

    run_in_threads(work, [()] * 3)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="fork")
def test_device_chain_in_a_forked_child(lib):
    g, x = _data(5)
    gt, xt = _dev(g), _dev(x)
    for _ in range(3):
        aclnn_py.reflection_pad2d_backward(gt, xt, P, backend="sim").close()
    lib.synchronize()
    want = aclnn_py.reflection_pad2d_backward(g, x, P, backend="numpy")
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        code = 1
        try:
            a, b = _dev(g), _dev(x)
            for _ in range(3):
                out = aclnn_py.reflection_pad2d_backward(a, b, P, backend="sim")
            code = 0 if np.array_equal(out.numpy(), want) else 2
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0


def test_the_cache_is_bounded_and_emptied(lib, monkeypatch):
    cache = pool.pool(lib)
    cache.trim()
    assert cache.take(4096) is None
    monkeypatch.setattr(pool, "MAX_CACHED_BYTES", 3 * 4096)
    ts = [Tensor.empty((1024,), np.float32, backend="sim") for _ in range(5)]
    lib.synchronize()
    blocks = counters(lib)["device_blocks"]
    del ts
    gc.collect()
    assert cache.nbytes == 3 * 4096  # two of the five freed at once: the cache was full
    c = lib.ffi.new("aclsimCounters *")
    lib.call("aclsimGetCounters", c)
    assert c.device_blocks == blocks - 5 + 3
    cache.trim()
    assert cache.nbytes == 0 and cache.take(4096) is None
    cache.trim()  # (nothing: once)


def test_a_forked_child_forgets_the_parents_blocks(lib):
    t = Tensor.empty((256,), np.float32, backend="sim")
    t.close()
    lib.synchronize()
    assert pool.pool(lib).nbytes >= 1024
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        os.close(read)
        os.write(write, str(pool.pool(lib).nbytes).encode())
        os._exit(0)
    os.close(write)
    with os.fdopen(read) as f:
        assert f.read() == "0"
    os.waitpid(pid, 0)


def test_a_failed_allocation_empties_the_cache_and_tries_again(tmp_path):
    """A small device: the cache holds the memory of dropped Tensors; a Tensor of another size
    still fits, after the cache is emptied."""
    script = tmp_path / "small.py"
    script.write_text(
        "import numpy as np\nfrom aclnn_py import Tensor\nfrom aclnn_py._runtime import loader, pool\n"
        "lib = loader.library('sim')\n"
        "ts = [Tensor.empty((1 << 18,), np.float32, backend='sim') for _ in range(3)]\n"
        "del ts\nlib.synchronize()\nassert pool.pool(lib).nbytes == 3 << 20\n"
        "big = Tensor.empty((3 << 18,), np.float32, backend='sim')\n"
        "assert pool.pool(lib).nbytes == 0\nprint('ok')\n")
    env = dict(os.environ, ACLNN_PY_SIM_DEVICE_MEMORY=str((3 << 20) + 4096))
    import subprocess
    done = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr


def test_the_caches_own_rules_without_a_device(monkeypatch):
    """A torn-down library's blocks are neither kept nor freed (aclFinalize took them); a forked
    child's pools forget their blocks and get new locks."""

    class Gone:
        finalized = True

        def fn(self, name):
            raise AssertionError(f"{name} called after teardown")

    cache = pool.DevicePool(Gone())
    cache.give(0x1000, 64)
    assert cache.nbytes == 0 and cache.take(64) is None
    cache.trim()
    kept = pool.DevicePool(Gone())
    kept.blocks[64] = [0x2000]
    kept.nbytes = 64
    lock = kept.lock
    monkeypatch.setattr(pool, "_pools", {1: kept})
    pool._new_locks_in_child()
    assert kept.nbytes == 0 and kept.take(64) is None and kept.lock is not lock
