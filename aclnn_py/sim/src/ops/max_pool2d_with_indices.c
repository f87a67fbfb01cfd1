/*
 * aclnnMaxPool2dWithIndices: 2-D max pooling and the flat position h * W + w of each maximum in
 * its unpadded input plane (Atlas A2/A3: flat indices, INT32 or INT64).  Padding acts as -inf;
 * the first maximum in row-major window order wins, a NaN wins over any number (PyTorch's
 * rule); a window whose real elements are all -inf gives its first real element's index.
 * A 3-D (C, H, W) input is one image.  Parallel over the N * C planes; workspace: per worker
 * one input plane and one output row as float32.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../kernels/parallel.h"
#include "aclnnop/aclnn_max_pool2d_with_indices.h"
#include "aclsim_dtype_rules.h" /* generated at build: the dtype table (aclnn_py/ops/<op>.py DTYPE_RULES) */
#include "pool_common.h"

static const char API[] = "aclnnMaxPool2dWithIndicesGetWorkspaceSize";
static const char KERNEL[] = "aclnnMaxPool2dWithIndices";
#define INPUTS_READ (1u << 0)

typedef struct {
    int64_t n, c, h, w, oh, ow;
    int64_t k[2], s[2], p[2], d[2];
    int64_t workers;
} maxpool_params;

typedef struct {
    const maxpool_params *p;
    const aclTensor *self;
    aclTensor *out, *indices;
    float *scratch; /* per worker: h * w + ow floats */
} maxpool_job;

static void pool_planes(void *ctx, int64_t begin, int64_t end, int worker)
{
    const maxpool_job *job = ctx;
    const maxpool_params *p = job->p;
    float *plane = job->scratch + worker * (p->h * p->w + p->ow), *row = plane + p->h * p->w;
    int64_t xs[4], os[4], is[4];
    aclsim_ops_nchw_strides(job->self, xs);
    aclsim_ops_nchw_strides(job->out, os);
    aclsim_ops_nchw_strides(job->indices, is);
    bool wide = job->indices->dtype == ACL_INT64;
    for (int64_t at = begin; at < end; ++at) {
        int64_t n = at / p->c, c = at % p->c;
        int64_t x_base = job->self->offset + n * xs[0] + c * xs[1];
        for (int64_t y = 0; y < p->h; ++y) {
            aclsim_ops_gather_f32(job->self->data, job->self->dtype, x_base + y * xs[2], xs[3], p->w, plane + y * p->w);
        }
        for (int64_t oh = 0; oh < p->oh; ++oh) {
            int64_t h0, h1;
            aclsim_pool_taps(oh, p->h, p->k[0], p->s[0], p->p[0], p->d[0], &h0, &h1);
            int64_t i_base = job->indices->offset + n * is[0] + c * is[1] + oh * is[2];
            for (int64_t ow = 0; ow < p->ow; ++ow) {
                int64_t w0, w1;
                aclsim_pool_taps(ow, p->w, p->k[1], p->s[1], p->p[1], p->d[1], &w0, &w1);
                float best = -INFINITY;
                int64_t where = h0 * p->w + w0;
                for (int64_t y = h0; y < h1; y += p->d[0]) {
                    const float *src = plane + y * p->w;
                    for (int64_t x = w0; x < w1; x += p->d[1]) {
                        if (src[x] > best || isnan(src[x])) {
                            best = src[x];
                            where = y * p->w + x;
                        }
                    }
                }
                row[ow] = best;
                if (wide) {
                    ((int64_t *)job->indices->data)[i_base + ow * is[3]] = where;
                } else {
                    ((int32_t *)job->indices->data)[i_base + ow * is[3]] = (int32_t)where;
                }
            }
            aclsim_ops_scatter_f32(job->out->data, job->out->dtype,
                                   job->out->offset + n * os[0] + c * os[1] + oh * os[2], os[3], p->ow, row);
        }
    }
}

static aclnnStatus maxpool_kernel(aclOpExecutor *ex, void *workspace)
{
    ACLSIM_OPS_TRY(aclsim_ops_kernel_check_memory(KERNEL, ex, INPUTS_READ, 2));
    const maxpool_params *p = aclsim_executor_params(ex, sizeof *p);
    maxpool_job job = {.p = p, .self = aclsim_executor_input(ex, 0), .out = aclsim_executor_output(ex, 0),
                       .indices = aclsim_executor_output(ex, 1), .scratch = workspace};
    aclTensor staged;
    void *copy = NULL;
    if (aclsim_ops_views_overlap(job.self, job.out) || aclsim_ops_views_overlap(job.self, job.indices)) {
        if (!aclsim_ops_stage(KERNEL, job.self, &staged, &copy)) {
            return ACLSIM_OPS_KERNEL_FAULT;
        }
        job.self = &staged;
    }
    aclsim_parallel(p->n * p->c, (int)p->workers, pool_planes, &job);
    free(copy);
    return ACLNN_SUCCESS;
}

static aclnnStatus check_params(const aclTensor *self, const aclIntArray *kernelSize, const aclIntArray *stride,
                                const aclIntArray *padding, const aclIntArray *dilation, bool ceilMode,
                                const aclTensor *out, const aclTensor *indices, maxpool_params *mp)
{
    static const aclDataType dtypes[] = {ACLSIM_DTYPES_MaxPool2dWithIndices_DTYPES};
    static const aclDataType index_dtypes[] = {ACLSIM_DTYPES_MaxPool2dWithIndices_INDEX_DTYPES};
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "self", self));
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "kernelSize", kernelSize));
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "stride", stride));
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "padding", padding));
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "dilation", dilation));
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "out", out));
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "indices", indices));

    ACLSIM_OPS_TRY(aclsim_ops_check_dtype(API, "self", self, dtypes, ACLSIM_DTYPES_COUNT(dtypes)));
    ACLSIM_OPS_TRY(aclsim_ops_check_same_dtype(API, "out", out, "self", self));
    ACLSIM_OPS_TRY(aclsim_ops_check_dtype(API, "indices", indices, index_dtypes, ACLSIM_DTYPES_COUNT(index_dtypes)));

    ACLSIM_OPS_TRY(aclsim_pool_check_format(API, "out", out, self, true));
    ACLSIM_OPS_TRY(aclsim_pool_check_rank34(API, self));
    ACLSIM_OPS_TRY(aclsim_pool_max_window(API, kernelSize, stride, padding, dilation, mp->k, mp->s, mp->p, mp->d));

    int lead = (int)self->ndim - 3;
    int64_t expected[4];
    if (aclsim_ops_dim(self, -3) == 0 || aclsim_ops_dim(self, -2) == 0 || aclsim_ops_dim(self, -1) == 0) {
        return aclsim_ops_invalid(API, "self C, H and W must not be 0, got %s", aclsim_ops_shape(self).s);
    }
    for (int axis = 0; axis < 2; ++axis) {
        int64_t size = aclsim_ops_dim(self, -2 + axis), reach;
        if (!aclsim_ops_add(size, 2 * mp->p[axis], &reach) ||
            !aclsim_ops_add(reach, ceilMode ? mp->s[axis] - 1 : 0, &reach) ||
            !aclsim_pool_out_size(size, mp->k[axis], mp->s[axis], mp->p[axis], mp->d[axis], ceilMode,
                                  &expected[2 + axis])) {
            return aclsim_ops_invalid(API, "the pooled size of self %s overflows int64", aclsim_ops_shape(self).s);
        }
    }
    if (expected[2] <= 0 || expected[3] <= 0) {
        return aclsim_ops_invalid(API, "outH and outW must be > 0, got %s for self %s",
                                  aclsim_ops_int_list(expected + 2, 2).s, aclsim_ops_shape(self).s);
    }
    const aclTensor *results[] = {out, indices};
    const char *names[] = {"out", "indices"};
    mp->n = lead ? self->view_dims[0] : 1;
    mp->c = aclsim_ops_dim(self, -3);
    mp->h = aclsim_ops_dim(self, -2);
    mp->w = aclsim_ops_dim(self, -1);
    mp->oh = expected[2];
    mp->ow = expected[3];
    for (int i = 0; i < 2; ++i) {
        bool same = results[i]->ndim == self->ndim && aclsim_ops_dim(results[i], -3) == mp->c &&
                    aclsim_ops_dim(results[i], -2) == mp->oh && aclsim_ops_dim(results[i], -1) == mp->ow &&
                    (!lead || results[i]->view_dims[0] == mp->n);
        if (!same) {
            int64_t shape[4] = {mp->n, mp->c, mp->oh, mp->ow};
            return aclsim_ops_invalid(API, "%s shape must be %s, got %s", names[i],
                                      aclsim_ops_int_list(shape + 1 - lead, self->ndim).s,
                                      aclsim_ops_shape(results[i]).s);
        }
    }
    return ACLNN_SUCCESS;
}

aclnnStatus aclnnMaxPool2dWithIndicesGetWorkspaceSize(const aclTensor *self, const aclIntArray *kernelSize,
                                                      const aclIntArray *stride, const aclIntArray *padding,
                                                      const aclIntArray *dilation, bool ceilMode, aclTensor *out,
                                                      aclTensor *indices, uint64_t *workspaceSize,
                                                      aclOpExecutor **executor)
{
    ACLSIM_OPS_CHECK_HANDLES(API, self, kernelSize, stride, padding, dilation, out, indices);
    maxpool_params p;
    memset(&p, 0, sizeof p);
    ACLSIM_OPS_TRY(check_params(self, kernelSize, stride, padding, dilation, ceilMode, out, indices, &p));
    if (workspaceSize == NULL || executor == NULL) {
        return aclsim_ops_nullptr(API, "%s must not be NULL", workspaceSize == NULL ? "workspaceSize" : "executor");
    }
    if (aclsim_ops_is_empty(self)) {
        return aclsim_ops_finish(KERNEL, aclsim_ops_noop_kernel, 0, NULL, 0, NULL, 0, NULL, 0, workspaceSize,
                                 executor);
    }
    ACLSIM_OPS_TRY(aclsim_ops_check_memory(API, "self", self));
    ACLSIM_OPS_TRY(aclsim_ops_check_memory(API, "out", out));
    ACLSIM_OPS_TRY(aclsim_ops_check_memory(API, "indices", indices));
    p.workers = aclsim_workers(p.n * p.c, p.h * p.w + p.oh * p.ow * p.k[0] * p.k[1]);
    uint64_t workspace = (uint64_t)(p.workers * (p.h * p.w + p.ow)) * sizeof(float);
    const aclTensor *inputs[] = {self};
    const aclTensor *outputs[] = {out, indices};
    aclnnStatus status = aclsim_ops_finish(KERNEL, maxpool_kernel, workspace, &p, sizeof p, inputs, 1, outputs, 2,
                                           workspaceSize, executor);
    if (status == ACLNN_SUCCESS) {
        aclsim_executor_set_inputs_read(*executor, INPUTS_READ);
    }
    return status;
}

aclnnStatus aclnnMaxPool2dWithIndices(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                      aclrtStream stream)
{
    return aclsim_launch(KERNEL, workspace, workspaceSize, executor, stream);
}
