"""inplace_zero (aclnnInplaceZero): selfRef zeroed in place for every documented dtype (against
PyTorch's ``zero_``), views written element by element, device Tensors, ``call`` with CANN's
name (the invalid inputs: invalid_cases.py)."""

from __future__ import annotations

import numpy as np
import pytest

import aclnn_py
from aclnn_py.ops.inplace_zero import DTYPES
from helpers import random_array


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_every_documented_dtype_matches_torch(backend, torch, dtype):
    a = random_array(np.random.default_rng(0), (2, 3, 4, 5), dtype)
    expected = torch.from_numpy(a.astype(np.float32) if dtype.kind == "V" else a.copy()).zero_().numpy()
    assert aclnn_py.inplace_zero(a, backend=backend) is a
    np.testing.assert_array_equal(a.astype(expected.dtype), expected)


def test_a_view_zeroes_its_elements_only(backend):
    base = np.arange(1, 49, dtype=np.float32).reshape(6, 8)
    expected = base.copy()
    expected[1::2, ::3] = 0
    aclnn_py.inplace_zero(base[1::2, ::3].T, backend=backend)
    np.testing.assert_array_equal(base, expected)


def test_more_than_eight_dims_and_empty(backend):
    a = np.ones((1, 2, 1, 2, 1, 2, 1, 2, 2), np.int32)  # no rank limit in CANN's code
    try:
        aclnn_py.inplace_zero(a, backend=backend)
    except aclnn_py.AclnnError as exc:  # the simulator's tensors hold at most 8 dims
        assert backend == "sim" and exc.status == 161002 and "8 dimensions" in str(exc)
    else:
        np.testing.assert_array_equal(a, 0)
    e = np.ones((3, 0), np.float32)
    assert aclnn_py.inplace_zero(e, backend=backend) is e


def test_call_by_cann_name_and_device_tensor(backend):
    x = np.ones(5, np.float16)
    assert aclnn_py.call("aclnnInplaceZero", selfRef=x, backend=backend) is x
    np.testing.assert_array_equal(x, 0)
    if backend == "sim":
        with aclnn_py.Tensor.from_numpy(np.ones(10, np.float32), backend="sim") as t:
            aclnn_py.inplace_zero(t.view((3,), (3,), 1), backend="sim")
            np.testing.assert_array_equal(t.numpy(), [1, 0, 1, 1, 0, 1, 1, 0, 1, 1])


def test_read_only_is_refused(backend):
    a = np.ones(3, np.float32)
    a.flags.writeable = False
    with pytest.raises(TypeError, match="selfRef.*writable"):
        aclnn_py.inplace_zero(a, backend=backend)


class _Sub(np.ndarray):
    pass


def test_an_ndarray_subclass_is_written_in_place(backend):
    a = np.ones(4, np.float32)
    aclnn_py.inplace_zero(a, backend=backend)  # (a plan for the shape)
    b = np.ones(4, np.float32).view(_Sub)
    aclnn_py.inplace_zero(b, backend=backend)
    np.testing.assert_array_equal(b, 0)
