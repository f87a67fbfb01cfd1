"""Helpers the test bodies share: per-dtype tolerances, comparison, random data."""

from __future__ import annotations

import shutil
import subprocess
import threading
from pathlib import Path

import numpy as np
import pytest

from aclnn_py import AclnnError
from aclnn_py._compare import tolerance as _table_tolerance
from aclnn_py._dtypes import bfloat16

# The one tolerance table is the product's (``aclnn_py._compare.TOLERANCES``): the same rows
# judge ``compare``/``selftest`` and these tests. Results printed by C's ``%f`` keep six
# decimals, so values parsed back from a program's output are compared with ``PRINTED_F``.
PRINTED_F = (1e-6, 1e-6)


def tolerance(dtype, scale: float = 1.0, cube_math_type: int = 0) -> tuple[float, float]:
    """(rtol, atol) for comparing a result of ``dtype``; exact for integer and bool results.

    ``scale`` widens float tolerances for long reductions (convolution weight gradients);
    ``cube_math_type`` widens float32 as the NPU's cube unit precision modes do.
    """
    row = _table_tolerance(dtype, cube_math_type)
    return row.rtol * scale, row.atol * scale


def assert_close(actual, expected, dtype, scale: float = 1.0, cube_math_type: int = 0) -> None:
    """Compare in float64 (complex128 for complex) with the tolerance of ``dtype``."""
    rtol, atol = tolerance(dtype, scale, cube_math_type)
    a = np.asarray(actual)
    e = np.asarray(expected)
    assert a.shape == e.shape, f"shape {a.shape} != expected {e.shape}"
    wide = np.complex128 if np.issubdtype(a.dtype, np.complexfloating) else np.float64
    if a.dtype == np.bool_ or np.issubdtype(a.dtype, np.integer):
        np.testing.assert_array_equal(a, e)
    else:
        np.testing.assert_allclose(a.astype(wide), e.astype(wide), rtol=rtol, atol=atol)


def random_array(rng: np.random.Generator, shape, dtype) -> np.ndarray:
    """Random data of ``dtype``: normal floats, complex with both parts, small ints, bools."""
    dt = np.dtype(dtype)
    if dt == np.bool_:
        return rng.random(shape) < 0.5
    if np.issubdtype(dt, np.integer):
        info = np.iinfo(dt)
        return rng.integers(max(info.min, -50), min(info.max, 50), size=shape, endpoint=True).astype(dt)
    if np.issubdtype(dt, np.complexfloating):
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dt)
    return rng.standard_normal(shape).astype(dt)


FLOAT_DTYPES = [np.dtype(np.float32), np.dtype(np.float16), bfloat16]


def assert_rejected(call, status: int, api: str, *named: str):
    """``call()`` raises AclnnError ``status`` from ``api`` whose message names each of ``named``;
    returns the error."""
    with pytest.raises(AclnnError) as info:
        call()
    error = info.value
    assert error.status == status and error.api == api, str(error)
    for name in named:
        assert name in error.message, (name, error.message)
    return error


FAKE_OPERATORS = Path(__file__).resolve().parent / "call"


def raised(run) -> tuple:
    """What ``run()`` raises, as a value two paths' errors are compared by: an AclnnError's type,
    status, function and message, or a TypeError's type and text (any other outcome fails)."""
    with pytest.raises((AclnnError, TypeError)) as info:
        run()
    e = info.value
    return (type(e), e.status, e.api, e.message) if isinstance(e, AclnnError) else (type(e), str(e))


def build_fake_operator_package(home: Path, root: Path) -> Path:
    """A custom operator package (``$ASCEND_CUSTOM_OPP_PATH`` layout) at ``root`` holding the test
    operators of tests/call (``aclnnFakeEverything``, ``aclnnFakeScalarInfo`` and a stand-in
    ``aclnnAdd``), built against the simulator toolkit at ``home``: operators beyond the five."""
    from aclnn_py.sim import _build

    include, lib = root / "op_api" / "include", root / "op_api" / "lib"
    include.mkdir(parents=True)
    lib.mkdir(parents=True)
    for header in ("aclnn_fake_everything.h", "aclnn_add.h"):
        shutil.copy(FAKE_OPERATORS / header, include)
    subprocess.run(["gcc", "-std=c11", "-Wall", "-Werror", "-shared", "-fPIC", f"-I{home / 'include'}",
                    f"-I{home / 'include' / 'aclnn'}", f"-I{_build.SRC_DIR}", f"-I{FAKE_OPERATORS}",
                    str(FAKE_OPERATORS / "fake_ops.c"), str(home / "lib64" / "libaclsim.so"), "-o",
                    str(lib / "libcust_opapi.so")], check=True)
    return root


#: What a package build needs from the repository (tests that build wheels copy these).
PACKAGE_SOURCES = ("setup.py", "pyproject.toml", "MANIFEST.in", "README.md", "LICENSE", "include", "aclnn_py")


def copy_package_sources(dst: Path) -> Path:
    """Copy the repository's package sources (no build output) into ``dst`` (made), for a build
    that must not touch the working tree (pip builds in the source tree); returns ``dst``."""
    root = Path(__file__).resolve().parents[1]
    ignore = shutil.ignore_patterns("toolkit", "__pycache__", "*.so", "*.o", "*.egg-info")
    dst.mkdir(parents=True, exist_ok=True)
    for name in PACKAGE_SOURCES:
        path = root / name
        if path.is_dir():
            shutil.copytree(path, dst / name, ignore=ignore)
        else:
            shutil.copy2(path, dst / name)
    return dst


def load_script(name: str):
    """``scripts/<name>.py`` loaded as a module (not run as a program)."""
    import importlib.util
    import sys

    module_name = f"aclnn_py_script_{name}"
    spec = importlib.util.spec_from_file_location(module_name, Path(__file__).resolve().parents[1] / "scripts" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module  # (its dataclasses look their module up)
    try:
        spec.loader.exec_module(module)
    finally:
        del sys.modules[module_name]
    return module


def pool_windows(sizes, kernels, strides):
    """``(size, kernel, stride, padding, windows)`` of every 1-D pooling geometry with padding up
    to half the kernel and at least one window (``windows``: the floor-mode count)."""
    for size in sizes:
        for k in kernels:
            for s in strides:
                for p in range(k // 2 + 1):
                    windows = (size + 2 * p - k) // s + 1
                    if windows > 0:
                        yield size, k, s, p, windows


def record_engines(monkeypatch) -> list[str]:
    """The names of the convolution engines the numpy backend runs from now on, in order (a
    result with inf or NaN from the engine chosen by shape is computed again by ``tap``)."""
    from aclnn_py._numpy import conv

    ran: list[str] = []
    run = conv._run

    def recording(engine, *args):
        ran.append(engine.name)
        return run(engine, *args)

    monkeypatch.setattr(conv, "_run", recording)
    return ran


def run_in_threads(work, args_list, timeout: float | None = None) -> None:
    """``work(*args)`` for each ``args`` of ``args_list``, each on a thread of its own, all at once;
    fails if a thread raised (with every exception) or is still running after ``timeout`` s."""
    errors: list[BaseException] = []

    def run(*args) -> None:
        try:
            work(*args)
        except BaseException as exc:  # reported by the calling thread
            errors.append(exc)

    threads = [threading.Thread(target=run, args=tuple(args)) for args in args_list]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout)
    assert not any(t.is_alive() for t in threads), "a worker thread hung"
    assert not errors, errors
