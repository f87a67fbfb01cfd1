/*
 * The reducing operators' shared dims checks and walks (see reduce.h).
 */
#include "reduce.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../kernels/parallel.h"
#include "half_bits.h"
#include "elementwise.h"
#include "row_exp.h"

aclnnStatus aclsim_red_check_dim(const char *api, const char *name, int64_t dim, const char *tensor, uint64_t rank,
                                 int64_t *wrapped)
{
    int64_t top = rank > 0 ? (int64_t)rank : 1;
    if (dim < -top || dim > top - 1) {
        return aclsim_ops_invalid(api, "%s = %lld must be in [%lld, %lld] for %s of rank %llu", name, (long long)dim,
                                  (long long)-top, (long long)(top - 1), tensor, (unsigned long long)rank);
    }
    *wrapped = dim < 0 ? dim + top : dim;
    return ACLNN_SUCCESS;
}

aclnnStatus aclsim_red_check_dims(const char *api, const char *name, const aclIntArray *dims, const char *tensor,
                                  uint64_t rank, uint32_t *mask)
{
    int64_t top = rank > 0 ? (int64_t)rank : 1;
    uint32_t seen = 0;
    for (uint64_t i = 0; i < dims->size; ++i) {
        int64_t d = dims->values[i];
        if (d < -top || d > top - 1) {
            return aclsim_ops_invalid(api, "%s value %lld must be in [%lld, %lld] for %s of rank %llu, got %s", name,
                                      (long long)d, (long long)-top, (long long)(top - 1), tensor,
                                      (unsigned long long)rank, aclsim_ops_ints(dims).s);
        }
        int64_t w = d < 0 ? d + top : d;
        if (seen & (1u << w)) {
            return aclsim_ops_invalid(api, "%s must not name dim %lld twice, got %s", name, (long long)w,
                                      aclsim_ops_ints(dims).s);
        }
        seen |= 1u << w;
    }
    *mask = dims->size == 0 ? (rank >= 32 ? 0xffffffffu : (1u << rank) - 1u) : seen & ((1u << rank) - 1u);
    return ACLNN_SUCCESS;
}

/* Adjacent dims of w walked as one (the outer's stride spans the inner dim): longer runs. */
static void merge_walk(aclsim_red_walk *w)
{
    int n = 0;
    for (int i = 0; i < w->n; ++i) {
        if (n > 0 && w->strides[n - 1] == w->strides[i] * w->dims[i]) {
            w->dims[n - 1] *= w->dims[i];
            w->strides[n - 1] = w->strides[i];
            continue;
        }
        w->dims[n] = w->dims[i];
        w->strides[n] = w->strides[i];
        ++n;
    }
    w->n = n;
}

void aclsim_red_split(const aclTensor *t, uint32_t mask, aclsim_red_walk *kept, aclsim_red_walk *reduced)
{
    kept->n = reduced->n = 0;
    kept->count = reduced->count = 1;
    for (uint64_t i = 0; i < t->ndim; ++i) {
        aclsim_red_walk *w = (mask & (1u << i)) ? reduced : kept;
        if (t->view_dims[i] == 1 && w->n > 0) {
            continue; /* a dim of 1 walks nowhere (a leading one is kept: a walk of no dims is one element) */
        }
        w->dims[w->n] = t->view_dims[i];
        w->strides[w->n] = t->strides[i];
        w->count *= t->view_dims[i];
        ++w->n;
    }
    merge_walk(kept);
    merge_walk(reduced);
}

int64_t aclsim_red_offset(const aclsim_red_walk *w, int64_t index)
{
    int64_t offset = 0;
    for (int d = w->n - 1; d >= 0; --d) {
        offset += (index % w->dims[d]) * w->strides[d];
        index /= w->dims[d];
    }
    return offset;
}

/* Each run of the walk's last dim within [first, first + count): fn over (offset, count, done). */
#define WALK_RUNS(w, base, first, count, BODY)                                                                        \
    do {                                                                                                               \
        int64_t last_ = (w)->n > 0 ? (w)->dims[(w)->n - 1] : 1;                                                       \
        int64_t step_ = (w)->n > 0 ? (w)->strides[(w)->n - 1] : 0;                                                    \
        int64_t done_ = 0;                                                                                             \
        while (done_ < (count)) {                                                                                      \
            int64_t at_ = (first) + done_;                                                                             \
            int64_t in_row_ = at_ % last_;                                                                             \
            int64_t run_ = last_ - in_row_ < (count) - done_ ? last_ - in_row_ : (count) - done_;                     \
            int64_t offset_ = (base) + aclsim_red_offset((w), at_);                                                    \
            BODY;                                                                                                      \
            done_ += run_;                                                                                             \
        }                                                                                                              \
    } while (0)

void aclsim_red_gather(const aclTensor *t, int64_t base, const aclsim_red_walk *w, int64_t first, int64_t count,
                       float *dst)
{
    WALK_RUNS(w, base, first, count, aclsim_ops_gather_f32(t->data, t->dtype, offset_, step_, run_, dst + done_));
}

void aclsim_red_scatter(aclTensor *t, int64_t base, const aclsim_red_walk *w, int64_t first, int64_t count,
                        const float *src)
{
    WALK_RUNS(w, base, first, count, aclsim_ops_scatter_f32(t->data, t->dtype, offset_, step_, run_, src + done_));
}

aclnnStatus aclsim_red_check_rank(const char *api, const char *name, const aclTensor *t, uint64_t lo, uint64_t hi)
{
    if (t->ndim >= lo && t->ndim <= hi) {
        return ACLNN_SUCCESS;
    }
    return aclsim_ops_invalid(api, "%s must have %llu to %llu dims, got %llu-D shape %s", name, (unsigned long long)lo,
                              (unsigned long long)hi, (unsigned long long)t->ndim, aclsim_ops_shape(t).s);
}

aclnnStatus aclsim_red_check_channels(const char *api, const char *name, const aclTensor *t, int64_t c)
{
    if (t == NULL || (t->ndim == 1 && t->view_dims[0] == c)) {
        return ACLNN_SUCCESS;
    }
    return aclsim_ops_invalid(api, "%s shape must be [C] = [%lld] (input's dim 1), got %s", name, (long long)c,
                              aclsim_ops_shape(t).s);
}

float aclsim_red_channel(const aclTensor *t, int64_t c, float absent)
{
    return t == NULL ? absent : (float)aclsim_ops_load(t->data, t->dtype, t->offset + c * t->strides[0]);
}

/* ---------------------------------------------------------------- along one dim */

typedef struct {
    aclsim_red_lane_op op;
    int64_t dim;
    aclDataType compute;
    const char *kernel;
} lane_params;

typedef struct {
    const lane_params *p;
    const aclTensor *a, *b;
    aclTensor *out;
    aclsim_red_walk ka, kb, ko; /* the lanes' starts (every dim but dim) */
    aclsim_red_walk la, lb, lo; /* one lane (dim) */
    double *scratch;            /* two lanes of doubles per worker */
    int64_t len;
    bool nonfinite[ACLSIM_MAX_WORKERS]; /* per worker: a lane written held an Inf or NaN */
} lane_job;

/* After lane k of out was written (at base, step so): its test for Inf / NaN while it is in
 * cache, for the overflow hook (lane_kernel tells it out was read back when none held one). */
static void lane_written(lane_job *j, int64_t base, int64_t so, int worker)
{
    if (!j->nonfinite[worker] && aclsim_nonfinite_run(j->out->data, j->out->dtype, base, so, j->len)) {
        j->nonfinite[worker] = true;
    }
}

static double round_to(double v, aclDataType t)
{
    if (t == ACL_FLOAT16) {
        return aclsim_hb_half_to_float(aclsim_hb_float_to_half((float)v));
    }
    if (t == ACL_BF16) {
        return aclsim_hb_bf16_to_float(aclsim_hb_float_to_bf16((float)v));
    }
    return t == ACL_FLOAT ? (double)(float)v : v;
}

/* One lane of t into dst, each value converted to the compute dtype (`tmp`: len floats). */
static void load_lane(const aclTensor *t, int64_t base, const aclsim_red_walk *w, int64_t len, aclDataType compute,
                      double *dst, float *tmp)
{
    int64_t step = w->n > 0 ? w->strides[w->n - 1] : 0;
    if (compute != ACL_DOUBLE && t->dtype != ACL_DOUBLE) { /* through float, row at a time */
        aclsim_ops_gather_f32(t->data, t->dtype, base, step, len, tmp);
        for (int64_t i = 0; i < len; ++i) {
            dst[i] = t->dtype == compute ? tmp[i] : round_to(tmp[i], compute);
        }
        return;
    }
    for (int64_t i = 0; i < len; ++i) {
        double v = aclsim_ops_load(t->data, t->dtype, base + i * step);
        dst[i] = t->dtype == compute ? v : round_to(v, compute);
    }
}

#define LANE_WAYS 8 /* partial maxima and sums kept apart: loops the compiler vectorises */

/* One lane of t into dst as float in the compute dtype (FLOAT, FLOAT16 or BFLOAT16). */
static void load_lane_f32(const aclTensor *t, int64_t base, const aclsim_red_walk *w, int64_t len,
                          aclDataType compute, float *dst)
{
    int64_t step = w->n > 0 ? w->strides[w->n - 1] : 0;
    aclsim_ops_gather_f32(t->data, t->dtype, base, step, len, dst);
    if (t->dtype != compute) {
        for (int64_t i = 0; i < len; ++i) {
            dst[i] = (float)round_to(dst[i], compute);
        }
    }
}

/* Compiled for AVX2 too: lane_range_f32's AVX2 clone called its baseline code (not inlined);
 * per lane a double product and sum either way (no FMA: the same bits). */
ACLSIM_AVX2_CLONES static double lane_sum(const float *x, const float *y, int64_t len)
{
    double acc[LANE_WAYS] = {0};
    int64_t i = 0;
    for (; i + LANE_WAYS <= len; i += LANE_WAYS) {
        for (int l = 0; l < LANE_WAYS; ++l) {
            acc[l] += y != NULL ? (double)x[i + l] * y[i + l] : (double)x[i + l];
        }
    }
    double sum = 0.0;
    for (int l = 0; l < LANE_WAYS; ++l) {
        sum += acc[l];
    }
    for (; i < len; ++i) {
        sum += y != NULL ? (double)x[i] * y[i] : (double)x[i];
    }
    return sum;
}

/* LANE_WAYS floats and as many 32-bit masks (GCC's and Clang's vector types: the compiler does
 * not vectorise the scalar select below, a NaN-propagating maximum). */
typedef float f32xw __attribute__((vector_size(4 * LANE_WAYS)));
typedef int32_t i32xw __attribute__((vector_size(4 * LANE_WAYS)));

/* tops[l] = the maximum of x[l], x[l + LANE_WAYS], ... over the whole groups of LANE_WAYS, each
 * step taking v when v > tops[l] or v is NaN (a NaN propagates: the last one met stays), from
 * -inf; the elements consumed.  Bitwise selects: the scalar rule's bits, lane by lane. */
ACLSIM_AVX2_CLONES static int64_t lane_tops(const float *x, int64_t len, float tops[LANE_WAYS])
{
    f32xw t;
    for (int l = 0; l < LANE_WAYS; ++l) {
        t[l] = -INFINITY;
    }
    int64_t i = 0;
    for (; i + LANE_WAYS <= len; i += LANE_WAYS) {
        f32xw v;
        memcpy(&v, x + i, sizeof v);
        i32xw take = (v > t) | (v != v);
        t = (f32xw)(((i32xw)v & take) | ((i32xw)t & ~take));
    }
    memcpy(tops, &t, sizeof t);
    return i;
}

/* The float compute dtypes: each lane in float rows, the sums in double, exp by aclsim_exp_row. */
ACLSIM_AVX2_CLONES static void lane_range_f32(lane_job *j, int64_t begin, int64_t end, int worker)
{
    const lane_params *p = j->p;
    int64_t len = j->len;
    float *x = (float *)(j->scratch + (size_t)worker * 3 * (size_t)len), *y = x + len, *o = y + len;
    int64_t so = j->lo.n > 0 ? j->lo.strides[j->lo.n - 1] : 0;
    /* SoftmaxBackward only reads its two lanes: FLOAT lanes of unit step are read where they lie
     * (the gather would copy the same floats). */
    bool in_place = p->op == ACLSIM_RED_SOFTMAX_GRAD && p->compute == ACL_FLOAT && j->a->dtype == ACL_FLOAT &&
                    j->b->dtype == ACL_FLOAT && (len == 1 || (j->la.strides[j->la.n - 1] == 1 &&
                                                               j->lb.strides[j->lb.n - 1] == 1));
    for (int64_t k = begin; k < end; ++k) {
        if (in_place) {
            const float *a = (const float *)j->a->data + j->a->offset + aclsim_red_offset(&j->ka, k);
            const float *b = (const float *)j->b->data + j->b->offset + aclsim_red_offset(&j->kb, k);
            double sum = lane_sum(a, b, len);
            for (int64_t i = 0; i < len; ++i) {
                o[i] = (float)(b[i] * (a[i] - sum));
            }
            int64_t base = j->out->offset + aclsim_red_offset(&j->ko, k);
            aclsim_ops_scatter_f32(j->out->data, j->out->dtype, base, so, len, o);
            lane_written(j, base, so, worker);
            continue;
        }
        load_lane_f32(j->a, j->a->offset + aclsim_red_offset(&j->ka, k), &j->la, len, p->compute, x);
        if (j->b != NULL) {
            load_lane_f32(j->b, j->b->offset + aclsim_red_offset(&j->kb, k), &j->lb, len, p->compute, y);
        }
        if (p->op == ACLSIM_RED_SOFTMAX || p->op == ACLSIM_RED_LOG_SOFTMAX) {
            float tops[LANE_WAYS];
            int64_t i = lane_tops(x, len, tops);
            float top = -INFINITY;
            for (int l = 0; l < LANE_WAYS; ++l) {
                top = tops[l] > top || tops[l] != tops[l] ? tops[l] : top;
            }
            for (; i < len; ++i) {
                top = x[i] > top || x[i] != x[i] ? x[i] : top;
            }
            for (i = 0; i < len; ++i) {
                x[i] -= top;
            }
            aclsim_exp_row(y, x, len);
            double sum = lane_sum(y, NULL, len);
            if (p->op == ACLSIM_RED_SOFTMAX) {
                for (i = 0; i < len; ++i) {
                    o[i] = (float)(y[i] / sum);
                }
            } else {
                double lse = (double)logf((float)sum);
                for (i = 0; i < len; ++i) {
                    o[i] = (float)(x[i] - lse);
                }
            }
        } else if (p->op == ACLSIM_RED_SOFTMAX_GRAD) {
            double sum = lane_sum(x, y, len);
            for (int64_t i = 0; i < len; ++i) {
                o[i] = (float)(y[i] * (x[i] - sum));
            }
        } else {
            double sum = lane_sum(x, NULL, len);
            aclsim_exp_row(y, y, len);
            for (int64_t i = 0; i < len; ++i) {
                o[i] = (float)(x[i] - y[i] * sum);
            }
        }
        if (p->compute != ACL_FLOAT) {
            for (int64_t i = 0; i < len; ++i) {
                o[i] = (float)round_to(o[i], p->compute);
            }
        }
        int64_t base = j->out->offset + aclsim_red_offset(&j->ko, k);
        aclsim_ops_scatter_f32(j->out->data, j->out->dtype, base, so, len, o);
        lane_written(j, base, so, worker);
    }
}

static void lane_range(void *ctx, int64_t begin, int64_t end, int worker)
{
    lane_job *j = ctx;
    const lane_params *p = j->p;
    int64_t len = j->len;
    if (p->compute != ACL_DOUBLE && j->out->dtype != ACL_DOUBLE) {
        lane_range_f32(j, begin, end, worker);
        return;
    }
    double *x = j->scratch + (size_t)worker * 3 * (size_t)len, *y = x + len;
    float *tmp = (float *)(y + len);
    bool wide = p->compute == ACL_DOUBLE;
    int64_t so = j->lo.n > 0 ? j->lo.strides[j->lo.n - 1] : 0;
    for (int64_t k = begin; k < end; ++k) {
        load_lane(j->a, j->a->offset + aclsim_red_offset(&j->ka, k), &j->la, len, p->compute, x, tmp);
        if (j->b != NULL) {
            load_lane(j->b, j->b->offset + aclsim_red_offset(&j->kb, k), &j->lb, len, p->compute, y, tmp);
        }
        double sum = 0.0;
        if (p->op == ACLSIM_RED_SOFTMAX || p->op == ACLSIM_RED_LOG_SOFTMAX) {
            double top = -INFINITY;
            for (int64_t i = 0; i < len; ++i) {
                top = x[i] > top || x[i] != x[i] ? x[i] : top;
            }
            for (int64_t i = 0; i < len; ++i) {
                x[i] -= top;
                double e = wide ? exp(x[i]) : (double)expf((float)x[i]);
                y[i] = e;
                sum += e;
            }
            double lse = wide ? log(sum) : (double)logf((float)sum);
            for (int64_t i = 0; i < len; ++i) {
                y[i] = p->op == ACLSIM_RED_SOFTMAX ? y[i] / sum : x[i] - lse;
            }
        } else if (p->op == ACLSIM_RED_SOFTMAX_GRAD) {
            for (int64_t i = 0; i < len; ++i) {
                sum += x[i] * y[i];
            }
            for (int64_t i = 0; i < len; ++i) {
                y[i] = y[i] * (x[i] - sum);
            }
        } else {
            for (int64_t i = 0; i < len; ++i) {
                sum += x[i];
            }
            for (int64_t i = 0; i < len; ++i) {
                y[i] = x[i] - (wide ? exp(y[i]) : (double)expf((float)y[i])) * sum;
            }
        }
        int64_t base = j->out->offset + aclsim_red_offset(&j->ko, k);
        if (!wide && j->out->dtype != ACL_DOUBLE) {
            for (int64_t i = 0; i < len; ++i) {
                tmp[i] = (float)round_to(y[i], p->compute);
            }
            aclsim_ops_scatter_f32(j->out->data, j->out->dtype, base, so, len, tmp);
            lane_written(j, base, so, worker);
            continue;
        }
        for (int64_t i = 0; i < len; ++i) {
            aclsim_ops_store(j->out->data, j->out->dtype, base + i * so, round_to(y[i], p->compute));
        }
        lane_written(j, base, so, worker);
    }
}

static aclnnStatus lane_kernel(aclOpExecutor *ex, void *workspace)
{
    const lane_params *p = aclsim_executor_params(ex, sizeof *p);
    bool two = p->op == ACLSIM_RED_SOFTMAX_GRAD || p->op == ACLSIM_RED_LOG_SOFTMAX_GRAD;
    ACLSIM_OPS_TRY(aclsim_ops_kernel_check_memory(p->kernel, ex, two ? 3u : 1u, 1));
    lane_job j = {.p = p, .a = aclsim_executor_input(ex, 0), .b = two ? aclsim_executor_input(ex, 1) : NULL,
                  .out = aclsim_executor_output(ex, 0), .scratch = workspace};
    uint32_t mask = j.a->ndim == 0 ? 0u : 1u << p->dim;
    aclsim_red_split(j.a, mask, &j.ka, &j.la);
    aclsim_red_split(j.out, mask, &j.ko, &j.lo);
    if (j.b != NULL) {
        aclsim_red_split(j.b, mask, &j.kb, &j.lb);
    }
    j.len = j.la.count;
    aclsim_parallel(j.ka.count, aclsim_workers(j.ka.count, 8 * j.len), lane_range, &j);
    bool finite = true;
    for (int w = 0; w < ACLSIM_MAX_WORKERS; ++w) {
        finite = finite && !j.nonfinite[w];
    }
    if (finite) {
        aclsim_kernel_outputs_finite(0);
    }
    return ACLNN_SUCCESS;
}

aclnnStatus aclsim_red_lanes_finish(const char *api, const char *kernel, aclsim_red_lane_op op, int64_t dim,
                                    aclDataType compute, const char *name_a, const aclTensor *a, const char *name_b,
                                    const aclTensor *b, aclTensor *out, uint64_t *workspace_size,
                                    aclOpExecutor **executor)
{
    if (aclsim_ops_is_empty(a) || (b != NULL && aclsim_ops_is_empty(b))) {
        return aclsim_ops_finish(kernel, aclsim_ops_noop_kernel, 0, NULL, 0, NULL, 0, NULL, 0, workspace_size,
                                 executor);
    }
    ACLSIM_OPS_TRY(aclsim_ops_check_memory(api, name_a, a));
    if (b != NULL) {
        ACLSIM_OPS_TRY(aclsim_ops_check_memory(api, name_b, b));
    }
    ACLSIM_OPS_TRY(aclsim_ops_check_memory(api, "out", out));
    lane_params p = {.op = op, .dim = dim, .compute = compute, .kernel = kernel};
    int64_t len = a->ndim == 0 ? 1 : a->view_dims[dim];
    uint64_t workspace = (uint64_t)ACLSIM_MAX_WORKERS * 3 * (uint64_t)len * sizeof(double);
    const aclTensor *inputs[] = {a, b};
    const aclTensor *outputs[] = {out};
    aclnnStatus status = aclsim_ops_finish(kernel, lane_kernel, workspace, &p, sizeof p, inputs, b != NULL ? 2 : 1,
                                           outputs, 1, workspace_size, executor);
    if (status == ACLNN_SUCCESS) {
        aclsim_executor_set_inputs_read(*executor, b != NULL ? 3u : 1u);
        aclsim_executor_set_outputs_written(*executor, 1u); /* every lane */
    }
    return status;
}

/* ---------------------------------------------------------------- over several dims */

uint64_t aclsim_red_reduced_shape(const aclTensor *self, uint32_t mask, bool keepdim, int64_t *dims)
{
    uint64_t n = 0;
    for (uint64_t i = 0; i < self->ndim; ++i) {
        if (!(mask & (1u << i))) {
            dims[n++] = self->view_dims[i];
        } else if (keepdim) {
            dims[n++] = 1;
        }
    }
    return n;
}

aclnnStatus aclsim_red_check_out_shape(const char *api, const aclTensor *self, uint32_t mask, bool keepdim,
                                       const aclTensor *out)
{
    int64_t dims[ACLSIM_MAX_DIMS];
    uint64_t n = aclsim_red_reduced_shape(self, mask, keepdim, dims);
    bool same = out->ndim == n;
    int64_t count = 1;
    for (uint64_t i = 0; i < n; ++i) {
        same = same && out->view_dims[i] == dims[i];
        count *= dims[i];
    }
    if (same || (count == 1 && aclsim_ops_numel(out) == 1)) {
        return ACLNN_SUCCESS;
    }
    return aclsim_ops_invalid(api, "out shape must be the reduced shape %s of self, got %s",
                              aclsim_ops_int_list(dims, n).s, aclsim_ops_shape(out).s);
}

typedef struct {
    uint32_t mask;
    aclDataType dtype;
    bool mean;
    const char *kernel;
} sum_params;

typedef struct {
    const sum_params *p;
    const aclTensor *self;
    aclTensor *out;
    aclsim_red_walk kept, reduced, out_walk;
    float *scratch; /* ACLSIM_RED_PIECE floats per worker */
} sum_job;

/* A one-element tensor of `dtype` over `storage` (a scratch value for Cast's conversion). */
static aclTensor scalar_tensor(aclDataType dtype, void *storage)
{
    aclTensor t = {.ndim = 0, .dtype = dtype, .data = storage};
    return t;
}

static bool float_type(aclDataType t)
{
    return t == ACL_FLOAT || t == ACL_FLOAT16 || t == ACL_BF16;
}

static void sum_store(const sum_job *j, int64_t k, const double acc[2], uint64_t iacc);

/* The input bytes from which the sum by rows (sum_by_rows) is shared out (see sum_kernel). */
#define SUM_ROWS_SPLIT_BYTES ((int64_t)32 << 20)

/* FLOAT self summed in FLOAT over dims outside a contiguous kept dim (a bias gradient: (N, C)
 * over N): whole rows added into double sums, a block of kept elements at a time. */
static bool sum_by_rows(const sum_job *j)
{
    return j->p->dtype == ACL_FLOAT && j->self->dtype == ACL_FLOAT && j->kept.n == 1 && j->kept.strides[0] == 1 &&
           j->kept.count > 1;
}

/* sum_rows_range's sums of the STRIP kept elements from k0 on over rows `step` apart (one
 * reduced dim): held in registers over all the rows instead of added into memory row by row;
 * each element's additions are the same, in the same order (the same bits).  The strip's two
 * cache lines AHEAD rows on are prefetched: rows a page or more apart defeat the hardware's
 * stride prefetchers.  Measured (a C program timing aclnnReduceSum over dim 0 of (R, 1000), one
 * worker, medians of 300 calls, the two builds alternating): R = 256 36-39 us against 41-56 us
 * without; R = 2048 421-461 against 456-718 us. */
enum { STRIP = 32, AHEAD = 8 };
ACLSIM_AVX2_CLONES static void sum_strip(const float *x, int64_t rows, int64_t step, double *sums)
{
    double acc[STRIP] = {0.0};
    for (int64_t r = 0; r < rows; ++r) {
        const float *row = x + r * step;
        if (r + AHEAD < rows) {
            __builtin_prefetch(row + AHEAD * step);
            __builtin_prefetch(row + AHEAD * step + STRIP - 1);
        }
        for (int i = 0; i < STRIP; ++i) {
            acc[i] += row[i];
        }
    }
    memcpy(sums, acc, sizeof acc);
}

ACLSIM_AVX2_CLONES static void sum_rows_range(const sum_job *j, int64_t begin, int64_t end, int worker)
{
    enum { BLOCK = ACLSIM_RED_PIECE / 2 }; /* doubles in a worker's scratch */
    double *acc = (double *)(j->scratch + (size_t)worker * ACLSIM_RED_PIECE);
    const float *x = (const float *)j->self->data + j->self->offset;
    for (int64_t k0 = begin; k0 < end; k0 += BLOCK) {
        int64_t n = end - k0 < BLOCK ? end - k0 : BLOCK;
        int64_t strips = j->reduced.n == 1 ? n / STRIP * STRIP : 0; /* the first elements by strips */
        for (int64_t i = 0; i < strips; i += STRIP) {
            sum_strip(x + k0 + i, j->reduced.count, j->reduced.strides[0], acc + i);
        }
        for (int64_t i = strips; i < n; ++i) {
            acc[i] = 0.0;
        }
        for (int64_t r = 0; strips < n && r < j->reduced.count; ++r) {
            const float *row = x + aclsim_red_offset(&j->reduced, r) + k0;
            for (int64_t i = strips; i < n; ++i) {
                acc[i] += row[i];
            }
        }
        if (j->out->dtype == ACL_FLOAT) { /* sum_store's float, without its conversions per element */
            float *out = (float *)j->out->data + j->out->offset;
            double count = (double)j->reduced.count;
            for (int64_t i = 0; i < n; ++i) {
                out[aclsim_red_offset(&j->out_walk, k0 + i)] = (float)(j->p->mean ? acc[i] / count : acc[i]);
            }
            continue;
        }
        for (int64_t i = 0; i < n; ++i) {
            double two[2] = {acc[i], 0.0};
            sum_store(j, k0 + i, two, 0);
        }
    }
}

#define LANES 8

/* aclsim_red_piece_sum(the gathered elements, n, 0) of the elements [first, first + n) of walk
 * w from x, read where they are: w's last dim is contiguous (a batch-statistics sum over
 * [0, 2, 3]: runs of H*W), so the piece is its runs in turn.  Element p of the piece goes into
 * lane p % LANES while p < n / LANES * LANES, the rest into the total in order, the lanes added
 * last: aclsim_red_piece_sum's additions in its order (the same bits).  The gather had copied
 * every float once more: (8,64,56,56) over [0,2,3] spent 0.6 of its kernel in it. */
ACLSIM_AVX2_CLONES static double runs_piece_sum(const float *x, const aclsim_red_walk *w, int64_t first, int64_t n)
{
    typedef float lanes __attribute__((vector_size(4 * LANES)));
    lanes acc = {0};
    int64_t bulk = n / LANES * LANES, last = w->dims[w->n - 1];
    double total = 0.0;
    for (int64_t p = 0; p < n;) {
        int64_t at = first + p, in_run = at % last;
        int64_t run = last - in_run < n - p ? last - in_run : n - p;
        const float *r = x + aclsim_red_offset(w, at);
        int64_t i = 0;
        for (; i < run && (p + i) % LANES != 0 && p + i < bulk; ++i) { /* up to a whole lane group */
            acc[(p + i) % LANES] += r[i];
        }
        for (; i + LANES <= run && p + i + LANES <= bulk; i += LANES) {
            lanes v;
            memcpy(&v, r + i, sizeof v);
            acc += v;
        }
        for (; i < run && p + i < bulk; ++i) {
            acc[(p + i) % LANES] += r[i];
        }
        for (; i < run; ++i) { /* the piece's last n % LANES */
            total += r[i];
        }
        p += run;
    }
    for (int l = 0; l < LANES; ++l) {
        total += acc[l];
    }
    return total;
}

static void sum_range(void *ctx, int64_t begin, int64_t end, int worker)
{
    const sum_job *j = ctx;
    const sum_params *p = j->p;
    const aclTensor *self = j->self;
    aclDataType t = p->dtype;
    if (sum_by_rows(j)) {
        sum_rows_range(j, begin, end, worker);
        return;
    }
    float *buf = j->scratch + (size_t)worker * ACLSIM_RED_PIECE;
    int64_t count = j->reduced.count;
    double cell[2];
    aclTensor value = scalar_tensor(t, cell);
    if (t == ACL_FLOAT && self->dtype == ACL_FLOAT && j->reduced.n == 1 && j->reduced.strides[0] == 1) {
        /* FLOAT over one contiguous run (a global pool's H*W): the pieces summed where they are
         * (the gather would copy the same floats: the same bits), a FLOAT out stored directly
         * (sum_store's conversions through a double and back give the same float).  A (8,2048,7,7)
         * mean over [2,3] spent about a third of its kernel in the gathers and conversions. */
        const float *x = (const float *)self->data;
        bool float_out = j->out->dtype == ACL_FLOAT;
        for (int64_t k = begin; k < end; ++k) {
            const float *run = x + self->offset + aclsim_red_offset(&j->kept, k);
            double acc[2] = {0.0, 0.0};
            for (int64_t first = 0; first < count; first += ACLSIM_RED_PIECE) {
                int64_t m = count - first < ACLSIM_RED_PIECE ? count - first : ACLSIM_RED_PIECE;
                acc[0] += aclsim_red_piece_sum(run + first, m, 0.0f);
            }
            if (float_out) {
                float v = (float)(p->mean ? acc[0] / (double)count : acc[0]);
                ((float *)j->out->data)[j->out->offset + aclsim_red_offset(&j->out_walk, k)] = v;
            } else {
                sum_store(j, k, acc, 0);
            }
        }
        return;
    }
    if (t == ACL_FLOAT && self->dtype == ACL_FLOAT && j->reduced.n > 1 && j->reduced.strides[j->reduced.n - 1] == 1) {
        /* FLOAT over runs of a contiguous last dim: the pieces summed where they are (above) */
        const float *x = (const float *)self->data + self->offset;
        for (int64_t k = begin; k < end; ++k) {
            const float *at = x + aclsim_red_offset(&j->kept, k);
            double acc[2] = {0.0, 0.0};
            for (int64_t first = 0; first < count; first += ACLSIM_RED_PIECE) {
                int64_t m = count - first < ACLSIM_RED_PIECE ? count - first : ACLSIM_RED_PIECE;
                acc[0] += runs_piece_sum(at, &j->reduced, first, m);
            }
            sum_store(j, k, acc, 0);
        }
        return;
    }
    for (int64_t k = begin; k < end; ++k) {
        int64_t base = self->offset + aclsim_red_offset(&j->kept, k);
        double acc[2] = {0.0, 0.0};
        uint64_t iacc = 0;
        if (float_type(t) && float_type(self->dtype)) {
            for (int64_t first = 0; first < count; first += ACLSIM_RED_PIECE) {
                int64_t m = count - first < ACLSIM_RED_PIECE ? count - first : ACLSIM_RED_PIECE;
                aclsim_red_gather(self, base, &j->reduced, first, m, buf);
                if (self->dtype != t) { /* Cast's rounding to dtype */
                    for (int64_t i = 0; i < m; ++i) {
                        buf[i] = (float)round_to(buf[i], t);
                    }
                }
                acc[0] += aclsim_red_piece_sum(buf, m, 0.0f);
            }
        } else {
            for (int64_t r = 0; r < count; ++r) {
                aclsim_ew_convert(self->data, self->dtype, base + aclsim_red_offset(&j->reduced, r), &value, 0);
                if (aclsim_ops_is_complex(t)) {
                    double c[2];
                    aclsim_ops_load_complex(cell, t, 0, c);
                    acc[0] += c[0];
                    acc[1] += c[1];
                } else if (aclsim_ops_is_floating(t)) {
                    acc[0] += aclsim_ops_load(cell, t, 0);
                } else if (t == ACL_BOOL) {
                    iacc |= aclsim_ops_load_int(cell, t, 0) != 0;
                } else {
                    iacc += (uint64_t)aclsim_ops_load_int(cell, t, 0);
                }
            }
        }
        sum_store(j, k, acc, iacc);
    }
}

/* Element k of out from its sum (acc: floating and complex dtypes; iacc: integers and BOOL):
 * the result in dtype (a mean divided first), then converted to out's dtype. */
static void sum_store(const sum_job *j, int64_t k, const double acc_in[2], uint64_t iacc)
{
    const sum_params *p = j->p;
    aclDataType t = p->dtype;
    int64_t count = j->reduced.count;
    double cell[2], acc[2] = {acc_in[0], acc_in[1]};
    aclTensor value = scalar_tensor(t, cell);
    if (aclsim_ops_is_complex(t)) {
        if (p->mean) {
            acc[0] /= (double)count;
            acc[1] /= (double)count;
        }
        aclsim_ops_store_complex(cell, t, 0, acc);
    } else if (aclsim_ops_is_floating(t)) {
        aclsim_ops_store(cell, t, 0, p->mean ? acc[0] / (double)count : acc[0]);
    } else if (p->mean) {
        double m = (double)(int64_t)iacc / (double)count, wide[1] = {m};
        aclsim_ew_convert(wide, ACL_DOUBLE, 0, &value, 0); /* truncated toward zero, wrapped */
    } else {
        aclsim_ops_store_int(cell, t, 0, (int64_t)iacc);
    }
    aclsim_ew_convert(cell, t, 0, j->out, j->out->offset + aclsim_red_offset(&j->out_walk, k));
}

static aclnnStatus sum_kernel(aclOpExecutor *ex, void *workspace)
{
    const sum_params *p = aclsim_executor_params(ex, sizeof *p);
    ACLSIM_OPS_TRY(aclsim_ops_kernel_check_memory(p->kernel, ex, 1u, 1));
    sum_job j = {.p = p, .self = aclsim_executor_input(ex, 0), .out = aclsim_executor_output(ex, 0),
                 .scratch = workspace};
    aclsim_red_split(j.self, p->mask, &j.kept, &j.reduced);
    aclsim_red_walk none;
    aclsim_red_split(j.out, 0u, &j.out_walk, &none);
    int workers = aclsim_workers(j.kept.count, 2 * j.reduced.count);
    if (sum_by_rows(&j)) {
        /* Whole rows are summed at the speed memory delivers them, and an input just uploaded is
         * in the calling thread's cache: a helper on the other core fetches its half from there.
         * Measured (a C program timing aclnnReduceSum over dim 0 of (R, 1000), ACLSIM_WORKERS=1
         * and 2 alternating, medians of 60-400 calls): two workers were slower from 1 MB to 16 MB,
         * R = 256 63-81 us against 40-58 us, 2048 592-651 against 422-444, 4096 1522-2037 against
         * 1181-1574 (phase 2 + synchronisation, us, two workers first); at 32 MB (R = 8192)
         * about even, 3982-4414 against 3957-4994 us, at load 2-5.  So the rows are split from
         * 32 MiB only (the byte rule then, ACLSIM_WORKERS as everywhere). */
        int64_t bytes = j.kept.count * j.reduced.count * (int64_t)sizeof(float);
        workers = aclsim_byte_workers(j.kept.count, bytes >= SUM_ROWS_SPLIT_BYTES ? bytes : 0);
    }
    aclsim_parallel(j.kept.count, workers, sum_range, &j);
    return ACLNN_SUCCESS;
}

/* An empty self: out filled with 0 (Mean: NaN), converted to out's dtype. */
static aclnnStatus fill_kernel(aclOpExecutor *ex, void *workspace)
{
    (void)workspace;
    const sum_params *p = aclsim_executor_params(ex, sizeof *p);
    ACLSIM_OPS_TRY(aclsim_ops_kernel_check_memory(p->kernel, ex, 0u, 1));
    aclTensor *out = aclsim_executor_output(ex, 0);
    aclsim_red_walk all, none;
    aclsim_red_split(out, 0u, &all, &none);
    double fill[1] = {p->mean ? NAN : 0.0};
    for (int64_t i = 0; i < all.count; ++i) {
        aclsim_ew_convert(fill, ACL_DOUBLE, 0, out, out->offset + aclsim_red_offset(&all, i));
    }
    return ACLNN_SUCCESS;
}

aclnnStatus aclsim_red_sum_finish(const char *api, const char *kernel, const aclTensor *self, uint32_t mask,
                                  aclDataType dtype, bool mean, aclTensor *out, uint64_t *workspace_size,
                                  aclOpExecutor **executor)
{
    sum_params p = {.mask = mask, .dtype = dtype, .mean = mean, .kernel = kernel};
    const aclTensor *outputs[] = {out};
    ACLSIM_OPS_TRY(aclsim_ops_check_memory(api, "out", out));
    if (aclsim_ops_is_empty(self)) {
        return aclsim_ops_finish(kernel, fill_kernel, 0, &p, sizeof p, NULL, 0, outputs, 1, workspace_size,
                                 executor);
    }
    ACLSIM_OPS_TRY(aclsim_ops_check_memory(api, "self", self));
    const aclTensor *inputs[] = {self};
    uint64_t workspace = (uint64_t)ACLSIM_MAX_WORKERS * ACLSIM_RED_PIECE * sizeof(float);
    aclnnStatus status = aclsim_ops_finish(kernel, sum_kernel, workspace, &p, sizeof p, inputs, 1, outputs, 1,
                                           workspace_size, executor);
    if (status == ACLNN_SUCCESS) {
        aclsim_executor_set_inputs_read(*executor, 1u);
    }
    return status;
}

/* ReduceSum/Mean's sum of a piece: eight float lanes (vectorised), added up in double (runs_piece_sum
 * above adds a run's elements where they lie in the same lanes and order: the same bits). */
double aclsim_red_piece_sum(const float *x, int64_t n, float c)
{
    float acc[LANES] = {0};
    int64_t i = 0;
    for (; i + LANES <= n; i += LANES) {
        for (int l = 0; l < LANES; ++l) {
            acc[l] += x[i + l] - c;
        }
    }
    double total = 0.0;
    for (; i < n; ++i) {
        total += x[i] - c;
    }
    for (int l = 0; l < LANES; ++l) {
        total += acc[l];
    }
    return total;
}

/* BatchNorm's per-channel sums: each element's float difference (and product) added in double
 * lanes: float lanes summing hundreds of O(1) values lose ~10 ulps of a channel mean near 0, the
 * figure BatchNorm's output cancels against (ResNet's conv1 (8,64,112,112): MARE 1.7e-3 against
 * the float64 golden). */
double aclsim_red_piece_sum_wide(const float *x, int64_t n, float c)
{
    double acc[LANES] = {0};
    int64_t i = 0;
    for (; i + LANES <= n; i += LANES) {
        for (int l = 0; l < LANES; ++l) {
            acc[l] += (double)(x[i + l] - c);
        }
    }
    double total = 0.0;
    for (; i < n; ++i) {
        total += x[i] - c;
    }
    for (int l = 0; l < LANES; ++l) {
        total += acc[l];
    }
    return total;
}

double aclsim_red_piece_dot(const float *x, const float *y, int64_t n, float c)
{
    double acc[LANES] = {0};
    int64_t i = 0;
    for (; i + LANES <= n; i += LANES) {
        for (int l = 0; l < LANES; ++l) {
            float d = x[i + l] - c;
            acc[l] += (double)d * (y != NULL ? y[i + l] : d);
        }
    }
    double total = 0.0;
    for (; i < n; ++i) {
        float d = x[i] - c;
        total += (double)d * (y != NULL ? y[i] : d);
    }
    for (int l = 0; l < LANES; ++l) {
        total += acc[l];
    }
    return total;
}
