"""inplace_fill_scalar (aclnnInplaceFillScalar): selfRef filled in place for every documented
dtype (against PyTorch's ``fill_``), C's static_cast conversion of the value, views, device
Tensors, ``call`` with CANN's names (the invalid inputs: invalid_cases.py)."""

from __future__ import annotations

import numpy as np
import pytest

import aclnn_py
from aclnn_py import bfloat16
from aclnn_py.ops.inplace_fill_scalar import DTYPES
from helpers import random_array


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_every_documented_dtype_matches_torch(backend, torch, dtype):
    a = random_array(np.random.default_rng(0), (2, 3, 4, 5), dtype)
    value = 1.0 if dtype == bfloat16 else np.array(7).astype(dtype)[()]  # (a scalar every dtype promotes with)
    wide = a.astype(np.float32) if dtype == bfloat16 else a.copy()
    expected = torch.from_numpy(wide).fill_(float(value) if dtype == bfloat16 else value.item()).numpy()
    assert aclnn_py.inplace_fill_scalar(a, value, backend=backend) is a
    np.testing.assert_array_equal(a.astype(expected.dtype), expected)


def test_value_converts_as_static_cast(backend):
    i = np.zeros(3, np.int32)
    aclnn_py.inplace_fill_scalar(i, -2.75, backend=backend)  # truncated toward zero
    np.testing.assert_array_equal(i, -2)
    b = np.zeros(2, np.bool_)
    aclnn_py.inplace_fill_scalar(b, 1e-8, backend=backend)  # below FLT_EPSILON: False
    np.testing.assert_array_equal(b, False)
    aclnn_py.inplace_fill_scalar(b, 0.5, backend=backend)
    np.testing.assert_array_equal(b, True)
    h = np.zeros(2, np.float16)
    aclnn_py.inplace_fill_scalar(h, 1 / 3, backend=backend)
    np.testing.assert_array_equal(h, np.float16(1 / 3))
    u = np.zeros(2, np.uint64)
    aclnn_py.inplace_fill_scalar(u, np.uint64(2**63 + 5), backend=backend)
    np.testing.assert_array_equal(u, np.uint64(2**63 + 5))
    c = np.zeros(2, np.complex64)
    aclnn_py.inplace_fill_scalar(c, 1 - 2j, backend=backend)
    np.testing.assert_array_equal(c, np.complex64(1 - 2j))


def test_a_view_is_filled_element_by_element(backend):
    base = np.zeros((6, 8), np.float64)
    expected = base.copy()
    expected[::2, 1::3] = 4.5
    aclnn_py.inplace_fill_scalar(base[::2, 1::3], 4.5, backend=backend)
    np.testing.assert_array_equal(base, expected)
    e = np.ones((0, 2), np.float32)
    assert aclnn_py.inplace_fill_scalar(e, 2.0, backend=backend) is e


def test_call_by_cann_names_and_device_tensor(backend):
    x = np.zeros(4, np.int8)
    assert aclnn_py.call("aclnnInplaceFillScalar", selfRef=x, value=5, backend=backend) is x
    np.testing.assert_array_equal(x, 5)
    if backend == "sim":
        with aclnn_py.Tensor.from_numpy(np.zeros((3, 4), np.float32), backend="sim") as t:
            aclnn_py.inplace_fill_scalar(t.view((4, 3), (1, 4), 0), 2.0, backend="sim")
            np.testing.assert_array_equal(t.numpy(), 2)


@pytest.mark.parametrize("shape", [(256, 256), (2048,)], ids=["large", "small"])
def test_large_and_small_fills_alike(backend, torch, shape):
    """A fill large enough for the worker machinery (``workers.on_caller``) and a small one."""
    a = random_array(np.random.default_rng(8), shape, np.float32)
    expected = torch.from_numpy(a.copy()).fill_(-2.5).numpy()
    assert aclnn_py.inplace_fill_scalar(a, -2.5, backend=backend) is a
    np.testing.assert_array_equal(a, expected)  # (one value copied: exact)


@pytest.mark.parametrize("dtype", [np.float32, np.float16, bfloat16, np.complex64, np.int64, np.bool_], ids=str)
@pytest.mark.parametrize("shape", [(), (0,), (7,), (64, 1025), (8, 64, 56, 56)], ids=str)
def test_zero_and_negative_zero_fill_every_element_with_their_bits(backend, torch, dtype, shape):
    """0 fills by its bytes (a memset on the numpy backend where selfRef is contiguous, on the
    calling thread): every element, each with the bits of PyTorch's fill_(0), large ones and
    strided views too; -0.0 keeps its sign bit (not all-zero bytes)."""
    a = np.full(shape, 1, dtype)
    assert aclnn_py.inplace_fill_scalar(a, 0.0, backend=backend) is a
    want = torch.from_numpy(np.full(shape, 1, np.float32 if dtype == bfloat16 else dtype)).fill_(0).numpy()
    np.testing.assert_array_equal(a.astype(want.dtype), want)
    assert not a.reshape(-1).view(np.uint8).any()
    if dtype in (np.float32, np.float16):
        b = np.full(shape, np.nan, dtype)
        aclnn_py.inplace_fill_scalar(b, -0.0, backend=backend)
        assert np.signbit(b).all() and (b == 0).all()
    if len(shape) == 2:
        base = np.full((64, 2050), 1, dtype)
        aclnn_py.inplace_fill_scalar(base[:, ::2], 0.0, backend=backend)
        assert not np.any(base[:, ::2] != np.zeros((), dtype)) and np.all(base[:, 1::2] == np.ones((), dtype))
