"""Fixtures for the simulator's C-level tests: the toolkit home and the C++ programs in
tests/sim_c/, built the way the official aclnn samples are (CMake, ASCEND_CUSTOM_PATH,
include/ and include/aclnn, libraries linked by absolute path from lib64/).

* ``sim_home``          the toolkit home, built first if missing or older than the sources
* ``build_c_programs``  {program name: executable path} for every tests/sim_c/*.cpp (linked
                        like the samples: -DCMAKE_SKIP_RPATH=TRUE, no rpath, so they need
                        ``c_env``; this process's environment is left alone, or the loader
                        path would make the simulator look like an installed CANN to later tests)
* ``c_env``             the environment they run in: LD_LIBRARY_PATH=<home>/lib64, ASCEND_CUSTOM_PATH
* ``run_c_program``     run one of them in ``c_env``

``compile_c_programs()`` is the plain, cached function behind ``build_c_programs``.
"""

from __future__ import annotations

import atexit
import functools
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")
REPO = Path(__file__).resolve().parents[2]
C_TESTS = REPO / "tests" / "sim_c"


def _missing(tool: str) -> None:
    message = f"{tool} is needed to build the simulator's C tests"
    if IN_CI:
        pytest.fail(message)
    pytest.skip(message)


@functools.lru_cache(maxsize=None)
def toolkit_home() -> str:
    """Build the toolkit if needed (needs a C compiler) and return its home."""
    from aclnn_py import sim

    return sim.ensure_built()


def c_program_env(home: str) -> dict[str, str]:
    env = dict(os.environ)
    lib64 = str(Path(home) / "lib64")
    env["LD_LIBRARY_PATH"] = lib64 + (":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else "")
    env["ASCEND_CUSTOM_PATH"] = home
    return env


@functools.lru_cache(maxsize=None)
def compile_c_programs() -> dict[str, str]:
    """Configure and build tests/sim_c with CMake into a temporary directory (once per
    session) and return {program name: executable path}."""
    for tool in ("cmake", "g++"):
        if shutil.which(tool) is None:
            _missing(tool)
    home = toolkit_home()
    build_dir = Path(tempfile.mkdtemp(prefix="aclnn_py-sim_c-"))
    atexit.register(shutil.rmtree, build_dir, ignore_errors=True)
    env = c_program_env(home)
    configure = ["cmake", "-S", str(C_TESTS), "-B", str(build_dir), "-DCMAKE_CXX_COMPILER=g++",
                 "-DCMAKE_SKIP_RPATH=TRUE"]
    for argv in (configure, ["cmake", "--build", str(build_dir), "-j", "2"]):
        proc = subprocess.run(argv, env=env, capture_output=True, text=True)
        if proc.returncode != 0:
            raise RuntimeError(f"{' '.join(argv)} failed:\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}")
    programs = {}
    for source in sorted(C_TESTS.glob("*.cpp")):
        exe = build_dir / "bin" / source.stem
        if not exe.is_file():
            raise RuntimeError(f"{source.name} did not produce {exe}")
        programs[source.stem] = str(exe)
    return programs


@pytest.fixture(scope="session")
def sim_home() -> str:
    try:
        return toolkit_home()
    except Exception as exc:  # no compiler, or the sources do not compile
        if IN_CI:
            raise
        pytest.skip(f"the simulator toolkit cannot be built here: {exc}")


@pytest.fixture(scope="session")
def build_c_programs(sim_home) -> dict[str, str]:
    return compile_c_programs()


@pytest.fixture(scope="session")
def c_env(sim_home) -> dict[str, str]:
    """The environment a C program needs: LD_LIBRARY_PATH and ASCEND_CUSTOM_PATH set to the home."""
    return c_program_env(sim_home)


@pytest.fixture(scope="session")
def run_c_program(sim_home, build_c_programs):
    """run_c_program(name, *args, timeout=120, env=None) -> subprocess.CompletedProcess (text);
    ``env`` adds variables (e.g. ACLSIM_DEVICE_COUNT) to the program's environment."""

    def run(name: str, *args: str, timeout: float = 120, env: dict | None = None) -> subprocess.CompletedProcess:
        return subprocess.run([build_c_programs[name], *args], env={**c_program_env(sim_home), **(env or {})},
                              capture_output=True, text=True, timeout=timeout)

    return run
