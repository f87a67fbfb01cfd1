"""A wheel is built from the sources only: a file an earlier build left in build/ does not ship."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _tracked_files() -> list[str]:
    try:
        out = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z"], capture_output=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError) as exc:
        if os.environ.get("CI") == "true":
            raise
        pytest.skip(f"not a git checkout ({exc})")
    return [f for f in out.decode().split("\0") if f]


def test_stale_build_files_do_not_reach_the_wheel(tmp_path):
    source = tmp_path / "src"
    for name in _tracked_files():
        if (ROOT / name).is_file():
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, source / name)
    # setuptools builds into build/lib, or build/lib.<platform>-<implementation> for a wheel
    # tagged as platform-specific: leave stale files in both.
    for lib in ("lib", f"lib.{sysconfig.get_platform()}-{sys.implementation.cache_tag}"):
        stale = source / "build" / lib / "aclnn_py"
        (stale / "ops").mkdir(parents=True)
        (stale / "stale_leftover.py").write_text("raise RuntimeError('from an old build')\n")
        (stale / "ops" / "removed_operator.py").write_text("")

    wheels = tmp_path / "wheels"
    env = dict(os.environ, ACLNN_PY_SKIP_SIM="1", PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1")
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                           "-w", str(wheels), str(source)], capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (wheel,) = wheels.glob("aclnn_py-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "aclnn_py/_runtime/tensor.py" in names and "aclnn_py/_convert/executor.py" in names  # the real files are there
    assert not [n for n in names if "stale_leftover" in n or "removed_operator" in n], names
