/*
 * A test operator with tensor-list arguments, built against the simulator's internal
 * interface (none of the five operators takes a list):
 *   aclnnFakeSum(xs: list of float tensors, bias: float tensor) -> outs: list, outs[i] = xs[i] + bias
 * with every tensor of the same contiguous shape.  Prototype order: xs (0), bias (1), outs (2).
 */
#include "sim_internal.h"

struct fake_params {
    int lists;
};

static int64_t numel(const aclTensor *t)
{
    int64_t n = 1;
    for (uint64_t d = 0; d < t->ndim; d++) {
        n *= t->view_dims[d];
    }
    return n;
}

static aclnnStatus kernel(aclOpExecutor *ex, void *workspace)
{
    (void)workspace;
    const struct fake_params *p = aclsim_executor_params(ex, sizeof *p);
    const aclTensor *bias = aclsim_executor_input(ex, p->lists);
    for (int i = 0; i < p->lists; i++) {
        const aclTensor *x = aclsim_executor_input(ex, i);
        aclTensor *out = aclsim_executor_output(ex, i);
        const float *xv = (const float *)x->data + x->offset;
        const float *bv = (const float *)bias->data + bias->offset;
        float *ov = (float *)out->data + out->offset;
        for (int64_t k = 0; k < numel(x); k++) {
            ov[k] = xv[k] + bv[k];
        }
    }
    return ACLNN_SUCCESS;
}

__attribute__((visibility("default"))) aclnnStatus aclnnFakeSumGetWorkspaceSize(
    const aclTensorList *xs, const aclTensor *bias, aclTensorList *outs, uint64_t *workspaceSize,
    aclOpExecutor **executor)
{
    if (xs == NULL || bias == NULL || outs == NULL || workspaceSize == NULL || executor == NULL ||
        xs->size != outs->size) {
        return ACLNN_ERR_PARAM_NULLPTR;
    }
    aclOpExecutor *ex = aclsim_executor_new("aclnnFakeSum", kernel, 0);
    struct fake_params *p = ex != NULL ? aclsim_executor_params(ex, sizeof *p) : NULL;
    if (p == NULL || aclsim_executor_add_input_list(ex, xs) < 0 || aclsim_executor_add_input(ex, bias) < 0 ||
        aclsim_executor_add_output_list(ex, outs) < 0) {
        aclsim_executor_discard(ex);
        return ACLNN_ERR_INNER;
    }
    p->lists = (int)xs->size;
    *workspaceSize = 0;
    *executor = ex;
    return ACLNN_SUCCESS;
}

__attribute__((visibility("default"))) aclnnStatus aclnnFakeSum(void *workspace, uint64_t workspaceSize,
                                                                 aclOpExecutor *executor, aclrtStream stream)
{
    return aclsim_launch("aclnnFakeSum", workspace, workspaceSize, executor, stream);
}
