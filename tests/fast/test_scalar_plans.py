"""Calls with aclScalar arguments on the fast entry's plans (fastcall.c's SCALAR item: the
helper makes the scalar from its value and destroys it with the call): planned after the first
call, a plan per scalar value and type (the key holds them), the results of the ABI-mode path,
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
