"""The typed layer's in-place arguments and tensor lists on the simulator: every handle and
device block they make is released exactly once, on success and on every error path."""

from __future__ import annotations

import gc

import numpy as np
import pytest

import aclnn_py
from aclnn_py import Tensor
from aclnn_py._runtime import pool


def _live(lib) -> dict[str, int]:
    lib.synchronize()
    gc.collect()
    pool.trim_all()  # (the caching allocator's blocks are the binding's on purpose)
    c = lib.ffi.new("aclsimCounters *")
    lib.call("aclsimGetCounters", c)
    return {f: getattr(c, f) for f in ("tensors", "tensor_lists", "executors", "device_blocks", "scalars")}


def test_cat_releases_its_list_on_success_and_errors(sim_lib):
    a, b = np.ones((2, 3), np.float32), np.zeros((1, 3), np.float32)
    aclnn_py.cat([a, b], 0, backend="sim")  # (warm: the stream, the plans)
    before = _live(sim_lib)
    for _ in range(3):
        aclnn_py.cat([a, b, a.T.copy().T], 0, backend="sim")
        with pytest.raises(aclnn_py.AclnnError):
            aclnn_py.cat([a, np.zeros((1, 4), np.float32)], 0, backend="sim")  # refused by phase 1
        with pytest.raises(aclnn_py.AclnnError):
            aclnn_py.cat([a, None], 0, backend="sim")  # a NULL element: 161001
    closed = Tensor.from_numpy(b, backend="sim")
    closed.close()
    with pytest.raises(Exception):
        aclnn_py.cat([a, a, closed], 0, backend="sim")  # fails while the list is being made
    assert _live(sim_lib) == before


def test_cat_with_device_tensors_in_the_list(sim_lib):
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    before = _live(sim_lib)
    with Tensor.from_numpy(a, backend="sim") as t:
        result = aclnn_py.cat([t, a, t.view((1, 3), (3, 1), 3)], 0, backend="sim")
        np.testing.assert_array_equal(result.numpy(), np.concatenate([a, a, a[1:]]))
        result.close()
    assert _live(sim_lib) == before


def test_inplace_releases_its_copies_and_leaves_a_refused_array_alone(sim_lib):
    w, g = np.ones((4, 5), np.float32), np.ones(5, np.float32)
    aclnn_py.inplace_add(w, g, backend="sim")
    before = _live(sim_lib)
    for _ in range(3):
        aclnn_py.inplace_add(w, g, -1.0, backend="sim")
        aclnn_py.inplace_add(w.T, g[:4], backend="sim")  # a non-contiguous selfRef: the ABI-mode path
        with pytest.raises(aclnn_py.AclnnError):
            aclnn_py.inplace_add(w, np.ones(3, np.float32), backend="sim")
        with pytest.raises(aclnn_py.AclnnError):
            aclnn_py.inplace_copy(w.T, np.ones((3,), np.float32), backend="sim")
    assert _live(sim_lib) == before
    np.testing.assert_array_equal(w, 2)  # (each round: -1 then +1; the refused calls wrote nothing)
