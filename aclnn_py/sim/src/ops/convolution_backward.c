/*
 * aclnnConvolutionBackward: aten::convolution_backward for 1-D, 2-D and 3-D convolutions,
 * plain or transposed, grouped, with outputMask selecting which of gradInput, gradWeight and
 * gradBias are computed.  2-D padding may have 4 elements [top, bottom, left, right].
 *
 * One formulation serves both directions.  Call S the tensor on the "few positions" side of
 * the convolution (gradOutput normally, input when transposed) and B the other one (input
 * normally, gradOutput when transposed).  weight is (S channels, B channels / groups, k...)
 * in both cases, and tap k links S position o to B position o*stride - padFront + k*dilation.
 *   normal:     gradInput  = scatter of gradOutput (S) through the taps into B's shape
 *   transposed: gradInput  = gather of gradOutput (B) through the taps into S's shape
 *   both:       gradWeight[a, bl, k] = sum over n, o of S[n, a, o] * B[n, b, pos(o, k)]
 *               gradBias[c] = sum of gradOutput over n and space
 *
 * Workspace (float32): gradOutput, and input / weight where needed, converted to contiguous
 * buffers (unless they are contiguous float32 already: then they are read in place), plus the gradInput / gradWeight / gradBias results before they are cast into the
 * (possibly strided) outputs; a contiguous float32 gradInput is computed in place instead (an
 * input read in place that it overlaps is first copied to host memory).  Reductions accumulate in double.
 */

#include <stdlib.h>
#include <string.h>

#include "../kernels/gemm.h"
#include "../kernels/parallel.h"
#include "aclnnop/aclnn_convolution_backward.h"
#include "aclsim_dtype_rules.h" /* generated at build: the dtype table (aclnn_py/ops/<op>.py DTYPE_RULES) */
#include "ops_common.h"

static const char API[] = "aclnnConvolutionBackwardGetWorkspaceSize";
static const char KERNEL[] = "aclnnConvolutionBackward";

enum { GRAD_OUTPUT, INPUT, WEIGHT };
enum { GRAD_INPUT, GRAD_WEIGHT, GRAD_BIAS };

typedef struct {
    bool transposed;
    bool empty;                 /* empty-tensor path: only zero-fill the requested grads */
    bool mask[3];
    int64_t n, cs, cb, groups;  /* batch, S channels, B channels, groups */
    int64_t ss[3], bs[3], ks[3];
    int64_t stride[3], dilation[3], pad[3];
    /* workspace regions, in bytes from the start */
    uint64_t at_grad_output, at_input, at_weight, at_grad_input, at_grad_weight, at_grad_bias;
    bool in_place[3];           /* gradOutput, input, weight read where they are (float32, contiguous) */
    bool grad_input_in_place;   /* gradInput computed in the output itself (float32, contiguous) */
    int64_t chunk;              /* S positions per im2col chunk (gemm path) */
    int64_t workers;            /* threads of the gemm path, each on its own images */
    int64_t gemm_threads;       /* threads of each matrix product (> 1 only when there is one worker) */
    uint64_t at_cols;           /* per worker, the im2col chunk: (B channels / groups * taps) x chunk floats */
    uint64_t at_gemm;           /* per worker, the matrix product's packing space (gemm_bytes bytes) */
    uint64_t gemm_bytes;
    uint64_t at_partial_weight; /* per worker but the first, its partial gradWeight */
    bool depthwise;             /* finite data takes the depthwise path */
    int64_t depthwise_workers;  /* its threads, each with two padded planes at at_depthwise */
    uint64_t at_depthwise;
} conv_params;

/* Most taps of the depthwise path (their sums are a per-thread array); larger kernels take the
 * direct passes. */
enum { DEPTHWISE_MAX_TAPS = 1024 };

/* ceil(a / b) for a >= 0, b > 0, without forming a + b - 1. */
static int64_t ceil_div(int64_t a, int64_t b)
{
    return a / b + (a % b != 0);
}

/* The S positions o in [*lo, *hi) whose B position o*s + off lies in [0, size_b). */
static void tap_range(int64_t size_s, int64_t size_b, int64_t s, int64_t off, int64_t *lo, int64_t *hi)
{
    int64_t first = off >= 0 ? 0 : ceil_div(-off, s);
    int64_t last = size_b - off > 0 ? ceil_div(size_b - off, s) : 0;
    *lo = first;
    *hi = last < size_s ? last : size_s;
}

static void axpy(float *restrict y, int64_t ystep, const float *restrict x, int64_t count, float a)
{
    if (ystep == 1) {
        /* Eight independent lanes per step: gcc -O2 turns them into vector instructions. */
        int64_t i = 0;
        for (; i + 8 <= count; i += 8) {
            for (int j = 0; j < 8; ++j) {
                y[i + j] += a * x[i + j];
            }
        }
        for (; i < count; ++i) {
            y[i] += a * x[i];
        }
    } else {
        for (int64_t i = 0; i < count; ++i) {
            y[i * ystep] += a * x[i];
        }
    }
}

static void gather_axpy(float *restrict y, const float *restrict x, int64_t xstep, int64_t count, float a)
{
    int64_t i = 0;
    if (xstep == 1) {
        for (; i + 8 <= count; i += 8) {
            for (int j = 0; j < 8; ++j) {
                y[i + j] += a * x[i + j];
            }
        }
    }
    for (; i < count; ++i) {
        y[i] += a * x[i * xstep];
    }
}

/* sum of x[i] * y[i * ystep] in double, in eight interleaved partial sums. */
static double dot(const float *restrict x, const float *restrict y, int64_t ystep, int64_t count)
{
    double lanes[8] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
    int64_t i = 0;
    if (ystep == 1) {
        for (; i + 8 <= count; i += 8) {
            for (int j = 0; j < 8; ++j) {
                lanes[j] += (double)x[i + j] * (double)y[i + j];
            }
        }
    }
    for (; i < count; ++i) {
        lanes[i & 7] += (double)x[i] * (double)y[i * ystep];
    }
    return ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3])) + ((lanes[4] + lanes[5]) + (lanes[6] + lanes[7]));
}

/* sum of x[i] in double, in eight interleaved partial sums (one double sum would wait on
 * each add's latency). */
static double sum(const float *restrict x, int64_t count)
{
    double lanes[8] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
    int64_t i = 0;
    for (; i + 8 <= count; i += 8) {
        for (int j = 0; j < 8; ++j) {
            lanes[j] += (double)x[i + j];
        }
    }
    for (; i < count; ++i) {
        lanes[i & 7] += (double)x[i];
    }
    return ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3])) + ((lanes[4] + lanes[5]) + (lanes[6] + lanes[7]));
}

/* gradInput through every tap: scatter S -> B (normal) or gather B -> S (transposed). */
static void grad_input_pass(const conv_params *p, float *sbuf, float *bbuf, const float *w, bool into_b, int64_t n0,
                            int64_t n1)
{
    const int64_t *ss = p->ss, *bs = p->bs, *ks = p->ks, *st = p->stride;
    int64_t s_plane = ss[0] * ss[1] * ss[2], b_plane = bs[0] * bs[1] * bs[2], k_size = ks[0] * ks[1] * ks[2];
    int64_t cs_group = p->cs / p->groups, cb_group = p->cb / p->groups;
    for (int64_t n = n0; n < n1; ++n) {
        for (int64_t a = 0; a < p->cs; ++a) {
            int64_t g = a / cs_group;
            float *s_img = sbuf + (n * p->cs + a) * s_plane;
            for (int64_t bl = 0; bl < cb_group; ++bl) {
                float *b_img = bbuf + (n * p->cb + g * cb_group + bl) * b_plane;
                const float *taps = w + (a * cb_group + bl) * k_size;
                for (int64_t kd = 0; kd < ks[0]; ++kd) {
                    int64_t off_d = kd * p->dilation[0] - p->pad[0], d_lo, d_hi;
                    tap_range(ss[0], bs[0], st[0], off_d, &d_lo, &d_hi);
                    for (int64_t kh = 0; kh < ks[1]; ++kh) {
                        int64_t off_h = kh * p->dilation[1] - p->pad[1], h_lo, h_hi;
                        tap_range(ss[1], bs[1], st[1], off_h, &h_lo, &h_hi);
                        for (int64_t kw = 0; kw < ks[2]; ++kw) {
                            int64_t off_w = kw * p->dilation[2] - p->pad[2], w_lo, w_hi;
                            tap_range(ss[2], bs[2], st[2], off_w, &w_lo, &w_hi);
                            float tap = taps[(kd * ks[1] + kh) * ks[2] + kw];
                            if (w_hi <= w_lo) {
                                continue;
                            }
                            for (int64_t od = d_lo; od < d_hi; ++od) {
                                int64_t pd = od * st[0] + off_d;
                                for (int64_t oh = h_lo; oh < h_hi; ++oh) {
                                    int64_t ph = oh * st[1] + off_h;
                                    float *s_row = s_img + (od * ss[1] + oh) * ss[2] + w_lo;
                                    float *b_row = b_img + (pd * bs[1] + ph) * bs[2] + w_lo * st[2] + off_w;
                                    if (into_b) {
                                        axpy(b_row, st[2], s_row, w_hi - w_lo, tap);
                                    } else {
                                        gather_axpy(s_row, b_row, st[2], w_hi - w_lo, tap);
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

static void grad_weight_pass(const conv_params *p, const float *sbuf, const float *bbuf, float *gw, int64_t a0,
                             int64_t a1)
{
    const int64_t *ss = p->ss, *bs = p->bs, *ks = p->ks, *st = p->stride;
    int64_t s_plane = ss[0] * ss[1] * ss[2], b_plane = bs[0] * bs[1] * bs[2];
    int64_t cs_group = p->cs / p->groups, cb_group = p->cb / p->groups;
    for (int64_t a = a0; a < a1; ++a) {
        int64_t g = a / cs_group;
        for (int64_t bl = 0; bl < cb_group; ++bl) {
            int64_t b = g * cb_group + bl;
            for (int64_t kd = 0; kd < ks[0]; ++kd) {
                int64_t off_d = kd * p->dilation[0] - p->pad[0], d_lo, d_hi;
                tap_range(ss[0], bs[0], st[0], off_d, &d_lo, &d_hi);
                for (int64_t kh = 0; kh < ks[1]; ++kh) {
                    int64_t off_h = kh * p->dilation[1] - p->pad[1], h_lo, h_hi;
                    tap_range(ss[1], bs[1], st[1], off_h, &h_lo, &h_hi);
                    for (int64_t kw = 0; kw < ks[2]; ++kw) {
                        int64_t off_w = kw * p->dilation[2] - p->pad[2], w_lo, w_hi;
                        tap_range(ss[2], bs[2], st[2], off_w, &w_lo, &w_hi);
                        double acc = 0.0;
                        for (int64_t n = 0; n < p->n && w_hi > w_lo; ++n) {
                            const float *s_img = sbuf + (n * p->cs + a) * s_plane;
                            const float *b_img = bbuf + (n * p->cb + b) * b_plane;
                            for (int64_t od = d_lo; od < d_hi; ++od) {
                                int64_t pd = od * st[0] + off_d;
                                for (int64_t oh = h_lo; oh < h_hi; ++oh) {
                                    int64_t ph = oh * st[1] + off_h;
                                    acc += dot(s_img + (od * ss[1] + oh) * ss[2] + w_lo,
                                               b_img + (pd * bs[1] + ph) * bs[2] + w_lo * st[2] + off_w, st[2],
                                               w_hi - w_lo);
                                }
                            }
                        }
                        gw[((a * cb_group + bl) * ks[0] + kd) * ks[1] * ks[2] + kh * ks[2] + kw] = (float)acc;
                    }
                }
            }
        }
    }
}

/* ---------------------------------------------------------------- gemm path (finite data)
 *
 * Per image and group, the S positions are taken a chunk at a time and B is lowered to the
 * im2col matrix cols (r = b * taps + tap, j = S position in the chunk), zero where a tap reads
 * padding:
 *   gradWeight[a, r]         += sum_j S[a, j] * cols[r, j]
 *   transposed: gradInput[a, j] = sum_r W[a, r] * cols[r, j]
 *   normal: cols[r, j] = sum_a W[a, r] * S[a, j], scattered back into B's positions
 * (three products of kernels/gemm.c).
 * The zeros stand for "no term", which only finite data allows (inf * 0 is NaN): data with inf
 * or NaN takes the exact passes above.
 */

/* Bytes of one im2col chunk: it and the S rows it meets stay in a core's share of the
 * last-level cache (at least 1 MiB per core on current x86-64 and aarch64 server parts).  With
 * one image per call the chunk's products are shared by the threads instead, and a chunk is
 * GEMM_SHARED_CHUNK times larger so that a thread start is worth it. */
#define COLS_BYTES (1 << 20)
#define GEMM_SHARED_CHUNK 4
/* At least this many positions per chunk however many rows cols has: a chunk is the depth of
 * the gradWeight product, and a shallower one would add more to gradWeight than it sums. */
#define MIN_CHUNK 256

/* Between one B channel image and the taps' rows of cols (row stride ldr) for the S positions
 * [o0, o1): gather (cols = B at each tap's position, 0 in padding) or scatter (B += cols where
 * the position is inside B). */
static void im2col_rows(const conv_params *p, int64_t o0, int64_t o1, float *b_img, float *rows, int64_t ldr,
                        bool scatter)
{
    const int64_t *ss = p->ss, *bs = p->bs, *ks = p->ks, *st = p->stride;
    /* o0 as (od, oh, ow), once: the runs below walk on without dividing */
    int64_t ow0 = o0 % ss[2], oh0 = o0 / ss[2] % ss[1], od0 = o0 / (ss[2] * ss[1]);
    for (int64_t kd = 0; kd < ks[0]; ++kd) {
        int64_t off_d = kd * p->dilation[0] - p->pad[0], d_lo, d_hi;
        tap_range(ss[0], bs[0], st[0], off_d, &d_lo, &d_hi);
        for (int64_t kh = 0; kh < ks[1]; ++kh) {
            int64_t off_h = kh * p->dilation[1] - p->pad[1], h_lo, h_hi;
            tap_range(ss[1], bs[1], st[1], off_h, &h_lo, &h_hi);
            for (int64_t kw = 0; kw < ks[2]; ++kw) {
                int64_t off_w = kw * p->dilation[2] - p->pad[2], w_lo, w_hi;
                tap_range(ss[2], bs[2], st[2], off_w, &w_lo, &w_hi);
                float *row = rows + ((kd * ks[1] + kh) * ks[2] + kw) * ldr;
                int64_t ow = ow0, oh = oh0, od = od0;
                for (int64_t o = o0; o < o1;) {
                    int64_t run = ss[2] - ow < o1 - o ? ss[2] - ow : o1 - o;
                    float *restrict cell = row + (o - o0) - ow;       /* cell[x] for x in [ow, ow + run) */
                    /* the positions [first, last) of the run whose tap lands inside B */
                    int64_t first = w_lo > ow ? w_lo : ow, last = w_hi < ow + run ? w_hi : ow + run;
                    if (od < d_lo || od >= d_hi || oh < h_lo || oh >= h_hi || last <= first) {
                        first = last = ow;
                    }
                    /* B's row, from its element for the run's first landing position */
                    float *restrict b_row = b_img + (first < last ? ((od * st[0] + off_d) * bs[1] + oh * st[1] +
                                                                     off_h) * bs[2] + first * st[2] + off_w : 0);
                    const float *restrict src = cell + first;
                    float *restrict dst = cell + first;
                    int64_t count = last - first;
                    if (scatter && st[2] == 1) {
                        for (int64_t x = 0; x < count; ++x) {
                            b_row[x] += src[x];
                        }
                    } else if (scatter) {
                        for (int64_t x = 0; x < count; ++x) {
                            b_row[x * st[2]] += src[x];
                        }
                    } else {
                        for (int64_t x = ow; x < first; ++x) {
                            cell[x] = 0.0f;
                        }
                        if (st[2] == 1) {
                            for (int64_t x = 0; x < count; ++x) {
                                dst[x] = b_row[x];
                            }
                        } else {
                            for (int64_t x = 0; x < count; ++x) {
                                dst[x] = b_row[x * st[2]];
                            }
                        }
                        for (int64_t x = last; x < ow + run; ++x) {
                            cell[x] = 0.0f;
                        }
                    }
                    o += run;
                    ow = 0;
                    if (++oh == ss[1]) {
                        oh = 0;
                        ++od;
                    }
                }
            }
        }
    }
}

/* The lowering of one chunk (im2col_rows for each of a group's B channels): channel bl's rows of
 * cols and its B image are its own, so the channels can go to different threads and give the
 * same bits.  With one image per call the matrix products use the threads (p->gemm_threads) but
 * the lowering and the scatter back ran on one (conv3d unet k3 (1,32,32,32,32): 19% of the
 * call's CPU); a chunk of cols of at least LOWER_SHARED floats shares them out too. */
#define LOWER_SHARED ((int64_t)1 << 18)
typedef struct {
    const conv_params *p;
    int64_t o0, o1, b_plane, taps;
    float *b_first, *cols;
    bool scatter;
} lower_job;

static void lower_channels(void *ctx, int64_t begin, int64_t end, int worker)
{
    (void)worker;
    const lower_job *j = ctx;
    int64_t width = j->o1 - j->o0;
    for (int64_t bl = begin; bl < end; ++bl) {
        im2col_rows(j->p, j->o0, j->o1, j->b_first + bl * j->b_plane, j->cols + bl * j->taps * width, width,
                    j->scatter);
    }
}

static void lower_chunk(const conv_params *p, int threads, int64_t o0, int64_t o1, float *b_first, float *cols,
                        bool scatter)
{
    int64_t cb_group = p->cb / p->groups, taps = p->ks[0] * p->ks[1] * p->ks[2];
    lower_job job = {p, o0, o1, p->bs[0] * p->bs[1] * p->bs[2], taps, b_first, cols, scatter};
    int workers = threads > 1 && cb_group * taps * (o1 - o0) >= LOWER_SHARED ? threads : 1;
    if (workers > cb_group) {
        workers = (int)cb_group; /* a share per channel at most: no empty shares to wake a helper for */
    }
    aclsim_parallel(cb_group, workers, lower_channels, &job);
}

/* gradInput (gi, NULL if not wanted) and gradWeight (gw, idem) through the gemm path; S and B
 * as in grad_input_pass (B NULL when only a normal convolution's gradInput is wanted, S NULL when
 * only a transposed one's). */
typedef struct {
    const conv_params *p;
    const float *s, *w;
    float *b, *gi, *gw, *cols;
    void *pack;                 /* the matrix products' packing space */
    int64_t n0, n1;             /* the images [n0, n1) */
} gemm_part;

/* The gemm path on one part's images; gw receives that part's sum. */
static void gemm_images(const gemm_part *part)
{
    const conv_params *p = part->p;
    const float *s = part->s, *w = part->w;
    float *b = part->b, *gi = part->gi, *gw = part->gw, *cols = part->cols;
    void *pack = part->pack;
    int threads = (int)p->gemm_threads;
    int64_t taps = p->ks[0] * p->ks[1] * p->ks[2], cs_group = p->cs / p->groups, cb_group = p->cb / p->groups;
    int64_t rows = cb_group * taps, s_plane = p->ss[0] * p->ss[1] * p->ss[2];
    int64_t b_plane = p->bs[0] * p->bs[1] * p->bs[2], chunk = p->chunk;
    if (gw != NULL) {
        memset(gw, 0, (size_t)(p->cs * rows) * sizeof(float));
    }
    if (gi != NULL && !p->transposed) {
        memset(gi + part->n0 * p->cb * b_plane, 0, (size_t)((part->n1 - part->n0) * p->cb * b_plane) * sizeof(float));
    }
    for (int64_t n = part->n0; n < part->n1; ++n) {
        for (int64_t g = 0; g < p->groups; ++g) {
            const float *w_group = w != NULL ? w + g * cs_group * rows : NULL;
            int64_t s_first = (n * p->cs + g * cs_group) * s_plane, b_first = (n * p->cb + g * cb_group) * b_plane;
            for (int64_t o0 = 0; o0 < s_plane; o0 += chunk) {
                int64_t o1 = o0 + chunk < s_plane ? o0 + chunk : s_plane, width = o1 - o0;
                if (gw != NULL || (gi != NULL && p->transposed)) {
                    lower_chunk(p, threads, o0, o1, b + b_first, cols, false);
                    if (gw != NULL) {
                        aclsim_gemm_args prod = {
                            .m = cs_group, .n = rows, .k = width, .a = s + s_first + o0, .a_rs = s_plane, .a_cs = 1,
                            .b = cols, .b_rs = 1, .b_cs = width, .c = gw + g * cs_group * rows, .ldc = rows,
                            .accumulate = true,
                        };
                        aclsim_gemm_f32(&prod, threads, pack);
                    }
                    if (gi != NULL && p->transposed) {
                        aclsim_gemm_args prod = {
                            .m = cs_group, .n = width, .k = rows, .a = w_group, .a_rs = rows, .a_cs = 1, .b = cols,
                            .b_rs = width, .b_cs = 1, .c = gi + s_first + o0, .ldc = s_plane, .accumulate = false,
                        };
                        aclsim_gemm_f32(&prod, threads, pack);
                    }
                }
                if (gi != NULL && !p->transposed) {
                    aclsim_gemm_args prod = {
                        .m = rows, .n = width, .k = cs_group, .a = w_group, .a_rs = 1, .a_cs = rows,
                        .b = s + s_first + o0, .b_rs = s_plane, .b_cs = 1, .c = cols, .ldc = width,
                        .accumulate = false,
                    };
                    aclsim_gemm_f32(&prod, threads, pack);
                    lower_chunk(p, threads, o0, o1, gi + b_first, cols, true);
                }
            }
        }
    }
}

/* aclsim_parallel's share `worker`: the images [begin, end) with that worker's buffers. */
static void run_images(void *ctx, int64_t begin, int64_t end, int worker)
{
    gemm_part *part = (gemm_part *)ctx + worker;
    part->n0 = begin;
    part->n1 = end;
    gemm_images(part);
}

/* Threads for the gemm path: one per online core, at most 4 (as the numpy backend's worker
 * threads), never more than the images (each thread takes whole images: their gradInput
 * writes are disjoint, and gradWeight is summed from one partial per thread). */
static int64_t gemm_workers(int64_t images)
{
    int64_t workers = aclsim_cores();
    return workers < images ? workers : images > 1 ? images : 1;
}

/* gradInput (gi, NULL if not wanted) and gradWeight (gw, idem) through the gemm path; S and B
 * as in grad_input_pass (B NULL when only a normal convolution's gradInput is wanted, S NULL when
 * only a transposed one's).  cols holds p->workers chunks, partial_weight p->workers - 1
 * gradWeight partials. */
static void gemm_passes(const conv_params *p, const float *s, float *b, const float *w, float *gi, float *gw,
                        float *cols, float *partial_weight, char *pack)
{
    int64_t rows = p->cb / p->groups * p->ks[0] * p->ks[1] * p->ks[2], weights = p->cs * rows;
    gemm_part parts[ACLSIM_MAX_WORKERS];
    for (int64_t t = 0; t < p->workers; ++t) {
        parts[t] = (gemm_part){
            .p = p, .s = s, .w = w, .b = b, .gi = gi, .cols = cols + t * rows * p->chunk,
            .pack = pack + t * p->gemm_bytes,
            .gw = gw == NULL ? NULL : t == 0 ? gw : partial_weight + (t - 1) * weights,
        };
    }
    aclsim_parallel(p->n, (int)p->workers, run_images, parts);
    for (int64_t t = 1; gw != NULL && t < p->workers; ++t) {
        const float *part = partial_weight + (t - 1) * weights;
        for (int64_t i = 0; i < weights; ++i) {
            gw[i] += part[i];
        }
    }
}

/* Groups this thin on both sides (depthwise convolutions) take the direct passes: their matrix
 * products would have one or two rows, mostly padding in a register tile. */
static bool direct_groups(const conv_params *p)
{
    return p->cs / p->groups <= 2 && p->cb / p->groups <= 2;
}

/* The direct passes, on threads: gradInput over images, gradWeight over S channels (each
 * element of either is summed by one thread, in the same order as on one). */
typedef struct {
    const conv_params *p;
    float *go, *in, *gi, *gw;
    const float *w;
} direct_job;

static void direct_images(void *ctx, int64_t begin, int64_t end, int worker)
{
    const direct_job *job = ctx;
    (void)worker;
    if (job->p->transposed) {
        grad_input_pass(job->p, job->gi, job->go, job->w, false, begin, end);
    } else {
        grad_input_pass(job->p, job->go, job->gi, job->w, true, begin, end);
    }
}

static void direct_weights(void *ctx, int64_t begin, int64_t end, int worker)
{
    const direct_job *job = ctx;
    (void)worker;
    grad_weight_pass(job->p, job->p->transposed ? job->in : job->go, job->p->transposed ? job->go : job->in, job->gw,
                     begin, end);
}

/* ---------------------------------------------------------------- depthwise path (finite data)
 *
 * Groups of one channel on both sides (depthwise convolutions), one (n, c) plane at a time on a
 * zero-padded copy: with q = B position + padFront, tap k of S position o reads q = o*stride +
 * k*dilation, in [0, E) with E = (S size - 1) * stride + (kernel - 1) * dilation + 1 per dim, so
 * every tap is a whole S row against a row of the padded plane (no bounds in the inner loops,
 * which run along a row and vectorise):
 *   gradWeight[c, k]        = sum over n and S rows of dot(S row, padded B row at tap k)
 *   normal:     gradInput   = S rows times each tap added into a padded B plane, its interior
 *                             copied out (B positions no tap reaches get 0)
 *   transposed: gradInput   = sum over taps of the tap times the padded B row, into S's rows
 * The zeros of the padding stand for "no term", which only finite data allows (inf * 0 is NaN):
 * data with inf or NaN takes the exact passes above.  The threads take whole channels (all
 * images), so each result is summed by one thread in one order whatever their number.
 */

/* Depthwise: one S and one B channel per group. */
static bool depthwise(const conv_params *p)
{
    return p->cs == p->groups && p->cb == p->groups;
}

/* The padded extent E of dim d (see above). */
static int64_t padded_extent(const conv_params *p, int d)
{
    return (p->ss[d] - 1) * p->stride[d] + (p->ks[d] - 1) * p->dilation[d] + 1;
}

/* Floats of one padded plane. */
static int64_t padded_plane(const conv_params *p)
{
    return padded_extent(p, 0) * padded_extent(p, 1) * padded_extent(p, 2);
}

/* x[i] * y[i * ystep] added into eight interleaved float partial sums (a few rows' worth: the
 * caller folds them into double sums every FOLD_ROWS rows). */
enum { FOLD_ROWS = 16 };

static void dot_lanes(float *restrict lanes, const float *restrict x, const float *restrict y, int64_t ystep,
                      int64_t count)
{
    int64_t i = 0;
    if (ystep == 1) {
        for (; i + 8 <= count; i += 8) {
            for (int j = 0; j < 8; ++j) {
                lanes[j] += x[i + j] * y[i + j];
            }
        }
    }
    for (; i < count; ++i) {
        lanes[i & 7] += x[i] * y[i * ystep];
    }
}

/* dot_lanes(lanes, x, y, 1, count) and g[i] += a * x[i], in one pass over x. */
static void dot_axpy_lanes(float *restrict lanes, float *restrict g, const float *restrict x, const float *restrict y,
                           float a, int64_t count)
{
    int64_t i = 0;
    for (; i + 8 <= count; i += 8) {
        for (int j = 0; j < 8; ++j) {
            lanes[j] += x[i + j] * y[i + j];
            g[i + j] += a * x[i + j];
        }
    }
    for (; i < count; ++i) {
        lanes[i & 7] += x[i] * y[i];
        g[i] += a * x[i];
    }
}

/* acc[k] += the sum of lanes[k][0..8) in double, lanes[k] zeroed, for k in [0, taps). */
static void fold_lanes(double *acc, float (*lanes)[8], int64_t taps)
{
    for (int64_t k = 0; k < taps; ++k) {
        const float *l = lanes[k];
        acc[k] += (((double)l[0] + (double)l[1]) + ((double)l[2] + (double)l[3])) +
                  (((double)l[4] + (double)l[5]) + ((double)l[6] + (double)l[7]));
        for (int j = 0; j < 8; ++j) {
            lanes[k][j] = 0.0f;
        }
    }
}

/* Between a B plane and its padded copy (extents e): into the copy (zeros where B has no
 * element) or out of it (B positions outside the copy get 0). */
static void pad_plane(const conv_params *p, const int64_t e[3], float *b_img, float *padded, bool into_padded)
{
    const int64_t *bs = p->bs, *pad = p->pad;
    if (into_padded) {
        memset(padded, 0, (size_t)(e[0] * e[1] * e[2]) * sizeof(float));
    }
    /* the B columns [w_lo, w_hi) that lie inside the copy */
    int64_t w_lo = pad[2] > 0 ? 0 : -pad[2], w_hi = e[2] - pad[2] < bs[2] ? e[2] - pad[2] : bs[2];
    w_hi = w_hi < w_lo ? w_lo : w_hi;
    for (int64_t bd = 0; bd < bs[0]; ++bd) {
        int64_t qd = bd + pad[0];
        for (int64_t bh = 0; bh < bs[1]; ++bh) {
            int64_t qh = bh + pad[1];
            float *b_row = b_img + (bd * bs[1] + bh) * bs[2];
            bool inside = qd >= 0 && qd < e[0] && qh >= 0 && qh < e[1] && w_hi > w_lo;
            if (into_padded) {
                if (inside) {
                    memcpy(padded + (qd * e[1] + qh) * e[2] + w_lo + pad[2], b_row + w_lo,
                           (size_t)(w_hi - w_lo) * sizeof(float));
                }
            } else if (!inside) {
                memset(b_row, 0, (size_t)bs[2] * sizeof(float));
            } else {
                memset(b_row, 0, (size_t)w_lo * sizeof(float));
                memcpy(b_row + w_lo, padded + (qd * e[1] + qh) * e[2] + w_lo + pad[2],
                       (size_t)(w_hi - w_lo) * sizeof(float));
                memset(b_row + w_hi, 0, (size_t)(bs[2] - w_hi) * sizeof(float));
            }
        }
    }
}

typedef struct {
    const conv_params *p;
    const float *s, *b, *w; /* S (NULL if not needed), B (NULL if not needed), the weights */
    float *gi, *gw, *gb;    /* gradInput (NULL if not wanted), gradWeight, gradBias (idem) */
    const float *go;        /* gradOutput (for gradBias) */
    float *scratch;         /* per worker: two padded planes */
} depthwise_job;

/* One (n, c) plane: gradWeight's sums for the channel's taps into acc (through lanes), gradInput
 * into gi. */
static void depthwise_plane(const depthwise_job *job, int64_t n, int64_t c, float *padded_b, float *padded_g,
                            double *acc, float (*lanes)[8])
{
    const conv_params *p = job->p;
    const int64_t *ss = p->ss, *ks = p->ks, *st = p->stride, *dil = p->dilation;
    int64_t e[3] = {padded_extent(p, 0), padded_extent(p, 1), padded_extent(p, 2)};
    int64_t s_plane = ss[0] * ss[1] * ss[2], b_plane = p->bs[0] * p->bs[1] * p->bs[2], k_size = ks[0] * ks[1] * ks[2];
    int64_t plane = n * p->cs + c;
    const float *s_img = job->s != NULL ? job->s + plane * s_plane : NULL;
    const float *taps = job->w != NULL ? job->w + c * k_size : NULL;
    bool need_b = job->gw != NULL || (job->gi != NULL && p->transposed);
    bool scatter = job->gi != NULL && !p->transposed;
    if (need_b) {
        pad_plane(p, e, (float *)job->b + plane * b_plane, padded_b, true);
    }
    if (scatter) {
        memset(padded_g, 0, (size_t)(e[0] * e[1] * e[2]) * sizeof(float));
    }
    float *gi_img = job->gi != NULL && p->transposed ? job->gi + plane * s_plane : NULL;
    if (gi_img != NULL) {
        memset(gi_img, 0, (size_t)s_plane * sizeof(float));
    }
    int64_t width = ss[2], step = st[2];
    for (int64_t od = 0; od < ss[0]; ++od) {
        for (int64_t oh = 0; oh < ss[1]; ++oh) {
            const float *s_row = s_img != NULL ? s_img + (od * ss[1] + oh) * width : NULL;
            float *restrict gi_row = gi_img != NULL ? gi_img + (od * ss[1] + oh) * width : NULL;
            for (int64_t kd = 0; kd < ks[0]; ++kd) {
                int64_t qd = od * st[0] + kd * dil[0];
                for (int64_t kh = 0; kh < ks[1]; ++kh) {
                    int64_t row = (qd * e[1] + oh * st[1] + kh * dil[1]) * e[2];
                    for (int64_t kw = 0; kw < ks[2]; ++kw) {
                        int64_t k = (kd * ks[1] + kh) * ks[2] + kw, at = row + kw * dil[2];
                        if (job->gw != NULL && scatter && step == 1) {
                            /* both at once: one pass over the S row */
                            dot_axpy_lanes(lanes[k], padded_g + at, s_row, padded_b + at, taps[k], width);
                            continue;
                        }
                        if (job->gw != NULL) {
                            dot_lanes(lanes[k], s_row, padded_b + at, step, width);
                        }
                        if (gi_row != NULL) {
                            const float *restrict src = padded_b + at;
                            float tap = taps[k];
                            if (step == 1) {
                                for (int64_t x = 0; x < width; ++x) {
                                    gi_row[x] += tap * src[x];
                                }
                            } else {
                                for (int64_t x = 0; x < width; ++x) {
                                    gi_row[x] += tap * src[x * step];
                                }
                            }
                        }
                        if (scatter) {
                            float *restrict dst = padded_g + at;
                            const float *restrict src = s_row;
                            float tap = taps[k];
                            if (step == 1) {
                                for (int64_t x = 0; x < width; ++x) {
                                    dst[x] += tap * src[x];
                                }
                            } else {
                                for (int64_t x = 0; x < width; ++x) {
                                    dst[x * step] += tap * src[x];
                                }
                            }
                        }
                    }
                }
            }
            if (job->gw != NULL && (od * ss[1] + oh + 1) % FOLD_ROWS == 0) {
                fold_lanes(acc, lanes, k_size);
            }
        }
    }
    if (job->gw != NULL) {
        fold_lanes(acc, lanes, k_size);
    }
    if (scatter) {
        pad_plane(p, e, job->gi + plane * b_plane, padded_g, false);
    }
}

/* aclsim_parallel's share `worker`: the channels [begin, end), every image. */
static void depthwise_channels(void *ctx, int64_t begin, int64_t end, int worker)
{
    const depthwise_job *job = ctx;
    const conv_params *p = job->p;
    int64_t k_size = p->ks[0] * p->ks[1] * p->ks[2], plane = padded_plane(p);
    float *padded_b = job->scratch + (int64_t)worker * 2 * plane, *padded_g = padded_b + plane;
    double acc[DEPTHWISE_MAX_TAPS];
    float lanes[DEPTHWISE_MAX_TAPS][8];
    int64_t go_plane = p->transposed ? p->bs[0] * p->bs[1] * p->bs[2] : p->ss[0] * p->ss[1] * p->ss[2];
    for (int64_t c = begin; c < end; ++c) {
        for (int64_t k = 0; k < k_size; ++k) {
            acc[k] = 0.0;
            for (int j = 0; j < 8; ++j) {
                lanes[k][j] = 0.0f;
            }
        }
        double bias = 0.0;
        for (int64_t n = 0; n < p->n; ++n) {
            depthwise_plane(job, n, c, padded_b, padded_g, acc, lanes);
            if (job->gb != NULL) {
                /* as conv_kernel sums gradBias, while the plane is in cache */
                bias += sum(job->go + (n * p->cs + c) * go_plane, go_plane);
            }
        }
        for (int64_t k = 0; job->gw != NULL && k < k_size; ++k) {
            job->gw[c * k_size + k] = (float)acc[k];
        }
        if (job->gb != NULL) {
            job->gb[c] = (float)bias;
        }
    }
}

/* Partial sums of all_finite (independent lanes: vectorisable). */
enum { LANES = 16 };

/* No inf or NaN among x[0..count): x * 0 is 0 for finite x, NaN otherwise. */
static bool all_finite(const float *x, int64_t count)
{
    float lanes[LANES] = {0.0f};
    int64_t i = 0;
    for (; i + LANES <= count; i += LANES) {
        for (int l = 0; l < LANES; ++l) {
            lanes[l] += x[i + l] * 0.0f;
        }
    }
    for (; i < count; ++i) {
        lanes[0] += x[i] * 0.0f;
    }
    float sum = 0.0f;
    for (int l = 0; l < LANES; ++l) {
        sum += lanes[l];
    }
    return sum == 0.0f;
}

/* An input as contiguous float32: the tensor's own memory when it is already that (in_place,
 * decided in phase 1; the kernels only read their inputs, and write the outputs at the end),
 * else its copy converted into the workspace region `copy`. */
static float *operand(const conv_params *p, int which, const aclTensor *t, char *copy, const aclTensor *out,
                      void **staged)
{
    if (p->in_place[which] && out != NULL && aclsim_ops_views_overlap(t, out)) {
        /* gradInput is computed in place over it: read a copy */
        aclTensor copy_of;
        if (!aclsim_ops_stage(KERNEL, t, &copy_of, staged)) {
            return NULL;
        }
        return *staged;
    }
    if (p->in_place[which]) {
        return (float *)t->data + t->offset;
    }
    aclsim_ops_read_f32(t, (float *)copy);
    return (float *)copy;
}

static aclnnStatus conv_kernel(aclOpExecutor *ex, void *workspace)
{
    ACLSIM_OPS_TRY(aclsim_ops_kernel_check_memory(KERNEL, ex, 0x7u, 3));
    const conv_params *p = aclsim_executor_params(ex, sizeof *p);
    aclTensor *grad_input = aclsim_executor_output(ex, GRAD_INPUT);
    aclTensor *grad_weight = aclsim_executor_output(ex, GRAD_WEIGHT);
    aclTensor *grad_bias = aclsim_executor_output(ex, GRAD_BIAS);
    if (p->empty) {
        if (p->mask[GRAD_WEIGHT] && grad_weight != NULL) {
            aclsim_ops_fill_zero(grad_weight);
        }
        if (p->mask[GRAD_BIAS] && grad_bias != NULL) {
            aclsim_ops_fill_zero(grad_bias);
        }
        return ACLNN_SUCCESS;
    }

    char *base = workspace;
    const aclTensor *grad_output = aclsim_executor_input(ex, GRAD_OUTPUT);
    const aclTensor *in_place_out = p->grad_input_in_place ? grad_input : NULL;
    void *staged[3] = {NULL, NULL, NULL};
    float *go = operand(p, GRAD_OUTPUT, grad_output, base + p->at_grad_output, in_place_out, &staged[GRAD_OUTPUT]);
    float *in = NULL, *w = NULL;
    if (go != NULL && p->mask[GRAD_WEIGHT]) {
        in = operand(p, INPUT, aclsim_executor_input(ex, INPUT), base + p->at_input, in_place_out, &staged[INPUT]);
    }
    if (go != NULL && (in != NULL || !p->mask[GRAD_WEIGHT]) && p->mask[GRAD_INPUT]) {
        w = operand(p, WEIGHT, aclsim_executor_input(ex, WEIGHT), base + p->at_weight, in_place_out,
                    &staged[WEIGHT]);
    }
    if (go == NULL || (p->mask[GRAD_WEIGHT] && in == NULL) || (p->mask[GRAD_INPUT] && w == NULL)) {
        for (int i = 0; i < 3; ++i) {
            free(staged[i]);
        }
        return ACLSIM_OPS_KERNEL_FAULT;
    }

    float *gi = !p->mask[GRAD_INPUT] ? NULL
                : p->grad_input_in_place ? (float *)grad_input->data + grad_input->offset
                                         : (float *)(base + p->at_grad_input);
    float *gw = p->mask[GRAD_WEIGHT] ? (float *)(base + p->at_grad_weight) : NULL;
    bool finite = all_finite(go, aclsim_ops_numel(grad_output)) &&
                  (in == NULL || all_finite(in, aclsim_ops_numel(aclsim_executor_input(ex, INPUT)))) &&
                  (w == NULL || all_finite(w, aclsim_ops_numel(aclsim_executor_input(ex, WEIGHT))));
    float *gb = p->mask[GRAD_BIAS] ? (float *)(base + p->at_grad_bias) : NULL;
    bool bias_done = false;
    if (finite && p->depthwise && (gi != NULL || gw != NULL)) {
        depthwise_job job = {
            .p = p, .w = w, .gi = gi, .gw = gw, .gb = gb, .go = go, .scratch = (float *)(base + p->at_depthwise),
            .s = p->transposed ? in : go, .b = p->transposed ? go : in,
        };
        aclsim_parallel(p->cs, (int)p->depthwise_workers, depthwise_channels, &job);
        bias_done = true;
    } else if (finite && !direct_groups(p) && (gi != NULL || gw != NULL)) {
        /* S is gradOutput normally, input when transposed; B the other one. */
        gemm_passes(p, p->transposed ? in : go, p->transposed ? go : in, w, gi, gw, (float *)(base + p->at_cols),
                    (float *)(base + p->at_partial_weight), base + p->at_gemm);
    } else {
        /* inf or NaN: the exact terms only (no im2col zero standing for padding times inf); or
         * groups of one or two channels, whose products are too thin to be worth packing */
        direct_job job = {.p = p, .go = go, .in = in, .w = w, .gi = gi, .gw = gw};
        int64_t taps = p->ks[0] * p->ks[1] * p->ks[2], per_image = p->cs * (p->cb / p->groups) * taps * p->ss[0] *
                                                                     p->ss[1] * p->ss[2];
        if (gi != NULL) {
            memset(gi, 0, (size_t)aclsim_ops_numel(grad_input) * sizeof(float));
            aclsim_parallel(p->n, aclsim_workers(p->n, per_image), direct_images, &job);
        }
        if (gw != NULL) {
            aclsim_parallel(p->cs, aclsim_workers(p->cs, per_image / p->cs * p->n), direct_weights, &job);
        }
    }
    if (gi != NULL && !p->grad_input_in_place) {
        aclsim_ops_write_f32(grad_input, gi);
    }
    if (gw != NULL) {
        aclsim_ops_write_f32(grad_weight, gw);
    }
    if (gb != NULL) {
        int64_t channels = grad_output->view_dims[1];
        int64_t plane = aclsim_ops_numel(grad_output) / (p->n * channels);
        for (int64_t c = 0; c < channels && !bias_done; ++c) {
            double acc = 0.0;
            for (int64_t n = 0; n < p->n; ++n) {
                acc += sum(go + (n * channels + c) * plane, plane);
            }
            gb[c] = (float)acc;
        }
        aclsim_ops_write_f32(grad_bias, gb);
    }
    for (int i = 0; i < 3; ++i) {
        free(staged[i]);
    }
    return ACLNN_SUCCESS;
}

/* ---------------------------------------------------------------- phase 1 */

typedef struct {
    const aclTensor *grad_output, *input, *weight;
    const aclIntArray *bias_sizes, *stride, *padding, *dilation, *output_padding;
    bool transposed;
    int64_t groups;
    bool mask[3];
    const aclTensor *grads[3];
} conv_args;

static const char *const GRAD_NAMES[3] = {"gradInput", "gradWeight", "gradBias"};

static aclnnStatus check_format(const char *name, const aclTensor *t)
{
    aclFormat f = t->format;
    switch (t->ndim) {
    case 3:
        if (f == ACL_FORMAT_ND || f == ACL_FORMAT_NCL) {
            return ACLNN_SUCCESS;
        }
        return aclsim_ops_invalid(API, "%s is 3-D, its format must be ND or NCL, got %s", name,
                                  aclsim_ops_format_name(f));
    case 4:
        if (f == ACL_FORMAT_NCHW) {
            return ACLNN_SUCCESS;
        }
        return aclsim_ops_invalid(API, "%s is 4-D, its format must be NCHW, got %s", name, aclsim_ops_format_name(f));
    case 5:
        if (f == ACL_FORMAT_NCDHW) {
            return ACLNN_SUCCESS;
        }
        return aclsim_ops_invalid(API, "%s is 5-D, its format must be NCDHW, got %s", name,
                                  aclsim_ops_format_name(f));
    default:
        return aclsim_ops_invalid(API, "%s must be 3-D (NCL), 4-D (NCHW) or 5-D (NCDHW), got %llu-D shape %s", name,
                                  (unsigned long long)t->ndim, aclsim_ops_shape(t).s);
    }
}

/* Front and total padding of spatial dim d (a 4-element 2-D padding is [top, bottom, left, right]);
 * a total beyond int64 saturates, so the size checks that use it fail. */
static void spatial_padding(const aclIntArray *padding, int d, int64_t *front, int64_t *total)
{
    bool four = padding->size == 4;
    *front = padding->values[four ? 2 * d : d];
    if (!aclsim_ops_add(*front, padding->values[four ? 2 * d + 1 : d], total)) {
        *total = INT64_MAX;
    }
}

/*
 * The output padding of spatial dim d (array lengths already checked).  CANN documents no
 * meaning for a 4-element 2-D outputPadding; like the numpy backend, this simulator reads it as
 * [top, bottom, left, right] where only bottom and right can extend a transposed convolution's
 * output (top and left must be 0, checked in check_values).
 */
static int64_t spatial_output_padding(const aclIntArray *output_padding, int d)
{
    return output_padding->size == 4 ? output_padding->values[2 * d + 1] : output_padding->values[d];
}

/* Step 4 of CANN's checks (values), plus the documented groups and outputPadding limits. */
static aclnnStatus check_values(const conv_args *a)
{
    ACLSIM_OPS_TRY(aclsim_ops_check_array_min(API, "stride", a->stride, 1, false));
    ACLSIM_OPS_TRY(aclsim_ops_check_array_min(API, "padding", a->padding, 0, false));
    ACLSIM_OPS_TRY(aclsim_ops_check_array_min(API, "dilation", a->dilation, 1, false));
    const aclIntArray *op = a->output_padding;
    if (a->transposed) {
        ACLSIM_OPS_TRY(aclsim_ops_check_array_min(API, "outputPadding", op, 0, false));
        bool four = op->size == 4 && a->stride->size == 2;
        if (four && (op->values[0] != 0 || op->values[2] != 0)) {
            return aclsim_ops_invalid(API, "outputPadding [top, bottom, left, right] may only extend the bottom and "
                                      "right edges: top and left must be 0, got %s", aclsim_ops_ints(op).s);
        }
        /* Documented: outputPadding < stride (CANN's code checks it, or < dilation, for 3-D only).
         * Arrays of the wrong length are reported with the shape checks. */
        if (four || op->size == a->stride->size) {
            for (uint64_t d = 0; d < a->stride->size; ++d) {
                int64_t extra = four ? op->values[2 * d + 1] : op->values[d];
                if (extra >= a->stride->values[d]) {
                    return aclsim_ops_invalid(API, "when transposed, outputPadding must be < stride in every "
                                              "dimension, got outputPadding = %s, stride = %s",
                                              aclsim_ops_ints(op).s, aclsim_ops_ints(a->stride).s);
                }
            }
        }
    } else {
        for (uint64_t i = 0; i < op->size; ++i) {
            if (op->values[i] != 0) {
                return aclsim_ops_invalid(API, "when not transposed, outputPadding must be all 0, got %s",
                                          aclsim_ops_ints(op).s);
            }
        }
    }
    if (a->groups < 1 || a->groups > 65535) {
        return aclsim_ops_invalid(API, "groups must be in [1, 65535], got %lld", (long long)a->groups);
    }
    return ACLNN_SUCCESS;
}

static aclnnStatus check_param_lengths(const conv_args *a)
{
    uint64_t rank = a->input->ndim, spatial = rank - 2;
    const aclIntArray *arrays[] = {a->stride, a->dilation, a->padding, a->output_padding};
    const char *names[] = {"stride", "dilation", "padding", "outputPadding"};
    for (int i = 0; i < 4; ++i) {
        uint64_t size = arrays[i]->size;
        bool four = i >= 2 && rank == 4 && size == 4;
        if (size != spatial && !four) {
            return aclsim_ops_invalid(API, "%s must have %llu element%s%s for a %llu-D input, got %s", names[i],
                                      (unsigned long long)spatial, spatial > 1 ? "s" : "",
                                      i >= 2 && rank == 4 ? " (or 4)" : "",
                                      (unsigned long long)rank, aclsim_ops_ints(arrays[i]).s);
        }
    }
    return ACLNN_SUCCESS;
}

static aclnnStatus check_ranks(const conv_args *a)
{
    if (a->grad_output->ndim != a->input->ndim || a->input->ndim != a->weight->ndim) {
        return aclsim_ops_invalid(API, "gradOutput, input and weight must have the same rank, got %s, %s, %s",
                                  aclsim_ops_shape(a->grad_output).s, aclsim_ops_shape(a->input).s,
                                  aclsim_ops_shape(a->weight).s);
    }
    return ACLNN_SUCCESS;
}

/* Steps 7 and 8: shapes, lengths, channels and groups (non-empty input and weight). */
static aclnnStatus check_shapes(const conv_args *a)
{
    ACLSIM_OPS_TRY(check_ranks(a));
    if (aclsim_ops_is_empty(a->grad_output) || aclsim_ops_is_empty(a->weight)) {
        return aclsim_ops_invalid(API, "gradOutput and weight must not be empty, got %s and %s",
                                  aclsim_ops_shape(a->grad_output).s, aclsim_ops_shape(a->weight).s);
    }
    if (a->grads[GRAD_INPUT] != NULL) {
        ACLSIM_OPS_TRY(aclsim_ops_check_same_shape(API, "gradInput", a->grads[GRAD_INPUT], "input", a->input));
    }
    if (a->grads[GRAD_WEIGHT] != NULL) {
        ACLSIM_OPS_TRY(aclsim_ops_check_same_shape(API, "gradWeight", a->grads[GRAD_WEIGHT], "weight", a->weight));
    }
    const aclTensor *gb = a->grads[GRAD_BIAS];
    int64_t cout = a->grad_output->view_dims[1];
    if (gb != NULL && (gb->ndim != 1 || gb->view_dims[0] != cout)) {
        return aclsim_ops_invalid(API, "gradBias must be 1-D of length gradOutput.shape[1] = %lld, got %s",
                                  (long long)cout, aclsim_ops_shape(gb).s);
    }
    /* Not checked by CANN outside the empty path; the numpy backend, which has no gradBias
     * tensor, checks biasSizes in its place, so both backends do. */
    if (a->mask[GRAD_BIAS] && a->bias_sizes != NULL &&
        (a->bias_sizes->size != 1 || a->bias_sizes->values[0] != cout)) {
        return aclsim_ops_invalid(API, "biasSizes must be [gradOutput.shape[1]] = [%lld] (the shape of gradBias), "
                                  "got %s", (long long)cout, aclsim_ops_ints(a->bias_sizes).s);
    }
    ACLSIM_OPS_TRY(check_param_lengths(a));

    const aclTensor *x = a->transposed ? a->grad_output : a->input;
    const aclTensor *y = a->transposed ? a->input : a->grad_output;
    const char *x_name = a->transposed ? "gradOutput" : "input";
    const char *y_name = a->transposed ? "input" : "gradOutput";
    const int64_t *wd = a->weight->view_dims;
    if (y->view_dims[1] != wd[0]) {
        return aclsim_ops_invalid(API, "%s.shape[1] = %lld must equal weight.shape[0] = %lld", y_name,
                                  (long long)y->view_dims[1], (long long)wd[0]);
    }
    if (wd[1] == 0 || x->view_dims[1] % wd[1] != 0 || x->view_dims[1] / wd[1] != a->groups) {
        return aclsim_ops_invalid(API, "%s.shape[1] = %lld must equal weight.shape[1] * groups = %lld * %lld",
                                  x_name, (long long)x->view_dims[1], (long long)wd[1], (long long)a->groups);
    }
    if (x->view_dims[1] == a->groups && (y->view_dims[1] < a->groups || y->view_dims[1] % a->groups != 0)) {
        return aclsim_ops_invalid(API, "depthwise (%s.shape[1] == groups = %lld): %s.shape[1] = %lld must be a "
                                  "multiple of groups", x_name, (long long)a->groups, y_name,
                                  (long long)y->view_dims[1]);
    }
    /* Non-depthwise grouping needs weight.shape[0] divisible by groups as well. */
    if (wd[0] % a->groups != 0) {
        return aclsim_ops_invalid(API, "weight.shape[0] = %lld must be divisible by groups = %lld", (long long)wd[0],
                                  (long long)a->groups);
    }
    return ACLNN_SUCCESS;
}

/* The padded input holds the dilated kernel along spatial dim d (total: both paddings). */
static aclnnStatus check_room(const conv_args *a, int d, int64_t in, int64_t total, int64_t k)
{
    int64_t span, padded;
    if (!aclsim_ops_mul(a->dilation->values[d], k - 1, &span) || !aclsim_ops_add(span, 1, &span) ||
        !aclsim_ops_add(in, total, &padded)) {
        return aclsim_ops_invalid(API, "input spatial dim %d: (kernel - 1) * dilation + 1 or (in + padding) overflows "
                                  "int64 (input %s, weight %s, padding = %s, dilation = %s)", d,
                                  aclsim_ops_shape(a->input).s, aclsim_ops_shape(a->weight).s,
                                  aclsim_ops_ints(a->padding).s, aclsim_ops_ints(a->dilation).s);
    }
    if (padded < span) {
        return aclsim_ops_invalid(API, "input spatial dim %d: (in + padding) = %lld + %lld must be >= "
                                  "(kernel - 1) * dilation + 1 = %lld (weight %s, dilation = %s)", d,
                                  (long long)in, (long long)total, (long long)span,
                                  aclsim_ops_shape(a->weight).s, aclsim_ops_ints(a->dilation).s);
    }
    return ACLNN_SUCCESS;
}

/* Step 9 for every rank: the output size of the forward convolution (CANN checks 3-D and
 * transposed 1-D/2-D; the documentation states it for all). */
static aclnnStatus check_spatial(const conv_args *a)
{
    if (a->grad_output->view_dims[0] != a->input->view_dims[0]) {
        return aclsim_ops_invalid(API, "gradOutput.shape[0] = %lld must equal input.shape[0] = %lld",
                                  (long long)a->grad_output->view_dims[0], (long long)a->input->view_dims[0]);
    }
    int spatial = (int)a->input->ndim - 2;
    for (int d = 0; d < spatial; ++d) {
        int64_t in = a->input->view_dims[d + 2], out = a->grad_output->view_dims[d + 2];
        int64_t k = a->weight->view_dims[d + 2];
        int64_t s = a->stride->values[d], dil = a->dilation->values[d];
        int64_t front, total, span, expected;
        spatial_padding(a->padding, d, &front, &total);
        bool ok = aclsim_ops_mul(dil, k - 1, &span) && aclsim_ops_add(span, 1, &span);
        if (a->transposed) {
            /* CANN's form (3-D and transposed 1-D/2-D): with X = gradOutput, Y = input,
             * room = X - outputPadding + padding - span >= 0 and Y == room / stride + 1.  It
             * accepts a gradOutput up to stride - 1 longer than the transposed output size;
             * those positions take part in nothing but gradBias. */
            int64_t op = spatial_output_padding(a->output_padding, d), room;
            ok = ok && aclsim_ops_add(out, -op, &room) && aclsim_ops_add(room, total, &room) &&
                 aclsim_ops_add(room, -span, &room);
            if (!ok || room < 0 || in != room / s + 1) {
                ok = ok && aclsim_ops_mul(in - 1, s, &expected) && aclsim_ops_add(expected, -total, &expected) &&
                     aclsim_ops_add(expected, span, &expected) && aclsim_ops_add(expected, op, &expected);
                return aclsim_ops_invalid(API, "transposed: gradOutput spatial dim %d = %lld does not fit input "
                                          "spatial dim %lld: gradOutput should be (input - 1) * stride - padding + "
                                          "dilation * (kernel - 1) + outputPadding + 1 = %lld (input %s, weight %s, "
                                          "stride = %s, padding = %s, dilation = %s, outputPadding = %s)", d,
                                          (long long)out, (long long)in, ok ? (long long)expected : -1LL,
                                          aclsim_ops_shape(a->input).s, aclsim_ops_shape(a->weight).s,
                                          aclsim_ops_ints(a->stride).s, aclsim_ops_ints(a->padding).s,
                                          aclsim_ops_ints(a->dilation).s, aclsim_ops_ints(a->output_padding).s);
            }
            continue;
        }
        int64_t room;
        ACLSIM_OPS_TRY(check_room(a, d, in, total, k));
        room = in + total - span;
        expected = room / s + 1;
        if (out != expected) {
            return aclsim_ops_invalid(API, "gradOutput spatial dim %d = %lld must be (in + padding - (kernel - 1) * "
                                      "dilation - 1) / stride + 1 = %lld (input %s, weight %s, stride = %s, "
                                      "padding = %s, dilation = %s)", d, (long long)out, (long long)expected,
                                      aclsim_ops_shape(a->input).s, aclsim_ops_shape(a->weight).s,
                                      aclsim_ops_ints(a->stride).s, aclsim_ops_ints(a->padding).s,
                                      aclsim_ops_ints(a->dilation).s);
        }
    }
    return ACLNN_SUCCESS;
}

/* Step 10: the rules for an empty input or weight (Atlas A2/A3). */
static aclnnStatus check_empty(const conv_args *a)
{
    if (a->mask[GRAD_BIAS]) {
        if (a->bias_sizes == NULL) {
            return aclsim_ops_invalid(API, "biasSizes must be given when outputMask[2] is True and input or weight is "
                                      "empty");
        }
        if (a->bias_sizes->size != 1) {
            return aclsim_ops_invalid(API, "biasSizes must have 1 element, got %s", aclsim_ops_ints(a->bias_sizes).s);
        }
        int64_t expected = a->transposed ? a->weight->view_dims[1] * a->groups : a->grad_output->view_dims[1];
        if (a->bias_sizes->values[0] != expected) {
            return aclsim_ops_invalid(API, "biasSizes must be [%s] = [%lld], got %s",
                                      a->transposed ? "weight.shape[1] * groups" : "gradOutput.shape[1]",
                                      (long long)expected, aclsim_ops_ints(a->bias_sizes).s);
        }
    }
    if (a->mask[GRAD_INPUT] && a->input->view_dims[0] != 0 && a->input->view_dims[1] != 0) {
        return aclsim_ops_invalid(API, "with an empty weight or input and outputMask[0], input N or C must be 0, "
                                  "got input %s", aclsim_ops_shape(a->input).s);
    }
    /* Not checked by CANN on this path; the rules below compare dims across the three. */
    ACLSIM_OPS_TRY(check_ranks(a));
    ACLSIM_OPS_TRY(check_param_lengths(a));

    const aclTensor *x = a->transposed ? a->grad_output : a->input;
    const int64_t *wd = a->weight->view_dims;
    if (wd[0] % a->groups != 0) {
        return aclsim_ops_invalid(API, "weight.shape[0] = %lld must be divisible by groups = %lld", (long long)wd[0],
                                  (long long)a->groups);
    }
    bool skip_channels = a->transposed && a->input->view_dims[0] == 0;
    if (!skip_channels && (x->view_dims[1] != 0 || wd[1] != 0) &&
        (wd[1] == 0 || x->view_dims[1] % wd[1] != 0 || x->view_dims[1] / wd[1] != a->groups)) {
        return aclsim_ops_invalid(API, "%s.shape[1] = %lld must equal weight.shape[1] * groups = %lld * %lld",
                                  a->transposed ? "gradOutput" : "input", (long long)x->view_dims[1],
                                  (long long)wd[1], (long long)a->groups);
    }
    if (a->transposed) {
        if (wd[0] <= 0 || wd[0] != a->input->view_dims[1]) {
            return aclsim_ops_invalid(API, "transposed: weight.shape[0] = %lld must be > 0 and equal input.shape[1] "
                                      "= %lld", (long long)wd[0], (long long)a->input->view_dims[1]);
        }
    } else {
        int spatial = (int)a->input->ndim - 2;
        for (int d = 0; d < spatial; ++d) {
            int64_t in = a->input->view_dims[d + 2], k = wd[d + 2], front, total;
            spatial_padding(a->padding, d, &front, &total);
            ACLSIM_OPS_TRY(check_room(a, d, in, total, k));
        }
    }
    /* The outputs about to be zero-filled (or left alone) must have the shapes they stand for. */
    if (a->mask[GRAD_INPUT]) {
        ACLSIM_OPS_TRY(aclsim_ops_check_same_shape(API, "gradInput", a->grads[GRAD_INPUT], "input", a->input));
    }
    if (a->mask[GRAD_WEIGHT]) {
        ACLSIM_OPS_TRY(aclsim_ops_check_same_shape(API, "gradWeight", a->grads[GRAD_WEIGHT], "weight", a->weight));
    }
    const aclTensor *gb = a->grads[GRAD_BIAS];
    if (a->mask[GRAD_BIAS] && (gb->ndim != 1 || gb->view_dims[0] != a->bias_sizes->values[0])) {
        return aclsim_ops_invalid(API, "gradBias must have shape %s (biasSizes), got %s",
                                  aclsim_ops_ints(a->bias_sizes).s, aclsim_ops_shape(gb).s);
    }
    return ACLNN_SUCCESS;
}

static aclnnStatus check_params(conv_args *a, const aclBoolArray *outputMask, int8_t cubeMathType, bool *empty)
{
    static const aclDataType dtypes[] = {ACLSIM_DTYPES_ConvolutionBackward_DTYPES}; /* the one table */

    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "gradOutput", a->grad_output));
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "input", a->input));
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "weight", a->weight));
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "stride", a->stride));
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "padding", a->padding));
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "dilation", a->dilation));
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "outputPadding", a->output_padding));
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "outputMask", outputMask));
    if (outputMask->size != 3) {
        return aclsim_ops_nullptr(API, "outputMask must have 3 elements (gradInput, gradWeight, gradBias), got %llu",
                                  (unsigned long long)outputMask->size);
    }
    for (int i = 0; i < 3; ++i) {
        a->mask[i] = outputMask->values[i];
        if (a->mask[i] && a->grads[i] == NULL) {
            return aclsim_ops_nullptr(API, "%s must not be NULL when outputMask[%d] is true", GRAD_NAMES[i], i);
        }
    }

    ACLSIM_OPS_TRY(aclsim_ops_check_dtype(API, "gradOutput", a->grad_output, dtypes, ACLSIM_DTYPES_COUNT(dtypes)));
    ACLSIM_OPS_TRY(aclsim_ops_check_dtype(API, "input", a->input, dtypes, ACLSIM_DTYPES_COUNT(dtypes)));
    ACLSIM_OPS_TRY(aclsim_ops_check_dtype(API, "weight", a->weight, dtypes, ACLSIM_DTYPES_COUNT(dtypes)));
    /* The dtype each gradient must share (documented; CANN's code compares on Ascend 950). */
    const aclTensor *sources[3] = {a->input, a->weight, a->grad_output};
    const char *source_names[3] = {"input", "weight", "gradOutput"};
    for (int i = 0; i < 3; ++i) {
        if (a->grads[i] != NULL) {
            ACLSIM_OPS_TRY(aclsim_ops_check_dtype(API, GRAD_NAMES[i], a->grads[i], dtypes, ACLSIM_DTYPES_COUNT(dtypes)));
            ACLSIM_OPS_TRY(aclsim_ops_check_same_dtype(API, GRAD_NAMES[i], a->grads[i], source_names[i], sources[i]));
        }
    }

    ACLSIM_OPS_TRY(check_format("gradOutput", a->grad_output));
    ACLSIM_OPS_TRY(check_format("input", a->input));
    ACLSIM_OPS_TRY(check_format("weight", a->weight));
    for (int i = 0; i < 2; ++i) {
        if (a->grads[i] != NULL) {
            ACLSIM_OPS_TRY(check_format(GRAD_NAMES[i], a->grads[i]));
        }
    }
    if (!a->transposed && a->grads[GRAD_BIAS] != NULL && a->grads[GRAD_BIAS]->format != ACL_FORMAT_ND) {
        return aclsim_ops_invalid(API, "gradBias format must be ND, got %s",
                                  aclsim_ops_format_name(a->grads[GRAD_BIAS]->format));
    }

    ACLSIM_OPS_TRY(check_values(a));
    if (cubeMathType < 0 || cubeMathType > 3) {
        return aclsim_ops_invalid(API, "cubeMathType must be 0 (KEEP_DTYPE), 1 (ALLOW_FP32_DOWN_PRECISION), "
                                  "2 (USE_FP16) or 3 (USE_HF32), got %d", (int)cubeMathType);
    }

    *empty = aclsim_ops_is_empty(a->input) || aclsim_ops_is_empty(a->weight);
    if (*empty) {
        return check_empty(a);
    }
    ACLSIM_OPS_TRY(check_shapes(a));
    return check_spatial(a);
}

/* The S/B description of a validated, non-empty call (see the top of the file). */
static void describe(const conv_args *a, conv_params *p)
{
    const aclTensor *s = a->transposed ? a->input : a->grad_output;
    const aclTensor *b = a->transposed ? a->grad_output : a->input;
    int spatial = (int)a->input->ndim - 2;
    p->transposed = a->transposed;
    p->n = a->input->view_dims[0];
    p->cs = a->weight->view_dims[0];
    p->cb = a->weight->view_dims[1] * a->groups;
    p->groups = a->groups;
    for (int d = 0; d < 3; ++d) {
        p->ss[d] = p->bs[d] = p->ks[d] = p->stride[d] = p->dilation[d] = 1;
        p->pad[d] = 0;
    }
    for (int j = 0; j < spatial; ++j) {
        int d = 3 - spatial + j;
        int64_t total;
        p->ss[d] = s->view_dims[j + 2];
        p->bs[d] = b->view_dims[j + 2];
        p->ks[d] = a->weight->view_dims[j + 2];
        p->stride[d] = a->stride->values[j];
        p->dilation[d] = a->dilation->values[j];
        spatial_padding(a->padding, j, &p->pad[d], &total);
    }
}

aclnnStatus aclnnConvolutionBackwardGetWorkspaceSize(const aclTensor *gradOutput, const aclTensor *input,
                                                     const aclTensor *weight, const aclIntArray *biasSizes,
                                                     const aclIntArray *stride, const aclIntArray *padding,
                                                     const aclIntArray *dilation, bool transposed,
                                                     const aclIntArray *outputPadding, int groups,
                                                     const aclBoolArray *outputMask, int8_t cubeMathType,
                                                     aclTensor *gradInput, aclTensor *gradWeight, aclTensor *gradBias,
                                                     uint64_t *workspaceSize, aclOpExecutor **executor)
{
    ACLSIM_OPS_CHECK_HANDLES(API, gradOutput, input, weight, biasSizes, stride, padding, dilation, outputPadding,
                             outputMask, gradInput, gradWeight, gradBias);
    conv_args a = {
        .grad_output = gradOutput, .input = input, .weight = weight, .bias_sizes = biasSizes, .stride = stride,
        .padding = padding, .dilation = dilation, .output_padding = outputPadding, .transposed = transposed,
        .groups = groups, .grads = {gradInput, gradWeight, gradBias},
    };
    bool empty = false;
    ACLSIM_OPS_TRY(check_params(&a, outputMask, cubeMathType, &empty));
    /* CANN does not check these two and would crash on NULL. */
    if (workspaceSize == NULL || executor == NULL) {
        return aclsim_ops_nullptr(API, "%s must not be NULL", workspaceSize == NULL ? "workspaceSize" : "executor");
    }

    conv_params p;
    memset(&p, 0, sizeof p);
    p.empty = empty;
    for (int i = 0; i < 3; ++i) {
        p.mask[i] = a.mask[i];
    }
    const aclTensor *inputs[3] = {NULL, NULL, NULL};
    const aclTensor *outputs[3] = {NULL, NULL, NULL};

    if (empty) {
        /* Zeros into gradWeight and gradBias; gradInput is empty itself. */
        bool work = false;
        for (int i = GRAD_WEIGHT; i <= GRAD_BIAS; ++i) {
            if (a.mask[i] && !aclsim_ops_is_empty(a.grads[i])) {
                ACLSIM_OPS_TRY(aclsim_ops_check_memory(API, GRAD_NAMES[i], a.grads[i]));
                outputs[i] = a.grads[i];
                work = true;
            }
        }
        return aclsim_ops_finish(KERNEL, work ? conv_kernel : aclsim_ops_noop_kernel, 0, &p, sizeof p, inputs, 3,
                                 outputs, 3, workspaceSize, executor);
    }
    if (!a.mask[0] && !a.mask[1] && !a.mask[2]) {
        return aclsim_ops_finish(KERNEL, aclsim_ops_noop_kernel, 0, NULL, 0, NULL, 0, NULL, 0, workspaceSize,
                                 executor);
    }

    inputs[GRAD_OUTPUT] = gradOutput;
    inputs[INPUT] = input;
    inputs[WEIGHT] = weight;
    ACLSIM_OPS_TRY(aclsim_ops_check_memory(API, "gradOutput", gradOutput));
    ACLSIM_OPS_TRY(aclsim_ops_check_memory(API, "input", input));
    ACLSIM_OPS_TRY(aclsim_ops_check_memory(API, "weight", weight));
    for (int i = 0; i < 3; ++i) {
        if (a.mask[i]) {
            ACLSIM_OPS_TRY(aclsim_ops_check_memory(API, GRAD_NAMES[i], a.grads[i]));
            outputs[i] = a.grads[i];
        }
    }

    describe(&a, &p);
    uint64_t go_n = (uint64_t)aclsim_ops_numel(gradOutput), in_n = (uint64_t)aclsim_ops_numel(input);
    uint64_t w_n = (uint64_t)aclsim_ops_numel(weight);
    uint64_t at = 0;
    const aclTensor *operands[3] = {gradOutput, input, weight};
    for (int i = 0; i < 3; ++i) {
        p.in_place[i] = operands[i]->dtype == ACL_FLOAT && aclsim_ops_is_contiguous(operands[i]);
    }
    p.at_grad_output = at;
    at += p.in_place[GRAD_OUTPUT] ? 0 : aclsim_ops_region(go_n, sizeof(float));
    p.at_input = at;
    at += a.mask[GRAD_WEIGHT] && !p.in_place[INPUT] ? aclsim_ops_region(in_n, sizeof(float)) : 0;
    p.at_weight = at;
    at += a.mask[GRAD_INPUT] && !p.in_place[WEIGHT] ? aclsim_ops_region(w_n, sizeof(float)) : 0;
    p.grad_input_in_place = a.mask[GRAD_INPUT] && gradInput->dtype == ACL_FLOAT && aclsim_ops_is_contiguous(gradInput);
    p.at_grad_input = at;
    at += a.mask[GRAD_INPUT] && !p.grad_input_in_place ? aclsim_ops_region(in_n, sizeof(float)) : 0;
    p.at_grad_weight = at;
    at += a.mask[GRAD_WEIGHT] ? aclsim_ops_region(w_n, sizeof(float)) : 0;
    p.at_grad_bias = at;
    at += a.mask[GRAD_BIAS] ? aclsim_ops_region((uint64_t)gradOutput->view_dims[1], sizeof(float)) : 0;
    int64_t rows = p.cb / p.groups * p.ks[0] * p.ks[1] * p.ks[2], s_plane = p.ss[0] * p.ss[1] * p.ss[2];
    p.workers = gemm_workers(p.n);
    /* One image: the threads share each product instead of taking images. */
    p.gemm_threads = p.workers == 1 ? aclsim_cores() : 1;
    p.chunk = COLS_BYTES / (int64_t)sizeof(float) / rows * (p.gemm_threads > 1 ? GEMM_SHARED_CHUNK : 1);
    p.chunk = p.chunk < MIN_CHUNK ? MIN_CHUNK : p.chunk;
    p.chunk = p.chunk > s_plane ? s_plane : p.chunk;
    p.at_cols = at;
    bool gemm = a.mask[GRAD_INPUT] || a.mask[GRAD_WEIGHT];
    at += gemm ? aclsim_ops_region((uint64_t)(p.workers * rows * p.chunk), sizeof(float)) : 0;
    /* The packing space of the largest of the three products gemm_images runs. */
    int64_t cs_group = p.cs / p.groups;
    int threads = (int)p.gemm_threads;
    uint64_t shapes[3] = {aclsim_gemm_workspace_size(cs_group, rows, p.chunk, threads),
                          aclsim_gemm_workspace_size(cs_group, p.chunk, rows, threads),
                          aclsim_gemm_workspace_size(rows, p.chunk, cs_group, threads)};
    p.gemm_bytes = 0;
    for (int i = 0; gemm && i < 3; ++i) {
        uint64_t bytes = aclsim_ops_region(shapes[i], 1);
        p.gemm_bytes = bytes > p.gemm_bytes ? bytes : p.gemm_bytes;
    }
    p.at_gemm = at;
    at += (uint64_t)p.workers * p.gemm_bytes;
    p.at_partial_weight = at;
    at += a.mask[GRAD_WEIGHT] ? aclsim_ops_region((uint64_t)((p.workers - 1) * w_n), sizeof(float)) : 0;
    /* The depthwise path, when its padded planes stay within a few times the planes themselves
     * (a large stride or dilation could make them far larger). */
    int64_t taps = p.ks[0] * p.ks[1] * p.ks[2], b_plane = p.bs[0] * p.bs[1] * p.bs[2];
    double padded = (double)padded_extent(&p, 0) * (double)padded_extent(&p, 1) * (double)padded_extent(&p, 2);
    p.depthwise = gemm && depthwise(&p) && taps <= DEPTHWISE_MAX_TAPS &&
                  padded <= 4.0 * (double)(s_plane + b_plane) + 4096.0;
    p.depthwise_workers = p.depthwise ? aclsim_workers(p.cs, p.n * taps * s_plane) : 0;
    p.at_depthwise = at;
    at += p.depthwise ? aclsim_ops_region((uint64_t)(p.depthwise_workers * 2 * (int64_t)padded), sizeof(float)) : 0;
    return aclsim_ops_finish(KERNEL, conv_kernel, at, &p, sizeof p, inputs, 3, outputs, 3, workspaceSize, executor);
}

aclnnStatus aclnnConvolutionBackward(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                     const aclrtStream stream)
{
    return aclsim_launch(KERNEL, workspace, workspaceSize, executor, stream);
}
