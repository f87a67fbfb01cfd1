/*
 * aclnnAvgPool2d: each output cell the sum of its window's real elements over the window's
 * divisor (divisorOverride if non-zero; else the window clipped to the padded input with
 * countIncludePad, its real extent without: pool_common's aclsim_pool_avg_window, shared with
 * the backward).  The pooled size truncates its division (CANN's rule,
 * aclsim_pool_out_size_trunc).  A 3-D (C, H, W) input is one image.  cubeMathType is validated
 * and has no effect.  Parallel over the N * C planes; workspace: per worker one H * W float
 * plane (unused for a FLOAT self with row-major planes, read where it is) and one output row.
 */
#include <stdlib.h>
#include <string.h>

#include "../kernels/parallel.h"
#include "aclnnop/aclnn_avgpool2d.h"
#include "aclsim_dtype_rules.h" /* generated at build: the dtype table (aclnn_py/ops/<op>.py DTYPE_RULES) */
#include "pool_common.h"

static const char API[] = "aclnnAvgPool2dGetWorkspaceSize";
static const char KERNEL[] = "aclnnAvgPool2d";
#define INPUTS_READ (1u << 0)

typedef struct {
    int64_t planes, c, h, w, oh, ow;
    int64_t k[2], s[2], p[2];
    int64_t divisor_override;
    bool count_include_pad;
    int64_t workers;
} avg_params;

typedef struct {
    const avg_params *p;
    const aclTensor *self;
    aclTensor *out;
    float *scratch;
} avg_job;

/* The output columns [*lo, *hi) of a row whose windows lie whole inside it (no padding, no
 * clipping: taps j * s - p + t for t < k, divisor factor k). */
static void inner_columns(int64_t w, int64_t ow, int64_t k, int64_t s, int64_t p, int64_t *lo, int64_t *hi)
{
    int64_t first = (p + s - 1) / s, reach = w + p - k; /* j * s >= p; j * s - p + k <= w */
    int64_t end = reach < 0 ? 0 : reach / s + 1;
    *lo = first < ow ? first : ow;
    *hi = end < *lo ? *lo : end > ow ? ow : end;
}

/* Output cell j of a row from its window over rows [h0, h1) (fh their divisor factor): the
 * window's elements added one by one, row by row, into a float from 0, over the divisor. */
static float window_mean(const avg_params *p, const float *plane, int64_t j, int64_t h0, int64_t h1, int64_t fh)
{
    int64_t w0, w1, fw;
    aclsim_pool_avg_window(j, p->w, p->k[1], p->s[1], p->p[1], p->count_include_pad, &w0, &w1, &fw);
    float sum = 0.0f;
    for (int64_t y = h0; y < h1; ++y) {
        for (int64_t x = w0; x < w1; ++x) {
            sum += plane[y * p->w + x];
        }
    }
    float divisor = p->divisor_override != 0 ? (float)p->divisor_override : (float)(fh * fw);
    return sum / divisor;
}

/* The planes [begin, end).  A FLOAT self with row-major planes is read where it is, others
 * through a float plane.  The columns whose windows lie inside the row are summed side by side
 * (each cell's additions in window_mean's order: the same bits), the others by window_mean. */
ACLSIM_AVX2_CLONES static void pool_planes(void *ctx, int64_t begin, int64_t end, int worker)
{
    const avg_job *job = ctx;
    const avg_params *p = job->p;
    float *buffer = job->scratch + worker * (p->h * p->w + p->ow), *row = buffer + p->h * p->w;
    int64_t xs[4], os[4];
    aclsim_ops_nchw_strides(job->self, xs);
    aclsim_ops_nchw_strides(job->out, os);
    bool direct = job->self->dtype == ACL_FLOAT && xs[3] == 1 && xs[2] == p->w;
    int64_t kw = p->k[1], sw = p->s[1], lo, hi;
    inner_columns(p->w, p->ow, kw, sw, p->p[1], &lo, &hi);
    for (int64_t at = begin; at < end; ++at) {
        int64_t n = at / p->c, c = at % p->c;
        const float *plane = buffer;
        if (direct) {
            plane = (const float *)job->self->data + job->self->offset + n * xs[0] + c * xs[1];
        }
        for (int64_t y = 0; !direct && y < p->h; ++y) {
            aclsim_ops_gather_f32(job->self->data, job->self->dtype,
                                  job->self->offset + n * xs[0] + c * xs[1] + y * xs[2], xs[3], p->w,
                                  buffer + y * p->w);
        }
        for (int64_t i = 0; i < p->oh; ++i) {
            int64_t h0, h1, fh;
            aclsim_pool_avg_window(i, p->h, p->k[0], p->s[0], p->p[0], p->count_include_pad, &h0, &h1, &fh);
            for (int64_t j = lo; j < hi; ++j) {
                row[j] = 0.0f;
            }
            for (int64_t y = h0; y < h1; ++y) {
                const float *src = plane + y * p->w - p->p[1];
                for (int64_t t = 0; t < kw; ++t) {
                    if (sw == 1) {
                        for (int64_t j = lo; j < hi; ++j) {
                            row[j] += src[j + t];
                        }
                    } else {
                        for (int64_t j = lo; j < hi; ++j) {
                            row[j] += src[j * sw + t];
                        }
                    }
                }
            }
            float divisor = p->divisor_override != 0 ? (float)p->divisor_override : (float)(fh * kw);
            for (int64_t j = lo; j < hi; ++j) {
                row[j] = row[j] / divisor;
            }
            for (int64_t j = 0; j < lo; ++j) {
                row[j] = window_mean(p, plane, j, h0, h1, fh);
            }
            for (int64_t j = hi; j < p->ow; ++j) {
                row[j] = window_mean(p, plane, j, h0, h1, fh);
            }
            aclsim_ops_scatter_f32(job->out->data, job->out->dtype,
                                   job->out->offset + n * os[0] + c * os[1] + i * os[2], os[3], p->ow, row);
        }
    }
}

static aclnnStatus avg_kernel(aclOpExecutor *ex, void *workspace)
{
    ACLSIM_OPS_TRY(aclsim_ops_kernel_check_memory(KERNEL, ex, INPUTS_READ, 1));
    const avg_params *p = aclsim_executor_params(ex, sizeof *p);
    avg_job job = {.p = p, .self = aclsim_executor_input(ex, 0), .out = aclsim_executor_output(ex, 0),
                   .scratch = workspace};
    return aclsim_pool_run_planes(KERNEL, &job.self, job.out, p->planes, (int)p->workers, pool_planes, &job);
}

static aclnnStatus check_params(const aclTensor *self, const aclIntArray *kernelSize, const aclIntArray *strides,
                                const aclIntArray *paddings, bool ceilMode, int64_t divisorOverride,
                                int8_t cubeMathType, const aclTensor *out, avg_params *ap)
{
    static const aclDataType dtypes[] = {ACLSIM_DTYPES_AvgPool2d_DTYPES};
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "self", self));
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "kernelSize", kernelSize));
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "strides", strides));
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "paddings", paddings));
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "out", out));
    ACLSIM_OPS_TRY(aclsim_ops_check_dtype(API, "self", self, dtypes, ACLSIM_DTYPES_COUNT(dtypes)));
    ACLSIM_OPS_TRY(aclsim_ops_check_same_dtype(API, "out", out, "self", self));
    ACLSIM_OPS_TRY(aclsim_pool_check_rank34(API, self));
    ACLSIM_OPS_TRY(aclsim_pool_check_format(API, "out", out, self, false));
    ACLSIM_OPS_TRY(aclsim_ops_check_array_min(API, "kernelSize", kernelSize, 0, true));
    ACLSIM_OPS_TRY(aclsim_ops_check_array_min(API, "strides", strides, 0, true));
    ACLSIM_OPS_TRY(aclsim_ops_check_array_min(API, "paddings", paddings, 0, false));
    if (aclsim_ops_dim(self, -3) == 0 || aclsim_ops_dim(self, -2) == 0 || aclsim_ops_dim(self, -1) == 0) {
        return aclsim_ops_invalid(API, "self C, H and W must not be 0, got %s", aclsim_ops_shape(self).s);
    }
    if (kernelSize->size < 1) {
        return aclsim_ops_invalid(API, "kernelSize must have at least 1 element, got []");
    }
    if (paddings->size != 1 && paddings->size != 2) {
        return aclsim_ops_invalid(API, "paddings must have 1 or 2 elements, got %s", aclsim_ops_ints(paddings).s);
    }
    if (strides->size > 2) {
        return aclsim_ops_invalid(API, "strides must have 0, 1 or 2 elements, got %s", aclsim_ops_ints(strides).s);
    }
    aclsim_pool_pair(kernelSize, NULL, ap->k);
    aclsim_pool_pair(paddings, NULL, ap->p);
    if (ap->k[0] < 2 * ap->p[0] || ap->k[1] < 2 * ap->p[1]) {
        return aclsim_ops_invalid(API, "paddings must be <= kernelSize / 2, got kernelSize = %s, paddings = %s",
                                  aclsim_ops_ints(kernelSize).s, aclsim_ops_ints(paddings).s);
    }
    aclsim_pool_pair(strides, ap->k, ap->s);
    int64_t hw[2] = {aclsim_ops_dim(self, -2), aclsim_ops_dim(self, -1)}, o[2];
    for (int a = 0; a < 2; ++a) {
        int64_t reach;
        if (!aclsim_ops_add(hw[a], 2 * ap->p[a], &reach) || !aclsim_ops_add(reach, ap->s[a], &reach) ||
            !aclsim_pool_out_size_trunc(hw[a], ap->k[a], ap->s[a], ap->p[a], ceilMode, &o[a])) {
            return aclsim_ops_invalid(API, "the pooled size of self %s overflows int64", aclsim_ops_shape(self).s);
        }
    }
    if (o[0] <= 0 || o[1] <= 0) {
        return aclsim_ops_invalid(API, "outH and outW must be > 0, got %s for self %s", aclsim_ops_int_list(o, 2).s,
                                  aclsim_ops_shape(self).s);
    }
    int64_t shape[4] = {self->view_dims[0], aclsim_ops_dim(self, -3), o[0], o[1]};
    int skip = self->ndim == 4 ? 0 : 1;
    bool same = out->ndim == self->ndim;
    for (uint64_t d = 0; same && d < self->ndim; ++d) {
        same = out->view_dims[d] == shape[d + (uint64_t)skip];
    }
    if (!same) {
        return aclsim_ops_invalid(API, "out shape must be %s, got %s", aclsim_ops_int_list(shape + skip, self->ndim).s,
                                  aclsim_ops_shape(out).s);
    }
    if (cubeMathType < 0 || cubeMathType > 4) {
        return aclsim_ops_invalid(API, "cubeMathType must be in [0, 4], got %d", (int)cubeMathType);
    }
    if (self->dtype == ACL_FLOAT && (cubeMathType == 1 || cubeMathType == 3 || cubeMathType == 4)) {
        int64_t H = hw[0], W = hw[1], kH = ap->k[0], kW = ap->k[1];
        int64_t big = kH > kW ? kH : kW;
        bool global = H == kH && W == kW && ap->p[0] == 0 && ap->p[1] == 0;
        bool cube = W / H < 2 && H / W < 2 && big <= 255 && (kH * kW <= 255 || big <= 20) &&
                    divisorOverride >= -255 && divisorOverride <= 255 && !ceilMode &&
                    aclsim_ops_dim(self, -3) < 65536;
        if (global || cube) {
            return aclsim_ops_invalid(API, "cubeMathType %d is not supported for a FLOAT self here on Atlas A2/A3 "
                                      "(its global/cube path takes 0 KEEP_DTYPE or 2 USE_FP16)", (int)cubeMathType);
        }
    }
    ap->c = shape[1];
    ap->planes = (self->ndim == 4 ? shape[0] : 1) * ap->c;
    ap->h = hw[0];
    ap->w = hw[1];
    ap->oh = o[0];
    ap->ow = o[1];
    ap->divisor_override = divisorOverride;
    return ACLNN_SUCCESS;
}

aclnnStatus aclnnAvgPool2dGetWorkspaceSize(const aclTensor *self, const aclIntArray *kernelSize,
                                           const aclIntArray *strides, const aclIntArray *paddings, const bool ceilMode,
                                           const bool countIncludePad, const int64_t divisorOverride,
                                           const int8_t cubeMathType, aclTensor *out, uint64_t *workspaceSize,
                                           aclOpExecutor **executor)
{
    ACLSIM_OPS_CHECK_HANDLES(API, self, kernelSize, strides, paddings, out);
    avg_params p;
    memset(&p, 0, sizeof p);
    ACLSIM_OPS_TRY(check_params(self, kernelSize, strides, paddings, ceilMode, divisorOverride, cubeMathType, out, &p));
    if (workspaceSize == NULL || executor == NULL) {
        return aclsim_ops_nullptr(API, "%s must not be NULL", workspaceSize == NULL ? "workspaceSize" : "executor");
    }
    if (aclsim_ops_is_empty(self) || aclsim_ops_is_empty(out)) {
        return aclsim_ops_finish(KERNEL, aclsim_ops_noop_kernel, 0, NULL, 0, NULL, 0, NULL, 0, workspaceSize,
                                 executor);
    }
    ACLSIM_OPS_TRY(aclsim_ops_check_memory(API, "self", self));
    ACLSIM_OPS_TRY(aclsim_ops_check_memory(API, "out", out));
    p.count_include_pad = countIncludePad;
    p.workers = aclsim_workers(p.planes, p.h * p.w + p.oh * p.ow * p.k[0] * p.k[1]);
    uint64_t workspace = (uint64_t)(p.workers * (p.h * p.w + p.ow)) * sizeof(float);
    const aclTensor *inputs[] = {self};
    const aclTensor *outputs[] = {out};
    aclnnStatus status = aclsim_ops_finish(KERNEL, avg_kernel, workspace, &p, sizeof p, inputs, 1, outputs, 1,
                                           workspaceSize, executor);
    if (status == ACLNN_SUCCESS) {
        aclsim_executor_set_inputs_read(*executor, INPUTS_READ);
    }
    return status;
}

aclnnStatus aclnnAvgPool2d(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)
{
    return aclsim_launch(KERNEL, workspace, workspaceSize, executor, stream);
}
