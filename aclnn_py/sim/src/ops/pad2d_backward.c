/*
 * aclnnReflectionPad2dBackward: the gradient of F.pad(self, padding, mode="reflect"), i.e.
 * aten::reflection_pad2d_backward.  padding = [left, right, top, bottom].  Every gradOutput
 * element at padded position (y, x) is added into gradInput at its reflected source
 * (r(y - top, H), r(x - left, W)), r(t, n) = -t if t < 0, 2(n - 1) - t if t >= n, else t.
 *
 * float32, float16 and bfloat16 are computed in float, one plane at a time in parallel over the
 * N * C planes, each gradInput row written once; workspace: the table of the gradOutput rows
 * landing on each gradInput row and, per worker thread, one row of each.  double and complex
 * accumulate in double (complex: pairs of doubles) into a gradInput-sized workspace image, plus
 * the reflected source column of each gradOutput column.
 * (The header declares only the reflection variant, so ReplicationPad2dBackward is absent.)
 */
#include <stdlib.h>
#include <string.h>

#include "../kernels/parallel.h"
#include "aclnnop/aclnn_pad2d_backward.h"
#include "aclsim_dtype_rules.h" /* generated at build: the dtype table (aclnn_py/ops/<op>.py DTYPE_RULES) */
#include "pad2d_common.h"

static const char API[] = "aclnnReflectionPad2dBackwardGetWorkspaceSize";
static const char KERNEL[] = "aclnnReflectionPad2dBackward";
/* The inputs whose data the kernel reads: gradOutput (self: its shape only). */
#define INPUTS_READ (1u << 0)

typedef struct {
    int64_t n, c, h, w;          /* gradInput as (N, C, H, W), N = 1 for 3-D */
    int64_t oh, ow;              /* gradOutput plane */
    int64_t left, top;
    bool complex;
    bool single;                 /* accumulate in float (float32, float16, bfloat16) */
    int64_t workers;             /* threads over the N * C planes (float path) */
} pad_params;

/* The gradOutput rows that land on each gradInput row y, ascending (at most three: the row
 * itself, its reflection across the top and across the bottom): rows[3y ..), count[y]. */
static void fill_source_rows(const pad_params *p, int64_t *rows, int64_t *count)
{
    for (int64_t y = 0; y < p->h; ++y) {
        count[y] = 0;
    }
    for (int64_t oy = 0; oy < p->oh; ++oy) {
        int64_t y = aclsim_pad2d_reflect(oy - p->top, p->h);
        rows[3 * y + count[y]++] = oy;
    }
}

typedef struct {
    const pad_params *p;
    const aclTensor *grad;
    aclTensor *grad_input;
    const int64_t *rows, *count;
    float *scratch;         /* per worker: a gradOutput row (ow) and a gradInput row (w) */
    int64_t scratch_floats;
} pad_job;

/* Floats of one worker's scratch. */
static int64_t scratch_floats(const pad_params *p)
{
    return (int64_t)(aclsim_ops_region((uint64_t)p->ow, sizeof(float)) +
                     aclsim_ops_region((uint64_t)p->w, sizeof(float))) / (int64_t)sizeof(float);
}

/*
 * float32, float16 and bfloat16 (computed in float: at most four terms meet in one position,
 * float loses nothing the tolerance sees), the planes [begin, end): each gradInput row written
 * once, from its source rows in ascending order, each row's terms in ascending column order
 * (reflected left border, the row itself, reflected right border).
 */
static void pad_planes(void *ctx, int64_t begin, int64_t end, int worker)
{
    const pad_job *job = ctx;
    const pad_params *p = job->p;
    const aclTensor *grad = job->grad;
    aclTensor *out = job->grad_input;
    float *row = job->scratch + worker * job->scratch_floats;
    float *line = row + aclsim_ops_region((uint64_t)p->ow, sizeof(float)) / sizeof(float);
    int64_t gs[4], os[4];
    aclsim_ops_nchw_strides(grad, gs);
    aclsim_ops_nchw_strides(out, os);
    bool direct = out->dtype == ACL_FLOAT && os[3] == 1;
    /* float32 rows of unit stride are read where they are (gradOutput does not overlap the
     * output here: pad_kernel reads a copy when it would) */
    bool read_in_place = grad->dtype == ACL_FLOAT && gs[3] == 1;
    int64_t left = p->left, w = p->w, right = p->ow - p->left - p->w;
    for (int64_t plane = begin; plane < end; ++plane) {
        int64_t n = plane / p->c, ch = plane % p->c;
        int64_t g_base = grad->offset + n * gs[0] + ch * gs[1], o_base = out->offset + n * os[0] + ch * os[1];
        for (int64_t y = 0; y < p->h; ++y) {
            float *restrict dst = direct ? (float *)out->data + o_base + y * os[2] : line;
            for (int64_t k = 0; k < job->count[y]; ++k) {
                int64_t first = g_base + job->rows[3 * y + k] * gs[2];
                const float *restrict src = row;
                if (read_in_place) {
                    src = (const float *)grad->data + first;
                } else {
                    aclsim_ops_gather_f32(grad->data, grad->dtype, first, gs[3], p->ow, row);
                }
                const float *restrict centre = src + left;
                if (k == 0) {
                    for (int64_t x = 0; x < w; ++x) {
                        dst[x] = centre[x];
                    }
                }
                for (int64_t ox = 0; ox < left; ++ox) {
                    dst[left - ox] += src[ox];    /* column ox reflects onto x = left - ox */
                }
                if (k > 0) {
                    for (int64_t x = 0; x < w; ++x) {
                        dst[x] += centre[x];
                    }
                }
                for (int64_t i = 0; i < right; ++i) {
                    dst[w - 2 - i] += centre[w + i];    /* column left + w + i onto x = w - 2 - i */
                }
            }
            if (!direct) {
                aclsim_ops_scatter_f32(out->data, out->dtype, o_base + y * os[2], os[3], w, line);
            }
        }
    }
}

static aclnnStatus pad_kernel(aclOpExecutor *ex, void *workspace)
{
    ACLSIM_OPS_TRY(aclsim_ops_kernel_check_memory(KERNEL, ex, INPUTS_READ, 1));
    const pad_params *p = aclsim_executor_params(ex, sizeof *p);
    const aclTensor *grad = aclsim_executor_input(ex, 0);
    aclTensor *grad_input = aclsim_executor_output(ex, 0);
    int lanes = p->complex ? 2 : 1;
    double *acc = workspace;
    int64_t plane = p->h * p->w;

    int lead = grad->ndim == 4 ? 1 : 0;
    int64_t sn = lead ? grad->strides[0] : 0, sc = grad->strides[lead];
    int64_t sy = grad->strides[lead + 1], sx = grad->strides[lead + 2];
    if (p->single) {
        pad_job job = {.p = p, .grad = grad, .grad_input = grad_input};
        int64_t *rows = workspace, *count = rows + 3 * p->h;
        fill_source_rows(p, rows, count);
        job.rows = rows;
        job.count = count;
        job.scratch = (float *)((char *)workspace + aclsim_ops_region((uint64_t)(4 * p->h), sizeof(int64_t)));
        job.scratch_floats = scratch_floats(p);
        aclTensor staged;
        void *copy = NULL;
        if (aclsim_ops_views_overlap(grad, grad_input)) {
            if (!aclsim_ops_stage(KERNEL, grad, &staged, &copy)) {
                return ACLSIM_OPS_KERNEL_FAULT;
            }
            job.grad = &staged;
        }
        aclsim_parallel(p->n * p->c, (int)p->workers, pad_planes, &job);
        free(copy);
        return ACLNN_SUCCESS;
    }
    int64_t *src_x = (int64_t *)((char *)workspace + aclsim_ops_region((uint64_t)(p->n * p->c * plane * lanes),
                                                                        sizeof(double)));
    for (int64_t x = 0; x < p->ow; ++x) {
        src_x[x] = aclsim_pad2d_reflect(x - p->left, p->w);
    }

    memset(acc, 0, (size_t)(p->n * p->c * plane * lanes) * sizeof(double));
    for (int64_t n = 0; n < p->n; ++n) {
        for (int64_t c = 0; c < p->c; ++c) {
            double *dst = acc + (n * p->c + c) * plane * lanes;
            int64_t base = grad->offset + n * sn + c * sc;
            for (int64_t y = 0; y < p->oh; ++y) {
                double *dst_row = dst + aclsim_pad2d_reflect(y - p->top, p->h) * p->w * lanes;
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
    ACLSIM_OPS_TRY(aclsim_pad2d_check_below(API, padding, self));
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
    uint64_t workspace;
    if (p.single) {
        /* the source-row table and each worker's rows */
        p.workers = aclsim_workers(p.n * p.c, p.oh * p.ow);
        workspace = aclsim_ops_region((uint64_t)(4 * p.h), sizeof(int64_t)) +
                    (uint64_t)(p.workers * scratch_floats(&p)) * sizeof(float);
    } else {
        workspace = aclsim_ops_region(values, sizeof(double)) + aclsim_ops_region((uint64_t)p.ow, sizeof(int64_t));
    }
    const aclTensor *inputs[] = {gradOutput, self};
    const aclTensor *outputs[] = {gradInput};
    aclnnStatus status = aclsim_ops_finish(KERNEL, pad_kernel, workspace, &p, sizeof p, inputs, 2, outputs, 1, workspaceSize,
                             executor);
    if (status == ACLNN_SUCCESS) {
        aclsim_executor_set_inputs_read(*executor, INPUTS_READ);
    }
    return status;
}

aclnnStatus aclnnReflectionPad2dBackward(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                         const aclrtStream stream)
{
    return aclsim_launch(KERNEL, workspace, workspaceSize, executor, stream);
}
