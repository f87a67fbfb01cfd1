"""The discoverable surface: ``--version``, help text without reStructuredText markup, bench
parameters under the operators' Python names, compare's default backends."""

from __future__ import annotations

import re

import numpy as np
import pytest

import aclnn_py
from aclnn_py import _compare
from aclnn_py._runtime import loader
from aclnn_py.__main__ import COMMANDS, parser, plain
from aclnn_py._ffi.discovery import BackendUnavailable
from aclnn_py.tools import bench


def _output_of(capsys, *argv: str) -> str:
    with pytest.raises(SystemExit) as info:
        parser().parse_args(list(argv))
    assert info.value.code == 0
    return capsys.readouterr().out


def test_version(capsys):
    assert _output_of(capsys, "--version").strip() == f"aclnn_py {aclnn_py.__version__}"


@pytest.mark.parametrize("argv", [(), *((name,) for name in COMMANDS)], ids=["top", *COMMANDS])
def test_help_has_no_markup(capsys, argv):
    text = _output_of(capsys, *argv, "--help")
    assert text.strip()
    assert "``" not in text and not re.search(r"::$", text, re.M)
    assert not re.search(r"(?<![\w*])\*\w[^*\n]*\*(?![\w*])", text), text


def test_plain():
    assert plain("Run ``--warmup`` calls; it *is* numpy, N*C*H stays::\n\n    code") == \
        "Run --warmup calls; it is numpy, N*C*H stays:\n\n    code"
    assert plain("An example::\n") == "An example:\n"
    assert plain(None) == ""


def test_bench_names_are_the_python_ones(capsys):
    assert "kernel_size=3" in _output_of(capsys, "bench", "--help")
    call = bench.make_call("avg_pool2d_backward", (1, 2, 9, 9), params={"kernel_size": 3, "stride": 3, "padding": 0})
    assert call.args[0].shape == (1, 2, 3, 3)
    with pytest.raises(ValueError, match="has no parameter kernel;.*kernel_size=3"):
        bench.make_call("avg_pool2d_backward", params={"kernel": 3})


def test_compare_defaults_to_the_simulator_without_an_npu(sim_lib):
    x = np.random.default_rng(0).standard_normal((1, 2, 4, 4)).astype(np.float32)
    g = np.ones((1, 2, 2, 2), np.float32)
    result = aclnn_py.compare(aclnn_py.avg_pool2d_backward, g, x, 2, 2, 0, False, True, None)
    assert result.backends == ("sim", "numpy") and result.passed


def test_default_backends(monkeypatch):
    monkeypatch.setattr(loader, "loaded_backends", lambda: ())
    monkeypatch.setattr(loader, "npu_present", lambda: True)
    assert _compare.default_backends() == ("npu", "numpy")

    def unavailable(name):
        raise BackendUnavailable(f"no {name} here")

    monkeypatch.setattr(loader, "npu_present", lambda: False)
    monkeypatch.setattr(loader, "library", unavailable)
    with pytest.raises(BackendUnavailable, match=r"no NPU, and the simulator does not load \(no sim here\)"):
        _compare.default_backends()
