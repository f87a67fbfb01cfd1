"""Where the CANN libraries are: a search that says what it tried (result cached per process).

Order (first hit wins):

1. ``$ACLNN_PY_ASCEND_HOME`` — an explicit override, for hosts with several toolkits. When it
   is set, it is the only place searched: a home that does not qualify is an error, never a
   silent fall-back to the ``$ASCEND_HOME_PATH`` that CANN's ``set_env.sh`` exports;
2. ``$ASCEND_HOME_PATH`` and ``$ASCEND_TOOLKIT_HOME`` (exported by CANN's ``set_env.sh``);
3. every directory of ``$LD_LIBRARY_PATH`` holding ``libascendcl.so`` (its parent is the home);
4. ``/usr/local/Ascend/ascend-toolkit/latest`` (CANN <= 8.3) and ``/usr/local/Ascend/cann``
   (CANN 8.5+).

Custom operator packages are found as CANN and torch_npu find them, and searched before the
toolkit's own operators (a custom package may override a built-in operator):

1. each directory of ``$ASCEND_CUSTOM_OPP_PATH`` (a colon list), in order;
2. the vendors of ``$ASCEND_OPP_PATH/vendors/config.ini`` (``load_priority=a,b``; the toolkit's
   ``opp/`` when ``$ASCEND_OPP_PATH`` is not set), in that order.

Each package holds its library as ``op_api/lib/libcust_opapi.so`` and its headers in
``op_api/include/``.

A home qualifies when ``lib64/`` holds the runtime (``libascendcl.so``, or ``libacl_rt.so``
on CANN 9 hosts without the compatibility name), ``libnnopbase.so`` and at least one operator
library (``libopapi.so`` or ``libopapi_*.so``).
"""

from __future__ import annotations

import functools
import os
import warnings
from dataclasses import dataclass, field
from pathlib import Path

from .op_packages import AGGREGATE_LIBRARY

OVERRIDE_VAR = "ACLNN_PY_ASCEND_HOME"
DEFAULT_HOMES = ("/usr/local/Ascend/ascend-toolkit/latest", "/usr/local/Ascend/cann")
RUNTIME_NAMES = ("libascendcl.so", "libacl_rt.so")
BASE_NAME = "libnnopbase.so"
OPS_NAME = AGGREGATE_LIBRARY  # the classic aggregate operator library


CUSTOM_PATH_VAR = "ASCEND_CUSTOM_OPP_PATH"
OPP_PATH_VAR = "ASCEND_OPP_PATH"
CUSTOM_LIBRARY = Path("op_api") / "lib" / "libcust_opapi.so"
CUSTOM_INCLUDE = Path("op_api") / "include"


class BackendUnavailable(RuntimeError):
    """A backend's libraries cannot be found or loaded; the text says what was tried."""


@dataclass(frozen=True)
class CustomPackage:
    """A custom operator package (``vendors/<name>`` or an ``$ASCEND_CUSTOM_OPP_PATH`` entry)."""

    root: Path
    library: Path | None   # op_api/lib/libcust_opapi.so, when present
    include: Path | None   # op_api/include, when present
    source: str            # how it was found


def _shown(path: Path | str) -> str:
    """``path`` for a message: whole, or its ends when it is too long to read."""
    text = str(path)
    return text if len(text) <= 160 else f"{text[:100]}...{text[-40:]} ({len(text)} characters)"


def _why(exc: OSError | ValueError) -> str:
    return (exc.strerror or str(exc)) if isinstance(exc, OSError) else str(exc)


def _skipped(what: str, source: str, exc: OSError | ValueError) -> None:
    """Warn that a custom operator package (or its list) is unusable: the search goes on
    without it, as torch_npu's does."""
    warnings.warn(f"custom operator package {_shown(what)} (from {source}): {_why(exc)}; skipped",
                  UserWarning, stacklevel=4)


def skip_package(package: CustomPackage, exc: OSError | ValueError) -> None:
    """Warn that ``package``, found by the search, turned out unusable when its library was
    loaded (a corrupt or foreign ``libcust_opapi.so``): the backend goes on without it."""
    _skipped(str(package.root), package.source, exc)


def _load_priority(config: Path) -> list[str]:
    """The vendor names of a ``vendors/config.ini`` ``load_priority=`` line, in order."""
    try:
        # Only a regular file is read: a FIFO would block, a directory holds no priorities.
        if not config.is_file():
            return []
        lines = config.read_text(errors="replace").splitlines()
    except (OSError, ValueError) as exc:
        warnings.warn(f"{_shown(config)}: {_why(exc)}; the vendors it lists are not searched",
                      UserWarning, stacklevel=3)
        return []
    for line in lines:
        key, sep, value = line.partition("=")
        if sep and key.strip() == "load_priority":
            return [v.strip() for v in value.split(",") if v.strip()]
    return []


def custom_packages(home: str | Path) -> tuple[CustomPackage, ...]:
    """The custom operator packages of a toolkit home, in search order (highest priority first)."""
    found: list[tuple[Path, str]] = []
    for entry in os.environ.get(CUSTOM_PATH_VAR, "").split(":"):
        if entry.strip():
            found.append((Path(entry.strip()), f"${CUSTOM_PATH_VAR}"))
    opp = os.environ.get(OPP_PATH_VAR, "").strip()
    vendors = (Path(opp) if opp else Path(home) / "opp") / "vendors"
    for name in _load_priority(vendors / "config.ini"):
        found.append((vendors / name, f"{vendors / 'config.ini'} load_priority"))
    packages: list[CustomPackage] = []
    seen: set[Path] = set()
    for root, source in found:
        library, include = root / CUSTOM_LIBRARY, root / CUSTOM_INCLUDE
        try:  # every path here comes from the configuration: any may be unusable
            if not root.is_dir() or root.resolve() in seen:
                continue
            seen.add(root.resolve())
            package = CustomPackage(root, library if library.is_file() else None,
                                    include if include.is_dir() else None, source)
        except (OSError, ValueError) as exc:  # a name too long for the file system, no permission...
            _skipped(str(root), source, exc)
            continue
        packages.append(package)
    return tuple(packages)


@dataclass(frozen=True)
class Toolkit:
    """The libraries of one CANN (or simulator) toolkit home."""

    home: Path
    runtime: Path
    base: Path
    # libopapi.so first (when present), then libopapi_<pkg>.so: where symbols are looked up.
    ops: tuple[Path, ...]
    source: str = field(default="", compare=False)
    # Custom operator packages, highest priority first: searched before ``ops``.
    custom: tuple[CustomPackage, ...] = ()

    @property
    def lib_dir(self) -> Path:
        return self.runtime.parent

    @property
    def operator_libraries(self) -> tuple[Path, ...]:
        """Where operators are looked up, in order: custom packages, then the toolkit's."""
        return tuple(p.library for p in self.custom if p.library is not None) + self.ops

    @property
    def header_folders(self) -> tuple[Path, ...]:
        """Where operator headers are looked up, in order: custom packages, then ``include/aclnnop``."""
        return tuple(p.include for p in self.custom if p.include is not None) + (self.home / "include" / "aclnnop",)


def toolkit_at(home: str | Path, source: str = "") -> tuple[Toolkit | None, str]:
    """(the toolkit at ``home``, or None with the reason it does not qualify)."""
    try:
        return _toolkit_at(Path(home), source)
    except (OSError, ValueError) as exc:  # a path from the environment no file system can hold
        return None, f"{_shown(home)}: {_why(exc)}"


def _toolkit_at(home: Path, source: str) -> tuple[Toolkit | None, str]:
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
    return Toolkit(home, runtime, base, tuple(ops), source, custom_packages(home)), ""


def _is_file(path: Path) -> bool:
    """``path.is_file()``, False for a path no file system can hold (the loader passes over
    such an ``$LD_LIBRARY_PATH`` entry too)."""
    try:
        return path.is_file()
    except (OSError, ValueError):
        return False


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
        if entry and any(_is_file(Path(entry) / n) for n in RUNTIME_NAMES):
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
