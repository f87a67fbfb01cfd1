"""mul (aclnnMul): values against PyTorch for every documented dtype, promotion, BOOL, empty
inputs, ``call`` with out of another dtype (the invalid inputs: invalid_cases.py)."""

from __future__ import annotations

import numpy as np
import pytest

import aclnn_py
from aclnn_py import bfloat16
from aclnn_py._numpy.elementwise import promote
from aclnn_py.ops.mul import DTYPES
from helpers import assert_close, random_array

LOW = (np.dtype(np.float16), bfloat16)


def _torch_mul(torch, a, b):
    wide = [x.astype(np.float32) if x.dtype in LOW else x for x in (a, b)]
    return torch.mul(torch.from_numpy(wide[0]), torch.from_numpy(wide[1])).numpy()


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_every_documented_dtype_matches_torch(backend, torch, dtype):
    rng = np.random.default_rng(0)
    a, b = random_array(rng, (2, 3, 4, 5), dtype), random_array(rng, (3, 1, 5), dtype)
    result = aclnn_py.mul(a, b, backend=backend)
    assert result.dtype == dtype and result.shape == (2, 3, 4, 5)
    assert_close(result, _torch_mul(torch, a, b).astype(dtype), dtype)


@pytest.mark.parametrize("pair", [(np.float16, np.float32), (bfloat16, np.float32), (np.float16, bfloat16),
                                  (np.int32, np.float16), (np.int8, np.uint8), (np.bool_, np.int64),
                                  (np.int16, np.complex128), (np.float64, np.int16)], ids=str)
def test_mixed_dtypes_promote_as_torch(backend, torch, pair):
    rng = np.random.default_rng(1)
    a, b = random_array(rng, (3, 5), pair[0]), random_array(rng, (3, 1), pair[1])
    result = aclnn_py.mul(a, b, backend=backend)
    promoted = promote(a.dtype, b.dtype)
    assert result.dtype == promoted
    assert_close(result, _torch_mul(torch, a, b).astype(promoted), promoted)


def test_integers_wrap_and_bool_is_and(backend):
    a = np.array([100, -7], np.int8)
    np.testing.assert_array_equal(aclnn_py.mul(a, a, backend=backend), np.array([16, 49], np.int8))
    np.testing.assert_array_equal(aclnn_py.mul(np.array([True, True, False]), np.array([True, False, True]),
                                               backend=backend), [True, False, False])


def test_empty_and_zero_dim(backend):
    assert aclnn_py.mul(np.zeros((3, 0)), np.ones((1, 1)), backend=backend).shape == (3, 0)
    assert aclnn_py.mul(np.asarray(3, np.int32), np.asarray(4, np.int32), backend=backend) == 12


def test_call_writes_an_out_of_another_dtype_on_sim(sim_lib):
    a = np.arange(6, dtype=np.int16).reshape(2, 3)
    out = np.zeros((2, 3), np.complex64)
    aclnn_py.call("aclnnMul", a, a, out, backend="sim")
    np.testing.assert_array_equal(out, (a * a).astype(np.complex64))


def test_call_by_name_on_both_backends(backend):
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    out = np.empty((2, 3), np.float32)
    aclnn_py.call("aclnnMul", a, a[:1], out, backend=backend)
    np.testing.assert_array_equal(out, a * a[:1])
