"""One file per operator: validation in CANN's order, the NumPy kernel, and the two-phase call."""

from .avg_pool2d_backward import avg_pool2d_backward
from .convolution_backward import convolution_backward
from .im2col_backward import im2col_backward
from .max_unpool2d_backward import max_unpool2d_backward
from .reflection_pad2d_backward import reflection_pad2d_backward

__all__ = [
    "avg_pool2d_backward",
    "convolution_backward",
    "im2col_backward",
    "max_unpool2d_backward",
    "reflection_pad2d_backward",
]
