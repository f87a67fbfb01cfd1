/*
 * aclnnMaxUnpool2dBackward: the gradient of max_unpool2d with respect to its input, a gather:
 * out[n, c, h, w] = gradOutput[n, c, k / oW, k % oW] with k = indices[n, c, h, w].
 * A 3-D (C, H, W) input is one image.
 *
 * CANN does not check the index values.  The kernel never reads outside gradOutput: it first
 * checks every index and stores it in the workspace (one 8-byte slot per element of out); if
 * one lies outside [0, oH*oW) it writes nothing and fails, so the stream reports 507015.
 * Then the gathered values replace the indices in their slots, and only then is out written.
 */
#include <stdio.h>
#include <string.h>

#include "aclnnop/aclnn_max_unpool2d_backward.h"
#include "aclsim_dtype_rules.h" /* generated at build: the dtype table (aclnn_py/ops/<op>.py DTYPE_RULES) */
#include "ops_common.h"

static const char API[] = "aclnnMaxUnpool2dBackwardGetWorkspaceSize";
static const char KERNEL[] = "aclnnMaxUnpool2dBackward";

typedef struct {
    int64_t n, c, h, w;     /* self / out as (N, C, H, W), N = 1 for 3-D */
    int64_t oh, ow;         /* gradOutput plane */
} unpool_params;

/* Strides of a 3-D or 4-D view as (N, C, H, W); N's stride is 0 for 3-D. */
static void nchw_strides(const aclTensor *t, int64_t s[4])
{
    int lead = t->ndim == 4 ? 1 : 0;
    s[0] = lead ? t->strides[0] : 0;
    s[1] = t->strides[lead];
    s[2] = t->strides[lead + 1];
    s[3] = t->strides[lead + 2];
}

/* memcpy of one element, with the size a constant in the common cases (inlined, no call) */
static void copy_element(void *dst, const void *src, size_t size)
{
    switch (size) {
    case 2:
        memcpy(dst, src, 2);
        break;
    case 4:
        memcpy(dst, src, 4);
        break;
    case 8:
        memcpy(dst, src, 8);
        break;
    default:
        memcpy(dst, src, size);
        break;
    }
}

static aclnnStatus unpool_kernel(aclOpExecutor *ex, void *workspace)
{
    ACLSIM_OPS_TRY(aclsim_ops_kernel_check_memory(KERNEL, ex, 1u << 0 | 1u << 2, 1));
    const unpool_params *p = aclsim_executor_params(ex, sizeof *p);
    const aclTensor *grad = aclsim_executor_input(ex, 0);
    const aclTensor *indices = aclsim_executor_input(ex, 2);
    aclTensor *out = aclsim_executor_output(ex, 0);
    int64_t *flat = workspace;
    int64_t gs[4], is[4], os[4];
    nchw_strides(grad, gs);
    nchw_strides(indices, is);
    nchw_strides(out, os);
    int64_t plane = p->oh * p->ow;

    /* Pass 1: every index in range, or nothing is written. */
    int64_t e = 0;
    for (int64_t n = 0; n < p->n; ++n) {
        for (int64_t c = 0; c < p->c; ++c) {
            for (int64_t h = 0; h < p->h; ++h) {
                for (int64_t w = 0; w < p->w; ++w, ++e) {
                    int64_t at = indices->offset + n * is[0] + c * is[1] + h * is[2] + w * is[3];
                    int64_t k = indices->dtype == ACL_INT64   ? ((const int64_t *)indices->data)[at]
                                : indices->dtype == ACL_INT32 ? ((const int32_t *)indices->data)[at]
                                                              : aclsim_ops_load_int(indices->data, indices->dtype, at);
                    if (k < 0 || k >= plane) {
                        char at[96];
                        if (indices->ndim == 4) {
                            snprintf(at, sizeof at, "%lld, %lld, %lld, %lld", (long long)n, (long long)c,
                                     (long long)h, (long long)w);
                        } else {
                            snprintf(at, sizeof at, "%lld, %lld, %lld", (long long)c, (long long)h, (long long)w);
                        }
                        aclsim_set_error("%s: indices[%s] = %lld is outside [0, %lld) (outputSize = [%lld, %lld]); "
                                         "nothing was written", KERNEL, at, (long long)k, (long long)plane,
                                         (long long)p->oh, (long long)p->ow);
                        return ACLSIM_OPS_KERNEL_FAULT;
                    }
                    flat[e] = k;
                }
            }
        }
    }

    /* Pass 2: gather every value into its slot (raw bytes within a dtype, else converted to
     * double or int64), so that an out sharing memory with gradOutput reads no written value. */
    size_t size = aclsim_ops_dtype_size(out->dtype);
    bool same = grad->dtype == out->dtype;
    bool to_float = aclsim_ops_is_floating(out->dtype);
    const unsigned char *src_base = grad->data;
    bool rows_follow = gs[2] == p->ow * gs[3];
    e = 0;
    for (int64_t n = 0; n < p->n; ++n) {
        for (int64_t c = 0; c < p->c; ++c) {
            for (int64_t i = 0; i < p->h * p->w; ++i, ++e) {
                int64_t k = flat[e];
                /* rows of the plane one after the other: no division per element */
                int64_t src = grad->offset + n * gs[0] + c * gs[1] +
                              (rows_follow ? k * gs[3] : (k / p->ow) * gs[2] + (k % p->ow) * gs[3]);
                if (same) {
                    copy_element(&flat[e], src_base + src * (int64_t)size, size);
                } else if (to_float) {
                    double v = aclsim_ops_load(grad->data, grad->dtype, src);
                    memcpy(&flat[e], &v, sizeof v);
                } else {
                    flat[e] = aclsim_ops_load_int(grad->data, grad->dtype, src);
                }
            }
        }
    }

    /* Pass 3: the slots into out. */
    unsigned char *dst_base = out->data;
    e = 0;
    for (int64_t n = 0; n < p->n; ++n) {
        for (int64_t c = 0; c < p->c; ++c) {
            for (int64_t h = 0; h < p->h; ++h) {
                for (int64_t w = 0; w < p->w; ++w, ++e) {
                    int64_t dst = out->offset + n * os[0] + c * os[1] + h * os[2] + w * os[3];
                    if (same) {
                        copy_element(dst_base + dst * (int64_t)size, &flat[e], size);
                    } else if (to_float) {
                        double v;
                        memcpy(&v, &flat[e], sizeof v);
                        aclsim_ops_store(out->data, out->dtype, dst, v);
                    } else {
                        aclsim_ops_store_int(out->data, out->dtype, dst, flat[e]);
                    }
                }
            }
        }
    }
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
    uint64_t workspace = aclsim_ops_region((uint64_t)aclsim_ops_numel(self), sizeof(int64_t));
    const aclTensor *inputs[] = {gradOutput, self, indices};
    const aclTensor *outputs[] = {out};
    return aclsim_ops_finish(KERNEL, unpool_kernel, workspace, &p, sizeof p, inputs, 3, outputs, 1, workspaceSize,
                             executor);
}

aclnnStatus aclnnMaxUnpool2dBackward(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                     aclrtStream stream)
{
    return aclsim_launch(KERNEL, workspace, workspaceSize, executor, stream);
}
