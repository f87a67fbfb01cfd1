/*
 * aclnnInplaceZero: selfRef.zero_(), through selfRef's view (strides and offset honoured).  The
 * checks in ops-math's order (aclnn_py/ops/inplace_zero.py): no rank limit; the elementwise
 * kernel's FILL (elementwise.h) with the value 0.
 */
#include "aclnnop/aclnn_zero.h"
#include "aclsim_dtype_rules.h" /* generated at build: the dtype table (aclnn_py/ops/<op>.py DTYPE_RULES) */
#include "elementwise.h"

static const char API[] = "aclnnInplaceZeroGetWorkspaceSize";
static const char KERNEL[] = "aclnnInplaceZero";

aclnnStatus aclnnInplaceZeroGetWorkspaceSize(aclTensor *selfRef, uint64_t *workspaceSize, aclOpExecutor **executor)
{
    static const aclDataType dtypes[] = {ACLSIM_DTYPES_InplaceZero_DTYPES}; /* the one table */

    ACLSIM_OPS_CHECK_HANDLES(API, selfRef);
    if (workspaceSize == NULL || executor == NULL) {
        return aclsim_ops_nullptr(API, "%s must not be NULL", workspaceSize == NULL ? "workspaceSize" : "executor");
    }
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "selfRef", selfRef));
    ACLSIM_OPS_TRY(aclsim_ops_check_dtype(API, "selfRef", selfRef, dtypes, ACLSIM_DTYPES_COUNT(dtypes)));
    aclsim_ew_params p = {.op = ACLSIM_EW_FILL, .promoted = selfRef->dtype}; /* the scalar 0 in every compute type */
    return aclsim_ew_finish_into(API, KERNEL, &p, "selfRef", selfRef, NULL, NULL, "selfRef", selfRef, workspaceSize,
                                 executor);
}

aclnnStatus aclnnInplaceZero(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)
{
    return aclsim_launch(KERNEL, workspace, workspaceSize, executor, stream);
}
