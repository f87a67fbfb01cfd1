"""Shared fixtures: the backends under test, the PyTorch oracle, per-dtype tolerances."""

from __future__ import annotations

import os

import pytest


IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")

if IN_CI:
    # PyTorch is the oracle: in CI its absence fails the run at once, so no test module's
    # ``pytest.importorskip("torch")`` (nor the ``torch`` fixture) can skip its checks there.
    try:
        import torch as _ci_torch  # noqa: F401
    except ImportError as exc:
        raise RuntimeError("PyTorch is the test oracle and must be installed in CI (pip install torch==2.13.0)") from exc


def sim_available() -> bool:
    """True when the simulator toolkit is built and loads (required in CI)."""
    try:
        from aclnn_py._runtime import loader

        loader.library("sim")
    except Exception as exc:
        if IN_CI:
            raise RuntimeError(f"the simulator must be available in CI: {exc}") from exc
        return False
    return True


def _backends_under_test() -> list[str]:
    return ["numpy", "sim"] if sim_available() else ["numpy"]


def _backend_params() -> list[str]:
    """The ``backend`` fixture's backends: every one under test, or those of them named in
    ``ACLNN_PY_TEST_BACKENDS`` (comma-separated), for the suite's re-runs on other paths of
    one backend (tests/fast/test_entry.py: the numpy backend takes none of those paths)."""
    only = os.environ.get("ACLNN_PY_TEST_BACKENDS")
    found = _backends_under_test()
    return [b for b in found if b in only.split(",")] if only else found


@pytest.fixture(params=_backend_params())
def backend(request) -> str:
    """Every backend the test body runs on (one test body, every backend)."""
    return request.param


@pytest.fixture(scope="session")
def backends() -> list[str]:
    """Every backend under test at once, for a test body that compares them with each other."""
    return _backends_under_test()


@pytest.fixture(scope="session")
def torch():
    """PyTorch CPU as the oracle: skipped where absent, a failure in CI (CI=true)."""
    try:
        import torch as _torch
    except ImportError:
        if IN_CI:
            pytest.fail("PyTorch is the test oracle and must be installed in CI (pip install torch==2.13.0)")
        pytest.skip("PyTorch not installed")
    _torch.set_num_threads(2)
    return _torch


@pytest.fixture
def sim_lib():
    """The loaded simulator libraries (skipped where the toolkit is not built; never in CI)."""
    if not sim_available():
        pytest.skip("simulator toolkit not built (pip install -e . builds it)")
    from aclnn_py._runtime import loader

    return loader.library("sim")
