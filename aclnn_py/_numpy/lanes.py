"""One kernel over independent slices of its arrays, the slices shared out to the backend's worker
threads (``workers.in_parallel``): the softmax family's rows, a reduction's kept dims, BatchNorm's
channels.  NumPy's ufuncs and reductions release the GIL, so two slices run on two cores.

``over(shape, fixed, work)`` calls ``work(index)`` with ``index`` a tuple of slices selecting one
part of every array of ``shape`` the kernel reads and writes: the parts cut the outermost dim not
in ``fixed`` (the dims a part must hold whole: the softmax dim, the reduced dims), so a part of a
C-contiguous array is one contiguous block where the dims before it are 1.  Each element of a
result is computed by exactly one part, from its own slice alone, in the same order as one call
over the whole array would: the split changes no figure, except in two kinds of sums, by a
last bit, within the tolerances: the short rows ``reduce.last_sums`` hands to BLAS (its kernels
may add a row's elements in another order depending on where the row falls in a block of
rows), and NumPy's float reductions over several dims (its iterator may order a part's
additions otherwise, e.g. where the part's cut dim has size 1).

The parts are claimed, not assigned (``workers.in_pieces``, the one mechanism the elementwise
kernels' ``over_parts`` uses too): the calling thread and the workers each take the next
unclaimed part until none is left, and a worker that has not woken by then is called off, so a
split call is never much slower than one thread; and on a busy machine
(``workers.machine_busy``) nothing is split.

Measured only under load (load average 7-8 on the 2 cores, other agents' processes busy; split
vs one part interleaved in one process, 40 rounds, fastest/median ms): softmax (256,1000)
0.53/0.67 vs 0.51/0.56; softmax (8,12,128,128) 4.62/5.03 vs 4.58/5.03; BatchNormBackward
(8,64,56,56) 5.14/6.99 vs 5.08/7.05; global average (32,2048,7,7) 2.19/3.23 vs 2.14/2.63: with
no idle core the split gains nothing and costs at most a hand-off or two (the threshold keeps
it off kernels of fewer than 2 Mi elements times passes, where that is most of the call:
``MIN_PART_ELEMENTS``).  On
an idle machine the second core is there to take half the parts; not measured here today.
``scripts/bench.py --op "attention scores (8"`` at load average 9-13, the split on / off
alternately, twice each (numpy/PyTorch ratios): softmax 5.66, 9.47 / 12.33, 9.92; softmax
backward 2.19, 5.78 / 5.05, 5.81; log_softmax 0.63, 1.87 / 3.61, 2.03; its backward 5.26, 4.25
/ 5.71, 2.04: noise of the load swamps both.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Collection

from . import workers
from .workers import in_pieces, worker_count

Index = tuple[slice, ...]

#: Elements a part of a one-pass kernel must hold to be worth a hand-off; a kernel of
#: ``passes`` passes needs 1/passes of it.  A split's hand-off, waking a worker and holding the
#: threads to cores (``placement.pinned``) cost far more than the 20-50 us once assumed here
#: (256 Ki, which split every (256,1000) softmax into 4 parts): the old 1 << 18 against this,
#: interleaved in one process, medians of 41 rounds, ms (load average 1.9-2.3 on the 2 cores):
#: log_softmax (256,1000) dim 1 2.57 / 0.65, softmax 2.12 / 0.55, their backwards 2.06 / 0.53
#: and 1.00 / 0.30, reduce_sum (8,64,56,56) over (0,2,3) 1.94 / 0.48, mean (8,2048,7,7) over
#: (2,3) 1.18 / 0.34, BatchNormBackward (8,512,7,7) 2.64 / 0.83; the kernels of 1.5 Mi
#: elements and more still split as before (attention scores (8,12,128,128): softmax 5.22 /
#: 5.24, log_softmax 9.43 / 9.34, their backwards 4.56 / 4.73 and 3.35 / 4.15; forced one
#: part at load 1.6: softmax_backward 2.15 split / 2.48 one part, log_softmax 2.98 / 5.11).
MIN_PART_ELEMENTS = 1 << 20
#: Parts per thread at most (finer parts even out threads that start late).
PARTS_PER_THREAD = 2


def split_dim(shape: tuple[int, ...], fixed: Collection[int]) -> int | None:
    """The dim the parts cut: the outermost one not in ``fixed`` of size >= 2 (None if none)."""
    for axis, size in enumerate(shape):
        if axis not in fixed and size >= 2:
            return axis
    return None


def over(shape: tuple[int, ...], fixed: Collection[int], work: Callable[[Index], None], passes: int = 1) -> None:
    """``work(index)`` over parts of ``shape`` cut along ``split_dim`` (module docstring), each
    of at least ``MIN_PART_ELEMENTS / passes`` (``passes``: how often the kernel streams through
    its data), claimed by the calling thread and the workers; else ``work`` of the whole."""
    threads = worker_count()
    axis, count = _parts(tuple(shape), tuple(fixed), passes, MIN_PART_ELEMENTS, threads)
    if count < 2 or workers.machine_busy():
        work(_whole(len(shape)))
        return
    size = shape[axis]
    lead = (slice(None),) * axis
    bounds = [size * i // count for i in range(count + 1)]
    parts = [(*lead, slice(a, b)) for a, b in zip(bounds, bounds[1:])]

    def run(start: int, stop: int) -> None:
        for part in parts[start:stop]:
            work(part)

    in_pieces(count, run, threads=min(threads, count), pieces=count)


# The split of a shape, and the index of a whole array, kept from call to call: a small call's
# cost is its Python (``over`` of one part, thread time: 1.5 -> 0.8 us for (4, 4), 1.9 -> 0.9 us
# for (256, 1000)).
@functools.lru_cache(maxsize=256)
def _parts(shape: tuple[int, ...], fixed: tuple[int, ...], passes: int, least_elements: int,
           threads: int) -> tuple[int, int]:
    """(the dim ``over`` cuts, its parts); parts < 2: not split."""
    axis = split_dim(shape, fixed)
    if axis is None or threads < 2:
        return 0, 1
    least = max(1, least_elements // passes)
    return axis, min(shape[axis], threads * PARTS_PER_THREAD, math.prod(shape) // least)


@functools.lru_cache(maxsize=16)
def _whole(ndim: int) -> Index:
    return (slice(None),) * ndim
