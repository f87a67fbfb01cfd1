"""ACLNN_PY_PROGRESS: a progress line on stderr for long numpy-backend calls."""

from __future__ import annotations

import time

import numpy as np
import pytest

import aclnn_py
from aclnn_py.ops import _dispatch as _dispatch
from aclnn_py._numpy import progress as _progress


@pytest.mark.parametrize("value, expected", [("", False), ("0", False), ("never", False), ("1", True),
                                             ("Always", True), ("auto", None)])
def test_setting(monkeypatch, value, expected):
    monkeypatch.setenv(_progress.ENV_VAR, value)
    assert _progress.setting() is expected


def test_setting_refuses_other_values(monkeypatch):
    monkeypatch.setenv(_progress.ENV_VAR, "yes please")
    with pytest.raises(ValueError, match="ACLNN_PY_PROGRESS='yes please'"):
        _progress.setting()


def _slow(x):
    time.sleep(0.8)
    return x


_slow.__module__ = "aclnn_py.ops.slow_op"


def test_a_long_numpy_call_shows_progress_when_asked(monkeypatch, capsys):
    monkeypatch.setenv(_progress.ENV_VAR, "always")
    assert _dispatch.dispatch("numpy", _slow, None, 7) == 7
    err = capsys.readouterr().err
    assert "slow_op on numpy: running (0." in err
    assert err.endswith("\r")  # the line is erased afterwards

    monkeypatch.setenv(_progress.ENV_VAR, "0")
    _dispatch.dispatch("numpy", _slow, None, 7)
    assert capsys.readouterr().err == ""


def test_a_short_call_shows_nothing(monkeypatch, capsys):
    monkeypatch.setenv(_progress.ENV_VAR, "always")
    x = np.zeros((1, 1, 4, 4), np.float32)
    aclnn_py.avg_pool2d_backward(np.ones((1, 1, 2, 2), np.float32), x, 2, 2, 0, False, True, None, backend="numpy")
    assert capsys.readouterr().err == ""


def test_unknown_length_line():
    class Stream:
        text = ""

        def write(self, s):
            self.text += s

        def flush(self):
            pass

        def isatty(self):
            return False

    stream = Stream()
    with _progress.Progress("op", None, enabled=True, after=0, stream=stream) as p:  # type: ignore[arg-type]
        p.update(0)
    assert stream.text.startswith("\rop: running (0.0 s)") and stream.text.endswith("\r")
