/*
 * aclnnIm2colBackward: col2im, i.e. torch.nn.functional.fold.
 *
 * gradOutput (N, C*kH*kW, L) or (C*kH*kW, L); out (N, C, H, W) or (C, H, W), (H, W) = inputSize.
 * Column l = bh*L1 + bw at kernel offset (i, j) adds gradOutput[n, c*kH*kW + i*kW + j, l] into
 * out[n, c, bh*sH - pH + i*dH, bw*sW - pW + j*dW] when that lies inside the image.
 *
 * Computed in float32 (CANN also works on a private NC1HWC0 copy and casts at the end), one
 * (H, W) plane at a time in parallel over the N * C planes, each out row written once.
 * Workspace: the tables of which block rows land on each out row and which blocks of each
 * kernel column lie inside a row, and per worker thread a block row, an out row and, for a
 * column stride > 1, the out row's phases (see aclsim_ops_phased()).
 */
#include <stdlib.h>
#include <string.h>

#include "../kernels/parallel.h"
#include "aclnnop/aclnn_im2col_backward.h"
#include "aclsim_dtype_rules.h" /* generated at build: the dtype table (aclnn_py/ops/<op>.py DTYPE_RULES) */
#include "im2col_common.h"

static const char API[] = "aclnnIm2colBackwardGetWorkspaceSize";

typedef struct {
    int64_t n, c, h, w;           /* out as (N, C, H, W); N = 1 when unbatched */
    int64_t kh, kw, dh, dw, ph, pw, sh, sw;
    int64_t l0, l1;               /* block grid */
    int64_t workers;              /* threads over the N * C planes */
} im2col_params;

typedef struct {
    const im2col_params *p;
    const aclTensor *grad;
    aclTensor *out;
    const int64_t *taps;          /* per out row y: kh (i, bh) pairs, the block rows landing on y */
    const int64_t *tap_count;     /* per out row y: how many */
    const int64_t *bw_lo, *bw_hi; /* per kernel column j: the blocks whose column lies inside the row */
    float *scratch;               /* per worker: a block row of gradOutput (l1), an out row (w) and its
                                   * phases (phase_floats) */
    int64_t scratch_floats;
} im2col_job;

/* An out row with a column stride sW > 1 is summed by phases: the columns x with x % sW = r
 * one after the other at r * aclsim_ops_phase_len + x / sW, so that each block row adds into a run of unit
 * stride (vectorised), and the phases are interleaved into the row at the end (the adds into
 * every sW-th column ran one element at a time: k3 s2 p1 (8,64,56,56) in 2.3 ms per call).  Only
 * for sW <= W, which bounds the phases by 2 W floats. */

/* Floats of one worker's scratch. */
static int64_t scratch_floats(const im2col_params *p)
{
    return (int64_t)(aclsim_ops_region((uint64_t)p->l1, sizeof(float)) +
                     aclsim_ops_region((uint64_t)p->w, sizeof(float)) +
                     (aclsim_ops_phased(p->w, p->sw)
                          ? aclsim_ops_region((uint64_t)(p->sw * aclsim_ops_phase_len(p->w, p->sw)), sizeof(float))
                          : 0)) /
           (int64_t)sizeof(float);
}

/* int64 entries of the tables. */
static int64_t table_entries(const im2col_params *p)
{
    return 2 * p->h * p->kh + p->h + 2 * p->kw;
}

/* The tables every plane shares (see im2col_job), from `t`. */
static void fill_tables(const im2col_params *p, im2col_job *job, int64_t *t)
{
    int64_t *taps = t, *tap_count = t + 2 * p->h * p->kh, *bw_lo = tap_count + p->h, *bw_hi = bw_lo + p->kw;
    for (int64_t y = 0; y < p->h; ++y) {
        int64_t count = 0;
        for (int64_t i = 0; i < p->kh; ++i) {
            int64_t at = y + p->ph - i * p->dh; /* = bh * sh */
            if (at >= 0 && at % p->sh == 0 && at / p->sh < p->l0) {
                taps[2 * (y * p->kh + count)] = i;
                taps[2 * (y * p->kh + count) + 1] = at / p->sh;
                ++count;
            }
        }
        tap_count[y] = count;
    }
    for (int64_t j = 0; j < p->kw; ++j) {
        /* the blocks [lo, hi) whose column x = bw*sw + off lies inside the row */
        int64_t off = j * p->dw - p->pw;
        int64_t lo = off >= 0 ? 0 : (-off + p->sw - 1) / p->sw;
        int64_t hi = p->w - off > 0 ? (p->w - off + p->sw - 1) / p->sw : 0;
        hi = hi < p->l1 ? hi : p->l1;
        bw_lo[j] = lo;
        bw_hi[j] = hi > lo ? hi : lo;
    }
    job->taps = taps;
    job->tap_count = tap_count;
    job->bw_lo = bw_lo;
    job->bw_hi = bw_hi;
}

/*
 * The planes [begin, end) when the blocks do not overlap (stride == kernel size, dilation 1:
 * ViT patches) and both tensors are float32 with unit-stride rows: each out element is one
 * gradOutput element or 0 (padding, or past the last block), so each out row is written once,
 * left to right, by a transposing copy: out[y, x] = gradOutput[n, (c*kH + i)*kW + j, bh*L1 + b]
 * with y + pH = bh*kH + i and x + pW = b*kW + j.
 */
#define COPY_COLUMN(n)                               \
    do {                                             \
        for (int64_t t = 0; t < (n); ++t) {          \
            dst[x + t] = col[t * stride_r];          \
        }                                            \
    } while (0)

static void im2col_planes_disjoint(const im2col_job *job, int64_t begin, int64_t end)
{
    const im2col_params *p = job->p;
    const aclTensor *grad = job->grad;
    aclTensor *out = job->out;
    int batched = grad->ndim == 3;
    int64_t stride_n = batched ? grad->strides[0] : 0, stride_r = grad->strides[batched ? 1 : 0];
    int64_t os[4];
    aclsim_ops_nchw_strides(out, os);
    for (int64_t plane = begin; plane < end; ++plane) {
        int64_t n = plane / p->c, c = plane % p->c;
        for (int64_t y = 0; y < p->h; ++y) {
            float *restrict dst = (float *)out->data + out->offset + n * os[0] + c * os[1] + y * os[2];
            int64_t i = (y + p->ph) % p->kh, bh = (y + p->ph) / p->kh;
            if (bh >= p->l0) {
                memset(dst, 0, (size_t)p->w * sizeof(float));
                continue;
            }
            /* element b of gradOutput row (c*kH + i)*kW + j is rows[j * stride_r + b] */
            const float *rows = (const float *)grad->data + grad->offset + n * stride_n +
                                (c * p->kh + i) * p->kw * stride_r + bh * p->l1;
            int64_t x = 0;
            for (int64_t q = p->pw; x < p->w;) {
                int64_t b = q / p->kw, j = q % p->kw;
                if (b >= p->l1) {
                    memset(dst + x, 0, (size_t)(p->w - x) * sizeof(float));
                    break;
                }
                int64_t count = p->kw - j < p->w - x ? p->kw - j : p->w - x;
                const float *restrict col = rows + j * stride_r + b;
                /* a whole block of a usual width: a loop of known trip count, unrolled (ViT's
                 * 16: kernel 0.65 -> 0.34 ms for (8,3,224,224) in a C program timing it) */
                switch (count) {
                case 2: COPY_COLUMN(2); break;
                case 4: COPY_COLUMN(4); break;
                case 8: COPY_COLUMN(8); break;
                case 14: COPY_COLUMN(14); break;
                case 16: COPY_COLUMN(16); break;
                case 32: COPY_COLUMN(32); break;
                default: COPY_COLUMN(count); break;
                }
                x += count;
                q += count;
            }
        }
    }
}

/*
 * The planes [begin, end) (n * C + c): each out row y written once, as the sum (kernel rows i,
 * then kernel columns j, ascending) of the block rows landing on it; every gradOutput element
 * is read once.
 */
static void im2col_planes(void *ctx, int64_t begin, int64_t end, int worker)
{
    const im2col_job *job = ctx;
    const im2col_params *p = job->p;
    const aclTensor *grad = job->grad;
    aclTensor *out = job->out;
    float *row = job->scratch + worker * job->scratch_floats;
    float *line = row + aclsim_ops_region((uint64_t)p->l1, sizeof(float)) / sizeof(float);
    int batched = grad->ndim == 3;
    int64_t stride_n = batched ? grad->strides[0] : 0;
    int64_t stride_r = grad->strides[batched ? 1 : 0];
    int64_t stride_l = grad->strides[batched ? 2 : 1];
    int64_t os[4];
    aclsim_ops_nchw_strides(out, os);
    bool direct = out->dtype == ACL_FLOAT && os[3] == 1;
    bool in_place = grad->dtype == ACL_FLOAT && stride_l == 1;   /* block rows read where they are */
    if (direct && in_place && p->sh == p->kh && p->sw == p->kw && p->dh == 1 && p->dw == 1) {
        im2col_planes_disjoint(job, begin, end);
        return;
    }
    bool by_phase = aclsim_ops_phased(p->w, p->sw);
    int64_t m = by_phase ? aclsim_ops_phase_len(p->w, p->sw) : 0, sw = p->sw;
    float *phases = line + aclsim_ops_region((uint64_t)p->w, sizeof(float)) / sizeof(float);
    for (int64_t plane = begin; plane < end; ++plane) {
        int64_t n = plane / p->c, c = plane % p->c;
        int64_t o_base = out->offset + n * os[0] + c * os[1];
        for (int64_t y = 0; y < p->h; ++y) {
            float *restrict dst = direct ? (float *)out->data + o_base + y * os[2] : line;
            float *restrict sums = by_phase ? phases : dst;
            memset(sums, 0, (size_t)(by_phase ? sw * m : p->w) * sizeof(float));
            for (int64_t t = 0; t < job->tap_count[y]; ++t) {
                int64_t i = job->taps[2 * (y * p->kh + t)], bh = job->taps[2 * (y * p->kh + t) + 1];
                for (int64_t j = 0; j < p->kw; ++j) {
                    int64_t lo = job->bw_lo[j], count = job->bw_hi[j] - lo;
                    if (count <= 0) {
                        continue;
                    }
                    int64_t r = (c * p->kh + i) * p->kw + j;
                    int64_t first = grad->offset + n * stride_n + r * stride_r + (bh * p->l1 + lo) * stride_l;
                    const float *restrict src = row;
                    if (in_place) {
                        src = (const float *)grad->data + first;
                    } else {
                        aclsim_ops_gather_f32(grad->data, grad->dtype, first, stride_l, count, row);
                    }
                    int64_t x = lo * sw + j * p->dw - p->pw; /* block lo's column, inside the row */
                    float *restrict at = by_phase ? sums + (x % sw) * m + x / sw : sums + x;
                    if (sw == 1 || by_phase) {
                        for (int64_t b = 0; b < count; ++b) {
                            at[b] += src[b];
                        }
                    } else {
                        for (int64_t b = 0; b < count; ++b) {
                            at[b * sw] += src[b];
                        }
                    }
                }
            }
            if (by_phase) {
                aclsim_ops_interleave_phases(dst, phases, p->w, sw, m);
            }
            if (!direct) {
                aclsim_ops_scatter_f32(out->data, out->dtype, o_base + y * os[2], os[3], p->w, line);
            }
        }
    }
}

static aclnnStatus im2col_kernel(aclOpExecutor *ex, void *workspace)
{
    ACLSIM_OPS_TRY(aclsim_ops_kernel_check_memory("aclnnIm2colBackward", ex, 1u << 0, 1));
    const im2col_params *p = aclsim_executor_params(ex, sizeof *p);
    im2col_job job = {.p = p, .grad = aclsim_executor_input(ex, 0), .out = aclsim_executor_output(ex, 0)};
    fill_tables(p, &job, workspace);
    job.scratch = (float *)((char *)workspace + aclsim_ops_region((uint64_t)table_entries(p), sizeof(int64_t)));
    job.scratch_floats = scratch_floats(p);
    aclTensor staged;
    void *copy = NULL;
    if (aclsim_ops_views_overlap(job.grad, job.out)) {
        if (!aclsim_ops_stage("aclnnIm2colBackward", job.grad, &staged, &copy)) {
            return ACLSIM_OPS_KERNEL_FAULT;
        }
        job.grad = &staged;
    }
    aclsim_parallel(p->n * p->c, (int)p->workers, im2col_planes, &job);
    free(copy);
    return ACLNN_SUCCESS;
}

static aclnnStatus check_params(const aclTensor *gradOutput, const aclIntArray *inputSize,
                                const aclIntArray *kernelSize, const aclIntArray *dilation,
                                const aclIntArray *padding, const aclIntArray *stride, const aclTensor *out,
                                im2col_params *p)
{
    static const aclDataType dtypes[] = {ACLSIM_DTYPES_Im2colBackward_DTYPES}; /* the one table */

    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "gradOutput", gradOutput));
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "inputSize", inputSize));
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "kernelSize", kernelSize));
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "dilation", dilation));
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "padding", padding));
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "stride", stride));
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "out", out));

    ACLSIM_OPS_TRY(aclsim_ops_check_dtype(API, "gradOutput", gradOutput, dtypes, ACLSIM_DTYPES_COUNT(dtypes)));
    ACLSIM_OPS_TRY(aclsim_ops_check_dtype(API, "out", out, dtypes, ACLSIM_DTYPES_COUNT(dtypes)));

    if (gradOutput->ndim != 2 && gradOutput->ndim != 3) {
        return aclsim_ops_invalid(API, "gradOutput must be 2-D or 3-D, got %llu-D shape %s",
                                  (unsigned long long)gradOutput->ndim, aclsim_ops_shape(gradOutput).s);
    }
    if (out->ndim != gradOutput->ndim + 1) {
        return aclsim_ops_invalid(API, "out must have rank gradOutput rank + 1 = %llu, got %llu-D shape %s",
                                  (unsigned long long)gradOutput->ndim + 1, (unsigned long long)out->ndim,
                                  aclsim_ops_shape(out).s);
    }

    ACLSIM_OPS_TRY(aclsim_ops_check_array_size(API, "inputSize", inputSize, 2));
    ACLSIM_OPS_TRY(aclsim_ops_check_array_size(API, "kernelSize", kernelSize, 2));
    ACLSIM_OPS_TRY(aclsim_ops_check_array_size(API, "dilation", dilation, 2));
    ACLSIM_OPS_TRY(aclsim_ops_check_array_size(API, "padding", padding, 2));
    ACLSIM_OPS_TRY(aclsim_ops_check_array_size(API, "stride", stride, 2));

    ACLSIM_OPS_TRY(aclsim_ops_check_array_min(API, "kernelSize", kernelSize, 0, true));
    ACLSIM_OPS_TRY(aclsim_ops_check_array_min(API, "stride", stride, 0, true));
    ACLSIM_OPS_TRY(aclsim_ops_check_array_min(API, "dilation", dilation, 0, true));
    ACLSIM_OPS_TRY(aclsim_ops_check_array_min(API, "padding", padding, 0, false));
    /* Documented ("inputSize > 0") though CANN's code does not check it; the numpy backend does. */
    ACLSIM_OPS_TRY(aclsim_ops_check_array_min(API, "inputSize", inputSize, 0, true));

    const int64_t *in = inputSize->values, *k = kernelSize->values, *dil = dilation->values;
    const int64_t *pad = padding->values, *s = stride->values;
    int64_t kernel_area;
    if (!aclsim_ops_mul(k[0], k[1], &kernel_area)) {
        return aclsim_ops_invalid(API, "kernelSize[0] * kernelSize[1] overflows int64, kernelSize = %s",
                                  aclsim_ops_ints(kernelSize).s);
    }
    int64_t rows = aclsim_ops_dim(gradOutput, -2);
    if (rows % kernel_area != 0) {
        return aclsim_ops_invalid(API,
                                  "gradOutput.shape[-2] = %lld must be divisible by kernelSize[0] * kernelSize[1] "
                                  "= %lld (kernelSize = %s)",
                                  (long long)rows, (long long)kernel_area, aclsim_ops_ints(kernelSize).s);
    }

    int64_t grid[2];
    for (int d = 0; d < 2; ++d) {
        if (!aclsim_im2col_blocks(in[d], pad[d], dil[d], k[d], s[d], &grid[d])) {
            return aclsim_ops_invalid(API, "the block count along dim %d overflows int64 (inputSize = %s, "
                                      "padding = %s, dilation = %s, kernelSize = %s)", d,
                                      aclsim_ops_ints(inputSize).s, aclsim_ops_ints(padding).s,
                                      aclsim_ops_ints(dilation).s, aclsim_ops_ints(kernelSize).s);
        }
        /* CANN would go on with a negative count converted to size_t; the numpy backend and
         * this one reject it (the kernel does not fit the padded image). */
        if (grid[d] < 0) {
            return aclsim_ops_invalid(API, "the kernel does not fit along dim %d: inputSize = %s, padding = %s, "
                                      "kernelSize = %s, dilation = %s give %lld blocks", d,
                                      aclsim_ops_ints(inputSize).s, aclsim_ops_ints(padding).s,
                                      aclsim_ops_ints(kernelSize).s, aclsim_ops_ints(dilation).s,
                                      (long long)grid[d]);
        }
    }
    int64_t length = aclsim_ops_dim(gradOutput, -1);
    int64_t blocks;
    if (!aclsim_ops_mul(grid[0], grid[1], &blocks) || length != blocks) {
        return aclsim_ops_invalid(API,
                                  "gradOutput.shape[-1] = %lld must equal the number of blocks %lld * %lld = %lld "
                                  "(inputSize = %s, kernelSize = %s, dilation = %s, padding = %s, stride = %s)",
                                  (long long)length, (long long)grid[0], (long long)grid[1], (long long)blocks,
                                  aclsim_ops_ints(inputSize).s, aclsim_ops_ints(kernelSize).s,
                                  aclsim_ops_ints(dilation).s, aclsim_ops_ints(padding).s,
                                  aclsim_ops_ints(stride).s);
    }

    int batched = gradOutput->ndim == 3;
    int64_t channels = rows / kernel_area;
    int64_t expected[4];
    int e = 0;
    if (batched) {
        expected[e++] = gradOutput->view_dims[0];
    }
    expected[e++] = channels;
    expected[e++] = in[0];
    expected[e++] = in[1];
    int64_t elements = 1;
    for (int d = 0; d < e; ++d) {
        if (!aclsim_ops_mul(elements, expected[d], &elements)) {
            return aclsim_ops_invalid(API, "the number of out elements overflows int64 (out shape %s)",
                                      aclsim_ops_int_list(expected, e).s);
        }
    }
    for (int d = 0; d < e; ++d) {
        if (out->view_dims[d] != expected[d]) {
            return aclsim_ops_invalid(API, "out shape must be %s, got %s", aclsim_ops_int_list(expected, e).s,
                                      aclsim_ops_shape(out).s);
        }
    }

    *p = (im2col_params){
        .n = batched ? gradOutput->view_dims[0] : 1, .c = channels, .h = in[0], .w = in[1],
        .kh = k[0], .kw = k[1], .dh = dil[0], .dw = dil[1], .ph = pad[0], .pw = pad[1],
        .sh = s[0], .sw = s[1], .l0 = grid[0], .l1 = grid[1],
    };
    return ACLNN_SUCCESS;
}

aclnnStatus aclnnIm2colBackwardGetWorkspaceSize(const aclTensor *gradOutput, const aclIntArray *inputSize,
                                                const aclIntArray *kernelSize, const aclIntArray *dilation,
                                                const aclIntArray *padding, const aclIntArray *stride,
                                                aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor)
{
    ACLSIM_OPS_CHECK_HANDLES(API, gradOutput, inputSize, kernelSize, dilation, padding, stride, out);
    if (workspaceSize == NULL || executor == NULL) {
        return aclsim_ops_nullptr(API, "%s must not be NULL", workspaceSize == NULL ? "workspaceSize" : "executor");
    }
    im2col_params p;
    ACLSIM_OPS_TRY(check_params(gradOutput, inputSize, kernelSize, dilation, padding, stride, out, &p));

    if (aclsim_ops_is_empty(gradOutput)) {
        /* CANN returns at once and leaves out untouched. */
        return aclsim_ops_finish("aclnnIm2colBackward", aclsim_ops_noop_kernel, 0, NULL, 0, NULL, 0, NULL, 0,
                                 workspaceSize, executor);
    }
    ACLSIM_OPS_TRY(aclsim_ops_check_memory(API, "gradOutput", gradOutput));
    ACLSIM_OPS_TRY(aclsim_ops_check_memory(API, "out", out));

    p.workers = aclsim_workers(p.n * p.c, p.h * p.w + p.kh * p.kw * p.l0 * p.l1);
    uint64_t workspace = aclsim_ops_region((uint64_t)table_entries(&p), sizeof(int64_t)) +
                         (uint64_t)(p.workers * scratch_floats(&p)) * sizeof(float);
    const aclTensor *inputs[] = {gradOutput};
    const aclTensor *outputs[] = {out};
    return aclsim_ops_finish("aclnnIm2colBackward", im2col_kernel, workspace, &p, sizeof p, inputs, 1, outputs, 1,
                             workspaceSize, executor);
}

aclnnStatus aclnnIm2colBackward(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                aclrtStream stream)
{
    return aclsim_launch("aclnnIm2colBackward", workspace, workspaceSize, executor, stream);
}
