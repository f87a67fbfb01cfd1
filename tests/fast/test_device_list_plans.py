"""Tensor lists of device ``Tensor``s through the fast path (Cat): the entry keys each element
by its view and replays the plan in one crossing, the helper describing each element anew over
its device memory (fastcall.c's DEVICE_IN), the call left queued. Values against ``torch.cat``
(bit for bit: Cat copies); errors the same with and without the helper; nothing leaked by the
simulator's counters. These tests run on every path: with the entry (plans asserted), with
``ACLNN_PY_FAST=0`` and without the entry (``test_entry.py``'s ``test_suite_without_the_entry``)."""

from __future__ import annotations

import gc
import sys

import numpy as np
import pytest

import aclnn_py
from aclnn_py import AclnnError, Tensor, _fast

from helpers import raised, run_in_threads
from test_device_plans import _entry_on, counters  # (this directory is on the path)
from test_tensor_list_plans import CASES, _in_table, _parts, _torch_cat  # (the host lists' cases, on device here)


CAT = sys.modules["aclnn_py.ops.cat"]
CALL = sys.modules["aclnn_py.call"]


@pytest.fixture
def lib(sim_lib):
    if _entry_on(sim_lib):
        CAT._aclnn.clear()
        CALL._PLANS.clear()
    return sim_lib


def _planned(planner) -> list[bool]:
    return [planned for _, planned in planner.plans()]


def _dev(a):
    return Tensor.from_numpy(np.ascontiguousarray(a), backend="sim")


@pytest.mark.parametrize("shapes, dtypes, dim", CASES)
def test_replays_read_each_calls_own_tensors(lib, shapes, dtypes, dim):
    rng = np.random.default_rng(0)
    for round in range(4):
        parts = _parts(rng, shapes, dtypes)
        tensors = [_dev(p) for p in parts]  # new Tensors (new memory) of the recorded views
        want = _torch_cat([p for p in parts if p.shape != (0,)], dim)
        for given in (tensors, tuple(tensors)):
            got = aclnn_py.cat(given, dim, backend="sim")
            assert type(got) is Tensor and got.dtype == want.dtype and got.shape == want.shape
            if round == 0:
                assert lib.has_pending()  # queued, nothing waited for
            np.testing.assert_array_equal(got.numpy(), want)
    if _entry_on(lib):
        assert _planned(CAT._aclnn) == [True, True]  # (the list's key and the tuple's)


def test_views_offsets_and_a_tensor_twice(lib):
    """Strided views with offsets into one buffer, the same Tensor twice, the order of the
    elements: each replay describes each element's own view over its own memory."""
    rng = np.random.default_rng(1)
    big = _parts(rng, [(4, 7)], [np.float32])[0]
    whole = _dev(big)
    left = whole.view((4, 3), (7, 2), 1)        # big[:, 1:7:2]
    right = whole.view((4, 2), (7, 1), 5)       # big[:, 5:7]
    other = _dev(_parts(rng, [(4, 3)], [np.float32])[0])
    hosts = {id(left): big[:, 1:7:2], id(right): big[:, 5:7], id(other): other.numpy()}
    for parts in ([left, right], [left, left], [other, right], [left, right], [right, left, right]):
        got = aclnn_py.cat(parts, 1, backend="sim")
        np.testing.assert_array_equal(got.numpy(), _torch_cat([hosts[id(p)] for p in parts], 1))
    if _entry_on(lib):
        assert _planned(CAT._aclnn) == [True] * 4  # (the lists of views differ but the repeat)


def test_chains_of_new_outputs_leak_nothing(lib):
    """Outputs the entry made (their memory from the caching allocator, reused as they are
    dropped) as the next list's elements; closed ones and failures between; the simulator's
    handles and buffers the same after."""
    rng = np.random.default_rng(2)
    a, b = _parts(rng, [(2, 3), (2, 1)], [np.float32] * 2)
    gc.collect()
    lib.synchronize()
    before = counters(lib)
    bad = [_dev(a.astype(np.complex64)), _dev(a.astype(np.float64))]  # promote to COMPLEX128
    ta, tb = _dev(a), _dev(b)
    want = _torch_cat([a, b], 1)
    kept = []
    for i in range(300):
        y = aclnn_py.cat([ta, tb], 1, backend="sim")
        z = aclnn_py.cat([y, y] if i % 2 else (y, ta), 1, backend="sim")
        if i % 3 == 0:
            z.close()
        else:
            kept.append(z)
        if len(kept) > 4:
            kept.pop(0)
        if i % 50 == 0:
            with pytest.raises(AclnnError):
                aclnn_py.cat(bad, 1, backend="sim")
    np.testing.assert_array_equal(y.numpy(), want)
    np.testing.assert_array_equal(kept[-1].numpy(), _torch_cat([want, want] if i % 2 else [want, a], 1))
    if _entry_on(lib):
        assert _planned(CAT._aclnn) == [True] * 3  # (a failed call stores nothing)
    del kept, y, z, ta, tb, bad
    gc.collect()
    lib.synchronize()
    assert counters(lib) == before


def test_same_errors_on_every_path(lib, monkeypatch):
    """A closed Tensor in a list (also one whose geometry has a plan), dtypes the library
    refuses (COMPLEX128), a wrong out of ``call``: what the ABI-mode path raises."""
    rng = np.random.default_rng(3)
    a, b = _parts(rng, [(2, 3), (2, 2)], [np.float32] * 2)
    ta, tb = _dev(a), _dev(b)
    aclnn_py.cat([ta, tb], 1, backend="sim")  # (a plan for this geometry, with the entry)
    closed = _dev(b)
    closed.close()
    bad = [_dev(a.astype(np.complex64)), _dev(b.astype(np.float64))]
    wrong_out = Tensor.empty((2, 4), np.float32, backend="sim")
    runs = [
        lambda: aclnn_py.cat([ta, closed], 1, backend="sim"),
        lambda: aclnn_py.cat([closed, ta], 1, backend="sim"),
        lambda: aclnn_py.cat(bad, 1, backend="sim"),
        lambda: aclnn_py.call("aclnnCat", [ta, tb], 1, wrong_out, backend="sim"),
        lambda: aclnn_py.cat([ta, _dev(b[:1])], 1, backend="sim"),  # shapes that do not agree
    ]
    fast = [raised(r) for r in runs]
    again = [raised(r) for r in runs]  # (a failed call stores no plan: the checks run again)
    monkeypatch.setattr(lib, "fast_api", None)  # the ABI-mode path
    abi = [raised(r) for r in runs]
    assert fast == again == abi
    assert fast[0] == (TypeError, "aclnnCatGetWorkspaceSize: tensors[1] is a closed Tensor")
    assert fast[2][1:3] == (161002, "aclnnCatGetWorkspaceSize") and "COMPLEX128" in fast[2][3]
    assert fast[3][1] == 161002 and fast[4][1] == 161002


@pytest.mark.parametrize("name", ["aclCreateTensor", "aclCreateTensorList"])
def test_a_failing_cann_function_releases_everything(lib, monkeypatch, name):
    """CANN's function ``name`` failing at each of its calls in a replayed Cat of device
    Tensors (the elements' descriptors, the list, the new output's descriptor): its error,
    every handle and block released (the elements' descriptors by the list once it exists)."""
    if not _entry_on(lib):
        pytest.skip("the helper's function table (the fast entry is off)")
    rng = np.random.default_rng(5)
    parts = _parts(rng, [(2, 3, 4), (2, 1, 4), (2, 2, 4)], [np.float32] * 3)
    want = _torch_cat(parts, 1)
    gc.collect()
    lib.synchronize()
    before = counters(lib)
    tensors = [_dev(p) for p in parts]
    aclnn_py.cat(tensors, 1, backend="sim").close()  # planned
    api, ffi = lib.fast_api, lib.ffi
    real = lib.fn(name)
    fail_at = 1
    while True:
        seen = [0]

        def failing(*args):
            seen[0] += 1
            return ffi.NULL if seen[0] == fail_at else real(*args)

        callback = _in_table(monkeypatch, api, name, ffi, ffi.callback(ffi.typeof(real), failing))
        try:
            got = aclnn_py.cat(tensors, 1, backend="sim")
        except AclnnError as exc:
            assert exc.api == name and exc.status == 161002
            fail_at += 1
            continue
        finally:
            monkeypatch.undo()
        np.testing.assert_array_equal(got.numpy(), want)
        break
    # (the three elements' descriptors, and the output's unless its block came back with it)
    assert fail_at - 1 in ({"aclCreateTensor": (3, 4), "aclCreateTensorList": (1,)}[name])
    assert _planned(CAT._aclnn) == [True]
    del got, tensors
    gc.collect()
    lib.synchronize()
    assert counters(lib) == before


def test_call_with_device_tensor_lists(lib):
    """``aclnn_py.call("aclnnCat", ...)`` with a list of device Tensors and a Tensor out replays
    its plan, each run with its own Tensors; a list of ndarrays with a Tensor out (a device call
    whose list the helper would copy) takes the Python path, with the same result."""
    rng = np.random.default_rng(6)
    out = Tensor.empty((2, 5), np.float32, backend="sim")
    for round in range(3):
        a, b = _parts(rng, [(2, 3), (2, 2)], [np.float32] * 2)
        assert aclnn_py.call("aclnnCat", [_dev(a), _dev(b)], 1, out, backend="sim") is out
        np.testing.assert_array_equal(out.numpy(), _torch_cat([a, b], 1))
        assert aclnn_py.call("aclnnCat", [a, b], 1, out, backend="sim") is out
        np.testing.assert_array_equal(out.numpy(), _torch_cat([a, b], 1))
    if _entry_on(lib):
        assert sorted(_planned(CALL._PLANS)) == [False, True]


def test_threads_replay_their_own_lists(lib):
    gc.collect()
    lib.synchronize()
    before = counters(lib)

    def work(seed: int) -> None:
        rng = np.random.default_rng(seed)
        for _ in range(10):
            parts = _parts(rng, [(2, 3, 4), (2, 1, 4)], [np.float32] * 2)
            tensors = [_dev(p) for p in parts]
            for _ in range(10):
                got = aclnn_py.cat(tensors, 1, backend="sim")
            np.testing.assert_array_equal(got.numpy(), _torch_cat(parts, 1))

    run_in_threads(work, [(seed,) for seed in range(3)])
    gc.collect()
    lib.synchronize()
    assert counters(lib) == before
    if _entry_on(lib):
        assert _planned(CAT._aclnn) == [True]
