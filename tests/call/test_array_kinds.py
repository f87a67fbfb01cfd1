"""Every kind of array the three paths take (the op function, ``call``, ``prepare``), as input
and as output, on every backend: C and Fortran order, strided slices, read-only arrays, 0-d
arrays. One conversion layer serves all three (aclnn_py/_convert): the same array gives the
same answer, or the same error, on each path and backend."""

from __future__ import annotations

import numpy as np
import pytest

import aclnn_py
from aclnn_py import AclnnError
from helpers import assert_close
from reference.reflection_pad2d_backward import reflection_pad2d_backward as pad_reference

PAD = "aclnnReflectionPad2dBackward"
PADDING = [1, 2, 2, 1]
SHAPE = (2, 3, 5, 6)
GRAD_SHAPE = (2, 3, 5 + 3, 6 + 3)


def _layouts(shape: tuple[int, ...], rng: np.random.Generator) -> dict[str, np.ndarray]:
    """One array of ``shape`` per kind: each a view of float32 data with its own memory layout."""
    c = rng.standard_normal(shape).astype(np.float32)
    fortran = np.asfortranarray(c)
    wide = np.zeros(shape[:-1] + (2 * shape[-1],), np.float32)
    strided = wide[..., ::2]
    strided[...] = c
    reversed_ = np.ascontiguousarray(c[..., ::-1])[..., ::-1]  # negative strides
    transposed = np.ascontiguousarray(np.swapaxes(c, -1, -2)).swapaxes(-1, -2)
    read_only = c.copy()
    read_only.flags.writeable = False
    return {"C": c, "F": fortran, "strided": strided, "negative strides": reversed_, "transposed": transposed,
            "read-only": read_only}


KINDS = list(_layouts((1, 1), np.random.default_rng(0)))


def _run(path: str, backend: str, grad: np.ndarray, x: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    if path == "function":
        return aclnn_py.reflection_pad2d_backward(grad, x, PADDING, backend=backend)
    if out is None:
        out = np.empty(x.shape, x.dtype)
    if path == "call":
        result = aclnn_py.call(PAD, grad, x, PADDING, out, backend=backend)
    else:
        with aclnn_py.prepare(PAD, grad, x, PADDING, out, backend=backend) as run:
            result = run(grad, x, PADDING, out)
    assert result is out  # the output is written in place and returned
    return out


@pytest.mark.parametrize("path", ["function", "call", "prepare"])
@pytest.mark.parametrize("kind", KINDS)
def test_every_input_layout(backend, path, kind):
    rng = np.random.default_rng(1)
    grad = _layouts(GRAD_SHAPE, rng)[kind]
    x = _layouts(SHAPE, rng)[kind]
    before = grad.copy()
    got = _run(path, backend, grad, x)
    assert_close(got, pad_reference(grad, x, PADDING), np.float32)
    np.testing.assert_array_equal(grad, before)  # an input is never written


@pytest.mark.parametrize("path", ["call", "prepare"])
@pytest.mark.parametrize("kind", [k for k in KINDS if k != "read-only"])
def test_every_writable_output_layout(backend, path, kind):
    """The result is written back into the output array the caller passed, whatever its layout,
    and nothing around a strided view of a larger buffer is touched."""
    rng = np.random.default_rng(2)
    grad = rng.standard_normal(GRAD_SHAPE).astype(np.float32)
    x = rng.standard_normal(SHAPE).astype(np.float32)
    wide = np.full(SHAPE[:-1] + (2 * SHAPE[-1],), 7.0, np.float32)
    out = wide[..., ::2] if kind == "strided" else _layouts(SHAPE, rng)[kind]
    _run(path, backend, grad, x, out)
    assert_close(out, pad_reference(grad, x, PADDING), np.float32)
    if kind == "strided":
        assert (wide[..., 1::2] == 7.0).all()


@pytest.mark.parametrize("path", ["call", "prepare"])
def test_a_read_only_output_is_refused(backend, path):
    rng = np.random.default_rng(3)
    grad = rng.standard_normal(GRAD_SHAPE).astype(np.float32)
    x = rng.standard_normal(SHAPE).astype(np.float32)
    out = np.zeros(SHAPE, np.float32)
    out.flags.writeable = False
    with pytest.raises(TypeError, match="gradInput is an output .* must be writable"):
        _run(path, backend, grad, x, out)
    assert (out == 0).all()


@pytest.mark.parametrize("path", ["function", "call", "prepare"])
def test_a_0d_array_is_a_tensor_the_operator_refuses(backend, path):
    """A 0-d array is converted like any array (an aclTensor of rank 0), and the operator's
    checks refuse it with the same status and message on every path and backend."""
    x = np.zeros(SHAPE, np.float32)
    with pytest.raises(AclnnError) as info:
        _run(path, backend, np.ones((), np.float32), x)
    assert info.value.status == 161002
    assert "gradOutput" in info.value.message or "format" in info.value.message


@pytest.mark.parametrize("path", ["call", "prepare"])
def test_a_0d_output_is_refused(backend, path):
    """(The simulator reports the output's ND format against the inputs' NCHW, as CANN's
    checks do; the numpy backend, which checks outputs after its kernel, their shape.)"""
    rng = np.random.default_rng(4)
    grad = rng.standard_normal(GRAD_SHAPE).astype(np.float32)
    x = rng.standard_normal(SHAPE).astype(np.float32)
    with pytest.raises(AclnnError) as info:
        _run(path, backend, grad, x, np.zeros((), np.float32))
    assert info.value.status == 161002 and "gradInput" in info.value.message


def test_a_0d_tensor_stays_0d(sim_lib):
    value = np.array(2.5, np.float32)
    with aclnn_py.Tensor.from_numpy(value, backend="sim") as t:
        assert t.shape == () and np.asarray(t).shape == () and np.asarray(t) == value
    with pytest.raises(AclnnError, match="device tensors need backend 'npu' or 'sim'"):
        aclnn_py.Tensor.from_numpy(value, backend="numpy")


def test_an_ndarray_subclass_is_read_as_its_data(backends):
    """np.matrix (2-D only) as im2col_backward's 2-D gradOutput: every backend reads it as the
    plain array over the same memory (the numpy backend's kernels used to index it as a matrix)."""
    rng = np.random.default_rng(5)
    plain = rng.standard_normal((2 * 2 * 2, 9)).astype(np.float32)  # (C * kh * kw, L) for a 4x4 input
    expected = aclnn_py.im2col_backward(plain, [4, 4], [2, 2], [1, 1], [0, 0], [1, 1], backend="numpy")
    for backend in backends:
        got = aclnn_py.im2col_backward(np.matrix(plain), [4, 4], [2, 2], [1, 1], [0, 0], [1, 1], backend=backend)
        assert type(got) is np.ndarray
        assert_close(got, expected, np.float32)
