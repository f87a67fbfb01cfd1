/*
 * aclnnAddmm: out = beta * self + alpha * (mat1 @ mat2), self (the bias) broadcast to [M, N];
 * alpha and beta read as float (|alpha| <= FLT_EPSILON: beta * self alone, the product not
 * computed; |beta| <= FLT_EPSILON: alpha * product alone).  The product as Mm's, the sum in
 * float32 in the kernel's epilogue (matmul_common.h).  The checks in ops-nn's order
 * (aclnn_py/ops/addmm.py).
 */
#include <float.h>

#include "aclnnop/aclnn_addmm.h"
#include "aclsim_dtype_rules.h" /* generated at build: the dtype table (aclnn_py/ops/<op>.py DTYPE_RULES) */
#include "matmul_common.h"

static const char API[] = "aclnnAddmmGetWorkspaceSize";
static const char KERNEL[] = "aclnnAddmm";

static aclnnStatus check_params(const aclTensor *self, const aclTensor *mat1, const aclTensor *mat2,
                                const aclScalar *beta, const aclScalar *alpha, const aclTensor *out,
                                int8_t cubeMathType)
{
    static const aclDataType dtypes[] = {ACLSIM_DTYPES_Addmm_DTYPES}; /* the one table */

    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "self", self));
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "mat1", mat1));
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "mat2", mat2));
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "beta", beta));
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "alpha", alpha));
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "out", out));
    ACLSIM_OPS_TRY(aclsim_ops_check_dtype(API, "mat1", mat1, dtypes, ACLSIM_DTYPES_COUNT(dtypes)));
    ACLSIM_OPS_TRY(aclsim_ops_check_dtype(API, "mat2", mat2, dtypes, ACLSIM_DTYPES_COUNT(dtypes)));
    ACLSIM_OPS_TRY(aclsim_ops_check_dtype(API, "self", self, dtypes, ACLSIM_DTYPES_COUNT(dtypes)));
    ACLSIM_OPS_TRY(aclsim_ops_check_dtype(API, "out", out, dtypes, ACLSIM_DTYPES_COUNT(dtypes)));
    ACLSIM_OPS_TRY(aclsim_mm_check_cube(API, cubeMathType));
    ACLSIM_OPS_TRY(aclsim_mm_check_rank(API, "mat1", mat1, 2));
    ACLSIM_OPS_TRY(aclsim_mm_check_rank(API, "mat2", mat2, 2));
    ACLSIM_OPS_TRY(aclsim_mm_check_k(API, "mat1", mat1, "mat2", mat2, 0));
    int64_t m = mat1->view_dims[0], n = mat2->view_dims[1];
    if (self->ndim < 1 || self->ndim > 2) {
        return aclsim_ops_invalid(API, "self must be 1-D or 2-D, got %llu-D shape %s",
                                  (unsigned long long)self->ndim, aclsim_ops_shape(self).s);
    }
    int64_t rows = self->ndim == 2 ? self->view_dims[0] : 1, cols = aclsim_ops_dim(self, -1);
    if ((rows != m && rows != 1 && m != 1) || (cols != n && cols != 1 && n != 1)) {
        int64_t mn[2] = {m, n};
        return aclsim_ops_invalid(API, "self %s and [M, N] = %s do not broadcast", aclsim_ops_shape(self).s,
                                  aclsim_ops_int_list(mn, 2).s);
    }
    if (m == 0 || n == 0) {
        if (!aclsim_ops_is_empty(out)) {
            return aclsim_ops_invalid(API, "out must be empty when M or N is 0, got %s", aclsim_ops_shape(out).s);
        }
    } else if (out->ndim < 2 || out->view_dims[0] != m || out->view_dims[1] != n) {
        return aclsim_ops_invalid(API, "out must be [M, N] = [%lld, %lld], got %s", (long long)m, (long long)n,
                                  aclsim_ops_shape(out).s);
    }
    return ACLNN_SUCCESS;
}

aclnnStatus aclnnAddmmGetWorkspaceSize(const aclTensor *self, const aclTensor *mat1, const aclTensor *mat2,
                                       const aclScalar *beta, const aclScalar *alpha, aclTensor *out,
                                       int8_t cubeMathType, uint64_t *workspaceSize, aclOpExecutor **executor)
{
    ACLSIM_OPS_CHECK_HANDLES(API, self, mat1, mat2, beta, alpha, out);
    if (workspaceSize == NULL || executor == NULL) {
        return aclsim_ops_nullptr(API, "%s must not be NULL", workspaceSize == NULL ? "workspaceSize" : "executor");
    }
    ACLSIM_OPS_TRY(check_params(self, mat1, mat2, beta, alpha, out, cubeMathType));
    int64_t m = mat1->view_dims[0], n = mat2->view_dims[1];
    if (aclsim_ops_is_empty(self) || m == 0 || n == 0) {
        return aclsim_ops_finish(KERNEL, aclsim_ops_noop_kernel, 0, NULL, 0, NULL, 0, NULL, 0, workspaceSize,
                                 executor);
    }
    int64_t rows = self->ndim == 2 ? self->view_dims[0] : 1, cols = aclsim_ops_dim(self, -1);
    if ((rows != m && rows != 1) || (cols != n && cols != 1)) {
        int64_t mn[2] = {m, n};
        aclsim_set_error("%s: self %s cannot be expanded to [M, N] = %s: the result cannot be copied into out", API,
                         aclsim_ops_shape(self).s, aclsim_ops_int_list(mn, 2).s);
        return ACLNN_ERR_INNER_NULLPTR; /* CANN's final copy fails while the graph is built */
    }
    if (aclsim_ops_numel(out) != m * n) {
        aclsim_set_error("%s: out %s does not hold the [%lld, %lld] result", API, aclsim_ops_shape(out).s,
                         (long long)m, (long long)n);
        return ACLNN_ERR_INNER_NULLPTR;
    }
    ACLSIM_OPS_TRY(aclsim_ops_check_memory(API, "self", self));
    ACLSIM_OPS_TRY(aclsim_ops_check_memory(API, "mat1", mat1));
    ACLSIM_OPS_TRY(aclsim_ops_check_memory(API, "mat2", mat2));
    ACLSIM_OPS_TRY(aclsim_ops_check_memory(API, "out", out));
    float a = (float)aclsim_ops_load(alpha->value, alpha->dtype, 0);
    float b = (float)aclsim_ops_load(beta->value, beta->dtype, 0);
    bool product = (a < 0 ? -a : a) > FLT_EPSILON, bias = !product || (b < 0 ? -b : b) > FLT_EPSILON;
    aclsim_mm_plan plan = {
        .m = m, .n = n, .k = mat1->view_dims[1], .batches = 1, .a_input = 1, .b_input = 2, .bias_input = 0,
        .round_to = aclsim_mm_round_to(mat1->dtype, mat2->dtype, cubeMathType),
        .epilogue = !product ? ACLSIM_MM_BIAS_ONLY : !bias ? ACLSIM_MM_PRODUCT_ONLY : ACLSIM_MM_BOTH,
        .alpha = a, .beta = b,
        .bias_rs = rows == 1 || self->ndim < 2 ? 0 : self->strides[0],
        .bias_cs = cols == 1 ? 0 : self->strides[self->ndim - 1],
    };
    aclsim_mm_operand(&plan, 0, mat1);
    aclsim_mm_operand(&plan, 1, mat2);
    const aclTensor *inputs[] = {self, mat1, mat2};
    return aclsim_mm_finish(KERNEL, &plan, inputs, 3, out, workspaceSize, executor);
}

aclnnStatus aclnnAddmm(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)
{
    return aclsim_launch(KERNEL, workspace, workspaceSize, executor, stream);
}
