"""The fast entry (aclnn_py/_fast/entry.c: plans of the op functions and of ``call`` replayed in
one crossing) against the paths it stands in for: results equal to the ABI-mode path and to the
numpy backend, the same errors (a plan hit failing included), a new plan whenever a keyed
property changes, the thread's current stream and device used by every replay, threads, fork,
nothing leaked (the simulator's live handles and buffers), and the suite's relevant tests green
with ``ACLNN_PY_FAST=0`` and with no entry built."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import aclnn_py
from aclnn_py import AclnnError, _fast, capi
from aclnn_py._runtime import pool

from helpers import assert_close, raised, run_in_threads

ROOT = Path(__file__).resolve().parents[2]
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")
CALL = sys.modules["aclnn_py.call"]
PAD = sys.modules["aclnn_py.ops.reflection_pad2d_backward"]
OP = "aclnnReflectionPad2dBackward"


def counters(lib) -> dict[str, int]:
    pool.trim_all()  # (the caching allocator's blocks are the binding's on purpose)
    c = lib.ffi.new("aclsimCounters *")
    lib.call("aclsimGetCounters", c)
    return {f: getattr(c, f) for f, _ in lib.ffi.typeof("aclsimCounters").fields}


@pytest.fixture
def lib(sim_lib, monkeypatch):
    """The simulator with the fast entry on (a failure in CI where it is not built)."""
    if not _fast.enabled() or _fast.entry() is None or _fast.api_for(sim_lib) is None:
        if IN_CI and _fast.enabled() and "aclnn_py._fast._entry" not in sys.modules:
            pytest.fail(f"the fast entry must be built in CI ({_fast.ENTRY})")
        pytest.skip("the fast entry is not built or ACLNN_PY_FAST=0")
    PAD._aclnn.clear()
    CALL._PLANS.clear()
    return sim_lib


def _abi(monkeypatch, lib) -> None:
    monkeypatch.setattr(lib, "fast_api", None)


def _planned(planner) -> list[bool]:
    return [planned for _, planned in planner.plans()]


def _pad(g, x, padding=(1, 1, 1, 1), **kw):
    return aclnn_py.reflection_pad2d_backward(g, x, list(padding), **kw)


def _data(shape=(2, 3, 6, 6), dtype=np.float32, seed=0):
    rng = np.random.default_rng(seed)
    g = rng.standard_normal(shape).astype(dtype)
    x = np.zeros(shape[:-2] + (shape[-2] - 2, shape[-1] - 2), dtype)
    return g, x


def test_planned_results_equal_the_other_paths(lib, monkeypatch):
    g, x = _data()
    want = _pad(g, x, backend="numpy")
    first = _pad(g, x, backend="sim")   # recorded
    second = _pad(g, x, backend="sim")  # replayed
    assert _planned(PAD._aclnn) == [True]
    np.testing.assert_array_equal(first, want)
    np.testing.assert_array_equal(second, want)
    out = np.empty_like(x)
    for _ in range(3):
        out[...] = 7  # the output's content goes in (in-place operators read it) and is overwritten
        assert aclnn_py.call(OP, g, x, [1, 1, 1, 1], out, backend="sim") is out
        np.testing.assert_array_equal(out, want)
    assert [n for n, planned in CALL._PLANS.plans() if planned] == [OP]
    _abi(monkeypatch, lib)
    np.testing.assert_array_equal(_pad(g, x, backend="sim"), want)
    assert PAD._aclnn.__wrapped__(lib, g, x, [1, 1, 1, 1]) is not None


def test_every_operator_planned_against_numpy(lib):
    rng = np.random.default_rng(3)
    g, x = rng.standard_normal((1, 2, 4, 4)).astype(np.float32), np.zeros((1, 2, 4, 4), np.float32)
    w = rng.standard_normal((2, 2, 3, 3)).astype(np.float32)
    idx = np.array([[[[0, 3], [9, 14]]] * 2], np.int64)
    calls = [
        lambda b: aclnn_py.avg_pool2d_backward(g[..., :2, :2].copy(), x, [2, 2], [2, 2], [0, 0], False, True, 0,
                                               backend=b),
        lambda b: aclnn_py.max_unpool2d_backward(g, x[..., :2, :2].copy(), idx, [4, 4], backend=b),
        lambda b: aclnn_py.im2col_backward(rng_g, [4, 4], [2, 2], [1, 1], [0, 0], [2, 2], backend=b),
        lambda b: aclnn_py.convolution_backward(g[..., :2, :2].copy(), x, w, [2], [1, 1], [0, 0], [1, 1], False,
                                                [0, 0], 1, [True, True, False], backend=b),
    ]
    rng_g = rng.standard_normal((1, 8, 4)).astype(np.float32)
    for run in calls:
        want = run("numpy")
        for _ in range(3):
            got = run("sim")
            for a, b in zip(got if isinstance(got, tuple) else (got,), want if isinstance(want, tuple) else (want,)):
                if b is None:
                    assert a is None
                else:
                    assert_close(a, b, b.dtype, scale=4)


def test_a_new_plan_for_every_keyed_property(lib):
    """Shape, dtype, strides, list values and types, scalar types, backend: each change is a
    new key, and the result is the numpy backend's."""
    g, x = _data()
    variants = [
        (g, x, [1, 1, 1, 1]),
        (g[:1].copy(), x[:1].copy(), [1, 1, 1, 1]),                          # shape
        (g.astype(np.float64), x.astype(np.float64), [1, 1, 1, 1]),          # dtype
        (np.asfortranarray(g), x, [1, 1, 1, 1]),                             # strides (not planned)
        (g[..., ::-1], x, [1, 1, 1, 1]),                                     # negative strides
        (g[..., 1:-1, :].copy(), x, [1, 1, 0, 0]),                           # padding values
        (g, x, (1, 1, 1, 1)),                                                # tuple for list
        (g, x, [np.int64(1)] * 4),                                           # no key: Python path
        (g.astype(aclnn_py.bfloat16), x.astype(aclnn_py.bfloat16), [1, 1, 1, 1]),  # no buffer format
    ]
    for args in variants:
        want = aclnn_py.reflection_pad2d_backward(*args, backend="numpy")
        for _ in range(2):
            got = aclnn_py.reflection_pad2d_backward(*args, backend="sim")
            assert_close(got, want, want.dtype)
    assert len(PAD._aclnn.plans()) >= 7
    with pytest.raises((AclnnError, TypeError)):  # bools where ints are expected: another key, refused
        aclnn_py.reflection_pad2d_backward(g, x, [True, True, True, True], backend="sim")


def test_an_array_at_two_places_is_not_recorded(lib):
    """A 1x1 convolution's weight gradient reads both gradOutput and self: a plan recorded from
    one array at both places would replay a later call's first array twice."""
    rng = np.random.default_rng(5)
    a, b, c = (rng.standard_normal((1, 2, 3, 3)).astype(np.float32) for _ in range(3))
    w = rng.standard_normal((2, 2, 1, 1)).astype(np.float32)

    def weight_grad(go, x, backend):
        return aclnn_py.convolution_backward(go, x, w, [2], [1, 1], [0, 0], [1, 1], False, [0, 0], 1,
                                             [False, True, False], backend=backend)[1]

    for go, x in ((a, a), (a, a), (b, c), (b, c), (a, a)):
        want = weight_grad(go, x, "numpy")
        assert_close(weight_grad(go, x, "sim"), want, want.dtype, scale=4)


def test_a_failing_plan_hit_raises_the_slow_paths_error(lib, monkeypatch):
    """Index values are data: a planned max_unpool2d_backward with an index out of range fails
    in the kernel, as the ABI-mode path does (status, function, message), leaking nothing."""
    g = np.ones((1, 1, 4, 4), np.float32)
    x = np.ones((1, 1, 2, 2), np.float32)
    good = np.zeros((1, 1, 2, 2), np.int64)
    bad = good.copy()
    bad[0, 0, 1, 1] = 99
    unpool = sys.modules["aclnn_py.ops.max_unpool2d_backward"]._aclnn
    unpool.clear()
    aclnn_py.max_unpool2d_backward(g, x, good, [4, 4], backend="sim")
    before = counters(lib)
    fast = [raised(lambda: aclnn_py.max_unpool2d_backward(g, x, bad, [4, 4], backend="sim")) for _ in range(2)]
    out = np.zeros((1, 1, 2, 2), np.float32)
    aclnn_py.call("aclnnMaxUnpool2dBackward", g, x, good, [4, 4], out, backend="sim")
    via_call = raised(lambda: aclnn_py.call("aclnnMaxUnpool2dBackward", g, x, bad, [4, 4], out, backend="sim"))
    assert _planned(unpool) == [True] and any(_planned(CALL._PLANS))
    assert counters(lib) == before
    _abi(monkeypatch, lib)
    slow = raised(lambda: aclnn_py.max_unpool2d_backward(g, x, bad, [4, 4], backend="sim"))
    assert fast == [slow, slow] and via_call == slow
    assert slow[1] == 507015


def test_invalid_arguments_are_never_planned(lib):
    g, x = _data()
    for _ in range(3):
        _, status, api, message = raised(lambda: _pad(g, x, (9, 1, 1, 1), backend="sim"))
        _, numpy_status, numpy_api, numpy_message = raised(lambda: _pad(g, x, (9, 1, 1, 1), backend="numpy"))
        assert (status, api) == (numpy_status, numpy_api) == (161002, "aclnnReflectionPad2dBackwardGetWorkspaceSize")
        assert message.endswith(numpy_message)  # (the library's message names the function first)
    assert _planned(PAD._aclnn) == []
    readonly = np.zeros_like(x)
    readonly.flags.writeable = False
    for _ in range(2):
        with pytest.raises(TypeError, match="writable"):
            aclnn_py.call(OP, g, x, [1, 1, 1, 1], readonly, backend="sim")


def test_call_forms(lib):
    g, x = _data()
    want = _pad(g, x, backend="numpy")
    out = np.empty_like(x)
    forms = [
        lambda: aclnn_py.call(OP, g, x, [1, 1, 1, 1], out, backend="sim"),
        lambda: aclnn_py.call(OP, g, x, padding=[1, 1, 1, 1], gradInput=out, backend="sim"),
        lambda: aclnn_py.call(OP + "GetWorkspaceSize", g, x, [1, 1, 1, 1], out, backend="sim"),
        lambda: aclnn_py.call(OP, g, x, [1, 1, 1, 1], out),  # the current backend
    ]
    with aclnn_py.use_backend("sim"):
        for form in forms:
            for _ in range(2):
                out[...] = 0
                assert form() is out
                np.testing.assert_array_equal(out, want)
    for _ in range(2):
        out[...] = 0
        aclnn_py.call(OP, g, x, [1, 1, 1, 1], out, backend="numpy")
        np.testing.assert_array_equal(out, want)
    with pytest.raises(TypeError, match="backend must be a str"):  # the Python path's error, not the entry's
        aclnn_py.call(OP, g, x, [1, 1, 1, 1], out, backend=["sim"])
    # A NULL output: phase 1 refuses it, on every call.
    for _ in range(2):
        assert raised(lambda: aclnn_py.call(OP, g, x, [1, 1, 1, 1], None, backend="sim"))[1] == 161001


def test_call_plan_with_lists_values_and_several_outputs(lib, monkeypatch):
    """ConvolutionBackward by name: int and bool lists, a bool and int values, a NULL output and
    two written ones, returned as a tuple of what was passed."""
    rng = np.random.default_rng(7)
    go = rng.standard_normal((2, 2, 3, 3)).astype(np.float32)
    x = rng.standard_normal((2, 3, 5, 5)).astype(np.float32)
    w = rng.standard_normal((2, 3, 3, 3)).astype(np.float32)
    _, want_weight, want_bias = aclnn_py.convolution_backward(go, x, w, [2], [1, 1], [0, 0], [1, 1], False, [0, 0], 1,
                                                              [False, True, True], backend="numpy")

    def run():
        grad_weight, grad_bias = np.full_like(w, 7), np.full((2,), 7, np.float32)
        result = aclnn_py.call("aclnnConvolutionBackward", go, x, w, [2], [1, 1], [0, 0], [1, 1], False, [0, 0], 1,
                               [False, True, True], 0, None, grad_weight, grad_bias, backend="sim")
        assert result[0] is None and result[1] is grad_weight and result[2] is grad_bias
        return grad_weight, grad_bias

    runs = [run() for _ in range(3)]
    assert [n for n, planned in CALL._PLANS.plans() if planned] == ["aclnnConvolutionBackward"]
    _abi(monkeypatch, lib)
    runs.append(run())
    for grad_weight, grad_bias in runs:
        assert_close(grad_weight, want_weight, np.float32, scale=4)
        assert_close(grad_bias, want_bias, np.float32, scale=4)
        np.testing.assert_array_equal(grad_weight, runs[-1][0])  # the same C kernel on every path


def _recording_synchronize(lib, monkeypatch):
    """The helper's aclrtSynchronizeStream replaced by one that records the stream it is given."""
    api = lib.fast_api
    real = lib.fn("aclrtSynchronizeStream")
    seen = []

    def synchronize(stream):
        seen.append(int(lib.ffi.cast("uintptr_t", stream)))
        return real(stream)

    callback = lib.ffi.callback(lib.ffi.typeof(real), synchronize)
    table = api.ffi.new("void *[]", [api.table[i] for i in range(len(_fast.API_FUNCTIONS))])
    table[_fast.API_FUNCTIONS.index("aclrtSynchronizeStream")] = api.ffi.cast("void *", lib.ffi.cast("void *", callback))
    monkeypatch.setattr(api, "table", table)
    return seen, callback


@contextlib.contextmanager
def a_caller_stream(lib):
    """``(the thread's own stream, a new stream of aclrtCreateStream, its address)`` as ints but
    the new stream itself, which is destroyed on leaving."""
    own = int(lib.ffi.cast("uintptr_t", lib.stream()))
    with aclnn_py.use_backend("sim"):
        stream = capi.aclrtCreateStream()
    try:
        yield own, stream, int(lib.ffi.cast("uintptr_t", stream))
    finally:
        with aclnn_py.use_backend("sim"):
            capi.aclrtDestroyStream(stream)


def test_replays_use_the_current_stream(lib, monkeypatch):
    g, x = _data()
    want = _pad(g, x, backend="numpy")
    _pad(g, x, backend="sim")
    out = np.empty_like(x)
    aclnn_py.call(OP, g, x, [1, 1, 1, 1], out, backend="sim")
    seen, keep = _recording_synchronize(lib, monkeypatch)
    with a_caller_stream(lib) as (own, stream, mine):
        np.testing.assert_array_equal(_pad(g, x, backend="sim"), want)
        np.testing.assert_array_equal(_pad(g, x, backend="sim", stream=stream), want)
        np.testing.assert_array_equal(aclnn_py.call(OP, g, x, [1, 1, 1, 1], out, backend="sim", stream=mine), want)
        np.testing.assert_array_equal(aclnn_py.call(OP, g, x, [1, 1, 1, 1], out, backend="sim"), want)
        assert seen == [own, mine, mine, own]


def _script(body: str, **env: str) -> subprocess.CompletedProcess:
    environment = dict(os.environ, **env)
    environment.pop("COVERAGE_PROCESS_START", None)
    return subprocess.run([sys.executable, "-c", textwrap.dedent(body)], cwd=ROOT, env=environment,
                          capture_output=True, text=True, timeout=300)


_PRELUDE = """
import os, sys
import numpy as np
import aclnn_py
from aclnn_py import _fast
from aclnn_py._runtime import loader
lib = loader.library("sim")
assert _fast.entry() is not None and _fast.api_for(lib) is not None
pad = sys.modules["aclnn_py.ops.reflection_pad2d_backward"]._aclnn
g = np.arange(2 * 3 * 36, dtype=np.float32).reshape(2, 3, 6, 6)
x = np.zeros((2, 3, 4, 4), np.float32)
want = aclnn_py.reflection_pad2d_backward(g, x, [1, 1, 1, 1], backend="numpy")
def run():
    return aclnn_py.reflection_pad2d_backward(g, x, [1, 1, 1, 1], backend="sim")
def counters():
    c = lib.ffi.new("aclsimCounters *")
    lib.call("aclsimGetCounters", c)
    return {f: getattr(c, f) for f, _ in lib.ffi.typeof("aclsimCounters").fields}
"""


def test_replays_after_set_device_use_the_new_device(lib):
    done = _script(_PRELUDE + """
from aclnn_py import capi
aclnn_py.set_backend("sim")
for device in (0, 1, 0, 1):
    aclnn_py.set_device(device)
    assert (run() == want).all()
    assert capi.aclrtGetDevice() == device
assert pad.plans() == [(None, True)]
print("ok")
""", ACLSIM_DEVICE_COUNT="2")
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stdout + done.stderr


def test_replays_in_a_forked_child(lib):
    done = _script(_PRELUDE + """
assert (run() == want).all() and (run() == want).all()
pid = os.fork()
if pid == 0:
    ok = all((run() == want).all() for _ in range(5)) and pad.plans() == [(None, True)]
    lib.synchronize()
    ok = ok and counters()["tensors"] == 0
    os._exit(0 if ok else 3)
_, status = os.waitpid(pid, 0)
assert os.WEXITSTATUS(status) == 0, status
assert (run() == want).all()
print("ok")
""")
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stdout + done.stderr


def test_threads_replay_their_own_calls_without_leaking(lib):
    lib.synchronize()  # (this thread's stream made first, as the wait below makes it: run alone, it was counted)
    before = counters(lib)

    def work(seed: int) -> None:
        g, x = _data((1, 2, 6, 6), seed=seed)
        want = _pad(g, x, backend="numpy")
        out = np.empty_like(x)
        for _ in range(50):
            np.testing.assert_array_equal(_pad(g, x, backend="sim"), want)
            aclnn_py.call(OP, g, x, [1, 1, 1, 1], out, backend="sim")
            np.testing.assert_array_equal(out, want)

    run_in_threads(work, [(seed,) for seed in range(4)])
    lib.synchronize()
    assert counters(lib) == before
    assert _planned(PAD._aclnn) == [True]


def test_planner_interface(lib):
    entry = _fast.entry()
    planner = entry.Planner()
    with pytest.raises(TypeError):
        planner(lib)  # no operator function
    g, x = _data()
    spec = ("aclnnX", 0, 0, [], [(5, 0)], [], [], 0)
    with pytest.raises(ValueError):
        planner.add(lib, OP, [g, x], spec)  # a pointer kind the entry does not know
    host_in = [_fast.HOST_IN, 0, 2, 1, 4, 1, 4, 16]  # float32 [4], 4 elements, 16 bytes
    for desc, pointers in (([9], []), (host_in, []), (host_in, [(0, 0), (0, 1)]), (host_in[:-2], [(0, 0)]),
                           ([_fast.INT_ARRAY, 65] + [1] * 65, [])):
        with pytest.raises(ValueError, match="fastcall.c would not take"):
            planner.add(lib, OP, [g, x], ("aclnnX", 0, 0, desc, pointers, [], [], 0))
    assert planner.add(lib, OP, [object()], None) is False  # no key: nothing stored
    assert planner.run(lib, OP, [g, x]) is _fast.MISS
    assert planner.call(OP, "numpy", (g, x)) is _fast.MISS
    assert repr(_fast.MISS) == "MISS"
    previous = aclnn_py._convert.executor.set_plans(False)
    try:
        assert previous is True
        np.testing.assert_array_equal(_pad(g, x, backend="sim"), _pad(g, x, backend="numpy"))
        assert _planned(PAD._aclnn) == []
    finally:
        aclnn_py._convert.executor.set_plans(True)


def test_an_entry_of_other_sources_is_not_used(lib, monkeypatch):
    """An entry left from older sources is not used: one RuntimeWarning naming the rebuild
    command, and ``describe`` (``python -m aclnn_py info``) says why the fast path is off."""
    assert _fast.describe() == (True, "on (_entry.abi3.so built from these sources)")
    monkeypatch.setattr(_fast, "ENTRY_VERSION", -1)
    _fast.reset()
    try:
        with pytest.warns(RuntimeWarning, match=r"_entry\.abi3\.so was built from other sources .*"
                                                r"rebuilt with `python -m aclnn_py\._fast\.build`"):
            assert _fast.entry() is None
        on, why = _fast.describe()
        assert not on and why.startswith("off: _entry.abi3.so was built from other sources (versions (")
        assert why.endswith("build it with `python -m aclnn_py._fast.build` (a C compiler and Python's headers)")
        assert aclnn_py._convert.executor.set_plans(False) is False  # nothing to switch
    finally:
        monkeypatch.undo()
        _fast.reset()
    assert _fast.entry() is not None and _fast.entry().abi_version() == (_fast.ABI_VERSION, _fast.ENTRY_VERSION)


def test_build_entry(tmp_path):
    from aclnn_py._fast import build

    library = build.build_entry(tmp_path, werror=True)
    assert library.is_file() and library.name == _fast.ENTRY.name
    with pytest.raises(build.FastBuildError, match="Python.h"):
        build.build_entry(tmp_path, include=str(tmp_path))


_SUITE = ["tests/fast/test_entry.py", "tests/fast/test_device_plans.py", "tests/fast/test_device_inplace_plans.py",
          "tests/fast/test_device_list_plans.py",
          "tests/ops", "tests/call", "tests/ffi/test_fast_path.py", "tests/ffi/test_leaks_and_threads.py",
          "tests/ffi/test_streams_and_pending.py", "tests/ffi/test_devices_and_streams.py", "tests/ffi/test_fork.py",
          "tests/ffi/test_validate_before_allocating.py", "tests/ffi/test_memory_safety.py"]


@pytest.mark.parametrize("how", ["ACLNN_PY_FAST=0", "no entry built"])
def test_suite_without_the_entry(sim_lib, how):
    """The relevant tests green on the ABI-mode path (ACLNN_PY_FAST=0), and with the helper but
    no entry (as where the Python headers were missing at install)."""
    if not _fast.enabled():
        pytest.skip("already running with ACLNN_PY_FAST=0")
    env = dict(os.environ)
    env.pop("COVERAGE_PROCESS_START", None)
    env["ACLNN_PY_TEST_BACKENDS"] = "sim"  # (the numpy backend takes neither path: the main run tests it)
    argv = ["-q", "-x", "-p", "no:cacheprovider", *_SUITE, "-k", "not test_suite_without_the_entry"]
    if how == "ACLNN_PY_FAST=0":
        env["ACLNN_PY_FAST"] = "0"
        command = [sys.executable, "-m", "pytest", *argv]
    else:
        command = [sys.executable, "-c", "import sys; sys.modules['aclnn_py._fast._entry'] = None; import pytest; "
                   f"sys.exit(pytest.main({argv!r}))"]
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=1500)
    assert done.returncode == 0, done.stdout[-5000:] + done.stderr[-3000:]
    assert " passed" in done.stdout
