/*
 * aclnnThresholdBackward: out = gradOutput where self > threshold (a NaN self too), else 0,
 * self and gradOutput broadcast (aten::threshold_backward; with threshold 0, ReLU's gradient).
 * The checks in ops-nn's order, which starts with threshold and out (aclnn_py/ops/
 * threshold_backward.py); the computation is the elementwise kernel's (elementwise.h).
 */
#include "aclnnop/aclnn_threshold_backward.h"
#include "aclsim_dtype_rules.h" /* generated at build: the dtype table (aclnn_py/ops/<op>.py DTYPE_RULES) */
#include "elementwise.h"

static const char API[] = "aclnnThresholdBackwardGetWorkspaceSize";
static const char KERNEL[] = "aclnnThresholdBackward";

aclnnStatus aclnnThresholdBackwardGetWorkspaceSize(const aclTensor *gradOutput, const aclTensor *self,
                                                   const aclScalar *threshold, aclTensor *out,
                                                   uint64_t *workspaceSize, aclOpExecutor **executor)
{
    static const aclDataType dtypes[] = {ACLSIM_DTYPES_ThresholdBackward_DTYPES}; /* the one table */

    ACLSIM_OPS_CHECK_HANDLES(API, gradOutput, self, threshold, out);
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "threshold", threshold));
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "out", out));
    /* CANN checks workspaceSize here and not executor (which it then writes): both here. */
    if (workspaceSize == NULL || executor == NULL) {
        return aclsim_ops_nullptr(API, "%s must not be NULL", workspaceSize == NULL ? "workspaceSize" : "executor");
    }
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "gradOutput", gradOutput));
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "self", self));
    ACLSIM_OPS_TRY(aclsim_ops_check_dtype(API, "gradOutput", gradOutput, dtypes, ACLSIM_DTYPES_COUNT(dtypes)));
    ACLSIM_OPS_TRY(aclsim_ops_check_dtype(API, "self", self, dtypes, ACLSIM_DTYPES_COUNT(dtypes)));
    ACLSIM_OPS_TRY(aclsim_ops_check_same_dtype(API, "gradOutput", gradOutput, "self", self));
    ACLSIM_OPS_TRY(aclsim_ops_check_same_dtype(API, "out", out, "self", self));
    ACLSIM_OPS_TRY(aclsim_ew_check_rank(API, "gradOutput", gradOutput));
    ACLSIM_OPS_TRY(aclsim_ew_check_rank(API, "self", self));
    ACLSIM_OPS_TRY(aclsim_ew_check_broadcast(API, "self", self, "gradOutput", gradOutput, out));
    aclsim_ew_params p = {.op = ACLSIM_EW_THRESHOLD_GRAD, .promoted = self->dtype};
    p.alpha = aclsim_ew_scalar_as(threshold, ACL_FLOAT); /* compared as a float */
    return aclsim_ew_finish(API, KERNEL, &p, "gradOutput", gradOutput, "self", self, out, workspaceSize, executor);
}

aclnnStatus aclnnThresholdBackward(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                   const aclrtStream stream)
{
    return aclsim_launch(KERNEL, workspace, workspaceSize, executor, stream);
}
