/*
 * The lowering every convolution operator shares (the convolution gradients, Convolution): one
 * convolution between S, the tensor on its "few positions" side, and B, the other one, with
 * weight (S channels, B channels / groups, k...); tap k links S position o to B position
 * o*stride - padFront + k*dilation.  `transposed` says which way gradInput goes:
 *   transposed:  gradInput (S's shape) = gather of the source (B) through the taps
 *                (a convolution's forward output; a transposed convolution's gradInput)
 *   otherwise:   gradInput (B's shape) = scatter of the source (S) through the taps
 *                (a convolution's gradInput; a transposed convolution's forward output)
 *   gradWeight[a, bl, k] = sum over n, o of S[n, a, o] * B[n, b, pos(o, k)]
 *   gradBias[c] = sum of the source over n and space
 * and the forward adds a bias per output channel.  Paths: im2col + the shared matrix product
 * (kernels/gemm.h), a depthwise path, and direct passes (term by term: data with inf or NaN).
 */

#include <stdlib.h>
#include <string.h>

#include "../kernels/gemm.h"
#include "../kernels/parallel.h"
#include "conv_lowering.h"

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

/* Tap k (row-major over the kernel's (d, h, w) taps) of p: per dim its B offset
 * (k * dilation - pad) and the S positions [lo, hi) whose B position lies inside B. */
typedef struct {
    int64_t off[3], lo[3], hi[3];
} conv_tap;

static conv_tap tap_of(const aclsim_conv_params *p, int64_t k)
{
    conv_tap t;
    int64_t kk[3] = {k / (p->ks[1] * p->ks[2]), k / p->ks[2] % p->ks[1], k % p->ks[2]};
    for (int d = 0; d < 3; ++d) {
        t.off[d] = kk[d] * p->dilation[d] - p->pad[d];
        tap_range(p->ss[d], p->bs[d], p->stride[d], t.off[d], &t.lo[d], &t.hi[d]);
    }
    return t;
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
static void grad_input_pass(const aclsim_conv_params *p, float *sbuf, float *bbuf, const float *w, bool into_b, int64_t n0,
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
                for (int64_t k = 0; k < k_size; ++k) {
                    conv_tap t = tap_of(p, k);
                    if (t.hi[2] <= t.lo[2]) {
                        continue;
                    }
                    for (int64_t od = t.lo[0]; od < t.hi[0]; ++od) {
                        int64_t pd = od * st[0] + t.off[0];
                        for (int64_t oh = t.lo[1]; oh < t.hi[1]; ++oh) {
                            int64_t ph = oh * st[1] + t.off[1];
                            float *s_row = s_img + (od * ss[1] + oh) * ss[2] + t.lo[2];
                            float *b_row = b_img + (pd * bs[1] + ph) * bs[2] + t.lo[2] * st[2] + t.off[2];
                            if (into_b) {
                                axpy(b_row, st[2], s_row, t.hi[2] - t.lo[2], taps[k]);
                            } else {
                                gather_axpy(s_row, b_row, st[2], t.hi[2] - t.lo[2], taps[k]);
                            }
                        }
                    }
                }
            }
        }
    }
}

static void grad_weight_pass(const aclsim_conv_params *p, const float *sbuf, const float *bbuf, float *gw, int64_t a0,
                             int64_t a1)
{
    const int64_t *ss = p->ss, *bs = p->bs, *ks = p->ks, *st = p->stride;
    int64_t s_plane = ss[0] * ss[1] * ss[2], b_plane = bs[0] * bs[1] * bs[2], k_size = ks[0] * ks[1] * ks[2];
    int64_t cs_group = p->cs / p->groups, cb_group = p->cb / p->groups;
    for (int64_t a = a0; a < a1; ++a) {
        int64_t g = a / cs_group;
        for (int64_t bl = 0; bl < cb_group; ++bl) {
            int64_t b = g * cb_group + bl;
            for (int64_t k = 0; k < k_size; ++k) {
                conv_tap t = tap_of(p, k);
                double acc = 0.0;
                for (int64_t n = 0; n < p->n && t.hi[2] > t.lo[2]; ++n) {
                    const float *s_img = sbuf + (n * p->cs + a) * s_plane;
                    const float *b_img = bbuf + (n * p->cb + b) * b_plane;
                    for (int64_t od = t.lo[0]; od < t.hi[0]; ++od) {
                        int64_t pd = od * st[0] + t.off[0];
                        for (int64_t oh = t.lo[1]; oh < t.hi[1]; ++oh) {
                            int64_t ph = oh * st[1] + t.off[1];
                            acc += dot(s_img + (od * ss[1] + oh) * ss[2] + t.lo[2],
                                       b_img + (pd * bs[1] + ph) * bs[2] + t.lo[2] * st[2] + t.off[2], st[2],
                                       t.hi[2] - t.lo[2]);
                        }
                    }
                }
                gw[(a * cb_group + bl) * k_size + k] = (float)acc;
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
static void im2col_rows(const aclsim_conv_params *p, int64_t o0, int64_t o1, float *b_img, float *rows, int64_t ldr,
                        bool scatter)
{
    const int64_t *ss = p->ss, *bs = p->bs, *ks = p->ks, *st = p->stride;
    /* o0 as (od, oh, ow), once: the runs below walk on without dividing */
    int64_t ow0 = o0 % ss[2], oh0 = o0 / ss[2] % ss[1], od0 = o0 / (ss[2] * ss[1]);
    for (int64_t k = 0; k < ks[0] * ks[1] * ks[2]; ++k) {
        conv_tap t = tap_of(p, k);
        int64_t off_d = t.off[0], d_lo = t.lo[0], d_hi = t.hi[0], off_h = t.off[1], h_lo = t.lo[1],
                h_hi = t.hi[1], off_w = t.off[2], w_lo = t.lo[2], w_hi = t.hi[2];
        float *row = rows + k * ldr;
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

/* The lowering of one chunk (im2col_rows for each of a group's B channels): channel bl's rows of
 * cols and its B image are its own, so the channels can go to different threads and give the
 * same bits.  With one image per call the matrix products use the threads (p->gemm_threads) but
 * the lowering and the scatter back ran on one (conv3d unet k3 (1,32,32,32,32): 19% of the
 * call's CPU); a chunk of cols of at least LOWER_SHARED floats shares them out too. */
#define LOWER_SHARED ((int64_t)1 << 18)
typedef struct {
    const aclsim_conv_params *p;
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

static void lower_chunk(const aclsim_conv_params *p, int threads, int64_t o0, int64_t o1, float *b_first, float *cols,
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
    const aclsim_conv_params *p;
    const float *s, *w;
    float *b, *gi, *gw, *cols;
    void *pack;                 /* the matrix products' packing space */
    int64_t n0, n1;             /* the images [n0, n1) */
} gemm_part;

/* One tap that links each S position to the same B position (a 1x1 kernel, stride 1, no
 * padding): the lowered chunk of B would be B's own rows, so the gather products read B where
 * it is.  (The scatter of a gradInput keeps its pass: 0 + x is not x for x = -0.) */
static bool pointwise(const aclsim_conv_params *p)
{
    for (int d = 0; d < 3; ++d) {
        if (p->ks[d] != 1 || p->stride[d] != 1 || p->pad[d] != 0 || p->ss[d] != p->bs[d]) {
            return false;
        }
    }
    return true;
}

/* The gemm path on one part's images; gw receives that part's sum. */
static void gemm_images(const gemm_part *part)
{
    const aclsim_conv_params *p = part->p;
    const float *s = part->s, *w = part->w;
    float *b = part->b, *gi = part->gi, *gw = part->gw, *cols = part->cols;
    void *pack = part->pack;
    int threads = (int)p->gemm_threads;
    int64_t taps = p->ks[0] * p->ks[1] * p->ks[2], cs_group = p->cs / p->groups, cb_group = p->cb / p->groups;
    int64_t rows = cb_group * taps, s_plane = p->ss[0] * p->ss[1] * p->ss[2];
    int64_t b_plane = p->bs[0] * p->bs[1] * p->bs[2], chunk = p->chunk;
    bool direct_rows = pointwise(p);
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
                    /* The chunk's rows (one per B channel and tap): lowered into cols, or B's own
                     * (a width of 1 keeps cols: its unit column step picks the products' one-row
                     * path, whose sums may go in another order) */
                    const float *lowered = cols;
                    int64_t step = width;
                    if (direct_rows && width > 1) {
                        lowered = b + b_first + o0;
                        step = b_plane;
                    } else {
                        lower_chunk(p, threads, o0, o1, b + b_first, cols, false);
                    }
                    if (gw != NULL) {
                        aclsim_gemm_args prod = {
                            .m = cs_group, .n = rows, .k = width, .a = s + s_first + o0, .a_rs = s_plane, .a_cs = 1,
                            .b = lowered, .b_rs = 1, .b_cs = step, .c = gw + g * cs_group * rows, .ldc = rows,
                            .accumulate = true,
                        };
                        aclsim_gemm_f32(&prod, threads, pack);
                    }
                    if (gi != NULL && p->transposed) {
                        aclsim_gemm_args prod = {
                            .m = cs_group, .n = width, .k = rows, .a = w_group, .a_rs = rows, .a_cs = 1, .b = lowered,
                            .b_rs = step, .b_cs = 1, .c = gi + s_first + o0, .ldc = s_plane, .accumulate = false,
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
static void gemm_passes(const aclsim_conv_params *p, const float *s, float *b, const float *w, float *gi, float *gw,
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
static bool direct_groups(const aclsim_conv_params *p)
{
    return p->cs / p->groups <= 2 && p->cb / p->groups <= 2;
}

/* The direct passes, on threads: gradInput over images, gradWeight over S channels (each
 * element of either is summed by one thread, in the same order as on one). */
typedef struct {
    const aclsim_conv_params *p;
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
static bool depthwise(const aclsim_conv_params *p)
{
    return p->cs == p->groups && p->cb == p->groups;
}

/* The padded extent E of dim d (see above). */
static int64_t padded_extent(const aclsim_conv_params *p, int d)
{
    return (p->ss[d] - 1) * p->stride[d] + (p->ks[d] - 1) * p->dilation[d] + 1;
}

/* Floats of one padded plane. */
static int64_t padded_plane(const aclsim_conv_params *p)
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
static void pad_plane(const aclsim_conv_params *p, const int64_t e[3], float *b_img, float *padded, bool into_padded)
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
    const aclsim_conv_params *p;
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
    const aclsim_conv_params *p = job->p;
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
    const aclsim_conv_params *p = job->p;
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
                /* as aclsim_conv_kernel sums gradBias, while the plane is in cache */
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
ACLSIM_AVX2_CLONES static bool all_finite(const float *x, int64_t count)
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
static float *operand(const aclsim_conv_params *p, int which, const aclTensor *t, char *copy, const aclTensor *out,
                      void **staged)
{
    if (p->in_place[which] && out != NULL && aclsim_ops_views_overlap(t, out)) {
        /* gradInput is computed in place over it: read a copy */
        aclTensor copy_of;
        if (!aclsim_ops_stage(p->kernel, t, &copy_of, staged)) {
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

/* The executor's input of role `which` (aclsim_conv_params.slot), NULL if it has none. */
static const aclTensor *role_input(const aclsim_conv_params *p, const aclOpExecutor *ex, int which)
{
    return p->slot[which] < 0 ? NULL : aclsim_executor_input(ex, p->slot[which]);
}

aclnnStatus aclsim_conv_kernel(aclOpExecutor *ex, void *workspace)
{
    const aclsim_conv_params *p = aclsim_executor_params(ex, sizeof *p);
    ACLSIM_OPS_TRY(aclsim_ops_kernel_check_memory(p->kernel, ex, p->inputs_read, 3));
    aclTensor *grad_input = aclsim_executor_output(ex, CONV_GI);
    aclTensor *grad_weight = aclsim_executor_output(ex, CONV_GW);
    aclTensor *grad_bias = aclsim_executor_output(ex, CONV_GB);
    if (p->empty) {
        if (p->mask[CONV_GW] && grad_weight != NULL) {
            aclsim_ops_fill_zero(grad_weight);
        }
        if (p->mask[CONV_GB] && grad_bias != NULL) {
            aclsim_ops_fill_zero(grad_bias);
        }
        return ACLNN_SUCCESS;
    }

    char *base = workspace;
    const aclTensor *grad_output = role_input(p, ex, CONV_SOURCE);
    const aclTensor *in_place_out = p->grad_input_in_place ? grad_input : NULL;
    void *staged[3] = {NULL, NULL, NULL};
    float *go = operand(p, CONV_SOURCE, grad_output, base + p->at_grad_output, in_place_out, &staged[CONV_SOURCE]);
    float *in = NULL, *w = NULL;
    if (go != NULL && p->mask[CONV_GW]) {
        in = operand(p, CONV_OTHER, role_input(p, ex, CONV_OTHER), base + p->at_input, in_place_out,
                     &staged[CONV_OTHER]);
    }
    if (go != NULL && (in != NULL || !p->mask[CONV_GW]) && p->mask[CONV_GI]) {
        w = operand(p, CONV_WEIGHT, role_input(p, ex, CONV_WEIGHT), base + p->at_weight, in_place_out,
                    &staged[CONV_WEIGHT]);
    }
    if (go == NULL || (p->mask[CONV_GW] && in == NULL) || (p->mask[CONV_GI] && w == NULL)) {
        for (int i = 0; i < 3; ++i) {
            free(staged[i]);
        }
        return ACLSIM_OPS_KERNEL_FAULT;
    }
    float *gi = !p->mask[CONV_GI] ? NULL
                : p->grad_input_in_place ? (float *)grad_input->data + grad_input->offset
                                         : (float *)(base + p->at_grad_input);
    float *gw = p->mask[CONV_GW] ? (float *)(base + p->at_grad_weight) : NULL;
    bool finite = all_finite(go, aclsim_ops_numel(grad_output)) &&
                  (in == NULL || all_finite(in, aclsim_ops_numel(role_input(p, ex, CONV_OTHER)))) &&
                  (w == NULL || all_finite(w, aclsim_ops_numel(role_input(p, ex, CONV_WEIGHT))));
    float *gb = p->mask[CONV_GB] ? (float *)(base + p->at_grad_bias) : NULL;
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
    if (gi != NULL && p->slot[CONV_BIAS] >= 0) {
        /* The forward's bias, added to each output channel's planes. */
        float *bias = (float *)(base + p->at_bias);
        aclsim_ops_read_f32(aclsim_executor_input(ex, p->slot[CONV_BIAS]), bias);
        int64_t channels = grad_input->view_dims[1], plane = aclsim_ops_numel(grad_input) / (p->n * channels);
        for (int64_t nc = 0; nc < p->n * channels; ++nc) {
            float *row = gi + nc * plane, add = bias[nc % channels];
            for (int64_t i = 0; i < plane; ++i) {
                row[i] += add;
            }
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


uint64_t aclsim_conv_plan(aclsim_conv_params *p, const aclTensor *source, const aclTensor *other,
                          const aclTensor *weight, const aclTensor *grad_input, int64_t bias_length)
{
    uint64_t go_n = (uint64_t)aclsim_ops_numel(source), w_n = (uint64_t)aclsim_ops_numel(weight);
    uint64_t other_n = other != NULL ? (uint64_t)aclsim_ops_numel(other) : 0;
    uint64_t gi_n = grad_input != NULL ? (uint64_t)aclsim_ops_numel(grad_input) : 0;
    uint64_t at = 0;
    const aclTensor *operands[3] = {source, other, weight};
    for (int i = 0; i < 3; ++i) {
        p->in_place[i] = operands[i] != NULL && operands[i]->dtype == ACL_FLOAT && aclsim_ops_is_contiguous(operands[i]);
    }
    p->at_grad_output = at;
    at += p->in_place[CONV_SOURCE] ? 0 : aclsim_ops_region(go_n, sizeof(float));
    p->at_input = at;
    at += p->mask[CONV_GW] && !p->in_place[CONV_OTHER] ? aclsim_ops_region(other_n, sizeof(float)) : 0;
    p->at_weight = at;
    at += p->mask[CONV_GI] && !p->in_place[CONV_WEIGHT] ? aclsim_ops_region(w_n, sizeof(float)) : 0;
    p->grad_input_in_place = p->mask[CONV_GI] && grad_input->dtype == ACL_FLOAT && aclsim_ops_is_contiguous(grad_input);
    p->at_grad_input = at;
    at += p->mask[CONV_GI] && !p->grad_input_in_place ? aclsim_ops_region(gi_n, sizeof(float)) : 0;
    p->at_grad_weight = at;
    at += p->mask[CONV_GW] ? aclsim_ops_region(w_n, sizeof(float)) : 0;
    p->at_grad_bias = at;
    at += p->mask[CONV_GB] ? aclsim_ops_region((uint64_t)bias_length, sizeof(float)) : 0;
    p->at_bias = at;
    at += p->slot[CONV_BIAS] >= 0 ? aclsim_ops_region((uint64_t)bias_length, sizeof(float)) : 0;
    int64_t rows = p->cb / p->groups * p->ks[0] * p->ks[1] * p->ks[2], s_plane = p->ss[0] * p->ss[1] * p->ss[2];
    p->workers = gemm_workers(p->n);
    /* One image: the threads share each product instead of taking images. */
    p->gemm_threads = p->workers == 1 ? aclsim_cores() : 1;
    p->chunk = COLS_BYTES / (int64_t)sizeof(float) / rows * (p->gemm_threads > 1 ? GEMM_SHARED_CHUNK : 1);
    p->chunk = p->chunk < MIN_CHUNK ? MIN_CHUNK : p->chunk;
    p->chunk = p->chunk > s_plane ? s_plane : p->chunk;
    p->at_cols = at;
    bool gemm = p->mask[CONV_GI] || p->mask[CONV_GW];
    at += gemm ? aclsim_ops_region((uint64_t)(p->workers * rows * p->chunk), sizeof(float)) : 0;
    /* The packing space of the largest of the three products gemm_images runs. */
    int64_t cs_group = p->cs / p->groups;
    int threads = (int)p->gemm_threads;
    uint64_t shapes[3] = {aclsim_gemm_workspace_size(cs_group, rows, p->chunk, threads),
                          aclsim_gemm_workspace_size(cs_group, p->chunk, rows, threads),
                          aclsim_gemm_workspace_size(rows, p->chunk, cs_group, threads)};
    p->gemm_bytes = 0;
    for (int i = 0; gemm && i < 3; ++i) {
        uint64_t bytes = aclsim_ops_region(shapes[i], 1);
        p->gemm_bytes = bytes > p->gemm_bytes ? bytes : p->gemm_bytes;
    }
    p->at_gemm = at;
    at += (uint64_t)p->workers * p->gemm_bytes;
    p->at_partial_weight = at;
    at += p->mask[CONV_GW] ? aclsim_ops_region((uint64_t)((p->workers - 1) * w_n), sizeof(float)) : 0;
    /* The depthwise path, when its padded planes stay within a few times the planes themselves
     * (a large stride or dilation could make them far larger). */
    int64_t taps = p->ks[0] * p->ks[1] * p->ks[2], b_plane = p->bs[0] * p->bs[1] * p->bs[2];
    double padded = (double)padded_extent(p, 0) * (double)padded_extent(p, 1) * (double)padded_extent(p, 2);
    p->depthwise = gemm && depthwise(p) && taps <= DEPTHWISE_MAX_TAPS &&
                   padded <= 4.0 * (double)(s_plane + b_plane) + 4096.0;
    p->depthwise_workers = p->depthwise ? aclsim_workers(p->cs, p->n * taps * s_plane) : 0;
    p->at_depthwise = at;
    at += p->depthwise ? aclsim_ops_region((uint64_t)(p->depthwise_workers * 2 * (int64_t)padded), sizeof(float)) : 0;
    return at;
}

/* ---------------------------------------------------------------- shared geometry */

void aclsim_conv_padding(const aclIntArray *padding, int spatial, int d, int64_t *front, int64_t *total)
{
    bool paired = padding->size != (uint64_t)spatial;
    *front = padding->values[paired ? 2 * d : d];
    if (!aclsim_ops_add(*front, padding->values[paired ? 2 * d + 1 : d], total)) {
        *total = INT64_MAX;
    }
}

bool aclsim_conv_reach(int64_t k, int64_t dilation, int64_t *reach)
{
    return aclsim_ops_mul(dilation, k - 1, reach) && aclsim_ops_add(*reach, 1, reach);
}

aclnnStatus aclsim_conv_check_room(const char *api, int d, int64_t in, int64_t total, int64_t k,
                                   const aclTensor *input, const aclTensor *weight, const aclIntArray *padding,
                                   const aclIntArray *dilation)
{
    int64_t span, padded;
    if (!aclsim_conv_reach(k, dilation->values[d], &span) || !aclsim_ops_add(in, total, &padded)) {
        return aclsim_ops_invalid(api, "input spatial dim %d: (kernel - 1) * dilation + 1 or (in + padding) overflows "
                                  "int64 (input %s, weight %s, padding = %s, dilation = %s)", d,
                                  aclsim_ops_shape(input).s, aclsim_ops_shape(weight).s, aclsim_ops_ints(padding).s,
                                  aclsim_ops_ints(dilation).s);
    }
    if (padded < span) {
        return aclsim_ops_invalid(api, "input spatial dim %d: (in + padding) = %lld + %lld must be >= "
                                  "(kernel - 1) * dilation + 1 = %lld (weight %s, dilation = %s)", d,
                                  (long long)in, (long long)total, (long long)span, aclsim_ops_shape(weight).s,
                                  aclsim_ops_ints(dilation).s);
    }
    return ACLNN_SUCCESS;
}

bool aclsim_conv_output_size(int64_t in, int64_t k, int64_t stride, int64_t dilation, int64_t total, int64_t *out)
{
    int64_t span;
    if (!aclsim_conv_reach(k, dilation, &span) || !aclsim_ops_add(in, total, out)) {
        return false;
    }
    *out = (*out - span) / stride + 1;
    return true;
}

bool aclsim_conv_transposed_output_size(int64_t in, int64_t k, int64_t stride, int64_t dilation, int64_t total,
                                        int64_t output_padding, int64_t *out)
{
    int64_t span;
    return aclsim_conv_reach(k, dilation, &span) && aclsim_ops_mul(in - 1, stride, out) &&
           aclsim_ops_add(*out, -total, out) && aclsim_ops_add(*out, span, out) &&
           aclsim_ops_add(*out, output_padding, out);
}
