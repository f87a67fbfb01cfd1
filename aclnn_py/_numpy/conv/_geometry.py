"""What every engine shares: the lowered convolution's geometry and a few index helpers."""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import Protocol, TypeAlias

import numpy as np

from ..workers import scratch, worker_count

FLOAT32 = np.dtype(np.float32)

#: The constructor's arguments of ``Geometry`` (``Geometry.geometry``): batch, x_channels,
#: y_channels, x_size, y_size, kernel, stride, dilation, pad_lo, groups, transposed.
GeometryArgs: TypeAlias = tuple[int, int, int, tuple[int, ...], tuple[int, ...], tuple[int, ...],
                                tuple[int, ...], tuple[int, ...], tuple[int, ...], int, bool]
#: ``(gradInput, gradWeight)``, None where not wanted.
Gradients: TypeAlias = tuple[np.ndarray | None, np.ndarray | None]


class Engine(Protocol):
    """What ``LoweredConv`` hands its gradients to: any of the engines."""

    name: str
    #: Whether its worker threads (``_common.in_parallel``) make BLAS calls: then BLAS runs on
    #: one thread meanwhile (``_blas.single_threaded``).
    blas_in_workers: bool
    #: Whether LoweredConv checks its data for inf and NaN before the products rather than its
    #: results after them: where the products run on OpenBLAS's own threads, which go on
    #: spinning for a while after the call and slow a pass over the results on the worker
    #: threads (1x1 stride 2 (8,256,56,56)->512: 4.4 ms for dX's 6.4 M elements), and for tiny
    #: problems, whose few values a Python sum checks faster than NumPy's error state is entered.
    checks_data: bool

    def gradients(self, x: np.ndarray, dy: np.ndarray, w: np.ndarray, want_input: bool,
                  want_weight: bool) -> Gradients: ...


class Geometry:
    """The convolution ``X (N, Cx, *x_size) -> Y (N, Cy, *y_size)`` with weight ``W (Cy, Cx/groups,
    *kernel)`` (package docstring).  All sizes are validated, non-empty and consistent.

    ``transposed`` says which gradients an engine's ``gradients`` computes: those of a transposed
    convolution (gradInput = forward(gradOutput), shape of Y) or of an ordinary one (gradInput =
    input_grad(gradOutput), shape of X).  gradWeight is ``weight_grad`` either way.
    """

    def __init__(self, batch: int, x_channels: int, y_channels: int, x_size: tuple[int, ...],
                 y_size: tuple[int, ...], kernel: tuple[int, ...], stride: tuple[int, ...],
                 dilation: tuple[int, ...], pad_lo: tuple[int, ...], groups: int, transposed: bool) -> None:
        self.batch, self.x_channels, self.y_channels = batch, x_channels, y_channels
        self.x_size, self.y_size, self.kernel = tuple(x_size), tuple(y_size), tuple(kernel)
        self.stride, self.dilation, self.pad_lo = tuple(stride), tuple(dilation), tuple(pad_lo)
        self.groups, self.transposed = groups, transposed

    def geometry(self) -> GeometryArgs:
        """The constructor's arguments, to build another engine on the same convolution."""
        return (self.batch, self.x_channels, self.y_channels, self.x_size, self.y_size, self.kernel,
                self.stride, self.dilation, self.pad_lo, self.groups, self.transposed)

    @property
    def data_elements(self) -> int:
        """Elements of X and Y together."""
        return self.batch * (self.x_channels * math.prod(self.x_size) + self.y_channels * math.prod(self.y_size))

    @property
    def work(self) -> int:
        """Multiply-adds of one of the three products."""
        return (self.batch * self.y_channels * (self.x_channels // self.groups) * math.prod(self.y_size)
                * math.prod(self.kernel))

    def subscripts(self, spec: str) -> str:
        """einsum subscripts with ``_`` for the spatial and ``^`` for the kernel dimensions."""
        rank = len(self.kernel)
        return spec.replace("_", "xyz"[:rank]).replace("^", "abc"[:rank])


def axis_slices(size: int, extent: int, step: int, base: int) -> tuple[slice, slice] | None:
    """Connect ``a in [0, extent)`` with source position ``a*step + base`` where it lies in
    ``[0, size)``: ``(slice of a, slice of source positions)``, or None if nothing connects."""
    first = max(0, (step - 1 - base) // step)
    last = min(extent, (size - base + step - 1) // step) if size > base else 0
    if last <= first:
        return None
    start = first * step + base
    return slice(first, last), slice(start, start + (last - first - 1) * step + 1, step)


def connect(sizes: Sequence[int], extents: Sequence[int], steps: Sequence[int],
            bases: Sequence[int]) -> list[tuple[slice, slice]] | None:
    """``axis_slices`` of every axis: per axis ``(slice of a, slice of source positions)`` where
    ``a*step + base`` lies in the source, or None if some axis connects nothing (then no
    position connects)."""
    box = []
    for size, extent, step, base in zip(sizes, extents, steps, bases):
        connection = axis_slices(size, extent, step, base)
        if connection is None:
            return None
        box.append(connection)
    return box


def zero_outside(a: np.ndarray, box: list[slice], lead: int = 0) -> None:
    """Zero ``a`` outside ``box`` (unit-step slices, one per axis after the first ``lead`` ones),
    each axis' outside only within the box of the axes before it."""
    everything = (slice(None),) * lead
    for k, s in enumerate(box):
        inside = tuple(box[:k])
        a[everything + inside + (slice(None, s.start),)] = 0
        a[everything + inside + (slice(s.stop, None),)] = 0


class PartialSums:
    """The running sums of the parts of one ``in_parallel`` region, one per part, added up in
    the parts' order at the end (``total``).  The sums live in the calling thread's scratch
    array ``name``, a slot per worker thread, and each part's terms in its own thread's scratch
    array: fresh arrays were fresh pages each call, faulted in and zeroed by the kernel (resnet
    3x3 gradWeight+bias (8,128,28,28), two 1 MiB sums: 11.2 -> 6.9 ms kept).  Not the workers'
    own scratch for the sums: a worker may run a part of another thread's call before this call
    reads them."""

    def __init__(self, name: str, shape: tuple[int, ...]) -> None:
        self._name, self._shape = name, shape
        self._slots = scratch(name, (worker_count(),) + shape)
        self._claimed = itertools.count()
        self._parts: list[tuple[int, np.ndarray]] = []

    def claim(self, first: int) -> tuple[np.ndarray, np.ndarray]:
        """``(total, product)`` for the part starting at ``first``: its sum, zeroed, and a
        buffer for its terms (valid while the part runs)."""
        total = self._slots[next(self._claimed)]     # next() of a count is atomic
        total.fill(0)
        self._parts.append((first, total))           # list.append is atomic
        return total, scratch(self._name + " product", self._shape)

    def total(self) -> np.ndarray:
        """The parts' sums added in the order of their first index (ordered_sum)."""
        return ordered_sum(self._parts)


def add_grouped_products(total: np.ndarray, product: np.ndarray, left: np.ndarray, right: np.ndarray) -> None:
    """``total[:, g] += left_g^T @ right_g`` for each group ``g``: ``left (P, K, groups*L)`` and
    ``right (P, K, groups*R)`` (the group's columns ``g*L:(g+1)*L``, ``g*R:(g+1)*R``), ``total``
    and the scratch ``product`` ``(P, groups, L, R)``: the transformed-domain weight products of
    the Winograd and polyphase engines, summed over a block's tiles (K)."""
    groups = product.shape[1]
    lg, rg = left.shape[2] // groups, right.shape[2] // groups
    for g in range(groups):
        np.matmul(left[:, :, g * lg:(g + 1) * lg].swapaxes(1, 2), right[:, :, g * rg:(g + 1) * rg], out=product[:, g])
    total += product


def ordered_sum(parts: list[tuple[int, np.ndarray]]) -> np.ndarray:
    """The sum of the worker threads' partial sums ``(first, part)``, added in the order of
    their ``first`` index whichever worker finished first: the same result on every call (float
    addition is not associative, and 3 or 4 workers may finish in any order).  Added into the
    first part's array, which the callers no longer need: ``np.sum`` of the list stacked them
    into a fresh array first (the polyphase engine on the k4 s2 case, two 0.5 MiB sums: 0.62 ->
    0.02 ms, and the whole call 6.1-6.5 -> 4.7-4.8 ms; the bench cases' own engines within the
    noise)."""
    ordered = [part for _, part in sorted(parts, key=lambda item: item[0])]
    total = ordered[0]
    for part in ordered[1:]:
        total += part
    return total


def c_strides(extents: tuple[int, ...]) -> tuple[int, ...]:
    """Element strides of a C-contiguous array of shape ``extents``."""
    strides: list[int] = []
    acc = 1
    for extent in reversed(extents):
        strides.append(acc)
        acc *= extent
    return tuple(reversed(strides))


def grouped(a: np.ndarray, groups: int) -> np.ndarray:
    """``(N, C, ...)`` viewed as ``(N, groups, C/groups, ...)``."""
    return a.reshape(a.shape[0], groups, a.shape[1] // groups, *a.shape[2:])


def spread(src: np.ndarray, extents: tuple[int, ...], steps: tuple[int, ...], bases: tuple[int, ...]) -> np.ndarray:
    """Zeros ``(N, C, *extents)`` holding ``src[..., q]`` at ``q*step + base`` (where inside)."""
    out = np.zeros(src.shape[:2] + extents, FLOAT32)
    box = connect(extents, src.shape[2:], steps, bases)
    if box is None:
        return out
    every = (slice(None), slice(None))
    out[every + tuple(dst for _, dst in box)] = src[every + tuple(source for source, _ in box)]
    return out
