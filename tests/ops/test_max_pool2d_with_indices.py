"""max_pool2d_with_indices (aclnnMaxPool2dWithIndices): values and flat indices against PyTorch CPU
and the slow reference, every documented dtype, non-contiguous views, empty batches; on the
numpy backend each case both by the small problems' gather (``pooling.SMALL_WINDOWS``) and by
the per-tap kernel."""

from __future__ import annotations

import numpy as np
import pytest

import aclnn_py
from aclnn_py import bfloat16
from aclnn_py._numpy import pooling
from helpers import assert_close, random_array
from reference.max_pool2d_with_indices import max_pool2d_with_indices as reference

@pytest.fixture(autouse=True, params=["small", "per-tap"])
def _path(request, monkeypatch):
    """The numpy backend's small-problem gather, or its per-tap kernel for every size."""
    if request.param == "per-tap":
        monkeypatch.setattr(pooling, "SMALL_WINDOWS", 0)


DTYPES = [np.dtype(np.float32), np.dtype(np.float16), np.dtype(bfloat16)]
GEOMETRIES = [  # (shape, kernel, stride, padding, ceil)
    ((2, 3, 9, 10), [3, 2], [2, 1], [1, 1], True),
    ((2, 3, 8, 8), [2], [2], [0], False),
    ((3, 7, 6), [3, 3], [], [1, 0], False),          # 3-D, stride [] = kernel
    ((1, 2, 11, 7), [3], [2], [1], True),
    ((1, 1, 5, 5), [5, 5], [1, 1], [2, 2], False),
]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shape, kernel, stride, padding, ceil", GEOMETRIES)
def test_matches_torch(backend, torch, dtype, shape, kernel, stride, padding, ceil):
    x = random_array(np.random.default_rng(0), shape, dtype)
    out, idx = aclnn_py.max_pool2d_with_indices(x, kernel, stride, padding, [1, 1], ceil, backend=backend)
    k = kernel * 2 if len(kernel) == 1 else kernel
    t_out, t_idx = torch.nn.functional.max_pool2d(torch.from_numpy(x.astype(np.float32)), k, stride or None,
                                                  padding * 2 if len(padding) == 1 else padding, 1, ceil,
                                                  return_indices=True)
    assert out.dtype == dtype and idx.dtype == np.int32
    assert_close(out, t_out.numpy().astype(dtype), dtype)
    np.testing.assert_array_equal(idx, t_idx.numpy())
    r_out, r_idx = reference(x.astype(np.float32), k, stride * 2 if len(stride) == 1 else stride or k,
                             padding * 2 if len(padding) == 1 else padding, ceil)
    np.testing.assert_array_equal(idx, r_idx)


@pytest.mark.parametrize("indices_dtype", [np.int32, np.int64])
def test_indices_dtype(backend, indices_dtype):
    x = random_array(np.random.default_rng(1), (2, 2, 6, 6), np.float32)
    out, idx = aclnn_py.max_pool2d_with_indices(x, 2, 2, 0, indices_dtype=indices_dtype, backend=backend)
    assert idx.dtype == indices_dtype
    np.testing.assert_array_equal(idx, reference(x, (2, 2), (2, 2), (0, 0))[1])


def test_ties_keep_the_first_and_padding_never_wins(backend):
    x = np.full((1, 1, 4, 4), -np.inf, np.float32)
    x[0, 0, 1:3, 1:3] = 1.0
    out, idx = aclnn_py.max_pool2d_with_indices(x, 3, 1, 1, backend=backend)
    np.testing.assert_array_equal(idx[0, 0], [[5, 5, 5, 6], [5, 5, 5, 6], [5, 5, 5, 6], [9, 9, 9, 10]])
    x[0, 0, 2:, 2:] = -np.inf
    out, idx = aclnn_py.max_pool2d_with_indices(x, 2, 2, 0, backend=backend)
    assert np.isneginf(out[0, 0, 1, 1]) and idx[0, 0, 1, 1] == 10  # all -inf: the first real element


def test_nan_wins_as_in_torch(backend, torch):
    x = random_array(np.random.default_rng(2), (1, 2, 6, 6), np.float32)
    x[0, 0, 2, 3] = np.nan
    out, idx = aclnn_py.max_pool2d_with_indices(x, 3, 2, 1, backend=backend)
    t_out, t_idx = torch.nn.functional.max_pool2d(torch.from_numpy(x), 3, 2, 1, return_indices=True)
    np.testing.assert_array_equal(idx, t_idx.numpy())
    np.testing.assert_array_equal(np.isnan(out), np.isnan(t_out.numpy()))


def test_non_contiguous_views(backend):
    x = random_array(np.random.default_rng(3), (2, 3, 7, 9), np.float32)
    expected = reference(x, (3, 3), (2, 2), (1, 1))
    for view in (np.ascontiguousarray(x.swapaxes(-1, -2)).swapaxes(-1, -2), np.ascontiguousarray(x[:, ::-1])[:, ::-1],
                 np.repeat(x, 2, axis=-1)[..., ::2]):
        out, idx = aclnn_py.max_pool2d_with_indices(view, 3, 2, 1, backend=backend)
        assert_close(out, expected[0], np.float32)
        np.testing.assert_array_equal(idx, expected[1])


def test_empty_batch(backend):
    out, idx = aclnn_py.max_pool2d_with_indices(np.zeros((0, 3, 6, 6), np.float32), 2, 2, 0, backend=backend)
    assert out.shape == idx.shape == (0, 3, 3, 3)


def test_call_with_cann_names(backend):
    x = random_array(np.random.default_rng(4), (1, 2, 4, 4), np.float32)
    out, idx = np.zeros((1, 2, 2, 2), np.float32), np.zeros((1, 2, 2, 2), np.int32)
    aclnn_py.call("aclnnMaxPool2dWithIndices", x, [2, 2], [2, 2], [0, 0], [1, 1], False, out, idx, backend=backend)
    expected = reference(x, (2, 2), (2, 2), (0, 0))
    assert_close(out, expected[0], np.float32)
    np.testing.assert_array_equal(idx, expected[1])


def test_bad_indices_dtype_is_a_type_error():
    with pytest.raises(TypeError, match="indices_dtype"):
        aclnn_py.max_pool2d_with_indices(np.zeros((1, 1, 2, 2), np.float32), 2, 2, 0, indices_dtype=np.int16)


@pytest.mark.parametrize("name, expected", [("int32", np.int32), ("int64", np.int64), (np.dtype("int64"), np.int64),
                                            (np.int32, np.int32), ("i8", np.int64)])
def test_indices_dtype_by_any_name_again_and_again(name, expected):
    """The names seen are kept (no dtype made per call): the same answer on every call, and a
    bad name is refused on every call."""
    x = np.zeros((1, 1, 2, 2), np.float32)
    for _ in range(3):
        assert aclnn_py.max_pool2d_with_indices(x, 2, 2, 0, indices_dtype=name, backend="numpy")[1].dtype == expected
        with pytest.raises(TypeError, match="indices_dtype"):
            aclnn_py.max_pool2d_with_indices(x, 2, 2, 0, indices_dtype="int16", backend="numpy")
        with pytest.raises(TypeError, match="indices_dtype"):
            aclnn_py.max_pool2d_with_indices(x, 2, 2, 0, indices_dtype=[1], backend="numpy")
