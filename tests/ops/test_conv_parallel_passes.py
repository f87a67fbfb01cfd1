"""The convolution's passes over whole arrays shared among the worker threads: the inf/NaN
check (conv._all_finite) and gradBias (convolution_backward._bias_sums), on arrays large enough
to be split, against one-thread NumPy / Python oracles."""

from __future__ import annotations

import numpy as np
import pytest

from aclnn_py._numpy import conv
from aclnn_py._numpy.workers import MIN_PARALLEL_ELEMENTS
from aclnn_py.ops.convolution_backward import _bias_sums

from helpers import assert_close

N = 4 * MIN_PARALLEL_ELEMENTS  # split into one part per worker


@pytest.mark.parametrize("where", [0, N // 2 - 1, N // 2, N - 1])
@pytest.mark.parametrize("bad", [np.inf, -np.inf, np.nan])
def test_a_non_finite_value_in_any_part_is_found(where, bad):
    a = np.ones(N, np.float32)
    assert conv._all_finite(a)
    a[where] = bad
    assert not conv._all_finite(np.ones(8, np.float32), a)
    assert not conv._all_finite(a.reshape(4, -1))


def test_a_non_contiguous_array_is_checked_whole():
    a = np.ones((2, N), np.float32)[:, ::2]
    assert conv._all_finite(a)
    a[1, -1] = np.nan
    assert not conv._all_finite(a)


def test_finite_values_whose_float32_sum_overflows_count_as_not_finite():
    # (as documented: it only costs the exact tap engine, which is right for finite data too)
    assert not conv._all_finite(np.full(N, 3e38, np.float32))
    assert conv._all_finite(np.full(N, 1e30, np.float32))


@pytest.mark.parametrize("shape", [(8, 128, 3136), (1, 3, N), (2, 1, N), (0, 5, 7), (3, 0, 9)])
def test_bias_sums_match_a_float64_sum(shape):
    rows = np.random.default_rng(7).standard_normal(shape).astype(np.float32)
    got = _bias_sums(rows)
    assert got.dtype == np.float32 and got.shape == (shape[1],)
    assert_close(got, rows.astype(np.float64).sum(axis=(0, 2)), np.float32, scale=np.sqrt(shape[0] * shape[2] + 1))
