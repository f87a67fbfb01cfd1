"""The Python layer refuses every pointer, size, shape or stride that would let the library
read or write outside the memory given. Anything that crashed before runs in a subprocess,
so a crash is a test failure, not a dead test run."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import aclnn_py
from aclnn_py import AclnnError, Tensor, capi
from aclnn_py._convert.arrays import BoolArray, FloatArray, IntArray, Scalar
from aclnn_py._runtime.tensor import DeviceBuffer

from test_tensor import counters


def run_isolated(code: str) -> str:
    """Run ``code`` on sim in a fresh interpreter; its stdout. A crash (signal) or an
    exception fails the test with the child's output."""
    env = dict(os.environ, ACLNN_PY_BACKEND="sim")
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          env=env, timeout=120)
    assert proc.returncode == 0, f"child exited with {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout


def test_view_outside_buffer_is_refused_not_read(sim_lib):
    out = run_isolated("""
        import numpy as np
        from aclnn_py import Tensor
        t = Tensor.from_numpy(np.arange(10, dtype=np.float32), backend="sim")
        for shape, strides, offset in [((10**8,), (1,), 0), ((10**6, 10**6), (10**6, 1), 0), ((11,), (1,), 0)]:
            try:
                t.view(shape, strides, offset).numpy()
            except ValueError as e:
                print("refused", "outside its storage of 10 elements" in str(e))
            else:
                print("accepted")
    """)
    assert out.split() == ["refused", "True"] * 3


def test_view_bounds_exactly(sim_lib):
    with Tensor.from_numpy(np.arange(10, dtype=np.float32), backend="sim") as t:
        np.testing.assert_array_equal(t.view((5,), (2,), 1).numpy(), [1, 3, 5, 7, 9])  # last element 9: inside
        np.testing.assert_array_equal(t.view((2, 3), (4, 2), 1).numpy(), [[1, 3, 5], [5, 7, 9]])
        np.testing.assert_array_equal(t.view((0, 10**6), (10**6, 1), 0).numpy(), np.empty((0, 10**6)))
        for shape, strides, offset, says in [
                ((11,), (1,), 0, "reaches element 10"),
                ((2, 3), (5, 2), 1, "reaches element 10"),
                ((1,), (1,), 10, "reaches element 10"),
                ((2,), (1,), -1, "offset must be >= 0"),
                ((2,), (-1,), 5, "strides must be >= 0"),
                ((-1,), (1,), 0, "negative dimensions"),
                ((2, 2), (1,), 0, "one entry per dimension"),
                ((2**63,), (1,), 0, "does not fit in int64")]:
            with pytest.raises(ValueError, match=says):
                t.view(shape, strides, offset)
        with pytest.raises(TypeError, match="shape"):
            t.view(5, (1,))
        with pytest.raises(TypeError, match=r"strides\[0\]"):
            t.view((5,), (1.5,))
    with pytest.raises(ValueError, match="closed"):
        t.view((1,), (1,))
    with pytest.raises(ValueError, match="closed"):
        t.numpy()


def test_empty_refuses_negative_and_uncountable_shapes(sim_lib):
    before = counters(sim_lib)
    with pytest.raises(ValueError, match="shape must not have negative dimensions"):
        Tensor.empty((-2, -2), np.float32, backend="sim")
    with pytest.raises(ValueError, match="more than int64"):
        Tensor.empty((2**40, 2**40), np.float32, backend="sim")
    # No element, but the row-major strides (a zero dimension counted as one) pass int64: the
    # fuzzer's shape, once an OverflowError from cffi.
    with pytest.raises(ValueError, match="do not fit int64_t"):
        Tensor.empty((11, 2**63 - 1, 2**62, 0, 24), np.float32, backend="sim")
    with aclnn_py.use_backend("sim"), pytest.raises(ValueError, match="do not fit int64_t"):
        capi.aclCreateTensor([2, 2**62, 4, 0], 0, None, 0, 2, [0], None)
    with pytest.raises(TypeError, match="no aclDataType"):
        Tensor.empty((2,), object, backend="sim")
    with pytest.raises(ValueError, match="nbytes must be >= 0"):
        DeviceBuffer(sim_lib, -1)
    assert counters(sim_lib) == before


def test_int_array_out_of_int64_names_the_parameter(sim_lib):
    for bad in ([2**63], [-(2**63) - 1]):
        with pytest.raises(AclnnError, match=r"values\[0\] = .* does not fit in int64") as e:
            IntArray(bad, backend="sim")
        assert e.value.status == 161002
        with aclnn_py.use_backend("sim"), pytest.raises(AclnnError, match=r"values\[0\]"):
            capi.aclCreateIntArray(bad)
    with pytest.raises(TypeError, match=r"values\[1\] must be an int"):
        IntArray([1, 2.5], backend="sim")
    with pytest.raises(TypeError, match="values must be a sequence"):
        IntArray(None, backend="sim")
    with pytest.raises(TypeError, match=r"values\[0\] must be a bool"):
        BoolArray([1], backend="sim")
    with pytest.raises(TypeError, match=r"values\[0\] must be a real number"):
        FloatArray(["x"], backend="sim")
    with pytest.raises(ValueError, match="outside float32's range"):
        FloatArray([1e300], backend="sim")
    with FloatArray([1.5, float("inf")], backend="sim") as f:
        assert f.values == (1.5, float("inf"))


@pytest.fixture
def on_sim(sim_lib):
    with aclnn_py.use_backend("sim"):
        yield sim_lib


def test_scalar_value_is_one_number_of_its_dtype(on_sim):
    with pytest.raises(ValueError, match="does not fit int8"):
        Scalar(300, np.int8, backend="sim")
    with pytest.raises(ValueError, match="one number"):
        Scalar([1, 2], np.float32, backend="sim")
    with pytest.raises(TypeError, match="must be a number"):
        Scalar("1", np.float32, backend="sim")
    with pytest.raises(TypeError, match="no aclDataType"):
        Scalar(1, np.float128 if hasattr(np, "float128") else object, backend="sim")
    with pytest.raises(ValueError, match="does not fit int8"):
        capi.aclCreateScalar(300, capi.ACL_INT8)
    with Scalar(-3, np.int8, backend="sim") as s:
        assert s.value == -3


def test_memcpy_host_side_is_checked(on_sim):
    lib = on_sim
    before = counters(lib)
    p = capi.aclrtMalloc(16)
    try:
        capi.aclrtMemcpy(p, 16, np.arange(16, dtype=np.uint8), 16, capi.ACL_MEMCPY_HOST_TO_DEVICE)
        with pytest.raises(ValueError, match="destMax = 16 exceeds the 2 bytes of host dst"):
            capi.aclrtMemcpy(np.zeros(2, np.uint8), 16, p, 16, capi.ACL_MEMCPY_DEVICE_TO_HOST)
        with pytest.raises(ValueError, match="count = 16 exceeds the 4 bytes of host src"):
            capi.aclrtMemcpy(p, 16, np.zeros(4, np.uint8), 16, capi.ACL_MEMCPY_HOST_TO_DEVICE)
        with pytest.raises(TypeError, match="read-only"):
            capi.aclrtMemcpy(b"\0" * 16, 16, p, 16, capi.ACL_MEMCPY_DEVICE_TO_HOST)
        ro = np.zeros(16, np.uint8)
        ro.flags.writeable = False
        with pytest.raises(TypeError, match="read-only"):
            capi.aclrtMemcpy(ro, 16, p, 16, capi.ACL_MEMCPY_DEVICE_TO_HOST)
        with pytest.raises(ValueError, match="destMax = -1"):
            capi.aclrtMemcpy(p, -1, np.zeros(16, np.uint8), 16, capi.ACL_MEMCPY_HOST_TO_DEVICE)
        with pytest.raises(TypeError, match="C-contiguous"):
            capi.aclrtMemcpy(np.zeros(32, np.uint8)[::2], 16, p, 16, capi.ACL_MEMCPY_DEVICE_TO_HOST)
        with pytest.raises(ValueError, match="exceeds"):
            capi.aclrtMemcpyAsync(np.zeros(2, np.uint8), 16, p, 16, capi.ACL_MEMCPY_DEVICE_TO_HOST, None)
        with pytest.raises(TypeError, match="devPtr"):
            capi.aclrtMemset(np.zeros(16, np.uint8), 16, 0, 16)
        with pytest.raises(ValueError, match="count = -1"):
            capi.aclrtMemset(p, 16, 0, -1)
        out = bytearray(16)
        capi.aclrtMemcpy(out, 16, p, 16, capi.ACL_MEMCPY_DEVICE_TO_HOST)
        assert bytes(out) == bytes(range(16))
    finally:
        capi.aclrtFree(p)
    assert counters(lib) == before


def test_memcpy_into_small_or_immutable_host_memory_does_not_corrupt(sim_lib):
    out = run_isolated("""
        import numpy as np
        from aclnn_py import capi
        capi.aclInit()
        capi.aclrtSetDevice(0)
        p = capi.aclrtMalloc(1 << 20)
        capi.aclrtMemset(p, 1 << 20, 7, 1 << 20)
        for dst in (b"\\0" * 8, np.zeros(8, np.uint8)):
            try:
                capi.aclrtMemcpy(dst, 1 << 20, p, 1 << 20, capi.ACL_MEMCPY_DEVICE_TO_HOST)
            except (TypeError, ValueError) as e:
                print("refused", type(e).__name__)
        capi.aclrtFree(p)
        print("alive")
    """)
    assert out.split() == ["refused", "TypeError", "refused", "ValueError", "alive"]


def test_create_tensor_view_inside_its_storage(on_sim):
    lib = on_sim
    before = counters(lib)
    p = capi.aclrtMalloc(16)
    try:
        with pytest.raises(ValueError, match="outside its storage of 4 elements"):
            capi.aclCreateTensor([100], capi.ACL_FLOAT, None, 0, capi.ACL_FORMAT_ND, [4], p)
        with pytest.raises(ValueError, match="strides must be >= 0"):
            capi.aclCreateTensor([2], capi.ACL_FLOAT, [-1], 3, capi.ACL_FORMAT_ND, [4], p)
        with pytest.raises(ValueError, match="tensorData is NULL"):
            capi.aclCreateTensor([4], capi.ACL_FLOAT, None, 0, capi.ACL_FORMAT_ND, [4], None)
        with pytest.raises(ValueError, match=r"viewDims\[0\] = .* int64"):
            capi.aclCreateTensor([2**64], capi.ACL_FLOAT, None, 0, capi.ACL_FORMAT_ND, [4], p)
        h = capi.aclCreateTensor([2, 2], capi.ACL_FLOAT, [2, 1], 0, capi.ACL_FORMAT_ND, [4], p)
        capi.aclDestroyTensor(h)
    finally:
        capi.aclrtFree(p)
    assert counters(lib) == before


def test_found_by_fuzzing(on_sim):
    lib = on_sim
    before = counters(lib)
    p = capi.aclrtMalloc(64)
    try:
        for kind in (-1, -(2**31), 2**31):
            with pytest.raises(ValueError, match="kind"):
                capi.aclrtMemcpy(p, 8, np.zeros(8, np.uint8), 8, kind)
        with pytest.raises(TypeError, match="int address"):
            capi.aclrtMemcpy(p, 8, 2**31 - 1, 8, capi.ACL_MEMCPY_HOST_TO_DEVICE)  # a random host address
        with pytest.raises(TypeError, match="int address"):
            capi.aclrtMemcpy(np.zeros(8, np.uint8), 8, 12345, 8, capi.ACL_MEMCPY_DEFAULT)
        for size in (-3, 10**30):
            with pytest.raises(ValueError, match="size"):
                capi.aclrtMalloc(size)
        with pytest.raises(TypeError, match="size"):
            capi.aclrtMalloc("16")
    finally:
        capi.aclrtFree(p)
    with Tensor.from_numpy(np.arange(17, dtype=np.float32), backend="sim") as t:
        # A dimension of 1 never steps: a huge stride there is harmless.
        np.testing.assert_array_equal(t.view((1,), [2**62], 10).numpy(), [10])
        # A valid view of one element repeated 2**60 times: no host can hold its copy.
        with pytest.raises(ValueError, match="cannot be allocated"):
            t.view([2**60], (0,), 7).numpy()
    assert counters(lib) == before


def test_c_integer_arguments_out_of_range_are_value_errors(on_sim):
    # cffi raises OverflowError (no parameter named) for a value the C type cannot hold.
    with pytest.raises(ValueError, match="aclrtSetDevice"):
        capi.aclrtSetDevice(2**40)
    with pytest.raises(ValueError, match="aclnnIm2colBackward"):
        capi.aclnnIm2colBackward(None, -1, None, None)
    with pytest.raises(ValueError, match="format"):
        Tensor.from_numpy(np.zeros(2, np.float32), backend="sim", format=2**40)
