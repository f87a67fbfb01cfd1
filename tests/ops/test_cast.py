"""cast (aclnnCast): every documented dtype to every other on numpy and sim alike, against
PyTorch where PyTorch's conversion is defined, NaN to 0, views (invalid inputs:
invalid_cases.py)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import aclnn_py
from aclnn_py import AclnnError, aclDataType, bfloat16
from aclnn_py.ops.cast import DTYPES
from helpers import assert_close, random_array

TORCH_NAMES = {np.dtype(np.float16): "float16", np.dtype(np.float32): "float32", np.dtype(np.float64): "float64",
               np.dtype(np.int8): "int8", np.dtype(np.uint8): "uint8", np.dtype(np.int16): "int16",
               np.dtype(np.int32): "int32", np.dtype(np.int64): "int64", np.dtype(np.bool_): "bool",
               np.dtype(np.complex64): "complex64", np.dtype(np.complex128): "complex128", bfloat16: "bfloat16"}


@pytest.mark.parametrize("source", DTYPES, ids=str)
def test_every_documented_pair_matches_torch_in_range(backend, torch, source):
    # values every target holds (small non-negative integers and halves): PyTorch's conversion
    # is the same as CANN's there
    values = np.array([0, 1, 2, 3.5, 7, 100.25, 0.5, 64], np.float64)
    a = values.astype(source) if source != np.bool_ else values > 1
    for target in DTYPES:
        result = aclnn_py.cast(a, target, backend=backend)
        assert result.dtype == target and result.shape == a.shape
        if source in TORCH_NAMES and target in TORCH_NAMES and not (source.kind == "c" and target.kind != "c"):
            t = torch.from_numpy(a.astype(np.float32) if source == bfloat16 else a)
            if source == bfloat16:
                t = t.to(torch.bfloat16)
            expected = t.to(getattr(torch, TORCH_NAMES[target]))
            expected = (expected.float() if target == bfloat16 else expected).numpy()
            assert_close(result, expected.astype(target), target)


def test_the_two_backends_agree_on_every_pair_and_awkward_value(sim_lib):
    src = np.array([0, -1, 2.5, -2.7, 300.6, -70000.2, 1e10, -1e19, 1e20, np.nan, np.inf, -np.inf, 65504, 3e38,
                    2**63, 2**64 - 1, 0.1], np.float64)
    for source, target in itertools.product(DTYPES, DTYPES):
        with np.errstate(all="ignore"):
            a = (src + 1j * src[::-1]).astype(source) if source.kind == "c" else src.astype(source)
        x, y = (aclnn_py.cast(a[::-2], target, backend=b) for b in ("numpy", "sim"))
        assert x.dtype == y.dtype == target
        if target.kind in "iub":
            np.testing.assert_array_equal(x, y, err_msg=f"{source} -> {target}")
        else:  # (bit for bit, NaN included: NumPy's NaN test does not know bfloat16's)
            assert x.tobytes() == y.tobytes() or np.array_equal(x.astype(np.complex128), y.astype(np.complex128),
                                                                equal_nan=True), f"{source} -> {target}"


def test_documented_conversions(backend):
    f = np.array([np.nan, -2.7, 2.7, 1e10], np.float32)
    np.testing.assert_array_equal(aclnn_py.cast(f, np.int32, backend=backend)[:3], [0, -2, 2])
    np.testing.assert_array_equal(aclnn_py.cast(np.array([300], np.int32), np.int8, backend=backend), [44])
    np.testing.assert_array_equal(aclnn_py.cast(np.array([1 + 2j]), np.float32, backend=backend), [1])
    np.testing.assert_array_equal(aclnn_py.cast(np.array([0j, 2j]), np.bool_, backend=backend), [False, True])
    assert aclnn_py.cast(np.ones(2, np.float32), aclDataType.ACL_BF16, backend=backend).dtype == bfloat16


def test_views_and_empty(backend):
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    np.testing.assert_array_equal(aclnn_py.cast(a.T[::-1], np.int64, backend=backend), a.T[::-1].astype(np.int64))
    assert aclnn_py.cast(np.zeros((0, 3), np.int8), np.float16, backend=backend).shape == (0, 3)


def test_call_with_another_out_dtype_is_the_late_copy_failure_on_sim(sim_lib):
    a = np.ones(3, np.float32)
    out = np.zeros(3, np.float32)
    aclnn_py.call("aclnnCast", a, int(aclDataType.ACL_FLOAT), out, backend="sim")
    np.testing.assert_array_equal(out, a)
    with pytest.raises(AclnnError) as raised:
        aclnn_py.call("aclnnCast", a, int(aclDataType.ACL_INT32), out, backend="sim")
    assert raised.value.status == 561103 and "out" in raised.value.message
