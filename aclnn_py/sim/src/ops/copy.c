/*
 * aclnnInplaceCopy: selfRef.copy_(src): src converted to selfRef's dtype (as Cast converts) and
 * broadcast to selfRef's shape, written through selfRef's view.  No CanCast check.  The checks in
 * ops-math's order (aclnn_py/ops/inplace_copy.py); the elementwise kernel's CAST (elementwise.h),
 * which stages a src that overlaps selfRef first.
 */
#include "aclnnop/aclnn_copy.h"
#include "aclsim_dtype_rules.h" /* generated at build: the dtype table (aclnn_py/ops/<op>.py DTYPE_RULES) */
#include "elementwise.h"

static const char API[] = "aclnnInplaceCopyGetWorkspaceSize";
static const char KERNEL[] = "aclnnInplaceCopy";

aclnnStatus aclnnInplaceCopyGetWorkspaceSize(aclTensor *selfRef, const aclTensor *src, uint64_t *workspaceSize,
                                             aclOpExecutor **executor)
{
    static const aclDataType dtypes[] = {ACLSIM_DTYPES_InplaceCopy_DTYPES}; /* the one table */

    ACLSIM_OPS_CHECK_HANDLES(API, selfRef, src);
    if (workspaceSize == NULL || executor == NULL) {
        return aclsim_ops_nullptr(API, "%s must not be NULL", workspaceSize == NULL ? "workspaceSize" : "executor");
    }
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "selfRef", selfRef));
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "src", src));
    ACLSIM_OPS_TRY(aclsim_ops_check_dtype(API, "selfRef", selfRef, dtypes, ACLSIM_DTYPES_COUNT(dtypes)));
    ACLSIM_OPS_TRY(aclsim_ops_check_dtype(API, "src", src, dtypes, ACLSIM_DTYPES_COUNT(dtypes)));
    ACLSIM_OPS_TRY(aclsim_ew_check_rank(API, "selfRef", selfRef));
    ACLSIM_OPS_TRY(aclsim_ew_check_rank(API, "src", src));
    ACLSIM_OPS_TRY(aclsim_ew_check_inplace(API, "selfRef", selfRef, "src", src));
    aclsim_ew_params p = {.op = ACLSIM_EW_CAST, .promoted = selfRef->dtype};
    return aclsim_ew_finish_into(API, KERNEL, &p, "src", src, NULL, NULL, "selfRef", selfRef, workspaceSize, executor);
}

aclnnStatus aclnnInplaceCopy(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, const aclrtStream stream)
{
    return aclsim_launch(KERNEL, workspace, workspaceSize, executor, stream);
}
