"""The operators' kernels under AddressSanitizer + UBSan: the simulator built with them (CC
carries the flags), and the sample-style operator programs of tests/sim_c/ run against that
build (their results are checked by test_c_ops.py; here: no invalid access, no undefined
behaviour, no leak, and the programs' own checks pass)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from aclnn_py.sim import _build

SANITIZE = "-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"


@pytest.fixture(scope="module")
def asan_home(tmp_path_factory, sim_home):
    if shutil.which("gcc") is None:
        pytest.skip("gcc not installed")
    probe = subprocess.run(["gcc", "-print-file-name=libasan.so"], capture_output=True, text=True)
    runtime = probe.stdout.strip()
    if probe.returncode != 0 or "/" not in runtime:
        pytest.skip("this gcc has no AddressSanitizer runtime")
    home = tmp_path_factory.mktemp("asan") / "toolkit"
    mp = pytest.MonkeyPatch()
    mp.setenv("CC", f"gcc {SANITIZE}")
    try:
        _build.build(home)
    finally:
        mp.undo()
    return home, runtime


C_TESTS = Path(__file__).resolve().parents[1] / "sim_c"
OPERATOR_PROGRAMS = sorted(p.stem for p in C_TESTS.glob("*_test.cpp") if p.stem != "runtime_test")


@pytest.mark.parametrize("name", OPERATOR_PROGRAMS)
def test_operator_program_under_sanitizers(name, asan_home, build_c_programs, c_env):
    home, runtime = asan_home
    env = {**c_env, "LD_LIBRARY_PATH": str(home / "lib64"), "ASCEND_CUSTOM_PATH": str(home),
           "LD_PRELOAD": runtime, "ASAN_OPTIONS": "detect_leaks=1",
           "UBSAN_OPTIONS": "halt_on_error=1:print_stacktrace=1"}
    proc = subprocess.run([build_c_programs[name]], env=env, capture_output=True, text=True, timeout=600)
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, output[-6000:]
    assert "failures: 0" in output and "ERROR: AddressSanitizer" not in output and "runtime error" not in output, \
        output[-6000:]
