"""softmax, softmax_backward, log_softmax, log_softmax_backward (aclnnSoftmax, aclnnSoftmaxBackward,
aclnnLogSoftmax, aclnnLogSoftmaxBackward): values against PyTorch for every documented dtype and
several dims, transposed views, 0-d and empty tensors, and the dtype each computes in when
``call`` is given an out of another dtype."""

from __future__ import annotations

import numpy as np
import pytest

import aclnn_py
from aclnn_py.ops.log_softmax_backward import DTYPES as LOG_BACKWARD_DTYPES
from aclnn_py.ops.softmax_backward import DTYPES as BACKWARD_DTYPES
from aclnn_py.ops.log_softmax import DTYPES as LOG_DTYPES
from aclnn_py.ops.softmax import DTYPES as SOFTMAX_DTYPES
from helpers import assert_close, random_array

SHAPES = [((6, 10), 1), ((6, 10), -2), ((2, 3, 4, 5), 1), ((2, 3, 4, 5), -1), ((7,), 0)]


def _wide(torch, a):
    return torch.from_numpy(a.astype(np.float64 if a.dtype == np.float64 else np.float32))


@pytest.mark.parametrize("log", [False, True], ids=["softmax", "log_softmax"])
@pytest.mark.parametrize("dtype", SOFTMAX_DTYPES, ids=str)
@pytest.mark.parametrize("shape, dim", SHAPES, ids=str)
def test_forward_matches_torch(backend, torch, log, dtype, shape, dim):
    assert list(SOFTMAX_DTYPES) == list(LOG_DTYPES)
    x = random_array(np.random.default_rng(0), shape, dtype) * 3
    ours = (aclnn_py.log_softmax if log else aclnn_py.softmax)(x, dim, backend=backend)
    theirs = (torch.log_softmax if log else torch.softmax)(_wide(torch, x), dim).numpy().astype(dtype)
    assert ours.dtype == dtype
    assert_close(ours, theirs, dtype, scale=2)


@pytest.mark.parametrize("log", [False, True], ids=["softmax_backward", "log_softmax_backward"])
@pytest.mark.parametrize("dtype", BACKWARD_DTYPES, ids=str)
@pytest.mark.parametrize("shape, dim", SHAPES, ids=str)
def test_backward_matches_torch(backend, torch, log, dtype, shape, dim):
    assert list(BACKWARD_DTYPES) == list(LOG_BACKWARD_DTYPES)
    rng = np.random.default_rng(1)
    x, g = random_array(rng, shape, np.float32), random_array(rng, shape, dtype)
    output = (torch.log_softmax if log else torch.softmax)(torch.from_numpy(x), dim).numpy().astype(dtype)
    ours = (aclnn_py.log_softmax_backward if log else aclnn_py.softmax_backward)(g, output, dim, backend=backend)
    ref = torch.ops.aten._log_softmax_backward_data if log else torch.ops.aten._softmax_backward_data
    theirs = ref(_wide(torch, g), _wide(torch, output), dim, torch.float32).numpy().astype(dtype)
    assert ours.dtype == dtype
    assert_close(ours, theirs, dtype, scale=shape[dim] if log else 4)


def test_views_zero_d_and_empty(backend, torch):
    x = random_array(np.random.default_rng(2), (5, 4, 3), np.float32)
    view = x.transpose(2, 0, 1)
    assert_close(aclnn_py.log_softmax(view, 1, backend=backend),
                 torch.log_softmax(torch.from_numpy(view.copy()), 1).numpy(), np.dtype(np.float32))
    g = x[::-1].transpose(1, 0, 2)
    y = aclnn_py.softmax(x.transpose(1, 0, 2).copy(), 0, backend=backend)
    assert_close(aclnn_py.softmax_backward(g, y, 0, backend=backend),
                 torch.ops.aten._softmax_backward_data(torch.from_numpy(g.copy()), torch.from_numpy(y), 0,
                                                       torch.float32).numpy(), np.dtype(np.float32))
    scalar = np.asarray(2.5, np.float32)
    assert aclnn_py.softmax(scalar, -1, backend=backend) == 1 and aclnn_py.log_softmax(scalar, 0, backend=backend) == 0
    empty = np.zeros((0, 3), np.float32)
    assert aclnn_py.softmax(empty, 7, backend=backend).shape == (0, 3)  # Softmax: empty before the dim check
    assert aclnn_py.log_softmax_backward(empty, empty, 9, backend=backend).shape == (0, 3)


def test_compute_dtypes_with_another_out(sim_lib):
    # (sim only: call's numpy path makes out as the function does and requires the caller's to match)
    backend = "sim"
    x = (np.arange(12, dtype=np.float32).reshape(3, 4) / 7).astype(np.float32)
    # Softmax runs in self's dtype: a FLOAT16 self's result rounded to FLOAT16, then stored as FLOAT.
    out = np.zeros((3, 4), np.float32)
    aclnn_py.call("aclnnSoftmax", x.astype(np.float16), 1, out, backend=backend)
    np.testing.assert_array_equal(out, aclnn_py.softmax(x.astype(np.float16), 1, backend="numpy").astype(np.float32))
    # LogSoftmax runs in out's dtype: a FLOAT self with a FLOAT16 out is computed in FLOAT16.
    out16 = np.zeros((3, 4), np.float16)
    aclnn_py.call("aclnnLogSoftmax", x, 1, out16, backend=backend)
    np.testing.assert_array_equal(out16, aclnn_py.log_softmax(x.astype(np.float16), 1, backend="numpy"))


@pytest.mark.parametrize("scale", [3.0, 100.0], ids=["unshifted", "shifted"])
@pytest.mark.parametrize("special", [None, -np.inf, np.inf, np.nan], ids=str)
def test_softmax_with_and_without_the_max_shift_matches_torch(torch, scale, special):
    """Values up to ``reduce.UNSHIFTED_RANGE`` take exp(x) unshifted, others (large, infinite,
    NaN) exp(x - max): both are PyTorch's softmax (a lane of -inf masks gives 0s there)."""
    x = np.random.default_rng(4).standard_normal((5, 300)).astype(np.float32) * np.float32(scale)
    if special is not None:
        x[1, ::7] = special
    with np.errstate(invalid="ignore"):
        theirs = torch.softmax(torch.from_numpy(x.astype(np.float64)), 1).numpy()
    ours = aclnn_py.softmax(x, 1, backend="numpy")
    assert_close(ours, theirs, np.float32)


@pytest.mark.parametrize("special", [-np.inf, np.inf, np.nan], ids=str)
def test_log_softmax_with_special_values_matches_torch(torch, special):
    """A lane holding an infinity or NaN (the max shift: ``reduce.lane_max``) as PyTorch's."""
    x = np.random.default_rng(5).standard_normal((5, 300)).astype(np.float32)
    x[1, ::7] = special
    with np.errstate(invalid="ignore"):
        theirs = torch.log_softmax(torch.from_numpy(x.astype(np.float64)), 1).numpy()
    assert_close(aclnn_py.log_softmax(x, 1, backend="numpy"), theirs, np.float32)


@pytest.mark.parametrize("shape", [(5, 7), (3, 1), (1, 9), (2, 3, 4), (9,)], ids=str)
def test_lane_max_along_the_last_dim_is_fmax_reduce(shape):
    """The last dim's lanes as segments of the flat array (``reduce.lane_max``): the same maxima
    as NumPy's fmax reduction (a max is exact), NaN skipped, infinities kept."""
    from aclnn_py._numpy.reduce import lane_max
    x = np.random.default_rng(6).standard_normal(shape).astype(np.float32)
    flat = x.reshape(-1)
    flat[::5], flat[1::7], flat[2::11] = np.nan, np.inf, -np.inf
    for a in (x, x.swapaxes(0, -1)):  # (a transposed view: NumPy's own reduction)
        np.testing.assert_array_equal(lane_max(a, a.ndim - 1), np.fmax.reduce(a, axis=-1, keepdims=True))


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_lanes_of_very_negative_values_are_shifted_as_torch(torch, name):
    """Below ``reduce.UNSHIFTED_RANGE`` a lane whose exps sum to almost nothing (every value very
    negative; every value -inf) is computed again with its max subtracted: PyTorch's values
    (NaN for the lane of -inf), the other lanes' too."""
    x = np.random.default_rng(7).standard_normal((6, 50)).astype(np.float32)
    x[1] -= 200.0
    x[2] = -np.inf
    x[3, :25] -= 1000.0
    with np.errstate(invalid="ignore"):
        theirs = getattr(torch, name)(torch.from_numpy(x.astype(np.float64)), 1).numpy()
    ours = getattr(aclnn_py, name)(x, 1, backend="numpy")
    assert np.isnan(ours[2]).all() and not np.isnan(np.delete(ours, 2, 0)).any()
    assert_close(ours, theirs, np.float32)


@pytest.mark.parametrize("scale", [3.0, 100.0], ids=["unshifted", "shifted"])
@pytest.mark.parametrize("dim", [0, 1])
def test_log_softmax_with_and_without_the_max_shift_matches_torch(torch, scale, dim):
    """Values up to ``reduce.UNSHIFTED_RANGE`` take ``x - log(sum exp(x))`` unshifted, others
    ``x - max - log(sum exp(x - max))``: both PyTorch's log_softmax, along either dim."""
    x = np.random.default_rng(8).standard_normal((40, 300)).astype(np.float32) * np.float32(scale)
    theirs = torch.log_softmax(torch.from_numpy(x.astype(np.float64)), dim).numpy()
    assert_close(aclnn_py.log_softmax(x, dim, backend="numpy"), theirs, np.float32)


@pytest.mark.parametrize("longest", [0, 1 << 20], ids=["einsum", "vecdot"])
@pytest.mark.parametrize("dtype", BACKWARD_DTYPES, ids=str)
def test_softmax_backward_lane_sums_by_either_dot_match_torch(monkeypatch, torch, longest, dtype):
    """The last dim's lane sums by ``np.vecdot`` (lanes up to ``reduce.LONGEST_DOT_LANE``) and by
    einsum (longer lanes) give PyTorch's gradient, on lanes of a transposed view too."""
    from aclnn_py._numpy import reduce as _red
    monkeypatch.setattr(_red, "LONGEST_DOT_LANE", longest)
    rng = np.random.default_rng(12)
    x = rng.standard_normal((2, 37, 300)).astype(np.float32)
    g = random_array(rng, (2, 37, 300), dtype)
    y = torch.softmax(torch.from_numpy(x), -1).numpy().astype(dtype)
    for gv, yv in ((g, y), (g.swapaxes(0, 1), y.swapaxes(0, 1))):
        ours = aclnn_py.softmax_backward(gv, yv, -1, backend="numpy")
        theirs = torch.ops.aten._softmax_backward_data(_wide(torch, np.ascontiguousarray(gv)).double(),
                                                       _wide(torch, np.ascontiguousarray(yv)).double(), -1,
                                                       torch.float64).numpy().astype(dtype)
        assert ours.dtype == dtype
        assert_close(ours, theirs, dtype, scale=4)
