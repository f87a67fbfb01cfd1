"""max_pool2d_with_indices_backward (aclnnMaxPool2dWithIndicesBackward): against PyTorch's autograd
of max_pool2d and the slow reference, with the indices the forward operator writes."""

from __future__ import annotations

import numpy as np
import pytest

import aclnn_py
from helpers import assert_close, random_array
from reference.max_pool2d_with_indices import max_pool2d_with_indices_backward as reference

GEOMETRIES = [  # (shape, kernel, stride, padding, ceil)
    ((2, 3, 9, 10), [3, 2], [2, 1], [1, 1], True),
    ((2, 3, 8, 8), [2], [2], [0], False),
    ((3, 7, 6), [3, 3], [], [1, 0], False),
    ((1, 2, 11, 7), [3], [1], [1], True),            # heavy overlap: sums
]


@pytest.mark.parametrize("index_dtype", [np.int32, np.int8])
@pytest.mark.parametrize("shape, kernel, stride, padding, ceil", GEOMETRIES)
def test_matches_torch_autograd(backend, torch, shape, kernel, stride, padding, ceil, index_dtype):
    rng = np.random.default_rng(0)
    x = random_array(rng, shape, np.float32)
    out, idx = aclnn_py.max_pool2d_with_indices(x, kernel, stride, padding, [1], ceil, backend=backend)
    grad = random_array(rng, out.shape, np.float32)
    result = aclnn_py.max_pool2d_with_indices_backward(grad, x, idx.astype(index_dtype), kernel, stride, padding, [1],
                                                       ceil, backend=backend)
    tx = torch.from_numpy(x).requires_grad_(True)
    k = kernel * 2 if len(kernel) == 1 else kernel
    t_out = torch.nn.functional.max_pool2d(tx, k, stride or None, padding * 2 if len(padding) == 1 else padding, 1,
                                           ceil)
    (expected,) = torch.autograd.grad(t_out, tx, torch.from_numpy(grad))
    assert result.dtype == np.float32 and result.shape == shape
    assert_close(result, expected.numpy(), np.float32)
    assert_close(result, reference(grad, shape, idx), np.float32)


def test_non_contiguous_views(backend):
    rng = np.random.default_rng(1)
    x = random_array(rng, (2, 3, 7, 9), np.float32)
    _, idx = aclnn_py.max_pool2d_with_indices(x, 3, 2, 1, backend=backend)
    grad = random_array(rng, idx.shape, np.float32)
    expected = reference(grad, x.shape, idx)
    for g, i in ((np.ascontiguousarray(grad.swapaxes(-1, -2)).swapaxes(-1, -2), idx),
                 (grad, np.ascontiguousarray(idx[:, ::-1])[:, ::-1]),
                 (np.repeat(grad, 2, axis=-1)[..., ::2], np.repeat(idx, 2, axis=-2)[..., ::2, :])):
        assert_close(aclnn_py.max_pool2d_with_indices_backward(g, x[:, :, ::-1], i, 3, 2, 1, backend=backend),
                     expected, np.float32)


def test_empty_batch(backend):
    result = aclnn_py.max_pool2d_with_indices_backward(np.zeros((0, 2, 3, 3), np.float32),
                                                       np.zeros((0, 2, 6, 6), np.float32),
                                                       np.zeros((0, 2, 3, 3), np.int32), 2, 2, 0, backend=backend)
    assert result.shape == (0, 2, 6, 6)


@pytest.mark.parametrize("value", [-1, 36, 2**31 - 1])
def test_index_out_of_range_is_a_device_fault(backend, value):
    idx = np.zeros((2, 2, 3, 3), np.int32)
    idx[1, 0, 2, 1] = value
    with pytest.raises(aclnn_py.AclnnError) as caught:
        aclnn_py.max_pool2d_with_indices_backward(np.ones((2, 2, 3, 3), np.float32), np.zeros((2, 2, 6, 6), np.float32),
                                                  idx, 2, 2, 0, backend=backend)
    assert caught.value.status == 507015 and caught.value.api == "aclrtSynchronizeStream"
    assert f"indices[1, 0, 2, 1] = {value} is outside [0, 36)" in caught.value.message


def test_call_with_cann_names(backend):
    rng = np.random.default_rng(2)
    x = random_array(rng, (1, 2, 4, 4), np.float32)
    _, idx = aclnn_py.max_pool2d_with_indices(x, 2, 2, 0, backend=backend)
    grad = random_array(rng, idx.shape, np.float32)
    out = np.zeros(x.shape, np.float32)
    aclnn_py.call("aclnnMaxPool2dWithIndicesBackward", grad, x, idx, [2, 2], [2, 2], [0, 0], [1, 1], False, out,
                  backend=backend)
    assert_close(out, reference(grad, x.shape, idx), np.float32)


@pytest.mark.parametrize("split", [False, True])
def test_numpy_blocks_and_split_parts(torch, monkeypatch, split):
    """The numpy kernel's blocks of planes and its parts on worker threads give the reference's
    sums, and a bad index in a later block is found before anything is returned."""
    import importlib

    from aclnn_py._numpy import workers

    module = importlib.import_module("aclnn_py.ops.max_pool2d_with_indices_backward")

    monkeypatch.setattr(module, "_BLOCK_INDICES", 20)  # (5 planes of 4 gradients a block)
    monkeypatch.setattr(module, "MIN_PARALLEL_ELEMENTS", 4 if split else 1 << 30)
    monkeypatch.setattr(workers, "machine_busy", lambda: False)
    rng = np.random.default_rng(3)
    x = random_array(rng, (4, 9, 5, 5), np.float32)
    out, idx = aclnn_py.max_pool2d_with_indices(x, 3, 2, 1, backend="numpy")
    grad = random_array(rng, out.shape, np.float32)
    result = aclnn_py.max_pool2d_with_indices_backward(grad, x, idx, 3, 2, 1, backend="numpy")
    assert_close(result, reference(grad, x.shape, idx), np.float32)
    idx[3, 8, 1, 0] = 25
    with pytest.raises(aclnn_py.AclnnError) as caught:
        aclnn_py.max_pool2d_with_indices_backward(grad, x, idx, 3, 2, 1, backend="numpy")
    assert "indices[3, 8, 1, 0] = 25 is outside [0, 25)" in caught.value.message
