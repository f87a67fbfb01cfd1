/*
 * aclnnNLLLoss: l[n] = -weight[t[n]] * self[n, t[n]] (0 where t[n] == ignoreIndex), and the total
 * weight of the rows kept; out = l (reduction none), sum(l) / totalWeight (mean) or sum(l) (sum).
 * A 1-D self is one sample.  The checks in ops-nn's order (aclnn_py/ops/nll_loss.py).
 *
 * The kernel first turns every target into a row class (nll_common.h: a target out of range
 * is a device fault and nothing is written), then sums the products in float, each product
 * rounded to float and summed in double, and rounds once to out's dtype.  Workspace: the row
 * classes and the losses, so every input is read before an output is written.
 */

#include "aclnnop/aclnn_nll_loss.h"
#include "aclsim_dtype_rules.h" /* generated at build: the dtype table (aclnn_py/ops/<op>.py DTYPE_RULES) */
#include "nll_common.h"

static const char API[] = "aclnnNLLLossGetWorkspaceSize";
static const char KERNEL[] = "aclnnNLLLoss";

typedef struct {
    int64_t n, c;            /* rows (1 for a 1-D self) and classes */
    int64_t reduction, ignore_index;
} nll_params;

static aclnnStatus nll_kernel(aclOpExecutor *ex, void *workspace)
{
    ACLSIM_OPS_TRY(aclsim_ops_kernel_check_memory(KERNEL, ex, 0x7u, 2));
    const nll_params *p = aclsim_executor_params(ex, sizeof *p);
    const aclTensor *self = aclsim_executor_input(ex, 0), *target = aclsim_executor_input(ex, 1);
    const aclTensor *weight = aclsim_executor_input(ex, 2);
    aclTensor *out = aclsim_executor_output(ex, 0), *total_out = aclsim_executor_output(ex, 1);
    int64_t *rows = workspace;
    float *losses = (float *)((char *)workspace + aclsim_ops_region((uint64_t)p->n, sizeof(int64_t)));
    ACLSIM_OPS_TRY(aclsim_nll_rows(KERNEL, target, p->n, p->c, p->ignore_index, rows));

    int64_t row_step = self->ndim == 2 ? self->strides[0] : 0, col_step = self->strides[self->ndim - 1];
    double sum = 0.0, total = 0.0;
    for (int64_t i = 0; i < p->n; ++i) {
        if (rows[i] < 0) {
            losses[i] = 0.0f;
            continue;
        }
        float w = (float)aclsim_ops_load(weight->data, weight->dtype, weight->offset + rows[i] * weight->strides[0]);
        float x = (float)aclsim_ops_load(self->data, self->dtype, self->offset + i * row_step + rows[i] * col_step);
        losses[i] = -(w * x);
        sum += (double)losses[i];
        total += (double)w;
    }
    if (p->reduction == ACLSIM_NLL_NONE) {
        int64_t step = out->ndim == 1 ? out->strides[0] : 0;
        for (int64_t i = 0; i < p->n; ++i) {
            aclsim_ops_store(out->data, out->dtype, out->offset + i * step, (double)losses[i]);
        }
        return ACLNN_SUCCESS;  /* totalWeightOut is not written (as CANN) */
    }
    aclsim_ops_store(out->data, out->dtype, out->offset, p->reduction == ACLSIM_NLL_MEAN ? sum / total : sum);
    aclsim_ops_store(total_out->data, total_out->dtype, total_out->offset, total);
    return ACLNN_SUCCESS;
}

static aclnnStatus check_params(const aclTensor *self, const aclTensor *target, const aclTensor *weight,
                                int64_t reduction, const aclTensor *out, const aclTensor *totalWeightOut)
{
    static const aclDataType dtypes[] = {ACLSIM_DTYPES_NLLLoss_SELF}; /* the one table */
    static const aclDataType target_dtypes[] = {ACLSIM_DTYPES_NLLLoss_TARGET};

    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "self", self));
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "target", target));
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "weight", weight));
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "out", out));
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "totalWeightOut", totalWeightOut));

    ACLSIM_OPS_TRY(aclsim_ops_check_same_dtype(API, "weight", weight, "self", self));
    const aclTensor *outs[] = {out, totalWeightOut};
    const char *names[] = {"out", "totalWeightOut"};
    for (int i = 0; i < 2; ++i) {
        if (!aclsim_ops_can_cast(self->dtype, outs[i]->dtype)) {
            return aclsim_ops_invalid(API, "self dtype %s cannot be cast to %s dtype %s",
                                      aclsim_ops_dtype_name(self->dtype), names[i],
                                      aclsim_ops_dtype_name(outs[i]->dtype));
        }
    }
    ACLSIM_OPS_TRY(aclsim_ops_check_dtype(API, "self", self, dtypes, ACLSIM_DTYPES_COUNT(dtypes)));
    ACLSIM_OPS_TRY(aclsim_ops_check_dtype(API, "target", target, target_dtypes, ACLSIM_DTYPES_COUNT(target_dtypes)));
    /* beyond CANN's code (CanCast only): the documented list */
    ACLSIM_OPS_TRY(aclsim_ops_check_dtype(API, "out", out, dtypes, ACLSIM_DTYPES_COUNT(dtypes)));
    ACLSIM_OPS_TRY(aclsim_ops_check_dtype(API, "totalWeightOut", totalWeightOut, dtypes, ACLSIM_DTYPES_COUNT(dtypes)));
    ACLSIM_OPS_TRY(aclsim_nll_check_reduction(API, reduction));

    ACLSIM_OPS_TRY(aclsim_nll_check_ranks(API, self, target));
    bool paired = (self->ndim == 1 && target->ndim == 0) ||
                  (self->ndim == 2 && target->ndim == 1 && target->view_dims[0] == self->view_dims[0]);
    if (!paired) {
        return aclsim_ops_invalid(API, "target must be [N] = %s for a 2-D self, or 0-D for a 1-D self; got self %s "
                                  "and target %s", aclsim_ops_int_list(self->view_dims, 1).s,
                                  aclsim_ops_shape(self).s, aclsim_ops_shape(target).s);
    }
    ACLSIM_OPS_TRY(aclsim_nll_check_weight(API, weight, self));
    if (reduction == ACLSIM_NLL_NONE && self->ndim == 2) {
        if (out->ndim != 1 || out->view_dims[0] != self->view_dims[0]) {
            return aclsim_ops_invalid(API, "out must be [N] = %s for reduction none, got %s",
                                      aclsim_ops_int_list(self->view_dims, 1).s, aclsim_ops_shape(out).s);
        }
    } else if (out->ndim > 1 || aclsim_ops_numel(out) != 1) {
        return aclsim_ops_invalid(API, "out must be at most 1-D with one element, got %s", aclsim_ops_shape(out).s);
    }
    ACLSIM_OPS_TRY(aclsim_nll_check_one_element(API, "totalWeightOut", totalWeightOut));
    if (aclsim_ops_is_empty(self) && aclsim_ops_dim(self, -1) == 0 && aclsim_ops_numel(target) > 0) {
        return aclsim_ops_invalid(API, "self %s has C = 0 but target %s is not empty", aclsim_ops_shape(self).s,
                                  aclsim_ops_shape(target).s);
    }
    return ACLNN_SUCCESS;
}

aclnnStatus aclnnNLLLossGetWorkspaceSize(const aclTensor *self, const aclTensor *target, const aclTensor *weight,
                                         int64_t reduction, int64_t ignoreIndex, aclTensor *out,
                                         aclTensor *totalWeightOut, uint64_t *workspaceSize, aclOpExecutor **executor)
{
    ACLSIM_OPS_CHECK_HANDLES(API, self, target, weight, out, totalWeightOut);
    if (workspaceSize == NULL || executor == NULL) {
        return aclsim_ops_nullptr(API, "%s must not be NULL", workspaceSize == NULL ? "workspaceSize" : "executor");
    }
    ACLSIM_OPS_TRY(check_params(self, target, weight, reduction, out, totalWeightOut));
    if (reduction == ACLSIM_NLL_NONE && aclsim_ops_is_empty(self)) {
        return aclsim_ops_finish(KERNEL, aclsim_ops_noop_kernel, 0, NULL, 0, NULL, 0, NULL, 0, workspaceSize,
                                 executor);
    }
    ACLSIM_OPS_TRY(aclsim_ops_check_memory(API, "self", self));
    ACLSIM_OPS_TRY(aclsim_ops_check_memory(API, "target", target));
    ACLSIM_OPS_TRY(aclsim_ops_check_memory(API, "weight", weight));
    ACLSIM_OPS_TRY(aclsim_ops_check_memory(API, "out", out));
    ACLSIM_OPS_TRY(aclsim_ops_check_memory(API, "totalWeightOut", totalWeightOut));
    nll_params p = {
        .n = self->ndim == 2 ? self->view_dims[0] : 1, .c = aclsim_ops_dim(self, -1),
        .reduction = reduction, .ignore_index = ignoreIndex,
    };
    if (aclsim_ops_is_empty(self)) {
        p.n = 0; /* (a 1-D self of C = 0 has an empty target too: refused otherwise) */
    }
    uint64_t workspace = aclsim_ops_region((uint64_t)p.n, sizeof(int64_t)) + aclsim_ops_region((uint64_t)p.n, 4);
    const aclTensor *inputs[] = {self, target, weight};
    const aclTensor *outputs[] = {out, totalWeightOut};
    return aclsim_ops_finish(KERNEL, nll_kernel, workspace, &p, sizeof p, inputs, 3, outputs, 2, workspaceSize,
                             executor);
}

aclnnStatus aclnnNLLLoss(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)
{
    return aclsim_launch(KERNEL, workspace, workspaceSize, executor, stream);
}
