"""nll_loss and nll_loss_backward (aclnnNLLLoss, aclnnNLLLossBackward): values against PyTorch
for every documented dtype, reduction and target dtype, ignoreIndex, 1-D self, strided views,
empty inputs, the totalWeight output, and ``call`` with CANN's parameter order."""

from __future__ import annotations

import numpy as np
import pytest

import aclnn_py
from aclnn_py.ops.nll_loss import DTYPES, TARGET_DTYPES
from helpers import assert_close


def _inputs(rng, n, c, dtype, target_dtype=np.int64, ignore=None):
    x = rng.standard_normal((n, c)).astype(np.float32)
    t = rng.integers(0, c, n).astype(target_dtype)
    if ignore is not None and n > 2:
        t[1] = ignore
    w = (rng.random(c) + 0.5).astype(np.float32)
    return x.astype(dtype), t, w.astype(dtype)


def _t(torch, a):
    return torch.from_numpy(np.ascontiguousarray(np.asarray(a, np.float32)))


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("reduction", [0, 1, 2])
@pytest.mark.parametrize("target_dtype", TARGET_DTYPES, ids=str)
def test_forward_and_backward_match_torch(backend, torch, dtype, reduction, target_dtype):
    rng = np.random.default_rng(reduction)
    x, t, w = _inputs(rng, 12, 7, dtype, target_dtype, ignore=3)
    out, total = aclnn_py.nll_loss(x, t, w, reduction, 3, backend=backend)
    ref_out, ref_total = torch.ops.aten.nll_loss_forward(_t(torch, x), torch.from_numpy(t.astype(np.int64)),
                                                         _t(torch, w), reduction, 3)
    out, total = np.asarray(out), np.asarray(total)
    assert out.dtype == dtype and total.dtype == dtype and total.shape == ()
    assert_close(out, ref_out.numpy().astype(dtype), dtype, scale=4)
    if reduction:
        assert_close(total, ref_total.numpy().astype(dtype), dtype, scale=4)
    else:
        assert total == 0  # CANN does not write it; the function's is made of zeros
    g = rng.standard_normal((12,) if reduction == 0 else ()).astype(dtype)
    total_in = np.asarray(ref_total.numpy(), dtype)
    grad = aclnn_py.nll_loss_backward(g, x, t, w, reduction, 3, total_in, backend=backend)
    ref = torch.ops.aten.nll_loss_backward(_t(torch, g), _t(torch, x), torch.from_numpy(t.astype(np.int64)),
                                           _t(torch, w), reduction, 3, _t(torch, total_in))
    assert np.asarray(grad).dtype == dtype
    assert_close(grad, ref.numpy().astype(dtype), dtype, scale=4)


def test_one_sample_strided_views_and_empty(backend, torch):
    rng = np.random.default_rng(1)
    x, t, w = _inputs(rng, 6, 9, np.float32)
    xs, ws = x.T.copy().T[::2], np.repeat(w, 2)[::2]    # strided self (column-major, every other row), weight
    ts = np.repeat(t, 2)[::2][::2]
    out, total = aclnn_py.nll_loss(xs, ts, ws, 2, -100, backend=backend)
    ref = torch.nn.functional.nll_loss(torch.from_numpy(xs.copy()), torch.from_numpy(ts.copy()),
                                       torch.from_numpy(w), reduction="sum")
    assert_close(out, ref.numpy(), np.float32)
    # 1-D self: one sample, a 0-D target
    one, tw = aclnn_py.nll_loss(x[0], np.asarray(t[0]), w, 0, -100, backend=backend)
    assert one.shape == () and np.isclose(one, -w[t[0]] * x[0, t[0]])
    grad = aclnn_py.nll_loss_backward(np.ones((), np.float32), x[0], np.asarray(t[0]), w, 2, -100,
                                      np.ones((), np.float32), backend=backend)
    expected = np.zeros(9, np.float32)
    expected[t[0]] = -w[t[0]]
    np.testing.assert_array_equal(grad, expected)
    # empty rows: none is empty, mean NaN with total 0, sum 0
    e = np.zeros((0, 9), np.float32)
    none, _ = aclnn_py.nll_loss(e, np.zeros(0, np.int64), w, 0, -100, backend=backend)
    assert none.shape == (0,)
    mean, total = aclnn_py.nll_loss(e, np.zeros(0, np.int64), w, 1, -100, backend=backend)
    assert np.isnan(mean) and total == 0
    total_sum = aclnn_py.nll_loss(e, np.zeros(0, np.int64), w, 2, -100, backend=backend)
    assert total_sum[0] == 0 and total_sum[1] == 0
    assert aclnn_py.nll_loss_backward(np.ones((), np.float32), e, np.zeros(0, np.int64), w, 1, -100,
                                      np.ones((), np.float32), backend=backend).shape == (0, 9)


def test_every_row_ignored_mean_is_nan(backend):
    x, w = np.zeros((3, 4), np.float32), np.ones(4, np.float32)
    out, total = aclnn_py.nll_loss(x, np.full(3, 2, np.int64), w, 1, 2, backend=backend)
    assert np.isnan(out) and total == 0
    grad = aclnn_py.nll_loss_backward(np.ones((), np.float32), x, np.full(3, 2, np.int64), w, 1, 2,
                                      np.ones((), np.float32), backend=backend)
    np.testing.assert_array_equal(grad, 0)


def test_mean_uses_the_given_total_weight(backend):
    x, t, w = np.zeros((2, 3), np.float32), np.array([0, 2]), np.array([1, 2, 3], np.float32)
    grad = aclnn_py.nll_loss_backward(np.array(6.0, np.float32), x, t, w, 1, -100, np.array(2.0, np.float32),
                                      backend=backend)
    np.testing.assert_array_equal(grad, [[-3, 0, 0], [0, 0, -9]])


def test_call_with_cann_parameter_order(backend):
    x, t, w = _inputs(np.random.default_rng(2), 5, 4, np.float32)
    out, total = np.zeros(5, np.float32), np.full((), 7, np.float32)
    aclnn_py.call("aclnnNLLLoss", x, t, w, 0, -100, out, total, backend=backend)
    np.testing.assert_allclose(out, -w[t] * x[np.arange(5), t], rtol=1e-6)
    grad = np.full((5, 4), 9, np.float32)
    aclnn_py.call("aclnnNLLLossBackward", np.ones(5, np.float32), x, t, w, 0, -100, np.ones((), np.float32), grad,
                  backend=backend)
    expected = np.zeros((5, 4), np.float32)
    expected[np.arange(5), t] = -w[t]
    np.testing.assert_array_equal(grad, expected)


def test_total_weight_is_not_written_for_reduction_none_on_sim(sim_lib):
    x, t, w = _inputs(np.random.default_rng(3), 4, 3, np.float32)
    out, total = np.zeros(4, np.float32), np.full((), 5, np.float32)
    aclnn_py.call("aclnnNLLLoss", x, t, w, 0, -100, out, total, backend="sim")
    assert total == 5
