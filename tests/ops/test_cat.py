"""cat (aclnnCat): an aclTensorList argument; values against PyTorch's ``cat`` for every
documented dtype, promotion of mixed dtypes, dropped [0]-shaped tensors, empty tensors,
non-contiguous inputs, device Tensors in the list, ``call`` with CANN's names (the invalid
inputs: invalid_cases.py)."""

from __future__ import annotations

import numpy as np
import pytest

import aclnn_py
from aclnn_py import bfloat16
from aclnn_py.ops.cat import DTYPES
from helpers import assert_close, random_array


def _t(torch, a):
    return torch.from_numpy(np.ascontiguousarray(a.astype(np.float32) if a.dtype == bfloat16 else a))


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_every_documented_dtype_matches_torch(backend, torch, dtype, dim):
    rng = np.random.default_rng(0)
    shapes = [(2, 3, 4), (2, 3, 4), (2, 3, 4)]
    shapes = [tuple(k if d == dim % 3 else s for d, s in enumerate(shape)) for k, shape in zip((1, 3, 2), shapes)]
    parts = [random_array(rng, s, dtype) for s in shapes]
    result = aclnn_py.cat(parts, dim, backend=backend)
    expected = torch.cat([_t(torch, p) for p in parts], dim).numpy()
    assert result.dtype == dtype
    np.testing.assert_array_equal(result.astype(np.float32) if dtype == bfloat16 else result, expected)


def test_mixed_dtypes_promote_and_convert_through_the_promoted_dtype(backend, torch):
    a, b = np.array([[1.5, 2.5]], np.float16), np.array([[2049, 3]], np.int32)
    result = aclnn_py.cat([a, b], 0, backend=backend)
    assert result.dtype == np.float16
    np.testing.assert_array_equal(result, [[1.5, 2.5], [2048, 3]])
    c = np.array([[True, False]])
    result = aclnn_py.cat((c, np.array([[7, 8]], np.int8)), backend=backend)
    assert result.dtype == np.int8
    np.testing.assert_array_equal(result, [[1, 0], [7, 8]])
    f = random_array(np.random.default_rng(1), (2, 3), bfloat16)
    g = random_array(np.random.default_rng(2), (2, 3), np.float16)
    result = aclnn_py.cat([f, g], 1, backend=backend)
    expected = torch.cat([_t(torch, f), _t(torch, g).float()], 1).numpy()
    assert result.dtype == np.float32
    assert_close(result, expected, np.float32)


def test_zero_length_1d_tensors_are_dropped_and_empty_ones_skipped(backend):
    a, b = np.ones((2, 3), np.float32), np.zeros((0,), np.int64)
    result = aclnn_py.cat([b, a, b], 1, backend=backend)  # (the INT64 [0] takes no part in promotion)
    assert result.dtype == np.float32
    np.testing.assert_array_equal(result, a)
    result = aclnn_py.cat([np.ones((2, 0), np.float32), a], 1, backend=backend)
    np.testing.assert_array_equal(result, a)
    assert aclnn_py.cat([], 0, backend=backend).size == 0
    assert aclnn_py.cat([b, b], 0, backend=backend).size == 0


def test_non_contiguous_inputs(backend):
    base = np.arange(24, dtype=np.float64).reshape(4, 6)
    parts = [base.T, base[::2].T, base[:, ::-1].T]
    np.testing.assert_array_equal(aclnn_py.cat(parts, 1, backend=backend), np.concatenate(parts, 1))


def test_call_and_device_tensors(backend):
    a, b = np.ones((2, 2), np.float32), np.zeros((1, 2), np.float32)
    out = np.empty((3, 2), np.float32)
    assert aclnn_py.call("aclnnCat", tensors=[a, b], dim=0, out=out, backend=backend) is out
    np.testing.assert_array_equal(out, [[1, 1], [1, 1], [0, 0]])
    if backend == "sim":
        with aclnn_py.Tensor.from_numpy(a, backend="sim") as ta:
            result = aclnn_py.cat([ta, b], 0, backend="sim")
            assert isinstance(result, aclnn_py.Tensor)
            np.testing.assert_array_equal(result.numpy(), [[1, 1], [1, 1], [0, 0]])
            result.close()


def test_a_repeated_list_geometry_reuses_its_plan_and_a_new_one_is_checked(monkeypatch):
    """The numpy plan of one list geometry (dtypes, shapes, strides, dim) is found again: the
    checks run once; any other geometry runs every check again."""
    import sys
    from aclnn_py._numpy import plans as _plans

    module = sys.modules["aclnn_py.ops.cat"]
    _plans.forget_plans()
    validated = []
    real = module._validate
    monkeypatch.setattr(module, "_validate", lambda *a: validated.append(1) or real(*a))
    a, b = np.ones((2, 3), np.float32), np.zeros((2, 2), np.float32)
    for k in range(3):
        np.testing.assert_array_equal(aclnn_py.cat([a + k, b], 1, backend="numpy"), np.concatenate([a + k, b], 1))
    assert len(validated) == 1
    np.testing.assert_array_equal(aclnn_py.cat((a, b), 1, backend="numpy"), np.concatenate([a, b], 1))
    with pytest.raises(aclnn_py.AclnnError, match="must match"):
        aclnn_py.cat([a, b], 0, backend="numpy")
    c = np.arange(4, dtype=np.float32).reshape(2, 2)
    np.testing.assert_array_equal(aclnn_py.cat([a, c.T], 1, backend="numpy"), np.concatenate([a, c.T], 1))
    with pytest.raises(aclnn_py.AclnnError):
        aclnn_py.cat([a, None], 1, backend="numpy")
    np.testing.assert_array_equal(aclnn_py.cat([a, b.astype(np.float64)], 1, backend="numpy"),
                                  np.concatenate([a, b], 1).astype(np.float64))
    assert len(validated) == 5  # (the tuple found the list's plan: one geometry)
    _plans.forget_plans()


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_the_one_copy_and_the_per_part_conversions_give_the_same_bytes(dtype):
    """Tensors all of the promoted dtype are one np.concatenate; with a dropped [0] tensor
    among them the parts are converted one by one: the same bytes, np.concatenate's."""
    rng = np.random.default_rng(3)
    base = random_array(rng, (3, 8), dtype)
    parts = [base[:, :2], base[:, ::-2].copy(), base.T.copy().T[:, 5:]]
    one_copy = aclnn_py.cat(parts, 1, backend="numpy")
    per_part = aclnn_py.cat(parts + [np.zeros((0,), dtype)], 1, backend="numpy")
    assert one_copy.dtype == per_part.dtype == dtype
    assert one_copy.tobytes() == per_part.tobytes() == np.concatenate(parts, 1).tobytes()


@pytest.mark.parametrize("dim", [0, 1, 2])
def test_large_parts_with_empty_ones_between_match_torch(backend, torch, dim):
    """Parts of out's dtype, contiguous: the simulator copies out's bytes in 64 KiB pieces that
    cut across the parts' blocks (an empty part between two, a one-row part, blocks longer than
    a piece and shorter); with Inf and NaN passed on as they are."""
    rng = np.random.default_rng(3)
    sizes = [(5, 0, 1, 7), (40, 0, 1, 60), (700, 0, 1, 1500)][dim]
    base = [6, 50, 1000]  # outs of 2.4-2.6 MB: split between the simulator's workers
    parts = []
    for k in sizes:
        shape = list(base)
        shape[dim] = k
        parts.append(rng.standard_normal(shape).astype(np.float32))
    parts[0].flat[1] = np.nan
    parts[-1].flat[-1] = -np.inf
    result = aclnn_py.cat(parts, dim, backend=backend)
    expected = torch.cat([torch.from_numpy(p) for p in parts], dim).numpy()
    assert result.tobytes() == expected.tobytes()
