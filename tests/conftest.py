"""Shared fixtures: the backends under test, the PyTorch oracle, per-dtype tolerances."""

from __future__ import annotations

import os

import pytest


def _backends_under_test() -> list[str]:
    names = ["numpy"]
    return names


@pytest.fixture(params=_backends_under_test())
def backend(request) -> str:
    """Every backend the test body runs on (one test body, every backend)."""
    return request.param


@pytest.fixture(scope="session")
def torch():
    """PyTorch CPU as the oracle: skipped where absent, a failure in CI (CI=true)."""
    try:
        import torch as _torch
    except ImportError:
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail("PyTorch is the test oracle and must be installed in CI (pip install torch==2.13.0)")
        pytest.skip("PyTorch not installed")
    _torch.set_num_threads(2)
    return _torch
