"""A one-line progress report on stderr, rewritten in place with carriage returns."""

from __future__ import annotations

import sys
import time
from typing import TextIO


class Progress:
    """Shows ``label: done/total unit (elapsed)`` once a run has lasted ``after`` seconds.

    ``enabled=None`` shows it only on a terminal: in a log file the rewrites would pile up.
    The line is erased by ``close()`` (or leaving the ``with`` block), so the results printed
    afterwards start on a clean line.
    """

    def __init__(self, label: str, total: int, unit: str = "", *, enabled: bool | None = None,
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
        if now - self.start < self.after or (now - self._last < self.interval and done < self.total):
            return
        self._last = now
        unit = f" {self.unit}" if self.unit else ""
        line = f"{self.label}: {done}/{self.total}{unit} ({now - self.start:.1f} s)"
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

    def __exit__(self, *exc) -> None:
        self.close()
