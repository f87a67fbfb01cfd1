/*
 * aclnnCast: out = self converted to dtype (Tensor.to), each element as aclsim_ew_convert
 * converts it.  The checks in ops-math's order (aclnn_py/ops/cast.py); the iteration is the
 * elementwise kernel's (elementwise.h).
 */
#include "aclnnop/aclnn_cast.h"
#include "aclsim_dtype_rules.h" /* generated at build: the dtype table (aclnn_py/ops/<op>.py DTYPE_RULES) */
#include "elementwise.h"

static const char API[] = "aclnnCastGetWorkspaceSize";
static const char KERNEL[] = "aclnnCast";

aclnnStatus aclnnCastGetWorkspaceSize(const aclTensor *self, const aclDataType dtype, aclTensor *out,
                                      uint64_t *workspaceSize, aclOpExecutor **executor)
{
    static const aclDataType dtypes[] = {ACLSIM_DTYPES_Cast_DTYPES}; /* the one table */

    ACLSIM_OPS_CHECK_HANDLES(API, self, out);
    if (workspaceSize == NULL || executor == NULL) {
        return aclsim_ops_nullptr(API, "%s must not be NULL", workspaceSize == NULL ? "workspaceSize" : "executor");
    }
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "self", self));
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "out", out));
    ACLSIM_OPS_TRY(aclsim_ops_check_dtype(API, "self", self, dtypes, ACLSIM_DTYPES_COUNT(dtypes)));
    size_t i = 0;
    while (i < ACLSIM_DTYPES_COUNT(dtypes) && dtypes[i] != dtype) {
        ++i;
    }
    if (i == ACLSIM_DTYPES_COUNT(dtypes)) {
        aclTensor named = {.dtype = dtype}; /* (only its dtype is read) */
        return aclsim_ops_check_dtype(API, "dtype", &named, dtypes, ACLSIM_DTYPES_COUNT(dtypes));
    }
    /* out's dtypes are the documented list too; CANN's code does not check them in phase 1 */
    ACLSIM_OPS_TRY(aclsim_ops_check_dtype(API, "out", out, dtypes, ACLSIM_DTYPES_COUNT(dtypes)));
    ACLSIM_OPS_TRY(aclsim_ew_check_rank(API, "self", self));
    ACLSIM_OPS_TRY(aclsim_ops_check_same_shape(API, "out", out, "self", self));
    if (out->dtype != dtype) {
        /* CANN never compares them in phase 1: its final copy fails (561103) */
        aclsim_set_error("%s: out dtype %s is not dtype %s: the result cannot be copied into out", API,
                         aclsim_ops_dtype_name(out->dtype), aclsim_ops_dtype_name(dtype));
        return ACLNN_ERR_INNER_NULLPTR;
    }
    aclsim_ew_params p = {.op = ACLSIM_EW_CAST, .promoted = dtype};
    return aclsim_ew_finish(API, KERNEL, &p, "self", self, NULL, NULL, out, workspaceSize, executor);
}

aclnnStatus aclnnCast(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)
{
    return aclsim_launch(KERNEL, workspace, workspaceSize, executor, stream);
}
