"""The binding across fork(): a child forked after calls on sim runs operators again (the
runtime gives a child no device and none of the parent's streams; the binding forgets its
per-thread state there and opens them anew), and the parent is unaffected."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

CHILD = r"""
import os, sys
import numpy as np, aclnn_py
g = np.ones((1, 1, 6, 6), np.float32); x = np.zeros((1, 1, 4, 4), np.float32)
want = aclnn_py.reflection_pad2d_backward(g, x, [1, 1, 1, 1], backend="numpy")
assert np.allclose(aclnn_py.reflection_pad2d_backward(g, x, [1, 1, 1, 1], backend="sim"), want)
kept = aclnn_py.Tensor.from_numpy(g, backend="sim")          # a device Tensor alive across the fork
pid = os.fork()
if pid == 0:
    try:
        r = aclnn_py.reflection_pad2d_backward(g, x, [1, 1, 1, 1], backend="sim")
        with aclnn_py.Tensor.from_numpy(g, backend="sim") as t:
            assert np.allclose(t.numpy(), g)
        os._exit(0 if np.allclose(r, want) else 3)
    except BaseException as e:
        print("child:", repr(e)[:300], file=sys.stderr)
        os._exit(2)
_, status = os.waitpid(pid, 0)
assert os.waitstatus_to_exitcode(status) == 0, os.waitstatus_to_exitcode(status)
assert np.allclose(aclnn_py.reflection_pad2d_backward(g, x, [1, 1, 1, 1], backend="sim"), want)
assert np.allclose(kept.numpy(), g)
kept.close()
print("ok")
"""


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork() on this platform")
def test_a_forked_child_runs_operators_again(sim_lib):
    done = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stdout + done.stderr
