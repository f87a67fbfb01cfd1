"""Build hook: compile the CANN simulator toolkit while building the package.

All metadata lives in pyproject.toml; this file only adds a ``build_py`` step that runs
``aclnn_py/sim/_build.py`` (loaded by path: the package itself is not importable in pip's
isolated build environment).

* ``pip install .`` / wheel builds: the C sources are copied into the build tree and the
  toolkit is compiled into ``aclnn_py/sim/toolkit`` inside it (headers copied), so the
  wheel carries a complete toolkit home and the sources to rebuild it.
* Every non-editable build starts from an empty ``build/lib/aclnn_py``: nothing left there by
  an earlier build reaches the wheel.
* ``pip install -e .``: the toolkit is compiled in the source tree
  (``aclnn_py/sim/toolkit``, git-ignored) with ``include/`` symlinked to the repository's
  headers; ``python -m aclnn_py.sim build`` rebuilds it after editing the C sources.

Without a C compiler the build stops with an error that says what to install.  Set
``ACLNN_PY_SKIP_SIM=1`` to install without the simulator (numpy and npu backends only).

After the simulator, the fast path is compiled (see ``aclnn_py/_fast/__init__.py``): its helper
``aclnn_py/_fast/libaclnn_py_fast.so`` from ``fastcall.c``, and its per-call entry, the CPython
extension ``aclnn_py/_fast/_entry.abi3.so`` from ``entry.c`` on the stable ABI of CPython 3.11
(skipped with a warning where the Python headers are missing); with ``ACLNN_PY_SKIP_SIM=1``
neither is, and every call takes the ABI-mode path.

The binding's own headers (``include/``, the source of its cffi declarations) are package
data: every non-editable build copies them to ``aclnn_py/include``, with or without the
simulator.  The wheel is tagged ``cp311-abi3-<platform>`` when it holds the fast entry: an
extension on CPython's stable ABI, so one wheel serves CPython 3.11 and later (a
``cpXY-cpXY`` tag would need a wheel per Python version for no gain: the entry uses nothing
beyond the limited API). Without it (``ACLNN_PY_SKIP_SIM=1``) the wheel holds no Python
extension, only native libraries for one platform (cffi's ABI mode dlopens them), and is
tagged ``py3-none-<platform>``.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
from pathlib import Path

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py

try:
    from setuptools.command.bdist_wheel import bdist_wheel
except ImportError:  # setuptools < 70.1
    from wheel.bdist_wheel import bdist_wheel

ROOT = Path(__file__).resolve().parent
SIM = ROOT / "aclnn_py" / "sim"
FAST = ROOT / "aclnn_py" / "_fast"


def _load(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _sim_builder():
    return _load("_aclnn_py_sim_build", SIM / "_build.py")


#: Whether this build compiled the fast entry (a CPython extension): the wheel's tag says so.
_built_entry: list[Path] = []


def _build_fast_path(out_dir: Path, announce) -> None:
    """Compile the fast path's helper (aclnn_py/_fast/fastcall.c) and entry (entry.c) into
    ``out_dir``. They are an optimisation: without them every call takes the ABI-mode path, so
    a failure only warns."""
    builder = _load("_aclnn_py_fast_build", FAST / "build.py")
    for make, what in ((builder.build, "helper"), (builder.build_entry, "entry")):
        try:
            built = make(out_dir, src_dir=FAST)
        except builder.FastBuildError as exc:
            announce(f"WARNING: {exc}\n(aclnn_py works without the fast path's {what}, at a higher per-call cost)",
                     level=3)
            continue
        if what == "entry":
            _built_entry.append(built)
        announce(f"built the fast path's {what} {built}", level=2)


class BuildPyWithSimulator(build_py):
    """build_py, then compile the simulator toolkit."""

    def run(self) -> None:
        if not getattr(self, "editable_mode", False):
            # Start from an empty package directory: a file an earlier build left in
            # build/lib/aclnn_py (one since deleted or renamed in the sources) must not ship.
            stale = Path(self.build_lib) / "aclnn_py"
            if stale.exists():
                shutil.rmtree(stale)
        super().run()
        if not getattr(self, "editable_mode", False):
            headers = Path(self.build_lib) / "aclnn_py" / "include"
            if headers.exists():
                shutil.rmtree(headers)
            shutil.copytree(ROOT / "include", headers, ignore=shutil.ignore_patterns("__pycache__"))
        if os.environ.get("ACLNN_PY_SKIP_SIM", "").strip() not in ("", "0"):
            self.announce("ACLNN_PY_SKIP_SIM is set: not building the CANN simulator", level=2)
            return
        builder = _sim_builder()
        try:
            if getattr(self, "editable_mode", False):
                home = builder.build(SIM / "toolkit", src_dir=SIM / "src", include_dir=ROOT / "include",
                                     link_include=True)
            else:
                package = Path(self.build_lib) / "aclnn_py" / "sim"
                sources = package / "src"
                if sources.exists():
                    shutil.rmtree(sources)
                shutil.copytree(SIM / "src", sources, ignore=shutil.ignore_patterns("*.o", "*.so", "__pycache__"))
                home = builder.build(package / "toolkit", src_dir=sources, include_dir=ROOT / "include", force=True)
        except builder.SimBuildError as exc:
            raise SystemExit(f"{exc}\n(Set ACLNN_PY_SKIP_SIM=1 to install aclnn_py without the simulator.)") from None
        self.announce(f"built the CANN simulator toolkit at {home}", level=2)
        editable = getattr(self, "editable_mode", False)
        _build_fast_path(FAST if editable else Path(self.build_lib) / "aclnn_py" / "_fast", self.announce)


class PlatformDistribution(Distribution):
    """The wheel carries native libraries, so it must not be tagged pure-Python."""

    def has_ext_modules(self) -> bool:
        return True


class PlatformWheel(bdist_wheel):
    """This platform; CPython 3.11+'s stable ABI when the fast entry was built, else any Python 3
    with no ABI (nothing compiled against CPython)."""

    def get_tag(self) -> tuple[str, str, str]:
        _, _, platform = super().get_tag()
        if _built_entry:
            return "cp311", "abi3", platform
        return "py3", "none", platform


setup(cmdclass={"build_py": BuildPyWithSimulator, "bdist_wheel": PlatformWheel}, distclass=PlatformDistribution)
