/*
 * aclnnAdaptiveAvgPool2dBackward: each gradOutput[i, j] divided by its window's area and added
 * to every element of its window (the forward's windows, pool_common's) for self's (H, W) and
 * gradOutput's (oH, oW).  A 3-D (C, H, W) input is one image.  Parallel over the N * C planes;
 * workspace: per worker one H * W float32 plane and one gradOutput row.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "../kernels/parallel.h"
#include "aclnnop/aclnn_adaptive_avg_pool2d_backward.h"
#include "aclsim_dtype_rules.h" /* generated at build: the dtype table (aclnn_py/ops/<op>.py DTYPE_RULES) */
#include "pool_common.h"

static const char API[] = "aclnnAdaptiveAvgPool2dBackwardGetWorkspaceSize";
static const char KERNEL[] = "aclnnAdaptiveAvgPool2dBackward";
/* The inputs whose data the kernel reads: gradOutput (self: its shape only). */
#define INPUTS_READ (1u << 0)

typedef struct {
    int64_t planes, c, h, w, oh, ow, workers;
} adaptive_params;

typedef struct {
    const adaptive_params *p;
    const aclTensor *grad;
    aclTensor *out;
    float *scratch;
} adaptive_job;

static void grad_planes(void *ctx, int64_t begin, int64_t end, int worker)
{
    const adaptive_job *job = ctx;
    const adaptive_params *p = job->p;
    float *plane = job->scratch + worker * (p->h * p->w + p->ow), *row = plane + p->h * p->w;
    int64_t gs[4], os[4];
    aclsim_ops_nchw_strides(job->grad, gs);
    aclsim_ops_nchw_strides(job->out, os);
    /* A FLOAT out whose planes are row-major: each plane summed where it is. */
    bool direct = job->out->dtype == ACL_FLOAT && os[3] == 1 && os[2] == p->w;
    for (int64_t at = begin; at < end; ++at) {
        int64_t n = at / p->c, c = at % p->c;
        if (direct) {
            plane = (float *)job->out->data + job->out->offset + n * os[0] + c * os[1];
        }
        if (p->oh == 1 && p->ow == 1) { /* one window over the plane (a global pool): one value */
            float g = (float)aclsim_ops_load(job->grad->data, job->grad->dtype, job->grad->offset + n * gs[0] + c * gs[1]);
            float share = g / (float)(p->h * p->w);
            for (int64_t e = 0; e < p->h * p->w; ++e) {
                plane[e] = share;
            }
        } else {
            memset(plane, 0, (size_t)(p->h * p->w) * sizeof(float));
        }
        for (int64_t i = 0; i < p->oh && (p->oh > 1 || p->ow > 1); ++i) {
            int64_t h0, h1;
            aclsim_pool_adaptive(i, p->h, p->oh, &h0, &h1);
            aclsim_ops_gather_f32(job->grad->data, job->grad->dtype,
                                  job->grad->offset + n * gs[0] + c * gs[1] + i * gs[2], gs[3], p->ow, row);
            for (int64_t j = 0; j < p->ow; ++j) {
                int64_t w0, w1;
                aclsim_pool_adaptive(j, p->w, p->ow, &w0, &w1);
                float share = row[j] / (float)((h1 - h0) * (w1 - w0));
                for (int64_t y = h0; y < h1; ++y) {
                    for (int64_t x = w0; x < w1; ++x) {
                        plane[y * p->w + x] += share;
                    }
                }
            }
        }
        for (int64_t y = 0; !direct && y < p->h; ++y) {
            aclsim_ops_scatter_f32(job->out->data, job->out->dtype,
                                   job->out->offset + n * os[0] + c * os[1] + y * os[2], os[3], p->w, plane + y * p->w);
        }
    }
}

static aclnnStatus grad_kernel(aclOpExecutor *ex, void *workspace)
{
    ACLSIM_OPS_TRY(aclsim_ops_kernel_check_memory(KERNEL, ex, INPUTS_READ, 1));
    const adaptive_params *p = aclsim_executor_params(ex, sizeof *p);
    adaptive_job job = {.p = p, .grad = aclsim_executor_input(ex, 0), .out = aclsim_executor_output(ex, 0),
                        .scratch = workspace};
    return aclsim_pool_run_planes(KERNEL, &job.grad, job.out, p->planes, (int)p->workers, grad_planes, &job);
}

static aclnnStatus check_params(const aclTensor *gradOutput, const aclTensor *self, const aclTensor *out)
{
    static const aclDataType dtypes[] = {ACLSIM_DTYPES_AdaptiveAvgPool2dBackward_DTYPES};
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "gradOutput", gradOutput));
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "self", self));
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "out", out));
    if (gradOutput->ndim != self->ndim) {
        return aclsim_ops_invalid(API, "gradOutput must have self's rank, got gradOutput %s and self %s",
                                  aclsim_ops_shape(gradOutput).s, aclsim_ops_shape(self).s);
    }
    if (out->ndim != 3 && out->ndim != 4) {
        return aclsim_ops_invalid(API, "out must be 3-D or 4-D, got %s", aclsim_ops_shape(out).s);
    }
    if (!aclsim_pool_same_leading(out, self)) {
        return aclsim_ops_invalid(API, "out's dims before H, W must be self's, got out %s and self %s",
                                  aclsim_ops_shape(out).s, aclsim_ops_shape(self).s);
    }
    if (!aclsim_pool_same_leading(gradOutput, self)) {
        return aclsim_ops_invalid(API, "gradOutput's dims before H, W must be self's, got gradOutput %s and self %s",
                                  aclsim_ops_shape(gradOutput).s, aclsim_ops_shape(self).s);
    }
    ACLSIM_OPS_TRY(aclsim_ops_check_dtype(API, "gradOutput", gradOutput, dtypes, ACLSIM_DTYPES_COUNT(dtypes)));
    ACLSIM_OPS_TRY(aclsim_ops_check_dtype(API, "self", self, dtypes, ACLSIM_DTYPES_COUNT(dtypes)));
    ACLSIM_OPS_TRY(aclsim_ops_check_same_dtype(API, "gradOutput", gradOutput, "self", self));
    ACLSIM_OPS_TRY(aclsim_pool_check_format(API, "gradOutput", gradOutput, self, true));
    /* Not checked by CANN's phase 1: out is self's gradient. */
    ACLSIM_OPS_TRY(aclsim_ops_check_same_shape(API, "out", out, "self", self));
    ACLSIM_OPS_TRY(aclsim_ops_check_same_dtype(API, "out", out, "self", self));
    return ACLNN_SUCCESS;
}

aclnnStatus aclnnAdaptiveAvgPool2dBackwardGetWorkspaceSize(const aclTensor *gradOutput, const aclTensor *self,
                                                           aclTensor *out, uint64_t *workspaceSize,
                                                           aclOpExecutor **executor)
{
    ACLSIM_OPS_CHECK_HANDLES(API, gradOutput, self, out);
    ACLSIM_OPS_TRY(check_params(gradOutput, self, out));
    if (workspaceSize == NULL || executor == NULL) {
        return aclsim_ops_nullptr(API, "%s must not be NULL", workspaceSize == NULL ? "workspaceSize" : "executor");
    }
    if (aclsim_ops_is_empty(self) || aclsim_ops_is_empty(gradOutput)) {
        return aclsim_ops_finish(KERNEL, aclsim_ops_noop_kernel, 0, NULL, 0, NULL, 0, NULL, 0, workspaceSize,
                                 executor);
    }
    ACLSIM_OPS_TRY(aclsim_ops_check_memory(API, "gradOutput", gradOutput));
    ACLSIM_OPS_TRY(aclsim_ops_check_memory(API, "out", out));
    adaptive_params p = {.c = aclsim_ops_dim(self, -3), .h = aclsim_ops_dim(self, -2), .w = aclsim_ops_dim(self, -1),
                         .oh = aclsim_ops_dim(gradOutput, -2), .ow = aclsim_ops_dim(gradOutput, -1)};
    p.planes = aclsim_pool_planes(self);
    p.workers = aclsim_workers(p.planes, p.h * p.w + p.oh * p.ow);
    uint64_t workspace = (uint64_t)(p.workers * (p.h * p.w + p.ow)) * sizeof(float);
    const aclTensor *inputs[] = {gradOutput, self};
    const aclTensor *outputs[] = {out};
    aclnnStatus status = aclsim_ops_finish(KERNEL, grad_kernel, workspace, &p, sizeof p, inputs, 2, outputs, 1,
                                           workspaceSize, executor);
    if (status == ACLNN_SUCCESS) {
        aclsim_executor_set_inputs_read(*executor, INPUTS_READ);
    }
    return status;
}

aclnnStatus aclnnAdaptiveAvgPool2dBackward(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                           const aclrtStream stream)
{
    return aclsim_launch(KERNEL, workspace, workspaceSize, executor, stream);
}
