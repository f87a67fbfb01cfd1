"""A failure of queued device work names the operator call that queued it, and
ACLNN_PY_BLOCKING=1 makes the call itself raise it (issue #25, point 3).

The failing work: max_unpool2d_backward with an index outside its plane, which CANN's kernel
(and the simulator's) only finds when it runs: 507015 at the next synchronisation."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import aclnn_py
from aclnn_py import AclnnError, Tensor
from aclnn_py._runtime import queued

GRAD = np.ones((1, 1, 4, 4), np.float32)
SELF = np.zeros((1, 1, 2, 2), np.float32)
BAD_INDICES = np.full((1, 1, 2, 2), 99, np.int64)


def _here() -> str:
    """``file:line`` of the caller's next line."""
    frame = inspect.currentframe().f_back  # type: ignore[union-attr]
    return f"{frame.f_code.co_filename}:{frame.f_lineno + 1}"


@pytest.fixture
def tensors(sim_lib, monkeypatch):
    monkeypatch.delenv(queued.BLOCKING_VAR, raising=False)
    sim_lib.synchronize()  # (nothing an earlier test queued on this thread is counted here)
    made = [Tensor.from_numpy(a, backend="sim") for a in (GRAD, SELF, BAD_INDICES)]
    yield made
    for t in made:
        t.close()


def test_a_failure_found_later_names_the_call_that_queued_it(tensors):
    grad, self, indices = tensors
    where = _here()
    out = aclnn_py.max_unpool2d_backward(grad, self, indices, [4, 4], backend="sim")
    after = aclnn_py.reflection_pad2d_backward(grad, self, [1, 1, 1, 1], backend="sim")  # queued behind it
    with pytest.raises(AclnnError) as info:
        np.asarray(out)
    assert info.value.status == 507015
    assert f"(queued by aclnnMaxUnpool2dBackward called at {where} in " in info.value.message
    assert "1 more call queued since the last synchronisation" in info.value.message
    out.close()
    after.close()
    # The next synchronisation has nothing left to blame.
    fine = aclnn_py.reflection_pad2d_backward(grad, self, [1, 1, 1, 1], backend="sim")
    assert np.asarray(fine).shape == SELF.shape


def test_a_prepared_run_is_named_too(tensors):
    grad, self, indices = tensors
    out = Tensor.empty(SELF.shape, np.float32, backend="sim")
    with aclnn_py.prepare("aclnnMaxUnpool2dBackward", grad, self, indices, [4, 4], out, backend="sim") as run:
        where = _here()
        run(grad, self, indices, [4, 4], out)
        with pytest.raises(AclnnError) as info:
            np.asarray(out)
    assert info.value.status == 507015 and f"queued by aclnnMaxUnpool2dBackward called at {where}" in info.value.message
    out.close()


@pytest.mark.parametrize("path", ["function", "call"])
def test_blocking_mode_raises_at_the_call(tensors, monkeypatch, path):
    grad, self, indices = tensors
    monkeypatch.setenv(queued.BLOCKING_VAR, "1")
    out = Tensor.empty(SELF.shape, np.float32, backend="sim")
    with pytest.raises(AclnnError) as info:
        if path == "function":
            where = _here()
            aclnn_py.max_unpool2d_backward(grad, self, indices, [4, 4], backend="sim")
        else:
            where = _here()
            aclnn_py.call("aclnnMaxUnpool2dBackward", grad, self, indices, [4, 4], out, backend="sim")
    assert info.value.status == 507015
    assert f"queued by aclnnMaxUnpool2dBackward called at {where}" in info.value.message
    out.close()


def test_blocking_mode_is_the_numpy_backends_own(monkeypatch):
    """On numpy every call is synchronous: the same error at the call, with or without it."""
    for value in ("0", "1"):
        monkeypatch.setenv(queued.BLOCKING_VAR, value)
        with pytest.raises(AclnnError) as info:
            aclnn_py.max_unpool2d_backward(GRAD, SELF, BAD_INDICES, [4, 4], backend="numpy")
        assert info.value.status == 507015


def test_a_bad_setting_is_named(sim_lib, monkeypatch):
    monkeypatch.setenv(queued.BLOCKING_VAR, "yes")
    with pytest.raises(ValueError, match="ACLNN_PY_BLOCKING='yes': expected 0 or 1"):
        queued.blocking()


def test_only_device_failures_with_queued_calls_are_attributed():
    calls = [("aclnnA", "a.py:1 in f"), ("aclnnB", "b.py:2 in g")]
    device = AclnnError(507015, "aclrtSynchronizeStream", "aclnnB: index out of range")
    named = queued.attributed(device, calls)
    assert named.message == "aclnnB: index out of range (queued by aclnnB called at b.py:2 in g; 1 more call " \
                            "queued since the last synchronisation)"
    assert (named.status, named.api) == (507015, "aclrtSynchronizeStream")
    unnamed = queued.attributed(AclnnError(507015, "aclrtSynchronizeStream", ""), calls[:1])
    assert unnamed.message == "queued by aclnnA called at a.py:1 in f"
    other = AclnnError(107000, "aclrtSynchronizeStream", "no such stream")
    assert queued.attributed(other, calls) is other and queued.attributed(device, []) is device


def test_the_remembered_calls_stay_bounded():
    calls: list[tuple[str, object]] = []
    for _ in range(queued.KEPT * 3):
        queued.remember(calls, "aclnnX")
    # (a site is kept as (code, line) and made text only when an error names it)
    assert len(calls) <= queued.KEPT and queued.site_text(calls[-1][1]).startswith(__file__)
