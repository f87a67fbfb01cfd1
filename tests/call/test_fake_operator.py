"""aclnn_py.call / prepare on an operator beyond the five, with a parameter of every kind:
tests/call/fake_ops.c (built here against the simulator's internal executor interface, so
phase 2 runs on the stream) and its header, installed as a custom operator package
(``$ASCEND_CUSTOM_OPP_PATH``). The cases (fake_operator_cases.py) run in a child pytest: the
package must be in the environment before the simulator loads, and the children run
operators from a library the main process never loads."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import build_fake_operator_package

HERE = Path(__file__).resolve().parent
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")


def test_fake_operator_package(sim_lib, tmp_path):
    if shutil.which("gcc") is None:
        (pytest.fail if IN_CI else pytest.skip)("gcc is needed to build the fake operator package")
    package = build_fake_operator_package(Path(sim_lib.toolkit.home), tmp_path / "package")
    env = dict(os.environ, ASCEND_CUSTOM_OPP_PATH=str(package), ACLNN_PY_BACKEND="sim")
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-x",
                           str(HERE / "fake_operator_cases.py")], cwd=HERE.parents[1], env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-3000:]
    assert " passed" in done.stdout and "skipped" not in done.stdout, done.stdout[-2000:]
