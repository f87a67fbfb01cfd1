"""The op functions' dispatch (``ops/_dispatch.py``): the fast entry's takes the common device
call itself (no stream, a backend named or current whose Library is loaded) and hands every
other call to ``dispatch_python``; results, errors and their notes are the same either way."""

from __future__ import annotations

import traceback

import numpy as np
import pytest

import aclnn_py
from aclnn_py import AclnnError, _fast
from aclnn_py.ops import _dispatch

GRAD = np.arange(64, dtype=np.float32).reshape(1, 1, 8, 8)
SELF = np.zeros((1, 1, 6, 6), np.float32)


def test_dispatch_is_the_entrys_where_it_is_built():
    entry = _fast.entry()
    assert _dispatch.dispatch is (_dispatch.dispatch_python if entry is None else entry.dispatch)


def test_the_current_backend_and_a_named_one_give_the_same(sim_lib):
    expected = aclnn_py.reflection_pad2d_backward(GRAD, SELF, 1, backend="numpy")
    named = aclnn_py.reflection_pad2d_backward(GRAD, SELF, 1, backend="sim")
    with aclnn_py.use_backend("sim"):
        current = aclnn_py.reflection_pad2d_backward(GRAD, SELF, 1)
    np.testing.assert_array_equal(named, expected)  # (exact: sums of two or four ints)
    np.testing.assert_array_equal(current, expected)


def test_other_calls_take_the_python_dispatch(sim_lib, monkeypatch):
    """A stream, an unknown keyword, a backend not loaded: dispatch_python's results and errors."""
    seen = []
    python = _dispatch.dispatch_python

    def spy(*args, **kwargs):
        seen.append(sorted(kwargs))
        return python(*args, **kwargs)

    if _fast.entry() is not None:
        _fast.entry().set_dispatch(spy, _dispatch.loader, _dispatch.failed, _dispatch._backend.get_backend)
    try:
        out = _dispatch.dispatch("sim", None, _dispatch_target, 3, stream=sim_lib.stream())
        assert out == ("called", 3)
        with pytest.raises(TypeError, match="unexpected keyword argument 'colour'"):
            _dispatch.dispatch("sim", None, _dispatch_target, 3, colour=1)
        with pytest.raises(ValueError, match="unknown backend 'tpu'"):
            _dispatch.dispatch("tpu", None, _dispatch_target, 3)
        if _fast.entry() is not None:
            assert seen == [["stream"], ["colour"], []]
    finally:
        if _fast.entry() is not None:
            _fast.entry().set_dispatch(python, _dispatch.loader, _dispatch.failed, _dispatch._backend.get_backend)


def _dispatch_target(lib, value):
    return ("called", value)


def test_an_error_of_the_fast_call_names_the_made_output_and_keeps_its_traceback(sim_lib):
    grad = np.ones((1, 2, 2, 2), np.float16)
    x = np.ones((1, 2, 4, 4), np.float32)
    with pytest.raises(AclnnError) as info:
        aclnn_py.avg_pool2d_backward(grad, x, [2], [2], [0], False, True, None, backend="sim")
    assert info.value.message.endswith("(gradInput is made with self's shape and dtype)")
    assert info.value.__suppress_context__ and info.value.__cause__ is None
    frames = [f.name for f in traceback.extract_tb(info.value.__traceback__)]
    assert frames[0] == "test_an_error_of_the_fast_call_names_the_made_output_and_keeps_its_traceback"
    assert len(frames) > 2  # (the library's raise, below the op function)


def test_a_call_without_a_backend_resolves_the_current_one_once(monkeypatch):
    """The entry hands dispatch_python the current backend's name (get_backend once per call),
    read again on every call: a change of ACLNN_PY_BACKEND takes effect on the next one."""
    entry = _fast.entry()
    if entry is None:
        pytest.skip("the fast entry is not built")
    seen, asked = [], []
    python, current = _dispatch.dispatch_python, _dispatch._backend.get_backend

    def spy(*args, **kwargs):
        seen.append(args[0])
        return python(*args, **kwargs)

    def counted():
        asked.append(1)
        return current()

    monkeypatch.setattr(_dispatch._backend, "get_backend", counted)  # (dispatch_python's resolve)
    entry.set_dispatch(spy, _dispatch.loader, _dispatch.failed, counted)
    try:
        monkeypatch.setenv("ACLNN_PY_BACKEND", "numpy")
        expected = aclnn_py.reflection_pad2d_backward(GRAD, SELF, 1, backend="numpy")
        seen.clear()
        asked.clear()
        np.testing.assert_array_equal(aclnn_py.reflection_pad2d_backward(GRAD, SELF, 1), expected)
        assert seen == ["numpy"] and len(asked) == 1
        monkeypatch.setenv("ACLNN_PY_BACKEND", "tpu")
        with pytest.raises(ValueError, match="unknown backend 'tpu'"):
            aclnn_py.reflection_pad2d_backward(GRAD, SELF, 1)
    finally:
        entry.set_dispatch(python, _dispatch.loader, _dispatch.failed, current)
