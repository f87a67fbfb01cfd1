"""relu (aclnnRelu): values against PyTorch for every documented dtype, and ``out``, which CANN
declares const and writes, written back by ``call`` and ``prepare`` (params.WRITTEN_CONST)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import aclnn_py
from aclnn_py._convert import params
from aclnn_py._ffi import ffi
from aclnn_py._ffi.declarations import include_dir
from aclnn_py._numpy.elementwise import SCALAR_ROW
from aclnn_py.ops.relu import DTYPES
from helpers import assert_close, random_array


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_every_documented_dtype_matches_torch(backend, torch, dtype):
    a = random_array(np.random.default_rng(0), (2, 3, 4, 5), dtype)
    result = aclnn_py.relu(a, backend=backend)
    assert result.dtype == dtype and result.shape == a.shape
    wide = a.astype(np.float32) if dtype.itemsize == 2 and dtype.kind != "i" else a
    assert_close(result, torch.relu(torch.from_numpy(wide)).numpy().astype(dtype), dtype)


def test_nan_infinities_and_views(backend):
    a = np.array([[np.nan, -np.inf, np.inf], [-0.5, 0.0, 3.0]], np.float32)
    np.testing.assert_array_equal(aclnn_py.relu(a, backend=backend), [[np.nan, 0, np.inf], [0, 0, 3]])
    big = np.arange(-60, 60, dtype=np.float16).reshape(10, 12)
    np.testing.assert_array_equal(aclnn_py.relu(big.T[::-1], backend=backend), np.maximum(big.T[::-1], 0))
    assert aclnn_py.relu(np.zeros((0, 3), np.int32), backend=backend).shape == (0, 3)
    assert aclnn_py.relu(np.asarray(-2, np.int64), backend=backend) == 0


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_large_arrays_in_rows_and_their_tails_match_torch(backend, torch, dtype):
    # At least SCALAR_ROW elements: the numpy backend's maximum in rows against a row of zeros,
    # a tail of fewer, and a view (not contiguous) that keeps the element-at-a-time loop.
    rng = np.random.default_rng(1)
    for size in (SCALAR_ROW - 1, SCALAR_ROW, 3 * SCALAR_ROW + 5):
        a = random_array(rng, (size,), dtype)
        if dtype.kind != "i":
            a[rng.integers(0, size, 64)] = np.array([np.nan, -np.inf, np.inf, -0.0], np.float32).astype(dtype)[
                rng.integers(0, 4, 64)]
        for x in (a, a.reshape(-1, 1)[::2, 0], a[::-1]):
            wide = x.astype(np.float32) if dtype.itemsize == 2 and dtype.kind != "i" else x
            expected = torch.relu(torch.from_numpy(np.ascontiguousarray(wide))).numpy().astype(dtype)
            result = aclnn_py.relu(x, backend=backend)
            assert result.dtype == dtype
            # (compared as FLOAT or the integers: NumPy's equality knows NaN for its own float
            # types, not for ml_dtypes' BFLOAT16)
            np.testing.assert_array_equal(result.astype(wide.dtype), expected.astype(wide.dtype))


def test_out_is_an_output_though_declared_const():
    sig = params.read_signature("aclnnReluGetWorkspaceSize", (Path(include_dir()) / "aclnnop",), ffi())
    assert [(p.name, p.output) for p in sig.params] == [("self", False), ("out", True)]
    header = (Path(include_dir()) / "aclnnop" / "aclnn_relu.h").read_text()
    assert "const aclTensor *out" in header  # as CANN declares it


def test_without_the_table_entry_out_would_be_an_input(monkeypatch):
    monkeypatch.setattr(params, "WRITTEN_CONST", {})
    sig = params.read_signature("aclnnReluGetWorkspaceSize", (Path(include_dir()) / "aclnnop",), ffi())
    assert [p.output for p in sig.params] == [False, False]


def test_call_and_prepare_write_out_back(backend):
    a = np.array([[-1.0, 2.0], [3.0, -4.0]], np.float32)
    out = np.full((2, 2), 7.0, np.float32)
    returned = aclnn_py.call("aclnnRelu", a, out, backend=backend)
    assert returned is out
    np.testing.assert_array_equal(out, np.maximum(a, 0))
    out2 = np.zeros((2, 2), np.float32)
    with aclnn_py.prepare("aclnnRelu", a, out2, backend=backend) as run:
        run(-a, out2)
    np.testing.assert_array_equal(out2, np.maximum(-a, 0))


def test_call_writes_a_device_out_on_sim(sim_lib):
    a = np.array([-1.0, 5.0], np.float32)
    out = aclnn_py.Tensor.empty((2,), np.float32, backend="sim")
    aclnn_py.call("aclnnRelu", a, out, backend="sim")
    np.testing.assert_array_equal(out.numpy(), [0.0, 5.0])
