"""Tensor arguments whose data an operator never reads (its registration's ``shape_only``, read by
aclnn_py/_convert/executor.py: ``self`` of MaxUnpool2dBackward and ReflectionPad2dBackward) are described
on ``sim`` without an upload: a row-major descriptor of their shape and dtype over NULL data, on
the ABI-mode path, on the fast path and in the plans it records.  The results stay those of the
numpy backend and PyTorch, the simulator still checks their shape, dtype and format (the same
AclnnError as on numpy), it refuses NULL data for every argument its kernel does read, and
every handle and device byte is released."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import aclnn_py
from aclnn_py._runtime import pool
from aclnn_py import AclnnError, Tensor, _fast
from aclnn_py._convert import executor as _aclnn

from helpers import assert_close

torch = pytest.importorskip("torch")

UNPOOL = sys.modules["aclnn_py.ops.max_unpool2d_backward"]
AVG = sys.modules["aclnn_py.ops.avg_pool2d_backward"]
PAD = sys.modules["aclnn_py.ops.reflection_pad2d_backward"]


def counters(lib) -> dict[str, int]:
    pool.trim_all()  # (the caching allocator's blocks are the binding's on purpose)
    c = lib.ffi.new("aclsimCounters *")
    lib.call("aclsimGetCounters", c)
    return {f: getattr(c, f) for f, _ in lib.ffi.typeof("aclsimCounters").fields}


def _unpool(rng, self):
    n, c, h, w = self.shape
    go = rng.standard_normal((n, c, 2 * h, 2 * w)).astype(self.dtype)
    indices = rng.integers(0, 4 * h * w, size=self.shape).astype(np.int64)
    want = torch.from_numpy(go).flatten(-2).gather(-1, torch.from_numpy(indices).flatten(-2)).view(self.shape)
    return (lambda s, **kw: aclnn_py.max_unpool2d_backward(go, s, indices, [2 * h, 2 * w], **kw)), want.numpy()


def _avg(rng, self):
    n, c, h, w = self.shape
    go = rng.standard_normal((n, c, (h - 1) // 2 + 1, (w - 1) // 2 + 1)).astype(self.dtype)
    want = torch.ops.aten.avg_pool2d_backward(torch.from_numpy(go), torch.zeros(self.shape), [3, 3], [2, 2], [1, 1],
                                              False, True, None)
    return (lambda s, **kw: aclnn_py.avg_pool2d_backward(go, s, [3, 3], [2, 2], [1, 1], False, True, 0, **kw)), \
        want.numpy()


def _pad(rng, self):
    n, c, h, w = self.shape
    go = rng.standard_normal((n, c, h + 3, w + 2)).astype(self.dtype)
    want = torch.ops.aten.reflection_pad2d_backward(torch.from_numpy(go), torch.zeros(self.shape), [1, 1, 2, 1])
    return (lambda s, **kw: aclnn_py.reflection_pad2d_backward(go, s, [1, 1, 2, 1], **kw)), want.numpy()


OPS = {"max_unpool2d": (_unpool, UNPOOL), "avg_pool2d": (_avg, AVG), "reflection_pad2d": (_pad, PAD)}


@pytest.fixture(params=["fast", "abi"])
def path(request, sim_lib, monkeypatch):
    """The binding's fast path (plans included) or its ABI-mode path (one cffi call per C call)."""
    if request.param == "abi":
        monkeypatch.setattr(sim_lib, "fast_api", None)
        monkeypatch.setattr(_fast, "entry", lambda: None)
    for _, module in OPS.values():
        getattr(module._aclnn, "clear", lambda: None)()
    # this thread's stream exists before the tests count the live handles
    aclnn_py.reflection_pad2d_backward(np.ones((1, 1, 4, 4), np.float32), np.ones((1, 1, 2, 2), np.float32),
                                       [1, 1, 1, 1], backend="sim")
    return request.param


# The operators whose registration names shape-only arguments (the others upload every one).
SHAPE_ONLY = [name for name, (_, module) in OPS.items() if module.OPERATOR.shape_only]


def test_shape_only_arguments_are_registered_tensor_arguments():
    """Each registered shape-only argument is an input tensor parameter of its operator (as the
    binding's header declares it), and the binding finds it by the operator's phase 1."""
    from aclnn_py._convert.params import read_signature
    from aclnn_py._ffi import ffi
    from aclnn_py._ffi.declarations import include_dir

    assert {"max_unpool2d", "reflection_pad2d", "avg_pool2d"} <= set(SHAPE_ONLY)
    for name, (_, module) in OPS.items():
        names = set(module.OPERATOR.shape_only)
        assert _aclnn._shape_only(module.API) == names
        params = read_signature(module.API, (Path(include_dir()) / "aclnnop",), ffi()).params
        assert names <= {p.name for p in params if p.kind == "tensor" and not p.output}
    assert _aclnn._shape_only("aclnnNoSuchOperatorGetWorkspaceSize") == frozenset()
    assert _aclnn._SHAPE_ONLY_BACKENDS == {"sim"}


@pytest.mark.parametrize("layout", ["contiguous", "strided", "reversed", "empty"])
@pytest.mark.parametrize("op", OPS)
def test_results_equal_numpy_and_pytorch(op, layout, path, sim_lib):
    rng = np.random.default_rng(0)
    base = rng.standard_normal((2, 3, 7, 12)).astype(np.float32)
    self = {"contiguous": base[..., :6].copy(), "strided": base[..., ::2], "reversed": base[..., ::-2],
            "empty": base[:0, ..., :6]}[layout]
    make, want = OPS[op][0](rng, self)
    with Tensor.from_numpy(np.ascontiguousarray(self), backend="sim") as uploaded:
        with make(uploaded, backend="sim") as result:  # self on the device: what the kernel had before
            before_change = result.numpy()
    before = counters(sim_lib)
    for _ in range(3):  # the first call records a plan, the later ones replay it
        got = make(self, backend="sim")
        assert got.shape == self.shape and got.dtype == self.dtype
        np.testing.assert_array_equal(got, before_change)
        assert_close(got, make(self, backend="numpy"), np.float32)
        assert_close(got, want, np.float32)
    assert counters(sim_lib) == before


@pytest.mark.parametrize("op", SHAPE_ONLY)
def test_self_is_described_over_null_data(op, path, sim_lib):
    """What the binding hands the library for self: a descriptor of its shape and dtype, no
    device memory; for gradOutput a device copy."""
    module = OPS[op][1]
    x = np.ones((2, 3, 4, 5), np.float32)
    before = counters(sim_lib)
    with _aclnn.Call(sim_lib, module.API, fast=path == "fast") as call:
        handles = {name: call.tensor(name, x) for name in ("self", "gradOutput")}
        if path == "fast":
            assert handles["self"].pointer == sim_lib.ffi.NULL and handles["self"].desc[-2:] == [x.size, 0]
            assert handles["gradOutput"].pointer != sim_lib.ffi.NULL
            return
        assert counters(sim_lib)["device_bytes"] - before["device_bytes"] == x.nbytes  # gradOutput's alone
        address = sim_lib.ffi.new("void **")
        for name, handle in handles.items():
            sim_lib.call("aclGetRawTensorAddr", handle, address)
            assert (address[0] == sim_lib.ffi.NULL) == (name == "self")
    assert counters(sim_lib)["device_bytes"] == before["device_bytes"]


def test_other_backends_upload_every_argument(sim_lib, monkeypatch):
    """Only the simulator's operators are known to accept NULL data there: on another backend
    the same argument is uploaded."""
    monkeypatch.setattr(sim_lib, "backend", "npu")
    x = np.ones((2, 3, 4, 5), np.float32)
    before = counters(sim_lib)["device_bytes"]
    with _aclnn.Call(sim_lib, UNPOOL.API, fast=False) as call:
        call.tensor("self", x)
        assert counters(sim_lib)["device_bytes"] - before == x.nbytes
    monkeypatch.setattr(sim_lib, "backend", "sim")
    conv = sys.modules["aclnn_py.ops.convolution_backward"]
    assert not conv.OPERATOR.shape_only
    with _aclnn.Call(sim_lib, conv.API, fast=False) as call:  # an operator that registers none
        call.tensor("input", x)
        assert counters(sim_lib)["device_bytes"] - before == x.nbytes


@pytest.mark.parametrize("case", ["rank", "dtype", "N and C", "self empty"])
@pytest.mark.parametrize("op", OPS)
def test_checks_of_self_still_fire(op, case, path, sim_lib):
    """The simulator still reads self's shape and dtype: the same AclnnError as numpy's, and no
    handle or device byte left behind."""
    rng = np.random.default_rng(1)
    make, _ = OPS[op][0](rng, np.zeros((2, 3, 6, 6), np.float32))
    self = {"rank": np.zeros((2, 3, 6, 6, 1), np.float32), "dtype": np.zeros((2, 3, 6, 6), np.uint16),
            "N and C": np.zeros((2, 4, 6, 6), np.float32), "self empty": np.zeros((2, 3, 0, 6), np.float32)}[case]
    before = counters(sim_lib)
    errors = []
    for backend in ("sim", "numpy", "sim"):
        try:
            make(self, backend=backend)
            errors.append(None)
        except (AclnnError, TypeError) as exc:
            errors.append((type(exc), getattr(exc, "status", None), str(exc)))
    assert errors[0] == errors[1] == errors[2]
    if case != "self empty":
        assert errors[0] is not None
    assert counters(sim_lib) == before


def test_the_simulator_refuses_null_data_where_its_kernel_reads(sim_lib):
    """Phase 2 accepts NULL data only for an input the kernel does not read (INPUTS_READ in the
    operator's C source): gradOutput over NULL data is refused, and so is out."""
    g = np.ones((1, 1, 6, 6), np.float32)
    x = np.zeros((1, 1, 4, 4), np.float32)
    for null in ("gradOutput", "out"):
        with _aclnn.Call(sim_lib, PAD.API, fast=False) as call:
            grad = call.descriptor(g.shape, g.dtype, (36, 36, 6, 1), 0, 36, sim_lib.ffi.NULL) \
                if null == "gradOutput" else call.tensor("gradOutput", g)
            out = call.descriptor(x.shape, x.dtype, (16, 16, 4, 1), 0, 16, sim_lib.ffi.NULL) \
                if null == "out" else call.output(x.shape, x.dtype)
            with pytest.raises(AclnnError) as info:
                call.run("aclnnReflectionPad2dBackward", grad, call.tensor("self", x), call.int_array("padding", [1] * 4),
                         out)
            assert info.value.status == 161002
            assert null in info.value.message or "not device memory" in info.value.message


def test_a_device_tensor_self_is_used_in_place(sim_lib):
    """A device Tensor is the caller's memory: used as given (its data never read by the kernel)."""
    rng = np.random.default_rng(2)
    self = np.full((2, 3, 7, 6), np.nan, np.float32)
    make, want = _pad(rng, self)
    with Tensor.from_numpy(self, backend="sim") as t:
        got = make(t, backend="sim")
        with got:
            assert_close(got.numpy(), want, np.float32)


@pytest.mark.parametrize("index, accepted", [(0, False), (1, True)], ids=["gradOutput", "self"])
def test_phase_2_accepts_null_data_only_for_an_input_not_read(sim_lib, index, accepted):
    """A repeatable executor's input re-pointed to NULL (aclSetInputTensorAddr) before phase 2:
    refused (161002) for gradOutput, which the kernel reads; accepted for self, which it does not."""
    g = np.random.default_rng(3).standard_normal((1, 1, 6, 6)).astype(np.float32)
    x = np.zeros((1, 1, 4, 4), np.float32)
    ffi = sim_lib.ffi
    with _aclnn.Call(sim_lib, PAD.API, fast=False) as call:
        inputs = [call.tensor("gradOutput", g), call.tensor("self", x)]
        out = call.output(x.shape, x.dtype)
        executor, workspace, size = call.repeatable("aclnnReflectionPad2dBackward", *inputs,
                                                    call.int_array("padding", [1, 1, 1, 1]), out)
        try:
            sim_lib.call("aclSetInputTensorAddr", executor, index, inputs[index], ffi.NULL)
            status = sim_lib.fn("aclnnReflectionPad2dBackward")(workspace, size, executor, call.stream)
            message = sim_lib.recent_error() or ""
            if accepted:
                assert status == 0, message
                sim_lib.synchronize()
            else:
                assert status == 161002 and "input tensor 0" in message, (status, message)
        finally:
            sim_lib.call("aclDestroyAclOpExecutor", executor)
        if accepted:
            assert_close(call.results()[0], PAD.reflection_pad2d_backward(g, x, [1, 1, 1, 1], backend="numpy"),
                         np.float32)
