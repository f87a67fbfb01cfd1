/*
 * aclnnLogSoftmax: out = log_softmax(self, dim), computed in out's dtype (self converted to it
 * first, unlike Softmax).  The checks in ops-nn's order (aclnn_py/ops/log_softmax.py): dim
 * before the dtypes, the empty shortcut last; the lanes are reduce.h's.
 */
#include "aclnnop/aclnn_logsoftmax.h"
#include "aclsim_dtype_rules.h" /* generated at build: the dtype table (aclnn_py/ops/<op>.py DTYPE_RULES) */
#include "elementwise.h"
#include "reduce.h"

static const char API[] = "aclnnLogSoftmaxGetWorkspaceSize";
static const char KERNEL[] = "aclnnLogSoftmax";

aclnnStatus aclnnLogSoftmaxGetWorkspaceSize(const aclTensor *self, int64_t dim, aclTensor *out, uint64_t *workspaceSize,
                                            aclOpExecutor **executor)
{
    static const aclDataType dtypes[] = {ACLSIM_DTYPES_LogSoftmax_DTYPES}; /* the one table */

    ACLSIM_OPS_CHECK_HANDLES(API, self, out);
    if (workspaceSize == NULL || executor == NULL) {
        return aclsim_ops_nullptr(API, "%s must not be NULL", workspaceSize == NULL ? "workspaceSize" : "executor");
    }
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "self", self));
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "out", out));
    int64_t wrapped;
    ACLSIM_OPS_TRY(aclsim_red_check_dim(API, "dim", dim, "self", self->ndim, &wrapped));
    ACLSIM_OPS_TRY(aclsim_ops_check_dtype(API, "self", self, dtypes, ACLSIM_DTYPES_COUNT(dtypes)));
    ACLSIM_OPS_TRY(aclsim_ops_check_dtype(API, "out", out, dtypes, ACLSIM_DTYPES_COUNT(dtypes)));
    ACLSIM_OPS_TRY(aclsim_ew_check_rank(API, "self", self));
    ACLSIM_OPS_TRY(aclsim_ew_check_rank(API, "out", out));
    ACLSIM_OPS_TRY(aclsim_ops_check_same_shape(API, "out", out, "self", self));
    return aclsim_red_lanes_finish(API, KERNEL, ACLSIM_RED_LOG_SOFTMAX, wrapped, out->dtype, "self", self, NULL, NULL,
                                   out, workspaceSize, executor);
}

aclnnStatus aclnnLogSoftmax(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)
{
    return aclsim_launch(KERNEL, workspace, workspaceSize, executor, stream);
}
