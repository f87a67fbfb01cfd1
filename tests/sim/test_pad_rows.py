"""The simulator's reflection_pad2d backward reads float32 gradOutput rows of unit stride where
they are and any other row through a converted copy: a column-strided device view, a
row-padded one and a float16 gradOutput give PyTorch's gradient."""

from __future__ import annotations

import numpy as np
import pytest

import aclnn_py
from aclnn_py import Tensor
from helpers import assert_close

torch = pytest.importorskip("torch")

PADDING = [3, 1, 2, 4]        # left, right, top, bottom
SHAPE = (2, 3, 7, 9)


def _expected(go):
    return torch.ops.aten.reflection_pad2d_backward(torch.from_numpy(go.astype(np.float32)), torch.zeros(SHAPE),
                                                    PADDING).numpy()


def _grad_output(dtype=np.float32):
    n, c, h, w = SHAPE
    return np.random.default_rng(9).standard_normal((n, c, h + 6, w + 4)).astype(dtype)


@pytest.mark.parametrize("layout", ["columns strided", "rows padded"])
def test_strided_grad_output_views(layout):
    go = _grad_output()
    n, c, h, w = go.shape
    if layout == "columns strided":   # stored transposed: a row's elements h apart
        storage = np.ascontiguousarray(go.transpose(0, 1, 3, 2))
        strides = [c * h * w, h * w, 1, h]
    else:                             # each row followed by 2 unused elements
        storage = np.full((n, c, h, w + 2), np.nan, np.float32)
        storage[..., :w] = go
        strides = [c * h * (w + 2), h * (w + 2), w + 2, 1]
    with Tensor.from_numpy(storage, backend="sim") as buffer:
        view = buffer.view(go.shape, strides)
        with view:
            result = aclnn_py.reflection_pad2d_backward(view, np.zeros(SHAPE, np.float32), PADDING, backend="sim")
    assert_close(np.asarray(result), _expected(go), np.float32)


def test_float16_grad_output():
    go = _grad_output(np.float16)
    result = aclnn_py.reflection_pad2d_backward(go, np.zeros(SHAPE, np.float16), PADDING, backend="sim")
    assert_close(np.asarray(result), _expected(go), np.float16)
