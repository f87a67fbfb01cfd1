/*
 * aclnnNLLLossBackward: out = 0 but out[n, t[n]] = -weight[t[n]] * g[n] on the rows kept (target
 * not ignoreIndex), g[n] = gradOutput[n] (none), gradOutput (sum) or gradOutput / totalWeight
 * (mean, the given totalWeight).  self's data is never read (its shape only).  The checks in
 * ops-nn's order (aclnn_py/ops/nll_loss_backward.py).
 *
 * The kernel reads every row's class and value into the workspace (a target out of range is a
 * device fault and nothing is written: nll_common.h), then zeroes out and writes the values, so
 * an out overlapping an input still sees the inputs as they were.
 */
#include "aclnnop/aclnn_nll_loss_backward.h"
#include "aclsim_dtype_rules.h" /* generated at build: the dtype table (aclnn_py/ops/<op>.py DTYPE_RULES) */
#include "nll_common.h"

static const char API[] = "aclnnNLLLossBackwardGetWorkspaceSize";
static const char KERNEL[] = "aclnnNLLLossBackward";
/* The inputs whose data the kernel reads: gradOutput, target, weight, totalWeight (not self). */
#define INPUTS_READ (1u << 0 | 1u << 2 | 1u << 3 | 1u << 4)

typedef struct {
    int64_t n, c;            /* rows (1 for a 1-D self) and classes */
    int64_t reduction, ignore_index;
} nll_grad_params;

static aclnnStatus nll_grad_kernel(aclOpExecutor *ex, void *workspace)
{
    ACLSIM_OPS_TRY(aclsim_ops_kernel_check_memory(KERNEL, ex, INPUTS_READ, 1));
    const nll_grad_params *p = aclsim_executor_params(ex, sizeof *p);
    const aclTensor *grad = aclsim_executor_input(ex, 0), *target = aclsim_executor_input(ex, 2);
    const aclTensor *weight = aclsim_executor_input(ex, 3), *total = aclsim_executor_input(ex, 4);
    aclTensor *out = aclsim_executor_output(ex, 0);
    int64_t *rows = workspace;
    float *values = (float *)((char *)workspace + aclsim_ops_region((uint64_t)p->n, sizeof(int64_t)));
    ACLSIM_OPS_TRY(aclsim_nll_rows(KERNEL, target, p->n, p->c, p->ignore_index, rows));

    float scale = 1.0f;
    if (p->reduction == ACLSIM_NLL_MEAN) {
        scale = (float)aclsim_ops_load(total->data, total->dtype, total->offset);
    }
    int64_t grad_step = p->reduction == ACLSIM_NLL_NONE && grad->ndim == 1 ? grad->strides[0] : 0;
    for (int64_t i = 0; i < p->n; ++i) {
        if (rows[i] >= 0) {
            float g = (float)aclsim_ops_load(grad->data, grad->dtype, grad->offset + i * grad_step);
            if (p->reduction == ACLSIM_NLL_MEAN) {
                g = g / scale;
            }
            float w = (float)aclsim_ops_load(weight->data, weight->dtype,
                                             weight->offset + rows[i] * weight->strides[0]);
            values[i] = -(w * g);
        }
    }
    aclsim_ops_fill_zero(out);
    int64_t row_step = out->ndim == 2 ? out->strides[0] : 0, col_step = out->strides[out->ndim - 1];
    for (int64_t i = 0; i < p->n; ++i) {
        if (rows[i] >= 0) {
            aclsim_ops_store(out->data, out->dtype, out->offset + i * row_step + rows[i] * col_step,
                             (double)values[i]);
        }
    }
    /* The overflow hook's test of out: its zeros are finite, the values are read back (as
     * stored, after every write), so the hook need not read the whole of out again. */
    bool finite = true;
    for (int64_t i = 0; finite && i < p->n; ++i) {
        finite = rows[i] < 0 ||
                 !aclsim_nonfinite_run(out->data, out->dtype, out->offset + i * row_step + rows[i] * col_step, 0, 1);
    }
    if (finite) {
        aclsim_kernel_outputs_finite(0);
    }
    return ACLNN_SUCCESS;
}

static aclnnStatus check_params(const aclTensor *gradOutput, const aclTensor *self, const aclTensor *target,
                                const aclTensor *weight, int64_t reduction, const aclTensor *totalWeight,
                                const aclTensor *out)
{
    static const aclDataType dtypes[] = {ACLSIM_DTYPES_NLLLossBackward_SELF}; /* the one table */
    static const aclDataType target_dtypes[] = {ACLSIM_DTYPES_NLLLossBackward_TARGET};

    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "gradOutput", gradOutput));
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "self", self));
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "target", target));
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "weight", weight));
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "totalWeight", totalWeight));
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "out", out));

    ACLSIM_OPS_TRY(aclsim_ops_check_same_dtype(API, "weight", weight, "self", self));
    ACLSIM_OPS_TRY(aclsim_ops_check_same_dtype(API, "gradOutput", gradOutput, "self", self));
    ACLSIM_OPS_TRY(aclsim_ops_check_same_dtype(API, "totalWeight", totalWeight, "self", self));
    if (!aclsim_ops_can_cast(self->dtype, out->dtype)) {
        return aclsim_ops_invalid(API, "self dtype %s cannot be cast to out dtype %s",
                                  aclsim_ops_dtype_name(self->dtype), aclsim_ops_dtype_name(out->dtype));
    }
    ACLSIM_OPS_TRY(aclsim_ops_check_dtype(API, "self", self, dtypes, ACLSIM_DTYPES_COUNT(dtypes)));
    ACLSIM_OPS_TRY(aclsim_ops_check_dtype(API, "target", target, target_dtypes, ACLSIM_DTYPES_COUNT(target_dtypes)));
    /* beyond CANN's code (CanCast only): the documented list */
    ACLSIM_OPS_TRY(aclsim_ops_check_dtype(API, "out", out, dtypes, ACLSIM_DTYPES_COUNT(dtypes)));
    ACLSIM_OPS_TRY(aclsim_nll_check_reduction(API, reduction));

    ACLSIM_OPS_TRY(aclsim_nll_check_ranks(API, self, target));
    if (!(self->ndim == 1 && target->ndim == 0) &&
        (target->ndim != 1 || target->view_dims[0] != self->view_dims[0])) {
        return aclsim_ops_invalid(API, "target's first dim must equal self's, got self %s and target %s",
                                  aclsim_ops_shape(self).s, aclsim_ops_shape(target).s);
    }
    ACLSIM_OPS_TRY(aclsim_nll_check_weight(API, weight, self));
    ACLSIM_OPS_TRY(aclsim_nll_check_one_element(API, "totalWeight", totalWeight));
    if (reduction == ACLSIM_NLL_NONE && self->ndim == 2) {
        if (gradOutput->ndim != 1 || gradOutput->view_dims[0] != self->view_dims[0]) {
            return aclsim_ops_invalid(API, "gradOutput must be [N] = %s for reduction none, got %s",
                                      aclsim_ops_int_list(self->view_dims, 1).s, aclsim_ops_shape(gradOutput).s);
        }
    } else if (gradOutput->ndim > 1 || aclsim_ops_numel(gradOutput) != 1) {
        return aclsim_ops_invalid(API, "gradOutput must be at most 1-D with one element, got %s",
                                  aclsim_ops_shape(gradOutput).s);
    }
    ACLSIM_OPS_TRY(aclsim_ops_check_same_shape(API, "out", out, "self", self));
    return ACLNN_SUCCESS;
}

aclnnStatus aclnnNLLLossBackwardGetWorkspaceSize(const aclTensor *gradOutput, const aclTensor *self,
                                                 const aclTensor *target, const aclTensor *weight, int64_t reduction,
                                                 int64_t ignoreIndex, const aclTensor *totalWeight, aclTensor *out,
                                                 uint64_t *workspaceSize, aclOpExecutor **executor)
{
    ACLSIM_OPS_CHECK_HANDLES(API, gradOutput, self, target, weight, totalWeight, out);
    if (workspaceSize == NULL || executor == NULL) {
        return aclsim_ops_nullptr(API, "%s must not be NULL", workspaceSize == NULL ? "workspaceSize" : "executor");
    }
    ACLSIM_OPS_TRY(check_params(gradOutput, self, target, weight, reduction, totalWeight, out));
    if (aclsim_ops_is_empty(self)) {
        return aclsim_ops_finish(KERNEL, aclsim_ops_noop_kernel, 0, NULL, 0, NULL, 0, NULL, 0, workspaceSize,
                                 executor);
    }
    ACLSIM_OPS_TRY(aclsim_ops_check_memory(API, "gradOutput", gradOutput));
    ACLSIM_OPS_TRY(aclsim_ops_check_memory(API, "target", target));
    ACLSIM_OPS_TRY(aclsim_ops_check_memory(API, "weight", weight));
    ACLSIM_OPS_TRY(aclsim_ops_check_memory(API, "totalWeight", totalWeight));
    ACLSIM_OPS_TRY(aclsim_ops_check_memory(API, "out", out));
    nll_grad_params p = {
        .n = self->ndim == 2 ? self->view_dims[0] : 1, .c = aclsim_ops_dim(self, -1),
        .reduction = reduction, .ignore_index = ignoreIndex,
    };
    uint64_t workspace = aclsim_ops_region((uint64_t)p.n, sizeof(int64_t)) + aclsim_ops_region((uint64_t)p.n, 4);
    const aclTensor *inputs[] = {gradOutput, self, target, weight, totalWeight};
    const aclTensor *outputs[] = {out};
    aclnnStatus status = aclsim_ops_finish(KERNEL, nll_grad_kernel, workspace, &p, sizeof p, inputs, 5, outputs, 1,
                                           workspaceSize, executor);
    if (status == ACLNN_SUCCESS) {
        aclsim_executor_set_inputs_read(*executor, INPUTS_READ);
    }
    return status;
}

aclnnStatus aclnnNLLLossBackward(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                 aclrtStream stream)
{
    return aclsim_launch(KERNEL, workspace, workspaceSize, executor, stream);
}
