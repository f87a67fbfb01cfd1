/*
 * aclnnSoftmax: out = softmax(self, dim), computed in self's dtype and converted to out's.  The
 * checks in ops-nn's order (aclnn_py/ops/softmax.py): an empty self succeeds before the dtype,
 * dim and shape checks; the lanes are reduce.h's.
 */
#include "aclnnop/aclnn_softmax.h"
#include "aclsim_dtype_rules.h" /* generated at build: the dtype table (aclnn_py/ops/<op>.py DTYPE_RULES) */
#include "elementwise.h"
#include "reduce.h"

static const char API[] = "aclnnSoftmaxGetWorkspaceSize";
static const char KERNEL[] = "aclnnSoftmax";

aclnnStatus aclnnSoftmaxGetWorkspaceSize(const aclTensor *self, int64_t dim, aclTensor *out, uint64_t *workspaceSize,
                                         aclOpExecutor **executor)
{
    static const aclDataType dtypes[] = {ACLSIM_DTYPES_Softmax_DTYPES}; /* the one table */

    ACLSIM_OPS_CHECK_HANDLES(API, self, out);
    if (workspaceSize == NULL || executor == NULL) {
        return aclsim_ops_nullptr(API, "%s must not be NULL", workspaceSize == NULL ? "workspaceSize" : "executor");
    }
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "self", self));
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "out", out));
    if (aclsim_ops_is_empty(self)) { /* before every other check, as CANN */
        return aclsim_ops_finish(KERNEL, aclsim_ops_noop_kernel, 0, NULL, 0, NULL, 0, NULL, 0, workspaceSize,
                                 executor);
    }
    ACLSIM_OPS_TRY(aclsim_ops_check_dtype(API, "self", self, dtypes, ACLSIM_DTYPES_COUNT(dtypes)));
    ACLSIM_OPS_TRY(aclsim_ops_check_dtype(API, "out", out, dtypes, ACLSIM_DTYPES_COUNT(dtypes)));
    int64_t wrapped;
    ACLSIM_OPS_TRY(aclsim_red_check_dim(API, "dim", dim, "self", self->ndim, &wrapped));
    ACLSIM_OPS_TRY(aclsim_ew_check_rank(API, "self", self));
    ACLSIM_OPS_TRY(aclsim_ops_check_same_shape(API, "out", out, "self", self));
    return aclsim_red_lanes_finish(API, KERNEL, ACLSIM_RED_SOFTMAX, wrapped, self->dtype, "self", self, NULL, NULL,
                                   out, workspaceSize, executor);
}

aclnnStatus aclnnSoftmax(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)
{
    return aclsim_launch(KERNEL, workspace, workspaceSize, executor, stream);
}
