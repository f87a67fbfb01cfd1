"""The reducing kernels' parts shared among the worker threads (``_numpy/lanes.py``): forced onto
small inputs (the part threshold patched to 1 element), every operator gives bit for bit what
one call over the whole array gives (with NumPy's own row sums: BLAS's row sums of
``reduce.last_sums`` may differ in the last bit by a row's place in its block, and NumPy may
order a float reduction over several dims otherwise for a part, so those are compared within
the tolerances)."""

from __future__ import annotations

import math
import threading

import numpy as np
import pytest

import aclnn_py
from aclnn_py._numpy import lanes, reduce as _red, workers
from aclnn_py._numpy.workers import worker_count

from helpers import assert_close

SPLIT, WHOLE = 1, 1 << 62


@pytest.fixture(autouse=True)
def _numpy_row_sums(monkeypatch):
    """NumPy's own row sums (no BLAS), whose figures do not depend on the split."""
    monkeypatch.setattr(_red, "SHORT_ROW", 0)


def _both(monkeypatch, call):
    """``call()`` with the parts forced and with one part; both results."""
    monkeypatch.setattr(workers, "machine_busy", lambda: False)  # (split whatever the machine's load)
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
def test_over_cuts_the_outermost_free_dim_into_parts_each_run_once(monkeypatch):
    monkeypatch.setattr(workers, "machine_busy", lambda: False)
    monkeypatch.setattr(lanes, "MIN_PART_ELEMENTS", SPLIT)
    seen: list[tuple[slice, ...]] = []
    lock = threading.Lock()

    def work(index):
        with lock:
            seen.append(index)

    lanes.over((6, 5, 7), (0,), work)
    assert len(seen) == min(worker_count() * lanes.PARTS_PER_THREAD, 5)
    assert all(i[0] == slice(None) and i[2:] == () for i in seen)
    cut = sorted((i[1].start, i[1].stop) for i in seen)
    assert cut[0][0] == 0 and cut[-1][1] == 5 and all(a[1] == b[0] for a, b in zip(cut, cut[1:]))


@pytest.mark.skipif(worker_count() < 2, reason="one core: nothing to split over")
@pytest.mark.parametrize("on_worker", [False, True])
def test_an_exception_in_a_part_reaches_the_caller_after_every_begun_part(monkeypatch, on_worker):
    monkeypatch.setattr(lanes, "MIN_PART_ELEMENTS", SPLIT)
    monkeypatch.setattr(workers, "machine_busy", lambda: False)
    caller = threading.get_ident()
    done: list[int] = []
    began = {True: threading.Event(), False: threading.Event()}  # (by the caller, by a worker)

    def work(index):
        mine = threading.get_ident() == caller
        began[mine].set()
        began[not mine].wait(10)  # (each side holds a part until the other has one: both run one)
        if on_worker != mine:
            raise RuntimeError("part failed")
        done.append(index[0].start)

    with pytest.raises(RuntimeError, match="part failed"):
        lanes.over((64, 3), (1,), work)
    assert began[True].is_set() and began[False].is_set()


def test_over_runs_the_whole_when_no_dim_is_free_or_the_input_is_small(monkeypatch):
    calls = []
    lanes.over((4, 3), (0, 1), calls.append)
    monkeypatch.setattr(lanes, "MIN_PART_ELEMENTS", 100)
    lanes.over((4, 3), (), calls.append)
    assert calls == [(slice(None),) * 2] * 2
    assert lanes.split_dim((1, 1, 9), (2,)) is None and lanes.split_dim((1, 3, 9), ()) == 1


_SOFTMAX_DTYPES = [(op, dtype) for op in ("softmax", "log_softmax", "softmax_backward", "log_softmax_backward")
                   for dtype in (np.float32, np.float16, np.float64)
                   if not (dtype == np.float64 and op.endswith("backward"))]  # (the backwards take no DOUBLE)


@pytest.mark.parametrize("shape,dim", [((6, 33), 1), ((6, 33), 0), ((3, 4, 5, 9), -1), ((3, 4, 5, 9), 1)])
@pytest.mark.parametrize("op,dtype", _SOFTMAX_DTYPES)
def test_softmax_family_split_equals_whole(monkeypatch, op, shape, dim, dtype):
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
    if len(dims) > 1 and dtype != np.int32:
        # (NumPy may order a reduction over several dims otherwise for a part whose cut dim is 1)
        assert_close(split, whole, dtype, scale=np.sqrt(x.size))
        return
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


@pytest.mark.parametrize("shape", [(6, 33), (3, 4, 128), (2, 5, 129), (1, 7), (4, 0), (3, 1000), (2, 3, 3136), (1009,),
                                   (3, 128 * 256)])
def test_last_sums_match_a_float64_sum(monkeypatch, shape):
    monkeypatch.setattr(_red, "SHORT_ROW", 128)
    a = np.random.default_rng(8).standard_normal(shape).astype(np.float32)
    got = _red.last_sums(a)
    assert got.dtype == np.float32 and got.shape == shape[:-1]
    assert_close(got, a.astype(np.float64).sum(axis=-1), np.float32, scale=np.sqrt(shape[-1] + 1))
    assert _red.last_sums(a, keepdims=True).shape == (*shape[:-1], 1)
    assert_close(_red.last_sums(a[..., ::2]), a[..., ::2].astype(np.float64).sum(axis=-1), np.float32,
                 scale=np.sqrt(shape[-1] + 1))
    if a.ndim > 1:  # (rows of a part of the leading dim: a stack of blocks, no copy)
        part = a[1:]
        assert_close(_red.last_sums(part), part.astype(np.float64).sum(axis=-1), np.float32,
                     scale=np.sqrt(shape[-1] + 1))


@pytest.mark.parametrize(("length", "block"), [(100, 100), (128, 128), (1000, 125), (3136, 112), (256000, 128),
                                               (1009, 0), (129, 0)])
def test_long_rows_are_cut_into_blocks_dividing_them(monkeypatch, length, block):
    monkeypatch.setattr(_red, "SHORT_ROW", 128)
    assert _red.block_length(length) == block


@pytest.mark.parametrize("op", ["softmax", "log_softmax", "softmax_backward", "log_softmax_backward"])
def test_softmax_family_split_with_blas_row_sums_is_close_to_whole(monkeypatch, op):
    monkeypatch.setattr(_red, "SHORT_ROW", 128)
    rng = np.random.default_rng(9)
    x, y = rng.standard_normal((2, 7, 9, 40)).astype(np.float32)
    f = getattr(aclnn_py, op)
    args = (x, -1) if not op.endswith("backward") else (x, y, -1)
    whole, split = _both(monkeypatch, lambda: f(*args, backend="numpy"))
    assert_close(split, whole, np.float32)


@pytest.mark.parametrize("dims", [[2, 3], [3], [1, 2, 3]])
def test_mean_of_short_trailing_rows_split_is_close_to_float64(monkeypatch, dims):
    monkeypatch.setattr(_red, "SHORT_ROW", 128)
    x = np.random.default_rng(10).standard_normal((4, 6, 3, 5)).astype(np.float32)
    whole, split = _both(monkeypatch, lambda: aclnn_py.mean(x, dims, False, np.float32, backend="numpy"))
    expected = x.astype(np.float64).mean(axis=tuple(dims))
    assert_close(whole, expected, np.float32)
    assert_close(split, expected, np.float32)


@pytest.mark.parametrize("blas_rows", [0, 128])
def test_global_adaptive_average_split_is_close_to_float64(monkeypatch, blas_rows):
    monkeypatch.setattr(_red, "SHORT_ROW", blas_rows)
    x = np.random.default_rng(11).standard_normal((3, 10, 7, 7)).astype(np.float32)
    whole, split = _both(monkeypatch, lambda: aclnn_py.adaptive_avg_pool2d(x, (1, 1), backend="numpy"))
    expected = x.astype(np.float64).mean(axis=(2, 3), keepdims=True)
    assert_close(whole, expected, np.float32)
    assert_close(split, expected, np.float32)


@pytest.mark.parametrize(("shape", "dims"), [((256, 40), [0]), ((130, 3, 7), [0]), ((16, 8, 5, 3), [0, 1]),
                                             ((128, 1, 6), [0])])
def test_leading_dims_of_many_rows_summed_by_blas_match_a_float64_sum(monkeypatch, shape, dims):
    """reduce_sum over a leading run of >= MANY_ROWS rows (``first_sums``), whole and split."""
    x = np.random.default_rng(11).standard_normal(shape).astype(np.float32)
    expected = x.astype(np.float64).sum(axis=tuple(dims))
    whole, split = _both(monkeypatch, lambda: aclnn_py.reduce_sum(x, dims, False, np.float32, backend="numpy"))
    for got in (whole, split):
        assert_close(got, expected, np.float32, scale=np.sqrt(math.prod(shape[d] for d in dims)))
