"""Prepared executors misused (issue #26, point 4): CANN's parameter names as keywords (an
operator's parameter named ``self``); on numpy, a run with other shapes, dtypes or list values
than phase 1's, or after ``close()``, refused as on sim (same exception, same message);
``close()`` from another thread while a run is in progress waits for it."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import aclnn_py

OP = "aclnnReflectionPad2dBackward"
G = np.arange(36, dtype=np.float32).reshape(1, 1, 6, 6)
X = np.zeros((1, 1, 4, 4), np.float32)
PAD = [1, 1, 1, 1]


def test_cann_parameter_names_as_keywords(backend):
    want = aclnn_py.reflection_pad2d_backward(G, X, PAD, backend="numpy")
    out = np.zeros_like(X)
    with aclnn_py.prepare(OP, gradOutput=G, self=X, padding=PAD, gradInput=out, backend=backend) as run:
        run(gradOutput=G, self=X, padding=PAD, gradInput=out)
        np.testing.assert_array_equal(out, want)
        out[...] = 0
        run(G, self=X, padding=PAD, gradInput=out)
        np.testing.assert_array_equal(out, want)


def _refusal(backend, args):
    out = np.zeros_like(X)
    with aclnn_py.prepare(OP, G, X, PAD, out, backend=backend) as run:
        with pytest.raises(Exception) as info:
            run(*args)
    return type(info.value), str(info.value)


@pytest.mark.parametrize("args", [
    (np.ones((1, 1, 8, 8), np.float32), np.zeros((1, 1, 6, 6), np.float32), PAD, np.zeros((1, 1, 6, 6), np.float32)),
    (G.astype(np.float16), X.astype(np.float16), PAD, np.zeros_like(X, np.float16)),
    (np.ones((1, 1, 4, 8), np.float32), X, [2, 2, 0, 0], np.zeros_like(X)),
    (G, X, [0, 2, 1, 1], np.zeros_like(X)),
    (G, X, PAD, None),
], ids=["shapes", "dtypes", "padding and shape", "padding", "output None"])
def test_numpy_refuses_what_phase_1_did_not_see_as_sim_does(sim_lib, args):
    on_sim = _refusal("sim", args)
    assert on_sim[0] is ValueError, on_sim
    assert _refusal("numpy", args) == on_sim


def test_a_run_after_close_is_refused_on_every_backend(backends):
    refusals = set()
    for backend in backends:
        out = np.zeros_like(X)
        run = aclnn_py.prepare(OP, G, X, PAD, out, backend=backend)
        run.close()
        run.close()  # (once; the second does nothing)
        with pytest.raises(ValueError) as info:
            run(G, X, PAD, out)
        refusals.add(str(info.value))
    assert refusals == {f"{OP}: this prepared executor is closed"}


# close() on another thread at a moment of a loop of runs, 60 times (before the fix 11-18 of
# them failed: 100000, 561000): every run either
# completes with the right result or is refused as closed, and nothing is left behind.
CLOSE_RACE = r"""
import threading, time
import numpy as np
import aclnn_py
from aclnn_py._runtime import loader

lib = loader.library("sim")
rng = np.random.default_rng(5)
g = rng.standard_normal((4, 8, 66, 66)).astype(np.float32)
x = np.zeros((4, 8, 64, 64), np.float32)
want = aclnn_py.reflection_pad2d_backward(g, x, [1, 1, 1, 1], backend="numpy")
bad, refused = [], 0
for race in range(60):
    out = np.zeros_like(x)
    run = aclnn_py.prepare("aclnnReflectionPad2dBackward", g, x, [1, 1, 1, 1], out, backend="sim")
    run(g, x, [1, 1, 1, 1], out)  # (one run, so the closing thread finds it in progress)
    closer = threading.Timer(0.0002 * (race % 25), run.close)
    closer.start()
    try:
        for _ in range(200):
            out[...] = 0
            run(g, x, [1, 1, 1, 1], out)
            if not np.allclose(out, want, atol=1e-5):
                bad.append("wrong result")
                break
    except ValueError as exc:
        refused += 1
        if "closed" not in str(exc):
            bad.append(repr(exc)[:200])
    except Exception as exc:
        bad.append(repr(exc)[:200])
    closer.join()
lib.synchronize()
c = lib.ffi.new("aclsimCounters *")
lib.call("aclsimGetCounters", c)
print(len(bad), refused, c.executors, c.device_blocks, bad[:3])
"""


def test_close_from_another_thread_waits_for_the_run(sim_lib):
    try:
        done = subprocess.run([sys.executable, "-c", CLOSE_RACE], capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"hung: {(exc.stderr or b'')[-2000:]!r}")
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    failures, refused, executors, blocks, examples = done.stdout.strip().split(" ", 4)
    assert failures == "0", done.stdout
    assert int(refused) >= 40, done.stdout  # the races did close during the loop
    assert (executors, blocks) == ("0", "0"), done.stdout
