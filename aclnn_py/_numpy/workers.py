"""The numpy backend's worker threads and per-thread scratch arrays, for the memory-bound
kernels (gathers and scatters that release the GIL; BLAS products have threads of their own).
"""

from __future__ import annotations

import itertools
import math
import os
import threading
from concurrent.futures import ThreadPoolExecutor, wait
from collections.abc import Callable, Mapping
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


# Pieces per thread ``in_pieces`` cuts a range into: the threads that are running take the
# pieces of one that is not.
PIECES_PER_THREAD = 4


def in_pieces(count: int, work: Callable[[int, int], None], *, min_per_thread: int = 1,
              pieces: int = 0) -> None:
    """Run ``work(start, stop)`` over ``[0, count)`` cut into contiguous pieces (at least
    ``pieces``, and ``PIECES_PER_THREAD`` for each of the threads of ``min_per_thread`` that
    ``in_parallel`` would use), which the calling thread and the workers take in turn, each the
    next one left, until none is left.

    Unlike ``in_parallel``'s one part per thread, no thread waits for a worker that has not
    started: on a loaded machine (a worker waiting for a core) the caller takes the pieces
    itself, and a worker that starts late finds none left and is not waited for.  The threads
    are not held to cores (``placement.pinned``): measured on this 2-core machine shared with
    other programs (load 7), held, an add of (8,64,56,56) took 19 ms median against 1.1 ms on
    one thread; not held, 1.9 ms.  For work of which any split gives the same result
    (elementwise ufuncs); the workers' pieces run under the caller's NumPy error state."""
    threads = max(1, min(_WORKERS, count // max(1, min_per_thread)))
    pieces = min(count, max(pieces, threads * PIECES_PER_THREAD if threads > 1 else 1))
    bounds = [count * i // pieces for i in range(pieces + 1)]
    turn = itertools.count()  # (next() of a count is atomic in CPython)
    stop = [False]

    def take(_start: int = 0, _stop: int = 0) -> None:
        while not stop[0]:
            i = next(turn)
            if i >= pieces:
                return
            work(bounds[i], bounds[i + 1])

    if threads == 1:
        take()
        return
    pool = _executor()
    errors = np.geterr()
    futures = [pool.submit(_under, errors, take, 0, 0) for _ in range(threads - 1)]
    try:
        take()
    except BaseException:
        stop[0] = True
        for f in futures:
            f.cancel()
        wait(futures)       # no worker still writes into the caller's arrays after it returns
        raise
    for f in futures:
        if not f.cancel():  # (a worker not started is not waited for)
            f.result()      # re-raises a worker's exception


# The elements of one piece of ``over_parts`` for a kernel of several passes (a multiply then
# an add in the output, a computation in FLOAT rounded to FLOAT16): a few arrays of them stay in
# a core's L2 cache (2 MiB here) from one pass to the next.  On one thread, thread CPU time,
# (8,64,56,56): Add with alpha 1.31 -> 1.23 ms, Add of FLOAT16 20.6 -> 17.5 ms.
PIECE_ELEMENTS = 1 << 17


def over_parts(work: Callable[..., None], out: np.ndarray, *inputs: np.ndarray,
               min_elements: int | None = None, piece_elements: int | None = None) -> None:
    """``work(out_part, *input_parts)`` over parts of ``out`` (``in_pieces``'s pieces: on the
    worker threads when ``out`` has at least ``min_elements``, by default
    ``MIN_PARALLEL_ELEMENTS``, for each of two threads), or ``work(out, *inputs)`` once when it
    is small.  A part is a block of ``out``'s leading axes of at most ``piece_elements``
    elements where they allow it (for a kernel of several passes; default: no bound).  Each
    input broadcasts to ``out``'s shape and is cut with it (a view, no copy); a 0-d input goes
    whole to every part.

    For elementwise work (a ufunc expression writing ``out_part``): each element is computed
    alone, so the parts give the same bits as one call."""
    per_part = MIN_PARALLEL_ELEMENTS if min_elements is None else min_elements
    size = out.size
    parallel = _WORKERS > 1 and size >= 2 * per_part
    wanted = -(-size // piece_elements) if piece_elements else 1
    if not parallel and wanted <= 1:
        work(out, *inputs)
        return
    # The axes to cut: the leading ones, up to the first that gives enough pieces.
    shape, axis, lead = out.shape, 0, 1
    threads = min(_WORKERS, size // per_part) if parallel else 1
    enough = max(wanted, threads * PIECES_PER_THREAD if threads > 1 else 1)
    while axis < out.ndim - 1 and lead * shape[axis] < enough:
        lead *= shape[axis]
        axis += 1
    if out.ndim == 0 or lead * shape[axis] <= 1:
        work(out, *inputs)
        return
    cuts = max(1, min(shape[axis], -(-enough // lead)))
    edges = [shape[axis] * i // cuts for i in range(cuts + 1)]
    index = [outer + (slice(a, b),) for outer in itertools.product(*map(range, shape[:axis]))
             for a, b in zip(edges, edges[1:]) if b > a]
    views = [x if x.ndim == 0 else np.broadcast_to(x, shape) for x in inputs]

    def run(start: int, stop: int) -> None:
        for ix in index[start:stop]:
            work(out[ix], *(x if x.ndim == 0 else x[ix] for x in views))

    in_pieces(len(index), run, min_per_thread=max(1, len(index) // threads), pieces=len(index))


def _under(errors: Mapping[str, Any], work: Callable[[int, int], None], start: int, stop: int) -> None:
    """``work(start, stop)`` under the floating-point error state ``errors`` (np.geterr's)."""
    with np.errstate(**errors):
        work(start, stop)

