"""Capture and replay: a chain of operator calls on device ``Tensor``s recorded once on the
thread's stream and replayed with one host call (graph mode, as in LLM serving).

``with aclnn_py.capture() as graph:`` puts the thread's own stream in capture mode
(``aclmdlRICaptureBegin``, relaxed mode; on ``npu`` CANN's stream capture, on ``sim`` the
simulator's, which records work queued on the stream instead of running it); each operator call
made inside runs its checks and phase 1 as usual and its phase 2 is recorded. At the end of the
block ``aclmdlRICaptureEnd`` makes the model; ``graph.replay()`` queues one run of the whole
chain (``aclmdlRIExecuteAsync``) on the thread's stream. New data goes into the captured input
Tensors between replays (``Tensor.copy_from``), and the results are read from the output
Tensors the captured calls returned, exactly as after running the chain.

A call that cannot be captured (one that waits for the stream or copies to the host: NumPy
arguments or results, ``Tensor.numpy()``, a prepared run) raises ``AclnnError`` 107027 during
the capture, before it queues anything; an error inside the block ends the capture and releases
everything it made.

Lifetimes: the graph owns what its recorded work uses: the model (with the executors the
simulator or CANN keep in it), the workspaces and device copies of the captured calls (their
releases, which would wait for the stream, wait for the graph), and the device memory of every
Tensor the captured calls read or wrote (kept alive even when the caller drops the Tensors).
``close()`` (or the garbage collector) waits for the graph's queued replays, destroys the model
and runs those releases, once; dropped on another thread, after the capturing thread's next
synchronisation (as device memory is)."""

from __future__ import annotations

import threading
import weakref
from typing import TYPE_CHECKING, Any

from .backend import device_library
from .resources import quietly, run_all

if TYPE_CHECKING:
    from .library import Capture, Library


class Graph:
    """A captured chain of operator calls (module docstring); made by ``aclnn_py.capture``."""

    def __init__(self, backend: str | None = None) -> None:
        self.lib: Library = device_library(backend)
        self._model: Any = None
        self._finalizer: weakref.finalize[Any, Graph] | None = None
        self._state = "new"  # "capturing", "ready", "failed"
        self.owner: tuple[int, Any] | None = None

    def __enter__(self) -> "Graph":
        if self._state != "new":
            raise ValueError("aclnn_py.capture: a Graph records one chain; make a new one with aclnn_py.capture()")
        self.lib.begin_capture()
        self.owner = (threading.get_ident(), self.lib.handover())
        self._state = "capturing"
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: object) -> None:
        if self._state != "capturing":
            return
        if threading.get_ident() != (self.owner or (None,))[0]:
            raise ValueError("aclnn_py.capture: the capture must end on the thread that began it")
        self._state = "failed"
        model, capture = self.lib.end_capture()
        if exc is not None:
            # Nothing captured ever ran: the model and what the calls left go now.
            Graph._destroy(self.lib, model, capture)
            return
        self._model = model
        owner = self.owner
        assert owner is not None
        self._finalizer = weakref.finalize(self, Graph._release, self.lib, model, capture, *owner)
        self._state = "ready"

    def replay(self) -> None:
        """Queue one run of the captured chain on this thread's stream (nothing waits: read
        the results from the output Tensors, which wait for it)."""
        if self._state != "ready" or self._finalizer is None or not self._finalizer.alive:
            raise ValueError("aclnn_py.Graph.replay: the graph is not ready (still capturing, failed, or closed)")
        owner = self.owner
        assert owner is not None
        if threading.get_ident() != owner[0]:
            raise ValueError("aclnn_py.Graph.replay: replay on the thread that captured the graph")
        lib = self.lib
        lib.call("aclmdlRIExecuteAsync", self._model, lib.stream())
        lib.mark_queued()  # device memory dropped from now on waits for the replay

    @property
    def closed(self) -> bool:
        return self._finalizer is None or not self._finalizer.alive

    def close(self) -> None:
        """Wait for the queued replays, destroy the model and release what the graph owns
        (once; a closed or failed graph releases nothing)."""
        if self._finalizer is not None:
            self._finalizer()
        self._state = "failed" if self._state != "ready" else "closed"

    @staticmethod
    def _destroy(lib: Library, model: Any, capture: Capture) -> None:
        steps = [lambda: capture.keep.clear(), lambda: run_all(capture.releases)]
        if model is not None and model != lib.ffi.NULL:
            steps.append(lambda: lib.fn("aclmdlRIDestroy")(model))
        failed = run_all(steps)  # (newest first: the model, then the releases, then the memory)
        capture.releases.clear()
        if failed is not None:
            raise failed

    @staticmethod
    def _release(lib: Library, model: Any, capture: Capture, owner_thread: int, handover: Any) -> None:
        if lib.finalized:
            return
        if threading.get_ident() != owner_thread:
            quietly(lambda: lib.hand_over(handover, lambda: Graph._destroy(lib, model, capture)))
            return
        if lib.capture_state() is None:
            quietly(lib.synchronize)  # the queued replays are done
            quietly(lambda: Graph._destroy(lib, model, capture))
        else:
            # (this thread is capturing another chain: after its next synchronisation)
            quietly(lambda: lib.hand_over(handover, lambda: Graph._destroy(lib, model, capture)))

    def __repr__(self) -> str:
        return f"Graph({self._state}, backend={self.lib.backend!r})"


def capture(backend: str | None = None) -> Graph:
    """``with aclnn_py.capture() as graph:`` records the operator calls on device Tensors made
    in the block on this thread's stream; ``graph.replay()`` runs them again with one host
    call, ``graph.close()`` releases the graph (module docstring). ``backend``: ``"npu"`` or
    ``"sim"`` (default: the current backend, which must be one of them)."""
    return Graph(backend)


__all__ = ["Graph", "capture"]
