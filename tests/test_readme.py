"""Every snippet and tour command of README.md runs (on sim), so the README stays true.

The two top commands (install, run the tests) are what .ci/run itself executes.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import build_fake_operator_package

ROOT = Path(__file__).resolve().parents[1]
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")
README = (ROOT / "README.md").read_text()
BLOCKS = re.findall(r"```(python|console)\n(.*?)```", README, re.S)
PYTHON_BLOCKS = [body for kind, body in BLOCKS if kind == "python"]
# The install and test commands are the first two console blocks; .ci/run runs them itself.
TOUR_COMMANDS = [body for kind, body in BLOCKS if kind == "console"][2:]


def _env() -> dict[str, str]:
    env = dict(os.environ, ACLNN_PY_BACKEND="sim")
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    return env


def test_readme_has_the_two_commands():
    consoles = [body.strip() for kind, body in BLOCKS if kind == "console"]
    assert consoles[0] == "python -m pip install -e . && python examples/quickstart.py"
    assert consoles[1] == ('python -m pip install -e ".[test]" torch==2.13.0 && python -m pytest -q --cov '
                           '&& python scripts/coverage_gate.py')
    ci = (ROOT / ".ci" / "run").read_text()
    assert "python examples/quickstart.py" in ci and consoles[1] in ci


def test_ci_stops_at_any_failed_command(tmp_path):
    """bash's set -e ignores a failure inside an && list unless it is the list's last command:
    every && list of .ci/run must end with `|| exit $?`, and such a line does fail the script."""
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    lists = [line for line in ci if "&&" in line and not line.lstrip().startswith("#")]
    assert lists and all(line.rstrip().endswith("|| exit $?") for line in lists), lists
    script = tmp_path / "run"
    script.write_text("set -euo pipefail\ntrue && false && true || exit $?\necho reached\n")
    done = subprocess.run(["bash", str(script)], capture_output=True, text=True)
    assert done.returncode == 1 and "reached" not in done.stdout


@pytest.mark.parametrize("index", range(len(PYTHON_BLOCKS)))
def test_python_snippet_runs(sim_lib, index, tmp_path):
    script = tmp_path / f"snippet{index}.py"
    script.write_text(PYTHON_BLOCKS[index])
    env = _env()
    if 'backend="npu"' in PYTHON_BLOCKS[index]:
        # A block for an Atlas host: npu on the simulator's toolkit laid out as CANN, with the
        # tests' operators beyond the five (a stand-in aclnnAdd) as a custom operator package.
        if shutil.which("gcc") is None:
            (pytest.fail if IN_CI else pytest.skip)("gcc is needed to build the stand-in operator package")
        home = Path(sim_lib.toolkit.home)
        env.update(ACLNN_PY_ASCEND_HOME=str(home),
                   ASCEND_CUSTOM_OPP_PATH=str(build_fake_operator_package(home, tmp_path / "package")))
    done = subprocess.run([sys.executable, str(script)], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize("index", range(len(TOUR_COMMANDS)))
def test_tour_commands_run(sim_lib, index, tmp_path):
    # Each block runs in one bash, stopping at the first failing line; the build goes to tmp.
    body = TOUR_COMMANDS[index].replace("/tmp/aclnn-examples", shlex.quote(str(tmp_path / "build")))
    done = subprocess.run(["bash", "-euo", "pipefail", "-c", body], cwd=ROOT, env=_env(), capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
