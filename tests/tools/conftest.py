"""Running ``python -m aclnn_py ...`` in a child process, in a predictable environment."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

# Variables that would steer backend choice or discovery away from what a test sets up.
_STEERING = ("ACLNN_PY_BACKEND", "ACLNN_PY_ASCEND_HOME", "ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME",
             "ACLNN_PY_DEVICE", "ACLSIM_DEVICE_COUNT", "ACLSIM_SOC_NAME")


@pytest.fixture
def cli():
    """``cli(*args, env={...}) -> CompletedProcess`` of ``python -m aclnn_py *args``."""

    def run(*args: str, env: dict[str, str] | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
        child_env = {k: v for k, v in os.environ.items() if k not in _STEERING}
        child_env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH", "")) if p)
        child_env.update(env or {})
        return subprocess.run([sys.executable, "-m", "aclnn_py", *args], capture_output=True, text=True,
                              timeout=timeout, env=child_env, cwd=REPO)

    return run
