"""inplace_copy (aclnnInplaceCopy): src converted and broadcast into selfRef in place, every
documented dtype against PyTorch's ``copy_``, conversions between dtypes, overlapping views,
device Tensors, ``call`` with CANN's names (the invalid inputs: invalid_cases.py)."""

from __future__ import annotations

import numpy as np
import pytest

import aclnn_py
from aclnn_py import bfloat16
from aclnn_py.ops.inplace_copy import DTYPES
from helpers import random_array

TORCH_LACKS = {np.dtype(np.uint16), np.dtype(np.uint32), np.dtype(np.uint64)}  # (copy_ between them: not in torch)


def _t(torch, a):
    return torch.from_numpy(a.astype(np.float32) if a.dtype == bfloat16 else np.array(a))


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_every_documented_dtype_matches_torch(backend, torch, dtype):
    rng = np.random.default_rng(0)
    a, src = random_array(rng, (2, 3, 4, 5), dtype), random_array(rng, (4, 1), dtype)
    expected = np.broadcast_to(src, a.shape) if dtype in TORCH_LACKS else _t(torch, a).copy_(_t(torch, src)).numpy()
    assert aclnn_py.inplace_copy(a, src, backend=backend) is a
    np.testing.assert_array_equal(a.astype(np.float32) if dtype == bfloat16 else a, expected)


@pytest.mark.parametrize("pair", [(np.float16, np.float32), (bfloat16, np.float32), (np.int32, np.float32),
                                  (np.int8, np.int64), (np.bool_, np.float32), (np.float32, np.bool_),
                                  (np.float64, np.complex128), (np.uint8, np.float16), (np.complex64, np.int32)],
                         ids=str)
def test_conversions_match_torch(backend, torch, pair):
    to, source = map(np.dtype, pair)
    rng = np.random.default_rng(1)
    src = (rng.standard_normal((3, 5)) * 50).astype(source) if source.kind != "b" else rng.random((3, 5)) < 0.5
    if source.kind == "c":
        src = (src + 1j * rng.standard_normal((3, 5))).astype(source)
    a = np.zeros((3, 5), to)
    aclnn_py.inplace_copy(a, src, backend=backend)
    ref = _t(torch, a)
    ref.copy_(torch.from_numpy(src.real.copy()) if source.kind == "c" and to.kind != "c" else _t(torch, src))
    expected = ref.numpy().astype(bfloat16).astype(np.float32) if to == bfloat16 else ref.numpy()
    np.testing.assert_array_equal(a.astype(np.float32) if to == bfloat16 else a, expected)


def test_strided_views_and_overlap(backend):
    base = np.zeros((6, 12), np.float32)
    src = np.arange(12, dtype=np.float32).reshape(4, 3)
    expected = base.copy()
    expected[1::2, ::3] = src.T
    aclnn_py.inplace_copy(base[1::2, ::3].T, src, backend=backend)
    np.testing.assert_array_equal(base, expected)
    x = np.arange(8, dtype=np.int64)
    aclnn_py.inplace_copy(x[1:], x[:7], backend=backend)  # src read before selfRef is written
    np.testing.assert_array_equal(x, [0, 0, 1, 2, 3, 4, 5, 6])
    e = np.ones((2, 0), np.float32)
    assert aclnn_py.inplace_copy(e, np.ones(0, np.float32), backend=backend) is e
    z = np.ones((0, 3), np.float32)
    assert aclnn_py.inplace_copy(z, np.ones(3, np.float16), backend=backend) is z


def test_call_by_cann_names_and_device_tensor(backend):
    x = np.zeros((2, 3), np.float32)
    assert aclnn_py.call("aclnnInplaceCopy", selfRef=x, src=np.arange(3, dtype=np.int32), backend=backend) is x
    np.testing.assert_array_equal(x, [[0, 1, 2], [0, 1, 2]])
    if backend == "sim":
        with aclnn_py.Tensor.from_numpy(np.zeros((3, 4), np.float32), backend="sim") as t:
            aclnn_py.inplace_copy(t.view((4, 3), (1, 4), 0), np.arange(3, dtype=np.float64), backend="sim")
            np.testing.assert_array_equal(t.numpy(), np.arange(3, dtype=np.float32)[:, None].repeat(4, 1))
