"""Which core each thread of a parallel region runs on (Linux; elsewhere nothing is done).

The numpy backend splits a call into one part for the calling thread and one for each pool
worker (``_common.in_parallel``).  Those threads hand NumPy's GIL back and forth at every NumPy
call, and a thread woken by another is placed by Linux's wake-up balancing, which, on cores
whose load has decayed during a pause, puts it on the waker's core.  Both threads then queue on
one core while the other idles, until the load balancer splits them some tens of milliseconds
later.  Measured here (2 vCPUs, Linux 6.18, gradInput of a 3x3 convolution (8,128,28,28),
three rounds of 12 calls after a 150 ms pause): the first 4-5 calls took 10-12 ms, with the
caller and the worker on the same core and each 4-5 ms in the run queue; back to back 6 ms.
OpenBLAS and OpenMP avoid it by spinning their threads after each call; Python threads cannot.

So for the length of a region, ``pinned()`` holds the calling thread to the core it is on and
each worker to another of the cores the caller may use; on leaving, the caller gets its own
affinity back (the workers keep theirs until a region needs other ones).  The same case then
took 6.1-6.9 ms from the first call after the pause.  Against the code before, 150 ms pause
then 20 ms of calls, medians of two processes each: resnet 3x3 (8,64,56,56) 25.6-27.2 -> 14.8
ms, conv1d k5 (16,64,1024) 15.4-16.9 -> 7.7, conv3d k3 (2,16,16,32,32) 11.8-11.9 -> 7.2-7.3,
max_unpool2d (8,64,56,56) 2.1 -> 1.1-1.2.  The cost: 3 system calls per region (regions are
>= ~0.1 ms of work, ``_common.MIN_PARALLEL_ELEMENTS``), and on a loaded machine a held thread
cannot flee a core another process uses: with one busy-looping process beside it, back to
back, resnet 3x3 28.1-28.5 -> 31.6-31.7 ms, transposed k4 s2 10.8-10.9 -> 11.5-12.0, avg_pool2d
k3 s2 3.1 -> 3.9 (but max_unpool2d 2.3-2.4 -> 1.5).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import threading
from collections.abc import Callable, Iterator

__all__ = ["forget_workers", "pinned", "register_worker"]


def _sched_getcpu() -> Callable[[], int] | None:
    """libc's ``sched_getcpu`` (the core the calling thread runs on, -1 on error), or None."""
    if not hasattr(os, "sched_setaffinity"):
        return None
    try:
        function = ctypes.CDLL(None, use_errno=True).sched_getcpu
    except (OSError, AttributeError):
        return None
    function.restype = ctypes.c_int
    function.argtypes = []
    return function


_getcpu = _sched_getcpu()
# The state below is read and written under _lock.
_lock = threading.Lock()
_workers: list[int] = []        # native thread ids of the pool's workers, in the order they started
_placed: dict[int, int] = {}    # worker id -> the core it was last held to
_others: list[int] = []         # the cores of the workers in the latest region
_holding = False                # whether a region holds its threads to cores now


def _new_lock_in_child() -> None:
    """In a forked child: a new lock (a parent thread may have held this one: the child's
    first region would wait for ever), no workers (the parent's do not exist here), no region
    (a parent thread's never ends here)."""
    global _lock, _holding
    _lock = threading.Lock()
    _workers.clear()
    _placed.clear()
    _others.clear()
    _holding = False


os.register_at_fork(after_in_child=_new_lock_in_child)


def register_worker() -> None:
    """The pool's thread initializer: makes the calling worker thread one that ``pinned``
    places.  A worker starts in a region (the pool makes its threads on demand) with the
    caller's affinity, its one core: it moves at once to the core the region gives it."""
    with _lock:
        worker = threading.get_native_id()
        _workers.append(worker)
        if _others:
            _place(worker, _others[(len(_workers) - 1) % len(_others)])


def forget_workers() -> None:
    """Drops the registered workers (a new pool, e.g. in a forked child, registers its own)."""
    global _holding
    with _lock:
        _workers.clear()
        _placed.clear()
        _others.clear()
        _holding = False


@contextlib.contextmanager
def pinned() -> Iterator[None]:
    """Within the block, the calling thread stays on its current core and each registered
    worker on another core it may use.  Nothing is changed where there is no such core, no
    ``sched_setaffinity``, or while another thread's region holds the cores (two of your threads
    each in a region: held to one core, they could not move apart; left alone, the scheduler
    spreads them)."""
    global _holding
    previous = _pin_caller()
    try:
        yield
    finally:
        if previous is not None:
            try:
                os.sched_setaffinity(0, previous)
            except OSError:     # the allowed cores changed under us (cpuset): nothing to give back
                pass
            with _lock:
                _holding = False


def _pin_caller() -> set[int] | None:
    """Holds the caller to its core and the workers to the others; returns the caller's affinity
    to give back, or None where nothing was changed."""
    global _holding
    if _getcpu is None:
        return None
    with _lock:
        if _holding:
            return None
        cpu = _getcpu()
        allowed = os.sched_getaffinity(0)
        others = sorted(allowed - {cpu})
        if cpu < 0 or not others:
            return None
        os.sched_setaffinity(0, {cpu})
        _holding = True
        _others[:] = others
        for i, worker in enumerate(list(_workers)):
            core = others[i % len(others)]
            if _placed.get(worker) != core:
                _place(worker, core)
    return allowed


def _place(worker: int, core: int) -> None:
    """Holds ``worker`` to ``core`` (under ``_lock``)."""
    try:
        os.sched_setaffinity(worker, {core})
        _placed[worker] = core
    except ProcessLookupError:  # a worker that has exited (its pool shut down)
        _workers.remove(worker)
        _placed.pop(worker, None)
    except OSError:             # a core it may not use (its own cpuset)
        _placed.pop(worker, None)
