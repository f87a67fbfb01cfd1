/*
 * aclnnReflectionPad2d: F.pad(self, padding, mode="reflect"), padding = [left, right, top,
 * bottom]: out[..., y, x] = self[..., r(y - top, H), r(x - left, W)] (pad2d_common.h's r; a
 * negative pad crops).  A copy of elements of one dtype, exact for every dtype: one (H, W)
 * plane at a time in parallel over the N * C planes, each out row from one self row through
 * the table of source columns (workspace), the interior run of a unit-stride row by memcpy.
 * The checks are in CANN's order, with the numpy backend's messages
 * (aclnn_py/ops/reflection_pad2d.py).
 */
#include <string.h>

#include "../kernels/parallel.h"
#include "aclnnop/aclnn_reflection_pad2d.h"
#include "aclsim_dtype_rules.h" /* generated at build: the dtype table (aclnn_py/ops/<op>.py DTYPE_RULES) */
#include "pad2d_common.h"

static const char API[] = "aclnnReflectionPad2dGetWorkspaceSize";
static const char KERNEL[] = "aclnnReflectionPad2d";

typedef struct {
    int64_t c, h, w, oh, ow;     /* planes per image, self plane, out plane */
    int64_t left, top;
    int64_t workers;             /* threads over the N * C planes */
} pad_params;

typedef struct {
    const pad_params *p;
    const char *src;
    char *dst;
    size_t size;                  /* element bytes */
    int64_t s[4], d[4];           /* self's and out's (N, C, H, W) strides, elements */
    const int64_t *cols;          /* source column of each out column */
} pad_job;

static void pad_planes(void *ctx, int64_t begin, int64_t end, int worker)
{
    (void)worker;
    const pad_job *job = ctx;
    const pad_params *p = job->p;
    size_t size = job->size;
    /* The out columns whose sources are the self columns in order: one memcpy per row. */
    int64_t run_lo = p->left > 0 ? p->left : 0, run_hi = p->left + p->w < p->ow ? p->left + p->w : p->ow;
    bool run = job->s[3] == 1 && job->d[3] == 1 && run_hi > run_lo;
    for (int64_t plane = begin; plane < end; ++plane) {
        int64_t n = plane / p->c, c = plane % p->c;
        const char *src = job->src + (n * job->s[0] + c * job->s[1]) * (int64_t)size;
        char *dst = job->dst + (n * job->d[0] + c * job->d[1]) * (int64_t)size;
        for (int64_t y = 0; y < p->oh; ++y) {
            const char *src_row = src + aclsim_pad2d_reflect(y - p->top, p->h) * job->s[2] * (int64_t)size;
            char *dst_row = dst + y * job->d[2] * (int64_t)size;
            for (int64_t x = 0; x < p->ow; ++x) {
                if (run && x == run_lo) {
                    memcpy(dst_row + x * (int64_t)size, src_row + job->cols[x] * (int64_t)size,
                           (size_t)(run_hi - run_lo) * size);
                    x = run_hi - 1;
                    continue;
                }
                memcpy(dst_row + x * job->d[3] * (int64_t)size, src_row + job->cols[x] * job->s[3] * (int64_t)size,
                       size);
            }
        }
    }
}

static aclnnStatus pad_kernel(aclOpExecutor *ex, void *workspace)
{
    ACLSIM_OPS_TRY(aclsim_ops_kernel_check_memory(KERNEL, ex, 0x1u, 1));
    const pad_params *p = aclsim_executor_params(ex, sizeof *p);
    const aclTensor *self = aclsim_executor_input(ex, 0);
    aclTensor *out = aclsim_executor_output(ex, 0);
    int64_t *cols = workspace;
    for (int64_t x = 0; x < p->ow; ++x) {
        cols[x] = aclsim_pad2d_reflect(x - p->left, p->w);
    }
    pad_job job = {.p = p, .size = aclsim_ops_dtype_size(self->dtype), .cols = cols};
    job.src = (const char *)self->data + (int64_t)job.size * self->offset;
    job.dst = (char *)out->data + (int64_t)job.size * out->offset;
    aclsim_ops_nchw_strides(self, job.s);
    aclsim_ops_nchw_strides(out, job.d);
    int64_t planes = aclsim_ops_numel(out) / (p->oh * p->ow);
    aclsim_parallel(planes, (int)p->workers, pad_planes, &job);
    /* Every element of out is a copy of one of self's: an Inf or NaN in out was in self, which
     * the overflow hook (nnopbase/float_results.c) would find after scanning out for it, and
     * record nothing.  Saying so spares that scan, a whole extra read of out (11% of the samples
     * of a (8,64,112,112) call from NumPy arrays). */
    aclsim_kernel_outputs_finite(0);
    return ACLNN_SUCCESS;
}

static aclnnStatus check_params(const aclTensor *self, const aclIntArray *padding, const aclTensor *out)
{
    static const aclDataType dtypes[] = {ACLSIM_DTYPES_ReflectionPad2d_DTYPES}; /* the one table */

    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "self", self));
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "padding", padding));
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "out", out));

    ACLSIM_OPS_TRY(aclsim_ops_check_dtype(API, "self", self, dtypes, ACLSIM_DTYPES_COUNT(dtypes)));
    ACLSIM_OPS_TRY(aclsim_ops_check_dtype(API, "out", out, dtypes, ACLSIM_DTYPES_COUNT(dtypes)));
    ACLSIM_OPS_TRY(aclsim_ops_check_same_dtype(API, "out", out, "self", self));
    if (self->format != out->format) {
        return aclsim_ops_invalid(API, "self and out must have the same format, got %s and %s",
                                  aclsim_ops_format_name(self->format), aclsim_ops_format_name(out->format));
    }

    if (self->ndim != 3 && self->ndim != 4) {
        return aclsim_ops_invalid(API, "self must be 3-D or 4-D, got %llu-D shape %s", (unsigned long long)self->ndim,
                                  aclsim_ops_shape(self).s);
    }
    if (out->ndim != self->ndim) {
        return aclsim_ops_invalid(API, "out must have self's rank %llu, got %llu-D shape %s",
                                  (unsigned long long)self->ndim, (unsigned long long)out->ndim,
                                  aclsim_ops_shape(out).s);
    }
    ACLSIM_OPS_TRY(aclsim_ops_check_array_size(API, "padding", padding, 4));
    ACLSIM_OPS_TRY(aclsim_pad2d_check_below(API, padding, self));
    /* pad < dim here, so the sums cannot overflow upwards; negative pads crop. */
    const int64_t *pad = padding->values;
    int64_t oh = 0, ow = 0;
    if (!aclsim_ops_add(aclsim_ops_dim(self, -2), pad[2], &oh) || !aclsim_ops_add(oh, pad[3], &oh) ||
        !aclsim_ops_add(aclsim_ops_dim(self, -1), pad[0], &ow) || !aclsim_ops_add(ow, pad[1], &ow) || oh < 0 ||
        ow < 0) {
        int64_t both[2] = {oh, ow};
        return aclsim_ops_invalid(API, "the padded sizes [H + top + bottom, W + left + right] = %s must be >= 0 "
                                  "(self %s, padding = %s)", aclsim_ops_int_list(both, 2).s, aclsim_ops_shape(self).s,
                                  aclsim_ops_ints(padding).s);
    }
    int64_t expected[4];
    for (uint64_t d = 0; d + 2 < self->ndim; ++d) {
        expected[d] = self->view_dims[d];
    }
    expected[self->ndim - 2] = oh;
    expected[self->ndim - 1] = ow;
    if (aclsim_ops_is_empty(self) || aclsim_ops_is_empty(out)) {
        bool ok = self->ndim == 4;
        for (uint64_t d = 1; ok && d < 4; ++d) {
            ok = self->view_dims[d] != 0 && out->view_dims[d] != 0;
        }
        if (!ok) {
            return aclsim_ops_invalid(API, "self and out may only be empty in N (dim 0 of a 4-D self), got self %s "
                                      "and out %s", aclsim_ops_shape(self).s, aclsim_ops_shape(out).s);
        }
    }
    for (uint64_t d = 0; d < self->ndim; ++d) {
        if (out->view_dims[d] != expected[d]) {
            return aclsim_ops_invalid(API, "out shape must be %s (self's, its last two dims padded), got %s",
                                      aclsim_ops_int_list(expected, self->ndim).s, aclsim_ops_shape(out).s);
        }
    }
    return ACLNN_SUCCESS;
}

aclnnStatus aclnnReflectionPad2dGetWorkspaceSize(const aclTensor *self, const aclIntArray *padding, aclTensor *out,
                                                 uint64_t *workspaceSize, aclOpExecutor **executor)
{
    ACLSIM_OPS_CHECK_HANDLES(API, self, padding, out);
    ACLSIM_OPS_TRY(check_params(self, padding, out));
    /* CANN does not check these two and would crash on NULL. */
    if (workspaceSize == NULL || executor == NULL) {
        return aclsim_ops_nullptr(API, "%s must not be NULL", workspaceSize == NULL ? "workspaceSize" : "executor");
    }
    if (aclsim_ops_is_empty(self) || aclsim_ops_is_empty(out)) {
        return aclsim_ops_finish(KERNEL, aclsim_ops_noop_kernel, 0, NULL, 0, NULL, 0, NULL, 0, workspaceSize,
                                 executor);
    }
    ACLSIM_OPS_TRY(aclsim_ops_check_memory(API, "self", self));
    ACLSIM_OPS_TRY(aclsim_ops_check_memory(API, "out", out));
    int lead = self->ndim == 4 ? 1 : 0;
    pad_params p = {
        .c = self->view_dims[lead],
        .h = self->view_dims[lead + 1],
        .w = self->view_dims[lead + 2],
        .oh = aclsim_ops_dim(out, -2),
        .ow = aclsim_ops_dim(out, -1),
        .left = padding->values[0],
        .top = padding->values[2],
    };
    p.workers = aclsim_workers(aclsim_ops_numel(out) / (p.oh * p.ow), p.oh * p.ow);
    const aclTensor *inputs[] = {self};
    const aclTensor *outputs[] = {out};
    aclnnStatus status = aclsim_ops_finish(KERNEL, pad_kernel, aclsim_ops_region((uint64_t)p.ow, sizeof(int64_t)), &p,
                                           sizeof p, inputs, 1, outputs, 1, workspaceSize, executor);
    if (status == ACLNN_SUCCESS) {
        aclsim_executor_set_outputs_written(*executor, 1u); /* every element of every plane */
    }
    return status;
}

aclnnStatus aclnnReflectionPad2d(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                 const aclrtStream stream)
{
    return aclsim_launch(KERNEL, workspace, workspaceSize, executor, stream);
}
