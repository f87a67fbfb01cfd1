/* NLLLoss and NLLLossBackward's shared checks (nll_common.h). */
#include <stdio.h>

#include "nll_common.h"

aclnnStatus aclsim_nll_check_reduction(const char *api, int64_t reduction)
{
    if (reduction < ACLSIM_NLL_NONE || reduction > ACLSIM_NLL_SUM) {
        return aclsim_ops_invalid(api, "reduction must be 0 (none), 1 (mean) or 2 (sum), got %lld",
                                  (long long)reduction);
    }
    return ACLNN_SUCCESS;
}

aclnnStatus aclsim_nll_check_ranks(const char *api, const aclTensor *self, const aclTensor *target)
{
    if (self->ndim != 1 && self->ndim != 2) {
        return aclsim_ops_invalid(api, "self must be 1-D (C) or 2-D (N, C), got %llu-D shape %s",
                                  (unsigned long long)self->ndim, aclsim_ops_shape(self).s);
    }
    if (target->ndim > 1) {
        return aclsim_ops_invalid(api, "target must be 0-D or 1-D, got %llu-D shape %s",
                                  (unsigned long long)target->ndim, aclsim_ops_shape(target).s);
    }
    return ACLNN_SUCCESS;
}

aclnnStatus aclsim_nll_check_weight(const char *api, const aclTensor *weight, const aclTensor *self)
{
    int64_t classes = aclsim_ops_dim(self, -1);
    if (weight->ndim != 1 || weight->view_dims[0] != classes) {
        return aclsim_ops_invalid(api, "weight must be 1-D of size C = %lld, got shape %s", (long long)classes,
                                  aclsim_ops_shape(weight).s);
    }
    return ACLNN_SUCCESS;
}

aclnnStatus aclsim_nll_check_one_element(const char *api, const char *name, const aclTensor *t)
{
    if (aclsim_ops_numel(t) != 1) {
        return aclsim_ops_invalid(api, "%s must have exactly one element, got shape %s", name, aclsim_ops_shape(t).s);
    }
    return ACLNN_SUCCESS;
}

aclnnStatus aclsim_nll_rows(const char *kernel, const aclTensor *target, int64_t n, int64_t classes,
                            int64_t ignore_index, int64_t *rows)
{
    int64_t step = target->ndim == 1 ? target->strides[0] : 0;
    for (int64_t i = 0; i < n; ++i) {
        int64_t t = aclsim_ops_load_int(target->data, target->dtype, target->offset + i * step);
        if (t == ignore_index) {
            rows[i] = -1;
        } else if (t < 0 || t >= classes) {
            char at[48] = "target";
            if (target->ndim == 1) {
                snprintf(at, sizeof at, "target[%lld]", (long long)i);
            }
            aclsim_set_error("%s: %s = %lld is outside [0, %lld) and is not ignoreIndex (%lld); nothing was written",
                             kernel, at, (long long)t, (long long)classes, (long long)ignore_index);
            return ACLSIM_OPS_KERNEL_FAULT;
        } else {
            rows[i] = t;
        }
    }
    return ACLNN_SUCCESS;
}
