"""BLAS held to one thread while the conv engines' worker threads call it (aclnn_py._numpy.blas):
set inside, put back after (on errors too), nested across threads, and a no-op without OpenBLAS."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import aclnn_py
from aclnn_py._numpy import blas as _blas
from aclnn_py._numpy import conv
from aclnn_py._numpy.conv.winograd import WinogradEngine
from helpers import assert_close, random_array
from reference.convolution_backward import convolution_backward as reference


def _numpy_blas_name() -> str:
    return str(np.show_config(mode="dicts")["Build Dependencies"]["blas"]["name"]).lower()


@pytest.fixture
def two_threads():
    """The BLAS library on 2 threads for the test, its own count put back after."""
    control = _blas._control
    assert control is not None
    before = control.get()
    control.set(2)
    yield control
    control.set(before)


def test_numpys_openblas_is_found():
    # NumPy's wheels ship OpenBLAS (scipy-openblas): its thread control must be found.  A NumPy
    # built on another BLAS has none, and single_threaded() must then leave everything alone.
    if "openblas" in _numpy_blas_name():
        assert _blas._control is not None
        assert _blas.threads() >= 1
    else:
        assert _blas.threads() is None
        with _blas.single_threaded():
            assert _blas.threads() is None


def test_one_thread_inside_and_the_count_back_after(two_threads):
    with _blas.single_threaded():
        assert _blas.threads() == 1
        with _blas.single_threaded():
            assert _blas.threads() == 1
        assert _blas.threads() == 1
    assert _blas.threads() == 2


def test_count_back_after_an_error(two_threads):
    with pytest.raises(RuntimeError, match="inside"):
        with _blas.single_threaded():
            raise RuntimeError("inside")
    assert _blas.threads() == 2
    assert _blas._depth == 0


def test_overlapping_blocks_of_two_threads(two_threads):
    # Thread A enters, B enters, A leaves: still one thread until B leaves too.
    a_in, b_in, a_out = threading.Event(), threading.Event(), threading.Event()
    seen: dict[str, int | None] = {}

    def a() -> None:
        with _blas.single_threaded():
            a_in.set()
            b_in.wait(5)
        a_out.set()

    def b() -> None:
        a_in.wait(5)
        with _blas.single_threaded():
            b_in.set()
            a_out.wait(5)
            seen["after a left"] = _blas.threads()

    threads = [threading.Thread(target=a), threading.Thread(target=b)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert seen == {"after a left": 1}
    assert _blas.threads() == 2


def test_a_count_of_one_is_left_alone(two_threads):
    two_threads.set(1)
    with _blas.single_threaded():
        assert _blas.threads() == 1
    assert _blas.threads() == 1


def test_no_control_is_a_no_op(monkeypatch):
    monkeypatch.setattr(_blas, "_control", None)
    with _blas.single_threaded():
        assert _blas.threads() is None
    assert _blas._depth == 0


def test_find_skips_what_does_not_load_or_lacks_the_symbols(tmp_path):
    not_a_library = tmp_path / "libopenblas_fake.so"
    not_a_library.write_bytes(b"not an ELF file")
    assert _blas.find([str(not_a_library), str(tmp_path / "missing.so")]) is None
    # A real shared object without OpenBLAS's symbols (the C library, through ctypes' own lookup).
    import ctypes.util
    libc = ctypes.util.find_library("c")
    assert libc is not None
    assert _blas.find([libc]) is None


def test_candidates_name_the_loaded_openblas():
    if "openblas" not in _numpy_blas_name():
        pytest.fail("not an OpenBLAS NumPy: test_numpys_openblas_is_found covers this build")  # pragma: no cover
    assert any("openblas" in path.lower() for path in _blas._candidates())


def test_winograd_engine_runs_on_one_blas_thread(two_threads, monkeypatch):
    # The resnet-style 3x3 layer goes to the winograd engine, whose workers call BLAS: inside
    # it BLAS has one thread, and two again after; the result still matches the reference.
    seen = []
    original = WinogradEngine.gradients

    def spy(self, *args):
        seen.append(_blas.threads())
        return original(self, *args)

    monkeypatch.setattr(WinogradEngine, "gradients", spy)
    rng = np.random.default_rng(3)
    dy = random_array(rng, (2, 64, 6, 7), np.float32)
    x = random_array(rng, (2, 64, 6, 7), np.float32)
    w = random_array(rng, (64, 64, 3, 3), np.float32)
    args = (dy, x, w, [64], [1, 1], [1, 1], [1, 1], False, [0, 0], 1, [True, True, False])
    got = aclnn_py.convolution_backward(*args, backend="numpy")
    assert seen == [1]
    assert _blas.threads() == 2
    want = reference(dy, x, w, [1, 1], [1, 1], [1, 1], False, 1)
    for g, e in zip(got[:2], want[:2]):
        assert_close(g, e, np.float32, scale=4.0)


def test_flat_engine_asks_for_one_thread_for_depthwise_blocks_only():
    # Its depthwise blocks run on the worker threads; any other convolution's products are
    # BLAS calls of the calling thread, left on all of BLAS's threads.
    def geometry(groups: int) -> tuple:
        # batch, x_channels, y_channels, x_size, y_size, kernel, stride, dilation, pad_lo, groups, transposed
        return 2, 4, 4, (8, 8), (8, 8), (3, 3), (1, 1), (1, 1), (1, 1), groups, False

    depthwise = conv.flat.FlatEngine(*geometry(4), space="y")
    dense = conv.flat.FlatEngine(*geometry(1), space="y")
    assert (depthwise.blas_in_workers, dense.blas_in_workers) == (True, False)
    assert conv.winograd.WinogradEngine.blas_in_workers and conv.depthwise.DepthwiseEngine.blas_in_workers


# -- the thread rule of a product on the calling thread (matmul.product, workers.threads_for) --

def test_threads_for_is_one_on_a_busy_machine_and_one_per_worker_on_a_quiet_one(monkeypatch):
    from aclnn_py._numpy import workers
    monkeypatch.setattr(workers, "_WORKERS", 2)
    monkeypatch.setattr(workers, "machine_busy", lambda: False)
    assert [workers.threads_for(w, 10) for w in (0, 19, 20, 39, 1000)] == [1, 1, 2, 2, 2]
    monkeypatch.setattr(workers, "machine_busy", lambda: True)
    assert workers.threads_for(1000, 10) == 1


@pytest.mark.parametrize("shapes", [((64, 300), (300, 90)),            # along y's columns
                                    ((3, 40, 50), (3, 50, 30)),         # along the batch
                                    ((1, 40, 50), (2, 50, 30)),         # broadcast batch: columns
                                    ((90, 300), (300,)),                # matrix times vector: rows
                                    ((300,), (2, 300, 70)),             # vector times a stack
                                    ((5, 300), (300, 1)),               # one column: rows
                                    ((300,), (300, 70)),                # vector times matrix: halves of K
                                    ((300,), (2, 300, 1)),              # one column of a stack: whole
                                    ((2, 40, 50), (50, 30)),            # a stack times a matrix: one
                                    ((2, 45, 300), (300,))], ids=str)   # matrix (_folded), columns / rows
def test_a_product_split_over_the_workers_matches_one_call(monkeypatch, shapes):
    # On a quiet machine a product big enough is cut into parts (one per thread, the caller and
    # the workers), each on one BLAS thread: the result is the product's, computed in parts.
    from aclnn_py._numpy import matmul, workers
    monkeypatch.setattr(workers, "_WORKERS", 2)
    monkeypatch.setattr(workers, "machine_busy", lambda: False)
    monkeypatch.setattr(matmul, "PART_WORK", 64)
    monkeypatch.setattr(matmul, "VECTOR_PART_WORK", 16)
    rng = np.random.default_rng(5)
    x, y = (random_array(rng, s, np.float32) for s in shapes)
    calls, seen = [], []
    original = workers.in_pieces

    def spy(count, work, *, threads, pieces):
        calls.append((count, threads, pieces))
        return original(count, lambda a, b: (seen.append(_blas.threads()), work(a, b)), threads=threads, pieces=pieces)

    monkeypatch.setattr(workers, "in_pieces", spy)
    got = matmul.product(x, y, matmul.FLOAT32, matmul.FLOAT32)
    want = np.matmul(x.astype(np.float64), y.astype(np.float64))
    assert got.shape == want.shape and got.dtype == np.float32
    if shapes == ((300,), (2, 300, 1)):
        assert calls == []              # (one element per matrix: nothing to cut)
    else:
        assert len(calls) == 1 and calls[0][1] == 2
    assert set(seen) <= {1, None}       # every part on one BLAS thread
    assert_close(got, want, np.float32)


@pytest.mark.parametrize("shapes", [((2, 3, 5), (5, 4)), ((2, 1, 3, 5), (5,)), ((2, 0, 5), (5, 4)),
                                    ((0, 3, 5), (5, 4)), ((2, 3, 0), (0, 4)), ((2, 3, 0), (0,))], ids=str)
def test_a_contiguous_stack_times_a_matrix_is_one_product_of_its_rows(shapes):
    # _folded: a C-contiguous stack's rows are one matrix (a view of it), the product's result
    # a view of the stack's shape; a stack that is not C-contiguous is left as it is.
    from aclnn_py._numpy import matmul
    rng = np.random.default_rng(8)
    x, y = (random_array(rng, s, np.float32) for s in shapes)
    rows, same_y, shape = matmul._folded(x, y)
    assert rows.ndim == 2 and same_y is y
    assert x.size == 0 or np.shares_memory(rows, x)
    assert shape == np.matmul(x, y).shape
    got = matmul.product(x, y, matmul.FLOAT32, matmul.FLOAT32)
    assert got.shape == shape and got.dtype == np.float32
    assert_close(got, np.matmul(x.astype(np.float64), y.astype(np.float64)), np.float32)
    strided = np.repeat(x, 2, axis=-1)[..., ::2]                  # the same values, not C-contiguous
    assert matmul._folded(strided, y)[2] is None or x.size == 0   # (NumPy: an empty array is contiguous)
    assert_close(matmul.product(strided, y, matmul.FLOAT32, matmul.FLOAT32), got, np.float32)


def test_corename_names_the_kernels_or_is_none(monkeypatch):
    if _blas._control is not None and _blas._control.name is not None:
        assert _blas.corename() == _blas.kernels().lower() != ""
    monkeypatch.setattr(_blas, "_control", None)
    assert _blas.corename() is None and _blas.kernels() is None


@pytest.mark.parametrize("busy", [True, False], ids=["one thread", "split"])
@pytest.mark.parametrize("shapes", [((4, 64), (30, 64)), ((1, 40), (7, 40)), ((0, 16), (5, 16)), ((3, 24), (1, 24))],
                         ids=str)
def test_a_transposed_weight_first_gives_the_product(monkeypatch, busy, shapes):
    # _weight_first: x @ w.T computed as (w @ x.T).T (on SkylakeX kernels only; forced here on
    # any): the product, split along N or not.
    from aclnn_py._numpy import matmul, workers
    monkeypatch.setattr(workers, "_WORKERS", 2)
    monkeypatch.setattr(workers, "machine_busy", lambda: busy)
    monkeypatch.setattr(matmul, "PART_WORK", 16)
    monkeypatch.setattr(matmul, "WEIGHT_FIRST", True)
    rng = np.random.default_rng(13)
    x, w = random_array(rng, shapes[0], np.float32), random_array(rng, shapes[1], np.float32)
    assert matmul._weight_first_pays(x, w.T) == (w.shape[0] > 1)
    calls, original = [], matmul._weight_first
    monkeypatch.setattr(matmul, "_weight_first",
                        lambda a, b, threads: (calls.append(threads), original(a, b, threads))[1])
    got = matmul.product(x, w.T, matmul.FLOAT32, matmul.FLOAT32)
    assert got.shape == (x.shape[0], w.shape[0]) and got.flags.c_contiguous
    assert_close(got, x.astype(np.float64) @ w.T.astype(np.float64), np.float32)
    split = not busy and x.size * w.shape[0] >= 2 * 16
    assert calls == ([] if w.shape[0] == 1 else [2 if split else 1])


def test_a_transposed_weight_goes_first_only_when_it_pays():
    from aclnn_py._numpy import matmul
    x, w = np.ones((8, 64), np.float32), np.ones((30, 64), np.float32)
    assert matmul._weight_first_pays(x, w.T)                              # M <= K / 8, w.T column-major
    assert not matmul._weight_first_pays(np.ones((9, 64), np.float32), w.T)   # M > K / 8
    assert not matmul._weight_first_pays(x, np.ascontiguousarray(w.T))        # a row-major operand
    assert not matmul._weight_first_pays(x, w[::2].T)                         # not contiguous
    assert not matmul._weight_first_pays(np.ones(64, np.float32), w.T)        # a vector
    assert matmul.WEIGHT_FIRST == (_blas.corename() == "skylakex")


def test_a_vector_times_a_matrix_has_the_same_bits_busy_or_quiet(monkeypatch):
    # Two halves along K added in one order, whichever threads compute them.
    from aclnn_py._numpy import matmul, workers
    monkeypatch.setattr(workers, "_WORKERS", 2)
    monkeypatch.setattr(matmul, "PART_WORK", 64)
    monkeypatch.setattr(matmul, "VECTOR_PART_WORK", 16)
    rng = np.random.default_rng(7)
    x, y = random_array(rng, (301,), np.float32), random_array(rng, (301, 40), np.float32)
    results = []
    for busy in (False, True):
        monkeypatch.setattr(workers, "machine_busy", lambda: busy)
        results.append(matmul.product(x, y, matmul.FLOAT32, matmul.FLOAT32))
    assert np.array_equal(results[0], results[1])
    assert_close(results[0], x.astype(np.float64) @ y, np.float32)


def test_a_busy_machine_keeps_a_product_on_the_calling_thread(monkeypatch):
    from aclnn_py._numpy import matmul, workers
    monkeypatch.setattr(workers, "_WORKERS", 2)
    monkeypatch.setattr(workers, "machine_busy", lambda: True)
    monkeypatch.setattr(matmul, "PART_WORK", 64)
    monkeypatch.setattr(matmul, "VECTOR_PART_WORK", 16)
    monkeypatch.setattr(workers, "in_pieces", lambda *a, **k: pytest.fail("split on a busy machine"))
    rng = np.random.default_rng(6)
    x, y = random_array(rng, (64, 300), np.float32), random_array(rng, (300, 90), np.float32)
    assert_close(matmul.product(x, y, matmul.FLOAT32, matmul.FLOAT32), x.astype(np.float64) @ y, np.float32)


def test_on_caller_is_one_thread_on_a_busy_machine_and_blas_own_on_a_quiet_one(two_threads, monkeypatch):
    from aclnn_py._numpy import workers
    monkeypatch.setattr(workers, "machine_busy", lambda: True)
    with _blas.on_caller():
        assert _blas.threads() == 1
    assert _blas.threads() == 2
    monkeypatch.setattr(workers, "machine_busy", lambda: False)
    with _blas.on_caller():
        assert _blas.threads() == 2


@pytest.mark.parametrize("busy", [False, True])
def test_conv_products_of_the_calling_thread_follow_the_machine_rule(two_threads, monkeypatch, busy):
    # A 1x1 convolution's forward product (conv._Pointwise) and the flat engine's dense products
    # run on the calling thread: on BLAS's threads when the machine is quiet, one when busy.
    from aclnn_py._numpy import workers
    monkeypatch.setattr(workers, "machine_busy", lambda: busy)
    seen = []
    original = np.matmul

    class Spy:
        def __getattr__(self, name):
            return getattr(np, name)

        @staticmethod
        def matmul(*args, **kwargs):
            seen.append(_blas.threads())
            return original(*args, **kwargs)

    monkeypatch.setattr(conv, "np", Spy())
    rng = np.random.default_rng(8)
    x = random_array(rng, (2, 16, 6, 6), np.float32)
    w = random_array(rng, (8, 16, 1, 1), np.float32)
    got = aclnn_py.convolution(x, w, None, [1, 1], [0, 0], [1, 1], False, [0, 0], 1, 0, backend="numpy")
    assert seen and set(seen) == {1 if busy else 2}
    assert _blas.threads() == 2
    assert_close(got, np.einsum("nchw,oc->nohw", x.astype(np.float64), w[:, :, 0, 0]), np.float32)
