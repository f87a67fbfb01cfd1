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
