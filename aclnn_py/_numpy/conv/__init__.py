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
from ._geometry import FLOAT32, Engine, Geometry, GeometryArgs, Gradients
from .dense import DenseEngine
from .depthwise import DepthwiseEngine
from .flat import FlatEngine
from .patch import PatchEngine
from .polyphase import PolyphaseEngine
from .tap import TapEngine
from .winograd import WinogradEngine
from ..blas import on_caller, single_threaded
from ..workers import MIN_PARALLEL_ELEMENTS, in_parallel

__all__ = ["LoweredConv", "ENGINES", "lowered", "forward"]

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
            # gradInput alone reads one of X and dY: forward(X) when transposed, else dY.
            reads_x, reads_dy = want_weight or self.transposed, want_weight or not self.transposed
            if not _all_finite(x if reads_x else None, dy if reads_dy else None, w if want_input else None):
                engine = TapEngine(*self.geometry())
            return _run(engine, x, dy, w, want_input, want_weight)
        with np.errstate(all="ignore"):
            grads = _run(engine, x, dy, w, want_input, want_weight)
        if engine.name == "tap" or _all_finite(*grads):
            return grads
        return _run(TapEngine(*self.geometry()), x, dy, w, want_input, want_weight)

    def output(self, data: np.ndarray, w: np.ndarray) -> np.ndarray:
        """The output of a convolution operator's forward pass: ``forward(X=data, W)`` (Y's
        shape) when ``transposed`` (an ordinary convolution: the product a transposed one's
        gradInput is), else ``input_grad(dY=data, W)`` (X's shape: a transposed convolution's
        output, the product an ordinary one's gradInput is).  The engines read only ``data``
        and ``w`` for it; the other operand is a zero-strided stand-in of its shape."""
        batch = data.shape[0]
        if self.transposed:
            x, dy = data, np.broadcast_to(np.float32(0), (batch, self.y_channels) + self.y_size)
        else:
            x, dy = np.broadcast_to(np.float32(0), (batch, self.x_channels) + self.x_size), data
        result = self.gradients(x, dy, w, True, False)[0]
        assert result is not None
        return result

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
    threads, else on BLAS's own threads unless the machine is busy (``blas.on_caller``)."""
    with single_threaded() if engine.blas_in_workers else on_caller():
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


class _Flipped:
    """A stride-1 convolution's output as the input gradient of the convolution with the
    weight's kernel flipped and its channel roles swapped (``forward``): ``Y[o] = sum_t W[t]
    X[o + t*d - lo]`` is ``sum_t' W'[t'] X[o + lo' - t'*d]`` with ``t' = k-1-t`` and
    ``lo' = (k-1)*d - lo``, which is ``input_grad`` of a convolution Y -> X with padding
    ``lo'`` and weight ``W'[ci, co] = W[co, ci]`` flipped.  That lowering takes Winograd's
    engine for 3x3 and 3x3x3 layers, which the forward product has no form of."""

    def __init__(self, conv: LoweredConv, groups: int, out_channels: int) -> None:
        self.conv, self.groups, self.out_channels = conv, groups, out_channels

    def output(self, data: np.ndarray, w: np.ndarray) -> np.ndarray:
        g, rank = self.groups, w.ndim - 2
        cout_g, cin_g = w.shape[0] // g, w.shape[1]
        swapped = w.reshape((g, cout_g, cin_g) + w.shape[2:]).swapaxes(1, 2)
        flipped = swapped[(slice(None),) * 3 + (slice(None, None, -1),) * rank]
        w_flipped = np.ascontiguousarray(flipped).reshape((g * cin_g, cout_g) + w.shape[2:])
        return self.conv.output(data, w_flipped)


class _Pointwise:
    """A 1x1 (x1) convolution without padding: per image and group one matrix product of the
    weight ``(Cout/g, Cin/g)`` and the input's (strided) positions ``(Cin/g, P)``, by BLAS on
    contiguous operands (the patch engine's layout for the gradients made the forward product a
    strided one, ~15x slower on ResNet's 1x1 layers).  Each output is the exact sum of its
    terms, as no padding enters it."""

    def __init__(self, groups: int, out_channels: int, out_size: tuple[int, ...], stride: tuple[int, ...]) -> None:
        self.groups, self.out_channels, self.out_size, self.stride = groups, out_channels, out_size, stride

    def output(self, data: np.ndarray, w: np.ndarray) -> np.ndarray:
        if any(s > 1 for s in self.stride):
            picked = (slice(None), slice(None)) + tuple(slice(None, n * s, s) for n, s in zip(self.out_size,
                                                                                             self.stride))
            data = np.ascontiguousarray(data[picked])
        batch, g = data.shape[0], self.groups
        x = data.reshape(batch, g, data.shape[1] // g, -1)
        wg = w.reshape(g, self.out_channels // g, w.shape[1])
        y = np.empty((batch, g, self.out_channels // g, x.shape[3]), FLOAT32)
        with on_caller():
            for n in range(batch):          # (np.matmul of the stack does not call BLAS: 5x slower)
                for group in range(g):
                    np.matmul(wg[group], x[n, group], out=y[n, group])
        return y.reshape((batch, self.out_channels) + self.out_size)


#: Channels per group from which a 1x1 convolution takes ``_Pointwise`` (thinner groups: the
#: engines' depthwise paths).
POINTWISE_MIN_CHANNELS = 8


def forward(batch: int, in_channels: int, out_channels: int, in_size: tuple[int, ...], out_size: tuple[int, ...],
            kernel: tuple[int, ...], stride: tuple[int, ...], dilation: tuple[int, ...], pad_lo: tuple[int, ...],
            groups: int) -> LoweredConv | _Flipped | _Pointwise:
    """The lowering of an ordinary convolution's forward product, ``output(x, w)`` of it giving
    the output: the convolution itself (X = input, whose gradInput of a transposed convolution
    is this product), or, where Winograd's engine takes the flipped form (``_Flipped``), that;
    a 1x1 convolution without padding is a matrix product (``_Pointwise``)."""
    if (forced is None and all(k == 1 for k in kernel) and not any(pad_lo)
            and all(o == (i - 1) // s + 1 for i, o, s in zip(in_size, out_size, stride))
            and min(in_channels, out_channels) // groups >= POINTWISE_MIN_CHANNELS):
        return _Pointwise(groups, out_channels, out_size, stride)
    conv = lowered(batch, in_channels, out_channels, in_size, out_size, kernel, stride, dilation, pad_lo, groups,
                   True)
    if forced is None and all(s == 1 for s in stride) and all(lo <= (k - 1) * d
                                                             for lo, k, d in zip(pad_lo, kernel, dilation)):
        flipped_pad = tuple((k - 1) * d - lo for lo, k, d in zip(pad_lo, kernel, dilation))
        flipped = lowered(batch, out_channels, in_channels, out_size, in_size, kernel, stride, dilation, flipped_pad,
                          groups, False)
        if isinstance(flipped.choose(True), WinogradEngine):
            return _Flipped(flipped, groups, out_channels)
    return conv
