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
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include "float_results.h"
#include "../kernels/parallel.h"

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

/* The scan below compiled for AVX2 too (ACLSIM_AVX2_CLONES): AVX2 tests twice the elements per
 * instruction, and a kernel's fused test of its pieces (aclsim_kernel_outputs_finite) cost 0.28
 * ms per 8 MB of FLOAT with the baseline's SSE2, 0.08 ms with AVX2 (C, pieces of 2048 in L1). */

/* 1 if any of the n contiguous elements at p is Inf or NaN: a test of the exponent bits alone,
 * branch-free so that the compiler vectorises it (the hook reads every output of every kernel).
 * (bits & exponent mask) + the exponent's lowest bit carries into the bit above the exponent
 * exactly when the exponent is all ones; those carries are or-ed together. */
ACLSIM_AVX2_CLONES static int row_nonfinite(const char *p, aclDataType dtype, int64_t n)
{
    if (dtype == ACL_FLOAT) {
        uint32_t acc = 0;
        for (int64_t i = 0; i < n; i++) {
            float v;
            memcpy(&v, p + i * 4, sizeof v);
            acc |= aclsim_f32_nonfinite_bits(v);
        }
        return (int)(acc >> 31);
    }
    if (dtype == ACL_DOUBLE) {
        uint64_t acc = 0;
        for (int64_t i = 0; i < n; i++) {
            uint64_t v;
            memcpy(&v, p + i * 8, sizeof v);
            acc |= (v & 0x7ff0000000000000ull) + 0x0010000000000000ull;
        }
        return (int)(acc >> 63);
    }
    uint16_t exp = dtype == ACL_FLOAT16 ? F16_EXP : BF16_EXP;
    uint16_t low = (uint16_t)(exp & (uint16_t)-exp); /* the exponent's lowest bit */
    uint16_t acc = 0;
    for (int64_t i = 0; i < n; i++) {
        uint16_t v;
        memcpy(&v, p + i * 2, sizeof v);
        acc |= (uint16_t)((v & exp) + low);
    }
    return acc >> 15;
}

int aclsim_nonfinite_run(const void *data, aclDataType dtype, int64_t first, int64_t stride, int64_t n)
{
    if (data == NULL || !is_float(dtype) || n <= 0) {
        return 0;
    }
    size_t elem = aclDataTypeSize(dtype);
    const char *p = (const char *)data + first * (int64_t)elem;
    if (stride == 1) {
        return row_nonfinite(p, dtype, n);
    }
    int any = 0;
    for (int64_t i = 0; i < n && !any; i++) {
        any = row_nonfinite(p + i * stride * (int64_t)elem, dtype, 1);
    }
    return any;
}

/* Elements of one item of the split scan: a row longer than this is several items. */
#define SCAN_PIECE ((int64_t)1 << 16)

/* The rows of contiguous elements of a tensor's view, for the shares of aclsim_parallel: item
 * k is piece k % pieces of row k / pieces. */
typedef struct {
    const aclTensor *t;
    char *data;
    size_t elem;
    int64_t row, outer; /* elements per row; the dims [0, outer) walk the rows */
    int64_t pieces;     /* items per row */
    int saturate;
    atomic_int any;     /* an item held an Inf or NaN (read by the others to stop early unless saturating) */
} row_job;

static void scan_rows(void *ctx, int64_t begin, int64_t end, int worker)
{
    (void)worker;
    row_job *j = ctx;
    const aclTensor *t = j->t;
    int64_t idx[ACLSIM_MAX_DIMS] = {0};
    int64_t at = t->offset, rest = begin / j->pieces;
    for (int64_t d = j->outer - 1; d >= 0; d--) { /* the first row's index and offset */
        idx[d] = rest % t->view_dims[d];
        rest /= t->view_dims[d];
        at += idx[d] * t->strides[d];
    }
    int found = 0;
    for (int64_t item = begin; item < end;) {
        if (!j->saturate && (found || atomic_load_explicit(&j->any, memory_order_relaxed))) {
            break;
        }
        int64_t piece = item % j->pieces;
        int64_t upto = j->pieces - piece < end - item ? j->pieces : piece + (end - item);
        int64_t lo = piece * SCAN_PIECE, hi = upto * SCAN_PIECE < j->row ? upto * SCAN_PIECE : j->row;
        char *first = j->data + (at + lo) * (int64_t)j->elem;
        if (row_nonfinite(first, t->dtype, hi - lo)) {
            found = 1;
            for (int64_t i = 0; j->saturate && i < hi - lo; i++) {
                (void)element(first + i * (int64_t)j->elem, t->dtype, 1);
            }
        }
        item += upto - piece;
        if (upto < j->pieces) {
            break; /* the share ends inside this row */
        }
        for (int64_t d = j->outer - 1; d >= 0; d--) {
            if (++idx[d] < t->view_dims[d]) {
                at += t->strides[d];
                break;
            }
            at -= (idx[d] - 1) * t->strides[d];
            idx[d] = 0;
        }
    }
    if (found) {
        atomic_store_explicit(&j->any, 1, memory_order_relaxed);
    }
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
    /* The trailing dims whose elements are contiguous, merged into rows. */
    int64_t row = 1, outer = (int64_t)t->ndim;
    while (outer > 0 && (t->view_dims[outer - 1] == 1 || t->strides[outer - 1] == row)) {
        row *= t->view_dims[--outer];
    }
    if (row > 1) {
        /* Rows of contiguous elements: each tested at once, and only a row holding an Inf or
         * NaN walked element by element (to saturate it); rows shared out to the kernel threads
         * when there are bytes enough (each row is read, and fixed, by one thread). */
        int64_t pieces = (row + SCAN_PIECE - 1) / SCAN_PIECE, items = total / row * pieces;
        row_job j = {t, data, elem, row, outer, pieces, saturate, 0};
        aclsim_parallel(items, aclsim_byte_workers(items, total * (int64_t)elem), scan_rows, &j);
        return atomic_load_explicit(&j.any, memory_order_relaxed);
    }
    int64_t idx[ACLSIM_MAX_DIMS] = {0};
    int64_t at = t->offset; /* element offset of idx */
    int found = 0;
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
