/*
 * aclnnMaxUnpool2dBackward: the gradient of max_unpool2d with respect to its input, a gather:
 * out[n, c, h, w] = gradOutput[n, c, k / oW, k % oW] with k = indices[n, c, h, w].
 * A 3-D (C, H, W) input is one image.
 *
 * CANN does not check the index values.  The kernel never reads outside gradOutput: it first
 * checks every index (pass 1); if one lies outside [0, oH*oW) it writes nothing and fails, so
 * the stream reports 507015.  Pass 2 then gathers straight into out, one row at a time, in
 * parallel over the N * C planes (from a copy of gradOutput or indices when out overlaps it).
 * Workspace: one row of indices per worker thread.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../kernels/parallel.h"
#include "aclnnop/aclnn_max_unpool2d_backward.h"
#include "aclsim_dtype_rules.h" /* generated at build: the dtype table (aclnn_py/ops/<op>.py DTYPE_RULES) */
#include "unpool_common.h"

static const char API[] = "aclnnMaxUnpool2dBackwardGetWorkspaceSize";
static const char KERNEL[] = "aclnnMaxUnpool2dBackward";
/* The inputs whose data the kernel reads: gradOutput and indices (self: its shape only). */
#define INPUTS_READ (1u << 0 | 1u << 2)

typedef struct {
    int64_t n, c, h, w;     /* self / out as (N, C, H, W), N = 1 for 3-D */
    int64_t oh, ow;         /* gradOutput plane */
    int64_t workers;        /* threads over the N * C planes */
} unpool_params;

typedef struct {
    const unpool_params *p;
    const aclTensor *grad, *indices;
    aclTensor *out;
    int64_t *scratch;       /* per worker: one row of indices (w) */
} unpool_job;

/* out[x * step] = src[k[x] * ...] for one row, elements of `size` bytes copied as they are. */
#define GATHER_ROW(type)                                                                                                   do {                                                                                                                       const type *restrict from = (const type *)grad->data + g_base;                                                         type *restrict to = (type *)out->data + o_base;                                                                        if (rows_follow) {                                                                                                         for (int64_t x = 0; x < p->w; ++x) {                                                                                       to[x * os[3]] = from[k[x] * gs[3]];                                                                                }                                                                                                                  } else {                                                                                                                   for (int64_t x = 0; x < p->w; ++x) {                                                                                       to[x * os[3]] = from[(k[x] / p->ow) * gs[2] + (k[x] % p->ow) * gs[3]];                                             }                                                                                                                  }                                                                                                                  } while (0)

/* to[i] = from[k[i]] for the n (checked) indices k of one plane, elements of `size` bytes. */
#define GATHER_FLAT_TYPED(elem)                                                         \
    do {                                                                                \
        const elem *restrict from = (const elem *)grad + g_base;                        \
        elem *restrict to = (elem *)out + o_base;                                       \
        for (int64_t i = 0; i < n; ++i) {                                               \
            to[i] = from[k[i]];                                                         \
        }                                                                               \
    } while (0)
#define GATHER_FLAT(itype)                                                                                   \
    static void gather_flat_##itype(const void *grad, int64_t g_base, void *out, int64_t o_base,             \
                                    const itype *restrict k, int64_t n, size_t size)                         \
    {                                                                                                        \
        if (size == 4) {                                                                                     \
            GATHER_FLAT_TYPED(uint32_t);                                                                     \
        } else if (size == 2) {                                                                              \
            GATHER_FLAT_TYPED(uint16_t);                                                                     \
        } else if (size == 8) {                                                                              \
            GATHER_FLAT_TYPED(uint64_t);                                                                     \
        } else {                                                                                             \
            GATHER_FLAT_TYPED(uint8_t);                                                                      \
        }                                                                                                    \
    }
GATHER_FLAT(int64_t)
GATHER_FLAT(int32_t)

/* Pass 2 on the planes [begin, end): out = gradOutput at the (checked) indices. */
static void gather_planes(void *ctx, int64_t begin, int64_t end, int worker)
{
    const unpool_job *job = ctx;
    const unpool_params *p = job->p;
    const aclTensor *grad = job->grad;
    aclTensor *out = job->out;
    int64_t *k = job->scratch + worker * p->w;
    int64_t gs[4], os[4];
    aclsim_ops_nchw_strides(grad, gs);
    aclsim_ops_nchw_strides(out, os);
    /* rows of the plane one after the other: no division per element */
    bool rows_follow = gs[2] == p->ow * gs[3];
    size_t size = aclsim_ops_dtype_size(out->dtype);
    bool same = grad->dtype == out->dtype, to_float = aclsim_ops_is_floating(out->dtype);
    const aclTensor *ix = job->indices;
    if (same && rows_follow && gs[3] == 1 && aclsim_unpool_plane_is_flat(out, p->h, p->w) && aclsim_unpool_plane_is_flat(ix, p->h, p->w) &&
        (ix->dtype == ACL_INT64 || ix->dtype == ACL_INT32) && (size == 4 || size == 2 || size == 8 || size == 1)) {
        /* The common layout: whole planes, out[i] = grad[k[i]] straight from the indices. */
        int64_t is[4];
        aclsim_ops_nchw_strides(ix, is);
        for (int64_t plane = begin; plane < end; ++plane) {
            int64_t n = plane / p->c, c = plane % p->c;
            int64_t g_base = grad->offset + n * gs[0] + c * gs[1];
            int64_t o_base = out->offset + n * os[0] + c * os[1];
            int64_t i_base = ix->offset + n * is[0] + c * is[1];
            if (ix->dtype == ACL_INT64) {
                gather_flat_int64_t(grad->data, g_base, out->data, o_base, (const int64_t *)ix->data + i_base,
                                    p->h * p->w, size);
            } else {
                gather_flat_int32_t(grad->data, g_base, out->data, o_base, (const int32_t *)ix->data + i_base,
                                    p->h * p->w, size);
            }
        }
        return;
    }
    for (int64_t plane = begin; plane < end; ++plane) {
        int64_t n = plane / p->c, c = plane % p->c;
        for (int64_t y = 0; y < p->h; ++y) {
            aclsim_unpool_index_row(job->indices, p->w, n, c, y, k);
            int64_t g_base = grad->offset + n * gs[0] + c * gs[1];
            int64_t o_base = out->offset + n * os[0] + c * os[1] + y * os[2];
            if (same && size == 4) {
                GATHER_ROW(uint32_t);
            } else if (same && size == 2) {
                GATHER_ROW(uint16_t);
            } else if (same && size == 8) {
                GATHER_ROW(uint64_t);
            } else if (same && size == 1) {
                GATHER_ROW(uint8_t);
            } else {
                for (int64_t x = 0; x < p->w; ++x) {
                    int64_t src = g_base + (k[x] / p->ow) * gs[2] + (k[x] % p->ow) * gs[3];
                    if (to_float) {
                        aclsim_ops_store(out->data, out->dtype, o_base + x * os[3],
                                         aclsim_ops_load(grad->data, grad->dtype, src));
                    } else {
                        aclsim_ops_store_int(out->data, out->dtype, o_base + x * os[3],
                                             aclsim_ops_load_int(grad->data, grad->dtype, src));
                    }
                }
            }
        }
    }
}

static aclnnStatus unpool_kernel(aclOpExecutor *ex, void *workspace)
{
    ACLSIM_OPS_TRY(aclsim_ops_kernel_check_memory(KERNEL, ex, INPUTS_READ, 1));
    const unpool_params *p = aclsim_executor_params(ex, sizeof *p);
    unpool_job job = {
        .p = p, .grad = aclsim_executor_input(ex, 0), .indices = aclsim_executor_input(ex, 2),
        .out = aclsim_executor_output(ex, 0), .scratch = workspace,
    };

    /* Pass 1: every index in range, or nothing is written. */
    aclsim_unpool_check check = {
        .indices = job.indices, .c = p->c, .h = p->h, .w = p->w, .oh = p->oh, .ow = p->ow, .scratch = workspace,
    };
    ACLSIM_OPS_TRY(aclsim_unpool_check_indices(KERNEL, &check, p->n * p->c, (int)p->workers));

    /* Pass 2, straight into out; from copies of the inputs out overlaps, if any. */
    aclTensor staged[2];
    void *copies[2] = {NULL, NULL};
    const aclTensor **sources[2] = {&job.grad, &job.indices};
    for (int i = 0; i < 2; ++i) {
        if (aclsim_ops_views_overlap(*sources[i], job.out)) {
            if (!aclsim_ops_stage(KERNEL, *sources[i], &staged[i], &copies[i])) {
                free(copies[0]);
                return ACLSIM_OPS_KERNEL_FAULT;
            }
            *sources[i] = &staged[i];
        }
    }
    aclsim_parallel(p->n * p->c, (int)p->workers, gather_planes, &job);
    free(copies[0]);
    free(copies[1]);
    return ACLNN_SUCCESS;
}

static aclnnStatus check_params(const aclTensor *gradOutput, const aclTensor *self, const aclTensor *indices,
                                const aclIntArray *outputSize, const aclTensor *out)
{
    static const aclDataType dtypes[] = {ACLSIM_DTYPES_MaxUnpool2dBackward_DTYPES}; /* the one table */
    static const aclDataType index_dtypes[] = {ACLSIM_DTYPES_MaxUnpool2dBackward_INDEX_DTYPES};

    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "gradOutput", gradOutput));
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "self", self));
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "indices", indices));
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "outputSize", outputSize));
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "out", out));

    ACLSIM_OPS_TRY(aclsim_ops_check_dtype(API, "gradOutput", gradOutput, dtypes, ACLSIM_DTYPES_COUNT(dtypes)));
    ACLSIM_OPS_TRY(aclsim_ops_check_dtype(API, "self", self, dtypes, ACLSIM_DTYPES_COUNT(dtypes)));
    ACLSIM_OPS_TRY(aclsim_ops_check_dtype(API, "out", out, dtypes, ACLSIM_DTYPES_COUNT(dtypes)));
    if (!aclsim_ops_can_cast(gradOutput->dtype, out->dtype)) {
        return aclsim_ops_invalid(API, "gradOutput dtype %s cannot be cast to out dtype %s",
                                  aclsim_ops_dtype_name(gradOutput->dtype), aclsim_ops_dtype_name(out->dtype));
    }
    ACLSIM_OPS_TRY(aclsim_ops_check_same_dtype(API, "gradOutput", gradOutput, "self", self));
    ACLSIM_OPS_TRY(aclsim_ops_check_dtype(API, "indices", indices, index_dtypes, ACLSIM_DTYPES_COUNT(index_dtypes)));

    if (self->ndim != 3 && self->ndim != 4) {
        return aclsim_ops_invalid(API, "self must be 3-D or 4-D, got %llu-D shape %s",
                                  (unsigned long long)self->ndim, aclsim_ops_shape(self).s);
    }
    if (gradOutput->ndim != self->ndim) {
        return aclsim_ops_invalid(API, "gradOutput must have self's rank %llu, got %llu-D shape %s",
                                  (unsigned long long)self->ndim, (unsigned long long)gradOutput->ndim,
                                  aclsim_ops_shape(gradOutput).s);
    }
    int lead = self->ndim == 4 ? 2 : 1;
    for (int d = 0; d < lead; ++d) {
        if (gradOutput->view_dims[d] != self->view_dims[d]) {
            return aclsim_ops_invalid(API, "gradOutput and self must agree in %s, got gradOutput %s and self %s",
                                      lead == 2 ? "N and C" : "C", aclsim_ops_shape(gradOutput).s,
                                      aclsim_ops_shape(self).s);
        }
    }
    ACLSIM_OPS_TRY(aclsim_ops_check_same_shape(API, "indices", indices, "self", self));
    ACLSIM_OPS_TRY(aclsim_ops_check_same_shape(API, "out", out, "self", self));
    ACLSIM_OPS_TRY(aclsim_ops_check_array_size(API, "outputSize", outputSize, 2));
    if (outputSize->values[0] != aclsim_ops_dim(gradOutput, -2) ||
        outputSize->values[1] != aclsim_ops_dim(gradOutput, -1)) {
        return aclsim_ops_invalid(API, "outputSize must equal gradOutput's last two dims [%lld, %lld], got %s",
                                  (long long)aclsim_ops_dim(gradOutput, -2), (long long)aclsim_ops_dim(gradOutput, -1),
                                  aclsim_ops_ints(outputSize).s);
    }
    if (aclsim_ops_is_empty(gradOutput) && !aclsim_ops_is_empty(self)) {
        return aclsim_ops_invalid(API, "gradOutput is empty (%s) but self is not (%s)",
                                  aclsim_ops_shape(gradOutput).s, aclsim_ops_shape(self).s);
    }
    return ACLNN_SUCCESS;
}

aclnnStatus aclnnMaxUnpool2dBackwardGetWorkspaceSize(const aclTensor *gradOutput, const aclTensor *self,
                                                     const aclTensor *indices, const aclIntArray *outputSize,
                                                     aclTensor *out, uint64_t *workspaceSize,
                                                     aclOpExecutor **executor)
{
    ACLSIM_OPS_CHECK_HANDLES(API, gradOutput, self, indices, outputSize, out);
    if (workspaceSize == NULL || executor == NULL) {
        return aclsim_ops_nullptr(API, "%s must not be NULL", workspaceSize == NULL ? "workspaceSize" : "executor");
    }
    ACLSIM_OPS_TRY(check_params(gradOutput, self, indices, outputSize, out));

    if (aclsim_ops_is_empty(self)) {
        return aclsim_ops_finish(KERNEL, aclsim_ops_noop_kernel, 0, NULL, 0, NULL, 0, NULL, 0, workspaceSize,
                                 executor);
    }
    ACLSIM_OPS_TRY(aclsim_ops_check_memory(API, "gradOutput", gradOutput));
    ACLSIM_OPS_TRY(aclsim_ops_check_memory(API, "indices", indices));
    ACLSIM_OPS_TRY(aclsim_ops_check_memory(API, "out", out));

    int lead = self->ndim == 4 ? 1 : 0;
    unpool_params p = {
        .n = lead ? self->view_dims[0] : 1,
        .c = self->view_dims[lead],
        .h = self->view_dims[lead + 1],
        .w = self->view_dims[lead + 2],
        .oh = aclsim_ops_dim(gradOutput, -2),
        .ow = aclsim_ops_dim(gradOutput, -1),
    };
    /* A plane's cost: its indices twice (check, gather) and the gradOutput plane the gather
     * reads.  Both bench cases, (8,64,56,56) -> 112 and (8,256,28,28) -> 56, are 9.6M of them and
     * take two threads: the call went from 3.5 to 2.8 ms (Python, alternating in one process,
     * medians of 30), and with another process spinning on the second core it stayed at 3.5 ms
     * (min 2.6): a helper late to wake leaves its share to the calling thread (parallel.h). */
    p.workers = aclsim_workers(p.n * p.c, 2 * p.h * p.w + p.oh * p.ow);
    uint64_t workspace = (uint64_t)(p.workers * p.w) * sizeof(int64_t);
    const aclTensor *inputs[] = {gradOutput, self, indices};
    const aclTensor *outputs[] = {out};
    aclnnStatus status = aclsim_ops_finish(KERNEL, unpool_kernel, workspace, &p, sizeof p, inputs, 3, outputs, 1, workspaceSize,
                             executor);
    if (status == ACLNN_SUCCESS) {
        aclsim_executor_set_inputs_read(*executor, INPUTS_READ);
    }
    return status;
}

aclnnStatus aclnnMaxUnpool2dBackward(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                     aclrtStream stream)
{
    return aclsim_launch(KERNEL, workspace, workspaceSize, executor, stream);
}
