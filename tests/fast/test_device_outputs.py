"""The outputs the fast entry makes for device plans (``aclnn_py/_fast/outputs.c``, issue #25):
whole Tensors (handle, buffer, views, close, numpy), released once by C releases, their blocks
reused on the thread's own stream while work is queued (stream order makes that safe: the
simulator runs queued work only at the synchronisation, so a reuse out of order shows as
wrong data), never on a caller's stream; and what the entry reads per call without Python code
(ACLNN_PY_BLOCKING, the caller's place) behaving as the Python path does.

Without the entry (``ACLNN_PY_FAST=0``, the suite's run without it) the same calls take the
Python path and these tests check that path's results and releases alike."""

from __future__ import annotations

import gc
import inspect
import sys

import numpy as np
import pytest

import aclnn_py
from aclnn_py import AclnnError, Tensor, _fast
from aclnn_py._runtime import pool, queued

from helpers import assert_close

RELU = sys.modules["aclnn_py.ops.relu"]
MUL = sys.modules["aclnn_py.ops.mul"]


def _entry_on(lib) -> bool:
    return _fast.enabled() and _fast.entry() is not None and _fast.api_for(lib) is not None


def counters(lib) -> dict[str, int]:
    """The simulator's counts of live handles and device bytes, once everything dropped is
    collected and the stream is past its work (the caching allocator's blocks freed)."""
    gc.collect()
    lib.synchronize()
    pool.trim_all()
    c = lib.ffi.new("aclsimCounters *")
    lib.call("aclsimGetCounters", c)
    return {f: getattr(c, f) for f, _ in lib.ffi.typeof("aclsimCounters").fields}


def _planned(fn, *args):
    """fn(*args) on sim twice: the second call is the planned one on the entry's path."""
    fn(*args, backend="sim")
    return fn(*args, backend="sim")


def _live_tensors(lib) -> int:
    """The simulator's count of live aclTensors now (nothing collected or synchronised)."""
    c = lib.ffi.new("aclsimCounters *")
    lib.call("aclsimGetCounters", c)
    return int(c.tensors)


def _address(t: Tensor) -> int:
    return int(t.lib.ffi.cast("uintptr_t", t.buffer.ptr))


@pytest.fixture
def data(sim_lib, monkeypatch):
    monkeypatch.delenv(queued.BLOCKING_VAR, raising=False)
    rng = np.random.default_rng(7)
    a, b = (rng.standard_normal((4, 33)).astype(np.float32) for _ in range(2))
    sim_lib.synchronize()
    return sim_lib, a, b


def test_an_output_of_the_entry_is_a_whole_tensor(data):
    lib, a, _ = data
    with Tensor.from_numpy(a, backend="sim") as at:
        out = _planned(aclnn_py.relu, at)
        if _entry_on(lib):
            assert RELU._aclnn.plans(), "the second call replays a plan"
        assert type(out) is Tensor and out.shape == a.shape and out.dtype == a.dtype
        assert int(lib.ffi.cast("uintptr_t", out.handle)) == out.fast_key[1]
        assert out.buffer.nbytes == a.nbytes and out.buffer.lib is lib
        np.testing.assert_array_equal(out.numpy(), np.maximum(a, 0))
        row = out.view((33,), (1,), 33)  # a view over the same block keeps it
        finalizer = out._finalizer
        out.close()
        assert not finalizer.alive and out.fast_key is None
        np.testing.assert_array_equal(row.numpy(), np.maximum(a[1], 0))
        row.close()
        with pytest.raises(AttributeError, match="'Tensor' object has no attribute 'nothing'"):
            out.nothing  # noqa: B018


def test_outputs_of_a_chain_are_released_once(data):
    lib, a, b = data
    before = counters(lib)
    at, bt = Tensor.from_numpy(a, backend="sim"), Tensor.from_numpy(b, backend="sim")
    for i in range(700):  # beyond the bound on waiting releases: synchronisations inside
        out = aclnn_py.mul(aclnn_py.relu(at, backend="sim"), bt, backend="sim")
        if i % 5 == 0:
            out.close()
            out.close()  # (once)
    assert_close(out.numpy(), np.maximum(a, 0) * b, np.float32)
    del out, at, bt
    assert counters(lib) == before


def test_a_dropped_output_is_reused_behind_the_work_that_reads_it(data):
    """out1's block goes to a new output while a queued call still reads out1: the stream runs
    that read first, so the reader sees out1's values and the new output its own."""
    lib, a, b = data
    at, bt = Tensor.from_numpy(a, backend="sim"), Tensor.from_numpy(b, backend="sim")
    _planned(aclnn_py.relu, at)
    _planned(aclnn_py.mul, at, bt)
    lib.synchronize()
    out1 = aclnn_py.relu(at, backend="sim")           # queued
    first = _address(out1)
    product = aclnn_py.mul(out1, bt, backend="sim")   # queued: reads out1
    assert lib.has_pending()
    del out1
    gc.collect()
    out3 = aclnn_py.relu(bt, backend="sim")           # queued: writes its block
    if _entry_on(lib):
        assert _address(out3) == first, "the entry reuses the dropped output's block on its stream"
    np.testing.assert_array_equal(product.numpy(), np.maximum(a, 0) * b)
    np.testing.assert_array_equal(out3.numpy(), np.maximum(b, 0))


def test_a_dropped_outputs_acltensor_waits_with_its_block_for_an_output_of_its_form(data):
    """A dropped output's aclTensor waits with its block: a new output of the same form that
    takes the block takes the aclTensor too (as a C caller keeps one for its buffer); an output
    of another form of the same size gets its own (the kept one destroyed). The results are
    right and, once the stream is past its work, no aclTensor is left over."""
    lib, a, b = data
    c = np.ascontiguousarray(b.T)  # (33, 4): the bytes of (4, 33), another form
    before = counters(lib)
    at, bt, ct = (Tensor.from_numpy(x, backend="sim") for x in (a, b, c))
    _planned(aclnn_py.relu, at)
    _planned(aclnn_py.relu, ct)
    _planned(aclnn_py.mul, at, bt)
    lib.synchronize()
    product = aclnn_py.mul(at, bt, backend="sim")  # queued: a dropped block waits behind it
    out1 = aclnn_py.relu(at, backend="sim")
    handle1 = out1.fast_key[1]
    del out1
    live = _live_tensors(lib)
    out2 = aclnn_py.relu(bt, backend="sim")  # the same form
    if _entry_on(lib):
        assert _live_tensors(lib) == live, "no aclTensor made: the kept one is taken"
        assert out2.fast_key[1] == handle1 and int(lib.ffi.cast("uintptr_t", out2.handle)) == handle1
    out4 = aclnn_py.relu(at, backend="sim")
    del out4
    out3 = aclnn_py.relu(ct, backend="sim")  # another form of the same size: its own aclTensor
    assert out3.shape == (33, 4)
    np.testing.assert_array_equal(product.numpy(), a * b)
    np.testing.assert_array_equal(out2.numpy(), np.maximum(b, 0))
    np.testing.assert_array_equal(out3.numpy(), np.maximum(c, 0))
    del product, out2, out3, at, bt, ct
    assert counters(lib) == before


def test_no_reuse_on_a_callers_stream(data):
    """A call on a caller's stream is not ordered after the thread's own stream's work: an
    output there never takes a block that work may still read."""
    lib, a, b = data
    at, bt = Tensor.from_numpy(a, backend="sim"), Tensor.from_numpy(b, backend="sim")
    p = lib.ffi.new("aclrtStream *")
    lib.call("aclrtCreateStream", p)
    stream = int(lib.ffi.cast("uintptr_t", p[0]))
    try:
        _planned(aclnn_py.relu, at)
        _planned(aclnn_py.mul, at, bt)
        aclnn_py.relu(bt, backend="sim", stream=stream)
        aclnn_py.relu(bt, backend="sim", stream=stream)
        lib.synchronize()
        out1 = aclnn_py.relu(at, backend="sim")
        first = _address(out1)
        product = aclnn_py.mul(out1, bt, backend="sim")
        del out1
        gc.collect()
        out3 = aclnn_py.relu(bt, backend="sim", stream=stream)
        assert _address(out3) != first
        np.testing.assert_array_equal(product.numpy(), np.maximum(a, 0) * b)
        lib.call("aclrtSynchronizeStream", p[0])
        np.testing.assert_array_equal(out3.numpy(), np.maximum(b, 0))
    finally:
        lib.synchronize()
        lib.call("aclrtDestroyStream", p[0])


def test_an_output_dropped_on_another_thread_is_handed_back(data):
    import threading

    lib, a, _ = data
    before = counters(lib)
    at = Tensor.from_numpy(a, backend="sim")
    outs = [aclnn_py.relu(at, backend="sim") for _ in range(3)]
    worker = threading.Thread(target=outs.clear)  # the last references go there
    worker.start()
    worker.join()
    lib.synchronize()  # the owner's synchronisation runs what was handed over
    del at
    assert counters(lib) == before


def _here() -> str:
    frame = inspect.currentframe().f_back  # type: ignore[union-attr]
    return f"{frame.f_code.co_filename}:{frame.f_lineno + 1}"


def test_blocking_read_per_call_and_the_callers_place_on_the_planned_path(data, monkeypatch):
    """ACLNN_PY_BLOCKING changed between planned calls takes effect at the next call, and a
    queued failure names the planned call's place (the entry keeps it as code and offset)."""
    lib, _, _ = data
    grad = Tensor.from_numpy(np.ones((1, 1, 4, 4), np.float32), backend="sim")
    self = Tensor.from_numpy(np.zeros((1, 1, 2, 2), np.float32), backend="sim")
    good = Tensor.from_numpy(np.zeros((1, 1, 2, 2), np.int64), backend="sim")
    bad = Tensor.from_numpy(np.full((1, 1, 2, 2), 99, np.int64), backend="sim")
    unpool = aclnn_py.max_unpool2d_backward
    for _ in range(2):
        unpool(grad, self, good, [4, 4], backend="sim")  # planned from the second call
    lib.synchronize()
    monkeypatch.setenv(queued.BLOCKING_VAR, "1")
    with pytest.raises(AclnnError) as info:
        unpool(grad, self, bad, [4, 4], backend="sim")
    assert info.value.status == 507015
    monkeypatch.setenv(queued.BLOCKING_VAR, "0")
    where = _here()
    out = unpool(grad, self, bad, [4, 4], backend="sim")  # queued: no error yet
    with pytest.raises(AclnnError) as info:
        out.numpy()
    assert info.value.status == 507015
    assert f"queued by aclnnMaxUnpool2dBackward called at {where} in " in info.value.message


def test_the_callers_place_through_call_and_a_wrapper_on_the_planned_path(data):
    """The place a planned call is remembered at is the first frame outside the package: the
    user's line calling ``aclnn_py.call``, and a user's wrapper around an op function (not the
    wrapper's caller): the entry starts its search above the package's own frames only."""
    lib, _, _ = data
    grad = Tensor.from_numpy(np.ones((1, 1, 4, 4), np.float32), backend="sim")
    self = Tensor.from_numpy(np.zeros((1, 1, 2, 2), np.float32), backend="sim")
    good = Tensor.from_numpy(np.zeros((1, 1, 2, 2), np.int64), backend="sim")
    bad = Tensor.from_numpy(np.full((1, 1, 2, 2), 99, np.int64), backend="sim")
    out = Tensor.empty((1, 1, 2, 2), np.float32, backend="sim")
    for _ in range(2):
        aclnn_py.call("aclnnMaxUnpool2dBackward", grad, self, good, [4, 4], out, backend="sim")
    lib.synchronize()
    where = _here()
    aclnn_py.call("aclnnMaxUnpool2dBackward", grad, self, bad, [4, 4], out, backend="sim")
    with pytest.raises(AclnnError) as info:
        lib.synchronize()
    assert f"queued by aclnnMaxUnpool2dBackward called at {where} in " in info.value.message

    def wrapper(indices: Tensor) -> tuple[Tensor, str]:
        inside = _here()
        return aclnn_py.max_unpool2d_backward(grad, self, indices, [4, 4], backend="sim"), inside

    for _ in range(2):
        wrapper(good)
    lib.synchronize()
    _, inside = wrapper(bad)
    with pytest.raises(AclnnError) as info:
        lib.synchronize()
    assert f"queued by aclnnMaxUnpool2dBackward called at {inside} in wrapper" in info.value.message


def _pad_chain(lib):
    """ReflectionPad2dBackward's (1,1,8,8) gradient and (1,1,6,6) self as device Tensors (a call
    with a workspace): the numpy backend's result, the simulator's counters before them, the two."""
    grad = np.arange(64, dtype=np.float32).reshape(1, 1, 8, 8)
    self = np.zeros((1, 1, 6, 6), np.float32)
    expected = aclnn_py.reflection_pad2d_backward(grad, self, [1, 1, 1, 1], backend="numpy")
    before = counters(lib)
    return expected, before, Tensor.from_numpy(grad, backend="sim"), Tensor.from_numpy(self, backend="sim")


def test_calls_own_blocks_wait_in_batches_and_the_queue_stays_bounded(data):
    """A planned device call's own device memory (ReflectionPad2dBackward's workspace) waits in
    the thread's batch with other calls' (one waiting release for many calls), and the binding
    still synchronises by itself before MAX_PENDING_RELEASES operator calls are queued."""
    lib, _, _ = data
    from aclnn_py._runtime import library

    expected, before, gt, xt = _pad_chain(lib)
    state = lib.local.state
    most_waiting = most_queued = 0
    for _ in range(3 * library.MAX_PENDING_RELEASES):
        out = aclnn_py.reflection_pad2d_backward(gt, xt, [1, 1, 1, 1], backend="sim")
        most_waiting = max(most_waiting, len(state.pending))
        most_queued = max(most_queued, len(state.queued))
    assert most_queued < library.MAX_PENDING_RELEASES
    if _entry_on(lib):
        assert most_waiting <= 2 + library.MAX_PENDING_RELEASES // 16  # (batches, and dropped outputs')
    assert_close(out.numpy(), expected, np.float32)
    del out, gt, xt
    assert counters(lib) == before


def test_a_calls_workspace_is_one_waiting_behind_the_work_on_its_stream(data):
    """A planned device call takes its workspace (ReflectionPad2dBackward has one) from the
    workspaces of calls queued before it on the thread's own stream, waiting to be freed,
    instead of aclrtMalloc per call: along a chain whose outputs are kept, the live device
    blocks grow by the outputs alone. The results stay right: the simulator runs queued work
    only at the synchronisation, so a workspace reused out of stream order shows as wrong data."""
    lib, _, _ = data
    from aclnn_py._runtime import library

    expected, before, gt, xt = _pad_chain(lib)
    calls = min(40, library.MAX_PENDING_RELEASES // 2)  # (no synchronisation at the bound meanwhile)
    outs, live = [], []
    for _ in range(calls):
        outs.append(aclnn_py.reflection_pad2d_backward(gt, xt, [1, 1, 1, 1], backend="sim"))
        c = lib.ffi.new("aclsimCounters *")
        lib.call("aclsimGetCounters", c)
        live.append(c.device_blocks)
    if _entry_on(lib):
        assert live[-1] - live[4] == calls - 5  # one new block a call: its output
    for out in outs:
        assert_close(out.numpy(), expected, np.float32)
    del outs, out, gt, xt
    assert counters(lib) == before


def test_the_thread_state_read_by_its_slots_or_by_its_attributes(data):
    """The entry reads the thread's state by the offsets of its class's slots, found once; a
    class whose slots it cannot find is read through its attributes, with the same results
    and releases."""
    lib, a, b = data
    from aclnn_py._runtime import library

    class Plain:  # no slots: nothing to find
        pass

    entry = _fast.entry() if _entry_on(lib) else None  # (without it: the Python path's run alone)
    if entry is not None:
        assert entry.set_state_type(library.ThreadStreams) is True
        assert entry.set_state_type(Plain) is False
    try:
        before = counters(lib)
        at, bt = Tensor.from_numpy(a, backend="sim"), Tensor.from_numpy(b, backend="sim")
        for _ in range(300):  # (past the bound on waiting releases)
            out = aclnn_py.mul(aclnn_py.relu(at, backend="sim"), bt, backend="sim")
        assert_close(out.numpy(), np.maximum(a, 0) * b, np.float32)
        del out, at, bt
        assert counters(lib) == before
    finally:
        if entry is not None:
            assert entry.set_state_type(library.ThreadStreams) is True


def test_an_output_made_by_its_slots_or_by_its_attributes(data):
    """The entry writes a new output Tensor's attributes at the offsets of Tensor's slots,
    found once; when they are not known (another class asked last) it sets them as
    attributes, with the same Tensor."""
    lib, a, _ = data
    entry = _fast.entry() if _entry_on(lib) else None

    class Plain:  # no slots: nothing to find
        pass

    if entry is not None:
        assert entry.set_tensor_type(Tensor) is True
        assert entry.set_tensor_type(Plain) is False
    try:
        before = counters(lib)
        with Tensor.from_numpy(a, backend="sim") as at:
            out = _planned(aclnn_py.relu, at)
            assert (out.lib, out.dtype, out.shape, out.strides, out.offset) == (lib, at.dtype, at.shape, at.strides, 0)
            assert out.format == at.format and int(lib.ffi.cast("uintptr_t", out.handle)) == out.fast_key[1]
            np.testing.assert_array_equal(out.numpy(), np.maximum(a, 0))
            del out
        assert counters(lib) == before
    finally:
        if entry is not None:
            assert entry.set_tensor_type(Tensor) is True


def test_an_outputs_buffer_is_made_once_and_holds_the_block(data):
    lib, a, _ = data
    before = counters(lib)
    with Tensor.from_numpy(a, backend="sim") as at:
        out = _planned(aclnn_py.relu, at)
        buffer = out.buffer
        assert out.buffer is buffer and buffer.ptr is buffer.ptr
        address = _address(out)
        del out
        gc.collect()
        lib.synchronize()  # the output's descriptor is gone; the buffer still holds the block
        again = aclnn_py.relu(at, backend="sim")
        assert _address(again) != address
        buffer.free()
        buffer.free()  # (once)
        again.close()
        closed = aclnn_py.relu(at, backend="sim")
        closed.close()
        assert closed.buffer is None  # closed before its buffer was asked for
        empty = Tensor.from_numpy(np.zeros((0, 3), np.float32), backend="sim")
        none = _planned(aclnn_py.relu, empty)
        assert none.shape == (0, 3) and none.buffer.nbytes == 0 and none.buffer.ptr == lib.ffi.NULL
        np.testing.assert_array_equal(none.numpy(), np.zeros((0, 3), np.float32))
        del none, empty
    assert counters(lib) == before


def test_an_output_in_a_reference_cycle_is_released_by_the_collector(data):
    lib, a, _ = data
    before = counters(lib)
    with Tensor.from_numpy(a, backend="sim") as at:
        for _ in range(3):
            out = _planned(aclnn_py.relu, at)
            out.cycle = [out]  # only the collector can free it
            del out
        gc.collect()
        lib.synchronize()
    assert counters(lib) == before


def test_a_closed_outputs_handle_is_none(data):
    """A closed Tensor's ``handle`` is None: its aclTensor may be taken by the next output of its
    form (above), so the old pointer would name that output. From ``Tensor.from_numpy`` and
    from the entry alike; a call given the closed Tensor is refused by name."""
    lib, a, _ = data
    at = Tensor.from_numpy(a, backend="sim")
    _planned(aclnn_py.relu, at)
    out = aclnn_py.relu(at, backend="sim")
    old = int(lib.ffi.cast("uintptr_t", out.handle))
    out.close()
    assert out.handle is None and out.buffer is None
    again = aclnn_py.relu(at, backend="sim")
    if _entry_on(lib):
        assert int(lib.ffi.cast("uintptr_t", again.handle)) == old  # (the reuse that makes it matter)
    with pytest.raises(TypeError, match="self is a closed Tensor"):
        aclnn_py.relu(out, backend="sim")
    at.close()
    assert at.handle is None
    np.testing.assert_array_equal(again.numpy(), np.maximum(a, 0))
