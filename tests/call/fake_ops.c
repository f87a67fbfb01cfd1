/*
 * The operators of aclnn_fake_everything.h, built against the simulator's internal executor
 * interface so that phase 2 runs on the stream and repeatable executors can be re-pointed.
 * Non-tensor arguments are copied in phase 1, as CANN does.
 */
#include <string.h>

#include "sim_internal.h"
#include "aclnn_fake_everything.h"
#include "aclnn_add.h"

#define MAX_LIST 8

struct everything {
    double c;
    double scale;
    int sign;
    int lists;
    int extra;
};

static int64_t numel(const aclTensor *t)
{
    int64_t n = 1;
    for (uint64_t d = 0; d < t->ndim; d++) {
        n *= t->view_dims[d];
    }
    return n;
}

static int scalar_value(const aclScalar *s, double *out)
{
    switch (s->dtype) {
    case ACL_DOUBLE: { double v; memcpy(&v, s->value, sizeof v); *out = v; return 0; }
    case ACL_FLOAT: { float v; memcpy(&v, s->value, sizeof v); *out = v; return 0; }
    case ACL_INT64: { int64_t v; memcpy(&v, s->value, sizeof v); *out = (double)v; return 0; }
    case ACL_INT32: { int32_t v; memcpy(&v, s->value, sizeof v); *out = v; return 0; }
    case ACL_BOOL: *out = s->value[0] != 0; return 0;
    case ACL_COMPLEX128: { double v[2]; memcpy(v, s->value, sizeof v); *out = v[0]; return 0; }
    default: return -1;
    }
}

static const float *in_data(const aclTensor *t) { return (const float *)t->data + t->offset; }
static float *out_data(aclTensor *t) { return (float *)t->data + t->offset; }

static aclnnStatus everything_kernel(aclOpExecutor *ex, void *workspace)
{
    const struct everything *p = aclsim_executor_params(ex, sizeof *p);
    /* The workspace carries c from the first loop to the others (phase 2 has one). */
    memcpy(workspace, &p->c, sizeof p->c);
    const aclTensor *x = aclsim_executor_input(ex, 0);
    aclTensor *out = aclsim_executor_output(ex, 0);
    aclTensor *extra = aclsim_executor_output(ex, 1);
    double c;
    memcpy(&c, workspace, sizeof c);
    for (int64_t k = 0; k < numel(x); k++) {
        out_data(out)[k] = (float)(p->sign * p->scale * in_data(x)[k] + c);
        if (extra != NULL) {
            out_data(extra)[k] = 2.0f * in_data(x)[k];
        }
    }
    for (int i = 0; i < p->lists; i++) {
        const aclTensor *xi = aclsim_executor_input(ex, 1 + i);
        aclTensor *oi = aclsim_executor_output(ex, 2 + i);
        for (int64_t k = 0; k < numel(x); k++) {
            out_data(oi)[k] = (float)(p->scale * in_data(xi)[k] + in_data(x)[k]);
        }
    }
    return ACLNN_SUCCESS;
}

#define FAIL(status, ...) do { aclsim_set_error(__VA_ARGS__); return status; } while (0)

static int float_tensor_like(const aclTensor *t, int64_t n)
{
    return t != NULL && t->dtype == ACL_FLOAT && numel(t) == n;
}

aclnnStatus aclnnFakeEverythingGetWorkspaceSize(
    const aclTensor *x, const aclTensorList *xs, const aclIntArray *ints, const aclBoolArray *mask,
    const aclFloatArray *weights, const aclScalar *alpha, const aclScalarList *betas, int64_t offset,
    int8_t small, uint16_t count, bool negate, double scale, float fscale, const char *tag, FakeMode mode,
    aclTensor *out, aclTensor *extra, aclTensorList *outs, uint64_t *workspaceSize, aclOpExecutor **executor)
{
    const char *api = "aclnnFakeEverythingGetWorkspaceSize";
    if (x == NULL || xs == NULL || ints == NULL || mask == NULL || weights == NULL || alpha == NULL ||
        betas == NULL || out == NULL || outs == NULL || workspaceSize == NULL || executor == NULL) {
        FAIL(ACLNN_ERR_PARAM_NULLPTR, "%s: a required argument is NULL", api);
    }
    int64_t n = numel(x);
    if (x->dtype != ACL_FLOAT || !float_tensor_like(out, n) || (extra != NULL && !float_tensor_like(extra, n))) {
        FAIL(ACLNN_ERR_PARAM_INVALID, "%s: x, out and extra must be float32 of x's size", api);
    }
    if (xs->size != outs->size || xs->size > MAX_LIST) {
        FAIL(ACLNN_ERR_PARAM_INVALID, "%s: xs and outs must have the same length (at most %d)", api, MAX_LIST);
    }
    for (uint64_t i = 0; i < xs->size; i++) {
        if (!float_tensor_like(xs->tensors[i], n) || !float_tensor_like(outs->tensors[i], n)) {
            FAIL(ACLNN_ERR_PARAM_INVALID, "%s: xs[%llu] and outs[%llu] must be float32 of x's size", api,
                 (unsigned long long)i, (unsigned long long)i);
        }
    }
    if (ints->size != mask->size) {
        FAIL(ACLNN_ERR_PARAM_INVALID, "%s: ints and mask must have the same length", api);
    }
    if (mode != FAKE_MODE_ADD && mode != FAKE_MODE_SUB) {
        FAIL(ACLNN_ERR_PARAM_INVALID, "%s: mode must be FAKE_MODE_ADD or FAKE_MODE_SUB, got %d", api, (int)mode);
    }
    double c = 0, v;
    if (scalar_value(alpha, &v) != 0) {
        FAIL(ACLNN_ERR_PARAM_INVALID, "%s: alpha has an unsupported dtype %d", api, (int)alpha->dtype);
    }
    c += v;
    for (uint64_t i = 0; i < betas->size; i++) {
        if (scalar_value(betas->scalars[i], &v) != 0) {
            FAIL(ACLNN_ERR_PARAM_INVALID, "%s: betas[%llu] has an unsupported dtype", api, (unsigned long long)i);
        }
        c += v;
    }
    c += (double)offset + small + count;
    for (uint64_t i = 0; i < ints->size; i++) {
        c += mask->values[i] ? (double)ints->values[i] : 0.0;
    }
    for (uint64_t i = 0; i < weights->size; i++) {
        c += (double)fscale * weights->values[i];
    }
    c += tag != NULL ? (double)strlen(tag) : 0.0;

    aclOpExecutor *ex = aclsim_executor_new("aclnnFakeEverything", everything_kernel, sizeof(double));
    struct everything *p = ex != NULL ? aclsim_executor_params(ex, sizeof *p) : NULL;
    if (p == NULL || aclsim_executor_add_input(ex, x) < 0 || aclsim_executor_add_input_list(ex, xs) < 0 ||
        aclsim_executor_add_output(ex, out) < 0 || aclsim_executor_add_output(ex, extra) < 0 ||
        aclsim_executor_add_output_list(ex, outs) < 0) {
        aclsim_executor_discard(ex);
        return ACLNN_ERR_INNER;
    }
    p->c = mode == FAKE_MODE_ADD ? c : -c;
    p->scale = scale;
    p->sign = negate ? -1 : 1;
    p->lists = (int)xs->size;
    *workspaceSize = sizeof(double);
    *executor = ex;
    return ACLNN_SUCCESS;
}

aclnnStatus aclnnFakeEverything(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                aclrtStream stream)
{
    return aclsim_launch("aclnnFakeEverything", workspace, workspaceSize, executor, stream);
}

struct scalar_info {
    int rows;
    double values[2 * (1 + MAX_LIST)];
};

static aclnnStatus scalar_info_kernel(aclOpExecutor *ex, void *workspace)
{
    (void)workspace;
    const struct scalar_info *p = aclsim_executor_params(ex, sizeof *p);
    aclTensor *out = aclsim_executor_output(ex, 0);
    memcpy((double *)out->data + out->offset, p->values, sizeof(double) * 2 * (size_t)p->rows);
    return ACLNN_SUCCESS;
}

aclnnStatus aclnnFakeScalarInfoGetWorkspaceSize(const aclScalar *value, const aclScalarList *values,
                                                aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor)
{
    const char *api = "aclnnFakeScalarInfoGetWorkspaceSize";
    if (value == NULL || values == NULL || out == NULL) {
        FAIL(ACLNN_ERR_PARAM_NULLPTR, "%s: a required argument is NULL", api);
    }
    int rows = 1 + (int)values->size;
    if (values->size > MAX_LIST || out->dtype != ACL_DOUBLE || out->ndim != 2 || out->view_dims[0] != rows ||
        out->view_dims[1] != 2) {
        FAIL(ACLNN_ERR_PARAM_INVALID, "%s: out must be float64 [%d, 2]", api, rows);
    }
    aclOpExecutor *ex = aclsim_executor_new("aclnnFakeScalarInfo", scalar_info_kernel, 0);
    struct scalar_info *p = ex != NULL ? aclsim_executor_params(ex, sizeof *p) : NULL;
    if (p == NULL || aclsim_executor_add_output(ex, out) < 0) {
        aclsim_executor_discard(ex);
        return ACLNN_ERR_INNER;
    }
    p->rows = rows;
    for (int i = 0; i < rows; i++) {
        const aclScalar *s = i == 0 ? value : values->scalars[i - 1];
        p->values[2 * i] = (double)s->dtype;
        if (scalar_value(s, &p->values[2 * i + 1]) != 0) {
            aclsim_executor_discard(ex);
            FAIL(ACLNN_ERR_PARAM_INVALID, "%s: scalar %d has an unsupported dtype %d", api, i, (int)s->dtype);
        }
    }
    *workspaceSize = 0;
    *executor = ex;
    return ACLNN_SUCCESS;
}

aclnnStatus aclnnFakeScalarInfo(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                aclrtStream stream)
{
    return aclsim_launch("aclnnFakeScalarInfo", workspace, workspaceSize, executor, stream);
}

/* The stand-in aclnnAdd of aclnn_add.h: out = self + alpha * other. */
static aclnnStatus add_kernel(aclOpExecutor *ex, void *workspace)
{
    (void)workspace;
    const double *alpha = aclsim_executor_params(ex, sizeof *alpha);
    const aclTensor *self = aclsim_executor_input(ex, 0);
    const aclTensor *other = aclsim_executor_input(ex, 1);
    aclTensor *out = aclsim_executor_output(ex, 0);
    for (int64_t k = 0; k < numel(self); k++) {
        out_data(out)[k] = (float)(in_data(self)[k] + *alpha * in_data(other)[k]);
    }
    return ACLNN_SUCCESS;
}

aclnnStatus aclnnAddGetWorkspaceSize(const aclTensor *self, const aclTensor *other, const aclScalar *alpha,
                                     aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor)
{
    const char *api = "aclnnAddGetWorkspaceSize";
    if (self == NULL || other == NULL || alpha == NULL || out == NULL || workspaceSize == NULL ||
        executor == NULL) {
        FAIL(ACLNN_ERR_PARAM_NULLPTR, "%s: a required argument is NULL", api);
    }
    int64_t n = numel(self);
    if (!float_tensor_like(self, n) || !float_tensor_like(other, n) || !float_tensor_like(out, n)) {
        FAIL(ACLNN_ERR_PARAM_INVALID, "%s: self, other and out must be float32 of one size (stand-in)", api);
    }
    double value;
    if (scalar_value(alpha, &value) != 0) {
        FAIL(ACLNN_ERR_PARAM_INVALID, "%s: alpha has an unsupported dtype %d", api, (int)alpha->dtype);
    }
    aclOpExecutor *ex = aclsim_executor_new("aclnnAdd", add_kernel, 0);
    double *p = ex != NULL ? aclsim_executor_params(ex, sizeof *p) : NULL;
    if (p == NULL || aclsim_executor_add_input(ex, self) < 0 || aclsim_executor_add_input(ex, other) < 0 ||
        aclsim_executor_add_output(ex, out) < 0) {
        aclsim_executor_discard(ex);
        return ACLNN_ERR_INNER;
    }
    *p = value;
    *workspaceSize = 0;
    *executor = ex;
    return ACLNN_SUCCESS;
}

aclnnStatus aclnnAdd(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)
{
    return aclsim_launch("aclnnAdd", workspace, workspaceSize, executor, stream);
}
