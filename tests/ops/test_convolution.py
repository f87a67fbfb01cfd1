"""convolution (aclnnConvolution): values against PyTorch CPU, parameter forms, views, empty tensors."""

from __future__ import annotations

import numpy as np
import pytest

import aclnn_py
from aclnn_py import bfloat16
from helpers import FLOAT_DTYPES, assert_close, random_array

# (input shape, weight shape, bias, stride, padding, dilation, transposed, outputPadding, groups)
CASES = {
    "1d": ((2, 3, 9), (4, 3, 3), True, [1], [1], [1], False, [0], 1),
    "1d strided dilated grouped": ((2, 4, 13), (6, 2, 3), False, [2], [2], [3], False, [0], 2),
    "1d asymmetric [left, right]": ((2, 3, 9), (4, 3, 3), True, [1], [2, 0], [1], False, [0], 1),
    "2d 3x3": ((2, 4, 7, 6), (6, 4, 3, 3), True, [1, 1], [1, 1], [1, 1], False, [0, 0], 1),
    "2d 3x3 winograd": ((2, 32, 9, 8), (32, 32, 3, 3), True, [1, 1], [1, 1], [1, 1], False, [0, 0], 1),
    "2d 3x3 winograd grouped dilated": ((1, 64, 9, 10), (64, 32, 3, 3), False, [1, 1], [2, 1], [2, 1], False,
                                        [0, 0], 2),
    "2d mixed params": ((2, 4, 9, 8), (6, 2, 3, 2), True, [2, 1], [1, 0], [1, 2], False, [0, 0], 2),
    "2d asymmetric [top, bottom, left, right]": ((2, 3, 6, 7), (4, 3, 3, 2), True, [2, 1], [2, 0, 1, 3], [1, 2],
                                                 False, [0, 0], 1),
    "2d 1x1": ((2, 16, 5, 6), (24, 16, 1, 1), True, [1, 1], [0, 0], [1, 1], False, [0, 0], 1),
    "2d 1x1 strided grouped": ((2, 16, 7, 6), (24, 8, 1, 1), False, [2, 3], [0, 0], [1, 1], False, [0, 0], 2),
    "2d 1x1 padded": ((2, 3, 5, 5), (4, 3, 1, 1), True, [1, 1], [1, 1], [1, 1], False, [0, 0], 1),
    "2d depthwise": ((2, 4, 7, 6), (4, 1, 3, 3), True, [1, 1], [1, 1], [1, 1], False, [0, 0], 4),
    "2d patches": ((2, 3, 8, 9), (4, 3, 2, 3), True, [2, 3], [0, 0], [1, 1], False, [0, 0], 1),
    "3d": ((1, 4, 4, 5, 5), (2, 2, 2, 3, 2), True, [1, 2, 1], [1, 1, 0], [1, 1, 2], False, [0, 0, 0], 2),
    "1d transposed": ((2, 3, 5), (3, 4, 3), True, [2], [1], [1], True, [1], 1),
    "2d transposed": ((2, 4, 4, 3), (4, 3, 3, 3), True, [3, 2], [2, 1], [2, 1], True, [2, 1], 2),
    "2d transposed k4 s2": ((2, 8, 5, 4), (8, 4, 4, 4), True, [2, 2], [1, 1], [1, 1], True, [0, 0], 1),
    "2d transposed output padding < dilation": ((1, 2, 4, 4), (2, 3, 3, 3), False, [1, 1], [1, 1], [2, 2], True,
                                                [1, 1], 1),
    "3d transposed": ((1, 2, 3, 2, 3), (2, 2, 2, 3, 2), True, [2, 1, 2], [1, 1, 0], [1, 1, 1], True, [1, 0, 0], 1),
}


def _make(rng, case, dtype):
    x_shape, w_shape, has_bias, stride, padding, dilation, transposed, output_padding, groups = CASES[case]
    cout = w_shape[1] * groups if transposed else w_shape[0]
    x, w = random_array(rng, x_shape, dtype), random_array(rng, w_shape, dtype)
    b = random_array(rng, (cout,), dtype) if has_bias else None
    return x, w, b, stride, padding, dilation, transposed, output_padding, groups


def _torch(torch, x, w, b, stride, padding, dilation, transposed, output_padding, groups):
    """aten.convolution in float32; pairs of padding through F.pad (PyTorch's padding is symmetric)."""
    xt, wt = (torch.from_numpy(a.astype(np.float32)) for a in (x, w))
    bt = None if b is None else torch.from_numpy(b.astype(np.float32))
    spatial = x.ndim - 2
    if len(padding) != spatial:
        assert not transposed
        pads = []
        for d in reversed(range(spatial)):
            pads += [padding[2 * d], padding[2 * d + 1]]
        xt, padding = torch.nn.functional.pad(xt, pads), [0] * spatial
    return torch.ops.aten.convolution(xt, wt, bt, stride, padding, dilation, transposed,
                                      output_padding if transposed else [0] * spatial, groups).numpy()


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
@pytest.mark.parametrize("case", list(CASES))
def test_matches_torch(backend, torch, case, dtype):
    args = _make(np.random.default_rng(1), case, dtype)
    result = aclnn_py.convolution(*args, backend=backend)
    assert result.dtype == dtype
    # CANN computes half/bfloat16 in float32 and rounds once: the float32 result of the same
    # values is the oracle.
    assert_close(result, _torch(torch, *args), dtype, scale=4)


@pytest.mark.parametrize("case", ["2d 3x3 winograd", "2d transposed", "3d", "2d 1x1 strided grouped"])
@pytest.mark.parametrize("cube_math_type", [0, 1, 2, 3, 4])
def test_cube_math_type_keeps_the_numbers(backend, torch, case, cube_math_type):
    args = _make(np.random.default_rng(2), case, np.float32)
    result = aclnn_py.convolution(*args, cube_math_type, backend=backend)
    assert_close(result, _torch(torch, *args), np.float32, scale=4, cube_math_type=cube_math_type)


def test_mixed_dtypes_compute_wide_and_give_input_dtype(backend, torch):
    x, w, b, *rest = _make(np.random.default_rng(3), "2d mixed params", np.float32)
    x16, bb = x.astype(np.float16), b.astype(bfloat16)
    result = aclnn_py.convolution(x16, w, bb, *rest, backend=backend)
    assert result.dtype == np.float16
    assert_close(result, _torch(torch, x16, w, bb, *rest), np.float16, scale=4)


def test_int_and_sequence_forms(backend):
    x, w, b, *_ = _make(np.random.default_rng(4), "2d 3x3", np.float32)
    expected = aclnn_py.convolution(x, w, b, [1, 1], [1, 1], [1, 1], False, [0, 0], 1, backend=backend)
    result = aclnn_py.convolution(x, w, b, 1, (1, 1), np.array([1, 1]), np.bool_(False), None, np.int64(1),
                                  np.int8(1), backend=backend)
    assert_close(result, expected, np.float32)


def test_non_contiguous_inputs(backend, torch):
    args = _make(np.random.default_rng(5), "2d mixed params", np.float32)
    x, w, b, *rest = args
    expected = _torch(torch, *args)
    views = [
        (np.asfortranarray(x), np.asfortranarray(w), b),
        (np.ascontiguousarray(x.swapaxes(2, 3)).swapaxes(2, 3), np.ascontiguousarray(w.swapaxes(0, 1)).swapaxes(0, 1),
         np.repeat(b, 2)[::2]),
        (np.repeat(x, 2, axis=-1)[..., ::2], w[::-1][::-1], b[::-1].copy()[::-1]),
    ]
    for vx, vw, vb in views:
        before = [v.copy() for v in (vx, vw, vb)]
        result = aclnn_py.convolution(vx, vw, vb, *rest, backend=backend)
        assert result.flags.c_contiguous
        assert_close(result, expected, np.float32)
        for view, copy in zip((vx, vw, vb), before):
            np.testing.assert_array_equal(view, copy)


@pytest.mark.parametrize("x_shape, w_shape, transposed, out_shape", [
    ((0, 4, 5, 5), (6, 4, 3, 3), False, (0, 6, 3, 3)),
    ((2, 4, 5, 5), (0, 4, 3, 3), False, (2, 0, 3, 3)),
    ((0, 4, 3, 3), (4, 6, 3, 3), True, (0, 6, 5, 5)),
    ((2, 4, 1, 1), (4, 3, 1, 1), True, (2, 3, 0, 0)),
], ids=["N=0", "Cout=0", "transposed N=0", "transposed empty output"])
def test_empty_tensors(backend, x_shape, w_shape, transposed, out_shape):
    x, w = np.ones(x_shape, np.float32), np.ones(w_shape, np.float32)
    padding = [1, 0, 1, 0] if transposed and x_shape[2] == 1 else [0, 0]
    result = aclnn_py.convolution(x, w, None, [1, 1], padding, [1, 1], transposed, [0, 0], 1, backend=backend)
    assert result.shape == out_shape and result.dtype == np.float32


def test_call_by_cann_names(backend, torch):
    args = _make(np.random.default_rng(6), "2d transposed", np.float32)
    x, w, b, stride, padding, dilation, transposed, output_padding, groups = args
    expected = _torch(torch, *args)
    out = np.zeros(expected.shape, np.float32)
    aclnn_py.call("aclnnConvolution", input=x, weight=w, bias=b, stride=stride, padding=padding, dilation=dilation,
                  transposed=transposed, outputPadding=output_padding, groups=groups, output=out, cubeMathType=0,
                  backend=backend)
    assert_close(out, expected, np.float32)


def test_call_writes_an_output_of_another_dtype_on_sim(sim_lib, torch):
    args = _make(np.random.default_rng(7), "2d 3x3", np.float32)
    expected = _torch(torch, *args)
    out = np.zeros(expected.shape, bfloat16)
    aclnn_py.call("aclnnConvolution", *args, out, 1, backend="sim")
    assert_close(out, expected, bfloat16, scale=4)


def test_results_are_new_arrays(backend):
    x, w, b, *rest = _make(np.random.default_rng(8), "2d 1x1", np.float32)
    first = aclnn_py.convolution(x, w, b, *rest, backend=backend)
    second = aclnn_py.convolution(x, w, b, *rest, backend=backend)
    assert first is not second and not np.shares_memory(first, second)
    np.testing.assert_array_equal(first, second)


@pytest.mark.parametrize("value", [np.inf, np.nan])
@pytest.mark.parametrize("case", ["2d 3x3 winograd", "2d 1x1", "2d transposed k4 s2"])
def test_non_finite_input_follows_the_terms(backend, torch, case, value):
    x, w, b, *rest = _make(np.random.default_rng(9), case, np.float32)
    x[0, 0, 1, 1] = value
    result = aclnn_py.convolution(x, w, b, *rest, backend=backend)
    expected = _torch(torch, x, w, b, *rest)
    np.testing.assert_array_equal(np.isnan(result), np.isnan(expected))
    np.testing.assert_array_equal(np.isinf(result), np.isinf(expected))
    finite = np.isfinite(expected)
    assert_close(result[finite], expected[finite], np.float32, scale=4)
