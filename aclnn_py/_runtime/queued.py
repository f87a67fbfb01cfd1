"""Which operator call queued the work that failed, for errors reported at a later
synchronisation, and ``ACLNN_PY_BLOCKING=1``, which synchronises after every operator call.

With device ``Tensor`` arguments a chain of calls runs asynchronously: a failure in phase 2
(an out-of-range unpool index: 507015) surfaces when the stream is next waited for, far from
its cause. Each thread keeps the operator calls it queued since its last synchronisation (the
C name and the place in the caller's code, the first frame outside this package); an error of
queued work found at the synchronisation names the call that queued it (the one the library's
message names, else the first queued). ``ACLNN_PY_BLOCKING=1`` (as CUDA's CUDA_LAUNCH_BLOCKING)
waits after every call instead, so that its error is raised by the call itself.
"""

from __future__ import annotations

import inspect
import re
from types import CodeType, FrameType
from typing import Any
from pathlib import Path

from .._environ import Setting
from .._errors import AclnnError

BLOCKING_VAR = "ACLNN_PY_BLOCKING"
#: Calls remembered per thread between synchronisations (the binding synchronises by itself
#: after at most a few hundred queued calls: ``library.MAX_PENDING_RELEASES``).
KEPT = 1024

PACKAGE = str(Path(__file__).resolve().parent.parent)
#: The runtime's statuses for work that failed on the device (507000-507999: the AI core
#: exception, timeouts, ... of ACL's error codes).
_DEVICE_FAILURES = range(507000, 508000)


def _parse_blocking(text: str) -> bool:
    value = text.strip()
    if value not in ("", "0", "1"):
        raise ValueError(f"environment variable {BLOCKING_VAR}={text!r}: expected 0 or 1")
    return value == "1"


#: ``ACLNN_PY_BLOCKING``, parsed (the fast entry reads its ``key`` in ``os.environ``'s table, and
#: calls ``blocking`` when the value there changed).
BLOCKING = Setting(BLOCKING_VAR, _parse_blocking)


def blocking() -> bool:
    """Whether every operator call waits for its work (``ACLNN_PY_BLOCKING=1``)."""
    return BLOCKING.get()


def caller_site() -> str:
    """Where in the caller's code the current operator call was made: ``file:line in function``
    of the first frame outside this package."""
    return site_text(_site())


def _site() -> tuple[CodeType, int] | None:
    """The first frame outside this package as ``(code, f_lasti)``: its line is looked up only
    when an error names it (``site_text``), as the fast entry keeps it (``entry.c``)."""
    frame: FrameType | None = inspect.currentframe()
    try:
        while frame is not None and frame.f_code.co_filename.startswith(PACKAGE):
            frame = frame.f_back
        return None if frame is None else (frame.f_code, frame.f_lasti)
    finally:
        del frame


def site_text(site: tuple[CodeType, int] | str | None) -> str:
    """A remembered site as ``file:line in function`` (a text already: itself)."""
    if site is None:
        return "an unknown place"
    if isinstance(site, str):
        return site
    code, lasti = site
    return f"{code.co_filename}:{_line(code, lasti)} in {code.co_name}"


def _line(code: CodeType, lasti: int) -> int:
    """The source line of the instruction at byte offset ``lasti`` of ``code`` (``f_lineno``'s)."""
    for start, end, line in code.co_lines():
        if start <= lasti < end and line is not None:
            return line
    return code.co_firstlineno


def remember(calls: list[tuple[str, Any]], op: str) -> None:
    """Add the call of ``op`` made now to a thread's list of queued calls (its site's text is
    made only if an error names it: this runs on every device-Tensor call)."""
    if len(calls) >= KEPT:
        del calls[: KEPT // 2]
    calls.append((op, _site()))


def attributed(error: AclnnError, calls: list[tuple[str, Any]]) -> AclnnError:
    """``error``, raised by a synchronisation, naming the queued call it came from when it is
    a failure of device work and calls were queued (else ``error`` itself)."""
    if error.status not in _DEVICE_FAILURES or not calls:
        return error
    named = [(op, site) for op, site in calls if re.search(rf"\b{re.escape(op)}\b", error.message)]
    op, where = (named or calls)[0]
    site = site_text(where)
    others = len(calls) - 1
    note = f"queued by {op} called at {site}" + (
        f"; {others} more call{'s' if others > 1 else ''} queued since the last synchronisation" if others else "")
    return AclnnError(error.status, error.api, f"{error.message} ({note})" if error.message else note)
