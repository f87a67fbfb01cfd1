/*
 * aclnnMean: out = the mean of self over dim (torch.mean(self, dim, keepdim, dtype=dtype)), self
 * converted to dtype and averaged in it, then converted to out's dtype; an empty dim is every
 * dim.  The checks in ops-math's order (aclnn_py/ops/mean.py); the walk and sums are reduce.h's.
 */
#include "aclnnop/aclnn_mean.h"
#include "aclsim_dtype_rules.h" /* generated at build: the dtype table (aclnn_py/ops/<op>.py DTYPE_RULES) */
#include "elementwise.h"
#include "reduce.h"

static const char API[] = "aclnnMeanGetWorkspaceSize";
static const char KERNEL[] = "aclnnMean";

aclnnStatus aclnnMeanGetWorkspaceSize(const aclTensor *self, const aclIntArray *dim, bool keepDim, aclDataType dtype,
                                      aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor)
{
    static const aclDataType dtypes[] = {ACLSIM_DTYPES_Mean_DTYPES}; /* the one table */
    const size_t n_dtypes = ACLSIM_DTYPES_COUNT(dtypes);

    ACLSIM_OPS_CHECK_HANDLES(API, self, dim, out);
    if (workspaceSize == NULL || executor == NULL) {
        return aclsim_ops_nullptr(API, "%s must not be NULL", workspaceSize == NULL ? "workspaceSize" : "executor");
    }
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "self", self));
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "dim", dim));
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "out", out));
    ACLSIM_OPS_TRY(aclsim_ops_check_dtype(API, "self", self, dtypes, n_dtypes));
    aclTensor named = {.dtype = dtype}; /* (only its dtype is read) */
    ACLSIM_OPS_TRY(aclsim_ops_check_dtype(API, "dtype", &named, dtypes, n_dtypes));
    ACLSIM_OPS_TRY(aclsim_ops_check_dtype(API, "out", out, dtypes, n_dtypes));
    if (!aclsim_ops_can_cast(self->dtype, dtype)) {
        return aclsim_ops_invalid(API, "self dtype %s cannot be cast to dtype %s", aclsim_ops_dtype_name(self->dtype),
                                  aclsim_ops_dtype_name(dtype));
    }
    if (!aclsim_ops_can_cast(dtype, out->dtype)) {
        return aclsim_ops_invalid(API, "dtype %s cannot be cast to out dtype %s", aclsim_ops_dtype_name(dtype),
                                  aclsim_ops_dtype_name(out->dtype));
    }
    uint32_t mask;
    ACLSIM_OPS_TRY(aclsim_red_check_dims(API, "dim", dim, "self", self->ndim, &mask));
    ACLSIM_OPS_TRY(aclsim_ew_check_rank(API, "self", self));
    ACLSIM_OPS_TRY(aclsim_ew_check_rank(API, "out", out));
    if (!aclsim_ops_is_empty(self)) { /* an empty self fills out with NaN, its shape not checked */
        ACLSIM_OPS_TRY(aclsim_red_check_out_shape(API, self, mask, keepDim, out));
    }
    return aclsim_red_sum_finish(API, KERNEL, self, mask, dtype, true, out, workspaceSize, executor);
}

aclnnStatus aclnnMean(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)
{
    return aclsim_launch(KERNEL, workspace, workspaceSize, executor, stream);
}
