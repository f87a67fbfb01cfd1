"""The fast path (aclnn_py/_fast: the whole call in one crossing into a C helper, and plans
that replay an op call of a geometry already seen) against the ABI-mode path it stands in for:
same results, same errors, every handle and device byte released exactly once, also when a
CANN function fails halfway (tests/fast/test_entry.py runs the relevant tests with ACLNN_PY_FAST=0
and without the entry)."""

from __future__ import annotations

import gc
import os
import sys
from pathlib import Path

import numpy as np
import pytest

import aclnn_py
from aclnn_py import AclnnError, Tensor, _fast
from aclnn_py._convert import executor as _aclnn
from aclnn_py._convert.executor import Call

from test_leaks_and_threads import _invalid_calls, _valid_calls
from test_tensor import counters

ROOT = Path(__file__).resolve().parents[2]
FORCED_OFF = not _fast.enabled()


@pytest.fixture
def fast_lib(sim_lib):
    """The simulator with the fast path on (skipped where the helper is not built or is off)."""
    if FORCED_OFF:
        pytest.skip("ACLNN_PY_FAST=0: the ABI-mode path only")
    if _fast.api_for(sim_lib) is None:
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail(f"the fast path's helper must be built in CI ({_fast.LIBRARY})")
        pytest.skip("the fast path's helper is not built")
    return sim_lib


@pytest.fixture
def entry_lib(fast_lib):
    """The simulator with the fast entry (plans) on as well."""
    if _fast.entry() is None:
        if os.environ.get("CI", "").lower() in ("1", "true", "yes") and "aclnn_py._fast._entry" not in sys.modules:
            pytest.fail(f"the fast entry must be built in CI ({_fast.ENTRY})")
        pytest.skip("the fast entry is not built")
    return fast_lib


def _abi_mode(monkeypatch, lib) -> None:
    monkeypatch.setattr(lib, "fast_api", None)


def _results(calls):
    out = []
    for call in calls:
        r = call()
        out.append(r if isinstance(r, tuple) else (r,))
    return out


def test_env_var_turns_it_off(sim_lib):
    if FORCED_OFF:
        assert _fast.helper() is None and _fast.api_for(sim_lib) is None
    else:
        assert _fast.enabled()


def test_same_results_on_both_paths_and_plans_are_used(entry_lib, monkeypatch):
    rng = np.random.default_rng(1)
    calls = list(_valid_calls(rng))
    first = _results(calls)    # records the plans
    second = _results(calls)   # replays them
    for module in ("reflection_pad2d_backward", "avg_pool2d_backward", "im2col_backward",
                   "max_unpool2d_backward", "convolution_backward"):
        plans = sys.modules[f"aclnn_py.ops.{module}"]._aclnn.plans()
        assert any(planned for _, planned in plans), module
    _abi_mode(monkeypatch, entry_lib)
    slow = _results(calls)
    for a, b, c in zip(first, second, slow):
        assert len(a) == len(b) == len(c)
        for x, y, z in zip(a, b, c):
            np.testing.assert_array_equal(x, z)
            np.testing.assert_array_equal(y, z)


def test_same_errors_on_both_paths(fast_lib, monkeypatch):
    def errors():
        out = []
        for call in _invalid_calls():
            for _ in range(2):  # a failing geometry is never planned: the second call fails alike
                with pytest.raises(AclnnError) as info:
                    call()
                out.append((info.value.status, info.value.api, info.value.message))
        return out

    fast = errors()
    _abi_mode(monkeypatch, fast_lib)
    assert errors() == fast


def test_arguments_a_plan_does_not_replay(fast_lib):
    g = np.arange(36, dtype=np.float32).reshape(1, 1, 6, 6)
    x = np.zeros((1, 1, 4, 4), np.float32)
    want = aclnn_py.reflection_pad2d_backward(g, x, [1, 1, 1, 1], backend="numpy")
    # A strided view, a tuple, numpy ints, a device Tensor: each as on the numpy backend.
    wide = np.zeros((1, 1, 6, 12), np.float32)
    wide[..., ::2] = g
    for args in ((wide[..., ::2], x, [1, 1, 1, 1]), (g, x, (1, 1, 1, 1)), (g, x, np.array([1, 1, 1, 1])),
                 (g, x, [np.int64(1)] * 4)):
        for _ in range(2):
            np.testing.assert_array_equal(aclnn_py.reflection_pad2d_backward(*args, backend="sim"), want)
    with Tensor.from_numpy(g, backend="sim") as tg:
        out = aclnn_py.reflection_pad2d_backward(tg, x, [1, 1, 1, 1], backend="sim")
        with out:
            np.testing.assert_array_equal(out.numpy(), want)
    # bools where ints are expected are another geometry than the ints they equal
    with pytest.raises((AclnnError, TypeError)):
        aclnn_py.reflection_pad2d_backward(g, x, [True, True, True, True], backend="sim")


def test_plans_are_bounded(entry_lib):
    planner = sys.modules["aclnn_py.ops.reflection_pad2d_backward"]._aclnn
    planner.clear()
    g = np.ones((1, 1, 6, 6), np.float32)
    for n in range(_fast.entry().MAX_PLANS + 5):  # as many keys (padding values), then a few more
        x = np.zeros((1, 1, 4 + n, 4), np.float32)
        aclnn_py.reflection_pad2d_backward(np.ones((1, 1, 6 + n, 6), np.float32), x, [1, 1, 1, 1], backend="sim")
        assert len(planner.plans()) <= _fast.entry().MAX_PLANS
    assert 0 < len(planner.plans()) < _fast.entry().MAX_PLANS  # cleared once when full
    np.testing.assert_array_equal(aclnn_py.reflection_pad2d_backward(g, g[..., 1:5, 1:5].copy(), [1, 1, 1, 1],
                                                                     backend="sim"),
                                  aclnn_py.reflection_pad2d_backward(g, g[..., 1:5, 1:5].copy(), [1, 1, 1, 1],
                                                                     backend="numpy"))


# -- CANN failing halfway: each failure point raises its function's error, releases all -------

def _failing_table(lib, monkeypatch, index: int, name: str, fail_at: int):
    """Replace function ``index`` of the helper's table by one failing (207001) at its
    ``fail_at``-th call and forwarding the others to CANN's."""
    api = lib.fast_api
    ffi = lib.ffi
    real = lib.fn(name)
    seen = [0]
    prototype = ffi.typeof(real)

    def failing(*args):
        seen[0] += 1
        if seen[0] == fail_at:
            return 207001
        return real(*args)

    callback = ffi.callback(prototype, failing)
    table = api.ffi.new("void *[]", [api.table[i] for i in range(len(_fast.API_FUNCTIONS))])
    table[index] = api.ffi.cast("void *", ffi.cast("void *", callback))
    monkeypatch.setattr(api, "table", table)
    return seen, callback


@pytest.mark.parametrize("name", ["aclrtMalloc", "aclrtMemcpy"])
def test_failing_cann_function_releases_everything(fast_lib, monkeypatch, name):
    index = _fast.API_FUNCTIONS.index(name)
    w = np.ones((4, 3, 3, 3), np.float32)
    x = np.zeros((2, 3, 4, 4), np.float32)

    def call():  # three inputs, three outputs, five int arrays, one bool array: many failure points
        return aclnn_py.convolution_backward(np.ones((2, 4, 4, 4), np.float32), x, w, [4], [1, 1], [1, 1],
                                             [1, 1], False, [0, 0], 1, [True, True, True], backend="sim")

    want = call()
    call()  # planned
    gc.collect()
    fast_lib.synchronize()
    before = counters(fast_lib)
    fail_at = 1
    while True:
        seen, keep = _failing_table(fast_lib, monkeypatch, index, name, fail_at)
        try:
            got = call()
        except AclnnError as exc:
            assert exc.status == 207001 and exc.api == name
            assert counters(fast_lib) == before, f"{name} failing at call {fail_at}"
            fail_at += 1
            continue
        finally:
            monkeypatch.undo()
        for a, b in zip(got, want):
            np.testing.assert_array_equal(a, b)
        break
    assert fail_at > 3  # it did fail at several points before the call got through
    assert counters(fast_lib) == before


def test_failure_stages_name_the_function(fast_lib):
    class Lib:
        def recent_error(self):
            return ""

    for stage, api in [(7, "aclnnXGetWorkspaceSize"), (9, "aclnnX"), (3, "aclCreateTensor"), (4, "aclCreateIntArray"),
                       (5, "aclCreateBoolArray"), (6, "aclrtMemset"), (8, "aclrtMalloc"),
                       (10, "aclrtSynchronizeStream"), (11, "aclrtMemcpy"), (12, "aclnn_py fast path"),
                       (14, "aclCreateTensorList")]:
        with pytest.raises(AclnnError) as info:
            _aclnn._fast_failed(Lib(), "aclnnX", stage << 32 | 161002)
        assert info.value.api == api and info.value.status == 161002
    with pytest.raises(AclnnError) as info:
        _aclnn._fast_failed(Lib(), "aclnnX", 7 << 32 | (2**32 - 1))
    assert info.value.status == -1


def test_call_replays_on_the_abi_mode_path(fast_lib):
    """Call's public methods on a mixture the helper does not take (a Tensor after a host
    array): what was described is made on the ABI-mode path, with the same result."""
    g = np.ones((1, 1, 6, 6), np.float32)
    x = np.zeros((1, 1, 4, 4), np.float32)
    before = counters(fast_lib)
    with Tensor.from_numpy(x, backend="sim") as tx:
        with Call(fast_lib, "aclnnReflectionPad2dBackwardGetWorkspaceSize") as call:
            args = (call.tensor("gradOutput", g), call.tensor("self", tx), call.int_array("padding", [1, 1, 1, 1]))
            out = call.output((1, 1, 4, 4), np.float32)
            call.run("aclnnReflectionPad2dBackward", *args, out)
            (result,) = call.results()
        with result:
            np.testing.assert_array_equal(result.numpy(), aclnn_py.reflection_pad2d_backward(g, x, [1, 1, 1, 1],
                                                                                             backend="numpy"))
    fast_lib.synchronize()
    assert counters(fast_lib) == before


def test_call_without_the_fast_path_hands_out_handles(fast_lib):
    g = np.ones((1, 1, 6, 6), np.float32)
    x = np.zeros((1, 1, 4, 4), np.float32)
    with Call(fast_lib, "aclnnReflectionPad2dBackwardGetWorkspaceSize", fast=False) as call:
        args = (call.tensor("gradOutput", g), call.tensor("self", x), call.int_array("padding", [1, 1, 1, 1]))
        assert all(isinstance(a, fast_lib.ffi.CData) for a in args)
        out = call.output((1, 1, 4, 4), np.float32)
        call.run("aclnnReflectionPad2dBackward", *args, out)
        (result,) = call.results()
    np.testing.assert_array_equal(result, aclnn_py.reflection_pad2d_backward(g, x, [1, 1, 1, 1], backend="numpy"))


def test_build_helper(tmp_path):
    from aclnn_py._fast import build

    library = build.build(tmp_path, werror=True)
    assert library.is_file() and library.name == _fast.LIBRARY.name
