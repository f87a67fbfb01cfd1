/*
 * Helpers shared by the operator files (see ops_common.h).
 */
#include "ops_common.h"
#include "half_bits.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 12
#include <immintrin.h> /* floats_to_halves_f16c */
#define OPS_F16C 1
#else
#define OPS_F16C 0
#endif

/* ---------------------------------------------------------------- element types */

size_t aclsim_ops_dtype_size(aclDataType dtype)
{
    switch (dtype) {
    case ACL_INT8:
    case ACL_UINT8:
    case ACL_BOOL:
        return 1;
    case ACL_FLOAT16:
    case ACL_BF16:
    case ACL_INT16:
    case ACL_UINT16:
        return 2;
    case ACL_FLOAT:
    case ACL_INT32:
    case ACL_UINT32:
        return 4;
    case ACL_DOUBLE:
    case ACL_INT64:
    case ACL_UINT64:
    case ACL_COMPLEX64:
        return 8;
    case ACL_COMPLEX128:
        return 16;
    default:
        return 0;
    }
}

const char *aclsim_ops_dtype_name(aclDataType dtype)
{
    switch (dtype) {
    case ACL_FLOAT: return "FLOAT";
    case ACL_FLOAT16: return "FLOAT16";
    case ACL_BF16: return "BFLOAT16";
    case ACL_DOUBLE: return "DOUBLE";
    case ACL_COMPLEX64: return "COMPLEX64";
    case ACL_COMPLEX128: return "COMPLEX128";
    case ACL_INT8: return "INT8";
    case ACL_UINT8: return "UINT8";
    case ACL_INT16: return "INT16";
    case ACL_UINT16: return "UINT16";
    case ACL_INT32: return "INT32";
    case ACL_UINT32: return "UINT32";
    case ACL_INT64: return "INT64";
    case ACL_UINT64: return "UINT64";
    case ACL_BOOL: return "BOOL";
    case ACL_STRING: return "STRING";
    case ACL_INT4: return "INT4";
    case ACL_UINT1: return "UINT1";
    case ACL_COMPLEX32: return "COMPLEX32";
    case ACL_HIFLOAT8: return "HIFLOAT8";
    case ACL_FLOAT8_E5M2: return "FLOAT8_E5M2";
    case ACL_FLOAT8_E4M3FN: return "FLOAT8_E4M3FN";
    case ACL_FLOAT8_E8M0: return "FLOAT8_E8M0";
    case ACL_DT_UNDEFINED: return "UNDEFINED";
    default: return "UNKNOWN";
    }
}

const char *aclsim_ops_format_name(aclFormat format)
{
    switch (format) {
    case ACL_FORMAT_UNDEFINED: return "UNDEFINED";
    case ACL_FORMAT_NCHW: return "NCHW";
    case ACL_FORMAT_NHWC: return "NHWC";
    case ACL_FORMAT_ND: return "ND";
    case ACL_FORMAT_NC1HWC0: return "NC1HWC0";
    case ACL_FORMAT_FRACTAL_Z: return "FRACTAL_Z";
    case ACL_FORMAT_NC1HWC0_C04: return "NC1HWC0_C04";
    case ACL_FORMAT_HWCN: return "HWCN";
    case ACL_FORMAT_NDHWC: return "NDHWC";
    case ACL_FORMAT_FRACTAL_NZ: return "FRACTAL_NZ";
    case ACL_FORMAT_NCDHW: return "NCDHW";
    case ACL_FORMAT_NDC1HWC0: return "NDC1HWC0";
    case ACL_FRACTAL_Z_3D: return "FRACTAL_Z_3D";
    case ACL_FORMAT_NC: return "NC";
    case ACL_FORMAT_NCL: return "NCL";
    case ACL_FORMAT_FRACTAL_NZ_C0_16: return "FRACTAL_NZ_C0_16";
    case ACL_FORMAT_FRACTAL_NZ_C0_32: return "FRACTAL_NZ_C0_32";
    case ACL_FORMAT_FRACTAL_NZ_C0_2: return "FRACTAL_NZ_C0_2";
    case ACL_FORMAT_FRACTAL_NZ_C0_4: return "FRACTAL_NZ_C0_4";
    case ACL_FORMAT_FRACTAL_NZ_C0_8: return "FRACTAL_NZ_C0_8";
    default: return "UNKNOWN";
    }
}

bool aclsim_ops_is_complex(aclDataType dtype)
{
    return dtype == ACL_COMPLEX64 || dtype == ACL_COMPLEX128 || dtype == ACL_COMPLEX32;
}

bool aclsim_ops_is_floating(aclDataType dtype)
{
    switch (dtype) {
    case ACL_FLOAT:
    case ACL_FLOAT16:
    case ACL_BF16:
    case ACL_DOUBLE:
    case ACL_HIFLOAT8:
    case ACL_FLOAT8_E5M2:
    case ACL_FLOAT8_E4M3FN:
    case ACL_FLOAT8_E8M0:
        return true;
    default:
        return false;
    }
}

bool aclsim_ops_is_integral(aclDataType dtype)
{
    switch (dtype) {
    case ACL_INT8:
    case ACL_UINT8:
    case ACL_INT16:
    case ACL_UINT16:
    case ACL_INT32:
    case ACL_UINT32:
    case ACL_INT64:
    case ACL_UINT64:
        return true;
    default:
        return false;
    }
}

bool aclsim_ops_can_cast(aclDataType from, aclDataType to)
{
    if (aclsim_ops_is_complex(from) && !aclsim_ops_is_complex(to)) {
        return false;
    }
    if (aclsim_ops_is_floating(from) && aclsim_ops_is_integral(to)) {
        return false;
    }
    if (from != ACL_BOOL && to == ACL_BOOL) {
        return false;
    }
    return true;
}

bool aclsim_ops_is_private_format(aclFormat format)
{
    switch (format) {
    case ACL_FORMAT_NC1HWC0:
    case ACL_FORMAT_FRACTAL_Z:
    case ACL_FORMAT_NC1HWC0_C04:
    case ACL_FORMAT_FRACTAL_NZ:
    case ACL_FORMAT_NDC1HWC0:
    case ACL_FRACTAL_Z_3D:
    case ACL_FORMAT_FRACTAL_NZ_C0_16:
    case ACL_FORMAT_FRACTAL_NZ_C0_32:
    case ACL_FORMAT_FRACTAL_NZ_C0_2:
    case ACL_FORMAT_FRACTAL_NZ_C0_4:
    case ACL_FORMAT_FRACTAL_NZ_C0_8:
        return true;
    default:
        return false;
    }
}

/* ---------------------------------------------------------------- 16-bit floats */

/* The conversions on the bits, inline (half_bits.h): the same results as the runtime's
 * aclFloatToFloat16 / aclFloat16ToFloat, without a call into libascendcl per element. */
float aclsim_ops_half_to_float(uint16_t h)
{
    return aclsim_hb_half_to_float(h);
}

uint16_t aclsim_ops_float_to_half(float f)
{
    return aclsim_hb_float_to_half(f);
}

float aclsim_ops_bf16_to_float(uint16_t b)
{
    return aclsim_hb_bf16_to_float(b);
}

uint16_t aclsim_ops_float_to_bf16(float f)
{
    return aclsim_hb_float_to_bf16(f);
}

/* ---------------------------------------------------------------- element access */

static int64_t double_to_int64(double v)
{
    if (v != v) {
        return 0;
    }
    if (v >= 9223372036854775807.0) {
        return INT64_MAX;
    }
    if (v <= -9223372036854775808.0) {
        return INT64_MIN;
    }
    return (int64_t)v;
}

double aclsim_ops_load(const void *data, aclDataType dtype, int64_t index)
{
    switch (dtype) {
    case ACL_FLOAT: return ((const float *)data)[index];
    case ACL_FLOAT16: return aclsim_ops_half_to_float(((const uint16_t *)data)[index]);
    case ACL_BF16: return aclsim_ops_bf16_to_float(((const uint16_t *)data)[index]);
    case ACL_DOUBLE: return ((const double *)data)[index];
    case ACL_COMPLEX64: return ((const float *)data)[2 * index];
    case ACL_COMPLEX128: return ((const double *)data)[2 * index];
    case ACL_BOOL: return ((const uint8_t *)data)[index] != 0 ? 1.0 : 0.0;
    default: return (double)aclsim_ops_load_int(data, dtype, index);
    }
}

void aclsim_ops_store(void *data, aclDataType dtype, int64_t index, double value)
{
    switch (dtype) {
    case ACL_FLOAT: ((float *)data)[index] = (float)value; break;
    case ACL_FLOAT16: ((uint16_t *)data)[index] = aclsim_ops_float_to_half((float)value); break;
    case ACL_BF16: ((uint16_t *)data)[index] = aclsim_ops_float_to_bf16((float)value); break;
    case ACL_DOUBLE: ((double *)data)[index] = value; break;
    case ACL_COMPLEX64:
        ((float *)data)[2 * index] = (float)value;
        ((float *)data)[2 * index + 1] = 0.0f;
        break;
    case ACL_COMPLEX128:
        ((double *)data)[2 * index] = value;
        ((double *)data)[2 * index + 1] = 0.0;
        break;
    case ACL_BOOL: ((uint8_t *)data)[index] = value != 0.0; break;
    default: aclsim_ops_store_int(data, dtype, index, double_to_int64(value)); break;
    }
}

int64_t aclsim_ops_load_int(const void *data, aclDataType dtype, int64_t index)
{
    switch (dtype) {
    case ACL_INT8: return ((const int8_t *)data)[index];
    case ACL_UINT8: return ((const uint8_t *)data)[index];
    case ACL_INT16: return ((const int16_t *)data)[index];
    case ACL_UINT16: return ((const uint16_t *)data)[index];
    case ACL_INT32: return ((const int32_t *)data)[index];
    case ACL_UINT32: return ((const uint32_t *)data)[index];
    case ACL_INT64: return ((const int64_t *)data)[index];
    case ACL_UINT64: return (int64_t)((const uint64_t *)data)[index];
    case ACL_BOOL: return ((const uint8_t *)data)[index] != 0;
    case ACL_FLOAT: case ACL_FLOAT16: case ACL_BF16: case ACL_DOUBLE: case ACL_COMPLEX64: case ACL_COMPLEX128:
        return double_to_int64(aclsim_ops_load(data, dtype, index));
    default: return 0; /* a dtype no operator's checks admit (FP8, INT4...): each load defers to the other */
    }
}

void aclsim_ops_store_int(void *data, aclDataType dtype, int64_t index, int64_t value)
{
    /* Narrowing wraps modulo 2^bits, as a C cast (and PyTorch's integer copy) does. */
    switch (dtype) {
    case ACL_INT8: ((int8_t *)data)[index] = (int8_t)(uint8_t)value; break;
    case ACL_UINT8: ((uint8_t *)data)[index] = (uint8_t)value; break;
    case ACL_INT16: ((int16_t *)data)[index] = (int16_t)(uint16_t)value; break;
    case ACL_UINT16: ((uint16_t *)data)[index] = (uint16_t)value; break;
    case ACL_INT32: ((int32_t *)data)[index] = (int32_t)(uint32_t)value; break;
    case ACL_UINT32: ((uint32_t *)data)[index] = (uint32_t)value; break;
    case ACL_INT64: ((int64_t *)data)[index] = value; break;
    case ACL_UINT64: ((uint64_t *)data)[index] = (uint64_t)value; break;
    case ACL_BOOL: ((uint8_t *)data)[index] = value != 0; break;
    case ACL_FLOAT: case ACL_FLOAT16: case ACL_BF16: case ACL_DOUBLE: case ACL_COMPLEX64: case ACL_COMPLEX128:
        aclsim_ops_store(data, dtype, index, (double)value);
        break;
    default: break; /* a dtype no operator's checks admit (FP8, INT4...): nothing is written (not a loop) */
    }
}

void aclsim_ops_load_complex(const void *data, aclDataType dtype, int64_t index, double out[2])
{
    switch (dtype) {
    case ACL_COMPLEX64:
        out[0] = ((const float *)data)[2 * index];
        out[1] = ((const float *)data)[2 * index + 1];
        break;
    case ACL_COMPLEX128:
        out[0] = ((const double *)data)[2 * index];
        out[1] = ((const double *)data)[2 * index + 1];
        break;
    default:
        out[0] = aclsim_ops_load(data, dtype, index);
        out[1] = 0.0;
        break;
    }
}

void aclsim_ops_store_complex(void *data, aclDataType dtype, int64_t index, const double value[2])
{
    switch (dtype) {
    case ACL_COMPLEX64:
        ((float *)data)[2 * index] = (float)value[0];
        ((float *)data)[2 * index + 1] = (float)value[1];
        break;
    case ACL_COMPLEX128:
        ((double *)data)[2 * index] = value[0];
        ((double *)data)[2 * index + 1] = value[1];
        break;
    default:
        aclsim_ops_store(data, dtype, index, value[0]);
        break;
    }
}

/* ---------------------------------------------------------------- views */

int64_t aclsim_ops_numel(const aclTensor *t)
{
    int64_t n = 1;
    for (uint64_t i = 0; i < t->ndim; ++i) {
        n *= t->view_dims[i];
    }
    return n;
}

bool aclsim_ops_is_empty(const aclTensor *t)
{
    for (uint64_t i = 0; i < t->ndim; ++i) {
        if (t->view_dims[i] == 0) {
            return true;
        }
    }
    return false;
}

bool aclsim_ops_same_shape(const aclTensor *a, const aclTensor *b)
{
    if (a->ndim != b->ndim) {
        return false;
    }
    for (uint64_t i = 0; i < a->ndim; ++i) {
        if (a->view_dims[i] != b->view_dims[i]) {
            return false;
        }
    }
    return true;
}

bool aclsim_ops_has_negative_dim(const aclTensor *t)
{
    for (uint64_t i = 0; i < t->ndim; ++i) {
        if (t->view_dims[i] < 0) {
            return true;
        }
    }
    return false;
}

int64_t aclsim_ops_dim(const aclTensor *t, int i)
{
    int64_t k = i < 0 ? (int64_t)t->ndim + i : i;
    return t->view_dims[k];
}

bool aclsim_ops_is_contiguous(const aclTensor *t)
{
    int64_t expected = 1;
    for (uint64_t i = t->ndim; i-- > 0;) {
        if (t->view_dims[i] != 1 && t->strides[i] != expected) {
            return false;
        }
        expected *= t->view_dims[i];
    }
    return true;
}

void aclsim_ops_for_each_row(const aclTensor *t, aclsim_ops_row_fn fn, void *ctx)
{
    if (aclsim_ops_is_empty(t)) {
        return;
    }
    if (t->ndim == 0) {
        fn(ctx, t->offset, 1, 1);
        return;
    }
    int last = (int)t->ndim - 1;
    int64_t count = t->view_dims[last];
    int64_t step = t->strides[last];
    int64_t index[ACLSIM_MAX_DIMS] = {0};
    int64_t first = t->offset;
    for (;;) {
        fn(ctx, first, step, count);
        int d = last - 1;
        while (d >= 0) {
            index[d] += 1;
            first += t->strides[d];
            if (index[d] < t->view_dims[d]) {
                break;
            }
            first -= index[d] * t->strides[d];
            index[d] = 0;
            --d;
        }
        if (d < 0) {
            return;
        }
    }
}

typedef struct {
    void *data;
    aclDataType dtype;
    void *buffer;   /* contiguous side, advanced row by row */
} copy_ctx;

void aclsim_ops_gather_f32(const void *data, aclDataType dtype, int64_t first, int64_t step, int64_t count,
                           float *dst)
{
    switch (dtype) {
    case ACL_FLOAT: {
        const float *src = data;
        for (int64_t j = 0; j < count; ++j) {
            dst[j] = src[first + j * step];
        }
        break;
    }
    case ACL_FLOAT16: {
        const uint16_t *src = data;
        for (int64_t j = 0; j < count; ++j) {
            dst[j] = aclsim_hb_half_to_float(src[first + j * step]);
        }
        break;
    }
    case ACL_BF16: {
        const uint16_t *src = data;
        for (int64_t j = 0; j < count; ++j) {
            dst[j] = aclsim_hb_bf16_to_float(src[first + j * step]);
        }
        break;
    }
    default:
        for (int64_t j = 0; j < count; ++j) {
            dst[j] = (float)aclsim_ops_load(data, dtype, first + j * step);
        }
        break;
    }
}

static void read_f32_row(void *p, int64_t first, int64_t step, int64_t count)
{
    copy_ctx *c = p;
    float *dst = c->buffer;
    aclsim_ops_gather_f32(c->data, c->dtype, first, step, count, dst);
    c->buffer = dst + count;
}

#if OPS_F16C
/* A contiguous row of floats to FLOAT16 with the F16C conversion (8 a instruction, round to
 * nearest even): the same bits as aclsim_hb_float_to_half for every one of the 2^32 float bit
 * patterns (NaNs made quiet with their top payload bits, subnormals, overflow to Inf), compared
 * exhaustively by a C program on GCC 12 / x86-64 (tests/sim/test_float_bits.py compares the
 * simulator's Cast with the runtime's aclFloatToFloat16 over a stride of all exponents).  The
 * portable loop, SSE2-vectorised, took 52% of a cast vgg conv3 (8,256,56,56) FLOAT -> FLOAT16
 * on device tensors; interleaved A/B, medians of 40, same sha256 (NaN, sNaN, Inf, overflow,
 * subnormals in it): 24.9 -> 9.5 ms on device tensors, 31.5 -> 16.2 ms from a NumPy array. */
__attribute__((target("avx,f16c"))) static void floats_to_halves_f16c(const float *restrict src, uint16_t *restrict dst,
                                                                    int64_t count)
{
    int64_t j = 0;
    for (; j + 8 <= count; j += 8) {
        __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(src + j), _MM_FROUND_TO_NEAREST_INT);
        _mm_storeu_si128((__m128i *)(dst + j), h);
    }
    for (; j < count; ++j) {
        dst[j] = aclsim_hb_float_to_half(src[j]);
    }
}

/* The CPU has AVX and F16C (asked once: 1 yes, -1 no). */
static int has_f16c(void)
{
    static _Atomic int known;
    int k = known;
    if (k == 0) {
        __builtin_cpu_init();
        k = __builtin_cpu_supports("avx") && __builtin_cpu_supports("f16c") ? 1 : -1;
        known = k;
    }
    return k > 0;
}
#endif

static void write_f32_row(void *p, int64_t first, int64_t step, int64_t count)
{
    copy_ctx *c = p;
    const float *src = c->buffer;
    switch (c->dtype) {
    case ACL_FLOAT: {
        float *dst = c->data;
        for (int64_t j = 0; j < count; ++j) {
            dst[first + j * step] = src[j];
        }
        break;
    }
    case ACL_FLOAT16: {
        uint16_t *dst = c->data;
#if OPS_F16C
        if (step == 1 && has_f16c()) {
            floats_to_halves_f16c(src, dst + first, count);
            break;
        }
#endif
        for (int64_t j = 0; j < count; ++j) {
            dst[first + j * step] = aclsim_hb_float_to_half(src[j]);
        }
        break;
    }
    case ACL_BF16: {
        uint16_t *dst = c->data;
        for (int64_t j = 0; j < count; ++j) {
            dst[first + j * step] = aclsim_hb_float_to_bf16(src[j]);
        }
        break;
    }
    default:
        for (int64_t j = 0; j < count; ++j) {
            aclsim_ops_store(c->data, c->dtype, first + j * step, src[j]);
        }
        break;
    }
    c->buffer = (float *)src + count;
}

static void write_f64_row(void *p, int64_t first, int64_t step, int64_t count)
{
    copy_ctx *c = p;
    const double *src = c->buffer;
    if (c->dtype == ACL_FLOAT) {
        /* The common case without a dtype dispatch per element: a vectorisable loop. */
        float *dst = (float *)c->data + first;
        for (int64_t j = 0; j < count; ++j) {
            dst[j * step] = (float)src[j];
        }
    } else {
        for (int64_t j = 0; j < count; ++j) {
            aclsim_ops_store(c->data, c->dtype, first + j * step, src[j]);
        }
    }
    c->buffer = (double *)src + count;
}

static void write_c128_row(void *p, int64_t first, int64_t step, int64_t count)
{
    copy_ctx *c = p;
    const double *src = c->buffer;
    for (int64_t j = 0; j < count; ++j) {
        aclsim_ops_store_complex(c->data, c->dtype, first + j * step, src + 2 * j);
    }
    c->buffer = (double *)src + 2 * count;
}

static void zero_row(void *p, int64_t first, int64_t step, int64_t count)
{
    copy_ctx *c = p;
    size_t size = aclsim_ops_dtype_size(c->dtype);
    unsigned char *base = c->data;
    if (step == 1) { /* a contiguous row: one memset */
        memset(base + first * (int64_t)size, 0, (size_t)count * size);
        return;
    }
    for (int64_t j = 0; j < count; ++j) {
        memset(base + (first + j * step) * (int64_t)size, 0, size);
    }
}

void aclsim_ops_read_f32(const aclTensor *t, float *dst)
{
    copy_ctx c = {t->data, t->dtype, dst};
    aclsim_ops_for_each_row(t, read_f32_row, &c);
}

void aclsim_ops_write_f32(aclTensor *t, const float *src)
{
    copy_ctx c = {t->data, t->dtype, (void *)src};
    aclsim_ops_for_each_row(t, write_f32_row, &c);
}

void aclsim_ops_write_f64(aclTensor *t, const double *src)
{
    copy_ctx c = {t->data, t->dtype, (void *)src};
    aclsim_ops_for_each_row(t, write_f64_row, &c);
}

void aclsim_ops_write_c128(aclTensor *t, const double *src)
{
    copy_ctx c = {t->data, t->dtype, (void *)src};
    aclsim_ops_for_each_row(t, write_c128_row, &c);
}

void aclsim_ops_fill_zero(aclTensor *t)
{
    if (aclsim_ops_is_contiguous(t) && !aclsim_ops_is_empty(t)) { /* the whole view at once */
        memset((char *)t->data + t->offset * (int64_t)aclsim_ops_dtype_size(t->dtype), 0,
               (size_t)aclsim_ops_numel(t) * aclsim_ops_dtype_size(t->dtype));
        return;
    }
    copy_ctx c = {t->data, t->dtype, NULL};
    aclsim_ops_for_each_row(t, zero_row, &c);
}

/* ---------------------------------------------------------------- planes */

void aclsim_ops_nchw_strides(const aclTensor *t, int64_t s[4])
{
    int lead = t->ndim == 4 ? 1 : 0;
    s[0] = lead ? t->strides[0] : 0;
    s[1] = t->strides[lead];
    s[2] = t->strides[lead + 1];
    s[3] = t->strides[lead + 2];
}

void aclsim_ops_scatter_f32(void *data, aclDataType dtype, int64_t first, int64_t step, int64_t count,
                            const float *src)
{
    copy_ctx c = {data, dtype, (void *)src};
    write_f32_row(&c, first, step, count);
}

void aclsim_ops_interleave_phases(float *restrict dst, const float *restrict phases, int64_t w, int64_t sw,
                                  int64_t m)
{
    if (sw == 2) {
        const float *restrict even = phases, *restrict odd = phases + m;
        for (int64_t x = 0; x < w / 2; ++x) { /* vectorised as interleaving */
            dst[2 * x] = even[x];
            dst[2 * x + 1] = odd[x];
        }
        if (w % 2 != 0) {
            dst[w - 1] = even[w / 2];
        }
        return;
    }
    for (int64_t x = 0; x < w; ++x) {
        dst[x] = phases[(x % sw) * m + x / sw];
    }
}

/* The byte range [*lo, *hi) a non-empty view can touch. */
static void view_bytes(const aclTensor *t, uintptr_t *lo, uintptr_t *hi)
{
    int64_t first = t->offset, last = t->offset;
    for (uint64_t i = 0; i < t->ndim; ++i) {
        int64_t span = t->strides[i] * (t->view_dims[i] - 1);
        if (span < 0) {
            first += span;
        } else {
            last += span;
        }
    }
    int64_t size = (int64_t)aclsim_ops_dtype_size(t->dtype);
    *lo = (uintptr_t)t->data + (uintptr_t)(first * size);
    *hi = (uintptr_t)t->data + (uintptr_t)((last + 1) * size);
}

bool aclsim_ops_views_overlap(const aclTensor *a, const aclTensor *b)
{
    if (aclsim_ops_is_empty(a) || aclsim_ops_is_empty(b)) {
        return false;
    }
    uintptr_t a_lo, a_hi, b_lo, b_hi;
    view_bytes(a, &a_lo, &a_hi);
    view_bytes(b, &b_lo, &b_hi);
    return a_lo < b_hi && b_lo < a_hi;
}

typedef struct {
    const unsigned char *data;
    size_t size;
    unsigned char *dst;
} stage_ctx;

static void stage_row(void *p, int64_t first, int64_t step, int64_t count)
{
    stage_ctx *c = p;
    for (int64_t j = 0; j < count; ++j) {
        memcpy(c->dst, c->data + (first + j * step) * (int64_t)c->size, c->size);
        c->dst += c->size;
    }
}

bool aclsim_ops_stage(const char *api, const aclTensor *in, aclTensor *staged, void **buffer)
{
    size_t size = aclsim_ops_dtype_size(in->dtype);
    uint64_t count = (uint64_t)aclsim_ops_numel(in);
    *buffer = count <= SIZE_MAX / size ? malloc((size_t)count * size) : NULL;
    if (*buffer == NULL) {
        aclsim_set_error("%s: the output overlaps an input; no host memory to copy the input (%llu bytes) first",
                         api, (unsigned long long)(count * size));
        return false;
    }
    stage_ctx c = {in->data, size, *buffer};
    aclsim_ops_for_each_row(in, stage_row, &c);
    *staged = *in;
    staged->data = *buffer;
    staged->offset = 0;
    int64_t stride = 1;
    for (uint64_t i = in->ndim; i-- > 0;) {
        staged->strides[i] = stride;
        stride *= in->view_dims[i];
    }
    return true;
}

/* ---------------------------------------------------------------- messages */

aclsim_ops_text aclsim_ops_int_list(const int64_t *v, uint64_t n)
{
    aclsim_ops_text text;
    size_t used = 0;
    text.s[used++] = '[';
    text.s[used] = '\0';
    for (uint64_t i = 0; i < n; ++i) {
        int w = snprintf(text.s + used, sizeof text.s - used, i ? ", %lld" : "%lld", (long long)v[i]);
        if (w < 0 || (size_t)w >= sizeof text.s - used - 5) {
            /* Out of room: end with an ellipsis instead of a truncated number. */
            snprintf(text.s + used, sizeof text.s - used, ", ...]");
            return text;
        }
        used += (size_t)w;
    }
    snprintf(text.s + used, sizeof text.s - used, "]");
    return text;
}

aclsim_ops_text aclsim_ops_shape(const aclTensor *t)
{
    return aclsim_ops_int_list(t->view_dims, t->ndim);
}

aclsim_ops_text aclsim_ops_ints(const aclIntArray *a)
{
    if (a == NULL) {
        aclsim_ops_text text;
        snprintf(text.s, sizeof text.s, "NULL");
        return text;
    }
    return aclsim_ops_int_list(a->values, a->size);
}

/* ---------------------------------------------------------------- phase-1 checks */

static aclnnStatus report(aclnnStatus status, const char *api, const char *fmt, va_list args)
{
    char message[768];
    vsnprintf(message, sizeof message, fmt, args);
    aclsim_set_error("%s: %s", api, message);
    return status;
}

aclnnStatus aclsim_ops_invalid(const char *api, const char *fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    aclnnStatus status = report(ACLNN_ERR_PARAM_INVALID, api, fmt, args);
    va_end(args);
    return status;
}

aclnnStatus aclsim_ops_nullptr(const char *api, const char *fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    aclnnStatus status = report(ACLNN_ERR_PARAM_NULLPTR, api, fmt, args);
    va_end(args);
    return status;
}

/* The product of |view dims| is at most ACLSIM_OPS_MAX_ELEMENTS (so aclsim_ops_numel and the
 * workspace sizes derived from it cannot overflow). */
static bool view_size_ok(const aclTensor *t)
{
    uint64_t n = 1;
    for (uint64_t i = 0; i < t->ndim; ++i) {
        int64_t d = t->view_dims[i];
        uint64_t m = d < 0 ? (uint64_t)0 - (uint64_t)d : (uint64_t)d;
        if (m == 0) {
            return true;
        }
        if (__builtin_mul_overflow(n, m, &n) || n > ACLSIM_OPS_MAX_ELEMENTS) {
            /* keep looking for a 0 dim: an empty view is always fine */
            n = ACLSIM_OPS_MAX_ELEMENTS + 1;
        }
    }
    return n <= ACLSIM_OPS_MAX_ELEMENTS;
}

/* The i-th name of a comma-separated list, without surrounding blanks, into out. */
static void nth_name(const char *names, size_t i, char *out, size_t size)
{
    const char *p = names;
    for (; i > 0 && *p != '\0'; ++p) {
        if (*p == ',') {
            --i;
        }
    }
    while (*p == ' ') {
        ++p;
    }
    size_t len = strcspn(p, ",");
    while (len > 0 && p[len - 1] == ' ') {
        --len;
    }
    if (len >= size) {
        len = size - 1;
    }
    memcpy(out, p, len);
    out[len] = '\0';
}

aclnnStatus aclsim_ops_check_handles(const char *api, const char *names, const aclsim_ops_handle *handles, size_t n)
{
    static const struct {
        const char *type, *creator;
    } kinds[] = {
        [ACLSIM_OPS_TENSOR] = {"aclTensor", "aclCreateTensor"},
        [ACLSIM_OPS_INT_ARRAY] = {"aclIntArray", "aclCreateIntArray"},
        [ACLSIM_OPS_BOOL_ARRAY] = {"aclBoolArray", "aclCreateBoolArray"},
        [ACLSIM_OPS_FLOAT_ARRAY] = {"aclFloatArray", "aclCreateFloatArray"},
        [ACLSIM_OPS_SCALAR] = {"aclScalar", "aclCreateScalar"},
    };
    for (size_t i = 0; i < n; ++i) {
        const void *h = handles[i].handle;
        bool live = true;
        switch (handles[i].kind) {
        case ACLSIM_OPS_TENSOR: live = aclsim_is_live_tensor(h); break;
        case ACLSIM_OPS_INT_ARRAY: live = aclsim_is_live_int_array(h); break;
        case ACLSIM_OPS_BOOL_ARRAY: live = aclsim_is_live_bool_array(h); break;
        case ACLSIM_OPS_FLOAT_ARRAY: live = aclsim_is_live_float_array(h); break;
        case ACLSIM_OPS_SCALAR: live = aclsim_is_live_scalar(h); break;
        }
        if (h == NULL) {
            continue;
        }
        char name[64];
        if (!live) {
            nth_name(names, i, name, sizeof name);
            return aclsim_ops_invalid(api, "%s (%p) is not a live %s: it was destroyed, or was never created by %s "
                                      "(undefined behaviour on CANN)",
                                      name, h, kinds[handles[i].kind].type, kinds[handles[i].kind].creator);
        }
    }
    return ACLNN_SUCCESS;
}

aclnnStatus aclsim_ops_check_not_null(const char *api, const char *name, const void *p)
{
    if (p != NULL) {
        return ACLNN_SUCCESS;
    }
    return aclsim_ops_nullptr(api, "%s must not be NULL", name);
}

aclnnStatus aclsim_ops_check_dtype(const char *api, const char *name, const aclTensor *t,
                                   const aclDataType *allowed, size_t n_allowed)
{
    char list[256];
    size_t used = 0;
    list[0] = '\0';
    for (size_t i = 0; i < n_allowed; ++i) {
        if (t->dtype == allowed[i]) {
            return ACLNN_SUCCESS;
        }
        int w = snprintf(list + used, sizeof list - used, i ? ", %s" : "%s", aclsim_ops_dtype_name(allowed[i]));
        if (w > 0 && (size_t)w < sizeof list - used) {
            used += (size_t)w;
        }
    }
    return aclsim_ops_invalid(api, "%s dtype must be one of [%s], got %s", name, list,
                              aclsim_ops_dtype_name(t->dtype));
}

aclnnStatus aclsim_ops_check_same_dtype(const char *api, const char *name_a, const aclTensor *a,
                                        const char *name_b, const aclTensor *b)
{
    if (a->dtype == b->dtype) {
        return ACLNN_SUCCESS;
    }
    return aclsim_ops_invalid(api, "%s dtype must equal %s dtype, got %s and %s", name_a, name_b,
                              aclsim_ops_dtype_name(a->dtype), aclsim_ops_dtype_name(b->dtype));
}

aclnnStatus aclsim_ops_check_same_shape(const char *api, const char *name_a, const aclTensor *a,
                                        const char *name_b, const aclTensor *b)
{
    if (aclsim_ops_same_shape(a, b)) {
        return ACLNN_SUCCESS;
    }
    return aclsim_ops_invalid(api, "%s shape must equal %s shape, got %s and %s", name_a, name_b,
                              aclsim_ops_shape(a).s, aclsim_ops_shape(b).s);
}

aclnnStatus aclsim_ops_check_array_size(const char *api, const char *name, const aclIntArray *a, uint64_t size)
{
    if (a->size == size) {
        return ACLNN_SUCCESS;
    }
    return aclsim_ops_invalid(api, "%s must have %llu elements, got %s", name, (unsigned long long)size,
                              aclsim_ops_ints(a).s);
}

aclnnStatus aclsim_ops_check_array_min(const char *api, const char *name, const aclIntArray *a, int64_t floor,
                                       bool strict)
{
    for (uint64_t i = 0; i < a->size; ++i) {
        int64_t v = a->values[i];
        if (strict ? v <= floor : v < floor) {
            return aclsim_ops_invalid(api, "%s values must be %s %lld, got %s", name, strict ? ">" : ">=",
                                      (long long)floor, aclsim_ops_ints(a).s);
        }
    }
    return ACLNN_SUCCESS;
}

aclnnStatus aclsim_ops_check_memory(const char *api, const char *name, const aclTensor *t)
{
    /* After the operator's own checks (so an argument CANN refuses is reported for itself) and
     * before any workspace size is computed from the view. */
    if (!view_size_ok(t)) {
        return aclsim_ops_invalid(api, "%s shape %s has more than 2^56 elements, beyond what the simulator "
                                  "computes (its workspace could not be allocated)",
                                  name, aclsim_ops_shape(t).s);
    }
    if (aclsim_tensor_memory_ok(t)) {
        return ACLNN_SUCCESS;
    }
    return aclsim_ops_invalid(api,
                              "%s data is not device memory or its view exceeds its allocation "
                              "(shape %s, offset %lld, data %p)",
                              name, aclsim_ops_shape(t).s, (long long)t->offset, t->data);
}

aclnnStatus aclsim_ops_kernel_check_memory(const char *api, const aclOpExecutor *ex, unsigned inputs_read,
                                           int n_outputs)
{
    for (int i = 0; inputs_read >> i; ++i) {
        if (!((inputs_read >> i) & 1u)) {
            continue;
        }
        const aclTensor *t = aclsim_executor_input(ex, i);
        if (t != NULL && !aclsim_tensor_memory_ok(t)) {
            aclsim_set_error("%s: input %d no longer lies in device memory (was its address changed?)", api, i);
            return ACLSIM_OPS_KERNEL_FAULT;
        }
    }
    for (int i = 0; i < n_outputs; ++i) {
        const aclTensor *t = aclsim_executor_output(ex, i);
        if (t != NULL && !aclsim_tensor_memory_ok(t)) {
            aclsim_set_error("%s: output %d no longer lies in device memory (was its address changed?)", api, i);
            return ACLSIM_OPS_KERNEL_FAULT;
        }
    }
    return ACLNN_SUCCESS;
}

aclnnStatus aclsim_ops_noop_kernel(aclOpExecutor *executor, void *workspace)
{
    (void)executor;
    (void)workspace;
    return ACLNN_SUCCESS;
}

aclnnStatus aclsim_ops_finish(const char *op_name, aclsim_kernel_fn run, uint64_t workspace_size,
                              const void *params, size_t params_size,
                              const aclTensor *const *inputs, int n_inputs,
                              const aclTensor *const *outputs, int n_outputs,
                              uint64_t *workspace_size_out, aclOpExecutor **executor)
{
    aclOpExecutor *ex = aclsim_executor_new(op_name, run, workspace_size);
    if (ex == NULL) {
        return ACLNN_ERR_INNER_CREATE_EXECUTOR;
    }
    bool ok = true;
    if (params != NULL && params_size > 0) {
        void *blob = aclsim_executor_params(ex, params_size);
        ok = blob != NULL;
        if (ok) {
            memcpy(blob, params, params_size);
        }
    }
    for (int i = 0; ok && i < n_inputs; ++i) {
        ok = aclsim_executor_add_input(ex, inputs[i]) == i;
    }
    for (int i = 0; ok && i < n_outputs; ++i) {
        ok = aclsim_executor_add_output(ex, outputs[i]) == i;
    }
    if (!ok) {
        aclsim_executor_discard(ex);
        return ACLNN_ERR_INNER_CREATE_EXECUTOR;
    }
    *workspace_size_out = workspace_size;
    *executor = ex;
    return ACLNN_SUCCESS;
}
