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


def test_device_and_toolkit_information(rt):
    from aclnn_py.sim import _build

    value = rt.ffi.new("int64_t *")
    assert rt.fn("aclrtGetDeviceInfo")(0, 101, value) == 0 and value[0] == 24  # ACL_DEV_ATTR_AICORE_CORE_NUM
    assert rt.fn("aclrtGetDeviceInfo")(0, 301, value) == 0 and value[0] > 0  # total global memory
    assert rt.fn("aclrtGetDeviceInfo")(0, 202, value) == 207000  # a SIMT warp size: not on a 910B
    assert "not supported" in rt.recent_error()
    assert rt.fn("aclrtGetDeviceInfo")(99, 101, value) == 107001
    assert rt.fn("aclGetDeviceCapability")(0, 0, value) == 0 and value[0] == 24
    release = _build.cann_version(_build.source_include_dir())
    text = rt.ffi.new("char[128]")
    assert rt.fn("aclsysGetVersionStr")(b"runtime", text) == 0 and rt.ffi.string(text).decode() == release
    assert rt.fn("aclsysGetVersionStr")(b"nosuchpackage", text) == 100000
    number = rt.ffi.new("int32_t *")
    assert rt.fn("aclsysGetVersionNum")(b"cann", number) == 0
    major, minor, patch = (int(x) for x in release.split("."))
    assert number[0] == major * 1000000 + minor * 10000 + patch * 100
    version = rt.ffi.new("aclCANNPackageVersion *")
    assert rt.fn("aclsysGetCANNVersion")(0, version) == 0 and rt.ffi.string(version.version).decode() == release
    attr = rt.ffi.new("int32_t *")
    assert rt.fn("aclGetCannAttribute")(1, attr) == 0 and attr[0] == 1  # bfloat16
    assert rt.fn("aclGetCannAttribute")(2, attr) == 0 and attr[0] == 0  # JIT compilation
    limit = rt.ffi.new("uint32_t *")
    assert rt.fn("aclrtSetDeviceResLimit")(0, 1, 8) == 0
    assert rt.fn("aclrtGetDeviceResLimit")(0, 1, limit) == 0 and limit[0] == 8
    s = rt.stream()
    assert rt.fn("aclrtGetStreamResLimit")(s, 1, limit) == 0 and limit[0] == 8  # the device's, until set
    assert rt.fn("aclrtSetStreamResLimit")(s, 1, 4) == 0 and rt.fn("aclrtUseStreamResInCurrentThread")(s) == 0
    assert rt.fn("aclrtGetResInCurrentThread")(1, limit) == 0 and limit[0] == 4
    assert rt.fn("aclrtResetDeviceResLimit")(0) == 0 and rt.fn("aclrtUnuseStreamResInCurrentThread")(s) == 0
    assert rt.fn("aclrtGetResInCurrentThread")(1, limit) == 0 and limit[0] == 48
    actual = rt.ffi.new("uint64_t *")
    assert rt.fn("aclrtSetOpExecuteTimeOutV2")(1500, actual) == 0 and actual[0] == 2000
    ms = rt.ffi.new("uint32_t *")
    assert rt.fn("aclrtGetOpExecuteTimeout")(ms) == 0 and ms[0] == 2
    assert rt.fn("aclrtSetOpExecuteTimeOutV2")(0, actual) == 0


def test_host_registration_pointer_attributes_and_address_ranges(rt):
    host = np.zeros(256, dtype=np.uint8)
    hp = rt.ffi.cast("void *", host.ctypes.data)
    dev = rt.ffi.new("void **")
    assert rt.fn("aclrtHostRegister")(hp, 256, 0, dev) == 0 and dev[0] == hp
    attrs = rt.ffi.new("aclrtPtrAttributes *")
    assert rt.fn("aclrtPointerGetAttributes")(hp, attrs) == 0 and attrs.location.type == 0  # HOST
    a = rt.malloc(100)
    assert rt.fn("aclrtPointerGetAttributes")(rt.ffi.cast("char *", a) + 10, attrs) == 0
    assert attrs.location.type == 1 and attrs.location.id == 0  # DEVICE
    other = np.zeros(8, dtype=np.uint8)
    assert rt.fn("aclrtPointerGetAttributes")(rt.ffi.cast("void *", other.ctypes.data), attrs) == 0
    assert attrs.location.type == 2  # UNREGISTERED
    base, size = rt.ffi.new("void **"), rt.ffi.new("size_t *")
    assert rt.fn("aclrtMemGetAddressRange")(rt.ffi.cast("char *", a) + 50, base, size) == 0
    assert base[0] == a and size[0] == 100
    # The registered memory is where the device reads: a device-to-device copy into it lands in `host`.
    assert rt.fn("aclrtMemset")(a, 100, 9, 100) == 0
    assert rt.fn("aclrtMemcpy")(hp, 256, a, 100, 4) == 0  # ACL_MEMCPY_DEFAULT
    assert (host[:100] == 9).all()
    assert rt.fn("aclrtHostUnregister")(hp) == 0 and rt.fn("aclrtHostUnregister")(hp) == 100000


def test_virtual_memory_reserve_map_access(rt):
    granularity = rt.ffi.new("size_t *")
    prop = rt.ffi.new("aclrtPhysicalMemProp *")
    prop.allocationType = 0
    prop.location.type = 1  # ACL_MEM_LOCATION_TYPE_DEVICE
    prop.location.id = 0
    assert rt.fn("aclrtMemGetAllocationGranularity")(prop, 0, granularity) == 0
    g = granularity[0]
    va = rt.ffi.new("void **")
    assert rt.fn("aclrtReserveMemAddress")(va, 2 * g, 0, rt.ffi.NULL, 0) == 0
    handle = rt.ffi.new("aclrtDrvMemHandle *")
    assert rt.fn("aclrtMallocPhysical")(handle, g, prop, 0) == 0
    assert rt.fn("aclrtMapMem")(va[0], g, 0, handle[0], 0) == 0
    data = np.arange(64, dtype=np.uint8)
    assert rt.fn("aclrtMemcpy")(va[0], g, rt.ffi.from_buffer(data), 64, 1) == 0  # host to device
    assert (read(rt, va[0], 64) == data).all()
    location, flag = rt.ffi.new("aclrtMemLocation *"), rt.ffi.new("uint64_t *")
    assert rt.fn("aclrtMemGetAccess")(va[0], location, flag) == 0 and flag[0] == 3 and location.type == 1
    desc = rt.ffi.new("aclrtMemAccessDesc *")
    desc.flags = 1  # READ
    desc.location.type = 1
    assert rt.fn("aclrtMemSetAccess")(va[0], g, desc, 1) == 0
    assert rt.fn("aclrtMemGetAccess")(va[0], location, flag) == 0 and flag[0] == 1
    assert rt.fn("aclrtFreePhysical")(handle[0]) == 107000  # still mapped
    assert rt.fn("aclrtReleaseMemAddress")(va[0]) == 107000
    assert rt.fn("aclrtUnmapMem")(va[0]) == 0
    assert rt.fn("aclrtFreePhysical")(handle[0]) == 0 and rt.fn("aclrtReleaseMemAddress")(va[0]) == 0


def test_batch_and_offset_copies(rt):
    a, b = rt.malloc(32), rt.malloc(32)
    src = np.arange(32, dtype=np.uint8)
    dsts = rt.ffi.new("void *[]", [a, b])
    srcs = rt.ffi.new("void *[]", [rt.ffi.from_buffer(src), rt.ffi.cast("char *", rt.ffi.from_buffer(src)) + 16])
    maxs = rt.ffi.new("size_t[]", [32, 32])
    sizes = rt.ffi.new("size_t[]", [16, 16])
    attrs = rt.ffi.new("aclrtMemcpyBatchAttr[1]")
    attrs[0].dstLoc.type, attrs[0].srcLoc.type = 1, 0  # host to device
    indexes = rt.ffi.new("size_t[]", [0])
    fail = rt.ffi.new("size_t *")
    assert rt.fn("aclrtMemcpyBatch")(dsts, maxs, srcs, sizes, 2, attrs, indexes, 1, fail) == 0
    assert (read(rt, a, 16) == src[:16]).all() and (read(rt, b, 16) == src[16:]).all()
    sizes[1] = 64  # past destMax: the second copy fails, the first was done
    assert rt.fn("aclrtMemcpyBatch")(dsts, maxs, srcs, sizes, 2, attrs, indexes, 1, fail) == 100000 and fail[0] == 1
    s = rt.stream()
    dst_base, src_base = rt.ffi.new("void **", b), rt.ffi.new("void **", a)
    assert rt.fn("aclrtMemcpyAsyncWithOffset")(dst_base, 32, 8, rt.ffi.cast("const void **", src_base), 4, 2, 3, s) == 0
    assert rt.fn("aclrtSynchronizeStream")(s) == 0
    assert (read(rt, b, 12)[8:] == src[2:6]).all()


def test_init_and_finalize_callbacks_run(rt, tmp_path):
    import subprocess
    import sys
    import textwrap

    # In a child: aclFinalize ends the runtime for the rest of the process.
    code = textwrap.dedent('''
        from aclnn_py._runtime import loader
        lib = loader.library("sim")
        ffi, fn = lib.ffi, lib.fn
        seen = []
        @ffi.callback("aclError(const char *, size_t, void *)")
        def on_init(config, length, user):
            seen.append(("init", ffi.string(config, length).decode(), int(ffi.cast("intptr_t", user))))
            return 0
        @ffi.callback("aclError(void *)")
        def on_finalize(user):
            seen.append(("finalize", int(ffi.cast("intptr_t", user))))
            return 0
        fn("aclFinalize")()  # whatever loading the library did: aclInit starts over after it
        assert fn("aclInitCallbackRegister")(0, on_init, ffi.cast("void *", 7)) == 0
        assert fn("aclFinalizeCallbackRegister")(0, on_finalize, ffi.cast("void *", 8)) == 0
        assert fn("aclInit")(CONFIG) in (0,)
        assert fn("aclFinalize")() == 0
        assert fn("aclInitCallbackUnRegister")(0, on_init) == 0
        assert fn("aclInitCallbackUnRegister")(0, on_init) == 100000
        print(seen)
    ''').replace("CONFIG", repr(str(tmp_path / "config.json").encode()))
    (tmp_path / "config.json").write_text('{"dump": {}}')
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[('init', '{\"dump\": {}}', 7), ('finalize', 8)]"


def test_a_failed_task_reaches_the_exception_callback_and_error_verbose(rt):
    s = rt.stream()
    seen = []

    @rt.ffi.callback("void(aclrtExceptionInfo *)")
    def on_exception(info):
        seen.append((rt.fn("aclrtGetErrorCodeFromExceptionInfo")(info), rt.fn("aclrtGetDeviceIdFromExceptionInfo")(info),
                     rt.fn("aclrtGetTaskIdFromExceptionInfo")(info)))

    assert rt.fn("aclrtSetExceptionInfoCallback")(on_exception) == 0
    p = rt.ffi.new("void **")
    assert rt.fn("aclrtMalloc")(p, 64, 0) == 0
    host = np.zeros(64, dtype=np.uint8)
    assert rt.fn("aclrtMemcpyAsync")(p[0], 64, rt.ffi.from_buffer(host), 64, 1, s) == 0
    task = rt.ffi.new("uint32_t *")
    assert rt.fn("aclrtGetThreadLastTaskId")(task) == 0 and task[0] > 0
    assert rt.fn("aclrtFree")(p[0]) == 0  # freed before the queued copy runs
    assert rt.fn("aclrtSynchronizeStream")(s) == 507053  # ACL_ERROR_RT_DEVICE_MEM_ERROR
    assert seen == [(507053, 0, task[0])]
    info = rt.ffi.new("aclrtErrorInfo *")
    assert rt.fn("aclrtGetErrorVerbose")(0, info) == 0 and info.errorType == 1  # ACL_RT_ERROR_MEMORY
    assert rt.fn("aclrtSetExceptionInfoCallback")(rt.ffi.NULL) == 0


def test_state_and_abort_callbacks(rt):
    events = []

    @rt.ffi.callback("void(aclrtStream, aclrtStreamState, void *)")
    def on_stream(stream, state, args):
        events.append(("stream", int(state)))

    @rt.ffi.callback("void(int32_t, aclrtDeviceState, void *)")
    def on_device(device, state, args):
        events.append(("device", int(state)))

    @rt.ffi.callback("int32_t(int32_t, aclrtDeviceTaskAbortStage, uint32_t, void *)")
    def on_abort(device, stage, timeout, args):
        events.append(("abort", int(stage), timeout))
        return 0

    assert rt.fn("aclrtRegStreamStateCallback")(b"t", on_stream, rt.ffi.NULL) == 0
    assert rt.fn("aclrtRegDeviceStateCallback")(b"t", on_device, rt.ffi.NULL) == 0
    assert rt.fn("aclrtSetDeviceTaskAbortCallback")(b"t", on_abort, rt.ffi.NULL) == 0
    try:
        p = rt.ffi.new("aclrtStream *")
        assert rt.fn("aclrtCreateStream")(p) == 0
        a = rt.malloc(16)
        assert rt.fn("aclrtMemsetAsync")(a, 16, 3, 16, p[0]) == 0
        assert rt.fn("aclrtDeviceTaskAbort")(0, 100) == 0
        assert rt.fn("aclrtSynchronizeStream")(p[0]) == 0 and (read(rt, a, 16) != 3).all()  # dropped
        assert rt.fn("aclrtDestroyStream")(p[0]) == 0
        assert rt.fn("aclrtSetDevice")(0) == 0 and rt.fn("aclrtResetDevice")(0) == 0
    finally:
        for register in ("aclrtRegStreamStateCallback", "aclrtRegDeviceStateCallback", "aclrtSetDeviceTaskAbortCallback"):
            assert rt.fn(register)(b"t", rt.ffi.NULL, rt.ffi.NULL) == 0
    assert events == [("stream", 1), ("abort", 0, 100), ("abort", 1, 100), ("stream", 2),
                      ("device", 0), ("device", 1), ("device", 2), ("device", 3)]


def test_host_functions_run_on_the_subscribed_thread(rt):
    s = rt.stream()
    ran_on = []

    @rt.ffi.callback("void(void *)")
    def host_func(args):
        ran_on.append(threading.get_ident())

    def worker():
        assert rt.fn("aclrtProcessHostFunc")(5000) == 0

    t = threading.Thread(target=worker)
    t.start()
    assert rt.fn("aclrtSubscribeHostFunc")(t.ident, s) == 0
    assert rt.fn("aclrtLaunchHostFunc")(s, host_func, rt.ffi.NULL) == 0
    assert rt.fn("aclrtSynchronizeStream")(s) == 0
    t.join(10)
    assert ran_on == [t.ident]
    assert rt.fn("aclrtUnSubscribeHostFunc")(t.ident, s) == 0
    assert rt.fn("aclrtLaunchHostFunc")(s, host_func, rt.ffi.NULL) == 0
    assert rt.fn("aclrtSynchronizeStream")(s) == 0 and ran_on[-1] == threading.get_ident()


def test_memory_usage_and_described_copies(rt):
    a, b = rt.malloc(64), rt.malloc(64)
    info, count = rt.ffi.new("aclrtMemUsageInfo *"), rt.ffi.new("size_t *")
    assert rt.fn("aclrtGetMemUsageInfo")(0, info, 1, count) == 0 and count[0] == 1
    assert info.curMemSize >= 128 and info.memPeakSize >= info.curMemSize
    size = rt.ffi.new("size_t *")
    assert rt.fn("aclrtGetMemcpyDescSize")(3, size) == 0
    desc = rt.malloc(size[0])
    assert rt.fn("aclrtMemset")(a, 64, 6, 64) == 0
    assert rt.fn("aclrtSetMemcpyDesc")(desc, 3, a, b, 64, rt.ffi.NULL) == 0
    s = rt.stream()
    assert rt.fn("aclrtMemcpyAsyncWithDesc")(desc, 3, s) == 0 and rt.fn("aclrtSynchronizeStream")(s) == 0
    assert (read(rt, b, 64) == 6).all()
    # The stream reads the descriptor when it gets to the copy: a descriptor written by work
    # queued before it (here a copy of another descriptor's bytes) is the one that counts.
    c, other = rt.malloc(64), rt.malloc(size[0])
    assert rt.fn("aclrtMemset")(c, 64, 9, 64) == 0
    assert rt.fn("aclrtSetMemcpyDesc")(other, 3, c, b, 64, rt.ffi.NULL) == 0
    later = read(rt, other, size[0])
    assert rt.fn("aclrtMemcpyAsync")(desc, size[0], rt.ffi.from_buffer(later), size[0], 1, s) == 0
    assert rt.fn("aclrtMemcpyAsyncWithDesc")(desc, 3, s) == 0
    assert (read(rt, b, 64) == 6).all()  # nothing ran yet
    assert rt.fn("aclrtSynchronizeStream")(s) == 0
    assert (read(rt, b, 64) == 9).all()
    # Memory that holds no descriptor when the copy runs fails it, at the synchronisation.
    assert rt.fn("aclrtMemcpyAsyncWithDesc")(a, 3, s) == 0
    assert rt.fn("aclrtSynchronizeStream")(s) == 107000 and "aclrtMemcpyAsyncWithDesc" in rt.recent_error()
    assert rt.fn("aclrtMemcpyAsyncWithDesc")(rt.ffi.NULL, 3, s) == 100000
    assert rt.fn("aclrtMemcpyAsyncWithDesc")(desc, 99, s) == 100000


@pytest.mark.parametrize("dtype, acl_type", [(np.float32, 0), (np.int32, 3), (np.int8, 2), (np.float16, 1)])
def test_reduce_async(rt, dtype, acl_type):
    a, b = rt.malloc(64), rt.malloc(64)
    n = 64 // np.dtype(dtype).itemsize
    x = (np.arange(n) % 7 - 3).astype(dtype)
    y = (np.arange(n) % 5 - 2).astype(dtype)
    s = rt.stream()
    for kind, expect in ((10, x + y), (11, np.maximum(x + y, y)), (12, np.minimum(np.maximum(x + y, y), x))):
        if kind == 10:
            assert rt.fn("aclrtMemcpy")(a, 64, rt.ffi.from_buffer(x), 64, 1) == 0
        assert rt.fn("aclrtMemcpy")(b, 64, rt.ffi.from_buffer(y if kind != 12 else x), 64, 1) == 0
        assert rt.fn("aclrtReduceAsync")(a, b, 64, kind, acl_type, s, rt.ffi.NULL) == 0
        assert rt.fn("aclrtSynchronizeStream")(s) == 0
        assert (read(rt, a, n, dtype) == expect).all(), kind
    assert rt.fn("aclrtReduceAsync")(a, b, 64, 13, acl_type, s, rt.ffi.NULL) == 207000  # EQUAL: not supported
    assert rt.fn("aclrtReduceAsync")(a, b, 65, 10, 0, s, rt.ffi.NULL) == 100000


def test_value_write(rt):
    a = rt.malloc(16)
    s = rt.stream()
    assert rt.fn("aclrtValueWrite")(a, 0x1122334455667788, 0, s) == 0
    assert rt.fn("aclrtSynchronizeStream")(s) == 0
    assert read(rt, a, 1, np.uint64)[0] == 0x1122334455667788
    assert rt.fn("aclrtValueWrite")(rt.ffi.cast("char *", a) + 12, 1, 0, s) == 100000  # past the block / unaligned


def test_waits_that_would_deadlock_do_not_hang():
    """A wait on a record that was replaced by one queued behind the wait itself, and a host
    function synchronising its own stream: each goes on (in a child with a time limit, so a
    hang is a failure)."""
    import os
    import subprocess
    import sys
    import textwrap

    code = textwrap.dedent('''
        from aclnn_py._runtime import loader
        lib = loader.library("sim")
        ffi, fn = lib.ffi, lib.fn
        assert fn("aclrtSetDevice")(0) == 0
        a, b, e = ffi.new("aclrtStream *"), ffi.new("aclrtStream *"), ffi.new("aclrtEvent *")
        assert fn("aclrtCreateStream")(a) == 0 and fn("aclrtCreateStream")(b) == 0 and fn("aclrtCreateEvent")(e) == 0
        assert fn("aclrtRecordEvent")(e[0], b[0]) == 0
        assert fn("aclrtStreamWaitEvent")(a[0], e[0]) == 0
        assert fn("aclrtRecordEvent")(e[0], a[0]) == 0   # replaces the record a waits for
        assert fn("aclrtSynchronizeStream")(a[0]) == 0
        @ffi.callback("void(void *)")
        def sync_own_stream(args):
            assert fn("aclrtSynchronizeStream")(a[0]) == 0
        assert fn("aclrtLaunchHostFunc")(a[0], sync_own_stream, ffi.NULL) == 0
        assert fn("aclrtSynchronizeStream")(a[0]) == 0
        print("ok")
    ''')
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                          env=dict(os.environ, ACLNN_PY_BACKEND="sim"))
    assert proc.returncode == 0 and proc.stdout == "ok\n", proc.stdout + proc.stderr


def test_stream_stop_needs_a_device_only_stream(rt):
    p = rt.ffi.new("aclrtStream *")
    assert rt.fn("aclrtCreateStreamWithConfig")(p, 7, 0x20) == 0  # ACL_STREAM_DEVICE_USE_ONLY
    assert rt.fn("aclrtStreamStop")(p[0]) == 0
    assert rt.fn("aclrtStreamStop")(rt.stream()) == 107000
    assert rt.fn("aclrtStreamStop")(rt.ffi.NULL) == 100000
    assert rt.fn("aclrtDestroyStream")(p[0]) == 0


def test_atomic_capabilities(rt):
    """The simulated devices share the host's memory: integer atomics are the host CPU's (signed
    and unsigned, 8 to 64 bits), float ones 32/64-bit compare-and-swap loops, the DMA reductions
    aclrtReduceAsync's types, and there are no SIMD kernels."""
    signed, unsigned, reduction, s8, s16, s32, s64 = 1, 2, 4, 8, 16, 32, 64
    ops = [0, 9, 10, 30, 40]  # INTEGER_ADD, CAS, FLOAT_ADD, DMA_ADD, SIMD_SCALAR_ADD
    operations = rt.ffi.new("aclrtAtomicOperation[]", ops)
    caps = rt.ffi.new("uint32_t[]", len(ops))
    assert rt.fn("aclrtDeviceGetHostAtomicCapabilities")(caps, operations, len(ops), 0) == 0
    integer = signed | unsigned | s8 | s16 | s32 | s64
    assert caps[0] & integer == integer and caps[1] == caps[0]
    assert caps[2] == signed | s32 | s64
    assert caps[3] == signed | reduction | s8 | s16 | s32
    assert caps[4] == 0
    assert rt.fn("aclrtDeviceGetHostAtomicCapabilities")(rt.ffi.NULL, rt.ffi.NULL, 0, 0) == 0
    bad = rt.ffi.new("aclrtAtomicOperation[]", [13])
    assert rt.fn("aclrtDeviceGetHostAtomicCapabilities")(caps, bad, 1, 0) == 100000
    assert "aclrtDeviceGetHostAtomicCapabilities" in rt.recent_error()
    assert rt.fn("aclrtDeviceGetHostAtomicCapabilities")(rt.ffi.NULL, operations, 1, 0) == 100000
    assert rt.fn("aclrtDeviceGetHostAtomicCapabilities")(caps, operations, 1, 64) == 107001
    assert rt.fn("aclrtDeviceGetP2PAtomicCapabilities")(caps, operations, 1, 0, 0) == 100000
    assert "aclrtDeviceGetP2PAtomicCapabilities" in rt.recent_error()
    count = rt.ffi.new("uint32_t *")
    assert rt.fn("aclrtGetDeviceCount")(count) == 0
    if count[0] > 1:
        assert rt.fn("aclrtDeviceGetP2PAtomicCapabilities")(caps, operations, len(ops), 0, 1) == 0
        assert caps[3] == signed | reduction | s8 | s16 | s32
    else:
        assert rt.fn("aclrtDeviceGetP2PAtomicCapabilities")(caps, operations, 1, 0, 1) == 107001


def test_value_wait(rt):
    """aclrtValueWait holds its stream until the value is there: a write queued on another
    stream runs first (as that stream would on a device), a timed synchronisation returns
    CANN's timeout status with the wait still queued, a host write then releases it."""
    s1, s2, s3 = rt.stream(), rt.stream(), rt.stream()
    flag, marker = rt.malloc(8), rt.malloc(16)
    assert rt.fn("aclrtMemset")(flag, 8, 0, 8) == 0
    assert rt.fn("aclrtMemset")(marker, 16, 0, 16) == 0
    assert rt.fn("aclrtValueWait")(flag, 5, 1, s1) == 0  # ACL_STREAM_WAIT_VALUE_EQ
    assert rt.fn("aclrtMemsetAsync")(marker, 16, 7, 16, s1) == 0
    assert rt.fn("aclrtValueWrite")(flag, 5, 0, s2) == 0
    assert rt.fn("aclrtSynchronizeStream")(s1) == 0
    assert read(rt, flag, 1, np.uint64)[0] == 5 and (read(rt, marker, 16) == 7).all()
    status = rt.ffi.new("aclrtStreamStatus *")
    assert rt.fn("aclrtStreamQuery")(s2, status) == 0 and status[0] == 0  # COMPLETE: the write ran

    assert rt.fn("aclrtValueWait")(flag, 10, 0, s3) == 0  # GEQ: (int64)(*flag - 10) >= 0
    assert rt.fn("aclrtMemsetAsync")(marker, 16, 9, 16, s3) == 0
    assert rt.fn("aclrtSynchronizeStreamWithTimeout")(s3, 50) == 507046
    assert (read(rt, marker, 16) == 7).all()
    ten = np.array([10], dtype=np.uint64)
    assert rt.fn("aclrtMemcpy")(flag, 8, rt.ffi.from_buffer(ten), 8, 1) == 0
    assert rt.fn("aclrtSynchronizeStream")(s3) == 0 and (read(rt, marker, 16) == 9).all()

    six = np.array([6], dtype=np.uint64)
    assert rt.fn("aclrtMemcpy")(flag, 8, rt.ffi.from_buffer(six), 8, 1) == 0
    assert rt.fn("aclrtValueWait")(flag, 4, 2, s1) == 0  # AND: 6 & 4 != 0
    assert rt.fn("aclrtValueWait")(flag, 1, 3, s1) == 0  # NOR: ~(6 | 1) != 0
    assert rt.fn("aclrtSynchronizeStream")(s1) == 0

    assert rt.fn("aclrtValueWait")(flag, 1, 4, s1) == 100000 and "aclrtValueWait" in rt.recent_error()
    assert rt.fn("aclrtValueWait")(rt.ffi.cast("char *", flag) + 4, 1, 0, s1) == 100000
    host = np.zeros(1, dtype=np.uint64)
    assert rt.fn("aclrtValueWait")(rt.ffi.from_buffer(host), 1, 0, s1) == 100000


def test_memcpy_async_with_condition(rt):
    """Unpinned host memory is copied before the call returns; pinned host memory is copied
    when the stream runs; a host-to-host copy is refused (CANN on an A2)."""
    s = rt.stream()
    dev = rt.malloc(64)
    assert rt.fn("aclrtMemset")(dev, 64, 0, 64) == 0
    data = np.full(64, 3, dtype=np.uint8)
    assert rt.fn("aclrtMemcpyAsyncWithCondition")(dev, 64, rt.ffi.from_buffer(data), 64, 1, s) == 0
    assert (read(rt, dev, 64) == 3).all()  # done without a synchronisation
    pinned = rt.ffi.new("void **")
    assert rt.fn("aclrtMallocHost")(pinned, 64) == 0
    try:
        rt.ffi.memmove(pinned[0], bytes([5]) * 64, 64)
        assert rt.fn("aclrtMemcpyAsyncWithCondition")(dev, 64, pinned[0], 64, 1, s) == 0
        assert (read(rt, dev, 64) == 3).all()  # queued
        assert rt.fn("aclrtSynchronizeStream")(s) == 0 and (read(rt, dev, 64) == 5).all()
    finally:
        assert rt.fn("aclrtFreeHost")(pinned[0]) == 0
    other = np.zeros(64, dtype=np.uint8)
    assert rt.fn("aclrtMemcpyAsyncWithCondition")(rt.ffi.from_buffer(other), 64, rt.ffi.from_buffer(data), 64, 0,
                                                  s) == 207000
    assert "aclrtMemcpyAsyncWithCondition" in rt.recent_error()
    assert rt.fn("aclrtMemcpyAsyncWithCondition")(dev, 32, rt.ffi.from_buffer(data), 64, 1, s) != 0


def test_value_wait_in_a_model(rt):
    """A captured aclrtValueWait is a VALUE_WAIT task whose value aclmdlRITaskSetParams changes
    (applied by aclmdlRIUpdate)."""
    s = rt.stream()
    flag, marker = rt.malloc(8), rt.malloc(8)
    assert rt.fn("aclrtMemset")(flag, 8, 0, 8) == 0
    assert rt.fn("aclmdlRICaptureBegin")(s, 2) == 0
    assert rt.fn("aclrtValueWait")(flag, 3, 1, s) == 0
    assert rt.fn("aclrtMemsetAsync")(marker, 8, 1, 8, s) == 0
    model = rt.ffi.new("aclmdlRI *")
    assert rt.fn("aclmdlRICaptureEnd")(s, model) == 0
    try:
        tasks, n = rt.ffi.new("aclmdlRITask[2]"), rt.ffi.new("uint32_t *", 2)
        assert rt.fn("aclmdlRIGetTasksByStream")(s, tasks, n) == 0 and n[0] == 2
        kind = rt.ffi.new("aclmdlRITaskType *")
        assert rt.fn("aclmdlRITaskGetType")(tasks[0], kind) == 0 and kind[0] == 6  # VALUE_WAIT
        params = rt.ffi.new("aclmdlRITaskParams *")
        assert rt.fn("aclmdlRITaskGetParams")(tasks[0], params) == 0
        assert params.valueWaitTaskParams.value == 3 and params.valueWaitTaskParams.flag == 1
        params.valueWaitTaskParams.value = 0
        assert rt.fn("aclmdlRITaskSetParams")(tasks[0], params) == 0
        params.valueWaitTaskParams.flag = 9
        assert rt.fn("aclmdlRITaskSetParams")(tasks[0], params) == 100000
        assert rt.fn("aclmdlRIUpdate")(model[0]) == 0
        assert rt.fn("aclmdlRIExecute")(model[0], -1) == 0  # waits for 0, which is there
        assert (read(rt, marker, 8) == 1).all()
    finally:
        assert rt.fn("aclmdlRIDestroy")(model[0]) == 0


def test_managed_memory_attributes(rt):
    """What aclrtMemManagedAdvise and aclrtMemManagedPrefetchAsync set reads back through
    aclrtMemManagedGetAttr[s], per page: a range whose pages disagree reads as none (-2)."""
    page = 4096
    p = rt.ffi.new("void **")
    assert rt.fn("aclrtMemAllocManaged")(p, 4 * page, 1) == 0  # ACL_RT_MEM_ATTACH_GLOBAL
    ptr = p[0]
    whole = 4 * page
    out = rt.ffi.new("int32_t[4]")

    def attr(which, size=whole, at=ptr, n=1):
        assert rt.fn("aclrtMemManagedGetAttr")(which, at, size, out, 4 * n) == 0
        return list(out)[:n]

    device = rt.ffi.new("aclrtMemManagedLocation *", {"type": 1, "id": 0})[0]
    host = rt.ffi.new("aclrtMemManagedLocation *", {"type": 2, "id": 0})[0]
    try:
        assert attr(1) == [0] and attr(2) == [-2] and attr(4) == [0] and attr(6) == [-2]  # nothing set
        assert rt.fn("aclrtMemManagedAdvise")(ptr, whole, 0, device) == 0  # SET_READ_MOSTLY
        assert attr(1) == [1]
        assert rt.fn("aclrtMemManagedAdvise")(ptr, page, 1, device) == 0  # UNSET on the first page
        assert attr(1) == [0] and attr(1, page, rt.ffi.cast("char *", ptr) + page) == [1]
        assert rt.fn("aclrtMemManagedAdvise")(ptr, whole, 2, device) == 0  # SET_PREFERRED_LOCATION
        assert attr(2) == [0] and attr(4) == [1] and attr(5) == [0]
        assert rt.fn("aclrtMemManagedAdvise")(ptr, page, 2, host) == 0
        assert attr(2, page) == [-1] and attr(2) == [-2]  # the pages disagree
        assert rt.fn("aclrtMemManagedAdvise")(ptr, whole, 4, device) == 0  # SET_ACCESSED_BY device 0
        assert rt.fn("aclrtMemManagedAdvise")(ptr, whole, 4, host) == 0
        assert attr(3, n=4) == [0, -1, -2, -2]
        assert rt.fn("aclrtMemManagedAdvise")(ptr, whole, 5, device) == 0  # UNSET_ACCESSED_BY
        assert attr(3, n=2) == [-1, -2]

        s = rt.stream()
        assert rt.fn("aclrtMemManagedPrefetchAsync")(ptr, whole, device, 0, s) == 0
        assert attr(6) == [-2]  # queued, not done
        assert rt.fn("aclrtSynchronizeStream")(s) == 0
        assert attr(6) == [0] and attr(7) == [1] and attr(8) == [0]

        attrs = rt.ffi.new("aclrtMemManagedRangeAttribute[2]", [1, 6])
        a, b = rt.ffi.new("int32_t *"), rt.ffi.new("int32_t *")
        data = rt.ffi.new("void *[2]", [a, b])
        sizes = rt.ffi.new("size_t[2]", [4, 4])
        assert rt.fn("aclrtMemManagedGetAttrs")(attrs, 2, ptr, whole, data, sizes) == 0
        assert a[0] == 0 and b[0] == 0

        assert rt.fn("aclrtMemManagedGetAttr")(1, ptr, whole, out, 8) == 100000  # dataSize must be 4
        assert "aclrtMemManagedGetAttr" in rt.recent_error()
        assert rt.fn("aclrtMemManagedGetAttr")(9, ptr, whole, out, 4) == 100000
        assert rt.fn("aclrtMemManagedGetAttr")(1, ptr, whole + 1, out, 4) == 100000
        plain = rt.malloc(64)
        assert rt.fn("aclrtMemManagedGetAttr")(1, plain, 64, out, 4) == 100000  # not managed
        assert "not managed memory" in rt.recent_error()
        bad = rt.ffi.new("aclrtMemManagedLocation *", {"type": 1, "id": 64})[0]
        assert rt.fn("aclrtMemManagedAdvise")(ptr, whole, 2, bad) == 100000
        assert rt.fn("aclrtMemManagedGetAttrs")(attrs, 0, ptr, whole, data, sizes) == 100000
    finally:
        assert rt.fn("aclrtFree")(ptr) == 0
    assert rt.fn("aclrtMemManagedGetAttr")(1, ptr, whole, out, 4) == 100000  # freed
