"""What Im2col and its gradient (col2im) share: the block count along one dimension (the
simulator's ``sim/src/ops/im2col_common.h``)."""

from __future__ import annotations


def block_numerator(size: int, kernel: int, dilation: int, padding: int, stride: int) -> int:
    """``size + 2*padding - dilation*(kernel - 1) - 1 + stride``, of which ``block_count`` is
    the C (truncating) quotient by stride."""
    return size + 2 * padding - dilation * (kernel - 1) - 1 + stride


def block_count(numerator: int, stride: int) -> int:
    """Blocks along one dimension from ``block_numerator``: C's truncating division, equal to
    the documented ``floor((size + 2p - (d*(k-1) + 1)) / s) + 1`` wherever that is >= 1."""
    quotient = abs(numerator) // stride
    return quotient if numerator >= 0 else -quotient
