"""convolution_backward (aclnnConvolutionBackward): values, parameter forms, errors."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import aclnn_py
from aclnn_py import bfloat16
from helpers import FLOAT_DTYPES, assert_close, random_array
from reference.convolution_backward import convolution_backward as reference

ALL = [True, True, True]


def _sides(values, spatial):
    values = list(values)
    if len(values) == spatial:
        return values, values
    return [values[0], values[2]], [values[1], values[3]]


def _make(rng, batch, in_channels, size, out_channels, kernel, stride, padding, dilation, transposed,
          output_padding, groups, dtype):
    """Random (gradOutput, input, weight) whose shapes fit the parameters."""
    spatial = len(size)
    before, after = _sides(padding, spatial)
    extra = _sides(output_padding, spatial)[1]
    if transposed:
        w_shape = (in_channels, out_channels // groups) + tuple(kernel)
        out = [(i - 1) * s - b - a + d * (k - 1) + e + 1
               for i, s, b, a, d, k, e in zip(size, stride, before, after, dilation, kernel, extra)]
    else:
        w_shape = (out_channels, in_channels // groups) + tuple(kernel)
        out = [(i + b + a - d * (k - 1) - 1) // s + 1
               for i, s, b, a, d, k in zip(size, stride, before, after, dilation, kernel)]
    return (random_array(rng, (batch, out_channels) + tuple(out), dtype),
            random_array(rng, (batch, in_channels) + tuple(size), dtype),
            random_array(rng, w_shape, dtype))


# (N, Cin, input size, Cout, kernel, stride, padding, dilation, transposed, outputPadding, groups)
CASES = {
    "1d": (2, 3, (9,), 4, (3,), (1,), (1,), (1,), False, (0,), 1),
    "1d strided dilated": (2, 4, (13,), 6, (3,), (2,), (2,), (3,), False, (0,), 2),
    "1d stride > kernel": (1, 2, (11,), 3, (2,), (4,), (0,), (1,), False, (0,), 1),
    "2d": (2, 4, (6, 7), 6, (3, 3), (1, 1), (1, 1), (1, 1), False, (0, 0), 1),
    "2d mixed params": (2, 4, (9, 8), 6, (3, 2), (2, 1), (1, 0), (1, 2), False, (0, 0), 2),
    # 3x3 stride 1 (the winograd engine): odd sizes (a cropped last tile), padding 0 and 2,
    # asymmetric padding, groups.
    "2d 3x3 stride 1 odd": (2, 3, (7, 5), 4, (3, 3), (1, 1), (2, 0), (1, 1), False, (0, 0), 1),
    "2d 3x3 stride 1 grouped asymmetric": (2, 4, (6, 9), 6, (3, 3), (1, 1), (0, 2, 1, 3), (1, 1), False, (0, 0),
                                           2),
    # Dilated 3x3 stride 1 (the winograd engine on the dilation phases): a dilation per
    # dimension, phases of unequal sizes, asymmetric padding, groups.
    "2d 3x3 dilated": (2, 4, (9, 8), 6, (3, 3), (1, 1), (2, 1, 3, 0), (2, 3), False, (0, 0), 2),
    "2d 3x3 dilated square": (1, 3, (7, 7), 2, (3, 3), (1, 1), (2, 2), (2, 2), False, (0, 0), 1),
    # ... a dilation wider than the image: some dilation phases hold no element of X.
    "2d 3x3 dilated past the image": (1, 2, (5, 3), 3, (3, 3), (1, 1), (1, 4), (1, 4), False, (0, 0), 1),
    "2d 1x1 strided": (2, 6, (7, 6), 4, (1, 1), (2, 3), (0, 0), (1, 1), False, (0, 0), 1),
    "2d asymmetric padding": (2, 3, (6, 7), 4, (3, 2), (2, 1), (2, 0, 1, 3), (1, 2), False, (0, 0), 1),
    "2d depthwise": (2, 4, (7, 6), 4, (3, 3), (1, 1), (1, 1), (1, 1), False, (0, 0), 4),
    "2d depthwise multiplier": (2, 3, (6, 6), 6, (3, 3), (2, 2), (1, 1), (1, 1), False, (0, 0), 3),
    "3d": (1, 4, (4, 5, 5), 2, (2, 3, 2), (1, 2, 1), (1, 1, 0), (1, 1, 2), False, (0, 0, 0), 2),
    "1d transposed": (2, 3, (5,), 4, (3,), (2,), (1,), (1,), True, (1,), 1),
    "2d transposed": (2, 4, (4, 3), 6, (3, 3), (3, 2), (2, 1), (2, 1), True, (2, 1), 2),
    "2d transposed k4 s2": (2, 4, (3, 4), 2, (4, 4), (2, 2), (1, 1), (1, 1), True, (0, 0), 1),
    "2d transposed asymmetric": (1, 2, (3, 4), 3, (3, 2), (2, 3), (2, 1, 0, 2), (1, 1), True, (0, 1, 0, 2), 1),
    "2d transposed depthwise": (2, 4, (4, 4), 4, (3, 3), (2, 2), (1, 1), (1, 1), True, (1, 1), 4),
    "3d transposed": (1, 2, (3, 2, 3), 4, (2, 3, 2), (2, 1, 2), (1, 1, 0), (1, 1, 1), True, (1, 0, 0), 2),
    # kernel == stride (the patch engine): tiling exactly, with a remainder, transposed with
    # output padding, grouped, 3-D.
    "2d patches": (2, 3, (8, 9), 4, (2, 3), (2, 3), (0, 0), (1, 1), False, (0, 0), 1),
    "2d patches remainder grouped": (2, 4, (9, 7), 6, (2, 3), (2, 3), (0, 0), (1, 1), False, (0, 0), 2),
    "1d patches k1 s1": (2, 3, (7,), 5, (1,), (1,), (0,), (1,), False, (0,), 1),
    "2d transposed patches": (2, 4, (3, 4), 6, (2, 2), (2, 2), (0, 0), (1, 1), True, (1, 0), 2),
    "3d transposed patches": (1, 3, (2, 3, 2), 2, (2, 2, 2), (2, 2, 2), (0, 0, 0), (1, 1, 1), True, (0, 1, 0), 1),
    "3d patches": (1, 2, (4, 5, 4), 3, (2, 2, 2), (2, 2, 2), (0, 0, 0), (1, 1, 1), False, (0, 0, 0), 1),
    # Edge layouts: every tap reads padding (all gradients but the bias are zero); a transposed
    # convolution whose even phase holds no gradOutput element.
    "1d taps only in padding": (2, 2, (2,), 3, (1,), (10,), (3,), (1,), False, (0,), 1),
    "1d transposed empty phase": (1, 2, (1,), 3, (3,), (2,), (1,), (1,), True, (0,), 1),
}


# The numpy backend's engines (aclnn_py/_numpy/conv/, one module each), forced: "dense" (tiny
# problems; its matrix form, and "dense einsums" its einsum form), "patch" (kernel == stride;
# elsewhere it does not apply and the choice goes on), "winograd" (both gradients of a 2-D 3x3 stride-1
# convolution; elsewhere the choice goes on), "polyphase" (a 2-D kernel twice the stride, X space:
# a transposed convolution, or gradWeight alone; elsewhere the choice goes on), "flat" (im2col + BLAS, or the tap-wise
# kernels when depthwise; X space for gradWeight alone), "flat in pieces" (the same with im2col
# in many chunks, the flat buffers copied in parts on the worker threads and depthwise
# convolutions one channel per block; "winograd in pieces" and "polyphase in pieces": one tile
# per block), "tap".
ENGINES = ["dense", "dense einsums", "patch", "winograd", "winograd in pieces", "polyphase", "polyphase in pieces",
           "flat", "flat in pieces", "tap"]


def _force_engine(monkeypatch, engine):
    """Make the numpy backend use one of its engines (it picks by shape otherwise)."""
    from aclnn_py._numpy import conv
    from aclnn_py._numpy.conv import dense, depthwise, flat, winograd

    monkeypatch.setattr(conv, "forced", engine.split()[0])
    if engine == "dense einsums":
        monkeypatch.setattr(dense, "UNFOLD_ELEMENTS", -1)
    if engine.endswith("in pieces"):
        monkeypatch.setattr(flat, "CHUNK_BYTES", 1)      # the minimum chunk: 64 columns
        monkeypatch.setattr(winograd, "BLOCK_BYTES", 1)  # one tile per block (polyphase's blocks too)
        monkeypatch.setattr(depthwise, "TAPWISE_BYTES", 1)    # one channel per block
        monkeypatch.setattr(flat, "PARALLEL_COPY_ELEMENTS", 1)   # flat buffers copied by every worker


@pytest.mark.parametrize("case", list(CASES))
def test_matches_reference(backend, case):
    _check_case(backend, case)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("case", list(CASES))
def test_each_numpy_kernel_matches_reference(monkeypatch, case, engine):
    """The numpy backend picks a kernel by problem size: each one, forced, on every case."""
    _force_engine(monkeypatch, engine)
    _check_case("numpy", case)


@pytest.mark.parametrize("mask", [m for m in itertools.product([False, True], repeat=3) if any(m[:2])], ids=str)
@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("case", ["2d mixed params", "2d 3x3 stride 1 grouped asymmetric", "2d 3x3 dilated", "2d depthwise", "2d depthwise multiplier", "3d",
                                  "2d transposed", "2d transposed k4 s2", "2d transposed depthwise", "3d transposed",
                                  "2d patches remainder grouped", "2d transposed patches"])
def test_each_numpy_kernel_computes_only_the_masked_gradients(monkeypatch, case, engine, mask):
    """The kernels compute the input and weight gradients together: each alone too."""
    _force_engine(monkeypatch, engine)
    _check_case("numpy", case, list(mask))


def _check_case(backend, case, mask=ALL):
    *shapes, transposed, output_padding, groups = CASES[case]
    batch, cin, size, cout, kernel, stride, padding, dilation = shapes
    rng = np.random.default_rng(0)
    grad_output, x, w = _make(rng, batch, cin, size, cout, kernel, stride, padding, dilation, transposed,
                              output_padding, groups, np.float32)
    result = aclnn_py.convolution_backward(grad_output, x, w, [cout], stride, padding, dilation, transposed,
                                           output_padding, groups, mask, backend=backend)
    expected = reference(grad_output, x, w, stride, padding, dilation, transposed, groups)
    for wanted, got, want, like in zip(mask, result, expected, (x, w, grad_output)):
        if not wanted:
            assert got is None
            continue
        assert got.dtype == np.float32
        assert got.shape == (like.shape if like is not grad_output else (cout,))
        assert_close(got, want, np.float32)


def _torch_backward(torch, grad_output, x, w, bias_sizes, stride, padding, dilation, transposed,
                    output_padding, groups, mask):
    """aten.convolution_backward in float32 (4-element padding through F.pad, normal conv only)."""
    go, xt, wt = (torch.from_numpy(a.astype(np.float32)) for a in (grad_output, x, w))
    if len(padding) == 4 and x.ndim == 4:
        top, bottom, left, right = padding
        padded = torch.nn.functional.pad(xt, (left, right, top, bottom))
        gi, gw, gb = torch.ops.aten.convolution_backward(go, padded, wt, bias_sizes, stride, [0, 0], dilation,
                                                         False, [0, 0], groups, mask)
        if gi is not None:
            gi = gi[:, :, top:top + x.shape[2], left:left + x.shape[3]]
    else:
        gi, gw, gb = torch.ops.aten.convolution_backward(go, xt, wt, bias_sizes, stride, padding, dilation,
                                                         transposed, output_padding, groups, mask)
    return tuple(None if r is None else r.numpy() for r in (gi, gw, gb))


TORCH_CASES = [name for name in CASES if "transposed asymmetric" not in name]


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
@pytest.mark.parametrize("case", TORCH_CASES)
def test_matches_torch(backend, torch, case, dtype):
    *shapes, transposed, output_padding, groups = CASES[case]
    batch, cin, size, cout, kernel, stride, padding, dilation = shapes
    rng = np.random.default_rng(1)
    grad_output, x, w = _make(rng, batch, cin, size, cout, kernel, stride, padding, dilation, transposed,
                              output_padding, groups, dtype)
    result = aclnn_py.convolution_backward(grad_output, x, w, [cout], stride, padding, dilation, transposed,
                                           output_padding, groups, ALL, backend=backend)
    # CANN computes half/bfloat16 in float32 and rounds once: the float32 result of the same
    # values is the oracle.
    expected = _torch_backward(torch, grad_output, x, w, [cout], stride, padding, dilation, transposed,
                               output_padding, groups, ALL)
    for got, want in zip(result, expected):
        assert got.dtype == dtype
        assert_close(got, want, dtype, scale=4)


# Sizes like the layers the benchmark uses, scaled down: long reductions, several GEMM chunks.
@pytest.mark.parametrize("case", [
    dict(x=(2, 16, 20, 20), w=(16, 16, 3, 3), stride=[1, 1], padding=[1, 1], groups=1),
    dict(x=(2, 32, 20, 20), w=(48, 32, 1, 1), stride=[2, 2], padding=[0, 0], groups=1),
    dict(x=(2, 32, 20, 20), w=(32, 1, 3, 3), stride=[1, 1], padding=[1, 1], groups=32),
    dict(x=(2, 32, 14, 14), w=(32, 8, 4, 4), stride=[2, 2], padding=[1, 1], groups=1, transposed=True),
    dict(x=(4, 16, 300), w=(16, 16, 5), stride=[1], padding=[2], groups=1),
    dict(x=(1, 8, 8, 12, 12), w=(8, 8, 3, 3, 3), stride=[1, 1, 1], padding=[1, 1, 1], groups=1),
])
def test_layer_sizes_match_torch(backend, torch, case):
    rng = np.random.default_rng(2)
    transposed = case.get("transposed", False)
    x = random_array(rng, case["x"], np.float32)
    w = random_array(rng, case["w"], np.float32)
    spatial = x.ndim - 2
    xt, wt = torch.from_numpy(x), torch.from_numpy(w)
    forward = torch.nn.functional.conv_transpose2d if transposed else getattr(torch.nn.functional, f"conv{spatial}d")
    out_shape = forward(xt, wt, stride=case["stride"], padding=case["padding"], groups=case["groups"]).shape
    grad_output = random_array(rng, tuple(out_shape), np.float32)
    bias = [w.shape[1] * case["groups"] if transposed else w.shape[0]]
    args = (bias, case["stride"], case["padding"], [1] * spatial, transposed, [0] * spatial, case["groups"], ALL)
    result = aclnn_py.convolution_backward(grad_output, x, w, *args, backend=backend)
    expected = torch.ops.aten.convolution_backward(torch.from_numpy(grad_output), xt, wt, *args)
    for got, want in zip(result, expected):
        assert_close(got, want.numpy(), np.float32, scale=20)


@pytest.mark.parametrize("mask", list(itertools.product([False, True], repeat=3)), ids=str)
@pytest.mark.parametrize("case", ["2d mixed params", "2d transposed"])
def test_output_mask(backend, torch, case, mask):
    *shapes, transposed, output_padding, groups = CASES[case]
    batch, cin, size, cout, kernel, stride, padding, dilation = shapes
    grad_output, x, w = _make(np.random.default_rng(3), batch, cin, size, cout, kernel, stride, padding,
                              dilation, transposed, output_padding, groups, np.float32)
    result = aclnn_py.convolution_backward(grad_output, x, w, [cout], stride, padding, dilation, transposed,
                                           output_padding, groups, list(mask), backend=backend)
    expected = _torch_backward(torch, grad_output, x, w, [cout], stride, padding, dilation, transposed,
                               output_padding, groups, list(mask))
    assert len(result) == 3
    for wanted, got, want in zip(mask, result, expected):
        if wanted:
            assert_close(got, want, np.float32)
        else:
            assert got is None


@pytest.mark.parametrize("bias_sizes", [None, [6], (6,), np.array([6])], ids=["None", "list", "tuple", "ndarray"])
def test_bias_sizes_forms(backend, bias_sizes):
    *shapes, transposed, output_padding, groups = CASES["2d mixed params"]
    batch, cin, size, cout, kernel, stride, padding, dilation = shapes
    grad_output, x, w = _make(np.random.default_rng(4), batch, cin, size, cout, kernel, stride, padding,
                              dilation, transposed, output_padding, groups, np.float32)
    _, _, grad_bias = aclnn_py.convolution_backward(grad_output, x, w, bias_sizes, stride, padding, dilation,
                                                    transposed, output_padding, groups, ALL, backend=backend)
    assert grad_bias.shape == (cout,)
    assert_close(grad_bias, grad_output.astype(np.float64).sum(axis=(0, 2, 3)), np.float32)


@pytest.mark.parametrize("cube_math_type", [0, 1, 2, 3])
@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
def test_cube_math_type_keeps_the_numbers(backend, cube_math_type, dtype):
    *shapes, transposed, output_padding, groups = CASES["2d"]
    batch, cin, size, cout, kernel, stride, padding, dilation = shapes
    grad_output, x, w = _make(np.random.default_rng(5), batch, cin, size, cout, kernel, stride, padding,
                              dilation, transposed, output_padding, groups, dtype)
    args = ([cout], stride, padding, dilation, transposed, output_padding, groups, ALL)
    baseline = aclnn_py.convolution_backward(grad_output, x, w, *args, backend=backend)
    result = aclnn_py.convolution_backward(grad_output, x, w, *args, cube_math_type, backend=backend)
    for got, want in zip(result, baseline):
        assert got.dtype == dtype
        assert_close(got, want, dtype, scale=10, cube_math_type=cube_math_type)


def test_int_array_and_scalar_forms(backend):
    *shapes, transposed, output_padding, groups = CASES["2d mixed params"]
    batch, cin, size, cout, kernel, stride, padding, dilation = shapes
    grad_output, x, w = _make(np.random.default_rng(6), batch, cin, size, cout, kernel, stride, padding,
                              dilation, transposed, output_padding, groups, np.float32)
    expected = aclnn_py.convolution_backward(grad_output, x, w, [cout], stride, padding, dilation, transposed,
                                             output_padding, groups, ALL, backend=backend)
    result = aclnn_py.convolution_backward(
        grad_output, x, w, np.array([cout], np.int32), tuple(stride), np.array(padding, np.int64),
        [np.int16(v) for v in dilation], np.bool_(transposed), list(output_padding), np.int64(groups),
        np.array(ALL), np.int8(1), backend=backend)
    for got, want in zip(result, expected):
        assert_close(got, want, np.float32)


def test_mixed_dtypes_give_each_gradient_its_documented_dtype(backend, torch):
    *shapes, transposed, output_padding, groups = CASES["2d mixed params"]
    batch, cin, size, cout, kernel, stride, padding, dilation = shapes
    grad_output, x, w = _make(np.random.default_rng(7), batch, cin, size, cout, kernel, stride, padding,
                              dilation, transposed, output_padding, groups, np.float32)
    grad_output, x = grad_output.astype(bfloat16), x.astype(np.float16)
    grad_input, grad_weight, grad_bias = aclnn_py.convolution_backward(
        grad_output, x, w, [cout], stride, padding, dilation, transposed, output_padding, groups, ALL,
        backend=backend)
    assert (grad_input.dtype, grad_weight.dtype, grad_bias.dtype) == (np.float16, np.float32, bfloat16)
    expected = _torch_backward(torch, grad_output, x, w, [cout], stride, padding, dilation, transposed,
                               output_padding, groups, ALL)
    for got, want in zip((grad_input, grad_weight, grad_bias), expected):
        assert_close(got, want, got.dtype, scale=4)


def test_float16_accumulates_in_float32(backend):
    # 1x1 convolution over three positions: 2048 + 1 + 1 is 2048 in float16 arithmetic, 2050 in
    # float32 (which float16 represents).
    grad_output = np.array([[[2048, 1, 1]]], np.float16)
    x = np.ones((1, 1, 3), np.float16)
    w = np.ones((1, 1, 1), np.float16)
    _, grad_weight, grad_bias = aclnn_py.convolution_backward(grad_output, x, w, [1], [1], [0], [1], False,
                                                              [0], 1, ALL, backend=backend)
    assert grad_weight.dtype == grad_bias.dtype == np.float16
    assert grad_weight[0, 0, 0] == 2050 and grad_bias[0] == 2050


def test_non_contiguous_inputs(backend):
    *shapes, transposed, output_padding, groups = CASES["2d mixed params"]
    batch, cin, size, cout, kernel, stride, padding, dilation = shapes
    grad_output, x, w = _make(np.random.default_rng(8), batch, cin, size, cout, kernel, stride, padding,
                              dilation, transposed, output_padding, groups, np.float32)
    args = ([cout], stride, padding, dilation, transposed, output_padding, groups, ALL)
    expected = aclnn_py.convolution_backward(grad_output, x, w, *args, backend=backend)
    fortran = [np.asfortranarray(a) for a in (grad_output, x, w)]
    reversed_ = [np.ascontiguousarray(a[::-1, ::-1])[::-1, ::-1] for a in (grad_output, x, w)]
    strided = [np.repeat(a, 2, axis=-1)[..., ::2] for a in (grad_output, x, w)]
    for views in (fortran, reversed_, strided):
        before = [v.copy() for v in views]
        result = aclnn_py.convolution_backward(*views, *args, backend=backend)
        for got, want in zip(result, expected):
            assert got.flags.c_contiguous
            assert_close(got, want, np.float32)
        for view, copy in zip(views, before):
            np.testing.assert_array_equal(view, copy)


def test_results_are_new_arrays(backend):
    *shapes, transposed, output_padding, groups = CASES["2d 1x1 strided"]
    batch, cin, size, cout, kernel, stride, padding, dilation = shapes
    grad_output, x, w = _make(np.random.default_rng(9), batch, cin, size, cout, kernel, stride, padding,
                              dilation, transposed, output_padding, groups, np.float32)
    result = aclnn_py.convolution_backward(grad_output, x, w, [cout], stride, padding, dilation, transposed,
                                           output_padding, groups, ALL, backend=backend)
    for got in result:
        for given in (grad_output, x, w):
            assert not np.shares_memory(got, given)


@pytest.mark.parametrize("case", [
    # Dilation and padding far larger than the data: valid, and the padded buffers of the fast
    # path would be enormous, so this runs the memory-safe per-tap path.
    (2, 3, (2,), 4, (3,), (1,), (10**6,), (10**6,), True, (0,), 1),
    (2, 3, (3,), 4, (3,), (1,), (10**6,), (10**6,), False, (0,), 1),
    (1, 4, (3, 4), 2, (3, 2), (1, 1), (10**6, 3), (10**6, 2), False, (0, 0), 2),
    (1, 2, (2, 3), 4, (3, 2), (1, 2), (10**6, 1), (10**6, 1), True, (0, 1), 2),
    (1, 2, (2, 2), 2, (2, 2), (10**5, 1), (0, 0), (1, 1), True, (0, 0), 1),
    (1, 2, (3, 2), 2, (2, 2), (10**9, 1), (10**9 - 1, 0), (1, 1), True, (0, 0), 1),
])
def test_huge_padding_dilation_and_stride(backend, case):
    *shapes, transposed, output_padding, groups = case
    batch, cin, size, cout, kernel, stride, padding, dilation = shapes
    grad_output, x, w = _make(np.random.default_rng(10), batch, cin, size, cout, kernel, stride, padding,
                              dilation, transposed, output_padding, groups, np.float32)
    result = aclnn_py.convolution_backward(grad_output, x, w, None, stride, padding, dilation, transposed,
                                           output_padding, groups, ALL, backend=backend)
    expected = reference(grad_output, x, w, stride, padding, dilation, transposed, groups)
    for got, want in zip(result, expected):
        assert_close(got, want, np.float32)


def test_transposed_accepts_cann_output_size_range(backend, torch):
    # CANN checks input == (gradOutput - outputPadding + 2*padding - kernel extent) // stride + 1,
    # which with stride 2 also admits a gradOutput one longer than the formula: 6 instead of 5
    # for outputPadding 0.  The extra row and column get no contribution; the numbers are those
    # of outputPadding 1, where 6 is the formula's size.
    args = _transposed()
    rng = np.random.default_rng(13)
    grad_output, x, w = (random_array(rng, args[k].shape, np.float32) for k in ("grad_output", "input", "weight"))
    result = aclnn_py.convolution_backward(grad_output, x, w, [4], [2, 2], [1, 1], [1, 1], True, [0, 0], 2, ALL,
                                           backend=backend)
    expected = _torch_backward(torch, grad_output, x, w, [4], [2, 2], [1, 1], [1, 1], True, [1, 1], 2, ALL)
    for got, want in zip(result, expected):
        assert_close(got, want, np.float32)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
@pytest.mark.parametrize("grad_output, x, w, transposed, groups, mask", [
    ((0, 4, 5, 5), (0, 6, 7, 7), (4, 3, 3, 3), False, 2, ALL),              # no images
    ((2, 4, 5, 5), (2, 0, 7, 7), (4, 0, 3, 3), False, 2, ALL),              # no input channels
    ((2, 0, 5, 5), (2, 6, 7, 7), (0, 3, 3, 3), False, 2, [False, True, True]),  # no output channels
    ((2, 0, 5, 5), (2, 3, 7, 7), (0, 3, 3, 3), False, 1, [False, True, False]),
    ((0, 3, 4, 4), (0, 6, 2, 2), (6, 1, 3, 3), True, 3, ALL),               # transposed, no images
    ((0, 2, 9), (0, 4, 5), (4, 1, 3), True, 2, ALL),
    ((1, 2, 0, 3, 3), (1, 2, 0, 3, 3), (2, 2, 1, 1, 1), False, 1, [False, True, True]),
])
def test_empty_tensors_give_zeros(backend, dtype, grad_output, x, w, transposed, groups, mask):
    spatial = len(x) - 2
    bias = [w[1] * groups if transposed else grad_output[1]]
    padding = [1] * spatial if spatial == 3 else [0] * spatial
    result = aclnn_py.convolution_backward(np.ones(grad_output, dtype), np.ones(x, dtype), np.ones(w, dtype),
                                           bias, [1] * spatial, padding, [1] * spatial, transposed,
                                           [0] * spatial, groups, mask, backend=backend)
    for wanted, got, shape in zip(mask, result, (x, w, tuple(bias))):
        if not wanted:
            assert got is None
            continue
        assert got.shape == shape and got.dtype == dtype
        assert not np.any(got.astype(np.float32))


# --- errors ------------------------------------------------------------------------------
# The invalid inputs are in invalid_cases.py (one table for every operator, run on every backend
# by test_invalid_cases.py); here are the valid baselines those cases change.

def _valid():
    return dict(grad_output=np.zeros((2, 4, 5, 5), np.float32), input=np.zeros((2, 6, 7, 7), np.float32),
                weight=np.zeros((4, 3, 3, 3), np.float32), bias_sizes=[4], stride=[1, 1], padding=[0, 0],
                dilation=[1, 1], transposed=False, output_padding=[0, 0], groups=2, output_mask=ALL,
                cube_math_type=0)


def _transposed():
    # ConvTranspose2d 6 -> 4 channels, groups 2, k3 s2 p1 op1: 3x3 -> 6x6.
    return dict(_valid(), grad_output=np.zeros((2, 4, 6, 6), np.float32),
                input=np.zeros((2, 6, 3, 3), np.float32), weight=np.zeros((6, 2, 3, 3), np.float32),
                stride=[2, 2], padding=[1, 1], transposed=True, output_padding=[1, 1])


def _empty():
    return dict(_valid(), grad_output=np.zeros((0, 4, 5, 5), np.float32),
                input=np.zeros((0, 6, 7, 7), np.float32))


def _call(backend, base=None, **changes):
    args = dict(base or _valid(), **changes)
    return aclnn_py.convolution_backward(*args.values(), backend=backend)


@pytest.mark.parametrize("base", [_valid, _transposed, _empty])
def test_valid_baselines(backend, base):
    args = base()
    grad_input, grad_weight, grad_bias = _call(backend, args)
    assert grad_input.shape == args["input"].shape
    assert grad_weight.shape == args["weight"].shape
    assert grad_bias.shape == (4,)


NON_FINITE = ["inf weight", "nan gradOutput, zero weights", "inf input"]


def _non_finite_case(case, scenario):
    """A CASES problem with one non-finite value placed as ``scenario`` says."""
    *shapes, transposed, output_padding, groups = CASES[case]
    batch, cin, size, cout, kernel, stride, padding, dilation = shapes
    rng = np.random.default_rng(3)
    grad_output, x, w = _make(rng, batch, cin, size, cout, kernel, stride, padding, dilation, transposed,
                              output_padding, groups, np.float32)
    if scenario == "inf weight":
        w.flat[w.size // 2] = np.inf
    elif scenario == "inf input":
        x.flat[x.size // 3] = -np.inf
    else:
        w[..., ::2] = 0
        w.flat[w.size // 2] = 0
        grad_output.flat[grad_output.size // 2] = np.nan
    return (grad_output, x, w), (stride, padding, dilation, transposed, output_padding, groups)


@pytest.mark.parametrize("scenario", NON_FINITE)
@pytest.mark.parametrize("case", list(CASES))
def test_ieee_semantics_follow_the_terms(backend, case, scenario):
    """Each gradient is the sum of exactly the reference's terms: a position no term reaches (a
    stride gap, a tap reading padding) is exactly 0 even when the weight holds inf (no inf x 0
    from a zero standing for padding), and a NaN in gradOutput reaches every tap of its window,
    zero weights included (NaN x 0 is NaN)."""
    (grad_output, x, w), (stride, padding, dilation, transposed, output_padding, groups) = \
        _non_finite_case(case, scenario)
    cout = grad_output.shape[1]
    result = aclnn_py.convolution_backward(grad_output, x, w, [cout], stride, padding, dilation, transposed,
                                           output_padding, groups, ALL, backend=backend)
    expected = reference(grad_output, x, w, stride, padding, dilation, transposed, groups)
    # The positions no term reaches: where the sum of |terms| with all-ones data is 0.
    reached = reference(np.ones_like(grad_output), np.ones_like(x), np.ones_like(w), stride, padding, dilation,
                        transposed, groups)
    with np.errstate(invalid="ignore"):
        for got, want, count in zip(result, expected, reached):
            # assert_allclose requires NaN and inf in the same places, with the same sign.
            assert_close(got, want, np.float32, scale=4)
            assert (got[count == 0] == 0).all()


@pytest.mark.parametrize("mask", [(True, True), (True, False), (False, True)], ids=str)
def test_numpy_engine_choice_follows_the_shapes(mask):
    """The numpy backend's cost model: Winograd for 3x3 stride-1 2-D layers (dilated too) with
    >= 64 channels per group, for any mask; below that, and for other kernels, the flat engine."""
    from aclnn_py._numpy.conv import LoweredConv

    def engine(channels, size, kernel, dilation=1):
        pad = dilation * (kernel - 1) // 2
        return LoweredConv(2, channels, channels, (size, size), (size, size), (kernel, kernel), (1, 1),
                           (dilation, dilation), (pad, pad), 1, False).choose(mask[0]).name

    assert engine(64, 14, 3) == "winograd"
    assert engine(64, 14, 3, dilation=2) == "winograd"
    assert engine(32, 14, 3) == "flat"
    assert engine(64, 14, 5) == "flat"


def test_numpy_winograd_not_chosen_when_its_buffers_would_dwarf_the_data():
    """A huge dilation over a small image: the dilation phases would be thousands of padded
    3x3 images (memory far from proportional to the data): the flat engine's budget rule."""
    from aclnn_py._numpy.conv import LoweredConv

    huge = LoweredConv(1, 64, 64, (2, 2), (2, 2), (3, 3), (1, 1), (100, 100), (100, 100), 1, False)
    assert huge.choose(True).name != "winograd"
    normal = LoweredConv(1, 64, 64, (20, 20), (20, 20), (3, 3), (1, 1), (2, 2), (2, 2), 1, False)
    assert normal.choose(True).name == "winograd"


def test_numpy_plans_once_per_signature_and_each_call_reads_its_own_data(monkeypatch):
    """A repeated call of one signature is planned once (_numpy/plans.NumpyOp); the plan holds no
    data: new values, and inf/NaN among them (the exact engine), give the reference's numbers;
    a float16 signature, another outputMask or an invalid call is planned (checked) on its own."""
    import sys

    module = sys.modules["aclnn_py.ops.convolution_backward"]
    prepared = []
    real = module._numpy.prepare
    monkeypatch.setattr(module._numpy, "prepare", lambda *args: prepared.append(1) or real(*args))
    monkeypatch.setattr(module._numpy, "_plans", {})
    rng = np.random.default_rng(7)
    shapes = ((1, 2, 4, 4), (1, 3, 6, 6), (2, 3, 3, 3))
    for round, dtype in enumerate((np.float32, np.float32, np.float16)):
        grad_output, x, w = (random_array(rng, s, dtype) for s in shapes)
        if round == 1:
            w[0, 0, 1, 1] = np.inf
        result = aclnn_py.convolution_backward(grad_output, x, w, [2], [1, 1], [0, 0], [1, 1], False, [0, 0], 1,
                                               [True, True, True], backend="numpy")
        expected = reference(grad_output, x, w, (1, 1), (0, 0), (1, 1), False, 1)
        with np.errstate(invalid="ignore"):
            for got, want in zip(result, expected):
                assert got.dtype == dtype
                assert_close(got, want, dtype, scale=4)
    assert len(prepared) == 2  # float32 once, float16 once
    for _ in range(2):
        with pytest.raises(aclnn_py.AclnnError, match="groups"):
            aclnn_py.convolution_backward(grad_output, x, w, [2], [1, 1], [0, 0], [1, 1], False, [0, 0], 2,
                                          [True, True, True], backend="numpy")
    assert len(prepared) == 4
    result = aclnn_py.convolution_backward(grad_output, x, w, [2], [1, 1], [0, 0], [1, 1], False, [0, 0], 1,
                                           [False, True, False], backend="numpy")
    assert result[0] is None and result[2] is None and len(prepared) == 5


@pytest.mark.parametrize("sizes", [(16, 9, 4), (4, 4, 400), (400, 300, 200)], ids=["all small", "mixed", "all large"])
@pytest.mark.parametrize("where", [0, 1, 2])
@pytest.mark.parametrize("value", [np.inf, -np.inf, np.nan])
def test_numpy_non_finite_value_anywhere_takes_the_exact_engine(sizes, where, value):
    """An inf or NaN in any of X, dY, W takes the tap engine, whether the array is checked by a
    Python sum (small) or a NumPy reduction (large); finite data does not, also where the float32
    sum of a small array overflows (the Python sum does not) and where two arrays' infinities
    would cancel in a float32 sum of sums (each array's own sum is not finite)."""
    from aclnn_py._numpy.conv import _all_finite

    rng = np.random.default_rng(11)
    arrays = [rng.standard_normal(n, dtype=np.float32) for n in sizes]
    assert _all_finite(*arrays) and _all_finite(arrays[0], arrays[1], None)
    arrays[where][len(arrays[where]) // 2] = value
    assert not _all_finite(*arrays)
    if where == 2:
        assert _all_finite(arrays[0], arrays[1], None)  # W not looked at: None
    if value == np.inf:
        arrays[(where + 1) % 3][0] = -np.inf
        assert not _all_finite(*arrays)
    big = np.full(4, np.finfo(np.float32).max, np.float32)
    assert _all_finite(big, big, None)


def test_numpy_tiny_call_with_non_finite_data_gives_ieee_results():
    """The tiny (dense-engine) call: an inf in the weight gives the reference's inf/NaN pattern."""
    rng = np.random.default_rng(12)
    grad_output, x, w = (random_array(rng, s, np.float32) for s in ((1, 1, 3, 3), (1, 1, 4, 4), (1, 1, 2, 2)))
    w[0, 0, 1, 0] = np.inf
    result = aclnn_py.convolution_backward(grad_output, x, w, [1], [1, 1], [0, 0], [1, 1], False, [0, 0], 1,
                                           [True, True, True], backend="numpy")
    expected = reference(grad_output, x, w, (1, 1), (0, 0), (1, 1), False, 1)
    with np.errstate(invalid="ignore"):
        for got, want in zip(result, expected):
            assert_close(got, want, np.float32, scale=4)
    assert np.isinf(result[0]).any()
