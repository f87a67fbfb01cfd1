/*
 * aclnnReflectionPad2dBackward: the gradient of F.pad(self, padding, mode="reflect"), i.e.
 * aten::reflection_pad2d_backward.  padding = [left, right, top, bottom].  Every gradOutput
 * element at padded position (y, x) is added into gradInput at its reflected source
 * (r(y - top, H), r(x - left, W)), r(t, n) = -t if t < 0, 2(n - 1) - t if t >= n, else t.
 *
 * Workspace: the accumulation image, one per element of gradInput, in float for float32,
 * float16 and bfloat16 (CANN also casts those up and back around its kernel), else in double
 * (complex: pairs of doubles), and the reflected source column of each gradOutput column.
 * (The header declares only the reflection variant, so ReplicationPad2dBackward is absent.)
 */
#include <string.h>

#include "aclnnop/aclnn_pad2d_backward.h"
#include "aclsim_dtype_rules.h" /* generated at build: the dtype table (aclnn_py/ops/<op>.py DTYPE_RULES) */
#include "ops_common.h"

static const char API[] = "aclnnReflectionPad2dBackwardGetWorkspaceSize";
static const char KERNEL[] = "aclnnReflectionPad2dBackward";

typedef struct {
    int64_t n, c, h, w;          /* gradInput as (N, C, H, W), N = 1 for 3-D */
    int64_t oh, ow;              /* gradOutput plane */
    int64_t left, top;
    bool complex;
    bool single;                 /* accumulate in float (float32, float16, bfloat16) */
} pad_params;

static int64_t reflect(int64_t t, int64_t n)
{
    if (t < 0) {
        return -t;
    }
    return t >= n ? 2 * (n - 1) - t : t;
}

/* dst_row[src_x[x]] += gradOutput row element x, for a float-convertible dtype (at most four
 * terms meet in one position: float accumulation loses nothing the tolerance sees): the row is
 * converted a chunk at a time (one dtype dispatch per chunk, not per element), the columns that
 * land on themselves (x - left inside the row) added as one vectorisable run, the reflected
 * border columns through src_x. */
static void add_row(float *restrict dst_row, const aclTensor *grad, int64_t row, int64_t sx, const pad_params *p,
                    const int64_t *restrict src_x)
{
    enum { CHUNK = 512 };
    float buf[CHUNK];
    for (int64_t x0 = 0; x0 < p->ow; x0 += CHUNK) {
        int64_t count = p->ow - x0 < CHUNK ? p->ow - x0 : CHUNK;
        aclsim_ops_gather_f32(grad->data, grad->dtype, row + x0 * sx, sx, count, buf);
        int64_t lo = p->left - x0, hi = p->left + p->w - x0;   /* the run [lo, hi) of this chunk */
        lo = lo < 0 ? 0 : lo > count ? count : lo;
        hi = hi < lo ? lo : hi > count ? count : hi;
        for (int64_t j = 0; j < lo; ++j) {
            dst_row[src_x[x0 + j]] += buf[j];
        }
        float *run = dst_row + (x0 + lo - p->left);
        for (int64_t j = lo; j < hi; ++j) {
            run[j - lo] += buf[j];
        }
        for (int64_t j = hi; j < count; ++j) {
            dst_row[src_x[x0 + j]] += buf[j];
        }
    }
}

static aclnnStatus pad_kernel(aclOpExecutor *ex, void *workspace)
{
    ACLSIM_OPS_TRY(aclsim_ops_kernel_check_memory(KERNEL, ex, 1u << 0, 1));
    const pad_params *p = aclsim_executor_params(ex, sizeof *p);
    const aclTensor *grad = aclsim_executor_input(ex, 0);
    aclTensor *grad_input = aclsim_executor_output(ex, 0);
    int lanes = p->complex ? 2 : 1;
    double *acc = workspace;
    int64_t plane = p->h * p->w;

    int lead = grad->ndim == 4 ? 1 : 0;
    int64_t sn = lead ? grad->strides[0] : 0, sc = grad->strides[lead];
    int64_t sy = grad->strides[lead + 1], sx = grad->strides[lead + 2];
    int64_t *src_x = (int64_t *)((char *)workspace + aclsim_ops_region((uint64_t)(p->n * p->c * plane * lanes),
                                                                        p->single ? sizeof(float) : sizeof(double)));
    for (int64_t x = 0; x < p->ow; ++x) {
        src_x[x] = reflect(x - p->left, p->w);
    }

    if (p->single) {
        /* float accumulators (half the memory traffic of double), each plane zeroed just before
         * it is summed into, while in cache */
        float *facc = workspace;
        for (int64_t n = 0; n < p->n; ++n) {
            for (int64_t c = 0; c < p->c; ++c) {
                float *dst = facc + (n * p->c + c) * plane;
                memset(dst, 0, (size_t)plane * sizeof(float));
                int64_t base = grad->offset + n * sn + c * sc;
                for (int64_t y = 0; y < p->oh; ++y) {
                    add_row(dst + reflect(y - p->top, p->h) * p->w, grad, base + y * sy, sx, p, src_x);
                }
            }
        }
        aclsim_ops_write_f32(grad_input, facc);
        return ACLNN_SUCCESS;
    }
    memset(acc, 0, (size_t)(p->n * p->c * plane * lanes) * sizeof(double));
    for (int64_t n = 0; n < p->n; ++n) {
        for (int64_t c = 0; c < p->c; ++c) {
            double *dst = acc + (n * p->c + c) * plane * lanes;
            int64_t base = grad->offset + n * sn + c * sc;
            for (int64_t y = 0; y < p->oh; ++y) {
                double *dst_row = dst + reflect(y - p->top, p->h) * p->w * lanes;
                int64_t row = base + y * sy;
                if (p->complex) {
                    for (int64_t x = 0; x < p->ow; ++x) {
                        double v[2];
                        aclsim_ops_load_complex(grad->data, grad->dtype, row + x * sx, v);
                        dst_row[2 * src_x[x]] += v[0];
                        dst_row[2 * src_x[x] + 1] += v[1];
                    }
                } else {
                    for (int64_t x = 0; x < p->ow; ++x) {
                        dst_row[src_x[x]] += aclsim_ops_load(grad->data, grad->dtype, row + x * sx);
                    }
                }
            }
        }
    }
    if (p->complex) {
        aclsim_ops_write_c128(grad_input, acc);
    } else {
        aclsim_ops_write_f64(grad_input, acc);
    }
    return ACLNN_SUCCESS;
}

static aclnnStatus check_params(const aclTensor *gradOutput, const aclTensor *self, const aclIntArray *padding,
                                const aclTensor *gradInput)
{
    static const aclDataType dtypes[] = {ACLSIM_DTYPES_ReflectionPad2dBackward_DTYPES}; /* the one table */

    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "gradOutput", gradOutput));
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "self", self));
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "padding", padding));
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "gradInput", gradInput));

    ACLSIM_OPS_TRY(aclsim_ops_check_dtype(API, "gradOutput", gradOutput, dtypes, ACLSIM_DTYPES_COUNT(dtypes)));
    ACLSIM_OPS_TRY(aclsim_ops_check_dtype(API, "self", self, dtypes, ACLSIM_DTYPES_COUNT(dtypes)));
    ACLSIM_OPS_TRY(aclsim_ops_check_dtype(API, "gradInput", gradInput, dtypes, ACLSIM_DTYPES_COUNT(dtypes)));
    ACLSIM_OPS_TRY(aclsim_ops_check_same_dtype(API, "gradOutput", gradOutput, "self", self));
    ACLSIM_OPS_TRY(aclsim_ops_check_same_dtype(API, "gradInput", gradInput, "self", self));

    const aclTensor *tensors[] = {gradOutput, self, gradInput};
    const char *names[] = {"gradOutput", "self", "gradInput"};
    for (int i = 0; i < 3; ++i) {
        if (aclsim_ops_is_private_format(tensors[i]->format)) {
            return aclsim_ops_invalid(API, "%s format %s is a private format; use ND", names[i],
                                      aclsim_ops_format_name(tensors[i]->format));
        }
    }
    if (gradOutput->format != self->format || gradInput->format != self->format) {
        return aclsim_ops_invalid(API, "gradOutput, self and gradInput must have the same format, got %s, %s, %s "
                                  "(shapes %s, %s, %s)",
                                  aclsim_ops_format_name(gradOutput->format), aclsim_ops_format_name(self->format),
                                  aclsim_ops_format_name(gradInput->format), aclsim_ops_shape(gradOutput).s,
                                  aclsim_ops_shape(self).s, aclsim_ops_shape(gradInput).s);
    }

    ACLSIM_OPS_TRY(aclsim_ops_check_same_shape(API, "gradInput", gradInput, "self", self));
    if (self->ndim != 3 && self->ndim != 4) {
        return aclsim_ops_invalid(API, "self must be 3-D or 4-D, got %llu-D shape %s",
                                  (unsigned long long)self->ndim, aclsim_ops_shape(self).s);
    }
    if (gradOutput->ndim != self->ndim) {
        return aclsim_ops_invalid(API, "gradOutput must have self's rank %llu, got %llu-D shape %s",
                                  (unsigned long long)self->ndim, (unsigned long long)gradOutput->ndim,
                                  aclsim_ops_shape(gradOutput).s);
    }
    ACLSIM_OPS_TRY(aclsim_ops_check_array_size(API, "padding", padding, 4));
    /* Documented (CANN 8.0 "padding >= 0"); the current code rejects negatives for BF16 only. */
    ACLSIM_OPS_TRY(aclsim_ops_check_array_min(API, "padding", padding, 0, false));

    const int64_t *pad = padding->values; /* left, right, top, bottom */
    int64_t h = aclsim_ops_dim(self, -2), w = aclsim_ops_dim(self, -1);
    static const char *sides[] = {"left", "right", "top", "bottom"};
    for (int i = 0; i < 4; ++i) {
        int64_t limit = i < 2 ? w : h;
        if (pad[i] >= limit) {
            return aclsim_ops_invalid(API, "padding %s = %lld must be < the input %s = %lld (padding = %s, self %s)",
                                      sides[i], (long long)pad[i], i < 2 ? "width" : "height", (long long)limit,
                                      aclsim_ops_ints(padding).s, aclsim_ops_shape(self).s);
        }
    }
    if (self->dtype == ACL_BF16 && !(pad[2] == 0 && pad[3] == 0)) {
        for (int i = 0; i < 4; ++i) {
            if (pad[i] > 7) {
                return aclsim_ops_invalid(API, "for BFLOAT16 with top or bottom padding every padding value must be "
                                          "<= 7, got padding = %s", aclsim_ops_ints(padding).s);
            }
        }
    }
    /* pad < dim here, so the sums below cannot overflow. */
    int64_t oh = h + pad[2] + pad[3], ow = w + pad[0] + pad[1];
    if (aclsim_ops_dim(gradOutput, -2) != oh || aclsim_ops_dim(gradOutput, -1) != ow) {
        return aclsim_ops_invalid(API, "gradOutput last two dims must be [H + top + bottom, W + left + right] = "
                                  "[%lld, %lld], got gradOutput %s (self %s, padding = %s)",
                                  (long long)oh, (long long)ow, aclsim_ops_shape(gradOutput).s,
                                  aclsim_ops_shape(self).s, aclsim_ops_ints(padding).s);
    }
    /* CANN does not compare the leading dims; reading a gradOutput with fewer planes than
     * self would leave its memory, so they must match here. */
    for (uint64_t d = 0; d + 2 < self->ndim; ++d) {
        if (gradOutput->view_dims[d] != self->view_dims[d]) {
            return aclsim_ops_invalid(API, "gradOutput leading dims must equal self's, got gradOutput %s and self %s "
                                      "(CANN does not compare them)",
                                      aclsim_ops_shape(gradOutput).s, aclsim_ops_shape(self).s);
        }
    }

    if (aclsim_ops_is_empty(gradOutput) || aclsim_ops_is_empty(self) || aclsim_ops_is_empty(gradInput)) {
        for (uint64_t d = 1; d < self->ndim; ++d) {
            if (self->view_dims[d] == 0) {
                return aclsim_ops_invalid(API, "an empty self may only have its first dim 0 (N of NCHW, C of CHW), "
                                          "got self %s", aclsim_ops_shape(self).s);
            }
        }
    }
    return ACLNN_SUCCESS;
}

aclnnStatus aclnnReflectionPad2dBackwardGetWorkspaceSize(const aclTensor *gradOutput, const aclTensor *self,
                                                         const aclIntArray *padding, aclTensor *gradInput,
                                                         uint64_t *workspaceSize, aclOpExecutor **executor)
{
    ACLSIM_OPS_CHECK_HANDLES(API, gradOutput, self, padding, gradInput);
    if (workspaceSize == NULL || executor == NULL) {
        return aclsim_ops_nullptr(API, "%s must not be NULL", workspaceSize == NULL ? "workspaceSize" : "executor");
    }
    ACLSIM_OPS_TRY(check_params(gradOutput, self, padding, gradInput));

    if (aclsim_ops_is_empty(gradOutput) || aclsim_ops_is_empty(self) || aclsim_ops_is_empty(gradInput)) {
        return aclsim_ops_finish(KERNEL, aclsim_ops_noop_kernel, 0, NULL, 0, NULL, 0, NULL, 0, workspaceSize,
                                 executor);
    }
    ACLSIM_OPS_TRY(aclsim_ops_check_memory(API, "gradOutput", gradOutput));
    ACLSIM_OPS_TRY(aclsim_ops_check_memory(API, "gradInput", gradInput));

    int lead = self->ndim == 4 ? 1 : 0;
    pad_params p = {
        .n = lead ? self->view_dims[0] : 1,
        .c = self->view_dims[lead],
        .h = self->view_dims[lead + 1],
        .w = self->view_dims[lead + 2],
        .oh = aclsim_ops_dim(gradOutput, -2),
        .ow = aclsim_ops_dim(gradOutput, -1),
        .left = padding->values[0],
        .top = padding->values[2],
        .complex = aclsim_ops_is_complex(self->dtype),
        .single = gradOutput->dtype == ACL_FLOAT || gradOutput->dtype == ACL_FLOAT16 || gradOutput->dtype == ACL_BF16,
    };
    uint64_t values = (uint64_t)aclsim_ops_numel(self) * (p.complex ? 2u : 1u);
    /* half the bytes (and the 0xFF fill and first-touch faults of a fresh block) for float */
    uint64_t workspace = aclsim_ops_region(values, p.single ? sizeof(float) : sizeof(double)) +
                         aclsim_ops_region((uint64_t)p.ow, sizeof(int64_t));
    const aclTensor *inputs[] = {gradOutput, self};
    const aclTensor *outputs[] = {gradInput};
    return aclsim_ops_finish(KERNEL, pad_kernel, workspace, &p, sizeof p, inputs, 2, outputs, 1, workspaceSize,
                             executor);
}

aclnnStatus aclnnReflectionPad2dBackward(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                         const aclrtStream stream)
{
    return aclsim_launch(KERNEL, workspace, workspaceSize, executor, stream);
}
