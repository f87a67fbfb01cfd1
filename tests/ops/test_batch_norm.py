"""batch_norm (aclnnBatchNorm): values against PyTorch for every documented dtype, training and
eval, the running statistics updated in place (by the function and by ``call``), A2/A3's
saveInvstd (the biased variance), views, empty input and the n == 1 running-variance factor."""

from __future__ import annotations

import numpy as np
import pytest

import aclnn_py
from aclnn_py.ops.batch_norm import DTYPES
from helpers import assert_close, random_array


def _stats(rng, c, dtype):
    return (random_array(rng, (c,), dtype), random_array(rng, (c,), dtype), random_array(rng, (c,), dtype),
            (np.abs(random_array(rng, (c,), np.float32)) + 0.5).astype(dtype))


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shape", [(4, 3, 5, 6), (6, 5), (2, 4, 3, 2, 2), (2, 3, 2, 2, 1, 2),
                                   (2, 3, 17, 16)], ids=str)  # (channels longer than reduce.SHORT_CHANNEL)
def test_training_matches_torch(backend, torch, dtype, shape):
    rng = np.random.default_rng(1)
    x = random_array(rng, shape, dtype)
    w, b, rm, rv = _stats(rng, shape[1], dtype)
    rm0, rv0 = rm.copy(), rv.copy()
    _, _, out, save_mean, save_var = aclnn_py.batch_norm(x, w, b, rm, rv, True, 0.2, 1e-3, backend=backend)
    t = lambda a: torch.from_numpy(a.astype(np.float32))  # noqa: E731
    trm, trv = t(rm0), t(rv0)
    ref = torch.nn.functional.batch_norm(t(x), trm, trv, t(w), t(b), True, 0.2, 1e-3)
    dims = [0, *range(2, len(shape))]
    assert out.dtype == dtype and out.shape == shape and save_mean.dtype == dtype
    assert_close(out, ref.numpy().astype(dtype), dtype, scale=4)
    assert_close(save_mean, t(x).mean(dims).numpy().astype(dtype), dtype)
    assert_close(save_var, t(x).var(dims, unbiased=False).numpy().astype(dtype), dtype)  # A2/A3: the variance
    assert_close(rm, trm.numpy().astype(dtype), dtype)
    assert_close(rv, trv.numpy().astype(dtype), dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shape", [(3, 4, 5), (2, 4, 17, 16)], ids=str)  # (short and long channels: reduce.affine)
def test_eval_matches_torch_and_leaves_the_statistics(backend, torch, dtype, shape):
    rng = np.random.default_rng(2)
    x = random_array(rng, shape, dtype)
    w, b, rm, rv = _stats(rng, 4, dtype)
    rm0 = rm.copy()
    _, _, out, save_mean, save_var = aclnn_py.batch_norm(x, w, b, rm, rv, False, 0.1, 1e-5, backend=backend)
    t = lambda a: torch.from_numpy(a.astype(np.float32))  # noqa: E731
    ref = torch.nn.functional.batch_norm(t(x), t(rm), t(rv), t(w), t(b), False, 0.1, 1e-5)
    assert_close(out, ref.numpy().astype(dtype), dtype, scale=4)
    assert save_mean is None and save_var is None
    np.testing.assert_array_equal(rm, rm0)


@pytest.mark.parametrize("shape", [(6, 4), (2, 4, 17, 16)], ids=str)
def test_eval_with_inf_and_nan_gives_bninfers_values(backend, torch, shape):
    """Eval is CANN's BNInfer: ``x * m + (bias - m * runningMean)``, m = weight / sqrt(var + eps).
    Infs in x, weight and runningMean give its inf/NaN pattern (PyTorch CPU computes the same
    form), which ``(x - mean) * m + bias`` does not: an inf weight there gives inf where x and
    the mean share a sign, BNInfer NaN."""
    rng = np.random.default_rng(4)
    x = random_array(rng, shape, np.float32)
    w, b, rm, rv = _stats(rng, 4, np.float32)
    w[0], rm[1], rv[2] = np.inf, -np.inf, np.inf
    x[(1, 3) + (0,) * (len(shape) - 2)] = np.inf
    _, _, out, _, _ = aclnn_py.batch_norm(x, w, b, rm, rv, False, 0.1, 1e-5, backend=backend)
    ref = torch.nn.functional.batch_norm(*(torch.from_numpy(a) for a in (x, rm, rv, w, b)), False, 0.1, 1e-5).numpy()
    index = (None, slice(None)) + (None,) * (len(shape) - 2)  # (C,) along dim 1
    m = (w / np.sqrt(rv + np.float32(1e-5)))[index]
    with np.errstate(invalid="ignore"):
        formula = x * m + (b[index] - m * rm[index])
    for want in (ref, formula):
        assert np.array_equal(np.isnan(out), np.isnan(want)) and np.isnan(out).any()
        assert np.array_equal(np.isposinf(out), np.isposinf(want)) and np.isinf(out).any()
        assert np.array_equal(np.isneginf(out), np.isneginf(want))
    finite = np.isfinite(ref)
    assert_close(out[finite], ref[finite], np.dtype(np.float32))


def test_no_weight_bias_or_running_statistics(backend, torch):
    x = random_array(np.random.default_rng(3), (5, 3, 4), np.float32)
    *_, out, mean, var = aclnn_py.batch_norm(x, None, None, None, None, True, 0.1, 1e-5, backend=backend)
    ref = torch.nn.functional.batch_norm(torch.from_numpy(x), None, None, training=True, eps=1e-5)
    assert_close(out, ref.numpy(), np.dtype(np.float32))
    *_, out, _, _ = aclnn_py.batch_norm(x, None, None, None, None, False, 0.1, 1e-5, backend=backend)
    assert_close(out, x / np.sqrt(np.float32(1 + 1e-5)), np.dtype(np.float32))  # CANN: mean 0, var 1


def test_views_and_call_update_the_statistics(backend):
    rng = np.random.default_rng(4)
    x = random_array(rng, (6, 3, 4), np.float32)
    view = np.ascontiguousarray(x.transpose(2, 1, 0)).transpose(2, 1, 0)  # not C-contiguous
    stats = [np.zeros(3, np.float32), np.ones(3, np.float32)]
    expected = aclnn_py.batch_norm(x, None, None, *stats, True, 0.5, 1e-5, backend="numpy")[2:]
    stats2 = [np.zeros(3, np.float32), np.ones(3, np.float32)]
    got = aclnn_py.batch_norm(view, None, None, *stats2, True, 0.5, 1e-5, backend=backend)
    assert got[0] is stats2[0] and got[1] is stats2[1]
    got = got[2:]
    for e, g in zip(expected, got):
        assert_close(g, e, np.dtype(np.float32))
    stats3 = [np.zeros(3, np.float32), np.ones(3, np.float32)]
    out, mean, var = np.zeros_like(x), np.zeros(3, np.float32), np.zeros(3, np.float32)
    aclnn_py.call("aclnnBatchNorm", x, None, None, *stats3, True, 0.5, 1e-5, out, mean, var, backend=backend)
    for e, g in zip((*expected, *stats), (out, mean, var, *stats3)):
        assert_close(g, e, np.dtype(np.float32))
    for e, g in zip(stats, stats2):
        assert_close(g, e, np.dtype(np.float32))


def test_empty_input_fills_the_saved_statistics(backend):
    rm, rv, out, mean, var = aclnn_py.batch_norm(np.zeros((0, 3, 2), np.float32), None, None, None, None, True, 0.1, 1e-5,
                                         backend=backend)
    assert out.shape == (0, 3, 2) and rm is None and rv is None
    np.testing.assert_array_equal(mean, [0, 0, 0])
    assert np.isnan(var).all()


@pytest.mark.parametrize("shape, factor_is_nan", [((1, 64, 1, 1), True), ((1, 3, 1, 1), False), ((1, 64), False)])
def test_one_element_per_channel_running_variance(backend, shape, factor_is_nan):
    x = np.ones(shape, np.float32)
    rv = np.full(shape[1], 2.0, np.float32)
    aclnn_py.batch_norm(x, None, None, None, rv, True, 0.5, 1e-5, backend=backend)
    if factor_is_nan:
        assert np.isnan(rv).all()
    else:
        np.testing.assert_array_equal(rv, 1.0)  # (1 - m) * 2 + m * 0


def test_device_tensors_on_sim(sim_lib):
    # A device input with CPU running statistics (copied back after the device work), and device
    # running statistics (updated where they are).
    rng = np.random.default_rng(5)
    x = random_array(rng, (4, 3, 5), np.float32)
    expected_stats = [np.zeros(3, np.float32), np.ones(3, np.float32)]
    expected = aclnn_py.batch_norm(x, None, None, *expected_stats, True, 0.3, 1e-5, backend="numpy")
    dx = aclnn_py.Tensor.from_numpy(x, backend="sim")
    stats = [np.zeros(3, np.float32), np.ones(3, np.float32)]
    got = aclnn_py.batch_norm(dx, None, None, *stats, True, 0.3, 1e-5, backend="sim")
    assert got[0] is stats[0] and isinstance(got[2], aclnn_py.Tensor)
    assert_close(got[2].numpy(), expected[2], np.dtype(np.float32))
    for e, g in zip(expected_stats, stats):
        assert_close(g, e, np.dtype(np.float32))
    device_stats = [aclnn_py.Tensor.from_numpy(np.zeros(3, np.float32), backend="sim"),
                    aclnn_py.Tensor.from_numpy(np.ones(3, np.float32), backend="sim")]
    got = aclnn_py.batch_norm(x, None, None, *device_stats, True, 0.3, 1e-5, backend="sim")
    assert got[0] is device_stats[0]
    for e, g in zip(expected_stats, device_stats):
        assert_close(g.numpy(), e, np.dtype(np.float32))


def test_repeated_calls_update_their_own_statistics_with_their_own_momentum(backend, torch):
    """A plan kept across calls (momentum and eps keyed by value) normalises each call's input
    and updates each call's own running statistics; another momentum is another plan."""
    rng = np.random.default_rng(9)
    for momentum in (0.1, 0.1, 0.5):
        x = random_array(rng, (4, 3, 5, 5), np.float32)
        rm, rv = random_array(rng, (3,), np.float32), np.abs(random_array(rng, (3,), np.float32)) + 0.5
        trm, trv = torch.from_numpy(rm.copy()), torch.from_numpy(rv.copy())
        expected = torch.nn.functional.batch_norm(torch.from_numpy(x), trm, trv, None, None, True, momentum, 1e-5)
        out = aclnn_py.batch_norm(x, None, None, rm, rv, True, momentum, 1e-5, backend=backend)[2]  # (rm, rv first)
        assert_close(out, expected.numpy(), np.float32)
        assert_close(rm, trm.numpy(), np.float32)
        assert_close(rv, trv.numpy(), np.float32)


@pytest.mark.parametrize("run", [None, 40000, 1000, 64],
                         ids=["whole", "runs of channels", "runs of rows", "one row a run"])
def test_training_mean_is_the_float64_mean_rounded_once(backend, monkeypatch, run):
    """The channel sums in double (reduce.double_channel_sums, the simulator's double lanes): saveMean
    is the float64 mean rounded to FLOAT, where a float accumulator over these 16 Ki elements of
    |x| ~ 1 with means near 0 ends several ulps off; the output beside it against float64."""
    from aclnn_py._numpy import reduce as _red
    if run is not None:
        monkeypatch.setattr(_red, "DOUBLE_RUN", run)
    rng = np.random.default_rng(7)
    x = rng.standard_normal((4, 6, 64, 64), dtype=np.float32)
    x[:, 1] += np.float32(3.0)  # (one channel far from 0, for the rounding of its mean too)
    c = x.shape[1]
    _, _, out, save_mean, _ = aclnn_py.batch_norm(x, np.ones(c, np.float32), np.zeros(c, np.float32), None, None,
                                                  True, 0.1, 1e-5, backend=backend)
    exact = x.astype(np.float64).mean(axis=(0, 2, 3))
    np.testing.assert_array_equal(save_mean, exact.astype(np.float32))
    centred = x.astype(np.float64) - save_mean.astype(np.float64)[:, None, None]
    reference = centred / np.sqrt((centred ** 2).mean(axis=(0, 2, 3)) + 1e-5)[:, None, None]
    assert_close(out, reference.astype(np.float32), np.float32)
