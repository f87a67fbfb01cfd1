"""The C++ programs of tests/sim_c/ build like the official samples and run cleanly."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

C_TESTS = Path(__file__).resolve().parents[1] / "sim_c"

PROGRAMS = sorted(p.stem for p in C_TESTS.glob("*.cpp"))
SUMMARY = re.compile(r"^runtime_test: (\d+) checks, (\d+) failed$", re.M)


@pytest.mark.parametrize("devices", ["1", "2"])
def test_runtime_program(run_c_program, devices):
    proc = run_c_program("runtime_test", env={"ACLSIM_DEVICE_COUNT": devices})
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, output
    summary = SUMMARY.search(proc.stdout)
    assert summary is not None, output
    checks, failed = map(int, summary.groups())
    assert failed == 0 and checks >= 100, output
    assert "FAILED" not in proc.stdout
    assert "check every counter is back to zero: ok" in proc.stdout
    # Every expected error came with a recent error message.
    assert "no recent error message" not in proc.stdout


def test_overflow_status_is_the_process_s(run_c_program):
    """With two devices, an overflow on one shows in a query on the other (an A2's status)."""
    proc = run_c_program("overflow_test", env={"ACLSIM_DEVICE_COUNT": "2"})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "check an overflow on device 1 shows on device 0: ok" in proc.stdout


@pytest.mark.parametrize("name", PROGRAMS)
def test_program_exits_cleanly(name, run_c_program):
    proc = run_c_program(name)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "FAILED" not in proc.stdout


@pytest.mark.parametrize("name", ["runtime_test", "capture_test", "overflow_test"])
def test_runtime_program_under_valgrind(c_env, build_c_programs, name):
    """No invalid access, no uninitialised read, nothing definitely or indirectly lost."""
    if shutil.which("valgrind") is None:
        pytest.skip("valgrind not installed")
    proc = subprocess.run(
        ["valgrind", "--error-exitcode=99", "--leak-check=full", "--errors-for-leak-kinds=definite,indirect",
         build_c_programs[name]],
        env=c_env, capture_output=True, text=True, timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-6000:]
    assert "ERROR SUMMARY: 0 errors" in proc.stderr


def test_runtime_program_with_sanitizers(sim_home, c_env, tmp_path):
    """The runtime test and the simulator sources under AddressSanitizer + UBSan."""
    from aclnn_py.sim import _build

    if shutil.which("gcc") is None or shutil.which("g++") is None:
        pytest.skip("gcc/g++ not installed")
    probe = subprocess.run(["gcc", "-fsanitize=address", "-x", "c", "-", "-o", str(tmp_path / "probe")],
                           input="int main(void){return 0;}", capture_output=True, text=True)
    if probe.returncode != 0:
        pytest.skip("this gcc cannot link AddressSanitizer programs")
    include = Path(sim_home) / "include"
    sources = [str(p) for sub in (*_build.SIM_SOURCES, "ops") for p in sorted((_build.SRC_DIR / sub).glob("*.c"))]
    objects = []
    for source in sources:
        obj = tmp_path / (Path(source).parent.name + "_" + Path(source).stem + ".o")
        subprocess.run(["gcc", "-std=c11", "-O1", "-g", "-fsanitize=address,undefined", "-fno-omit-frame-pointer",
                        "-pthread", f"-I{include}", f"-I{_build.SRC_DIR}", f"-I{_build.generated_include_dir(sim_home)}",
                        "-c", source, "-o", str(obj)], check=True)
        objects.append(str(obj))
    exe = tmp_path / "runtime_test_asan"
    subprocess.run(["g++", "-std=c++11", "-g", "-fsanitize=address,undefined", f"-I{include}", f"-I{include}/aclnn",
                    str(C_TESTS / "runtime_test.cpp"), *objects, "-pthread", "-lm", "-o", str(exe)], check=True)
    proc = subprocess.run([str(exe)], capture_output=True, text=True, timeout=300,
                          env={**c_env, "ASAN_OPTIONS": "detect_leaks=1",
                               "UBSAN_OPTIONS": "halt_on_error=1:print_stacktrace=1"})
    assert proc.returncode == 0, (proc.stdout[-3000:], proc.stderr[-6000:])
    assert SUMMARY.search(proc.stdout).group(2) == "0"
