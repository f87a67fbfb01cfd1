"""The wheel, built and installed the way an Atlas host without the simulator installs it
(``ACLNN_PY_SKIP_SIM=1``): tagged ``py3-none-<platform>``, carrying LICENSE and the binding's
headers, and running an operator on ``npu`` against a CANN home (here: the simulator's
libraries under CANN's layout, built by the installed package into a directory of its own)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from helpers import copy_package_sources

RUN_ON_NPU = """\
import json, sys
import numpy as np
import aclnn_py
from aclnn_py import sim
out = aclnn_py.reflection_pad2d_backward(np.ones((1, 1, 6), np.float32), np.zeros((1, 1, 4), np.float32),
                                         [1, 1, 0, 0], backend="npu")
try:
    sim.home()
    sim_state = "built"
except sim.SimNotBuiltError:
    sim_state = "not built"
print(json.dumps({"out": out.tolist(), "file": aclnn_py.__file__, "include": aclnn_py.get_include(),
                  "sim": sim_state}))
"""


@pytest.fixture(scope="module")
def skip_sim_install(tmp_path_factory):
    """(the wheel, the --target directory it was installed into), built with ACLNN_PY_SKIP_SIM=1
    from a copy of the sources (pip builds in the source tree: keep the worktree clean)."""
    root = tmp_path_factory.mktemp("packaging")
    src = copy_package_sources(root / "src")
    env = dict(os.environ, ACLNN_PY_SKIP_SIM="1", PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1")
    pip = [sys.executable, "-m", "pip"]
    done = subprocess.run(pip + ["wheel", "-q", "--no-deps", "--no-build-isolation", "-w", str(root / "dist"),
                                 str(src)], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    wheel = next((root / "dist").glob("*.whl"))
    target = root / "site"
    done = subprocess.run(pip + ["install", "-q", "--no-deps", "--target", str(target), str(wheel)],
                          capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    return wheel, target


def _child_env(target: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("ACLNN_PY_", "ASCEND_")) and k not in ("PYTHONPATH", "LD_LIBRARY_PATH")}
    env.update(PYTHONPATH=str(target), **extra)
    return env


def test_wheel_tag_license_and_headers(skip_sim_install):
    wheel, _ = skip_sim_install
    name, version, python, abi, platform = wheel.stem.split("-")
    assert (python, abi) == ("py3", "none") and platform != "any", wheel.name
    names = zipfile.ZipFile(wheel).namelist()
    assert any(n.endswith(".dist-info/licenses/LICENSE") or n.endswith(".dist-info/LICENSE") for n in names)
    license_text = next(zipfile.ZipFile(wheel).read(n) for n in names if n.endswith("/LICENSE"))
    assert b"Apache License" in license_text and b"Version 2.0" in license_text
    assert "aclnn_py/include/acl/acl.h" in names and "aclnn_py/include/aclnn/acl_meta.h" in names
    assert not any("/toolkit/" in n for n in names)  # ACLNN_PY_SKIP_SIM: no simulator built
    assert not any(n.endswith(".so") for n in names)  # nor the fast path's helper: the ABI-mode path


def test_npu_runs_without_the_simulator(skip_sim_install, tmp_path):
    """The installed package has no simulator. Its ``python -m aclnn_py.sim build --out DIR``
    (what ``info`` advises) builds a toolkit with CANN's layout elsewhere; pointed at that
    directory as the CANN home, ``npu`` runs an operator."""
    _, target = skip_sim_install
    home = tmp_path / "cann"
    done = subprocess.run([sys.executable, "-m", "aclnn_py.sim", "build", "--out", str(home)], capture_output=True,
                          text=True, env=_child_env(target), cwd=target, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    env = _child_env(target, ACLNN_PY_ASCEND_HOME=str(home))
    done = subprocess.run([sys.executable, "-c", RUN_ON_NPU], capture_output=True, text=True, env=env,
                          cwd=target, timeout=120)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.splitlines()[-1])
    assert result["out"] == [[[1.0, 2.0, 2.0, 1.0]]]
    assert Path(result["file"]).is_relative_to(target)
    assert result["include"] == str(target / "aclnn_py" / "include") and result["sim"] == "not built"


def test_info_says_what_is_missing(skip_sim_install):
    _, target = skip_sim_install
    env = _child_env(target, ACLNN_PY_ASCEND_HOME=str(target / "no-cann"))
    done = subprocess.run([sys.executable, "-m", "aclnn_py", "info"], capture_output=True, text=True, env=env,
                          cwd=target, timeout=120)
    assert done.returncode == 0, done.stderr  # numpy is usable
    text = done.stdout
    assert "sim    NOT USABLE: simulator not built" in text and "python -m aclnn_py.sim build" in text
    assert "npu    NOT USABLE: no CANN toolkit found" in text and str(target / "no-cann") in text
