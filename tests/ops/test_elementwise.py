"""The elementwise machinery (aclnn_py/_numpy/elementwise.py, ops/_elementwise.py and the
simulator's sim/src/ops/elementwise.c): promotion, cast legality, the tensor-scalar rules,
broadcasting, strided and overlapping views."""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import numpy as np
import pytest

import aclnn_py
from aclnn_py import bfloat16
from aclnn_py._numpy import elementwise as ew
from aclnn_py.ops import _elementwise

C_SOURCE = Path(aclnn_py.__file__).parent / "sim" / "src" / "ops" / "elementwise.c"
ALL = ew.PROMOTED
F32, F16, F64, I32, I64, B = (np.dtype(t) for t in (np.float32, np.float16, np.float64, np.int32, np.int64, np.bool_))


def test_the_simulators_promotion_table_is_the_python_one():
    text = C_SOURCE.read_text()
    names = re.search(r"static const aclDataType ORDER\[\] = \{([^}]*)\}", text)[1]
    order = [n.strip() for n in names.split(",")]
    assert [aclnn_py._dtypes.to_numpy(aclnn_py.aclDataType[n]) for n in order] == list(ALL)
    short = re.search(r"enum \{([^}]*)\}", text)[1].split(",")
    body = text[text.index("PROMOTE-TABLE-BEGIN"):text.index("PROMOTE-TABLE-END")]
    rows = re.findall(r"\{([^}]*)\}", body)
    assert len(rows) == len(ALL)
    for a, row in zip(ALL, rows):
        cells = [c.strip() for c in row.split(",")]
        for b, cell in zip(ALL, cells):
            assert ALL[[s.strip() for s in short].index(cell)] == ew.promote(a, b), (a, b)


def test_promotion_is_symmetric_and_pytorchs_on_the_documented_examples():
    for a, b in itertools.product(ALL, ALL):
        assert ew.promote(a, b) == ew.promote(b, a)
    assert ew.promote(F16, I64) == F16          # not NumPy's float64
    assert ew.promote(F16, bfloat16) == F32
    assert ew.promote(np.dtype(np.int8), np.dtype(np.uint8)) == np.int16
    assert ew.promote(B, B) == B and ew.promote(np.dtype(np.uint16), I32) is None
    assert ew.promote(np.dtype(np.uint16), np.dtype(np.uint16)) == np.uint16


def test_promotion_matches_torch_on_every_pair(torch):
    to_torch = {d: getattr(torch, n) for d, n in zip(ALL, ("float32", "float16", "bfloat16", "float64", "int8", "uint8",
                                                            "int16", "int32", "int64", "bool", "complex64",
                                                            "complex128"))}
    for a, b in itertools.product(ALL, ALL):
        assert to_torch[ew.promote(a, b)] == torch.promote_types(to_torch[a], to_torch[b]), (a, b)


def test_can_cast():
    assert not ew.can_cast(np.dtype(np.complex64), F32)
    assert not ew.can_cast(F32, I32) and not ew.can_cast(bfloat16, np.dtype(np.uint8))
    assert not ew.can_cast(I32, B) and ew.can_cast(B, F16) and ew.can_cast(F32, B) is False
    assert ew.can_cast(I64, F16) and ew.can_cast(F32, np.dtype(np.complex64)) and ew.can_cast(F64, F16)


def test_tensor_scalar_rules():
    rule = ew.scalar_promote
    assert rule(F16, F64, F16, bf16_as_float=False) == F16            # a float tensor keeps its dtype
    assert rule(I32, I64, I32, bf16_as_float=False) == I32            # an integer scalar does not widen
    assert rule(I32, F64, F32, bf16_as_float=False) == F32            # a DOUBLE scalar with a FLOAT out
    assert rule(I32, F64, F64, bf16_as_float=False) == F64
    assert rule(B, I64, I64, bf16_as_float=False) == I64
    assert rule(bfloat16, F64, bfloat16, bf16_as_float=True) == F32   # Muls: BFLOAT16 computes in FLOAT
    assert rule(B, F64, B, bf16_as_float=True) == F32
    assert rule(F32, np.dtype(np.complex128), F32, bf16_as_float=False) == np.complex128
    assert ew.result_dtype_with_scalar(I32, F64, bf16_as_float=False) == F32
    assert ew.result_dtype_with_scalar(bfloat16, F64, bf16_as_float=True) == bfloat16
    assert ew.result_dtype_with_scalar(I32, I64, bf16_as_float=True) == I32


def test_scalar_conversion_is_cs_static_cast():
    assert ew.scalar_as(np.asarray(1e-9), B) == False  # noqa: E712  (|v| < FLT_EPSILON)
    assert ew.scalar_as(np.asarray(1e-3), B) == True  # noqa: E712
    assert ew.scalar_as(np.asarray(300, np.int64), np.dtype(np.int8)) == 44
    assert ew.scalar_as(np.asarray(True), I32) == 1
    assert ew.is_equal_to_one(np.asarray(1.0)) and ew.is_equal_to_one(np.asarray(np.nan))
    assert not ew.is_equal_to_one(np.asarray(2, np.int64))


def test_broadcast_shapes():
    assert ew.broadcast((2, 1, 4), (3, 1)) == (2, 3, 4)
    assert ew.broadcast((0,), (1,)) == (0,) and ew.broadcast((), (5,)) == (5,)
    assert ew.broadcast((2, 3), (4, 3)) is None


def test_scalar_arg_takes_numbers_and_scalars():
    assert _elementwise.scalar_arg("api", "alpha", None) is None
    assert _elementwise.scalar_arg("api", "alpha", 2).dtype == np.int64
    assert _elementwise.scalar_arg("api", "alpha", np.float16(2)).dtype == np.float16
    with pytest.raises(TypeError, match="alpha"):
        _elementwise.scalar_arg("api", "alpha", "2")


@pytest.mark.parametrize("op", ["add", "mul"])
def test_transposed_broadcast_and_negative_stride_views(backend, op, torch):
    rng = np.random.default_rng(1)
    base = rng.standard_normal((6, 5, 4), dtype=np.float32)
    other = rng.standard_normal((5, 4), dtype=np.float32)
    views = [(base.transpose(2, 1, 0), other.T[:, :, None]),            # (4, 5, 6) with (4, 5, 1)
             (base[::-1, ::2], other[1::2, ::-1][0]),                   # (6, 3, 4) with (4,)
             (base[:, 1], np.float32(2.5) * np.ones((1, 4), np.float32))]
    for a, b in views:
        expected = getattr(torch, op)(torch.from_numpy(a.copy()), torch.from_numpy(np.ascontiguousarray(b))).numpy()
        np.testing.assert_allclose(getattr(aclnn_py, op)(a, b, backend=backend), expected, rtol=1e-6)


def test_long_rows_and_many_rows_take_the_pieces(backend):
    # rows longer than the simulator's 2048-element piece, and more rows than a worker's share
    rng = np.random.default_rng(2)
    for shape in ((3, 5000), (4096, 3), (2, 70, 300)):
        a = rng.standard_normal(shape, dtype=np.float32)
        b = rng.standard_normal(shape[-1:], dtype=np.float32).astype(np.float16)
        np.testing.assert_allclose(aclnn_py.add(a, b, 3, backend=backend), a + 3 * b.astype(np.float32), rtol=1e-6)
        np.testing.assert_array_equal(aclnn_py.mul(a[:, ::-1], a[:, ::-1], backend=backend), a[:, ::-1] ** 2)


def test_output_overlapping_an_input_on_sim(sim_lib):
    # `call` with out a view of the same memory as an input: an identical view is computed in
    # place; a shifted one reads a copy.
    from aclnn_py import Tensor

    x = np.arange(10, dtype=np.float32)
    t = Tensor.from_numpy(x, backend="sim")
    aclnn_py.call("aclnnAdd", t, t, 1, t, backend="sim")
    np.testing.assert_array_equal(t.numpy(), 2 * x)
    head, tail = t.view((9,), (1,), 0), t.view((9,), (1,), 1)
    aclnn_py.call("aclnnMul", head, head, tail, backend="sim")
    np.testing.assert_array_equal(t.numpy(), np.concatenate([[0], (2 * x[:9]) ** 2]))


def test_the_registration_pieces_make_consistent_arguments(backend):
    from aclnn_py.ops._registry import by_name

    rng = np.random.default_rng(3)
    for name in ("add", "mul", "adds", "muls", "relu", "threshold_backward", "cast"):
        op = by_name(name)
        for shape, dtypes, params in op.selftest:
            call = op.case(rng, shape, dtypes[0], **params)
            assert getattr(aclnn_py, name)(*call.args, backend=backend).shape == tuple(shape)
        for _label, make in op.benchmarks[-1:]:
            args = make(rng)
            assert getattr(aclnn_py, name)(*args, backend=backend).shape == args[0].shape


class _Fuzzer:
    """The fuzzer's generator interface (scripts/fuzz.py), seeded."""

    FLOATS = [np.dtype(np.float32), np.dtype(np.float16), np.dtype(np.float64)]

    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)

    def small_int(self, lo: int = -3, hi: int = 8) -> int:
        return int(self.rng.integers(lo, hi, endpoint=True))

    def chance(self, p: float) -> bool:
        return bool(self.rng.random() < p)

    def pick(self, seq):
        return seq[int(self.rng.integers(len(seq)))]

    def shape(self):
        return tuple(self.small_int(1, 3) for _ in range(self.small_int(0, 3)))

    def filled(self, shape, dtype):
        return self.rng.standard_normal(shape).astype(dtype)


def test_the_fuzz_generators_give_near_valid_arguments():
    from aclnn_py.ops._registry import by_name

    outcomes = set()
    for seed in range(40):
        for name in ("add", "mul", "adds", "muls"):
            args = by_name(name).fuzz(_Fuzzer(seed))
            try:
                getattr(aclnn_py, name)(*args, backend="numpy")
                outcomes.add("ok")
            except aclnn_py.AclnnError as error:
                assert error.status == 161002 and "broadcast" in error.message
                outcomes.add("refused")
    assert outcomes == {"ok", "refused"}
