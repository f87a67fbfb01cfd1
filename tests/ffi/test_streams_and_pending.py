"""A thread's stream is released when the thread ends, and work nobody waits for does not pile
up: the simulator's counters show live streams, executors and device memory."""

from __future__ import annotations

import gc
import importlib
import threading

import numpy as np

import aclnn_py
from aclnn_py import Tensor

from test_tensor import counters

library_module = importlib.import_module("aclnn_py._runtime.library")

GRAD = np.ones((1, 1, 2, 2), np.float32)
SELF = np.ones((1, 1, 4, 4), np.float32)


def _pool(grad, self):
    return aclnn_py.avg_pool2d_backward(grad, self, [2], [2], [0], False, True, None, backend="sim")


def _in_threads(count: int, work, batch: int = 50) -> None:
    for first in range(0, count, batch):
        threads = [threading.Thread(target=work) for _ in range(min(batch, count - first))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()


def test_thread_streams_end_with_their_threads(sim_lib):
    sim_lib.stream()
    before = counters(sim_lib)
    results = []

    def work():
        results.append(float(_pool(GRAD, SELF).sum()))

    _in_threads(2000, work)
    gc.collect()
    assert results == [4.0] * 2000  # 4 windows, each spreads its 1 as 4 x 0.25: exact
    assert counters(sim_lib) == before  # streams back to the main thread's one, nothing held


def test_unsynchronised_work_of_an_ending_thread_is_finished_and_freed(sim_lib):
    sim_lib.stream()
    before = counters(sim_lib)
    kept = []

    def work():
        with Tensor.from_numpy(GRAD, backend="sim") as g, Tensor.from_numpy(SELF, backend="sim") as x:
            out = _pool(g, x)      # queued, never waited for on this thread
            kept.append(out)

    _in_threads(100, work)
    gc.collect()
    during = counters(sim_lib)
    assert during["streams"] == before["streams"] and during["executors"] == before["executors"]
    assert during["tensors"] == before["tensors"] + 100  # only the results handed out remain
    np.testing.assert_array_equal(kept[0].numpy(), np.full((1, 1, 4, 4), 0.25, np.float32))  # exact: 1/4
    for t in kept:
        t.close()
    kept.clear()
    gc.collect()
    assert counters(sim_lib) == before


def test_pending_work_is_bounded_by_count(sim_lib):
    sim_lib.synchronize()
    before = counters(sim_lib)
    peak = 0
    with Tensor.from_numpy(GRAD, backend="sim") as g, Tensor.from_numpy(SELF, backend="sim") as x:
        for _ in range(2000):
            _pool(g, x).close()
            peak = max(peak, counters(sim_lib)["executors"])
            assert sim_lib.pending()[0] < library_module.MAX_PENDING_RELEASES
        sim_lib.synchronize()
    assert 0 < peak <= library_module.MAX_PENDING_RELEASES
    assert counters(sim_lib) == before


def test_pending_work_is_bounded_by_bytes(sim_lib, monkeypatch):
    budget = 1 << 20
    monkeypatch.setattr(library_module, "MAX_PENDING_BYTES", budget)
    sim_lib.synchronize()
    before = counters(sim_lib)
    grad = np.ones((4, 8, 32, 32), np.float32)      # 128 KiB per call, copied to the device
    self = np.ones((4, 8, 64, 64), np.float32)
    peak = 0
    with Tensor.from_numpy(self, backend="sim") as x:
        for _ in range(100):
            _pool(grad, x).close()  # a NumPy gradOutput: its device copy waits for the stream
            peak = max(peak, counters(sim_lib)["device_bytes"] - before["device_bytes"])
            assert sim_lib.pending()[1] < budget
    sim_lib.synchronize()
    # The live bytes: x, at most the budget of waiting temporaries, one call's own blocks.
    assert peak < self.nbytes + budget + 2 * (grad.nbytes + self.nbytes)
    assert counters(sim_lib) == before
