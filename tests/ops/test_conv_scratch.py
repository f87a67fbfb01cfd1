"""The conv engines' per-thread scratch arrays (aclnn_py._convert.values.scratch): kept from
call to call under a cap, never part of a result, one set per thread."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import aclnn_py
from aclnn_py._numpy import workers as _workers
from helpers import assert_close, random_array
from reference.convolution_backward import convolution_backward as reference

# (N, Cin, size, Cout, padding, dilation): a 3x3 stride-1 convolution with 64 channels (the
# winograd engine's by choice), undilated and dilated (its phases), asymmetric padding (the
# weight gradient's own copy of dY).
LAYERS = {
    "resnet": (2, 64, (9, 10), 64, (1, 1), (1, 1)),
    "dilated": (2, 64, (11, 9), 64, (2, 2), (2, 3)),
    "asymmetric": (1, 64, (7, 8), 64, (0, 1, 1, 4), (1, 1)),
}


def _data(rng, batch, cin, size, cout, padding, dilation):
    before, after = (padding, padding) if len(padding) == 2 else ((padding[0], padding[2]), (padding[1], padding[3]))
    out = tuple((i + b + a - d * 2 - 1) + 1 for i, b, a, d in zip(size, before, after, dilation))
    return (random_array(rng, (batch, cout) + out, np.float32), random_array(rng, (batch, cin) + size, np.float32),
            random_array(rng, (cout, cin, 3, 3), np.float32))


def _call(layer, arrays, mask=(True, True, True)):
    cout, padding, dilation = LAYERS[layer][3], LAYERS[layer][4], LAYERS[layer][5]
    return aclnn_py.convolution_backward(*arrays, [cout], [1, 1], list(padding), list(dilation), False, [0, 0], 1,
                                         list(mask), backend="numpy")


def _expected(layer, arrays):
    padding, dilation = LAYERS[layer][4], LAYERS[layer][5]
    return reference(*arrays, [1, 1], list(padding), list(dilation), False, 1)


def _check(layer, arrays, result):
    for got, want in zip(result, _expected(layer, arrays)):
        assert_close(got, want, np.float32)


@pytest.mark.parametrize("layer", list(LAYERS))
def test_results_outlive_the_next_call(layer):
    """A result is never a scratch array: the next call (same shapes, other data) leaves it."""
    from aclnn_py._numpy.conv import lowered

    rng = np.random.default_rng(0)
    first = _data(rng, *LAYERS[layer])
    second = _data(rng, *LAYERS[layer])
    result = _call(layer, first)
    kept = [r.copy() for r in result]
    _call(layer, second)
    _call(layer, second, (True, False, False))
    for got, copy in zip(result, kept):
        np.testing.assert_array_equal(got, copy)
    _check(layer, first, result)
    batch, cin, size, cout = LAYERS[layer][:4]
    engine = lowered(batch, cin, cout, size, first[0].shape[2:], (3, 3), (1, 1), LAYERS[layer][5],
                     tuple(LAYERS[layer][4][::2] if len(LAYERS[layer][4]) == 4 else LAYERS[layer][4]), 1,
                     False).choose(True)
    assert engine.name == "winograd"


@pytest.mark.parametrize("cap", [0, 1 << 16, 32 << 20])
def test_scratch_is_kept_under_the_cap(monkeypatch, cap):
    monkeypatch.setattr(_workers, "WORKSPACE_BYTES", cap)
    monkeypatch.setattr(_workers, "_workspace", _workers._Workspace())
    a = _workers.scratch("a", (100, 100))
    assert a.shape == (100, 100) and a.dtype == np.float32
    again = _workers.scratch("a", (50, 10))
    assert np.shares_memory(a, again) == (cap >= a.nbytes)
    b = _workers.scratch("b", (100, 100))
    assert not np.shares_memory(a, b)
    kept = sum(buf.nbytes for buf in _workers._workspace.buffers.values())
    assert kept <= cap
    # A larger request replaces the kept array (while under the cap).
    larger = _workers.scratch("a", (200, 100))
    assert larger.shape == (200, 100)
    assert sum(buf.nbytes for buf in _workers._workspace.buffers.values()) <= cap


@pytest.mark.parametrize("cap", [0, 32 << 20])
def test_threads_have_their_own_scratch(monkeypatch, cap):
    """Calls from several threads at once (each with its own data) give each its own result."""
    monkeypatch.setattr(_workers, "WORKSPACE_BYTES", cap)
    rng = np.random.default_rng(1)
    layers = [layer for layer in LAYERS for _ in range(2)]
    data = [_data(rng, *LAYERS[layer]) for layer in layers]
    results: list = [None] * len(layers)
    start = threading.Barrier(len(layers))

    def run(i):
        start.wait()
        for _ in range(3):
            results[i] = _call(layers[i], data[i])

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(layers))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for layer, arrays, result in zip(layers, data, results):
        _check(layer, arrays, result)


# (N, Cin, size, Cout, kernel, stride, padding, groups, transposed, mask): the flat engine's
# lowerings, each with its scratch flat buffers, cols and products (flat.py, depthwise.py).
FLAT_LAYERS = {
    "y space": (2, 6, (9, 10), 5, (3, 3), (2, 1), (1, 1), 1, False, (True, True, True)),
    "x space, gradWeight alone": (2, 3, (11, 9), 8, (5, 5), (2, 2), (2, 2), 1, False, (False, True, False)),
    "x space, transposed": (2, 4, (5, 6), 6, (3, 3), (2, 2), (1, 1), 1, True, (True, True, True)),
    "depthwise strided": (2, 8, (9, 9), 8, (3, 3), (2, 2), (1, 1), 8, False, (True, True, True)),
    "conv1d": (3, 4, (17,), 5, (5,), (1,), (2,), 1, False, (True, True, True)),
}


@pytest.mark.parametrize("layer", list(FLAT_LAYERS))
def test_flat_engine_results_outlive_the_next_call(monkeypatch, layer):
    from aclnn_py._numpy import conv

    monkeypatch.setattr(conv, "forced", "flat")
    batch, cin, size, cout, kernel, stride, padding, groups, transposed, mask = FLAT_LAYERS[layer]
    rank = len(size)
    if transposed:
        out = tuple((i - 1) * s - 2 * p + k for i, s, p, k in zip(size, stride, padding, kernel))
        w_shape = (cin, cout // groups) + kernel
    else:
        out = tuple((i + 2 * p - k) // s + 1 for i, s, p, k in zip(size, stride, padding, kernel))
        w_shape = (cout, cin // groups) + kernel
    rng = np.random.default_rng(1)

    def data():
        return (random_array(rng, (batch, cout) + out, np.float32), random_array(rng, (batch, cin) + size, np.float32),
                random_array(rng, w_shape, np.float32))

    def call(arrays, m=mask):
        return aclnn_py.convolution_backward(*arrays, [cout], list(stride), list(padding), [1] * rank, transposed,
                                             [0] * rank, groups, list(m), backend="numpy")

    first, second = data(), data()
    result = call(first)
    kept = [None if r is None else r.copy() for r in result]
    call(second)
    call(second, (True, False, False))
    want = reference(*first, list(stride), list(padding), [1] * rank, transposed, groups)
    for got, copy, expected, wanted in zip(result, kept, want, mask):
        if not wanted:
            continue
        np.testing.assert_array_equal(got, copy)
        assert_close(got, expected, np.float32)
