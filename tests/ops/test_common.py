"""What the operator files share: argument coercion (aclnn_py/_convert/values.py), checks
(ops/_checks.py), plans and worker threads (_numpy/plans.py, _numpy/workers.py)."""

from __future__ import annotations

import os
import signal

import numpy as np
import pytest

import aclnn_py
from aclnn_py._numpy import plans as _plans
from aclnn_py._numpy import workers as _workers
from aclnn_py._numpy.workers import in_parallel


def test_in_parallel_covers_every_index_once_and_reraises():
    seen = []
    in_parallel(10, lambda a, b: seen.extend(range(a, b)), min_per_thread=1)
    assert sorted(seen) == list(range(10))
    seen.clear()
    in_parallel(10, lambda a, b: seen.extend(range(a, b)), min_per_thread=100)  # one part
    assert seen == list(range(10))

    def fail(a, b):
        raise ValueError(f"part {a}:{b}")

    with pytest.raises(ValueError, match="part"):
        in_parallel(10, fail, min_per_thread=1)


def test_in_parallel_serial_runs_the_same_parts_in_order_on_the_calling_thread():
    import threading

    calls = []
    in_parallel(10, lambda a, b: calls.append((a, b, threading.get_ident())), serial=True)
    parts = max(1, min(_workers._WORKERS, 10))
    bounds = [10 * i // parts for i in range(parts + 1)]
    assert calls == [(a, b, threading.get_ident()) for a, b in zip(bounds, bounds[1:])]


def test_in_parallel_runs_the_first_part_on_the_calling_thread():
    import threading

    threads = {}
    in_parallel(8, lambda a, b: threads.__setitem__(a, threading.get_ident()), min_per_thread=1)
    assert threads[0] == threading.get_ident()
    assert all(ident != threading.get_ident() for start, ident in threads.items() if start != 0)


def test_in_parallel_waits_for_the_workers_when_the_callers_part_fails():
    # The caller's part raises at once; the other parts still finish before the error reaches
    # the caller (they write into arrays the caller owns).
    import threading
    import time

    done = []
    caller = threading.get_ident()

    def work(a, b):
        if threading.get_ident() == caller:
            raise RuntimeError("caller's part")
        time.sleep(0.05)
        done.append((a, b))

    with pytest.raises(RuntimeError, match="caller's part"):
        in_parallel(8, work, min_per_thread=1)
    assert len(done) == _workers._WORKERS - 1 if _workers._WORKERS > 1 else not done


def test_a_forked_child_gets_a_pool_of_its_own():
    in_parallel(4, lambda a, b: None)  # the parent's pool exists
    pid = os.fork()
    if pid == 0:  # the child: the inherited pool has no threads; a new one must serve
        signal.alarm(30)  # a hang (a pool without threads) ends the child instead of the test run
        try:
            seen = []
            in_parallel(4, lambda a, b: seen.extend(range(a, b)))
            os._exit(0 if sorted(seen) == [0, 1, 2, 3] and _workers._pool_pid == os.getpid() else 1)
        except BaseException:
            os._exit(2)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0


# -- the numpy backend's plan cache -------------------------------------------------------------

def test_signature_keys_exact_types():
    a = np.zeros((2, 3), np.float32)
    key = _plans.signature((a, [1, 2], (3,), 4, True, None))
    assert key is not None and key == _plans.signature((a.copy(), (1, 2), [3], 4, True, None))
    # True == 1 == 1.0 with equal hashes: each kind keys apart, or is not cached at all
    assert _plans.signature((a, [1, 2], (3,), 1, True, None)) != _plans.signature((a, [1, 2], (3,), True, True, None))
    for uncached in ([1.0, 2], [True, 2], [np.int64(1)], np.int64(1), np.float64(1.0), "x", a.view(np.matrix),
                     a.tolist()):
        assert _plans.signature((a, uncached)) is None, uncached
    # a float keys by its bits, apart from the int and bool it equals
    floats = [1.0, 1, True, 0.0, -0.0, float("nan"), -float("nan"), 2.5]
    assert len({_plans.signature((a, f), floats=True) for f in floats}) == len(floats)
    assert _plans.signature((a, 2.5), floats=True) == _plans.signature((a, 5 / 2), floats=True)
    # a list of bools (outputMask) keys by type and values, apart from the ints it equals
    mask = _plans.signature((a, [True, False, True]))
    assert mask is not None and mask == _plans.signature((a, (True, False, True)))
    assert mask != _plans.signature((a, [1, 0, 1])) and mask != _plans.signature((a, [True, True, True]))
    # a list of ndarrays (an aclTensorList) keys by each one's geometry, only where asked for
    b = np.zeros((2, 5), np.float16)
    assert _plans.signature(([a, b], 1)) is None
    listed = _plans.signature(([a, b], 1), tensor_lists=True)
    assert listed is not None and listed == _plans.signature(((a.copy(), b + 1), 1), tensor_lists=True)
    for other in ([a, b.astype(np.float32)], [a, b.T], [a], [b, a], [a, b, b], [a, None], [a, b.tolist()],
                  [a, b.view(np.matrix)]):
        assert _plans.signature((other, 1), tensor_lists=True) != listed, other
    assert _plans.signature(([a, None], 1), tensor_lists=True) is None
    for uncached in ([True, 1], [True, np.bool_(False)], [False, 0.0]):
        assert _plans.signature((a, uncached)) is None, uncached
    # shape, dtype and strides each count
    assert len({_plans.signature((b,)) for b in (a, a.T.copy(), a.astype(np.float64), a[:, ::2].copy(), a[:, ::2])}) == 5


def _counting_op(fail_on=(), floats=False):
    made = []

    def prepare(x, n):
        made.append((x.shape, n))
        if n in fail_on:
            raise ValueError(f"n = {n}")
        return _plans.plan(lambda x, n: x * n, x.nbytes), (x, n)

    return _plans.NumpyOp(prepare, floats=floats), made


def test_a_plan_is_made_once_per_signature_and_errors_are_not_kept():
    op, made = _counting_op(fail_on=(3,))
    x = np.ones(4, np.float32)
    assert op(x, 2).tolist() == [2.0] * 4 and op(x * 5, 2).tolist() == [10.0] * 4  # data differ: same plan
    assert made == [((4,), 2)]
    op(x[:2], 2)                                  # a new shape: checked
    assert len(made) == 2
    for _ in range(2):                            # an error is raised each time, never kept
        with pytest.raises(ValueError, match="n = 3"):
            op(x, 3)
    assert len(made) == 4
    op(x, 2.0)                                    # not cached (a float): prepared every time
    op(x, 2.0)
    assert len(made) == 6


def test_an_op_of_floats_caches_a_plan_per_float_bits():
    op, made = _counting_op(floats=True)
    x = np.ones(4, np.float32)
    op(x, 2)
    op(x, 2.0)                                    # a float: a plan of its own, apart from the int 2
    op(x, 2.0)
    assert len(made) == 2
    op(x, -0.0)
    op(x, 0.0)                                    # equal to -0.0, other bits: another plan
    assert len(made) == 4
    op(x, np.float64(2.0))                        # a NumPy scalar: not cached, prepared every time
    op(x, np.float64(2.0))
    assert len(made) == 6


def test_the_plan_cache_is_bounded(monkeypatch):
    monkeypatch.setattr(_plans, "_CACHED_PLANS", 3)
    op, made = _counting_op()
    x = np.ones(2, np.float32)
    for n in range(5):
        op(x, n)
    assert len(op._plans) == 3 and list(op._plans) == [_plans.signature((x, n)) for n in (2, 3, 4)]
    op(x, 0)                                      # the oldest went first
    assert len(made) == 6


def test_forget_plans():
    op, made = _counting_op()
    x = np.ones(2, np.float32)
    op(x, 1)
    _plans.forget_plans()
    op(x, 1)
    assert len(made) == 2


def test_a_cached_valid_call_does_not_let_a_wrong_type_through():
    """The checks of a call whose arguments only look equal to a cached valid one still run."""
    x = np.zeros((1, 1, 4, 4), np.float32)
    g = np.ones((1, 1, 2, 2), np.float32)
    aclnn_py.avg_pool2d_backward(g, x, [2, 2], [2, 2], [0, 0], False, True, 0, backend="numpy")
    for kernel in ([2.0, 2], [True, 2]):
        with pytest.raises(TypeError, match="kernelSize"):
            aclnn_py.avg_pool2d_backward(g, x, kernel, [2, 2], [0, 0], False, True, 0, backend="numpy")
    with pytest.raises(TypeError, match="ceilMode"):
        aclnn_py.avg_pool2d_backward(g, x, [2, 2], [2, 2], [0, 0], 0, True, 0, backend="numpy")
    with pytest.raises(aclnn_py.AclnnError, match="cubeMathType"):
        aclnn_py.avg_pool2d_backward(g, x, [2, 2], [2, 2], [0, 0], False, True, 0, 9, backend="numpy")


def test_only_calls_that_may_be_long_read_the_progress_setting(monkeypatch):
    """A quick plan (fewer than QUICK_BYTES touched) runs without looking up ACLNN_PY_PROGRESS;
    any other call reads it (here a value it refuses, to tell)."""
    monkeypatch.setenv("ACLNN_PY_PROGRESS", "yes please")
    x = np.zeros((1, 1, 4, 4), np.float32)
    aclnn_py.reflection_pad2d_backward(np.ones((1, 1, 6, 6), np.float32), x, 1, backend="numpy")
    big = np.zeros((1, 1, 512, 512), np.float32)
    with pytest.raises(ValueError, match="ACLNN_PY_PROGRESS"):
        aclnn_py.reflection_pad2d_backward(np.ones((1, 1, 514, 514), np.float32), big, 1, backend="numpy")
