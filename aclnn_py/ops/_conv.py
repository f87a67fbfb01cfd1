"""What the convolution operators (Convolution, the convolution gradients) share: the padding layout,
the output-size formulas and the room check, one source each (the simulator's are in
``sim/src/ops/conv_lowering.[ch]``, with the same messages)."""

from __future__ import annotations

from collections.abc import Sequence

from .._errors import param_invalid
from .._convert.values import INT64_MAX, INT64_MIN
from ._checks import shape_str


def sides(padding: tuple[int, ...], spatial: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """(before, after) per spatial dimension: one value per dimension (both sides alike), or
    pairs, ``[left, right]`` for 1-D and ``[top, bottom, left, right]`` for 2-D."""
    if len(padding) == spatial:
        return padding, padding
    return padding[0::2], padding[1::2]


def fits(*values: int) -> bool:
    """Every value is an int64."""
    return all(INT64_MIN <= v <= INT64_MAX for v in values)


def reach(kernel: int, dilation: int) -> int:
    """The span of a dilated kernel, ``(kernel - 1) * dilation + 1``."""
    return (kernel - 1) * dilation + 1


def output_size(size: int, kernel: int, stride: int, dilation: int, total_padding: int) -> int:
    """A convolution's output size along one dimension (the room check passed)."""
    return (size + total_padding - reach(kernel, dilation)) // stride + 1


def transposed_output_size(size: int, kernel: int, stride: int, dilation: int, total_padding: int,
                           output_padding: int) -> int:
    """A transposed convolution's output size along one dimension (maybe < 1: the callers check)."""
    return (size - 1) * stride - total_padding + reach(kernel, dilation) + output_padding


def check_room(api: str, d: int, size: int, total: int, kernel: int, input_shape: Sequence[int],
               weight_shape: Sequence[int], padding: Sequence[int], dilation: Sequence[int]) -> None:
    """The padded input holds the dilated kernel along spatial dim ``d`` (int64 arithmetic)."""
    span = reach(kernel, dilation[d])
    if not (span <= INT64_MAX and fits(size + total)):
        raise param_invalid(api, f"input spatial dim {d}: (kernel - 1) * dilation + 1 or (in + padding) overflows "
                                 f"int64 (input {shape_str(input_shape)}, weight {shape_str(weight_shape)}, padding = "
                                 f"{shape_str(padding)}, dilation = {shape_str(dilation)})")
    if size + total < span:
        raise param_invalid(api, f"input spatial dim {d}: (in + padding) = {size} + {total} must be >= (kernel - 1) * "
                                 f"dilation + 1 = {span} (weight {shape_str(weight_shape)}, dilation = "
                                 f"{shape_str(dilation)})")
