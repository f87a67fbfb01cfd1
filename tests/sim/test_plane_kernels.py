"""The simulator's memory-bound kernels (avg_pool2d, reflection_pad2d, max_unpool2d and
im2col backward), which compute one (H, W) plane at a time on several threads and write their
output in place: inputs large enough to be split over the threads, outputs that are float16
or strided (converted on the way out), and outputs overlapping their input in one device
buffer (the input must be read as it was before the call).  PyTorch CPU is the oracle."""

from __future__ import annotations

import numpy as np
import pytest

import aclnn_py
from aclnn_py import Tensor

from helpers import assert_close

torch = pytest.importorskip("torch")
F = torch.nn.functional

AVG = "aclnnAvgPool2dBackward"
PAD = "aclnnReflectionPad2dBackward"
UNPOOL = "aclnnMaxUnpool2dBackward"
FOLD = "aclnnIm2colBackward"


def _t(a: np.ndarray) -> "torch.Tensor":
    return torch.from_numpy(np.ascontiguousarray(a, dtype=np.float32))


def avg_reference(go, x_shape, k, s, p, ceil, include_pad):
    return torch.ops.aten.avg_pool2d_backward(_t(go), torch.zeros(x_shape), k, s, p, ceil, include_pad,
                                              None).numpy()


def pad_reference(go, x_shape, padding):
    return torch.ops.aten.reflection_pad2d_backward(_t(go), torch.zeros(x_shape), padding).numpy()


def unpool_reference(go, indices, x_shape):
    flat = _t(go).flatten(-2)
    return flat.gather(-1, torch.from_numpy(indices).flatten(-2)).view(x_shape).numpy()


def fold_reference(go, size, k, d, p, s):
    return F.fold(_t(go), size, k, dilation=d, padding=p, stride=s).numpy()


def unpool_indices(rng, shape):
    """A 2x2/2 max pool's indices into the (2h, 2w) plane."""
    n, c, h, w = shape
    rows = 2 * np.arange(h)[:, None] + rng.integers(0, 2, size=shape)
    cols = 2 * np.arange(w)[None, :] + rng.integers(0, 2, size=shape)
    return (rows * 2 * w + cols).astype(np.int64)


# Enough planes and elements for several worker threads (ACLSIM_PARALLEL_MIN_WORK = 2^22 element
# operations in kernels/parallel.h: 256 planes of 128 x 128).
LARGE = (2, 128, 128, 128)


@pytest.mark.parametrize("case", ["k3s2p1", "k2s2", "k3s2p1-ceil-exclude-pad", "k5s1p2"])
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_avg_pool_large(case, dtype):
    k, s, p, ceil, include_pad = {"k3s2p1": (3, 2, 1, False, True), "k2s2": (2, 2, 0, False, True),
                                  "k3s2p1-ceil-exclude-pad": (3, 2, 1, True, False),
                                  "k5s1p2": (5, 1, 2, False, False)}[case]
    rng = np.random.default_rng(1)
    x = np.zeros(LARGE, dtype)
    pooled = F.avg_pool2d(torch.zeros(LARGE), k, s, p, ceil, include_pad).shape[-2:]
    go = rng.standard_normal((*LARGE[:2], *pooled)).astype(dtype)
    result = aclnn_py.avg_pool2d_backward(go, x, k, s, p, ceil, include_pad, None, backend="sim")
    assert_close(np.asarray(result), avg_reference(go, LARGE, k, s, p, ceil, include_pad), dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_reflection_pad_large(dtype):
    rng = np.random.default_rng(2)
    padding = [3, 1, 2, 4]
    go = rng.standard_normal((*LARGE[:2], LARGE[2] + 6, LARGE[3] + 4)).astype(dtype)
    result = aclnn_py.reflection_pad2d_backward(go, np.zeros(LARGE, dtype), padding, backend="sim")
    assert_close(np.asarray(result), pad_reference(go, LARGE, padding), dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int32])
def test_max_unpool_large(dtype):
    rng = np.random.default_rng(3)
    indices = unpool_indices(rng, LARGE)
    go = (rng.standard_normal((*LARGE[:2], 2 * LARGE[2], 2 * LARGE[3])) * 10).astype(dtype)
    result = aclnn_py.max_unpool2d_backward(go, np.zeros(LARGE, dtype), indices, [2 * LARGE[2], 2 * LARGE[3]],
                                            backend="sim")
    assert_close(np.asarray(result), unpool_reference(go, indices, LARGE).astype(dtype), dtype)


@pytest.mark.parametrize("k, d, p, s", [(3, 1, 1, 1), (3, 2, 1, 2), (4, 1, 0, 4)], ids=["k3", "k3d2s2", "k4s4"])
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_fold_large(k, d, p, s, dtype):
    rng = np.random.default_rng(4)
    n, c, h, w = LARGE
    blocks = [(size + 2 * p - d * (k - 1) - 1) // s + 1 for size in (h, w)]
    go = rng.standard_normal((n, c * k * k, blocks[0] * blocks[1])).astype(dtype)
    result = aclnn_py.im2col_backward(go, [h, w], [k, k], [d, d], [p, p], [s, s], backend="sim")
    assert_close(np.asarray(result), fold_reference(go, (h, w), k, d, p, s), dtype)


def _transposed_out(shape):
    """An empty float32 device tensor of `shape` (N, C, H, W) whose H and W strides are swapped."""
    n, c, h, w = shape
    base = Tensor.empty((n, c, w, h), np.float32, backend="sim")
    return base, base.view(shape, [c * h * w, h * w, 1, h])


@pytest.mark.parametrize("op", [AVG, PAD, UNPOOL, FOLD])
def test_strided_output(op):
    """An output whose rows are not contiguous is written element by element, converted."""
    rng = np.random.default_rng(5)
    shape = (2, 3, 12, 10)
    x = np.zeros(shape, np.float32)
    if op == AVG:
        go = rng.standard_normal((2, 3, 6, 5)).astype(np.float32)
        args, expected = (go, x, [3, 3], [2, 2], [1, 1], False, True, 0, 0), avg_reference(go, shape, 3, 2, 1,
                                                                                           False, True)
    elif op == PAD:
        go = rng.standard_normal((2, 3, 15, 12)).astype(np.float32)
        args, expected = (go, x, [1, 1, 2, 1]), pad_reference(go, shape, [1, 1, 2, 1])
    elif op == UNPOOL:
        indices = unpool_indices(rng, shape)
        go = rng.standard_normal((2, 3, 24, 20)).astype(np.float32)
        args, expected = (go, x, indices, [24, 20]), unpool_reference(go, indices, shape)
    else:
        go = rng.standard_normal((2, 3 * 9, 12 * 10)).astype(np.float32)
        args, expected = (go, [12, 10], [3, 3], [1, 1], [1, 1], [1, 1]), fold_reference(go, (12, 10), 3, 1, 1, 1)
    base, out = _transposed_out(shape)
    with base, out:
        aclnn_py.call(op, *args, out, backend="sim")
        assert_close(out.numpy(), expected, np.float32)


@pytest.mark.parametrize("op", [AVG, PAD, UNPOOL, FOLD])
def test_output_overlapping_its_input(op):
    """gradOutput and the output start at the same device address: the result is computed from
    gradOutput as it was before the call (the kernel reads a copy), not from values it wrote."""
    rng = np.random.default_rng(6)
    if op == AVG:
        go_shape, out_shape = (1, 3, 4, 4), (1, 3, 8, 8)
    elif op == PAD:
        go_shape, out_shape = (1, 3, 7, 7), (1, 3, 5, 5)
    elif op == UNPOOL:
        go_shape, out_shape = (1, 3, 8, 8), (1, 3, 4, 4)
    else:
        go_shape, out_shape = (1, 3 * 4, 16), (1, 3, 8, 8)
    go = rng.standard_normal(go_shape).astype(np.float32)
    size = max(go.size, int(np.prod(out_shape)))
    storage = np.zeros(size, np.float32)
    storage[:go.size] = go.ravel()
    if op == AVG:
        args, expected = (np.zeros(out_shape, np.float32), [2, 2], [2, 2], [0, 0], False, True, 0, 0), \
            avg_reference(go, out_shape, 2, 2, 0, False, True)
    elif op == PAD:
        args, expected = (np.zeros(out_shape, np.float32), [1, 1, 1, 1]), pad_reference(go, out_shape, [1, 1, 1, 1])
    elif op == UNPOOL:
        # Any position of the plane (not a pool's): later rows read what earlier rows overwrite.
        indices = rng.integers(0, 64, size=out_shape).astype(np.int64)
        args, expected = (np.zeros(out_shape, np.float32), indices, [8, 8]), unpool_reference(go, indices, out_shape)
    else:
        args, expected = ([8, 8], [2, 2], [1, 1], [0, 0], [2, 2]), fold_reference(go, (8, 8), 2, 1, 0, 2)
    with Tensor.from_numpy(storage, backend="sim") as buffer:
        go_view = buffer.view(go_shape, [int(np.prod(go_shape[i + 1:])) for i in range(len(go_shape))])
        out_view = buffer.view(out_shape, [int(np.prod(out_shape[i + 1:])) for i in range(len(out_shape))])
        with go_view, out_view:
            aclnn_py.call(op, go_view, *args, out_view, backend="sim")
            assert_close(out_view.numpy(), expected, np.float32)


def test_convolution_reads_views_in_place_or_converted():
    """Contiguous float32 operands are read where they are (an offset into a larger buffer
    included); a strided one is converted first: both give PyTorch's gradients."""
    rng = np.random.default_rng(7)
    x = rng.standard_normal((2, 4, 9, 8)).astype(np.float32)
    w = rng.standard_normal((6, 4, 3, 3)).astype(np.float32)
    g = rng.standard_normal((2, 6, 9, 8)).astype(np.float32)
    expected = torch.ops.aten.convolution_backward(_t(g), _t(x), _t(w), [6], [1, 1], [1, 1], [1, 1], False, [0, 0],
                                                   1, [True, True, True])
    padded = np.concatenate([np.full(5, np.nan, np.float32), x.ravel()])
    with Tensor.from_numpy(padded, backend="sim") as x_buffer, \
            Tensor.from_numpy(np.ascontiguousarray(g.transpose(0, 1, 3, 2)), backend="sim") as g_buffer:
        x_view = x_buffer.view(x.shape, [288, 72, 8, 1], offset=5)
        g_view = g_buffer.view(g.shape, [432, 72, 1, 9])      # rows not contiguous
        with x_view, g_view:
            results = aclnn_py.convolution_backward(g_view, x_view, w, [6], [1, 1], [1, 1], [1, 1], False, [0, 0], 1,
                                                    [True, True, True], backend="sim")
            for result, reference in zip(results, expected):
                assert_close(np.asarray(result), reference.numpy(), np.float32)
