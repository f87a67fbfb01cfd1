"""aclnn_py.compare: the numbers it reports, the tolerance table, cube_math_type widening."""

from __future__ import annotations

import numpy as np
import pytest

import aclnn_py
from aclnn_py import Tensor
from aclnn_py._compare import HFLOAT32, TOLERANCES, Tolerance, compare, measure, tolerance
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
    assert measure("out", actual, expected, tolerance(np.float32, cube_math_type=3)).passed
    assert measure("out", actual, expected, tolerance(np.float32, cube_math_type=1)).passed


# -- measure ---------------------------------------------------------------------------------

def test_measure_reports_abs_rel_and_cosine():
    expected = np.array([1.0, -2.0, 4.0, 0.0], dtype=np.float32)
    actual = np.array([1.0, -2.0, 4.002, 0.0], dtype=np.float32)
    m = measure("out", actual, expected, Tolerance(1e-3, 1e-3, "test"))
    assert m.max_abs == pytest.approx(0.002, rel=1e-3) and m.max_rel == pytest.approx(0.0005, rel=1e-3)
    assert 0.99999 < m.cosine < 1.0 and m.passed and m.dtype == "FLOAT" and m.shape == (4,)
    m = measure("out", actual, expected, Tolerance(1e-4, 1e-4, "test"))
    assert not m.passed and m.mismatched == 1


def test_measure_near_zero_uses_the_scaled_absolute_floor():
    expected = np.array([1000.0, 1e-6], dtype=np.float32)  # a reduction that cancelled to ~0
    actual = np.array([1000.0, 2e-3], dtype=np.float32)
    m = measure("out", actual, expected, tolerance(np.float32))
    assert m.passed and m.max_rel == 0  # the tiny element is below the floor: no relative error
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
