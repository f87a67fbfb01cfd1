"""The simulator's Im2colBackward (fold) general path with a column stride sW > 1 (blocks that
overlap or leave gaps: src/ops/im2col_backward.c im2col_planes): each out row summed by phases
(the columns x % sW = r one after the other) and interleaved at the end, two phases by a
vectorised loop, more one column at a time; sW > W keeps the strided adds.  Odd widths,
padding, dilation, float16 (the row through a buffer), gradOutput read through a gather, planes
split over the worker threads.  PyTorch CPU's fold is the oracle (its float32 sums)."""

from __future__ import annotations

import numpy as np
import pytest

import aclnn_py
from aclnn_py import Tensor

from helpers import assert_close

torch = pytest.importorskip("torch")
F = torch.nn.functional


def fold_reference(go, size, k, d, p, s):
    return F.fold(torch.from_numpy(np.ascontiguousarray(go, dtype=np.float32)), size, k, dilation=d, padding=p,
                  stride=s).numpy()


def blocks(size, k, d, p, s):
    return [(n + 2 * q - dd * (kk - 1) - 1) // ss + 1 for n, kk, dd, q, ss in zip(size, k, d, p, s)]


# (hw, kernel, dilation, padding, stride)
CASES = {
    "k3 s2 p1 (the bench's)": ((14, 14), (3, 3), (1, 1), (1, 1), (2, 2)),
    "k3 s2 p1 odd width": ((13, 15), (3, 3), (1, 1), (1, 1), (2, 2)),
    "k2 s2 s only in W": ((6, 9), (2, 2), (1, 1), (0, 0), (1, 2)),
    "k5 s2 d2 p3": ((17, 19), (5, 5), (2, 2), (3, 3), (2, 2)),
    "k3 s3 p2 (gaps)": ((11, 16), (2, 2), (1, 1), (2, 2), (3, 3)),
    "k4 s3": ((10, 14), (4, 4), (1, 1), (1, 0), (3, 3)),
    "sW = W": ((5, 4), (2, 2), (1, 1), (0, 0), (1, 4)),
    "sW > W: strided adds": ((5, 3), (2, 2), (1, 1), (1, 1), (1, 5)),
    "k1 s2": ((7, 9), (1, 1), (1, 1), (0, 0), (2, 2)),
}


def _problem(case, n=2, c=3, seed=0, dtype=np.float32):
    hw, k, d, p, s = CASES[case]
    l0, l1 = blocks(hw, k, d, p, s)
    go = np.random.default_rng(seed).standard_normal((n, c * k[0] * k[1], l0 * l1)).astype(dtype)
    return go, hw, k, d, p, s


@pytest.mark.parametrize("case", list(CASES))
def test_phases(case):
    go, hw, k, d, p, s = _problem(case)
    result = aclnn_py.im2col_backward(go, list(hw), list(k), list(d), list(p), list(s), backend="sim")
    assert_close(np.asarray(result), fold_reference(go, hw, k, d, p, s), np.float32)


@pytest.mark.parametrize("case", ["k3 s2 p1 odd width", "k4 s3"])
def test_float16_through_the_row_buffer(case):
    go, hw, k, d, p, s = _problem(case, seed=1, dtype=np.float16)
    result = aclnn_py.im2col_backward(go, list(hw), list(k), list(d), list(p), list(s), backend="sim")
    assert_close(np.asarray(result), fold_reference(go, hw, k, d, p, s), np.float16)


@pytest.mark.parametrize("case", ["k3 s2 p1 odd width", "k5 s2 d2 p3"])
def test_strided_grad_output(case):
    """gradOutput's columns 2 apart: each block row gathered into the row buffer first."""
    go, hw, k, d, p, s = _problem(case, seed=2)
    storage = np.zeros((*go.shape[:2], 2 * go.shape[2]), np.float32)
    storage[..., ::2] = go
    n, r, l = go.shape
    with Tensor.from_numpy(storage, backend="sim") as base, base.view(go.shape, [r * 2 * l, 2 * l, 2]) as view:
        result = aclnn_py.im2col_backward(view, list(hw), list(k), list(d), list(p), list(s), backend="sim")
        got = np.asarray(result)
    assert_close(got, fold_reference(go, hw, k, d, p, s), np.float32)


def test_phases_over_worker_threads():
    """(8,64,56,56) from k3 s2 p1: enough work for two threads (kernels/parallel.h)."""
    hw, k, d, p, s = (56, 56), (3, 3), (1, 1), (1, 1), (2, 2)
    l0, l1 = blocks(hw, k, d, p, s)
    go = np.random.default_rng(3).standard_normal((8, 64 * 9, l0 * l1)).astype(np.float32)
    result = aclnn_py.im2col_backward(go, list(hw), list(k), list(d), list(p), list(s), backend="sim")
    assert_close(np.asarray(result), fold_reference(go, hw, k, d, p, s), np.float32)
