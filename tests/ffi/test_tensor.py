"""Device tensors and arrays on the simulator: round trips, views, ownership."""

from __future__ import annotations

import gc

import numpy as np
import pytest

import aclnn_py
from aclnn_py import Tensor
from aclnn_py._convert.arrays import BoolArray, IntArray, Scalar
from aclnn_py._runtime import pool
from aclnn_py._runtime.resources import Transaction


def counters(lib) -> dict[str, int]:
    """The simulator's live handles and device bytes, the caching allocator's blocks freed first
    (they are the binding's on purpose: ``aclnn_py._runtime.pool``)."""
    pool.trim_all()
    c = lib.ffi.new("aclsimCounters *")
    lib.call("aclsimGetCounters", c)
    return {f: getattr(c, f) for f, _ in lib.ffi.typeof("aclsimCounters").fields}


@pytest.mark.parametrize("dtype", [np.float32, np.float16, aclnn_py.bfloat16, np.float64, np.int64, np.int8,
                                   np.bool_, np.complex64, np.complex128])
def test_round_trip(sim_lib, dtype):
    a = (np.arange(24).reshape(2, 3, 4) % 5).astype(dtype)
    with Tensor.from_numpy(a, backend="sim") as t:
        assert t.shape == (2, 3, 4) and t.dtype == np.dtype(dtype) and t.strides == (12, 4, 1)
        np.testing.assert_array_equal(t.numpy(), a)


def test_strided_view_keeps_strides(sim_lib):
    base = np.arange(60, dtype=np.float32).reshape(3, 4, 5)
    v = base[:, ::2, 1:4].transpose(0, 2, 1)
    with Tensor.from_numpy(v, backend="sim") as t:
        assert t.strides == tuple(s // 4 for s in v.strides)
        np.testing.assert_array_equal(t.numpy(), v)


def test_negative_strides_are_copied(sim_lib):
    v = np.arange(12, dtype=np.float32).reshape(3, 4)[::-1, ::-1]
    with Tensor.from_numpy(v, backend="sim") as t:
        assert all(s > 0 for s in t.strides)
        np.testing.assert_array_equal(t.numpy(), v)


def test_empty_tensor(sim_lib):
    with Tensor.from_numpy(np.zeros((0, 3), np.float32), backend="sim") as t:
        assert t.numpy().shape == (0, 3)


def test_wrong_types(sim_lib):
    with pytest.raises(TypeError):
        Tensor.from_numpy([1.0, 2.0], backend="sim")
    with pytest.raises(TypeError):
        Tensor.from_numpy(np.array(["a"]), backend="sim")


def test_numpy_backend_has_no_device_tensors():
    with pytest.raises(aclnn_py.AclnnError, match="backend 'npu' or 'sim'"):
        Tensor.from_numpy(np.zeros(3, np.float32), backend="numpy")


def test_every_handle_released_once(sim_lib):
    gc.collect()
    sim_lib.synchronize()
    before = counters(sim_lib)
    t = Tensor.from_numpy(np.arange(16, dtype=np.float32).reshape(4, 4), backend="sim")
    v = t.view((2, 2), (8, 1), 1)
    arrays = [IntArray([1, 2, 3], backend="sim"), BoolArray([True, False], backend="sim"),
              Scalar(1.5, np.float32, backend="sim")]
    during = counters(sim_lib)
    assert during["tensors"] == before["tensors"] + 2 and during["device_blocks"] == before["device_blocks"] + 1
    np.testing.assert_array_equal(v.numpy(), [[1, 2], [9, 10]])  # offset 1, strides (8, 1)
    t.close()
    t.close()  # idempotent
    assert counters(sim_lib)["device_blocks"] == during["device_blocks"]  # the view still holds it
    del v, arrays
    gc.collect()
    assert counters(sim_lib) == before


def test_transaction_releases_in_reverse_on_error():
    order = []
    with pytest.raises(ValueError):
        with Transaction() as tx:
            tx.add(order.append, 1)
            tx.add(order.append, 2)
            raise ValueError
    assert order == [2, 1]
    with Transaction() as tx:
        tx.add(order.append, 3)
        tx.keep()
    assert order == [2, 1]


def test_shapes_and_strides_are_int64_sequences():
    """Plain ints take the quick check, anything else the element-by-element one: same rules."""
    from aclnn_py._runtime.tensor import _dims

    assert _dims("api", "shape", (2, 3)) == (2, 3) and _dims("api", "shape", [2, 3]) == (2, 3)
    assert _dims("api", "shape", (np.int64(2), 3)) == (2, 3)
    assert _dims("api", "shape", np.array([4, 5])) == (4, 5)
    assert _dims("api", "shape", ()) == ()
    with pytest.raises(TypeError, match=r"api: shape\[1\] must be an int, got bool"):
        _dims("api", "shape", (2, True))
    with pytest.raises(TypeError, match=r"shape\[0\] must be an int, got float"):
        _dims("api", "shape", [2.0])
    with pytest.raises(ValueError, match=r"api: strides\[0\] = 9223372036854775808 does not fit in int64"):
        _dims("api", "strides", (2**63,))
    assert _dims("api", "strides", (-(2**63), 2**63 - 1)) == (-(2**63), 2**63 - 1)
    with pytest.raises(TypeError, match="must be a sequence of ints, got str"):
        _dims("api", "shape", "23")


def test_empty_cache_gives_the_kept_blocks_back(sim_lib):
    """A closed Tensor's block stays with the caching allocator (the device still counts it)
    until ``aclnn_py.empty_cache()``; on numpy it does nothing."""
    def device_blocks() -> int:
        c = sim_lib.ffi.new("aclsimCounters *")
        sim_lib.call("aclsimGetCounters", c)
        return int(c.device_blocks)

    gc.collect()
    sim_lib.synchronize()
    aclnn_py.empty_cache()
    before = device_blocks()
    t = Tensor.from_numpy(np.arange(12, dtype=np.float32), backend="sim")
    assert device_blocks() == before + 1
    t.close()
    sim_lib.synchronize()
    assert device_blocks() == before + 1  # kept for the next Tensor of its size
    aclnn_py.empty_cache()
    assert device_blocks() == before
    with aclnn_py.use_backend("numpy"):
        aclnn_py.empty_cache()
