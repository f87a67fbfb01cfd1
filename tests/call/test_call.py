"""aclnn_py.call / aclnn_py.prepare on the five operators by their C names, on every backend,
against the slow reference implementations; argument binding and conversion errors; the
repeatable executor's lifetime on sim. (Every parameter type, on an operator beyond the five:
test_fake_operator.py.)"""

from __future__ import annotations

import gc

import numpy as np
import pytest

import aclnn_py
from aclnn_py._runtime import pool
from aclnn_py import AclnnError, Tensor
from aclnn_py._ffi.operator_headers import parse_operator_header
from helpers import assert_close
from reference.avg_pool2d_backward import avg_pool2d_backward as avg_pool_reference
from reference.max_unpool2d_backward import max_unpool2d_backward as unpool_reference
from reference.reflection_pad2d_backward import reflection_pad2d_backward as pad_reference

PAD = "aclnnReflectionPad2dBackward"
POOL = "aclnnAvgPool2dBackward"


def counters(lib) -> dict[str, int]:
    pool.trim_all()  # (the caching allocator's blocks are the binding's on purpose)
    c = lib.ffi.new("aclsimCounters *")
    lib.call("aclsimGetCounters", c)
    return {f: getattr(c, f) for f, _ in lib.ffi.typeof("aclsimCounters").fields}


def pad_case(rng, shape=(2, 3, 5, 6), padding=(1, 2, 2, 1)):
    x = rng.standard_normal(shape).astype(np.float32)
    go = rng.standard_normal(shape[:-2] + (shape[-2] + padding[2] + padding[3],
                                           shape[-1] + padding[0] + padding[1])).astype(np.float32)
    return go, x, list(padding)


def test_parameters_of_a_prototype():
    header = parse_operator_header("""
        aclnnStatus aclnnXGetWorkspaceSize(const aclTensor *self, const aclTensorList * const xs,
            int64_t /* a comment */ dim, char const *mode, aclTensor *out, uint64_t *workspaceSize,
            aclOpExecutor **executor);""")
    params = header.prototypes["aclnnXGetWorkspaceSize"].parameters()
    assert [(p.type, p.name, p.const, p.base, p.pointers) for p in params] == [
        ("const aclTensor *", "self", True, "aclTensor", 1),
        ("const aclTensorList * const", "xs", True, "aclTensorList", 1),
        ("int64_t", "dim", False, "int64_t", 0),
        ("char const *", "mode", True, "char", 1),
        ("aclTensor *", "out", False, "aclTensor", 1),
        ("uint64_t *", "workspaceSize", False, "uint64_t", 1),
        ("aclOpExecutor **", "executor", False, "aclOpExecutor", 2)]


def test_seed_operator_by_c_name(backend):
    rng = np.random.default_rng(0)
    go, x, padding = pad_case(rng)
    grad_input = np.full_like(x, np.nan)
    result = aclnn_py.call(PAD, go, x, padding, grad_input, backend=backend)
    assert result is grad_input
    assert_close(grad_input, pad_reference(go, x, padding), np.float32)


def test_keywords_and_array_likes(backend, torch):
    rng = np.random.default_rng(1)
    go, x, padding = pad_case(rng)
    grad_input = np.zeros_like(x)
    aclnn_py.call(PAD, torch.from_numpy(go.copy()), gradInput=grad_input, padding=tuple(padding),
                  self=memoryview(x), backend=backend)
    assert_close(grad_input, pad_reference(go, x, padding), np.float32)


def test_several_outputs_and_null_outputs(backend):
    rng = np.random.default_rng(2)
    go = rng.standard_normal((1, 2, 3, 3)).astype(np.float32)
    x = rng.standard_normal((1, 2, 5, 5)).astype(np.float32)
    w = rng.standard_normal((2, 2, 3, 3)).astype(np.float32)
    grad_weight = np.zeros_like(w)
    grad_bias = np.zeros(2, np.float32)
    result = aclnn_py.call("aclnnConvolutionBackward", go, x, w, [2], [1, 1], [0, 0], [1, 1], False, [0, 0], 1,
                           [False, True, True], 0, None, grad_weight, grad_bias, backend=backend)
    assert result[0] is None and result[1] is grad_weight and result[2] is grad_bias
    # grad_weight[o, i] = sum over n, y, x of go[n, o] * input window; grad_bias = sum of go.
    windows = np.lib.stride_tricks.sliding_window_view(x.astype(np.float64), (3, 3), axis=(2, 3))
    assert_close(grad_weight, np.einsum("noyx,niyxkl->oikl", go.astype(np.float64), windows), np.float32)
    assert_close(grad_bias, go.astype(np.float64).sum(axis=(0, 2, 3)), np.float32)


def test_prepare_runs_again_on_new_data(backend):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 3, 6, 6)).astype(np.float32)
    args = ([2, 2], [2, 2], [0, 0], False, True, 0, 0)
    grad_input = np.zeros_like(x)
    with aclnn_py.prepare(POOL, rng.standard_normal((2, 3, 3, 3)).astype(np.float32), x, *args, grad_input,
                          backend=backend) as run:
        for _ in range(3):
            go = rng.standard_normal((2, 3, 3, 3)).astype(np.float32)
            assert run(go, x, *args, grad_input) is grad_input
            assert_close(grad_input, avg_pool_reference(go, x.shape, (2, 2), (2, 2), (0, 0), True, 0), np.float32)


def test_prepare_checks_the_arguments_and_writes_nothing(backend):
    go, x, padding = pad_case(np.random.default_rng(9))
    with pytest.raises(AclnnError) as info:
        aclnn_py.prepare(PAD, go, x, [9, 9, 9, 9], np.zeros_like(x), backend=backend)
    assert info.value.status == 161002 and info.value.api == f"{PAD}GetWorkspaceSize"
    grad_input = np.full_like(x, 7.0)
    with aclnn_py.prepare(PAD, go, x, padding, grad_input, backend=backend):
        np.testing.assert_array_equal(grad_input, 7.0)


def test_prepare_refuses_other_shapes_and_arguments(sim_lib):
    rng = np.random.default_rng(4)
    go, x, padding = pad_case(rng)
    grad_input = np.zeros_like(x)
    with aclnn_py.prepare(PAD, go, x, padding, grad_input, backend="sim") as run:
        with pytest.raises(ValueError, match="gradOutput must have phase 1's shape and dtype"):
            run(go[:1], x, padding, grad_input)
        with pytest.raises(ValueError, match="self must have phase 1's shape and dtype"):
            run(go, x.astype(np.float64), padding, grad_input)
        with pytest.raises(ValueError, match="padding differs"):
            run(go, x, [0, 0, 0, 0], grad_input)
        with pytest.raises(ValueError, match="gradInput was a tensor in phase 1"):
            run(go, x, padding, None)
        with pytest.raises(TypeError, match="missing a required argument: 'gradInput'"):
            run(go, x, padding)
        assert run(go, x, padding, grad_input) is grad_input  # still usable after the refusals
        assert_close(grad_input, pad_reference(go, x, padding), np.float32)
    with pytest.raises(ValueError, match="closed"):
        run(go, x, padding, grad_input)


def test_prepare_with_device_tensors_repoints_addresses(sim_lib):
    rng = np.random.default_rng(5)
    go, x, padding = pad_case(rng)
    with Tensor.from_numpy(go, backend="sim") as g0, Tensor.from_numpy(x, backend="sim") as s, \
            Tensor.empty(x.shape, np.float32, backend="sim") as out0, \
            Tensor.empty(x.shape, np.float32, backend="sim") as out1:
        with aclnn_py.prepare(PAD, g0, s, padding, out0, backend="sim") as run:
            assert run(g0, s, padding, out0) is out0
            assert_close(out0.numpy(), pad_reference(go, x, padding), np.float32)
            go1 = rng.standard_normal(go.shape).astype(np.float32)
            with Tensor.from_numpy(go1, backend="sim") as g1:
                # Both addresses change: aclSetInputTensorAddr(0) and aclSetOutputTensorAddr(0).
                assert run(g1, s, padding, out1) is out1
                assert_close(out1.numpy(), pad_reference(go1, x, padding), np.float32)
            assert_close(out0.numpy(), pad_reference(go, x, padding), np.float32)  # untouched
            # The caller's descriptors were not re-pointed: a one-shot call on g0 still reads g0.
            assert_close(aclnn_py.reflection_pad2d_backward(g0, s, padding, backend="sim").numpy(),
                         pad_reference(go, x, padding), np.float32)
            with pytest.raises(ValueError, match="strides"):
                run(g0.view(g0.shape, [1] * 4), s, padding, out0)


def test_prepare_releases_everything_once(sim_lib):
    rng = np.random.default_rng(6)
    go, x, padding = pad_case(rng)
    grad_input = np.zeros_like(x)
    aclnn_py.call(PAD, go, x, padding, grad_input, backend="sim")  # stream and runtime set up
    sim_lib.synchronize()
    before = counters(sim_lib)
    run = aclnn_py.prepare(PAD, go, x, padding, grad_input, backend="sim")
    run(go, x, padding, grad_input)
    assert counters(sim_lib) != before
    run.close()
    run.close()
    assert counters(sim_lib) == before
    # Dropped without close: the finalizer releases it.
    run = aclnn_py.prepare(PAD, go, x, padding, grad_input, backend="sim")
    del run
    gc.collect()
    assert counters(sim_lib) == before
    # A failing phase 1 leaves nothing behind.
    with pytest.raises(AclnnError) as info:
        aclnn_py.prepare(PAD, go, x, [9, 9, 9, 9], grad_input, backend="sim")
    assert info.value.status == 161002
    assert counters(sim_lib) == before


@pytest.mark.parametrize("args, kwargs, message", [
    ((), {}, "missing a required argument: 'gradOutput'"),
    ((1, 2, 3, 4, 5), {}, "too many positional arguments"),
    ((None, None, None), {"gradInput": None, "grad_input": None}, "got an unexpected keyword argument 'grad_input'"),
    ((None, None), {"self": None, "padding": None, "gradInput": None}, "multiple values for argument 'self'"),
])
def test_binding_errors_are_pythons(backend, args, kwargs, message):
    with pytest.raises(TypeError, match=f"{PAD}\\(\\): .*{message}"):
        aclnn_py.call(PAD, *args, backend=backend, **kwargs)


def test_wrong_python_types_name_the_c_parameter(backend):
    rng = np.random.default_rng(7)
    go, x, padding = pad_case(rng)
    with pytest.raises(TypeError, match="self"):
        aclnn_py.call(PAD, go, [[1.0]], padding, np.zeros_like(x), backend=backend)
    with pytest.raises(TypeError, match="padding"):
        aclnn_py.call(PAD, go, x, "1234", np.zeros_like(x), backend=backend)
    with pytest.raises(TypeError, match="gradInput"):
        aclnn_py.call(PAD, go, x, padding, np.zeros_like(x).tolist(), backend=backend)
    with pytest.raises(TypeError, match="gradInput"):
        readonly = np.zeros_like(x)
        readonly.flags.writeable = False
        aclnn_py.call(PAD, go, x, padding, readonly, backend=backend)
    with pytest.raises(TypeError, match="ceilMode"):
        aclnn_py.call(POOL, go, x, [2], [2], [0], 1, True, 0, 0, np.zeros_like(x), backend=backend)


def test_array_likes_that_are_not_cpu_arrays(backend, torch):
    go, x, padding = pad_case(np.random.default_rng(10))
    with pytest.raises(TypeError, match="self dtype <U1 has no aclDataType"):
        aclnn_py.call(PAD, go, np.array(["a"]), padding, np.zeros_like(x), backend=backend)
    with pytest.raises(TypeError, match="gradOutput \\(Tensor\\) cannot be read as a CPU array"):
        aclnn_py.call(PAD, torch.ones(go.shape, requires_grad=True), x, padding, np.zeros_like(x), backend=backend)
    grad_input = np.zeros_like(x)  # a strided torch view is read as it is
    wide = torch.from_numpy(np.repeat(go, 2, axis=-1))
    aclnn_py.call(PAD, wide[..., ::2], x, padding, grad_input, backend=backend)
    assert_close(grad_input, pad_reference(go, x, padding), np.float32)


def test_plain_c_integers_are_range_checked(sim_lib):
    go = np.ones((1, 1, 2, 2), np.float32)
    x = np.ones((1, 1, 4, 4), np.float32)
    with pytest.raises(AclnnError, match="cubeMathType = 128 does not fit the C parameter's int8_t") as info:
        aclnn_py.call(POOL, go, x, [2], [2], [0], False, True, 0, 128, np.zeros_like(x), backend="sim")
    assert info.value.status == 161002
    with pytest.raises(AclnnError, match="groups = 2147483648 does not fit the C parameter's int"):
        aclnn_py.call("aclnnConvolutionBackward", go, x, x, None, [1], [0], [1], False, [0], 2**31,
                      [True, True, False], 0, None, None, None, backend="sim")


def test_unknown_operator_is_named(backend):
    with pytest.raises(AclnnError) as info:
        aclnn_py.call("aclnnNoSuchOperator", 1, backend=backend)
    assert info.value.status == 200001 and info.value.api == "aclnnNoSuchOperator"
    assert info.value.message.startswith(f"aclnnNoSuchOperator is not available on the {backend} backend. ")
    assert "did you mean" not in info.value.message
    assert "aclnnReflectionPad2dBackward" in info.value.message and "python -m aclnn_py ops" in info.value.message


@pytest.mark.parametrize("name, meant", [("aclnnReflectionPad2dBackwrd", "aclnnReflectionPad2dBackward"),
                                         ("aclnnavgpool2dbackward", "aclnnAvgPool2dBackward"),
                                         ("aclnnIm2colBackwardGetWorkspaceSiz", None)])
def test_a_near_miss_gets_a_did_you_mean(backend, name, meant):
    for run in (aclnn_py.call, aclnn_py.prepare):
        with pytest.raises(AclnnError) as info:
            run(name, 1, backend=backend)
        assert info.value.status == 200001
        if meant is None:
            assert "did you mean" not in info.value.message
        else:
            assert f"did you mean {meant}" in info.value.message  # (the nearest first)


@pytest.mark.parametrize("name, error", [(42, TypeError), (None, TypeError), (b"aclnnAdd", TypeError),
                                         ("Add", ValueError), ("", ValueError), ("aclnnGetWorkspaceSize", ValueError)])
def test_the_operator_must_be_a_c_name(backend, name, error):
    for run, where in ((aclnn_py.call, "call"), (aclnn_py.prepare, "prepare")):
        with pytest.raises(error, match=f"^{where}: "):
            run(name, backend=backend)


def test_an_unknown_keyword_is_named_as_unknown(backend):
    go, x, padding = pad_case(np.random.default_rng(3))
    with pytest.raises(TypeError, match=r"unexpected keyword argument 'pad'; did you mean padding\?"):
        aclnn_py.call("aclnnReflectionPad2dBackward", go, x, pad=padding, gradInput=np.empty_like(x), backend=backend)
    with pytest.raises(TypeError, match=r"unexpected keyword argument 'shape' \(its parameters"):
        aclnn_py.call("aclnnReflectionPad2dBackward", go, x, padding, shape=1, backend=backend)


def test_numpy_checks_output_shapes():
    go, x, padding = pad_case(np.random.default_rng(8))
    with pytest.raises(AclnnError, match="gradInput must have shape") as info:
        aclnn_py.call(PAD, go, x, padding, np.zeros((1, 1), np.float32), backend="numpy")
    assert info.value.status == 161002


@pytest.mark.parametrize("rebound", ["self", "indices", "both"])
def test_prepare_repoints_each_input_by_its_prototype_position(sim_lib, rebound):
    # aclSetInputTensorAddr's index counts the phase-1 tensor inputs in prototype order
    # (gradOutput, self, indices): re-pointing self must not move indices, and the reverse.
    rng = np.random.default_rng(11)
    go = rng.standard_normal((1, 2, 4, 4)).astype(np.float32)
    x = np.zeros((1, 2, 2, 2), np.float32)
    idx0 = rng.integers(0, 16, size=x.shape).astype(np.int64)
    idx1 = rng.integers(0, 16, size=x.shape).astype(np.int64)
    with Tensor.from_numpy(go, backend="sim") as g, Tensor.from_numpy(x, backend="sim") as s0, \
            Tensor.from_numpy(x + 1, backend="sim") as s1, Tensor.from_numpy(idx0, backend="sim") as i0, \
            Tensor.from_numpy(idx1, backend="sim") as i1, Tensor.empty(x.shape, np.float32, backend="sim") as out:
        with aclnn_py.prepare("aclnnMaxUnpool2dBackward", g, s0, i0, [4, 4], out, backend="sim") as run:
            self_t = s1 if rebound in ("self", "both") else s0
            indices_t, indices = (i1, idx1) if rebound in ("indices", "both") else (i0, idx0)
            run(g, self_t, indices_t, [4, 4], out)
            assert_close(out.numpy(), unpool_reference(go, x, indices, (4, 4)), np.float32)
