"""The matrix products (aclnnMm, aclnnAddmm, aclnnMatmul, aclnnBatchMatMul): values against
PyTorch for every documented dtype and dtype pair, each cubeMathType's compute dtype, transposed
and strided operands, empty and K = 0 products, and ``call`` with CANN's parameter order."""

from __future__ import annotations

import numpy as np
import pytest

import aclnn_py
from aclnn_py._dtypes import bfloat16
from aclnn_py.ops.mm import DTYPES
from helpers import assert_close

BF16 = np.dtype(bfloat16)


def _rand(rng, shape, dtype):
    return rng.standard_normal(shape).astype(np.float32).astype(dtype)


def _torch_product(torch, a, b, compute):
    """The oracle: inputs rounded to the compute dtype, products summed in float64."""
    def t(x):
        x = np.asarray(x)
        if compute != np.float32 and x.dtype != compute:
            x = x.astype(compute)
        return torch.from_numpy(np.ascontiguousarray(x.astype(np.float64)))
    return torch.matmul(t(a), t(b)).numpy()


def _out_dtype(a, b):
    return a if a == b else np.dtype(np.float32)


@pytest.mark.parametrize("a_dtype", DTYPES, ids=str)
@pytest.mark.parametrize("b_dtype", DTYPES, ids=str)
def test_mm_every_dtype_pair_matches_torch(backend, torch, a_dtype, b_dtype):
    rng = np.random.default_rng(0)
    a, b = _rand(rng, (17, 40), a_dtype), _rand(rng, (40, 23), b_dtype)
    result = aclnn_py.mm(a, b, backend=backend)
    out = _out_dtype(a_dtype, b_dtype)
    assert result.dtype == out and result.shape == (17, 23)
    assert_close(result, _torch_product(torch, a, b, np.float32).astype(out), out, scale=2)


@pytest.mark.parametrize("cube", [-1, 0, 1, 2, 3, 4])
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_mm_cube_math_types(backend, torch, cube, dtype):
    rng = np.random.default_rng(cube + 2)
    a, b = _rand(rng, (9, 300), dtype), _rand(rng, (300, 11), dtype)
    result = aclnn_py.mm(a, b, cube, backend=backend)
    compute = dtype if dtype == BF16 else np.dtype(np.float16) if cube == 2 else dtype
    assert_close(result, _torch_product(torch, a, b, compute).astype(dtype), dtype, scale=2, cube_math_type=cube)
    if cube == 2 and dtype == np.float32:  # the inputs were rounded to float16: not the float32 product
        exact = _torch_product(torch, a, b, np.float32)
        assert np.abs(result - exact).max() > 1e-4


def test_mm_transposed_weight_and_strided_views(backend, torch):
    rng = np.random.default_rng(5)
    x, w = _rand(rng, (64, 96), np.float32), _rand(rng, (50, 96), np.float32)   # a linear layer's W (out, in)
    result = aclnn_py.mm(x, w.T, backend=backend)                               # W^T read through its strides
    assert_close(result, (x.astype(np.float64) @ w.T.astype(np.float64)).astype(np.float32), np.float32)
    big, other = _rand(rng, (40, 60), np.float16), _rand(rng, (60, 40), np.float16)
    a, b = big[::2, 1::2], other[::-1, ::2][:30, :17]                          # non-unit strides, negative too
    result = aclnn_py.mm(a, b, backend=backend)
    expected = _torch_product(torch, a, b, np.float32)
    assert_close(result, expected.astype(np.float16), np.float16, scale=2)


def test_mm_empty_and_k_zero(backend):
    assert aclnn_py.mm(np.zeros((0, 4), np.float32), np.zeros((4, 3), np.float32), backend=backend).shape == (0, 3)
    np.testing.assert_array_equal(aclnn_py.mm(np.zeros((2, 0), np.float16), np.zeros((0, 3), np.float16),
                                              backend=backend), np.zeros((2, 3), np.float16))


def test_mm_call_with_cann_order_and_a_float_out_of_half_inputs(backend):
    rng = np.random.default_rng(6)
    a, b = _rand(rng, (5, 300), np.float16), _rand(rng, (300, 4), np.float16)
    out = np.zeros((5, 4), np.float16)
    aclnn_py.call("aclnnMm", a, b, out, 0, backend=backend)
    np.testing.assert_array_equal(out, aclnn_py.mm(a, b, backend=backend))


def test_mm_float_out_of_half_inputs_on_sim(sim_lib):
    # A FLOAT out of two FLOAT16 inputs gets the float32 sums (no float16 rounding).
    rng = np.random.default_rng(7)
    a, b = _rand(rng, (5, 300), np.float16), _rand(rng, (300, 4), np.float16)
    out = np.zeros((5, 4), np.float32)
    aclnn_py.call("aclnnMm", a, b, out, 0, backend="sim")
    np.testing.assert_allclose(out, a.astype(np.float64) @ b.astype(np.float64), rtol=1e-5, atol=1e-4)
    assert not np.array_equal(out, out.astype(np.float16).astype(np.float32))


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("bias_shape", [(23,), (17, 23), (1, 23), (17, 1), (1,)])
def test_addmm_matches_torch(backend, torch, dtype, bias_shape):
    rng = np.random.default_rng(len(bias_shape))
    s, a, b = _rand(rng, bias_shape, dtype), _rand(rng, (17, 40), dtype), _rand(rng, (23, 40), dtype).T
    result = aclnn_py.addmm(s, a, b, 0.5, 2.0, backend=backend)
    expected = torch.addmm(torch.from_numpy(s.astype(np.float64)), torch.from_numpy(a.astype(np.float64)),
                           torch.from_numpy(np.ascontiguousarray(b.astype(np.float64))), beta=0.5, alpha=2.0)
    assert result.dtype == dtype
    assert_close(result, expected.numpy().astype(dtype), dtype, scale=2)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_linear_layers_with_a_transposed_weight_match_torch(backend, torch, dtype, monkeypatch):
    # M <= K / 8 and the weight read through its transpose: on numpy the weight goes first
    # (_numpy/matmul._weight_first; forced here whatever OpenBLAS's kernels).
    from aclnn_py._numpy import matmul
    monkeypatch.setattr(matmul, "WEIGHT_FIRST", True)
    rng = np.random.default_rng(21)
    x, w, bias = _rand(rng, (6, 64), dtype), _rand(rng, (37, 64), dtype), _rand(rng, (37,), dtype)
    expected = _torch_product(torch, x, w.T, np.float32)
    for result in (aclnn_py.mm(x, w.T, backend=backend), aclnn_py.matmul(x, w.T, backend=backend)):
        assert result.dtype == dtype
        assert_close(result, expected.astype(dtype), dtype, scale=2)
    result = aclnn_py.addmm(bias, x, w.T, 0.5, 2.0, backend=backend)
    assert result.dtype == dtype
    assert_close(result, (0.5 * bias.astype(np.float64) + 2 * expected).astype(dtype), dtype, scale=2)


def test_addmm_alpha_or_beta_near_zero(backend):
    s, a, b = np.arange(3, dtype=np.float32), np.full((2, 4), np.nan, np.float32), np.ones((4, 3), np.float32)
    # |alpha| <= FLT_EPSILON: the product is never computed (its NaN does not reach out)
    np.testing.assert_array_equal(aclnn_py.addmm(s, a, b, 2, 1e-8, backend=backend), np.broadcast_to(2 * s, (2, 3)))
    # |beta| <= FLT_EPSILON: self is ignored (a NaN bias does not reach out)
    a = np.ones((2, 4), np.float32)
    np.testing.assert_array_equal(aclnn_py.addmm(np.full(3, np.nan, np.float32), a, b, 0.0, 3, backend=backend),
                                  np.full((2, 3), 12, np.float32))
    # beta and alpha of any dtype are read as FLOAT (NumPy float16, int32)
    r = aclnn_py.addmm(s, a, b, np.float16(0.5), np.int32(2), backend=backend)
    np.testing.assert_array_equal(r, 8 + 0.5 * np.broadcast_to(s, (2, 3)))


def test_addmm_float_scalars_of_one_signature_each_their_own_plan(backend):
    # The numpy plans key beta and alpha by their values when they are floats: calls of the same
    # shapes with other values, in turn and again, each get their own beta and alpha's result.
    s, a, b = np.arange(3, dtype=np.float32), np.ones((2, 4), np.float32), np.ones((4, 3), np.float32)
    for _ in range(2):
        for beta, alpha in ((1.0, 1.0), (0.5, 2.0), (0.0, 1e-8), (-0.0, 3.0), (2.0, 1e-8), (1.0, 1.0)):
            expected = (0 if abs(beta) <= 1.2e-7 else beta) * np.broadcast_to(s, (2, 3)) + \
                (0 if abs(alpha) <= 1.2e-7 else 4 * alpha)
            np.testing.assert_array_equal(aclnn_py.addmm(s, a, b, beta, alpha, backend=backend),
                                          expected.astype(np.float32))


def test_addmm_empty_and_k_zero(backend):
    s = np.arange(3, dtype=np.float16)
    np.testing.assert_array_equal(aclnn_py.addmm(s, np.zeros((2, 0), np.float16), np.zeros((0, 3), np.float16), 2, 1,
                                                 backend=backend), np.broadcast_to(2 * s, (2, 3)))
    assert aclnn_py.addmm(s, np.zeros((0, 4), np.float16), np.zeros((4, 3), np.float16),
                          backend=backend).shape == (0, 3)


def test_addmm_linear_layer_call_with_cann_order(backend):
    rng = np.random.default_rng(9)
    x, w, bias = _rand(rng, (8, 30), np.float32), _rand(rng, (12, 30), np.float32), _rand(rng, (12,), np.float32)
    out = np.zeros((8, 12), np.float32)
    aclnn_py.call("aclnnAddmm", bias, x, w.T, 1.0, 1.0, out, 0, backend=backend)
    np.testing.assert_allclose(out, x @ w.T + bias, rtol=1e-5, atol=1e-5)


MATMUL_SHAPES = [((5,), (5,)), ((3, 5), (5,)), ((5,), (5, 4)), ((2, 3, 5), (5, 4)), ((5,), (2, 5, 4)),
                 ((2, 1, 3, 5), (4, 5, 2)), ((3, 5), (2, 5, 4)), ((2, 3, 5), (5,)), ((1, 1, 1, 1, 2, 3), (3, 1))]


@pytest.mark.parametrize("shapes", MATMUL_SHAPES, ids=str)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_matmul_broadcasting_and_1d_operands_match_torch(backend, torch, shapes, dtype):
    rng = np.random.default_rng(len(shapes[0]) * 10 + len(shapes[1]))
    a, b = _rand(rng, shapes[0], dtype), _rand(rng, shapes[1], dtype)
    result = np.asarray(aclnn_py.matmul(a, b, backend=backend))
    expected = _torch_product(torch, a, b, np.float32)
    assert result.dtype == dtype and result.shape == expected.shape
    assert_close(result, expected.astype(dtype), dtype, scale=2)


def test_matmul_transposed_batches_and_mixed_dtypes(backend, torch):
    rng = np.random.default_rng(11)
    a, b = _rand(rng, (3, 8, 20), np.float16), _rand(rng, (3, 6, 20), bfloat16).transpose(0, 2, 1)
    result = aclnn_py.matmul(a, b, backend=backend)                      # FLOAT16 with BFLOAT16: FLOAT
    assert result.dtype == np.float32
    assert_close(result, _torch_product(torch, a, b, np.float32).astype(np.float32), np.float32)


def test_matmul_call_reshapes_into_out_on_sim(sim_lib):
    # CANN never checks out's shape: the same element count is written in out's order.
    rng = np.random.default_rng(12)
    a, b = _rand(rng, (4, 3), np.float32), _rand(rng, (3, 6), np.float32)
    out = np.zeros((6, 4), np.float32)
    aclnn_py.call("aclnnMatmul", a, b, out, 0, backend="sim")
    assert_close(out, (a.astype(np.float64) @ b.astype(np.float64)).astype(np.float32).reshape(6, 4), np.float32)
    with pytest.raises(aclnn_py.AclnnError) as info:
        aclnn_py.call("aclnnMatmul", a, b, np.zeros((5, 5), np.float32), 0, backend="sim")
    assert info.value.status == 561103 and "24 elements" in info.value.message


def test_matmul_empty_and_k_zero(backend):
    assert aclnn_py.matmul(np.zeros((2, 0, 3), np.float32), np.zeros((3, 4), np.float32),
                           backend=backend).shape == (2, 0, 4)
    np.testing.assert_array_equal(aclnn_py.matmul(np.zeros((2, 3, 0), np.float32), np.zeros((0, 4), np.float32),
                                                  backend=backend), np.zeros((2, 3, 4), np.float32))
    assert aclnn_py.matmul(np.zeros(0, np.float16), np.zeros(0, np.float16), backend=backend) == 0


@pytest.mark.parametrize("batches", [(3, 3), (1, 3), (3, 1)])
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_batch_mat_mul_matches_torch(backend, torch, batches, dtype):
    rng = np.random.default_rng(batches[0] * 4 + batches[1])
    a = _rand(rng, (batches[0], 9, 33), dtype)
    b = _rand(rng, (batches[1], 13, 33), dtype).transpose(0, 2, 1)     # K^T as attention reads it
    result = aclnn_py.batch_mat_mul(a, b, backend=backend)
    assert result.dtype == dtype and result.shape == (max(batches), 9, 13)
    assert_close(result, _torch_product(torch, a, b, np.float32).astype(dtype), dtype, scale=2)


def test_batch_mat_mul_cube_four_is_zero_and_k_zero(backend):
    rng = np.random.default_rng(13)
    a, b = _rand(rng, (2, 3, 4), np.float32), _rand(rng, (2, 4, 5), np.float32)
    np.testing.assert_array_equal(aclnn_py.batch_mat_mul(a, b, 4, backend=backend),
                                  aclnn_py.batch_mat_mul(a, b, 0, backend=backend))
    np.testing.assert_array_equal(aclnn_py.batch_mat_mul(np.zeros((2, 3, 0), np.float32),
                                                         np.zeros((2, 0, 5), np.float32), backend=backend),
                                  np.zeros((2, 3, 5), np.float32))


def test_batch_mat_mul_call_with_cann_order(backend):
    rng = np.random.default_rng(14)
    a, b = _rand(rng, (2, 3, 4), np.float16), _rand(rng, (1, 4, 5), np.float16)
    out = np.zeros((2, 3, 5), np.float16)
    aclnn_py.call("aclnnBatchMatMul", a, b, out, 0, backend=backend)
    np.testing.assert_array_equal(out, aclnn_py.batch_mat_mul(a, b, backend=backend))


def test_a_larger_batched_product_and_strided_float32(backend, torch):
    # a batch of matrices times one matrix, 17M multiply-adds
    rng = np.random.default_rng(15)
    a, b = _rand(rng, (2, 130, 256), np.float32), _rand(rng, (256, 260), np.float32)
    assert_close(aclnn_py.matmul(a, b, backend=backend), _torch_product(torch, a, b, np.float32).astype(np.float32),
                 np.float32, scale=2)
    big = _rand(rng, (60, 50), np.float32)
    x, y = big[::2, ::3], big[1::3, ::2][:17]                                  # float32 strides BLAS cannot take
    assert_close(aclnn_py.mm(x, y, backend=backend), _torch_product(torch, x, y, np.float32).astype(np.float32),
                 np.float32)
