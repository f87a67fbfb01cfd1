/*
 * aclnnIm2col: F.unfold(self, kernelSize, dilation, padding, stride):
 * out[n, c*kH*kW + i*kW + j, bh*Lw + bw] = self[n, c, bh*sH - pH + i*dH, bw*sW - pW + j*dW],
 * 0 outside the image.  A 3-D (C, H, W) self gives a 2-D out.  CANN declares `out` const and
 * writes it, cast to its dtype (FLOAT, FLOAT16 or BFLOAT16, as documented).
 *
 * self is read as float32 into the workspace, the columns built there one (n, c) plane at a
 * time in parallel over the planes (each writes its own kH*kW rows), then written into out
 * (a FLOAT contiguous self / out is used where it is).  Each row of a FLOAT out is tested
 * for Inf / NaN right after it is written (the overflow hook's pass over out is then not
 * needed: a 58 MB out of resnet 3x3 (8,64,56,56) read once more).
 * The checks are in CANN's order, with the numpy backend's messages (aclnn_py/ops/im2col.py).
 */
#include <stdlib.h>
#include <string.h>

#include "../kernels/parallel.h"
#include "aclnnop/aclnn_im2col.h"
#include "aclsim_dtype_rules.h" /* generated at build: the dtype table (aclnn_py/ops/<op>.py DTYPE_RULES) */
#include "im2col_common.h"

static const char API[] = "aclnnIm2colGetWorkspaceSize";
static const char KERNEL[] = "aclnnIm2col";

typedef struct {
    int64_t planes, h, w, kh, kw, dh, dw, ph, pw, sh, sw, lh, lw;
    int64_t workers;
    bool direct_in, direct_out; /* FLOAT and contiguous: read / written where it is, no workspace copy */
} im2col_params;

/* A tensor the kernel can use where it lies: FLOAT, row-major contiguous. */
static bool direct(const aclTensor *t)
{
    return t->dtype == ACL_FLOAT && aclsim_ops_is_contiguous(t);
}

typedef struct {
    const im2col_params *p;
    const float *x;
    float *cols;
    bool check;                         /* test each row written for Inf / NaN (cols is out) */
    bool nonfinite[ACLSIM_MAX_WORKERS]; /* per worker: a row held one */
} im2col_job;

static void unfold_planes(void *ctx, int64_t begin, int64_t end, int worker)
{
    im2col_job *job = ctx;
    const im2col_params *p = job->p;
    int64_t blocks = p->lh * p->lw;
    for (int64_t plane = begin; plane < end; ++plane) {
        const float *x = job->x + plane * p->h * p->w;
        float *rows = job->cols + plane * p->kh * p->kw * blocks;
        for (int64_t i = 0; i < p->kh; ++i) {
            for (int64_t j = 0; j < p->kw; ++j) {
                float *row = rows + (i * p->kw + j) * blocks;
                /* Block column bw reads image column bw * sw + off: inside the image for bw in
                 * [lo, hi), a plain (for sw 1, contiguous) copy; 0 on either side. */
                int64_t off = j * p->dw - p->pw;
                int64_t lo = off >= 0 ? 0 : (p->sw - 1 - off) / p->sw;
                int64_t hi = off >= p->w ? 0 : (p->w - 1 - off) / p->sw + 1;
                hi = hi < p->lw ? hi : p->lw;
                lo = lo < hi ? lo : hi;
                for (int64_t bh = 0; bh < p->lh; ++bh) {
                    int64_t y = bh * p->sh - p->ph + i * p->dh;
                    float *dst = row + bh * p->lw;
                    if (y < 0 || y >= p->h) {
                        memset(dst, 0, (size_t)p->lw * sizeof(float));
                        continue;
                    }
                    const float *src = x + y * p->w;
                    memset(dst, 0, (size_t)lo * sizeof(float));
                    if (p->sw == 1 && hi > lo) {
                        memcpy(dst + lo, src + lo + off, (size_t)(hi - lo) * sizeof(float));
                    } else {
                        for (int64_t bw = lo; bw < hi; ++bw) {
                            dst[bw] = src[bw * p->sw + off];
                        }
                    }
                    memset(dst + hi, 0, (size_t)(p->lw - hi) * sizeof(float));
                }
                if (job->check && !job->nonfinite[worker] && /* the row just written, while it is in cache */
                    aclsim_nonfinite_run(row, ACL_FLOAT, 0, 1, blocks)) {
                    job->nonfinite[worker] = true;
                }
            }
        }
    }
}

static aclnnStatus im2col_kernel(aclOpExecutor *ex, void *workspace)
{
    ACLSIM_OPS_TRY(aclsim_ops_kernel_check_memory(KERNEL, ex, 0x1u, 1));
    const im2col_params *p = aclsim_executor_params(ex, sizeof *p);
    const aclTensor *self = aclsim_executor_input(ex, 0);
    aclTensor *out = aclsim_executor_output(ex, 0);
    /* The copies through the workspace are skipped for a FLOAT contiguous self / out (the same
     * floats: read_f32 and write_f32 would copy them as they are); a self out overlaps is then
     * read from a copy, as the workspace's would be.  vit 16x16 s16 (8,3,224,224) moved its 4.8
     * MB four more times (two copies and the workspace's 0xFF fill) without this. */
    void *staged_copy = NULL;
    aclTensor staged;
    float *ws = workspace;
    const float *x;
    if (p->direct_in) {
        if (p->direct_out && aclsim_ops_views_overlap(self, out)) {
            if (!aclsim_ops_stage(KERNEL, self, &staged, &staged_copy)) {
                return ACLSIM_OPS_KERNEL_FAULT;
            }
            self = &staged;
        }
        x = (const float *)self->data + self->offset;
    } else {
        aclsim_ops_read_f32(self, ws);
        x = ws;
        ws += aclsim_ops_region((uint64_t)aclsim_ops_numel(self), sizeof(float)) / sizeof(float);
    }
    float *cols = p->direct_out ? (float *)out->data + out->offset : ws;
    im2col_job job = {.p = p, .x = x, .cols = cols, .check = p->direct_out};
    aclsim_parallel(p->planes, (int)p->workers, unfold_planes, &job);
    if (!p->direct_out) {
        aclsim_ops_write_f32(out, cols);
    }
    bool finite = p->direct_out;
    for (int w = 0; w < ACLSIM_MAX_WORKERS; ++w) {
        finite = finite && !job.nonfinite[w];
    }
    if (finite) {
        aclsim_kernel_outputs_finite(0);
    }
    free(staged_copy);
    return ACLNN_SUCCESS;
}

static aclnnStatus check_params(const aclTensor *self, const aclIntArray *kernelSize, const aclIntArray *dilation,
                                const aclIntArray *padding, const aclIntArray *stride, const aclTensor *out,
                                int64_t grid[2])
{
    static const aclDataType dtypes[] = {ACLSIM_DTYPES_Im2col_DTYPES}; /* the one table */

    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "self", self));
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "kernelSize", kernelSize));
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "dilation", dilation));
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "padding", padding));
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "stride", stride));
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "out", out));
    ACLSIM_OPS_TRY(aclsim_ops_check_dtype(API, "self", self, dtypes, ACLSIM_DTYPES_COUNT(dtypes)));
    /* The documented list (CANN's code casts into any out without checking its dtype). */
    ACLSIM_OPS_TRY(aclsim_ops_check_dtype(API, "out", out, dtypes, ACLSIM_DTYPES_COUNT(dtypes)));

    uint64_t ndim = self->ndim;
    if (ndim != 3 && ndim != 4) {
        return aclsim_ops_invalid(API, "self must be 3-D or 4-D, got %llu-D shape %s", (unsigned long long)ndim,
                                  aclsim_ops_shape(self).s);
    }
    for (uint64_t d = ndim - 3; d < ndim; ++d) {
        if (self->view_dims[d] <= 0) {
            return aclsim_ops_invalid(API, "self dims but a 4-D self's first must be > 0, got self %s",
                                      aclsim_ops_shape(self).s);
        }
    }
    ACLSIM_OPS_TRY(aclsim_ops_check_array_size(API, "kernelSize", kernelSize, 2));
    ACLSIM_OPS_TRY(aclsim_ops_check_array_size(API, "dilation", dilation, 2));
    ACLSIM_OPS_TRY(aclsim_ops_check_array_size(API, "padding", padding, 2));
    ACLSIM_OPS_TRY(aclsim_ops_check_array_size(API, "stride", stride, 2));
    ACLSIM_OPS_TRY(aclsim_ops_check_array_min(API, "kernelSize", kernelSize, 0, true));
    ACLSIM_OPS_TRY(aclsim_ops_check_array_min(API, "stride", stride, 0, true));
    ACLSIM_OPS_TRY(aclsim_ops_check_array_min(API, "dilation", dilation, 0, true));
    ACLSIM_OPS_TRY(aclsim_ops_check_array_min(API, "padding", padding, 0, false));

    bool ok = true;
    for (int d = 0; d < 2; ++d) {
        if (!aclsim_im2col_blocks(aclsim_ops_dim(self, -2 + d), padding->values[d], dilation->values[d],
                                  kernelSize->values[d], stride->values[d], &grid[d])) {
            grid[d] = 0;
        }
        ok = ok && grid[d] >= 1;
    }
    int64_t total = 0;
    ok = ok && aclsim_ops_mul(grid[0], grid[1], &total) && aclsim_ops_mul(total, kernelSize->values[0], &total) &&
         aclsim_ops_mul(total, kernelSize->values[1], &total) &&
         aclsim_ops_mul(total, aclsim_ops_dim(self, -3), &total);
    if (!ok) {
        return aclsim_ops_invalid(API, "the block grid [Lh, Lw] must be at least [1, 1] (and its out fit int64), got %s "
                                  "(self %s, kernelSize = %s, dilation = %s, padding = %s, stride = %s)",
                                  aclsim_ops_int_list(grid, 2).s, aclsim_ops_shape(self).s,
                                  aclsim_ops_ints(kernelSize).s, aclsim_ops_ints(dilation).s,
                                  aclsim_ops_ints(padding).s, aclsim_ops_ints(stride).s);
    }
    int64_t expected[3];
    uint64_t rank = ndim - 1;
    if (ndim == 4) {
        expected[0] = self->view_dims[0];
    }
    expected[rank - 2] = aclsim_ops_dim(self, -3) * kernelSize->values[0] * kernelSize->values[1];
    expected[rank - 1] = grid[0] * grid[1];
    bool same = out->ndim == rank;
    for (uint64_t d = 0; same && d < rank; ++d) {
        same = out->view_dims[d] == expected[d];
    }
    if (!same) {
        return aclsim_ops_invalid(API, "out shape must be %s ([N,] C * kH * kW, Lh * Lw), got %s",
                                  aclsim_ops_int_list(expected, rank).s, aclsim_ops_shape(out).s);
    }
    return ACLNN_SUCCESS;
}

aclnnStatus aclnnIm2colGetWorkspaceSize(const aclTensor *self, const aclIntArray *kernelSize,
                                        const aclIntArray *dilation, const aclIntArray *padding,
                                        const aclIntArray *stride, const aclTensor *out, uint64_t *workspaceSize,
                                        aclOpExecutor **executor)
{
    ACLSIM_OPS_CHECK_HANDLES(API, self, kernelSize, dilation, padding, stride, out);
    int64_t grid[2];
    ACLSIM_OPS_TRY(check_params(self, kernelSize, dilation, padding, stride, out, grid));
    /* CANN does not check these two and would crash on NULL. */
    if (workspaceSize == NULL || executor == NULL) {
        return aclsim_ops_nullptr(API, "%s must not be NULL", workspaceSize == NULL ? "workspaceSize" : "executor");
    }
    if (aclsim_ops_is_empty(self)) {
        return aclsim_ops_finish(KERNEL, aclsim_ops_noop_kernel, 0, NULL, 0, NULL, 0, NULL, 0, workspaceSize,
                                 executor);
    }
    ACLSIM_OPS_TRY(aclsim_ops_check_memory(API, "self", self));
    ACLSIM_OPS_TRY(aclsim_ops_check_memory(API, "out", out));
    im2col_params p = {
        .h = aclsim_ops_dim(self, -2), .w = aclsim_ops_dim(self, -1),
        .kh = kernelSize->values[0], .kw = kernelSize->values[1], .dh = dilation->values[0], .dw = dilation->values[1],
        .ph = padding->values[0], .pw = padding->values[1], .sh = stride->values[0], .sw = stride->values[1],
        .lh = grid[0], .lw = grid[1],
    };
    p.planes = aclsim_ops_numel(self) / (p.h * p.w);
    p.workers = aclsim_workers(p.planes, p.kh * p.kw * p.lh * p.lw);
    p.direct_in = direct(self);
    p.direct_out = direct(out);
    uint64_t workspace = (p.direct_in ? 0 : aclsim_ops_region((uint64_t)aclsim_ops_numel(self), sizeof(float))) +
                         (p.direct_out ? 0 : aclsim_ops_region((uint64_t)aclsim_ops_numel(out), sizeof(float)));
    const aclTensor *inputs[] = {self};
    const aclTensor *outputs[] = {out};
    aclnnStatus status = aclsim_ops_finish(KERNEL, im2col_kernel, workspace, &p, sizeof p, inputs, 1, outputs, 1,
                                           workspaceSize, executor);
    if (status == ACLNN_SUCCESS) {
        aclsim_executor_set_outputs_written(*executor, 1u); /* every column of every block */
    }
    return status;
}

aclnnStatus aclnnIm2col(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)
{
    return aclsim_launch(KERNEL, workspace, workspaceSize, executor, stream);
}
