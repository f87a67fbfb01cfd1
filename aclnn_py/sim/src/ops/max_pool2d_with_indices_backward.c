/*
 * aclnnMaxPool2dWithIndicesBackward: gradInput = zeros of self's shape, each gradOutput value
 * added at the flat position indices[n, c, oh, ow] = h * W + w of its plane (what
 * aclnnMaxPool2dWithIndices writes on Atlas A2/A3).  Atlas A2/A3: FLOAT, INT32 or INT8 indices.
 * The kernel checks every index first (pass 1): one outside [0, H * W) writes nothing and fails
 * (the stream reports 507015), as the device's fault would.  Pass 2 sums each plane in a float
 * buffer (overlapping windows accumulate) and writes it once; parallel over the N * C planes.
 * Workspace: per worker one H * W float plane.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../kernels/parallel.h"
#include "aclnnop/aclnn_max_pool2d_with_indices_backward.h"
#include "aclsim_dtype_rules.h" /* generated at build: the dtype table (aclnn_py/ops/<op>.py DTYPE_RULES) */
#include "pool_common.h"

static const char API[] = "aclnnMaxPool2dWithIndicesBackwardGetWorkspaceSize";
static const char KERNEL[] = "aclnnMaxPool2dWithIndicesBackward";
/* The inputs whose data the kernel reads: gradOutput and indices (self: its shape only). */
#define INPUTS_READ (1u << 0 | 1u << 2)

typedef struct {
    int64_t n, c, h, w, oh, ow;
    int64_t workers;
} unpool_params;

typedef struct {
    const unpool_params *p;
    const aclTensor *grad, *indices;
    aclTensor *grad_input;
    float *scratch;
    int64_t bad_at[ACLSIM_MAX_WORKERS], bad_index[ACLSIM_MAX_WORKERS];
} grad_job;

static int64_t index_at(const aclTensor *t, int64_t at)
{
    return t->dtype == ACL_INT32 ? ((const int32_t *)t->data)[at] : aclsim_ops_load_int(t->data, t->dtype, at);
}

/* Pass 1 on the planes [begin, end): the first index outside [0, H * W), as its row-major
 * position in bad_at[worker] (INT64_MAX: none) and its value in bad_index[worker]. */
static void check_planes(void *ctx, int64_t begin, int64_t end, int worker)
{
    grad_job *job = ctx;
    const unpool_params *p = job->p;
    int64_t is[4], size = p->h * p->w;
    aclsim_ops_nchw_strides(job->indices, is);
    job->bad_at[worker] = INT64_MAX;
    for (int64_t at = begin; at < end; ++at) {
        int64_t base = job->indices->offset + at / p->c * is[0] + at % p->c * is[1];
        for (int64_t oh = 0; oh < p->oh; ++oh) {
            for (int64_t ow = 0; ow < p->ow; ++ow) {
                int64_t k = index_at(job->indices, base + oh * is[2] + ow * is[3]);
                if (k < 0 || k >= size) {
                    job->bad_at[worker] = (at * p->oh + oh) * p->ow + ow;
                    job->bad_index[worker] = k;
                    return;
                }
            }
        }
    }
}

static void grad_planes(void *ctx, int64_t begin, int64_t end, int worker)
{
    const grad_job *job = ctx;
    const unpool_params *p = job->p;
    float *plane = job->scratch + worker * (p->h * p->w + p->ow), *row = plane + p->h * p->w;
    int64_t gs[4], is[4], os[4];
    aclsim_ops_nchw_strides(job->grad, gs);
    aclsim_ops_nchw_strides(job->indices, is);
    aclsim_ops_nchw_strides(job->grad_input, os);
    for (int64_t at = begin; at < end; ++at) {
        int64_t n = at / p->c, c = at % p->c;
        memset(plane, 0, (size_t)(p->h * p->w) * sizeof(float));
        for (int64_t oh = 0; oh < p->oh; ++oh) {
            aclsim_ops_gather_f32(job->grad->data, job->grad->dtype,
                                  job->grad->offset + n * gs[0] + c * gs[1] + oh * gs[2], gs[3], p->ow, row);
            int64_t base = job->indices->offset + n * is[0] + c * is[1] + oh * is[2];
            for (int64_t ow = 0; ow < p->ow; ++ow) {
                plane[index_at(job->indices, base + ow * is[3])] += row[ow];
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
    const unpool_params *p = aclsim_executor_params(ex, sizeof *p);
    grad_job job = {.p = p, .grad = aclsim_executor_input(ex, 0), .indices = aclsim_executor_input(ex, 2),
                    .grad_input = aclsim_executor_output(ex, 0), .scratch = workspace};
    aclsim_parallel(p->n * p->c, (int)p->workers, check_planes, &job);
    int first = 0;
    for (int w = 1; w < (int)p->workers; ++w) {
        first = job.bad_at[w] < job.bad_at[first] ? w : first;
    }
    if (job.bad_at[first] != INT64_MAX) {
        int64_t e = job.bad_at[first], x = e % p->ow, y = e / p->ow % p->oh, c = e / (p->ow * p->oh) % p->c;
        int64_t n = e / (p->ow * p->oh * p->c);
        char at[96];
        if (job.indices->ndim == 4) {
            snprintf(at, sizeof at, "%lld, %lld, %lld, %lld", (long long)n, (long long)c, (long long)y, (long long)x);
        } else {
            snprintf(at, sizeof at, "%lld, %lld, %lld", (long long)c, (long long)y, (long long)x);
        }
        aclsim_set_error("%s: indices[%s] = %lld is outside [0, %lld) (the H * W of self); nothing was written",
                         KERNEL, at, (long long)job.bad_index[first], (long long)(p->h * p->w));
        return ACLSIM_OPS_KERNEL_FAULT;
    }
    aclTensor staged[2];
    void *copies[2] = {NULL, NULL};
    const aclTensor **sources[2] = {&job.grad, &job.indices};
    for (int i = 0; i < 2; ++i) {
        if (aclsim_ops_views_overlap(*sources[i], job.grad_input)) {
            if (!aclsim_ops_stage(KERNEL, *sources[i], &staged[i], &copies[i])) {
                free(copies[0]);
                return ACLSIM_OPS_KERNEL_FAULT;
            }
            *sources[i] = &staged[i];
        }
    }
    aclsim_parallel(p->n * p->c, (int)p->workers, grad_planes, &job);
    free(copies[0]);
    free(copies[1]);
    return ACLNN_SUCCESS;
}

static aclnnStatus check_params(const aclTensor *gradOutput, const aclTensor *self, const aclTensor *indices,
                                const aclIntArray *kernelSize, const aclIntArray *stride, const aclIntArray *padding,
                                const aclIntArray *dilation, bool ceilMode, const aclTensor *gradInput,
                                unpool_params *up)
{
    static const aclDataType dtypes[] = {ACLSIM_DTYPES_MaxPool2dWithIndicesBackward_DTYPES};
    static const aclDataType index_dtypes[] = {ACLSIM_DTYPES_MaxPool2dWithIndicesBackward_INDEX_DTYPES};
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "gradOutput", gradOutput));
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "self", self));
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "indices", indices));
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "kernelSize", kernelSize));
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "stride", stride));
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "padding", padding));
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "dilation", dilation));
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "gradInput", gradInput));

    ACLSIM_OPS_TRY(aclsim_ops_check_dtype(API, "self", self, dtypes, ACLSIM_DTYPES_COUNT(dtypes)));
    ACLSIM_OPS_TRY(aclsim_ops_check_same_dtype(API, "gradOutput", gradOutput, "self", self));
    ACLSIM_OPS_TRY(aclsim_ops_check_same_dtype(API, "gradInput", gradInput, "self", self));
    ACLSIM_OPS_TRY(aclsim_ops_check_dtype(API, "indices", indices, index_dtypes, ACLSIM_DTYPES_COUNT(index_dtypes)));

    if (gradOutput->format != self->format || gradInput->format != self->format) {
        return aclsim_ops_invalid(API, "self, gradOutput and gradInput must have one format, got %s, %s, %s",
                                  aclsim_ops_format_name(self->format), aclsim_ops_format_name(gradOutput->format),
                                  aclsim_ops_format_name(gradInput->format));
    }
    const aclTensor *ranked[] = {self, gradInput, gradOutput, indices};
    const char *names[] = {"self", "gradInput", "gradOutput", "indices"};
    for (int i = 0; i < 4; ++i) {
        if (ranked[i]->ndim != 3 && ranked[i]->ndim != 4) {
            return aclsim_ops_invalid(API, "%s must be 3-D or 4-D (NCL or NCHW), got %s shape %s", names[i],
                                      aclsim_ops_format_name(ranked[i]->format), aclsim_ops_shape(ranked[i]).s);
        }
    }
    int64_t k[2], s[2], p[2], d[2];
    ACLSIM_OPS_TRY(aclsim_pool_max_window(API, kernelSize, stride, padding, dilation, k, s, p, d));
    ACLSIM_OPS_TRY(aclsim_ops_check_same_shape(API, "gradInput", gradInput, "self", self));
    if (aclsim_ops_dim(self, -3) == 0 || aclsim_ops_dim(self, -2) == 0 || aclsim_ops_dim(self, -1) == 0) {
        return aclsim_ops_invalid(API, "self C, H and W must not be 0, got %s", aclsim_ops_shape(self).s);
    }
    int64_t expected[4] = {self->ndim == 4 ? self->view_dims[0] : 1, aclsim_ops_dim(self, -3), 0, 0};
    for (int axis = 0; axis < 2; ++axis) {
        int64_t size = aclsim_ops_dim(self, -2 + axis), reach;
        if (!aclsim_ops_add(size, 2 * p[axis], &reach) || !aclsim_ops_add(reach, ceilMode ? s[axis] - 1 : 0, &reach) ||
            !aclsim_pool_out_size(size, k[axis], s[axis], p[axis], d[axis], ceilMode, &expected[2 + axis])) {
            return aclsim_ops_invalid(API, "the pooled size of self %s overflows int64", aclsim_ops_shape(self).s);
        }
    }
    if (expected[2] <= 0 || expected[3] <= 0) {
        return aclsim_ops_invalid(API, "outH and outW must be > 0, got %s for self %s",
                                  aclsim_ops_int_list(expected + 2, 2).s, aclsim_ops_shape(self).s);
    }
    int skip = self->ndim == 4 ? 0 : 1;
    bool same = gradOutput->ndim == self->ndim;
    for (uint64_t i = 0; same && i < self->ndim; ++i) {
        same = gradOutput->view_dims[i] == expected[i + (uint64_t)skip];
    }
    if (!same) {
        return aclsim_ops_invalid(API, "gradOutput shape must be %s, the pooled size of self %s, got %s",
                                  aclsim_ops_int_list(expected + skip, self->ndim).s, aclsim_ops_shape(self).s,
                                  aclsim_ops_shape(gradOutput).s);
    }
    ACLSIM_OPS_TRY(aclsim_ops_check_same_shape(API, "indices", indices, "gradOutput", gradOutput));
    *up = (unpool_params){.n = expected[0], .c = expected[1], .h = aclsim_ops_dim(self, -2),
                          .w = aclsim_ops_dim(self, -1), .oh = expected[2], .ow = expected[3]};
    return ACLNN_SUCCESS;
}

aclnnStatus aclnnMaxPool2dWithIndicesBackwardGetWorkspaceSize(const aclTensor *gradOutput, const aclTensor *self,
                                                              const aclTensor *indices, const aclIntArray *kernelSize,
                                                              const aclIntArray *stride, const aclIntArray *padding,
                                                              const aclIntArray *dilation, bool ceilMode,
                                                              aclTensor *gradInput, uint64_t *workspaceSize,
                                                              aclOpExecutor **executor)
{
    ACLSIM_OPS_CHECK_HANDLES(API, gradOutput, self, indices, kernelSize, stride, padding, dilation, gradInput);
    unpool_params p;
    ACLSIM_OPS_TRY(check_params(gradOutput, self, indices, kernelSize, stride, padding, dilation, ceilMode, gradInput,
                                &p));
    if (workspaceSize == NULL || executor == NULL) {
        return aclsim_ops_nullptr(API, "%s must not be NULL", workspaceSize == NULL ? "workspaceSize" : "executor");
    }
    if (aclsim_ops_is_empty(self)) {
        return aclsim_ops_finish(KERNEL, aclsim_ops_noop_kernel, 0, NULL, 0, NULL, 0, NULL, 0, workspaceSize,
                                 executor);
    }
    ACLSIM_OPS_TRY(aclsim_ops_check_memory(API, "gradOutput", gradOutput));
    ACLSIM_OPS_TRY(aclsim_ops_check_memory(API, "indices", indices));
    ACLSIM_OPS_TRY(aclsim_ops_check_memory(API, "gradInput", gradInput));
    p.workers = aclsim_workers(p.n * p.c, 2 * p.h * p.w + 2 * p.oh * p.ow);
    uint64_t workspace = (uint64_t)(p.workers * (p.h * p.w + p.ow)) * sizeof(float);
    const aclTensor *inputs[] = {gradOutput, self, indices};
    const aclTensor *outputs[] = {gradInput};
    aclnnStatus status = aclsim_ops_finish(KERNEL, grad_kernel, workspace, &p, sizeof p, inputs, 3, outputs, 1,
                                           workspaceSize, executor);
    if (status == ACLNN_SUCCESS) {
        aclsim_executor_set_inputs_read(*executor, INPUTS_READ);
    }
    return status;
}

aclnnStatus aclnnMaxPool2dWithIndicesBackward(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                              aclrtStream stream)
{
    return aclsim_launch(KERNEL, workspace, workspaceSize, executor, stream);
}
