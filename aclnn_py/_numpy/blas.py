"""How many threads the BLAS library under NumPy may use: one for kernels that call it from the
worker threads (``workers.in_parallel``; ``single_threaded``), and for BLAS calls of the calling
thread its own count on a quiet machine, one on a busy one (``on_caller``).

OpenBLAS runs each large matrix product on all its threads.  Two of our worker threads calling it
at once then fight over the same cores: the winograd engine's blocks, each a few transforms and
16 products on one worker, took 40 ms for the resnet 3x3 (8,64,56,56) case on 2 cores, 17.5 ms
with OpenBLAS held to one thread (the same code; 15.4 -> 7.3 ms for gradWeight of (8,128,28,28),
55 -> 40 ms for the dilated d2 layer).  Each worker then runs its own products on its own core,
which is all the parallelism there is.

OpenBLAS's thread count is one setting for the whole process (``openblas_set_num_threads``; its
``openblas_set_num_threads_local`` sets the same global in the pthreads build NumPy's wheels
ship).  ``single_threaded()`` sets it to 1 while at least one kernel of ours is inside the
block (a count under a lock, so that concurrent calls of ours nest) and puts the previous value
back when the last one leaves.  Meanwhile another thread of the program that calls BLAS gets one
thread too.  Setting it costs ~0.2 us.

The library is found among the shared objects the process has loaded (``/proc/self/maps``) and
beside NumPy's package (its wheels' ``numpy.libs`` / ``.dylibs``), under the names of the
symbols OpenBLAS builds export (plain, or NumPy's ``scipy_`` prefix and ``64_`` suffix).  Where
there is none (NumPy built on another BLAS), ``single_threaded()`` does nothing: the results
are the same, only the contention stays.
"""

from __future__ import annotations

import contextlib
import ctypes
import glob
import os
import threading
from collections.abc import Iterator

import numpy as np

from . import workers

# (setter, getter) names of the builds NumPy links: its wheels' scipy-openblas with 64-bit
# integers, with 32-bit ones, and a system OpenBLAS (64-bit interface, then plain).
_SYMBOLS = (("scipy_openblas_set_num_threads64_", "scipy_openblas_get_num_threads64_"),
            ("scipy_openblas_set_num_threads", "scipy_openblas_get_num_threads"),
            ("openblas_set_num_threads64_", "openblas_get_num_threads64_"),
            ("openblas_set_num_threads", "openblas_get_num_threads"))


class _Control:
    """The loaded library's thread-count setter and getter, and the name of the kernels it runs
    (OpenBLAS's ``get_corename``, named as the setter is: ``name``, as OpenBLAS spells it)."""

    def __init__(self, library: ctypes.CDLL, setter: str, getter: str) -> None:
        self.set = getattr(library, setter)
        self.set.argtypes, self.set.restype = [ctypes.c_int], None
        self.get = getattr(library, getter)
        self.get.argtypes, self.get.restype = [], ctypes.c_int
        self.name: str | None = None
        function = getattr(library, setter.replace("set_num_threads", "get_corename"), None)
        if function is not None:
            function.argtypes, function.restype = [], ctypes.c_char_p
            value = function()
            self.name = value.decode("ascii", "replace") if value else None


def _candidates() -> list[str]:
    """Paths of the OpenBLAS shared objects this process loaded, then those beside NumPy."""
    paths: list[str] = []
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as maps:
            for line in maps:
                path = line.rsplit(None, 1)[-1] if line.count("/") else ""
                if "openblas" in os.path.basename(path).lower() and path not in paths:
                    paths.append(path)
    except OSError:
        pass
    package = os.path.dirname(os.path.abspath(np.__file__))
    for pattern in (os.path.join(package + ".libs", "*openblas*"), os.path.join(package, ".dylibs", "*openblas*"),
                    os.path.join(package, ".libs", "*openblas*")):
        paths.extend(p for p in sorted(glob.glob(pattern)) if p not in paths)
    return paths


def find(paths: list[str] | None = None) -> _Control | None:
    """The thread control of the first of ``paths`` (default: ``_candidates()``) that loads and
    exports one of ``_SYMBOLS``' pairs, or None."""
    for path in _candidates() if paths is None else paths:
        try:
            library = ctypes.CDLL(path)
        except OSError:
            continue
        for setter, getter in _SYMBOLS:
            if hasattr(library, setter) and hasattr(library, getter):
                return _Control(library, setter, getter)
    return None


_control = find()
_lock = threading.Lock()
_depth = 0
_saved = 1
_mine = threading.local()  # .depth: the calling thread's share of _depth


def _new_lock_in_child() -> None:
    """In a forked child, where only the forking thread runs: a new lock (another parent thread
    may have held this one), and only the forking thread's blocks count (another thread's never
    end here: BLAS would stay on one thread), the saved count given back if none is open."""
    global _lock, _depth
    _lock = threading.Lock()
    was, _depth = _depth, getattr(_mine, "depth", 0)
    if was and not _depth and _saved != 1 and _control is not None:
        _control.set(_saved)


os.register_at_fork(after_in_child=_new_lock_in_child)


class _OneThread:
    """``single_threaded()``'s block: a plain context manager, not a generator's (``with`` on
    it costs 2.6 us here against 3.6 us for the ``contextlib`` form, thread time, medians of 41
    interleaved rounds of 20,000 blocks; every matrix product of the backend opens one)."""

    __slots__ = ("control",)

    def __enter__(self) -> None:
        global _depth, _saved
        control = self.control = _control
        if control is None:
            return
        with _lock:
            if _depth == 0:
                _saved = control.get()
                if _saved != 1:
                    control.set(1)
            _depth += 1
            _mine.depth = getattr(_mine, "depth", 0) + 1

    def __exit__(self, *_: object) -> None:
        global _depth
        control = self.control
        if control is None:
            return
        with _lock:
            _depth -= 1
            _mine.depth -= 1
            if _depth == 0 and _saved != 1:
                control.set(_saved)


def single_threaded() -> _OneThread:
    """BLAS on one thread inside the block (module docstring); nests, across threads too."""
    return _OneThread()


def kernels() -> str | None:
    """The name of the kernels OpenBLAS chose for this CPU as OpenBLAS spells it ("SkylakeX",
    "Haswell", ...: its DYNAMIC_ARCH build picks them at load, ``OPENBLAS_CORETYPE`` forces
    them), or None where it is not known (``scripts/bench.py`` prints it)."""
    return None if _control is None else _control.name


def corename() -> str | None:
    """``kernels()`` in lower case ("skylakex", "haswell", ...), for comparisons."""
    name = kernels()
    return None if name is None else name.lower()


def threads() -> int | None:
    """The BLAS library's thread count now, or None where it is not known."""
    return None if _control is None else int(_control.get())


@contextlib.contextmanager
def on_caller() -> Iterator[None]:
    """For BLAS calls of the calling thread that are the whole of a kernel's work (the conv
    engines without worker threads): BLAS's own thread count while the machine is quiet, one
    thread while it is busy (``workers.machine_busy``, the rule of the backend's own splits,
    ``workers.threads_for``).  On a busy machine OpenBLAS's second thread waits for a core
    another program holds, and the whole product with it (``matmul``'s docstring)."""
    if workers.machine_busy():
        with single_threaded():
            yield
    else:
        yield
