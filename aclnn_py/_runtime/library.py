"""One backend's loaded libraries (``npu``: CANN; ``sim``: the simulator toolkit) and the
process state the binding keeps on them: ``aclInit`` once, a device per thread, a stream per
thread, and work whose resources must outlive the stream's queue.

Symbols are looked up when first called, in the runtime, nnopbase and operator libraries in
turn: the custom operator packages' ``libcust_opapi.so`` (highest priority first: they may
override a built-in operator), then ``libopapi.so``, then ``libopapi_<pkg>.so``; so an
operator missing from the installed CANN is an error naming it at call time, not an import
failure. An operator beyond the binding's own headers is declared from
the first operator header that has it (custom packages' ``op_api/include`` first, then the
toolkit's ``include/aclnnop``; see ``operator_headers``).
"""

from __future__ import annotations

import atexit
import itertools
import os
import threading
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from .._constants import ACL_ERROR_RT_STREAM_CAPTURED
from .._errors import ACL_ERROR_API_NOT_SUPPORT, ACL_ERROR_REPEAT_INITIALIZE, ACL_ERROR_UNINITIALIZE, AclnnError
from . import current_device, queued
from .resources import Transaction, quietly, run_all
from .._ffi.discovery import Toolkit, skip_package

if TYPE_CHECKING:
    from cffi import FFI
from .._ffi.op_packages import AGGREGATE_LIBRARY, operator_of, operator_packages
from .._ffi.operator_headers import declarer_for


# Work queued on a thread's stream that nobody waits for (device-Tensor calls never followed by
# a synchronisation) holds its executor, workspace and input copies until the stream is
# synchronised. Each such op call defers one release (its temporaries; the fast entry puts the
# blocks of many calls into one: aclnn_py/_fast/outputs.c's batch), and so does each device
# buffer dropped while work is queued. The binding synchronises by itself once a thread has
# MAX_PENDING_RELEASES of them waiting, or as many operator calls queued (each stands for at
# most one queued executor and a few device blocks; 256 bounds that bookkeeping and waits once per 256 calls: on sim a tiny
# device-Tensor call took 33-34 us with this bound and 35-38 us unbounded, so the wait costs
# nothing measurable), or MAX_PENDING_BYTES of device memory waiting to be freed (256 MiB: about
# 1% of the 24 GB of an Atlas 300I Pro, a small device, so outstanding temporaries never crowd
# out the user's tensors).
MAX_PENDING_RELEASES = 256
#: aclmdlRICaptureMode's ACL_MODEL_RI_CAPTURE_MODE_RELAXED (include/acl/acl_rt.h): a capture
#: during which the thread may still allocate device memory (new output Tensors).
CAPTURE_MODE_RELAXED = 2
MAX_PENDING_BYTES = 256 << 20

_T = TypeVar("_T")


class _Handover:
    """Releases other threads hand to one thread (its ``DeviceBuffer``s dropped elsewhere):
    they run after that thread's next synchronisation, or at its end (``ended`` from then on:
    a later one runs at once). Read and written under its ``Library``'s lock."""

    __slots__ = ("releases", "ended")

    def __init__(self) -> None:
        self.releases: list[Callable[[], None]] = []
        self.ended = False


class Capture:
    """What a capture in progress on a thread's stream (``begin_capture``) collects for the graph
    it makes: the releases that would wait for the stream (workspaces, input copies, dropped
    device memory: they run when the graph is closed, never while it can replay) and the device
    buffers its calls use (kept alive as long as the graph)."""

    __slots__ = ("releases", "keep")

    def __init__(self) -> None:
        self.releases: list[Callable[[], None]] = []
        self.keep: list[object] = []


class ThreadStreams:
    """One thread's streams and the releases that must wait for its queued work. It lives in
    the thread's ``threading.local``: when the thread ends, CPython drops it (on that thread)
    and its finalizer synchronises the streams, runs the releases and destroys its own streams.

    ``stream`` is the stream the thread's calls queue on: ``own`` (the thread's stream on its
    device), or a caller's stream while a ``stream=`` call runs (None after ``set_device``,
    until the next call opens the new device). ``callers`` holds, per caller stream that
    releases in ``pending`` wait for besides ``own`` (by address), an event the binding
    recorded on it after that work: every release waits for all of them, so one
    synchronisation frees them all. Events, not the streams themselves: the caller may
    destroy a stream once it has synchronised it, and a destroyed stream cannot be waited
    for, while the event stays the binding's (and is complete by then)."""

    __slots__ = ("stream", "own", "streams", "pending", "nbytes", "callers", "handover", "queued", "capture",
                 "owner", "batch", "__weakref__")

    def __init__(self) -> None:
        self.stream: Any = None
        self.own: Any = None
        self.streams: dict[int, Any] = {}  # device -> this thread's stream on it
        self.pending: list[Callable[[], None]] = []
        self.nbytes = 0
        self.callers: dict[int, Any] = {}  # caller stream address -> the binding's event on it
        self.handover = _Handover()
        self.queued: list[tuple[str, Any]] = []  # (operator, caller's place: queued.remember) since the last synchronisation
        self.capture: Capture | None = None  # the capture in progress on this thread's stream
        #: What device memory made on this thread records as its owner (``DeviceBuffer.owner``).
        self.owner: tuple[int, _Handover] = (threading.get_ident(), self.handover)
        #: The fast entry's release in ``pending`` that dropped outputs' blocks go into
        #: (``aclnn_py/_fast/outputs.c``), None until then.
        self.batch: object = None

    def take(self) -> tuple[list[Callable[[], None]], list[Any]]:
        """The waiting releases and the events on caller streams they wait for, cleared (in
        place: the thread's finalizer holds these containers)."""
        pending = self.pending[:]
        self.pending.clear()
        self.batch = None
        callers = list(self.callers.values())
        self.callers.clear()
        self.nbytes = 0
        return pending, callers


#: The C functions the binding's release paths (weakref finalizers) call, resolved when a
#: ``Library`` is made (see its ``__init__``).
RELEASE_FUNCTIONS = ("aclDestroyTensor", "aclDestroyTensorList", "aclDestroyScalar", "aclDestroyScalarList",
                     "aclDestroyIntArray", "aclDestroyBoolArray", "aclDestroyFloatArray", "aclDestroyAclOpExecutor",
                     "aclrtFree", "aclrtFreeHost", "aclrtDestroyStream", "aclrtDestroyEvent", "aclmdlRIDestroy")


class Library:
    """The dlopen'ed libraries of one toolkit, with lazily resolved functions."""

    def __init__(self, backend: str, toolkit: Toolkit, ffi: FFI, extra: tuple[Path, ...] = ()) -> None:
        """``extra``: libraries searched after the toolkit's (the simulator's libaclsim.so,
        which defines the simulator-only aclsim* API)."""
        self.backend = backend
        self.toolkit = toolkit
        self.ffi = ffi
        # Loaded in dependency order, which is also the search order.
        paths = (toolkit.runtime, toolkit.base, *toolkit.operator_libraries, *extra)
        packages = {p.library: p for p in toolkit.custom if p.library is not None}
        self._handles = []
        for path in paths:
            try:
                self._handles.append((path, ffi.dlopen(str(path))))
            except OSError as exc:
                if path not in packages:
                    raise
                # A custom package whose library cannot be loaded is reported and skipped, as
                # torch_npu goes on without it: the built-in operators still work.
                skip_package(packages[path], exc)
        self._declarer = declarer_for(ffi)
        self._functions: dict[str, Callable[..., Any]] = {}
        self._cache: dict[str, Any] = {}
        #: Captures in progress on any thread (``begin_capture``): the fast entry replays no plan
        #: meanwhile (a capture's calls take the Python path, which keeps what the graph needs).
        self.capturing = 0
        #: The fast path's ``FastApi`` for this library (``aclnn_py._fast.api_for`` sets it;
        #: None: the fast path is off for it; False: not asked yet). Read by the fast entry too.
        self.fast_api: Any = False
        self._lock = threading.RLock()
        #: This thread's state (``.device``; ``.state``, its streams and pending work): public
        #: for the per-call paths that read it inline (``Tensor``'s output and release).
        self.local = threading.local()
        self._initialized = False
        #: The library is torn down (``teardown``): nothing is released into it any more.
        self.finalized = False
        # the live streams of the binding's threads (each thread's device -> stream), for teardown
        self._streams: dict[int, dict[int, Any]] = {}
        self._stream_keys = itertools.count()
        self._devices: set[int] = set()
        # What the release functions look up, looked up now: they run as weakref finalizers,
        # which garbage collection may start inside cffi while it holds its (non-reentrant)
        # parser lock, and a first lookup of a type or a function there takes that lock again:
        # the thread hung for good (seen in a test run).
        #: ``aclTensor *``, for the casts of the release functions.
        self.tensor_p = ffi.typeof("aclTensor *")
        for name in RELEASE_FUNCTIONS:
            self.has(name)
        atexit.register(self.teardown)
        _forget_in_forked_child(self)

    @property
    def device_id(self) -> int:
        """The calling thread's device (``aclnn_py.get_device()``)."""
        return current_device.get_device()

    # -- symbols -----------------------------------------------------------------------------

    def has(self, name: str) -> bool:
        try:
            self.fn(name)
        except AclnnError:
            return False
        return True

    def fn(self, name: str) -> Callable[..., Any]:
        """The C function ``name``; ``AclnnError`` (200001) naming it if no library exports it."""
        f = self._functions.get(name)
        if f is not None:
            return f
        return self._lookup(name)

    def _lookup(self, name: str) -> Callable[..., Any]:
        f = self._exported(name)
        if f is None and not self._declarer.declared(name):
            # cffi's ABI mode calls only what it has a prototype for, exported or not.
            declared, why, header = self._declarer.declare(name, self.toolkit.header_folders)
            if not declared:
                if header is None:
                    folders = ", ".join(str(f) for f in self.toolkit.header_folders)
                    why = (f"no C declaration of {name}: neither aclnn_py's headers (the runtime and its five "
                           f"operators) nor an operator header in {folders} declares it")
                else:
                    why = f"the prototype of {name} in {header} cannot be declared: {why}"
                raise AclnnError(ACL_ERROR_API_NOT_SUPPORT, name, why)
            f = self._exported(name)
        if f is None:
            searched = ", ".join(str(p) for p, _ in self._handles)
            operator = operator_of(name)
            where = (f"{operator} is defined by {operator_packages()[operator][0]}'s {operator_packages()[operator][1]} "
                     f"or the aggregate {AGGREGATE_LIBRARY}; " if operator else "")
            raise AclnnError(
                ACL_ERROR_API_NOT_SUPPORT, name,
                f"no loaded {self.backend} library exports {name} (searched {searched}); "
                f"{where}the installed CANN may predate this operator")
        self._functions[name] = f
        return f

    def _exported(self, name: str) -> Callable[..., Any] | None:
        for _, handle in self._handles:
            try:
                return getattr(handle, name)  # type: ignore[no-any-return]
            except AttributeError:
                continue
        return None

    def cached(self, key: str, make: Callable[[Library], _T]) -> _T:
        """A value the modules built on this library keep for its lifetime (the per-call
        path's function table...): ``make(self)`` the first time ``key`` is asked for."""
        try:
            value: _T = self._cache[key]
        except KeyError:
            value = self._cache[key] = make(self)
        return value

    def recent_error(self) -> str:
        """``aclGetRecentErrMsg()`` of this thread (obtained and cleared), or ``""``."""
        try:
            p = self.fn("aclGetRecentErrMsg")()
        except AclnnError:
            return ""
        return (self.ffi.string(p).decode("utf-8", "replace").strip()  # type: ignore[union-attr]  # char *: bytes
                if p != self.ffi.NULL else "")

    def check(self, status: int, api: str) -> None:
        """Raise ``AclnnError`` with the library's recent error text when ``status`` != 0."""
        if status != 0:
            raise AclnnError(status, api, self.recent_error())

    def call(self, name: str, *args: Any) -> None:
        """Call a function that returns a status, raising on failure."""
        self.check(self.fn(name)(*args), name)

    # -- process state -----------------------------------------------------------------------

    def ensure_initialized(self) -> None:
        if self._initialized:
            return
        with self._lock:
            if self._initialized:
                return
            if self.finalized:
                raise AclnnError(ACL_ERROR_UNINITIALIZE, "aclInit",
                                 "aclFinalize was already called in this process; CANN cannot be re-initialised")
            status = self.fn("aclInit")(self.ffi.NULL)
            if status not in (0, ACL_ERROR_REPEAT_INITIALIZE):
                self.check(status, "aclInit")
            self._initialized = True

    def note_external_init(self) -> None:
        """The user called aclInit through the C-API mirror."""
        self._initialized = True

    def note_external_finalize(self) -> None:
        """The user called aclFinalize through the C-API mirror: nothing is left to tear down."""
        with self._lock:
            self.finalized = True
            self._streams.clear()
            self._devices.clear()

    def _thread_stream(self) -> ThreadStreams:
        """This thread's streams, with ``stream`` set: the runtime initialised, the thread's
        device set and its stream on that device created on first use."""
        local = self.local
        state: ThreadStreams | None = getattr(local, "state", None)
        if state is not None and state.stream is not None:
            return state
        self.ensure_initialized()
        if state is None:
            state = ThreadStreams()
            with self._lock:
                key = next(self._stream_keys)
                self._streams[key] = state.streams
            end = weakref.finalize(state, Library._end_of_thread, self, key, state.streams, state.callers,
                                   state.pending, state.handover)
            end.atexit = False  # the main thread's streams are teardown's
            local.state = state
        device = current_device.get_device()
        self._open_device(device)
        own = state.streams.get(device)
        if own is None:
            p = self.ffi.new("aclrtStream *")
            self.call("aclrtCreateStream", p)
            own = state.streams[device] = p[0]
        state.own = state.stream = own
        return state

    def _open_device(self, device: int) -> None:
        """``aclrtSetDevice(device)`` on this thread unless it is already the device this
        library set here last."""
        if getattr(self.local, "device", None) == device:
            return
        self.call("aclrtSetDevice", device)
        self.local.device = device
        with self._lock:
            self._devices.add(device)

    def use_device(self, device: int) -> None:
        """``aclnn_py.set_device(device)`` on this thread: wait for the work (and run the
        releases) this thread left queued, then open ``device`` now (its error is the
        runtime's); the thread's stream on it is made or found at the next call."""
        self.ensure_initialized()
        state: ThreadStreams | None = getattr(self.local, "state", None)
        if state is not None and state.pending:
            self.synchronize()
        self._open_device(device)
        if state is not None:
            state.own = state.stream = None

    def stream(self) -> Any:
        """The stream this thread's calls queue on: its own on its device (device set and
        stream created once, the stream destroyed when the thread ends), or the caller's
        while a ``stream=`` call runs (``enter_stream``)."""
        state = getattr(self.local, "state", None)
        if state is not None:
            stream = state.stream
            if stream is not None:
                return stream
        return self._thread_stream().stream

    def enter_stream(self, address: int) -> Any:
        """Queue this thread's calls on the caller's stream at ``address`` (not synchronised
        or destroyed by the binding, except that NumPy results and the bound on waiting
        releases synchronise it); returns what ``leave_stream`` restores."""
        state = self._thread_stream()
        previous = state.stream
        state.stream = self.ffi.cast("aclrtStream", address)
        return previous

    def leave_stream(self, previous: Any) -> None:
        state: ThreadStreams | None = getattr(self.local, "state", None)
        if state is not None:
            state.stream = previous

    def after_fork_in_child(self) -> None:
        """In a forked child: the runtime gives the child no open device and none of the
        parent's streams (docs/simulator.md, fork()), so the binding forgets its threads'
        devices, streams and waiting releases (their handles are the parent's; nothing is
        called on them) and opens the device and a stream again at the child's next call.
        aclInit stays done, as the runtime's reference count does."""
        self._lock = threading.RLock()  # another parent thread may have held it at the fork
        self._streams.clear()  # so no finalizer of an inherited thread state touches C
        self._devices.clear()
        self.local = threading.local()

    def _end_of_thread(self, key: int, streams: dict[int, Any], callers: dict[int, Any],
                       pending: list[Any], handover: _Handover) -> None:
        """A thread's ``ThreadStreams`` is gone (the thread ended): wait for its streams (its
        own and the callers' its releases wait for), run what waited on them (and what other
        threads handed over), destroy its own streams and events. Never raises (it runs as
        the thread exits)."""
        with self._lock:
            if self.finalized or self._streams.pop(key, None) is None:
                # teardown, aclFinalize or a fork took care of the streams: nothing can wait
                handover.ended = True
                handover.releases.clear()
                return
        steps = Transaction()  # (run newest first, each whatever the others do)
        for stream in streams.values():
            steps.add(self._calling("aclrtDestroyStream"), stream)
        for event in callers.values():
            steps.add(self._calling("aclrtDestroyEvent"), event)
        steps.add(run_all, pending)
        steps.add(lambda _: self._end_handover(handover), None)
        for event in callers.values():
            steps.add(self._calling("aclrtSynchronizeEvent"), event)
        for stream in streams.values():
            steps.add(self._calling("aclrtSynchronizeStream"), stream)
        quietly(steps.end)

    def handover(self) -> _Handover:
        """This thread's ``_Handover`` (what ``hand_over`` takes), its state made if need be."""
        return self._thread_stream().handover

    def hand_over(self, handover: _Handover, release: Callable[[], None]) -> None:
        """Run ``release`` after the next synchronisation of the thread ``handover`` belongs
        to (another thread's device memory, dropped here while its work may be queued), or
        now if that thread has ended (its streams were synchronised then)."""
        with self._lock:
            if not handover.ended:
                handover.releases.append(release)
                return
        release()

    def _take_handed(self, handover: _Handover, *, ended: bool = False) -> list[Callable[[], None]]:
        with self._lock:
            taken = handover.releases[:]
            handover.releases.clear()
            if ended:
                handover.ended = True
        return taken

    def _end_handover(self, handover: _Handover) -> None:
        failed = run_all(self._take_handed(handover, ended=True))
        if failed is not None:
            raise failed

    def _calling(self, name: str) -> Callable[[Any], object]:
        """A release calling the C function ``name`` (looked up when it runs) on its handle."""
        return lambda handle: self.fn(name)(handle)

    def _checked(self, name: str) -> Callable[[Any], object]:
        """``_calling``, raising the status of a failure."""
        return lambda handle: self.call(name, handle)

    def defer(self, release: Callable[[], None], nbytes: int = 0) -> None:
        """Run ``release`` (which frees ``nbytes`` of device memory) after the stream this
        thread's calls queue on (and every other stream its waiting releases wait for) has
        completed its queued work. At MAX_PENDING_RELEASES waiting releases or
        MAX_PENDING_BYTES the streams are synchronised now. While the thread's stream is being
        captured, the graph takes it (it runs when the graph is closed)."""
        state = self._thread_stream()
        if state.capture is not None:
            state.capture.releases.append(release)
            return
        stream = state.stream
        state.pending.append(release)
        state.nbytes += nbytes
        if stream is not state.own:  # a caller's stream
            try:
                self._mark(state, stream)
            except AclnnError:
                # Not a stream (the runtime refuses to record on it): the work of a call refused
                # for it never ran, and the release waits for the thread's other streams only.
                pass
        if (len(state.pending) >= MAX_PENDING_RELEASES or len(state.queued) + 1 >= MAX_PENDING_RELEASES
                or state.nbytes >= MAX_PENDING_BYTES):
            self.synchronize()

    def _mark(self, state: ThreadStreams, stream: Any) -> None:
        """Record (again) this thread's event on the caller's ``stream``, behind the work
        queued on it so far: what the releases waiting for it wait for. Raises the runtime's
        error when the stream is not one."""
        address = int(self.ffi.cast("uintptr_t", stream))
        event = state.callers.get(address)
        if event is not None:
            self.call("aclrtRecordEvent", event, stream)
            return
        p = self.ffi.new("aclrtEvent *")
        self.call("aclrtCreateEvent", p)
        status = self.fn("aclrtRecordEvent")(p[0], stream)
        if status:
            message = self.recent_error()
            self.fn("aclrtDestroyEvent")(p[0])
            raise AclnnError(status, "aclrtRecordEvent", message)
        state.callers[address] = p[0]

    def mark_queued(self) -> None:
        """Work was queued on this thread's stream that no release waits for yet (a device-
        Tensor call with no temporaries, a prepared run): from now on this thread's device
        memory dropped here waits for it (``has_pending``), until the next synchronisation."""
        self.defer(nothing)

    def has_pending(self) -> bool:
        """Whether this thread has releases waiting for its streams."""
        state = getattr(self.local, "state", None)
        return bool(state is not None and state.pending)

    def pending(self) -> tuple[int, int]:
        """This thread's releases waiting for its streams, and the device bytes they free."""
        state = getattr(self.local, "state", None)
        return (0, 0) if state is None else (len(state.pending), state.nbytes)

    def queued_call(self, op: str) -> None:
        """Operator ``op`` left work queued on this thread's stream: a failure of that work,
        found at a later synchronisation, names this call (``queued``); with
        ``ACLNN_PY_BLOCKING=1`` the stream is synchronised now, so the call raises it."""
        state = self._thread_stream()
        queued.remember(state.queued, op)
        if queued.blocking() and state.capture is None:
            self.synchronize()

    def synchronize(self) -> None:
        """Wait for the stream this thread's calls queue on (its own, or the caller's during a
        ``stream=`` call) and for every caller stream its waiting releases wait for, then run
        those releases (every one, newest first, also when a wait or a release fails: then
        the first error is raised). A failure of queued work names the operator call that
        queued it (``queued.attributed``)."""
        state: ThreadStreams | None = getattr(self.local, "state", None)
        if state is None or state.stream is None:
            state = self._thread_stream()
        if state.capture is not None:
            raise not_capturable("waits for the stream")
        if not state.queued:
            self._synchronize(state)
            return
        calls = state.queued[:]
        state.queued.clear()
        try:
            self._synchronize(state)
        except AclnnError as error:
            named = queued.attributed(error, calls)
            if named is error:
                raise
            raise named.with_traceback(error.__traceback__) from None

    # -- capture ---------------------------------------------------------------------------

    def capture_state(self) -> Capture | None:
        """The capture in progress on this thread's stream, or None."""
        state = getattr(self.local, "state", None)
        return None if state is None else state.capture

    def begin_capture(self) -> Any:
        """Start capturing this thread's own stream (``aclmdlRICaptureBegin``, relaxed mode): the
        work queued on it from now on is recorded into a model, not run. What waited for the
        stream runs first. Returns the stream."""
        state = self._thread_stream()
        if state.capture is not None:
            raise ValueError("aclnn_py.capture: this thread's stream is already being captured")
        if state.stream is not state.own:
            raise ValueError("aclnn_py.capture: not inside a stream= call (the thread's own stream is captured)")
        self.synchronize()
        self.call("aclmdlRICaptureBegin", state.stream, CAPTURE_MODE_RELAXED)
        state.capture = Capture()
        with self._lock:
            self.capturing += 1
        return state.stream

    def end_capture(self) -> tuple[Any, Capture]:
        """End the capture of this thread's stream: ``(model, what the graph owns)``; the model
        is NULL when ``aclmdlRICaptureEnd`` failed (its error raised after the capture's
        releases were handed back in the Capture)."""
        state = self._thread_stream()
        capture = state.capture
        if capture is None:
            raise ValueError("aclnn_py.capture: this thread's stream is not being captured")
        state.capture = None
        with self._lock:
            self.capturing -= 1
        p = self.ffi.new("aclmdlRI *")
        status = self.fn("aclmdlRICaptureEnd")(state.stream, p)
        if status:
            error = AclnnError(status, "aclmdlRICaptureEnd", self.recent_error())
            quietly(lambda: run_all(capture.releases))
            capture.releases.clear()
            raise error
        return p[0], capture

    def _synchronize(self, state: ThreadStreams) -> None:
        current = state.stream
        if not state.pending and not state.callers:  # the common case (each NumPy result): nothing waits
            sync = self.fn("aclrtSynchronizeStream")
            status = sync(current)
            if status:
                self.check(status, "aclrtSynchronizeStream")
            own = state.own
            if own is not current and own is not None and own != current:
                self.check(sync(own), "aclrtSynchronizeStream")
            if state.handover.releases:
                self._run_handed(state)
            return
        pending, events = state.take()
        # (each wait, then each release, whatever the others do; the first error is raised)
        steps = Transaction()
        for event in events:
            steps.add(self._checked("aclrtDestroyEvent"), event)
        steps.add(_run_all_raising, pending)
        for event in events:
            steps.add(self._checked("aclrtSynchronizeEvent"), event)
        if state.own is not None and state.own != current:
            steps.add(self._checked("aclrtSynchronizeStream"), state.own)
        steps.add(self._checked("aclrtSynchronizeStream"), current)
        steps.end()
        if state.handover.releases:
            self._run_handed(state)

    def _run_handed(self, state: ThreadStreams) -> None:
        """Run what other threads handed this one (its streams synchronised just now)."""
        failed = run_all(self._take_handed(state.handover))
        if failed is not None:
            raise failed

    def teardown(self) -> None:
        """At exit: finish queued work, destroy streams, reset devices, aclFinalize."""
        with self._lock:
            if self.finalized or not self._initialized:
                self.finalized = True
                return
            self.finalized = True
            # (run newest first, each whatever the others do: a stream that cannot be waited
            # for still lets the devices be reset and the runtime finalised)
            steps = Transaction()
            steps.add(lambda _: self.fn("aclFinalize")(), None)
            for d in sorted(self._devices, reverse=True):
                steps.add(self._calling("aclrtResetDevice"), d)
            for streams in self._streams.values():
                for s in streams.values():
                    steps.add(self._calling("aclrtDestroyStream"), s)
                    steps.add(self._calling("aclrtSynchronizeStream"), s)
            quietly(steps.end)  # never raise at interpreter exit
            self._streams.clear()


def not_capturable(what: str) -> AclnnError:
    """The error of a call that cannot be captured (it ``what``) made while this thread's stream
    is being captured."""
    return AclnnError(ACL_ERROR_RT_STREAM_CAPTURED, "aclnn_py.capture",
                      f"this call {what}, which a captured chain cannot do: while aclnn_py.capture() is "
                      "recording, only operator calls on device Tensors (aclnn_py.Tensor) can be captured; "
                      "copy NumPy data into a Tensor before the capture (Tensor.from_numpy) or between "
                      "replays (Tensor.copy_from)")


def _run_all_raising(releases: list[Callable[[], None]]) -> None:
    """``run_all``, raising the first error."""
    failed = run_all(releases)
    if failed is not None:
        raise failed


def nothing() -> None:
    """The release ``mark_queued`` defers: only its place in the queue matters."""


def _forget_in_forked_child(lib: Library) -> None:
    """Reset ``lib``'s per-thread state in a forked child (``Library.after_fork_in_child``)."""
    ref = weakref.ref(lib)

    def reset() -> None:
        alive = ref()
        if alive is not None:
            alive.after_fork_in_child()

    os.register_at_fork(after_in_child=reset)
