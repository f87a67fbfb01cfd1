"""adds and muls (aclnnAdds, aclnnMuls): a tensor and an aclScalar; values against PyTorch for
every documented dtype, the A2/A3 rules of the computed dtype (the invalid inputs:
invalid_cases.py)."""

from __future__ import annotations

import numpy as np
import pytest

import aclnn_py
from aclnn_py import Scalar, bfloat16
from aclnn_py.ops.adds import DTYPES
from helpers import assert_close, random_array

LOW = (np.dtype(np.float16), bfloat16)


def _torch(torch, op, a, *scalars):
    t = torch.from_numpy(a.astype(np.float32) if a.dtype in LOW else a)
    if op == "adds":
        return torch.add(t, scalars[0], alpha=scalars[1])
    return torch.mul(t, scalars[0])


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("op", ["adds", "muls"])
def test_every_documented_dtype_matches_torch(backend, torch, op, dtype):
    rng = np.random.default_rng(0)
    a = random_array(rng, (2, 3, 5), dtype)
    # (a complex self with a Python float would compute in COMPLEX128: the promotion, rule 1)
    numbers = ([True] if dtype == np.bool_ else [3, -2] if dtype.kind in "iu"
               else [dtype.type(0.75 - 0.5j)] if dtype.kind == "c" else [0.75, -3])
    for number in numbers:
        extra = (number, 2 if dtype != np.bool_ else True) if op == "adds" else (number,)
        result = getattr(aclnn_py, op)(a, *extra, backend=backend)
        expected = _torch(torch, op, a, *[complex(x) if dtype.kind == "c" else x for x in extra])
        assert result.dtype == dtype and result.shape == a.shape
        assert_close(result, expected.numpy().astype(dtype), dtype)


@pytest.mark.parametrize("op", ["adds", "muls"])
def test_an_integer_tensor_with_a_float_scalar_gives_float_as_torch(backend, torch, op):
    a = np.arange(-4, 4, dtype=np.int32)
    extra = (0.5, 1) if op == "adds" else (0.5,)
    result = getattr(aclnn_py, op)(a, *extra, backend=backend)
    assert result.dtype == np.float32
    np.testing.assert_array_equal(result, _torch(torch, op, a, *extra).numpy())


def test_computed_dtypes(backend):
    # FLOAT16 self with a DOUBLE scalar stays FLOAT16, the scalar rounded to it first
    r = aclnn_py.adds(np.zeros(1, np.float16), 0.1, backend=backend)
    assert r.dtype == np.float16 and r[0] == np.float16(0.1)
    # INT32 self with an INT64 scalar stays INT32 and wraps
    assert aclnn_py.adds(np.array([2**31 - 1], np.int32), 1, backend=backend)[0] == -(2**31)
    # BOOL self with an INT64 scalar: INT64
    assert aclnn_py.adds(np.array([True]), 5, backend=backend).dtype == np.int64
    assert aclnn_py.muls(np.array([True, False]), 5, backend=backend).tolist() == [5, 0]
    # a complex operand: the promotion (COMPLEX128 with a Python complex or float)
    r = aclnn_py.muls(np.ones(2, np.float32), 1j, backend=backend)
    assert r.dtype == np.complex128 and r[0] == 1j
    assert aclnn_py.adds(np.ones(2, np.complex64), 0.5, backend=backend).dtype == np.complex128
    # Muls computes BFLOAT16 in FLOAT: 1.00390625 (bf16's 1 + 2^-8 is not representable)
    r = aclnn_py.muls(np.array([1.0], bfloat16), 1.00390625, backend=backend)
    assert r.dtype == bfloat16 and float(r[0]) == float(np.float32(1.00390625).astype(bfloat16))
    # BOOL self + BOOL true + BOOL alpha stays BOOL (1, not 2, in an integer out on sim too)
    assert aclnn_py.adds(np.array([True]), True, True, backend=backend).tolist() == [True]


def test_scalar_objects_and_numpy_scalars(backend):
    a = np.arange(4, dtype=np.float32)
    np.testing.assert_array_equal(aclnn_py.muls(a, np.float16(0.5), backend=backend), a / 2)
    if backend != "numpy":
        s = Scalar(3, np.int32, backend=backend)
        np.testing.assert_array_equal(aclnn_py.adds(a, s, backend=backend), a + 3)


def test_empty_and_zero_dim(backend):
    assert aclnn_py.adds(np.zeros((0, 4), np.float16), 1, backend=backend).shape == (0, 4)
    assert aclnn_py.muls(np.asarray(3.0), 2, backend=backend) == 6


def test_transposed_self(backend):
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    np.testing.assert_array_equal(aclnn_py.adds(a.T, 1, -2, backend=backend), a.T - 2)
    np.testing.assert_array_equal(aclnn_py.muls(a[::-1, ::2], 3, backend=backend), a[::-1, ::2] * 3)


def test_call_with_another_out_dtype_on_sim(sim_lib):
    a = np.arange(4, dtype=np.int32)
    out = np.zeros(4, np.float32)
    aclnn_py.call("aclnnAdds", a, 0.5, 1, out, backend="sim")      # a DOUBLE scalar with a FLOAT out: FLOAT
    np.testing.assert_array_equal(out, a + 0.5)
    ints = np.zeros(4, np.int32)
    aclnn_py.call("aclnnMuls", a, 0.5, ints, backend="sim")        # no cast check on A2/A3: truncated
    np.testing.assert_array_equal(ints, (a * 0.5).astype(np.int32))
