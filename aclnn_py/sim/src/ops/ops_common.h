/*
 * What the five operator files share: element types and their conversions, walking a
 * strided view, shape text for error messages, and the phase-1 check helpers.
 *
 * Everything here is internal to each operator library (hidden visibility, prefix aclsim_ops_).
 * Conventions of the operator files:
 *   - phase 1 reports the first failing check with aclsim_set_error() and returns its status;
 *     messages name the API, the parameter, the rule and the values;
 *   - a kernel touches memory only through views validated by aclsim_tensor_memory_ok(),
 *     checked again when it runs (a repeatable executor may have had its addresses changed);
 *   - float16/bfloat16 are computed in float32, float32 in float32 with double reductions.
 */
#ifndef ACLSIM_OPS_COMMON_H
#define ACLSIM_OPS_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../sim_internal.h"

#define ACLSIM_OPS_API __attribute__((visibility("hidden")))

/* What a kernel returns when it refuses to run (the stream then reports 507015). */
#define ACLSIM_OPS_KERNEL_FAULT 507015

/* ---------------------------------------------------------------- element types */

ACLSIM_OPS_API size_t aclsim_ops_dtype_size(aclDataType dtype);
ACLSIM_OPS_API const char *aclsim_ops_dtype_name(aclDataType dtype);
ACLSIM_OPS_API const char *aclsim_ops_format_name(aclFormat format);
ACLSIM_OPS_API bool aclsim_ops_is_complex(aclDataType dtype);
ACLSIM_OPS_API bool aclsim_ops_is_floating(aclDataType dtype);
ACLSIM_OPS_API bool aclsim_ops_is_integral(aclDataType dtype); /* bool excluded */
/* CANN's CanCast: complex -> non-complex no; floating -> integral no; non-bool -> bool no. */
ACLSIM_OPS_API bool aclsim_ops_can_cast(aclDataType from, aclDataType to);
/* A device-private layout (NC1HWC0, FRACTAL_Z, FRACTAL_NZ, ...). */
ACLSIM_OPS_API bool aclsim_ops_is_private_format(aclFormat format);

/* IEEE binary16 and bfloat16 <-> float, round to nearest, ties to even; NaN stays NaN. */
ACLSIM_OPS_API float aclsim_ops_half_to_float(uint16_t h);
ACLSIM_OPS_API uint16_t aclsim_ops_float_to_half(float f);
ACLSIM_OPS_API float aclsim_ops_bf16_to_float(uint16_t b);
ACLSIM_OPS_API uint16_t aclsim_ops_float_to_bf16(float f);

/*
 * One element at data + index * element size.  Real loads of a complex type read the real
 * part; real stores into a complex type write (v, 0).  Stores into 16-bit floats round from
 * float; into integers they truncate toward zero (values are copied from a castable type
 * only, so they fit); into bool they store v != 0.
 */
ACLSIM_OPS_API double aclsim_ops_load(const void *data, aclDataType dtype, int64_t index);
ACLSIM_OPS_API void aclsim_ops_store(void *data, aclDataType dtype, int64_t index, double value);
/* Exact integer copy (int64 beyond 2^53 survives); floating types convert through double. */
ACLSIM_OPS_API int64_t aclsim_ops_load_int(const void *data, aclDataType dtype, int64_t index);
ACLSIM_OPS_API void aclsim_ops_store_int(void *data, aclDataType dtype, int64_t index, int64_t value);
/* Complex as (re, im); a real type loads (v, 0) and stores re. */
ACLSIM_OPS_API void aclsim_ops_load_complex(const void *data, aclDataType dtype, int64_t index, double out[2]);
ACLSIM_OPS_API void aclsim_ops_store_complex(void *data, aclDataType dtype, int64_t index, const double value[2]);

/* ---------------------------------------------------------------- views */

ACLSIM_OPS_API int64_t aclsim_ops_numel(const aclTensor *t); /* product of the view dims */
ACLSIM_OPS_API bool aclsim_ops_is_empty(const aclTensor *t); /* some view dim is 0 */
ACLSIM_OPS_API bool aclsim_ops_same_shape(const aclTensor *a, const aclTensor *b);
ACLSIM_OPS_API bool aclsim_ops_has_negative_dim(const aclTensor *t);
/* View dim i counted from the end when negative (dim(t, -1) is the last). */
ACLSIM_OPS_API int64_t aclsim_ops_dim(const aclTensor *t, int i);
/* The view is row-major contiguous (strides of dims of size 1 do not matter). */
ACLSIM_OPS_API bool aclsim_ops_is_contiguous(const aclTensor *t);

/*
 * Element offsets (from t->data, in elements, offset included) of the view in row-major
 * order, one row of the last dim at a time: for each row, fn(ctx, first, step, count).
 */
typedef void (*aclsim_ops_row_fn)(void *ctx, int64_t first, int64_t step, int64_t count);
ACLSIM_OPS_API void aclsim_ops_for_each_row(const aclTensor *t, aclsim_ops_row_fn fn, void *ctx);

/* The `count` elements data[first + j*step] (in element units), converted to float, into dst. */
ACLSIM_OPS_API void aclsim_ops_gather_f32(const void *data, aclDataType dtype, int64_t first, int64_t step,
                                          int64_t count, float *dst);

/* The whole view, row-major, to/from a contiguous buffer, converting element types. */
ACLSIM_OPS_API void aclsim_ops_read_f32(const aclTensor *t, float *dst);
ACLSIM_OPS_API void aclsim_ops_write_f32(aclTensor *t, const float *src);
ACLSIM_OPS_API void aclsim_ops_write_f64(aclTensor *t, const double *src);
ACLSIM_OPS_API void aclsim_ops_write_c128(aclTensor *t, const double *src); /* (re, im) pairs */
ACLSIM_OPS_API void aclsim_ops_fill_zero(aclTensor *t);

/* ---------------------------------------------------------------- planes
 *
 * The memory-bound operators (pooling, padding, unpooling, fold) compute their output one
 * (H, W) plane at a time, each plane from its own gradOutput plane only, in parallel over the
 * N * C planes (kernels/parallel.h): a single pass reading gradOutput once and writing the
 * output once.  Since each plane's result depends on that plane alone, the result does not
 * depend on the number of threads.
 */

/* A 3-D (C, H, W) or 4-D (N, C, H, W) view's strides as (N, C, H, W); N's is 0 for 3-D. */
ACLSIM_OPS_API void aclsim_ops_nchw_strides(const aclTensor *t, int64_t s[4]);

/* The `count` floats of src into data[first + j*step] (in element units), converted to dtype. */
ACLSIM_OPS_API void aclsim_ops_scatter_f32(void *data, aclDataType dtype, int64_t first, int64_t step, int64_t count,
                                           const float *src);

/* Column phases of a row of `w` floats with column stride sw: kept where sw > 1 and sw <= w
 * (a phased row then takes at most 2 w floats), each phase_len floats long. */
static inline bool aclsim_ops_phased(int64_t w, int64_t sw)
{
    return sw > 1 && sw <= w;
}

static inline int64_t aclsim_ops_phase_len(int64_t w, int64_t sw)
{
    return (w + sw - 1) / sw;
}

/* A row of `w` floats put back together from its column phases: column x of the row is
 * phases[(x % sw) * m + x / sw] (phase r, the columns r, r + sw, ..., one after the other, m
 * apart).  Two phases interleave in one vectorised loop. */
ACLSIM_OPS_API void aclsim_ops_interleave_phases(float *restrict dst, const float *restrict phases, int64_t w,
                                                 int64_t sw, int64_t m);

/* Whether the bytes the two views can touch overlap (an output written plane by plane over an
 * input it overlaps would change the input before it is read). */
ACLSIM_OPS_API bool aclsim_ops_views_overlap(const aclTensor *a, const aclTensor *b);

/* A contiguous copy of the view `in` (same dtype and shape) in *staged, its buffer malloc'ed in
 * *buffer (free() it); for an input its output overlaps.  false (+ kernel message naming `api`)
 * when there is no memory for it. */
ACLSIM_OPS_API bool aclsim_ops_stage(const char *api, const aclTensor *in, aclTensor *staged, void **buffer);

/* ---------------------------------------------------------------- messages */

/* Fixed-size text returned by value, e.g. aclsim_set_error("%s", aclsim_ops_shape(t).s). */
typedef struct {
    char s[200];
} aclsim_ops_text;

ACLSIM_OPS_API aclsim_ops_text aclsim_ops_shape(const aclTensor *t);   /* "[2, 3, 4]" */
ACLSIM_OPS_API aclsim_ops_text aclsim_ops_ints(const aclIntArray *a);  /* "[1, 1]" or "NULL" */
ACLSIM_OPS_API aclsim_ops_text aclsim_ops_int_list(const int64_t *v, uint64_t n);

/* ---------------------------------------------------------------- phase-1 checks */

/*
 * Each returns ACLNN_SUCCESS or the status after setting the error text
 * "<api>: <parameter> ...".  `api` is the phase-1 function name.
 */
/*
 * Every descriptor argument of a phase 1, checked before anything reads it: each non-NULL one
 * must be a live descriptor of its type (created by aclCreateXxx and not destroyed).  A
 * destroyed or foreign pointer is undefined behaviour on CANN (it reads freed memory); here
 * it is ACLNN_ERR_PARAM_INVALID (161002) with a message naming the parameter.  NULL is left
 * to the operator's own checks, which know whether the argument is optional.  (A tensor whose
 * view has more than ACLSIM_OPS_MAX_ELEMENTS elements is refused by aclsim_ops_check_memory,
 * after the operator's checks: with zero or overlapping strides such a view fits in a small
 * allocation, but the float32/float64 copies a workspace holds could not, and their byte
 * counts would overflow.)
 *
 *     ACLSIM_OPS_CHECK_HANDLES(API, gradOutput, self, kernelSize, stride, padding, gradInput);
 *
 * The names in the message are the argument expressions; the kinds come from their C types
 * (at most 12 arguments: add an ACLSIM_OPS_HANDLES_<n> line for more).
 */
#define ACLSIM_OPS_MAX_ELEMENTS ((uint64_t)1 << 56)

typedef enum {
    ACLSIM_OPS_TENSOR,
    ACLSIM_OPS_INT_ARRAY,
    ACLSIM_OPS_BOOL_ARRAY,
    ACLSIM_OPS_FLOAT_ARRAY,
    ACLSIM_OPS_SCALAR,
} aclsim_ops_handle_kind;

typedef struct {
    const void *handle;
    aclsim_ops_handle_kind kind;
} aclsim_ops_handle;

#define ACLSIM_OPS_HANDLE_KIND(p)                                                                                      \
    _Generic((p),                                                                                                      \
        const aclTensor *: ACLSIM_OPS_TENSOR, aclTensor *: ACLSIM_OPS_TENSOR,                                          \
        const aclIntArray *: ACLSIM_OPS_INT_ARRAY, aclIntArray *: ACLSIM_OPS_INT_ARRAY,                                \
        const aclBoolArray *: ACLSIM_OPS_BOOL_ARRAY, aclBoolArray *: ACLSIM_OPS_BOOL_ARRAY,                            \
        const aclFloatArray *: ACLSIM_OPS_FLOAT_ARRAY, aclFloatArray *: ACLSIM_OPS_FLOAT_ARRAY,                        \
        const aclScalar *: ACLSIM_OPS_SCALAR, aclScalar *: ACLSIM_OPS_SCALAR)

#define ACLSIM_OPS_HANDLE_(p) {(const void *)(p), ACLSIM_OPS_HANDLE_KIND(p)}
#define ACLSIM_OPS_HANDLES_1(a) ACLSIM_OPS_HANDLE_(a)
#define ACLSIM_OPS_HANDLES_2(a, ...) ACLSIM_OPS_HANDLE_(a), ACLSIM_OPS_HANDLES_1(__VA_ARGS__)
#define ACLSIM_OPS_HANDLES_3(a, ...) ACLSIM_OPS_HANDLE_(a), ACLSIM_OPS_HANDLES_2(__VA_ARGS__)
#define ACLSIM_OPS_HANDLES_4(a, ...) ACLSIM_OPS_HANDLE_(a), ACLSIM_OPS_HANDLES_3(__VA_ARGS__)
#define ACLSIM_OPS_HANDLES_5(a, ...) ACLSIM_OPS_HANDLE_(a), ACLSIM_OPS_HANDLES_4(__VA_ARGS__)
#define ACLSIM_OPS_HANDLES_6(a, ...) ACLSIM_OPS_HANDLE_(a), ACLSIM_OPS_HANDLES_5(__VA_ARGS__)
#define ACLSIM_OPS_HANDLES_7(a, ...) ACLSIM_OPS_HANDLE_(a), ACLSIM_OPS_HANDLES_6(__VA_ARGS__)
#define ACLSIM_OPS_HANDLES_8(a, ...) ACLSIM_OPS_HANDLE_(a), ACLSIM_OPS_HANDLES_7(__VA_ARGS__)
#define ACLSIM_OPS_HANDLES_9(a, ...) ACLSIM_OPS_HANDLE_(a), ACLSIM_OPS_HANDLES_8(__VA_ARGS__)
#define ACLSIM_OPS_HANDLES_10(a, ...) ACLSIM_OPS_HANDLE_(a), ACLSIM_OPS_HANDLES_9(__VA_ARGS__)
#define ACLSIM_OPS_HANDLES_11(a, ...) ACLSIM_OPS_HANDLE_(a), ACLSIM_OPS_HANDLES_10(__VA_ARGS__)
#define ACLSIM_OPS_HANDLES_12(a, ...) ACLSIM_OPS_HANDLE_(a), ACLSIM_OPS_HANDLES_11(__VA_ARGS__)
#define ACLSIM_OPS_COUNT_(_1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, n, ...) n
#define ACLSIM_OPS_COUNT(...) ACLSIM_OPS_COUNT_(__VA_ARGS__, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0)
#define ACLSIM_OPS_CAT_(a, b) a##b
#define ACLSIM_OPS_CAT(a, b) ACLSIM_OPS_CAT_(a, b)

#define ACLSIM_OPS_CHECK_HANDLES(api, ...)                                                                             \
    do {                                                                                                               \
        static const char handle_names_[] = #__VA_ARGS__;                                                              \
        const aclsim_ops_handle handles_[] = {ACLSIM_OPS_CAT(ACLSIM_OPS_HANDLES_, ACLSIM_OPS_COUNT(__VA_ARGS__))(     \
            __VA_ARGS__)};                                                                                             \
        ACLSIM_OPS_TRY(aclsim_ops_check_handles((api), handle_names_, handles_, sizeof handles_ / sizeof handles_[0])); \
    } while (0)

/* `names` is the comma-separated list of the n argument names. */
ACLSIM_OPS_API aclnnStatus aclsim_ops_check_handles(const char *api, const char *names,
                                                    const aclsim_ops_handle *handles, size_t n);

ACLSIM_OPS_API aclnnStatus aclsim_ops_check_not_null(const char *api, const char *name, const void *p);
ACLSIM_OPS_API aclnnStatus aclsim_ops_check_dtype(const char *api, const char *name, const aclTensor *t,
                                                  const aclDataType *allowed, size_t n_allowed);
ACLSIM_OPS_API aclnnStatus aclsim_ops_check_same_dtype(const char *api, const char *name_a, const aclTensor *a,
                                                       const char *name_b, const aclTensor *b);
ACLSIM_OPS_API aclnnStatus aclsim_ops_check_same_shape(const char *api, const char *name_a, const aclTensor *a,
                                                       const char *name_b, const aclTensor *b);
ACLSIM_OPS_API aclnnStatus aclsim_ops_check_array_size(const char *api, const char *name, const aclIntArray *a,
                                                       uint64_t size);
/* Every value of `a` > floor (strict) or >= floor (!strict). */
ACLSIM_OPS_API aclnnStatus aclsim_ops_check_array_min(const char *api, const char *name, const aclIntArray *a,
                                                      int64_t floor, bool strict);
/* 161002 unless the view has at most ACLSIM_OPS_MAX_ELEMENTS elements and lies in one live device
 * block (call it after the operator's own checks, before sizing a workspace from the view). */
ACLSIM_OPS_API aclnnStatus aclsim_ops_check_memory(const char *api, const char *name, const aclTensor *t);
/* printf-style 161002 / 161001 helpers: set the text "<api>: <message>" and return the code. */
ACLSIM_OPS_API aclnnStatus aclsim_ops_invalid(const char *api, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
ACLSIM_OPS_API aclnnStatus aclsim_ops_nullptr(const char *api, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Kernel-time re-check of the views an executor holds that its kernel touches: the inputs whose
 * bit is set in `inputs_read` (bit i: input i) and the first `n_outputs` outputs (NULL slots are
 * skipped).  The executor holds every tensor argument in the prototype's order, read or not,
 * so that aclSetInputTensorAddr's index is the prototype's; an input only its shape matters
 * for (e.g. `self`) may point anywhere. */
ACLSIM_OPS_API aclnnStatus aclsim_ops_kernel_check_memory(const char *api, const aclOpExecutor *ex,
                                                          unsigned inputs_read, int n_outputs);

/* Overflow-checked int64 arithmetic: false on overflow. */
static inline bool aclsim_ops_add(int64_t a, int64_t b, int64_t *r) { return !__builtin_add_overflow(a, b, r); }
static inline bool aclsim_ops_mul(int64_t a, int64_t b, int64_t *r) { return !__builtin_mul_overflow(a, b, r); }

/* Floor division for b > 0 (Python's //). */
static inline int64_t aclsim_ops_floor_div(int64_t a, int64_t b)
{
    int64_t q = a / b;
    return (a % b != 0 && a < 0) ? q - 1 : q;
}

/* Return the status of `expr` unless it is ACLNN_SUCCESS. */
#define ACLSIM_OPS_TRY(expr)                \
    do {                                    \
        aclnnStatus try_status_ = (expr);   \
        if (try_status_ != ACLNN_SUCCESS) { \
            return try_status_;             \
        }                                   \
    } while (0)

/*
 * The end of every phase 1: an executor for `run` with a copy of `params` (may be NULL),
 * the given input and output descriptors (NULL entries keep empty slots) and
 * `workspace_size`; stores it in *executor and the size in *workspace_size_out.
 * 561101 if the executor cannot be made (out of memory).
 */
ACLSIM_OPS_API aclnnStatus aclsim_ops_finish(const char *op_name, aclsim_kernel_fn run, uint64_t workspace_size,
                                             const void *params, size_t params_size,
                                             const aclTensor *const *inputs, int n_inputs,
                                             const aclTensor *const *outputs, int n_outputs,
                                             uint64_t *workspace_size_out, aclOpExecutor **executor);

/* Run no kernel: the executor of an op whose result is empty. */
ACLSIM_OPS_API aclnnStatus aclsim_ops_noop_kernel(aclOpExecutor *executor, void *workspace);

/* Element counts of the workspace regions, rounded so each region stays 64-byte aligned. */
static inline uint64_t aclsim_ops_region(uint64_t count, uint64_t elem_size)
{
    uint64_t bytes = count * elem_size;
    return (bytes + 63u) & ~(uint64_t)63u;
}

#endif
