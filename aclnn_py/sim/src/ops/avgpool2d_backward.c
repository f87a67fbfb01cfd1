/*
 * aclnnAvgPool2dBackward: aten::avg_pool2d_backward.  Each gradOutput cell (oh, ow) is divided
 * by its divisor and spread uniformly over the real (non-padding) elements of its window
 * [oh*sH - pH, +kH) x [ow*sW - pW, +kW).  Divisor: divisorOverride if non-zero; else with
 * countIncludePad the window size clipped to the padded input; else the real-element count.
 * A 3-D (C, H, W) input is one image.  cubeMathType is validated and has no effect.
 *
 * Workspace: the window tables of both axes and, per worker thread, float32 rows: gradOutput's
 * rows spread over their windows' columns for one plane (by phases for a column stride > 1, see
 * aclsim_ops_phased()), one gradOutput row and one gradInput row (CANN's AvgPool3DGrad path also
 * computes through float32 buffers).  Windows that tile the plane skip the spread (avgpool_planes_tiled).
 */
#include <stdlib.h>
#include <string.h>

#include "../kernels/parallel.h"
#include "aclnnop/aclnn_avgpool2d_backward.h"
#include "aclsim_dtype_rules.h" /* generated at build: the dtype table (aclnn_py/ops/<op>.py DTYPE_RULES) */
#include "pool_common.h"

static const char API[] = "aclnnAvgPool2dBackwardGetWorkspaceSize";
static const char KERNEL[] = "aclnnAvgPool2dBackward";
/* The inputs whose data the kernel reads: gradOutput (self: its shape only). */
#define INPUTS_READ (1u << 0)

typedef struct {
    int64_t n, c, h, w;     /* gradInput as (N, C, H, W), N = 1 for 3-D */
    int64_t oh, ow;
    int64_t kh, kw, sh, sw, ph, pw;
    int64_t divisor_override;
    bool count_include_pad;
    int64_t workers;        /* threads over the N * C planes */
} avgpool_params;

typedef struct {
    int64_t kh, kw, sh, sw, ph, pw;
} window_shape;

/* Along one axis, for each window o < out: its real (non-padding) elements [lo[o], hi[o]) and
 * its divisor factor (the padded extent with countIncludePad, else the real one); for each
 * element i < size: the windows [first[i], last[i]) holding it (windows move forward with o,
 * so they are consecutive). */
typedef struct {
    int64_t *lo, *hi, *factor, *first, *last;
} axis_table;

static void fill_axis(int64_t out, int64_t size, int64_t k, int64_t s, int64_t pad, bool include_pad, axis_table t)
{
    for (int64_t o = 0; o < out; ++o) {
        aclsim_pool_avg_window(o, size, k, s, pad, include_pad, &t.lo[o], &t.hi[o], &t.factor[o]);
    }
    int64_t first = 0, last = 0;
    for (int64_t i = 0; i < size; ++i) {
        while (first < out && t.hi[first] <= i) {
            ++first;
        }
        if (last < first) {
            last = first;
        }
        while (last < out && t.lo[last] <= i) {
            ++last;
        }
        t.first[i] = first;
        t.last[i] = last;
    }
}

typedef struct {
    const avgpool_params *p;
    const aclTensor *grad;
    aclTensor *grad_input;
    axis_table rows, cols;
    float *divisors;        /* oh x ow: each window's divisor (1 for a window without real elements) */
    int64_t *tap_lo, *tap_hi; /* per column offset j < kw: the windows ow whose column ow*sw - pw + j is real */
    float *scratch;         /* per worker: scratch_floats floats */
    int64_t scratch_floats;
} avgpool_job;

/* With a column stride sW > 1 the spread rows are kept by phases: the columns x with x % sW = r
 * one after the other at r * aclsim_ops_phase_len + x / sW, so that each window column offset adds into a
 * run of unit stride (vectorised), and a gradInput row is summed in that order and interleaved
 * at the end (the adds into every sW-th column ran one element at a time).  Only for sW <= W,
 * which bounds a phased row by 2 W floats. */

/* Floats of one spread row: w, or sW phases when phased. */
static int64_t spread_len(const avgpool_params *p)
{
    return aclsim_ops_phased(p->w, p->sw) ? p->sw * aclsim_ops_phase_len(p->w, p->sw) : p->w;
}

/* Floats of one worker's scratch: the spread rows (oh x spread_len), the divided gradOutput
 * plane (oh x ow), an output row, and a phased output row when phased. */
static int64_t scratch_floats(const avgpool_params *p)
{
    return (int64_t)(aclsim_ops_region((uint64_t)(p->oh * spread_len(p)), sizeof(float)) +
                     aclsim_ops_region((uint64_t)(p->oh * p->ow), sizeof(float)) +
                     aclsim_ops_region((uint64_t)p->w, sizeof(float)) +
                     (aclsim_ops_phased(p->w, p->sw) ? aclsim_ops_region((uint64_t)spread_len(p), sizeof(float))
                                                     : 0)) /
           (int64_t)sizeof(float);
}

/* ceil(a / b) for b > 0. */
static int64_t ceil_div(int64_t a, int64_t b)
{
    return a >= 0 ? (a + b - 1) / b : -((-a) / b);
}

/* The (oh, ow) plane of gradOutput at element g_base as floats in `row`, each divided by its
 * divisor (+0 for a -0 quotient: the tiled path writes it as it is, and in the general path it
 * is added onto zeros anyway): in one run where its rows lie one after the other, else row by
 * row. */
static void gather_plane(const aclTensor *grad, const avgpool_params *p, const int64_t gs[4], int64_t g_base,
                         const float *restrict divisors, float *restrict row)
{
    if (gs[2] == p->ow * gs[3]) {
        aclsim_ops_gather_f32(grad->data, grad->dtype, g_base, gs[3], p->oh * p->ow, row);
    } else {
        for (int64_t oh = 0; oh < p->oh; ++oh) {
            aclsim_ops_gather_f32(grad->data, grad->dtype, g_base + oh * gs[2], gs[3], p->ow, row + oh * p->ow);
        }
    }
    for (int64_t i = 0; i < p->oh * p->ow; ++i) {
        row[i] = 0.0f + row[i] / divisors[i];
    }
}

/*
 * The planes [begin, end) (n * C + c): each gradOutput row oh is divided by its divisors and
 * spread over its windows' columns into spread[oh] (w floats), one column offset j of the
 * windows at a time (a strided run, unit stride when sW is 1); then each gradInput row y is the
 * sum of the spread rows of the windows holding it, written once.
 */
static void avgpool_planes(void *ctx, int64_t begin, int64_t end, int worker)
{
    const avgpool_job *job = ctx;
    const avgpool_params *p = job->p;
    const aclTensor *grad = job->grad;
    aclTensor *out = job->grad_input;
    int64_t len = spread_len(p), m = aclsim_ops_phase_len(p->w, p->sw);
    bool by_phase = aclsim_ops_phased(p->w, p->sw);
    float *spread = job->scratch + worker * job->scratch_floats;
    float *row = spread + aclsim_ops_region((uint64_t)(p->oh * len), sizeof(float)) / sizeof(float);
    float *line = row + aclsim_ops_region((uint64_t)(p->oh * p->ow), sizeof(float)) / sizeof(float);
    float *sums = by_phase ? line + aclsim_ops_region((uint64_t)p->w, sizeof(float)) / sizeof(float) : NULL;
    int64_t gs[4], os[4];
    aclsim_ops_nchw_strides(grad, gs);
    aclsim_ops_nchw_strides(out, os);
    bool direct = out->dtype == ACL_FLOAT && os[3] == 1;
    const axis_table *r = &job->rows;
    int64_t sw = p->sw;
    for (int64_t plane = begin; plane < end; ++plane) {
        int64_t n = plane / p->c, ch = plane % p->c;
        int64_t g_base = grad->offset + n * gs[0] + ch * gs[1], o_base = out->offset + n * os[0] + ch * os[1];
        gather_plane(grad, p, gs, g_base, job->divisors, row);
        memset(spread, 0, (size_t)(p->oh * len) * sizeof(float));
        for (int64_t oh = 0; oh < p->oh; ++oh) {
            if (r->hi[oh] <= r->lo[oh]) {
                continue; /* no real row: no gradInput row reads spread[oh] */
            }
            float *restrict dst = spread + oh * len;
            const float *restrict share = row + oh * p->ow;
            for (int64_t j = 0; j < p->kw; ++j) {
                int64_t lo = job->tap_lo[j], count = job->tap_hi[j] - lo;
                if (count <= 0) {
                    continue; /* column offset j is outside the row for every window */
                }
                int64_t x = lo * sw - p->pw + j; /* window lo's column j, inside the row */
                float *restrict at = by_phase ? dst + (x % sw) * m + x / sw : dst + x;
                const float *restrict from = share + lo;
                if (sw == 1 || by_phase) {
                    for (int64_t i = 0; i < count; ++i) {
                        at[i] += from[i];
                    }
                } else {
                    for (int64_t i = 0; i < count; ++i) {
                        at[i * sw] += from[i];
                    }
                }
            }
        }
        for (int64_t y = 0; y < p->h; ++y) {
            float *restrict dst = direct ? (float *)out->data + o_base + y * os[2] : line;
            float *restrict acc = by_phase ? sums : dst;
            int64_t first = r->first[y], last = r->last[y];
            if (first >= last) {
                memset(dst, 0, (size_t)p->w * sizeof(float));
            } else {
                memcpy(acc, spread + first * len, (size_t)len * sizeof(float));
                for (int64_t oh = first + 1; oh < last; ++oh) {
                    const float *restrict src = spread + oh * len;
                    for (int64_t x = 0; x < len; ++x) {
                        acc[x] += src[x];
                    }
                }
                if (by_phase) {
                    aclsim_ops_interleave_phases(dst, sums, p->w, sw, m);
                }
            }
            if (!direct) {
                aclsim_ops_scatter_f32(out->data, out->dtype, o_base + y * os[2], os[3], p->w, line);
            }
        }
    }
}

/* Windows that tile the plane (kernel = stride, no padding: each gradInput element lies in at
 * most one window) into a float32 gradInput with unit column stride: each divided gradOutput
 * value is written straight to its window's elements, row oh*sH first and the window's other rows
 * copied from it; elements in no window (beyond the last window of floor mode) are zeros.  The
 * same values as avgpool_planes (0 + share, which also turns -0 into +0 as its sums do) in one
 * write of gradInput: that path's strided spread ran one element at a time (k2 s2
 * (8,256,28,28): 53% of the call's CPU). */
static bool windows_tile(const avgpool_params *p, const aclTensor *grad_input)
{
    int64_t os[4];
    aclsim_ops_nchw_strides(grad_input, os);
    return p->kh == p->sh && p->kw == p->sw && p->ph == 0 && p->pw == 0 && grad_input->dtype == ACL_FLOAT &&
           (os[3] == 1 || p->w == 1);
}

static void avgpool_planes_tiled(void *ctx, int64_t begin, int64_t end, int worker)
{
    const avgpool_job *job = ctx;
    const avgpool_params *p = job->p;
    const aclTensor *grad = job->grad;
    aclTensor *out = job->grad_input;
    float *row = job->scratch + worker * job->scratch_floats +
                 aclsim_ops_region((uint64_t)(p->oh * spread_len(p)), sizeof(float)) / sizeof(float);
    int64_t gs[4], os[4];
    aclsim_ops_nchw_strides(grad, gs);
    aclsim_ops_nchw_strides(out, os);
    int64_t kw = p->kw, rows = p->oh, cols = p->ow;
    /* Every window starts inside the plane (pooled_size drops a ceil-mode window that would
     * not); the last one may end past it. */
    int64_t covered_w = cols * kw < p->w ? cols * kw : p->w;
    for (int64_t plane = begin; plane < end; ++plane) {
        int64_t n = plane / p->c, ch = plane % p->c;
        int64_t g_base = grad->offset + n * gs[0] + ch * gs[1];
        float *base = (float *)out->data + out->offset + n * os[0] + ch * os[1];
        gather_plane(grad, p, gs, g_base, job->divisors, row);
        /* full windows, then the last one when the plane cuts it */
        int64_t full = p->w / kw < cols ? p->w / kw : cols;
        for (int64_t oh = 0; oh < rows; ++oh) {
            const float *restrict share = row + oh * p->ow;
            float *restrict first = base + oh * p->sh * os[2];
            if (kw == 2) {
                for (int64_t ow = 0; ow < full; ++ow) { /* the common 2x2: vectorised as interleaving */
                    first[2 * ow] = share[ow];
                    first[2 * ow + 1] = share[ow];
                }
            } else {
                for (int64_t j = 0; j < kw; ++j) {
                    for (int64_t ow = 0; ow < full; ++ow) {
                        first[ow * kw + j] = share[ow];
                    }
                }
            }
            for (int64_t x = full * kw; x < covered_w; ++x) {
                first[x] = share[full];
            }
            for (int64_t x = covered_w; x < p->w; ++x) {
                first[x] = 0.0f;
            }
            int64_t y1 = oh * p->sh + p->kh < p->h ? oh * p->sh + p->kh : p->h;
            for (int64_t y = oh * p->sh + 1; y < y1; ++y) {
                memcpy(base + y * os[2], first, (size_t)p->w * sizeof(float));
            }
        }
        for (int64_t y = rows * p->sh; y < p->h; ++y) {
            memset(base + y * os[2], 0, (size_t)p->w * sizeof(float));
        }
    }
}

/* Bytes of the tables: both axes (int64), the divisors (float), the column offsets (int64). */
static uint64_t table_bytes(const avgpool_params *p)
{
    return aclsim_ops_region((uint64_t)(3 * (p->oh + p->ow) + 2 * (p->h + p->w)), sizeof(int64_t)) +
           aclsim_ops_region((uint64_t)(p->oh * p->ow), sizeof(float)) +
           aclsim_ops_region((uint64_t)(2 * p->kw), sizeof(int64_t));
}

/* The tables every plane shares, from the workspace's start. */
static void fill_tables(const avgpool_params *p, avgpool_job *job, char *workspace)
{
    int64_t *t = (int64_t *)workspace;
    job->rows = (axis_table){t, t + p->oh, t + 2 * p->oh, t + 3 * p->oh, t + 3 * p->oh + p->h};
    t += 3 * p->oh + 2 * p->h;
    job->cols = (axis_table){t, t + p->ow, t + 2 * p->ow, t + 3 * p->ow, t + 3 * p->ow + p->w};
    fill_axis(p->oh, p->h, p->kh, p->sh, p->ph, p->count_include_pad, job->rows);
    fill_axis(p->ow, p->w, p->kw, p->sw, p->pw, p->count_include_pad, job->cols);
    workspace += aclsim_ops_region((uint64_t)(3 * (p->oh + p->ow) + 2 * (p->h + p->w)), sizeof(int64_t));
    job->divisors = (float *)workspace;
    for (int64_t oh = 0; oh < p->oh; ++oh) {
        for (int64_t ow = 0; ow < p->ow; ++ow) {
            bool real = job->rows.hi[oh] > job->rows.lo[oh] && job->cols.hi[ow] > job->cols.lo[ow];
            /* in double: the two factors' product can exceed int64 (windows of 2^62 rows) */
            double divisor = p->divisor_override != 0 ? (double)p->divisor_override
                                                      : (double)job->rows.factor[oh] * (double)job->cols.factor[ow];
            job->divisors[oh * p->ow + ow] = real ? (float)divisor : 1.0f;
        }
    }
    workspace += aclsim_ops_region((uint64_t)(p->oh * p->ow), sizeof(float));
    job->tap_lo = (int64_t *)workspace;
    job->tap_hi = job->tap_lo + p->kw;
    for (int64_t j = 0; j < p->kw; ++j) {
        /* column x = ow*sw - pw + j lies in [0, w) */
        int64_t lo = ceil_div(p->pw - j, p->sw), hi = ceil_div(p->w + p->pw - j, p->sw);
        lo = lo < 0 ? 0 : lo;
        hi = hi > p->ow ? p->ow : hi;
        job->tap_lo[j] = lo;
        job->tap_hi[j] = hi > lo ? hi : lo;
    }
}

static aclnnStatus avgpool_kernel(aclOpExecutor *ex, void *workspace)
{
    ACLSIM_OPS_TRY(aclsim_ops_kernel_check_memory(KERNEL, ex, INPUTS_READ, 1));
    const avgpool_params *p = aclsim_executor_params(ex, sizeof *p);
    avgpool_job job = {.p = p, .grad = aclsim_executor_input(ex, 0), .grad_input = aclsim_executor_output(ex, 0)};
    fill_tables(p, &job, workspace);
    job.scratch = (float *)((char *)workspace + table_bytes(p));
    job.scratch_floats = scratch_floats(p);

    aclTensor staged;
    void *copy = NULL;
    if (aclsim_ops_views_overlap(job.grad, job.grad_input)) {
        if (!aclsim_ops_stage(KERNEL, job.grad, &staged, &copy)) {
            return ACLSIM_OPS_KERNEL_FAULT;
        }
        job.grad = &staged;
    }
    aclsim_parallel(p->n * p->c, (int)p->workers,
                    windows_tile(p, job.grad_input) ? avgpool_planes_tiled : avgpool_planes, &job);
    free(copy);
    return ACLNN_SUCCESS;
}

/* PyTorch's pooling_output_shape (pool_common's, dilation 1); false if an intermediate leaves int64. */
static bool pooled_size(int64_t in, int64_t k, int64_t s, int64_t p, bool ceil_mode, int64_t *out)
{
    return aclsim_pool_out_size(in, k, s, p, 1, ceil_mode, out);
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
    p.workers = aclsim_workers(p.n * p.c, p.h * p.w + p.oh * p.ow);
    uint64_t workspace = table_bytes(&p) +
                         (uint64_t)(p.workers * scratch_floats(&p)) * sizeof(float);
    const aclTensor *inputs[] = {gradOutput, self};
    const aclTensor *outputs[] = {gradInput};
    aclnnStatus status = aclsim_ops_finish(KERNEL, avgpool_kernel, workspace, &p, sizeof p, inputs, 2, outputs, 1, workspaceSize,
                             executor);
    if (status == ACLNN_SUCCESS) {
        aclsim_executor_set_inputs_read(*executor, INPUTS_READ);
    }
    return status;
}

aclnnStatus aclnnAvgPool2dBackward(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                   aclrtStream stream)
{
    return aclsim_launch(KERNEL, workspace, workspaceSize, executor, stream);
}
