"""The simulator's avg_pool2d backward general path with a column stride sW > 1 (overlapping or
padded windows: src/ops/avgpool2d_backward.c avgpool_planes): the spread rows kept by phases
(columns x % sW one after the other), each gradInput row summed in that order and interleaved at
the end, two phases by a vectorised loop and more one column at a time; sW > W keeps the
strided adds.  Odd and even widths, padding, ceil mode, both divisor rules, float16 (the row
through a buffer), planes split over the worker threads.  The oracle is PyTorch CPU."""

from __future__ import annotations

import numpy as np
import pytest

import aclnn_py
from helpers import assert_close

torch = pytest.importorskip("torch")

# (self shape, kernel, stride, padding, ceil_mode, count_include_pad)
CASES = {
    "k3 s2 p1 even width": ((2, 3, 10, 12), (3, 3), (2, 2), (1, 1), False, True),
    "k3 s2 p1 ceil exclude pad odd width": ((2, 3, 11, 13), (3, 3), (2, 2), (1, 1), True, False),
    "k4 s3 p2": ((1, 2, 13, 14), (4, 4), (3, 3), (2, 2), True, True),
    "k2x3 s1x2 p0x1": ((1, 2, 7, 9), (2, 3), (1, 2), (0, 1), False, False),
    "k5 s4 p2 (gaps)": ((1, 2, 12, 17), (5, 5), (4, 4), (2, 2), False, True),
    "sW = W": ((1, 2, 6, 3), (3, 3), (3, 3), (1, 1), True, True),
}


def _run(case, dtype=np.float32, n_c=None, seed=0):
    shape, k, s, p, ceil, include_pad = CASES[case] if n_c is None else n_c
    out_hw = torch.nn.functional.avg_pool2d(torch.zeros(shape), k, s, p, ceil, include_pad).shape[-2:]
    go = np.random.default_rng(seed).standard_normal((*shape[:2], *out_hw)).astype(dtype)
    result = aclnn_py.avg_pool2d_backward(go, np.zeros(shape, dtype), list(k), list(s), list(p), ceil, include_pad,
                                          None, backend="sim")
    expected = torch.ops.aten.avg_pool2d_backward(torch.from_numpy(go.astype(np.float32)), torch.zeros(shape),
                                                  list(k), list(s), list(p), ceil, include_pad, None).numpy()
    return np.asarray(result), expected


@pytest.mark.parametrize("case", list(CASES))
def test_phases(case):
    result, expected = _run(case)
    assert_close(result, expected, np.float32)


@pytest.mark.parametrize("case", ["k3 s2 p1 ceil exclude pad odd width", "k4 s3 p2"])
def test_float16_through_the_row_buffer(case):
    result, expected = _run(case, dtype=np.float16, seed=1)
    assert_close(result, expected, np.float16)


def test_phases_over_worker_threads():
    """(8,64,112,112) k3 s2 p1: enough work for two threads (kernels/parallel.h)."""
    result, expected = _run(None, n_c=((8, 64, 112, 112), (3, 3), (2, 2), (1, 1), True, False), seed=2)
    assert_close(result, expected, np.float32)
