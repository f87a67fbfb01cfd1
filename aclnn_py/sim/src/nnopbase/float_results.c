/*
 * The float overflow hook every kernel's results go through (executor.c's run_kernel calls
 * it once per output after the kernel ran, never inside a kernel's loops): what the device
 * does with an Inf or NaN result in the saturation mode the runtime reports
 * (aclsim_overflow_mode), and the overflow it records for aclrtGetOverflowStatus & co.
 *   Inf/NaN mode:    the result stays; an Inf/NaN made from finite inputs is an overflow.
 *   saturation mode: Inf becomes the largest finite value of its sign, NaN becomes 0 (CANN's
 *                    aclrtFloatOverflowMode page), and it is an overflow as above.
 * Only the elements of the tensor's view are read: the rest of its storage (device memory
 * never written is 0xFF, a NaN pattern) is none of the kernel's doing.
 */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "float_results.h"

/* Largest finite float16 and bfloat16, and their exponent masks (all ones: Inf or NaN). */
#define F16_EXP 0x7c00u
#define F16_MAN 0x03ffu
#define F16_MAX 0x7bffu
#define BF16_EXP 0x7f80u
#define BF16_MAN 0x007fu
#define BF16_MAX 0x7f7fu

/* 1 when dtype is a floating-point type the hook reads. */
static int is_float(aclDataType dtype)
{
    return dtype == ACL_FLOAT || dtype == ACL_FLOAT16 || dtype == ACL_BF16 || dtype == ACL_DOUBLE;
}

/* Checks (and in saturation mode fixes) one element; 1 if it was Inf or NaN. */
static int element(char *p, aclDataType dtype, int saturate)
{
    switch (dtype) {
    case ACL_FLOAT: {
        float v;
        memcpy(&v, p, sizeof v);
        if (isfinite(v)) {
            return 0;
        }
        if (saturate) {
            v = isnan(v) ? 0.0f : (v > 0 ? FLT_MAX : -FLT_MAX);
            memcpy(p, &v, sizeof v);
        }
        return 1;
    }
    case ACL_DOUBLE: {
        double v;
        memcpy(&v, p, sizeof v);
        if (isfinite(v)) {
            return 0;
        }
        if (saturate) {
            v = isnan(v) ? 0.0 : (v > 0 ? DBL_MAX : -DBL_MAX);
            memcpy(p, &v, sizeof v);
        }
        return 1;
    }
    default: {
        uint16_t h;
        memcpy(&h, p, sizeof h);
        uint16_t exp = dtype == ACL_FLOAT16 ? F16_EXP : BF16_EXP;
        uint16_t man = dtype == ACL_FLOAT16 ? F16_MAN : BF16_MAN;
        uint16_t max = dtype == ACL_FLOAT16 ? F16_MAX : BF16_MAX;
        if ((h & exp) != exp) {
            return 0;
        }
        if (saturate) {
            h = (h & man) != 0 ? 0 : (uint16_t)((h & 0x8000u) | max);
            memcpy(p, &h, sizeof h);
        }
        return 1;
    }
    }
}

/* 1 if any of the n contiguous elements at p is Inf or NaN: a test of the exponent bits alone,
 * branch-free so that the compiler vectorises it (the hook reads every output of every kernel). */
static int row_nonfinite(const char *p, aclDataType dtype, int64_t n)
{
    int any = 0;
    if (dtype == ACL_FLOAT) {
        for (int64_t i = 0; i < n; i++) {
            uint32_t v;
            memcpy(&v, p + i * 4, sizeof v);
            any |= (v & 0x7f800000u) == 0x7f800000u;
        }
    } else if (dtype == ACL_DOUBLE) {
        for (int64_t i = 0; i < n; i++) {
            uint64_t v;
            memcpy(&v, p + i * 8, sizeof v);
            any |= (v & 0x7ff0000000000000ull) == 0x7ff0000000000000ull;
        }
    } else {
        uint16_t exp = dtype == ACL_FLOAT16 ? F16_EXP : BF16_EXP;
        for (int64_t i = 0; i < n; i++) {
            uint16_t v;
            memcpy(&v, p + i * 2, sizeof v);
            any |= (v & exp) == exp;
        }
    }
    return any;
}

int nn_nonfinite(const aclTensor *t, void *data, int saturate)
{
    if (t == NULL || data == NULL || !is_float(t->dtype)) {
        return 0;
    }
    int64_t total = 1;
    for (uint64_t d = 0; d < t->ndim; d++) {
        total *= t->view_dims[d];
    }
    if (total <= 0) {
        return 0;
    }
    size_t elem = aclDataTypeSize(t->dtype);
    int64_t idx[ACLSIM_MAX_DIMS] = {0};
    int64_t at = t->offset; /* element offset of idx */
    int found = 0;
    /* The trailing dims whose elements are contiguous, merged into rows. */
    int64_t row = 1, outer = (int64_t)t->ndim;
    while (outer > 0 && (t->view_dims[outer - 1] == 1 || t->strides[outer - 1] == row)) {
        row *= t->view_dims[--outer];
    }
    if (row > 1) {
        /* Rows of contiguous elements: each tested at once, and only a row holding an Inf or
         * NaN walked element by element (to saturate it). */
        for (int64_t n = 0; n < total; n += row) {
            char *first = (char *)data + at * (int64_t)elem;
            if (row_nonfinite(first, t->dtype, row)) {
                if (!saturate) {
                    return 1;
                }
                for (int64_t i = 0; i < row; i++) {
                    found |= element(first + i * (int64_t)elem, t->dtype, saturate);
                }
            }
            for (int64_t d = outer - 1; d >= 0; d--) {
                if (++idx[d] < t->view_dims[d]) {
                    at += t->strides[d];
                    break;
                }
                at -= (idx[d] - 1) * t->strides[d];
                idx[d] = 0;
            }
        }
        return found;
    }
    for (int64_t n = 0; n < total; n++) {
        found |= element((char *)data + at * (int64_t)elem, t->dtype, saturate);
        if (found && !saturate) {
            return 1;
        }
        for (int64_t d = (int64_t)t->ndim - 1; d >= 0; d--) {
            if (++idx[d] < t->view_dims[d]) {
                at += t->strides[d];
                break;
            }
            at -= (idx[d] - 1) * t->strides[d];
            idx[d] = 0;
        }
    }
    return found;
}

/* The bytes of storage a tensor's elements lie in, [*lo, *hi). */
static void extent(const aclTensor *t, const void *data, uintptr_t *lo, uintptr_t *hi)
{
    int64_t first = t->offset, last = t->offset;
    for (uint64_t d = 0; d < t->ndim; d++) {
        int64_t span = (t->view_dims[d] - 1) * t->strides[d];
        if (span < 0) {
            first += span;
        } else {
            last += span;
        }
    }
    size_t elem = aclDataTypeSize(t->dtype);
    *lo = (uintptr_t)data + (uintptr_t)(first * (int64_t)elem);
    *hi = (uintptr_t)data + (uintptr_t)((last + 1) * (int64_t)elem);
}

int nn_overlaps(const aclTensor *a, const void *a_data, const aclTensor *b, const void *b_data)
{
    if (a == NULL || b == NULL || a_data == NULL || b_data == NULL) {
        return 0;
    }
    uintptr_t alo, ahi, blo, bhi;
    extent(a, a_data, &alo, &ahi);
    extent(b, b_data, &blo, &bhi);
    return alo < bhi && blo < ahi;
}
