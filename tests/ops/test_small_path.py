"""The numpy backend's two paths for Im2colBackward, ReflectionPad2dBackward, AvgPool2dBackward,
AvgPool2d and AdaptiveAvgPool2d: the per-offset kernels and, on small planes, one product with the kernel's
own matrix (aclnn_py/_numpy/small.py). Each case runs with each path forced and is checked
against the loop references."""

from __future__ import annotations

import numpy as np
import pytest

import aclnn_py
from aclnn_py._numpy import plans as _plans
from aclnn_py._numpy import small as _small
from helpers import FLOAT_DTYPES, assert_close, random_array
from reference.avg_pool2d_backward import avg_pool2d_backward as avg_reference
from reference.im2col_backward import im2col_backward as im2col_reference
from reference.reflection_pad2d_backward import reflection_pad2d_backward as reflection_reference


@pytest.fixture(params=["matrix", "kernel"])
def path(request, monkeypatch):
    if request.param == "matrix":  # every non-empty problem takes the matrix product
        monkeypatch.setattr(_small, "MAX_MATRIX_ELEMENTS", 1 << 40)
        monkeypatch.setattr(_small, "_MAX_WORK", 1 << 60)
    else:  # none does
        monkeypatch.setattr(_small, "MAX_MATRIX_ELEMENTS", 0)
    _plans.forget_plans()  # plans made under the other choice
    yield request.param
    _plans.forget_plans()


def test_default_choice():
    assert _small.use_small(1, 36, 16)               # a (1, 1, 4, 4) reflection pad
    assert not _small.use_small(1, 226 * 226, 224 * 224)  # a 224x224 image
    assert not _small.use_small(10**6, 36, 16)       # small planes, but very many


REFLECTION_CASES = [((1, 1, 4, 4), [1, 1, 1, 1]), ((2, 3, 5, 7), [2, 0, 1, 3]), ((3, 4, 6), [3, 1, 0, 2])]


@pytest.mark.parametrize("dtype", [*FLOAT_DTYPES, np.dtype(np.float64), np.dtype(np.complex64)], ids=str)
@pytest.mark.parametrize("shape, padding", REFLECTION_CASES)
def test_reflection_pad(path, shape, padding, dtype):
    rng = np.random.default_rng(1)
    left, right, top, bottom = padding
    self = np.zeros(shape, dtype)
    grad = random_array(rng, (*shape[:-2], shape[-2] + top + bottom, shape[-1] + left + right), dtype)
    got = aclnn_py.reflection_pad2d_backward(grad, self, padding, backend="numpy")
    assert got.dtype == dtype
    assert_close(got, reflection_reference(grad, self, padding), dtype)


IM2COL_CASES = [  # (C, inputSize, kernel, dilation, padding, stride, batched)
    (1, [4, 4], [2, 2], [1, 1], [0, 0], [2, 2], True),
    (3, [5, 6], [3, 2], [1, 2], [1, 0], [1, 2], True),
    (2, [4, 5], [2, 3], [2, 1], [1, 1], [2, 1], False),
]


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
@pytest.mark.parametrize("case", IM2COL_CASES)
def test_im2col(path, case, dtype):
    channels, size, kernel, dilation, padding, stride, batched = case
    blocks = [(size[d] + 2 * padding[d] - dilation[d] * (kernel[d] - 1) - 1) // stride[d] + 1 for d in range(2)]
    shape = (channels * kernel[0] * kernel[1], blocks[0] * blocks[1])
    grad = random_array(np.random.default_rng(2), (2, *shape) if batched else shape, dtype)
    got = aclnn_py.im2col_backward(grad, size, kernel, dilation, padding, stride, backend="numpy")
    assert got.dtype == dtype
    assert_close(got, im2col_reference(grad, size, kernel, dilation, padding, stride), dtype)


AVG_CASES = [  # (self shape, kernel, stride, padding, ceil, count_include_pad, divisor)
    ((1, 1, 4, 4), [2, 2], [2, 2], [0, 0], False, True, None),
    ((2, 3, 7, 6), [3, 2], [2, 1], [1, 1], True, False, None),
    ((3, 5, 5), [3, 3], [2, 2], [1, 1], True, True, -3),
]


def _pooled(size, k, s, p, ceil):
    o = (size + 2 * p - k + (s - 1 if ceil else 0)) // s + 1
    return o - 1 if ceil and (o - 1) * s >= size + p else o


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
@pytest.mark.parametrize("case", AVG_CASES)
def test_avg_pool(path, case, dtype):
    shape, kernel, stride, padding, ceil, include_pad, divisor = case
    out = [_pooled(shape[-2 + d], kernel[d], stride[d], padding[d], ceil) for d in range(2)]
    grad = random_array(np.random.default_rng(3), (*shape[:-2], *out), dtype)
    self = np.zeros(shape, dtype)
    got = aclnn_py.avg_pool2d_backward(grad, self, kernel, stride, padding, ceil, include_pad, divisor,
                                       backend="numpy")
    assert got.dtype == dtype
    assert_close(got, avg_reference(grad, shape, kernel, stride, padding, include_pad, divisor), dtype)


def test_non_finite_values_stay_where_they_land(path):
    """inf x 0 in a matrix product is NaN: such inputs must not smear NaN over the plane."""
    grad = np.zeros((1, 1, 6, 6), np.float32)
    grad[0, 0, 0, 0] = np.inf
    got = aclnn_py.reflection_pad2d_backward(grad, np.zeros((1, 1, 4, 4), np.float32), [1, 1, 1, 1],
                                             backend="numpy")
    assert got[0, 0, 1, 1] == np.inf
    assert np.count_nonzero(got) == 1 and not np.isnan(got).any()
    cols = np.zeros((1, 4, 4), np.float32)
    cols[0, 0, 0] = np.nan
    got = aclnn_py.im2col_backward(cols, [4, 4], [2, 2], [1, 1], [0, 0], [2, 2], backend="numpy")
    assert np.isnan(got[0, 0, 0, 0]) and np.count_nonzero(np.isnan(got)) == 1



@pytest.mark.parametrize("planes", [1, 2, 3])  # 36, 72 and 108 elements: both ways of telling
@pytest.mark.parametrize("dtype", [np.dtype(np.float32), np.dtype(np.float16), np.dtype(np.float64)], ids=str)
@pytest.mark.parametrize("bad", [np.inf, -np.inf, np.nan, "inf-inf"])
def test_non_finite_values_on_any_plane(path, planes, dtype, bad):
    """A non-finite value on any plane (the last one here), alone or as inf and -inf whose sum
    is NaN, is found whatever the number of elements, and stays where it lands."""
    grad = random_array(np.random.default_rng(4), (planes, 6, 6), dtype)
    if bad == "inf-inf":
        grad[-1, 2, 2], grad[-1, 3, 3] = np.inf, -np.inf
    else:
        grad[-1, 2, 2] = bad
    self = np.zeros((planes, 4, 4), dtype)
    got = aclnn_py.reflection_pad2d_backward(grad, self, [1, 1, 1, 1], backend="numpy")
    assert_close(got, reflection_reference(grad, self, [1, 1, 1, 1]), dtype)
    assert np.isfinite(got[:-1]).all() and np.count_nonzero(~np.isfinite(got[-1])) == (2 if bad == "inf-inf" else 1)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
@pytest.mark.parametrize("case", AVG_CASES)
def test_avg_pool_forward(path, case, dtype):
    """AvgPool2d's forward on the same geometries (its kernel: window sums over the divisors)."""
    torch = pytest.importorskip("torch")
    shape, kernel, stride, padding, ceil, include_pad, divisor = case
    x = random_array(np.random.default_rng(6), shape, dtype)
    got = aclnn_py.avg_pool2d(x, kernel, stride, padding, ceil, include_pad, divisor, backend="numpy")
    expected = torch.nn.functional.avg_pool2d(torch.from_numpy(x.astype(np.float32)), kernel, stride, padding, ceil,
                                              include_pad, divisor).numpy()
    assert got.dtype == dtype
    assert_close(got, expected.astype(dtype), dtype)


def test_avg_pool_forward_keeps_non_finite_values_in_their_windows(path):
    x = np.zeros((1, 1, 4, 4), np.float32)
    x[0, 0, 0, 0] = np.inf
    got = aclnn_py.avg_pool2d(x, [2, 2], [2, 2], [0, 0], backend="numpy")
    assert got[0, 0, 0, 0] == np.inf and np.count_nonzero(got) == 1 and not np.isnan(got).any()


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
@pytest.mark.parametrize("shape, size", [((1, 1, 4, 4), [2, 2]), ((2, 3, 7, 5), [3, 4]), ((3, 6, 6), [4, 1])])
def test_adaptive_avg_pool_forward(path, shape, size, dtype):
    """AdaptiveAvgPool2d's forward (its kernel: the separable window means), against PyTorch."""
    torch = pytest.importorskip("torch")
    x = random_array(np.random.default_rng(10), shape, dtype)
    got = aclnn_py.adaptive_avg_pool2d(x, size, backend="numpy")
    expected = torch.nn.functional.adaptive_avg_pool2d(torch.from_numpy(x.astype(np.float32)), size).numpy()
    assert got.dtype == dtype
    assert_close(got, expected.astype(dtype), dtype)


@pytest.mark.parametrize("busy", [False, True])
def test_a_product_blas_may_thread_runs_under_the_backends_thread_rule(monkeypatch, busy):
    """A matrix product above OpenBLAS's threading threshold (here 2048 planes of 6x6 -> 4x4,
    ~1.2 M multiply-adds) runs under ``blas.on_caller``: one BLAS thread while the machine is
    busy. The result is the loop reference's either way; a product below it does not ask."""
    from aclnn_py._numpy import blas, workers

    entered = []
    original = blas.on_caller

    def counted():
        entered.append(workers.machine_busy())
        return original()

    monkeypatch.setattr(blas, "on_caller", counted)
    monkeypatch.setattr(workers, "machine_busy", lambda: busy)
    monkeypatch.setattr(_small, "_MAX_WORK", 1 << 24)
    _plans.forget_plans()
    rng = np.random.default_rng(3)
    for planes, asks in ((2048, True), (4, False)):
        entered.clear()
        self = np.zeros((planes, 4, 4), np.float32)
        grad = random_array(rng, (planes, 6, 6), np.float32)
        got = aclnn_py.reflection_pad2d_backward(grad, self, [1, 1, 1, 1], backend="numpy")
        assert_close(got, reflection_reference(grad, self, [1, 1, 1, 1]), np.dtype(np.float32))
        assert entered == ([busy] if asks else [])
    _plans.forget_plans()
