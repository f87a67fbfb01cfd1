"""The numpy backend's worker threads and per-thread scratch arrays, for the memory-bound
kernels (gathers and scatters that release the GIL) and the parts of a matrix product
(``matmul``), and the one rule of how many threads a call may use (``threads_for``).
"""

from __future__ import annotations

import itertools
import math
import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor, wait
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from .placement import forget_workers, pinned, register_worker
from .ufunc_buffer import BROADCAST_ELEMENTS, inner_run, run_buffer, ufunc_buffer


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


def in_parallel(count: int, work: Callable[[int, int], None], *, min_per_thread: int = 1,
                serial: bool = False) -> None:
    """Run ``work(start, stop)`` over ``[0, count)`` split into one contiguous part per worker
    thread (parts of at least ``min_per_thread``), the first part on the calling thread.
    ``serial``: the same parts one after the other on the calling thread (for a machine too
    busy to split, ``threads_for``: a result gathered per part stays the same bits).

    For NumPy kernels that release the GIL and are bound by memory latency (gathers): BLAS
    kernels have threads of their own.  The workers' parts run under the caller's NumPy
    floating-point error state (``np.errstate`` is per thread)."""
    parts = max(1, min(_WORKERS, count // max(1, min_per_thread)))
    bounds = [count * i // parts for i in range(parts + 1)]
    if parts == 1 or serial:
        for first, last in zip(bounds, bounds[1:]):
            work(first, last)
        return
    pool = _executor()
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


def in_pieces(count: int, work: Callable[[int, int], None], *, threads: int, pieces: int,
              guided: bool = False, back: Callable[[int, int], None] | None = None) -> None:
    """Run ``work(start, stop)`` over ``[0, count)`` cut into ``pieces`` contiguous pieces,
    which the calling thread and ``threads - 1`` workers take in turn, each the next one left,
    until none is left; the threads held to cores of their own meanwhile (``placement.pinned``).

    Unlike ``in_parallel``'s one part per thread, no thread waits for a worker that has not
    started: the caller takes the pieces itself, and a worker not started when the caller is
    done is cancelled, not waited for (one that starts late finds no piece left).  For work of which any split gives
    the same result (elementwise ufuncs); the workers' pieces run under the caller's NumPy
    error state.

    ``guided``: a thread takes a share of the pieces left at a time (a quarter of them over two
    threads: large takes first, single pieces at the end), and a worker leaves the last piece
    to the caller.  A worker starts ~50 us after it is asked, and a caller that has to wait for
    it is woken ~50 us after it ends (this 2-vCPU VM); with one part per thread the caller
    did both (the worker's part ended last).  Taken so, the parts end together, the caller's
    last: it finds the workers done.  Each take is one more call from Python, whose GIL the
    other thread may be waiting for (~50 us when it is): few takes, so few pieces
    (the Cast's blocks, ``half.convert``).

    ``back`` (with ``guided``): the workers' own work, for work done two ways that give the
    same bits (FLOAT to FLOAT16: ``half.convert``); the workers then take their pieces from
    the end backward, the caller from the start forward, until they meet."""
    pieces = max(1, min(count, pieces))
    if guided:
        ends = [0, pieces]  # (the pieces left: taken under ``lock``)
        lock = threading.Lock()

        def claim(caller: bool) -> tuple[int, int] | None:
            with lock:
                rest = ends[1] - ends[0]
                if rest <= 0 or (not caller and rest <= 1):  # (the last piece: the caller's)
                    return None
                n = max(1, rest // (2 * threads))
                if caller or back is None:
                    ends[0] += n
                    return ends[0] - n, ends[0]
                ends[1] -= n
                return ends[1], ends[1] + n
    else:
        turn = itertools.count()  # (next() of a count is atomic in CPython)

        def claim(caller: bool) -> tuple[int, int] | None:
            i = next(turn)
            return (i, i + 1) if i < pieces else None
    bounds = [count * i // pieces for i in range(pieces + 1)]
    stop = [False]

    def take(caller: bool) -> None:
        run = work if caller or back is None else back
        while not stop[0]:
            got = claim(caller)
            if got is None:
                return
            run(bounds[got[0]], bounds[got[1]])

    if threads <= 1 or pieces == 1:
        take(True)
        return
    pool = _executor()
    errors = np.geterr()
    # The workers asked first: they wake while the caller holds the cores and starts its part.
    futures = [pool.submit(_under, errors, take, False) for _ in range(threads - 1)]
    with pinned():
        try:
            take(True)
        except BaseException:
            stop[0] = True
            for f in futures:
                f.cancel()
            wait(futures)       # no worker still writes into the caller's arrays after it returns
            raise
        for f in futures:
            if not f.cancel():  # (a worker not started is not waited for)
                f.result()      # re-raises a worker's exception


# How often ``machine_busy`` reads the load average again (seconds).
_LOAD_PERIOD = 0.25
_load = [-1.0, False]  # [when read, busy]


def machine_busy() -> bool:
    """Whether the machine's 1-minute load average is at least one above the cores this process
    may use (the process itself, a benchmark's other processes, count for about one): the
    other programs hold the cores, and a part handed to a worker waits for one.
    Measured on this 2-core machine at load 9.7, an add of (8,64,56,56) into a fresh array,
    median of 80 calls: 1.7 ms on the calling thread, 20 ms split across two threads held to
    cores (``in_parallel``), 33 ms split into pieces taken by threads not held; on a quieter
    machine split and held 1.5 ms against 9 ms not held (and ~400 page faults a call)."""
    now = time.monotonic()
    if now - _load[0] > _LOAD_PERIOD:
        try:
            busy = os.getloadavg()[0] >= _WORKERS + 1
        except OSError:
            busy = False
        _load[:] = [now, busy]
    return bool(_load[1])


def threads_for(work: int, per_thread: int) -> int:
    """The threads a call of ``work`` units may run on: one per ``per_thread`` units, at
    least two's worth to split at all, at most one per worker (``worker_count``), and one
    while the machine is busy (``machine_busy``).  The one rule of the backend's own splits
    (``over_parts``, ``matmul.product``)."""
    threads = min(_WORKERS, work // max(1, per_thread)) if work >= 2 * per_thread else 1
    return 1 if threads > 1 and machine_busy() else threads


# The elements of one piece of ``over_parts`` on one thread, for a kernel of several passes (a
# multiply then an add in the output, a computation in FLOAT rounded to FLOAT16): a few arrays
# of them stay in a core's L2 cache (2 MiB here) from one pass to the next.  On one thread,
# thread CPU time, (8,64,56,56): Add with alpha 1.31 -> 1.23 ms, Add of FLOAT16 20.6 -> 17.5 ms.
PIECE_ELEMENTS = 1 << 17
# The elements per thread a split (``over_parts``) of contiguous same-shape operands (the
# others 0-d) needs by default: such parts stream memory, two threads at once less than twice
# as fast as one, and a split costs ~0.1 ms of hand-offs.  Measured (60 interleaved rounds,
# median / 10th percentile ms, split / one thread, this loaded VM): (256,256,3,3) Relu 0.56 /
# 0.43, 0.48 / 0.33; Muls 0.51 / 0.37, 0.34 / 0.29; SGD step 0.70 / 0.54, 0.55 / 0.37; and on
# the quiet machine (main against this, 8 alternating processes, medians, ms) the SGD step
# (256,256,3,3) 0.69 -> 0.42, the other bench cases of Relu, Add, Mul, Adds, Muls,
# ThresholdBackward and the Inplace operators 0.87-1.08x.  (Cutting such calls into flat runs
# that the threads claim, ``in_pieces``' guided claims, measured 1.05-1.26x slower there.)
FLAT_PART_ELEMENTS = 1 << 19


def on_caller(size: int) -> bool:
    """Whether ``over_parts`` runs ``work`` once, on the calling thread, for an ``out`` of
    ``size`` elements with the default ``min_elements`` and no ``piece_elements`` (and, for an
    input that broadcasts, the caller's ufunc buffer: ``run_buffer``): a small call may then
    make that call itself, without ``over_parts``'s machinery."""
    return size < min(2 * MIN_PARALLEL_ELEMENTS, BROADCAST_ELEMENTS)


def over_parts(work: Callable[..., None], out: np.ndarray, *inputs: np.ndarray,
               min_elements: int | None = None, piece_elements: int | None = None, keep: int = 0) -> None:
    """``work(out_part, *input_parts)`` over parts of ``out``: one for each worker thread
    (``in_pieces``) when ``out`` has at least ``min_elements`` (default
    ``MIN_PARALLEL_ELEMENTS``) for each of two and the machine is not busy (``machine_busy``);
    else on the calling thread, in parts of at most ``piece_elements`` elements where the
    leading axes allow it (for a kernel of several passes; default: one part).  Each input
    broadcasts to ``out``'s shape and is cut with it (a view, no copy); one without the axes
    cut (0-d, or a bias of trailing dims) goes whole to every part.  ``keep``: the trailing axes never cut (a plane the work maps whole); each
    input then broadcasts to ``out``'s other axes and keeps its own trailing ones (a padded
    plane's source plane).  A part drops the leading axes its index fixes (negative axes name
    the same ones in every part).  Where an input broadcasts, every part runs with the ufunc
    buffer ``ufunc_buffer.run_buffer`` gives for the runs it broadcasts over.  With ``out``
    and every input of its shape C-contiguous (the others 0-d, no ``keep``) the default
    threshold is ``FLAT_PART_ELEMENTS``.

    For elementwise work (a ufunc expression writing ``out_part``): each element is computed
    alone, so the parts give the same bits as one call."""
    flat = not keep and _flat(out, inputs)
    per_part = (FLAT_PART_ELEMENTS if flat else MIN_PARALLEL_ELEMENTS) if min_elements is None else min_elements
    size = out.size
    threads = threads_for(size, per_part)
    cut = out.ndim - keep  # the axes that may be cut
    enough = threads if threads > 1 else (-(-size // piece_elements) if piece_elements else 1)
    buffer = None
    if not keep and any(x.shape != out.shape for x in inputs):
        buffer = run_buffer(inner_run(out.shape, *(x.shape for x in inputs)), size)
    if enough <= 1 or cut <= 0:
        with ufunc_buffer(buffer):
            work(out, *inputs)
        return
    # The axes to cut: the leading ones, up to the first that gives enough parts.
    shape, axis, lead = out.shape, 0, 1
    while axis < cut - 1 and lead * shape[axis] < enough:
        lead *= shape[axis]
        axis += 1
    cuts = max(1, min(shape[axis], -(-enough // lead)))
    edges = [shape[axis] * i // cuts for i in range(cuts + 1)]
    index = [outer + (slice(a, b),) for outer in itertools.product(*map(range, shape[:axis]))
             for a, b in zip(edges, edges[1:]) if b > a]
    # An input without the axes cut (a bias of trailing dims) goes whole to every part, as it
    # broadcasts there: a kernel may then work on its own small shape.
    whole = [x.ndim < out.ndim - axis for x in inputs]
    views = [x if w else np.broadcast_to(x, shape[:cut] + (x.shape[x.ndim - keep:] if keep else ()))
             for x, w in zip(inputs, whole)]

    def run(start: int, stop: int) -> None:
        with ufunc_buffer(buffer):
            for ix in index[start:stop]:
                work(out[ix], *(x if w else x[ix] for x, w in zip(views, whole)))

    in_pieces(len(index), run, threads=threads, pieces=threads if threads > 1 else len(index))


def _flat(out: np.ndarray, inputs: tuple[np.ndarray, ...]) -> bool:
    """Whether ``out`` and every input of its shape are C-contiguous, the others 0-d: a call
    that streams memory (``FLAT_PART_ELEMENTS``)."""
    return out.flags.c_contiguous and all(
        x.ndim == 0 or (x.shape == out.shape and x.flags.c_contiguous) for x in inputs)


def _under(errors: Mapping[str, Any], work: Callable[..., None], *args: Any) -> None:
    """``work(*args)`` under the floating-point error state ``errors`` (np.geterr's)."""
    with np.errstate(**errors):
        work(*args)
