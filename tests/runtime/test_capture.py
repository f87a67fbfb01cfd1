"""Capture and replay (``aclnn_py.capture``, issue #25) on the simulator: a chain of operator
calls on device Tensors recorded once and replayed with one host call gives the results of
running the chain (the uncaptured chain on sim, and the numpy backend), with new data written
into the captured inputs between replays; a call that cannot be captured raises during the
capture; the graph owns what its work uses (dropped outputs' memory is not reused while it can
replay) and releases it exactly once when closed. On the fast path and off it."""

from __future__ import annotations

import gc
import threading
import weakref

import numpy as np
import pytest

import aclnn_py
from aclnn_py import AclnnError, Tensor
from aclnn_py._runtime import pool

from helpers import assert_close

P = [1, 1, 1, 1]
CAPTURED = 107027  # ACL_ERROR_RT_STREAM_CAPTURED


def counters(lib) -> dict[str, int]:
    pool.trim_all()  # (the caching allocator's blocks are the binding's on purpose)
    c = lib.ffi.new("aclsimCounters *")
    lib.call("aclsimGetCounters", c)
    return {f: getattr(c, f) for f, _ in lib.ffi.typeof("aclsimCounters").fields}


@pytest.fixture(params=["fast path", "ABI mode"])
def lib(sim_lib, request, monkeypatch):
    if request.param == "ABI mode":
        monkeypatch.setattr(sim_lib, "fast_api", None)
    sim_lib.synchronize()
    return sim_lib


def _chain(g, x, w, b, backend):
    """Ten operator calls, each reading the one before."""
    h = aclnn_py.reflection_pad2d_backward(g, x, P, backend=backend)       # (2,3,4,4)
    h = aclnn_py.relu(h, backend=backend)
    h = aclnn_py.add(h, b, backend=backend)
    h = aclnn_py.mul(h, b, backend=backend)
    h = aclnn_py.threshold_backward(h, b, 0.25, backend=backend)
    gi, gw, _ = aclnn_py.convolution_backward(h, h, w, [3], [1, 1], [1, 1], [1, 1], False, [0, 0], 1,
                                              [True, True, False], backend=backend)
    h = aclnn_py.add(gi, h, backend=backend)
    h = aclnn_py.avg_pool2d_backward(h[..., :2, :2] if isinstance(h, np.ndarray) else _corner(h), h,
                                     [2, 2], [2, 2], [0, 0], False, True, 0, backend=backend)
    h = aclnn_py.relu(h, backend=backend)
    h = aclnn_py.mul(h, h, backend=backend)
    return h, gw


def _corner(t):
    """The top-left 2x2 of a device Tensor (1,3,4,4)->(2,3,2,2) view, as h[..., :2, :2] does."""
    return t.view(t.shape[:-2] + (2, 2), t.strides, t.offset)


def _inputs(rng):
    g = rng.standard_normal((2, 3, 6, 6)).astype(np.float32)
    x = np.zeros((2, 3, 4, 4), np.float32)
    w = rng.standard_normal((3, 3, 3, 3)).astype(np.float32)
    b = rng.standard_normal((2, 3, 4, 4)).astype(np.float32)
    return g, x, w, b


def test_replay_equals_the_uncaptured_chain(lib):
    rng = np.random.default_rng(0)
    data = _inputs(rng)
    dev = [Tensor.from_numpy(a, backend="sim") for a in data]
    with aclnn_py.capture(backend="sim") as graph:
        out, gw = _chain(*dev, "sim")
    assert isinstance(out, Tensor) and isinstance(gw, Tensor)
    for replay in range(4):
        new = _inputs(rng)
        for t, a in zip(dev, new):
            t.copy_from(a)
        graph.replay()
        running = [Tensor.from_numpy(a, backend="sim") for a in new]
        want_sim, want_gw_sim = _chain(*running, "sim")
        want, want_gw = _chain(*new, "numpy")
        np.testing.assert_array_equal(out.numpy(), want_sim.numpy())
        np.testing.assert_array_equal(gw.numpy(), want_gw_sim.numpy())
        assert_close(out.numpy(), want, np.float32, scale=8)
        assert_close(gw.numpy(), want_gw, np.float32, scale=8)
    graph.close()
    assert graph.closed


def test_dropped_results_stay_the_graphs_until_it_is_closed(lib):
    rng = np.random.default_rng(1)
    g, x, _, b = _inputs(rng)
    gt, xt, bt = (Tensor.from_numpy(a, backend="sim") for a in (g, x, b))
    with aclnn_py.capture(backend="sim") as graph:
        h = aclnn_py.reflection_pad2d_backward(gt, xt, P, backend="sim")
        h2 = aclnn_py.add(h, bt, backend="sim")
        out = aclnn_py.relu(h2, backend="sim")
    del h, h2  # the intermediates: the graph's work still writes and reads their memory
    gc.collect()
    # Tensors of that size made now must not get those blocks (the replay would overwrite them)
    fillers = [Tensor.from_numpy(np.full(x.shape, 5.0, np.float32), backend="sim") for _ in range(8)]
    graph.replay()
    want = aclnn_py.relu(aclnn_py.add(aclnn_py.reflection_pad2d_backward(g, x, P, backend="numpy"), b,
                                      backend="numpy"), backend="numpy")
    assert_close(out.numpy(), want, np.float32)
    for f in fillers:
        np.testing.assert_array_equal(f.numpy(), np.full(x.shape, 5.0, np.float32))
    graph.close()


def test_calls_that_cannot_be_captured_raise_during_the_capture(lib):
    rng = np.random.default_rng(2)
    g, x, _, b = _inputs(rng)
    gt, xt = Tensor.from_numpy(g, backend="sim"), Tensor.from_numpy(x, backend="sim")
    prepared = aclnn_py.prepare("aclnnReflectionPad2dBackward", g, x, P, np.empty_like(x), backend="sim")
    refused = [
        lambda: aclnn_py.reflection_pad2d_backward(g, x, P, backend="sim"),      # NumPy in, NumPy out
        lambda: aclnn_py.reflection_pad2d_backward(gt, xt, P, backend="sim").numpy(),  # waits, copies back
        lambda: aclnn_py.call("aclnnReflectionPad2dBackward", gt, xt, P, np.empty_like(x), backend="sim"),
        lambda: prepared(g, x, P, np.empty_like(x)),
        lambda: gt.copy_from(g),
    ]
    for run in refused:
        graph = aclnn_py.capture(backend="sim")
        with pytest.raises(AclnnError) as info:
            with graph:
                run()
        assert info.value.status == CAPTURED and "captured" in info.value.message
        with pytest.raises(ValueError, match="not ready"):
            graph.replay()
        graph.close()
        # the stream is usable again, on every path
        assert_close(aclnn_py.reflection_pad2d_backward(g, x, P, backend="sim"),
                     aclnn_py.reflection_pad2d_backward(g, x, P, backend="numpy"), np.float32)
    prepared.close()


def test_everything_is_released_once(lib):
    rng = np.random.default_rng(3)
    gc.collect()
    lib.synchronize()
    before = counters(lib)
    data = _inputs(rng)
    dev = [Tensor.from_numpy(a, backend="sim") for a in data]
    for close in (True, False):
        with aclnn_py.capture(backend="sim") as graph:
            out, gw = _chain(*dev, "sim")
        graph.replay()
        graph.replay()
        if close:
            graph.close()
            graph.close()  # (once)
            assert graph.closed
            with pytest.raises(ValueError):
                graph.replay()
        del graph, out, gw  # (the collector closes it)
        gc.collect()
    with pytest.raises(AclnnError):  # a failed capture releases what it made
        with aclnn_py.capture(backend="sim"):
            aclnn_py.relu(dev[0], backend="sim")
            aclnn_py.relu(data[0], backend="sim")
    del dev
    gc.collect()
    lib.synchronize()
    assert counters(lib) == before


def test_a_graph_replays_on_its_own_thread_only(lib):
    t = Tensor.from_numpy(np.ones((2, 2), np.float32), backend="sim")
    with aclnn_py.capture(backend="sim") as graph:
        out = aclnn_py.relu(t, backend="sim")
    errors = []

    def other() -> None:
        try:
            graph.replay()
        except ValueError as exc:
            errors.append(exc)

    thread = threading.Thread(target=other)
    thread.start()
    thread.join()
    assert len(errors) == 1 and "thread" in str(errors[0])
    graph.replay()
    np.testing.assert_array_equal(out.numpy(), np.ones((2, 2), np.float32))
    with pytest.raises(ValueError, match="one chain"):
        with graph:
            pass
    graph.close()


def test_capture_needs_a_device_backend():
    with pytest.raises(AclnnError, match="need backend 'npu' or 'sim'") as info:
        aclnn_py.capture(backend="numpy")
    assert info.value.status == 161002


def test_a_graph_dropped_on_another_thread_is_released_after_the_owners_wait(lib):
    gc.collect()
    lib.synchronize()
    before = counters(lib)
    t = Tensor.from_numpy(np.ones((2, 2), np.float32), backend="sim")
    with aclnn_py.capture(backend="sim") as graph:
        out = aclnn_py.relu(t, backend="sim")
    graph.replay()
    holder = [graph]
    del graph

    def drop() -> None:
        holder.clear()  # the last reference goes on this thread
        gc.collect()

    thread = threading.Thread(target=drop)
    thread.start()
    thread.join()
    np.testing.assert_array_equal(out.numpy(), np.ones((2, 2), np.float32))  # (the owner's wait)
    del out, t
    gc.collect()
    lib.synchronize()
    assert counters(lib) == before


def test_a_graph_closed_while_another_capture_records(lib):
    t = Tensor.from_numpy(np.ones((2, 2), np.float32), backend="sim")
    with aclnn_py.capture(backend="sim") as first:
        aclnn_py.relu(t, backend="sim")
    first.replay()
    with aclnn_py.capture(backend="sim") as second:
        out = aclnn_py.relu(t, backend="sim")
        first.close()  # cannot wait now: released after the next synchronisation
    assert first.closed
    second.replay()
    np.testing.assert_array_equal(out.numpy(), np.ones((2, 2), np.float32))
    second.close()
    with pytest.raises(ValueError, match="already being captured"):
        with aclnn_py.capture(backend="sim"):
            with aclnn_py.capture(backend="sim"):
                pass


def test_list_elements_and_tensors_written_in_place_stay_the_graphs(lib):
    """A Cat's input list and an InplaceAdd's selfRef (each described by ``Call._element``):
    their device memory is kept by the graph once the caller drops the Tensors (a block
    handed to a new Tensor would be written by the replay), and released by ``close()``."""
    rng = np.random.default_rng(7)
    a, b, p, d = (rng.standard_normal((2, 3)).astype(np.float32) for _ in range(4))
    at, bt, pt, dt = (Tensor.from_numpy(v, backend="sim") for v in (a, b, p, d))
    with aclnn_py.capture(backend="sim") as graph:
        out = aclnn_py.cat([at, bt], 0, backend="sim")
        aclnn_py.inplace_add(pt, dt, 0.5, backend="sim")
    buffers = [weakref.ref(t.buffer) for t in (at, bt, pt, dt)]
    del at, bt, pt, dt
    gc.collect()
    assert all(r() is not None for r in buffers)
    fillers = [Tensor.from_numpy(np.full((2, 3), 5.0, np.float32), backend="sim") for _ in range(8)]
    graph.replay()
    graph.replay()
    np.testing.assert_array_equal(out.numpy(), np.concatenate([a, b], 0))
    for f in fillers:
        np.testing.assert_array_equal(f.numpy(), np.full((2, 3), 5.0, np.float32))
    assert all(r() is not None for r in buffers)
    graph.close()
    gc.collect()
    lib.synchronize()
    assert all(r() is None for r in buffers)
