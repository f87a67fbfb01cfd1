/*
 * The simulator's float32 matrix product, shared by the operators that lower to one
 * (the convolutions).  Compiled into libaclsim.so (exported for the operator libraries,
 * never by a CANN-named library), like the rest of the aclsim_* internal interface.
 *
 *     C[i, j] = (accumulate ? C[i, j] : 0) + sum_p A[i, p] * B[p, j]     i < m, j < n, p < k
 *
 * with A[i, p] = a[i * a_rs + p * a_cs], B[p, j] = b[p * b_rs + j * b_cs] (any non-negative
 * strides, in elements: a transposed operand is a swap of its two strides) and C[i, j] =
 * c[i * ldc + j].  C must not overlap A or B.  C is only read when `accumulate`.
 *
 * A and B hold float32 (a_type / b_type ACL_FLOAT, the zero value), float16 or bfloat16: the
 * packing converts them to float32, so the products are float32 and the sums float32 (the
 * matrix unit's way with 16-bit inputs).  `round_to` ACL_FLOAT16 or ACL_BF16 first rounds every
 * value of A and B to that type (a cube math type that computes a float32 input in float16);
 * ACL_FLOAT (zero) leaves them.
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
    const void *a;
    int64_t a_rs, a_cs;
    const void *b;
    int64_t b_rs, b_cs;
    float *c;
    int64_t ldc;
    bool accumulate;
    aclDataType a_type, b_type, round_to; /* ACL_FLOAT (0): float32, as it is */
} aclsim_gemm_args;

/* Bytes of workspace aclsim_gemm_f32 needs for this product on up to `threads` threads
 * (64-byte aligned start recommended; any float-aligned start works). */
ACLSIM_INTERNAL uint64_t aclsim_gemm_workspace_size(int64_t m, int64_t n, int64_t k, int threads);

/* The product on up to `threads` threads (the calling one included); `workspace` holds
 * aclsim_gemm_workspace_size(m, n, k, threads) bytes.  A thread that cannot be started leaves
 * its share to the calling thread. */
ACLSIM_INTERNAL void aclsim_gemm_f32(const aclsim_gemm_args *g, int threads, void *workspace);

/*
 * A batch of products of one shape: product i takes A, B and C at a + offsets[3i], b +
 * offsets[3i + 1], c + offsets[3i + 2] (elements of their types; any offsets, so a batch
 * broadcast over A or B repeats an offset).  Large products run one after the other, each on
 * the threads; a batch of small ones runs its products in parallel, one per thread at a time.
 * The results do not depend on the thread count either way.  `workspace` holds
 * aclsim_gemm_batched_workspace_size(m, n, k, batches, threads) bytes.  The C blocks must not
 * overlap one another.
 */
ACLSIM_INTERNAL uint64_t aclsim_gemm_batched_workspace_size(int64_t m, int64_t n, int64_t k, int64_t batches,
                                                            int threads);
ACLSIM_INTERNAL void aclsim_gemm_batched(const aclsim_gemm_args *g, const int64_t *offsets, int64_t batches,
                                         int threads, void *workspace);

/* Test entry (tests/sim/test_gemm.py, through libaclsim.so): the product with a workspace of
 * its own.  0, or -1 when the workspace cannot be allocated. */
ACLSIM_INTERNAL int aclsim_gemm_f32_test(int64_t m, int64_t n, int64_t k, const float *a, int64_t a_rs, int64_t a_cs,
                                         const float *b, int64_t b_rs, int64_t b_cs, float *c, int64_t ldc,
                                         int accumulate, int threads);

#endif
