"""A ``Tensor`` closed (or dropped) by another thread while work using it is queued on its
owning thread's stream (issue #26, point 5): its memory is freed only after the owner's next
synchronisation, never under the queued work. On the owning thread, a device Tensor dropped
after a call or a prepared run that queued work and left no temporaries waits likewise."""

from __future__ import annotations

import gc
import threading

import numpy as np
import pytest

import aclnn_py
from aclnn_py._runtime import pool
from aclnn_py import Tensor

G = np.arange(36, dtype=np.float32).reshape(1, 1, 6, 6)
X = np.zeros((1, 1, 4, 4), np.float32)
PAD = [1, 1, 1, 1]
WANT = aclnn_py.reflection_pad2d_backward(G, X, PAD, backend="numpy")


def _blocks(lib) -> int:
    pool.trim_all()  # (the caching allocator's blocks are the binding's on purpose)
    c = lib.ffi.new("aclsimCounters *")
    lib.call("aclsimGetCounters", c)
    return int(c.device_blocks)


def _on_another_thread(action) -> None:
    worker = threading.Thread(target=action)
    worker.start()
    worker.join()


@pytest.mark.parametrize("how", ["close", "last reference"])
def test_dropped_by_another_thread_while_its_work_is_queued(sim_lib, how):
    for _ in range(5):
        g, x = Tensor.from_numpy(G, backend="sim"), Tensor.from_numpy(X, backend="sim")
        r = aclnn_py.reflection_pad2d_backward(g, x, PAD, backend="sim")  # queued, not run
        if how == "close":
            _on_another_thread(g.close)
        else:
            box = [g]
            del g
            _on_another_thread(box.clear)
        np.testing.assert_array_equal(r.numpy(), WANT)
        x.close()
        r.close()


def test_memory_handed_over_is_freed_at_the_owners_synchronisation(sim_lib):
    sim_lib.synchronize()
    gc.collect()
    before = _blocks(sim_lib)
    g = Tensor.from_numpy(G, backend="sim")
    _on_another_thread(g.close)
    assert _blocks(sim_lib) == before + 1  # waits for this thread's stream
    sim_lib.synchronize()
    assert _blocks(sim_lib) == before


def test_memory_of_an_ended_owner_is_freed_at_once(sim_lib):
    made: list[Tensor] = []
    _on_another_thread(lambda: made.append(Tensor.from_numpy(G, backend="sim")))
    gc.collect()
    before = _blocks(sim_lib)
    made.pop().close()  # its owner ended: its streams were synchronised then
    assert _blocks(sim_lib) == before - 1


def test_an_input_closed_on_its_thread_after_a_prepared_run(sim_lib):
    g, x = Tensor.from_numpy(G, backend="sim"), Tensor.from_numpy(X, backend="sim")
    out = Tensor.empty(X.shape, np.float32, backend="sim")
    with aclnn_py.prepare("aclnnReflectionPad2dBackward", g, x, PAD, out, backend="sim") as run:
        other = Tensor.from_numpy(G, backend="sim")
        run(other, x, PAD, out)  # queued, not run
        other.close()
        np.testing.assert_array_equal(out.numpy(), WANT)
    for t in (g, x, out):
        t.close()


def test_a_prepared_runs_argument_closed_on_another_thread_during_the_run(sim_lib, monkeypatch):
    """The run holds the device memory it checked: another thread's close() between the checks
    and the launch neither breaks the run nor frees the memory under it."""
    from aclnn_py.call import Prepared

    g, x = Tensor.from_numpy(G, backend="sim"), Tensor.from_numpy(X, backend="sim")
    out = Tensor.empty(X.shape, np.float32, backend="sim")
    other = Tensor.from_numpy(G, backend="sim")
    checked = Prepared._check

    def check_then_close(self, values):
        plan = checked(self, values)
        _on_another_thread(other.close)  # (at the worst moment)
        return plan

    with aclnn_py.prepare("aclnnReflectionPad2dBackward", g, x, PAD, out, backend="sim") as run:
        monkeypatch.setattr(Prepared, "_check", check_then_close)
        run(other, x, PAD, out)
        monkeypatch.undo()
        np.testing.assert_array_equal(out.numpy(), WANT)
    for t in (g, x, out):
        t.close()
