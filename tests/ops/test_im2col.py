"""im2col (aclnnIm2col): values against PyTorch CPU (F.unfold), views, the const out written back."""

from __future__ import annotations

import numpy as np
import pytest

import aclnn_py
from aclnn_py import bfloat16
from aclnn_py._convert.params import WRITTEN_CONST
from helpers import FLOAT_DTYPES, random_array

# (self shape, kernelSize, dilation, padding, stride)
CASES = {
    "3x3 p1": ((2, 3, 7, 6), [3, 3], [1, 1], [1, 1], [1, 1]),
    "mixed": ((2, 3, 7, 6), [3, 2], [1, 2], [1, 0], [2, 1]),
    "3-D self": ((3, 5, 5), [2, 2], [1, 1], [0, 0], [2, 2]),
    "dilated wide padding": ((1, 2, 4, 4), [3, 3], [2, 2], [2, 2], [1, 1]),
    "patches": ((2, 3, 8, 8), [4, 4], [1, 1], [0, 0], [4, 4]),
    "1x1 strided": ((2, 4, 5, 7), [1, 1], [1, 1], [0, 0], [2, 3]),
    "kernel = image": ((1, 2, 3, 3), [3, 3], [1, 1], [0, 0], [1, 1]),
}


def _torch_unfold(torch, x, kernel_size, dilation, padding, stride):
    """F.unfold in float32 (exact: a copy), cast back to x's dtype."""
    out = torch.nn.functional.unfold(torch.from_numpy(x.astype(np.float32)), kernel_size, dilation, padding, stride)
    return out.numpy().astype(x.dtype)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
@pytest.mark.parametrize("case", list(CASES))
def test_matches_torch(backend, torch, case, dtype):
    shape, *arrays = CASES[case]
    x = random_array(np.random.default_rng(0), shape, dtype)
    result = aclnn_py.im2col(x, *arrays, backend=backend)
    assert result.dtype == x.dtype
    np.testing.assert_array_equal(result, _torch_unfold(torch, x, *arrays))


def test_int_forms(backend, torch):
    x = random_array(np.random.default_rng(1), (2, 3, 6, 6), np.float32)
    np.testing.assert_array_equal(aclnn_py.im2col(x, 3, 1, 1, 2, backend=backend),
                                  _torch_unfold(torch, x, [3, 3], [1, 1], [1, 1], [2, 2]))


def test_non_contiguous_inputs(backend, torch):
    x = random_array(np.random.default_rng(2), (2, 3, 7, 6), np.float32)
    arrays = CASES["mixed"][1:]
    expected = _torch_unfold(torch, x, *arrays)
    for view in (np.asfortranarray(x), np.repeat(x, 2, axis=-1)[..., ::2],
                 np.ascontiguousarray(x.swapaxes(2, 3)).swapaxes(2, 3)):
        before = view.copy()
        result = aclnn_py.im2col(view, *arrays, backend=backend)
        assert result.flags.c_contiguous
        np.testing.assert_array_equal(result, expected)
        np.testing.assert_array_equal(view, before)


def test_empty_batch(backend):
    result = aclnn_py.im2col(np.zeros((0, 2, 4, 4), np.float32), 2, 1, 1, 1, backend=backend)
    assert result.shape == (0, 8, 25)


def test_out_is_a_written_const_parameter():
    assert "out" in WRITTEN_CONST["aclnnIm2colGetWorkspaceSize"]


def test_call_writes_the_const_out_back(backend, torch):
    x = random_array(np.random.default_rng(3), (2, 3, 7, 6), np.float32)
    arrays = CASES["mixed"][1:]
    expected = _torch_unfold(torch, x, *arrays)
    out = np.full(expected.shape, 5.0, np.float32)
    aclnn_py.call("aclnnIm2col", self=x, kernelSize=arrays[0], dilation=arrays[1], padding=arrays[2],
                  stride=arrays[3], out=out, backend=backend)
    np.testing.assert_array_equal(out, expected)


def test_call_casts_into_an_out_of_another_dtype_on_sim(sim_lib, torch):
    x = random_array(np.random.default_rng(4), (2, 3, 7, 6), np.float32)
    arrays = CASES["3x3 p1"][1:]
    expected = _torch_unfold(torch, x, *arrays)
    out = np.zeros(expected.shape, bfloat16)
    aclnn_py.call("aclnnIm2col", x, *arrays, out, backend="sim")
    np.testing.assert_array_equal(out, expected.astype(bfloat16))


@pytest.mark.parametrize("dilation, stride, same_as", [([1, 2**62], [2, 2], ([1, 1], [2, 2])),
                                                       ([1, 1], [2**62, 2], ([1, 1], [8, 2]))])
def test_a_dim_of_one_takes_any_step(backend, torch, dilation, stride, same_as):
    """A 1-wide kernel dim is never dilated and a grid dim of one block never strides: a step of
    2^62 there gives what a small one gives (the numpy backend had multiplied it into a stride
    beyond a C long: OverflowError, found by scripts/fuzz.py --seed 2912)."""
    x = random_array(np.random.default_rng(2), (1, 2, 3, 4), np.float32)
    result = aclnn_py.im2col(x, [1, 1], dilation, [1, 1], stride, backend=backend)
    np.testing.assert_array_equal(result, _torch_unfold(torch, x, [1, 1], same_as[0], [1, 1], same_as[1]))
