"""aclnn_py.set_device / get_device (one device per thread) and ``stream=`` (a stream the caller
owns) on the simulator."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
import textwrap
import threading

import numpy as np
import pytest

import aclnn_py
from aclnn_py import Tensor
from aclnn_py._runtime import current_device, device as _device

from test_tensor import counters

GRAD = np.arange(4, dtype=np.float32).reshape(1, 1, 2, 2)
SELF = np.ones((1, 1, 4, 4), np.float32)


def _pool(grad, self, **kw):
    kw.setdefault("backend", "sim")
    return aclnn_py.avg_pool2d_backward(grad, self, [2], [2], [0], False, True, None, **kw)


EXPECTED = _pool(GRAD, SELF, backend="numpy")


# -- set_device / get_device ---------------------------------------------------------------------

def _in_a_thread(work):
    out = []

    def run():
        try:
            out.append(work())
        except Exception as exc:
            out.append(exc)

    t = threading.Thread(target=run)
    t.start()
    t.join()
    return out[0]


def test_default_device_is_0_or_the_environment_variable(monkeypatch):
    assert _in_a_thread(aclnn_py.get_device) == 0  # the suite runs without ACLNN_PY_DEVICE
    monkeypatch.setattr(current_device, "_default", None)
    monkeypatch.setenv("ACLNN_PY_DEVICE", "3")
    assert _in_a_thread(aclnn_py.get_device) == 3
    monkeypatch.setattr(current_device, "_default", None)
    monkeypatch.setenv("ACLNN_PY_DEVICE", "x")
    error = _in_a_thread(aclnn_py.get_device)
    assert isinstance(error, ValueError) and "ACLNN_PY_DEVICE" in str(error)
    monkeypatch.setattr(current_device, "_default", None)


@pytest.mark.parametrize("bad, error", [("0", TypeError), (1.0, TypeError), (True, TypeError), (None, TypeError),
                                        (-1, ValueError)])
def test_set_device_validates_its_argument(bad, error):
    with pytest.raises(error, match="set_device: device"):
        aclnn_py.set_device(bad)
    assert aclnn_py.get_device() == 0


def test_a_device_the_simulator_lacks_is_the_runtimes_error(sim_lib):
    count = sim_lib.ffi.new("uint32_t *")
    sim_lib.call("aclrtGetDeviceCount", count)
    assert count[0] == 1  # ACLSIM_DEVICE_COUNT is not set in the suite
    with pytest.raises(aclnn_py.AclnnError, match="invalid device id 1") as info:
        aclnn_py.set_device(1)  # the simulator is loaded: checked at once
    assert info.value.status == 107001 and info.value.api == "aclrtSetDevice"
    assert aclnn_py.get_device() == 0
    np.testing.assert_array_equal(_pool(GRAD, SELF), EXPECTED)  # the thread still works on device 0


def test_device_per_thread(sim_lib):
    seen = {}

    def work(name):
        aclnn_py.set_device(0)
        seen[name] = (aclnn_py.get_device(), _pool(GRAD, SELF))

    threads = [threading.Thread(target=work, args=(i,)) for i in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(seen) == [0, 1, 2]
    for device, result in seen.values():
        assert device == 0
        np.testing.assert_array_equal(result, EXPECTED)


TWO_DEVICES = textwrap.dedent("""
    import threading
    import numpy as np
    import aclnn_py
    from aclnn_py._runtime import loader
    lib = loader.library("sim")

    def device_of_stream():
        d = lib.ffi.new("int32_t *")
        lib.call("aclrtGetDevice", d)
        return d[0]

    def pool(grad, self, **kw):
        return aclnn_py.avg_pool2d_backward(grad, self, [2], [2], [0], False, True, None, backend="sim", **kw)

    grad = np.arange(4, dtype=np.float32).reshape(1, 1, 2, 2)
    x = np.ones((1, 1, 4, 4), np.float32)
    want = pool(grad, x)
    seen = {}

    def work(device):
        aclnn_py.set_device(device)
        out = pool(grad, x)
        with aclnn_py.Tensor.from_numpy(grad, backend="sim") as g, aclnn_py.Tensor.from_numpy(x, backend="sim") as t:
            chained = pool(g, t).numpy()
        seen[device] = (aclnn_py.get_device(), device_of_stream(), np.array_equal(out, want),
                        np.array_equal(chained, want))

    threads = [threading.Thread(target=work, args=(d,)) for d in (0, 1)]
    for t in threads: t.start()
    for t in threads: t.join()
    assert seen == {0: (0, 0, True, True), 1: (1, 1, True, True)}, seen
    assert aclnn_py.get_device() == 0
    aclnn_py.set_device(1)  # the main thread moves, and back
    assert device_of_stream() == 1 and np.array_equal(pool(grad, x), want)
    aclnn_py.set_device(0)
    assert device_of_stream() == 0 and np.array_equal(pool(grad, x), want)
    try:
        aclnn_py.set_device(2)
    except aclnn_py.AclnnError as e:
        assert e.status == 107001
    else:
        raise AssertionError("device 2 accepted")
    print("ok")
""")


def test_two_devices_two_threads(sim_lib):
    env = dict(os.environ, ACLSIM_DEVICE_COUNT="2", ACLNN_PY_BACKEND="sim")
    env.pop("ACLNN_PY_DEVICE", None)
    done = subprocess.run([sys.executable, "-c", TWO_DEVICES], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr


def test_set_device_opens_the_device_of_the_current_backend(sim_lib):
    env = dict(os.environ, ACLNN_PY_BACKEND="sim")
    code = ("import aclnn_py\nfrom aclnn_py import capi\nfrom aclnn_py._runtime import loader\nassert not loader.loaded_backends()\n"
            "try:\n    aclnn_py.set_device(5)\nexcept aclnn_py.AclnnError as e:\n    print(e.status)\n"
            "aclnn_py.set_device(0)\ncapi.aclrtDestroyStream(capi.aclrtCreateStream())\nprint(aclnn_py.get_device())")
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.split() == ["107001", "0"], done.stderr


def test_environment_variable_selects_the_device(sim_lib):
    env = dict(os.environ, ACLSIM_DEVICE_COUNT="2", ACLNN_PY_DEVICE="1")
    code = ("import aclnn_py\nfrom aclnn_py._runtime import loader\nlib = loader.library('sim')\nlib.stream()\n"
            "d = lib.ffi.new('int32_t *')\nlib.call('aclrtGetDevice', d)\nprint(aclnn_py.get_device(), d[0])")
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.split() == ["1", "1"], done.stderr


# -- stream= -------------------------------------------------------------------------------------

@pytest.fixture
def caller_stream(sim_lib):
    """A stream the test owns (aclnn_py.capi.aclrtCreateStream), destroyed by the test."""
    from aclnn_py import capi

    sim_lib.stream()  # this thread's device and stream exist before the counters' baseline
    gc.collect()
    sim_lib.synchronize()
    before = counters(sim_lib)
    with aclnn_py.use_backend("sim"):
        stream = capi.aclrtCreateStream()
    yield stream
    with aclnn_py.use_backend("sim"):
        capi.aclrtSynchronizeStream(stream)  # still alive and usable
        capi.aclrtDestroyStream(stream)
    gc.collect()
    sim_lib.synchronize()
    assert counters(sim_lib) == before  # nothing leaked, nothing of the binding's left on it


class TorchNpuStream:
    """A stand-in for torch_npu's ``torch.npu.current_stream()``: its ``npu_stream`` is the
    aclrtStream's address."""

    def __init__(self, address: int) -> None:
        self.npu_stream = address


def _address(sim_lib, stream) -> int:
    return int(sim_lib.ffi.cast("uintptr_t", stream))


@pytest.mark.parametrize("form", ["cdata", "int", "torch_npu"])
def test_numpy_results_on_a_caller_stream(sim_lib, caller_stream, form):
    stream = {"cdata": caller_stream, "int": _address(sim_lib, caller_stream),
              "torch_npu": TorchNpuStream(_address(sim_lib, caller_stream))}[form]
    for _ in range(3):  # the second and later calls replay the recorded plan: on the caller's stream too
        np.testing.assert_array_equal(_pool(GRAD, SELF, stream=stream), EXPECTED)
    assert sim_lib.stream() is not caller_stream  # the thread's own stream is back


def test_work_goes_to_the_callers_stream(sim_lib, caller_stream, monkeypatch):
    used = []
    real = sim_lib.fn("aclnnAvgPool2dBackward")
    monkeypatch.setitem(sim_lib._functions, "aclnnAvgPool2dBackward",
                        lambda *a: used.append(_address(sim_lib, a[-1])) or real(*a))
    monkeypatch.setattr(sim_lib, "fast_api", None, raising=False)
    _pool(GRAD, SELF, stream=caller_stream)
    _pool(GRAD, SELF)
    assert used == [_address(sim_lib, caller_stream), _address(sim_lib, sim_lib.stream())]


def test_tensor_chain_on_a_caller_stream(sim_lib, caller_stream):
    with Tensor.from_numpy(GRAD, backend="sim") as g, Tensor.from_numpy(SELF, backend="sim") as x:
        out = _pool(g, x, stream=caller_stream)  # a device Tensor: nothing waits
        assert isinstance(out, Tensor)
        assert sim_lib.pending()[0] >= 1  # the call's temporaries wait for the caller's stream
        again = _pool(g, out, stream=TorchNpuStream(_address(sim_lib, caller_stream)))
        np.testing.assert_array_equal(out.numpy(), EXPECTED)  # waits for the caller's stream
        np.testing.assert_array_equal(again.numpy(), _pool(GRAD, EXPECTED, backend="numpy"))
        out.close()
        again.close()


def test_pending_releases_wait_for_the_callers_stream(sim_lib, caller_stream):
    with Tensor.from_numpy(GRAD, backend="sim") as g, Tensor.from_numpy(SELF, backend="sim") as x:
        outs = [_pool(g, x, stream=caller_stream) for _ in range(5)]
    state = sim_lib.local.state
    assert _address(sim_lib, caller_stream) in state.callers
    sim_lib.synchronize()
    assert not state.callers and sim_lib.pending() == (0, 0)
    for o in outs:
        np.testing.assert_array_equal(o.numpy(), EXPECTED)
        o.close()


def test_caller_stream_in_another_thread(sim_lib, caller_stream):
    results = []

    def work():
        results.append(_pool(GRAD, SELF, stream=caller_stream))

    t = threading.Thread(target=work)
    t.start()
    t.join()
    np.testing.assert_array_equal(results[0], EXPECTED)


@pytest.mark.parametrize("bad, error", [("s", TypeError), (1.5, TypeError), (True, TypeError), (0, ValueError),
                                        (-1, ValueError), (TorchNpuStream(0), ValueError),
                                        (TorchNpuStream("x"), TypeError)])
def test_stream_argument_is_checked_on_every_backend(backend, bad, error):
    with pytest.raises(error, match="stream="):
        _pool(GRAD, SELF, backend=backend, stream=bad)


def test_numpy_backend_ignores_a_valid_stream():
    np.testing.assert_array_equal(_pool(GRAD, SELF, backend="numpy", stream=TorchNpuStream(0x1000)), EXPECTED)
    np.testing.assert_array_equal(_pool(GRAD, SELF, backend="numpy", stream=0x1000), EXPECTED)


# -- stream= on aclnn_py.call and prepared runs ----------------------------------------------------

POOL = "aclnnAvgPool2dBackward"
POOL_ARGS = ([2, 2], [2, 2], [0, 0], False, True, 0, 0)


def test_call_on_a_caller_stream(sim_lib, caller_stream):
    out = np.zeros_like(SELF)
    result = aclnn_py.call(POOL, GRAD, SELF, *POOL_ARGS, out, backend="sim", stream=caller_stream)
    assert result is out
    np.testing.assert_array_equal(out, EXPECTED)
    with Tensor.from_numpy(GRAD, backend="sim") as g, Tensor.from_numpy(SELF, backend="sim") as x, \
            Tensor.empty(SELF.shape, np.float32, backend="sim") as o:
        aclnn_py.call(POOL, g, x, *POOL_ARGS, o, backend="sim", stream=TorchNpuStream(_address(sim_lib, caller_stream)))
        np.testing.assert_array_equal(o.numpy(), EXPECTED)


def test_prepared_runs_on_caller_streams(sim_lib, caller_stream):
    out = np.zeros_like(SELF)
    with aclnn_py.prepare(POOL, GRAD, SELF, *POOL_ARGS, out, backend="sim") as run:
        for stream in (caller_stream, None, _address(sim_lib, caller_stream)):
            out[...] = 0
            run(GRAD, SELF, *POOL_ARGS, out, stream=stream)
            np.testing.assert_array_equal(out, EXPECTED)
        with Tensor.from_numpy(GRAD, backend="sim") as g, Tensor.from_numpy(SELF, backend="sim") as x, \
                Tensor.empty(SELF.shape, np.float32, backend="sim") as o:
            with aclnn_py.prepare(POOL, g, x, *POOL_ARGS, o, backend="sim") as run2:
                run2(g, x, *POOL_ARGS, o, stream=caller_stream)  # queued, nobody waits
                run2(g, x, *POOL_ARGS, o)  # waits for the caller's stream first
                run2(g, x, *POOL_ARGS, o, stream=caller_stream)
            np.testing.assert_array_equal(o.numpy(), EXPECTED)


@pytest.mark.parametrize("bad, error", [("s", TypeError), (0, ValueError)])
def test_call_and_prepare_check_the_stream(backend, bad, error):
    out = np.zeros_like(SELF)
    with pytest.raises(error, match="stream="):
        aclnn_py.call(POOL, GRAD, SELF, *POOL_ARGS, out, backend=backend, stream=bad)
    with aclnn_py.prepare(POOL, GRAD, SELF, *POOL_ARGS, out, backend=backend) as run:
        with pytest.raises(error, match="stream="):
            run(GRAD, SELF, *POOL_ARGS, out, stream=bad)
        run(GRAD, SELF, *POOL_ARGS, out, stream=TorchNpuStream(0x1000) if backend == "numpy" else None)
    np.testing.assert_array_equal(out, EXPECTED)
