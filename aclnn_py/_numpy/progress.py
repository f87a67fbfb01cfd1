"""A one-line progress report on stderr, rewritten in place with carriage returns."""

from __future__ import annotations

import contextlib
import sys
import threading
import time
from collections.abc import Iterator
from typing import TextIO

from .._environ import Setting


class Progress:
    """Shows ``label: done/total unit (elapsed)`` once a run has lasted ``after`` seconds
    (``label: running (elapsed)`` for a run of unknown length, ``total=None``).

    ``enabled=None`` shows it only on a terminal: in a log file the rewrites would pile up.
    The line is erased by ``close()`` (or leaving the ``with`` block), so the results printed
    afterwards start on a clean line.
    """

    def __init__(self, label: str, total: int | None, unit: str = "", *, enabled: bool | None = None,
                 after: float = 1.0, interval: float = 0.1, stream: TextIO | None = None) -> None:
        self.label = label
        self.total = total
        self.unit = unit
        self.stream = sys.stderr if stream is None else stream
        self.enabled = self.stream.isatty() if enabled is None else enabled
        self.after = after
        self.interval = interval
        self.start = time.perf_counter()
        self._last = float("-inf")
        self._width = 0

    def update(self, done: int) -> None:
        if not self.enabled:
            return
        now = time.perf_counter()
        if now - self.start < self.after or (now - self._last < self.interval and
                                             (self.total is None or done < self.total)):
            return
        self._last = now
        unit = f" {self.unit}" if self.unit else ""
        count = "running" if self.total is None else f"{done}/{self.total}{unit}"
        line = f"{self.label}: {count} ({now - self.start:.1f} s)"
        self.stream.write("\r" + line.ljust(self._width))
        self.stream.flush()
        self._width = max(self._width, len(line))

    @property
    def shown(self) -> bool:
        return self._width > 0

    def close(self) -> None:
        if self.shown:
            self.stream.write("\r" + " " * self._width + "\r")
            self.stream.flush()
            self._width = 0

    def __enter__(self) -> "Progress":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


ENV_VAR = "ACLNN_PY_PROGRESS"


def setting() -> bool | None:
    """``ACLNN_PY_PROGRESS``: ``1``/``always`` shows a progress line for long numpy-backend calls,
    ``auto`` shows it when stderr is a terminal (None), unset, ``0`` or ``never``: not (False).
    Any other value is a ValueError naming the variable (on every call)."""
    return _SETTING.get()


def _parse(text: str) -> bool | None:
    value = text.strip().lower()
    if value in ("", "0", "never"):
        return False
    if value in ("1", "always"):
        return True
    if value == "auto":
        return None
    raise ValueError(f"environment variable {ENV_VAR}={value!r}: expected 1/always, auto, or 0/never")


_SETTING = Setting(ENV_VAR, _parse)  # read on every call, parsed when it changed


@contextlib.contextmanager
def ticking(label: str, enabled: bool | None, *, after: float = 0.5, interval: float = 0.1) -> Iterator[None]:
    """While the block runs, a thread shows ``label: running (elapsed)`` on stderr once it has
    taken ``after`` seconds (the block itself cannot report: it is one NumPy kernel)."""
    progress = Progress(label, None, enabled=enabled, after=after, interval=interval)
    if not progress.enabled:
        yield
        return
    done = threading.Event()

    def tick() -> None:
        while not done.wait(interval):
            progress.update(0)

    thread = threading.Thread(target=tick, name="aclnn_py-progress", daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join()
        progress.close()
