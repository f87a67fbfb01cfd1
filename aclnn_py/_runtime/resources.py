"""The one resource layer: a ``Transaction`` owns the handles acquired during a block of work.

Every handle the binding acquires (device memory, ``aclTensor``, the arrays and scalars, the
executor and workspace of a call, a caller's object kept alive for queued work) is registered
with ``add(release, handle)`` the moment it exists (cuda-python's ``Transaction``). When the
transaction ends:

* each registered release runs exactly once, newest first;
* a release that raises does not skip the others: they all run, then the first error is
  raised; but when the block itself failed, the block's error is the one that propagates
  (the releases' errors are dropped: the caller's failure is the one to report);
* a release marked ``after_stream`` (memory that work queued on the stream may still use) is
  handed, with the others of its transaction in one bundle, to the library's bounded queue of
  releases that wait for the stream (``Library.defer``) when the transaction ends with
  ``defer_to``; otherwise it runs then like the rest;
* ownership passes on with ``detach(handle)`` (one handle, e.g. a result ``Tensor`` handed to
  the caller) or ``keep()`` (all of them, on success: a long-lived owner such as ``Tensor``
  took them; on an error they are still released).

A finished transaction is empty: ending it again releases nothing. Owning objects
(``Tensor``, ``DeviceBuffer``...) use one while they are being built and then keep what it
holds in their finalizer; ``_convert.executor.Call`` holds one for the temporaries of an op call.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from types import TracebackType
from typing import Any, Protocol, TypeAlias


class Deferrer(Protocol):
    """What a transaction hands the releases that wait for a stream to (``library.Library``)."""

    def defer(self, release: Callable[[], None], nbytes: int = 0) -> None: ...


#: A release: called with its one argument (a C handle, a wrapper object...).
Release: TypeAlias = Callable[[Any], object]
#: A registration: ``(release, handle, after_stream, nbytes)`` (``Transaction.add``'s arguments).
Held: TypeAlias = tuple[Release, object, bool, int]


def quietly(release: Callable[[], object]) -> None:
    """Run ``release``, dropping any ``Exception`` (for finalizers, which must never raise)."""
    try:
        release()
    except Exception:
        pass


def _release_all(held: list[Held]) -> BaseException | None:
    """Run every release of ``held`` newest first, whatever each does; the first error."""
    first: BaseException | None = None
    for release, arg, _, _ in reversed(held):
        try:
            release(arg)
        except BaseException as exc:  # KeyboardInterrupt too: the rest still run
            if first is None:
                first = exc
    return first


def run_all(releases: Sequence[Callable[[], object]]) -> BaseException | None:
    """Run every one of ``releases`` newest first, whatever each does, and return the first
    error (None when all succeeded): the library's releases waiting for a stream."""
    first: BaseException | None = None
    for release in reversed(releases):
        try:
            release()
        except BaseException as exc:
            if first is None:
                first = exc
    return first


class _Waiting:
    """The ``after_stream`` releases of one transaction, run once when the stream is past
    them. A deferred bundle runs after its call returned: no caller can take its errors."""

    __slots__ = ("held",)

    def __init__(self, held: list[Held]) -> None:
        self.held = held

    def __call__(self) -> None:
        held, self.held = self.held, []
        _release_all(held)


class Transaction:
    """Owns the handles registered with ``add`` until it ends (module docstring).

    ``with Transaction() as tx:`` ends it with the block; ``end(error, defer_to)`` ends it
    explicitly (an op call ends its own from its ``__exit__``)."""

    __slots__ = ("_held", "hold", "_kept")

    def __init__(self) -> None:
        self._held: list[Held] = []
        #: ``hold((release, handle, after_stream, nbytes))``: ``add`` as one C-level call, for
        #: the per-call hot path (an op call registers half a dozen handles).
        self.hold: Callable[[Held], None] = self._held.append
        self._kept = False

    def add(self, release: Release, handle: object, after_stream: bool = False, nbytes: int = 0) -> None:
        """Own ``handle``: ``release(handle)`` when the transaction ends. ``after_stream``:
        queued work may still use it (device memory, or an object keeping such memory alive),
        so it waits for the stream when the transaction ends with ``defer_to``; ``nbytes``: the
        device memory its release frees (counted against the library's bound)."""
        self._held.append((release, handle, after_stream, nbytes))

    def detach(self, handle: object) -> None:
        """Ownership of ``handle`` passes on: its release (the newest registered for it) will
        not run. ValueError if the transaction does not hold it."""
        held = self._held
        # (The common cases first: the handle just registered, or the one before it, as an
        # executor before its workspace.)
        if held and held[-1][1] is handle:
            held.pop()
            return
        if len(held) > 1 and held[-2][1] is handle:
            del held[-2]
            return
        for i in range(len(held) - 3, -1, -1):
            if held[i][1] is handle:
                del held[i]
                return
        raise ValueError(f"aclnn_py: this transaction does not hold {handle!r}")

    def keep(self) -> None:
        """On success, release nothing: every handle passed to the object built from them."""
        self._kept = True

    def __len__(self) -> int:
        """The handles held now."""
        return len(self._held)

    def end(self, error: BaseException | None = None, defer_to: Deferrer | None = None) -> None:
        """Release what is held, once (see the module docstring). ``error``: the block's
        exception, if it failed (then it is the one that propagates, and ``keep`` does not
        apply). ``defer_to``: the library whose stream the ``after_stream`` handles wait for
        (one ``Library.defer`` for them all); None releases them now with the rest."""
        if self._kept:
            self._kept = False
            if error is None:
                self._held.clear()
                return
        if not self._held:  # (an op call on the fast path holds nothing)
            return
        held = self._held[:]
        self._held.clear()  # (in place: ``hold`` appends to it)
        waiting: list[Held] = []
        if defer_to is not None:
            now: list[Held] = []
            nbytes = 0
            for h in held:
                if h[2]:
                    waiting.append(h)
                    nbytes += h[3]
                else:
                    now.append(h)
            held = now
        first = _release_all(held)
        if waiting and defer_to is not None:
            bundle = _Waiting(waiting)
            try:
                defer_to.defer(bundle, nbytes)
            except BaseException as exc:
                # (A failed wait has run the waiting releases already; otherwise they run now
                # rather than never: the bundle runs once.)
                bundle()
                if first is None:
                    first = exc
        if first is not None and error is None:
            raise first

    def __enter__(self) -> Transaction:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if exc is None and self._kept:  # (the common end of building an owner: ``end``'s first case)
            self._kept = False
            self._held.clear()
            return
        self.end(exc)


__all__ = ["Release", "Transaction", "quietly", "run_all"]
