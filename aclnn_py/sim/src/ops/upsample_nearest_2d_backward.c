/*
 * aclnnUpsampleNearest2dBackward: gradInput[h, w] = the sum of gradOut over the outputs whose
 * nearest source is (h, w) (pool_common's aclsim_pool_nearest_source with the forward's scales,
 * <= 0 meaning unset).  NCHW; summed in float32.  Parallel over the N * C planes; workspace: per
 * worker one H * W float plane and one gradOut row, and the column map (oW int64).
 */
#include <stdlib.h>
#include <string.h>

#include "../kernels/parallel.h"
#include "aclnnop/aclnn_upsample_nearest_2d_backward.h"
#include "aclsim_dtype_rules.h" /* generated at build: the dtype table (aclnn_py/ops/<op>.py DTYPE_RULES) */
#include "pool_common.h"

static const char API[] = "aclnnUpsampleNearest2dBackwardGetWorkspaceSize";
static const char KERNEL[] = "aclnnUpsampleNearest2dBackward";
#define INPUTS_READ (1u << 0)

typedef struct {
    int64_t n, c, h, w, oh, ow, workers;
    double scale_h, scale_w;
} nearest_params;

typedef struct {
    const nearest_params *p;
    const aclTensor *grad;
    aclTensor *grad_input;
    const int64_t *cols;
    float *scratch;
} nearest_job;

static void grad_planes(void *ctx, int64_t begin, int64_t end, int worker)
{
    const nearest_job *job = ctx;
    const nearest_params *p = job->p;
    float *plane = job->scratch + worker * (p->h * p->w + p->ow), *row = plane + p->h * p->w;
    int64_t gs[4], os[4];
    aclsim_ops_nchw_strides(job->grad, gs);
    aclsim_ops_nchw_strides(job->grad_input, os);
    for (int64_t at = begin; at < end; ++at) {
        int64_t n = at / p->c, c = at % p->c;
        memset(plane, 0, (size_t)(p->h * p->w) * sizeof(float));
        for (int64_t y = 0; y < p->oh; ++y) {
            aclsim_ops_gather_f32(job->grad->data, job->grad->dtype,
                                  job->grad->offset + n * gs[0] + c * gs[1] + y * gs[2], gs[3], p->ow, row);
            float *target = plane + aclsim_pool_nearest_source(y, p->h, p->oh, p->scale_h) * p->w;
            for (int64_t x = 0; x < p->ow; ++x) {
                target[job->cols[x]] += row[x];
            }
        }
        for (int64_t y = 0; y < p->h; ++y) {
            aclsim_ops_scatter_f32(job->grad_input->data, job->grad_input->dtype,
                                   job->grad_input->offset + n * os[0] + c * os[1] + y * os[2], os[3], p->w,
                                   plane + y * p->w);
        }
    }
}

static aclnnStatus grad_kernel(aclOpExecutor *ex, void *workspace)
{
    ACLSIM_OPS_TRY(aclsim_ops_kernel_check_memory(KERNEL, ex, INPUTS_READ, 1));
    const nearest_params *p = aclsim_executor_params(ex, sizeof *p);
    int64_t *cols = workspace;
    for (int64_t x = 0; x < p->ow; ++x) {
        cols[x] = aclsim_pool_nearest_source(x, p->w, p->ow, p->scale_w);
    }
    nearest_job job = {.p = p, .grad = aclsim_executor_input(ex, 0), .grad_input = aclsim_executor_output(ex, 0),
                       .cols = cols, .scratch = (float *)(cols + p->ow)};
    aclTensor staged;
    void *copy = NULL;
    if (aclsim_ops_views_overlap(job.grad, job.grad_input)) {
        if (!aclsim_ops_stage(KERNEL, job.grad, &staged, &copy)) {
            return ACLSIM_OPS_KERNEL_FAULT;
        }
        job.grad = &staged;
    }
    aclsim_parallel(p->n * p->c, (int)p->workers, grad_planes, &job);
    free(copy);
    return ACLNN_SUCCESS;
}

static aclnnStatus check_params(const aclTensor *gradOut, const aclIntArray *outputSize, const aclIntArray *inputSize,
                                const aclTensor *gradInput)
{
    static const aclDataType dtypes[] = {ACLSIM_DTYPES_UpsampleNearest2dBackward_DTYPES};
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "gradOut", gradOut));
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "outputSize", outputSize));
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "inputSize", inputSize));
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "gradInput", gradInput));
    ACLSIM_OPS_TRY(aclsim_ops_check_dtype(API, "gradOut", gradOut, dtypes, ACLSIM_DTYPES_COUNT(dtypes)));
    ACLSIM_OPS_TRY(aclsim_ops_check_same_dtype(API, "gradInput", gradInput, "gradOut", gradOut));
    if (gradOut->ndim != 4) {
        return aclsim_ops_invalid(API, "gradOut must be 4-D (NCHW), got %s shape %s",
                                  aclsim_ops_format_name(gradOut->format), aclsim_ops_shape(gradOut).s);
    }
    ACLSIM_OPS_TRY(aclsim_ops_check_array_size(API, "outputSize", outputSize, 2));
    ACLSIM_OPS_TRY(aclsim_ops_check_array_size(API, "inputSize", inputSize, 4));
    if (gradInput->format != ACL_FORMAT_NCHW && gradInput->format != ACL_FORMAT_NHWC) {
        return aclsim_ops_invalid(API, "gradInput format must be NCHW or NHWC, got %s",
                                  aclsim_ops_format_name(gradInput->format));
    }
    if (gradInput->ndim != 4 || gradInput->view_dims[0] != gradOut->view_dims[0] ||
        gradInput->view_dims[1] != gradOut->view_dims[1]) {
        return aclsim_ops_invalid(API, "gradInput N and C must equal gradOut's, got gradInput %s and gradOut %s",
                                  aclsim_ops_shape(gradInput).s, aclsim_ops_shape(gradOut).s);
    }
    const int64_t *in = inputSize->values, *out = outputSize->values;
    if (in[2] <= 0 || in[3] <= 0 || out[0] <= 0 || out[1] <= 0) {
        return aclsim_ops_invalid(API, "inputSize H, W and outputSize must be > 0, got inputSize %s and outputSize %s",
                                  aclsim_ops_ints(inputSize).s, aclsim_ops_ints(outputSize).s);
    }
    int64_t expected[4] = {in[0], in[1], out[0], out[1]};
    for (int d = 0; d < 4; ++d) {
        if (gradOut->view_dims[d] != expected[d]) {
            return aclsim_ops_invalid(API, "gradOut shape must be %s, got %s", aclsim_ops_int_list(expected, 4).s,
                                      aclsim_ops_shape(gradOut).s);
        }
    }
    if (gradInput->view_dims[2] != in[2] || gradInput->view_dims[3] != in[3]) {
        return aclsim_ops_invalid(API, "gradInput H, W must equal inputSize's, got gradInput %s and inputSize %s",
                                  aclsim_ops_shape(gradInput).s, aclsim_ops_ints(inputSize).s);
    }
    return ACLNN_SUCCESS;
}

aclnnStatus aclnnUpsampleNearest2dBackwardGetWorkspaceSize(const aclTensor *gradOut, const aclIntArray *outputSize,
                                                           const aclIntArray *inputSize, double scalesH,
                                                           double scalesW, aclTensor *gradInput,
                                                           uint64_t *workspaceSize, aclOpExecutor **executor)
{
    ACLSIM_OPS_CHECK_HANDLES(API, gradOut, outputSize, inputSize, gradInput);
    ACLSIM_OPS_TRY(check_params(gradOut, outputSize, inputSize, gradInput));
    if (workspaceSize == NULL || executor == NULL) {
        return aclsim_ops_nullptr(API, "%s must not be NULL", workspaceSize == NULL ? "workspaceSize" : "executor");
    }
    if (aclsim_ops_is_empty(gradOut) || aclsim_ops_is_empty(gradInput)) {
        return aclsim_ops_finish(KERNEL, aclsim_ops_noop_kernel, 0, NULL, 0, NULL, 0, NULL, 0, workspaceSize,
                                 executor);
    }
    ACLSIM_OPS_TRY(aclsim_ops_check_memory(API, "gradOut", gradOut));
    ACLSIM_OPS_TRY(aclsim_ops_check_memory(API, "gradInput", gradInput));
    nearest_params p = {.n = gradInput->view_dims[0], .c = gradInput->view_dims[1], .h = gradInput->view_dims[2],
                        .w = gradInput->view_dims[3], .oh = gradOut->view_dims[2], .ow = gradOut->view_dims[3],
                        .scale_h = scalesH, .scale_w = scalesW};
    p.workers = aclsim_workers(p.n * p.c, p.h * p.w + 2 * p.oh * p.ow);
    uint64_t workspace = (uint64_t)p.ow * sizeof(int64_t) + (uint64_t)(p.workers * (p.h * p.w + p.ow)) * sizeof(float);
    const aclTensor *inputs[] = {gradOut};
    const aclTensor *outputs[] = {gradInput};
    aclnnStatus status = aclsim_ops_finish(KERNEL, grad_kernel, workspace, &p, sizeof p, inputs, 1, outputs, 1,
                                           workspaceSize, executor);
    if (status == ACLNN_SUCCESS) {
        aclsim_executor_set_inputs_read(*executor, INPUTS_READ);
    }
    return status;
}

aclnnStatus aclnnUpsampleNearest2dBackward(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                           aclrtStream stream)
{
    return aclsim_launch(KERNEL, workspace, workspaceSize, executor, stream);
}
