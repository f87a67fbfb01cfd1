"""On the simulator: every handle the binding acquires is released exactly once whichever C
call fails (or is interrupted by KeyboardInterrupt) and wherever: the op calls' ABI-mode path,
``aclnn_py.call``, the device ``Tensor`` and the host arrays. The simulator's counters
(``aclsimGetCounters``: live tensors, arrays, executors, device blocks and bytes) must come
back to what they were; a release running twice would take them below (or the simulator
would refuse the dead handle)."""

from __future__ import annotations

import gc
import subprocess
import sys
import threading

import numpy as np
import pytest

import aclnn_py
from aclnn_py._runtime import pool
from aclnn_py import AclnnError, Tensor
from aclnn_py._convert.executor import _functions
from aclnn_py._convert.arrays import BoolArray, FloatArray, IntArray, Scalar
from helpers import assert_close
from reference.reflection_pad2d_backward import reflection_pad2d_backward as pad_reference


def counters(lib) -> dict[str, int]:
    pool.trim_all()  # (the caching allocator's blocks are the binding's on purpose)
    c = lib.ffi.new("aclsimCounters *")
    lib.call("aclsimGetCounters", c)
    return {f: getattr(c, f) for f, _ in lib.ffi.typeof("aclsimCounters").fields}


def settled(lib) -> dict[str, int]:
    """The counters once the stream is past every queued call and its waiting releases ran."""
    gc.collect()
    lib.synchronize()
    return counters(lib)


# The C functions that acquire something or can fail on the way; what each returns to fail.
# (Releases are not made to fail: a release that fails has released nothing the binding can
# redo; they are interrupted after doing their work below.)
STATUS, NULL = "status", "null"
ACQUIRING = {"aclrtMalloc": STATUS, "aclrtMemcpy": STATUS, "aclrtMemset": STATUS, "aclCreateTensor": NULL,
             "aclCreateIntArray": NULL, "aclCreateBoolArray": NULL, "aclCreateFloatArray": NULL,
             "aclCreateScalar": NULL, "aclrtSynchronizeStream": STATUS}
RELEASING = ("aclrtFree", "aclDestroyTensor", "aclDestroyIntArray", "aclDestroyBoolArray", "aclDestroyFloatArray",
             "aclDestroyScalar", "aclDestroyAclOpExecutor")


class Injector:
    """Makes the ``fail_at``-th call to a C function the binding makes fail (``mode``
    "status": its failure value; "interrupt": KeyboardInterrupt instead of the call), or,
    with ``mode`` "release", interrupts the ``fail_at``-th release after it did its work."""

    def __init__(self, lib, monkeypatch, fail_at: int, mode: str) -> None:
        self.lib, self.fail_at, self.mode = lib, fail_at, mode
        self.seen = 0
        self.fired = False
        real_fn = lib.fn
        self.sync = real_fn("aclrtSynchronizeStream")
        wrapped: dict[str, object] = {}

        def fn(name: str):
            f = wrapped.get(name)
            if f is None:
                f = wrapped[name] = self.wrap(name, real_fn(name))
            return f

        monkeypatch.setattr(lib, "fn", fn)
        funcs = _functions(lib)  # the per-call path's table, looked up once per library
        for name in (*ACQUIRING, *RELEASING):
            if hasattr(funcs, name):
                monkeypatch.setattr(funcs, name, fn(name))

    def wrap(self, name: str, real):
        phase2 = name.startswith("aclnn") and not name.endswith("GetWorkspaceSize")
        phase1 = name.startswith("aclnn") and name.endswith("GetWorkspaceSize")
        if self.mode == "release":
            if name not in RELEASING:
                return real

            def interrupted_after(*args):
                result = real(*args)
                self.seen += 1
                if self.seen == self.fail_at:
                    self.fired = True
                    raise KeyboardInterrupt
                return result
            return interrupted_after
        if name not in ACQUIRING and not phase1 and not phase2:
            return real
        failure = self.lib.ffi.NULL if ACQUIRING.get(name) == NULL else 207001

        def failing(*args):
            self.seen += 1
            if self.seen != self.fail_at:
                return real(*args)
            self.fired = True
            if phase2:
                # CANN's phase 2 takes the executor whatever its outcome: run it (and let the
                # stream finish), then report a failure or be interrupted on the way back.
                real(*args)
                self.sync(args[3])
            if self.mode == "interrupt":
                raise KeyboardInterrupt
            return 161002 if phase1 or phase2 else failure
        return failing


def _every_failure(lib, run, check, modes=("status", "interrupt", "release")):
    """Run ``run`` with a failure at its 1st, 2nd, ... C call until it succeeds, per mode;
    after each failure the counters are back; the success is checked with ``check``."""
    run()  # warm: functions looked up, thread stream made
    before = settled(lib)
    monkeypatch = pytest.MonkeyPatch()
    for mode in modes:
        fail_at, failures = 1, 0
        while True:
            injector = Injector(lib, monkeypatch, fail_at, mode)
            try:
                result = run()
            except (AclnnError, KeyboardInterrupt) as exc:
                assert injector.fired, exc
                if mode == "status":
                    assert isinstance(exc, AclnnError) and exc.status in (207001, 161001, 161002), exc
                else:
                    assert isinstance(exc, KeyboardInterrupt)
                failures += 1
            else:
                if not injector.fired:
                    monkeypatch.undo()
                    check(result)
                    del result
                    assert settled(lib) == before, f"{mode}: success"
                    break
            finally:
                monkeypatch.undo()
            assert settled(lib) == before, f"{mode}: failure at C call {fail_at}"
            fail_at += 1
        assert failures >= (1 if mode == "release" else 3), (mode, failures)  # it failed at several points


@pytest.fixture
def abi_lib(sim_lib, monkeypatch):
    """The simulator with the fast path's helper off: every call takes the ABI-mode path."""
    monkeypatch.setattr(sim_lib, "fast_api", None, raising=False)
    yield sim_lib


def _pad_case():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 3, 4, 5)).astype(np.float32)
    g = rng.standard_normal((2, 3, 6, 8)).astype(np.float32)
    return g, x, [1, 2, 1, 1]


def test_op_call_abi_path_releases_everything_at_every_failure(abi_lib, monkeypatch):
    g, x, padding = _pad_case()
    want = pad_reference(g, x, padding)

    def run():
        return aclnn_py.reflection_pad2d_backward(g, x, padding, backend="sim")

    def check(result):
        assert isinstance(result, np.ndarray)
        assert_close(result, want, np.float32)

    _every_failure(abi_lib, run, check)


def test_convolution_abi_path_releases_everything_at_every_failure(abi_lib, monkeypatch):
    """Three inputs, three outputs (zero-filled), int and bool arrays: many failure points."""
    w = np.ones((4, 3, 3, 3), np.float32)
    x = np.zeros((2, 3, 4, 4), np.float32)
    g = np.ones((2, 4, 4, 4), np.float32)

    def run():
        return aclnn_py.convolution_backward(g, x, w, [4], [1, 1], [1, 1], [1, 1], False, [0, 0], 1,
                                             [True, True, True], backend="sim")

    want = aclnn_py.convolution_backward(g, x, w, [4], [1, 1], [1, 1], [1, 1], False, [0, 0], 1,
                                         [True, True, True], backend="numpy")

    def check(result):
        for a, b in zip(result, want):
            assert_close(a, b, np.float32)

    _every_failure(abi_lib, run, check)


def test_device_tensor_call_releases_everything_at_every_failure(abi_lib, monkeypatch):
    """Device Tensors in and out: the temporaries wait for the stream, the output Tensor is
    the caller's on success and released on failure."""
    g, x, padding = _pad_case()
    want = pad_reference(g, x, padding)
    tg = Tensor.from_numpy(g, backend="sim")
    tx = Tensor.from_numpy(x, backend="sim")

    def run():
        return aclnn_py.reflection_pad2d_backward(tg, tx, padding, backend="sim")

    def check(result):
        assert isinstance(result, Tensor)
        assert_close(result.numpy(), want, np.float32)
        result.close()

    _every_failure(abi_lib, run, check)
    tg.close()
    tx.close()


def test_aclnn_call_releases_everything_at_every_failure(abi_lib, monkeypatch):
    g, x, padding = _pad_case()
    want = pad_reference(g, x, padding)

    def run():
        out = np.zeros_like(x)
        aclnn_py.call("aclnnReflectionPad2dBackward", g, x, padding, out, backend="sim")
        return out

    _every_failure(abi_lib, run, lambda out: assert_close(out, want, np.float32))


def test_prepared_executor_releases_everything_at_every_failure(sim_lib, monkeypatch):
    g, x, padding = _pad_case()
    want = pad_reference(g, x, padding)

    def run():
        out = np.zeros_like(x)
        with aclnn_py.prepare("aclnnReflectionPad2dBackward", g, x, padding, out, backend="sim") as p:
            p(g, x, padding, out)
            p(g, x, padding, out)
        return out

    # (Prepared.close is a finalizer: it never raises, so only acquisitions are made to fail.)
    _every_failure(sim_lib, run, lambda out: assert_close(out, want, np.float32),
                   modes=("status", "interrupt"))


def test_device_tensors_and_arrays_release_everything_at_every_failure(sim_lib, monkeypatch):
    a = np.arange(24, dtype=np.float32).reshape(2, 3, 4)

    def run():
        t = Tensor.from_numpy(a[:, ::2], backend="sim")
        e = Tensor.empty((3, 5), np.float16, backend="sim")
        v = t.view((2, 2), (8, 1), 1)
        arrays = [IntArray([1, 2], backend="sim"), BoolArray([True], backend="sim"),
                  FloatArray([0.5], backend="sim"), Scalar(2, np.int32, backend="sim")]
        out = t.numpy()
        for h in (v, t, e, *arrays):
            h.close()
        return out

    _every_failure(sim_lib, run, lambda out: np.testing.assert_array_equal(out, a[:, ::2]),
                   modes=("status", "interrupt"))


def test_tensor_creation_refused_after_the_allocation(sim_lib):
    """aclCreateTensor refuses a 9-dimensional view after aclrtMalloc gave its memory."""
    before = settled(sim_lib)
    with pytest.raises(AclnnError) as info:
        Tensor.from_numpy(np.zeros((1, 2, 1, 1, 1, 1, 1, 1, 2), np.float32), backend="sim")
    assert info.value.api == "aclCreateTensor" and "at most 8 dimensions" in info.value.message
    with pytest.raises(AclnnError):
        Tensor.empty((2,) * 9, np.float32, backend="sim")
    assert counters(sim_lib) == before  # nothing waits: released at once


def test_an_allocation_the_device_cannot_hold_leaves_nothing(sim_lib):
    before = settled(sim_lib)
    with pytest.raises(AclnnError) as info:
        Tensor.empty((1 << 60,), np.float32, backend="sim")
    assert info.value.status == 207001 and info.value.api == "aclrtMalloc"
    assert counters(sim_lib) == before


def test_a_small_device_fails_midway_and_leaks_nothing(tmp_path):
    """ACLNN_PY_SIM_DEVICE_MEMORY makes a small device (read when the simulator loads: a child
    process): the second allocation of an op call fails after the first succeeded."""
    script = tmp_path / "small_device.py"
    script.write_text("""
import numpy as np
import aclnn_py
from aclnn_py import AclnnError, Tensor
from aclnn_py._runtime import loader, pool

lib = loader.library("sim")
lib.stream()

def counters():
    pool.trim_all()
    c = lib.ffi.new("aclsimCounters *")
    lib.call("aclsimGetCounters", c)
    return (c.tensors, c.int_arrays, c.executors, c.device_blocks, c.device_bytes)

before = counters()
x = np.ones((64, 64), np.float32)        # 16 KiB: fits the 24 KiB device once, not twice
g = np.ones((66, 66), np.float32)        # 17 KiB
for make in (lambda: Tensor.from_numpy(np.ones((2, 64, 64), np.float32), backend="sim"),
             lambda: aclnn_py.reflection_pad2d_backward(g[None, None], x[None, None], [1, 1, 1, 1],
                                                        backend="sim")):
    try:
        make()
    except AclnnError as exc:
        assert exc.status == 207001, exc
        print("refused", exc.api)
    lib.synchronize()
    assert counters() == before, (counters(), before)
t = Tensor.from_numpy(x, backend="sim")  # what fits still works
assert (t.numpy() == 1).all()
t.close()
assert counters() == before
print("ok")
""")
    import os

    env = dict(os.environ, ACLNN_PY_SIM_DEVICE_MEMORY=str(24 << 10))
    done = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.split() == ["refused", "aclrtMalloc", "refused", "aclrtMalloc", "ok"], done.stdout


def test_deferred_releases_wait_for_the_stream_then_run_once(abi_lib, monkeypatch):
    g, x, padding = _pad_case()
    tg, tx = Tensor.from_numpy(g, backend="sim"), Tensor.from_numpy(x, backend="sim")
    before = settled(abi_lib)
    out = aclnn_py.reflection_pad2d_backward(tg, tx, padding, backend="sim")
    waiting, nbytes = abi_lib.pending()
    assert waiting == 1  # one deferred release per call
    during = counters(abi_lib)
    # the call's own descriptors and arrays are gone; the output Tensor is the caller's
    assert during["tensors"] == before["tensors"] + 1 and during["int_arrays"] == before["int_arrays"]
    abi_lib.synchronize()
    assert abi_lib.pending() == (0, 0)
    assert_close(out.numpy(), pad_reference(g, x, padding), np.float32)
    out.close()
    assert settled(abi_lib) == before
    tg.close()
    tx.close()


def test_interrupted_after_phase_2_the_memory_waits_for_the_stream(abi_lib, monkeypatch):
    """KeyboardInterrupt after the kernel was queued (here: in the results' synchronisation):
    the call's device memory is not freed under the queued work but after the stream."""
    g, x, padding = _pad_case()
    aclnn_py.reflection_pad2d_backward(g, x, padding, backend="sim")
    before = settled(abi_lib)
    real_sync = abi_lib.synchronize
    calls = []

    def interrupted() -> None:
        calls.append(1)
        raise KeyboardInterrupt

    with monkeypatch.context() as m:
        m.setattr(abi_lib, "synchronize", interrupted)
        with pytest.raises(KeyboardInterrupt):
            aclnn_py.reflection_pad2d_backward(g, x, padding, backend="sim")
    assert calls == [1]
    assert abi_lib.pending()[0] == 1  # the temporaries wait for the stream
    assert counters(abi_lib)["device_blocks"] > before["device_blocks"]
    assert counters(abi_lib)["tensors"] == before["tensors"]  # descriptors went at once
    real_sync()
    assert settled(abi_lib) == before


def test_threads_calling_with_device_tensors_leave_nothing(sim_lib):
    g, x, padding = _pad_case()
    want = pad_reference(g, x, padding)
    before = settled(sim_lib)
    errors: list[BaseException] = []

    def work() -> None:
        try:
            tg, tx = Tensor.from_numpy(g, backend="sim"), Tensor.from_numpy(x, backend="sim")
            for _ in range(20):
                out = aclnn_py.reflection_pad2d_backward(tg, tx, padding, backend="sim")
                assert_close(out.numpy(), want, np.float32)
                out.close()
                with pytest.raises(AclnnError):
                    aclnn_py.reflection_pad2d_backward(tg, tx, [9, 9, 9, 9], backend="sim")
            tg.close()
            tx.close()
            sim_lib.synchronize()
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    gc.collect()
    after = counters(sim_lib)
    # the threads' streams ended with them; every handle and byte is back
    assert after == before, (after, before)


def test_host_arrays_check_their_values_before_anything_else(sim_lib):
    """Validate first: a bad value is the caller's error on every backend, before a library
    is looked for or a handle made."""
    before = settled(sim_lib)
    for backend in ("numpy", "sim"):
        with pytest.raises(TypeError, match="aclCreateIntArray: values must be a sequence, got None"):
            IntArray(None, backend=backend)  # type: ignore[arg-type]
        with pytest.raises(TypeError):
            BoolArray([1.5], backend=backend)
        with pytest.raises(ValueError, match="float32"):
            FloatArray([1e39], backend=backend)
    with pytest.raises(AclnnError, match="backend 'npu' or 'sim'"):
        IntArray([1], backend="numpy")
    assert counters(sim_lib) == before


def test_a_call_releases_its_handles_once_however_often_it_ends(abi_lib):
    from aclnn_py._convert.executor import Call

    before = settled(abi_lib)
    c = Call(abi_lib, "aclnnReflectionPad2dBackward", fast=False)
    c.tensor("gradOutput", np.ones((1, 1, 4, 4), np.float32))
    c.int_array("padding", [1, 1, 1, 1])
    c.output((1, 1, 2, 2), np.float32)
    during = counters(abi_lib)
    assert during["tensors"] == before["tensors"] + 2 and during["device_blocks"] == before["device_blocks"] + 2
    c.end()
    assert counters(abi_lib) == before
    c.end()
    c.__exit__(None, None, None)
    assert counters(abi_lib) == before  # (a second release would have gone below, or been refused)
