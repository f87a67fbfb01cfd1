"""upsample_nearest2d_backward (aclnnUpsampleNearest2dBackward) against PyTorch's
aten.upsample_nearest2d_backward, with and without scales, every documented dtype."""

from __future__ import annotations

import numpy as np
import pytest

import aclnn_py
from aclnn_py import bfloat16
from aclnn_py._numpy import pooling as _pooling
from helpers import assert_close, random_array

DTYPES = [np.dtype(np.float32), np.dtype(np.float16), np.dtype(bfloat16)]
CASES = [((2, 3, 5, 6), (7, 13), (0.0, 0.0)), ((1, 2, 8, 8), (4, 3), (0.0, 0.0)), ((1, 1, 3, 3), (9, 10), (0.0, 0.0)),
         ((1, 1, 4, 5), (8, 10), (2.0, 2.0)), ((1, 1, 4, 5), (9, 11), (2.3, 2.2)), ((2, 2, 13, 13), (26, 26), (0.0, 0.0)),
         ((2, 3, 4, 5), (4, 15), (0.0, 0.0)), ((1, 2, 3, 4), (9, 4), (0.0, 0.0))]  # (whole blocks: 1x3, 3x1)


def _torch(torch, grad, output_size, input_size, scales):
    return torch.ops.aten.upsample_nearest2d_backward(torch.from_numpy(grad.astype(np.float32)), list(output_size),
                                                      list(input_size), scales[0] or None, scales[1] or None).numpy()


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("input_size, output_size, scales", CASES)
def test_matches_torch(backend, torch, dtype, input_size, output_size, scales):
    grad = random_array(np.random.default_rng(0), input_size[:2] + output_size, dtype)
    result = aclnn_py.upsample_nearest2d_backward(grad, list(output_size), list(input_size), *scales, backend=backend)
    assert result.dtype == dtype and result.shape == input_size
    assert_close(result, _torch(torch, grad, output_size, input_size, scales).astype(dtype), dtype)


@pytest.mark.parametrize("input_size, output_size, scales", CASES)
def test_numpy_blocks_kernel_on_small_gradients_matches_torch(torch, input_size, output_size, scales, monkeypatch):
    """The numpy backend's kernel for whole blocks per cell (``pooling._repeated_grad``), which
    small gradients do not take by default, forced on the same cases."""
    monkeypatch.setattr(_pooling, "REPEATED_GRAD_ELEMENTS", 0)
    grad = random_array(np.random.default_rng(0), input_size[:2] + output_size, np.dtype(np.float32))
    result = aclnn_py.upsample_nearest2d_backward(grad, list(output_size), list(input_size), *scales, backend="numpy")
    assert_close(result, _torch(torch, grad, output_size, input_size, scales), np.dtype(np.float32))


def test_is_the_gradient_of_the_forward(backend, torch):
    x = torch.from_numpy(random_array(np.random.default_rng(1), (2, 3, 5, 7), np.float32)).requires_grad_(True)
    y = torch.nn.functional.interpolate(x, size=(11, 9), mode="nearest")
    grad = random_array(np.random.default_rng(2), tuple(y.shape), np.float32)
    (expected,) = torch.autograd.grad(y, x, torch.from_numpy(grad))
    assert_close(aclnn_py.upsample_nearest2d_backward(grad, [11, 9], [2, 3, 5, 7], backend=backend), expected.numpy(),
                 np.float32)


def test_non_contiguous_views(backend, torch):
    grad = random_array(np.random.default_rng(3), (2, 3, 10, 12), np.float32)
    expected = _torch(torch, grad, (10, 12), (2, 3, 5, 6), (0.0, 0.0))
    for view in (np.ascontiguousarray(grad.swapaxes(-1, -2)).swapaxes(-1, -2),
                 np.ascontiguousarray(grad[:, ::-1])[:, ::-1], np.repeat(grad, 2, axis=-1)[..., ::2]):
        assert_close(aclnn_py.upsample_nearest2d_backward(view, [10, 12], [2, 3, 5, 6], backend=backend), expected,
                     np.float32)


def test_empty_batch(backend):
    result = aclnn_py.upsample_nearest2d_backward(np.zeros((0, 3, 8, 8), np.float32), [8, 8], [0, 3, 4, 4],
                                                  backend=backend)
    assert result.shape == (0, 3, 4, 4)


def test_call_with_cann_names(backend, torch):
    grad = random_array(np.random.default_rng(4), (1, 2, 6, 8), np.float32)
    out = np.zeros((1, 2, 3, 4), np.float32)
    aclnn_py.call("aclnnUpsampleNearest2dBackward", grad, [6, 8], [1, 2, 3, 4], 0.0, 0.0, out, backend=backend)
    assert_close(out, _torch(torch, grad, (6, 8), (1, 2, 3, 4), (0.0, 0.0)), np.float32)


def test_numpy_plan_is_kept_across_calls_with_float_scales(monkeypatch):
    """scalesH/scalesW are floats: the plan is keyed by their values (NumpyOp's floats), so a
    repeated call does not check again; other values get a plan of their own."""
    import importlib

    from aclnn_py._numpy import plans

    module = importlib.import_module("aclnn_py.ops.upsample_nearest2d_backward")
    prepared = []
    original = module._numpy.prepare
    monkeypatch.setattr(module._numpy, "prepare", lambda *a: prepared.append(a) or original(*a))
    plans.forget_plans()
    grad = np.ones((1, 1, 4, 4), np.float32)
    for _ in range(3):
        aclnn_py.upsample_nearest2d_backward(grad, [4, 4], [1, 1, 2, 2], 0.0, 0.0, backend="numpy")
    aclnn_py.upsample_nearest2d_backward(grad, [4, 4], [1, 1, 2, 2], 2.0, 2.0, backend="numpy")
    assert len(prepared) == 2
    plans.forget_plans()


@pytest.mark.parametrize("input_size, output_size", [((1, 2, 3, 1 << 20), (5, 2)), ((2, 1, 1 << 19, 2), (3, 7))])
def test_a_small_gradient_of_a_large_input(backend, torch, input_size, output_size):
    """A few gradient cells spread over a wide input: the numpy backend's index arrays have the
    gradient's length (they had the input's: an inputSize of 2^31 made ~40 GB of them, the
    process killed by the kernel, found by scripts/fuzz.py --seed 2912)."""
    grad = random_array(np.random.default_rng(1), input_size[:2] + output_size, np.dtype(np.float32))
    result = aclnn_py.upsample_nearest2d_backward(grad, list(output_size), list(input_size), backend=backend)
    assert result.shape == input_size
    assert_close(result, _torch(torch, grad, output_size, input_size, (0.0, 0.0)), np.dtype(np.float32))
