"""im2col_backward (aclnnIm2colBackward, col2im / F.fold): values, parameter forms, errors."""

from __future__ import annotations

import numpy as np
import pytest

import aclnn_py
from helpers import FLOAT_DTYPES, assert_close, random_array
from reference.im2col_backward import im2col_backward as reference
from aclnn_py._numpy import workers as _workers


def _blocks(size, kernel, dilation, padding, stride):
    return (size + 2 * padding - dilation * (kernel - 1) - 1) // stride + 1


def _columns(rng, batch, channels, input_size, kernel_size, dilation, padding, stride, dtype):
    """A random gradOutput that fits the parameters (unbatched when ``batch`` is None)."""
    length = 1
    for d in range(2):
        length *= _blocks(input_size[d], kernel_size[d], dilation[d], padding[d], stride[d])
    shape = (channels * kernel_size[0] * kernel_size[1], length)
    return random_array(rng, shape if batch is None else (batch,) + shape, dtype)


# (batch or None for unbatched, C, inputSize, kernelSize, dilation, padding, stride)
CASES = [
    (2, 2, (5, 6), (2, 2), (1, 1), (0, 0), (1, 1)),
    (None, 3, (7, 5), (3, 2), (2, 1), (1, 2), (2, 3)),
    (1, 2, (6, 6), (1, 1), (1, 1), (0, 0), (1, 1)),
    (2, 1, (4, 9), (2, 3), (1, 3), (2, 0), (3, 1)),
    (None, 2, (8, 7), (3, 3), (1, 1), (1, 1), (2, 2)),
    (3, 1, (7, 8), (1, 2), (1, 1), (0, 1), (3, 4)),    # stride > kernel: pixels no block covers
    (1, 2, (5, 5), (5, 5), (1, 1), (0, 0), (1, 1)),    # one block covering everything
    (2, 2, (6, 7), (2, 2), (3, 2), (3, 3), (1, 2)),    # padding wider than the kernel extent
    # kernel == stride, the patches tile the image (a ViT patch embedding): exactly, with a
    # remainder no patch covers, dilated 1-wide kernel, and large enough for the direct path.
    (2, 3, (8, 9), (2, 3), (1, 1), (0, 0), (2, 3)),
    (None, 2, (9, 11), (4, 3), (1, 1), (0, 0), (4, 3)),
    (1, 2, (7, 6), (1, 2), (3, 1), (0, 0), (1, 2)),
    (2, 3, (66, 48), (16, 16), (1, 1), (0, 0), (16, 16)),
]


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
@pytest.mark.parametrize("case", CASES)
def test_matches_reference(backend, case, dtype):
    batch, channels, *params = case
    rng = np.random.default_rng(0)
    grad_output = _columns(rng, batch, channels, *params, dtype)
    result = aclnn_py.im2col_backward(grad_output, *params, backend=backend)
    assert result.dtype == dtype
    expected_shape = (channels,) + params[0] if batch is None else (batch, channels) + params[0]
    assert result.shape == expected_shape
    assert_close(result, reference(grad_output, *params), dtype)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
@pytest.mark.parametrize("case", CASES)
def test_matches_torch_fold(backend, torch, case, dtype):
    batch, channels, input_size, kernel_size, dilation, padding, stride = case
    rng = np.random.default_rng(1)
    grad_output = _columns(rng, batch, channels, input_size, kernel_size, dilation, padding, stride, dtype)
    result = aclnn_py.im2col_backward(grad_output, input_size, kernel_size, dilation, padding, stride,
                                      backend=backend)
    # PyTorch computes half/bfloat16 fold in its own precision; the float32 result of the same
    # values is the exact-as-CANN oracle (CANN computes in float32 and rounds once).
    expected = torch.nn.functional.fold(torch.from_numpy(grad_output.astype(np.float32)), input_size,
                                        kernel_size, dilation=dilation, padding=padding, stride=stride)
    assert_close(result, expected.numpy(), dtype)


def test_conv_layer_shape_matches_torch(backend, torch):
    rng = np.random.default_rng(2)
    grad_output = random_array(rng, (2, 8 * 9, 14 * 14), np.float32)
    result = aclnn_py.im2col_backward(grad_output, [14, 14], [3, 3], [1, 1], [1, 1], [1, 1], backend=backend)
    expected = torch.nn.functional.fold(torch.from_numpy(grad_output), (14, 14), 3, padding=1)
    assert_close(result, expected.numpy(), np.float32)


@pytest.mark.parametrize("form", ["list", "tuple", "ndarray", "numpy ints"])
def test_int_array_forms(backend, form):
    rng = np.random.default_rng(3)
    params = [(5, 6), (2, 3), (1, 2), (1, 0), (2, 1)]
    grad_output = _columns(rng, 2, 2, *params, np.float32)
    convert = {"list": list, "tuple": tuple, "ndarray": lambda p: np.array(p, dtype=np.int64),
               "numpy ints": lambda p: [np.int32(v) for v in p]}[form]
    result = aclnn_py.im2col_backward(grad_output, *(convert(p) for p in params), backend=backend)
    assert_close(result, reference(grad_output, *params), np.float32)


def test_non_contiguous_and_negative_strides(backend):
    rng = np.random.default_rng(4)
    params = [(6, 5), (2, 2), (1, 1), (1, 0), (1, 1)]
    dense = _columns(rng, 3, 2, *params, np.float32)
    transposed = np.ascontiguousarray(dense.transpose(0, 2, 1)).transpose(0, 2, 1)
    strided = np.repeat(dense, 2, axis=0)[::2]
    reversed_ = np.ascontiguousarray(dense[::-1, :, ::-1])[::-1, :, ::-1]
    for view in (transposed, strided, reversed_):
        assert not view.flags.c_contiguous or view.strides != dense.strides
        before = view.copy()
        result = aclnn_py.im2col_backward(view, *params, backend=backend)
        assert_close(result, reference(dense, *params), np.float32)
        np.testing.assert_array_equal(view, before)
    flipped = dense[:, :, ::-1]
    assert_close(aclnn_py.im2col_backward(flipped, *params, backend=backend), reference(flipped, *params),
                 np.float32)


def test_result_is_a_new_array(backend):
    params = [(2, 2), (1, 1), (1, 1), (0, 0), (1, 1)]
    grad_output = np.arange(8, dtype=np.float32).reshape(2, 4)
    result = aclnn_py.im2col_backward(grad_output, *params, backend=backend)
    assert not np.shares_memory(result, grad_output)
    result[...] = -1
    np.testing.assert_array_equal(grad_output, np.arange(8, dtype=np.float32).reshape(2, 4))


@pytest.mark.parametrize("shape, input_size, kernel_size, stride, expected", [
    ((0, 8, 20), (5, 6), (2, 2), (1, 1), (0, 2, 5, 6)),       # no images
    ((2, 0, 20), (5, 6), (2, 2), (1, 1), (2, 0, 5, 6)),       # no channels
    ((2, 9, 0), (2, 2), (3, 3), (1, 1), (2, 1, 2, 2)),        # kernel larger than the image
    ((12, 0), (2, 2), (6, 1), (3, 1), (2, 2, 2)),             # C division truncates -1/3 to 0
])
def test_empty_grad_output_gives_zeros(backend, shape, input_size, kernel_size, stride, expected):
    for dtype in FLOAT_DTYPES:
        result = aclnn_py.im2col_backward(np.ones(shape, dtype), input_size, kernel_size, (1, 1), (0, 0), stride,
                                          backend=backend)
        assert result.shape == expected and result.dtype == dtype
        assert not np.any(result.astype(np.float32))


def test_huge_padding_with_huge_stride(backend):
    # Three blocks per column, at rows -1e9, 0 and 1e9: only the middle one is inside the image.
    params = [(4, 5), (1, 1), (1, 1), (10**9, 0), (10**9, 1)]
    grad_output = np.arange(3 * 5, dtype=np.float32).reshape(1, 15)
    result = aclnn_py.im2col_backward(grad_output, *params, backend=backend)
    assert_close(result, reference(grad_output, *params), np.float32)
    np.testing.assert_array_equal(result[0, 0], [5, 6, 7, 8, 9])


# --- errors ------------------------------------------------------------------------------
# The invalid inputs are in invalid_cases.py (one table for every operator, run on every backend
# by test_invalid_cases.py); here are the valid baselines those cases change.

VALID = dict(grad_output=np.zeros((2, 12, 20), np.float32), input_size=[5, 6], kernel_size=[2, 2],
             dilation=[1, 1], padding=[0, 0], stride=[1, 1])


def _call(backend, **changes):
    args = dict(VALID, **changes)
    return aclnn_py.im2col_backward(*args.values(), backend=backend)


def test_valid_baseline(backend):
    assert _call(backend).shape == (2, 3, 5, 6)


def test_float16_accumulates_in_float32(backend):
    # Three blocks at columns -2, -1, 0 all reach pixel (0, 0).  In float16, 2048 + 1 rounds
    # back to 2048 (twice); in float32 the sum is 2050, which float16 represents.
    grad_output = np.zeros((3, 3), np.float16)
    grad_output[0, 2], grad_output[1, 1], grad_output[2, 0] = 2048, 1, 1
    result = aclnn_py.im2col_backward(grad_output, [1, 1], [1, 3], [1, 1], [0, 2], [1, 1], backend=backend)
    assert result.dtype == np.float16
    assert result[0, 0, 0] == 2050


# Cases of each of the numpy kernel's ways (im2col_backward._method), each also taken by slices.
KERNEL_PATH_CASES = [
    (2, 3, (6, 7), (3, 3), (1, 1), (1, 1), (1, 1)),     # flat: a "same" convolution
    (1, 2, (5, 4), (3, 5), (2, 1), (0, 2), (1, 1)),     # flat: L1 == W, not L0 == H
    (2, 2, (4, 3), (3, 3), (2, 2), (2, 2), (1, 1)),     # flat: edge bands wider than half the image
    (1, 1, (1, 1), (1, 3), (1, 1), (0, 1), (1, 1)),     # flat
    (2, 2, (6, 6), (1, 1), (1, 1), (0, 0), (1, 1)),     # flat: no padding, no bands
    (1, 2, (8, 8), (3, 3), (1, 1), (1, 1), (2, 2)),     # phases: k3 s2 p1
    (2, 2, (9, 7), (3, 4), (1, 1), (1, 1), (2, 1)),     # phases, one stride 1
    (1, 2, (10, 9), (5, 3), (2, 1), (4, 1), (3, 2)),    # phases, dilated, a phase row without blocks
    (1, 2, (7, 9), (3, 3), (1, 1), (0, 0), (2, 2)),     # slices: a phase row is not a block row long
]


@pytest.fixture
def kernel_choices(monkeypatch):
    """Choose the numpy kernel's way (the small-matrix path off)."""
    import sys

    from aclnn_py._numpy import plans as _plans
    from aclnn_py._numpy import small as _small

    kernel = sys.modules["aclnn_py.ops.im2col_backward"]

    def choose(method):
        monkeypatch.setattr(_small, "MAX_MATRIX_ELEMENTS", 0)
        if method is not None:
            monkeypatch.setattr(kernel, "_method", lambda *args: method)
        _plans.forget_plans()

    yield choose
    _plans.forget_plans()


def _methods(case):
    """The ways the case may take: its own (None), slices always, flat where the pitches agree."""
    _, _, size, kernel, dilation, padding, stride = case
    same_pitch = stride == (1, 1) and _blocks(size[1], kernel[1], dilation[1], padding[1], 1) == size[1]
    return (None, "slices", "flat") if same_pitch else (None, "slices")


def test_kernel_path_cases_cover_every_way():
    import sys

    kernel = sys.modules["aclnn_py.ops.im2col_backward"]
    chosen = set()
    for _, _, size, kernel_size, dilation, padding, stride in KERNEL_PATH_CASES:
        grid = tuple(_blocks(size[d], kernel_size[d], dilation[d], padding[d], stride[d]) for d in range(2))
        chosen.add(kernel._method(size, kernel_size, dilation, padding, stride, grid))
    assert chosen == {"slices", "flat", "phases"}


@pytest.mark.parametrize("case, method", [(case, method) for case in KERNEL_PATH_CASES for method in _methods(case)])
def test_numpy_kernel_paths(kernel_choices, case, method):
    """Each way the numpy kernel adds blocks, by its own choice or forced, matches the reference."""
    batch, channels, *params = case
    kernel_choices(method)
    grad_output = _columns(np.random.default_rng(3), batch, channels, *params, np.float32)
    for _ in range(2):  # the plan's first call and a call reusing it
        result = aclnn_py.im2col_backward(grad_output, *params, backend="numpy")
        assert_close(result, reference(grad_output, *params), np.float32)


@pytest.mark.parametrize("case", KERNEL_PATH_CASES + [(3, 2, (8, 6), (2, 3), (1, 1), (0, 0), (2, 3))])  # + tiling
def test_numpy_planes_shared_among_threads(kernel_choices, monkeypatch, case):
    """Large calls share the planes among the worker threads: forced here down to one plane per
    part (each part's images written where the others' are not)."""

    batch, channels, *params = case
    kernel_choices(None)
    monkeypatch.setattr(_workers, "MIN_PARALLEL_ELEMENTS", 1)
    grad_output = _columns(np.random.default_rng(6), batch, channels, *params, np.float32)
    for _ in range(2):  # the plan's first call and a call reusing it
        result = aclnn_py.im2col_backward(grad_output, *params, backend="numpy")
        assert_close(result, reference(grad_output, *params), np.float32)
