"""batch_norm_backward (aclnnBatchNormBackward): values against PyTorch for every documented dtype,
training and eval, outputMask, A2/A3's saveInvstd (the variance), views, empty input, and a round
trip with batch_norm's saved statistics."""

from __future__ import annotations

import numpy as np
import pytest

import aclnn_py
from aclnn_py.ops.batch_norm_backward import DTYPES
from helpers import assert_close, random_array


def _torch_grads(torch, g, x, w, rm, rv, sm, sv, training, eps, mask):
    t = lambda a: None if a is None else torch.from_numpy(a.astype(np.float32))  # noqa: E731
    invstd = None if sv is None else 1 / torch.sqrt(t(sv) + eps)  # A2/A3: saveInvstd is the variance
    return torch.ops.aten.native_batch_norm_backward(t(g), t(x), t(w), t(rm), t(rv), t(sm), invstd, training, eps,
                                                     mask)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("shape", [(4, 3, 5, 6), (6, 5), (2, 4, 3, 2, 2), (2, 3, 17, 16)],
                         ids=str)  # (the last: channels longer than reduce.SHORT_CHANNEL)
def test_matches_torch(backend, torch, dtype, training, shape):
    rng = np.random.default_rng(1)
    c = shape[1]
    x, g = random_array(rng, shape, dtype), random_array(rng, shape, dtype)
    dims = (0, *range(2, len(shape)))
    sm, sv = x.astype(np.float32).mean(dims).astype(dtype), x.astype(np.float32).var(dims).astype(dtype)
    w, rm = random_array(rng, (c,), dtype), random_array(rng, (c,), dtype)
    rv = (np.abs(random_array(rng, (c,), np.float32)) + 0.5).astype(dtype)
    got = aclnn_py.batch_norm_backward(g, x, w, rm, rv, sm, sv, training, 1e-3, [True, True, True], backend=backend)
    ref = _torch_grads(torch, g, x, w, rm, rv, sm, sv, training, 1e-3, [True, True, True])
    n = x.size // c
    for ours, theirs, scale in zip(got, ref, (8, n, n)):
        assert ours.dtype == dtype
        assert_close(ours, theirs.numpy().astype(dtype), dtype, scale=scale)


@pytest.mark.parametrize("mask", [[True, False, False], [False, True, False], [False, False, True],
                                  [False, False, False]], ids=str)
def test_output_mask_and_missing_optionals(backend, torch, mask):
    rng = np.random.default_rng(2)
    x, g = random_array(rng, (3, 4, 5), np.float32), random_array(rng, (3, 4, 5), np.float32)
    got = aclnn_py.batch_norm_backward(g, x, None, None, None, None, None, True, 1e-5, mask, backend=backend)
    ref = _torch_grads(torch, g, x, None, None, None, np.zeros(4, np.float32), np.ones(4, np.float32), True, 1e-5,
                       [True, True, True])
    for ours, theirs, keep in zip(got, ref, mask):
        if keep:
            assert_close(ours, theirs.numpy(), np.dtype(np.float32), scale=15)
        else:
            assert ours is None


def test_views_and_round_trip_with_batch_norm(backend, torch):
    rng = np.random.default_rng(3)
    x = random_array(rng, (6, 3, 4, 2), np.float32)
    _, _, _, mean, var = aclnn_py.batch_norm(x, None, None, None, None, True, 0.1, 1e-5, backend=backend)
    g = random_array(rng, (2, 4, 3, 6), np.float32).transpose(3, 2, 1, 0)  # a transposed view
    got = aclnn_py.batch_norm_backward(g, x, None, None, None, mean, var, True, 1e-5, [True, True, True],
                                       backend=backend)
    tx = torch.from_numpy(x).requires_grad_()
    tw, tb = torch.ones(3, requires_grad=True), torch.zeros(3, requires_grad=True)
    torch.nn.functional.batch_norm(tx, None, None, tw, tb, True, 0.1, 1e-5).backward(torch.from_numpy(g.copy()))
    for ours, theirs in zip(got, (tx.grad, tw.grad, tb.grad)):
        assert_close(ours, theirs.numpy(), np.dtype(np.float32), scale=50)


def test_empty_input_succeeds_before_the_mask(backend):
    x = np.zeros((0, 3, 2), np.float32)
    gi, gw, gb = aclnn_py.batch_norm_backward(x, x, None, None, None, None, None, True, 1e-5, [], backend=backend)
    assert gi.shape == (0, 3, 2)
    np.testing.assert_array_equal(gw, [0, 0, 0])
    np.testing.assert_array_equal(gb, [0, 0, 0])


@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("stats", [True, False], ids=["stats", "no-stats"])
@pytest.mark.parametrize("mask", [[True, True, True], [True, False, False], [False, True, True]], ids=str)
def test_short_channels_along_rows_give_the_bits_of_the_channel_parts(monkeypatch, training, stats, mask):
    """Channels up to ``reduce.SHORT_CHANNEL`` long take ``_along_rows`` (passes along (N, C*L)
    rows): the same arithmetic on the same values as the parts over channels, so the same bits."""
    from aclnn_py._numpy import reduce
    from aclnn_py._numpy.plans import forget_plans
    rng = np.random.default_rng(4)
    x, g = random_array(rng, (4, 6, 3, 5), np.float32), random_array(rng, (4, 6, 3, 5), np.float32)
    w = random_array(rng, (6,), np.float32)
    rm, sm = random_array(rng, (6,), np.float32), random_array(rng, (6,), np.float32)
    rv, sv = np.abs(random_array(rng, (6,), np.float32)) + 0.5, np.abs(random_array(rng, (6,), np.float32)) + 0.5
    optional = (w, rm, rv, sm, sv) if stats else (None,) * 5
    rows = aclnn_py.batch_norm_backward(g, x, *optional, training, 1e-5, mask, backend="numpy")
    monkeypatch.setattr(reduce, "SHORT_CHANNEL", 0)
    forget_plans()
    parts = aclnn_py.batch_norm_backward(g, x, *optional, training, 1e-5, mask, backend="numpy")
    for a, b, keep in zip(rows, parts, mask):
        assert (a is None) == (b is None) == (not keep)
        if keep:
            np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("run", [None, 40000, 1000, 64],
                         ids=["whole", "runs of channels", "runs of rows", "one row a run"])
def test_channel_sums_are_float64_sums_rounded_once(backend, monkeypatch, run):
    """The channel sums in double (reduce.double_channel_sums, the simulator's double lanes): gradBias
    is the float64 sum of gradOut rounded to FLOAT, gradWeight within FLOAT's tolerance of the float64
    sum of gradOut * (x - saveMean) times invstd, where float accumulators over these 16 Ki elements
    end several ulps off."""
    from aclnn_py._numpy import reduce as _red
    if run is not None:  # (and the products' FLOAT sums over 3 images at a time, in runs as short)
        for name, value in (("DOUBLE_RUN", run), ("PRODUCT_RUN", run), ("PRODUCT_IMAGES", 3)):
            monkeypatch.setattr(_red, name, value)
    rng = np.random.default_rng(8)
    shape = (4, 6, 64, 64)
    g, x = rng.standard_normal(shape, dtype=np.float32), rng.standard_normal(shape, dtype=np.float32)
    c = shape[1]
    mean, var = x.mean(axis=(0, 2, 3)), x.var(axis=(0, 2, 3))
    _, grad_weight, grad_bias = aclnn_py.batch_norm_backward(g, x, np.ones(c, np.float32), None, None, mean, var,
                                                             True, 1e-5, [True, True, True], backend=backend)
    np.testing.assert_array_equal(grad_bias, g.astype(np.float64).sum(axis=(0, 2, 3)).astype(np.float32))
    products = (g * (x - mean[:, None, None])).astype(np.float64)  # (x - mean in FLOAT, as the kernels form it)
    invstd = np.float32(1) / np.sqrt(var + np.float32(1e-5))
    expected = (products.sum(axis=(0, 2, 3)).astype(np.float32) * invstd).astype(np.float32)
    assert_close(grad_weight, expected, np.float32)
