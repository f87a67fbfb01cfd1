"""Where the CANN libraries are: a search that says what it tried (result cached per process).

Order (first hit wins):

1. ``$ACLNN_PY_ASCEND_HOME`` — an explicit override, for hosts with several toolkits. When it
   is set, it is the only place searched: a home that does not qualify is an error, never a
   silent fall-back to the ``$ASCEND_HOME_PATH`` that CANN's ``set_env.sh`` exports;
2. ``$ASCEND_HOME_PATH`` and ``$ASCEND_TOOLKIT_HOME`` (exported by CANN's ``set_env.sh``);
3. every directory of ``$LD_LIBRARY_PATH`` holding ``libascendcl.so`` (its parent is the home);
4. ``/usr/local/Ascend/ascend-toolkit/latest`` (CANN <= 8.3) and ``/usr/local/Ascend/cann``
   (CANN 8.5+).

A home qualifies when ``lib64/`` holds the runtime (``libascendcl.so``, or ``libacl_rt.so``
on CANN 9 hosts without the compatibility name), ``libnnopbase.so`` and at least one operator
library (``libopapi.so`` or ``libopapi_*.so``).
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass, field
from pathlib import Path

OVERRIDE_VAR = "ACLNN_PY_ASCEND_HOME"
DEFAULT_HOMES = ("/usr/local/Ascend/ascend-toolkit/latest", "/usr/local/Ascend/cann")
RUNTIME_NAMES = ("libascendcl.so", "libacl_rt.so")
BASE_NAME = "libnnopbase.so"
OPS_NAME = "libopapi.so"


class BackendUnavailable(RuntimeError):
    """A backend's libraries cannot be found or loaded; the text says what was tried."""


@dataclass(frozen=True)
class Toolkit:
    """The libraries of one CANN (or simulator) toolkit home."""

    home: Path
    runtime: Path
    base: Path
    # libopapi.so first (when present), then libopapi_<pkg>.so: where symbols are looked up.
    ops: tuple[Path, ...]
    source: str = field(default="", compare=False)

    @property
    def lib_dir(self) -> Path:
        return self.runtime.parent


def toolkit_at(home: str | Path, source: str = "") -> tuple[Toolkit | None, str]:
    """(the toolkit at ``home``, or None with the reason it does not qualify)."""
    home = Path(home)
    lib64 = home / "lib64"
    if not lib64.is_dir():
        return None, f"{lib64} is not a directory"
    runtime = next((lib64 / n for n in RUNTIME_NAMES if (lib64 / n).is_file()), None)
    if runtime is None:
        return None, f"{lib64} has neither {' nor '.join(RUNTIME_NAMES)}"
    base = lib64 / BASE_NAME
    if not base.is_file():
        return None, f"{lib64} has no {BASE_NAME}"
    ops = [lib64 / OPS_NAME] if (lib64 / OPS_NAME).is_file() else []
    ops += sorted(p for p in lib64.glob("libopapi_*.so") if p.is_file())
    if not ops:
        return None, f"{lib64} has no {OPS_NAME} and no libopapi_*.so"
    return Toolkit(home, runtime, base, tuple(ops), source), ""


def _candidates() -> list[tuple[str, str]]:
    override = os.environ.get(OVERRIDE_VAR, "").strip()
    if override:
        return [(override, f"${OVERRIDE_VAR}")]
    found: list[tuple[str, str]] = []
    for var in ("ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME"):
        value = os.environ.get(var)
        if value:
            found.append((value, f"${var}"))
    for entry in os.environ.get("LD_LIBRARY_PATH", "").split(os.pathsep):
        if entry and any((Path(entry) / n).is_file() for n in RUNTIME_NAMES):
            found.append((str(Path(entry).parent), "$LD_LIBRARY_PATH"))
    found += [(h, "default location") for h in DEFAULT_HOMES]
    return found


@functools.lru_cache(maxsize=1)
def find_cann() -> Toolkit:
    """The CANN toolkit of this host; ``BackendUnavailable`` listing every place tried."""
    tried: list[str] = []
    for home, source in _candidates():
        toolkit, reason = toolkit_at(home, source)
        if toolkit is not None:
            return toolkit
        tried.append(f"  {home} ({source}): {reason}")
    if os.environ.get(OVERRIDE_VAR, "").strip():
        raise BackendUnavailable(
            f"backend 'npu': no CANN toolkit found: ${OVERRIDE_VAR} is set, so it is the only place "
            "searched (not $ASCEND_HOME_PATH from CANN's set_env.sh, nor the default locations). Tried:\n" + "\n".join(tried) + "\n"
            f"Fix: point ${OVERRIDE_VAR} at the toolkit home (the directory holding lib64/), or unset it.")
    raise BackendUnavailable(
        "backend 'npu': no CANN toolkit found. Tried:\n" + "\n".join(tried) + "\n"
        "Fix: install the CANN toolkit and run its set_env.sh (e.g. `source "
        "/usr/local/Ascend/ascend-toolkit/set_env.sh`), or point "
        f"${OVERRIDE_VAR} at the toolkit home (the directory holding lib64/). "
        "Without an NPU, use backend 'sim' or 'numpy'."
    )
