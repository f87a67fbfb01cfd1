/*
 * What the matrix products share (aclnnMm, aclnnAddmm, aclnnMatmul, aclnnBatchMatMul; the Python
 * side is aclnn_py/ops/_matmul.py, with the same messages): cubeMathType, the compute type of
 * CANN's A2/A3 table, the shape checks, and one kernel over the simulator's GEMM
 * (kernels/gemm.h): a batch of products read straight from the strided inputs (float16 and
 * bfloat16 converted as they are packed, summed in float32), an optional Addmm epilogue, and
 * one rounding to out's dtype as out's view is written.
 */
#ifndef ACLSIM_OPS_MATMUL_COMMON_H
#define ACLSIM_OPS_MATMUL_COMMON_H

#include "ops_common.h"

ACLSIM_OPS_API aclnnStatus aclsim_mm_check_cube(const char *api, int8_t cubeMathType);
ACLSIM_OPS_API aclnnStatus aclsim_mm_check_rank(const char *api, const char *name, const aclTensor *t, uint64_t rank);
/* a's last dim equals b's dim b_dim (0 or -2). */
ACLSIM_OPS_API aclnnStatus aclsim_mm_check_k(const char *api, const char *name_a, const aclTensor *a,
                                             const char *name_b, const aclTensor *b, int b_dim);
/* The broadcast of a's and b's batch dims (all but the last two) into dims[*ndim]. */
ACLSIM_OPS_API aclnnStatus aclsim_mm_broadcast_batch(const char *api, const char *name_a, const aclTensor *a,
                                                     const char *name_b, const aclTensor *b, int64_t *dims,
                                                     int *ndim);
/* The type both operands are rounded to before the product (ACL_FLOAT: none). */
ACLSIM_OPS_API aclDataType aclsim_mm_round_to(aclDataType a, aclDataType b, int8_t cubeMathType);

/* Addmm's epilogue: out = alpha * product + beta * bias (bias broadcast to [M, N]). */
typedef enum { ACLSIM_MM_PRODUCT, ACLSIM_MM_BIAS_ONLY, ACLSIM_MM_PRODUCT_ONLY, ACLSIM_MM_BOTH } aclsim_mm_epilogue;

/* One batch of products, out = the batch's [M, N] blocks in row-major order. */
typedef struct {
    int64_t m, n, k, batches;
    int batch_ndim;
    int64_t batch_dims[ACLSIM_MAX_DIMS];
    int64_t a_bs[ACLSIM_MAX_DIMS], b_bs[ACLSIM_MAX_DIMS]; /* per batch dim, 0 where broadcast */
    int64_t a_rs, a_cs, b_rs, b_cs;
    int a_input, b_input, bias_input;                      /* executor input slots (bias -1: none) */
    aclDataType round_to;
    aclsim_mm_epilogue epilogue;
    float alpha, beta;
    int64_t bias_rs, bias_cs;                              /* bias strides over [M, N] (0: broadcast) */
    int threads;
    char kernel[32];                                       /* aclnnXxx, for messages */
} aclsim_mm_plan;

/* Operand a (which 0) or b (1) of the plan from the view t: its matrix strides and, over the
 * plan's batch dims (set first), its batch strides.  A 1-D a is a row [1, K], a 1-D b a column
 * [K, 1]. */
ACLSIM_OPS_API void aclsim_mm_operand(aclsim_mm_plan *plan, int which, const aclTensor *t);

/* The end of phase 1: the executor running the plan (inputs in the prototype's order, all read),
 * its workspace sized. */
ACLSIM_OPS_API aclnnStatus aclsim_mm_finish(const char *kernel, aclsim_mm_plan *plan,
                                            const aclTensor *const *inputs, int n_inputs, aclTensor *out,
                                            uint64_t *workspaceSize, aclOpExecutor **executor);

#endif
