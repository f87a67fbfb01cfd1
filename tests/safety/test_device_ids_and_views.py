"""Out-of-range device ids (issue #26, point 6) and a small strided view of a huge buffer
(point 8): the same answer on every backend."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

import aclnn_py
from aclnn_py import AclnnError


@pytest.mark.parametrize("device", [2**31, 2**40, 2**64])
def test_a_device_id_beyond_int32_is_107001_on_every_backend(backend, device):
    before = aclnn_py.get_device()
    with aclnn_py.use_backend(backend):
        with pytest.raises(AclnnError) as info:
            aclnn_py.set_device(device)
    assert info.value.status == 107001 and info.value.api == "aclrtSetDevice", info.value
    assert str(device) in str(info.value)
    assert aclnn_py.get_device() == before  # nothing recorded


def test_a_device_id_beyond_int32_in_the_environment():
    done = subprocess.run([sys.executable, "-c", "import aclnn_py; aclnn_py.get_device()"], capture_output=True,
                          text=True, timeout=60, env=dict(os.environ, ACLNN_PY_DEVICE=str(2**31)))
    assert done.returncode == 1 and "ValueError: environment variable ACLNN_PY_DEVICE='2147483648'" in done.stderr, \
        done.stderr[-2000:]


# 36 elements whose strides span 2.24 GB (of never-touched pages) on a 1 GiB simulated device:
# the op functions copy the 36 elements, as numpy and aclnn_py.call give the answer.
HUGE_SPAN = r"""
import sys
import numpy as np
import aclnn_py

base = np.zeros(600_000_000, np.float32)
g = np.lib.stride_tricks.as_strided(base, (1, 1, 6, 6), (0, 0, 96_000_000 * 4, 16_000_000 * 4))
g[...] = np.arange(36, dtype=np.float32).reshape(1, 1, 6, 6)
x = np.zeros((1, 1, 4, 4), np.float32)
want = aclnn_py.reflection_pad2d_backward(np.ascontiguousarray(g), x, [1, 1, 1, 1], backend="numpy")
outcomes = []
for backend in ("numpy", "sim"):
    try:
        r = aclnn_py.reflection_pad2d_backward(g, x, [1, 1, 1, 1], backend=backend)
        outcomes.append(f"{backend} {'ok' if np.array_equal(r, want) else 'wrong'}")
    except aclnn_py.AclnnError as exc:
        outcomes.append(f"{backend} {exc.status}")
out = np.zeros_like(x)
aclnn_py.call("aclnnReflectionPad2dBackward", g, x, [1, 1, 1, 1], out, backend="sim")
outcomes.append(f"call {'ok' if np.array_equal(out, want) else 'wrong'}")
print(", ".join(outcomes))
"""


@pytest.mark.parametrize("fast", ["1", "0"], ids=["fast path", "abi path"])
def test_a_small_view_of_a_huge_buffer(sim_lib, fast):
    env = dict(os.environ, ACLNN_PY_SIM_DEVICE_MEMORY=str(1 << 30), ACLNN_PY_FAST=fast)
    done = subprocess.run([sys.executable, "-c", HUGE_SPAN], capture_output=True, text=True, timeout=60, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip() == "numpy ok, sim ok, call ok", done.stdout


def test_a_0d_array_is_0d_for_call_on_every_backend(sim_lib):
    """call() uploaded a 0-d array as 1-d on sim (NumPy's ascontiguousarray): the library then
    checked, and named, a shape the caller never passed."""
    x = np.zeros((1, 1, 4, 4), np.float32)
    messages = set()
    for backend in ("numpy", "sim"):
        with pytest.raises(AclnnError) as info:
            aclnn_py.call("aclnnReflectionPad2dBackward", np.array(1, np.float32), x, [1, 1, 1, 1], np.zeros_like(x),
                          backend=backend)
        messages.add(str(info.value))
    assert len(messages) == 1 and "(shapes [], [1, 1, 4, 4]" in messages.pop(), messages
