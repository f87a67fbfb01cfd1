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


def test_cat_whose_out_is_moved_over_a_part_after_phase_1(sim_lib):
    """Phase 1 of parts apart from out asks for no workspace (the kernel copies bytes); an out
    moved over a part afterwards (aclSetTensorAddr on a repeatable executor) is converted part
    by part through a temporary instead: the parts' values as they were before the kernel."""
    torch = pytest.importorskip("torch")
    lib, ffi = sim_lib, sim_lib.ffi
    fn, stream = lib.fn, lib.stream()
    a = np.arange(1, 7, dtype=np.float32).reshape(2, 3)
    b = -np.arange(1, 5, dtype=np.float32).reshape(2, 2)
    want = torch.cat([torch.from_numpy(a), torch.from_numpy(b)], 1).numpy()
    before = _live(lib)
    blocks = []
    for nbytes in (16 * 4, 4 * 4, 10 * 4):  # a's home (room for out too), b's, out's first home
        p = ffi.new("void **")
        assert fn("aclrtMalloc")(p, nbytes, 0) == 0
        blocks.append(p[0])
    big, home_b, home_out = blocks
    for dst, src in ((big, a), (home_b, b)):
        assert fn("aclrtMemcpy")(dst, src.nbytes, ffi.from_buffer(src), src.nbytes, 1) == 0

    def tensor(shape, ptr, storage):
        strides = [shape[1], 1]
        return fn("aclCreateTensor")(list(shape), 2, 0, strides, 0, 2, [storage], 1, ptr)

    ta, tb, out = tensor((2, 3), big, 16), tensor((2, 2), home_b, 4), tensor((2, 5), home_out, 10)
    tensors = fn("aclCreateTensorList")([ta, tb], 2)
    size, executor = ffi.new("uint64_t *"), ffi.new("aclOpExecutor **")
    try:
        assert fn("aclnnCatGetWorkspaceSize")(tensors, 1, out, size, executor) == 0
        assert size[0] == 0
        assert fn("aclSetAclOpExecutorRepeatable")(executor[0]) == 0
        assert fn("aclSetTensorAddr")(executor[0], 2, out, big) == 0  # out now starts where a does
        assert fn("aclnnCat")(ffi.NULL, 0, executor[0], stream) == 0
        assert fn("aclrtSynchronizeStream")(stream) == 0
        got = np.empty((2, 5), np.float32)
        assert fn("aclrtMemcpy")(ffi.from_buffer(got), got.nbytes, big, got.nbytes, 2) == 0
        np.testing.assert_array_equal(got, want)
    finally:
        fn("aclDestroyAclOpExecutor")(executor[0])
        fn("aclDestroyTensorList")(tensors)
        fn("aclDestroyTensor")(out)
        for p in blocks:
            fn("aclrtFree")(p)
    assert _live(lib) == before
