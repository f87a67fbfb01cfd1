"""avg_pool2d_backward (aclnnAvgPool2dBackward): values against a loop reference and PyTorch,
every parameter form, both kernel strategies, and every documented error with CANN's status."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

import aclnn_py
from aclnn_py import AclnnError, bfloat16
from helpers import FLOAT_DTYPES, assert_close, pool_windows, random_array
from reference.avg_pool2d_backward import avg_pool2d_backward as reference


_module = importlib.import_module("aclnn_py.ops.avg_pool2d_backward")


@pytest.fixture(params=["slices", "product"])
def kernel_path(request, monkeypatch):
    """Force the numpy kernel's per-axis strategy (strided slices or membership-matrix product)."""
    if request.param == "slices":
        monkeypatch.setattr(_module, "_SMALL", -1)
        monkeypatch.setattr(_module, "_BLAS_ADVANTAGE", 0)
    else:
        monkeypatch.setattr(_module, "_SMALL", 1 << 40)
    return request.param


def _pair(values, default=None):
    """CANN's list forms as an (H, W) pair: [v] -> (v, v); None / [] -> default."""
    if not values:
        return default
    return (values[0], values[0]) if len(values) == 1 else tuple(values)


def _pooled(size, k, s, p, ceil_mode):
    """The forward output size, written from the definition (not shared with the op)."""
    span = size + 2 * p - k
    count = (-(-span // s) if ceil_mode else span // s) + 1
    if ceil_mode and (count - 1) * s >= size + p:  # the last window must start in input + left pad
        count -= 1
    return count


def _grad_shape(self_shape, kernel, stride, padding, ceil_mode):
    k, p = _pair(kernel), _pair(padding)
    s = _pair(stride, k)
    return tuple(self_shape[:-2]) + tuple(_pooled(self_shape[-2 + d], k[d], s[d], p[d], ceil_mode) for d in range(2))


def _problem(rng, self_shape, kernel, stride, padding, ceil_mode, dtype=np.float32):
    self = random_array(rng, self_shape, dtype)
    grad_output = random_array(rng, _grad_shape(self_shape, kernel, stride, padding, ceil_mode), dtype)
    return grad_output, self


def _expected(grad_output, self, kernel, stride, padding, count_include_pad, divisor_override):
    k, p = _pair(kernel), _pair(padding)
    return reference(grad_output, self.shape, k, _pair(stride, k), p, count_include_pad, divisor_override)


def _torch_expected(torch, grad_output, self, kernel, stride, padding, ceil_mode, count_include_pad,
                    divisor_override):
    """PyTorch on the float32 values: CANN computes float16/bfloat16 in float32 and rounds once,
    while PyTorch's CPU kernel accumulates in the low precision itself."""
    k, p = _pair(kernel), _pair(padding)
    s = _pair(stride, k)
    result = torch.ops.aten.avg_pool2d_backward(
        torch.from_numpy(np.ascontiguousarray(grad_output, dtype=np.float32)),
        torch.from_numpy(np.ascontiguousarray(self, dtype=np.float32)),
        list(k), list(s), list(p), ceil_mode, count_include_pad, divisor_override or None)
    return result.numpy()


# (self shape, kernelSize, stride, padding, ceilMode) in CANN's list forms.
CONFIGS = [
    ((2, 3, 7, 8), [3], [2], [1], False),
    ((2, 3, 7, 8), [3], [2], [1], True),
    ((1, 2, 3, 5), [2], [2], [1], True),             # ceil mode drops the window starting at H + p
    ((2, 2, 6, 9), [2, 3], [1, 2], [1, 1], False),
    ((2, 2, 6, 9), [2, 3], [2, 3], [0, 1], True),
    ((1, 3, 8, 8), [2], None, [0], False),          # stride = kernel, windows tile exactly
    ((1, 3, 9, 7), [2], [], [1], True),             # stride = kernel, with padding and a ragged end
    ((2, 1, 5, 6), [5, 1], [3, 1], [2, 0], False),
    ((1, 2, 10, 4), [4, 2], [1], [2, 1], True),
    ((1, 1, 6, 6), [1], [3], [0], True),            # stride > kernel: pixels no window covers
    ((1, 2, 5, 5), [5], [1], [0], False),           # one window covering everything
    ((2, 2, 4, 6), [3, 7], [1, 4], [1, 3], True),   # kernel wider than the image
    ((1, 2, 7, 10), [2, 3], [2, 3], [0], False),    # floor mode: last row and column get nothing
]
DIVISORS = [None, 3, -2]


@pytest.mark.parametrize("config", CONFIGS)
def test_matches_reference(backend, kernel_path, config):
    self_shape, kernel, stride, padding, ceil_mode = config
    rng = np.random.default_rng(0)
    grad_output, self = _problem(rng, self_shape, kernel, stride, padding, ceil_mode)
    for count_include_pad in (True, False):
        for divisor in DIVISORS:
            result = aclnn_py.avg_pool2d_backward(grad_output, self, kernel, stride, padding, ceil_mode,
                                                  count_include_pad, divisor, backend=backend)
            assert result.shape == self.shape and result.dtype == np.float32
            expected = _expected(grad_output, self, kernel, stride, padding, count_include_pad, divisor)
            assert_close(result, expected, np.float32)


@pytest.mark.parametrize("divisor", DIVISORS)
@pytest.mark.parametrize("count_include_pad", [True, False])
@pytest.mark.parametrize("rank", [4, 3])
@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
def test_matches_torch(backend, torch, dtype, rank, count_include_pad, divisor):
    rng = np.random.default_rng(1)
    for self_shape, kernel, stride, padding, ceil_mode in CONFIGS:
        self_shape = self_shape[4 - rank:]
        grad_output, self = _problem(rng, self_shape, kernel, stride, padding, ceil_mode, dtype)
        result = aclnn_py.avg_pool2d_backward(grad_output, self, kernel, stride, padding, ceil_mode,
                                              count_include_pad, divisor, backend=backend)
        assert result.shape == self.shape and result.dtype == dtype
        expected = _torch_expected(torch, grad_output, self, kernel, stride, padding, ceil_mode,
                                   count_include_pad, divisor)
        assert_close(result, expected, dtype)


def test_pooled_size_matches_torch_forward(backend, torch):
    # Over a grid of one-axis problems: the op accepts exactly the gradOutput size PyTorch's
    # forward produces (and the test's own formula agrees), and its values match PyTorch's.
    dropped = 0
    for size in range(1, 8):
        for k in range(1, 5):
            for s in range(1, 5):
                for p in range(k // 2 + 1):
                    if size + 2 * p < k:
                        continue
                    for ceil_mode in (False, True):
                        x = torch.zeros(1, 1, size, 1)
                        pooled = torch.nn.functional.avg_pool2d(x, (k, 1), (s, 1), (p, 0), ceil_mode).shape[2]
                        assert pooled == _pooled(size, k, s, p, ceil_mode)
                        dropped += ceil_mode and -(-(size + 2 * p - k) // s) * s >= size + p
                        self = np.zeros((1, 1, size, 1), np.float32)
                        grad_output = np.arange(1, pooled + 1, dtype=np.float32).reshape(1, 1, pooled, 1)
                        args = ([k, 1], [s, 1], [p, 0], ceil_mode, False, None)
                        result = aclnn_py.avg_pool2d_backward(grad_output, self, *args, backend=backend)
                        assert_close(result, _torch_expected(torch, grad_output, self, *args), np.float32)
                        with pytest.raises(AclnnError) as info:
                            aclnn_py.avg_pool2d_backward(np.zeros((1, 1, pooled + 1, 1), np.float32), self, *args,
                                                         backend=backend)
                        assert info.value.status == 161002
    assert dropped > 0  # the ceil-mode rule was exercised


def test_ceil_mode_last_window_rule(backend, torch):
    # H = 3, kernel 2, stride 2, pad 1: ceil((3 + 2 - 2) / 2) + 1 = 3 windows, but the third
    # would start at row 3 = H, inside the right padding, so there are 2 (as in floor mode).
    self = np.zeros((1, 1, 3, 3), np.float32)
    grad_output = np.arange(1, 5, dtype=np.float32).reshape(1, 1, 2, 2)
    for count_include_pad in (True, False):
        result = aclnn_py.avg_pool2d_backward(grad_output, self, [2], [2], [1], True, count_include_pad, None,
                                              backend=backend)
        expected = _torch_expected(torch, grad_output, self, [2], [2], [1], True, count_include_pad, None)
        assert_close(result, expected, np.float32)
    with pytest.raises(AclnnError) as info:
        aclnn_py.avg_pool2d_backward(np.zeros((1, 1, 3, 3), np.float32), self, [2], [2], [1], True, True, None,
                                     backend=backend)
    assert info.value.status == 161002 and "gradOutput" in info.value.message


def test_ceil_mode_partial_last_window(backend):
    # H = W = 5, kernel 2, stride 2, no padding: ceil mode adds a window over row/column 4 only.
    self = np.zeros((1, 1, 5, 5), np.float32)
    grad_output = np.full((1, 1, 3, 3), 12.0, np.float32)
    including = aclnn_py.avg_pool2d_backward(grad_output, self, [2], [2], [0], True, True, None, backend=backend)
    excluding = aclnn_py.avg_pool2d_backward(grad_output, self, [2], [2], [0], True, False, None, backend=backend)
    # The clipped window counts only pixels inside input + padding (here: the input) either way.
    np.testing.assert_array_equal(including[0, 0, :, 4], [6, 6, 6, 6, 12])
    np.testing.assert_array_equal(including, excluding)
    np.testing.assert_array_equal(including[0, 0, :4, :4], np.full((4, 4), 3.0))


# --- parameter forms ---------------------------------------------------------------------

@pytest.mark.parametrize("kernel, stride, padding, explicit", [
    ([3], [2], [1], ([3, 3], [2, 2], [1, 1])),
    ([3, 2], [2], [1, 0], ([3, 2], [2, 2], [1, 0])),
    ([3], [2, 1], [1], ([3, 3], [2, 1], [1, 1])),
    ([2, 3], None, [1], ([2, 3], [2, 3], [1, 1])),
    ([2, 3], [], [0, 1], ([2, 3], [2, 3], [0, 1])),
    ((3, 3), (2, 2), (1, 1), ([3, 3], [2, 2], [1, 1])),
    (np.array([3]), np.array([2, 2], np.int32), np.array([1]), ([3, 3], [2, 2], [1, 1])),
    ([np.int64(3)], [np.int32(2)], [np.int16(1)], ([3, 3], [2, 2], [1, 1])),
])
def test_list_forms(backend, torch, kernel, stride, padding, explicit):
    rng = np.random.default_rng(2)
    grad_output, self = _problem(rng, (2, 3, 7, 6), *explicit, False)
    result = aclnn_py.avg_pool2d_backward(grad_output, self, kernel, stride, padding, False, True, None,
                                          backend=backend)
    full = aclnn_py.avg_pool2d_backward(grad_output, self, *explicit, False, True, None, backend=backend)
    assert_close(result, full, np.float32)
    assert_close(result, _torch_expected(torch, grad_output, self, *explicit, False, True, None), np.float32)


def test_divisor_override_zero_means_none(backend):
    rng = np.random.default_rng(3)
    grad_output, self = _problem(rng, (2, 2, 6, 7), [3], [2], [1], True)
    for count_include_pad in (True, False):
        args = (grad_output, self, [3], [2], [1], True, count_include_pad)
        assert_close(aclnn_py.avg_pool2d_backward(*args, 0, backend=backend),
                     aclnn_py.avg_pool2d_backward(*args, None, backend=backend), np.float32)


def test_divisor_override_scales(backend):
    grad_output = np.full((1, 1, 1, 1), 6.0, np.float32)
    self = np.zeros((1, 1, 2, 2), np.float32)
    for divisor, value in ((3, 2.0), (-2, -3.0), (np.int64(12), 0.5), (1000, 0.006)):
        result = aclnn_py.avg_pool2d_backward(grad_output, self, [2], None, [0], False, True, divisor,
                                              backend=backend)
        assert_close(result, np.full((1, 1, 2, 2), value, np.float32), np.float32)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
def test_cube_math_type_within_its_precision(backend, torch, dtype):
    # Each precision mode must stay within its own row of the tolerance table of PyTorch's
    # result (KEEP_DTYPE within the dtype's row; HF32/FP16 modes within their wider rows).
    rng = np.random.default_rng(4)
    grad_output, self = _problem(rng, (2, 3, 7, 8), [3], [2], [1], False, dtype)
    args = (grad_output, self, [3], [2], [1], False, True, None)
    expected = _torch_expected(torch, *args)
    assert_close(aclnn_py.avg_pool2d_backward(*args, backend=backend), expected, dtype)
    for cube_math_type in (0, 1, 2, 3):
        if cube_math_type == 2 and dtype == bfloat16:
            continue  # USE_FP16 with BFLOAT16 is an error (see test_invalid_parameters)
        result = aclnn_py.avg_pool2d_backward(*args, cube_math_type, backend=backend)
        assert result.dtype == dtype
        assert_close(result, expected, dtype, cube_math_type=cube_math_type)


def test_large_kernels_and_padding(backend, kernel_path):
    rng = np.random.default_rng(5)
    cases = [
        ((1, 2, 5, 6), [40, 3], [1, 2], [20, 1], False),        # 40-row windows, offsets > 16
        ((1, 1, 5, 6), [2**40, 3], [2**39, 2], [2**39, 1], False),
        ((1, 1, 5, 6), [2**40, 3], [2**39, 2], [2**39, 1], True),
        ((1, 1, 4, 3), [12, 3], [5, 2], [6, 1], True),           # stride > H, both windows cover all
        ((2, 1, 4, 3), [2**62, 2], [3], [2**61, 1], True),
    ]
    for self_shape, kernel, stride, padding, ceil_mode in cases:
        grad_output, self = _problem(rng, self_shape, kernel, stride, padding, ceil_mode)
        for count_include_pad, divisor in ((False, None), (True, None), (True, -3)):
            result = aclnn_py.avg_pool2d_backward(grad_output, self, kernel, stride, padding, ceil_mode,
                                                  count_include_pad, divisor, backend=backend)
            expected = _expected(grad_output, self, kernel, stride, padding, count_include_pad, divisor)
            assert_close(result, expected, np.float32)


def test_realistic_layer_matches_torch(backend, torch):
    rng = np.random.default_rng(6)
    for ceil_mode in (False, True):
        grad_output, self = _problem(rng, (2, 16, 56, 56), [3], [2], [1], ceil_mode)
        for count_include_pad in (True, False):
            result = aclnn_py.avg_pool2d_backward(grad_output, self, [3], [2], [1], ceil_mode, count_include_pad,
                                                  None, backend=backend)
            expected = _torch_expected(torch, grad_output, self, [3], [2], [1], ceil_mode, count_include_pad, None)
            assert_close(result, expected, np.float32)


def test_non_finite_gradient_stays_in_its_window(backend, kernel_path):
    # Overlapping 3 x 3 windows at stride 2: window (0, 0) covers pixels [0, 2) x [0, 2) of the
    # image, window (2, 2) covers [3, 6) x [3, 6).
    grad_output = np.zeros((1, 1, 3, 3), np.float32)
    grad_output[0, 0, 0, 0] = np.inf
    grad_output[0, 0, 2, 2] = np.nan
    self = np.zeros((1, 1, 6, 6), np.float32)
    result = aclnn_py.avg_pool2d_backward(grad_output, self, [3], [2], [1], False, True, None, backend=backend)
    assert np.all(np.isposinf(result[0, 0, :2, :2]))
    assert np.all(np.isnan(result[0, 0, 3:, 3:]))
    rest = np.ones((6, 6), bool)
    rest[:2, :2] = rest[3:, 3:] = False
    assert np.all(result[0, 0][rest] == 0)


def test_low_precision_accumulates_in_float32(backend):
    # Pixel 1 of a width-3 row lies in all three windows (kernel 3, stride 1, pad 1).  With
    # divisor 1 it receives 2048 + 1 + 1: float16 addition would round back to 2048 twice,
    # float32 gives 2050, which float16 holds.
    grad_output = np.array([[[[2048, 1, 1]]]], np.float16)
    self = np.zeros((1, 1, 1, 3), np.float16)
    result = aclnn_py.avg_pool2d_backward(grad_output, self, [1, 3], [1], [0, 1], False, True, 1, backend=backend)
    assert result.dtype == np.float16
    assert result[0, 0, 0, 1] == 2050


def test_non_contiguous_and_negative_strides(backend, kernel_path):
    rng = np.random.default_rng(7)
    grad_output, self = _problem(rng, (3, 2, 7, 8), [3], [2], [1], False)
    expected = _expected(grad_output, self, [3], [2], [1], True, None)
    views = [
        (np.ascontiguousarray(grad_output.transpose(0, 1, 3, 2)).transpose(0, 1, 3, 2), self[:, :, :, :]),
        (np.repeat(grad_output, 2, axis=0)[::2], np.repeat(self, 2, axis=3)[..., ::2]),
        (np.ascontiguousarray(grad_output[::-1, :, ::-1])[::-1, :, ::-1], self[:, ::-1, ::-1]),
        (np.asfortranarray(grad_output), np.asfortranarray(self)),
    ]
    for grad_view, self_view in views:
        before = grad_view.copy(), self_view.copy()
        result = aclnn_py.avg_pool2d_backward(grad_view, self_view, [3], [2], [1], False, True, None,
                                              backend=backend)
        assert_close(result, expected, np.float32)
        np.testing.assert_array_equal(grad_view, before[0])
        np.testing.assert_array_equal(self_view, before[1])
    flipped = grad_output[:, :, ::-1, ::-1]
    assert_close(aclnn_py.avg_pool2d_backward(flipped, self, [3], [2], [1], False, True, None, backend=backend),
                 _expected(flipped, self, [3], [2], [1], True, None), np.float32)


@pytest.mark.parametrize("kernel, stride", [([1], [1]), ([2], [2]), ([3], [2])])
def test_result_is_a_new_array(backend, kernel_path, kernel, stride):
    # kernel 1 / stride 1 is the identity spread, kernel = stride tiles: neither may hand back input.
    self = np.zeros((1, 2, 4, 4), np.float32)
    grad_output = np.ones(_grad_shape(self.shape, kernel, stride, [0], False), np.float32)
    result = aclnn_py.avg_pool2d_backward(grad_output, self, kernel, stride, [0], False, True, 1, backend=backend)
    assert not np.shares_memory(result, grad_output) and not np.shares_memory(result, self)
    result[...] = -1
    assert np.all(grad_output == 1) and np.all(self == 0)


@pytest.mark.parametrize("self_shape, kernel, grad_shape", [
    ((0, 3, 5, 5), [2], (0, 3, 4, 4)),     # no images
    ((2, 0, 5, 5), [2], (2, 0, 4, 4)),     # no channels
    ((0, 5, 5), [2], (0, 4, 4)),           # 3-D, no channels
    ((1, 2, 0, 4), [1], (1, 2, 0, 4)),     # no rows
    ((1, 2, 1, 3), [2, 1], (1, 2, 0, 3)),  # kernel taller than the image: no windows
])
def test_empty_tensors_give_zeros(backend, self_shape, kernel, grad_shape):
    for dtype in FLOAT_DTYPES:
        result = aclnn_py.avg_pool2d_backward(np.ones(grad_shape, dtype), np.ones(self_shape, dtype), kernel, [1],
                                              [0], False, True, None, backend=backend)
        assert result.shape == self_shape and result.dtype == dtype
        assert not np.any(result.astype(np.float32))


# --- errors ------------------------------------------------------------------------------
# The invalid inputs are in invalid_cases.py (one table for every operator, run on every backend
# by test_invalid_cases.py); here are the valid baselines those cases change.

VALID = dict(grad_output=np.zeros((2, 3, 4, 4), np.float32), self=np.zeros((2, 3, 7, 8), np.float32),
             kernel_size=[3], stride=[2], padding=[1], ceil_mode=False, count_include_pad=True,
             divisor_override=None, cube_math_type=0)


def _call(backend, **changes):
    args = dict(VALID, **changes)
    return aclnn_py.avg_pool2d_backward(*args.values(), backend=backend)


def test_valid_baseline(backend):
    result = _call(backend)
    assert result.shape == (2, 3, 7, 8) and result.dtype == np.float32


def test_stride_may_be_none(backend):
    grad_output = random_array(np.random.default_rng(8), (2, 3, 3, 4), np.float32)
    by_none = _call(backend, grad_output=grad_output, kernel_size=[2, 2], stride=None, padding=[0])
    by_kernel = _call(backend, grad_output=grad_output, kernel_size=[2, 2], stride=[2, 2], padding=[0])
    assert_close(by_none, by_kernel, np.float32)


def test_spread_by_slices_against_a_loop(monkeypatch):
    """The strided-slice spread (phases, pieces where two slices overlap, further slices added)
    along either axis, for every small size, kernel, stride and padding, against a loop."""
    monkeypatch.setattr(_module, "_SMALL", -1)
    monkeypatch.setattr(_module, "_BLAS_ADVANTAGE", 0)
    rng = np.random.default_rng(7)
    for size, k, s, p, windows in pool_windows(range(1, 9), range(1, 6), range(1, 6)):
        src = rng.standard_normal((2, windows)).astype(np.float32)
        expected = np.zeros((2, size), np.float32)
        for o in range(windows):
            for x in range(max(0, o * s - p), min(size, o * s - p + k)):
                expected[:, x] += src[:, o]
        assert_close(_module._spread(src, 1, size, k, s, p), expected, np.float32)
        assert_close(_module._spread(np.ascontiguousarray(src.T), 0, size, k, s, p).T, expected, np.float32)
