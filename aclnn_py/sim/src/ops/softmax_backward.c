/*
 * aclnnSoftmaxBackward: out = output * (gradOutput - sum(gradOutput * output, dim)), computed in
 * gradOutput's dtype and converted to out's (whose dtype CANN does not check).  The checks in
 * ops-nn's order (aclnn_py/ops/softmax_backward.py); the lanes are reduce.h's.
 */
#include "aclnnop/aclnn_softmax_backward.h"
#include "aclsim_dtype_rules.h" /* generated at build: the dtype table (aclnn_py/ops/<op>.py DTYPE_RULES) */
#include "elementwise.h"
#include "reduce.h"

static const char API[] = "aclnnSoftmaxBackwardGetWorkspaceSize";
static const char KERNEL[] = "aclnnSoftmaxBackward";

aclnnStatus aclnnSoftmaxBackwardGetWorkspaceSize(const aclTensor *gradOutput, const aclTensor *output, int64_t dim,
                                                 aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor)
{
    static const aclDataType dtypes[] = {ACLSIM_DTYPES_SoftmaxBackward_DTYPES}; /* the one table */

    ACLSIM_OPS_CHECK_HANDLES(API, gradOutput, output, out);
    if (workspaceSize == NULL || executor == NULL) {
        return aclsim_ops_nullptr(API, "%s must not be NULL", workspaceSize == NULL ? "workspaceSize" : "executor");
    }
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "gradOutput", gradOutput));
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "output", output));
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "out", out));
    if (aclsim_ops_is_empty(gradOutput) || aclsim_ops_is_empty(output)) { /* A2/A3: before the other checks */
        return aclsim_ops_finish(KERNEL, aclsim_ops_noop_kernel, 0, NULL, 0, NULL, 0, NULL, 0, workspaceSize,
                                 executor);
    }
    ACLSIM_OPS_TRY(aclsim_ops_check_dtype(API, "gradOutput", gradOutput, dtypes, ACLSIM_DTYPES_COUNT(dtypes)));
    ACLSIM_OPS_TRY(aclsim_ops_check_dtype(API, "output", output, dtypes, ACLSIM_DTYPES_COUNT(dtypes)));
    ACLSIM_OPS_TRY(aclsim_ops_check_same_dtype(API, "output", output, "gradOutput", gradOutput));
    /* CANN does not check out's dtype in phase 1 (its final Cast fails on one outside the
     * documented list, after phase 1): refused here, as documented */
    ACLSIM_OPS_TRY(aclsim_ops_check_dtype(API, "out", out, dtypes, ACLSIM_DTYPES_COUNT(dtypes)));
    int64_t wrapped;
    ACLSIM_OPS_TRY(aclsim_red_check_dim(API, "dim", dim, "gradOutput", gradOutput->ndim, &wrapped));
    ACLSIM_OPS_TRY(aclsim_ew_check_rank(API, "gradOutput", gradOutput));
    ACLSIM_OPS_TRY(aclsim_ops_check_same_shape(API, "output", output, "gradOutput", gradOutput));
    ACLSIM_OPS_TRY(aclsim_ops_check_same_shape(API, "out", out, "gradOutput", gradOutput));
    return aclsim_red_lanes_finish(API, KERNEL, ACLSIM_RED_SOFTMAX_GRAD, wrapped, gradOutput->dtype, "gradOutput",
                                   gradOutput, "output", output, out, workspaceSize, executor);
}

aclnnStatus aclnnSoftmaxBackward(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)
{
    return aclsim_launch(KERNEL, workspace, workspaceSize, executor, stream);
}
