"""_numpy/half.py: FLOAT to FLOAT16 in integer passes gives NumPy's cast's bits for every input
(the oracle is NumPy's own element-by-element cast, bit for bit, NaN payloads included)."""

import numpy as np
import pytest

import aclnn_py
from aclnn_py._numpy import half
from aclnn_py._numpy.half import float_to_half


def _numpy_bits(x: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        return x.astype(np.float16).view(np.uint16)


def _bits(x: np.ndarray) -> np.ndarray:
    out = np.empty(x.shape, np.float16)
    float_to_half(out, x)
    return out.view(np.uint16)


def _check(u: np.ndarray) -> None:
    x = np.ascontiguousarray(u, np.uint32).view(np.float32)
    got, expected = _bits(x), _numpy_bits(x)
    wrong = np.flatnonzero(got != expected)
    assert wrong.size == 0, [(hex(int(x.view(np.uint32)[i])), hex(int(got[i])), hex(int(expected[i])))
                             for i in wrong[:8]]


def test_special_values() -> None:
    specials = np.array([
        0x00000000, 0x80000000,                          # zeros
        0x00000001, 0x007FFFFF, 0x80000001,              # FLOAT subnormals
        0x7F800000, 0xFF800000,                          # infinities
        0x7FC00000, 0xFFC00000, 0x7F800001, 0x7FBFFFFF,  # NaNs: quiet, signalling,
        0x7F801FFF, 0x7F802000, 0xFFFFFFFF, 0x7FFFE000,  # payloads lost or kept in FLOAT16
        0x477FE000, 0x477FEFFF, 0x477FF000, 0x477FF001,  # 65504, up to the first to round to inf
        0x47800000, 0x47800001, 0x47801000, 0x7F7FFFFF,  # 65536 and up: overflow
        0x38800000, 0x387FFFFF, 0x387FF000, 0x387FEFFF,  # 2**-14 and just below
        0x387FF001, 0x38000000, 0x33000000, 0x33000001,  # subnormal FLOAT16 ties and halves
        0x337FFFFF, 0x32FFFFFF, 0x3F800000, 0x3F801000,  # 1.0 and its tie (to even: 1.0)
        0x3F803000, 0x3F802FFF, 0x3F801001,              # a tie to odd, and either side
    ], np.uint32)
    _check(np.concatenate([specials, specials | 0x80000000]))


def test_every_float16_boundary_and_neighbours() -> None:
    """Each FLOAT16 value and each midpoint between two, as FLOAT, and the FLOATs next to
    them: where rounding (ties to even) and the ranges' edges are decided."""
    halves = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(np.float16)
    finite = halves[np.isfinite(halves)].astype(np.float32)
    ordered = np.unique(finite)
    midpoints = ((ordered[:-1].astype(np.float64) + ordered[1:]) / 2).astype(np.float32)
    points = np.concatenate([finite, midpoints]).view(np.uint32).astype(np.int64)
    near = np.concatenate([points + d for d in (-2, -1, 0, 1, 2)]) % (1 << 32)  # (-0 - 1: a NaN)
    _check(near)


def test_random_sweep() -> None:
    rng = np.random.default_rng(1234)
    _check(rng.integers(0, 1 << 32, size=3 * half.BLOCK + 17, dtype=np.uint64))
    for scale in (1e-6, 1e-3, 1.0, 1e3, 6e4):  # (the ranges real data falls in)
        x = (rng.standard_normal(half.BLOCK + 5) * scale).astype(np.float32)
        _check(x.view(np.uint32))


def test_shapes_and_blocks() -> None:
    rng = np.random.default_rng(7)
    for shape in ((), (0,), (1,), (3, 0, 2), (2, half.BLOCK + 3), (5, 7, 9)):
        x = rng.standard_normal(shape).astype(np.float32)
        out = np.empty(shape, np.float16)
        float_to_half(out, x)
        np.testing.assert_array_equal(out.view(np.uint16), _numpy_bits(x))


@pytest.mark.parametrize("backend", ["numpy"])
def test_cast_uses_it_and_views_fall_back(backend: str) -> None:
    """Cast of FLOAT to FLOAT16: contiguous (the passes), a transposed and a broadcast view
    (NumPy's cast), NaN/inf/overflow among them; all NumPy's bits."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal((4, 70000)).astype(np.float32)
    x[0, :6] = [np.nan, np.inf, -np.inf, 1e5, -1e-8, 6e-5]
    for view in (x, x.T, x[:, ::3]):
        got = aclnn_py.cast(view, np.float16, backend=backend)
        np.testing.assert_array_equal(np.asarray(got).view(np.uint16), _numpy_bits(view))
    inplace = np.empty((4, 70000), np.float16)
    aclnn_py.inplace_copy(inplace, x[0], backend=backend)
    np.testing.assert_array_equal(inplace.view(np.uint16), np.broadcast_to(_numpy_bits(x[0]), x.shape))


def test_convert_split_two_ways_gives_numpys_bits(monkeypatch: pytest.MonkeyPatch) -> None:
    """``half.convert`` on two threads: the caller's blocks by ``float_to_half`` from the start,
    a worker's by NumPy's cast from the end (each way taking some while the caller is slow);
    together every element once, NumPy's bits (specials in both parts)."""
    import threading

    from aclnn_py._numpy import workers
    monkeypatch.setattr(workers, "_WORKERS", max(2, workers._WORKERS))
    monkeypatch.setattr(workers, "machine_busy", lambda: False)
    monkeypatch.setattr(workers, "MIN_PARALLEL_ELEMENTS", 1)
    monkeypatch.setattr(half, "BLOCK", 64)
    caller, ways, helped = threading.get_ident(), [], threading.Event()
    ours, numpys = half.float_to_half, half.numpy_cast

    def slow_ours(out: np.ndarray, x: np.ndarray) -> None:
        if not ways:
            helped.wait(10)  # (the caller's first take is slow: a worker takes blocks meanwhile)
        ways.append(("ours", threading.get_ident() == caller, x.size))
        ours(out, x)

    def seen_numpys(out: np.ndarray, x: np.ndarray) -> None:
        ways.append(("numpy", threading.get_ident() == caller, x.size))
        helped.set()
        numpys(out, x)

    monkeypatch.setattr(half, "float_to_half", slow_ours)
    monkeypatch.setattr(half, "numpy_cast", seen_numpys)
    rng = np.random.default_rng(11)
    x = (rng.standard_normal((7, 333)) * 3e4).astype(np.float32)
    edges = np.array([np.nan, np.inf, -np.inf, 1e5, -1e-8, 6e-5, -0.0, 3e-6, 7e4, 2.0**-25, 65520.0,
                      -65519.0, 1 + 2.0**-11, 1 + 3 * 2.0**-11, 1.5 * 2.0**-24, 0.5 * 2.0**-24, 1e-45,
                      -1e-40], np.float32)
    x.reshape(-1)[::97][:edges.size] = edges  # (spread over the blocks: both ways get some)
    out = np.empty(x.shape, np.float16)
    half.convert(out, x)
    np.testing.assert_array_equal(out.view(np.uint16), _numpy_bits(x))
    assert {(way, mine) for way, mine, _ in ways} == {("ours", True), ("numpy", False)}
    assert sum(n for *_, n in ways) == x.size
