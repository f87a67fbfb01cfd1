"""Calls with aclScalar arguments (fastcall.c's SCALAR item: the helper makes the scalar from
its value and destroys it with the call) and with float or double parameters (its FLOAT_VALUE
item: passed in floating-point registers) on the fast entry's plans: planned after the first
call, a plan per value and type (the key holds them), the results of the ABI-mode path,
device-Tensor chains alike, and nothing leaked."""

from __future__ import annotations

import sys

import numpy as np
import pytest

import aclnn_py
from aclnn_py import Tensor, _fast

from helpers import assert_close
from test_entry import counters, lib  # noqa: F401  (the fixture: the entry on, or a CI failure)

ADDS = sys.modules["aclnn_py.ops.adds"]
ADD = sys.modules["aclnn_py.ops.add"]
FILL = sys.modules["aclnn_py.ops.inplace_fill_scalar"]
BN = sys.modules["aclnn_py.ops.batch_norm"]
UP = sys.modules["aclnn_py.ops.upsample_nearest2d"]


def _planned(module) -> list[bool]:
    return [planned for _, planned in module._aclnn.plans()]


@pytest.mark.parametrize("other, alpha", [(2.5, 3), (2, 0.5), (True, 1), (-7, -2)])
def test_a_scalar_call_is_planned_per_value_and_type(lib, other, alpha):
    ADDS._aclnn.clear()
    a = np.linspace(-3, 3, 64, dtype=np.float32).reshape(8, 8)
    expected = a + np.float32(other) * np.float32(alpha)
    lib.stream()  # (the thread's stream: made once, not a leak)
    before = counters(lib)
    first = aclnn_py.adds(a, other, alpha, backend="sim")
    again = aclnn_py.adds(a, other, alpha, backend="sim")
    assert _planned(ADDS) == [True], "the second call replays the plan the first recorded"
    other_value = aclnn_py.adds(a, 1.0, 1.0, backend="sim")  # another value: its own plan
    assert_close(other_value, a + 1, np.float32)
    for out in (first, again):
        assert_close(out, expected, np.float32)
    assert counters(lib) == before


def test_scalar_plans_on_device_tensors_and_in_place(lib):
    ADD._aclnn.clear()
    FILL._aclnn.clear()
    rng = np.random.default_rng(3)
    a, b = (rng.standard_normal((4, 33)).astype(np.float32) for _ in range(2))
    before = counters(lib)
    with Tensor.from_numpy(a, backend="sim") as at, Tensor.from_numpy(b, backend="sim") as bt:
        for _ in range(3):
            out = aclnn_py.add(at, bt, 0.25, backend="sim")
        assert _planned(ADD) == [True]
        assert_close(out.numpy(), a + 0.25 * b, np.float32)
        del out
    filled = np.zeros((3, 5), np.float32)
    for value in (1.5, 1.5, -2.0, -2.0):
        aclnn_py.inplace_fill_scalar(filled, value, backend="sim")
        np.testing.assert_array_equal(filled, np.full((3, 5), value, np.float32))
    assert sorted(_planned(FILL)) == [True, True]
    assert counters(lib) == before


def test_a_scalar_of_more_than_eight_bytes_is_not_planned(lib):
    """A complex128 scalar is made by the ABI-mode path (the helper's item holds 8 bytes)."""
    ADDS._aclnn.clear()
    a = np.ones(4, np.complex64)
    for _ in range(2):
        out = aclnn_py.adds(a, 1 + 2j, 1, backend="sim")
    assert_close(out, a + (1 + 2j), np.complex64)
    assert _planned(ADDS) in ([False], [])
    assert _fast.SCALAR == 8


def test_float_and_double_parameters_are_planned_per_value(lib, monkeypatch):
    """BatchNorm's double momentum and eps travel in floating-point registers: each value has
    its plan, whose results are the ABI-mode path's (eps changes them: a value lost or put in
    the wrong register shows)."""
    BN._aclnn.clear()
    rng = np.random.default_rng(5)
    x = rng.standard_normal((4, 3, 5, 5)).astype(np.float32)
    w, b = rng.random(3).astype(np.float32) + 0.5, rng.standard_normal(3).astype(np.float32)
    lib.stream()
    before = counters(lib)
    planned = {}
    for eps in (1e-5, 0.5, 1e-5, 0.5):
        planned[eps] = aclnn_py.batch_norm(x, w, b, None, None, True, 0.1, eps, backend="sim")
    assert sorted(_planned(BN)) == [True, True]
    monkeypatch.setattr(lib, "fast_api", None)  # the ABI-mode path
    for eps, got in planned.items():
        want = aclnn_py.batch_norm(x, w, b, None, None, True, 0.1, eps, backend="sim")
        for g, e in zip(got, want):
            assert (g is None) == (e is None)
            if g is not None:
                np.testing.assert_array_equal(g, e)
    monkeypatch.undo()
    assert counters(lib) == before


def test_a_float_parameter_on_device_tensors(lib):
    UP._aclnn.clear()
    x = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
    expected = x.repeat(2, axis=2).repeat(2, axis=3)
    with Tensor.from_numpy(x, backend="sim") as xt:
        for _ in range(3):
            out = aclnn_py.upsample_nearest2d(xt, [8, 8], backend="sim")
        assert _planned(UP) == [True]
        np.testing.assert_array_equal(out.numpy(), expected)
        del out


def test_call_plans_scalars_and_floats(lib):
    """``call`` describes the same items in its own plans (call.py's _plan_spec)."""
    from test_entry import CALL

    a = np.linspace(-1, 1, 32, dtype=np.float32)
    out = np.empty_like(a)
    lib.stream()
    before = counters(lib)
    for other, alpha in ((2.0, 1.5), (2.0, 1.5), (3, True), (3, True)):
        aclnn_py.call("aclnnAdds", a, other, alpha, out, backend="sim")
        assert_close(out, a + np.float32(other) * np.float32(alpha), np.float32)
    x = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
    grad = np.ones((1, 1, 8, 8), np.float32)
    grad_in = np.empty_like(x)
    for _ in range(2):
        aclnn_py.call("aclnnUpsampleNearest2dBackward", grad, [8, 8], [1, 1, 4, 4], 2.0, 2.0, grad_in, backend="sim")
        np.testing.assert_array_equal(grad_in, np.full_like(x, 4.0))
    planned = [name for name, ok in CALL._PLANS.plans() if ok]
    assert planned.count("aclnnAdds") == 2 and planned.count("aclnnUpsampleNearest2dBackward") == 1
    assert counters(lib) == before


def test_an_ndarray_written_in_place_beside_a_device_tensor(lib):
    """A call with a device Tensor and an ndarray it writes in place (InplaceAdd's selfRef,
    BatchNorm's running statistics) cannot leave its work queued (the ndarray is copied back
    after it): the helper's asynchronous call is not used, the ABI-mode path waits and copies
    back (the helper had refused it with ACLNN_ERR_INNER)."""
    a, b = np.ones(5, np.float32), np.arange(5, dtype=np.float32)
    x = np.random.default_rng(1).standard_normal((4, 3, 5)).astype(np.float32)
    stats = [np.zeros(3, np.float32), np.ones(3, np.float32)]
    expected_stats = [np.zeros(3, np.float32), np.ones(3, np.float32)]
    for _ in range(3):
        aclnn_py.batch_norm(x, None, None, *expected_stats, True, 0.3, 1e-5, backend="numpy")
    with Tensor.from_numpy(b, backend="sim") as bt, Tensor.from_numpy(x, backend="sim") as xt:
        for _ in range(3):
            aclnn_py.inplace_add(a, bt, 1.0, backend="sim")
            aclnn_py.batch_norm(xt, None, None, *stats, True, 0.3, 1e-5, backend="sim")
    np.testing.assert_array_equal(a, 1 + 3 * b)
    for got, want in zip(stats, expected_stats):
        assert_close(got, want, np.float32)
