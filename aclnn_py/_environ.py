"""An environment variable read on every call of a hot path, parsed only when it changed.

``os.environ.get`` encodes the name and decodes the value on each call (~0.3-0.5 us, a tenth of
a tiny numpy-backend call). ``Setting.get()`` looks the raw value up in ``os.environ``'s own
table (what ``os.environ[...] = ...``, ``del``, ``monkeypatch.setenv`` and ``putenv`` through
``os.environ`` all update) and parses it again only when it differs from the one parsed last,
so a change at run time takes effect on the next call, as with ``os.environ.get``. A value
that does not parse raises on every call (nothing is kept for it).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")

_UNSEEN = object()


class Setting(Generic[T]):
    """The variable ``name``, as ``parse(value)`` makes it (``value`` is ``""`` when unset)."""

    def __init__(self, name: str, parse: Callable[[str], T]) -> None:
        self.name = name
        self.parse = parse
        encode = getattr(os.environ, "encodekey", None)
        #: The name as ``os.environ``'s table (``os.environ._data``) stores it.
        self.key: object = encode(name) if encode is not None else name
        self._last: tuple[object, T] | None = None  # (raw value, parsed), replaced as one

    def raw(self) -> object:
        """The variable's value as ``os.environ`` stores it (None when unset)."""
        data = getattr(os.environ, "_data", None)
        if type(data) is dict:
            return data.get(self.key)
        return os.environ.get(self.name)  # os.environ replaced by a plain mapping

    def get(self) -> T:
        raw = self.raw()
        last = self._last
        if last is not None and last[0] == raw:
            return last[1]
        value = self.parse(os.environ.get(self.name, ""))
        self._last = (raw, value)
        return value
