"""inplace_add (aclnnInplaceAdd): selfRef written in place, values against PyTorch's ``add_`` for
every documented dtype, promotion cast back to selfRef's dtype, strided and aliased views, device
Tensors, ``call``/``prepare`` with CANN's names (the invalid inputs: invalid_cases.py)."""

from __future__ import annotations

import numpy as np
import pytest

import aclnn_py
from aclnn_py import bfloat16
from aclnn_py.ops.inplace_add import DTYPES
from helpers import assert_close, random_array

LOW = (np.dtype(np.float16), bfloat16)


def _torch_add_(torch, a, b, alpha):
    """PyTorch's ``a.add_(b, alpha)`` on copies, float16/bfloat16 computed in float32 and rounded
    once to a's dtype (as the backends)."""
    wide = [np.array(x.astype(np.float32) if x.dtype in LOW else x) for x in (a, b)]
    t = torch.from_numpy(wide[0])
    t.add_(torch.from_numpy(wide[1]), alpha=alpha)
    return t.numpy().astype(a.dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_every_documented_dtype_matches_torch_in_place(backend, torch, dtype):
    rng = np.random.default_rng(0)
    a, b = random_array(rng, (2, 3, 4, 5), dtype), random_array(rng, (4, 1), dtype)
    alphas = (1, True) if dtype == np.bool_ else (1, 3) if dtype.kind in "iu" else (1, -0.5)
    for alpha in alphas:
        target = a.copy()
        result = aclnn_py.inplace_add(target, b, alpha, backend=backend)
        assert result is target
        assert_close(target, _torch_add_(torch, a, b, alpha), dtype)


@pytest.mark.parametrize("pair", [(np.float16, np.float32), (bfloat16, np.float32), (np.float16, bfloat16),
                                  (np.float32, np.int64), (np.int32, np.int8), (np.int64, np.bool_),
                                  (np.complex64, np.float64), (np.float64, np.float16)], ids=str)
def test_the_promoted_sum_is_cast_back_to_self_refs_dtype(backend, torch, pair):
    rng = np.random.default_rng(1)
    a, b = random_array(rng, (3, 5), pair[0]), random_array(rng, (5,), pair[1])
    target = a.copy()
    aclnn_py.inplace_add(target, b, 2, backend=backend)
    assert target.dtype == a.dtype
    wide = [x.astype(np.float32) if x.dtype in LOW else x for x in (a, b)]
    expected = torch.from_numpy(wide[0]).to(torch.promote_types(torch.from_numpy(wide[0]).dtype,
                                                                 torch.from_numpy(wide[1]).dtype))
    expected = expected.add(torch.from_numpy(wide[1]), alpha=2).numpy()
    assert_close(target, expected.astype(a.dtype), a.dtype)


def test_sgd_step_float16_weight_alpha_as_float(backend):
    w = np.array([1.0, 2.0, -3.0], np.float16)
    g = np.array([0.5, 0.25, 1.0], np.float16)
    aclnn_py.inplace_add(w, g, -0.1, backend=backend)
    expected = (np.array([1.0, 2.0, -3.0], np.float32) - np.float32(0.1) * np.array([0.5, 0.25, 1.0], np.float32))
    np.testing.assert_array_equal(w, expected.astype(np.float16))


def test_integers_wrap(backend):
    a = np.array([120, -128], np.int8)
    aclnn_py.inplace_add(a, np.array([10, -1], np.int8), backend=backend)
    np.testing.assert_array_equal(a, np.array([-126, 127], np.int8))


def test_strided_self_ref_writes_its_elements_only(backend):
    rng = np.random.default_rng(2)
    base = rng.standard_normal((6, 8)).astype(np.float32)
    original = base.copy()
    view = base[1::2, ::3].T  # non-contiguous, transposed, with gaps
    other = rng.standard_normal(view.shape[1:]).astype(np.float32)
    aclnn_py.inplace_add(view, other, -2.0, backend=backend)
    expected = original.copy()
    expected[1::2, ::3] = (original[1::2, ::3].T - 2 * other).T
    np.testing.assert_allclose(base, expected, rtol=1e-6)


def test_other_overlapping_self_ref_reads_the_original_values(backend):
    x = np.arange(8, dtype=np.float32)
    expected = x.copy()
    expected[1:] += x[:7]
    aclnn_py.inplace_add(x[1:], x[:7], backend=backend)
    np.testing.assert_array_equal(x, expected)
    y = np.arange(4, dtype=np.float32)
    aclnn_py.inplace_add(y, y, 3, backend=backend)
    np.testing.assert_array_equal(y, np.arange(4, dtype=np.float32) * 4)


def test_empty_writes_nothing(backend):
    a = np.ones((2, 0), np.float32)
    assert aclnn_py.inplace_add(a, np.ones((0,), np.float32), backend=backend) is a
    b = np.ones((3, 1), np.float32)
    with pytest.raises(aclnn_py.AclnnError):  # (0 does not broadcast into 1: selfRef's shape would change)
        aclnn_py.inplace_add(b, np.ones((0,), np.float32), backend=backend)
    np.testing.assert_array_equal(b, 1)


def test_read_only_self_ref_is_refused_before_anything_runs(backend):
    a = np.ones(3, np.float32)
    a.flags.writeable = False
    with pytest.raises(TypeError, match="selfRef.*writable"):
        aclnn_py.inplace_add(a, np.ones(3, np.float32), backend=backend)
    w = np.ones(3, np.float32)
    aclnn_py.inplace_add(w, np.ones(3, np.float32), backend=backend)  # the same shapes, writable: a plan
    with pytest.raises(TypeError, match="selfRef.*writable"):
        aclnn_py.inplace_add(a, np.ones(3, np.float32), backend=backend)  # the plan checks it too
    np.testing.assert_array_equal(a, 1)


def test_repeated_calls_accumulate(backend):
    w = np.zeros(5, np.float32)
    g = np.ones(5, np.float32)
    for _ in range(4):
        aclnn_py.inplace_add(w, g, -0.5, backend=backend)
    np.testing.assert_array_equal(w, -2.0)


def test_call_and_prepare_write_self_ref_by_cann_names(backend):
    x = np.ones(4, np.float32)
    assert aclnn_py.call("aclnnInplaceAdd", selfRef=x, other=np.arange(4, dtype=np.float32), alpha=2,
                         backend=backend) is x
    np.testing.assert_array_equal(x, 1 + 2 * np.arange(4))
    y = np.zeros((2, 3), np.float32)
    with aclnn_py.prepare("aclnnInplaceAdd", y, np.ones(3, np.float32), 1, backend=backend) as run:
        np.testing.assert_array_equal(y, 0)  # phase 1 writes nothing
        run(y, np.ones(3, np.float32), 1)
        run(y, np.ones(3, np.float32), 1)
    np.testing.assert_array_equal(y, 2)


def test_device_tensor_views_are_written_in_place(sim_lib):
    rng = np.random.default_rng(3)
    base = rng.standard_normal((6, 4)).astype(np.float32)
    g = rng.standard_normal((4, 6)).astype(np.float32)
    with aclnn_py.Tensor.from_numpy(base, backend="sim") as t:
        view = t.view((4, 6), (1, 4), 0)  # the transpose
        assert aclnn_py.inplace_add(view, g, -1.0, backend="sim") is view
        np.testing.assert_allclose(t.numpy(), (base.T - g).T, rtol=1e-6)
    with aclnn_py.Tensor.from_numpy(np.zeros(10, np.float32), backend="sim") as t:
        aclnn_py.inplace_add(t.view((3,), (3,), 1), np.ones(3, np.float32), backend="sim")
        np.testing.assert_array_equal(t.numpy(), [0, 1, 0, 0, 1, 0, 0, 1, 0, 0])


def test_a_device_tensor_on_numpy_is_refused(sim_lib):
    with aclnn_py.Tensor.from_numpy(np.zeros(3, np.float32), backend="sim") as t:
        with pytest.raises(TypeError, match="selfRef.*npu' or 'sim'"):
            aclnn_py.inplace_add(t, np.ones(3, np.float32), backend="numpy")


def test_tools_see_the_original_input_each_time(backend):
    from aclnn_py.ops._registry import by_name
    op = by_name("inplace_add")
    w, g = np.ones(3, np.float32), np.ones(3, np.float32)
    fresh = op.fresh((w, g, 2))
    assert fresh[0] is not w and fresh[1] is g
    aclnn_py.inplace_add(*fresh, backend=backend)
    np.testing.assert_array_equal(w, 1)
    restore = op.restorer(fresh)
    aclnn_py.inplace_add(*fresh, backend=backend)
    restore()
    np.testing.assert_array_equal(fresh[0], 3)
    result = aclnn_py.compare("inplace_add", w, g, 2, backends=("sim", "numpy")) if backend == "sim" else None
    assert result is None or result.passed
    np.testing.assert_array_equal(w, 1)


def test_a_large_float32_step_matches_torch(backend, torch):
    # (an SGD-sized step: the numpy backend's pieces on its worker threads)
    rng = np.random.default_rng(4)
    w, g = rng.standard_normal((640, 512), dtype=np.float32), rng.standard_normal((640, 512), dtype=np.float32)
    expected = torch.from_numpy(w.copy()).add_(torch.from_numpy(g), alpha=-0.01).numpy()
    aclnn_py.inplace_add(w, g, -0.01, backend=backend)
    assert_close(w, expected, np.float32)


@pytest.mark.parametrize("alpha", [1, 0.5], ids=["alpha1", "alpha0.5"])
@pytest.mark.parametrize("shape, other_shape", [((256, 256), (256, 256)), ((256, 256), (256,)), ((4, 64), (4, 64))],
                         ids=["large", "large-broadcast", "small"])
def test_large_and_small_calls_alike(backend, torch, shape, other_shape, alpha):
    """A call large enough for the worker machinery (``workers.on_caller``) and a small one,
    whole or broadcast, against PyTorch."""
    rng = np.random.default_rng(7)
    a, b = random_array(rng, shape, np.float32), random_array(rng, other_shape, np.float32)
    expected = _torch_add_(torch, a, b, alpha)
    assert aclnn_py.inplace_add(a, b, alpha, backend=backend) is a
    assert_close(a, expected, np.float32)
