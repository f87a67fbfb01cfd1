"""The CPU backends' device memory (aclnn_py/_runtime/memory.py): the rule, and a result beyond it being
the same AclnnError 207001 from aclrtMalloc on numpy and on sim."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from aclnn_py._runtime import memory as _memory


def test_environment_variable_sets_the_limit(monkeypatch):
    monkeypatch.setenv(_memory.DEVICE_MEMORY_ENV, "1048576")
    assert _memory.device_memory() == 1048576


def test_else_a_fraction_of_the_machine(monkeypatch):
    monkeypatch.delenv(_memory.DEVICE_MEMORY_ENV, raising=False)
    known = [v for v in (_memory.physical_memory(), _memory.cgroup_memory_limit()) if v]
    assert known, "neither os.sysconf nor the cgroup tells the memory of this machine"
    assert _memory.device_memory() == min(int(min(known) * _memory.DEVICE_FRACTION), _memory.DEVICE_CAP)
    assert 0 < _memory.device_memory() <= _memory.physical_memory()
    monkeypatch.setenv(_memory.DEVICE_MEMORY_ENV, "")
    assert _memory.device_memory() == min(int(min(known) * _memory.DEVICE_FRACTION), _memory.DEVICE_CAP)


@pytest.mark.parametrize("value", ["0", "-5", "1e9", "lots", "12 ", str(2**64)])
def test_a_value_that_is_not_a_byte_count_means_no_memory(monkeypatch, value):
    # As in the simulator: a mistyped setting fails every allocation (naming the variable)
    # instead of silently running with another size.
    monkeypatch.setenv(_memory.DEVICE_MEMORY_ENV, value)
    assert _memory.device_memory() == 0


def test_cgroup_limit_files(tmp_path, monkeypatch):
    (tmp_path / "memory.max").write_text("max\n")
    (tmp_path / "memory").mkdir()
    (tmp_path / "memory" / "memory.limit_in_bytes").write_text("536870912\n")
    monkeypatch.setattr(_memory, "_CGROUP_ROOT", str(tmp_path))
    assert _memory.cgroup_memory_limit() == 536870912
    (tmp_path / "memory" / "memory.limit_in_bytes").write_text(str(2**63 - 4096))   # v1's "no limit"
    assert _memory.cgroup_memory_limit() is None


# Runs in a child with a 1 MiB device: a 4 MiB result fails, a 256 KiB one is computed. The
# inputs are zero-stride views, so they take no device memory worth counting.
_CHILD = """
import json, sys
import numpy as np
import aclnn_py

def outcome(side, backend):
    g = np.broadcast_to(np.float32(1), (1, 1, side + 2, side + 2))
    x = np.broadcast_to(np.float32(0), (1, 1, side, side))
    try:
        aclnn_py.reflection_pad2d_backward(g, x, [1, 1, 1, 1], backend=backend)
    except Exception as e:
        return [type(e).__name__, getattr(e, "status", None), getattr(e, "api", None), str(e)]
    return "ok"

print(json.dumps({b: [outcome(1024, b), outcome(256, b)] for b in sys.argv[1:]}))
"""


def test_a_result_beyond_the_device_memory_is_207001_on_every_backend(backends):
    env = dict(os.environ, ACLNN_PY_SIM_DEVICE_MEMORY=str(2**20))
    child = subprocess.run([sys.executable, "-c", _CHILD, *backends], env=env, capture_output=True, text=True,
                           timeout=120)
    assert child.returncode == 0, child.stderr
    for backend, (big, small) in json.loads(child.stdout).items():
        assert big[:3] == ["AclnnError", 207001, "aclrtMalloc"], (backend, big)
        assert str(4 * 2**20) in big[3], (backend, big)
        assert small == "ok", (backend, small)
