/*
 * aclnnAvgPool2dBackward: aten::avg_pool2d_backward.  Each gradOutput cell (oh, ow) is divided
 * by its divisor and spread uniformly over the real (non-padding) elements of its window
 * [oh*sH - pH, +kH) x [ow*sW - pW, +kW).  Divisor: divisorOverride if non-zero; else with
 * countIncludePad the window size clipped to the padded input; else the real-element count.
 * A 3-D (C, H, W) input is one image.  cubeMathType is validated and has no effect.
 *
 * Workspace: a float32 accumulation image of gradInput's size plus one float32 row of
 * gradOutput (CANN's AvgPool3DGrad path also computes through float32 buffers).
 */
#include <string.h>

#include "aclnnop/aclnn_avgpool2d_backward.h"
#include "aclsim_dtype_rules.h" /* generated at build: the dtype table (aclnn_py/ops/<op>.py DTYPE_RULES) */
#include "ops_common.h"

static const char API[] = "aclnnAvgPool2dBackwardGetWorkspaceSize";
static const char KERNEL[] = "aclnnAvgPool2dBackward";

typedef struct {
    int64_t n, c, h, w;     /* gradInput as (N, C, H, W), N = 1 for 3-D */
    int64_t oh, ow;
    int64_t kh, kw, sh, sw, ph, pw;
    int64_t divisor_override;
    bool count_include_pad;
} avgpool_params;

typedef struct {
    int64_t kh, kw, sh, sw, ph, pw;
} window_shape;

static aclnnStatus avgpool_kernel(aclOpExecutor *ex, void *workspace)
{
    ACLSIM_OPS_TRY(aclsim_ops_kernel_check_memory(KERNEL, ex, 1u << 0, 1));
    const avgpool_params *p = aclsim_executor_params(ex, sizeof *p);
    const aclTensor *grad = aclsim_executor_input(ex, 0);
    aclTensor *grad_input = aclsim_executor_output(ex, 0);
    int64_t plane = p->h * p->w;
    int64_t image = p->n * p->c * plane;
    float *acc = workspace;
    float *row = (float *)((char *)workspace + aclsim_ops_region((uint64_t)image, sizeof(float)));

    int lead = grad->ndim == 4 ? 1 : 0;
    int64_t sn = lead ? grad->strides[0] : 0, sc = grad->strides[lead];
    int64_t sy = grad->strides[lead + 1], sx = grad->strides[lead + 2];

    for (int64_t n = 0; n < p->n; ++n) {
        for (int64_t c = 0; c < p->c; ++c) {
            float *dst = acc + (n * p->c + c) * plane;
            memset(dst, 0, (size_t)plane * sizeof(float));    /* zeroed while it is about to be used */
            for (int64_t oh = 0; oh < p->oh; ++oh) {
                aclsim_ops_gather_f32(grad->data, grad->dtype, grad->offset + n * sn + c * sc + oh * sy, sx, p->ow,
                                      row);
                int64_t h0 = oh * p->sh - p->ph;
                int64_t h1 = h0 + p->kh < p->h + p->ph ? h0 + p->kh : p->h + p->ph;
                int64_t padded_rows = h1 - h0;
                if (h0 < 0) {
                    h0 = 0;
                }
                if (h1 > p->h) {
                    h1 = p->h;
                }
                for (int64_t ow = 0; ow < p->ow; ++ow) {
                    int64_t w0 = ow * p->sw - p->pw;
                    int64_t w1 = w0 + p->kw < p->w + p->pw ? w0 + p->kw : p->w + p->pw;
                    int64_t padded_cols = w1 - w0;
                    if (w0 < 0) {
                        w0 = 0;
                    }
                    if (w1 > p->w) {
                        w1 = p->w;
                    }
                    if (h1 <= h0 || w1 <= w0) {
                        continue; /* the window holds no real element */
                    }
                    int64_t real = (h1 - h0) * (w1 - w0);
                    int64_t divisor = p->divisor_override != 0 ? p->divisor_override
                                      : p->count_include_pad   ? padded_rows * padded_cols
                                                               : real;
                    float share = row[ow] / (float)divisor;
                    for (int64_t y = h0; y < h1; ++y) {
                        float *dst_row = dst + y * p->w;
                        for (int64_t x = w0; x < w1; ++x) {
                            dst_row[x] += share;
                        }
                    }
                }
            }
        }
    }
    aclsim_ops_write_f32(grad_input, acc);
    return ACLNN_SUCCESS;
}

/* PyTorch's pooling_output_shape; false if an intermediate leaves int64. */
static bool pooled_size(int64_t in, int64_t k, int64_t s, int64_t p, bool ceil_mode, int64_t *out)
{
    int64_t numerator;
    if (!aclsim_ops_add(in, p, &numerator) || !aclsim_ops_add(numerator, p, &numerator) ||
        !aclsim_ops_add(numerator, -k, &numerator) ||
        !aclsim_ops_add(numerator, ceil_mode ? s - 1 : 0, &numerator)) {
        return false;
    }
    int64_t o = aclsim_ops_floor_div(numerator, s) + 1;
    if (ceil_mode) {
        int64_t start, end;
        if (!aclsim_ops_mul(o - 1, s, &start) || !aclsim_ops_add(in, p, &end)) {
            return false;
        }
        if (start >= end) {
            o -= 1;
        }
    }
    *out = o;
    return true;
}

static aclnnStatus check_params(const aclTensor *gradOutput, const aclTensor *self, const aclIntArray *kernelSize,
                                const aclIntArray *stride, const aclIntArray *padding, bool ceilMode,
                                int8_t cubeMathType, const aclTensor *gradInput, window_shape *win)
{
    static const aclDataType dtypes[] = {ACLSIM_DTYPES_AvgPool2dBackward_DTYPES}; /* the one table */

    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "gradOutput", gradOutput));
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "self", self));
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "kernelSize", kernelSize));
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "padding", padding));
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "gradInput", gradInput));

    ACLSIM_OPS_TRY(aclsim_ops_check_dtype(API, "gradOutput", gradOutput, dtypes, ACLSIM_DTYPES_COUNT(dtypes)));
    ACLSIM_OPS_TRY(aclsim_ops_check_dtype(API, "self", self, dtypes, ACLSIM_DTYPES_COUNT(dtypes)));
    ACLSIM_OPS_TRY(aclsim_ops_check_dtype(API, "gradInput", gradInput, dtypes, ACLSIM_DTYPES_COUNT(dtypes)));
    ACLSIM_OPS_TRY(aclsim_ops_check_same_dtype(API, "gradOutput", gradOutput, "gradInput", gradInput));
    /* Documented (self and gradInput share dtype); CANN's code does not compare it. */
    ACLSIM_OPS_TRY(aclsim_ops_check_same_dtype(API, "self", self, "gradInput", gradInput));

    const aclTensor *tensors[] = {gradOutput, self, gradInput};
    const char *names[] = {"gradOutput", "self", "gradInput"};
    for (int i = 0; i < 3; ++i) {
        aclFormat f = tensors[i]->format;
        if (f != ACL_FORMAT_NCHW && f != ACL_FORMAT_NCL) {
            return aclsim_ops_invalid(API, "%s format must be NCHW or NCL, got %s (shape %s)", names[i],
                                      aclsim_ops_format_name(f), aclsim_ops_shape(tensors[i]).s);
        }
    }
    if (gradOutput->ndim == 4 && (gradOutput->format != ACL_FORMAT_NCHW || gradInput->format != ACL_FORMAT_NCHW)) {
        return aclsim_ops_invalid(API, "a 4-D gradOutput needs gradOutput and gradInput in NCHW, got %s and %s",
                                  aclsim_ops_format_name(gradOutput->format),
                                  aclsim_ops_format_name(gradInput->format));
    }

    if ((gradOutput->ndim != 3 && gradOutput->ndim != 4) || gradInput->ndim != gradOutput->ndim) {
        return aclsim_ops_invalid(API, "gradOutput and gradInput must be both 3-D or both 4-D, got %s and %s",
                                  aclsim_ops_shape(gradOutput).s, aclsim_ops_shape(gradInput).s);
    }
    for (int i = 0; i < 3; ++i) {
        if (aclsim_ops_has_negative_dim(tensors[i])) {
            return aclsim_ops_invalid(API, "%s has a negative dim: %s", names[i], aclsim_ops_shape(tensors[i]).s);
        }
    }
    if (kernelSize->size != 1 && kernelSize->size != 2) {
        return aclsim_ops_invalid(API, "kernelSize must have 1 or 2 elements, got %s", aclsim_ops_ints(kernelSize).s);
    }
    ACLSIM_OPS_TRY(aclsim_ops_check_array_min(API, "kernelSize", kernelSize, 0, true));
    if (stride != NULL) {
        if (stride->size > 2) {
            return aclsim_ops_invalid(API, "stride must have 0, 1 or 2 elements, got %s", aclsim_ops_ints(stride).s);
        }
        ACLSIM_OPS_TRY(aclsim_ops_check_array_min(API, "stride", stride, 0, true));
    }
    if (padding->size > 2) {
        return aclsim_ops_invalid(API, "padding must have 1 or 2 elements, got %s", aclsim_ops_ints(padding).s);
    }

    if (padding->size == 0) {
        return aclsim_ops_invalid(API, "padding must have 1 or 2 elements, got []");
    }
    win->kh = kernelSize->values[0];
    win->kw = kernelSize->values[kernelSize->size - 1];
    win->ph = padding->values[0];
    win->pw = padding->values[padding->size - 1];
    if (win->ph > win->kh / 2 || win->pw > win->kw / 2) {
        return aclsim_ops_invalid(API, "padding must be <= kernelSize / 2, got kernelSize = %s, padding = %s",
                                  aclsim_ops_ints(kernelSize).s, aclsim_ops_ints(padding).s);
    }

    if (cubeMathType < 0 || cubeMathType > 3) {
        return aclsim_ops_invalid(API, "cubeMathType must be 0 (KEEP_DTYPE), 1 (ALLOW_FP32_DOWN_PRECISION), "
                                  "2 (USE_FP16) or 3 (USE_HF32), got %d", (int)cubeMathType);
    }
    /* Documented for Atlas A2/A3 (the numpy backend checks it as well). */
    if (cubeMathType == 2 && self->dtype == ACL_BF16) {
        return aclsim_ops_invalid(API, "cubeMathType 2 (USE_FP16) is not supported for BFLOAT16 input");
    }

    ACLSIM_OPS_TRY(aclsim_ops_check_same_shape(API, "self", self, "gradInput", gradInput));

    /* Beyond CANN's phase-1 checks, documented as unsupported shapes (and checked by PyTorch). */
    if (win->ph < 0 || win->pw < 0) {
        return aclsim_ops_invalid(API, "padding values must be >= 0, got padding = %s", aclsim_ops_ints(padding).s);
    }
    int lead = (int)self->ndim - 2;
    for (int d = 0; d < lead; ++d) {
        if (gradOutput->view_dims[d] != self->view_dims[d]) {
            return aclsim_ops_invalid(API, "gradOutput and self must have the same %s, got gradOutput %s and self %s",
                                      lead == 2 ? "N and C" : "C", aclsim_ops_shape(gradOutput).s,
                                      aclsim_ops_shape(self).s);
        }
    }
    if (stride == NULL || stride->size == 0) {
        win->sh = win->kh;
        win->sw = win->kw;
    } else {
        win->sh = stride->values[0];
        win->sw = stride->values[stride->size - 1];
    }
    int64_t expected[2];
    int64_t in[2] = {aclsim_ops_dim(self, -2), aclsim_ops_dim(self, -1)};
    if (!pooled_size(in[0], win->kh, win->sh, win->ph, ceilMode, &expected[0]) ||
        !pooled_size(in[1], win->kw, win->sw, win->pw, ceilMode, &expected[1])) {
        return aclsim_ops_invalid(API, "the pooled size overflows int64 (self %s, kernelSize = %s, stride = %s, "
                                  "padding = %s)", aclsim_ops_shape(self).s, aclsim_ops_ints(kernelSize).s,
                                  aclsim_ops_ints(stride).s, aclsim_ops_ints(padding).s);
    }
    if (aclsim_ops_dim(gradOutput, -2) != expected[0] || aclsim_ops_dim(gradOutput, -1) != expected[1]) {
        return aclsim_ops_invalid(API, "gradOutput H, W must be the pooled size of self, %s for self %s, "
                                  "kernelSize = %s, stride = %s, padding = %s, ceilMode = %s; got gradOutput %s",
                                  aclsim_ops_int_list(expected, 2).s, aclsim_ops_shape(self).s,
                                  aclsim_ops_ints(kernelSize).s, aclsim_ops_ints(stride).s,
                                  aclsim_ops_ints(padding).s, ceilMode ? "true" : "false",
                                  aclsim_ops_shape(gradOutput).s);
    }
    return ACLNN_SUCCESS;
}

aclnnStatus aclnnAvgPool2dBackwardGetWorkspaceSize(const aclTensor *gradOutput, const aclTensor *self,
                                                   const aclIntArray *kernelSize, const aclIntArray *stride,
                                                   const aclIntArray *padding, bool ceilMode, bool countIncludePad,
                                                   int64_t divisorOverride, int8_t cubeMathType, aclTensor *gradInput,
                                                   uint64_t *workspaceSize, aclOpExecutor **executor)
{
    ACLSIM_OPS_CHECK_HANDLES(API, gradOutput, self, kernelSize, stride, padding, gradInput);
    window_shape win;
    ACLSIM_OPS_TRY(check_params(gradOutput, self, kernelSize, stride, padding, ceilMode, cubeMathType, gradInput,
                                &win));
    /* CANN does not check these two and would crash on NULL. */
    if (workspaceSize == NULL || executor == NULL) {
        return aclsim_ops_nullptr(API, "%s must not be NULL", workspaceSize == NULL ? "workspaceSize" : "executor");
    }

    if (aclsim_ops_is_empty(gradOutput) || aclsim_ops_is_empty(self) || aclsim_ops_is_empty(gradInput)) {
        /* CANN returns success and computes nothing: gradInput is left as it is. */
        return aclsim_ops_finish(KERNEL, aclsim_ops_noop_kernel, 0, NULL, 0, NULL, 0, NULL, 0, workspaceSize,
                                 executor);
    }
    ACLSIM_OPS_TRY(aclsim_ops_check_memory(API, "gradOutput", gradOutput));
    ACLSIM_OPS_TRY(aclsim_ops_check_memory(API, "gradInput", gradInput));

    int lead = gradInput->ndim == 4 ? 1 : 0;
    avgpool_params p = {
        .n = lead ? gradInput->view_dims[0] : 1,
        .c = gradInput->view_dims[lead],
        .h = gradInput->view_dims[lead + 1],
        .w = gradInput->view_dims[lead + 2],
        .oh = aclsim_ops_dim(gradOutput, -2),
        .ow = aclsim_ops_dim(gradOutput, -1),
        .kh = win.kh, .kw = win.kw, .sh = win.sh, .sw = win.sw, .ph = win.ph, .pw = win.pw,
        .divisor_override = divisorOverride,
        .count_include_pad = countIncludePad,
    };
    uint64_t workspace = aclsim_ops_region((uint64_t)aclsim_ops_numel(gradInput), sizeof(float)) +
                         aclsim_ops_region((uint64_t)p.ow, sizeof(float));
    const aclTensor *inputs[] = {gradOutput, self};
    const aclTensor *outputs[] = {gradInput};
    return aclsim_ops_finish(KERNEL, avgpool_kernel, workspace, &p, sizeof p, inputs, 2, outputs, 1, workspaceSize,
                             executor);
}

aclnnStatus aclnnAvgPool2dBackward(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                   aclrtStream stream)
{
    return aclsim_launch(KERNEL, workspace, workspaceSize, executor, stream);
}
