"""Argument builders shared by the selftest and the benchmark: one per operator.

Each builder takes the forward input's shape (``[N,] C, H, W``: the image whose gradient the
operator computes), a dtype, the operator's parameters, and a random generator, and returns an
``OpCall`` whose arguments are consistent (gradOutput has the shape the parameters imply, the
max-unpool indices point inside their windows). Values are seeded random: normal floats,
small integers, random bools.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, SupportsInt, Unpack

import numpy as np
from numpy.typing import DTypeLike

from .._dtypes import dtype_name


@dataclass(frozen=True)
class OpCall:
    """One call of an operator: ``getattr(aclnn_py, op)(*args)``."""

    op: str
    args: tuple[np.ndarray, Unpack[tuple[Any, ...]]]  # the gradient first, then arrays, lists, flags
    case: str = ""  # the parameters in a few words, e.g. "k3 s2 p1 ceil"

    @property
    def dtype(self) -> np.dtype:
        return self.args[0].dtype

    def describe(self) -> str:
        """The tensor arguments' shapes and dtypes, and the case."""
        tensors = ", ".join(f"{list(a.shape)}" for a in self.args if isinstance(a, np.ndarray))
        return f"{self.op}({tensors}) {dtype_name(self.dtype)} {self.case}".rstrip()


def random_array(rng: np.random.Generator, shape: Sequence[int], dtype: DTypeLike) -> np.ndarray:
    """Normal floats (complex: both parts), integers in [-100, 100] clipped to the dtype, bools."""
    dt = np.dtype(dtype)
    shape = tuple(shape)
    if dt == np.bool_:
        return rng.random(shape) < 0.5
    if np.issubdtype(dt, np.integer):
        info = np.iinfo(dt)
        return rng.integers(max(info.min, -100), min(info.max, 100), size=shape, endpoint=True).astype(dt)
    if np.issubdtype(dt, np.complexfloating):
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dt)
    return rng.standard_normal(shape, dtype=np.float32).astype(dt)


def _pair(value: int | Sequence[int]) -> tuple[int, ...]:
    return (value, value) if isinstance(value, int) else tuple(value)


def _dims(values: Iterable[SupportsInt]) -> str:
    """``(3, 3)`` -> ``"3"``, ``(3, 2)`` -> ``"3x2"``: parameters in a few characters."""
    values = [int(v) for v in values]
    return str(values[0]) if len(set(values)) == 1 else "x".join(map(str, values))


def _pooled(size: int, k: int, s: int, p: int, ceil_mode: bool) -> int:
    o = (size + 2 * p - k + (s - 1 if ceil_mode else 0)) // s + 1
    if ceil_mode and (o - 1) * s >= size + p:
        o -= 1
    return o


def im2col_backward(rng: np.random.Generator, shape: Sequence[int], dtype: DTypeLike, kernel: int | Sequence[int] = 3,
                    dilation: int | Sequence[int] = 1, padding: int | Sequence[int] = 1,
                    stride: int | Sequence[int] = 1) -> OpCall:
    """col2im folding the columns of an im2col over an ``[N,] C, H, W`` image."""
    *lead, channels, height, width = shape
    kernel, dilation, padding, stride = map(_pair, (kernel, dilation, padding, stride))
    blocks = [(size + 2 * p - d * (k - 1) - 1) // s + 1
              for size, k, d, p, s in zip((height, width), kernel, dilation, padding, stride)]
    grad = random_array(rng, (*lead, channels * kernel[0] * kernel[1], blocks[0] * blocks[1]), dtype)
    return OpCall("im2col_backward", (grad, [height, width], list(kernel), list(dilation), list(padding),
                                      list(stride)),
                  case=f"k{_dims(kernel)} d{_dims(dilation)} p{_dims(padding)} s{_dims(stride)}")


def max_unpool2d_backward(rng: np.random.Generator, shape: Sequence[int], dtype: DTypeLike,
                          index_dtype: DTypeLike = np.int64) -> OpCall:
    """The gradient of unpooling a 2x2/2 max pool: ``self`` is ``[N,] C, H, W``, the output 2H x 2W."""
    *lead, height, width = shape
    out_h, out_w = 2 * height, 2 * width
    rows = 2 * np.arange(height)[:, None] + rng.integers(0, 2, size=(*lead, height, width))
    cols = 2 * np.arange(width)[None, :] + rng.integers(0, 2, size=(*lead, height, width))
    indices = (rows * out_w + cols).astype(index_dtype)
    grad = random_array(rng, (*lead, out_h, out_w), dtype)
    self = random_array(rng, shape, dtype)
    return OpCall("max_unpool2d_backward", (grad, self, indices, [out_h, out_w]),
                  case=f"2x2 windows, {np.dtype(index_dtype).name} indices")


def reflection_pad2d_backward(rng: np.random.Generator, shape: Sequence[int], dtype: DTypeLike,
                              padding: Sequence[int] = (1, 1, 1, 1)) -> OpCall:
    """``padding = [left, right, top, bottom]`` around an ``[N,] C, H, W`` self."""
    *lead, height, width = shape
    left, right, top, bottom = padding
    grad = random_array(rng, (*lead, height + top + bottom, width + left + right), dtype)
    self = random_array(rng, shape, dtype)
    return OpCall("reflection_pad2d_backward", (grad, self, list(padding)), case=f"pad {list(padding)}")


def avg_pool2d_backward(rng: np.random.Generator, shape: Sequence[int], dtype: DTypeLike,
                        kernel: int | Sequence[int] = 3, stride: int | Sequence[int] = 2,
                        padding: int | Sequence[int] = 1, ceil_mode: bool = False, count_include_pad: bool = True,
                        divisor_override: int = 0, cube_math_type: int = 0) -> OpCall:
    """Average pooling of an ``[N,] C, H, W`` self."""
    *lead, height, width = shape
    kernel, stride, padding = map(_pair, (kernel, stride, padding))
    pooled = [_pooled(size, k, s, p, ceil_mode) for size, k, s, p in zip((height, width), kernel, stride, padding)]
    grad = random_array(rng, (*lead, *pooled), dtype)
    self = random_array(rng, shape, dtype)
    words = [f"k{_dims(kernel)} s{_dims(stride)} p{_dims(padding)}", "ceil" if ceil_mode else "floor",
             "incl-pad" if count_include_pad else "excl-pad"]
    if divisor_override:
        words.append(f"divisor {divisor_override}")
    if cube_math_type:
        words.append(f"cubeMathType {cube_math_type}")
    return OpCall("avg_pool2d_backward", (grad, self, list(kernel), list(stride), list(padding), ceil_mode,
                                          count_include_pad, divisor_override, cube_math_type),
                  case=" ".join(words))


def convolution_backward(rng: np.random.Generator, shape: Sequence[int], dtype: DTypeLike, out_channels: int,
                         kernel: int | Sequence[int] = 3, stride: int | Sequence[int] = 1,
                         padding: int | Sequence[int] = 1, dilation: int | Sequence[int] = 1, groups: int = 1,
                         transposed: bool = False, cube_math_type: int = 0) -> OpCall:
    """All three gradients of a 2-D (transposed) convolution of an ``N, C, H, W`` input."""
    batch, channels, height, width = shape
    kernel, stride, padding, dilation = map(_pair, (kernel, stride, padding, dilation))
    sizes = zip((height, width), kernel, stride, padding, dilation)
    if transposed:
        weight_shape = (channels, out_channels // groups, *kernel)
        out = [(i - 1) * s - 2 * p + d * (k - 1) + 1 for i, k, s, p, d in sizes]
    else:
        weight_shape = (out_channels, channels // groups, *kernel)
        out = [(i + 2 * p - d * (k - 1) - 1) // s + 1 for i, k, s, p, d in sizes]
    grad = random_array(rng, (batch, out_channels, *out), dtype)
    x = random_array(rng, shape, dtype)
    weight = random_array(rng, weight_shape, dtype)
    words = [f"{'transposed ' if transposed else ''}k{_dims(kernel)} s{_dims(stride)} p{_dims(padding)} "
             f"d{_dims(dilation)}"]
    if groups > 1:
        words.append(f"groups {groups}")
    if cube_math_type:
        words.append(f"cubeMathType {cube_math_type}")
    return OpCall("convolution_backward", (grad, x, weight, [out_channels], list(stride), list(padding),
                                           list(dilation), transposed, [0, 0], groups, [True, True, True],
                                           cube_math_type),
                  case=" ".join(words))


BUILDERS: dict[str, Callable[..., OpCall]] = {
    "im2col_backward": im2col_backward,
    "max_unpool2d_backward": max_unpool2d_backward,
    "reflection_pad2d_backward": reflection_pad2d_backward,
    "avg_pool2d_backward": avg_pool2d_backward,
    "convolution_backward": convolution_backward,
}
