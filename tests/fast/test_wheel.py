"""The wheel built where a compiler and the Python headers exist: it carries the fast entry, an
extension on CPython's stable ABI, so it is tagged ``cp311-abi3-<platform>``, and the installed
package replays plans through it. (tests/test_packaging.py covers the ``ACLNN_PY_SKIP_SIM=1``
wheel: no native code, ``py3-none-<platform>``, the ABI-mode path.)"""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile

from helpers import copy_package_sources

RUN = """\
import sys
import numpy as np
import aclnn_py
from aclnn_py import _fast
assert _fast.entry() is not None and _fast.entry().__file__.startswith(sys.argv[1]), _fast.entry()
g, x = np.ones((1, 1, 6, 6), np.float32), np.zeros((1, 1, 4, 4), np.float32)
want = aclnn_py.reflection_pad2d_backward(g, x, [1, 1, 1, 1], backend="numpy")
for _ in range(3):
    assert (aclnn_py.reflection_pad2d_backward(g, x, [1, 1, 1, 1], backend="sim") == want).all()
assert sys.modules["aclnn_py.ops.reflection_pad2d_backward"]._aclnn.plans() == [(None, True)]
print("ok")
"""


def test_wheel_with_the_entry(tmp_path):
    src = copy_package_sources(tmp_path / "src")
    env = {k: v for k, v in os.environ.items() if not k.startswith("ACLNN_PY_") and k != "PYTHONPATH"}
    env.update(PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1")
    env.pop("COVERAGE_PROCESS_START", None)
    pip = [sys.executable, "-m", "pip"]
    done = subprocess.run(pip + ["wheel", "-q", "--no-deps", "--no-build-isolation", "-w", str(tmp_path / "dist"),
                                 str(src)], capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    wheel = next((tmp_path / "dist").glob("*.whl"))
    _, _, python, abi, platform = wheel.stem.split("-")
    assert (python, abi) == ("cp311", "abi3") and platform != "any", wheel.name
    names = zipfile.ZipFile(wheel).namelist()
    assert "aclnn_py/_fast/_entry.abi3.so" in names and "aclnn_py/_fast/libaclnn_py_fast.so" in names
    target = tmp_path / "site"
    done = subprocess.run(pip + ["install", "-q", "--no-deps", "--target", str(target), str(wheel)],
                          capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    done = subprocess.run([sys.executable, "-c", RUN, str(target)], capture_output=True, text=True,
                          env=dict(env, PYTHONPATH=str(target)), cwd=tmp_path, timeout=300)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stdout + done.stderr
