"""The reducing kernels' parts shared among the worker threads (``_numpy/lanes.py``): forced onto
small inputs (the part threshold patched to 1 element), every operator gives bit for bit what
one call over the whole array gives."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import aclnn_py
from aclnn_py._numpy import lanes
from aclnn_py._numpy.workers import worker_count

from helpers import assert_close

SPLIT, WHOLE = 1, 1 << 62


def _both(monkeypatch, call):
    """``call()`` with the parts forced and with one part; both results."""
    monkeypatch.setattr(lanes, "MIN_PART_ELEMENTS", WHOLE)
    whole = call()
    monkeypatch.setattr(lanes, "MIN_PART_ELEMENTS", SPLIT)
    split = call()
    return whole, split


def _same(whole, split):
    whole = whole if isinstance(whole, tuple) else (whole,)
    split = split if isinstance(split, tuple) else (split,)
    for a, b in zip(whole, split, strict=True):
        if a is None:
            assert b is None
            continue
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_array_equal(a, b)


@pytest.mark.skipif(worker_count() < 2, reason="one core: nothing to split over")
def test_over_cuts_the_outermost_free_dim_into_one_part_per_worker(monkeypatch):
    monkeypatch.setattr(lanes, "MIN_PART_ELEMENTS", SPLIT)
    seen: list[tuple[slice, ...]] = []
    threads: set[int] = set()
    lock = threading.Lock()

    def work(index):
        with lock:
            seen.append(index)
            threads.add(threading.get_ident())

    lanes.over((6, 5, 7), (0,), work)
    assert len(seen) == min(worker_count(), 5) and len(threads) == len(seen)
    assert all(i[0] == slice(None) and i[2:] == () for i in seen)
    cut = sorted((i[1].start, i[1].stop) for i in seen)
    assert cut[0][0] == 0 and cut[-1][1] == 5 and all(a[1] == b[0] for a, b in zip(cut, cut[1:]))


def test_over_runs_the_whole_when_no_dim_is_free_or_the_input_is_small(monkeypatch):
    calls = []
    lanes.over((4, 3), (0, 1), calls.append)
    monkeypatch.setattr(lanes, "MIN_PART_ELEMENTS", 100)
    lanes.over((4, 3), (), calls.append)
    assert calls == [(slice(None),) * 2] * 2
    assert lanes.split_dim((1, 1, 9), (2,)) is None and lanes.split_dim((1, 3, 9), ()) == 1


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.float64])
@pytest.mark.parametrize("shape,dim", [((6, 33), 1), ((6, 33), 0), ((3, 4, 5, 9), -1), ((3, 4, 5, 9), 1)])
@pytest.mark.parametrize("op", ["softmax", "log_softmax", "softmax_backward", "log_softmax_backward"])
def test_softmax_family_split_equals_whole(monkeypatch, op, shape, dim, dtype):
    if dtype == np.float64 and op.endswith("backward"):
        pytest.skip("the backwards take no DOUBLE")
    rng = np.random.default_rng(3)
    x = rng.standard_normal(shape).astype(dtype)
    y = rng.standard_normal(shape).astype(dtype)
    f = getattr(aclnn_py, op)
    args = (x, dim) if not op.endswith("backward") else (x, y, dim)
    whole, split = _both(monkeypatch, lambda: f(*args, backend="numpy"))
    _same(whole, split)


def test_softmax_split_on_a_transposed_view_matches_float64(monkeypatch):
    x = np.random.default_rng(5).standard_normal((40, 30)).astype(np.float32).T
    monkeypatch.setattr(lanes, "MIN_PART_ELEMENTS", SPLIT)
    got = aclnn_py.softmax(x, 1, backend="numpy")
    wide = np.exp(x.astype(np.float64) - x.max(axis=1, keepdims=True))
    assert_close(got, wide / wide.sum(axis=1, keepdims=True), np.float32)


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int32])
@pytest.mark.parametrize("dims,keep", [([0, 2, 3], False), ([1], True), ([3], False), ([], False), ([0], False)])
@pytest.mark.parametrize("op", ["reduce_sum", "mean"])
def test_reductions_split_equal_whole(monkeypatch, op, dims, keep, dtype):
    x = (np.random.default_rng(4).standard_normal((4, 6, 5, 7)) * 10).astype(dtype)
    f = getattr(aclnn_py, op)
    whole, split = _both(monkeypatch, lambda: f(x, dims, keep, dtype, backend="numpy"))
    _same(whole, split)


@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("shape", [(4, 6, 5, 7), (3, 5), (1, 8, 3, 3)])
def test_batch_norm_and_its_backward_split_equal_whole(monkeypatch, shape, training):
    rng = np.random.default_rng(6)
    c = shape[1]
    x = rng.standard_normal(shape).astype(np.float32)
    g = rng.standard_normal(shape).astype(np.float32)
    w, b = rng.standard_normal(c).astype(np.float32), rng.standard_normal(c).astype(np.float32)
    rm, rv = rng.standard_normal(c).astype(np.float32), rng.random(c).astype(np.float32) + 0.5
    sm, sv = rng.standard_normal(c).astype(np.float32), rng.random(c).astype(np.float32) + 0.5

    def forward():
        return aclnn_py.batch_norm(x, w, b, rm.copy(), rv.copy(), training, 0.1, 1e-5, backend="numpy")

    def backward():
        return aclnn_py.batch_norm_backward(g, x, w, rm, rv, sm, sv, training, 1e-5, [True, True, True],
                                            backend="numpy")

    _same(*_both(monkeypatch, forward))
    _same(*_both(monkeypatch, backward))
