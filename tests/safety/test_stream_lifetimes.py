"""Streams a call remembers (issue #26, points 2 and 3): a call refused for a bad ``stream=``
leaves nothing that the next call trips over; a caller's stream the caller synchronised and
destroyed is not waited for again (not by reading a Tensor made on it, not by the next run
of a prepared executor). The binding waits for caller streams through events of its own,
recorded behind its work: complete once the caller has synchronised, whatever it does with
the stream afterwards."""

from __future__ import annotations

import numpy as np
import pytest

import aclnn_py
from aclnn_py._runtime import pool
from aclnn_py import AclnnError, Tensor, capi

BAD_STREAM = 0xDEAD0000  # not a stream: the simulator refuses it (361001)
G = np.arange(36, dtype=np.float32).reshape(1, 1, 6, 6)
X = np.zeros((1, 1, 4, 4), np.float32)
PAD = [1, 1, 1, 1]
WANT = aclnn_py.reflection_pad2d_backward(G, X, PAD, backend="numpy")


@pytest.fixture
def tensors(sim_lib):
    with aclnn_py.use_backend("sim"):  # (the C-API mirror's streams too)
        g, x = Tensor.from_numpy(G), Tensor.from_numpy(X)
        yield g, x
        g.close()
        x.close()
        sim_lib.synchronize()


def _refused(g, x):
    with pytest.raises(AclnnError) as info:
        aclnn_py.reflection_pad2d_backward(g, x, PAD, backend="sim", stream=BAD_STREAM)
    assert info.value.status == 361001, info.value


def _device_blocks(lib) -> int:
    pool.trim_all()  # (the caching allocator's blocks are the binding's on purpose)
    c = lib.ffi.new("aclsimCounters *")
    lib.call("aclsimGetCounters", c)
    return int(c.device_blocks)


def test_a_call_refused_for_its_stream_leaves_nothing_behind(sim_lib, tensors):
    g, x = tensors
    sim_lib.synchronize()
    before = _device_blocks(sim_lib)
    queued = aclnn_py.reflection_pad2d_backward(g, x, PAD, backend="sim")  # (so releases wait)
    _refused(g, x)  # (its output Tensor and temporaries released, none lost)
    queued.close()
    sim_lib.synchronize()
    assert _device_blocks(sim_lib) == before
    with aclnn_py.reflection_pad2d_backward(g, x, PAD, backend="sim") as r:  # Tensor arguments
        np.testing.assert_array_equal(r.numpy(), WANT)
    _refused(g, x)
    out = np.zeros_like(X)
    aclnn_py.call("aclnnReflectionPad2dBackward", G, X, PAD, out, backend="sim")
    np.testing.assert_array_equal(out, WANT)
    _refused(g, x)
    sim_lib.synchronize()  # nothing waits for the refused stream


def test_a_tensor_made_on_a_stream_destroyed_after_its_work(sim_lib, tensors):
    g, x = tensors
    stream = capi.aclrtCreateStream()
    r = aclnn_py.reflection_pad2d_backward(g, x, PAD, backend="sim", stream=stream)
    capi.aclrtSynchronizeStream(stream)
    capi.aclrtDestroyStream(stream)
    np.testing.assert_array_equal(r.numpy(), WANT)
    r.close()


def test_a_prepared_run_after_its_last_stream_was_destroyed(sim_lib, tensors):
    g, x = tensors
    out = Tensor.empty(X.shape, np.float32, backend="sim")
    with aclnn_py.prepare("aclnnReflectionPad2dBackward", g, x, PAD, out, backend="sim") as run:
        stream = capi.aclrtCreateStream()
        run(g, x, PAD, out, stream=stream)
        capi.aclrtSynchronizeStream(stream)
        capi.aclrtDestroyStream(stream)
        run(g, x, PAD, out)
        np.testing.assert_array_equal(out.numpy(), WANT)
    out.close()


def test_caller_stream_events_are_released(sim_lib, tensors):
    """The events the binding records on caller streams are destroyed when waited for."""
    g, x = tensors
    c = sim_lib.ffi.new("aclsimCounters *")
    stream = capi.aclrtCreateStream()
    for _ in range(3):
        aclnn_py.reflection_pad2d_backward(g, x, PAD, backend="sim", stream=stream).close()
    sim_lib.call("aclsimGetCounters", c)
    assert c.events == 1  # one per caller stream, recorded again behind each call
    sim_lib.synchronize()
    sim_lib.call("aclsimGetCounters", c)
    assert c.events == 0
    capi.aclrtDestroyStream(stream)


def test_a_thread_that_ends_after_stream_calls_releases_its_events(sim_lib, tensors):
    import gc
    import threading

    g, x = tensors
    stream = capi.aclrtCreateStream()
    c = sim_lib.ffi.new("aclsimCounters *")
    results = []

    def work() -> None:
        r = aclnn_py.reflection_pad2d_backward(g, x, PAD, backend="sim", stream=stream)
        sim_lib.call("aclsimGetCounters", c)
        results.append(int(c.events))
        r.close()

    worker = threading.Thread(target=work)
    worker.start()
    worker.join()
    gc.collect()
    sim_lib.call("aclsimGetCounters", c)
    assert results == [1] and c.events == 0  # the thread's end waited for it and destroyed it
    capi.aclrtDestroyStream(stream)
