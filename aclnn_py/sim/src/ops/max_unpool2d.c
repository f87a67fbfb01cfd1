/*
 * aclnnMaxUnpool2d: zeros of ([N,] C, oH, oW), then out[n, c, k / oW, k % oW] = self[n, c, h, w]
 * with k = indices[n, c, h, w] (a scatter; the last element in C order wins where indices
 * repeat).  A 3-D (C, H, W) self is one image.
 *
 * CANN checks no index value; the kernel first checks every index (unpool_common.h: an index
 * outside [0, oH*oW) fails with 507015 and nothing is written), then zero-fills out and
 * scatters, one plane at a time in parallel over the N * C planes, elements of one dtype
 * copied as they are.  Workspace: one row of indices per worker thread.  The checks are in
 * CANN's order, with the numpy backend's messages (aclnn_py/ops/max_unpool2d.py).
 */
#include <stdlib.h>
#include <string.h>

#include "aclnnop/aclnn_max_unpool2d.h"
#include "aclsim_dtype_rules.h" /* generated at build: the dtype table (aclnn_py/ops/<op>.py DTYPE_RULES) */
#include "unpool_common.h"

static const char API[] = "aclnnMaxUnpool2dGetWorkspaceSize";
static const char KERNEL[] = "aclnnMaxUnpool2d";

typedef struct {
    int64_t n, c, h, w;     /* self as (N, C, H, W), N = 1 for 3-D */
    int64_t oh, ow;
    int64_t workers;        /* threads over the N * C planes */
} unpool_params;

typedef struct {
    const unpool_params *p;
    const aclTensor *self, *indices;
    aclTensor *out;
    int64_t *scratch;       /* per worker: one row of indices and of their offsets (2 w) */
} scatter_job;

/* One row's elements (of this width) to their offsets `to` in the out plane. */
#define SCATTER_ROW(type)                                                        \
    do {                                                                         \
        const type *from = (const type *)src_row;                                \
        type *plane_out = (type *)dst_plane;                                     \
        for (int64_t x = 0; x < p->w; ++x) {                                     \
            plane_out[to[x]] = from[x * ss[3]];                                  \
        }                                                                        \
    } while (0)

static void scatter_planes(void *ctx, int64_t begin, int64_t end, int worker)
{
    const scatter_job *job = ctx;
    const unpool_params *p = job->p;
    int64_t *k = job->scratch + worker * 2 * p->w, *to = k + p->w, ss[4], os[4];
    size_t size = aclsim_ops_dtype_size(job->self->dtype);
    aclsim_ops_nchw_strides(job->self, ss);
    aclsim_ops_nchw_strides(job->out, os);
    const char *src = (const char *)job->self->data + (int64_t)size * job->self->offset;
    char *dst = (char *)job->out->data + (int64_t)size * job->out->offset;
    for (int64_t plane = begin; plane < end; ++plane) {
        int64_t n = plane / p->c, c = plane % p->c;
        const char *src_plane = src + (n * ss[0] + c * ss[1]) * (int64_t)size;
        char *dst_plane = dst + (n * os[0] + c * os[1]) * (int64_t)size;
        for (int64_t y = 0; y < p->h; ++y) {
            aclsim_unpool_index_row(job->indices, p->w, n, c, y, k);
            if (os[3] == 1 && os[2] == p->ow) {
                for (int64_t x = 0; x < p->w; ++x) { /* (a plane of unit strides: the index is the offset) */
                    to[x] = k[x];
                }
            } else {
                for (int64_t x = 0; x < p->w; ++x) {
                    to[x] = (k[x] / p->ow) * os[2] + (k[x] % p->ow) * os[3];
                }
            }
            const char *src_row = src_plane + y * ss[2] * (int64_t)size;
            switch (size) {
            case 8: SCATTER_ROW(uint64_t); break;
            case 4: SCATTER_ROW(uint32_t); break;
            case 2: SCATTER_ROW(uint16_t); break;
            default: SCATTER_ROW(uint8_t); break;
            }
        }
    }
}

static aclnnStatus unpool_kernel(aclOpExecutor *ex, void *workspace)
{
    ACLSIM_OPS_TRY(aclsim_ops_kernel_check_memory(KERNEL, ex, 0x3u, 1));
    const unpool_params *p = aclsim_executor_params(ex, sizeof *p);
    scatter_job job = {
        .p = p, .self = aclsim_executor_input(ex, 0), .indices = aclsim_executor_input(ex, 1),
        .out = aclsim_executor_output(ex, 0), .scratch = workspace,
    };
    aclsim_unpool_check check = {
        .indices = job.indices, .c = p->c, .h = p->h, .w = p->w, .oh = p->oh, .ow = p->ow, .scratch = workspace,
    };
    ACLSIM_OPS_TRY(aclsim_unpool_check_indices(KERNEL, &check, p->n * p->c, (int)p->workers));
    /* From copies of the inputs out overlaps, if any (out is zero-filled first). */
    aclTensor staged[2];
    void *copies[2] = {NULL, NULL};
    const aclTensor **sources[2] = {&job.self, &job.indices};
    for (int i = 0; i < 2; ++i) {
        if (aclsim_ops_views_overlap(*sources[i], job.out)) {
            if (!aclsim_ops_stage(KERNEL, *sources[i], &staged[i], &copies[i])) {
                free(copies[0]);
                return ACLSIM_OPS_KERNEL_FAULT;
            }
            *sources[i] = &staged[i];
        }
    }
    aclsim_ops_fill_zero(job.out);
    aclsim_parallel(p->n * p->c, (int)p->workers, scatter_planes, &job);
    free(copies[0]);
    free(copies[1]);
    return ACLNN_SUCCESS;
}

static aclnnStatus check_params(const aclTensor *self, const aclTensor *indices, const aclIntArray *outputSize,
                                const aclTensor *out)
{
    static const aclDataType dtypes[] = {ACLSIM_DTYPES_MaxUnpool2d_DTYPES}; /* the one table */
    static const aclDataType index_dtypes[] = {ACLSIM_DTYPES_MaxUnpool2d_INDEX_DTYPES};

    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "self", self));
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "indices", indices));
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "outputSize", outputSize));
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "out", out));

    ACLSIM_OPS_TRY(aclsim_ops_check_dtype(API, "self", self, dtypes, ACLSIM_DTYPES_COUNT(dtypes)));
    ACLSIM_OPS_TRY(aclsim_ops_check_same_dtype(API, "out", out, "self", self));
    ACLSIM_OPS_TRY(aclsim_ops_check_dtype(API, "indices", indices, index_dtypes, ACLSIM_DTYPES_COUNT(index_dtypes)));

    uint64_t ndim = self->ndim;
    if (ndim != 3 && ndim != 4) {
        return aclsim_ops_invalid(API, "self must be 3-D or 4-D, got %llu-D shape %s", (unsigned long long)ndim,
                                  aclsim_ops_shape(self).s);
    }
    if (indices->ndim != ndim) {
        return aclsim_ops_invalid(API, "indices must have self's rank %llu, got %llu-D shape %s",
                                  (unsigned long long)ndim, (unsigned long long)indices->ndim,
                                  aclsim_ops_shape(indices).s);
    }
    if (!aclsim_ops_same_shape(indices, self)) {
        return aclsim_ops_invalid(API, "indices shape must equal self shape, got %s and %s",
                                  aclsim_ops_shape(indices).s, aclsim_ops_shape(self).s);
    }
    for (uint64_t d = 1; d < ndim; ++d) {
        if (self->view_dims[d] <= 0) {
            return aclsim_ops_invalid(API, "self dims after the first must be > 0, got self %s",
                                      aclsim_ops_shape(self).s);
        }
    }
    ACLSIM_OPS_TRY(aclsim_ops_check_array_size(API, "outputSize", outputSize, 2));
    ACLSIM_OPS_TRY(aclsim_ops_check_array_min(API, "outputSize", outputSize, 0, true));
    int64_t h = aclsim_ops_dim(self, -2), w = aclsim_ops_dim(self, -1), plane, out_plane;
    const int64_t *os = outputSize->values;
    if (!aclsim_ops_mul(os[0], os[1], &out_plane)) {
        out_plane = INT64_MAX;
    }
    plane = h * w; /* (each < 2^63 elements' worth: the tensor exists) */
    if (out_plane < plane) {
        return aclsim_ops_invalid(API, "outputSize [oH, oW] = %s must hold self's H * W = %lld positions "
                                  "(oH * oW >= H * W)", aclsim_ops_ints(outputSize).s, (long long)plane);
    }
    /* Not checked by CANN's code; its documentation lists it (161002). */
    int64_t expected[4];
    for (uint64_t d = 0; d + 2 < ndim; ++d) {
        expected[d] = self->view_dims[d];
    }
    expected[ndim - 2] = os[0];
    expected[ndim - 1] = os[1];
    bool same = out->ndim == ndim;
    for (uint64_t d = 0; same && d < ndim; ++d) {
        same = out->view_dims[d] == expected[d];
    }
    if (!same) {
        return aclsim_ops_invalid(API, "out shape must be %s (self's with outputSize as its last two dims), got %s",
                                  aclsim_ops_int_list(expected, ndim).s, aclsim_ops_shape(out).s);
    }
    return ACLNN_SUCCESS;
}

aclnnStatus aclnnMaxUnpool2dGetWorkspaceSize(const aclTensor *self, const aclTensor *indices,
                                             const aclIntArray *outputSize, aclTensor *out, uint64_t *workspaceSize,
                                             aclOpExecutor **executor)
{
    ACLSIM_OPS_CHECK_HANDLES(API, self, indices, outputSize, out);
    if (workspaceSize == NULL || executor == NULL) {
        return aclsim_ops_nullptr(API, "%s must not be NULL", workspaceSize == NULL ? "workspaceSize" : "executor");
    }
    ACLSIM_OPS_TRY(check_params(self, indices, outputSize, out));
    if (aclsim_ops_is_empty(self)) {
        return aclsim_ops_finish(KERNEL, aclsim_ops_noop_kernel, 0, NULL, 0, NULL, 0, NULL, 0, workspaceSize,
                                 executor);
    }
    ACLSIM_OPS_TRY(aclsim_ops_check_memory(API, "self", self));
    ACLSIM_OPS_TRY(aclsim_ops_check_memory(API, "indices", indices));
    ACLSIM_OPS_TRY(aclsim_ops_check_memory(API, "out", out));
    int lead = self->ndim == 4 ? 1 : 0;
    unpool_params p = {
        .n = lead ? self->view_dims[0] : 1,
        .c = self->view_dims[lead],
        .h = self->view_dims[lead + 1],
        .w = self->view_dims[lead + 2],
        .oh = outputSize->values[0],
        .ow = outputSize->values[1],
    };
    p.workers = aclsim_workers(p.n * p.c, p.oh * p.ow);
    const aclTensor *inputs[] = {self, indices};
    const aclTensor *outputs[] = {out};
    return aclsim_ops_finish(KERNEL, unpool_kernel, aclsim_ops_region((uint64_t)(p.workers * 2 * p.w), sizeof(int64_t)),
                             &p, sizeof p, inputs, 2, outputs, 1, workspaceSize, executor);
}

aclnnStatus aclnnMaxUnpool2d(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)
{
    return aclsim_launch(KERNEL, workspace, workspaceSize, executor, stream);
}
