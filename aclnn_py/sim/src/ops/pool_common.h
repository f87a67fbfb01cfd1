/*
 * Pooling windows, the one place the simulator's pooling operators take them from: the pooled
 * size of a sliding window (ceil mode, padding, dilation), CANN's 1-or-2-element int lists as
 * (H, W) pairs, the real (non-padding) taps of a window, adaptive pooling's windows, and legacy
 * nearest resizing's source index.  aclnn_py/_numpy/pooling.py is the numpy backend's twin.
 * Also the plane-wise pooling operators' shared preamble checks (AdaptiveAvgPool2d and its
 * backward, AvgPool2d, UpsampleNearest2d) and their kernels' loop over the N * C planes.
 */
#ifndef ACLSIM_POOL_COMMON_H
#define ACLSIM_POOL_COMMON_H

#include "../kernels/parallel.h"
#include "ops_common.h"

/* floor((in + 2p - d(k-1) - 1 + (ceil ? s-1 : 0)) / s) + 1, minus one in ceil mode when the last
 * window would start at or after in + p (PyTorch's pooling_output_shape; s > 0 and k, d >= 1).
 * false when an intermediate leaves int64. */
ACLSIM_OPS_API bool aclsim_pool_out_size(int64_t in, int64_t k, int64_t s, int64_t p, int64_t d, bool ceil_mode,
                                         int64_t *out);
/* The same with the division truncated toward zero (aclnnAvgPool2d's rule: 1 where a window is
 * longer than the padded input). */
ACLSIM_OPS_API bool aclsim_pool_out_size_trunc(int64_t in, int64_t k, int64_t s, int64_t p, bool ceil_mode,
                                               int64_t *out);

/* [v] -> (v, v), [a, b, ...] -> (a, b); an empty (or NULL) list -> fallback (a stride's kernel). */
ACLSIM_OPS_API void aclsim_pool_pair(const aclIntArray *a, const int64_t fallback[2], int64_t out[2]);

/* Max pooling's list checks (aclnnMaxPool2dWithIndices and its backward), in CANN's order:
 * lengths (kernelSize 1|2, stride 0|1|2, padding 1|2, dilation 1|2), then values (kernel > 0,
 * stride > 0, 0 <= padding <= kernel / 2, dilation 1 on Atlas A2/A3) -> 161002; the lists as
 * (H, W) pairs (an empty stride: the kernel).  Messages as aclnn_py/ops/_pooling.py's. */
ACLSIM_OPS_API aclnnStatus aclsim_pool_max_window(const char *api, const aclIntArray *kernelSize,
                                                  const aclIntArray *stride, const aclIntArray *padding,
                                                  const aclIntArray *dilation, int64_t k[2], int64_t s[2],
                                                  int64_t p[2], int64_t d[2]);

/* Window o along an axis of `size` (k taps d apart, s apart, padding p): its real taps are
 * *first, *first + d, ... below *end (*first >= *end: none). */
static inline void aclsim_pool_taps(int64_t o, int64_t size, int64_t k, int64_t s, int64_t p, int64_t d,
                                    int64_t *first, int64_t *end)
{
    int64_t start = o * s - p, stop = start + (k - 1) * d + 1;
    if (start < 0) {
        start += ((-start + d - 1) / d) * d;
    }
    *first = start;
    *end = stop < size ? stop : size;
}

/* Average pooling's window o along an axis of `size` (k, s, padding p): its real elements
 * [*lo, *hi) and its divisor factor, the window clipped to the padded input when include_pad,
 * else its real extent (PyTorch's rule; aclnnAvgPool2d and its backward). */
static inline void aclsim_pool_avg_window(int64_t o, int64_t size, int64_t k, int64_t s, int64_t p, bool include_pad,
                                          int64_t *lo, int64_t *hi, int64_t *factor)
{
    int64_t start = o * s - p;
    int64_t end = start + k < size + p ? start + k : size + p;
    int64_t padded = end - start;
    start = start < 0 ? 0 : start;
    end = end > size ? size : end;
    *lo = start;
    *hi = end > start ? end : start;
    *factor = include_pad ? padded : *hi - *lo;
}

/* Adaptive pooling's window i of o over `size`: [floor(i*size/o), ceil((i+1)*size/o)). */
static inline void aclsim_pool_adaptive(int64_t i, int64_t size, int64_t o, int64_t *start, int64_t *end)
{
    *start = i * size / o;
    *end = ((i + 1) * size + o - 1) / o;
}

/* Legacy nearest resizing: the source of output i of o over `size`, min(floor(i * size / o),
 * size - 1), or with a scale factor scale > 0, min(floor(i / scale), size - 1) (float32 as
 * PyTorch computes it). */
ACLSIM_OPS_API int64_t aclsim_pool_nearest_source(int64_t i, int64_t size, int64_t o, double scale);

/* ---------------------------------------------------------------- the plane-wise operators */

/* 161002 unless self has 3 or 4 dims: "self must be 3-D or 4-D (NCL or NCHW), got <format> shape <shape>". */
ACLSIM_OPS_API aclnnStatus aclsim_pool_check_rank34(const char *api, const aclTensor *self);
/* 161002 unless t's format is self's (and, with not_private, not a device-private one):
 * "<name> format must equal self format[ and not be private], got <t's> and <self's>". */
ACLSIM_OPS_API aclnnStatus aclsim_pool_check_format(const char *api, const char *name, const aclTensor *t,
                                                    const aclTensor *self, bool not_private);
/* a and b have one rank and the same dims before their last two (H, W). */
ACLSIM_OPS_API bool aclsim_pool_same_leading(const aclTensor *a, const aclTensor *b);
/* The planes of an (N, C, H, W) or (C, H, W) view: N * C (C). */
ACLSIM_OPS_API int64_t aclsim_pool_planes(const aclTensor *t);
/* A kernel's loop: *input replaced by a copy of it when it overlaps out (the planes are written
 * one by one), then fn(job, ...) over `planes` planes on `workers` workers; the copy freed.
 * ACLSIM_OPS_KERNEL_FAULT when the copy cannot be made. */
ACLSIM_OPS_API aclnnStatus aclsim_pool_run_planes(const char *kernel, const aclTensor **input, const aclTensor *out,
                                                  int64_t planes, int workers, aclsim_range_fn fn, void *job);

#endif
