"""Interop: every CPU array-like is a tensor argument on every backend, one int stands for a list
of equal values, ``np.asarray(Tensor)`` downloads, and a torch_npu tensor (here a stand-in with
its interface over simulator device memory) is used in place."""

from __future__ import annotations

import numpy as np
import pytest

import aclnn_py
from aclnn_py import Tensor

RNG = np.random.default_rng(11)
SELF = RNG.standard_normal((2, 3, 6, 6)).astype(np.float32)
GRAD = RNG.standard_normal((2, 3, 3, 3)).astype(np.float32)
API = "aclnnAvgPool2dBackwardGetWorkspaceSize"


def pool(grad, self, backend):
    return aclnn_py.avg_pool2d_backward(grad, self, [2], [2], [0], False, True, None, backend=backend)


def expected():
    return pool(GRAD, SELF, "numpy")


class OnlyArray:
    """An object NumPy reads through ``__array__`` alone."""

    def __init__(self, array):
        self._array = array

    def __array__(self, dtype=None, copy=None):
        return self._array if dtype is None else self._array.astype(dtype)


class OnlyDlpack:
    """An object NumPy reads through ``__dlpack__`` alone."""

    def __init__(self, array):
        self._array = array

    def __dlpack__(self, **kwargs):
        return self._array.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self._array.__dlpack_device__()


FORMS = {
    "ndarray": lambda a: a,
    "strided view": lambda a: np.repeat(a, 2, axis=-1)[..., ::2],
    "memoryview": memoryview,
    "__array__": OnlyArray,
    "__dlpack__": OnlyDlpack,
}


@pytest.mark.parametrize("form", FORMS)
def test_array_likes_are_tensors(backend, form):
    make = FORMS[form]
    out = pool(make(GRAD), make(SELF), backend)
    assert type(out) is np.ndarray
    np.testing.assert_allclose(out, expected(), rtol=1e-6, atol=1e-6)


def test_torch_cpu_tensors_are_tensors(backend, torch):
    go, x = torch.from_numpy(GRAD), torch.from_numpy(SELF)
    out = pool(go, x, backend)
    assert type(out) is np.ndarray
    np.testing.assert_allclose(out, expected(), rtol=1e-6, atol=1e-6)
    # A non-contiguous torch view, and every operator takes torch tensors.
    wide = torch.from_numpy(np.repeat(GRAD, 2, axis=-1))[..., ::2]
    np.testing.assert_allclose(pool(wide, x, backend), expected(), rtol=1e-6, atol=1e-6)
    grad = torch.ones(1, 2 * 4, 9)
    np.testing.assert_array_equal(aclnn_py.im2col_backward(grad, [4, 4], 2, 1, 0, 1, backend=backend),
                                  aclnn_py.im2col_backward(grad.numpy(), [4, 4], 2, 1, 0, 1, backend="numpy"))


def test_torch_bfloat16_tensors(backend, torch):
    go, x = GRAD.astype(aclnn_py.bfloat16), SELF.astype(aclnn_py.bfloat16)
    as_torch = [torch.from_numpy(a.view(np.int16)).view(torch.bfloat16) for a in (go, x)]
    out = pool(*as_torch, backend)
    assert out.dtype == aclnn_py.bfloat16
    np.testing.assert_array_equal(out, pool(go, x, backend))


def test_torch_tensor_that_requires_grad_is_a_type_error(backend, torch):
    go = torch.from_numpy(GRAD).requires_grad_()
    with pytest.raises(TypeError, match=f"^{API}: gradOutput \\(Tensor\\) cannot be read as a CPU array"):
        pool(go, SELF, backend)


@pytest.mark.parametrize("value", [[[0.0]], (0.0,), 1.0, "x", None.__class__, np.float32(1)],
                         ids=["list", "tuple", "float", "str", "type", "numpy scalar"])
def test_non_array_likes_give_one_error_on_every_backend(backends, value):
    messages = set()
    for name in backends:
        with pytest.raises(TypeError) as info:
            pool(value, SELF, name)
        messages.add(str(info.value))
    assert messages == {f"{API}: gradOutput must be an array-like (a NumPy array, or an object with __dlpack__, "
                        f"__array__ or the buffer protocol; on npu and sim also an aclnn_py.Tensor), "
                        f"got {type(value).__name__}"}


def test_one_int_is_a_list_of_equal_values(backend):
    as_list = aclnn_py.avg_pool2d_backward(GRAD, SELF, [3], [2], [1], False, True, None, backend=backend)
    as_int = aclnn_py.avg_pool2d_backward(GRAD, SELF, 3, 2, 1, False, True, None, backend=backend)
    np.testing.assert_array_equal(as_int, as_list)

    cols = RNG.standard_normal((1, 2 * 9, 4)).astype(np.float32)
    np.testing.assert_array_equal(aclnn_py.im2col_backward(cols, [4, 4], 3, 1, 1, 2, backend=backend),
                                  aclnn_py.im2col_backward(cols, [4, 4], [3, 3], [1, 1], [1, 1], [2, 2],
                                                           backend=backend))

    padded = RNG.standard_normal((1, 2, 7, 7)).astype(np.float32)
    x = np.zeros((1, 2, 5, 5), np.float32)
    np.testing.assert_array_equal(aclnn_py.reflection_pad2d_backward(padded, x, 1, backend=backend),
                                  aclnn_py.reflection_pad2d_backward(padded, x, [1, 1, 1, 1], backend=backend))

    inp = RNG.standard_normal((1, 2, 5, 5, 5)).astype(np.float32)
    w = RNG.standard_normal((3, 2, 2, 2, 2)).astype(np.float32)
    go = RNG.standard_normal((1, 3, 3, 3, 3)).astype(np.float32)
    by_int = aclnn_py.convolution_backward(go, inp, w, None, 2, 1, 1, False, 0, 1, [True, True, True],
                                           backend=backend)
    by_list = aclnn_py.convolution_backward(go, inp, w, None, [2] * 3, [1] * 3, [1] * 3, False, [0] * 3, 1,
                                            [True, True, True], backend=backend)
    for a, b in zip(by_int, by_list):
        np.testing.assert_array_equal(a, b)


# -- device tensors --------------------------------------------------------------------------


def test_asarray_downloads_a_tensor(sim_lib):
    with Tensor.from_numpy(SELF, backend="sim") as t:
        np.testing.assert_array_equal(np.asarray(t), SELF)
        assert np.asarray(t, dtype=np.float64).dtype == np.float64
        np.testing.assert_array_equal(np.array(t, copy=True), SELF)
        with pytest.raises(ValueError, match="without a copy"):
            np.asarray(t, copy=False)


@pytest.mark.parametrize("shape, strides, offset, copied", [
    ((2, 3, 6, 6), (108, 36, 6, 1), 0, 216),    # the whole Tensor
    ((1, 3, 6, 6), (108, 36, 6, 1), 108, 108),  # the second image: its bytes alone
    ((3, 1, 6), (6, 999, 1), 42, 18),          # a run of rows, a dimension of 1 with any stride
    ((), (), 7, 1),                             # one element
    ((2, 0, 6), (108, 6, 1), 0, 0),             # empty: nothing copied
    ((6, 6), (1, 6), 36, 216),                  # a transposed plane: the buffer, then the view
])
def test_numpy_copies_a_contiguous_view_once(sim_lib, monkeypatch, shape, strides, offset, copied):
    """``Tensor.numpy`` of a view: the values NumPy's own view of the same bytes has; a view
    that is contiguous (dimensions of 1 aside) is copied from the device once, its own bytes
    straight into the result; any other view by way of the whole buffer."""
    flat = SELF.reshape(-1)
    with Tensor.from_numpy(flat, backend="sim") as t:
        view = t.view(shape, strides, offset)
        want = np.lib.stride_tricks.as_strided(flat[offset:], shape, [s * 4 for s in strides]) if shape else flat[offset]
        sizes: list[int] = []
        call = sim_lib.call

        def counting(name, *args):
            if name == "aclrtMemcpy":
                sizes.append(int(args[3]))
            return call(name, *args)

        monkeypatch.setattr(sim_lib, "call", counting)
        got = view.numpy()
        monkeypatch.undo()
        assert got.shape == shape and got.flags.c_contiguous
        np.testing.assert_array_equal(got, want)
        assert sum(sizes) == copied * 4 and len(sizes) == (1 if copied else 0)


def test_tensor_results_for_tensor_inputs(sim_lib):
    with Tensor.from_numpy(GRAD, backend="sim") as g:
        out = pool(g, SELF, "sim")
        assert isinstance(out, Tensor)
        np.testing.assert_allclose(np.asarray(out), expected(), rtol=1e-6, atol=1e-6)
        out.close()


class _TorchDtype:
    def __init__(self, name):
        self.name = name

    def __str__(self):
        return f"torch.{self.name}"


class _Device:
    type = "npu"


class NpuStandIn:
    """The torch_npu tensor interface over device memory the test owns."""

    device = _Device()

    def __init__(self, address, shape, strides, offset, dtype="float32"):
        self._address, self.shape, self._strides, self._offset = address, shape, strides, offset
        self.dtype = _TorchDtype(dtype)
        self.itemsize = 4

    def data_ptr(self):
        return self._address + self._offset * self.itemsize  # torch_npu's includes the offset

    def stride(self):
        return self._strides

    def storage_offset(self):
        return self._offset


def _on_sim_device(sim_lib, array):
    buffer = aclnn_py._runtime.tensor.DeviceBuffer(sim_lib, array.nbytes)
    buffer.upload(array.ctypes.data, array.nbytes)
    return buffer, int(sim_lib.ffi.cast("uintptr_t", buffer.ptr))


def test_torch_npu_tensor_is_used_in_place(sim_lib):
    # gradOutput lies inside a larger storage, at an offset and with a stride along W.
    storage = np.zeros(7 + 2 * 3 * 3 * 6, np.float32)
    storage[7:].reshape(2, 3, 3, 6)[..., ::2] = GRAD
    buffer, address = _on_sim_device(sim_lib, storage)
    grad = NpuStandIn(address, (2, 3, 3, 3), (54, 18, 6, 2), 7)
    out = pool(grad, SELF, "sim")
    assert isinstance(out, Tensor)
    np.testing.assert_allclose(np.asarray(out), expected(), rtol=1e-6, atol=1e-6)
    # Nothing was copied: a change to the caller's memory shows in the next call.
    storage[7:].reshape(2, 3, 3, 6)[..., ::2] = 2 * GRAD
    buffer.upload(storage.ctypes.data, storage.nbytes)
    np.testing.assert_allclose(np.asarray(pool(grad, SELF, "sim")), 2 * expected(), rtol=1e-6, atol=1e-6)
    buffer.free()


def test_torch_npu_tensor_checks(sim_lib):
    buffer, address = _on_sim_device(sim_lib, np.zeros(64, np.float32))
    with pytest.raises(TypeError, match=f"^{API}: gradOutput dtype torch.float8_e4m3fn has no aclDataType"):
        pool(NpuStandIn(address, (2, 3, 3, 3), (27, 9, 3, 1), 0, "float8_e4m3fn"), SELF, "sim")
    with pytest.raises(ValueError, match="strides must be >= 0"):
        pool(NpuStandIn(address, (2, 3, 3, 3), (27, 9, -3, 1), 0), SELF, "sim")
    with pytest.raises(TypeError, match=f"^{API}: gradOutput is an npu device tensor; the numpy backend"):
        pool(NpuStandIn(address, (2, 3, 3, 3), (27, 9, 3, 1), 0), SELF, "numpy")
    buffer.free()


CASES = {
    "im2col_backward": (2, 3, 9, 8),
    "max_unpool2d_backward": (2, 3, 4, 5),
    "reflection_pad2d_backward": (2, 3, 6, 7),
    "avg_pool2d_backward": (2, 3, 8, 8),
    "convolution_backward": (2, 4, 7, 7),
}


@pytest.mark.parametrize("op", CASES)
def test_every_operator_takes_torch_tensors_and_memoryviews(backend, torch, op):
    from aclnn_py.ops._registry import by_name

    params = {"convolution_backward": {"out_channels": 4}}.get(op, {})
    call = by_name(op).case(np.random.default_rng(3), CASES[op], np.dtype(np.float32), **params)
    fn = getattr(aclnn_py, op)
    expected = fn(*call.args, backend=backend)
    for convert in (torch.from_numpy, memoryview):
        args = [convert(a) if isinstance(a, np.ndarray) else a for a in call.args]
        got = fn(*args, backend=backend)
        as_tuple = (lambda r: r if isinstance(r, tuple) else (r,))
        for g, e in zip(as_tuple(got), as_tuple(expected)):
            assert type(g) is np.ndarray
            np.testing.assert_array_equal(g, e)
