/*
 * aclnnMm: out = self @ mat2, both 2-D, computed as cubeMathType and CANN's A2/A3 table say
 * (matmul_common.h).  The checks in ops-nn's order (aclnn_py/ops/mm.py), which checks out
 * before self and mat2 for NULL, and mat2's rank before self's.
 */
#include "aclnnop/aclnn_mm.h"
#include "aclsim_dtype_rules.h" /* generated at build: the dtype table (aclnn_py/ops/<op>.py DTYPE_RULES) */
#include "matmul_common.h"

static const char API[] = "aclnnMmGetWorkspaceSize";
static const char KERNEL[] = "aclnnMm";

aclnnStatus aclnnMmGetWorkspaceSize(const aclTensor *self, const aclTensor *mat2, aclTensor *out, int8_t cubeMathType,
                                    uint64_t *workspaceSize, aclOpExecutor **executor)
{
    static const aclDataType dtypes[] = {ACLSIM_DTYPES_Mm_DTYPES}; /* the one table */

    ACLSIM_OPS_CHECK_HANDLES(API, self, mat2, out);
    if (workspaceSize == NULL || executor == NULL) {
        return aclsim_ops_nullptr(API, "%s must not be NULL", workspaceSize == NULL ? "workspaceSize" : "executor");
    }
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "out", out));
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "self", self));
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "mat2", mat2));
    ACLSIM_OPS_TRY(aclsim_ops_check_dtype(API, "self", self, dtypes, ACLSIM_DTYPES_COUNT(dtypes)));
    ACLSIM_OPS_TRY(aclsim_ops_check_dtype(API, "mat2", mat2, dtypes, ACLSIM_DTYPES_COUNT(dtypes)));
    ACLSIM_OPS_TRY(aclsim_ops_check_dtype(API, "out", out, dtypes, ACLSIM_DTYPES_COUNT(dtypes)));
    ACLSIM_OPS_TRY(aclsim_mm_check_cube(API, cubeMathType));
    ACLSIM_OPS_TRY(aclsim_mm_check_rank(API, "mat2", mat2, 2));
    ACLSIM_OPS_TRY(aclsim_mm_check_rank(API, "self", self, 2));
    ACLSIM_OPS_TRY(aclsim_mm_check_k(API, "self", self, "mat2", mat2, 0));
    ACLSIM_OPS_TRY(aclsim_mm_check_rank(API, "out", out, 2));
    if (out->view_dims[0] != self->view_dims[0] || out->view_dims[1] != mat2->view_dims[1]) {
        return aclsim_ops_invalid(API, "out must be [M, N] = [%lld, %lld], got %s", (long long)self->view_dims[0],
                                  (long long)mat2->view_dims[1], aclsim_ops_shape(out).s);
    }
    if (aclsim_ops_is_empty(out)) {
        return aclsim_ops_finish(KERNEL, aclsim_ops_noop_kernel, 0, NULL, 0, NULL, 0, NULL, 0, workspaceSize,
                                 executor);
    }
    ACLSIM_OPS_TRY(aclsim_ops_check_memory(API, "self", self));
    ACLSIM_OPS_TRY(aclsim_ops_check_memory(API, "mat2", mat2));
    ACLSIM_OPS_TRY(aclsim_ops_check_memory(API, "out", out));
    aclsim_mm_plan plan = {
        .m = self->view_dims[0], .n = mat2->view_dims[1], .k = self->view_dims[1], .batches = 1,
        .a_input = 0, .b_input = 1, .bias_input = -1,
        .round_to = aclsim_mm_round_to(self->dtype, mat2->dtype, cubeMathType),
    };
    aclsim_mm_operand(&plan, 0, self);
    aclsim_mm_operand(&plan, 1, mat2);
    const aclTensor *inputs[] = {self, mat2};
    return aclsim_mm_finish(KERNEL, &plan, inputs, 2, out, workspaceSize, executor);
}

aclnnStatus aclnnMm(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)
{
    return aclsim_launch(KERNEL, workspace, workspaceSize, executor, stream);
}
