"""Helpers the test bodies share: per-dtype tolerances, comparison, random data."""

from __future__ import annotations

import numpy as np
import pytest

from aclnn_py import AclnnError
from aclnn_py._dtypes import bfloat16

# (rtol, atol) per result dtype; float16/bfloat16 results are computed in float32 and rounded.
_TOLERANCES = {
    np.dtype(np.float64): (1e-10, 1e-10),
    np.dtype(np.complex128): (1e-10, 1e-10),
    np.dtype(np.float32): (1e-5, 1e-5),
    np.dtype(np.complex64): (1e-5, 1e-5),
    np.dtype(np.float16): (2e-3, 2e-3),
    bfloat16: (1.6e-2, 1.6e-2),
}


def tolerance(dtype, scale: float = 1.0) -> tuple[float, float]:
    """(rtol, atol) for comparing a result of ``dtype``; exact for integer and bool results.

    ``scale`` widens float tolerances for long reductions (convolution weight gradients).
    """
    dt = np.dtype(dtype)
    if dt not in _TOLERANCES:
        return (0.0, 0.0)
    rtol, atol = _TOLERANCES[dt]
    return rtol * scale, atol * scale


def assert_close(actual, expected, dtype, scale: float = 1.0) -> None:
    """Compare in float64 (complex128 for complex) with the tolerance of ``dtype``."""
    rtol, atol = tolerance(dtype, scale)
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
