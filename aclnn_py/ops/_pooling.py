"""The checks the max-pooling operators share (aclnnMaxPool2dWithIndices and its backward make
them alike): the window lists' lengths and values, and the pooled size they give a plane.
The simulator's twin is ``sim/src/ops/pool_common.c`` with the operators' own C checks; the
messages are the same word for word (``tests/ops/invalid_cases.py``).
"""

from __future__ import annotations

import functools
from typing import NamedTuple

from .._convert.values import INT64_MAX
from .._errors import param_invalid
from .._numpy.pooling import expand, pooled_size
from ._checks import check_min, shape_str


class MaxWindow(NamedTuple):
    """Validated max-pooling windows: each list as an (H, W) pair."""

    k: tuple[int, int]
    s: tuple[int, int]
    p: tuple[int, int]
    d: tuple[int, int]
    ceil_mode: bool


@functools.lru_cache(maxsize=256)
def max_window(api: str, kernel: tuple[int, ...], stride: tuple[int, ...], padding: tuple[int, ...],
               dilation: tuple[int, ...], ceil_mode: bool) -> MaxWindow:
    """CANN's list checks of max pooling, in its order: lengths (kernelSize 1|2, stride 0|1|2,
    padding 1|2, dilation 1|2), then values (kernel > 0, stride > 0, 0 <= padding <=
    kernel / 2, dilation 1 on Atlas A2/A3) -> 161002."""
    for name, values, lengths, words in (("kernelSize", kernel, (1, 2), "1 or 2"), ("stride", stride, (0, 1, 2), "0, 1 or 2"),
                                         ("padding", padding, (1, 2), "1 or 2"), ("dilation", dilation, (1, 2), "1 or 2")):
        if len(values) not in lengths:
            raise param_invalid(api, f"{name} must have {words} elements, got {shape_str(values)}")
    check_min(api, "kernelSize", kernel, 0, strict=True)
    check_min(api, "stride", stride, 0, strict=True)
    k = expand(kernel)
    p = expand(padding)
    if min(p) < 0 or p[0] > k[0] // 2 or p[1] > k[1] // 2:
        raise param_invalid(api, f"padding must be >= 0 and <= kernelSize / 2, got kernelSize = {shape_str(kernel)}, "
                                 f"padding = {shape_str(padding)}")
    d = expand(dilation)
    if d != (1, 1):
        raise param_invalid(api, f"dilation must be 1 on Atlas A2/A3, got {shape_str(dilation)}")
    return MaxWindow(k, expand(stride, k), p, d, ceil_mode)


def pooled_plane(api: str, name: str, shape: tuple[int, ...], window: MaxWindow) -> tuple[int, int]:
    """The pooled (outH, outW) of a ``[N,] C, H, W`` shape: C, H, W != 0 and outH, outW > 0
    (161002 naming ``name`` otherwise, or an intermediate beyond int64)."""
    if 0 in shape[-3:]:
        raise param_invalid(api, f"{name} C, H and W must not be 0, got {shape_str(shape)}")
    k, s, p, d = window.k, window.s, window.p, window.d
    sizes = []
    for axis in (0, 1):
        size = shape[-2 + axis]
        if size + 2 * p[axis] + (s[axis] - 1 if window.ceil_mode else 0) > INT64_MAX:
            raise param_invalid(api, f"the pooled size of {name} {shape_str(shape)} overflows int64")
        sizes.append(pooled_size(size, k[axis], s[axis], p[axis], window.ceil_mode, d[axis]))
    if min(sizes) <= 0:
        raise param_invalid(api, f"outH and outW must be > 0, got {shape_str(sizes)} for {name} {shape_str(shape)}")
    return sizes[0], sizes[1]
