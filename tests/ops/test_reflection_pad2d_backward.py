"""reflection_pad2d_backward (aclnnReflectionPad2dBackward): values, dtypes, errors."""

from __future__ import annotations

import numpy as np
import pytest

import aclnn_py
from aclnn_py import bfloat16
from helpers import assert_close, random_array
from reference.reflection_pad2d_backward import reflection_pad2d_backward as reference


DTYPES = [np.dtype(np.float32), np.dtype(np.float16), bfloat16, np.dtype(np.float64),
          np.dtype(np.complex64), np.dtype(np.complex128)]


def _problem(rng, self_shape, padding, dtype):
    left, right, top, bottom = padding
    padded = self_shape[:-2] + (self_shape[-2] + top + bottom, self_shape[-1] + left + right)
    return random_array(rng, padded, dtype), random_array(rng, self_shape, dtype)


PADDINGS = [(0, 0, 0, 0), (1, 2, 3, 1), (4, 4, 3, 3), (0, 3, 2, 0), (2, 0, 0, 1)]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("padding", PADDINGS, ids=str)
@pytest.mark.parametrize("self_shape", [(2, 3, 4, 5), (3, 5, 6)], ids=str)
def test_matches_reference(backend, self_shape, padding, dtype):
    rng = np.random.default_rng(0)
    grad_output, self = _problem(rng, self_shape, padding, dtype)
    result = aclnn_py.reflection_pad2d_backward(grad_output, self, list(padding), backend=backend)
    assert result.dtype == dtype and result.shape == self_shape
    assert_close(result, reference(grad_output, self, padding), dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("self_shape, padding", [
    ((2, 3, 8, 9), (3, 2, 1, 4)),
    ((4, 7, 6), (5, 5, 5, 5)),
    ((1, 2, 30, 40), (3, 3, 3, 3)),
])
def test_matches_torch(backend, torch, self_shape, padding, dtype):
    rng = np.random.default_rng(1)
    grad_output, self = _problem(rng, self_shape, padding, dtype)
    result = aclnn_py.reflection_pad2d_backward(grad_output, self, padding, backend=backend)
    # CANN computes float16/bfloat16 in float32 and rounds once: so does this oracle.
    wide = np.float32 if dtype in (np.float16, bfloat16) else dtype
    expected = torch.ops.aten.reflection_pad2d_backward(
        torch.from_numpy(grad_output.astype(wide)), torch.from_numpy(self.astype(wide)), list(padding))
    assert_close(result, expected.numpy(), dtype)


def test_documentation_example(backend):
    result = aclnn_py.reflection_pad2d_backward(np.ones((1, 1, 7), np.float32), np.ones((1, 1, 5), np.float32),
                                                [1, 1, 0, 0], backend=backend)
    np.testing.assert_array_equal(result, [[[1, 2, 1, 2, 1]]])


def test_largest_padding_and_single_row(backend):
    rng = np.random.default_rng(2)
    for self_shape, padding in (((2, 3, 4), (3, 3, 2, 2)), ((1, 1, 1, 6), (5, 5, 0, 0))):
        grad_output, self = _problem(rng, self_shape, padding, np.float64)
        result = aclnn_py.reflection_pad2d_backward(grad_output, self, padding, backend=backend)
        assert_close(result, reference(grad_output, self, padding), np.float64)


@pytest.mark.parametrize("form", ["list", "tuple", "ndarray", "numpy ints"])
def test_padding_forms(backend, form):
    rng = np.random.default_rng(3)
    padding = (1, 2, 2, 1)
    grad_output, self = _problem(rng, (2, 4, 5), padding, np.float32)
    convert = {"list": list, "tuple": tuple, "ndarray": lambda p: np.array(p, dtype=np.int32),
               "numpy ints": lambda p: [np.int64(v) for v in p]}[form]
    result = aclnn_py.reflection_pad2d_backward(grad_output, self, convert(padding), backend=backend)
    assert_close(result, reference(grad_output, self, padding), np.float32)


@pytest.mark.parametrize("dtype", [np.dtype(np.float32), np.dtype(np.complex128)], ids=str)
def test_non_contiguous_and_negative_strides(backend, dtype):
    rng = np.random.default_rng(4)
    padding = (2, 1, 1, 3)
    grad_output, self = _problem(rng, (2, 3, 5, 6), padding, dtype)
    views = [
        np.ascontiguousarray(grad_output.swapaxes(-1, -2)).swapaxes(-1, -2),
        np.ascontiguousarray(grad_output[::-1, :, ::-1, ::-1])[::-1, :, ::-1, ::-1],
        np.repeat(grad_output, 2, axis=1)[:, ::2],
    ]
    expected = reference(grad_output, self, padding)
    for view in views:
        before = view.copy()
        result = aclnn_py.reflection_pad2d_backward(view, self[..., ::-1], padding, backend=backend)
        assert_close(result, expected, dtype)
        np.testing.assert_array_equal(view, before)
    flipped = grad_output[..., ::-1, :]
    assert_close(aclnn_py.reflection_pad2d_backward(flipped, self, padding, backend=backend),
                 reference(flipped, self, padding), dtype)


def test_result_is_a_new_array(backend):
    grad_output = np.arange(6, dtype=np.float32).reshape(1, 2, 3)
    result = aclnn_py.reflection_pad2d_backward(grad_output, np.zeros((1, 2, 3), np.float32), [0, 0, 0, 0],
                                                backend=backend)
    np.testing.assert_array_equal(result, grad_output)
    assert not np.shares_memory(result, grad_output)


def test_float16_accumulates_in_float32(backend):
    # Input pixel 1 receives 2048 (itself) + 1 (left pad) + 1 (right pad, reflected from W-2 = 1).
    # float16 sums 2048 + 1 back to 2048; float32 gives 2050, which float16 represents.
    grad_output = np.array([[[1, 0, 2048, 0, 1]]], np.float16)
    result = aclnn_py.reflection_pad2d_backward(grad_output, np.zeros((1, 1, 3), np.float16), [1, 1, 0, 0],
                                                backend=backend)
    assert result.dtype == np.float16
    assert result[0, 0, 1] == 2050


@pytest.mark.parametrize("self_shape, padding", [((0, 3, 4, 5), (1, 1, 1, 1)), ((0, 4, 5), (2, 0, 0, 3))])
def test_empty_leading_dim_gives_empty_result(backend, self_shape, padding):
    for dtype in DTYPES:
        grad_output, self = _problem(np.random.default_rng(5), self_shape, padding, dtype)
        result = aclnn_py.reflection_pad2d_backward(grad_output, self, padding, backend=backend)
        assert result.shape == self_shape and result.dtype == dtype


@pytest.mark.parametrize("padding", [(7, 7, 0, 0), (0, 9, 0, 0), (7, 7, 7, 7), (3, 0, 5, 1)])
def test_bfloat16_padding_rule_accepts(backend, padding):
    rng = np.random.default_rng(6)
    grad_output, self = _problem(rng, (1, 2, 8, 10), padding, bfloat16)
    result = aclnn_py.reflection_pad2d_backward(grad_output, self, padding, backend=backend)
    assert_close(result, reference(grad_output, self, padding), bfloat16)


# --- errors ------------------------------------------------------------------------------
# The invalid inputs are in invalid_cases.py (one table for every operator, run on every backend
# by test_invalid_cases.py); here are the valid baselines those cases change.

VALID = dict(grad_output=np.zeros((2, 3, 7, 9), np.float32), self=np.zeros((2, 3, 4, 5), np.float32),
             padding=[2, 2, 1, 2])


def _call(backend, **changes):
    args = dict(VALID, **changes)
    return aclnn_py.reflection_pad2d_backward(*args.values(), backend=backend)


def test_valid_baseline(backend):
    assert _call(backend).shape == (2, 3, 4, 5)
