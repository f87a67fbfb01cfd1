/*
 * aclnnConvolutionBackward: aten::convolution_backward for 1-D, 2-D and 3-D convolutions,
 * plain or transposed, grouped, with outputMask selecting which of gradInput, gradWeight and
 * gradBias are computed.  2-D padding may have 4 elements [top, bottom, left, right].
 *
 * The computation is the shared convolution lowering (conv_lowering.h): S is gradOutput
 * normally, input when transposed; B the other one.  This file holds the checks.
 */

#include <string.h>

#include "aclnnop/aclnn_convolution_backward.h"
#include "aclsim_dtype_rules.h" /* generated at build: the dtype table (aclnn_py/ops/<op>.py DTYPE_RULES) */
#include "conv_lowering.h"

static const char API[] = "aclnnConvolutionBackwardGetWorkspaceSize";
static const char KERNEL[] = "aclnnConvolutionBackward";

enum { GRAD_OUTPUT, INPUT, WEIGHT };
enum { GRAD_INPUT, GRAD_WEIGHT, GRAD_BIAS };

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

static aclnnStatus check_room(const conv_args *a, int d, int64_t in, int64_t total, int64_t k)
{
    return aclsim_conv_check_room(API, d, in, total, k, a->input, a->weight, a->padding, a->dilation);
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
        aclsim_conv_padding(a->padding, (int)a->input->ndim - 2, d, &front, &total);
        bool ok = aclsim_conv_reach(k, dil, &span);
        if (a->transposed) {
            /* CANN's form (3-D and transposed 1-D/2-D): with X = gradOutput, Y = input,
             * room = X - outputPadding + padding - span >= 0 and Y == room / stride + 1.  It
             * accepts a gradOutput up to stride - 1 longer than the transposed output size;
             * those positions take part in nothing but gradBias. */
            int64_t op = spatial_output_padding(a->output_padding, d), room;
            ok = ok && aclsim_ops_add(out, -op, &room) && aclsim_ops_add(room, total, &room) &&
                 aclsim_ops_add(room, -span, &room);
            if (!ok || room < 0 || in != room / s + 1) {
                ok = ok && aclsim_conv_transposed_output_size(in, k, s, dil, total, op, &expected);
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
        ACLSIM_OPS_TRY(check_room(a, d, in, total, k));
        aclsim_conv_output_size(in, k, s, dil, total, &expected); /* (fits: the room check passed) */
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
            aclsim_conv_padding(a->padding, (int)a->input->ndim - 2, d, &front, &total);
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
static void describe(const conv_args *a, aclsim_conv_params *p)
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
        aclsim_conv_padding(a->padding, (int)a->input->ndim - 2, j, &p->pad[d], &total);
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

    aclsim_conv_params p;
    memset(&p, 0, sizeof p);
    p.kernel = KERNEL;
    p.slot[CONV_SOURCE] = GRAD_OUTPUT;
    p.slot[CONV_OTHER] = INPUT;
    p.slot[CONV_WEIGHT] = WEIGHT;
    p.slot[CONV_BIAS] = -1;
    p.inputs_read = 0x7u;
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
        return aclsim_ops_finish(KERNEL, work ? aclsim_conv_kernel : aclsim_ops_noop_kernel, 0, &p, sizeof p, inputs, 3,
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
    uint64_t at = aclsim_conv_plan(&p, gradOutput, input, weight, gradInput, gradOutput->view_dims[1]);
    return aclsim_ops_finish(KERNEL, aclsim_conv_kernel, at, &p, sizeof p, inputs, 3, outputs, 3, workspaceSize, executor);
}

aclnnStatus aclnnConvolutionBackward(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                     const aclrtStream stream)
{
    return aclsim_launch(KERNEL, workspace, workspaceSize, executor, stream);
}
