/*
 * aclnnBatchNorm: batch normalisation over dim 1, training (batch statistics, running
 * statistics updated in place) or eval (the running statistics).  The checks in ops-nn's order
 * (aclnn_py/ops/batch_norm.py); each channel's elements are walked with reduce.h, in float,
 * the sums in double.  As on Atlas A2/A3, saveInvstd receives the biased batch variance.
 */
#include <math.h>

#include "aclnnop/aclnn_batch_norm.h"
#include "aclsim_dtype_rules.h" /* generated at build: the dtype table (aclnn_py/ops/<op>.py DTYPE_RULES) */
#include "reduce.h"

#include "../kernels/parallel.h"

static const char API[] = "aclnnBatchNormGetWorkspaceSize";
static const char KERNEL[] = "aclnnBatchNorm";

#define INPUTS_READ 7u /* input, weight, bias */
#define V3_MIN_CHANNELS 64 /* A2/A3 take BatchNormV3's path for 4-D/5-D input of this many channels */

typedef struct {
    bool training;
    float momentum, eps, factor; /* factor: n / (n - 1) of the running variance's update */
} bn_params;

typedef struct {
    const bn_params *p;
    const aclTensor *input, *weight, *bias;
    aclTensor *mean, *var, *output, *save_mean, *save_var;
    aclsim_red_walk in_walk, out_walk; /* each channel's elements of input and output */
    float *scratch;                    /* ACLSIM_RED_PIECE floats per worker */
    bool nonfinite[ACLSIM_MAX_WORKERS]; /* per worker: a FLOAT output value written was Inf or NaN */
    bool direct; /* FLOAT input and output walked alike in unit-stride runs, not overlapping (or the
                  * same view): normalised from run to run without the float pieces */
} bn_job;

/* A channel's elements normalised straight from input to output (bn_job.direct), the same
 * arithmetic as through the pieces, each value tested for Inf / NaN as it is written (a
 * (8,512,7,7) eval had spent as long in a test call per 49-element run as in the arithmetic).
 * Compiled for AVX2 too (no FMA: the same bits). */
ACLSIM_AVX2_CLONES static void normalize_runs(bn_job *j, int64_t in_base, int64_t out_base, float mean, float scale,
                                              float shift, int worker)
{
    const float *in = (const float *)j->input->data;
    float *out = (float *)j->output->data;
    int64_t run = j->in_walk.dims[j->in_walk.n - 1];
    uint32_t seen = 0;
    for (int64_t first = 0; first < j->in_walk.count; first += run) {
        const float *src = in + in_base + aclsim_red_offset(&j->in_walk, first);
        float *dst = out + out_base + aclsim_red_offset(&j->out_walk, first);
        for (int64_t i = 0; i < run; ++i) {
            float v = (src[i] - mean) * scale + shift;
            dst[i] = v;
            seen |= aclsim_f32_nonfinite_bits(v);
        }
    }
    if (seen >> 31) {
        j->nonfinite[worker] = true;
    }
}

/* bn_job.direct's condition. */
static bool direct_runs(const bn_job *j)
{
    const aclsim_red_walk *a = &j->in_walk, *b = &j->out_walk;
    if (j->input->dtype != ACL_FLOAT || j->output->dtype != ACL_FLOAT || a->n < 1 || a->n != b->n ||
        a->strides[a->n - 1] != 1 || b->strides[b->n - 1] != 1) {
        return false;
    }
    for (int d = 0; d < a->n; ++d) {
        if (a->dims[d] != b->dims[d]) {
            return false;
        }
    }
    bool same = j->input->data == j->output->data && j->input->offset == j->output->offset &&
                j->input->strides[1] == j->output->strides[1];
    for (int d = 0; same && d < a->n; ++d) {
        same = a->strides[d] == b->strides[d];
    }
    return same || !aclsim_ops_views_overlap(j->input, j->output);
}

static void store_channel(aclTensor *t, int64_t c, float v)
{
    if (t != NULL) {
        aclsim_ops_store(t->data, t->dtype, t->offset + c * t->strides[0], v);
    }
}

static void bn_channels(void *ctx, int64_t begin, int64_t end, int worker)
{
    bn_job *j = ctx;
    const bn_params *p = j->p;
    float *buf = j->scratch + (size_t)worker * ACLSIM_RED_PIECE;
    int64_t n = j->in_walk.count;
    for (int64_t c = begin; c < end; ++c) {
        int64_t in_base = j->input->offset + c * j->input->strides[1];
        int64_t out_base = j->output->offset + c * j->output->strides[1];
        float mean, var;
        if (p->training) {
            double sum = 0.0;
            for (int64_t first = 0; first < n; first += ACLSIM_RED_PIECE) {
                int64_t k = n - first < ACLSIM_RED_PIECE ? n - first : ACLSIM_RED_PIECE;
                aclsim_red_gather(j->input, in_base, &j->in_walk, first, k, buf);
                sum += aclsim_red_piece_sum_wide(buf, k, 0.0f);
            }
            mean = (float)(sum / (double)n);
            double squares = 0.0;
            for (int64_t first = 0; first < n; first += ACLSIM_RED_PIECE) {
                int64_t k = n - first < ACLSIM_RED_PIECE ? n - first : ACLSIM_RED_PIECE;
                aclsim_red_gather(j->input, in_base, &j->in_walk, first, k, buf);
                squares += aclsim_red_piece_dot(buf, NULL, k, mean);
            }
            var = (float)(squares / (double)n);
            float m = p->momentum;
            if (j->mean != NULL) {
                store_channel(j->mean, c, (1.0f - m) * aclsim_red_channel(j->mean, c, 0.0f) + m * mean);
            }
            if (j->var != NULL) {
                store_channel(j->var, c, (1.0f - m) * aclsim_red_channel(j->var, c, 1.0f) + m * (var * p->factor));
            }
            store_channel(j->save_mean, c, mean);
            store_channel(j->save_var, c, var);
        } else {
            mean = aclsim_red_channel(j->mean, c, 0.0f);
            var = aclsim_red_channel(j->var, c, 1.0f);
        }
        /* weight / sqrt(var + eps), as A2/A3's BatchNormV3 and BNInfer form it */
        float scale = aclsim_red_channel(j->weight, c, 1.0f) / sqrtf(var + p->eps);
        float shift = aclsim_red_channel(j->bias, c, 0.0f);
        if (!p->training) {
            /* As CANN's BNInfer: addend = bias - multiplier * mean, output = x * multiplier +
             * addend (mean folded into the addend: x - 0 is x, so the loops below compute
             * exactly that).  An inf input then gives what BNInfer gives: e.g. an inf weight NaN
             * where x and mean share a sign. */
            shift -= scale * mean;
            mean = 0.0f;
        }
        if (j->direct) {
            normalize_runs(j, in_base, out_base, mean, scale, shift, worker);
            continue;
        }
        for (int64_t first = 0; first < n; first += ACLSIM_RED_PIECE) {
            int64_t k = n - first < ACLSIM_RED_PIECE ? n - first : ACLSIM_RED_PIECE;
            aclsim_red_gather(j->input, in_base, &j->in_walk, first, k, buf);
            for (int64_t i = 0; i < k; ++i) {
                buf[i] = (buf[i] - mean) * scale + shift;
            }
            if (!j->nonfinite[worker] && aclsim_nonfinite_run(buf, ACL_FLOAT, 0, 1, k)) {
                j->nonfinite[worker] = true;
            }
            aclsim_red_scatter(j->output, out_base, &j->out_walk, first, k, buf);
        }
    }
}

static aclnnStatus bn_kernel(aclOpExecutor *ex, void *workspace)
{
    ACLSIM_OPS_TRY(aclsim_ops_kernel_check_memory(KERNEL, ex, INPUTS_READ, 5));
    const bn_params *p = aclsim_executor_params(ex, sizeof *p);
    bn_job j = {.p = p, .input = aclsim_executor_input(ex, 0), .weight = aclsim_executor_input(ex, 1),
                .bias = aclsim_executor_input(ex, 2), .mean = aclsim_executor_output(ex, 0),
                .var = aclsim_executor_output(ex, 1), .output = aclsim_executor_output(ex, 2),
                .save_mean = aclsim_executor_output(ex, 3), .save_var = aclsim_executor_output(ex, 4),
                .scratch = workspace};
    aclsim_red_walk kept;
    aclsim_red_split(j.input, ~2u, &kept, &j.in_walk);
    aclsim_red_split(j.output, ~2u, &kept, &j.out_walk);
    int64_t channels = j.input->view_dims[1];
    j.direct = direct_runs(&j);
    aclsim_parallel(channels, aclsim_workers(channels, 3 * j.in_walk.count), bn_channels, &j);
    /* The overflow hook's test of a FLOAT output: the values written are its elements (no other
     * output shares its bytes), so the hook need not read it again when none was Inf or NaN. */
    bool finite = j.output->dtype == ACL_FLOAT;
    for (int w = 0; finite && w < ACLSIM_MAX_WORKERS; ++w) {
        finite = !j.nonfinite[w];
    }
    aclTensor *others[] = {j.mean, j.var, j.save_mean, j.save_var};
    for (int k = 0; finite && k < 4; ++k) {
        finite = others[k] == NULL || !aclsim_ops_views_overlap(others[k], j.output);
    }
    if (finite) {
        aclsim_kernel_outputs_finite(2);
    }
    return ACLNN_SUCCESS;
}

/* An empty input: saveMean (if given) 0, saveInvstd (if given) NaN. */
static aclnnStatus bn_empty_kernel(aclOpExecutor *ex, void *workspace)
{
    (void)workspace;
    ACLSIM_OPS_TRY(aclsim_ops_kernel_check_memory(KERNEL, ex, 0u, 2));
    for (int k = 0; k < 2; ++k) {
        aclTensor *t = aclsim_executor_output(ex, k);
        if (t == NULL) {
            continue;
        }
        float value = k == 0 ? 0.0f : NAN;
        aclsim_red_walk all, none;
        aclsim_red_split(t, 0u, &all, &none);
        for (int64_t i = 0; i < all.count; ++i) {
            aclsim_red_scatter(t, t->offset, &all, i, 1, &value);
        }
    }
    return ACLNN_SUCCESS;
}

aclnnStatus aclnnBatchNormGetWorkspaceSize(const aclTensor *input, const aclTensor *weight, const aclTensor *bias,
                                           aclTensor *runningMean, aclTensor *runningVar, bool training,
                                           double momentum, double eps, aclTensor *output, aclTensor *saveMean,
                                           aclTensor *saveInvstd, uint64_t *workspaceSize, aclOpExecutor **executor)
{
    static const aclDataType dtypes[] = {ACLSIM_DTYPES_BatchNorm_DTYPES}; /* the one table */
    const size_t n_dtypes = ACLSIM_DTYPES_COUNT(dtypes);

    ACLSIM_OPS_CHECK_HANDLES(API, input, weight, bias, runningMean, runningVar, output, saveMean, saveInvstd);
    if (workspaceSize == NULL || executor == NULL) {
        return aclsim_ops_nullptr(API, "%s must not be NULL", workspaceSize == NULL ? "workspaceSize" : "executor");
    }
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "input", input));
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "output", output));
    if (training) {
        ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "saveMean", saveMean));
        ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "saveInvstd", saveInvstd));
    }
    if (aclsim_ops_is_empty(input)) { /* before any other check, as CANN */
        const aclTensor *saves[] = {saveMean, saveInvstd};
        for (int k = 0; k < 2; ++k) {
            if (saves[k] != NULL) {
                ACLSIM_OPS_TRY(aclsim_ops_check_memory(API, k == 0 ? "saveMean" : "saveInvstd", saves[k]));
            }
        }
        return aclsim_ops_finish(KERNEL, bn_empty_kernel, 0, NULL, 0, NULL, 0, saves, 2, workspaceSize, executor);
    }
    ACLSIM_OPS_TRY(aclsim_ops_check_dtype(API, "input", input, dtypes, n_dtypes));
    ACLSIM_OPS_TRY(aclsim_ops_check_dtype(API, "output", output, dtypes, n_dtypes));
    if (training) {
        ACLSIM_OPS_TRY(aclsim_ops_check_dtype(API, "saveMean", saveMean, dtypes, n_dtypes));
        ACLSIM_OPS_TRY(aclsim_ops_check_dtype(API, "saveInvstd", saveInvstd, dtypes, n_dtypes));
    }
    const char *names[] = {"weight", "bias", "runningMean", "runningVar"};
    const aclTensor *optional[] = {weight, bias, runningMean, runningVar};
    for (int k = 0; k < 4; ++k) {
        if (optional[k] != NULL) {
            ACLSIM_OPS_TRY(aclsim_ops_check_dtype(API, names[k], optional[k], dtypes, n_dtypes));
        }
    }
    ACLSIM_OPS_TRY(aclsim_red_check_rank(API, "input", input, 2, 8));
    ACLSIM_OPS_TRY(aclsim_red_check_rank(API, "output", output, 2, 8));
    ACLSIM_OPS_TRY(aclsim_ops_check_same_shape(API, "output", output, "input", input));
    int64_t c = input->view_dims[1];
    for (int k = 0; k < 4; ++k) {
        ACLSIM_OPS_TRY(aclsim_red_check_channels(API, names[k], optional[k], c));
    }
    if (training) {
        ACLSIM_OPS_TRY(aclsim_red_check_channels(API, "saveMean", saveMean, c));
        ACLSIM_OPS_TRY(aclsim_red_check_channels(API, "saveInvstd", saveInvstd, c));
    }
    const aclTensor *all[] = {input, weight, bias, runningMean, runningVar, output, saveMean, saveInvstd};
    const char *all_names[] = {"input", "weight", "bias", "runningMean", "runningVar", "output", "saveMean",
                               "saveInvstd"};
    for (int k = 0; k < 8; ++k) {
        if (all[k] != NULL && (training || k < 6)) {
            ACLSIM_OPS_TRY(aclsim_ops_check_memory(API, all_names[k], all[k]));
        }
    }
    int64_t n = aclsim_ops_numel(input) / c;
    bn_params p = {.training = training, .momentum = (float)momentum, .eps = (float)eps, .factor = 0.0f};
    if (n > 1) {
        p.factor = (float)((double)n / (double)(n - 1));
    } else if ((input->ndim == 4 || input->ndim == 5) && c >= V3_MIN_CHANNELS) {
        p.factor = NAN; /* BatchNormV3's path: 0 * n / (n - 1) */
    }
    const aclTensor *inputs[] = {input, weight, bias};
    const aclTensor *outputs[] = {runningMean, runningVar, output, training ? saveMean : NULL,
                                  training ? saveInvstd : NULL};
    uint64_t workspace = (uint64_t)ACLSIM_MAX_WORKERS * ACLSIM_RED_PIECE * sizeof(float);
    aclnnStatus status = aclsim_ops_finish(KERNEL, bn_kernel, workspace, &p, sizeof p, inputs, 3, outputs, 5,
                                           workspaceSize, executor);
    if (status == ACLNN_SUCCESS) {
        aclsim_executor_set_inputs_read(*executor, INPUTS_READ);
        aclsim_executor_set_outputs_written(*executor, 1u << 2); /* output: every element, never read */
    }
    return status;
}

aclnnStatus aclnnBatchNorm(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)
{
    return aclsim_launch(KERNEL, workspace, workspaceSize, executor, stream);
}
