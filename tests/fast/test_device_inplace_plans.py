"""In-place operators on device ``Tensor``s through the fast path: a selfRef that is a device
Tensor (InplaceAdd, the training example's SGD step; InplaceCopy, InplaceZero,
InplaceFillScalar) and BatchNorm's running statistics as Tensors are written where they are, the
call queued without waiting, and a call of a geometry seen before replays its plan in one
crossing. Values against PyTorch CPU; errors the same with and without the helper; chains leak
nothing by the simulator's counters. These tests run on every path: with the entry (plans
asserted), with ``ACLNN_PY_FAST=0`` and without the entry (``test_entry.py``'s
``test_suite_without_the_entry``)."""

from __future__ import annotations

import gc
import sys

import numpy as np
import pytest

import aclnn_py
from aclnn_py import AclnnError, Tensor, _fast

from helpers import assert_close, raised
from test_device_plans import _entry_on, counters  # (this directory is on the path)

OPS = {name: sys.modules[f"aclnn_py.ops.{name}"]
       for name in ("inplace_add", "inplace_copy", "inplace_zero", "inplace_fill_scalar", "batch_norm")}


def _planned(name: str) -> list[bool]:
    return [planned for _, planned in OPS[name]._aclnn.plans()]


@pytest.fixture
def lib(sim_lib):
    if _entry_on(sim_lib):
        for module in OPS.values():
            module._aclnn.clear()
    return sim_lib


def _dev(a):
    return Tensor.from_numpy(np.ascontiguousarray(a), backend="sim")


def _normal(rng, shape, dtype=np.float32):
    return rng.standard_normal(shape).astype(dtype)


def test_sgd_steps_on_device_weights_replay_a_plan_and_match_torch(lib, torch):
    rng = np.random.default_rng(0)
    w = _normal(rng, (64, 3, 7, 7))
    grads = [_normal(rng, w.shape) for _ in range(3)]
    wt, gts = _dev(w), [_dev(g) for g in grads]
    want = torch.from_numpy(w.copy())
    lib.synchronize()
    for step in range(9):
        g = grads[step % 3]
        other = gts[step % 3] if step % 2 == 0 else g  # a device Tensor, or an array uploaded per call
        assert aclnn_py.inplace_add(wt, other, -0.01, backend="sim") is wt
        assert lib.has_pending()  # queued, nothing waited for
        want.add_(torch.from_numpy(g), alpha=-0.01)
    assert_close(wt.numpy(), want.numpy(), np.float32)
    if _entry_on(lib):
        assert _planned("inplace_add") == [True, True]


def test_every_in_place_operator_on_device_tensors_against_torch(lib, torch):
    rng = np.random.default_rng(1)
    a, b = _normal(rng, (8, 4, 5)), _normal(rng, (8, 4, 5))
    row, half = _normal(rng, (5,)), _normal(rng, (8, 4, 5), np.float16)
    ints = rng.integers(-9, 9, (8, 4, 5)).astype(np.int32)
    target = _dev(a)
    ta = torch.from_numpy(a.copy())
    steps = [
        (lambda: aclnn_py.inplace_copy(target, _dev(b), backend="sim"), lambda: ta.copy_(torch.from_numpy(b))),
        (lambda: aclnn_py.inplace_add(target, row, 2, backend="sim"),
         lambda: ta.add_(torch.from_numpy(row), alpha=2)),
        (lambda: aclnn_py.inplace_copy(target, row, backend="sim"), lambda: ta.copy_(torch.from_numpy(row))),
        (lambda: aclnn_py.inplace_copy(target, half, backend="sim"), lambda: ta.copy_(torch.from_numpy(half))),
        (lambda: aclnn_py.inplace_add(target, _dev(ints), 0.5, backend="sim"),
         lambda: ta.add_(torch.from_numpy(ints), alpha=0.5)),
        (lambda: aclnn_py.inplace_fill_scalar(target, -1.25, backend="sim"), lambda: ta.fill_(-1.25)),
        (lambda: aclnn_py.inplace_add(target, _dev(b), backend="sim"), lambda: ta.add_(torch.from_numpy(b))),
        (lambda: aclnn_py.inplace_zero(target, backend="sim"), lambda: ta.zero_()),
        (lambda: aclnn_py.inplace_add(target, b, -3, backend="sim"), lambda: ta.add_(torch.from_numpy(b), alpha=-3)),
    ]
    for _ in range(2):  # the second round replays the first's plans
        for ours, theirs in steps:
            assert ours() is target
            theirs()
            assert_close(target.numpy(), ta.numpy(), np.float32)
    if _entry_on(lib):
        assert _planned("inplace_add") == [True] * 4
        assert _planned("inplace_copy") == [True] * 3
        assert _planned("inplace_fill_scalar") == [True]
        assert _planned("inplace_zero") == [True]


def test_a_view_is_written_in_its_elements_only(lib, torch):
    rng = np.random.default_rng(2)
    base = _normal(rng, (6, 8))
    src = _normal(rng, (3, 4))
    bt = _dev(base)
    view = bt.view((3, 4), (16, 2), 3)  # every other row and column, from element 3
    want = torch.from_numpy(base.copy())
    wview = want.as_strided((3, 4), (16, 2), 3)
    for _ in range(3):
        assert aclnn_py.inplace_add(view, src, 0.5, backend="sim") is view
        wview.add_(torch.from_numpy(src), alpha=0.5)
        assert_close(bt.numpy(), want.numpy(), np.float32)
    aclnn_py.inplace_fill_scalar(view, 7, backend="sim")
    aclnn_py.inplace_fill_scalar(view, 7, backend="sim")
    wview.fill_(7)
    np.testing.assert_array_equal(bt.numpy(), want.numpy())


def test_batch_norm_updates_device_running_statistics(lib, torch):
    rng = np.random.default_rng(3)
    mean, var = _normal(rng, (3,)), np.abs(_normal(rng, (3,))) + 0.5
    mt, vt = _dev(mean), _dev(var)
    wm, wv = torch.from_numpy(mean.copy()), torch.from_numpy(var.copy())
    for step in range(3):
        x = _normal(rng, (4, 3, 5, 5))
        rm, rv, out, _, _ = aclnn_py.batch_norm(_dev(x), None, None, mt, vt, True, 0.1, 1e-5, backend="sim")
        assert rm is mt and rv is vt and type(out) is Tensor
        want = torch.nn.functional.batch_norm(torch.from_numpy(x), wm, wv, training=True, momentum=0.1, eps=1e-5)
        assert_close(out.numpy(), want.numpy(), np.float32, scale=4)
        assert_close(mt.numpy(), wm.numpy(), np.float32, scale=4)
        assert_close(vt.numpy(), wv.numpy(), np.float32, scale=4)
    if _entry_on(lib):
        assert _planned("batch_norm") == [True]


def test_a_tensor_at_two_places_is_not_replayed_wrongly(lib, torch):
    rng = np.random.default_rng(4)
    a, b = _normal(rng, (2, 3)), _normal(rng, (2, 3))
    at, bt = _dev(a), _dev(b)
    want = torch.from_numpy(a.copy())
    for other, theirs in ((at, want), (at, want), (bt, torch.from_numpy(b)), (at, want)):
        aclnn_py.inplace_add(at, other, 1, backend="sim")
        want.add_(theirs.clone())
        assert_close(at.numpy(), want.numpy(), np.float32)


def test_queued_in_place_work_runs_in_order(lib):
    """The simulator runs queued work only at a synchronisation: an in-place call run out of
    order with the calls around it shows as wrong data."""
    rng = np.random.default_rng(5)
    g = _normal(rng, (4, 4))
    wt, gt = _dev(np.zeros((4, 4), np.float32)), _dev(g)
    lib.synchronize()
    for _ in range(2):
        aclnn_py.inplace_fill_scalar(wt, 2.0, backend="sim")
        out = aclnn_py.add(wt, gt, 1, backend="sim")
        aclnn_py.inplace_add(wt, out, -1, backend="sim")  # 2 - (2 + g)
        aclnn_py.inplace_copy(gt, wt, backend="sim")       # g := 2 - (2 + g)
        assert lib.has_pending()
        two = np.float32(2)
        np.testing.assert_array_equal(out.numpy(), two + g)  # (float32 sums, exact in both)
        g = two - (two + g)
        np.testing.assert_array_equal(wt.numpy(), g)
        np.testing.assert_array_equal(gt.numpy(), g)


def test_same_errors_on_every_path(lib, monkeypatch):
    wt = _dev(np.zeros((2, 3), np.float32))
    it = _dev(np.zeros((2, 3), np.int32))
    bt = _dev(np.zeros((2, 3), np.bool_))
    closed = _dev(np.zeros((2, 3), np.float32))
    closed.close()
    runs = [
        lambda: aclnn_py.inplace_add(wt, _dev(np.zeros((3, 3), np.float32)), backend="sim"),  # shape
        lambda: aclnn_py.inplace_add(wt, np.zeros((1, 3, 1), np.float32), backend="sim"),  # broadcast grows selfRef
        lambda: aclnn_py.inplace_add(it, wt, 1, backend="sim"),  # FLOAT into INT32
        lambda: aclnn_py.inplace_add(bt, bt, 0.5, backend="sim"),  # a FLOAT alpha for BOOL
        lambda: aclnn_py.inplace_add(closed, wt, backend="sim"),
        lambda: aclnn_py.inplace_add(wt, closed, backend="sim"),
        lambda: aclnn_py.inplace_add(wt, None, backend="sim"),
        lambda: aclnn_py.inplace_add(wt, wt, "x", backend="sim"),
        lambda: aclnn_py.inplace_copy(wt, _dev(np.zeros((4,), np.float32)), backend="sim"),
        lambda: aclnn_py.inplace_copy(wt, _dev(np.zeros((1,) * 9, np.float32)), backend="sim"),  # 9 dims
        lambda: aclnn_py.inplace_zero(closed, backend="sim"),
        lambda: aclnn_py.inplace_fill_scalar(wt, None, backend="sim"),
        lambda: aclnn_py.inplace_fill_scalar(it, "x", backend="sim"),
    ]
    fast = [raised(r) for r in runs]
    again = [raised(r) for r in runs]  # (a failed call stores no plan: the checks run again)
    monkeypatch.setattr(lib, "fast_api", None)
    abi = [raised(r) for r in runs]
    assert fast == again == abi
    assert "closed Tensor" in str(fast[4][-1]) and "selfRef" in str(fast[4][-1])


def test_chains_of_in_place_calls_leak_nothing(lib):
    rng = np.random.default_rng(6)
    w, g = _normal(rng, (16, 8)), _normal(rng, (16, 8))
    gc.collect()
    lib.synchronize()
    before = counters(lib)
    wt, gt = _dev(w), _dev(g)
    for i in range(400):
        aclnn_py.inplace_add(wt, gt if i % 2 else g, -0.01, backend="sim")
        if i % 50 == 0:
            aclnn_py.inplace_copy(wt, g[0], backend="sim")
            aclnn_py.inplace_zero(gt, backend="sim")
            aclnn_py.inplace_fill_scalar(gt, 0.5, backend="sim")
            with pytest.raises(AclnnError):
                aclnn_py.inplace_add(wt, _dev(np.zeros((3, 8), np.float32)), backend="sim")
    assert np.isfinite(wt.numpy()).all()
    del wt, gt
    gc.collect()
    lib.synchronize()
    assert counters(lib) == before
