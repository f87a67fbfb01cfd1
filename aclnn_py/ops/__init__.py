"""One file per operator: validation in CANN's order, the NumPy kernel, the two-phase call, and its
declaration in the registry (``_registry.py``). Importing an operator's module registers it: its
one line below is the only place outside its module that names it (README, "Adding an operator").
The ``import f as f`` form is what re-exports ``f`` to type checkers (``aclnn_py`` re-exports
this package's names)."""

from typing import TYPE_CHECKING

from ._registry import Operator, operators
from .im2col_backward import im2col_backward as im2col_backward
from .im2col import im2col as im2col
from .max_unpool2d_backward import max_unpool2d_backward as max_unpool2d_backward
from .max_unpool2d import max_unpool2d as max_unpool2d
from .reflection_pad2d_backward import reflection_pad2d_backward as reflection_pad2d_backward
from .reflection_pad2d import reflection_pad2d as reflection_pad2d
from .avg_pool2d_backward import avg_pool2d_backward as avg_pool2d_backward
from .convolution_backward import convolution_backward as convolution_backward
from .convolution import convolution as convolution
from .add import add as add
from .mul import mul as mul
from .adds import adds as adds
from .muls import muls as muls
from .relu import relu as relu
from .threshold_backward import threshold_backward as threshold_backward
from .cast import cast as cast

#: Every operator, in the order above.
OPERATORS: tuple[Operator, ...] = operators()

if not TYPE_CHECKING:  # type checkers read the re-exports above
    __all__ = [op.name for op in OPERATORS]
