"""Runtime functions of issue #24, observed the way a CANN program observes them (through the
raw C functions of the simulator's library): ordering across two streams through an event,
a callback running after the work queued before it, a timed synchronisation returning CANN's
timeout status, stream queries, 2-D copies, 32-bit memsets and the per-thread last error."""

from __future__ import annotations

import threading
import time
import types

import numpy as np
import pytest


@pytest.fixture
def rt(sim_lib):
    lib = sim_lib
    assert lib.fn("aclrtSetDevice")(0) == 0
    streams, blocks = [], []

    def stream():
        p = lib.ffi.new("aclrtStream *")
        assert lib.fn("aclrtCreateStream")(p) == 0
        streams.append(p[0])
        return p[0]

    def malloc(size):
        p = lib.ffi.new("void **")
        assert lib.fn("aclrtMalloc")(p, size, 0) == 0
        blocks.append(p[0])
        return p[0]

    yield types.SimpleNamespace(ffi=lib.ffi, fn=lib.fn, recent_error=lib.recent_error, stream=stream, malloc=malloc)
    for s in streams:
        lib.fn("aclrtDestroyStream")(s)
    for block in blocks:
        lib.fn("aclrtFree")(block)
    lib.fn("aclrtResetDevice")(0)
    lib.fn("aclrtGetLastError")(0)
    lib.recent_error()


def read(lib, dev, n, dtype=np.uint8):
    out = np.zeros(n, dtype=dtype)
    assert lib.fn("aclrtMemcpy")(lib.ffi.from_buffer(out), out.nbytes, dev, out.nbytes, 2) == 0
    return out


def test_an_event_orders_two_streams(rt):
    s1, s2 = rt.stream(), rt.stream()
    a, b = rt.malloc(64), rt.malloc(64)
    e = rt.ffi.new("aclrtEvent *")
    assert rt.fn("aclrtCreateEvent")(e) == 0
    assert rt.fn("aclrtMemsetAsync")(a, 64, 7, 64, s1) == 0
    assert rt.fn("aclrtRecordEvent")(e[0], s1) == 0
    assert rt.fn("aclrtStreamWaitEvent")(s2, e[0]) == 0
    assert rt.fn("aclrtMemcpyAsync")(b, 64, a, 64, 3, s2) == 0
    status = rt.ffi.new("aclrtEventWaitStatus *")
    assert rt.fn("aclrtQueryEventWaitStatus")(e[0], status) == 0 and status[0] == 1  # NOT_READY
    # Only s2 is synchronised: the copy still sees the memset queued on s1 before the record.
    assert rt.fn("aclrtSynchronizeStream")(s2) == 0
    assert (read(rt, b, 64) == 7).all()
    assert rt.fn("aclrtQueryEventWaitStatus")(e[0], status) == 0 and status[0] == 0
    recorded = rt.ffi.new("aclrtEventRecordedStatus *")
    assert rt.fn("aclrtQueryEventStatus")(e[0], recorded) == 0 and recorded[0] == 1
    assert rt.fn("aclrtResetEvent")(e[0], s1) == 0 and rt.fn("aclrtSynchronizeStream")(s1) == 0
    assert rt.fn("aclrtQueryEventStatus")(e[0], recorded) == 0 and recorded[0] == 0
    assert rt.fn("aclrtDestroyEvent")(e[0]) == 0


def test_a_stream_query_is_not_ready_until_its_work_ran(rt):
    s = rt.stream()
    a = rt.malloc(32)
    status = rt.ffi.new("aclrtStreamStatus *")
    assert rt.fn("aclrtStreamQuery")(s, status) == 0 and status[0] == 0
    assert rt.fn("aclrtMemsetAsync")(a, 32, 1, 32, s) == 0
    assert rt.fn("aclrtStreamQuery")(s, status) == 0 and status[0] == 1
    assert rt.fn("aclrtSynchronizeStream")(s) == 0
    assert rt.fn("aclrtStreamQuery")(s, status) == 0 and status[0] == 0


def test_stream_priority_flags_and_attributes(rt):
    p = rt.ffi.new("aclrtStream *")
    assert rt.fn("aclrtCreateStreamWithConfig")(p, 3, 0x2) == 0
    value = rt.ffi.new("uint32_t *")
    assert rt.fn("aclrtStreamGetPriority")(p[0], value) == 0 and value[0] == 3
    assert rt.fn("aclrtStreamGetFlags")(p[0], value) == 0 and value[0] == 0x2
    least, greatest = rt.ffi.new("int32_t *"), rt.ffi.new("int32_t *")
    assert rt.fn("aclrtDeviceGetStreamPriorityRange")(least, greatest) == 0 and (least[0], greatest[0]) == (7, 0)
    attr = rt.ffi.new("aclrtStreamAttrValue *")
    attr.failureMode = 0
    assert rt.fn("aclrtSetStreamAttribute")(p[0], 1, attr) == 0
    attr.failureMode = 99
    assert rt.fn("aclrtGetStreamAttribute")(p[0], 1, attr) == 0 and attr.failureMode == 0
    assert rt.fn("aclrtCreateStreamWithConfig")(rt.ffi.new("aclrtStream *"), 8, 0) == 100000
    assert rt.fn("aclrtDestroyStream")(p[0]) == 0


def test_a_callback_runs_on_the_report_thread_after_the_work_before_it(rt):
    s = rt.stream()
    a = rt.malloc(16)
    seen = []

    @rt.ffi.callback("void(void *)")
    def callback(user_data):
        seen.append(int(read(rt, a, 16)[0]))

    done = threading.Event()

    def report_thread():
        assert rt.fn("aclrtProcessReport")(5000) == 0
        done.set()

    worker = threading.Thread(target=report_thread)
    worker.start()
    while not worker.ident:
        time.sleep(0.001)
    assert rt.fn("aclrtSubscribeReport")(worker.ident, s) == 0
    assert rt.fn("aclrtMemsetAsync")(a, 16, 5, 16, s) == 0
    assert rt.fn("aclrtLaunchCallback")(callback, rt.ffi.NULL, 1, s) == 0  # ACL_CALLBACK_BLOCK
    assert rt.fn("aclrtSynchronizeStream")(s) == 0
    worker.join(10)
    assert done.is_set() and seen == [5]
    assert rt.fn("aclrtUnSubscribeReport")(worker.ident, s) == 0
    assert rt.fn("aclrtProcessReport")(10) == 507012  # ACL_ERROR_RT_REPORT_TIMEOUT
    # Without a report thread the launch is refused.
    assert rt.fn("aclrtLaunchCallback")(callback, rt.ffi.NULL, 1, s) == 107011


def test_a_timed_synchronisation_returns_cann_timeout_status(rt):
    s = rt.stream()
    ran = []

    @rt.ffi.callback("void(void *)")
    def slow(args):
        time.sleep(0.2)
        ran.append(1)

    assert rt.fn("aclrtLaunchHostFunc")(s, slow, rt.ffi.NULL) == 0
    assert rt.fn("aclrtLaunchHostFunc")(s, slow, rt.ffi.NULL) == 0
    assert rt.fn("aclrtSynchronizeStreamWithTimeout")(s, 50) == 507046  # ACL_ERROR_RT_STREAM_SYNC_TIMEOUT
    assert "within 50 ms" in rt.recent_error()
    assert rt.fn("aclrtGetLastError")(0) == 507046 and rt.fn("aclrtGetLastError")(0) == 0
    assert ran == [1]  # the second host function is still queued
    assert rt.fn("aclrtSynchronizeStreamWithTimeout")(s, -1) == 0 and ran == [1, 1]


def test_memcpy2d_and_memset_d32(rt):
    a = rt.malloc(64)
    host = np.arange(32, dtype=np.uint8)
    # 4 rows of 3 bytes, source rows 8 apart, destination rows 4 apart.
    assert rt.fn("aclrtMemsetD32")(a, 64, 0xFFFFFFFF, 16) == 0
    assert (read(rt, a, 16, np.uint32) == 0xFFFFFFFF).all()
    assert rt.fn("aclrtMemcpy2d")(a, 4, rt.ffi.from_buffer(host), 8, 3, 4, 1) == 0
    got = read(rt, a, 16).reshape(4, 4)
    assert (got[:, :3] == host.reshape(4, 8)[:, :3]).all() and (got[:, 3] == 0xFF).all()
    s = rt.stream()
    assert rt.fn("aclrtMemsetD32Async")(a, 64, 0x01020304, 2, s) == 0
    assert (read(rt, a, 2, np.uint32) != 0x01020304).all()  # queued, not run
    assert rt.fn("aclrtSynchronizeStream")(s) == 0
    assert (read(rt, a, 2, np.uint32) == 0x01020304).all()
    assert rt.fn("aclrtMemcpy2d")(a, 2, rt.ffi.from_buffer(host), 8, 3, 4, 1) == 100000  # width > dpitch


def test_the_last_error_is_per_thread(rt):
    rt.fn("aclrtGetLastError")(0)  # clears what earlier calls on this thread left
    assert rt.fn("aclrtPeekAtLastError")(0) == 0
    assert rt.fn("aclrtStreamGetPriority")(rt.ffi.NULL, rt.ffi.NULL) == 100000
    other = []
    t = threading.Thread(target=lambda: other.append(rt.fn("aclrtPeekAtLastError")(0)))
    t.start()
    t.join()
    assert other == [0]
    assert rt.fn("aclrtPeekAtLastError")(0) == 100000 and rt.fn("aclrtGetLastError")(0) == 100000
    assert rt.fn("aclrtGetLastError")(0) == 0
    assert rt.fn("aclrtGetLastError")(1) == 107000  # only ACL_RT_THREAD_LEVEL
