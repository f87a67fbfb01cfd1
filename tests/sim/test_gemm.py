"""The simulator's matrix product (aclnn_py/sim/src/kernels/gemm.c), through its test entry
``aclsim_gemm_f32_test`` in libaclsim.so (the internal library: no CANN-named library exports
it), against NumPy in float64; and the same file under AddressSanitizer + UBSan."""

from __future__ import annotations

import ctypes
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from helpers import tolerance

from aclnn_py.sim import _build


@pytest.fixture(scope="module")
def gemm(sim_home):
    lib = ctypes.CDLL(str(Path(sim_home) / "lib64" / _build.SIM_LIBRARY))
    entry = lib.aclsim_gemm_f32_test
    i64, ptr = ctypes.c_int64, ctypes.c_void_p
    entry.argtypes = [i64, i64, i64, ptr, i64, i64, ptr, i64, i64, ptr, i64, ctypes.c_int, ctypes.c_int]
    entry.restype = ctypes.c_int

    def run(a: np.ndarray, b: np.ndarray, c: np.ndarray, accumulate: bool, threads: int) -> None:
        """c (+)= a @ b, each operand a float32 view with any element strides."""
        (m, k), (k2, n) = a.shape, b.shape
        assert k == k2 and c.shape == (m, n) and c.strides[1] == 4
        e = 4
        status = entry(m, n, k, a.ctypes.data, a.strides[0] // e, a.strides[1] // e, b.ctypes.data,
                       b.strides[0] // e, b.strides[1] // e, c.ctypes.data, c.strides[0] // e, int(accumulate),
                       threads)
        assert status == 0

    return run


def _operand(rng, rows: int, cols: int, transposed: bool) -> np.ndarray:
    """A rows x cols float32 matrix, stored transposed (column-major) when asked."""
    if transposed:
        return rng.standard_normal((cols, rows), dtype=np.float32).T
    return rng.standard_normal((rows, cols), dtype=np.float32)


SHAPES = [(1, 1, 1), (1, 53, 7), (53, 1, 7), (5, 7, 1), (1, 1, 600), (7, 9, 257), (8, 32, 256), (9, 33, 513),
          (6, 16, 3), (145, 70, 40), (150, 2100, 70), (31, 4100, 9), (3, 5, 5000)]


@pytest.mark.parametrize("m, n, k", SHAPES, ids=[f"{m}x{n}x{k}" for m, n, k in SHAPES])
@pytest.mark.parametrize("ta, tb", [(False, False), (True, False), (False, True), (True, True)],
                         ids=["nn", "tn", "nt", "tt"])
def test_gemm_matches_float64(gemm, m, n, k, ta, tb):
    rng = np.random.default_rng(m * 1000 + n * 10 + k)
    a, b = _operand(rng, m, k, ta), _operand(rng, k, n, tb)
    exact = a.astype(np.float64) @ b.astype(np.float64)
    rtol, atol = tolerance(np.float32)
    # C is a strided view (row stride n + 3): the columns beyond n must stay untouched.
    store = np.full((m, n + 3), np.nan, np.float32)
    c = store[:, :n]
    gemm(a, b, c, False, 1)
    np.testing.assert_allclose(c, exact, rtol=rtol, atol=atol)
    assert np.isnan(store[:, n:]).all()
    start = rng.standard_normal((m, n), dtype=np.float32)
    c[...] = start
    gemm(a, b, c, True, 1)
    np.testing.assert_allclose(c, exact + start, rtol=rtol, atol=atol)


@pytest.mark.parametrize("threads", [2, 3, 7])
def test_gemm_result_does_not_depend_on_threads(gemm, threads):
    """Threads take disjoint column ranges; each element is summed in the same order."""
    rng = np.random.default_rng(threads)
    a, b = _operand(rng, 77, 1100, False), _operand(rng, 1100, 333, True)
    one, many = np.empty((77, 333), np.float32), np.empty((77, 333), np.float32)
    gemm(a, b, one, False, 1)
    gemm(a, b, many, False, threads)
    assert np.array_equal(one, many)
    rtol, atol = tolerance(np.float32)
    np.testing.assert_allclose(many, a.astype(np.float64) @ b.astype(np.float64), rtol=rtol * 10, atol=atol * 10)


@pytest.mark.parametrize("n, k, accumulate", [(1000, 4096, False), (37, 700, True), (2049, 257, False), (5, 1, True)])
def test_gemm_one_row_is_the_packed_products_row(gemm, n, k, accumulate):
    """m == 1 with B's rows contiguous takes the unpacked row product: the same bits as the
    packed product gives that row (each element summed the same way, slice by slice)."""
    rng = np.random.default_rng(n + k)
    a = rng.standard_normal((1, k), dtype=np.float32)
    a2 = np.concatenate([a, a])  # two rows: the packed path
    b = rng.standard_normal((k, n), dtype=np.float32)
    start = rng.standard_normal((1, n), dtype=np.float32)
    one, two = start.copy(), np.concatenate([start, start])
    gemm(a, b, one, accumulate, 1)
    gemm(a2, b, two, accumulate, 1)
    assert np.array_equal(one[0].view(np.uint32), two[0].view(np.uint32))


def test_gemm_k_zero(gemm):
    a, b = np.zeros((3, 0), np.float32), np.zeros((0, 4), np.float32)
    c = np.full((3, 4), np.nan, np.float32)
    gemm(a, b, c, False, 2)
    assert (c == 0).all()
    c[...] = 5
    gemm(a, b, c, True, 2)
    assert (c == 5).all()


def test_gemm_ieee_terms(gemm):
    """inf and NaN in the operands give what the sum of their terms gives: the zero padding of
    a partial tile never meets them in C."""
    a = np.ones((3, 5), np.float32)
    b = np.ones((5, 7), np.float32)
    a[1, 2] = np.inf
    b[4, 6] = np.nan
    c = np.empty((3, 7), np.float32)
    gemm(a, b, c, False, 1)
    with np.errstate(invalid="ignore"):
        expected = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_array_equal(c, expected.astype(np.float32))


DRIVER = r"""
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include "kernels/gemm.h"

/* Odd shapes and all four transposes on 1 and 3 threads, against a double loop. */
int main(void)
{
    /* the last one is large enough for several threads (GEMM_MIN_PARALLEL) */
    static const int shapes[][3] = {{1, 1, 1}, {1, 40, 3}, {40, 1, 3}, {9, 33, 257}, {17, 70, 300}, {150, 130, 20},
                                    {64, 700, 400}};
    int failures = 0;
    unsigned seed = 1;
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; ++s) {
        int m = shapes[s][0], n = shapes[s][1], k = shapes[s][2];
        float *a = malloc(sizeof(float) * (size_t)(m * k)), *b = malloc(sizeof(float) * (size_t)(k * n));
        float *c = malloc(sizeof(float) * (size_t)(m * n));
        for (int i = 0; i < m * k; ++i) { seed = seed * 1103515245u + 12345u; a[i] = (float)(seed >> 16 & 255) / 64 - 2; }
        for (int i = 0; i < k * n; ++i) { seed = seed * 1103515245u + 12345u; b[i] = (float)(seed >> 16 & 255) / 64 - 2; }
        for (int t = 0; t < 4; ++t) {
            int ta = t & 1, tb = t >> 1;
            long a_rs = ta ? 1 : k, a_cs = ta ? m : 1, b_rs = tb ? 1 : n, b_cs = tb ? k : 1;
            for (int threads = 1; threads <= 3; threads += 2) {
                if (aclsim_gemm_f32_test(m, n, k, a, a_rs, a_cs, b, b_rs, b_cs, c, n, 0, threads) != 0) {
                    return 2;
                }
                for (int i = 0; i < m; ++i) {
                    for (int j = 0; j < n; ++j) {
                        double want = 0;
                        for (int p = 0; p < k; ++p) {
                            want += (double)a[i * a_rs + p * a_cs] * b[p * b_rs + j * b_cs];
                        }
                        if (fabs(c[i * n + j] - want) > 1e-4 * (1 + fabs(want))) {
                            ++failures;
                        }
                    }
                }
            }
        }
        free(a);
        free(b);
        free(c);
    }
    printf("gemm failures: %d\n", failures);
    return failures != 0;
}
"""


def test_gemm_under_sanitizers(tmp_path, sim_home):
    """kernels/gemm.c (every micro-kernel clone this CPU runs) under ASan + UBSan: no access
    outside the operands or the workspace, no undefined behaviour, no leak."""
    if shutil.which("gcc") is None:
        pytest.skip("gcc not installed")
    probe = subprocess.run(["gcc", "-fsanitize=address", "-x", "c", "-", "-o", str(tmp_path / "probe")],
                           input="int main(void){return 0;}", capture_output=True, text=True)
    if probe.returncode != 0:
        pytest.skip("this gcc cannot link AddressSanitizer programs")
    (tmp_path / "driver.c").write_text(DRIVER)
    exe = tmp_path / "gemm_asan"
    kernels = [str(p) for p in sorted((_build.SRC_DIR / "kernels").glob("*.c"))]
    subprocess.run(["gcc", "-std=c11", "-O1", "-g", "-fsanitize=address,undefined", "-fno-omit-frame-pointer",
                    "-fno-sanitize-recover=undefined", "-pthread", f"-I{Path(sim_home) / 'include'}",
                    f"-I{_build.SRC_DIR}", str(tmp_path / "driver.c"), *kernels, "-lm", "-o", str(exe)], check=True)
    proc = subprocess.run([str(exe)], capture_output=True, text=True, timeout=300,
                          env={"ASAN_OPTIONS": "detect_leaks=1", "UBSAN_OPTIONS": "halt_on_error=1:print_stacktrace=1"})
    assert proc.returncode == 0, (proc.stdout[-3000:], proc.stderr[-6000:])
    assert "gemm failures: 0" in proc.stdout
