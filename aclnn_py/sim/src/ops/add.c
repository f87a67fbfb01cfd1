/*
 * aclnnAdd: out = self + alpha * other (torch.add), broadcast, in the promoted dtype of self and
 * other, converted to out's dtype.  The checks in ops-math's order (aclnn_py/ops/add.py); the
 * computation is the elementwise kernel's (elementwise.h).  aclnnAdds: the same with a scalar
 * other, computed in the dtype of A2/A3's PromoteTypeScalar (aclnn_py/ops/adds.py).
 */
#include "aclnnop/aclnn_add.h"
#include "aclsim_dtype_rules.h" /* generated at build: the dtype table (aclnn_py/ops/<op>.py DTYPE_RULES) */
#include "elementwise.h"

static const char API[] = "aclnnAddGetWorkspaceSize";
static const char KERNEL[] = "aclnnAdd";

aclnnStatus aclnnAddGetWorkspaceSize(const aclTensor *self, const aclTensor *other, const aclScalar *alpha,
                                     aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor)
{
    static const aclDataType dtypes[] = {ACLSIM_DTYPES_Add_DTYPES}; /* the one table */

    ACLSIM_OPS_CHECK_HANDLES(API, self, other, alpha, out);
    if (workspaceSize == NULL || executor == NULL) {
        return aclsim_ops_nullptr(API, "%s must not be NULL", workspaceSize == NULL ? "workspaceSize" : "executor");
    }
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "self", self));
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "other", other));
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "alpha", alpha));
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "out", out));
    ACLSIM_OPS_TRY(aclsim_ops_check_dtype(API, "self", self, dtypes, ACLSIM_DTYPES_COUNT(dtypes)));
    ACLSIM_OPS_TRY(aclsim_ops_check_dtype(API, "other", other, dtypes, ACLSIM_DTYPES_COUNT(dtypes)));
    aclsim_ew_params p = {.op = ACLSIM_EW_ADD, .promoted = aclsim_ew_promote(self->dtype, other->dtype)};
    ACLSIM_OPS_TRY(aclsim_ew_check_promoted(API, "self", self->dtype, "other", other->dtype, p.promoted));
    ACLSIM_OPS_TRY(aclsim_ew_check_alpha(API, alpha, p.promoted));
    ACLSIM_OPS_TRY(aclsim_ew_check_cast_to_out(API, p.promoted, out));
    /* CANN lists no dtypes for out; the ones outside the documented list (FP8, UINT16..) fail in
     * its final Cast, after phase 1: refused here, as documented. */
    ACLSIM_OPS_TRY(aclsim_ops_check_dtype(API, "out", out, dtypes, ACLSIM_DTYPES_COUNT(dtypes)));
    ACLSIM_OPS_TRY(aclsim_ew_check_rank(API, "self", self));
    ACLSIM_OPS_TRY(aclsim_ew_check_rank(API, "other", other));
    ACLSIM_OPS_TRY(aclsim_ew_check_broadcast(API, "self", self, "other", other, out));
    aclsim_ew_set_alpha(&p, alpha);
    return aclsim_ew_finish(API, KERNEL, &p, "self", self, "other", other, out, workspaceSize, executor);
}

aclnnStatus aclnnAddsGetWorkspaceSize(const aclTensor *self, const aclScalar *other, const aclScalar *alpha,
                                      aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor)
{
    static const char ADDS_API[] = "aclnnAddsGetWorkspaceSize";
    static const aclDataType dtypes[] = {ACLSIM_DTYPES_Adds_DTYPES}; /* the one table */

    ACLSIM_OPS_CHECK_HANDLES(ADDS_API, self, other, alpha, out);
    if (workspaceSize == NULL || executor == NULL) {
        return aclsim_ops_nullptr(ADDS_API, "%s must not be NULL", workspaceSize == NULL ? "workspaceSize" : "executor");
    }
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(ADDS_API, "self", self));
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(ADDS_API, "other", other));
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(ADDS_API, "alpha", alpha));
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(ADDS_API, "out", out));
    ACLSIM_OPS_TRY(aclsim_ops_check_dtype(ADDS_API, "self", self, dtypes, ACLSIM_DTYPES_COUNT(dtypes)));
    aclsim_ew_params p = {.op = ACLSIM_EW_ADD,
                          .promoted = aclsim_ew_scalar_promote(self->dtype, other->dtype, out->dtype, false)};
    ACLSIM_OPS_TRY(aclsim_ew_check_promoted(ADDS_API, "self", self->dtype, "other", other->dtype, p.promoted));
    ACLSIM_OPS_TRY(aclsim_ew_check_alpha(ADDS_API, alpha, p.promoted));
    ACLSIM_OPS_TRY(aclsim_ew_check_cast_to_out(ADDS_API, p.promoted, out));
    ACLSIM_OPS_TRY(aclsim_ops_check_dtype(ADDS_API, "out", out, dtypes, ACLSIM_DTYPES_COUNT(dtypes))); /* as Add */
    ACLSIM_OPS_TRY(aclsim_ew_check_rank(ADDS_API, "self", self));
    ACLSIM_OPS_TRY(aclsim_ew_check_out_shape(ADDS_API, out, self));
    aclsim_ew_set_alpha(&p, alpha);
    p.scalar = aclsim_ew_scalar_as(other, p.promoted);
    return aclsim_ew_finish(ADDS_API, "aclnnAdds", &p, "self", self, NULL, NULL, out, workspaceSize, executor);
}

aclnnStatus aclnnInplaceAddGetWorkspaceSize(const aclTensor *selfRef, const aclTensor *other, const aclScalar *alpha,
                                            uint64_t *workspaceSize, aclOpExecutor **executor)
{
    static const char INPLACE_API[] = "aclnnInplaceAddGetWorkspaceSize";
    static const aclDataType dtypes[] = {ACLSIM_DTYPES_InplaceAdd_DTYPES}; /* the one table */

    ACLSIM_OPS_CHECK_HANDLES(INPLACE_API, selfRef, other, alpha);
    /* CheckInplace first: other broadcasts to selfRef's shape */
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(INPLACE_API, "selfRef", selfRef));
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(INPLACE_API, "other", other));
    ACLSIM_OPS_TRY(aclsim_ew_check_inplace(INPLACE_API, "selfRef", selfRef, "other", other));
    /* then Add's phase 1 with out = selfRef */
    if (workspaceSize == NULL || executor == NULL) {
        return aclsim_ops_nullptr(INPLACE_API, "%s must not be NULL", workspaceSize == NULL ? "workspaceSize" : "executor");
    }
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(INPLACE_API, "alpha", alpha));
    ACLSIM_OPS_TRY(aclsim_ops_check_dtype(INPLACE_API, "selfRef", selfRef, dtypes, ACLSIM_DTYPES_COUNT(dtypes)));
    ACLSIM_OPS_TRY(aclsim_ops_check_dtype(INPLACE_API, "other", other, dtypes, ACLSIM_DTYPES_COUNT(dtypes)));
    aclsim_ew_params p = {.op = ACLSIM_EW_ADD, .promoted = aclsim_ew_promote(selfRef->dtype, other->dtype)};
    ACLSIM_OPS_TRY(aclsim_ew_check_promoted(INPLACE_API, "selfRef", selfRef->dtype, "other", other->dtype, p.promoted));
    ACLSIM_OPS_TRY(aclsim_ew_check_alpha(INPLACE_API, alpha, p.promoted));
    ACLSIM_OPS_TRY(aclsim_ew_check_cast_to(INPLACE_API, p.promoted, "selfRef", selfRef));
    ACLSIM_OPS_TRY(aclsim_ew_check_rank(INPLACE_API, "selfRef", selfRef));
    ACLSIM_OPS_TRY(aclsim_ew_check_rank(INPLACE_API, "other", other));
    aclsim_ew_set_alpha(&p, alpha);
    aclTensor *out = (aclTensor *)(uintptr_t)selfRef; /* written: CANN's selfRef is const in name only */
    return aclsim_ew_finish_into(INPLACE_API, "aclnnInplaceAdd", &p, "selfRef", selfRef, "other", other, "selfRef", out,
                                 workspaceSize, executor);
}

aclnnStatus aclnnInplaceAdd(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)
{
    return aclsim_launch("aclnnInplaceAdd", workspace, workspaceSize, executor, stream);
}

aclnnStatus aclnnAdds(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)
{
    return aclsim_launch("aclnnAdds", workspace, workspaceSize, executor, stream);
}

aclnnStatus aclnnAdd(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)
{
    return aclsim_launch(KERNEL, workspace, workspaceSize, executor, stream);
}
