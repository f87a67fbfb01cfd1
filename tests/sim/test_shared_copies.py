"""Copies and fills of 1 MiB or more, which the simulator's runtime shares out to its kernel
threads in 256 KiB pieces (runtime/memory.c, kernels/parallel.c; not on a busy machine, and
tests/sim/test_forced_split.py forces the split): every byte moved once, none
outside the range, for sizes and offsets that are not multiples of anything; the queued (Async)
forms still wait for a synchronisation, run in stream order and refuse memory freed meanwhile;
the helper threads survive fork() (the child starts its own) and do not hold up exit.
The oracle is NumPy slicing of the same bytes."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import numpy as np
import pytest

import aclnn_py
from aclnn_py import capi
from aclnn_py import sim as sim_package
from aclnn_py._constants import ACL_ERROR_INVALID_PARAM

from test_sim_safety import run_python

MIB = 1 << 20
SHARED = 1 * MIB  # kernels/parallel.h ACLSIM_PARALLEL_MIN_BYTES
PIECE = 256 << 10


@pytest.fixture
def sim(sim_lib):
    with aclnn_py.use_backend("sim"):
        capi.aclrtSetDevice(0)
        yield capi


def _at(acl, ptr, offset):
    return acl._lib().ffi.cast("char *", ptr) + offset


def _read(acl, ptr, n):
    host = np.zeros(n, np.uint8)
    acl.aclrtMemcpy(host, n, ptr, n, acl.ACL_MEMCPY_DEVICE_TO_HOST)
    return host


def _data(n, seed):
    return np.random.default_rng(seed).integers(0, 256, n, dtype=np.uint8)


# Below, at and above the threshold; a piece more one byte; several pieces and a tail.
# The subprocesses below are about the helper threads: the split forced (kernels/parallel.h), as
# a busy machine (load average >= cores + 1) would otherwise start none.
SPLIT = {"ACLSIM_WORKERS": "2"}

SIZES = [SHARED - 1, SHARED, SHARED + 1, SHARED + PIECE + 1, 2 * SHARED + 12345]


@pytest.mark.parametrize("count", SIZES, ids=lambda n: f"{n}B")
@pytest.mark.parametrize("dst_off, src_off", [(0, 0), (1, 3), (31, 7)], ids=["aligned", "1-3", "31-7"])
def test_upload_download_and_device_copy(sim, count, dst_off, src_off):
    """Host -> device at an unaligned offset of a larger block (the bytes around it stay as they
    were: the fill before, old data after), device -> device, device -> host into the middle of
    a host buffer whose edges must stay untouched."""
    size = count + 64
    a = sim.aclrtMalloc(size, sim.ACL_MEM_MALLOC_HUGE_FIRST)
    b = sim.aclrtMalloc(size, sim.ACL_MEM_MALLOC_HUGE_FIRST)
    try:
        host = _data(count + src_off, seed=count + src_off)
        src = host[src_off:]
        sim.aclrtMemcpy(_at(sim, a, dst_off), count, src, count, sim.ACL_MEMCPY_HOST_TO_DEVICE)
        want_a = np.full(size, 0xFF, np.uint8)
        want_a[dst_off:dst_off + count] = src
        np.testing.assert_array_equal(_read(sim, a, size), want_a)

        old = _data(size, seed=1)
        sim.aclrtMemcpy(b, size, old, size, sim.ACL_MEMCPY_HOST_TO_DEVICE)
        sim.aclrtMemcpy(_at(sim, b, src_off), count, _at(sim, a, dst_off), count, sim.ACL_MEMCPY_DEVICE_TO_DEVICE)
        want_b = old.copy()
        want_b[src_off:src_off + count] = src
        np.testing.assert_array_equal(_read(sim, b, size), want_b)

        guard = _data(count + 2 * 97, seed=2)
        out = guard.copy()
        sim.aclrtMemcpy(out[97:], count, _at(sim, b, src_off), count, sim.ACL_MEMCPY_DEVICE_TO_HOST)
        np.testing.assert_array_equal(out[:97], guard[:97])
        np.testing.assert_array_equal(out[97:97 + count], src)
        np.testing.assert_array_equal(out[97 + count:], guard[97 + count:])
    finally:
        sim.aclrtFree(a)
        sim.aclrtFree(b)


@pytest.mark.parametrize("count", [SHARED - 1, SHARED + 3, SHARED + MIB + 1], ids=lambda n: f"{n}B")
def test_memset_and_the_fill_of_a_large_block(sim, count):
    """A memset at an odd offset; the 0xFF fill of a new block read first by a partial upload
    (the fill of the whole block, shared out too, then the upload on top)."""
    size = count + 100
    ptr = sim.aclrtMalloc(size, sim.ACL_MEM_MALLOC_HUGE_FIRST)
    try:
        piece = _data(1000, seed=3)
        sim.aclrtMemcpy(_at(sim, ptr, 5), 1000, piece, 1000, sim.ACL_MEMCPY_HOST_TO_DEVICE)
        want = np.full(size, 0xFF, np.uint8)
        want[5:1005] = piece
        np.testing.assert_array_equal(_read(sim, ptr, size), want)
        sim.aclrtMemset(_at(sim, ptr, 33), count, 0x5A, count)
        want[33:33 + count] = 0x5A
        np.testing.assert_array_equal(_read(sim, ptr, size), want)
    finally:
        sim.aclrtFree(ptr)


def test_queued_copies_wait_for_the_synchronisation_and_keep_stream_order(sim):
    """Large queued copies: nothing moves before aclrtSynchronizeStream (a synchronous read
    meanwhile sees the old bytes), then they run in the order queued: an upload, a device copy
    that reads the upload's result, a memset over part of it, a download."""
    n = SHARED + 2 * MIB + 5
    stream = sim.aclrtCreateStream()
    a = sim.aclrtMalloc(n, sim.ACL_MEM_MALLOC_HUGE_FIRST)
    b = sim.aclrtMalloc(n, sim.ACL_MEM_MALLOC_HUGE_FIRST)
    try:
        old = _data(n, seed=4)
        sim.aclrtMemcpy(a, n, old, n, sim.ACL_MEMCPY_HOST_TO_DEVICE)
        new = _data(n, seed=5)
        result = np.zeros(n, np.uint8)
        sim.aclrtMemcpyAsync(a, n, new, n, sim.ACL_MEMCPY_HOST_TO_DEVICE, stream)
        sim.aclrtMemcpyAsync(b, n, a, n, sim.ACL_MEMCPY_DEVICE_TO_DEVICE, stream)
        sim._lib().call("aclrtMemsetAsync", _at(sim, b, 1), n - 1, 0x11, SHARED + 1, stream)
        sim.aclrtMemcpyAsync(result, n, b, n, sim.ACL_MEMCPY_DEVICE_TO_HOST, stream)
        np.testing.assert_array_equal(_read(sim, a, n), old)  # not run yet
        assert not result.any()
        sim.aclrtSynchronizeStream(stream)
        want = new.copy()
        want[1:SHARED + 2] = 0x11
        np.testing.assert_array_equal(result, want)
        np.testing.assert_array_equal(_read(sim, a, n), new)
    finally:
        sim.aclrtFree(a)
        sim.aclrtFree(b)
        sim.aclrtDestroyStream(stream)


def test_a_queued_large_copy_refuses_memory_freed_before_it_ran(sim):
    """The queued copy's device range is checked again when it runs: freed meanwhile, the
    synchronisation fails with 507053 and nothing is written to the host buffer."""
    n = SHARED + 7
    stream = sim.aclrtCreateStream()
    try:
        a = sim.aclrtMalloc(n, sim.ACL_MEM_MALLOC_HUGE_FIRST)
        result = np.zeros(n, np.uint8)
        sim.aclrtMemcpyAsync(result, n, a, n, sim.ACL_MEMCPY_DEVICE_TO_HOST, stream)
        sim.aclrtFree(a)
        with pytest.raises(aclnn_py.AclnnError) as info:
            sim.aclrtSynchronizeStream(stream)
        assert info.value.status == 507053
        assert "freed before the queued operation ran" in (info.value.message or "")
        assert not result.any()
    finally:
        sim.aclrtDestroyStream(stream)


def test_large_copies_past_a_block_or_from_a_freed_one_are_refused(sim):
    n = SHARED + 11
    a = sim.aclrtMalloc(n, sim.ACL_MEM_MALLOC_HUGE_FIRST)
    host = np.zeros(n + 1, np.uint8)
    try:
        with pytest.raises(aclnn_py.AclnnError) as info:
            sim.aclrtMemcpy(host, n + 1, a, n + 1, sim.ACL_MEMCPY_DEVICE_TO_HOST)
        assert info.value.status == ACL_ERROR_INVALID_PARAM
        assert "run past the end of its device allocation" in (info.value.message or "")
    finally:
        sim.aclrtFree(a)
    with pytest.raises(aclnn_py.AclnnError) as info:
        sim.aclrtMemcpy(host, n, a, n, sim.ACL_MEMCPY_DEVICE_TO_HOST)
    assert info.value.status == ACL_ERROR_INVALID_PARAM
    assert "host memory" in (info.value.message or "")  # a freed block is not device memory
    assert not host.any()


def test_two_threads_copying_at_once(sim_lib):
    """Two threads with large copies at the same time: one owns the helper threads, the other
    copies alone; both get their bytes."""
    n = SHARED + 3
    errors: list[BaseException] = []

    def work(seed):
        try:
            with aclnn_py.use_backend("sim"):
                capi.aclrtSetDevice(0)
                ptr = capi.aclrtMalloc(n, capi.ACL_MEM_MALLOC_HUGE_FIRST)
                try:
                    for round_ in range(8):
                        data = _data(n, seed=seed * 100 + round_)
                        capi.aclrtMemcpy(ptr, n, data, n, capi.ACL_MEMCPY_HOST_TO_DEVICE)
                        np.testing.assert_array_equal(_read(capi, ptr, n), data)
                finally:
                    capi.aclrtFree(ptr)
        except BaseException as e:  # reported by the main thread
            errors.append(e)

    threads = [threading.Thread(target=work, args=(s,)) for s in (1, 2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


def test_helper_threads_across_fork_and_exit():
    """The parent's helpers are started (a large copy and a two-thread kernel); a forked child
    has none of them, starts its own and gets the same results; parent and child exit without
    hanging (run_python's timeout) with the helpers asleep."""
    out = run_python("""
        import numpy as np
        ffi = lib.ffi

        def unpool():
            rng = np.random.default_rng(0)
            go = rng.standard_normal((2, 128, 128, 128)).astype(np.float32)  # two threads (parallel.h)
            idx = rng.integers(0, 128 * 128, (2, 128, 64, 64))
            got = aclnn_py.max_unpool2d_backward(go, np.zeros(idx.shape, np.float32), idx, [128, 128])
            want = np.take_along_axis(go.reshape(2, 128, -1), idx.reshape(2, 128, -1), -1).reshape(idx.shape)
            return bool(np.array_equal(got, want))

        def copies():
            n = (9 << 20) + 5
            data = np.random.default_rng(1).integers(0, 256, n, dtype=np.uint8)
            back = np.zeros(n, np.uint8)
            p = lib.ffi.new("void **")
            lib.call("aclrtMalloc", p, n, 0)
            lib.call("aclrtMemcpy", p[0], n, ffi.from_buffer(data), n, 1)
            lib.call("aclrtMemcpy", ffi.from_buffer(back), n, p[0], n, 2)
            lib.call("aclrtFree", p[0])
            return bool(np.array_equal(back, data))

        assert unpool() and copies()
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                lib.call("aclrtSetDevice", 0)
                code = 0 if unpool() and copies() else 2
            finally:
                os._exit(code)
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0, status
        assert unpool() and copies()
        print("ok")
    """, env=SPLIT, timeout=300)
    assert out.strip().endswith("ok")


_PLACEMENT = """
    import threading
    import numpy as np
    ffi = lib.ffi
    me = threading.get_native_id()
    lib.call("aclrtSetDevice", 0)

    def affinities():
        found = {}
        for task in os.listdir("/proc/self/task"):
            with open(f"/proc/self/task/{task}/status") as f:
                line = next(l for l in f if l.startswith("Cpus_allowed_list:"))
            found[int(task)] = line.split(":", 1)[1].strip()
        return found

    def copy_round_trip():
        n = (9 << 20) + 5          # shared among the kernel threads (runtime/memory.c)
        data = np.random.default_rng(1).integers(0, 256, n, dtype=np.uint8)
        back = np.zeros(n, np.uint8)
        p = ffi.new("void **")
        lib.call("aclrtMalloc", p, n, 0)
        lib.call("aclrtMemcpy", p[0], n, ffi.from_buffer(data), n, 1)
        lib.call("aclrtMemcpy", ffi.from_buffer(back), n, p[0], n, 2)
        lib.call("aclrtFree", p[0])
        assert np.array_equal(back, data)
"""


def test_helpers_held_to_other_cores_and_the_caller_given_its_affinity_back():
    """During a shared loop the caller is held to its core and each helper to another core it
    may use (kernels/parallel.c): afterwards the caller has exactly its own affinity back, and
    the helpers each one core; with one allowed core nothing is changed."""
    out = run_python(_PLACEMENT + """
    allowed = os.sched_getaffinity(0)
    for _ in range(5):
        before = affinities()[me]
        copy_round_trip()
        after = affinities()
        assert os.sched_getaffinity(0) == allowed
        assert after[me] == before, (before, after[me])
        singles = [int(cores) for tid, cores in after.items() if tid != me and cores.isdigit()]
        if len(allowed) >= 2:
            assert singles and set(singles) <= allowed, after     # the helpers, one core each
        else:
            assert not singles, after
    print("ok", len(allowed))
    """, env=SPLIT, timeout=300)
    assert out.split()[0] == "ok"


def test_one_allowed_core_changes_no_affinity():
    """A process held to one core: the loop runs without changing any thread's affinity."""
    out = run_python(_PLACEMENT + """
    core = min(os.sched_getaffinity(0))
    os.sched_setaffinity(0, {core})
    before = affinities()
    copy_round_trip()
    after = affinities()
    assert os.sched_getaffinity(0) == {core}
    for tid, cores in after.items():
        # The threads that were there keep theirs; the helpers started by the copy have the
        # caller's, inherited, and were not moved.
        assert cores == before.get(tid, str(core)), (tid, before, after)
    assert len(after) > len(before), (before, after)       # the copy did start helpers
    print("ok")
    """, env=SPLIT, timeout=300)
    assert out.strip() == "ok"


def test_helper_threads_joined_when_the_library_is_unloaded():
    """libaclsim.so loaded alone (no binding in the process) and unloaded again (dlclose): its
    helper threads, started by a large copy, are joined by then (the thread count is back where
    it was) and the process goes on without running code of the unmapped library."""
    body = textwrap.dedent("""
        import ctypes, _ctypes, os, sys, time
        path = sys.argv[1]

        def threads():
            return len(os.listdir("/proc/self/task"))

        before = threads()
        lib = ctypes.CDLL(path, mode=os.RTLD_LOCAL)
        assert lib.aclrtSetDevice(0) == 0
        n = (9 << 20) + 1
        ptr = ctypes.c_void_p()
        assert lib.aclrtMalloc(ctypes.byref(ptr), ctypes.c_size_t(n), 0) == 0
        host = ctypes.create_string_buffer(b"x" * n, n)
        assert lib.aclrtMemcpy(ptr, ctypes.c_size_t(n), host, ctypes.c_size_t(n), 1) == 0  # host to device
        back = ctypes.create_string_buffer(n)
        assert lib.aclrtMemcpy(back, ctypes.c_size_t(n), ptr, ctypes.c_size_t(n), 2) == 0  # device to host
        assert back.raw == host.raw
        started = threads()
        assert lib.aclrtFree(ptr) == 0
        assert lib.aclrtResetDevice(0) == 0
        _ctypes.dlclose(lib._handle)
        mapped = any(path in line for line in open("/proc/self/maps"))
        time.sleep(0.2)
        print(before, started, threads(), mapped)
    """)
    path = str(Path(sim_package.ensure_built()) / "lib64" / "libaclsim.so")
    proc = subprocess.run([sys.executable, "-c", body, path], capture_output=True, text=True, timeout=120,
                          env={**os.environ, **SPLIT})
    assert proc.returncode == 0, proc.stderr[-3000:]
    before, started, after, mapped = proc.stdout.split()
    assert int(started) > int(before)  # a helper was running
    assert mapped == "False" and int(after) == int(before)
