"""The simulator on risky input: its device is sized from the machine, allocations too large
fail with 207001 instead of getting the process killed, and ACLNN_PY_SIM_DEVICE_MEMORY sets
the size. Every case runs in a subprocess, so a crash or a hang is a failure, not a lost run.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from aclnn_py import sim

PRELUDE = """
import os
import aclnn_py
from aclnn_py import capi
aclnn_py.set_backend("sim")
lib = capi._lib()

def mem_info():
    free, total = lib.ffi.new("size_t *"), lib.ffi.new("size_t *")
    lib.call("aclrtGetMemInfo", 0, free, total)
    return free[0], total[0]

def status_of(call, *args):
    try:
        call(*args)
    except aclnn_py.AclnnError as e:
        return e.status, e.message or ""
    return 0, ""
"""


def run_python(body: str, env: dict[str, str] | None = None, timeout: float = 120) -> str:
    """Run PRELUDE + body in a fresh interpreter; its stdout, after asserting it exited 0."""
    sim.ensure_built()  # build once here, not in every child
    child_env = {k: v for k, v in os.environ.items() if k != "ACLNN_PY_SIM_DEVICE_MEMORY"}
    child_env.update(env or {})
    proc = subprocess.run([sys.executable, "-c", PRELUDE + textwrap.dedent(body)], env=child_env,
                          capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, (proc.returncode, proc.stdout[-3000:], proc.stderr[-3000:])
    return proc.stdout


def machine_memory() -> int:
    """The rule of docs/simulator.md ("Device memory"), step 1."""
    m = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    for path in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
        try:
            with open(path) as f:
                line = f.readline().strip()
        except OSError:
            continue
        if line.isdigit() and int(line) > 0:
            m = min(m, int(line))
    return m


def test_device_is_half_the_machine():
    out = run_python("""
        capi.aclrtSetDevice(0)
        print(*mem_info())
    """)
    free, total = map(int, out.split())
    assert total == machine_memory() // 2
    assert free == total


def test_allocation_larger_than_the_device_fails_with_207001():
    # The size of the whole machine: fails at once, before anything is allocated.
    out = run_python(f"""
        capi.aclrtSetDevice(0)
        status, message = status_of(capi.aclrtMalloc, {machine_memory()})
        print(status)
        print(message)
        assert mem_info()[0] == mem_info()[1]
    """)
    status, message = out.split("\n", 1)
    assert int(status) == 207001
    assert "out of device memory" in message and "ACLNN_PY_SIM_DEVICE_MEMORY" in message


def test_environment_variable_sets_the_device_size():
    out = run_python("""
        capi.aclrtSetDevice(0)
        print(*mem_info())
        block = capi.aclrtMalloc(1 << 20)
        print(*mem_info())
        print(*status_of(capi.aclrtMalloc, 1))
        capi.aclrtFree(block)
        ok = capi.aclrtMalloc(1 << 20)
        capi.aclrtFree(ok)
        print("freed")
    """, env={"ACLNN_PY_SIM_DEVICE_MEMORY": str(1 << 20)})
    lines = out.splitlines()
    assert lines[0] == f"{1 << 20} {1 << 20}"
    assert lines[1] == f"0 {1 << 20}"
    assert lines[2].startswith("207001 ") and "out of device memory" in lines[2]
    assert lines[3] == "freed"


@pytest.mark.parametrize("value", ["8G", "-1", "0x100", "1.5", "99999999999999999999999", "0"])
def test_unreadable_environment_variable_fails_loudly(value):
    out = run_python("""
        capi.aclrtSetDevice(0)
        print(*status_of(capi.aclrtMalloc, 32))
        print(*mem_info())
    """, env={"ACLNN_PY_SIM_DEVICE_MEMORY": value})
    first, second = out.splitlines()
    assert first.startswith("207001 ") and "ACLNN_PY_SIM_DEVICE_MEMORY" in first and value in first
    assert second == "0 0"


def test_host_allocation_larger_than_the_machine_fails():
    out = run_python(f"""
        print(*status_of(capi.aclrtMallocHost, {machine_memory() + 1}))
        print(*status_of(capi.aclrtMallocHost, 2**64 - 1))
    """)
    lines = out.splitlines()
    assert lines[0].startswith("207001 ") and lines[1].startswith("207001 ")


# -- phase 1 and phase 2 refuse handles that are not live -------------------------------------

# (operator, its phase-1 arguments in C order): T tensor, I int array, B bool array; other
# values are passed as they are.
PHASE1_ARGUMENTS = {
    "aclnnIm2colBackward": [("gradOutput", "T"), ("inputSize", "I"), ("kernelSize", "I"), ("dilation", "I"),
                            ("padding", "I"), ("stride", "I"), ("out", "T")],
    "aclnnMaxUnpool2dBackward": [("gradOutput", "T"), ("self", "T"), ("indices", "T"), ("outputSize", "I"),
                                 ("out", "T")],
    "aclnnReflectionPad2dBackward": [("gradOutput", "T"), ("self", "T"), ("padding", "I"), ("gradInput", "T")],
    "aclnnAvgPool2dBackward": [("gradOutput", "T"), ("self", "T"), ("kernelSize", "I"), ("stride", "I"),
                               ("padding", "I"), ("ceilMode", False), ("countIncludePad", True),
                               ("divisorOverride", 0), ("cubeMathType", 0), ("gradInput", "T")],
    "aclnnConvolutionBackward": [("gradOutput", "T"), ("input", "T"), ("weight", "T"), ("biasSizes", "I"),
                                 ("stride", "I"), ("padding", "I"), ("dilation", "I"), ("transposed", False),
                                 ("outputPadding", "I"), ("groups", 1), ("outputMask", "B"),
                                 ("cubeMathType", 0), ("gradInput", "T"), ("gradWeight", "T"),
                                 ("gradBias", "T")],
}


@pytest.mark.parametrize("op", sorted(PHASE1_ARGUMENTS))
def test_phase1_refuses_destroyed_and_foreign_descriptors(op):
    """Each descriptor argument in turn is a destroyed one, then a pointer that never was one."""
    out = run_python(f"""
        capi.aclrtSetDevice(0)
        ffi = lib.ffi
        dev = capi.aclrtMalloc(4096)
        spec = {PHASE1_ARGUMENTS[op]!r}
        foreign = ffi.new("char[512]")
        ctype = {{"T": "aclTensor *", "I": "aclIntArray *", "B": "aclBoolArray *"}}

        def make(kind):
            if kind == "T":
                return capi.aclCreateTensor([1, 1, 2, 2], capi.ACL_FLOAT, None, 0, capi.ACL_FORMAT_NCHW,
                                            [1, 1, 2, 2], dev)
            if kind == "I":
                return capi.aclCreateIntArray([1, 1])
            return capi.aclCreateBoolArray([True, True, True])

        destroy = {{"T": capi.aclDestroyTensor, "I": capi.aclDestroyIntArray, "B": capi.aclDestroyBoolArray}}
        for i, (name, kind) in enumerate(spec):
            if not isinstance(kind, str):
                continue
            for bad in ("destroyed", "foreign"):
                live = [(make(k), k) if isinstance(k, str) else (k, None) for _, k in spec]
                if bad == "destroyed":
                    dead = make(kind)
                    destroy[kind](dead)
                else:
                    dead = ffi.cast(ctype[kind], foreign)
                args = [value for value, _ in live]
                args[i] = dead
                status, message = status_of(capi.{op}GetWorkspaceSize, *args)
                print(name, bad, status, message.replace("\\n", " "))
                for value, k in live:
                    if k is not None:
                        destroy[k](value)
        capi.aclrtFree(dev)
        counters = ffi.new("aclsimCounters *")
        lib.call("aclsimGetCounters", counters)
        assert counters.tensors == counters.int_arrays == counters.bool_arrays == counters.executors == 0
    """)
    lines = out.splitlines()
    handles = [(name, kind) for name, kind in PHASE1_ARGUMENTS[op] if isinstance(kind, str)]
    assert len(lines) == 2 * len(handles)
    types = {"T": "aclTensor", "I": "aclIntArray", "B": "aclBoolArray"}
    for line, (name, kind, bad) in zip(lines, [(n, k, b) for n, k in handles for b in ("destroyed", "foreign")]):
        got_name, got_bad, status, message = line.split(" ", 3)
        assert (got_name, got_bad, int(status)) == (name, bad, 161002), line
        assert message.startswith(f"{op}GetWorkspaceSize: {name} (0x"), line
        assert f"is not a live {types[kind]}" in message, line


def test_phase1_refuses_views_too_large_for_a_workspace():
    """Zero strides let a view of 2^62 elements sit in 4 bytes; its float32 workspace would be
    2^64 bytes, a size that wrapped to 0 and let the kernel write through a NULL workspace."""
    out = run_python("""
        capi.aclrtSetDevice(0)
        dev = capi.aclrtMalloc(64)
        grad = capi.aclCreateTensor([1, 1, 1 << 62], capi.ACL_FLOAT, [0, 0, 0], 0, capi.ACL_FORMAT_ND,
                                    [1], dev)
        out = capi.aclCreateTensor([1, 1, 1 << 31, 1 << 31], capi.ACL_FLOAT, [0, 0, 0, 0], 0,
                                   capi.ACL_FORMAT_NCHW, [1], dev)
        arrays = [capi.aclCreateIntArray(v) for v in ([1 << 31, 1 << 31], [1, 1], [1, 1], [0, 0], [1, 1])]
        print(*status_of(capi.aclnnIm2colBackwardGetWorkspaceSize, grad, *arrays, out))
        for a in arrays:
            capi.aclDestroyIntArray(a)
        capi.aclDestroyTensor(grad)
        capi.aclDestroyTensor(out)
        capi.aclrtFree(dev)
    """)
    status, message = out.strip().split(" ", 1)
    assert int(status) == 161002
    assert message.startswith("aclnnIm2colBackwardGetWorkspaceSize: gradOutput shape [1, 1, 4611686018427387904]")
    assert "2^56 elements" in message


# -- fork ---------------------------------------------------------------------------------------

def test_fork_while_another_thread_is_in_the_simulator():
    """A thread keeps running an operator (device allocations hold the runtime lock while they
    fill the block) while the main thread forks again and again; every child must be able to
    use the runtime and the descriptors. A child that hangs is killed and counted as a failure."""
    out = run_python("""
        import signal
        import threading
        import time
        import warnings
        import numpy as np

        warnings.simplefilter("ignore", DeprecationWarning)  # "multi-threaded, use of fork()"
        ffi = lib.ffi
        # Resolved in the parent: the child calls the simulator directly, so that only the
        # simulator's own locks are under test (not the binding's Python ones).
        fn = {name: lib.fn(name) for name in (
            "aclrtSetDevice", "aclrtMalloc", "aclrtFree", "aclrtCreateStream", "aclrtMemsetAsync",
            "aclrtSynchronizeStream", "aclrtDestroyStream", "aclrtResetDevice", "aclCreateIntArray",
            "aclDestroyIntArray", "aclsimGetCounters")}

        def child():
            if fn["aclrtSetDevice"](0) != 0:
                return 10
            p = ffi.new("void **")
            if fn["aclrtMalloc"](p, 1 << 20, 0) != 0:
                return 11
            s = ffi.new("aclrtStream *")
            if fn["aclrtCreateStream"](s) != 0 or fn["aclrtMemsetAsync"](p[0], 1 << 20, 0, 1 << 20, s[0]) != 0:
                return 12
            if fn["aclrtSynchronizeStream"](s[0]) != 0 or fn["aclrtDestroyStream"](s[0]) != 0:
                return 13
            if fn["aclrtFree"](p[0]) != 0:
                return 14
            values = ffi.new("int64_t[]", [1, 2])
            a = fn["aclCreateIntArray"](values, 2)
            if a == ffi.NULL or fn["aclDestroyIntArray"](a) != 0:
                return 15
            counters = ffi.new("aclsimCounters *")
            fn["aclsimGetCounters"](counters)
            if counters.device_blocks != 0 or counters.streams != 0:
                return 16  # the parent's device memory and streams are not the child's
            return 20 if fn["aclrtResetDevice"](0) != 0 else 0

        stop = threading.Event()
        calls = [0]

        def hammer():
            g = np.ones((1, 1, 1026, 1026), np.float32)
            x = np.zeros((1, 1, 1024, 1024), np.float32)
            while not stop.is_set():
                aclnn_py.reflection_pad2d_backward(g, x, [1, 1, 1, 1])
                calls[0] += 1

        thread = threading.Thread(target=hammer)
        thread.start()
        while calls[0] == 0:
            time.sleep(0.01)
        results = []
        for _ in range(40):
            pid = os.fork()
            if pid == 0:
                try:
                    code = child()
                except BaseException:
                    code = 30
                os._exit(code)
            deadline = time.monotonic() + 60  # a hang detector, not a speed requirement
            while True:
                done, status = os.waitpid(pid, os.WNOHANG)
                if done:
                    results.append(os.waitstatus_to_exitcode(status))
                    break
                if time.monotonic() > deadline:
                    os.kill(pid, signal.SIGKILL)
                    os.waitpid(pid, 0)
                    results.append("hung")
                    break
                time.sleep(0.005)
            if results[-1] == "hung":
                break
        stop.set()
        thread.join()
        print(results)
    """, timeout=600)
    results = eval(out.strip().splitlines()[-1])
    assert results == [0] * 40, results


def test_freed_blocks_are_reused_but_never_live():
    """aclrtFree keeps blocks for reuse (runtime/memory.c): a reused block is refilled with
    0xFF, a freed one is still refused, and the live counts and free memory stay exact."""
    out = run_python("""
        import numpy as np
        capi.aclrtSetDevice(0)
        ffi = lib.ffi
        counters = ffi.new("aclsimCounters *")
        free0, _ = mem_info()
        zeros = np.zeros(1 << 16, np.uint8)
        a = capi.aclrtMalloc(1 << 16)
        capi.aclrtMemset(a, 1 << 16, 0, 1 << 16)
        address = int(ffi.cast("uintptr_t", a))
        capi.aclrtFree(a)
        lib.call("aclsimGetCounters", counters)
        print("after free", counters.device_blocks, counters.device_bytes, mem_info()[0] == free0)
        print("freed memset", status_of(capi.aclrtMemset, a, 16, 0, 16)[0])
        print("freed memcpy", status_of(capi.aclrtMemcpy, zeros, 16, a, 16, capi.ACL_MEMCPY_DEVICE_TO_HOST)[0])
        print("freed free", status_of(capi.aclrtFree, a)[0])
        b = capi.aclrtMalloc(1 << 16)
        lib.call("aclsimGetCounters", counters)
        print("realloc", counters.device_blocks, counters.device_bytes, free0 - mem_info()[0])
        host = np.zeros(1 << 16, np.uint8)
        capi.aclrtMemcpy(host, host.nbytes, b, 1 << 16, capi.ACL_MEMCPY_DEVICE_TO_HOST)
        print("filled", bool((host == 0xFF).all()), int(ffi.cast("uintptr_t", b)) == address)
        c = capi.aclrtMalloc(100)  # another size: not the cached block
        capi.aclrtFree(c)
        capi.aclrtFree(b)
        for _ in range(100):  # more frees than the cache holds
            blocks = [capi.aclrtMalloc(4096 * (i + 1)) for i in range(40)]
            for block in blocks:
                capi.aclrtFree(block)
        lib.call("aclsimGetCounters", counters)
        print("end", counters.device_blocks, counters.device_bytes, mem_info()[0] == free0)
    """)
    assert out.splitlines() == [
        "after free 0 0 True",
        "freed memset 100000",
        "freed memcpy 100000",
        "freed free 107000",
        f"realloc 1 {1 << 16} {1 << 16}",
        "filled True True",
        "end 0 0 True",
    ]
