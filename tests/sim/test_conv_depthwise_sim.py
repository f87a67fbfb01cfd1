"""The simulator's depthwise path of ConvolutionBackward (src/ops/convolution_backward.c,
depthwise_channels: one channel in each group on both sides, finite data, zero-padded planes):
every output mask against the slow float64 reference, with strides, dilations, asymmetric
padding, 1-D to 3-D, transposed; inf/NaN as in the exact direct passes (a padding zero is no
term, so an inf tap stays inf); sizes that split the channels over the worker threads against
PyTorch CPU."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import aclnn_py
from helpers import assert_close, random_array
from reference.convolution_backward import convolution_backward as reference

torch = pytest.importorskip("torch")

# (N, C, input size, kernel, stride, padding, dilation, transposed)
CASES = {
    "2d 3x3 same": (2, 4, (7, 6), (3, 3), (1, 1), (1, 1), (1, 1), False),
    "2d 3x3 stride 2 (last column unread)": (2, 3, (9, 8), (3, 3), (2, 2), (1, 1), (1, 1), False),
    "2d stride (2, 3) dilated": (2, 3, (11, 13), (3, 3), (2, 3), (2, 1), (2, 2), False),
    "2d 4-element padding": (1, 3, (7, 6), (3, 3), (1, 1), (0, 2, 1, 0), (1, 1), False),
    "2d 5x5 dilated wide padding": (2, 2, (6, 7), (5, 5), (1, 1), (5, 4), (2, 2), False),
    "2d even kernel, no padding": (2, 2, (6, 5), (2, 2), (1, 1), (0, 0), (1, 1), False),
    "2d one column": (2, 3, (5, 1), (3, 1), (1, 1), (1, 0), (1, 1), False),
    "2d rows of 21 (blocks of 8 and a tail)": (2, 3, (5, 21), (3, 3), (1, 1), (1, 1), (1, 1), False),
    "1d same": (2, 3, (9,), (3,), (1,), (1,), (1,), False),
    "1d stride 3 dilation 2": (2, 2, (17,), (3,), (3,), (2,), (2,), False),
    "3d same": (2, 2, (5, 6, 7), (3, 3, 3), (1, 1, 1), (1, 1, 1), (1, 1, 1), False),
    "3d strided dilated": (1, 3, (6, 7, 5), (2, 3, 3), (2, 1, 2), (0, 1, 1), (1, 2, 1), False),
    "2d transposed same": (2, 4, (5, 6), (3, 3), (1, 1), (1, 1), (1, 1), True),
    "2d transposed stride 2": (2, 3, (4, 5), (3, 3), (2, 2), (1, 1), (1, 1), True),
    "2d transposed rows of 19": (2, 3, (4, 19), (3, 3), (1, 1), (1, 1), (1, 1), True),
    "1d transposed stride 2 dilated": (2, 3, (6,), (3,), (2,), (0,), (2,), True),
    "3d transposed": (1, 2, (3, 4, 5), (3, 3, 3), (2, 1, 2), (1, 1, 1), (1, 1, 1), True),
}

MASKS = [m for m in itertools.product([False, True], repeat=3) if any(m[:2])]


def _sides(padding, spatial):
    padding = list(padding)
    if len(padding) == spatial:
        return padding, padding
    return [padding[0], padding[2]], [padding[1], padding[3]]


def _arrays(rng, n, c, size, kernel, stride, padding, dilation, transposed, dtype=np.float32):
    lo, hi = _sides(padding, len(size))
    if transposed:
        out = [(i - 1) * s - a - b + d * (k - 1) + 1 for i, s, a, b, d, k in zip(size, stride, lo, hi, dilation, kernel)]
    else:
        out = [(i + a + b - d * (k - 1) - 1) // s + 1 for i, s, a, b, d, k in zip(size, stride, lo, hi, dilation, kernel)]
    return (random_array(rng, (n, c, *out), dtype), random_array(rng, (n, c, *size), dtype),
            random_array(rng, (c, 1, *kernel), dtype))


def _run(case, mask, arrays):
    n, c, size, kernel, stride, padding, dilation, transposed = CASES[case]
    go, x, w = arrays
    return aclnn_py.convolution_backward(go, x, w, [c], list(stride), list(padding), list(dilation), transposed,
                                         [0] * len(size), c, list(mask), backend="sim")


def _check(case, mask, arrays, dtype=np.float32):
    n, c, size, kernel, stride, padding, dilation, transposed = CASES[case]
    result = _run(case, mask, arrays)
    expected = reference(*arrays, stride, padding, dilation, transposed, c)
    for wanted, got, want, like in zip(mask, result, expected, arrays[1:] + (np.zeros(c),)):
        if not wanted:
            assert got is None
            continue
        assert got.dtype == dtype and got.shape == like.shape
        assert_close(got, want, dtype)


@pytest.mark.parametrize("mask", MASKS, ids=str)
@pytest.mark.parametrize("case", list(CASES))
def test_matches_reference(case, mask):
    _check(case, mask, _arrays(np.random.default_rng(0), *CASES[case]))


@pytest.mark.parametrize("case", ["2d 3x3 same", "2d transposed stride 2"])
def test_float16(case):
    _check(case, (True, True, True), _arrays(np.random.default_rng(1), *CASES[case], dtype=np.float16), np.float16)


@pytest.mark.parametrize("case", ["2d 3x3 same", "2d stride (2, 3) dilated", "2d transposed stride 2", "3d same"])
@pytest.mark.parametrize("where", ["weight", "gradOutput", "input"])
@pytest.mark.parametrize("bad", [np.inf, np.nan])
def test_non_finite_values_as_exact_terms(case, where, bad):
    """A tap that reads padding adds no term: an inf weight makes the gradInput next to the
    border inf, not inf * 0 = NaN (and an inf at a border position of gradOutput or input does
    not reach gradWeight's taps that only see padding there)."""
    go, x, w = _arrays(np.random.default_rng(2), *CASES[case])
    target = {"weight": w, "gradOutput": go, "input": x}[where]
    target[(1, 0) + (0,) * (target.ndim - 2)] = bad
    _check(case, (True, True, True), (go, x, w))


@pytest.mark.parametrize("stride, transposed", [(1, False), (2, False), (1, True)])
def test_split_over_threads_matches_torch(stride, transposed):
    """Enough channels and work for every worker thread (kernels/parallel.h: 2^22 operations)."""
    rng = np.random.default_rng(3)
    n, c, size = 2, 64, (64, 64)
    case = (n, c, size, (3, 3), (stride,) * 2, (1, 1), (1, 1), transposed)
    go, x, w = _arrays(rng, *case)
    result = aclnn_py.convolution_backward(go, x, w, [c], [stride] * 2, [1, 1], [1, 1], transposed, [0, 0], c,
                                           [True, True, True], backend="sim")
    expected = torch.ops.aten.convolution_backward(torch.from_numpy(go), torch.from_numpy(x), torch.from_numpy(w),
                                                   [c], [stride] * 2, [1, 1], [1, 1], transposed, [0, 0], c,
                                                   [True, True, True])
    for got, want in zip(result, expected):
        assert_close(got, want.numpy(), np.float32)


@pytest.mark.parametrize("groups", [1, 4])
@pytest.mark.parametrize("overlapped", ["gradOutput", "input"])
def test_grad_input_computed_in_place_over_an_input_it_overlaps(groups, overlapped):
    """A contiguous float32 gradInput is computed in the output itself; when it starts at the
    same device address as gradOutput or input, the kernel reads a copy of that input (the
    result is PyTorch's, not one computed from values it wrote)."""
    rng = np.random.default_rng(4)
    go = rng.standard_normal((2, 4, 6, 7)).astype(np.float32)
    x = rng.standard_normal((2, 4, 6, 7)).astype(np.float32)
    w = rng.standard_normal((4, 4 // groups, 3, 3)).astype(np.float32)
    expected = torch.ops.aten.convolution_backward(torch.from_numpy(go), torch.from_numpy(x), torch.from_numpy(w),
                                                   [4], [1, 1], [1, 1], [1, 1], False, [0, 0], groups,
                                                   [True, True, True])
    shared = go if overlapped == "gradOutput" else x
    strides = [168, 42, 7, 1]
    with aclnn_py.Tensor.from_numpy(shared.ravel().copy(), backend="sim") as buffer:
        shared_view = buffer.view(shared.shape, strides)
        out_view = buffer.view(x.shape, strides)
        with shared_view, out_view:
            operands = (shared_view, x) if overlapped == "gradOutput" else (go, shared_view)
            _, gw, gb = aclnn_py.call("aclnnConvolutionBackward", *operands, w, [4], [1, 1], [1, 1], [1, 1], False,
                                      [0, 0], groups, [True, True, True], 0, out_view, np.zeros_like(w),
                                      np.zeros(4, np.float32), backend="sim")
            assert_close(out_view.numpy(), expected[0].numpy(), np.float32)
    assert_close(gw, expected[1].numpy(), np.float32)
    assert_close(gb, expected[2].numpy(), np.float32)


@pytest.mark.parametrize("transposed", [False, True])
def test_non_finite_value_in_large_arrays_takes_the_exact_passes(transposed):
    """A single inf in the corner of the last plane of arrays of millions of elements still sends
    the call to the exact passes, as on the numpy backend (the padded planes would give
    inf * 0 = NaN in gradWeight's taps that read padding there).  Normal: the inf in
    gradOutput; transposed: in input."""
    rng = np.random.default_rng(8)
    n, c, size = 4, 64, (128, 128)
    go, x, w = _arrays(rng, n, c, size, (3, 3), (1, 1), (1, 1), (1, 1), transposed)
    (x if transposed else go)[-1, -1, -1, -1] = np.inf
    results = [aclnn_py.convolution_backward(go, x, w, [c], [1, 1], [1, 1], [1, 1], transposed, [0, 0], c,
                                             [True, True, True], backend=backend) for backend in ("sim", "numpy")]
    assert np.isinf(results[1][1]).any()
    # gradWeight sums n * 128 * 128 terms, the table's float32 row ~1000: widened by twice the
    # square root of the ratio (the NaN/inf positions must match exactly whatever the tolerance)
    for got, want, scale in zip(*results, (1, 2 * np.sqrt(n * size[0] * size[1] / 1000), 1)):
        assert_close(got, want, np.float32, scale=scale)
