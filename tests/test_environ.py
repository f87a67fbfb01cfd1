"""aclnn_py/_environ.py: an environment variable read per call, parsed only when it changed."""

import os

import pytest

from aclnn_py import _environ
from aclnn_py._runtime import memory as _memory
from aclnn_py._numpy import progress as _progress

NAME = "ACLNN_PY_TEST_ENVIRON_SETTING"


def _counting() -> tuple[_environ.Setting[int], list[str]]:
    parsed: list[str] = []

    def parse(text: str) -> int:
        parsed.append(text)
        if text == "bad":
            raise ValueError("bad value")
        return len(text)

    return _environ.Setting(NAME, parse), parsed


def test_a_value_is_parsed_once_and_again_when_it_changes(monkeypatch):
    monkeypatch.delenv(NAME, raising=False)
    setting, parsed = _counting()
    assert setting.get() == 0 and setting.get() == 0 and parsed == [""]
    monkeypatch.setenv(NAME, "abc")
    assert setting.get() == 3 and setting.get() == 3 and parsed == ["", "abc"]
    os.environ[NAME] = "abcde"  # set directly, not through monkeypatch
    assert setting.get() == 5
    del os.environ[NAME]
    assert setting.get() == 0 and parsed == ["", "abc", "abcde", ""]


def test_a_bad_value_raises_on_every_call_and_is_not_kept(monkeypatch):
    setting, parsed = _counting()
    monkeypatch.setenv(NAME, "bad")
    for _ in range(2):
        with pytest.raises(ValueError, match="bad value"):
            setting.get()
    assert parsed == ["bad", "bad"]
    monkeypatch.setenv(NAME, "ok")
    assert setting.get() == 2


def test_a_replaced_environ_mapping_is_still_read(monkeypatch):
    setting, _ = _counting()
    monkeypatch.setattr(os, "environ", {NAME: "four"})
    assert setting.raw() == "four" and setting.get() == 4


def test_the_device_memory_and_progress_settings_follow_the_environment(monkeypatch):
    monkeypatch.setenv(_memory.DEVICE_MEMORY_ENV, "123")
    assert _memory.device_memory() == 123
    monkeypatch.setenv(_memory.DEVICE_MEMORY_ENV, "0")
    with pytest.raises(Exception, match="out of device memory"):
        _memory.check_allocation(1)
    monkeypatch.setenv(_memory.DEVICE_MEMORY_ENV, "4096")
    _memory.check_allocation(4096)
    monkeypatch.setenv(_progress.ENV_VAR, "always")
    assert _progress.setting() is True
    monkeypatch.setenv(_progress.ENV_VAR, "never")
    assert _progress.setting() is False
