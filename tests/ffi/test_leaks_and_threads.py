"""On the simulator: thousands of valid and invalid calls leave no live handle and no device
byte behind, and threads calling operators concurrently get correct results."""

from __future__ import annotations

import gc
import threading

import numpy as np
import pytest

import aclnn_py
from aclnn_py import AclnnError, Tensor

from helpers import assert_close
from test_tensor import counters


def _valid_calls(rng):
    g = rng.standard_normal((2, 3, 6, 6)).astype(np.float32)
    x = np.zeros((2, 3, 4, 4), np.float32)
    yield lambda: aclnn_py.reflection_pad2d_backward(g, x, [1, 1, 1, 1], backend="sim")
    yield lambda: aclnn_py.avg_pool2d_backward(np.ones((2, 3, 2, 2), np.float32), x, [2], [2], [0], False, True, 0,
                                               backend="sim")
    yield lambda: aclnn_py.im2col_backward(np.ones((2, 3 * 4, 9), np.float32), [4, 4], [2, 2], [1, 1], [0, 0],
                                           [1, 1], backend="sim")
    idx = np.zeros((2, 3, 4, 4), np.int64)
    yield lambda: aclnn_py.max_unpool2d_backward(g[:, :, :4, :4].copy(), x, idx, [4, 4], backend="sim")
    w = np.ones((4, 3, 3, 3), np.float32)
    yield lambda: aclnn_py.convolution_backward(np.ones((2, 4, 4, 4), np.float32), x, w, [4], [1, 1], [1, 1],
                                                [1, 1], False, [0, 0], 1, [True, True, True], backend="sim")


def _invalid_calls():
    x = np.zeros((2, 3, 4, 4), np.float32)
    yield lambda: aclnn_py.reflection_pad2d_backward(np.zeros((2, 3, 5, 6), np.float32), x, [1, 1, 1, 1],
                                                     backend="sim")
    yield lambda: aclnn_py.avg_pool2d_backward(np.ones((2, 3, 2, 2), np.float32), x, [0], [2], [0], False, True, 0,
                                               backend="sim")
    yield lambda: aclnn_py.im2col_backward(np.ones((2, 5, 9), np.float32), [4, 4], [2, 2], [1, 1], [0, 0], [1, 1],
                                           backend="sim")
    yield lambda: aclnn_py.max_unpool2d_backward(x, x, x, [4, 4], backend="sim")
    yield lambda: aclnn_py.convolution_backward(None, x, x, [4], [1, 1], [1, 1], [1, 1], False, [0, 0], 1,
                                                [True, True, True], backend="sim")


def test_thousands_of_calls_leak_nothing(sim_lib):
    rng = np.random.default_rng(0)
    gc.collect()
    sim_lib.synchronize()
    before = counters(sim_lib)
    valid = list(_valid_calls(rng))
    invalid = list(_invalid_calls())
    for _ in range(200):
        for call in valid:
            call()
        for call in invalid:
            with pytest.raises(AclnnError) as info:
                call()
            assert info.value.status in (161001, 161002) and info.value.message
    # A device chain: Tensor in, Tensor out, released by close() and by the collector.
    x = Tensor.from_numpy(np.zeros((2, 3, 4, 4), np.float32), backend="sim")
    for _ in range(100):
        g = Tensor.from_numpy(rng.standard_normal((2, 3, 6, 6)).astype(np.float32), backend="sim")
        (out,) = [aclnn_py.reflection_pad2d_backward(g, x, [1, 1, 1, 1], backend="sim")]
        assert isinstance(out, Tensor)
        out.close()
        del g
    x.close()
    gc.collect()
    sim_lib.synchronize()
    assert counters(sim_lib) == before


def test_threads_get_correct_results(sim_lib):
    errors: list[BaseException] = []

    def worker(seed: int) -> None:
        try:
            rng = np.random.default_rng(seed)
            for _ in range(30):
                x = rng.standard_normal((1, 2, 5, 5)).astype(np.float32)
                g = rng.standard_normal((1, 2, 7, 7)).astype(np.float32)
                w = rng.standard_normal((3, 2, 3, 3)).astype(np.float32)
                gc_ = rng.standard_normal((1, 3, 5, 5)).astype(np.float32)
                gp = rng.standard_normal((1, 2, 3, 3)).astype(np.float32)
                calls = (
                    lambda b: [aclnn_py.reflection_pad2d_backward(g, x, [1, 1, 1, 1], backend=b)],
                    lambda b: [aclnn_py.avg_pool2d_backward(gp, x, [3], [2], [1], False, False, None, backend=b)],
                    lambda b: aclnn_py.convolution_backward(gc_, x, w, [3], [1, 1], [1, 1], [1, 1], False, [0, 0],
                                                            1, [True, True, True], backend=b),
                )
                for call in calls:
                    for got, want in zip(call("sim"), call("numpy")):
                        assert_close(got, want, np.float32)
        except BaseException as exc:  # reported in the main thread
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not any(t.is_alive() for t in threads), "a worker thread hung"
    assert not errors, errors[0]
