"""An in-place operator that overwrites its argument whole (``Operator.overwrites``: InplaceZero,
InplaceFillScalar, InplaceCopy) gets device memory for an ndarray passed there and the copy back,
never a copy of that ndarray to the device: on the fast path (the call that records the plan and
its replays) and on the ABI-mode path, where a non-contiguous view is written element by element.
The results stay PyTorch's: the simulator fills new device memory with 0xFF bytes, so an element
the operator left unwritten would show as NaN, and the argument is NaN beforehand. InplaceAdd,
which reads its ``selfRef``, still copies it to the device. Every handle and block is released.
These tests run on every path: with the entry, with ``ACLNN_PY_FAST=0`` and without the entry
(``test_entry.py``'s ``test_suite_without_the_entry``), and with the ABI-mode path forced."""

from __future__ import annotations

import gc

import numpy as np
import pytest

import aclnn_py
from aclnn_py import _fast
from aclnn_py._constants import ACL_MEMCPY_HOST_TO_DEVICE
from aclnn_py._convert import executor

from test_device_plans import counters  # (this directory is on the path)
from test_tensor_list_plans import _in_table

torch = pytest.importorskip("torch")

SRC = np.arange(4, dtype=np.float16).reshape(4, 1) / 8  # (InplaceCopy: broadcast and cast)

# name -> (the op function on selfRef, the C name and phase 1's other arguments, PyTorch's selfRef
# afterwards, bytes copied to the device besides selfRef)
CASES = {
    "inplace_zero": (lambda s: aclnn_py.inplace_zero(s, backend="sim"), ("aclnnInplaceZero",),
                     lambda t: t.zero_(), 0),
    "inplace_fill_scalar": (lambda s: aclnn_py.inplace_fill_scalar(s, 2.5, backend="sim"),
                            ("aclnnInplaceFillScalar", 2.5), lambda t: t.fill_(2.5), 0),
    "inplace_copy": (lambda s: aclnn_py.inplace_copy(s, SRC, backend="sim"), ("aclnnInplaceCopy", SRC),
                     lambda t: t.copy_(torch.from_numpy(SRC)), SRC.nbytes),
}


def _runner(name: str, entry: str, prepared: list, uploaded: list):
    """selfRef -> the call of operator ``name`` through ``entry``: its op function, ``call``, or
    a ``prepare``d executor made at the first call of each geometry and run from then on
    (``prepare`` copies as much to the device as a run: checked, then left out of
    ``uploaded``)."""
    function, (c_name, *others), _, nbytes = CASES[name]
    if entry == "function":
        return function
    if entry == "call":
        return lambda s: aclnn_py.call(c_name, s, *others, backend="sim")

    def run(s):
        if not prepared or prepared[-1][0] != s.shape:
            prepared.append((s.shape, aclnn_py.prepare(c_name, s, *others, backend="sim")))
            assert sum(uploaded) == nbytes
            # (a contiguous one is run by the entry in one crossing, where the entry is on)
            entry_on = _fast.entry() is not None and _fast.api_for(prepared[-1][1].lib) is not None
            assert (prepared[-1][1]._runner is not None) == (entry_on and s.flags.c_contiguous)
            del uploaded[:]
        prepared[-1][1](s, *others)
    return run


@pytest.fixture(params=["default", "abi"])
def path(request, sim_lib, monkeypatch):
    """The path this run of the suite takes (the fast path and its plans where the entry is
    on), or the ABI-mode path forced."""
    if request.param == "abi":
        monkeypatch.setattr(sim_lib, "fast_api", None)
        monkeypatch.setattr(_fast, "entry", lambda: None)
    aclnn_py.inplace_zero(np.ones(3, np.float32), backend="sim")  # (this thread's stream first)
    return request.param


@pytest.fixture
def uploaded(sim_lib, monkeypatch):
    """The byte counts of the calls' copies to the device, made through the fast helper's
    function table, a prepared run's entry or the ABI-mode path's aclrtMemcpy (whichever the
    call takes)."""
    counts: list[int] = []
    ffi = sim_lib.ffi
    real = sim_lib.fn("aclrtMemcpy")

    def memcpy(dst, dest_max, src, count, kind):
        if kind == ACL_MEMCPY_HOST_TO_DEVICE:
            counts.append(int(count))
        return real(dst, dest_max, src, count, kind)

    callback = ffi.callback(ffi.typeof(real), memcpy)  # (a C function: a prepared run's entry takes it)
    api = _fast.api_for(sim_lib)
    if api is not None:
        _in_table(monkeypatch, api, "aclrtMemcpy", ffi, callback)
    monkeypatch.setattr(executor._functions(sim_lib), "aclrtMemcpy", callback)
    fn = sim_lib.fn
    monkeypatch.setattr(sim_lib, "fn", lambda name: callback if name == "aclrtMemcpy" else fn(name))
    yield counts
    monkeypatch.undo()  # (the table back before the callback it points at goes)
    del callback


@pytest.mark.parametrize("entry", ["function", "call", "prepare"])
@pytest.mark.parametrize("name", CASES)
def test_an_overwritten_argument_is_not_copied_to_the_device(sim_lib, path, uploaded, name, entry):
    _, _, want, others = CASES[name]
    gc.collect()
    sim_lib.synchronize()
    before = counters(sim_lib)
    prepared: list = []
    run = _runner(name, entry, prepared, uploaded)
    for shape in [(4, 6), (4, 6), (4, 6), (2, 4, 6)]:  # (recorded, replayed twice, a new geometry)
        got = np.full(shape, np.nan, np.float32)
        del uploaded[:]
        run(got)
        assert sum(uploaded) == others
        np.testing.assert_array_equal(got, want(torch.full(shape, np.nan)).numpy())
    for _, executor_ in prepared:
        executor_.close()
    del prepared[:], run
    gc.collect()
    sim_lib.synchronize()
    assert counters(sim_lib) == before


@pytest.mark.parametrize("entry", ["function", "call", "prepare"])
@pytest.mark.parametrize("name", CASES)
def test_a_view_is_written_element_by_element(sim_lib, path, uploaded, name, entry):
    """A non-contiguous view (the ABI-mode path on every path) gets its elements written and
    none around them, still with nothing of it copied to the device."""
    _, _, want, others = CASES[name]
    prepared: list = []
    base = np.full((4, 12), np.nan, np.float32)
    del uploaded[:]
    _runner(name, entry, prepared, uploaded)(base[:, ::2])
    for _, executor_ in prepared:
        executor_.close()
    assert sum(uploaded) == others
    expected = torch.full((4, 12), np.nan)
    want(expected[:, ::2])
    np.testing.assert_array_equal(base, expected.numpy())
    assert np.isnan(base[:, 1::2]).all()


def test_an_argument_that_is_read_is_copied_to_the_device(sim_lib, path, uploaded):
    w, g = np.ones((4, 6), np.float32), np.full(6, 0.5, np.float32)
    for _ in range(3):
        del uploaded[:]
        aclnn_py.inplace_add(w, g, -2.0, backend="sim")
        assert sorted(uploaded) == sorted([w.nbytes, g.nbytes])
    np.testing.assert_array_equal(w, np.full((4, 6), -2.0, np.float32))


def test_the_overwritten_arguments_are_the_registered_ones():
    registered = {op.api: op.inplace for op in aclnn_py.ops.OPERATORS if op.overwrites}
    assert registered == {f"aclnn{c}GetWorkspaceSize": "selfRef" for c in ("InplaceZero", "InplaceFillScalar",
                                                                              "InplaceCopy")}
    assert {api: executor.overwritten_by(api) for api in registered} == registered
    assert executor.overwritten_by("aclnnInplaceAddGetWorkspaceSize") is None
