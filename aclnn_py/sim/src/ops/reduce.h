/*
 * What the reducing operators (ReduceSum, Mean, the softmax family, BatchNorm) share: the dims
 * rules and their checks (the numpy backend's messages, word for word: aclnn_py/ops/_reduce.py),
 * and walks over the elements a reduction visits.
 *
 * A view is split into its kept dims and its reduced dims; each part is a "walk" (dims and
 * strides in elements).  The element (k, r) of the view, k a row-major index over the kept dims
 * and r one over the reduced dims, lies at offset + walk_offset(kept, k) + walk_offset(reduced, r).
 * Values are read and written as float in pieces (FLOAT16/BFLOAT16 converted), the sums are
 * accumulated in double by the operators.
 */
#ifndef ACLSIM_OPS_REDUCE_H
#define ACLSIM_OPS_REDUCE_H

#include "ops_common.h"

/* Elements a walk's gather/scatter moves in one piece. */
#define ACLSIM_RED_PIECE 4096

typedef struct {
    int n;                            /* dims (0: one element) */
    int64_t dims[ACLSIM_MAX_DIMS];
    int64_t strides[ACLSIM_MAX_DIMS];
    int64_t count;                    /* elements: the product of dims */
} aclsim_red_walk;

/* 161002 unless dim is in [-max(r, 1), max(r, 1) - 1] for `tensor` of rank r; *wrapped gets it
 * counted from 0 (0 for a 0-d tensor). */
ACLSIM_OPS_API aclnnStatus aclsim_red_check_dim(const char *api, const char *name, int64_t dim, const char *tensor,
                                                uint64_t rank, int64_t *wrapped);
/* The dims to reduce of `tensor` of rank r as a bit mask: each in range, none twice after
 * wrapping (161002 naming `name`); an empty array is every dim. */
ACLSIM_OPS_API aclnnStatus aclsim_red_check_dims(const char *api, const char *name, const aclIntArray *dims,
                                                 const char *tensor, uint64_t rank, uint32_t *mask);

/* The view t split by `mask` (bit i: dim i reduced) into its kept and reduced walks. */
ACLSIM_OPS_API void aclsim_red_split(const aclTensor *t, uint32_t mask, aclsim_red_walk *kept,
                                     aclsim_red_walk *reduced);
/* The element offset of the row-major index `index` of walk w. */
ACLSIM_OPS_API int64_t aclsim_red_offset(const aclsim_red_walk *w, int64_t index);
/* Elements [first, first + count) of walk w from `base` (element offset into t's data), as float
 * into dst / from src (stored converted to t's dtype). */
ACLSIM_OPS_API void aclsim_red_gather(const aclTensor *t, int64_t base, const aclsim_red_walk *w, int64_t first,
                                      int64_t count, float *dst);
ACLSIM_OPS_API void aclsim_red_scatter(aclTensor *t, int64_t base, const aclsim_red_walk *w, int64_t first,
                                       int64_t count, const float *src);

/* ---------------------------------------------------------------- over several dims (ReduceSum, Mean) */

/* The shape self reduced over `mask` has (kept dims, or 1 for each reduced one with keepdim). */
ACLSIM_OPS_API uint64_t aclsim_red_reduced_shape(const aclTensor *self, uint32_t mask, bool keepdim, int64_t *dims);
/* 161002 unless out has the reduced shape, or both have exactly one element (CANN's
 * CheckShapeAndScalarSame). */
ACLSIM_OPS_API aclnnStatus aclsim_red_check_out_shape(const char *api, const aclTensor *self, uint32_t mask,
                                                      bool keepdim, const aclTensor *out);
/* The end of a ReduceSum/Mean phase 1 (after every check): each element of out is the sum (or,
 * with `mean`, the mean) over `mask` of self converted to `dtype` (Cast's conversion), computed
 * in dtype (FLOAT16/BFLOAT16 and FLOAT summed in double and rounded once, integers in int64
 * wrapped to dtype's width, BOOL as "any", complex in pairs of doubles), then converted to
 * out's dtype.  An empty self fills out with 0 (or NaN, for `mean`, converted to out's dtype). */
ACLSIM_OPS_API aclnnStatus aclsim_red_sum_finish(const char *api, const char *kernel, const aclTensor *self,
                                                 uint32_t mask, aclDataType dtype, bool mean, aclTensor *out,
                                                 uint64_t *workspace_size, aclOpExecutor **executor);

/* ---------------------------------------------------------------- along one dim (the softmax family) */

typedef enum {
    ACLSIM_RED_SOFTMAX,          /* exp(a - max) / sum */
    ACLSIM_RED_LOG_SOFTMAX,      /* a - max - log(sum exp(a - max)) */
    ACLSIM_RED_SOFTMAX_GRAD,     /* b * (a - sum(a * b)), a gradOutput, b the forward output */
    ACLSIM_RED_LOG_SOFTMAX_GRAD, /* a - exp(b) * sum(a) */
} aclsim_red_lane_op;

/* The end of a softmax-family phase 1 (after every check): the executor computing `op` along
 * dim (wrapped) of a (and b, NULL for the forward ops) into out, in `compute` (each input
 * converted to it, the result rounded to it, then stored converted to out's dtype; FLOAT16 and
 * BFLOAT16 in float, DOUBLE in double); a no-op executor when an input is empty. */
ACLSIM_OPS_API aclnnStatus aclsim_red_lanes_finish(const char *api, const char *kernel, aclsim_red_lane_op op,
                                                   int64_t dim, aclDataType compute, const char *name_a,
                                                   const aclTensor *a, const char *name_b, const aclTensor *b,
                                                   aclTensor *out, uint64_t *workspace_size,
                                                   aclOpExecutor **executor);

/* ---------------------------------------------------------------- per channel (BatchNorm) */

/* ReduceSum/Mean's sum of a piece of at most ACLSIM_RED_PIECE floats: sum(x[i] - c) in eight
 * float lanes (vectorised), added up in double. */
ACLSIM_OPS_API double aclsim_red_piece_sum(const float *x, int64_t n, float c);
/* BatchNorm's sums of such a piece, each float term added in one of eight double lanes:
 * sum(x[i] - c) and sum((x[i] - c) * y[i]) (y NULL: (x[i] - c)^2). */
ACLSIM_OPS_API double aclsim_red_piece_sum_wide(const float *x, int64_t n, float c);
ACLSIM_OPS_API double aclsim_red_piece_dot(const float *x, const float *y, int64_t n, float c);

/* 161002 unless t has lo to hi dims ("<name> must have lo to hi dims, got ..."). */
ACLSIM_OPS_API aclnnStatus aclsim_red_check_rank(const char *api, const char *name, const aclTensor *t, uint64_t lo,
                                                 uint64_t hi);
/* 161002 unless t (NULL passes) is 1-D of length c, input's dim 1. */
ACLSIM_OPS_API aclnnStatus aclsim_red_check_channels(const char *api, const char *name, const aclTensor *t,
                                                     int64_t c);
/* Element c of the 1-D t as float, `absent` for a NULL t. */
ACLSIM_OPS_API float aclsim_red_channel(const aclTensor *t, int64_t c, float absent);

#endif
