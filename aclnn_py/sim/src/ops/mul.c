/*
 * aclnnMul: out = self * other (torch.mul), broadcast, in the promoted dtype of self and other,
 * converted to out's dtype.  The checks in ops-math's order (aclnn_py/ops/mul.py); the
 * computation is the elementwise kernel's (elementwise.h).  aclnnMuls: the same with a scalar
 * other, computed in the dtype of A2/A3's InferTensorScalarDtype (aclnn_py/ops/muls.py).
 */
#include "aclnnop/aclnn_mul.h"
#include "aclsim_dtype_rules.h" /* generated at build: the dtype table (aclnn_py/ops/<op>.py DTYPE_RULES) */
#include "elementwise.h"

static const char API[] = "aclnnMulGetWorkspaceSize";
static const char KERNEL[] = "aclnnMul";

aclnnStatus aclnnMulGetWorkspaceSize(const aclTensor *self, const aclTensor *other, aclTensor *out,
                                     uint64_t *workspaceSize, aclOpExecutor **executor)
{
    static const aclDataType dtypes[] = {ACLSIM_DTYPES_Mul_DTYPES}; /* the one table */

    ACLSIM_OPS_CHECK_HANDLES(API, self, other, out);
    if (workspaceSize == NULL || executor == NULL) {
        return aclsim_ops_nullptr(API, "%s must not be NULL", workspaceSize == NULL ? "workspaceSize" : "executor");
    }
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "self", self));
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "other", other));
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "out", out));
    ACLSIM_OPS_TRY(aclsim_ops_check_dtype(API, "self", self, dtypes, ACLSIM_DTYPES_COUNT(dtypes)));
    ACLSIM_OPS_TRY(aclsim_ops_check_dtype(API, "other", other, dtypes, ACLSIM_DTYPES_COUNT(dtypes)));
    ACLSIM_OPS_TRY(aclsim_ops_check_dtype(API, "out", out, dtypes, ACLSIM_DTYPES_COUNT(dtypes)));
    aclsim_ew_params p = {.op = ACLSIM_EW_MUL, .promoted = aclsim_ew_promote(self->dtype, other->dtype)};
    ACLSIM_OPS_TRY(aclsim_ew_check_promoted(API, "self", self->dtype, "other", other->dtype, p.promoted));
    ACLSIM_OPS_TRY(aclsim_ew_check_cast_to_out(API, p.promoted, out));
    ACLSIM_OPS_TRY(aclsim_ew_check_rank(API, "self", self));
    ACLSIM_OPS_TRY(aclsim_ew_check_rank(API, "other", other));
    ACLSIM_OPS_TRY(aclsim_ew_check_broadcast(API, "self", self, "other", other, out));
    return aclsim_ew_finish(API, KERNEL, &p, "self", self, "other", other, out, workspaceSize, executor);
}

aclnnStatus aclnnMulsGetWorkspaceSize(const aclTensor *self, const aclScalar *other, aclTensor *out,
                                      uint64_t *workspaceSize, aclOpExecutor **executor)
{
    static const char MULS_API[] = "aclnnMulsGetWorkspaceSize";
    static const aclDataType dtypes[] = {ACLSIM_DTYPES_Muls_DTYPES}; /* the one table */

    ACLSIM_OPS_CHECK_HANDLES(MULS_API, self, other, out);
    if (workspaceSize == NULL || executor == NULL) {
        return aclsim_ops_nullptr(MULS_API, "%s must not be NULL", workspaceSize == NULL ? "workspaceSize" : "executor");
    }
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(MULS_API, "self", self));
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(MULS_API, "other", other));
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(MULS_API, "out", out));
    ACLSIM_OPS_TRY(aclsim_ops_check_dtype(MULS_API, "self", self, dtypes, ACLSIM_DTYPES_COUNT(dtypes)));
    ACLSIM_OPS_TRY(aclsim_ops_check_dtype(MULS_API, "out", out, dtypes, ACLSIM_DTYPES_COUNT(dtypes)));
    aclsim_ew_params p = {.op = ACLSIM_EW_MUL,
                          .promoted = aclsim_ew_scalar_promote(self->dtype, other->dtype, out->dtype, true)};
    /* A2/A3 check no promotion here: a pair with none fails after phase 1 there (deviation). */
    ACLSIM_OPS_TRY(aclsim_ew_check_promoted(MULS_API, "self", self->dtype, "other", other->dtype, p.promoted));
    ACLSIM_OPS_TRY(aclsim_ew_check_out_shape(MULS_API, out, self));
    p.scalar = aclsim_ew_scalar_as(other, p.promoted);
    return aclsim_ew_finish(MULS_API, "aclnnMuls", &p, "self", self, NULL, NULL, out, workspaceSize, executor);
}

aclnnStatus aclnnMuls(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)
{
    return aclsim_launch("aclnnMuls", workspace, workspaceSize, executor, stream);
}

aclnnStatus aclnnMul(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)
{
    return aclsim_launch(KERNEL, workspace, workspaceSize, executor, stream);
}
