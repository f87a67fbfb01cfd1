"""The memory-bound kernels run their ufuncs with a smaller NumPy buffer (``ufunc_buffer``): set
on the thread that runs each part, given back afterwards, on error paths too, and never seen
by the caller's own NumPy code."""

from __future__ import annotations

import importlib
import threading

import numpy as np
import pytest

import aclnn_py
from aclnn_py._numpy import plans as _plans
from aclnn_py._numpy import workers as _workers

_im2col = importlib.import_module("aclnn_py.ops.im2col_backward")
_buffer = importlib.import_module("aclnn_py._numpy.ufunc_buffer")
_avg_pool = importlib.import_module("aclnn_py.ops.avg_pool2d_backward")


def test_ufunc_buffer_sets_and_restores_the_threads_setting():
    before = np.getbufsize()
    with _buffer.ufunc_buffer():
        assert np.getbufsize() == _buffer.UFUNC_BUFFER
        seen = []
        other = threading.Thread(target=lambda: seen.append(np.getbufsize()))
        other.start()
        other.join()
        assert seen == [8192]           # another thread keeps NumPy's default
    assert np.getbufsize() == before
    with pytest.raises(RuntimeError):
        with _buffer.ufunc_buffer():
            raise RuntimeError("a kernel failing")
    assert np.getbufsize() == before


@pytest.mark.parametrize("op", ["im2col", "avg_pool"])
def test_kernels_run_with_the_small_buffer_on_every_thread(monkeypatch, op):
    """Every part (the caller's and the workers') sees UFUNC_BUFFER; afterwards the caller
    has its own setting back."""
    monkeypatch.setattr(_workers, "MIN_PARALLEL_ELEMENTS", 1)
    _plans.forget_plans()
    seen = []
    rng = np.random.default_rng(0)
    if op == "im2col":
        original = _im2col._col2im
        monkeypatch.setattr(_im2col, "_col2im", lambda *a, **k: seen.append(np.getbufsize()) or original(*a, **k))
        args = (rng.standard_normal((4, 18, 49)).astype(np.float32), [14, 14], [3, 3], [1, 1], [1, 1], [2, 2])
        call = aclnn_py.im2col_backward
        monkeypatch.setattr(_im2col._small, "MAX_MATRIX_ELEMENTS", 0)
    else:
        original = _avg_pool._spread_h
        monkeypatch.setattr(_avg_pool, "_spread_h", lambda *a: seen.append(np.getbufsize()) or original(*a))
        args = (rng.standard_normal((4, 2, 7, 7)).astype(np.float32), np.zeros((4, 2, 14, 14), np.float32),
                [3], [2], [1], False, True, None)
        call = aclnn_py.avg_pool2d_backward
        monkeypatch.setattr(_avg_pool._small, "MAX_MATRIX_ELEMENTS", 0)
        monkeypatch.setattr(_avg_pool, "_SMALL", -1)
        monkeypatch.setattr(_avg_pool, "_BLAS_ADVANTAGE", 0)
    np.setbufsize(4096)
    try:
        call(*args, backend="numpy")
        assert np.getbufsize() == 4096
    finally:
        np.setbufsize(8192)
        _plans.forget_plans()
    assert len(seen) >= 2 and set(seen) == {_buffer.UFUNC_BUFFER}


@pytest.mark.parametrize(("shape", "operands", "run"), [
    ((256, 1000), [(256, 1000), (256, 1)], 1000),        # a row's max
    ((8, 128, 28, 28), [(8, 128, 28, 28), (128, 1, 1)], 784),  # a channel's bias: two dims
    ((256, 1000), [(256, 1000), (1000,)], 1000),         # a bias row
    ((4, 1, 6), [(4, 1, 6), (4, 1, 1)], 6),              # (a dim of 1 changes nothing)
    ((3, 5), [(3, 5), (3, 5)], 15),                      # no broadcast: one run
    ((3, 5), [(3, 5), ()], 15),                          # a 0-d operand: stride 0 throughout
])
def test_inner_run_is_the_trailing_dims_each_operand_keeps_one_stride_in(shape, operands, run):
    assert _buffer.inner_run(shape, *operands) == run


def test_run_buffer_is_one_run_for_large_calls_over_runs_of_hundreds_to_thousands():
    big = _buffer.BROADCAST_ELEMENTS
    assert _buffer.run_buffer(1000, big) == 1008          # (NumPy takes multiples of 16)
    assert _buffer.run_buffer(784, big) == 784
    assert _buffer.run_buffer(_buffer.SHORTEST_RUN - 1, big) is None
    assert _buffer.run_buffer(8192, big) is None            # (a run as long as NumPy's buffer)
    assert _buffer.run_buffer(1000, big - 1) is None        # (a small call keeps the caller's)
    before = np.getbufsize()
    with _buffer.ufunc_buffer(None):
        assert np.getbufsize() == before


@pytest.mark.parametrize("op", ["add", "softmax", "affine", "batch_norm_backward", "centered"])
def test_broadcasts_run_with_one_run_of_buffer_and_give_the_callers_back(monkeypatch, op):
    """A bias add (over_parts) and the softmax family / BatchNorm's affine (reduce) set the
    buffer to one run for their broadcast, on every thread, and the caller keeps its own."""
    reduce = importlib.import_module("aclnn_py._numpy.reduce")
    seen = []
    original = {"add": np.add, "softmax": np.divide, "centered": np.subtract}.get(op, np.multiply)
    name = original.__name__

    class Spy:
        def __getattr__(self, attr):
            return getattr(np, attr)

    spy = Spy()
    setattr(Spy, name, staticmethod(lambda *a, **k: seen.append(np.getbufsize()) or original(*a, **k)))
    rng = np.random.default_rng(1)
    np.setbufsize(4096)
    try:
        if op == "add":
            elementwise = importlib.import_module("aclnn_py._numpy.elementwise")
            monkeypatch.setattr(elementwise, "np", spy)
            a, b = rng.standard_normal((64, 1000)).astype(np.float32), rng.standard_normal(1000).astype(np.float32)
            np.testing.assert_array_equal(aclnn_py.add(a, b, 1.0, backend="numpy"), a + b)
        elif op == "softmax":
            monkeypatch.setattr(reduce, "np", spy)
            x = rng.standard_normal((64, 1000)).astype(np.float32)
            aclnn_py.softmax(x, 1, backend="numpy")
        elif op == "batch_norm_backward":
            bn = importlib.import_module("aclnn_py.ops.batch_norm_backward")
            monkeypatch.setattr(bn, "np", spy)
            g, x = (rng.standard_normal((2, 16, 32, 32)).astype(np.float32) for _ in range(2))
            mean, invstd = np.zeros(16, np.float32), np.ones(16, np.float32)
            aclnn_py.batch_norm_backward(g, x, None, None, None, mean, invstd, True, 1e-5, [True, True, True],
                                         backend="numpy")
        else:
            monkeypatch.setattr(reduce, "np", spy)
            x3 = rng.standard_normal((2, 16, 1024)).astype(np.float32)
            scale = rng.standard_normal(16).astype(np.float32)
            if op == "affine":
                np.testing.assert_array_equal(reduce.affine(x3, scale, None), x3 * scale[:, None])
            else:
                np.testing.assert_array_equal(reduce.centered(x3, scale)[0], x3 - scale[:, None])
        assert np.getbufsize() == 4096
    finally:
        np.setbufsize(8192)
    assert seen and set(seen) == {1008 if op in ("add", "softmax") else 1024}
