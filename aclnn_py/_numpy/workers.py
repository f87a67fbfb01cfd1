"""The numpy backend's worker threads and per-thread scratch arrays, for the memory-bound
kernels (gathers and scatters that release the GIL; BLAS products have threads of their own).
"""

from __future__ import annotations

import contextlib
import itertools
import math
import os
import threading
from concurrent.futures import ThreadPoolExecutor, wait
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import numpy as np

from .placement import forget_workers, pinned, register_worker


# One per core this process may use (a container's cpuset, taskset), at most 4.
_WORKERS = max(1, min(4, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1))
# Elements a worker thread must have to be worth one: 256 Ki elements take ~0.1-0.2 ms to
# stream through a NumPy loop, against ~20-50 us to hand a part to a worker and wait for it.
MIN_PARALLEL_ELEMENTS = 1 << 18
_pool: ThreadPoolExecutor | None = None
_pool_pid = 0
_pool_lock = threading.Lock()


def _new_lock_in_child() -> None:
    """A forked child's lock: a parent thread may have been making the pool."""
    global _pool_lock
    _pool_lock = threading.Lock()


os.register_at_fork(after_in_child=_new_lock_in_child)


def worker_count() -> int:
    """The number of parts ``in_parallel`` splits a large range into: one per core this process
    may run on, at most 4."""
    return _WORKERS


def _executor() -> ThreadPoolExecutor:
    """The backend's worker threads (one per core, at most 4), made on first use and anew in a
    forked child (a child inherits the pool object but not its threads)."""
    global _pool, _pool_pid
    with _pool_lock:
        if _pool is None or _pool_pid != os.getpid():
            forget_workers()
            _pool = ThreadPoolExecutor(_WORKERS, thread_name_prefix="aclnn_py", initializer=register_worker)
            _pool_pid = os.getpid()
        return _pool


# A thread keeps its scratch arrays (``scratch``) from call to call while they take at most this
# much together.  A fresh NumPy array of a few MiB is fresh pages from the kernel: glibc gives
# freed blocks back (it trims the heap top, and a worker thread's arena) and the next call
# faults them in again, zeroed.  Measured on the winograd engine's copies and tile buffers:
# resnet 3x3 (8,64,56,56) 2000 page faults and 6 ms of system time per call, 31 -> 26 ms wall
# with the buffers kept; dilated d2 (4,256,32,32) 62 -> 55 ms (in-process toggle, loaded machine).  Per thread (the caller and the
# 2-4 workers), so the memory held is bounded.
WORKSPACE_BYTES = 32 << 20


class _Workspace(threading.local):
    def __init__(self) -> None:
        super().__init__()
        self.buffers: dict[str, np.ndarray] = {}


_workspace = _Workspace()


def scratch(name: str, shape: tuple[int, ...]) -> np.ndarray:
    """An uninitialised float32 array of ``shape`` that the calling thread may get again at its
    next ``scratch(name, ...)`` (WORKSPACE_BYTES): its contents live until then, so one name is
    one array in use at a time per thread, and no result is ever a scratch array."""
    size = math.prod(shape)
    buffers = _workspace.buffers
    kept = buffers.get(name)
    if kept is not None and kept.size >= size:
        return kept[:size].reshape(shape)
    fresh = np.empty(size, np.float32)
    others = sum(b.nbytes for n, b in buffers.items() if n != name)
    if others + fresh.nbytes <= WORKSPACE_BYTES:
        buffers[name] = fresh
    return fresh.reshape(shape)


def in_parallel(count: int, work: Callable[[int, int], None], *, min_per_thread: int = 1) -> None:
    """Run ``work(start, stop)`` over ``[0, count)`` split into one contiguous part per worker
    thread (parts of at least ``min_per_thread``), the first part on the calling thread.

    For NumPy kernels that release the GIL and are bound by memory latency (gathers): BLAS
    kernels have threads of their own.  The workers' parts run under the caller's NumPy
    floating-point error state (``np.errstate`` is per thread)."""
    parts = max(1, min(_WORKERS, count // max(1, min_per_thread)))
    if parts == 1:
        work(0, count)
        return
    pool = _executor()
    bounds = [count * i // parts for i in range(parts + 1)]
    errors = np.geterr()
    # The first part runs on the calling thread, which is awake already: one hand-off fewer
    # (a woken worker can wait for a core that another program holds).
    # Each thread on a core of its own for the region (``placement``).
    with pinned():
        futures = [pool.submit(_under, errors, work, a, b) for a, b in zip(bounds[1:-1], bounds[2:])]
        try:
            work(bounds[0], bounds[1])
        except BaseException:
            wait(futures)       # no worker still writes into the caller's arrays after it returns
            raise
        for f in futures:
            f.result()  # re-raises a worker's exception


HOLD_PIECES = False

# Pieces per thread ``in_pieces`` cuts a range into: the threads that are running take the
# pieces of one that is not.
PIECES_PER_THREAD = 4


def in_pieces(count: int, work: Callable[[int, int], None], *, min_per_thread: int = 1,
              hold: bool = True) -> None:
    """Run ``work(start, stop)`` over ``[0, count)`` cut into contiguous pieces (``PIECES_PER_THREAD``
    for each of the threads that ``in_parallel`` would use), which the calling thread and the
    workers take in turn, each the next one left, until none is left.

    Unlike ``in_parallel``'s one part per thread, no thread waits for a worker that has not
    started: on a loaded machine (a worker waiting for a core) the caller takes the pieces
    itself, and a worker that starts late finds none left and is not waited for.  For work of
    which any split gives the same result (elementwise ufuncs), run under the caller's NumPy
    floating-point error state; ``hold``: the threads held to cores of their own meanwhile
    (``placement.pinned``)."""
    threads = max(1, min(_WORKERS, count // max(1, min_per_thread)))
    if threads == 1:
        work(0, count)
        return
    pieces = min(count, threads * PIECES_PER_THREAD)
    bounds = [count * i // pieces for i in range(pieces + 1)]
    turn = itertools.count()  # (next() of a count is atomic in CPython)
    stop = [False]

    def take() -> None:
        while not stop[0]:
            i = next(turn)
            if i >= pieces:
                return
            work(bounds[i], bounds[i + 1])

    pool = _executor()
    errors = np.geterr()
    with pinned() if hold else _nothing():
        futures = [pool.submit(_under, errors, lambda _a, _b: take(), 0, 0) for _ in range(threads - 1)]
        try:
            take()
        except BaseException:
            stop[0] = True
            for f in futures:
                f.cancel()
            wait(futures)       # no worker still writes into the caller's arrays after it returns
            raise
        running = [f for f in futures if not f.cancel()]  # (a worker not started is not waited for)
        for f in running:
            f.result()  # re-raises a worker's exception


@contextlib.contextmanager
def _nothing() -> Iterator[None]:
    yield


def _under(errors: Mapping[str, Any], work: Callable[[int, int], None], start: int, stop: int) -> None:
    """``work(start, stop)`` under the floating-point error state ``errors`` (np.geterr's)."""
    with np.errstate(**errors):
        work(start, stop)


def over_parts(work: Callable[..., None], out: np.ndarray, *inputs: np.ndarray,
               min_elements: int | None = None) -> None:
    """``work(out_part, *input_parts)`` over contiguous parts of ``out`` along its first axis
    of more than one element, one part per worker thread (``in_parallel``) when ``out`` has at
    least ``min_elements`` (default ``MIN_PARALLEL_ELEMENTS``) per part, else ``work(out,
    *inputs)`` once. Each input broadcasts to ``out``'s shape and is split with it (a view, no
    copy); a 0-d input goes whole to every part. The parts are ``in_pieces``'s.

    For elementwise work (a ufunc expression writing ``out_part``): each element is computed
    alone, so the parts give the same bits as one call."""
    per_part = MIN_PARALLEL_ELEMENTS if min_elements is None else min_elements
    if _WORKERS == 1 or out.size < 2 * per_part:
        work(out, *inputs)
        return
    lead = 0
    while lead < out.ndim and out.shape[lead] == 1:
        lead += 1
    if lead == out.ndim:
        work(out, *inputs)
        return
    index = (0,) * lead
    target = out[index]
    parts = [x if x.ndim == 0 else np.broadcast_to(x, out.shape)[index] for x in inputs]
    row = target.size // target.shape[0]

    def run(start: int, stop: int) -> None:
        work(target[start:stop], *(x if x.ndim == 0 else x[start:stop] for x in parts))

    in_pieces(target.shape[0], run, min_per_thread=max(1, -(-per_part // row)), hold=HOLD_PIECES)
