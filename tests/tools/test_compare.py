"""aclnn_py.compare: the numbers it reports, the tolerance table, cube_math_type widening."""

from __future__ import annotations

import numpy as np
import pytest

import aclnn_py
from aclnn_py import Tensor
import dataclasses

from aclnn_py import _compare
from aclnn_py._compare import (BINARY, CANN_THRESHOLDS, DOUBLE_THOUSANDTH, HFLOAT32, PRECISION, THRESHOLD, TOLERANCES,
                               Golden, Tolerance, compare, compare_results, golden, judge, measure, tolerance)
from aclnn_py.ops._registry import by_name

F32 = np.dtype(np.float32)


def _call(builder, shape, dtype, seed=0, **params):
    return builder(np.random.default_rng(seed), shape, dtype, **params)


@pytest.mark.parametrize("builder, shape, dtype", [
    (by_name("im2col_backward").case, (2, 3, 9, 8), F32),
    (by_name("im2col_backward").case, (2, 3, 9, 8), np.dtype(np.float16)),
    (by_name("max_unpool2d_backward").case, (2, 3, 4, 5), np.dtype(np.int16)),
    (by_name("reflection_pad2d_backward").case, (2, 3, 6, 7), np.dtype(np.complex64)),
    (by_name("reflection_pad2d_backward").case, (2, 3, 6, 7), aclnn_py.bfloat16),
])
def test_sim_against_numpy_passes_with_sensible_numbers(sim_lib, builder, shape, dtype):
    call = _call(builder, shape, dtype)
    result = aclnn_py.compare(call.op, *call.args, backends=("sim", "numpy"))
    assert result.passed and result.backends == ("sim", "numpy") and result.op == call.op
    (out,) = result
    assert out.shape == shape  # every one of these returns a gradient shaped like the forward input
    tol = tolerance(dtype)
    assert 0 <= out.max_abs <= tol.atol * 10 and 0 <= out.max_rel <= tol.rtol
    assert out.cosine == pytest.approx(1.0, abs=1e-6) and out.mismatched == 0
    assert out.tolerance == tol
    assert "sim vs numpy -> ok" in str(result)


def test_device_tensor_arguments(sim_lib):
    call = _call(by_name("reflection_pad2d_backward").case, (2, 3, 5, 6), F32)
    grad, self, padding = call.args
    with Tensor.from_numpy(grad, backend="sim") as g, Tensor.from_numpy(self, backend="sim") as s:
        result = compare(aclnn_py.reflection_pad2d_backward, g, s, padding, backends=("sim", "numpy"))
    assert result.passed and result[0].output == "gradInput"


def test_function_or_name_and_three_outputs():
    call = _call(by_name("convolution_backward").case, (2, 4, 6, 6), F32, out_channels=6, groups=2)
    by_op_name = compare("convolution_backward", *call.args, backends=("numpy", "numpy"))
    by_function = compare(aclnn_py.convolution_backward, *call.args, backends=("numpy", "numpy"))
    for result in (by_op_name, by_function):
        assert [o.output for o in result] == ["gradInput", "gradWeight", "gradBias"]
        # Two runs of one backend: the same numbers up to the order BLAS sums in, which may
        # change with the CPU's kernel; so within the table's tolerance, not bit for bit.
        assert result.passed and all(o.mismatched == 0 and o.cosine == pytest.approx(1.0, abs=1e-6)
                                     for o in result)


def test_masked_outputs_are_left_out():
    call = _call(by_name("convolution_backward").case, (1, 2, 5, 5), F32, out_channels=2)
    args = list(call.args)
    args[10] = [False, True, False]
    result = compare("convolution_backward", *args, backends=("numpy", "numpy"))
    assert [o.output for o in result] == ["gradWeight"]


def test_bad_arguments():
    call = _call(by_name("reflection_pad2d_backward").case, (1, 1, 4, 4), F32)
    with pytest.raises(ValueError, match="unknown operator 'no_such_op'"):
        compare("no_such_op", *call.args)
    with pytest.raises(TypeError, match="backends="):
        compare("reflection_pad2d_backward", *call.args, backend="numpy")
    with pytest.raises(aclnn_py.AclnnError) as info:  # the operator's own errors pass through
        compare("reflection_pad2d_backward", call.args[0], call.args[1], [9, 9, 9, 9], backends=("numpy", "numpy"))
    assert info.value.status == 161002


# -- the tolerance table ---------------------------------------------------------------------

def test_tolerance_per_dtype():
    assert tolerance(np.float64).rtol <= 1e-9 and tolerance(np.complex128).rtol <= 1e-9
    assert tolerance(np.float32).rtol == pytest.approx(1e-4)
    assert tolerance(np.float16).rtol >= 2 ** -10  # at least one float16 ulp
    assert tolerance(aclnn_py.bfloat16).rtol >= 2 ** -7  # at least one bfloat16 ulp
    for dt in (np.int8, np.uint8, np.int16, np.int32, np.int64, np.bool_):
        assert tolerance(dt).exact


@pytest.mark.parametrize("cube_math_type, expected", [(0, TOLERANCES[F32]), (1, HFLOAT32), (3, HFLOAT32),
                                                      (2, TOLERANCES[np.dtype(np.float16)])])
def test_cube_math_type_widens_float32_only(cube_math_type, expected):
    widened = tolerance(np.float32, cube_math_type)
    assert (widened.rtol, widened.atol) == (expected.rtol, expected.atol)
    if cube_math_type:
        assert f"cubeMathType={cube_math_type}" in widened.name
    for dt in (np.float16, aclnn_py.bfloat16):
        assert tolerance(dt, cube_math_type) == tolerance(dt)


@pytest.mark.parametrize("how", ["positional", "keyword"])
@pytest.mark.parametrize("cube_math_type, name", [(0, "FLOAT"), (1, "HFLOAT32"), (3, "HFLOAT32"), (2, "FLOAT16")])
def test_compare_reads_cube_math_type_from_the_call(how, cube_math_type, name):
    call = _call(by_name("avg_pool2d_backward").case, (1, 2, 8, 8), F32)
    args = list(call.args)
    kwargs = {}
    if how == "positional":
        args[8] = cube_math_type
    else:
        args.pop(8)
        kwargs["cube_math_type"] = cube_math_type
    result = compare("avg_pool2d_backward", *args, backends=("numpy", "numpy"), **kwargs)
    assert result[0].tolerance.name.startswith(name)


def test_hfloat32_level_error_passes_only_with_cube_math_type():
    expected = np.random.default_rng(1).standard_normal((4, 64)).astype(np.float32)
    actual = (expected * np.float32(1 + 4e-4)).astype(np.float32)  # what HF32 inputs may cost
    assert not measure("out", actual, expected, tolerance(np.float32)).passed
    for cube in (1, 3):
        m = measure("out", actual, expected, tolerance(np.float32, cube_math_type=cube), cube_math_type=cube)
        assert m.passed and "HFLOAT32" in m.standard.rule


# -- measure ---------------------------------------------------------------------------------

def test_measure_reports_abs_rel_and_cosine():
    expected = np.array([1.0, -2.0, 4.0, 0.0], dtype=np.float32)
    actual = np.array([1.0, -2.0, 4.002, 0.0], dtype=np.float32)
    m = measure("out", actual, expected, Tolerance(1e-3, 1e-3, "test"))
    assert m.max_abs == pytest.approx(0.002, rel=1e-3) and m.max_rel == pytest.approx(0.0005, rel=1e-3)
    assert 0.99999 < m.cosine < 1.0 and m.passed and m.dtype == "FLOAT" and m.shape == (4,)
    assert not m.standard.passed  # CANN's FLOAT threshold (MERE < 2^-13) is stricter than the tolerance given
    m = measure("out", actual, expected, Tolerance(1e-4, 1e-4, "test"))
    assert not m.passed and m.mismatched == 1


def test_measure_near_zero_uses_the_scaled_absolute_floor():
    expected = np.array([1000.0, 1e-6], dtype=np.float32)  # a reduction that cancelled to ~0
    actual = np.array([1000.0, 2e-3], dtype=np.float32)
    m = measure("out", actual, expected, tolerance(np.float32))
    assert m.passed and m.max_rel == 0  # the tiny element is below the floor: no relative error
    # ... but CANN's standard holds a golden value below 1e-6 to an absolute error of 1e-9
    assert not m.standard.passed and dict(m.standard.figures)["small-value errors"] == 1
    assert not measure("out", np.array([1000.0, 1.0], np.float32), expected, tolerance(np.float32)).passed


def test_measure_nan_inf_shape_dtype_and_exact():
    tol = tolerance(np.float32)
    nan = np.array([np.nan, np.inf, 1.0], np.float32)
    assert measure("out", nan.copy(), nan, tol).passed
    m = measure("out", np.array([0.0, np.inf, 1.0], np.float32), nan, tol)
    assert not m.passed and m.max_abs == np.inf and "NaN" in m.note
    assert not measure("out", np.zeros(3, np.float32), np.zeros(4, np.float32), tol).passed
    assert not measure("out", np.zeros(3, np.float16), np.zeros(3, np.float32), tol).passed
    ints = np.array([5, -3, 100], np.int64)
    assert measure("out", ints.copy(), ints, tolerance(np.int64)).passed
    m = measure("out", ints + np.array([0, 0, 1]), ints, tolerance(np.int64))
    assert not m.passed and m.max_abs == 1 and m.mismatched == 1
    assert measure("out", np.zeros(3, bool), np.zeros(3, bool), tolerance(np.bool_)).cosine == 1.0


# -- the CANN test-kit standard ----------------------------------------------------------------

@pytest.mark.parametrize("dtype, row, exponent", [(np.float32, "FLOAT", 13), (np.float16, "FLOAT16", 10),
                                                  (aclnn_py.bfloat16, "BFLOAT16", 7), (np.float64, "FLOAT", 13)])
def test_threshold_standard_row_per_dtype(dtype, row, exponent):
    golden = np.ones(4, dtype)
    s = judge(golden.copy(), golden)
    assert s.passed and s.name == THRESHOLD and f"MERE < 2^-{exponent}" in s.rule and f"({row})" in s.rule
    assert CANN_THRESHOLDS[row] == 2.0**-exponent


def test_threshold_standard_reads_mere_and_mare():
    t = CANN_THRESHOLDS["FLOAT"]  # float64 results are held to FLOAT's threshold
    golden = np.linspace(1.0, 2.0, 1000)
    assert judge(golden * (1 + 0.9 * t), golden).passed        # MERE just under T, MARE under 10 T
    assert not judge(golden * (1 + 1.2 * t), golden).passed    # MERE over T
    one = golden.copy()
    one[7] *= 1 + 11 * t                                       # MERE small, MARE over 10 T
    s = judge(one, golden)
    assert not s.passed and dict(s.figures)["MARE"] == pytest.approx(11 * t, rel=1e-3)
    one[7] = golden[7] * (1 + 9 * t)
    assert judge(one, golden).passed


def test_threshold_standard_small_values_by_absolute_error():
    golden = np.array([1.0, 5e-7, -3e-7], np.float32)  # two below FLOAT's small-value bound 1e-6
    assert judge(np.array([1.0, 5e-7 + 5e-10, -3e-7], np.float32), golden).passed
    s = judge(np.array([1.0, 5e-7 + 5e-9, -3e-7], np.float32), golden)
    assert not s.passed and dict(s.figures)["small-value errors"] == 1


def test_double_thousandth_counts_elements_within_a_thousandth():
    golden = np.linspace(1.0, 2.0, 10000)
    off = golden.copy()
    off[:9] *= 1.01                   # 0.09% of elements off: pass
    assert judge(off, golden, DOUBLE_THOUSANDTH).passed
    off[:11] *= 1.01                  # 0.11%: fail
    s = judge(off, golden, DOUBLE_THOUSANDTH)
    assert not s.passed and dict(s.figures)["within"] == pytest.approx(0.9989)
    assert PRECISION["convolution_backward"] == DOUBLE_THOUSANDTH and PRECISION["relu"] == THRESHOLD
    # MindStudio's checker holds conv1d/conv2d to it in both directions: the forward too
    assert PRECISION["convolution"] == DOUBLE_THOUSANDTH


def test_integers_by_binary_consistency_and_nan_fails_every_standard():
    assert judge(np.array([1, 2]), np.array([1, 2])).passed
    s = judge(np.array([1, 2]), np.array([1, 3]))
    assert s.name == BINARY and not s.passed
    golden = np.array([1.0, np.nan, np.inf])
    assert judge(golden.copy(), golden).passed and judge(golden.copy(), golden, DOUBLE_THOUSANDTH).passed
    assert not judge(np.array([1.0, 0.0, np.inf]), golden).passed
    assert not judge(np.array([1.0, np.nan, 0.0]), golden, DOUBLE_THOUSANDTH).passed


def test_report_names_the_standard_and_its_figures(sim_lib):
    call = _call(by_name("convolution_backward").case, (2, 4, 7, 6), F32, out_channels=6, kernel=3, stride=1,
                 padding=1, groups=2)
    report = compare(call.op, *call.args, backends=("sim", "numpy"))
    assert report.passed and report.meets_standard and all(o.standard.name == DOUBLE_THOUSANDTH for o in report)
    text = str(report)
    assert "CANN standard" in text and "double 1/1000 within" in text
    assert "double thousandth [over 99.9% of elements within 0.1% relative error]" in str(report[0].standard)


# -- the golden CANN's standard is judged against ----------------------------------------------

def _sequential_sum(values: np.ndarray) -> np.float32:
    """A float32 sum accumulated left to right (each addition rounded to float32)."""
    total = np.float32(0)
    for v in values:
        total = np.float32(total + v)
    return total


def test_two_float32_sums_in_other_orders_fail_mare_against_each_other_not_against_the_golden(torch):
    # Each row: 1, a hundred of 2.5e-8, -1, 1e-5. Summed left to right in float32 each small term is
    # lost against the 1 (half an ulp of 1 is 6e-8): 1e-5. Summed with the 1 and -1 first: 1.25e-5,
    # within a few float32 roundings of the exact sum. Both are float32 sums of the same terms; the
    # tolerance passes both, and only a golden computed more precisely tells which is right.
    small = np.full(100, 2.5e-8, np.float32)
    row = np.concatenate([[1.0], small, [-1.0, 1e-5]]).astype(np.float32)
    x = np.stack([row * (k + 1) for k in range(4)])                       # (4, 103)
    reference = np.array([_sequential_sum(r) for r in x], np.float32)     # the order that loses the small terms
    actual = np.array([_sequential_sum(np.concatenate([[r[0], r[-2]], r[1:-2], r[-1:]])) for r in x], np.float32)
    np.testing.assert_allclose(reference, 1e-5 * np.arange(1, 5), rtol=1e-6)
    exact = x.astype(np.float64).sum(axis=1)                              # every float32 term, summed in float64
    g = golden("reduce_sum", (x, [1], False, np.float32))
    assert g.result.dtype == np.float64 and "DOUBLE" in g.source
    np.testing.assert_allclose(g.result, exact, rtol=1e-12)               # PyTorch's sum in float64: the exact one

    against_reference = compare_results("reduce_sum", actual, reference, ("a", "b"))
    against_golden = compare_results("reduce_sum", actual, reference, ("a", "b"), golden=g)
    assert against_reference.passed and against_golden.passed             # the tolerance's verdict: the same
    assert not against_reference[0].standard.passed and dict(against_reference[0].standard.figures)["MARE"] > 0.1
    assert against_golden[0].standard.passed and against_golden[0].golden == g.source
    # ... and the sum that lost the terms is the one below the standard against the golden
    assert not compare_results("reduce_sum", reference, actual, ("b", "a"), golden=g)[0].standard.passed


def test_the_golden_of_an_operator_with_integer_indices_keeps_them(torch):
    rng = np.random.default_rng(0)
    grad = rng.standard_normal((2, 3, 4, 6)).astype(np.float32)
    x = rng.standard_normal((2, 3, 2, 3)).astype(np.float32)
    indices = rng.integers(0, 24, (2, 3, 2, 3)).astype(np.int64)
    g = golden("max_unpool2d_backward", (grad, x, indices, [4, 6]))
    assert g.result.dtype == np.float64
    expect = np.take_along_axis(grad.astype(np.float64).reshape(2, 3, 24), indices.reshape(2, 3, 6), -1)
    np.testing.assert_array_equal(g.result, expect.reshape(2, 3, 2, 3))
    # an integer output (MaxPool2dWithIndices' indices) is judged by its values in the result's dtype
    pooled = golden("max_pool2d_with_indices", (x, [2, 2], [2, 2], [0, 0], [1, 1], False))
    out, idx = aclnn_py.max_pool2d_with_indices(x, [2, 2], [2, 2], [0, 0], [1, 1], False, backend="numpy")
    report = compare_results("max_pool2d_with_indices", (out, idx), (out, idx), ("numpy", "numpy"), golden=pooled)
    assert pooled.result[1].dtype.kind == "i" and report[1].standard.name == BINARY and report.meets_standard


def test_an_int8_sum_is_judged_as_the_device_wraps_it(torch):
    # PyTorch sums INT8 in INT64; an INT8 result wraps: the golden is compared in the result's dtype.
    x = np.full((2, 3), 100, np.int8)
    wrapped = aclnn_py.reduce_sum(x, [1], False, np.int8, backend="numpy")
    assert wrapped.dtype == np.int8 and np.all(wrapped == np.int8(300 - 256))
    g = golden("reduce_sum", (x, [1], False, np.int8))
    assert np.all(g.result == 300)
    assert compare_results("reduce_sum", wrapped, wrapped, ("numpy", "numpy"), golden=g).meets_standard


def test_a_reference_that_cannot_take_the_raised_inputs_falls_back_to_the_reference(torch, monkeypatch):
    # A PyTorch function that takes FLOAT only for one argument: no golden, and the standard is
    # judged against the reference, saying why.
    mm = by_name("mm")
    float_only = dataclasses.replace(mm, torch=lambda torch, a, b, cube_math_type=0: torch.mm(a, b.float()))
    monkeypatch.setattr(_compare, "by_name", lambda name: float_only)
    a = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
    b = np.random.default_rng(1).standard_normal((4, 2)).astype(np.float32)
    g = golden("mm", (a, b, 0))
    assert g.result is None and g.source.startswith("no golden: PyTorch CPU, float inputs in DOUBLE failed (RuntimeError")
    product = a @ b
    report = compare_results("mm", product, product, ("numpy", "numpy"), golden=g)
    assert report[0].standard.passed and report[0].golden == f"the reference ({g.source})"


def test_the_threshold_row_is_the_result_s_dtype_against_a_wider_golden():
    exact = np.linspace(1.0, 2.0, 50)
    s = judge(exact.astype(np.float16), exact)       # FLOAT16's rounding alone: within 2^-11
    assert s.passed and "(FLOAT16)" in s.rule
    assert not judge(exact.astype(np.float16), exact.astype(np.float32).astype(np.float64) * (1 + 2e-3)).passed
    assert measure("out", exact.astype(np.float16), exact.astype(np.float16), tolerance(np.float16),
                   golden=exact, golden_source="exact").golden == "exact"
    assert judge(np.array([1, 2], np.int8), np.array([1.0, 2.0])).name == BINARY
    assert Golden(None, "why").result is None
