"""aclnn_py.call / prepare on operators beyond the five: tests/call/fake_ops.c, installed as a
custom operator package. Run by test_fake_operator.py in a child pytest whose environment has
ASCEND_CUSTOM_OPP_PATH set before the simulator loads (not collected by the main run)."""

from __future__ import annotations

import numpy as np
import pytest

import aclnn_py
from aclnn_py import AclnnError, Scalar, Tensor
from aclnn_py._runtime import loader

OP = "aclnnFakeEverything"
ACL_FLOAT, ACL_INT32, ACL_INT64, ACL_DOUBLE, ACL_BOOL, ACL_COMPLEX128 = 0, 3, 9, 11, 12, 17


@pytest.fixture(autouse=True)
def on_sim():
    with aclnn_py.use_backend("sim"):
        yield


def counters() -> dict[str, int]:
    lib = loader.library("sim")
    lib.synchronize()
    c = lib.ffi.new("aclsimCounters *")
    lib.call("aclsimGetCounters", c)
    return {f: getattr(c, f) for f, _ in lib.ffi.typeof("aclsimCounters").fields}


def arguments(rng, n_list=2, **changes):
    x = rng.standard_normal((2, 3)).astype(np.float32)
    args = dict(x=x, xs=[rng.standard_normal((2, 3)).astype(np.float32) for _ in range(n_list)],
                ints=[1, 20, 300], mask=[True, False, True], weights=[0.5, 1.5], alpha=2, betas=[1, 2.5, True],
                offset=7, small=-3, count=100, negate=True, scale=2.0, fscale=0.25, tag="abcd", mode=1,
                out=np.full_like(x, np.nan), extra=np.full_like(x, np.nan),
                outs=[np.full_like(x, np.nan) for _ in range(n_list)])
    args.update(changes)
    return args


def expected(a):
    """The NumPy computation the operator's header describes."""
    c = (float(a["alpha"]) + sum(float(b) for b in a["betas"]) + a["offset"] + a["small"] + a["count"]
         + sum(i for i, m in zip(a["ints"], a["mask"]) if m) + a["fscale"] * sum(a["weights"])
         + (len(a["tag"]) if a["tag"] is not None else 0))
    x = np.asarray(a["x"], np.float64)
    out = (-1 if a["negate"] else 1) * a["scale"] * x + (c if a["mode"] == 0 else -c)
    outs = [a["scale"] * np.asarray(xi, np.float64) + x for xi in a["xs"]]
    return out, 2 * x, outs


def check(result, a):
    out, extra, outs = expected(a)
    np.testing.assert_allclose(np.asarray(result[0]), out, rtol=1e-6, atol=1e-4)
    if a["extra"] is not None:
        np.testing.assert_allclose(np.asarray(result[1]), extra, rtol=1e-6)
    for got, want in zip(result[2], outs):
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6, atol=1e-5)


def host(v):
    return v.numpy() if isinstance(v, Tensor) else v


def test_every_parameter_kind_positionally():
    a = arguments(np.random.default_rng(0))
    result = aclnn_py.call(OP, *a.values())
    assert result[0] is a["out"] and result[1] is a["extra"] and result[2] == a["outs"]
    assert all(r is o for r, o in zip(result[2], a["outs"]))
    check(result, a)


def test_by_keyword_with_other_values_and_a_null_output():
    a = arguments(np.random.default_rng(1), extra=None, mode=0, negate=np.bool_(False), tag=None,
                  alpha=np.float32(0.5), small=np.int8(-128), count=65535, scale=-1.5)
    before = a["x"].copy()
    result = aclnn_py.call(OP, **dict(reversed(list(a.items()))))
    assert result[1] is None
    check(result, a)
    np.testing.assert_array_equal(a["x"], before)  # an input is not written


def test_empty_lists_and_wrapper_objects():
    a = arguments(np.random.default_rng(2), n_list=0, ints=aclnn_py.IntArray([5, 6]),
                  mask=aclnn_py.BoolArray([False, True]), weights=aclnn_py.FloatArray([]),
                  alpha=Scalar(3, np.int32), betas=[])
    result = aclnn_py.call(OP, **a)
    assert result[2] == []
    check(result, dict(a, ints=[5, 6], mask=[False, True], weights=[], alpha=3))


def test_device_tensors_in_and_out():
    rng = np.random.default_rng(3)
    a = arguments(rng)
    d = dict(a, x=Tensor.from_numpy(a["x"]), xs=[Tensor.from_numpy(v) for v in a["xs"]],
             out=Tensor.empty((2, 3), np.float32), extra=Tensor.empty((2, 3), np.float32),
             outs=[Tensor.empty((2, 3), np.float32) for _ in a["xs"]])
    result = aclnn_py.call(OP, **d)
    assert result[0] is d["out"] and all(isinstance(t, Tensor) for t in result[2])
    check([host(result[0]), host(result[1]), [host(t) for t in result[2]]], a)


@pytest.mark.parametrize("value, dtype, number", [
    (True, ACL_BOOL, 1.0), (-7, ACL_INT64, -7.0), (2**40, ACL_INT64, 2.0**40), (1.25, ACL_DOUBLE, 1.25),
    (2 - 3j, ACL_COMPLEX128, 2.0), (np.float32(0.5), ACL_FLOAT, 0.5), (np.int32(-9), ACL_INT32, -9.0),
    (np.bool_(False), ACL_BOOL, 0.0)])
def test_scalar_dtypes_follow_torch_npu(value, dtype, number):
    info = np.zeros((3, 2))
    aclnn_py.call("aclnnFakeScalarInfo", value, [value, Scalar(4, np.float32)], info)
    np.testing.assert_array_equal(info, [[dtype, number], [dtype, number], [ACL_FLOAT, 4.0]])


@pytest.mark.parametrize("name, value, error, words", [
    ("x", [1.0, 2.0], TypeError, "x must be"),
    ("xs", np.zeros((2, 2, 3), np.float32), TypeError, "xs (aclTensorList) must be a sequence"),
    ("xs", [np.zeros((2, 3), np.float32), "no"], TypeError, "xs[1] must be"),
    ("ints", [1, 2.5, 3], TypeError, "ints[1] must be an int"),
    ("mask", [True, 1, True], TypeError, "mask[1] must be a bool"),
    ("weights", ["a", 1.0], TypeError, "weights[0] must be a real number"),
    ("alpha", "2", TypeError, "alpha (aclScalar *) must be a number"),
    ("betas", 3, TypeError, "betas (aclScalarList) must be a sequence"),
    ("betas", [1, None], TypeError, "betas[1] (aclScalar *) must be a number"),
    ("offset", 1.0, TypeError, "offset must be an int"),
    ("negate", 1, TypeError, "negate must be a bool"),
    ("scale", "2", TypeError, "scale must be a real number"),
    ("tag", 5, TypeError, "tag (const char *) must be a str"),
    ("mode", "add", TypeError, "mode must be an int"),
    ("outs", [np.zeros((2, 3), np.float32), (1, 2)], TypeError, "outs[1] is an output"),
    ("small", 128, AclnnError, "small = 128 does not fit the C parameter's int8_t"),
    ("count", -1, AclnnError, "count = -1 does not fit the C parameter's uint16_t"),
    ("mode", 2**31, AclnnError, "mode = 2147483648 does not fit the C parameter's FakeMode"),
    ("fscale", 1e39, AclnnError, "fscale = 1e+39 is outside float's range"),
])
def test_conversion_errors_name_the_parameter_and_leak_nothing(name, value, error, words):
    a = arguments(np.random.default_rng(4))
    before = counters()
    with pytest.raises(error) as info:
        aclnn_py.call(OP, **dict(a, **{name: value}))
    assert words in str(info.value)
    if error is AclnnError:
        assert info.value.status == 161002
    assert counters() == before


def test_the_operators_own_checks_leak_nothing():
    a = arguments(np.random.default_rng(5))
    before = counters()
    for change in (dict(mask=[True]), dict(mode=5), dict(outs=a["outs"][:1]), dict(alpha=None)):
        with pytest.raises(AclnnError) as info:
            aclnn_py.call(OP, **dict(a, **change))
        assert info.value.status in (161001, 161002) and OP in info.value.api
    assert counters() == before


def test_prepare_with_lists_of_host_arrays():
    rng = np.random.default_rng(6)
    a = arguments(rng)
    before = counters()
    with aclnn_py.prepare(OP, **a) as run:
        for _ in range(3):
            b = arguments(rng)
            b["outs"] = a["outs"]  # the same output arrays, written again
            result = run(**b)
            assert all(r is o for r, o in zip(result[2], a["outs"]))
            check(result, b)
    assert counters() == before


def test_prepare_repoints_tensor_list_elements():
    rng = np.random.default_rng(7)
    a = arguments(rng)
    on_device = lambda b: dict(b, x=Tensor.from_numpy(b["x"]), xs=[Tensor.from_numpy(v) for v in b["xs"]],  # noqa: E731
                               out=Tensor.empty((2, 3), np.float32), extra=Tensor.empty((2, 3), np.float32),
                               outs=[Tensor.empty((2, 3), np.float32) for _ in b["xs"]])
    first = on_device(a)
    with aclnn_py.prepare(OP, **first) as run:
        for _ in range(2):
            b = arguments(rng)
            d = on_device(b)  # every tensor elsewhere: aclSet{Input,Output}TensorAddr and the Dynamic ones
            result = run(**d)
            assert result[2][1] is d["outs"][1]
            check([host(result[0]), host(result[1]), [host(t) for t in result[2]]], b)
        # The first tensors are untouched and the executor can return to them.
        result = run(**first)
        check([host(result[0]), host(result[1]), [host(t) for t in result[2]]], a)


@pytest.mark.parametrize("name, value, words", [
    ("xs", lambda a: a["xs"][:1], "xs had 2 tensors in phase 1, got 1"),
    ("xs", lambda a: [a["xs"][0], a["xs"][1].astype(np.float64)], "xs[1] must have phase 1's shape and dtype"),
    ("ints", lambda a: [1, 2, 3], "ints differs"),
    ("alpha", lambda a: 2.0, "alpha differs"),
    ("betas", lambda a: [1, 2.5], "betas differs"),
    ("offset", lambda a: 8, "offset differs"),
    ("tag", lambda a: "abce", "tag differs"),
    ("extra", lambda a: None, "extra was a tensor in phase 1"),
    ("x", lambda a: Tensor.from_numpy(a["x"]), "x must have phase 1's kind"),
])
def test_prepare_refuses_what_phase_1_fixed(name, value, words):
    a = arguments(np.random.default_rng(8))
    with aclnn_py.prepare(OP, **a) as run:
        with pytest.raises(ValueError) as info:
            run(**dict(a, **{name: value(a)}))
        assert words in str(info.value)
        check(run(**a), a)


def test_numpy_backend_needs_a_device():
    with pytest.raises(AclnnError, match="aclnnFakeEverything is not available on the numpy backend"):
        aclnn_py.call(OP, backend="numpy")
    with pytest.raises(AclnnError, match="aclnnFakeEverything is not available on the numpy backend"):
        aclnn_py.prepare(OP, backend="numpy")
