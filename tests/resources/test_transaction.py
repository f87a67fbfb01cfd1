"""The one resource layer (aclnn_py._runtime.resources.Transaction) on its own: exactly once, newest
first, every release run whatever the others do, the first error raised, ownership passed on,
after-stream releases handed to the library in one bundle."""

from __future__ import annotations

import threading

import pytest

from aclnn_py._runtime import tensor
from aclnn_py._runtime.resources import Transaction, quietly, run_all


class Log:
    """Releases that record what they were given (and may fail)."""

    def __init__(self) -> None:
        self.released: list[object] = []

    def release(self, handle: object) -> None:
        self.released.append(handle)

    def failing(self, error: BaseException):
        def release(handle: object) -> None:
            self.released.append(handle)
            raise error
        return release


class FakeLibrary:
    """What a transaction needs of a Library: ``defer(release, nbytes)``."""

    def __init__(self, error: BaseException | None = None, run_before_raising: bool = False) -> None:
        self.deferred: list[tuple[object, int]] = []
        self.error = error
        self.run_before_raising = run_before_raising

    def defer(self, release, nbytes: int = 0) -> None:
        self.deferred.append((release, nbytes))
        if self.error is not None:
            if self.run_before_raising:  # as Library.defer does when its bound makes it synchronise
                release()
            raise self.error


def test_success_releases_every_handle_once_newest_first():
    log = Log()
    with Transaction() as tx:
        for h in range(5):
            tx.add(log.release, h)
        assert len(tx) == 5
        assert log.released == []  # nothing before the end
    assert log.released == [4, 3, 2, 1, 0]
    assert len(tx) == 0
    tx.end()  # ending again releases nothing
    assert log.released == [4, 3, 2, 1, 0]


def test_hold_is_add_in_one_call():
    log = Log()
    with Transaction() as tx:
        tx.add(log.release, "a")
        tx.hold((log.release, "b", False, 0))
        tx.add(log.release, "c")
    assert log.released == ["c", "b", "a"]


def test_an_error_in_the_block_releases_everything_and_propagates():
    log = Log()
    with pytest.raises(ZeroDivisionError):
        with Transaction() as tx:
            tx.add(log.release, 1)
            tx.add(log.failing(OSError("release failed")), 2)
            tx.add(log.release, 3)
            1 / 0
    assert log.released == [3, 2, 1]  # the failing release did not skip the one after it


def test_failing_releases_do_not_skip_the_others_and_the_first_is_raised():
    log = Log()
    first, second = OSError("first"), ValueError("second")
    with pytest.raises(OSError) as info:
        with Transaction() as tx:
            tx.add(log.release, 1)
            tx.add(log.failing(second), 2)
            tx.add(log.release, 3)
            tx.add(log.failing(first), 4)  # released first: newest first
    assert info.value is first
    assert log.released == [4, 3, 2, 1]


def test_keyboard_interrupt_inside_the_block():
    log = Log()
    with pytest.raises(KeyboardInterrupt):
        with Transaction() as tx:
            tx.add(log.release, 1)
            tx.add(log.release, 2)
            raise KeyboardInterrupt
    assert log.released == [2, 1]


def test_keyboard_interrupt_in_a_release_still_runs_the_rest():
    log = Log()
    with pytest.raises(KeyboardInterrupt):
        with Transaction() as tx:
            tx.add(log.release, 1)
            tx.add(log.failing(KeyboardInterrupt()), 2)
            tx.add(log.release, 3)
    assert log.released == [3, 2, 1]
    assert len(tx) == 0


def test_the_blocks_error_wins_over_a_release_interrupted():
    log = Log()
    with pytest.raises(ZeroDivisionError):
        with Transaction() as tx:
            tx.add(log.failing(KeyboardInterrupt()), 1)
            1 / 0
    assert log.released == [1]


def test_keep_passes_everything_on_success_only():
    log = Log()
    with Transaction() as tx:
        tx.add(log.release, 1)
        tx.keep()
    assert log.released == []
    with pytest.raises(RuntimeError):
        with Transaction() as tx:
            tx.add(log.release, 2)
            tx.keep()
            raise RuntimeError
    assert log.released == [2]
    # keep applies to the end it precedes only
    tx = Transaction()
    tx.add(log.release, 3)
    tx.keep()
    tx.end()
    tx.add(log.release, 4)
    tx.end()
    assert log.released == [2, 4]


def test_detach_passes_one_handle_on():
    log = Log()
    a, b, c = object(), object(), object()
    with Transaction() as tx:
        tx.add(log.release, a)
        tx.add(log.release, b)
        tx.add(log.release, c)
        tx.detach(a)  # not the newest
        tx.detach(c)  # the newest
        with pytest.raises(ValueError, match="does not hold"):
            tx.detach(a)
    assert log.released == [b]


def test_detach_takes_the_newest_registration_of_a_handle():
    log = Log()
    other = Log()
    h = object()
    with Transaction() as tx:
        tx.add(log.release, h)
        tx.add(other.release, h)
        tx.detach(h)
    assert log.released == [h] and other.released == []


def test_after_stream_releases_wait_in_one_deferred_bundle():
    log, lib = Log(), FakeLibrary()
    tx = Transaction()
    tx.add(log.release, "memory 1", True, 100)
    tx.add(log.release, "descriptor 1")
    tx.add(log.release, "memory 2", True, 20)
    tx.add(log.release, "descriptor 2")
    tx.end(defer_to=lib)  # type: ignore[arg-type]
    assert log.released == ["descriptor 2", "descriptor 1"]  # now
    [(bundle, nbytes)] = lib.deferred
    assert nbytes == 120
    bundle()
    assert log.released == ["descriptor 2", "descriptor 1", "memory 2", "memory 1"]
    bundle()  # a bundle runs once
    assert len(log.released) == 4


def test_a_deferred_bundle_swallows_errors_and_runs_everything():
    log, lib = Log(), FakeLibrary()
    tx = Transaction()
    tx.add(log.release, 1, True)
    tx.add(log.failing(OSError("late")), 2, True)
    tx.end(defer_to=lib)  # type: ignore[arg-type]
    lib.deferred[0][0]()  # run by the library after the stream: no caller to take the error
    assert log.released == [2, 1]


def test_no_after_stream_handles_nothing_deferred():
    log, lib = Log(), FakeLibrary()
    tx = Transaction()
    tx.add(log.release, 1)
    tx.end(defer_to=lib)  # type: ignore[arg-type]
    assert log.released == [1] and lib.deferred == []


def test_after_stream_handles_are_released_now_without_a_library():
    log = Log()
    with Transaction() as tx:
        tx.add(log.release, 1, True, 8)
        tx.add(log.release, 2)
    assert log.released == [2, 1]


@pytest.mark.parametrize("ran_already", [False, True])
def test_a_failing_defer_still_releases_once_and_raises(ran_already):
    log, error = Log(), RuntimeError("queued work failed")
    lib = FakeLibrary(error, run_before_raising=ran_already)
    tx = Transaction()
    tx.add(log.release, "memory", True, 4)
    tx.add(log.release, "descriptor")
    with pytest.raises(RuntimeError) as info:
        tx.end(defer_to=lib)  # type: ignore[arg-type]
    assert info.value is error
    assert log.released == ["descriptor", "memory"]


def test_the_blocks_error_wins_over_a_failing_defer():
    log = Log()
    lib = FakeLibrary(RuntimeError("defer"))
    tx = Transaction()
    tx.add(log.release, "memory", True)
    error = KeyboardInterrupt()
    tx.end(error, lib)  # type: ignore[arg-type]  # returns: the caller re-raises its own error
    assert log.released == ["memory"]


def test_threads_each_own_their_transactions():
    log_lock = threading.Lock()
    released: list[tuple[int, int]] = []

    def release(handle: tuple[int, int]) -> None:
        with log_lock:
            released.append(handle)

    def work(thread: int) -> None:
        for _ in range(200):
            with Transaction() as tx:
                for i in range(5):
                    tx.add(release, (thread, i))

    threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(released) == 4 * 200 * 5
    for thread in range(4):
        mine = [i for t, i in released if t == thread]
        assert mine == [4, 3, 2, 1, 0] * 200  # each thread's own order, newest first


def test_helpers():
    seen = []
    quietly(lambda: seen.append(1))
    quietly(lambda: 1 / 0)  # dropped
    error = OSError("x")

    def fail() -> None:
        seen.append("fail")
        raise error

    assert run_all([lambda: seen.append(2), fail, lambda: seen.append(3)]) is error
    assert seen == [1, 3, "fail", 2]
    assert run_all([]) is None
    assert tensor.Transaction is Transaction  # the one mechanism, re-exported where it was
