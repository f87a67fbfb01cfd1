"""The 0xFF fill of new device memory (runtime/memory.c) is done at a block's first use instead
of in aclrtMalloc, and whole-block uploads skip it: what any reader sees must be what an
immediate fill would have left.  Each case reads the block back through the simulator's own
paths: a copy to the host, a copy to another block, a kernel reading it, a memset or copy
writing part of it, the queued (Async) copies, a block reused from the free-block cache."""

from __future__ import annotations

import numpy as np
import pytest

import aclnn_py
from aclnn_py import Tensor, capi
from aclnn_py._runtime.pool import trim_all

N = 1000  # bytes of the blocks: not a multiple of 32, so each has padding after its size


@pytest.fixture
def sim(sim_lib):
    with aclnn_py.use_backend("sim"):
        capi.aclrtSetDevice(0)
        yield capi


def _read(acl, ptr, n=N):
    host = np.zeros(n, np.uint8)
    acl.aclrtMemcpy(host, n, ptr, n, acl.ACL_MEMCPY_DEVICE_TO_HOST)
    return host


def _filled(n):
    return np.full(n, 0xFF, np.uint8)


def _block(acl, n=N):
    ptr = acl.aclrtMalloc(n, acl.ACL_MEM_MALLOC_HUGE_FIRST)
    return ptr


def _data(n=N, seed=0):
    return np.random.default_rng(seed).integers(0, 255, n, dtype=np.uint8)


def test_a_new_block_reads_as_filled(sim):
    for reuse in range(2):  # a fresh block, then the same block from the free-block cache
        ptr = _block(sim)
        np.testing.assert_array_equal(_read(sim, ptr), _filled(N))
        sim.aclrtMemcpy(ptr, N, _data(), N, sim.ACL_MEMCPY_HOST_TO_DEVICE)  # dirty it before it is reused
        sim.aclrtFree(ptr)


@pytest.mark.parametrize("start, count", [(0, N), (0, N - 1), (1, N - 1), (100, 300)],
                         ids=["whole", "all but the last byte", "from byte 1", "inside"])
def test_an_upload_leaves_the_rest_filled(sim, start, count):
    for reuse in range(2):
        ptr = _block(sim)
        data = _data(count, seed=reuse)
        sim.aclrtMemcpy(sim._lib().ffi.cast("char *", ptr) + start, count, data, count,
                        sim.ACL_MEMCPY_HOST_TO_DEVICE)
        want = _filled(N)
        want[start:start + count] = data
        np.testing.assert_array_equal(_read(sim, ptr), want)
        sim.aclrtFree(ptr)


@pytest.mark.parametrize("start, count", [(0, N), (0, 10), (10, N - 10)], ids=["whole", "head", "tail"])
def test_a_memset_leaves_the_rest_filled(sim, start, count):
    ptr = _block(sim)
    sim.aclrtMemset(sim._lib().ffi.cast("char *", ptr) + start, count, 7, count)
    want = _filled(N)
    want[start:start + count] = 7
    np.testing.assert_array_equal(_read(sim, ptr), want)
    sim.aclrtFree(ptr)


def test_device_to_device_copies(sim):
    """A new block copied whole into a used one: the fill arrives; a used one copied into part of
    a new one: the rest of it stays filled."""
    fresh, used = _block(sim), _block(sim)
    sim.aclrtMemcpy(used, N, _data(), N, sim.ACL_MEMCPY_HOST_TO_DEVICE)
    sim.aclrtMemcpy(used, N, fresh, N, sim.ACL_MEMCPY_DEVICE_TO_DEVICE)
    np.testing.assert_array_equal(_read(sim, used), _filled(N))
    other = _block(sim)
    sim.aclrtMemcpy(used, N, _data(seed=3), N, sim.ACL_MEMCPY_HOST_TO_DEVICE)
    sim.aclrtMemcpy(other, N, used, 500, sim.ACL_MEMCPY_DEVICE_TO_DEVICE)
    want = _filled(N)
    want[:500] = _data(seed=3)[:500]
    np.testing.assert_array_equal(_read(sim, other), want)
    for p in (fresh, used, other):
        sim.aclrtFree(p)


def test_queued_copies_and_memsets(sim):
    stream = sim.aclrtCreateStream()
    a, b, c = _block(sim), _block(sim), _block(sim)
    data = _data(N, seed=4)
    sim.aclrtMemcpyAsync(a, N, data, N, sim.ACL_MEMCPY_HOST_TO_DEVICE, stream)
    sim._lib().call("aclrtMemsetAsync", b, N, 3, 200, stream)
    sim.aclrtMemcpyAsync(a, N, c, 100, sim.ACL_MEMCPY_DEVICE_TO_DEVICE, stream)  # c new: its fill
    sim.aclrtSynchronizeStream(stream)
    want_a = data.copy()
    want_a[:100] = 0xFF
    want_b = _filled(N)
    want_b[:200] = 3
    np.testing.assert_array_equal(_read(sim, a), want_a)
    np.testing.assert_array_equal(_read(sim, b), want_b)
    np.testing.assert_array_equal(_read(sim, c), _filled(N))
    for p in (a, b, c):
        sim.aclrtFree(p)
    sim.aclrtDestroyStream(stream)


def test_a_kernel_reads_a_new_block_as_filled(sim_lib):
    """gradOutput in memory never written: the kernel sees NaN (0xFF bytes), as after a fill in
    aclrtMalloc; the parts of the output it writes are NaN sums, never stale data."""
    with Tensor.empty((1, 2, 6, 6), np.float32, backend="sim") as g, \
            Tensor.from_numpy(np.zeros((1, 2, 4, 4), np.float32), backend="sim") as x:
        with aclnn_py.reflection_pad2d_backward(g, x, [1, 1, 1, 1], backend="sim") as out:
            assert np.isnan(out.numpy()).all()
    with Tensor.empty((1, 2, 6, 6), np.float32, backend="sim") as g:
        np.testing.assert_array_equal(g.numpy().view(np.uint32), np.full((1, 2, 6, 6), 0xFFFFFFFF, np.uint32))


def test_large_copies_and_memsets(sim):
    """Copies and memsets of more than one piece (runtime/memory.c copies large ones in 256 KiB
    pieces): sizes that are not a multiple of it, and a device-to-device copy between
    overlapping ranges of one block, which must move the bytes as memmove does."""
    n = (1 << 21) + 13
    ptr = _block(sim, n)
    data = _data(n, seed=5)
    sim.aclrtMemcpy(ptr, n, data, n, sim.ACL_MEMCPY_HOST_TO_DEVICE)
    np.testing.assert_array_equal(_read(sim, ptr, n), data)
    ffi = sim._lib().ffi
    for shift in (300_001, -300_001):
        src, dst, count = (0, shift, n - shift) if shift > 0 else (-shift, 0, n + shift)
        sim.aclrtMemcpy(ffi.cast("char *", ptr) + dst, count, ffi.cast("char *", ptr) + src, count,
                        sim.ACL_MEMCPY_DEVICE_TO_DEVICE)
        data[dst:dst + count] = data[src:src + count].copy()
        np.testing.assert_array_equal(_read(sim, ptr, n), data)
    sim.aclrtMemset(ffi.cast("char *", ptr) + 5, n - 10, 9, n - 10)
    data[5:n - 5] = 9
    np.testing.assert_array_equal(_read(sim, ptr, n), data)
    sim.aclrtFree(ptr)


def test_an_output_a_kernel_writes_whole(sim_lib):
    """A kernel that writes every element of its output (the elementwise ones) gets only the
    padding of a new block filled when the output's view covers the block from its start
    (executor.c, prepare_output); any other view of a new block (strided, shifted, shorter)
    gets the whole block filled first, so the elements the kernel does not reach read as
    0xFF."""
    x = np.arange(-100, 150, dtype=np.float32)  # 250 floats: N bytes
    filled = np.full(250, 0xFFFFFFFF, np.uint32)
    with Tensor.from_numpy(x, backend="sim") as xt:
        for reuse in range(2):  # a fresh block, then one from the free-block cache, dirtied
            trim_all()
            with Tensor.empty((250,), np.float32, backend="sim") as out:
                aclnn_py.call("aclnnRelu", xt, out, backend="sim")
                np.testing.assert_array_equal(out.numpy(), np.maximum(x, 0))
                aclnn_py.call("aclnnMuls", xt, -1.0, out, backend="sim")
                np.testing.assert_array_equal(out.numpy(), -x)
        half = xt.view((125,), (1,), 0)
        for strides, offset, written in (((2,), 0, slice(0, 250, 2)), ((1,), 125, slice(125, 250)),
                                         ((1,), 0, slice(0, 125))):
            trim_all()  # a block from aclrtMalloc, not one the binding's pool kept
            with Tensor.empty((250,), np.float32, backend="sim") as out:
                aclnn_py.call("aclnnRelu", half, out.view((125,), strides, offset), backend="sim")
                want = filled.copy()
                want[written] = np.maximum(x[:125], 0).view(np.uint32)
                np.testing.assert_array_equal(out.numpy().view(np.uint32), want)
        trim_all()
        with Tensor.empty((250,), np.float32, backend="sim") as out:  # as many elements, one address
            aclnn_py.call("aclnnRelu", xt, out.view((250,), (0,), 0), backend="sim")
            np.testing.assert_array_equal(out.numpy().view(np.uint32)[1:], filled[1:])
