"""The simulator's inline float conversions and row exp (aclnn_py/sim/src/ops/half_bits.h,
row_exp.h), compiled into small C programs with the simulator's flags:

* half_bits.h against the runtime's exported aclFloatToFloat16 / aclFloat16ToFloat (the
  reference the operators used before) and the bit-exact bfloat16 rule: every float16 and
  bfloat16 value, and float32 bit patterns in a stride that visits every exponent and sign
  (the whole 2^32 was run once by hand: 0 mismatches);
* row_exp.h against exp in double: at most 1 ulp (the whole float range run once by hand:
  worst 0.990 ulp), with Inf, NaN, -Inf and the subnormal results.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from aclnn_py.sim import _build

OPS = _build.SRC_DIR / "ops"

# Both programs' float32 inputs: a block of bit patterns b0, b0 + step, ... below 2^32.
BLOCK = r"""
#include <stdint.h>
#include <string.h>
static int fill_block(float *src, int size, uint64_t b0, uint64_t step)
{
    int n = 0;
    for (; n < size && b0 + (uint64_t)n * step < (1ull << 32); ++n) {
        uint32_t b = (uint32_t)(b0 + (uint64_t)n * step);
        memcpy(&src[n], &b, 4);
    }
    return n;
}
"""

HALF_PROGRAM = BLOCK + r"""
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "half_bits.h"
extern float aclFloat16ToFloat(uint16_t);
extern uint16_t aclFloatToFloat16(float);
static uint16_t ref_bf16(uint32_t x)
{
    if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((x >> 16) | 0x40u);
    x += 0x7fffu + ((x >> 16) & 1u);
    return (uint16_t)(x >> 16);
}
int main(int argc, char **argv)
{
    uint64_t step = strtoull(argv[1], 0, 0);
    long bad = 0;
    for (uint32_t h = 0; h < 65536; ++h) {
        float a = aclFloat16ToFloat((uint16_t)h), b = aclsim_hb_half_to_float((uint16_t)h);
        bad += memcmp(&a, &b, 4) != 0;
        bad += aclsim_hb_bits(aclsim_hb_bf16_to_float((uint16_t)h)) != (uint32_t)h << 16;
    }
    enum { N = 4096 };
    static float src[N];
    static uint16_t half[N], bf[N];
    uint64_t total = 0;
    for (uint64_t b0 = 0; b0 < (1ull << 32); b0 += (uint64_t)N * step) {
        int n = fill_block(src, N, b0, step);
        for (int i = 0; i < n; ++i) half[i] = aclsim_hb_float_to_half(src[i]); /* the vectorised loops */
        for (int i = 0; i < n; ++i) bf[i] = aclsim_hb_float_to_bf16(src[i]);
        for (int i = 0; i < n; ++i, ++total) {
            bad += aclFloatToFloat16(src[i]) != half[i];
            bad += ref_bf16(aclsim_hb_bits(src[i])) != bf[i];
        }
    }
    printf("%llu %ld\n", (unsigned long long)total, bad);
    return 0;
}
"""

EXP_PROGRAM = BLOCK + r"""
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include "row_exp.h"
static double ulps(float got, double exact)
{
    if (isnan(exact)) return isnan(got) ? 0.0 : 1e9;
    float e = (float)exact;
    if (isinf(e)) return isinf(got) && (got > 0) == (e > 0) ? 0.0 : 1e9;
    if (got == e) return 0.0;
    double u = fabs(exact) < 1.1754943508222875e-38 ? 1.401298464324817e-45 : nextafterf(e, INFINITY) - e;
    return fabs(got - exact) / u;
}
int main(int argc, char **argv)
{
    uint64_t step = strtoull(argv[1], 0, 0);
    enum { N = 4096 };
    static float src[N], dst[N];
    double worst = 0.0;
    uint64_t total = 0;
    for (uint64_t b0 = 0; b0 < (1ull << 32); b0 += (uint64_t)N * step) {
        int n = fill_block(src, N, b0, step);
        aclsim_exp_row(dst, src, n);
        for (int i = 0; i < n; ++i, ++total) {
            double e = ulps(dst[i], exp((double)src[i]));
            worst = e > worst ? e : worst;
        }
    }
    /* the special values */
    float special[] = {INFINITY, -INFINITY, NAN, -NAN, 0.0f, -0.0f, 88.72283935546875f, 88.7228470f,
                       -87.33654f, -103.97208f, -104.0f, -150.0f, 1e-30f, -1e-30f};
    int n = (int)(sizeof special / sizeof special[0]);
    aclsim_exp_row(dst, special, n);
    for (int i = 0; i < n; ++i) {
        double e = ulps(dst[i], exp((double)special[i]));
        worst = e > worst ? e : worst;
    }
    printf("%llu %.6f\n", (unsigned long long)total, worst);
    return 0;
}
"""


def _run(tmp_path: Path, source: str, name: str, step: int, libs: list[str]) -> list[str]:
    cc = _build.find_compiler()
    (tmp_path / f"{name}.c").write_text(source)
    exe = tmp_path / name
    subprocess.run(cc + list(_build.CFLAGS) + ["-I", str(OPS), str(tmp_path / f"{name}.c"), "-o", str(exe)] + libs,
                   check=True)
    return subprocess.run([str(exe), str(step)], check=True, capture_output=True, text=True).stdout.split()


def test_half_and_bf16_conversions_match_the_runtime(tmp_path, sim_home):
    lib64 = str(Path(sim_home) / "lib64")
    total, bad = _run(tmp_path, HALF_PROGRAM, "half_bits", 1021,
                      ["-L", lib64, "-lascendcl", f"-Wl,-rpath,{lib64}"])
    assert int(total) > 4_000_000
    assert int(bad) == 0


def test_row_exp_within_one_ulp(tmp_path):
    total, worst = _run(tmp_path, EXP_PROGRAM, "row_exp", 1021, ["-lm"])
    assert int(total) > 4_000_000
    assert float(worst) <= 1.0


def test_cast_to_float16_rows_give_the_same_bits_contiguous_or_strided(sim_lib):
    """aclnnCast FLOAT -> FLOAT16: a contiguous out row is written through F16C where the build
    and the CPU have it (ops_common.c), a strided one through half_bits.h's portable loop; the
    same bits for float32 patterns in a stride visiting every exponent and sign, NaNs (quiet and
    signalling, with payloads), Inf, overflow and subnormals among them."""
    import numpy as np

    import aclnn_py
    from aclnn_py import aclDataType

    bits = np.arange(0, 1 << 32, 1021, dtype=np.uint64).astype(np.uint32)
    extra = np.array([0x7F800001, 0xFF800001, 0x7FC00000, 0x7FBFFFFF, 0x7F800000, 0xFF800000, 0x477FF000,
                      0x477FEFFF, 0x33000000, 0x33000001, 0x387FC000, 0x80000001, 0], np.uint32)
    values = np.concatenate([bits, extra]).view(np.float32)
    assert values.size > 4_000_000
    contiguous = aclnn_py.cast(values, np.float16, backend="sim")
    # out a device view of stride 2 (a host view would be written through a contiguous copy)
    with aclnn_py.Tensor.from_numpy(np.zeros((values.size, 2), np.float16), backend="sim") as pairs:
        aclnn_py.call("aclnnCast", values, int(aclDataType.ACL_FLOAT16), pairs.view((values.size,), (2,)),
                      backend="sim")
        by_stride = pairs.numpy()[:, 0]
    np.testing.assert_array_equal(contiguous.view(np.uint16), by_stride.view(np.uint16))
