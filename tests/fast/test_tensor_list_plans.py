"""Plans of operators with an aclTensorList argument (Cat): the fast entry keys a list of ndarrays
element by element and the helper makes the list (fastcall.c's TENSOR_LIST). Against
``torch.cat`` (the oracle) and the ABI-mode path: each replay reads that call's own arrays, the
same errors, nothing leaked (the simulator's live handles and buffers)."""

from __future__ import annotations

import sys

import numpy as np
import pytest

import aclnn_py
from aclnn_py import AclnnError, _fast

torch = pytest.importorskip("torch")

CAT = sys.modules["aclnn_py.ops.cat"]
CALL = sys.modules["aclnn_py.call"]

from test_entry import counters  # noqa: E402  (this directory is on the path: pytest's rootdir-less import)
from helpers import raised, run_in_threads  # noqa: E402


@pytest.fixture
def lib(sim_lib):
    if not _fast.enabled() or _fast.entry() is None or _fast.api_for(sim_lib) is None:
        pytest.skip("the fast entry is not built or ACLNN_PY_FAST=0")
    CAT._aclnn.clear()
    CALL._PLANS.clear()
    return sim_lib


def _planned(planner) -> list[bool]:
    return [planned for _, planned in planner.plans()]


def _torch_cat(parts, dim):
    return torch.cat([torch.from_numpy(np.ascontiguousarray(p)) for p in parts], dim).numpy()


def _parts(rng, shapes, dtypes):
    return [(rng.standard_normal(s) * 100).astype(d) for s, d in zip(shapes, dtypes)]


def _in_table(monkeypatch, api, name, ffi, callback):
    """``callback`` (a callback of ``ffi``, returned: keep it alive) put in place of CANN's
    function ``name`` in a copy of the helper's function table ``api.table``, for this test."""
    table = api.ffi.new("void *[]", [api.table[i] for i in range(len(_fast.API_FUNCTIONS))])
    table[_fast.API_FUNCTIONS.index(name)] = api.ffi.cast("void *", ffi.cast("void *", callback))
    monkeypatch.setattr(api, "table", table)
    return callback


CASES = [
    # (shapes, dtypes, dim)
    ([(2, 3, 4), (2, 1, 4), (2, 5, 4)], [np.float32] * 3, 1),
    ([(3, 2), (3, 2)], [np.float16, np.int32], 0),                     # promoted, converted
    ([(2, 0, 4), (2, 2, 4), (0,)], [np.float32] * 3, 1),               # an empty part, a dropped one
    ([(8, 6, 5, 5), (8, 2, 5, 5), (8, 3, 5, 5), (8, 1, 5, 5)], [np.float32] * 4, -3),
]


@pytest.mark.parametrize("shapes, dtypes, dim", CASES)
def test_replays_read_each_calls_own_arrays(lib, shapes, dtypes, dim):
    rng = np.random.default_rng(0)
    for round in range(4):
        parts = _parts(rng, shapes, dtypes)  # new arrays of the recorded geometry
        got = aclnn_py.cat(parts, dim, backend="sim")
        want = _torch_cat([p for p in parts if p.shape != (0,)], dim)
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)
        as_tuple = aclnn_py.cat(tuple(parts), dim, backend="sim")
        np.testing.assert_array_equal(as_tuple, want)
    assert _planned(CAT._aclnn) == [True, True]  # (the list's key and the tuple's)


def test_an_array_twice_and_the_order_of_the_elements(lib):
    rng = np.random.default_rng(1)
    a, b = _parts(rng, [(2, 3)] * 2, [np.float32] * 2)
    for parts in ([a, a], [a, b], [b, a], [b, b], [a, b]):
        np.testing.assert_array_equal(aclnn_py.cat(parts, 1, backend="sim"), _torch_cat(parts, 1))
    assert _planned(CAT._aclnn) == [True]


def test_lists_the_helper_does_not_describe_take_the_abi_path(lib):
    """A non-contiguous element, a Tensor element, a torch tensor: no list plan; same results."""
    rng = np.random.default_rng(2)
    a, b = _parts(rng, [(4, 3), (4, 6)], [np.float32] * 2)
    for parts in ([a, b[:, ::2]], [a, b[:, ::2]], [aclnn_py.Tensor.from_numpy(a, backend="sim"), b],
                  [torch.from_numpy(a), b]):
        got = aclnn_py.cat(parts, 1, backend="sim")
        got = got.numpy() if isinstance(got, aclnn_py.Tensor) else got
        want = _torch_cat([p.numpy() if isinstance(p, aclnn_py.Tensor) else np.asarray(p) for p in parts], 1)
        np.testing.assert_array_equal(got, want)
    assert True not in _planned(CAT._aclnn)


def test_the_librarys_errors_and_nothing_leaked(lib, monkeypatch):
    """Phase 1 refusing a list the helper made (COMPLEX128, which only the library checks)
    raises what the ABI-mode path raises; plans and failures leak no handle or buffer."""
    rng = np.random.default_rng(3)
    good = _parts(rng, [(2, 3), (2, 2)], [np.float32] * 2)
    bad = [good[0].astype(np.complex64), good[1].astype(np.float64)]  # promote to COMPLEX128
    aclnn_py.cat(good, 1, backend="sim")
    before = counters(lib)
    for _ in range(20):
        np.testing.assert_array_equal(aclnn_py.cat(good, 1, backend="sim"), _torch_cat(good, 1))
    fast = [raised(lambda: aclnn_py.cat(bad, 1, backend="sim")) for _ in range(2)]
    assert counters(lib) == before
    assert _planned(CAT._aclnn) == [True]
    monkeypatch.setattr(lib, "fast_api", None)  # the ABI-mode path
    slow = raised(lambda: aclnn_py.cat(bad, 1, backend="sim"))
    assert fast == [slow, slow]
    assert slow[1:3] == (161002, "aclnnCatGetWorkspaceSize") and "COMPLEX128" in slow[3]


def test_call_with_a_tensor_list(lib, monkeypatch):
    """``aclnn_py.call("aclnnCat", ...)`` (its own path, not the op function's) plans the list
    too: each replay reads its own arrays; the library's error as on the ABI-mode path."""
    rng = np.random.default_rng(4)
    a = _parts(rng, [(2, 3)], [np.float32])[0]
    for round in range(4):
        parts = _parts(rng, [(2, 3), (2, 2)], [np.float32] * 2)
        if round == 3:
            parts = (a, parts[1])  # a tuple: another key
        out = np.empty((2, 5), np.float32)
        assert aclnn_py.call("aclnnCat", parts, 1, out, backend="sim") is out
        np.testing.assert_array_equal(out, _torch_cat(parts, 1))
    assert _planned(CALL._PLANS) == [True, True]
    bad = [a.astype(np.complex64), a.astype(np.float64)]
    out = np.empty((2, 6), np.complex64)
    fast = [raised(lambda: aclnn_py.call("aclnnCat", bad, 1, out, backend="sim")) for _ in range(2)]
    monkeypatch.setattr(lib, "fast_api", None)
    assert fast == [raised(lambda: aclnn_py.call("aclnnCat", bad, 1, out, backend="sim"))] * 2


@pytest.mark.parametrize("name", ["aclrtMalloc", "aclrtMemcpy", "aclCreateTensor", "aclCreateTensorList"])
def test_a_failing_cann_function_releases_everything(lib, monkeypatch, name):
    """CANN's function ``name`` failing at each of its calls in a replayed Cat (the list's
    elements' copies and descriptors, the list, the output): its error, every handle and buffer
    released (the elements' descriptors by the list once it exists, one by one before)."""
    rng = np.random.default_rng(5)
    parts = _parts(rng, [(2, 3, 4), (2, 1, 4), (2, 2, 4)], [np.float32] * 3)
    want = _torch_cat(parts, 1)
    aclnn_py.cat(parts, 1, backend="sim")  # planned
    api, ffi = lib.fast_api, lib.ffi
    real = lib.fn(name)
    pointer = ffi.typeof(real).result.kind == "pointer"
    before = counters(lib)
    fail_at = 1
    while True:
        seen = [0]

        def failing(*args):
            seen[0] += 1
            if seen[0] == fail_at:
                return ffi.NULL if pointer else 207001
            return real(*args)

        callback = _in_table(monkeypatch, api, name, ffi, ffi.callback(ffi.typeof(real), failing))
        try:
            got = aclnn_py.cat(parts, 1, backend="sim")
        except AclnnError as exc:
            assert exc.api == name and exc.status == (161002 if pointer else 207001)
            assert counters(lib) == before, f"{name} failing at call {fail_at}"
            fail_at += 1
            continue
        finally:
            monkeypatch.undo()
        np.testing.assert_array_equal(got, want)
        break
    # it failed at each call: the elements' and the output's memory (no workspace: the kernel
    # copies bytes), copies (3 in, 1 back) and descriptors; the one list
    assert fail_at - 1 == {"aclrtMalloc": 4, "aclrtMemcpy": 4, "aclCreateTensor": 4, "aclCreateTensorList": 1}[name]
    assert _planned(CAT._aclnn) == [True]
    assert counters(lib) == before


def test_threads_replay_their_own_lists_without_leaking(lib):
    before = counters(lib)

    def work(seed: int) -> None:
        rng = np.random.default_rng(seed)
        for _ in range(30):
            parts = _parts(rng, [(2, 3, 4), (2, 1, 4)], [np.float32] * 2)
            np.testing.assert_array_equal(aclnn_py.cat(parts, 1, backend="sim"), _torch_cat(parts, 1))

    run_in_threads(work, [(seed,) for seed in range(4)])
    lib.synchronize()
    assert counters(lib) == before
    assert _planned(CAT._aclnn) == [True]


def test_replays_use_the_current_stream(lib, monkeypatch):
    from test_entry import _recording_synchronize, a_caller_stream

    rng = np.random.default_rng(6)
    parts = _parts(rng, [(2, 3), (2, 2)], [np.float32] * 2)
    want = _torch_cat(parts, 1)
    aclnn_py.cat(parts, 1, backend="sim")
    out = np.empty((2, 5), np.float32)
    aclnn_py.call("aclnnCat", parts, 1, out, backend="sim")
    seen, keep = _recording_synchronize(lib, monkeypatch)
    with a_caller_stream(lib) as (own, stream, mine):
        np.testing.assert_array_equal(aclnn_py.cat(parts, 1, backend="sim", stream=stream), want)
        np.testing.assert_array_equal(aclnn_py.call("aclnnCat", parts, 1, out, backend="sim", stream=mine), want)
        np.testing.assert_array_equal(aclnn_py.cat(parts, 1, backend="sim"), want)
        assert seen == [mine, mine, own]
    assert _planned(CAT._aclnn) == [True] and _planned(CALL._PLANS) == [True]
