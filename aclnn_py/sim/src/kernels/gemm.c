/*
 * Blocked float32 matrix product (see gemm.h), plain C11 for the compiler's auto-vectoriser.
 *
 * The classic five loops around a register-blocked micro-kernel:
 *
 *   for each NC-wide block of C's columns (a thread's share):
 *     for each KC-deep slice of the sum:
 *       pack B[slice, block] into NR-wide micro-panels (KC x NC floats, meant for the L3 cache)
 *       for each MC-high block of C's rows:
 *         pack A[block, slice] into MR-high micro-panels (MC x KC floats, meant for L2)
 *         for each micro-panel of B (KC x NR, stays in L1), each micro-panel of A:
 *           micro-kernel: an MR x NR tile of C summed in registers over the slice
 *
 * Packing makes every operand stream contiguous whatever its strides (transposes included) and
 * pads the edges with zeros, so the micro-kernel always runs a full tile with fixed trip counts;
 * only its final store looks at the edge.
 *
 * Instruction sets: the simulator is compiled when it is installed, on the machine that will
 * run it, but not necessarily for that machine only (a wheel or a container image may move to
 * another CPU of the same architecture), so the build does not use -march=native.  The
 * micro-kernels are instead compiled for several x86-64 feature levels with GCC's target
 * attributes, and the CPU picks at run time: x86-64-v4 (AVX-512) gets an 8 x 32 tile (16
 * accumulator vectors of 16 floats, auto-vectorised), AVX2 + FMA a 6 x 16 tile written with
 * intrinsics (12 vectors of 8 floats), the baseline the same tile in plain C.  Elsewhere (other
 * compilers or architectures, e.g. aarch64 NEON) the plain 6 x 16 tile is compiled for the
 * baseline instruction set.
 *
 * fp-contract=fast for this file: in ISO C mode (-std=c11) GCC does not fuse a * b + c into a
 * fused multiply-add unless told to, and the FMA doubles the kernel's throughput (it also rounds
 * once instead of twice).  Restricted to this file so the other kernels keep their arithmetic.
 */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("fp-contract=fast")
#endif

#include "gemm.h"

#include <stdlib.h>
#include <string.h>
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 12
#include <immintrin.h> /* kernel_avx2, the AVX transposes of pack_b_columns_avx2 */
#endif

#include "parallel.h"

/* Cache blocking (floats): a KC x NR panel of B (32 KiB at NR = 32) in L1, an MC x KC block of
 * A (144 KiB) in L2, a KC x NC block of B (2 MiB) in L3.  MC is a multiple of both MRs. */
enum { KC = 256, MC = 144, NC = 2048 };

/* The two register tiles. */
enum { WIDE_MR = 8, WIDE_NR = 32, NARROW_MR = 6, NARROW_NR = 16 };

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 12
#define GEMM_X86_LEVELS 1
#define WIDE_TARGET __attribute__((target("arch=x86-64-v4")))
#define ROW_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define GEMM_X86_LEVELS 0
#define WIDE_TARGET
#define ROW_CLONES
#endif

#if defined(__GNUC__)
#define GEMM_UNROLL _Pragma("GCC unroll 64")
#else
#define GEMM_UNROLL
#endif

/*
 * The micro-kernel body, for tile MR x NR: the tile of packed A (kc x MR, p-major) times packed
 * B (kc x NR, p-major) into C (row stride ldc), of which only mr x nr is C's.  `add`: C += the
 * sum, else C = the sum.  The accumulators are a local array with constant bounds and the i/j
 * loops are fully unrolled, so GCC keeps them in vector registers and vectorises over j with a
 * broadcast of A per row (without the unroll hint it may vectorise over p instead).
 */
#define GEMM_MICRO_KERNEL(MR, NR)                                                                                      \
    float acc[MR][NR];                                                                                                 \
    GEMM_UNROLL for (int i = 0; i < MR; ++i)                                                                       \
    {                                                                                                                  \
        GEMM_UNROLL for (int j = 0; j < NR; ++j) { acc[i][j] = 0.0f; }                                            \
    }                                                                                                                  \
    for (int64_t p = 0; p < kc; ++p) {                                                                                 \
        const float *restrict ap = pa + p * MR;                                                                        \
        const float *restrict bp = pb + p * NR;                                                                        \
        GEMM_UNROLL for (int i = 0; i < MR; ++i)                                                                   \
        {                                                                                                              \
            float ai = ap[i];                                                                                          \
            GEMM_UNROLL for (int j = 0; j < NR; ++j) { acc[i][j] += ai * bp[j]; }                                 \
        }                                                                                                              \
    }                                                                                                                  \
    if (mr == MR && nr == NR) {                                                                                        \
        for (int i = 0; i < MR; ++i) {                                                                                 \
            float *restrict ci = c + i * ldc;                                                                          \
            if (add) {                                                                                                 \
                for (int j = 0; j < NR; ++j) { ci[j] += acc[i][j]; }                                                   \
            } else {                                                                                                   \
                for (int j = 0; j < NR; ++j) { ci[j] = acc[i][j]; }                                                    \
            }                                                                                                          \
        }                                                                                                              \
    } else {                                                                                                           \
        for (int i = 0; i < mr; ++i) {                                                                                 \
            float *restrict ci = c + i * ldc;                                                                          \
            for (int j = 0; j < nr; ++j) { ci[j] = add ? ci[j] + acc[i][j] : acc[i][j]; }                              \
        }                                                                                                              \
    }

WIDE_TARGET
static void kernel_wide(int64_t kc, const float *restrict pa, const float *restrict pb, float *restrict c,
                        int64_t ldc, int mr, int nr, bool add)
{
    GEMM_MICRO_KERNEL(WIDE_MR, WIDE_NR)
}

/* The baseline's tile (on x86-64, CPUs without AVX2 + FMA: see kernel_avx2). */
static void kernel_narrow(int64_t kc, const float *restrict pa, const float *restrict pb, float *restrict c,
                          int64_t ldc, int mr, int nr, bool add)
{
    GEMM_MICRO_KERNEL(NARROW_MR, NARROW_NR)
}

#if GEMM_X86_LEVELS
/* Row i of the AVX2 tile: its two accumulators += A[i, p] * the two vectors of B. */
#define AVX2_ROW(i)                                                                                                    \
    do {                                                                                                               \
        __m256 ai = _mm256_broadcast_ss(pa + (i));                                                                     \
        c##i##0 = _mm256_fmadd_ps(ai, b0, c##i##0);                                                                    \
        c##i##1 = _mm256_fmadd_ps(ai, b1, c##i##1);                                                                    \
    } while (0)

/* Row i of the tile into C (full tile) or into `edge` (partial tile). */
#define AVX2_STORE(i)                                                                                                  \
    do {                                                                                                               \
        if (full) {                                                                                                    \
            float *ci = c + (i) * ldc;                                                                                 \
            if (add) {                                                                                                 \
                c##i##0 = _mm256_add_ps(_mm256_loadu_ps(ci), c##i##0);                                                 \
                c##i##1 = _mm256_add_ps(_mm256_loadu_ps(ci + 8), c##i##1);                                             \
            }                                                                                                          \
            _mm256_storeu_ps(ci, c##i##0);                                                                             \
            _mm256_storeu_ps(ci + 8, c##i##1);                                                                         \
        } else {                                                                                                       \
            _mm256_storeu_ps(edge[i], c##i##0);                                                                        \
            _mm256_storeu_ps(edge[i] + 8, c##i##1);                                                                    \
        }                                                                                                              \
    } while (0)

/*
 * The 6 x 16 tile for AVX2 + FMA, written with intrinsics: 12 accumulator vectors, 2 vectors of
 * B and a broadcast of A, 15 of the 16 ymm registers.  kernel_narrow auto-vectorised by GCC 12
 * for x86-64-v3 kept 5 of the 12 accumulators on the stack, loading and storing them at every p,
 * and permuted B with vpermd: ~30% of the FMA peak.  The sums are kernel_narrow's: each
 * C element summed from 0 in order of p, one fused multiply-add per term.  (Named variables, not
 * an array: GCC kept an array of accumulators in memory.)
 */
__attribute__((target("avx2,fma"))) static void kernel_avx2(int64_t kc, const float *restrict pa,
                                                           const float *restrict pb, float *restrict c, int64_t ldc,
                                                           int mr, int nr, bool add)
{
    __m256 c00 = _mm256_setzero_ps(), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00, c30 = c00, c31 = c00,
           c40 = c00, c41 = c00, c50 = c00, c51 = c00;
    for (int i = 0; i < mr; ++i) {
        _mm_prefetch((const char *)(c + i * ldc), _MM_HINT_T0);
        _mm_prefetch((const char *)(c + i * ldc + NARROW_NR - 1), _MM_HINT_T0);
    }
    _Pragma("GCC unroll 4") for (int64_t p = 0; p < kc; ++p)
    {
        __m256 b0 = _mm256_loadu_ps(pb), b1 = _mm256_loadu_ps(pb + 8);
        AVX2_ROW(0);
        AVX2_ROW(1);
        AVX2_ROW(2);
        AVX2_ROW(3);
        AVX2_ROW(4);
        AVX2_ROW(5);
        pa += NARROW_MR;
        pb += NARROW_NR;
    }
    bool full = mr == NARROW_MR && nr == NARROW_NR;
    float edge[NARROW_MR][NARROW_NR];
    AVX2_STORE(0);
    AVX2_STORE(1);
    AVX2_STORE(2);
    AVX2_STORE(3);
    AVX2_STORE(4);
    AVX2_STORE(5);
    if (!full) {
        for (int i = 0; i < mr; ++i) {
            float *ci = c + i * ldc;
            for (int j = 0; j < nr; ++j) {
                ci[j] = add ? ci[j] + edge[i][j] : edge[i][j];
            }
        }
    }
}
#undef AVX2_ROW
#undef AVX2_STORE
#endif

typedef void (*micro_kernel_fn)(int64_t kc, const float *restrict pa, const float *restrict pb, float *restrict c,
                                int64_t ldc, int mr, int nr, bool add);

typedef struct {
    int mr, nr;
    micro_kernel_fn kernel;
} tile;

/* The tile for this CPU: the 8 x 32 AVX-512 one on x86-64-v4, the AVX2 6 x 16 one on x86-64-v3. */
static tile pick_tile(void)
{
#if GEMM_X86_LEVELS
    __builtin_cpu_init();
    if (__builtin_cpu_supports("x86-64-v4")) {
        return (tile){WIDE_MR, WIDE_NR, kernel_wide};
    }
    if (__builtin_cpu_supports("x86-64-v3")) { /* the level of gemm_row's fused clone */
        return (tile){NARROW_MR, NARROW_NR, kernel_avx2};
    }
#else
    (void)kernel_wide;
#endif
    return (tile){NARROW_MR, NARROW_NR, kernel_narrow};
}

static int64_t min64(int64_t a, int64_t b)
{
    return a < b ? a : b;
}

static int64_t round_up(int64_t a, int64_t b)
{
    return (a + b - 1) / b * b;
}

/* ---- 16-bit operands (gemm.h): converted to float32 as they are packed. */

static float bits_to_float(uint32_t bits)
{
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

static uint32_t float_to_bits(float f)
{
    uint32_t bits;
    memcpy(&bits, &f, sizeof bits);
    return bits;
}

static float half_to_float(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, exp = (h >> 10) & 0x1fu, man = h & 0x3ffu;
    if (exp == 0x1fu) {
        return bits_to_float(sign | 0x7f800000u | (man << 13));
    }
    if (exp != 0) {
        return bits_to_float(sign | ((exp + 112u) << 23) | (man << 13));
    }
    float f = (float)man * 0x1p-24f; /* zero or subnormal: man * 2^-24, exact */
    return sign ? -f : f;
}

/* v rounded to the nearest float16 (ties to even), as a float; beyond 65504 it is infinite. */
static float round_half(float v)
{
    float a = v < 0 ? -v : v;
    if (!(a == a) || a == (float)__builtin_inff()) {
        return v;
    }
    if (a >= 65520.0f) {
        return v < 0 ? -__builtin_inff() : __builtin_inff();
    }
    if (a < 0x1p-14f) { /* subnormal float16: a multiple of 2^-24 (x < 2^10: the add rounds it) */
        volatile float x = a * 0x1p24f + 0x1p23f;
        a = (x - 0x1p23f) * 0x1p-24f;
    } else {
        uint32_t bits = float_to_bits(a);
        bits += 0xfffu + ((bits >> 13) & 1u);
        a = bits_to_float(bits & ~0x1fffu);
    }
    return v < 0 ? -a : a;
}

/* v rounded to the nearest bfloat16 (ties to even), as a float. */
static float round_bf16(float v)
{
    if (!(v == v)) {
        return v;
    }
    uint32_t bits = float_to_bits(v);
    bits += 0x7fffu + ((bits >> 16) & 1u);
    return bits_to_float(bits & 0xffff0000u);
}

/* Element idx of an operand of type t, as float32, rounded to `round_to`. */
static inline float operand_value(const void *base, aclDataType t, int64_t idx, aclDataType round_to)
{
    float v;
    if (t == ACL_FLOAT16) {
        v = half_to_float(((const uint16_t *)base)[idx]);
    } else if (t == ACL_BF16) {
        v = bits_to_float((uint32_t)((const uint16_t *)base)[idx] << 16);
    } else {
        v = ((const float *)base)[idx];
    }
    if (round_to == ACL_FLOAT16) {
        return round_half(v);
    }
    return round_to == ACL_BF16 ? round_bf16(v) : v;
}

static size_t operand_size(aclDataType t)
{
    return t == ACL_FLOAT16 || t == ACL_BF16 ? 2 : 4;
}

/* A or B needs converting (not float32 used as it is). */
static bool converted(aclDataType t, aclDataType round_to)
{
    return t != ACL_FLOAT || round_to != ACL_FLOAT;
}

#if GEMM_X86_LEVELS
/* r[0..7] transposed in place: afterwards r[q] holds lane q of the eight vectors, in order. */
__attribute__((target("avx2"))) static inline void transpose_8x8(__m256 r[8])
{
    __m256 t0 = _mm256_unpacklo_ps(r[0], r[1]), t1 = _mm256_unpackhi_ps(r[0], r[1]);
    __m256 t2 = _mm256_unpacklo_ps(r[2], r[3]), t3 = _mm256_unpackhi_ps(r[2], r[3]);
    __m256 t4 = _mm256_unpacklo_ps(r[4], r[5]), t5 = _mm256_unpackhi_ps(r[4], r[5]);
    __m256 t6 = _mm256_unpacklo_ps(r[6], r[7]), t7 = _mm256_unpackhi_ps(r[6], r[7]);
    __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xEE);
    __m256 u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xEE);
    __m256 u4 = _mm256_shuffle_ps(t4, t6, 0x44), u5 = _mm256_shuffle_ps(t4, t6, 0xEE);
    __m256 u6 = _mm256_shuffle_ps(t5, t7, 0x44), u7 = _mm256_shuffle_ps(t5, t7, 0xEE);
    r[0] = _mm256_permute2f128_ps(u0, u4, 0x20);
    r[1] = _mm256_permute2f128_ps(u1, u5, 0x20);
    r[2] = _mm256_permute2f128_ps(u2, u6, 0x20);
    r[3] = _mm256_permute2f128_ps(u3, u7, 0x20);
    r[4] = _mm256_permute2f128_ps(u0, u4, 0x31);
    r[5] = _mm256_permute2f128_ps(u1, u5, 0x31);
    r[6] = _mm256_permute2f128_ps(u2, u6, 0x31);
    r[7] = _mm256_permute2f128_ps(u3, u7, 0x31);
}

/* A whole 6-row micro-panel of A's contiguous rows (a_cs == 1, the usual row-major A): kc
 * columns of 6 floats, row i at src + i * step, moved in 6 x 8 blocks transposed in AVX registers
 * (gathered float by float it took a quarter of the micro-kernel's time on the BERT attention
 * products, 128x128 @ 128x64).  Each packed column is stored as 8 floats whose last 2 the next
 * store overwrites; the block's last one is masked to 6.  The values are only moved. */
__attribute__((target("avx2"))) static void pack_a_rows_avx2(const float *restrict src, int64_t step, int64_t kc,
                                                              float *restrict dst)
{
    const __m256i six = _mm256_setr_epi32(-1, -1, -1, -1, -1, -1, 0, 0);
    int64_t p = 0;
    for (; p + 8 <= kc; p += 8) {
        const float *s = src + p;
        __m256 r[8] = {_mm256_loadu_ps(s),            _mm256_loadu_ps(s + step),     _mm256_loadu_ps(s + 2 * step),
                       _mm256_loadu_ps(s + 3 * step), _mm256_loadu_ps(s + 4 * step), _mm256_loadu_ps(s + 5 * step),
                       _mm256_setzero_ps(),           _mm256_setzero_ps()};
        transpose_8x8(r);
        float *d = dst + p * NARROW_MR;
        for (int q = 0; q < 7; ++q) {
            _mm256_storeu_ps(d + q * NARROW_MR, r[q]);
        }
        _mm256_maskstore_ps(d + 7 * NARROW_MR, six, r[7]);
    }
    for (; p < kc; ++p) {
        for (int i = 0; i < NARROW_MR; ++i) {
            dst[p * NARROW_MR + i] = src[i * step + p];
        }
    }
}
#endif

/* Whether pack_a_rows_avx2 can run on this CPU. */
static bool rows_by_blocks(void)
{
#if GEMM_X86_LEVELS
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2");
#else
    return false;
#endif
}

/* A[i0 .. i0+mc, p0 .. p0+kc] into micro-panels of MR rows: panel r holds, p after p, the MR
 * values A[i0 + r*MR + i, p0 + p] (0 past row mc). */
static void pack_a(const aclsim_gemm_args *g, int64_t i0, int64_t mc, int64_t p0, int64_t kc, int mr_tile,
                   float *restrict dst)
{
    if (converted(g->a_type, g->round_to)) {
        for (int64_t r = 0; r < mc; r += mr_tile) {
            int64_t rows = min64(mr_tile, mc - r), first = (i0 + r) * g->a_rs + p0 * g->a_cs;
            for (int64_t p = 0; p < kc; ++p) {
                for (int64_t i = 0; i < mr_tile; ++i) {
                    dst[i] = i < rows ? operand_value(g->a, g->a_type, first + i * g->a_rs + p * g->a_cs, g->round_to)
                                      : 0.0f;
                }
                dst += mr_tile;
            }
        }
        return;
    }
    for (int64_t r = 0; r < mc; r += mr_tile) {
        int64_t rows = min64(mr_tile, mc - r);
        const float *src = (const float *)g->a + (i0 + r) * g->a_rs + p0 * g->a_cs;
        if (g->a_rs == 1) {
            for (int64_t p = 0; p < kc; ++p) {
                const float *col = src + p * g->a_cs;
                for (int64_t i = 0; i < rows; ++i) {
                    dst[i] = col[i];
                }
                for (int64_t i = rows; i < mr_tile; ++i) {
                    dst[i] = 0.0f;
                }
                dst += mr_tile;
            }
        } else if (g->a_cs == 1 && rows == NARROW_MR && mr_tile == NARROW_MR && rows_by_blocks()) {
#if GEMM_X86_LEVELS
            pack_a_rows_avx2(src, g->a_rs, kc, dst);
#endif
            dst += kc * mr_tile;
        } else {
            for (int64_t i = 0; i < rows; ++i) {
                const float *row = src + i * g->a_rs;
                for (int64_t p = 0; p < kc; ++p) {
                    dst[p * mr_tile + i] = row[p * g->a_cs];
                }
            }
            for (int64_t i = rows; i < mr_tile; ++i) {
                for (int64_t p = 0; p < kc; ++p) {
                    dst[p * mr_tile + i] = 0.0f;
                }
            }
            dst += kc * mr_tile;
        }
    }
}

/* A whole micro-panel of B's contiguous rows: kc rows of nr_tile floats, `step` apart.  With the
 * width a constant the copies are a few vector moves each, not a memcpy call per row (as the
 * loop over a variable width compiles to). */
/* `panels` whole micro-panels of B's contiguous rows (b_cs == 1), side by side: row p of panel s
 * is src[p * step + s * NR ...] and goes to dst[(s * kc + p) * NR ...].  Row after row of B, so
 * B is read in order, as far along each row as the panels go (panel after panel, each a column
 * of kc short pieces 4 * step bytes apart, took 27% of 64x4096 @ 4096x4096 on one thread). */
enum { PACK_AHEAD = 4 };
#if defined(__GNUC__)
#define GEMM_PREFETCH(p) __builtin_prefetch((p), 0, 2)
#else
#define GEMM_PREFETCH(p) ((void)(p))
#endif
#define PACK_B_ROWS(NR)                                                                                                \
    for (int64_t p = 0; p < kc; ++p) {                                                                                 \
        const float *restrict row = src + p * step;                                                                    \
        int64_t ahead = p + PACK_AHEAD < kc ? PACK_AHEAD * step : 0;                                                   \
        for (int64_t s = 0; s < panels; ++s) {                                                                         \
            GEMM_PREFETCH(row + ahead + s * (NR));                                                                     \
            float *restrict d = dst + (s * kc + p) * (NR);                                                             \
            GEMM_UNROLL for (int j = 0; j < (NR); ++j) { d[j] = row[s * (NR) + j]; }                                  \
        }                                                                                                              \
    }

ROW_CLONES
static void pack_b_rows(const float *restrict src, int64_t step, int64_t kc, int64_t panels, int nr_tile,
                        float *restrict dst)
{
    if (nr_tile == WIDE_NR) {
        PACK_B_ROWS(WIDE_NR)
    } else {
        PACK_B_ROWS(NARROW_NR)
    }
}

#if GEMM_X86_LEVELS
/* A whole micro-panel of B's contiguous columns (b_rs == 1: a transposed weight, x @ W^T): kc
 * rows of nr_tile floats, column j at src + j * step, moved in 8 x 8 blocks transposed in AVX
 * registers instead of gathered float by float (the gather took as long as the micro-kernel:
 * aclnnMm 32x512 @ (1000x512)^T spent 37% of its samples packing, 33% in the kernel).  The
 * values are only moved: the bits are the gather's. */
__attribute__((target("avx2"))) static void pack_b_columns_avx2(const float *restrict src, int64_t step, int64_t kc,
                                                                 int nr_tile, float *restrict dst)
{
    int64_t p = 0;
    for (; p + 8 <= kc; p += 8) {
        for (int j = 0; j < nr_tile; j += 8) {
            const float *s = src + j * step + p; /* row r of the block: column j + r, p .. p + 7 */
            __m256 r[8];
            for (int q = 0; q < 8; ++q) {
                r[q] = _mm256_loadu_ps(s + q * step);
            }
            transpose_8x8(r);
            float *d = dst + p * nr_tile + j; /* row q of the block: p + q, columns j .. j + 7 */
            for (int q = 0; q < 8; ++q) {
                _mm256_storeu_ps(d + q * nr_tile, r[q]);
            }
        }
    }
    for (; p < kc; ++p) {
        for (int j = 0; j < nr_tile; ++j) {
            dst[p * nr_tile + j] = src[j * step + p];
        }
    }
}
#endif

/* Whether pack_b_columns_avx2 can take a panel of this width on this CPU. */
static bool columns_by_blocks(int nr_tile)
{
#if GEMM_X86_LEVELS
    __builtin_cpu_init();
    return nr_tile % 8 == 0 && __builtin_cpu_supports("avx2");
#else
    (void)nr_tile;
    return false;
#endif
}

/* B[p0 .. p0+kc, j0 .. j0+nc] into micro-panels of NR columns, p after p (0 past column nc). */
static void pack_b(const aclsim_gemm_args *g, int64_t p0, int64_t kc, int64_t j0, int64_t nc, int nr_tile,
                   float *restrict dst)
{
    if (converted(g->b_type, g->round_to)) {
        for (int64_t s = 0; s < nc; s += nr_tile) {
            int64_t cols = min64(nr_tile, nc - s), first = p0 * g->b_rs + (j0 + s) * g->b_cs;
            for (int64_t p = 0; p < kc; ++p) {
                for (int64_t j = 0; j < nr_tile; ++j) {
                    dst[j] = j < cols ? operand_value(g->b, g->b_type, first + p * g->b_rs + j * g->b_cs, g->round_to)
                                      : 0.0f;
                }
                dst += nr_tile;
            }
        }
        return;
    }
    int64_t s = 0;
    if (g->b_cs == 1 && nc >= nr_tile) {
        int64_t panels = nc / nr_tile;
        pack_b_rows((const float *)g->b + p0 * g->b_rs + j0, g->b_rs, kc, panels, nr_tile, dst);
        dst += panels * kc * nr_tile;
        s = panels * nr_tile;
    }
    for (; s < nc; s += nr_tile) {
        int64_t cols = min64(nr_tile, nc - s);
        const float *src = (const float *)g->b + p0 * g->b_rs + (j0 + s) * g->b_cs;
        if (g->b_cs == 1) {
            for (int64_t p = 0; p < kc; ++p) {
                const float *row = src + p * g->b_rs;
                for (int64_t j = 0; j < cols; ++j) {
                    dst[j] = row[j];
                }
                for (int64_t j = cols; j < nr_tile; ++j) {
                    dst[j] = 0.0f;
                }
                dst += nr_tile;
            }
        } else if (g->b_rs == 1 && cols == nr_tile && columns_by_blocks(nr_tile)) {
#if GEMM_X86_LEVELS
            pack_b_columns_avx2(src, g->b_cs, kc, nr_tile, dst);
#endif
            dst += kc * nr_tile;
        } else {
            /* p after p: each packed row written whole, its values gathered from the columns */
            for (int64_t p = 0; p < kc; ++p) {
                const float *row = src + p * g->b_rs;
                for (int64_t j = 0; j < cols; ++j) {
                    dst[j] = row[j * g->b_cs];
                }
                for (int64_t j = cols; j < nr_tile; ++j) {
                    dst[j] = 0.0f;
                }
                dst += nr_tile;
            }
        }
    }
}

/* Floats of one thread's packing buffers for columns of width n. */
static uint64_t thread_floats(int64_t m, int64_t n, int64_t k, tile t)
{
    int64_t kc = min64(KC, k > 0 ? k : 1);
    int64_t mc = min64(MC, round_up(m, t.mr));
    int64_t nc = min64(NC, round_up(n, t.nr));
    /* + 16: room to round the B buffer's start up to 64 bytes */
    return (uint64_t)(mc * kc + kc * nc + 16);
}

/* C's columns [j_begin, j_end) on the calling thread, with `work` as packing space. */
static void gemm_columns(const aclsim_gemm_args *g, tile t, int64_t j_begin, int64_t j_end, float *work)
{
    int64_t kc_max = min64(KC, g->k);
    float *pack_a_buf = work;
    float *pack_b_buf = work + round_up(min64(MC, round_up(g->m, t.mr)) * kc_max, 16);
    for (int64_t j0 = j_begin; j0 < j_end; j0 += NC) {
        int64_t nc = min64(NC, j_end - j0);
        for (int64_t p0 = 0; p0 < g->k; p0 += KC) {
            int64_t kc = min64(KC, g->k - p0);
            bool add = g->accumulate || p0 > 0;
            pack_b(g, p0, kc, j0, nc, t.nr, pack_b_buf);
            for (int64_t i0 = 0; i0 < g->m; i0 += MC) {
                int64_t mc = min64(MC, g->m - i0);
                pack_a(g, i0, mc, p0, kc, t.mr, pack_a_buf);
                for (int64_t js = 0; js < nc; js += t.nr) {
                    const float *pb = pack_b_buf + js * kc;
                    int nr = (int)min64(t.nr, nc - js);
                    for (int64_t is = 0; is < mc; is += t.mr) {
                        int mr = (int)min64(t.mr, mc - is);
                        t.kernel(kc, pack_a_buf + is * kc, pb, g->c + (i0 + is) * g->ldc + j0 + js, g->ldc, mr, nr,
                                 add);
                    }
                }
            }
        }
    }
}

/* m x n of C set to 0 (k == 0 and not accumulating). */
static void zero_c(const aclsim_gemm_args *g)
{
    for (int64_t i = 0; i < g->m; ++i) {
        memset(g->c + i * g->ldc, 0, (size_t)g->n * sizeof(float));
    }
}

/* Below this many multiply-adds (~0.2 ms on one core) a product runs on one thread (see
 * ACLSIM_PARALLEL_MIN_WORK: a helper thread can cost far more than its start on a busy machine).
 * It was 2^24, which left the classifier head 32x512 @ 512x1000 (16.4 M) on one thread.  Measured
 * (a C program timing aclnnMm, phase 2 + synchronisation, medians of 200 calls, the floors
 * alternating, load 2.7): 32x512x1000 625-653 us on one thread against 408-441 on two;
 * 32x256x1000 (8.2 M) 386-409 against 320-321; 32x128x1000 (4.1 M) 141-142 against 162-169;
 * 16x512x512 (4.2 M) 176 against 167-173. */
#define GEMM_MIN_PARALLEL ((double)(1 << 23))

/* The number of threads to use: at most `threads` and ACLSIM_MAX_WORKERS, at most one per NR
 * columns, 1 for a small product. */
static int share_count(int64_t m, int64_t n, int64_t k, tile t, int threads)
{
    if (threads <= 1 || m <= 0 || n <= 0 || k <= 0 || (double)m * (double)n * (double)k < GEMM_MIN_PARALLEL) {
        return 1;
    }
    int64_t panels = (n + t.nr - 1) / t.nr;
    return (int)min64(min64(threads, ACLSIM_MAX_WORKERS), panels);
}

typedef struct {
    const aclsim_gemm_args *g;
    tile t;
    uint64_t per_share;     /* floats of packing space per share */
    float *workspace;
} gemm_job;

/* Share `worker`: the column panels [begin, end). */
static void run_share(void *ctx, int64_t begin, int64_t end, int worker)
{
    const gemm_job *job = ctx;
    int64_t nr = job->t.nr;
    if (end > begin) {
        gemm_columns(job->g, job->t, begin * nr, min64(end * nr, job->g->n),
                     job->workspace + (uint64_t)worker * job->per_share);
    }
}

uint64_t aclsim_gemm_workspace_size(int64_t m, int64_t n, int64_t k, int threads)
{
    tile t = pick_tile();
    int shares = share_count(m, n, k, t, threads);
    int64_t width = round_up((n + shares - 1) / shares, t.nr);
    return (uint64_t)shares * thread_floats(m, width, k, t) * sizeof(float);
}

/* One row of C (m == 1) from FLOAT operands with B's rows contiguous (b_cs == 1): B streamed
 * once by rows, not packed.  Each C element is summed exactly as the micro-kernels sum it (a
 * float sum from 0 over each KC-deep slice in order of p, added to C slice by slice), compiled
 * for the same feature levels (fused multiply-adds where the micro-kernel has them), so the
 * bits are the packed path's. */
static bool row_product(const aclsim_gemm_args *g)
{
    return g->m == 1 && g->b_cs == 1 && g->a_type == ACL_FLOAT && g->b_type == ACL_FLOAT && g->round_to == ACL_FLOAT;
}

ROW_CLONES
static void gemm_row(const aclsim_gemm_args *g)
{
    enum { COLS = 512 };
    const float *a = g->a, *b = g->b;
    float acc[COLS];
    for (int64_t j0 = 0; j0 < g->n; j0 += COLS) {
        int64_t nc = min64(COLS, g->n - j0);
        float *c = g->c + j0;
        for (int64_t p0 = 0; p0 < g->k; p0 += KC) {
            int64_t kc = min64(KC, g->k - p0);
            for (int64_t j = 0; j < nc; ++j) {
                acc[j] = 0.0f;
            }
            for (int64_t p = p0; p < p0 + kc; ++p) {
                float ap = a[p * g->a_cs];
                const float *restrict bp = b + p * g->b_rs + j0;
                for (int64_t j = 0; j < nc; ++j) {
                    acc[j] += ap * bp[j];
                }
            }
            if (g->accumulate || p0 > 0) {
                for (int64_t j = 0; j < nc; ++j) {
                    c[j] += acc[j];
                }
            } else {
                for (int64_t j = 0; j < nc; ++j) {
                    c[j] = acc[j];
                }
            }
        }
    }
}

void aclsim_gemm_f32(const aclsim_gemm_args *g, int threads, void *workspace)
{
    if (g->m <= 0 || g->n <= 0) {
        return;
    }
    if (g->k <= 0) {
        if (!g->accumulate) {
            zero_c(g);
        }
        return;
    }
    if (row_product(g)) {
        gemm_row(g);
        return;
    }
    tile t = pick_tile();
    int shares = share_count(g->m, g->n, g->k, t, threads);
    /* Column ranges of whole panels, as even as the panels allow (at most `width` columns). */
    int64_t width = round_up((g->n + shares - 1) / shares, t.nr);
    gemm_job job = {g, t, thread_floats(g->m, width, g->k, t), workspace};
    aclsim_parallel((g->n + t.nr - 1) / t.nr, shares, run_share, &job);
}

/* Workers over a batch: 1 when each product is large enough for the threads of its own (or the
 * batch is one product), else as many as the batch's work is worth. */
static int batch_workers(int64_t m, int64_t n, int64_t k, int64_t batches, int threads)
{
    tile t = pick_tile();
    if (batches <= 1 || share_count(m, n, k, t, threads) > 1 || threads <= 1 || m <= 0 || n <= 0 || k <= 0) {
        return 1;
    }
    if ((double)batches * (double)m * (double)n * (double)k < GEMM_MIN_PARALLEL) {
        return 1;
    }
    return (int)min64(min64(threads, ACLSIM_MAX_WORKERS), batches);
}

uint64_t aclsim_gemm_batched_workspace_size(int64_t m, int64_t n, int64_t k, int64_t batches, int threads)
{
    uint64_t whole = aclsim_gemm_workspace_size(m, n, k, threads);
    uint64_t each = (uint64_t)batch_workers(m, n, k, batches, threads) * aclsim_gemm_workspace_size(m, n, k, 1);
    return whole > each ? whole : each;
}

typedef struct {
    const aclsim_gemm_args *g;
    const int64_t *offsets;
    uint64_t per_worker; /* bytes of packing space */
    char *workspace;
} batch_job;

/* The products [begin, end) on one thread. */
static aclsim_gemm_args batch_item(const aclsim_gemm_args *g, const int64_t *offsets, int64_t i)
{
    aclsim_gemm_args one = *g;
    one.a = (const char *)g->a + offsets[3 * i] * (int64_t)operand_size(g->a_type);
    one.b = (const char *)g->b + offsets[3 * i + 1] * (int64_t)operand_size(g->b_type);
    one.c = g->c + offsets[3 * i + 2];
    return one;
}

static void run_batch_share(void *ctx, int64_t begin, int64_t end, int worker)
{
    const batch_job *job = ctx;
    for (int64_t i = begin; i < end; ++i) {
        aclsim_gemm_args one = batch_item(job->g, job->offsets, i);
        aclsim_gemm_f32(&one, 1, job->workspace + (uint64_t)worker * job->per_worker);
    }
}

void aclsim_gemm_batched(const aclsim_gemm_args *g, const int64_t *offsets, int64_t batches, int threads,
                         void *workspace)
{
    int workers = batch_workers(g->m, g->n, g->k, batches, threads);
    if (workers <= 1) {
        for (int64_t i = 0; i < batches; ++i) {
            aclsim_gemm_args one = batch_item(g, offsets, i);
            aclsim_gemm_f32(&one, threads, workspace);
        }
        return;
    }
    batch_job job = {g, offsets, aclsim_gemm_workspace_size(g->m, g->n, g->k, 1), workspace};
    aclsim_parallel(batches, workers, run_batch_share, &job);
}

int aclsim_gemm_f32_test(int64_t m, int64_t n, int64_t k, const float *a, int64_t a_rs, int64_t a_cs, const float *b,
                         int64_t b_rs, int64_t b_cs, float *c, int64_t ldc, int accumulate, int threads)
{
    aclsim_gemm_args g = {
        .m = m, .n = n, .k = k, .a = a, .a_rs = a_rs, .a_cs = a_cs, .b = b, .b_rs = b_rs, .b_cs = b_cs,
        .c = c, .ldc = ldc, .accumulate = accumulate != 0,
    };
    uint64_t bytes = aclsim_gemm_workspace_size(m, n, k, threads);
    void *work = malloc(bytes > 0 ? bytes : 1);
    if (work == NULL) {
        return -1;
    }
    aclsim_gemm_f32(&g, threads, work);
    free(work);
    return 0;
}
