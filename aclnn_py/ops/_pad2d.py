"""What ReflectionPad2d and its gradient share: the padded size and the limit on each
pad, one source each (the simulator's are in ``sim/src/ops/pad2d_common.[ch]``, with the same
messages).  ``padding = [left, right, top, bottom]``."""

from __future__ import annotations

from collections.abc import Sequence

from ._checks import check, shape_str


def padded_hw(self_shape: Sequence[int], padding: Sequence[int]) -> tuple[int, int]:
    """``(H + top + bottom, W + left + right)`` of a self ``(..., H, W)``."""
    left, right, top, bottom = padding
    return self_shape[-2] + top + bottom, self_shape[-1] + left + right


def check_pads_below(api: str, padding: Sequence[int], self_shape: Sequence[int]) -> None:
    """``left, right < W`` and ``top, bottom < H`` (a reflection never reaches past the edge)."""
    height, width = self_shape[-2:]
    for side, pad, (what, limit) in zip(("left", "right", "top", "bottom"), padding,
                                        (("width", width),) * 2 + (("height", height),) * 2):
        check(api, pad < limit, lambda: f"padding {side} = {pad} must be < the input {what} = {limit} "
              f"(padding = {shape_str(padding)}, self {shape_str(self_shape)})")
