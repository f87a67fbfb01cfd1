/*
 * The simulator's float32 matrix product, shared by the operators that lower to one
 * (the convolutions).  Compiled into libaclsim.so (exported for the operator libraries,
 * never by a CANN-named library), like the rest of the aclsim_* internal interface.
 *
 *     C[i, j] = (accumulate ? C[i, j] : 0) + sum_p A[i, p] * B[p, j]     i < m, j < n, p < k
 *
 * with A[i, p] = a[i * a_rs + p * a_cs], B[p, j] = b[p * b_rs + j * b_cs] (any non-negative
 * strides: a transposed operand is a swap of its two strides) and C[i, j] = c[i * ldc + j].
 * C must not overlap A or B.  C is only read when `accumulate`.
 *
 * Each C element is summed in float32, in the same order whatever the thread count (threads
 * take disjoint column ranges of C), so results do not depend on `threads`.  A product with an
 * inf or NaN operand follows IEEE arithmetic term by term, except that a term the blocking pads
 * with zeros never reaches C (padding only fills rows and columns outside C).
 */
#ifndef ACLSIM_KERNELS_GEMM_H
#define ACLSIM_KERNELS_GEMM_H

#include <stdbool.h>
#include <stdint.h>

#include "../sim_internal.h"

typedef struct {
    int64_t m, n, k;
    const float *a;
    int64_t a_rs, a_cs;
    const float *b;
    int64_t b_rs, b_cs;
    float *c;
    int64_t ldc;
    bool accumulate;
} aclsim_gemm_args;

/* Bytes of workspace aclsim_gemm_f32 needs for this product on up to `threads` threads
 * (64-byte aligned start recommended; any float-aligned start works). */
ACLSIM_INTERNAL uint64_t aclsim_gemm_workspace_size(int64_t m, int64_t n, int64_t k, int threads);

/* The product on up to `threads` threads (the calling one included); `workspace` holds
 * aclsim_gemm_workspace_size(m, n, k, threads) bytes.  A thread that cannot be started leaves
 * its share to the calling thread. */
ACLSIM_INTERNAL void aclsim_gemm_f32(const aclsim_gemm_args *g, int threads, void *workspace);

/* Test entry (tests/sim/test_gemm.py, through libaclsim.so): the product with a workspace of
 * its own.  0, or -1 when the workspace cannot be allocated. */
ACLSIM_INTERNAL int aclsim_gemm_f32_test(int64_t m, int64_t n, int64_t k, const float *a, int64_t a_rs, int64_t a_cs,
                                         const float *b, int64_t b_rs, int64_t b_cs, float *c, int64_t ldc,
                                         int accumulate, int threads);

#endif
