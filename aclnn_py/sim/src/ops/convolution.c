/*
 * aclnnConvolution: aten::convolution for 1-D, 2-D and 3-D convolutions, plain or transposed,
 * grouped, with an optional bias.  Padding has one value per spatial dimension or pairs
 * ([left, right] 1-D, [top, bottom, left, right] 2-D).
 *
 * The computation is the lowering shared with the convolution gradients (conv_lowering.h): a
 * convolution's output is the gather of its input (B) into S's shape, the product a transposed
 * convolution's gradInput is; a transposed convolution's output is the scatter of its input
 * (S) into B's shape, the product an ordinary one's gradInput is.  Then the bias is added.
 * This file holds the checks, in CANN's order, with the numpy backend's messages
 * (aclnn_py/ops/convolution.py).
 */

#include <stdio.h>
#include <string.h>

#include "aclnnop/aclnn_convolution.h"
#include "aclsim_dtype_rules.h" /* generated at build: the dtype table (aclnn_py/ops/<op>.py DTYPE_RULES) */
#include "conv_lowering.h"

static const char API[] = "aclnnConvolutionGetWorkspaceSize";
static const char KERNEL[] = "aclnnConvolution";

/* The executor's input slots, in the prototype's order. */
enum { INPUT, WEIGHT, BIAS };

/* CANN's limit on a transposed convolution's dilation * (kernel - 1) - padding. */
enum { TRANSPOSED_REACH = 255 };

typedef struct {
    const aclTensor *input, *weight, *bias, *output;
    const aclIntArray *stride, *padding, *dilation, *output_padding;
    bool transposed;
    int64_t groups;
    int spatial;
    int64_t pad_front[3], pad_total[3];
    int64_t out_dims[5];
} conv_args;

static aclnnStatus check_dtypes(const conv_args *a)
{
    static const aclDataType dtypes[] = {ACLSIM_DTYPES_Convolution_DTYPES}; /* the one table */
    size_t n = ACLSIM_DTYPES_COUNT(dtypes);
    if (a->bias != NULL) {
        ACLSIM_OPS_TRY(aclsim_ops_check_dtype(API, "bias", a->bias, dtypes, n));
    }
    ACLSIM_OPS_TRY(aclsim_ops_check_dtype(API, "input", a->input, dtypes, n));
    ACLSIM_OPS_TRY(aclsim_ops_check_dtype(API, "weight", a->weight, dtypes, n));
    return aclsim_ops_check_dtype(API, "output", a->output, dtypes, n);
}

static aclnnStatus check_length(const char *name, const aclIntArray *values, uint64_t rank)
{
    if (values->size != rank - 2) {
        return aclsim_ops_invalid(API, "%s must have %llu element(s) for a %llu-D input, got %s", name,
                                  (unsigned long long)(rank - 2), (unsigned long long)rank, aclsim_ops_ints(values).s);
    }
    return ACLNN_SUCCESS;
}

static aclnnStatus check_ranks(const conv_args *a)
{
    uint64_t rank = a->input->ndim;
    if (rank < 3 || rank > 5) {
        return aclsim_ops_invalid(API, "input must be 3-D (NCL), 4-D (NCHW) or 5-D (NCDHW), got %llu-D shape %s",
                                  (unsigned long long)rank, aclsim_ops_shape(a->input).s);
    }
    if (a->weight->ndim != rank) {
        return aclsim_ops_invalid(API, "weight must have input's rank %llu, got %llu-D shape %s",
                                  (unsigned long long)rank, (unsigned long long)a->weight->ndim,
                                  aclsim_ops_shape(a->weight).s);
    }
    if (a->output->ndim != rank) {
        return aclsim_ops_invalid(API, "output must have input's rank %llu, got %llu-D shape %s",
                                  (unsigned long long)rank, (unsigned long long)a->output->ndim,
                                  aclsim_ops_shape(a->output).s);
    }
    if (a->bias != NULL) {
        const int64_t *wd = a->weight->view_dims;
        int64_t length;
        if (!a->transposed) {
            length = wd[0];
        } else if (!aclsim_ops_mul(wd[1], a->groups, &length)) {
            length = -1;
        }
        if (a->bias->ndim != 1 || a->bias->view_dims[0] != length) {
            return aclsim_ops_invalid(API, "bias must be 1-D of length %s = %lld, got %s",
                                      a->transposed ? "weight.shape[1] * groups" : "weight.shape[0]",
                                      (long long)length, aclsim_ops_shape(a->bias).s);
        }
    }
    ACLSIM_OPS_TRY(check_length("stride", a->stride, rank));
    ACLSIM_OPS_TRY(check_length("dilation", a->dilation, rank));
    uint64_t spatial = rank - 2;
    bool pairs = rank == 4 || (rank == 3 && !a->transposed);
    if (a->padding->size != spatial && !(pairs && a->padding->size == 2 * spatial)) {
        char alternative[32] = "";
        if (pairs) {
            snprintf(alternative, sizeof alternative, " or %llu", (unsigned long long)(2 * spatial));
        }
        return aclsim_ops_invalid(API, "padding must have %llu element(s)%s for a %s%llu-D input, got %s",
                                  (unsigned long long)spatial, alternative, a->transposed ? "transposed " : "",
                                  (unsigned long long)rank, aclsim_ops_ints(a->padding).s);
    }
    if (a->transposed) {
        ACLSIM_OPS_TRY(check_length("outputPadding", a->output_padding, rank));
    }
    return ACLNN_SUCCESS;
}

/* The view format each rank allows (3-D: NCL, or ND as the binding describes a 3-D tensor). */
static aclnnStatus check_format(const char *name, const aclTensor *t)
{
    aclFormat f = t->format;
    bool ok = t->ndim == 3 ? f == ACL_FORMAT_ND || f == ACL_FORMAT_NCL
              : t->ndim == 4 ? f == ACL_FORMAT_NCHW
                             : f == ACL_FORMAT_NCDHW || f == ACL_FORMAT_NDHWC;
    if (!ok) {
        return aclsim_ops_invalid(API, "%s is %llu-D, its format must be %s, got %s", name,
                                  (unsigned long long)t->ndim,
                                  t->ndim == 3 ? "ND or NCL" : t->ndim == 4 ? "NCHW" : "NCDHW or NDHWC",
                                  aclsim_ops_format_name(f));
    }
    return ACLNN_SUCCESS;
}

static aclnnStatus check_formats(const conv_args *a)
{
    if (a->input->format != a->output->format) {
        return aclsim_ops_invalid(API, "input and output must have the same format, got %s and %s",
                                  aclsim_ops_format_name(a->input->format), aclsim_ops_format_name(a->output->format));
    }
    if (a->bias != NULL) {
        aclFormat f = a->bias->format;
        if (f != ACL_FORMAT_ND && f != ACL_FORMAT_NCL && f != ACL_FORMAT_NCHW && f != ACL_FORMAT_NCDHW) {
            return aclsim_ops_invalid(API, "bias format must be ND, NCL, NCHW or NCDHW, got %s",
                                      aclsim_ops_format_name(f));
        }
    }
    ACLSIM_OPS_TRY(check_format("input", a->input));
    ACLSIM_OPS_TRY(check_format("weight", a->weight));
    return check_format("output", a->output);
}

/* CANN's limit on dilation * (kernel - 1) - padding of a non-empty transposed convolution, with
 * the padding element its code reads for H (1-D: L) and W. */
static aclnnStatus check_transposed_reach(const conv_args *a)
{
    static const char *const labels[3][2] = {{"L", ""}, {"H", "W"}, {"H", "W"}};
    static const int dims[3][2] = {{0, -1}, {0, 1}, {1, 2}};
    int row = a->spatial - 1;
    for (int i = 0; i < 2 && dims[row][i] >= 0; ++i) {
        int d = dims[row][i];
        int64_t k = a->weight->view_dims[2 + d], value;
        bool ok = aclsim_ops_mul(a->dilation->values[d], k - 1, &value) &&
                  aclsim_ops_add(value, -a->padding->values[d], &value);
        bool three = a->spatial == 3;
        if (!ok || value > TRANSPOSED_REACH || (three && value < 0)) {
            return aclsim_ops_invalid(API, "transposed: dilation * (kernel - 1) - padding along %s must be %s%d%s, "
                                      "got %lld (weight kernel %s, padding = %s, dilation = %s)", labels[row][i],
                                      three ? "in [0, " : "<= ", TRANSPOSED_REACH, three ? "]" : "",
                                      ok ? (long long)value : (long long)INT64_MAX,
                                      aclsim_ops_int_list(a->weight->view_dims + 2, (uint64_t)a->spatial).s,
                                      aclsim_ops_ints(a->padding).s, aclsim_ops_ints(a->dilation).s);
        }
    }
    return ACLNN_SUCCESS;
}

static aclnnStatus check_values(conv_args *a)
{
    const int64_t *in = a->input->view_dims, *wd = a->weight->view_dims;
    for (int d = 0; d < a->spatial; ++d) {
        if (wd[2 + d] <= 0) {
            return aclsim_ops_invalid(API, "weight spatial dims must be > 0, got weight %s",
                                      aclsim_ops_shape(a->weight).s);
        }
    }
    ACLSIM_OPS_TRY(aclsim_ops_check_array_min(API, "stride", a->stride, 0, true));
    ACLSIM_OPS_TRY(aclsim_ops_check_array_min(API, "dilation", a->dilation, 0, true));
    ACLSIM_OPS_TRY(aclsim_ops_check_array_min(API, "padding", a->padding, 0, false));
    for (int d = 0; d < a->spatial; ++d) {
        aclsim_conv_padding(a->padding, a->spatial, d, &a->pad_front[d], &a->pad_total[d]);
    }
    bool input_empty = aclsim_ops_is_empty(a->input);
    if (!a->transposed && !input_empty) {
        for (int d = 0; d < a->spatial; ++d) {
            ACLSIM_OPS_TRY(aclsim_conv_check_room(API, d, in[2 + d], a->pad_total[d], wd[2 + d], a->input, a->weight,
                                                  a->padding, a->dilation));
        }
    }
    if (a->groups <= 0) {
        return aclsim_ops_invalid(API, "groups must be > 0, got %lld", (long long)a->groups);
    }
    if (a->transposed) {
        if (wd[0] != in[1]) {
            return aclsim_ops_invalid(API, "transposed: weight.shape[0] = %lld must equal input.shape[1] = %lld",
                                      (long long)wd[0], (long long)in[1]);
        }
        for (int d = 0; d < a->spatial; ++d) {
            int64_t p = a->output_padding->values[d];
            if (p < 0 || (p >= a->stride->values[d] && p >= a->dilation->values[d])) {
                return aclsim_ops_invalid(API, "transposed: outputPadding must be >= 0 and < stride or < dilation in "
                                          "every dimension, got outputPadding = %s, stride = %s, dilation = %s",
                                          aclsim_ops_ints(a->output_padding).s, aclsim_ops_ints(a->stride).s,
                                          aclsim_ops_ints(a->dilation).s);
            }
        }
    } else {
        int64_t channels;
        if (!aclsim_ops_mul(wd[1], a->groups, &channels) || channels != in[1]) {
            return aclsim_ops_invalid(API, "input.shape[1] = %lld must equal weight.shape[1] * groups = %lld * %lld",
                                      (long long)in[1], (long long)wd[1], (long long)a->groups);
        }
    }
    if (wd[0] % a->groups != 0) {
        return aclsim_ops_invalid(API, "weight.shape[0] = %lld must be divisible by groups = %lld", (long long)wd[0],
                                  (long long)a->groups);
    }
    if (a->transposed) {
        if (in[1] <= 0) {
            return aclsim_ops_invalid(API, "transposed: input.shape[1] must be > 0, got input %s",
                                      aclsim_ops_shape(a->input).s);
        }
        if (!input_empty) {
            ACLSIM_OPS_TRY(check_transposed_reach(a));
        }
    }
    return ACLNN_SUCCESS;
}

/* The inferred output shape (a->out_dims), then the output's. */
static aclnnStatus check_output_shape(conv_args *a)
{
    const int64_t *in = a->input->view_dims, *wd = a->weight->view_dims;
    uint64_t rank = a->input->ndim;
    bool ok = true;
    a->out_dims[0] = in[0];
    if (a->transposed) {
        ok = aclsim_ops_mul(wd[1], a->groups, &a->out_dims[1]);
    } else {
        a->out_dims[1] = wd[0];
    }
    for (int d = 0; d < a->spatial; ++d) {
        int64_t k = wd[2 + d], s = a->stride->values[d], dil = a->dilation->values[d], span, *out = &a->out_dims[2 + d];
        if (a->transposed) {
            ok = ok && aclsim_conv_transposed_output_size(in[2 + d], k, s, dil, a->pad_total[d],
                                                          a->output_padding->values[d], out);
        } else if (ok && aclsim_conv_reach(k, dil, &span) && in[2 + d] + a->pad_total[d] >= span) {
            /* (the room check passed, or the input is empty: in + total fits int64 then) */
            ok = aclsim_conv_output_size(in[2 + d], k, s, dil, a->pad_total[d], out);
        } else {
            *out = -1;
        }
    }
    int64_t numel = 1;
    for (uint64_t i = 0; ok && i < rank; ++i) {
        ok = a->out_dims[i] >= 0 && (a->out_dims[1] == 0 || aclsim_ops_mul(numel, a->out_dims[i], &numel));
    }
    aclsim_ops_text inferred = aclsim_ops_int_list(a->out_dims, rank);
    if (!ok) {
        return aclsim_ops_invalid(API, "output shape %s (inferred from input %s, weight %s and the parameters) must "
                                  "not have a negative size", inferred.s, aclsim_ops_shape(a->input).s,
                                  aclsim_ops_shape(a->weight).s);
    }
    bool out_empty = false;
    for (uint64_t i = 0; i < rank; ++i) {
        out_empty = out_empty || a->out_dims[i] == 0;
    }
    if ((aclsim_ops_is_empty(a->input) || aclsim_ops_is_empty(a->weight)) && !out_empty) {
        return aclsim_ops_invalid(API, "output must be empty when input or weight is empty, got output %s (input %s, "
                                  "weight %s)", inferred.s, aclsim_ops_shape(a->input).s,
                                  aclsim_ops_shape(a->weight).s);
    }
    for (uint64_t i = 0; i < rank; ++i) {
        if (a->output->view_dims[i] != a->out_dims[i]) {
            return aclsim_ops_invalid(API, "output shape must be %s (inferred from input, weight and the parameters), "
                                      "got %s", inferred.s, aclsim_ops_shape(a->output).s);
        }
    }
    return ACLNN_SUCCESS;
}

static aclnnStatus check_params(conv_args *a, int8_t cubeMathType)
{
    ACLSIM_OPS_TRY(check_dtypes(a));
    ACLSIM_OPS_TRY(check_ranks(a));
    a->spatial = (int)a->input->ndim - 2;
    ACLSIM_OPS_TRY(check_formats(a));
    ACLSIM_OPS_TRY(check_values(a));
    ACLSIM_OPS_TRY(check_output_shape(a));
    if (cubeMathType < 0 || cubeMathType > 4) {
        return aclsim_ops_invalid(API, "cubeMathType must be 0 (KEEP_DTYPE), 1 (ALLOW_FP32_DOWN_PRECISION), "
                                  "2 (USE_FP16), 3 (USE_HF32) or 4 (USE_FP32_ADD), got %d", (int)cubeMathType);
    }
    return ACLNN_SUCCESS;
}

/* The S/B description of a validated, non-empty call (conv_lowering.h): S is the output and B
 * the input, or the other way round when transposed. */
static void describe(const conv_args *a, aclsim_conv_params *p)
{
    const int64_t *s = a->transposed ? a->input->view_dims : a->out_dims;
    const int64_t *b = a->transposed ? a->out_dims : a->input->view_dims;
    p->kernel = KERNEL;
    p->slot[CONV_SOURCE] = INPUT;
    p->slot[CONV_OTHER] = -1;
    p->slot[CONV_WEIGHT] = WEIGHT;
    p->slot[CONV_BIAS] = a->bias != NULL ? BIAS : -1;
    p->inputs_read = (1u << INPUT) | (1u << WEIGHT) | (a->bias != NULL ? 1u << BIAS : 0u);
    p->mask[CONV_GI] = true;
    p->transposed = !a->transposed; /* gather into S: an ordinary convolution's output */
    p->n = a->input->view_dims[0];
    p->cs = a->weight->view_dims[0];
    p->cb = a->weight->view_dims[1] * a->groups;
    p->groups = a->groups;
    for (int d = 0; d < 3; ++d) {
        p->ss[d] = p->bs[d] = p->ks[d] = p->stride[d] = p->dilation[d] = 1;
        p->pad[d] = 0;
    }
    for (int j = 0; j < a->spatial; ++j) {
        int d = 3 - a->spatial + j;
        p->ss[d] = s[j + 2];
        p->bs[d] = b[j + 2];
        p->ks[d] = a->weight->view_dims[j + 2];
        p->stride[d] = a->stride->values[j];
        p->dilation[d] = a->dilation->values[j];
        p->pad[d] = a->pad_front[j];
    }
}

aclnnStatus aclnnConvolutionGetWorkspaceSize(const aclTensor *input, const aclTensor *weight, const aclTensor *bias,
                                             const aclIntArray *stride, const aclIntArray *padding,
                                             const aclIntArray *dilation, bool transposed,
                                             const aclIntArray *outputPadding, const int64_t groups,
                                             aclTensor *output, int8_t cubeMathType, uint64_t *workspaceSize,
                                             aclOpExecutor **executor)
{
    ACLSIM_OPS_CHECK_HANDLES(API, input, weight, bias, stride, padding, dilation, outputPadding, output);
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "input", input));
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "weight", weight));
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "stride", stride));
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "padding", padding));
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "dilation", dilation));
    if (transposed) {
        ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "outputPadding", outputPadding));
    }
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "output", output));
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "workspaceSize", workspaceSize));
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "executor", executor));
    conv_args a = {
        .input = input, .weight = weight, .bias = bias, .output = output, .stride = stride, .padding = padding,
        .dilation = dilation, .output_padding = outputPadding, .transposed = transposed, .groups = groups,
    };
    ACLSIM_OPS_TRY(check_params(&a, cubeMathType));

    if (aclsim_ops_is_empty(input) || aclsim_ops_is_empty(weight) || aclsim_ops_is_empty(output)) {
        return aclsim_ops_finish(KERNEL, aclsim_ops_noop_kernel, 0, NULL, 0, NULL, 0, NULL, 0, workspaceSize,
                                 executor);
    }
    ACLSIM_OPS_TRY(aclsim_ops_check_memory(API, "input", input));
    ACLSIM_OPS_TRY(aclsim_ops_check_memory(API, "weight", weight));
    if (bias != NULL) {
        ACLSIM_OPS_TRY(aclsim_ops_check_memory(API, "bias", bias));
    }
    ACLSIM_OPS_TRY(aclsim_ops_check_memory(API, "output", output));

    aclsim_conv_params p;
    memset(&p, 0, sizeof p);
    describe(&a, &p);
    uint64_t at = aclsim_conv_plan(&p, input, NULL, weight, output, a.out_dims[1]);
    const aclTensor *inputs[3] = {input, weight, bias};
    const aclTensor *outputs[3] = {output, NULL, NULL};
    return aclsim_ops_finish(KERNEL, aclsim_conv_kernel, at, &p, sizeof p, inputs, 3, outputs, 3, workspaceSize,
                             executor);
}

aclnnStatus aclnnConvolution(void *workspace, const uint64_t workspaceSize, aclOpExecutor *executor,
                             aclrtStream stream)
{
    return aclsim_launch(KERNEL, workspace, workspaceSize, executor, stream);
}
