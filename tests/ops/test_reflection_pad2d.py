"""reflection_pad2d (aclnnReflectionPad2d): values against PyTorch CPU, views, empty tensors."""

from __future__ import annotations

import numpy as np
import pytest

import aclnn_py
from aclnn_py import bfloat16
from helpers import random_array

DTYPES = [np.float32, np.float16, bfloat16, np.float64, np.int8, np.uint8, np.int16, np.int32, np.int64, np.bool_,
          np.complex64, np.complex128]

CASES = {
    "4d": ((2, 3, 6, 7), [2, 1, 3, 1]),
    "3d": ((3, 5, 4), [3, 3, 0, 2]),
    "doc example": ((1, 3, 3), [2, 2, 2, 2]),
    "widest": ((1, 2, 4, 5), [4, 4, 3, 3]),
    "one side": ((2, 2, 5, 6), [0, 5, 4, 0]),
    "no padding": ((2, 2, 3, 3), [0, 0, 0, 0]),
    "negative crops": ((2, 2, 5, 6), [-1, 2, 1, -2]),
    "crop past the edge": ((1, 1, 3, 4), [-3, 2, -2, 2]),
}


def _torch_pad(torch, x, padding):
    """F.pad reflect (PyTorch has no bool/half/int8 kernel for some dtypes: computed in float64 or
    complex128 and cast back, exact for these values)."""
    wide = np.complex128 if np.iscomplexobj(x) else np.float64
    return torch.nn.functional.pad(torch.from_numpy(x.astype(wide)), padding, mode="reflect").numpy().astype(x.dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("case", list(CASES))
def test_matches_torch(backend, torch, case, dtype):
    shape, padding = CASES[case]
    x = random_array(np.random.default_rng(0), shape, dtype)
    result = aclnn_py.reflection_pad2d(x, padding, backend=backend)
    assert result.dtype == x.dtype
    np.testing.assert_array_equal(result, _torch_pad(torch, x, padding))


def test_doc_example(backend):
    x = np.arange(9, dtype=np.float32).reshape(1, 3, 3)
    result = aclnn_py.reflection_pad2d(x, [2, 2, 2, 2], backend=backend)
    np.testing.assert_array_equal(result[0, 0], [8, 7, 6, 7, 8, 7, 6])


def test_one_int_padding(backend, torch):
    x = random_array(np.random.default_rng(1), (2, 3, 5, 5), np.float32)
    np.testing.assert_array_equal(aclnn_py.reflection_pad2d(x, 2, backend=backend), _torch_pad(torch, x, [2] * 4))


def test_non_contiguous_inputs(backend, torch):
    x = random_array(np.random.default_rng(2), (2, 3, 6, 7), np.float32)
    padding = [2, 1, 3, 1]
    expected = _torch_pad(torch, x, padding)
    for view in (np.asfortranarray(x), np.ascontiguousarray(x.swapaxes(2, 3)).swapaxes(2, 3),
                 np.repeat(x, 2, axis=-1)[..., ::2], x[::-1][::-1]):
        before = view.copy()
        result = aclnn_py.reflection_pad2d(view, padding, backend=backend)
        assert result.flags.c_contiguous
        np.testing.assert_array_equal(result, expected)
        np.testing.assert_array_equal(view, before)


def test_empty_batch(backend):
    result = aclnn_py.reflection_pad2d(np.zeros((0, 2, 3, 3), np.float32), [1, 1, 1, 1], backend=backend)
    assert result.shape == (0, 2, 5, 5)


def test_call_by_cann_names(backend, torch):
    x = random_array(np.random.default_rng(3), (2, 3, 6, 7), np.float32)
    out = np.zeros((2, 3, 10, 10), np.float32)
    aclnn_py.call("aclnnReflectionPad2d", self=x, padding=[2, 1, 3, 1], out=out, backend=backend)
    np.testing.assert_array_equal(out, _torch_pad(torch, x, [2, 1, 3, 1]))


def test_call_writes_a_strided_out_on_sim(sim_lib, torch):
    x = random_array(np.random.default_rng(4), (2, 3, 6, 7), np.float32)
    base = np.zeros((2, 3, 10, 20), np.float32)
    out = base[..., ::2]
    aclnn_py.call("aclnnReflectionPad2d", x, [2, 1, 3, 1], out, backend="sim")
    np.testing.assert_array_equal(out, _torch_pad(torch, x, [2, 1, 3, 1]))
    assert not base[..., 1::2].any()
