/*
 * aclnnMatmul: torch.matmul of tensors of 1 to 6 dims: batch dims broadcast, a 1-D operand a
 * row (self) or a column (mat2) whose dim the result drops; each product as Mm's
 * (matmul_common.h; a 1-D @ 1-D dot product ignores cubeMathType).  The checks in ops-nn's order
 * (aclnn_py/ops/matmul.py).  CANN never checks out's shape: the result is written in out's view
 * order, and a different element count fails as CANN's final copy does (561103).
 */
#include "aclnnop/aclnn_matmul.h"
#include "aclsim_dtype_rules.h" /* generated at build: the dtype table (aclnn_py/ops/<op>.py DTYPE_RULES) */
#include "matmul_common.h"

static const char API[] = "aclnnMatmulGetWorkspaceSize";
static const char KERNEL[] = "aclnnMatmul";

static aclnnStatus check_rank(const aclTensor *t, const char *name, bool upper)
{
    if (upper ? t->ndim > 6 : t->ndim < 1) {
        return aclsim_ops_invalid(API, "%s must have 1 to 6 dims, got %llu-D shape %s", name,
                                  (unsigned long long)t->ndim, aclsim_ops_shape(t).s);
    }
    return ACLNN_SUCCESS;
}

aclnnStatus aclnnMatmulGetWorkspaceSize(const aclTensor *self, const aclTensor *mat2, aclTensor *out,
                                        int8_t cubeMathType, uint64_t *workspaceSize, aclOpExecutor **executor)
{
    static const aclDataType dtypes[] = {ACLSIM_DTYPES_Matmul_DTYPES}; /* the one table */

    ACLSIM_OPS_CHECK_HANDLES(API, self, mat2, out);
    if (workspaceSize == NULL || executor == NULL) {
        return aclsim_ops_nullptr(API, "%s must not be NULL", workspaceSize == NULL ? "workspaceSize" : "executor");
    }
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "self", self));
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "mat2", mat2));
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "out", out));
    ACLSIM_OPS_TRY(aclsim_ops_check_dtype(API, "self", self, dtypes, ACLSIM_DTYPES_COUNT(dtypes)));
    ACLSIM_OPS_TRY(aclsim_ops_check_dtype(API, "mat2", mat2, dtypes, ACLSIM_DTYPES_COUNT(dtypes)));
    ACLSIM_OPS_TRY(aclsim_ops_check_dtype(API, "out", out, dtypes, ACLSIM_DTYPES_COUNT(dtypes)));
    ACLSIM_OPS_TRY(aclsim_mm_check_cube(API, cubeMathType));
    ACLSIM_OPS_TRY(check_rank(self, "self", true));
    ACLSIM_OPS_TRY(check_rank(mat2, "mat2", true));
    ACLSIM_OPS_TRY(check_rank(self, "self", false));
    ACLSIM_OPS_TRY(check_rank(mat2, "mat2", false));
    ACLSIM_OPS_TRY(aclsim_mm_check_k(API, "self", self, "mat2", mat2, mat2->ndim <= 2 ? 0 : -2));
    aclsim_mm_plan plan = {
        .m = self->ndim == 1 ? 1 : aclsim_ops_dim(self, -2), .n = mat2->ndim == 1 ? 1 : aclsim_ops_dim(mat2, -1),
        .k = aclsim_ops_dim(self, -1), .a_input = 0, .b_input = 1, .bias_input = -1,
        .round_to = self->ndim == 1 && mat2->ndim == 1 ? ACL_FLOAT
                                                       : aclsim_mm_round_to(self->dtype, mat2->dtype, cubeMathType),
    };
    ACLSIM_OPS_TRY(aclsim_mm_broadcast_batch(API, "self", self, "mat2", mat2, plan.batch_dims, &plan.batch_ndim));
    int64_t count = plan.m * plan.n;
    plan.batches = 1;
    for (int d = 0; d < plan.batch_ndim; ++d) {
        plan.batches *= plan.batch_dims[d];
    }
    count *= plan.batches;
    if (aclsim_ops_numel(out) != count) {
        aclsim_set_error("%s: out %s does not hold the result's %lld elements (CANN reshapes the result into out)",
                         API, aclsim_ops_shape(out).s, (long long)count);
        return ACLNN_ERR_INNER_NULLPTR; /* CANN's final copy fails while the graph is built */
    }
    if (count == 0) {
        return aclsim_ops_finish(KERNEL, aclsim_ops_noop_kernel, 0, NULL, 0, NULL, 0, NULL, 0, workspaceSize,
                                 executor);
    }
    ACLSIM_OPS_TRY(aclsim_ops_check_memory(API, "self", self));
    ACLSIM_OPS_TRY(aclsim_ops_check_memory(API, "mat2", mat2));
    ACLSIM_OPS_TRY(aclsim_ops_check_memory(API, "out", out));
    aclsim_mm_operand(&plan, 0, self);
    aclsim_mm_operand(&plan, 1, mat2);
    const aclTensor *inputs[] = {self, mat2};
    return aclsim_mm_finish(KERNEL, &plan, inputs, 2, out, workspaceSize, executor);
}

aclnnStatus aclnnMatmul(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)
{
    return aclsim_launch(KERNEL, workspace, workspaceSize, executor, stream);
}
