"""avg_pool2d (aclnnAvgPool2d) against PyTorch CPU: every documented dtype, ceil mode, padding in or
out of the divisor, divisorOverride, 3-D input, non-contiguous views; CANN's truncating pooled size."""

from __future__ import annotations

import numpy as np
import pytest

import aclnn_py
from aclnn_py import bfloat16
from helpers import assert_close, random_array

DTYPES = [np.dtype(np.float32), np.dtype(np.float16), np.dtype(bfloat16)]
GEOMETRIES = [  # (shape, kernel, strides, paddings, ceil, count_include_pad, divisor)
    ((2, 3, 9, 10), [3, 2], [2, 1], [1, 1], True, False, 0),
    ((3, 8, 7), [2], [2], [0], False, True, 3),
    ((2, 3, 11, 11), [3], [2], [1], True, True, 0),
    ((1, 2, 5, 5), [3], [], [1], False, False, 0),
    ((1, 2, 7, 6), [3, 3], [1, 1], [1, 1], False, True, -2),
]


def _torch_pool(torch, x, kernel, strides, paddings, ceil, incl, divisor):
    k = kernel * 2 if len(kernel) == 1 else kernel[:2]
    p = paddings * 2 if len(paddings) == 1 else paddings
    return torch.nn.functional.avg_pool2d(torch.from_numpy(x.astype(np.float32)), k, strides or None, p, ceil, incl,
                                          divisor or None).numpy()


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shape, kernel, strides, paddings, ceil, incl, divisor", GEOMETRIES)
def test_matches_torch(backend, torch, dtype, shape, kernel, strides, paddings, ceil, incl, divisor):
    x = random_array(np.random.default_rng(0), shape, dtype)
    result = aclnn_py.avg_pool2d(x, kernel, strides, paddings, ceil, incl, divisor, backend=backend)
    expected = _torch_pool(torch, x, kernel, strides, paddings, ceil, incl, divisor)
    assert result.dtype == dtype
    assert_close(result, expected.astype(dtype), dtype)


def test_window_longer_than_the_input_pools_to_one(backend):
    # CANN truncates (1 + 0 - 2) / 2 toward zero: one window of the 1-row input (PyTorch's floor
    # division gives none).
    x = random_array(np.random.default_rng(1), (1, 2, 1, 6), np.float32)
    result = aclnn_py.avg_pool2d(x, [2, 2], [2, 2], [0, 0], False, False, 0, backend=backend)
    assert result.shape == (1, 2, 1, 3)
    assert_close(result, x.reshape(1, 2, 1, 3, 2).mean(axis=-1), np.float32)


def test_non_contiguous_views(backend, torch):
    x = random_array(np.random.default_rng(2), (2, 3, 7, 9), np.float32)
    expected = _torch_pool(torch, x, [3], [2], [1], False, True, 0)
    for view in (np.ascontiguousarray(x.swapaxes(-1, -2)).swapaxes(-1, -2), np.ascontiguousarray(x[:, ::-1])[:, ::-1],
                 np.repeat(x, 2, axis=-1)[..., ::2]):
        assert_close(aclnn_py.avg_pool2d(view, 3, 2, 1, backend=backend), expected, np.float32)


def test_empty_batch(backend):
    assert aclnn_py.avg_pool2d(np.zeros((0, 3, 6, 6), np.float32), 2, 2, 0, backend=backend).shape == (0, 3, 3, 3)


@pytest.mark.parametrize("cube", [1, 3, 4])
def test_float_cube_math_types_on_the_3d_path(backend, torch, cube):
    # Ceil mode takes CANN's AvgPool3D path, which accepts every cubeMathType.
    x = random_array(np.random.default_rng(3), (1, 2, 7, 7), np.float32)
    result = aclnn_py.avg_pool2d(x, 3, 2, 1, True, True, 0, cube, backend=backend)
    assert_close(result, _torch_pool(torch, x, [3], [2], [1], True, True, 0), np.float32)


def test_call_with_cann_names(backend, torch):
    x = random_array(np.random.default_rng(4), (1, 2, 6, 6), np.float32)
    out = np.zeros((1, 2, 3, 3), np.float32)
    aclnn_py.call("aclnnAvgPool2d", x, [2, 2], [2, 2], [0, 0], False, True, 0, 0, out, backend=backend)
    assert_close(out, _torch_pool(torch, x, [2], [2], [0], False, True, 0), np.float32)
