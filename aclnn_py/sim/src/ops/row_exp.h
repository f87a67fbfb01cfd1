/*
 * exp of a row of floats in a loop the compiler vectorises (the C library's expf is a call per
 * element, most of a softmax's time).  The usual reduction: x = n ln2 + r with n = round(x
 * log2(e)) (the 1.5 * 2^23 rounding trick: default rounding mode, no -ffast-math, as the build
 * has), ln2 split in two so that n * C1 is exact, a degree-6 polynomial for exp(r) on |r| <=
 * ln2 / 2 (Cephes' expf coefficients), and 2^n applied in two factors so that results down in
 * the subnormals come out (each factor a normal power of two).  Within 1 ulp of exp in
 * double over the float range (tests/sim/test_float_bits.py; all 2^32 inputs run once: worst
 * 0.990 ulp); +Inf above 88.7228..., NaN stays NaN, -Inf and anything below -104 give 0.
 */
#ifndef ACLSIM_OPS_ROW_EXP_H
#define ACLSIM_OPS_ROW_EXP_H

#include <stdint.h>
#include <string.h>

static inline float aclsim_exp_one(float x)
{
    /* The special cases are chosen on the bits in integers: a float comparison with a NaN may
     * trap, so the compiler would not turn it into a vector select. */
    const uint32_t top = 0x42b17218u;   /* 88.72283935546875f: above it exp is +Inf */
    const uint32_t bottom = 0xc2d00000u; /* -104.0f: below it exp is 0 */
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    uint32_t nan = 0u - (uint32_t)((u & 0x7fffffffu) > 0x7f800000u); /* all ones or 0 */
    uint32_t over = ~nan & (0u - (uint32_t)((int32_t)u > (int32_t)top));
    uint32_t under = ~nan & (0u - (uint32_t)(u > bottom)); /* negative below -104, -Inf included */
    uint32_t cu = (over & top) | (under & bottom) | (~(over | under | nan) & u);
    float c;
    memcpy(&c, &cu, sizeof c);
    const float shifter = 12582912.0f; /* 1.5 * 2^23: adding it rounds to an integer */
    float t = c * 1.44269504088896341f + shifter;
    float n = t - shifter;
    uint32_t tb;
    memcpy(&tb, &t, sizeof tb);
    int32_t k = (int32_t)(tb - 0x4b400000u); /* n as an integer, in [-150, 128] */
    float r = c - n * 0.693359375f;
    r = r - n * -2.12194440e-4f;
    float p = 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    p = p * (r * r) + r + 1.0f;
    int32_t k1 = k >> 1, k2 = k - k1; /* each in [-75, 64]: 2^k1 and 2^k2 are normal floats */
    uint32_t b1 = (uint32_t)(k1 + 127) << 23, b2 = (uint32_t)(k2 + 127) << 23;
    float s1, s2;
    memcpy(&s1, &b1, sizeof s1);
    memcpy(&s2, &b2, sizeof s2);
    float v = p * s1 * s2;
    uint32_t vu;
    memcpy(&vu, &v, sizeof vu);
    vu = (over & 0x7f800000u) | (nan & u) | (~(over | nan) & vu);
    memcpy(&v, &vu, sizeof v);
    return v;
}

/* dst[i] = exp(src[i]) for i < n (dst may be src). */
static inline void aclsim_exp_row(float *dst, const float *src, int64_t n)
{
    for (int64_t i = 0; i < n; ++i) {
        dst[i] = aclsim_exp_one(src[i]);
    }
}

#endif
