/*
 * What MaxUnpool2d and its gradient share: reading a row of indices and the check of every
 * index against [0, oH*oW) before anything is written (CANN checks no index value: an index
 * outside reads or writes outside a plane on the device, an AI Core fault when the stream is
 * synchronised; here the kernel fails with 507015 naming the first bad index in C order,
 * aclnn_py/ops/_unpool.py's words).
 */
#ifndef ACLSIM_OPS_UNPOOL_COMMON_H
#define ACLSIM_OPS_UNPOOL_COMMON_H

#include "../kernels/parallel.h"
#include "ops_common.h"

/* One index check: indices as planes (N * C of h x w, c per image), oH x oW, and per worker
 * thread one row of w int64 (scratch) and its first bad index. */
typedef struct {
    const aclTensor *indices;
    int64_t c, h, w, oh, ow;
    int64_t *scratch;
    int64_t bad_at[ACLSIM_MAX_WORKERS], bad_index[ACLSIM_MAX_WORKERS];
} aclsim_unpool_check;

/* Row y of plane (n, c) of the indices t (rows of w) into k[0 .. w), as int64. */
ACLSIM_OPS_API void aclsim_unpool_index_row(const aclTensor *t, int64_t w, int64_t n, int64_t c, int64_t y,
                                            int64_t *restrict k);

/* Whether plane (n, c) of t is h * w elements one after the other. */
ACLSIM_OPS_API bool aclsim_unpool_plane_is_flat(const aclTensor *t, int64_t h, int64_t w);

/* Every index of the `planes` planes in [0, oh*ow) on `workers` threads, or the kernel error
 * naming the first bad one (`kernel`: phase 2's name) and ACLSIM_OPS_KERNEL_FAULT. */
ACLSIM_OPS_API aclnnStatus aclsim_unpool_check_indices(const char *kernel, aclsim_unpool_check *job, int64_t planes,
                                                       int workers);

#endif
