/*
 * aclnnUpsampleNearest2d: legacy nearest resizing, out[n, c, h, w] = self[n, c, src(h), src(w)]
 * with src(i) = min(floor(i * H / oH), H - 1) (pool_common's aclsim_pool_nearest_source, the
 * ratio in float32 as PyTorch computes it).  Elements are copied as they are (no conversion).
 * Parallel over the N * C planes; workspace: the column map (oW int64).
 */
#include <stdlib.h>
#include <string.h>

#include "../kernels/parallel.h"
#include "aclnnop/aclnn_upsample_nearest_2d.h"
#include "aclsim_dtype_rules.h" /* generated at build: the dtype table (aclnn_py/ops/<op>.py DTYPE_RULES) */
#include "pool_common.h"

static const char API[] = "aclnnUpsampleNearest2dGetWorkspaceSize";
static const char KERNEL[] = "aclnnUpsampleNearest2d";
#define INPUTS_READ (1u << 0)

typedef struct {
    int64_t n, c, h, w, oh, ow, workers;
} nearest_params;

typedef struct {
    const nearest_params *p;
    const aclTensor *self;
    aclTensor *out;
    const int64_t *cols; /* the source column of each output column */
} nearest_job;

#define COPY_ROW(type)                                                        \
    do {                                                                      \
        const type *from = (const type *)job->self->data + src;               \
        type *to = (type *)job->out->data + dst;                              \
        for (int64_t x = 0; x < p->ow; ++x) {                                 \
            to[x * os[3]] = from[job->cols[x] * xs[3]];                       \
        }                                                                     \
    } while (0)

static void resize_planes(void *ctx, int64_t begin, int64_t end, int worker)
{
    (void)worker;
    const nearest_job *job = ctx;
    const nearest_params *p = job->p;
    int64_t xs[4], os[4];
    aclsim_ops_nchw_strides(job->self, xs);
    aclsim_ops_nchw_strides(job->out, os);
    size_t size = aclsim_ops_dtype_size(job->self->dtype);
    for (int64_t at = begin; at < end; ++at) {
        int64_t n = at / p->c, c = at % p->c;
        for (int64_t y = 0; y < p->oh; ++y) {
            int64_t row = aclsim_pool_nearest_source(y, p->h, p->oh, 0.0);
            int64_t src = job->self->offset + n * xs[0] + c * xs[1] + row * xs[2];
            int64_t dst = job->out->offset + n * os[0] + c * os[1] + y * os[2];
            if (size == 8) {
                COPY_ROW(uint64_t);
            } else if (size == 4) {
                COPY_ROW(uint32_t);
            } else if (size == 2) {
                COPY_ROW(uint16_t);
            } else {
                COPY_ROW(uint8_t);
            }
        }
    }
}

static aclnnStatus nearest_kernel(aclOpExecutor *ex, void *workspace)
{
    ACLSIM_OPS_TRY(aclsim_ops_kernel_check_memory(KERNEL, ex, INPUTS_READ, 1));
    const nearest_params *p = aclsim_executor_params(ex, sizeof *p);
    int64_t *cols = workspace;
    for (int64_t x = 0; x < p->ow; ++x) {
        cols[x] = aclsim_pool_nearest_source(x, p->w, p->ow, 0.0);
    }
    nearest_job job = {.p = p, .self = aclsim_executor_input(ex, 0), .out = aclsim_executor_output(ex, 0),
                       .cols = cols};
    return aclsim_pool_run_planes(KERNEL, &job.self, job.out, p->n * p->c, (int)p->workers, resize_planes, &job);
}

static aclnnStatus check_params(const aclTensor *self, const aclIntArray *outputSize, const aclTensor *out)
{
    static const aclDataType dtypes[] = {ACLSIM_DTYPES_UpsampleNearest2d_DTYPES};
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "self", self));
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "outputSize", outputSize));
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "out", out));
    ACLSIM_OPS_TRY(aclsim_ops_check_dtype(API, "self", self, dtypes, ACLSIM_DTYPES_COUNT(dtypes)));
    ACLSIM_OPS_TRY(aclsim_ops_check_same_dtype(API, "out", out, "self", self));
    ACLSIM_OPS_TRY(aclsim_ops_check_array_size(API, "outputSize", outputSize, 2));
    if (self->ndim != 4) {
        return aclsim_ops_invalid(API, "self must be 4-D (NCHW), got %s shape %s", aclsim_ops_format_name(self->format),
                                  aclsim_ops_shape(self).s);
    }
    if (self->view_dims[2] == 0 || self->view_dims[3] == 0) {
        return aclsim_ops_invalid(API, "self H and W must not be 0, got %s", aclsim_ops_shape(self).s);
    }
    if (outputSize->values[0] == 0 || outputSize->values[1] == 0) {
        return aclsim_ops_invalid(API, "outputSize values must not be 0, got %s", aclsim_ops_ints(outputSize).s);
    }
    if (self->view_dims[1] == 0) {
        return aclsim_ops_invalid(API, "self C must not be 0, got %s", aclsim_ops_shape(self).s);
    }
    if (self->format != ACL_FORMAT_NCHW && self->format != ACL_FORMAT_NHWC) {
        return aclsim_ops_invalid(API, "self format must be NCHW or NHWC, got %s",
                                  aclsim_ops_format_name(self->format));
    }
    ACLSIM_OPS_TRY(aclsim_pool_check_format(API, "out", out, self, false));
    if (out->ndim != 4 || out->view_dims[0] != self->view_dims[0] || out->view_dims[1] != self->view_dims[1]) {
        return aclsim_ops_invalid(API, "out N and C must equal self's, got out %s and self %s",
                                  aclsim_ops_shape(out).s, aclsim_ops_shape(self).s);
    }
    if (out->view_dims[2] != outputSize->values[0] || out->view_dims[3] != outputSize->values[1]) {
        return aclsim_ops_invalid(API, "out H, W must equal outputSize, got outputSize %s",
                                  aclsim_ops_ints(outputSize).s);
    }
    for (int d = 0; d < 4; ++d) {
        if (self->view_dims[d] > INT32_MAX || out->view_dims[d] > INT32_MAX) {
            return aclsim_ops_invalid(API, "every dim of self and out must be <= %d on Atlas A2/A3, got self %s and "
                                      "out %s", INT32_MAX, aclsim_ops_shape(self).s, aclsim_ops_shape(out).s);
        }
    }
    return ACLNN_SUCCESS;
}

aclnnStatus aclnnUpsampleNearest2dGetWorkspaceSize(const aclTensor *self, const aclIntArray *outputSize,
                                                   aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor)
{
    ACLSIM_OPS_CHECK_HANDLES(API, self, outputSize, out);
    ACLSIM_OPS_TRY(check_params(self, outputSize, out));
    if (workspaceSize == NULL || executor == NULL) {
        return aclsim_ops_nullptr(API, "%s must not be NULL", workspaceSize == NULL ? "workspaceSize" : "executor");
    }
    if (aclsim_ops_is_empty(self) || aclsim_ops_is_empty(out)) {
        return aclsim_ops_finish(KERNEL, aclsim_ops_noop_kernel, 0, NULL, 0, NULL, 0, NULL, 0, workspaceSize,
                                 executor);
    }
    ACLSIM_OPS_TRY(aclsim_ops_check_memory(API, "self", self));
    ACLSIM_OPS_TRY(aclsim_ops_check_memory(API, "out", out));
    nearest_params p = {.n = self->view_dims[0], .c = self->view_dims[1], .h = self->view_dims[2],
                        .w = self->view_dims[3], .oh = out->view_dims[2], .ow = out->view_dims[3]};
    p.workers = aclsim_workers(p.n * p.c, 2 * p.oh * p.ow);
    uint64_t workspace = (uint64_t)p.ow * sizeof(int64_t);
    const aclTensor *inputs[] = {self};
    const aclTensor *outputs[] = {out};
    aclnnStatus status = aclsim_ops_finish(KERNEL, nearest_kernel, workspace, &p, sizeof p, inputs, 1, outputs, 1,
                                           workspaceSize, executor);
    if (status == ACLNN_SUCCESS) {
        aclsim_executor_set_inputs_read(*executor, INPUTS_READ);
    }
    return status;
}

aclnnStatus aclnnUpsampleNearest2d(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                   const aclrtStream stream)
{
    return aclsim_launch(KERNEL, workspace, workspaceSize, executor, stream);
}
