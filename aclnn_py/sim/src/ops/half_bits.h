/*
 * FLOAT16 and BFLOAT16 <-> float on the bits, inline, for the operators' row loops (the
 * gathers and scatters of ops_common.c; Cast).  Integer arithmetic only, the special cases as
 * masks rather than branches, so that a loop of them vectorises with the baseline instruction
 * set (no F16C: the build is portable).  The same results as the runtime's aclFloatToFloat16 /
 * aclFloat16ToFloat (round to nearest, ties to even; a NaN keeps its sign and top payload bits
 * and is made quiet; overflow to Inf; subnormals both ways) and as aclsim_ops_float_to_bf16:
 * tests/sim/test_float_bits.py compares every float16 and bfloat16 value and every float32 bit
 * pattern in a stride covering all exponents.
 */
#ifndef ACLSIM_OPS_HALF_BITS_H
#define ACLSIM_OPS_HALF_BITS_H

#include <stdint.h>
#include <string.h>

static inline uint32_t aclsim_hb_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static inline float aclsim_hb_float(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* All ones when c, else 0. */
static inline uint32_t aclsim_hb_mask(int c)
{
    return 0u - (uint32_t)(c != 0);
}

static inline float aclsim_hb_half_to_float(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t em = h & 0x7fffu;
    /* normal: exponent rebiased (+112 << 23); Inf/NaN: all-ones exponent, payload kept */
    uint32_t normal = (em << 13) + 0x38000000u;
    uint32_t special = (em << 13) | 0x7f800000u;
    /* subnormal: m * 2^-24 exactly, as (2^23 + m) * 2^-23... minus 2^0 scaled: the float
     * with exponent 2^-14 and mantissa m << 13, minus 2^-14 */
    float sub = aclsim_hb_float(0x38800000u | (em << 13)) - 6.103515625e-05f;
    uint32_t is_special = aclsim_hb_mask(em >= 0x7c00u), is_sub = aclsim_hb_mask(em < 0x0400u);
    uint32_t out = (is_special & special) | (is_sub & aclsim_hb_bits(sub)) | (~(is_special | is_sub) & normal);
    return aclsim_hb_float(sign | out);
}

static inline uint16_t aclsim_hb_float_to_half(float f)
{
    uint32_t u = aclsim_hb_bits(f);
    uint32_t sign = (u >> 16) & 0x8000u;
    uint32_t a = u & 0x7fffffffu;
    uint32_t nan = aclsim_hb_mask(a > 0x7f800000u);
    uint32_t big = aclsim_hb_mask(a >= 0x47800000u); /* 2^16 and up (Inf too): Inf */
    uint32_t normal = aclsim_hb_mask(a >= 0x38800000u); /* 2^-14 and up: a normal half */
    /* normal: rebias, then round the 13 dropped bits to nearest, ties to even (a carry may
     * reach the exponent, up to Inf: correct rounding) */
    uint32_t rn = (a - 0x38000000u + 0xfffu + ((a >> 13) & 1u)) >> 13;
    /* subnormal or zero: add 0.5 (2^-1, exponent 126) in float, which aligns the value's bits
     * to the half's 2^-24 steps with the FPU's round to nearest even; the low bits are the half */
    uint32_t rs = aclsim_hb_bits(aclsim_hb_float(a) + 0.5f) - 0x3f000000u;
    uint32_t qnan = 0x7e00u | ((a & 0x7fffffu) >> 13); /* 0x7c00 | 0x200 | the payload's top bits */
    uint32_t out = (nan & qnan) | (~nan & big & 0x7c00u) | (~big & normal & rn) | (~normal & rs);
    return (uint16_t)(sign | (out & 0xffffu));
}

static inline float aclsim_hb_bf16_to_float(uint16_t b)
{
    return aclsim_hb_float((uint32_t)b << 16);
}

static inline uint16_t aclsim_hb_float_to_bf16(float f)
{
    uint32_t x = aclsim_hb_bits(f);
    uint32_t nan = aclsim_hb_mask((x & 0x7fffffffu) > 0x7f800000u);
    uint32_t rounded = (x + 0x7fffu + ((x >> 16) & 1u)) >> 16;
    return (uint16_t)((nan & ((x >> 16) | 0x40u)) | (~nan & rounded));
}

#endif
