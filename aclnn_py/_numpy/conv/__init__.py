"""NumPy kernels of the convolution gradients: a grouped, strided, dilated, padded N-d convolution
lowered to BLAS matrix products.

Every gradient the operator returns is one of three products of one *lowered*
convolution ``X (N, Cx, *x_size) -> Y (N, Cy, *y_size)`` with weight ``W (Cy, Cx/groups, *kernel)``
(for ``transposed=False`` X is ``input``; for ``transposed=True`` X is ``gradOutput``, because a
transposed convolution is the adjoint of this one).  With ``u = x + pad_lo`` the padded
coordinate and ``t`` a kernel tap, output ``o`` reads ``u = o*stride + t*dilation``::

    forward       Y[n, co, o]   = sum_{ci, t}      W[co, ci, t] * X[n, ci, o*s + t*d - lo]
    weight_grad   dW[co, ci, t] = sum_{n, o}       dY[n, co, o] * X[n, ci, o*s + t*d - lo]
    input_grad    dX[n, ci, x]  = sum_{co, t, o : o*s + t*d = x + lo}  W[co, ci, t] * dY[n, co, o]

(channels ``co``/``ci`` within one group).  Positions outside X read as zero.

Seven engines compute these, one module each; ``LoweredConv`` picks one from the shapes alone:

* ``tap`` (tap.py): one einsum per kernel tap on strided slices.  Exactly the terms of the
  sums: the engine for data holding inf or NaN (IEEE semantics, as the simulator), and the
  fallback when the flat engine's buffers would dwarf the data.
* ``dense`` (dense.py): tiny problems, one cached 0/1 unfold matrix; per-call cost.
* ``patch`` (patch.py): kernel == stride, the windows tile X: one reshape and one matrix
  product per gradient.
* ``depthwise`` (depthwise.py): depthwise stride-1 1-D and 2-D convolutions with X's and Y's
  rows equally long, on the planes in place: per block of planes one strided im2col of all
  taps, a matrix-vector product per plane and one dot product per tap and plane.
* ``winograd`` (winograd.py): both gradients of an ordinary 2-D 3x3 or 3-D 3x3x3 stride-1
  convolution (dilated too: its dilation phases are undilated convolutions) with enough
  channels per group on each side (winograd.worthwhile), by Winograd's F(2x2, 3x3) and
  F(2x2x2, 3x3x3) (and F(3x3, 2x2), F(3x3x3, 2x2x2) for the weight): 2.25x and 3.375x fewer
  multiply-adds in BLAS.
* ``polyphase`` (polyphase.py): a transposed convolution's gradients (and gradWeight alone of an
  ordinary one) when the 2-D kernel is twice the stride (k4 s2 upsampling): its stride phases
  stacked as channels make a stride-1 2x2 convolution, by Winograd's F(3x3, 2x2): 2.25x fewer
  multiply-adds in BLAS.
* ``flat`` (flat.py): everything else, im2col of phase-split flat buffers in cache-sized chunks
  fed to BLAS (tap by tap for the other depthwise convolutions).  Lowered in X space for a transposed
  convolution and for gradWeight alone, in Y space (per output phase of dX) otherwise.

All arrays here are float32; the op converts before and rounds after.
"""

from __future__ import annotations

import functools
import math
from typing import Unpack

import numpy as np

from . import dense, depthwise, patch, polyphase, winograd
from ._geometry import Engine, Geometry, GeometryArgs, Gradients
from .dense import DenseEngine
from .depthwise import DepthwiseEngine
from .flat import FlatEngine
from .patch import PatchEngine
from .polyphase import PolyphaseEngine
from .tap import TapEngine
from .winograd import WinogradEngine
from ..blas import single_threaded
from ..workers import MIN_PARALLEL_ELEMENTS, in_parallel

__all__ = ["LoweredConv", "ENGINES", "lowered"]

ENGINES = ("dense", "patch", "depthwise", "winograd", "polyphase", "flat", "tap")

# The flat (and winograd) engine is used while its buffers are at most this many times the
# data (+ a constant): beyond that (huge padding or dilation) building them costs more than the
# tap engine's per-tap passes, and the memory would not be proportional to the data.
FLAT_OVERHEAD = 4
FLAT_SLACK_ELEMENTS = 1 << 16

#: Tests set this to an engine's name to force it wherever it applies (None: choose).
forced: str | None = None


class LoweredConv(Geometry):
    """The convolution ``X -> Y`` whose products give the gradients (module docstring), and the
    choice of the engine that computes them."""

    def gradients(self, x: np.ndarray, dy: np.ndarray, w: np.ndarray, want_input: bool, want_weight: bool) -> Gradients:
        """``(gradInput, gradWeight)`` of the (transposed) convolution, None where not wanted.
        gradInput is ``forward(X, W)`` (shape of Y) when transposed, else ``input_grad(dY, W)``
        (shape of X); gradWeight is ``weight_grad(X, dY)``, shape ``(Cy, Cx/groups, *kernel)``.

        The engine chosen by shape (``choose``) multiplies zeros standing for padding and stride
        gaps, and Winograd's transforms subtract: from data holding inf or NaN they give NaN
        where the exact sums have inf or a number; the tap engine, term by term as the
        simulator, gives the IEEE results.  Such data always leaves a mark in the fast engines'
        results: a non-finite value reaches every sum it is a term of (a zero factor or an
        opposite infinity makes it NaN; nothing makes it finite), and each of those sums is a
        result.  So the results are checked rather than the data, which are larger (the stem's
        gradWeight has 9,408 elements, its data 7.6 M), and results with inf or NaN in them
        are computed anew by the tap engine (the fast pass under ``np.errstate``: its NaN are
        no news to the caller).  Engines with ``checks_data`` (tiny problems; products on
        OpenBLAS's own threads) have their data checked before instead, as the engines all
        once did."""
        engine = self.choose(want_input)
        if engine.checks_data:
            if not _all_finite(x, dy, w if want_input else None):
                engine = TapEngine(*self.geometry())
            return _run(engine, x, dy, w, want_input, want_weight)
        with np.errstate(all="ignore"):
            grads = _run(engine, x, dy, w, want_input, want_weight)
        if engine.name == "tap" or _all_finite(*grads):
            return grads
        return _run(TapEngine(*self.geometry()), x, dy, w, want_input, want_weight)

    def choose(self, want_input: bool) -> Engine:
        """The fastest engine for finite data, from the shapes and what is wanted.  Engines hold
        only their plan (index layouts derived from the shapes): one is kept per geometry, which
        takes the planning out of repeated calls (a training loop's, the tiny ones')."""
        return _choose(self.geometry(), want_input, forced)

    def _pick(self, want_input: bool, forced: str | None) -> Engine:
        geometry = self.geometry()
        if forced == "tap":
            return TapEngine(*geometry)
        if forced == "dense" or forced is None and self._tiny():
            return DenseEngine(*geometry)
        if forced in (None, "patch") and patch.applies(self):
            return PatchEngine(*geometry)
        if forced in (None, "depthwise") and depthwise.applies(self):
            return DepthwiseEngine(*geometry)
        if forced == "winograd" and winograd.applies(self):
            return WinogradEngine(*geometry)
        # The forward product and gradWeight of a kernel twice the stride: X space only.
        if (forced in (None, "polyphase") and polyphase.applies(self) and (self.transposed or not want_input)
                and (forced == "polyphase" or polyphase.worthwhile(self))):
            polyphase_engine = PolyphaseEngine(*geometry)
            if forced == "polyphase" or polyphase_engine.elements <= self._flat_budget():
                return polyphase_engine
        # gradWeight alone of an ordinary convolution: X space too (flat.py).
        space = "x" if self.transposed or not want_input else "y"
        flat_engine = FlatEngine(*geometry, space=space)
        engine: FlatEngine | TapEngine = flat_engine
        if flat_engine.elements is None or (forced != "flat" and flat_engine.elements > self._flat_budget()):
            engine = TapEngine(*geometry)
        if forced is None and winograd.applies(self) and winograd.worthwhile(self):
            winograd_engine = WinogradEngine(*geometry)
            if winograd_engine.elements <= self._flat_budget():
                return winograd_engine
        return engine

    def _tiny(self) -> bool:
        return self.work <= dense.DENSE_WORK and DenseEngine(*self.geometry()).padded_elements <= dense.DENSE_ELEMENTS

    def _flat_budget(self) -> int:
        return FLAT_OVERHEAD * self.data_elements + FLAT_SLACK_ELEMENTS


def _run(engine: Engine, x: np.ndarray, dy: np.ndarray, w: np.ndarray, want_input: bool, want_weight: bool) -> Gradients:
    """``engine.gradients``, with BLAS single-threaded where the engine calls it from its worker
    threads."""
    if not engine.blas_in_workers:
        return engine.gradients(x, dy, w, want_input, want_weight)
    with single_threaded():
        return engine.gradients(x, dy, w, want_input, want_weight)


@functools.lru_cache(maxsize=128)
def lowered(*geometry: Unpack[GeometryArgs]) -> LoweredConv:
    """The LoweredConv of a geometry, kept: a repeated call (a training loop's, the tiny ones')
    does not build it again."""
    return LoweredConv(*geometry)


@functools.lru_cache(maxsize=128)
def _choose(geometry: GeometryArgs, want_input: bool, forced: str | None) -> Engine:
    return LoweredConv(*geometry)._pick(want_input, forced)


# Arrays of up to this many elements are checked by summing their values as Python floats
# (doubles: no sum of float32 values this short can overflow one), sooner than a NumPy
# reduction under np.errstate (measured, three arrays of n elements each: 0.6 us at n = 4,
# 2.3 us at 64, 4.5 us at 128, against 3.2-3.3 us for the reductions).
_PYTHON_SUM = 64


def _all_finite(*arrays: np.ndarray | None) -> bool:
    """No inf or NaN in any of ``arrays`` (None skipped).  A sum is one pass without a mask
    array: a finite sum proves finite data (inf - inf is NaN), and the rare overflow of a
    float32 sum of finite values only costs the exact (slower) engine.  Small arrays are summed
    as Python floats (``_PYTHON_SUM``), which no float32 values overflow: the same rule, without
    NumPy's per-call cost or the errstate context; the others by NumPy reductions under one
    errstate (1-1.5 us to enter), a large contiguous one in parts on the worker threads
    (``_parallel_sum``)."""
    total = 0.0
    large = []
    for a in arrays:
        if a is None:
            continue
        if a.size <= _PYTHON_SUM:
            total += sum(a.ravel().tolist())
        else:
            large.append(a)
    if not math.isfinite(total):
        return False
    if not large:
        return True
    with np.errstate(over="ignore", invalid="ignore"):
        return all(math.isfinite(_parallel_sum(a) if a.flags.c_contiguous and a.size >= 2 * MIN_PARALLEL_ELEMENTS
                                 else float(np.add.reduce(a, axis=None))) for a in large)


def _parallel_sum(a: np.ndarray) -> float:
    """The float32 sum of the contiguous ``a`` (an overflow is inf), its parts summed on the
    worker threads: NumPy releases the GIL in the reduction, a pass over the data at memory
    speed (the depthwise 3x3 (8,128,56,56) case's two arrays took 1.0 ms on one thread).  The
    error state is per thread: each part's reduction sets it where it runs."""
    flat = a.reshape(-1)
    partial: dict[int, float] = {}

    def work(first: int, last: int) -> None:
        with np.errstate(over="ignore", invalid="ignore"):
            partial[first] = float(np.add.reduce(flat[first:last]))

    in_parallel(flat.size, work, min_per_thread=MIN_PARALLEL_ELEMENTS)
    # In the order of the parts, whichever thread summed each: the same verdict on every call
    # (a float sum's overflow depends on its order).
    return sum(partial[first] for first in sorted(partial))
