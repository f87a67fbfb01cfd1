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
from .inplace_add import inplace_add as inplace_add
from .max_pool2d_with_indices import max_pool2d_with_indices as max_pool2d_with_indices
from .max_pool2d_with_indices_backward import max_pool2d_with_indices_backward as max_pool2d_with_indices_backward
from .nll_loss import nll_loss as nll_loss
from .nll_loss_backward import nll_loss_backward as nll_loss_backward
from .mm import mm as mm
from .addmm import addmm as addmm
from .inplace_zero import inplace_zero as inplace_zero
from .inplace_copy import inplace_copy as inplace_copy
from .inplace_fill_scalar import inplace_fill_scalar as inplace_fill_scalar
from .cat import cat as cat
from .adaptive_avg_pool2d import adaptive_avg_pool2d as adaptive_avg_pool2d
from .adaptive_avg_pool2d_backward import adaptive_avg_pool2d_backward as adaptive_avg_pool2d_backward
from .matmul import matmul as matmul
from .batch_mat_mul import batch_mat_mul as batch_mat_mul
from .batch_norm import batch_norm as batch_norm
from .batch_norm_backward import batch_norm_backward as batch_norm_backward
from .log_softmax import log_softmax as log_softmax
from .log_softmax_backward import log_softmax_backward as log_softmax_backward
from .softmax import softmax as softmax
from .softmax_backward import softmax_backward as softmax_backward
from .reduce_sum import reduce_sum as reduce_sum
from .mean import mean as mean
from .avg_pool2d import avg_pool2d as avg_pool2d
from .upsample_nearest2d import upsample_nearest2d as upsample_nearest2d
from .upsample_nearest2d_backward import upsample_nearest2d_backward as upsample_nearest2d_backward

#: Every operator, in the order above.
OPERATORS: tuple[Operator, ...] = operators()

if not TYPE_CHECKING:  # type checkers read the re-exports above
    __all__ = [op.name for op in OPERATORS]
