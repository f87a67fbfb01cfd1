"""add (aclnnAdd): values against PyTorch for every documented dtype, promotion, alpha, empty
inputs, ``call`` with out of another dtype (the invalid inputs: invalid_cases.py)."""

from __future__ import annotations

import numpy as np
import pytest

import aclnn_py
from aclnn_py import bfloat16
from aclnn_py.ops.add import DTYPES
from helpers import assert_close, random_array

LOW = (np.dtype(np.float16), bfloat16)


def _torch_add(torch, a, b, alpha):
    """PyTorch's result, float16/bfloat16 computed in float32 and rounded once (as the backends)."""
    wide = [x.astype(np.float32) if x.dtype in LOW else x for x in (a, b)]
    result = torch.add(torch.from_numpy(wide[0]), torch.from_numpy(wide[1]), alpha=alpha).numpy()
    return result


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_every_documented_dtype_matches_torch(backend, torch, dtype):
    rng = np.random.default_rng(0)
    a, b = random_array(rng, (2, 3, 4, 5), dtype), random_array(rng, (4, 1), dtype)
    alphas = (1, True) if dtype == np.bool_ else (1, 3) if dtype.kind in "iu" else (1, -0.5)
    for alpha in alphas:
        result = aclnn_py.add(a, b, alpha, backend=backend)
        assert result.dtype == dtype and result.shape == (2, 3, 4, 5)
        assert_close(result, _torch_add(torch, a, b, alpha).astype(dtype), dtype)


@pytest.mark.parametrize("pair", [(np.float16, np.float32), (bfloat16, np.float32), (np.float16, bfloat16),
                                  (np.int32, np.float16), (np.int8, np.uint8), (np.bool_, np.int64),
                                  (np.int64, np.float16), (np.float32, np.complex64), (np.float64, np.int16)],
                         ids=str)
def test_mixed_dtypes_promote_as_torch(backend, torch, pair):
    rng = np.random.default_rng(1)
    a, b = random_array(rng, (3, 5), pair[0]), random_array(rng, (5,), pair[1])
    result = aclnn_py.add(a, b, 2, backend=backend)
    promoted = {(np.float16, bfloat16): np.float32}.get(pair, None)
    t = torch.add(torch.from_numpy(a.astype(np.float32) if a.dtype in LOW else a),
                  torch.from_numpy(b.astype(np.float32) if b.dtype in LOW else b), alpha=2)
    expected_dtype = np.dtype(promoted) if promoted else aclnn_py._numpy.elementwise.promote(a.dtype, b.dtype)
    assert result.dtype == expected_dtype
    assert_close(result, t.numpy().astype(expected_dtype), expected_dtype)


def test_integers_wrap_and_inputs_convert_to_the_promoted_dtype_first(backend):
    a = np.array([120, -128], np.int8)
    np.testing.assert_array_equal(aclnn_py.add(a, a, backend=backend), np.array([-16, 0], np.int8))
    # INT32 2049 is 2048 in FLOAT16, before the addition
    result = aclnn_py.add(np.array([2049], np.int32), np.array([0], np.float16), backend=backend)
    assert result.dtype == np.float16 and result[0] == 2048


def test_bool_is_or_and_alpha_bool(backend):
    a, b = np.array([True, False, False]), np.array([True, True, False])
    np.testing.assert_array_equal(aclnn_py.add(a, b, backend=backend), [True, True, False])
    np.testing.assert_array_equal(aclnn_py.add(a, b, False, backend=backend), a)


def test_alpha_forms(backend):
    a, b = np.ones(4, np.float32), np.arange(4, dtype=np.float32)
    for alpha, factor in ((2, 2), (np.float16(0.5), 0.5), (1.0, 1), (np.int8(-3), -3), (float("nan"), 1)):
        # (a NaN alpha counts as 1: A2/A3's IsEqualToOne is "neither above nor below 1")
        np.testing.assert_array_equal(aclnn_py.add(a, b, alpha, backend=backend), a + factor * b)
    c = np.array([1 + 1j], np.complex64)
    np.testing.assert_allclose(aclnn_py.add(c, c, 1j, backend=backend), c + 1j * c)


def test_empty_inputs_give_empty_results(backend):
    for a, b, shape in ((np.zeros((0, 3), np.float32), np.ones(3, np.float32), (0, 3)),
                        (np.zeros((2, 1)), np.zeros((0,)), (2, 0))):
        result = aclnn_py.add(a, b, backend=backend)
        assert result.shape == shape and result.dtype == np.result_type(a, b)


def test_zero_dim_tensors(backend):
    result = aclnn_py.add(np.asarray(2.0, np.float32), np.asarray(3.0, np.float32), 2, backend=backend)
    assert result.shape == () and result == 8


def test_call_writes_an_out_of_another_dtype_on_sim(sim_lib):
    a, b = np.arange(6, dtype=np.int32).reshape(2, 3), np.ones(3, np.int32)
    out = np.zeros((2, 3), np.float64)
    aclnn_py.call("aclnnAdd", a, b, 2, out, backend="sim")
    np.testing.assert_array_equal(out, a + 2.0)
    out16 = np.zeros((2, 3), np.float16)
    aclnn_py.call("aclnnAdd", a.astype(np.float32), b.astype(np.float32), 1, out16, backend="sim")
    np.testing.assert_array_equal(out16, (a + 1).astype(np.float16))


def test_call_by_name_on_both_backends(backend):
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    out = np.empty((2, 3), np.float32)
    aclnn_py.call("aclnnAdd", a, a, 1, out, backend=backend)
    np.testing.assert_array_equal(out, 2 * a)


def test_device_tensors_on_sim(sim_lib):
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    t = aclnn_py.Tensor.from_numpy(a, backend="sim")
    result = aclnn_py.add(t, a, 2, backend="sim")
    assert isinstance(result, aclnn_py.Tensor)
    np.testing.assert_array_equal(result.numpy(), 3 * a)


@pytest.mark.parametrize("op, args", [("add", (np.zeros((1,) * 9, np.float32), np.zeros(1, np.float32))),
                                      ("mul", (np.zeros(2, np.float32), np.zeros((2,) * 9, np.float32)))])
def test_more_than_eight_dims_is_refused_on_every_backend(backend, op, args):
    # CANN's elementwise operators check rank <= 8 in phase 1 (the numpy backend's error); the
    # simulator's aclCreateTensor refuses such a tensor before (its descriptors hold 8 dims).
    with pytest.raises(aclnn_py.AclnnError) as raised:
        getattr(aclnn_py, op)(*args, backend=backend)
    assert raised.value.status == 161002 and "8" in raised.value.message
    if backend == "numpy":
        assert raised.value.api == f"aclnn{op.capitalize()}GetWorkspaceSize"
        assert ("self" if op == "add" else "other") in raised.value.message
