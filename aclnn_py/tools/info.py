"""``python -m aclnn_py info``: which backends this host can use, what was found where, what is
missing and how to fix it.

For ``npu`` and ``sim`` it reports the toolkit home and how it was found, the libraries, the
toolkit version (from CANN's install files), the ACL version (``aclrtGetVersion``), the device
count (``aclrtGetDeviceCount``), the SoC name (``aclrtGetSocName``) and which of the binding's
operators the libraries export. On ``sim`` those figures come from the simulator.

``npu`` and ``sim`` cannot both be loaded in one process (their libraries have the same names),
so each is probed in a child process (``python -m aclnn_py.tools.info --probe NAME``), unless
this process has already loaded it; a backend whose libraries are not even found is reported
without one. A child process also keeps a crashing driver from taking the report down.

Exit status: 0 if the default backend (``$ACLNN_PY_BACKEND``, else the automatic choice: ``npu``
where it is usable, else ``numpy``) is usable, 1 otherwise.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import os
import platform
import subprocess
import sys
from dataclasses import asdict, dataclass, field
from typing import Any
from pathlib import Path

from .. import _fast
from .._runtime import backend as _backend
from .._runtime import loader
from .._errors import AclnnError
from ..ops._registry import operators
from .._ffi.discovery import OVERRIDE_VAR, BackendUnavailable, Toolkit, find_cann, toolkit_at

# The C entry points of the binding's operators.
OPERATORS = tuple(op.kernel for op in operators())

ENVIRONMENT = (_backend.ENV_VAR, OVERRIDE_VAR, "ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME", "ASCEND_OPP_PATH",
               "ASCEND_CUSTOM_OPP_PATH", "ACLNN_PY_SIM_HOME", "ACLNN_PY_DEVICE", "LD_LIBRARY_PATH")

PROBE_TIMEOUT = 120.0  # seconds; aclInit and opening a device take a few seconds on an NPU host
_PROBE_MARK = "ACLNN_PY_PROBE "


@dataclass
class BackendStatus:
    """What ``info`` found out about one backend."""

    name: str
    usable: bool
    summary: str                                   # "usable", or why not, in a few words
    details: list[tuple[str, str]] = field(default_factory=list)  # (what, value), in order
    problem: str = ""                              # the full error text when not usable
    fix: str = ""                                  # what to do about it (or a missing operator)


@dataclass
class Report:
    version: str
    package: str
    python: str
    default_backend: str
    default_reason: str
    backends: list[BackendStatus]
    environment: dict[str, str]
    fast_path: str = ""  # aclnn_py._fast.describe(): npu's and sim's per-call entry

    @property
    def default_usable(self) -> bool:
        return any(b.name == self.default_backend and b.usable for b in self.backends)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["default_usable"] = self.default_usable
        for backend in data["backends"]:
            backend["details"] = dict(backend["details"])
        return data


# -- versions ---------------------------------------------------------------------------------

def _read_version(path: Path) -> str | None:
    """The ``version=`` / ``Version=`` value of a CANN install file, if it has one."""
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return None
    for line in text.splitlines():
        key, sep, value = line.partition("=")
        if sep and key.strip().lower() == "version" and value.strip():
            return value.strip()
    return None


def toolkit_version(home: str | Path) -> tuple[str, str]:
    """``(version, file it was read from)`` of a toolkit home, or ``("unknown", "")``.

    CANN records the toolkit package version in ``<home>/<arch>-linux/ascend_toolkit_install.info``
    (``version=8.0.RC2``); components keep a ``version.info`` (``Version=7.3.0.1.231``) in the
    home, next to it (one level up in a versioned layout), or in their sub-directory.
    """
    home = Path(home)
    candidates = [*sorted(home.glob("*-linux/ascend_toolkit_install.info")), home / "version.info",
                  home.parent / "version.info", home / "runtime" / "version.info",
                  *sorted(home.glob("*/version.info"))]
    for path in candidates:
        version = _read_version(path)
        if version:
            return version, str(path)
    return "unknown", ""


def _package_version(distribution: str) -> str:
    """An installed distribution's version, without importing it (importing torch takes seconds)."""
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


# -- probing ----------------------------------------------------------------------------------

def _toolkit_details(toolkit: Toolkit) -> list[tuple[str, str]]:
    version, source = toolkit_version(toolkit.home)
    return [
        ("home", f"{toolkit.home}" + (f" (from {toolkit.source})" if toolkit.source else "")),
        ("runtime", str(toolkit.runtime)),
        ("nnopbase", str(toolkit.base)),
        ("operator libraries", ", ".join(str(p) for p in toolkit.ops)),
        *[("custom operator package", f"{p.root} (from {p.source}"
           + ("" if p.library else "; no op_api/lib/libcust_opapi.so") + ")") for p in toolkit.custom],
        ("toolkit version", f"{version} (from {source})" if source else "unknown (no version file in the home)"),
    ]


def _c_out(lib: Any, ctype: str, api: str, *args: Any) -> Any:
    p = lib.ffi.new(ctype)
    lib.call(api, *args, p)
    return p[0]


def _probe_loaded(status: BackendStatus) -> BackendStatus:
    """Load the libraries of ``status.name`` in this process and ask them about the device."""
    name = status.name
    other = next((loaded for loaded in loader.loaded_backends() if loaded != name), None)
    if other is not None:
        status.summary = f"not probed: this process has loaded backend {other!r}, which excludes {name!r}"
        status.fix = "run `python -m aclnn_py info`, which probes each backend in a process of its own"
        return status
    try:
        lib = loader.library(name)
    except FileNotFoundError as exc:  # the binding's own headers, the source of its declarations
        status.summary, status.problem = "aclnn_py's C headers are missing", str(exc)
        status.fix = "reinstall aclnn_py: the package carries its headers in aclnn_py/include"
        return status
    except BackendUnavailable as exc:
        status.summary, status.problem = "found, but its libraries do not load", str(exc)
        status.fix = ("run the toolkit's set_env.sh so that the loader finds the libraries they depend on "
                      "(the driver's among them: /usr/local/Ascend/driver/lib64), and check that the toolkit "
                      "was built for this CPU architecture")
        return status
    try:
        lib.ensure_initialized()
        ffi = lib.ffi
        major, minor, patch = ffi.new("int32_t *"), ffi.new("int32_t *"), ffi.new("int32_t *")
        if lib.has("aclrtGetVersion") and lib.fn("aclrtGetVersion")(major, minor, patch) == 0:
            status.details.append(("ACL version", f"{major[0]}.{minor[0]}.{patch[0]} (aclrtGetVersion)"))
        count = _c_out(lib, "uint32_t *", "aclrtGetDeviceCount")
        status.details.append(("devices", str(count)))
        if count == 0:
            status.summary = "no device"
            status.fix = ("check `npu-smi info`: the NPU driver must be installed and loaded, and this user "
                          "needs access to /dev/davinci* (the HwHiAiUser group)")
            return status
        if lib.device_id >= count:
            status.summary = f"device {lib.device_id} does not exist"
            status.fix = f"set $ACLNN_PY_DEVICE to a device id from 0 to {count - 1}"
            return status
        lib.stream()  # aclrtSetDevice + aclrtCreateStream: the device really works
        soc = lib.fn("aclrtGetSocName")()
        status.details.append(("device in use", f"{lib.device_id} ($ACLNN_PY_DEVICE selects another)"))
        status.details.append(("SoC", ffi.string(soc).decode() if soc != ffi.NULL else "unknown"))  # type: ignore[union-attr]
    except AclnnError as exc:
        status.summary, status.problem = f"{exc.api} failed", str(exc)
        status.fix = "check `npu-smi info` and the driver installation; the error above comes from CANN"
        return status

    missing = [op for op in OPERATORS if not (lib.has(f"{op}GetWorkspaceSize") and lib.has(op))]
    status.details.append(("operators", f"{len(OPERATORS) - len(missing)} of {len(OPERATORS)} exported"
                                        + (f"; missing: {', '.join(missing)}" if missing else "")))
    if missing:
        status.fix = ("the installed CANN predates the missing operators: upgrade the toolkit and the ops "
                      "package (calls to them raise AclnnError 200001)")
    status.usable, status.summary = True, "usable"
    return status


def _npu_toolkit() -> tuple[BackendStatus, bool]:
    """(the status so far, whether there is anything to load)."""
    try:
        toolkit = find_cann()
    except BackendUnavailable as exc:
        return BackendStatus("npu", False, "no CANN toolkit found", problem=str(exc)), False
    return BackendStatus("npu", False, "not probed", _toolkit_details(toolkit)), True


def _sim_toolkit() -> tuple[BackendStatus, bool]:
    from .. import sim
    from ..sim import _build

    try:
        home = sim.home()
    except sim.SimNotBuiltError as exc:
        return BackendStatus("sim", False, "simulator not built", problem=str(exc)), False
    toolkit, reason = toolkit_at(home, "aclnn_py.sim.home()")
    if toolkit is None:
        return BackendStatus("sim", False, "simulator toolkit incomplete", problem=reason,
                             fix="rebuild it: python -m aclnn_py.sim build"), False
    status = BackendStatus("sim", False, "not probed", _toolkit_details(toolkit))
    if Path(home) == _build.DEFAULT_HOME.resolve() and _build.SRC_DIR.is_dir():
        try:
            _build.find_compiler()
        except _build.SimBuildError:
            pass  # without a compiler, freshness cannot be judged (nor fixed)
        else:
            current = _build.is_current(home)
            status.details.append(("built from current sources", "yes" if current else
                                   "no: rebuild with `python -m aclnn_py.sim build`"))
    return status, True


def probe(name: str) -> BackendStatus:
    """The status of backend ``name``, probed in this process (``npu``/``sim``: loads them)."""
    if name == "numpy":
        return BackendStatus("numpy", True, "usable", [
            ("numpy", _package_version("numpy")),
            ("ml_dtypes", _package_version("ml_dtypes")),
            ("PyTorch", _package_version("torch") + " (the reference of `selftest --backend numpy`)"),
        ])
    status, loadable = _npu_toolkit() if name == "npu" else _sim_toolkit()
    return _probe_loaded(status) if loadable else status


def probe_isolated(name: str, timeout: float = PROBE_TIMEOUT) -> BackendStatus:
    """``probe(name)`` in a child process (or here, if this process already loaded ``name``)."""
    if name == "numpy" or name in loader.loaded_backends():  # already loaded here: asking it again is free
        return probe(name)
    status, loadable = _npu_toolkit() if name == "npu" else _sim_toolkit()
    if not loadable:
        return status  # nothing to load: the file-system search said it all
    import aclnn_py

    env = dict(os.environ)
    package_root = str(Path(aclnn_py.__file__).resolve().parent.parent)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (package_root, env.get("PYTHONPATH", "")) if p)
    argv = [sys.executable, "-m", "aclnn_py.tools.info", "--probe", name]
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        status.summary = f"probe did not finish in {timeout:.0f} s"
        status.fix = "aclInit / aclrtSetDevice hang: check `npu-smi info` and the driver"
        return status
    for line in reversed(done.stdout.splitlines()):
        if line.startswith(_PROBE_MARK):
            data = json.loads(line[len(_PROBE_MARK):])
            data["details"] = [tuple(d) for d in data["details"]]
            return BackendStatus(**data)
    how = f"signal {-done.returncode}" if done.returncode < 0 else f"exit status {done.returncode}"
    status.summary = f"the probe process failed ({how})"
    status.problem = "\n".join(done.stderr.strip().splitlines()[-15:])
    status.fix = "loading the libraries crashed the process: check that the toolkit and driver versions match"
    return status


def default_backend(statuses: dict[str, BackendStatus]) -> tuple[str, str]:
    """The backend a new process uses by default, and why (``$ACLNN_PY_BACKEND`` or automatic)."""
    env = os.environ.get(_backend.ENV_VAR)
    if env:
        if env not in _backend.BACKENDS:
            return env, f"${_backend.ENV_VAR}={env!r} is not one of {', '.join(_backend.BACKENDS)}"
        return env, f"from ${_backend.ENV_VAR}"
    if statuses["npu"].usable:
        return "npu", "automatic: CANN and a device found"
    return "numpy", "automatic: no usable NPU"


def collect() -> Report:
    """Probe every backend (``npu``/``sim`` in child processes, see the module docstring)."""
    import aclnn_py

    statuses = {name: probe_isolated(name) for name in _backend.BACKENDS}
    default, reason = default_backend(statuses)
    environment = {var: os.environ.get(var, "") for var in ENVIRONMENT}
    return Report(aclnn_py.__version__, str(Path(aclnn_py.__file__).resolve().parent),
                  f"{platform.python_version()} ({sys.executable})", default, reason,
                  list(statuses.values()), environment, _fast.describe()[1])


# -- output -----------------------------------------------------------------------------------

def _indent(text: str, prefix: str) -> str:
    return "\n".join(prefix + line for line in text.splitlines())


def format_report(report: Report) -> str:
    lines = [f"aclnn_py {report.version} at {report.package}", f"Python {report.python}",
             f"default backend: {report.default_backend} ({report.default_reason}) -> "
             + ("usable" if report.default_usable else "NOT USABLE"),
             f"fast path (npu, sim): {report.fast_path}", ""]
    for status in report.backends:
        lines.append(f"{status.name:<6} {'usable' if status.usable else 'NOT USABLE: ' + status.summary}")
        width = max((len(k) for k, _ in status.details), default=0)
        lines += [f"         {key:<{width}}  {value}" for key, value in status.details]
        if status.problem:
            lines.append(_indent(status.problem, "         | "))
        if status.fix:
            lines.append(f"         fix: {status.fix}")
    lines += ["", "environment:"]
    width = max(len(k) for k in report.environment)
    lines += [f"  {key:<{width}}  {value or '(not set)'}" for key, value in report.environment.items()]
    usable = [b.name for b in report.backends if b.usable and b.name != "numpy"]
    lines += ["", "next: python -m aclnn_py selftest" + (f" --backend {usable[0]}" if usable else "")]
    return "\n".join(lines)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print the report as JSON")


def run(args: argparse.Namespace) -> int:
    report = collect()
    if args.json:
        print(json.dumps(report.to_dict(), indent=2))
    else:
        print(format_report(report))
    return 0 if report.default_usable else 1


def _probe_main(argv: list[str]) -> int:
    """The child process of ``probe_isolated``: one JSON line, marked, on stdout."""
    parser = argparse.ArgumentParser(prog="python -m aclnn_py.tools.info")
    parser.add_argument("--probe", choices=[b for b in _backend.BACKENDS if b != "numpy"], required=True)
    status = probe(parser.parse_args(argv).probe)
    print(_PROBE_MARK + json.dumps(asdict(status)), flush=True)
    return 0


__all__ = ["BackendStatus", "Report", "collect", "default_backend", "format_report", "probe", "probe_isolated",
           "toolkit_version"]


if __name__ == "__main__":
    sys.exit(_probe_main(sys.argv[1:]))

