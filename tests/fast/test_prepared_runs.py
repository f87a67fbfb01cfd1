"""A prepared run in one crossing (``entry.c``'s Runner, issue #25 part 2): a run with phase 1's
key (NumPy arrays of the same geometry, the same values) is checked, copied in, run, waited for
and copied back by the entry; every other run takes the Python path, with its checks and
errors word for word; results and releases are the same on both."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import aclnn_py
import importlib

from aclnn_py import Tensor
from aclnn_py._convert import executor as _aclnn
from aclnn_py._fast import entry
from helpers import assert_close
from reference.reflection_pad2d_backward import reflection_pad2d_backward as pad_reference

PAD = "aclnnReflectionPad2dBackward"
call_module = importlib.import_module("aclnn_py.call")

pytestmark = pytest.mark.skipif(entry() is None, reason="the fast entry is not built")


def pad_case(rng, shape=(2, 3, 5, 6), padding=(1, 2, 2, 1)):
    x = rng.standard_normal(shape).astype(np.float32)
    go = rng.standard_normal(shape[:-2] + (shape[-2] + padding[2] + padding[3],
                                           shape[-1] + padding[0] + padding[1])).astype(np.float32)
    return go, x, list(padding)


@pytest.fixture
def python_path_counted(monkeypatch):
    """How many runs took the Python path (``Prepared._check``)."""
    seen = [0]
    check = call_module.Prepared._check

    def counted(self, values):
        seen[0] += 1
        return check(self, values)

    monkeypatch.setattr(call_module.Prepared, "_check", counted)
    return seen


def test_runs_with_phase_1s_key_take_one_crossing(sim_lib, python_path_counted):
    rng = np.random.default_rng(1)
    go, x, padding = pad_case(rng)
    out = np.zeros_like(x)
    with aclnn_py.prepare(PAD, go, x, padding, out, backend="sim") as run:
        assert run._runner is not None
        assert run(go, x, padding, out) is out  # the first run: the Python path (it makes the event)
        assert python_path_counted[0] == 1
        for _ in range(3):
            go2 = rng.standard_normal(go.shape).astype(np.float32)
            out2 = np.full_like(x, 9.0)
            assert run(go2, x, padding, out2) is out2
            assert_close(out2, pad_reference(go2, x, padding), np.float32)
        assert python_path_counted[0] == 1
        # The same with the entry's plans off: the Python path, the same result.
        previous = _aclnn.set_plans(False)
        try:
            out3 = np.zeros_like(x)
            run(go2, x, padding, out3)
        finally:
            _aclnn.set_plans(previous)
        assert python_path_counted[0] == 2
        np.testing.assert_array_equal(out3, out2)


def test_other_runs_take_the_python_path_and_its_errors(sim_lib, python_path_counted):
    rng = np.random.default_rng(2)
    go, x, padding = pad_case(rng)
    out = np.zeros_like(x)
    with aclnn_py.prepare(PAD, go, x, padding, out, backend="sim") as run:
        run(go, x, padding, out)
        with pytest.raises(ValueError, match="gradOutput must have phase 1's shape and dtype"):
            run(go[:1], x, padding, out)
        with pytest.raises(ValueError, match="padding differs"):
            run(go, x, [0, 0, 0, 0], out)
        with pytest.raises(TypeError, match="must be writable"):
            read_only = np.zeros_like(x)
            read_only.flags.writeable = False
            run(go, x, padding, read_only)
        with pytest.raises(TypeError, match="missing a required argument: 'gradInput'"):
            run(go, x, padding)
        # A non-contiguous input, the padding as a tuple, keywords: the Python path, which runs them.
        strided = np.asfortranarray(go)
        out2 = np.zeros_like(x)
        before = python_path_counted[0]
        run(strided, x, tuple(padding), out2)
        run(go, x, padding, gradInput=out2)
        assert python_path_counted[0] == before + 2
        assert_close(out2, pad_reference(go, x, padding), np.float32)
        errors = []
        worker = threading.Thread(target=lambda: errors.append(_raised(lambda: run(go, x, padding, out))))
        worker.start()
        worker.join()
        assert isinstance(errors[0], RuntimeError) and "thread that prepared it" in str(errors[0])
    with pytest.raises(ValueError, match="closed"):
        run(go, x, padding, out)


def test_a_run_after_device_work_waits_for_it(sim_lib):
    rng = np.random.default_rng(3)
    go, x, padding = pad_case(rng)
    out = np.zeros_like(x)
    with aclnn_py.prepare(PAD, go, x, padding, out, backend="sim") as run:
        run(go, x, padding, out)
        gt, xt = Tensor.from_numpy(go, backend="sim"), Tensor.from_numpy(x, backend="sim")
        device = aclnn_py.reflection_pad2d_backward(gt, xt, padding, backend="sim")
        del device  # (its memory waits for the stream: the run synchronises through the Library)
        assert sim_lib.has_pending()
        out2 = np.zeros_like(x)
        run(go, x, padding, out2)
        assert not sim_lib.has_pending()
        assert_close(out2, pad_reference(go, x, padding), np.float32)


def test_no_runner_for_what_it_does_not_run(sim_lib):
    rng = np.random.default_rng(4)
    go, x, padding = pad_case(rng)
    with Tensor.from_numpy(go, backend="sim") as gt, Tensor.from_numpy(x, backend="sim") as xt, \
            Tensor.empty(x.shape, np.float32, backend="sim") as ot:
        with aclnn_py.prepare(PAD, gt, xt, padding, ot, backend="sim") as run:
            assert run._runner is None
    with aclnn_py.prepare(PAD, np.asfortranarray(go), x, padding, np.zeros_like(x), backend="sim") as run:
        assert run._runner is None
    with aclnn_py.prepare(PAD, go, x, padding, np.zeros_like(x), backend="numpy") as run:
        assert run._runner is None


def _raised(fn):
    try:
        fn()
    except Exception as exc:  # noqa: BLE001 - the test looks at it
        return exc
    return None


def test_runs_in_one_crossing_release_everything_once(sim_lib):
    from aclnn_py._runtime import pool

    def counters():
        pool.trim_all()
        c = sim_lib.ffi.new("aclsimCounters *")
        sim_lib.call("aclsimGetCounters", c)
        return {f: getattr(c, f) for f, _ in sim_lib.ffi.typeof("aclsimCounters").fields}

    go, x, padding = pad_case(np.random.default_rng(5))
    out = np.zeros_like(x)
    aclnn_py.call(PAD, go, x, padding, out, backend="sim")  # stream and runtime set up
    sim_lib.synchronize()
    before = counters()
    run = aclnn_py.prepare(PAD, go, x, padding, out, backend="sim")
    for _ in range(4):
        run(go, x, padding, out)
    run.close()
    assert counters() == before
