/*
 * aclnnAdaptiveAvgPool2d: out[i, j] = mean of self[hs:he, ws:we], hs = floor(i * H / oH),
 * he = ceil((i + 1) * H / oH) (W alike; pool_common's windows).  A 3-D (C, H, W) input is one
 * image.  Parallel over the N * C planes; each plane read once into a float32 buffer, each
 * window summed in double.  Workspace: per worker one H * W plane and one output row.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "../kernels/parallel.h"
#include "aclnnop/aclnn_adaptive_avg_pool2d.h"
#include "aclsim_dtype_rules.h" /* generated at build: the dtype table (aclnn_py/ops/<op>.py DTYPE_RULES) */
#include "pool_common.h"

static const char API[] = "aclnnAdaptiveAvgPool2dGetWorkspaceSize";
static const char KERNEL[] = "aclnnAdaptiveAvgPool2d";
#define INPUTS_READ (1u << 0)

typedef struct {
    int64_t planes, c, h, w, oh, ow, workers;
} adaptive_params;

typedef struct {
    const adaptive_params *p;
    const aclTensor *self;
    aclTensor *out;
    float *scratch;
} adaptive_job;

/* The sum of n contiguous floats in double, four partial sums (vectorised). */
static double run_sum(const float *x, int64_t n)
{
    double acc[4] = {0.0, 0.0, 0.0, 0.0};
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) {
        for (int l = 0; l < 4; ++l) {
            acc[l] += x[i + l];
        }
    }
    double sum = (acc[0] + acc[1]) + (acc[2] + acc[3]);
    for (; i < n; ++i) {
        sum += x[i];
    }
    return sum;
}

/* Four floats, four doubles (GCC's and Clang's vector types: one load, one conversion, one
 * addition per four elements, lane l adding exactly what run_sum's acc[l] adds). */
typedef float f32x4 __attribute__((vector_size(16)));
typedef double f64x4 __attribute__((vector_size(32)));

/* Global pooling (a 1x1 output) of a FLOAT self with row-major planes, planes [begin, end): each
 * plane's run_sum over its H * W elements (the same additions in the same order: the same bits),
 * four planes side by side so that their chains of additions overlap; the means stored as
 * pool_planes stores them. */
ACLSIM_AVX2_CLONES static void global_planes(const adaptive_job *job, int64_t begin, int64_t end)
{
    const adaptive_params *p = job->p;
    int64_t xs[4], os[4], len = p->h * p->w;
    aclsim_ops_nchw_strides(job->self, xs);
    aclsim_ops_nchw_strides(job->out, os);
    const float *x = (const float *)job->self->data + job->self->offset;
    bool float_out = job->out->dtype == ACL_FLOAT;
    enum { GROUP = 4 };
    for (int64_t at = begin; at < end; at += GROUP) {
        int64_t count = end - at < GROUP ? end - at : GROUP;
        const float *run[GROUP];
        for (int g = 0; g < GROUP; ++g) {
            int64_t plane = at + (g < count ? g : 0);
            run[g] = x + plane / p->c * xs[0] + plane % p->c * xs[1];
        }
        f64x4 acc[GROUP] = {{0.0}};
        int64_t i = 0;
        for (; i + 4 <= len; i += 4) {
            for (int g = 0; g < GROUP; ++g) {
                f32x4 v;
                memcpy(&v, run[g] + i, sizeof v);
                acc[g] += __builtin_convertvector(v, f64x4);
            }
        }
        for (int64_t g = 0; g < count; ++g) {
            double sum = (acc[g][0] + acc[g][1]) + (acc[g][2] + acc[g][3]);
            for (int64_t t = i; t < len; ++t) {
                sum += run[g][t];
            }
            float mean = (float)(sum / (double)len);
            int64_t plane = at + g, where = job->out->offset + plane / p->c * os[0] + plane % p->c * os[1];
            if (float_out) {
                ((float *)job->out->data)[where] = mean;
            } else {
                aclsim_ops_scatter_f32(job->out->data, job->out->dtype, where, os[3], 1, &mean);
            }
        }
    }
}

static void pool_planes(void *ctx, int64_t begin, int64_t end, int worker)
{
    const adaptive_job *job = ctx;
    const adaptive_params *p = job->p;
    float *plane = job->scratch + worker * (p->h * p->w + p->ow), *row = plane + p->h * p->w;
    int64_t xs[4], os[4];
    aclsim_ops_nchw_strides(job->self, xs);
    aclsim_ops_nchw_strides(job->out, os);
    /* A FLOAT self whose planes are row-major: read where it is. */
    bool direct = job->self->dtype == ACL_FLOAT && xs[3] == 1 && xs[2] == p->w;
    if (direct && p->oh == 1 && p->ow == 1) {
        global_planes(job, begin, end);
        return;
    }
    for (int64_t at = begin; at < end; ++at) {
        int64_t n = at / p->c, c = at % p->c;
        if (direct) {
            plane = (float *)job->self->data + job->self->offset + n * xs[0] + c * xs[1];
        }
        for (int64_t y = 0; !direct && y < p->h; ++y) {
            aclsim_ops_gather_f32(job->self->data, job->self->dtype,
                                  job->self->offset + n * xs[0] + c * xs[1] + y * xs[2], xs[3], p->w,
                                  plane + y * p->w);
        }
        for (int64_t i = 0; i < p->oh; ++i) {
            int64_t h0, h1;
            aclsim_pool_adaptive(i, p->h, p->oh, &h0, &h1);
            for (int64_t j = 0; j < p->ow; ++j) {
                int64_t w0, w1;
                aclsim_pool_adaptive(j, p->w, p->ow, &w0, &w1);
                double sum = 0.0;
                if (w0 == 0 && w1 == p->w) { /* whole rows: one run, in four partial sums */
                    sum = run_sum(plane + h0 * p->w, (h1 - h0) * p->w);
                } else {
                    for (int64_t y = h0; y < h1; ++y) {
                        for (int64_t x = w0; x < w1; ++x) {
                            sum += plane[y * p->w + x];
                        }
                    }
                }
                row[j] = (float)(sum / (double)((h1 - h0) * (w1 - w0)));
            }
            aclsim_ops_scatter_f32(job->out->data, job->out->dtype,
                                   job->out->offset + n * os[0] + c * os[1] + i * os[2], os[3], p->ow, row);
        }
    }
}

static aclnnStatus adaptive_kernel(aclOpExecutor *ex, void *workspace)
{
    ACLSIM_OPS_TRY(aclsim_ops_kernel_check_memory(KERNEL, ex, INPUTS_READ, 1));
    const adaptive_params *p = aclsim_executor_params(ex, sizeof *p);
    adaptive_job job = {.p = p, .self = aclsim_executor_input(ex, 0), .out = aclsim_executor_output(ex, 0),
                        .scratch = workspace};
    return aclsim_pool_run_planes(KERNEL, &job.self, job.out, p->planes, (int)p->workers, pool_planes, &job);
}

static aclnnStatus check_params(const aclTensor *self, const aclIntArray *outputSize, const aclTensor *out)
{
    static const aclDataType dtypes[] = {ACLSIM_DTYPES_AdaptiveAvgPool2d_DTYPES};
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "self", self));
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "outputSize", outputSize));
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "out", out));
    ACLSIM_OPS_TRY(aclsim_pool_check_rank34(API, self));
    if (!aclsim_pool_same_leading(out, self)) {
        return aclsim_ops_invalid(API, "out must have self's rank and leading dims, got out %s and self %s",
                                  aclsim_ops_shape(out).s, aclsim_ops_shape(self).s);
    }
    ACLSIM_OPS_TRY(aclsim_ops_check_dtype(API, "self", self, dtypes, ACLSIM_DTYPES_COUNT(dtypes)));
    ACLSIM_OPS_TRY(aclsim_ops_check_same_dtype(API, "out", out, "self", self));
    ACLSIM_OPS_TRY(aclsim_pool_check_format(API, "out", out, self, true));
    ACLSIM_OPS_TRY(aclsim_ops_check_array_size(API, "outputSize", outputSize, 2));
    ACLSIM_OPS_TRY(aclsim_ops_check_array_min(API, "outputSize", outputSize, 0, true));
    if (outputSize->values[0] != aclsim_ops_dim(out, -2) || outputSize->values[1] != aclsim_ops_dim(out, -1)) {
        return aclsim_ops_invalid(API, "outputSize must equal out's H, W, got %s and out %s",
                                  aclsim_ops_ints(outputSize).s, aclsim_ops_shape(out).s);
    }
    return ACLNN_SUCCESS;
}

aclnnStatus aclnnAdaptiveAvgPool2dGetWorkspaceSize(const aclTensor *self, const aclIntArray *outputSize,
                                                   aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor)
{
    ACLSIM_OPS_CHECK_HANDLES(API, self, outputSize, out);
    ACLSIM_OPS_TRY(check_params(self, outputSize, out));
    if (workspaceSize == NULL || executor == NULL) {
        return aclsim_ops_nullptr(API, "%s must not be NULL", workspaceSize == NULL ? "workspaceSize" : "executor");
    }
    if (aclsim_ops_is_empty(self)) {
        return aclsim_ops_finish(KERNEL, aclsim_ops_noop_kernel, 0, NULL, 0, NULL, 0, NULL, 0, workspaceSize,
                                 executor);
    }
    ACLSIM_OPS_TRY(aclsim_ops_check_memory(API, "self", self));
    ACLSIM_OPS_TRY(aclsim_ops_check_memory(API, "out", out));
    adaptive_params p = {.c = aclsim_ops_dim(self, -3), .h = aclsim_ops_dim(self, -2), .w = aclsim_ops_dim(self, -1),
                         .oh = outputSize->values[0], .ow = outputSize->values[1]};
    p.planes = aclsim_pool_planes(self);
    p.workers = aclsim_workers(p.planes, p.h * p.w + p.oh * p.ow);
    uint64_t workspace = (uint64_t)(p.workers * (p.h * p.w + p.ow)) * sizeof(float);
    const aclTensor *inputs[] = {self};
    const aclTensor *outputs[] = {out};
    aclnnStatus status = aclsim_ops_finish(KERNEL, adaptive_kernel, workspace, &p, sizeof p, inputs, 1, outputs, 1,
                                           workspaceSize, executor);
    if (status == ACLNN_SUCCESS) {
        aclsim_executor_set_inputs_read(*executor, INPUTS_READ);
    }
    return status;
}

aclnnStatus aclnnAdaptiveAvgPool2d(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                   const aclrtStream stream)
{
    return aclsim_launch(KERNEL, workspace, workspaceSize, executor, stream);
}
