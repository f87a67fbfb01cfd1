"""The simulator's Im2colBackward (fold) kernel when its blocks do not overlap (stride equal to
the kernel size, dilation 1: ViT patches), which writes each output row once by a transposing
copy (src/ops/im2col_backward.c, im2col_planes_disjoint): every unrolled block width and others,
padding, images the blocks do not cover to the edge, unbatched input, planes split over the
worker threads, and the layouts that take the general path instead (float16, strided
gradOutput or output).  PyTorch CPU's fold is the oracle."""

from __future__ import annotations

import numpy as np
import pytest

import aclnn_py
from aclnn_py import Tensor

from helpers import assert_close

torch = pytest.importorskip("torch")
F = torch.nn.functional


def fold_reference(go, size, k, p, s):
    return F.fold(torch.from_numpy(np.ascontiguousarray(go, dtype=np.float32)), size, k, padding=p,
                  stride=s).numpy()


def blocks(size, k, p, s):
    return [(d + 2 * q - (kk - 1) - 1) // ss + 1 for d, kk, q, ss in zip(size, k, p, s)]


@pytest.mark.parametrize("k, p, hw", [
    ((16, 16), (0, 0), (32, 48)),    # whole ViT patches
    ((2, 2), (0, 0), (6, 8)),
    ((4, 8), (0, 0), (8, 16)),
    ((14, 32), (0, 0), (28, 64)),
    ((3, 5), (0, 0), (9, 10)),       # widths without an unrolled loop
    ((16, 16), (3, 5), (30, 37)),    # padding: the first and last blocks cut
    ((4, 4), (0, 0), (11, 13)),      # the blocks stop short of the right and bottom edges
    ((4, 4), (2, 1), (5, 7)),
    ((1, 1), (0, 0), (3, 4)),
], ids=lambda v: "x".join(map(str, v)))
@pytest.mark.parametrize("batched", [True, False], ids=["batched", "unbatched"])
def test_disjoint_blocks(k, p, hw, batched):
    rng = np.random.default_rng(0)
    c = 3
    l0, l1 = blocks(hw, k, p, k)
    shape = (2, c * k[0] * k[1], l0 * l1) if batched else (c * k[0] * k[1], l0 * l1)
    go = rng.standard_normal(shape).astype(np.float32)
    result = aclnn_py.im2col_backward(go, list(hw), list(k), [1, 1], list(p), list(k), backend="sim")
    want = fold_reference(go if batched else go[None], hw, k, p, k)
    np.testing.assert_array_equal(result, want if batched else want[0])


def test_disjoint_blocks_split_over_threads():
    """Enough planes and work for several worker threads (kernels/parallel.h)."""
    rng = np.random.default_rng(1)
    n, c, hw, k = 4, 96, (128, 128), (16, 16)
    go = rng.standard_normal((n, c * 256, 64)).astype(np.float32)
    result = aclnn_py.im2col_backward(go, list(hw), list(k), [1, 1], [0, 0], list(k), backend="sim")
    np.testing.assert_array_equal(result, fold_reference(go, hw, k, (0, 0), k))


@pytest.mark.parametrize("layout", ["float16", "strided gradOutput", "strided out"])
def test_other_layouts_take_the_general_path(layout):
    rng = np.random.default_rng(2)
    c, hw, k = 2, (12, 16), (4, 4)
    l0, l1 = blocks(hw, k, (0, 0), k)
    go = rng.standard_normal((2, c * 16, l0 * l1)).astype(np.float32)
    args = (list(hw), list(k), [1, 1], [0, 0], list(k))
    want = fold_reference(go, hw, k, (0, 0), k)
    if layout == "float16":
        result = aclnn_py.im2col_backward(go.astype(np.float16), *args, backend="sim")
        assert_close(result, fold_reference(go.astype(np.float16), hw, k, (0, 0), k), np.float16)
    elif layout == "strided gradOutput":
        wide = np.zeros((2, c * 16, 2 * l0 * l1), np.float32)
        wide[..., ::2] = go
        result = aclnn_py.im2col_backward(wide[..., ::2], *args, backend="sim")
        np.testing.assert_array_equal(result, want)
    else:
        n, h, w = 2, *hw
        base = Tensor.empty((n, c, w, h), np.float32, backend="sim")
        with base, base.view((n, c, h, w), [c * h * w, h * w, 1, h]) as out:
            aclnn_py.call("aclnnIm2colBackward", go, *args, out, backend="sim")
            np.testing.assert_array_equal(out.numpy(), want)
