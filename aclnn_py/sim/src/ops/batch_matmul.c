/*
 * aclnnBatchMatMul: torch.bmm of 3-D tensors whose batch may be 1 on either side (broadcast), each
 * product as Mm's (matmul_common.h).  On A2/A3 cubeMathType 4 (USE_FP32_ADD) is replaced by 0
 * before any check.  The checks in ops-nn's order (aclnn_py/ops/batch_mat_mul.py).
 */
#include "aclnnop/aclnn_batch_matmul.h"
#include "aclsim_dtype_rules.h" /* generated at build: the dtype table (aclnn_py/ops/<op>.py DTYPE_RULES) */
#include "matmul_common.h"

static const char API[] = "aclnnBatchMatMulGetWorkspaceSize";
static const char KERNEL[] = "aclnnBatchMatMul";

aclnnStatus aclnnBatchMatMulGetWorkspaceSize(const aclTensor *self, const aclTensor *mat2, aclTensor *out,
                                             int8_t cubeMathType, uint64_t *workspaceSize, aclOpExecutor **executor)
{
    static const aclDataType dtypes[] = {ACLSIM_DTYPES_BatchMatMul_DTYPES}; /* the one table */

    ACLSIM_OPS_CHECK_HANDLES(API, self, mat2, out);
    if (workspaceSize == NULL || executor == NULL) {
        return aclsim_ops_nullptr(API, "%s must not be NULL", workspaceSize == NULL ? "workspaceSize" : "executor");
    }
    if (cubeMathType == 4) {
        cubeMathType = 0;
    }
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "self", self));
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "mat2", mat2));
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "out", out));
    ACLSIM_OPS_TRY(aclsim_ops_check_dtype(API, "self", self, dtypes, ACLSIM_DTYPES_COUNT(dtypes)));
    ACLSIM_OPS_TRY(aclsim_ops_check_dtype(API, "mat2", mat2, dtypes, ACLSIM_DTYPES_COUNT(dtypes)));
    ACLSIM_OPS_TRY(aclsim_ops_check_dtype(API, "out", out, dtypes, ACLSIM_DTYPES_COUNT(dtypes)));
    ACLSIM_OPS_TRY(aclsim_mm_check_cube(API, cubeMathType));
    ACLSIM_OPS_TRY(aclsim_mm_check_rank(API, "self", self, 3));
    ACLSIM_OPS_TRY(aclsim_mm_check_rank(API, "mat2", mat2, 3));
    ACLSIM_OPS_TRY(aclsim_mm_check_rank(API, "out", out, 3));
    ACLSIM_OPS_TRY(aclsim_mm_check_k(API, "self", self, "mat2", mat2, -2));
    aclsim_mm_plan plan = {
        .m = self->view_dims[1], .n = mat2->view_dims[2], .k = self->view_dims[2], .a_input = 0, .b_input = 1,
        .bias_input = -1, .round_to = aclsim_mm_round_to(self->dtype, mat2->dtype, cubeMathType),
    };
    ACLSIM_OPS_TRY(aclsim_mm_broadcast_batch(API, "self", self, "mat2", mat2, plan.batch_dims, &plan.batch_ndim));
    plan.batches = plan.batch_dims[0];
    if (out->view_dims[0] != plan.batches || out->view_dims[1] != plan.m || out->view_dims[2] != plan.n) {
        return aclsim_ops_invalid(API, "out must be [B, M, N] = [%lld, %lld, %lld], got %s", (long long)plan.batches,
                                  (long long)plan.m, (long long)plan.n, aclsim_ops_shape(out).s);
    }
    if (aclsim_ops_is_empty(out)) {
        return aclsim_ops_finish(KERNEL, aclsim_ops_noop_kernel, 0, NULL, 0, NULL, 0, NULL, 0, workspaceSize,
                                 executor);
    }
    if (plan.k == 0 && self->view_dims[0] != plan.batches) {
        aclsim_set_error("%s: K is 0 and self's batch %lld is not out's %lld: its zeros cannot be copied into out",
                         API, (long long)self->view_dims[0], (long long)plan.batches);
        return ACLNN_ERR_INNER_NULLPTR; /* (read from CANN's code: its final copy fails) */
    }
    ACLSIM_OPS_TRY(aclsim_ops_check_memory(API, "self", self));
    ACLSIM_OPS_TRY(aclsim_ops_check_memory(API, "mat2", mat2));
    ACLSIM_OPS_TRY(aclsim_ops_check_memory(API, "out", out));
    aclsim_mm_operand(&plan, 0, self);
    aclsim_mm_operand(&plan, 1, mat2);
    const aclTensor *inputs[] = {self, mat2};
    return aclsim_mm_finish(KERNEL, &plan, inputs, 2, out, workspaceSize, executor);
}

aclnnStatus aclnnBatchMatMul(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)
{
    return aclsim_launch(KERNEL, workspace, workspaceSize, executor, stream);
}
