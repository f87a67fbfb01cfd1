/*
 * aclnnRelu: out = max(self, 0) (torch.relu; NaN stays NaN), in self's dtype.  The checks in
 * ops-nn's order (aclnn_py/ops/relu.py); the computation is the elementwise kernel's
 * (elementwise.h) with the scalar 0.  CANN declares out const and writes it.
 */
#include "aclnnop/aclnn_relu.h"
#include "aclsim_dtype_rules.h" /* generated at build: the dtype table (aclnn_py/ops/<op>.py DTYPE_RULES) */
#include "elementwise.h"

static const char API[] = "aclnnReluGetWorkspaceSize";
static const char KERNEL[] = "aclnnRelu";

aclnnStatus aclnnReluGetWorkspaceSize(const aclTensor *self, const aclTensor *out, uint64_t *workspaceSize,
                                      aclOpExecutor **executor)
{
    static const aclDataType dtypes[] = {ACLSIM_DTYPES_Relu_DTYPES}; /* the one table */

    ACLSIM_OPS_CHECK_HANDLES(API, self, out);
    if (workspaceSize == NULL || executor == NULL) {
        return aclsim_ops_nullptr(API, "%s must not be NULL", workspaceSize == NULL ? "workspaceSize" : "executor");
    }
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "self", self));
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "out", out));
    ACLSIM_OPS_TRY(aclsim_ops_check_dtype(API, "self", self, dtypes, ACLSIM_DTYPES_COUNT(dtypes)));
    ACLSIM_OPS_TRY(aclsim_ops_check_dtype(API, "out", out, dtypes, ACLSIM_DTYPES_COUNT(dtypes)));
    ACLSIM_OPS_TRY(aclsim_ops_check_same_dtype(API, "out", out, "self", self));
    ACLSIM_OPS_TRY(aclsim_ops_check_same_shape(API, "out", out, "self", self));
    ACLSIM_OPS_TRY(aclsim_ew_check_rank(API, "self", self));
    ACLSIM_OPS_TRY(aclsim_ew_check_rank(API, "out", out));
    aclsim_ew_params p = {.op = ACLSIM_EW_MAX, .promoted = self->dtype}; /* the scalar 0 in every compute type */
    return aclsim_ew_finish(API, KERNEL, &p, "self", self, NULL, NULL, (aclTensor *)out, workspaceSize, executor);
}

aclnnStatus aclnnRelu(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, const aclrtStream stream)
{
    return aclsim_launch(KERNEL, workspace, workspaceSize, executor, stream);
}
