"""Each thread of a parallel region on a core of its own (aclnn_py._numpy.placement): the caller
held to its core and the workers to the others for the region, the caller's own affinity given
back after (on errors too), and nothing changed where there is no other core to use."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading
import time

import pytest

from aclnn_py._numpy import workers as _workers
from aclnn_py._numpy import placement as _placement
from aclnn_py._numpy.workers import in_parallel

pytestmark = pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="Linux's affinity calls")


def _cpu() -> int:
    return int(_placement._getcpu())


def _two_cores(allowed) -> None:
    if len(allowed) < 2:
        pytest.fail("this test needs a process that may use 2 cores (CI machines have them)")


def _region(fail: bool = False) -> dict[int, tuple[int, int, set[int]]]:
    """Runs a region of one part per worker; each part's (thread id, core, affinity)."""
    seen: dict[int, tuple[int, int, set[int]]] = {}
    lock = threading.Lock()

    def work(a: int, b: int) -> None:
        with lock:
            seen[a] = (threading.get_native_id(), _cpu(), os.sched_getaffinity(0))
        if fail:
            raise RuntimeError("part failed")

    in_parallel(_workers._WORKERS, work, min_per_thread=1)
    return seen


def test_the_caller_and_the_workers_run_on_cores_of_their_own():
    allowed = os.sched_getaffinity(0)
    _two_cores(allowed)
    for _ in range(20):
        seen = _region()
        caller = seen[0]
        assert caller[0] == threading.get_native_id()
        assert caller[2] == {caller[1]}, "the caller is held to its core for the region"
        workers = [v for k, v in seen.items() if k != 0]
        assert workers and all(w[2] == {w[1]} and w[1] != caller[1] and w[1] in allowed for w in workers)
        # (a worker may run two parts one after the other: count each worker thread once)
        cores = dict((w[0], w[1]) for w in workers)
        assert len(set(cores.values())) == min(len(cores), len(allowed) - 1), "workers spread over the other cores"
        assert os.sched_getaffinity(0) == allowed, "the caller's affinity is given back"


def test_the_callers_affinity_comes_back_when_a_part_fails():
    allowed = os.sched_getaffinity(0)
    with pytest.raises(RuntimeError, match="part failed"):
        _region(fail=True)
    assert os.sched_getaffinity(0) == allowed


def test_a_caller_held_to_some_cores_gets_that_set_back():
    allowed = sorted(os.sched_getaffinity(0))
    if len(allowed) < 3:
        subset = set(allowed)
    else:
        subset = set(allowed[:2])
    os.sched_setaffinity(0, subset)
    try:
        seen = _region()
        assert os.sched_getaffinity(0) == subset
        assert all(v[1] in subset for v in seen.values())
    finally:
        os.sched_setaffinity(0, set(allowed))


def _run(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=120)


def test_one_allowed_core_changes_nothing():
    # A process held to one core (taskset, a container's cpuset): one worker, one part, and no
    # affinity call at all (there is no other core to put anyone on).
    done = _run("""
        import os
        core = min(os.sched_getaffinity(0))
        os.sched_setaffinity(0, {core})
        from aclnn_py._numpy import placement as _placement, workers as _workers
        assert _workers._WORKERS == 1, _workers._WORKERS
        with _placement.pinned():
            assert os.sched_getaffinity(0) == {core}
        seen = []
        _workers.in_parallel(10, lambda a, b: seen.extend(range(a, b)), min_per_thread=1)
        assert sorted(seen) == list(range(10)) and os.sched_getaffinity(0) == {core}
        print("ok")
    """)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr


def test_without_sched_getcpu_nothing_is_pinned(monkeypatch):
    monkeypatch.setattr(_placement, "_getcpu", None)
    allowed = os.sched_getaffinity(0)
    with _placement.pinned():
        assert os.sched_getaffinity(0) == allowed
    seen = []
    in_parallel(10, lambda a, b: seen.extend(range(a, b)), min_per_thread=1)
    assert sorted(seen) == list(range(10)) and os.sched_getaffinity(0) == allowed


def test_a_worker_that_has_exited_is_dropped():
    # A registered id of a thread that is gone (a pool shut down): the next region tries to
    # place it, finds it gone and drops it, and still runs.
    _two_cores(os.sched_getaffinity(0))
    gone = threading.Thread(target=lambda: None)
    gone.start()
    gone.join()
    # join() returns once the Python thread is done; the system thread ends a moment later
    deadline = time.monotonic() + 30
    while os.path.exists(f"/proc/self/task/{gone.native_id}"):
        assert time.monotonic() < deadline, "the joined thread's system thread did not end"
        time.sleep(0.001)
    with _placement._lock:
        _placement._workers.append(gone.native_id)
    seen = _region()
    assert sorted(seen) == list(range(_workers._WORKERS))
    assert gone.native_id not in _placement._workers


def test_a_second_threads_region_meanwhile_is_left_alone():
    # Two of the user's threads in regions at once: the second is not held to its core (two
    # callers held to one core could not move apart), and the first gets its affinity back.
    allowed = os.sched_getaffinity(0)
    _two_cores(allowed)
    inside, leave = threading.Event(), threading.Event()
    seen = {}

    def first_region() -> None:
        def work(a: int, b: int) -> None:
            if a == 0:
                seen["held"] = os.sched_getaffinity(0)
                inside.set()
                assert leave.wait(30)

        in_parallel(_workers._WORKERS, work, min_per_thread=1)
        seen["after"] = os.sched_getaffinity(0)

    other = threading.Thread(target=first_region)
    other.start()
    try:
        assert inside.wait(30)
        assert len(seen["held"]) == 1
        with _placement.pinned():
            assert os.sched_getaffinity(0) == allowed
    finally:
        leave.set()
        other.join(30)
    assert seen["after"] == allowed
    _region()     # and the next region holds its threads again
    assert os.sched_getaffinity(0) == allowed


def test_no_sched_getcpu_where_the_platform_lacks_it(monkeypatch):
    import ctypes

    monkeypatch.delattr(os, "sched_setaffinity")
    assert _placement._sched_getcpu() is None
    monkeypatch.undo()

    def no_libc(*args, **kwargs):
        raise OSError("no C library to load")

    monkeypatch.setattr(ctypes, "CDLL", no_libc)
    assert _placement._sched_getcpu() is None


def test_a_caller_whose_cores_changed_meanwhile_is_let_go(monkeypatch):
    # The cores the caller had are no longer allowed when the region ends (a cpuset changed):
    # giving them back fails, the region still ends cleanly and the next one holds cores again.
    allowed = os.sched_getaffinity(0)
    _two_cores(allowed)
    real = os.sched_setaffinity

    def refuse_the_give_back(pid, mask):
        if pid == 0 and set(mask) == allowed:
            raise OSError(22, "Invalid argument")
        real(pid, mask)

    monkeypatch.setattr(os, "sched_setaffinity", refuse_the_give_back)
    try:
        with _placement.pinned():
            assert len(os.sched_getaffinity(0)) == 1
    finally:
        monkeypatch.undo()
        os.sched_setaffinity(0, allowed)
    _region()
    assert os.sched_getaffinity(0) == allowed


def test_a_core_a_worker_may_not_use_leaves_it_where_it_is():
    ready, stop = threading.Event(), threading.Event()

    def worker() -> None:
        _placement.register_worker()
        ready.set()
        stop.wait(30)

    t = threading.Thread(target=worker)
    t.start()
    try:
        assert ready.wait(30)
        with _placement._lock:
            _placement._place(t.native_id, 1 << 20)    # no such core
            assert t.native_id not in _placement._placed
            assert t.native_id in _placement._workers
    finally:
        stop.set()
        t.join(30)
    _region()   # and regions still run with its id registered (dropped once a region must move it)
