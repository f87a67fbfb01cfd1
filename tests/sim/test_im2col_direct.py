"""The simulator's Im2col reads a FLOAT contiguous self and writes a FLOAT contiguous out where
they lie (no copies through the workspace, which it then does not ask for: ops/im2col.c); a
self its out overlaps in one device buffer is read from a copy, as before the call.  Strided
and float16 operands keep the copies.  PyTorch's unfold is the oracle."""

from __future__ import annotations

import numpy as np
import pytest

import aclnn_py
from aclnn_py import Tensor

from helpers import assert_close

torch = pytest.importorskip("torch")


def _unfold(x, k, d, p, s):
    return torch.nn.functional.unfold(torch.from_numpy(np.ascontiguousarray(x)).float(), k, d, p, s).numpy()


def _contiguous_strides(shape):
    return [int(np.prod(shape[i + 1:])) for i in range(len(shape))]


@pytest.mark.parametrize("layout", ["contiguous", "strided self", "strided out", "float16"])
def test_direct_and_copied_paths_agree_with_torch(sim_lib, layout):
    rng = np.random.default_rng(11)
    n, c, h, w, k, d, p, s = 2, 3, 9, 11, 3, 1, 1, 2
    x = rng.standard_normal((n, c, h, w)).astype(np.float16 if layout == "float16" else np.float32)
    want = _unfold(x, k, d, p, s)
    if layout == "strided self":
        x = np.ascontiguousarray(x.swapaxes(2, 3)).swapaxes(2, 3)  # same values, W-major in memory
    out_shape = want.shape
    with Tensor.from_numpy(x, backend="sim") as xt:
        if layout == "strided out":
            base = Tensor.empty((out_shape[0], out_shape[2], out_shape[1]), np.float32, backend="sim")
            out = base.view(out_shape, [out_shape[1] * out_shape[2], 1, out_shape[1]])
        else:
            base = Tensor.empty(out_shape, x.dtype, backend="sim")
            out = base.view(out_shape, _contiguous_strides(out_shape))
        with base, out:
            aclnn_py.call("aclnnIm2col", xt, [k, k], [d, d], [p, p], [s, s], out, backend="sim")
            assert_close(out.numpy(), want.astype(out.numpy().dtype), np.dtype(x.dtype))


@pytest.mark.parametrize("offset", [0, 5])
def test_out_overlapping_self_reads_self_as_it_was(sim_lib, offset):
    """self and out in one device buffer (out starting at self's first element or a few after):
    the columns are those of self before the call, not of values the kernel wrote."""
    rng = np.random.default_rng(12)
    shape, k, s = (1, 2, 6, 6), 2, 1
    x = rng.standard_normal(shape).astype(np.float32)
    want = _unfold(x, k, 1, 0, s)
    storage = np.zeros(offset + max(x.size, want.size), np.float32)
    storage[:x.size] = x.ravel()
    with Tensor.from_numpy(storage, backend="sim") as buffer:
        self_view = buffer.view(shape, _contiguous_strides(shape))
        out_view = buffer.view(want.shape, _contiguous_strides(want.shape), offset)
        with self_view, out_view:
            aclnn_py.call("aclnnIm2col", self_view, [k, k], [1, 1], [0, 0], [s, s], out_view, backend="sim")
            np.testing.assert_array_equal(out_view.numpy(), want)
