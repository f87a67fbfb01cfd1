/*
 * aclnnInplaceFillScalar: selfRef.fill_(value), value converted to selfRef's dtype as C's
 * static_cast (a float into BOOL is |v| >= FLT_EPSILON), written through selfRef's view.  The
 * checks in ops-math's order (aclnn_py/ops/inplace_fill_scalar.py); the elementwise kernel's
 * FILL (elementwise.h).
 */
#include "aclnnop/aclnn_fill_scalar.h"
#include "aclsim_dtype_rules.h" /* generated at build: the dtype table (aclnn_py/ops/<op>.py DTYPE_RULES) */
#include "elementwise.h"

static const char API[] = "aclnnInplaceFillScalarGetWorkspaceSize";
static const char KERNEL[] = "aclnnInplaceFillScalar";

aclnnStatus aclnnInplaceFillScalarGetWorkspaceSize(aclTensor *selfRef, const aclScalar *value, uint64_t *workspaceSize,
                                                   aclOpExecutor **executor)
{
    static const aclDataType dtypes[] = {ACLSIM_DTYPES_InplaceFillScalar_DTYPES}; /* the one table */

    ACLSIM_OPS_CHECK_HANDLES(API, selfRef, value);
    if (workspaceSize == NULL || executor == NULL) {
        return aclsim_ops_nullptr(API, "%s must not be NULL", workspaceSize == NULL ? "workspaceSize" : "executor");
    }
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "selfRef", selfRef));
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "value", value));
    ACLSIM_OPS_TRY(aclsim_ops_check_dtype(API, "selfRef", selfRef, dtypes, ACLSIM_DTYPES_COUNT(dtypes)));
    ACLSIM_OPS_TRY(aclsim_ew_check_promoted(API, "selfRef", selfRef->dtype, "value", value->dtype,
                                            aclsim_ew_promote(selfRef->dtype, value->dtype)));
    ACLSIM_OPS_TRY(aclsim_ew_check_rank(API, "selfRef", selfRef));
    aclsim_ew_params p = {.op = ACLSIM_EW_FILL, .promoted = selfRef->dtype};
    p.scalar = aclsim_ew_scalar_as(value, selfRef->dtype);
    return aclsim_ew_finish_into(API, KERNEL, &p, "selfRef", selfRef, NULL, NULL, "selfRef", selfRef, workspaceSize,
                                 executor);
}

aclnnStatus aclnnInplaceFillScalar(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)
{
    return aclsim_launch(KERNEL, workspace, workspaceSize, executor, stream);
}
