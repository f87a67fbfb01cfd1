"""The elementwise operators' parallel parts (``_numpy/workers.over_parts``): splitting the output
across the worker threads covers every element once and changes no bit of any result.

The split is forced on small arrays (``MIN_PARALLEL_ELEMENTS`` = 1, two workers) and each
result compared byte for byte with the same call unsplit."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import aclnn_py
from aclnn_py._numpy import workers as _workers
from aclnn_py._numpy.workers import in_pieces, over_parts

BF16 = np.dtype(aclnn_py.bfloat16)


@pytest.fixture
def split(monkeypatch):
    """A function running ``call()`` unsplit and then split into parts of >= 1 element on (at
    least) two threads, returning both results."""
    def run(call):
        monkeypatch.setattr(_workers, "MIN_PARALLEL_ELEMENTS", 1 << 40)
        monkeypatch.setattr(_workers, "FLAT_PART_ELEMENTS", 1 << 40)
        whole = call()
        monkeypatch.setattr(_workers, "MIN_PARALLEL_ELEMENTS", 1)
        monkeypatch.setattr(_workers, "FLAT_PART_ELEMENTS", 1)
        monkeypatch.setattr(_workers, "_WORKERS", max(2, _workers._WORKERS))
        monkeypatch.setattr(_workers, "machine_busy", lambda: False)
        parts = call()
        return whole, parts
    return run


def _same_bits(a, b):
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape
    assert np.ascontiguousarray(a).tobytes() == np.ascontiguousarray(b).tobytes()


def _values(rng, shape, dtype):
    """Random values with the edge cases mixed in: zeros of both signs, infinities, NaN,
    values that overflow FLOAT16, FLOAT16 subnormals and ties."""
    x = np.asarray(rng.standard_normal(shape) * 4, np.float32)
    flat = x.reshape(-1)
    edges = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 7e4, -7e4, 65520.0, 3e-6, -6e-8,
                      1 + 2.0**-11, 2049.0], np.float32)
    flat[:edges.size] = edges[:flat.size]
    if dtype.kind in "iu":
        return np.asarray(rng.integers(-100, 100, shape), dtype)
    if dtype == np.bool_:
        return np.asarray(rng.integers(0, 2, shape), bool)
    with np.errstate(over="ignore"):
        return x.astype(dtype)


def test_over_parts_covers_every_element_once_with_broadcast_and_strided_inputs(monkeypatch):
    monkeypatch.setattr(_workers, "_WORKERS", max(2, _workers._WORKERS))
    monkeypatch.setattr(_workers, "machine_busy", lambda: False)
    out = np.zeros((1, 1, 7, 5), np.int64)
    a = np.arange(35, dtype=np.int64).reshape(5, 7).T  # non-contiguous
    b = np.arange(5, dtype=np.int64)                   # broadcast along the rows

    def work(o, x, y, z):
        assert o.shape == x.shape and y.shape in ((5,), o.shape) and z.ndim == 0  # (b: whole or cut)
        o += x * 100 + y + z + 1  # (each element once: a second visit would add again)

    over_parts(work, out, a, b, np.int64(1000), min_elements=1)
    assert np.array_equal(out[0, 0], a * 100 + b + 1001)


def test_in_pieces_covers_every_index_once_and_the_workers_take_pieces(monkeypatch):
    monkeypatch.setattr(_workers, "_WORKERS", max(2, _workers._WORKERS))
    caller, seen, lock = threading.get_ident(), [], threading.Lock()
    helped = threading.Event()

    def work(a, b):
        with lock:
            seen.extend(range(a, b))
        if threading.get_ident() == caller:
            helped.wait(10)  # the caller is slow: a worker takes the other pieces
        else:
            helped.set()

    in_pieces(40, work, threads=2, pieces=40)
    assert sorted(seen) == list(range(40)) and helped.is_set()


def test_in_pieces_does_not_wait_for_a_worker_that_has_not_started(monkeypatch):
    monkeypatch.setattr(_workers, "_WORKERS", max(2, _workers._WORKERS))
    pool, release = _workers._executor(), threading.Event()
    busy = [pool.submit(release.wait, 10) for _ in range(pool._max_workers)]  # every worker taken
    try:
        threads = set()
        in_pieces(12, lambda a, b: threads.add(threading.get_ident()), threads=2, pieces=12)
        assert threads == {threading.get_ident()}  # all on the caller, which returned
    finally:
        release.set()
        for f in busy:
            f.result()


@pytest.mark.parametrize("guided", [False, True])
def test_in_pieces_reraises_the_callers_and_a_workers_exception(monkeypatch, guided):
    monkeypatch.setattr(_workers, "_WORKERS", max(2, _workers._WORKERS))
    caller = threading.get_ident()

    caller_began = threading.Event()

    def fail_on_caller(a, b):
        if threading.get_ident() == caller:
            caller_began.set()
            raise ValueError("caller")
        caller_began.wait(10)  # (a fast worker would otherwise take every piece first)

    with pytest.raises(ValueError, match="caller"):
        in_pieces(8, fail_on_caller, threads=2, pieces=8, guided=guided)
    started = threading.Event()

    def fail_on_worker(a, b):
        if threading.get_ident() != caller:
            started.set()
            raise KeyError("worker")
        started.wait(10)

    with pytest.raises(KeyError, match="worker"):
        in_pieces(40, fail_on_worker, threads=2, pieces=40, guided=guided)


def test_over_parts_runs_small_or_single_element_outputs_whole():
    seen = []
    out = np.zeros((1, 1), np.float32)
    over_parts(lambda o, x: seen.append(o.shape), out, np.ones(1, np.float32), min_elements=1)
    over_parts(lambda o: seen.append(o.shape), np.zeros((4, 3)))  # below the default threshold
    assert seen == [(1, 1), (4, 3)]


@pytest.mark.parametrize("dtype", [np.float32, np.float16, BF16, np.int32, np.bool_, np.complex64],
                         ids=str)
@pytest.mark.parametrize("other_shape", [(6, 5, 7), (5, 1), ()], ids=str)
def test_add_mul_split_gives_the_same_bits(split, dtype, other_shape):
    rng = np.random.default_rng(1)
    dtype = np.dtype(dtype)
    a = _values(rng, (7, 5, 6), dtype).transpose(2, 1, 0)  # (6, 5, 7), non-contiguous
    b = _values(rng, other_shape, dtype)
    alpha = True if dtype == np.bool_ else 3 if dtype.kind == "i" else -0.75
    for call in (lambda: aclnn_py.add(a, b, alpha, backend="numpy"),
                 lambda: aclnn_py.add(a, b, backend="numpy"),
                 lambda: aclnn_py.mul(a, b, backend="numpy")):
        _same_bits(*split(call))


@pytest.mark.parametrize("dtype", [np.float32, np.float16, BF16], ids=str)
def test_scalar_ops_relu_threshold_backward_split_give_the_same_bits(split, dtype):
    rng = np.random.default_rng(2)
    a = _values(rng, (9, 4, 3), np.dtype(dtype))[:, ::2]  # strided
    g = _values(rng, (9, 2, 3), np.dtype(dtype))
    for call in (lambda: aclnn_py.adds(a, 0.3, 2, backend="numpy"),
                 lambda: aclnn_py.muls(a, -1.7, backend="numpy"),
                 lambda: aclnn_py.relu(a, backend="numpy"),
                 lambda: aclnn_py.threshold_backward(g, a, 0.25, backend="numpy"),
                 lambda: aclnn_py.threshold_backward(g, a[0, 0], 0.0, backend="numpy")):
        _same_bits(*split(call))


@pytest.mark.parametrize("source, to", [(np.float32, np.float16), (np.float16, np.float32), (np.float32, BF16),
                                        (BF16, np.float16), (np.float32, np.int8), (np.float64, np.float16),
                                        (np.int64, np.int16), (np.complex64, np.float32), (np.int32, np.bool_)],
                         ids=str)
def test_cast_and_inplace_copy_split_give_the_same_bits(split, source, to):
    rng = np.random.default_rng(3)
    x = _values(rng, (5, 8, 6), np.dtype(source) if np.dtype(source).kind != "c" else np.dtype(np.float32))
    x = x.astype(source).transpose(1, 0, 2)
    _same_bits(*split(lambda: aclnn_py.cast(x, to, backend="numpy")))

    def copy(src):
        target = np.zeros((8, 5, 6), to)
        aclnn_py.inplace_copy(target, src, backend="numpy")
        return target

    _same_bits(*split(lambda: copy(x)))
    _same_bits(*split(lambda: copy(x[:, :1])))  # broadcast


def test_inplace_ops_and_cat_split_give_the_same_bits(split):
    rng = np.random.default_rng(4)
    base = _values(rng, (6, 40), np.dtype(np.float32))
    other = _values(rng, (6, 40), np.dtype(np.float32))
    half = _values(rng, (6, 40), np.dtype(np.float16))

    def inplace(function, *args):
        def call():
            target = base.copy()
            function(target, *args, backend="numpy")
            return target
        return call

    from aclnn_py.ops.inplace_add import _PIECE
    for call in (inplace(aclnn_py.inplace_add, other, -0.01), inplace(aclnn_py.inplace_add, other[:1], 2),
                 inplace(aclnn_py.inplace_add, half, 1),
                 inplace(aclnn_py.inplace_zero), inplace(aclnn_py.inplace_fill_scalar, 2.5),
                 lambda: aclnn_py.cat([base, half[:, :7], other.T[:, :6].T], 1,
                                      backend="numpy"),
                 lambda: aclnn_py.cat([base, other[:2]], 0, backend="numpy")):
        _same_bits(*split(call))
    # the SGD step's pieces (FLOAT32 of one contiguous shape), split
    pieces = _PIECE
    big_a = _values(rng, (3, pieces + 5), np.dtype(np.float32))
    big_b = _values(rng, (3, pieces + 5), np.dtype(np.float32))
    _same_bits(*split(_sgd(big_a, big_b)))


def _sgd(a, b):
    def call():
        target = a.copy()
        aclnn_py.inplace_add(target, b, -0.5, backend="numpy")
        return target
    return call


@pytest.mark.parametrize("shape", [(2, 3, 10), (1, 40), (5,), (1, 1, 2, 1, 9)], ids=str)
def test_over_parts_cache_pieces_cover_every_element_once(shape):
    out = np.zeros(shape, np.int64)
    a = np.arange(np.prod(shape), dtype=np.int64).reshape(shape)
    sizes = []

    def work(o, x):
        sizes.append(o.size)
        o += x + 1

    over_parts(work, out, a, min_elements=1 << 40, piece_elements=3)  # one thread, pieces of <= 3 where it can
    assert np.array_equal(out, a + 1)
    assert len(sizes) > 1 and sum(sizes) == a.size


def test_a_busy_machine_keeps_the_parts_on_the_calling_thread(monkeypatch):
    monkeypatch.setattr(_workers, "_WORKERS", 2)
    monkeypatch.setattr(_workers, "_load", [-1.0, False])
    monkeypatch.setattr(_workers.os, "getloadavg", lambda: (3.0, 0.0, 0.0))
    assert _workers.machine_busy()
    threads = set()
    over_parts(lambda o: threads.add(threading.get_ident()), np.zeros((4, 3)), min_elements=1)
    assert threads == {threading.get_ident()}
    monkeypatch.setattr(_workers, "_load", [-1.0, True])
    monkeypatch.setattr(_workers.os, "getloadavg", lambda: (2.9, 0.0, 0.0))
    assert not _workers.machine_busy()
    assert not _workers.machine_busy()  # (read again only after _LOAD_PERIOD)

    def unreadable():
        raise OSError("no load average")

    monkeypatch.setattr(_workers, "_load", [-1.0, True])
    monkeypatch.setattr(_workers.os, "getloadavg", unreadable)
    assert not _workers.machine_busy()


@pytest.mark.parametrize("padding", [[2, 1, 3, 2], [-1, 2, 1, -2]], ids=str)
def test_plane_ops_split_give_the_same_bits(split, padding):
    """ReflectionPad2d, UpsampleNearest2d and MaxUnpool2d cut their planes' leading axes only
    (``over_parts(keep=...)``), a plane never cut."""
    rng = np.random.default_rng(5)
    x = _values(rng, (5, 3, 6, 7), np.dtype(np.float32)).transpose(1, 0, 2, 3)  # (3, 5, 6, 7), strided
    _same_bits(*split(lambda: aclnn_py.reflection_pad2d(x, padding, backend="numpy")))
    _same_bits(*split(lambda: aclnn_py.upsample_nearest2d(x, [13, 5], backend="numpy")))
    small = _values(rng, (1, 4, 2, 3), np.dtype(np.float16))
    index = rng.integers(0, 4 * 5, small.shape).astype(np.int32)  # repeats within a plane: the last wins
    _same_bits(*split(lambda: aclnn_py.max_unpool2d(small, index, [4, 5], backend="numpy")))


def test_over_parts_keeps_the_trailing_axes_whole(monkeypatch):
    monkeypatch.setattr(_workers, "machine_busy", lambda: False)
    out = np.zeros((2, 3, 4, 5))
    source = np.arange(2 * 3 * 2 * 2, dtype=np.float64).reshape(2, 3, 2, 2)
    shapes = []

    def work(o, s):
        shapes.append((o.shape[-2:], s.shape[-2:]))
        o[...] = s.sum(axis=(-2, -1))[..., None, None]

    over_parts(work, out, source, min_elements=1, piece_elements=1, keep=2)
    assert np.array_equal(out, np.broadcast_to(source.sum(axis=(-2, -1))[..., None, None], out.shape))
    assert len(shapes) > 1 and set(shapes) == {((4, 5), (2, 2))}
    calls = []
    over_parts(lambda o, s: calls.append(o.shape), np.zeros((4, 5)), source[0, 0], min_elements=1, keep=2)
    assert calls == [(4, 5)]  # nothing to cut


@pytest.mark.parametrize("dtype", [np.float32, np.float16, BF16], ids=str)
@pytest.mark.parametrize("other_shape", [(1000,), (64, 1), (64, 1000)], ids=str)
def test_a_plan_on_the_calling_thread_gives_computes_bits(dtype, other_shape):
    """``elementwise.compiled``'s plan for a result ``over_parts`` computes in one part on the
    calling thread (a one-pass kernel or a broadcast input below ``_ONE_THREAD``): the bits of
    ``compute``, whose ``over_parts`` sets the broadcast's ufunc buffer."""
    from aclnn_py._numpy import elementwise as ew
    rng = np.random.default_rng(3)
    dtype = np.dtype(dtype)
    a = _values(rng, (64, 1000), dtype)
    b = _values(rng, other_shape, dtype)
    assert ew._ONE_PART <= a.size < ew._ONE_THREAD
    alpha = np.asarray(-0.75, np.float32)
    for kernel, x, y, factor in ((ew.ADD, a, b, None), (ew.ADD, a, b, alpha), (ew.MUL, b, a, None),
                                 (ew.threshold_backward(np.float32(0.25)), b, a, None)):
        planned = ew.compiled(kernel, x, y, dtype, dtype, factor)(x, y)
        _same_bits(planned, ew.compute(kernel, x, y, dtype, dtype, factor))


def test_guided_pieces_cover_every_index_once_the_caller_taking_the_last(monkeypatch):
    """``in_pieces(guided=True)``: takes of a share of what is left, each index once; a worker
    never takes the last piece (the caller ends the call), and takes some while the caller is
    slow."""
    monkeypatch.setattr(_workers, "_WORKERS", max(2, _workers._WORKERS))
    caller, taken, lock = threading.get_ident(), [], threading.Lock()
    helped = threading.Event()

    def work(a, b):
        with lock:
            taken.append((a, b, threading.get_ident() == caller))
        if threading.get_ident() == caller:
            helped.wait(10)
        else:
            helped.set()

    in_pieces(64, work, threads=2, pieces=16, guided=True)
    assert sorted(i for a, b, _ in taken for i in range(a, b)) == list(range(64))
    assert helped.is_set() and any(not mine for *_, mine in taken)
    last = max(taken)
    assert last[1] == 64 and last[2]  # (the last piece: the caller's)
    assert max(b - a for a, b, _ in taken) <= 64 // 4  # (a quarter of what is left at most, over two threads)


def test_contiguous_same_shape_operands_split_from_flat_part_elements(monkeypatch):
    """Same-shape C-contiguous operands (and 0-d ones) need ``FLAT_PART_ELEMENTS`` per thread to
    split, a broadcast or strided one ``MIN_PARALLEL_ELEMENTS``; every element once either way."""
    monkeypatch.setattr(_workers, "_WORKERS", max(2, _workers._WORKERS))
    monkeypatch.setattr(_workers, "machine_busy", lambda: False)
    monkeypatch.setattr(_workers, "MIN_PARALLEL_ELEMENTS", 8)
    monkeypatch.setattr(_workers, "FLAT_PART_ELEMENTS", 128)
    out = np.zeros((4, 50), np.int64)
    a = np.arange(200, dtype=np.int64).reshape(out.shape)
    parts = []

    def work(o, x, z):
        parts.append(o.shape)
        o += x + z + 1

    over_parts(work, out, a, np.int64(5))  # 200 elements: under 2 x 128 per thread
    assert np.array_equal(out, a + 6) and len(parts) == 1
    parts.clear()
    out[...] = 0
    over_parts(work, out, a[:, :1], np.int64(5))  # a broadcast input: 8 per thread is enough
    assert np.array_equal(out, np.broadcast_to(a[:, :1] + 6, out.shape)) and len(parts) > 1
