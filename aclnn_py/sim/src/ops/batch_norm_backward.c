/*
 * aclnnBatchNormBackward: the gradients of batch normalisation over dim 1, each where outputMask
 * asks for it.  The checks in ops-nn's order (aclnn_py/ops/batch_norm_backward.py); as on Atlas
 * A2/A3, saveInvstd is read as the biased batch variance (invstd = 1/sqrt(saveInvstd + eps)).
 * Each channel's elements are walked with reduce.h, in float, the sums in double.
 */
#include <math.h>

#include "aclnnop/aclnn_batch_norm_backward.h"
#include "aclsim_dtype_rules.h" /* generated at build: the dtype table (aclnn_py/ops/<op>.py DTYPE_RULES) */
#include "reduce.h"

#include "../kernels/parallel.h"

static const char API[] = "aclnnBatchNormBackwardGetWorkspaceSize";
static const char KERNEL[] = "aclnnBatchNormBackward";

#define INPUTS_READ 0x7fu /* every input */

typedef struct {
    bool training;
    float eps;
} bnb_params;

typedef struct {
    const bnb_params *p;
    const aclTensor *grad, *input, *weight, *mean, *var;
    aclTensor *grad_input, *grad_weight, *grad_bias;
    aclsim_red_walk g_walk, x_walk, gi_walk; /* each channel's elements */
    float *scratch;                          /* 2 * ACLSIM_RED_PIECE floats per worker */
} bnb_job;

static void store_channel(aclTensor *t, int64_t c, float v)
{
    if (t != NULL) {
        aclsim_ops_store(t->data, t->dtype, t->offset + c * t->strides[0], v);
    }
}

static void bnb_channels(void *ctx, int64_t begin, int64_t end, int worker)
{
    const bnb_job *j = ctx;
    float *g = j->scratch + (size_t)worker * 2 * ACLSIM_RED_PIECE, *x = g + ACLSIM_RED_PIECE;
    int64_t n = j->x_walk.count;
    for (int64_t c = begin; c < end; ++c) {
        int64_t g_base = j->grad->offset + c * j->grad->strides[1];
        int64_t x_base = j->input->offset + c * j->input->strides[1];
        float mean = aclsim_red_channel(j->mean, c, 0.0f);
        float invstd = 1.0f / sqrtf(aclsim_red_channel(j->var, c, 1.0f) + j->p->eps);
        float scale = invstd * aclsim_red_channel(j->weight, c, 1.0f);
        double sum_g = 0.0, sum_gd = 0.0;
        for (int64_t first = 0; first < n; first += ACLSIM_RED_PIECE) {
            int64_t k = n - first < ACLSIM_RED_PIECE ? n - first : ACLSIM_RED_PIECE;
            aclsim_red_gather(j->grad, g_base, &j->g_walk, first, k, g);
            aclsim_red_gather(j->input, x_base, &j->x_walk, first, k, x);
            sum_g += aclsim_red_piece_sum_wide(g, k, 0.0f);
            sum_gd += aclsim_red_piece_dot(x, g, k, mean);
        }
        store_channel(j->grad_weight, c, (float)(sum_gd * invstd));
        store_channel(j->grad_bias, c, (float)sum_g);
        if (j->grad_input == NULL) {
            continue;
        }
        int64_t gi_base = j->grad_input->offset + c * j->grad_input->strides[1];
        float mean_g = (float)(sum_g / (double)n);
        float k_d = (float)((double)invstd * invstd * sum_gd / (double)n);
        for (int64_t first = 0; first < n; first += ACLSIM_RED_PIECE) {
            int64_t k = n - first < ACLSIM_RED_PIECE ? n - first : ACLSIM_RED_PIECE;
            aclsim_red_gather(j->grad, g_base, &j->g_walk, first, k, g);
            if (j->p->training) {
                aclsim_red_gather(j->input, x_base, &j->x_walk, first, k, x);
                for (int64_t i = 0; i < k; ++i) {
                    g[i] = (g[i] - mean_g - (x[i] - mean) * k_d) * scale;
                }
            } else {
                for (int64_t i = 0; i < k; ++i) {
                    g[i] *= scale;
                }
            }
            aclsim_red_scatter(j->grad_input, gi_base, &j->gi_walk, first, k, g);
        }
    }
}

static aclnnStatus bnb_kernel(aclOpExecutor *ex, void *workspace)
{
    ACLSIM_OPS_TRY(aclsim_ops_kernel_check_memory(KERNEL, ex, INPUTS_READ, 3));
    const bnb_params *p = aclsim_executor_params(ex, sizeof *p);
    bool training = p->training;
    bnb_job j = {.p = p, .grad = aclsim_executor_input(ex, 0), .input = aclsim_executor_input(ex, 1),
                 .weight = aclsim_executor_input(ex, 2),
                 .mean = aclsim_executor_input(ex, training ? 5 : 3), .var = aclsim_executor_input(ex, training ? 6 : 4),
                 .grad_input = aclsim_executor_output(ex, 0), .grad_weight = aclsim_executor_output(ex, 1),
                 .grad_bias = aclsim_executor_output(ex, 2), .scratch = workspace};
    aclsim_red_walk kept;
    aclsim_red_split(j.grad, ~2u, &kept, &j.g_walk);
    aclsim_red_split(j.input, ~2u, &kept, &j.x_walk);
    if (j.grad_input != NULL) {
        aclsim_red_split(j.grad_input, ~2u, &kept, &j.gi_walk);
    }
    int64_t channels = j.input->view_dims[1];
    aclsim_parallel(channels, aclsim_workers(channels, 4 * j.x_walk.count), bnb_channels, &j);
    return ACLNN_SUCCESS;
}

aclnnStatus aclnnBatchNormBackwardGetWorkspaceSize(const aclTensor *gradOut, const aclTensor *input,
                                                   const aclTensor *weight, const aclTensor *runningMean,
                                                   const aclTensor *runningVar, const aclTensor *saveMean,
                                                   const aclTensor *saveInvstd, bool training, double eps,
                                                   const aclBoolArray *outputMask, aclTensor *gradInput,
                                                   aclTensor *gradWeight, aclTensor *gradBias,
                                                   uint64_t *workspaceSize, aclOpExecutor **executor)
{
    static const aclDataType dtypes[] = {ACLSIM_DTYPES_BatchNormBackward_DTYPES}; /* the one table */
    const size_t n_dtypes = ACLSIM_DTYPES_COUNT(dtypes);

    ACLSIM_OPS_CHECK_HANDLES(API, gradOut, input, weight, runningMean, runningVar, saveMean, saveInvstd, outputMask,
                             gradInput, gradWeight, gradBias);
    if (workspaceSize == NULL || executor == NULL) {
        return aclsim_ops_nullptr(API, "%s must not be NULL", workspaceSize == NULL ? "workspaceSize" : "executor");
    }
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "gradOut", gradOut));
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "input", input));
    if (aclsim_ops_is_empty(input) || aclsim_ops_is_empty(gradOut)) { /* before the mask, as CANN */
        return aclsim_ops_finish(KERNEL, aclsim_ops_noop_kernel, 0, NULL, 0, NULL, 0, NULL, 0, workspaceSize,
                                 executor);
    }
    if (outputMask == NULL || outputMask->size == 0) {
        return aclsim_ops_nullptr(API, "outputMask must not be NULL or empty, got %s",
                                  outputMask == NULL ? "NULL" : "[]");
    }
    if (outputMask->size != 3) {
        return aclsim_ops_invalid(API, "outputMask must have 3 elements, got %llu",
                                  (unsigned long long)outputMask->size);
    }
    aclTensor *grads[] = {gradInput, gradWeight, gradBias};
    const char *grad_names[] = {"gradInput", "gradWeight", "gradBias"};
    for (int k = 0; k < 3; ++k) {
        if (outputMask->values[k]) {
            ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, grad_names[k], grads[k]));
        } else {
            grads[k] = NULL; /* not asked for: not written */
        }
    }
    ACLSIM_OPS_TRY(aclsim_ops_check_dtype(API, "gradOut", gradOut, dtypes, n_dtypes));
    ACLSIM_OPS_TRY(aclsim_ops_check_dtype(API, "input", input, dtypes, n_dtypes));
    ACLSIM_OPS_TRY(aclsim_ops_check_same_dtype(API, "gradOut", gradOut, "input", input));
    for (int k = 0; k < 3; ++k) {
        if (grads[k] != NULL) {
            ACLSIM_OPS_TRY(aclsim_ops_check_dtype(API, grad_names[k], grads[k], dtypes, n_dtypes));
        }
    }
    const char *names[] = {"weight", "runningMean", "runningVar", "saveMean", "saveInvstd"};
    const aclTensor *optional[] = {weight, runningMean, runningVar, saveMean, saveInvstd};
    for (int k = 0; k < 5; ++k) {
        if (optional[k] != NULL) {
            ACLSIM_OPS_TRY(aclsim_ops_check_dtype(API, names[k], optional[k], dtypes, n_dtypes));
        }
    }
    ACLSIM_OPS_TRY(aclsim_red_check_rank(API, "input", input, 2, 8));
    ACLSIM_OPS_TRY(aclsim_red_check_rank(API, "gradOut", gradOut, 2, 8));
    ACLSIM_OPS_TRY(aclsim_ops_check_same_shape(API, "gradOut", gradOut, "input", input));
    if (grads[0] != NULL) {
        ACLSIM_OPS_TRY(aclsim_red_check_rank(API, "gradInput", grads[0], 2, 8));
        ACLSIM_OPS_TRY(aclsim_ops_check_same_shape(API, "gradInput", grads[0], "gradOut", gradOut));
    }
    int64_t c = input->view_dims[1];
    for (int k = 0; k < 5; ++k) { /* (saveMean, saveInvstd: checked here, not by A2/A3: see the module) */
        ACLSIM_OPS_TRY(aclsim_red_check_channels(API, names[k], optional[k], c));
    }
    ACLSIM_OPS_TRY(aclsim_red_check_channels(API, "gradWeight", grads[1], c));
    ACLSIM_OPS_TRY(aclsim_red_check_channels(API, "gradBias", grads[2], c));
    const aclTensor *inputs[] = {gradOut, input, weight, runningMean, runningVar, saveMean, saveInvstd};
    const char *input_names[] = {"gradOut", "input", "weight", "runningMean", "runningVar", "saveMean", "saveInvstd"};
    for (int k = 0; k < 7; ++k) {
        if (inputs[k] != NULL) {
            ACLSIM_OPS_TRY(aclsim_ops_check_memory(API, input_names[k], inputs[k]));
        }
    }
    for (int k = 0; k < 3; ++k) {
        if (grads[k] != NULL) {
            ACLSIM_OPS_TRY(aclsim_ops_check_memory(API, grad_names[k], grads[k]));
        }
    }
    bnb_params p = {.training = training, .eps = (float)eps};
    const aclTensor *outputs[] = {grads[0], grads[1], grads[2]};
    uint64_t workspace = (uint64_t)ACLSIM_MAX_WORKERS * 2 * ACLSIM_RED_PIECE * sizeof(float);
    aclnnStatus status = aclsim_ops_finish(KERNEL, bnb_kernel, workspace, &p, sizeof p, inputs, 7, outputs, 3,
                                           workspaceSize, executor);
    if (status == ACLNN_SUCCESS) {
        aclsim_executor_set_inputs_read(*executor, INPUTS_READ);
    }
    return status;
}

aclnnStatus aclnnBatchNormBackward(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                   const aclrtStream stream)
{
    return aclsim_launch(KERNEL, workspace, workspaceSize, executor, stream);
}
