/*
 * aclnnReduceSum: out = sum of self over dims (torch.sum(self, dims, keepdim, dtype=dtype)), self
 * converted to dtype (Cast's conversion) and summed in it; an empty dims is every dim; BOOL is
 * "any".  The checks in ops-math's order (aclnn_py/ops/reduce_sum.py); the walk and sums are
 * reduce.h's.
 */
#include "aclnnop/aclnn_reduce_sum.h"
#include "aclsim_dtype_rules.h" /* generated at build: the dtype table (aclnn_py/ops/<op>.py DTYPE_RULES) */
#include "elementwise.h"
#include "reduce.h"

static const char API[] = "aclnnReduceSumGetWorkspaceSize";
static const char KERNEL[] = "aclnnReduceSum";

aclnnStatus aclnnReduceSumGetWorkspaceSize(const aclTensor *self, const aclIntArray *dims, bool keepDims,
                                           aclDataType dtype, aclTensor *out, uint64_t *workspaceSize,
                                           aclOpExecutor **executor)
{
    static const aclDataType dtypes[] = {ACLSIM_DTYPES_ReduceSum_DTYPES}; /* the one table */
    const size_t n_dtypes = ACLSIM_DTYPES_COUNT(dtypes);

    ACLSIM_OPS_CHECK_HANDLES(API, self, dims, out);
    if (workspaceSize == NULL || executor == NULL) {
        return aclsim_ops_nullptr(API, "%s must not be NULL", workspaceSize == NULL ? "workspaceSize" : "executor");
    }
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "self", self));
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "dims", dims));
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "out", out));
    ACLSIM_OPS_TRY(aclsim_ops_check_dtype(API, "self", self, dtypes, n_dtypes));
    ACLSIM_OPS_TRY(aclsim_ops_check_dtype(API, "out", out, dtypes, n_dtypes));
    aclTensor named = {.dtype = dtype}; /* (only its dtype is read) */
    ACLSIM_OPS_TRY(aclsim_ops_check_dtype(API, "dtype", &named, dtypes, n_dtypes));
    if (out->dtype != dtype) {
        return aclsim_ops_invalid(API, "out dtype must equal dtype %s, got %s", aclsim_ops_dtype_name(dtype),
                                  aclsim_ops_dtype_name(out->dtype));
    }
    ACLSIM_OPS_TRY(aclsim_ew_check_rank(API, "self", self));
    uint32_t mask;
    ACLSIM_OPS_TRY(aclsim_red_check_dims(API, "dims", dims, "self", self->ndim, &mask));
    if (aclsim_ops_is_empty(self)) { /* out filled with 0, its shape not checked */
        if (aclsim_ops_is_complex(out->dtype)) {
            return aclsim_ops_invalid(API, "out dtype must not be complex for an empty self, got %s",
                                      aclsim_ops_dtype_name(out->dtype));
        }
    } else if (self->ndim == 0) {
        if (aclsim_ops_numel(out) != 1) { /* the final copy of the one element fails */
            aclsim_set_error("%s: out must hold the one element of a 0-d self, got shape %s", API,
                             aclsim_ops_shape(out).s);
            return ACLNN_ERR_INNER_NULLPTR;
        }
    } else {
        ACLSIM_OPS_TRY(aclsim_red_check_out_shape(API, self, mask, keepDims, out));
    }
    return aclsim_red_sum_finish(API, KERNEL, self, mask, dtype, false, out, workspaceSize, executor);
}

aclnnStatus aclnnReduceSum(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)
{
    return aclsim_launch(KERNEL, workspace, workspaceSize, executor, stream);
}
