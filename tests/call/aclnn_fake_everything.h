/* Test operators beyond the five, one parameter of every kind aclnn_py.call converts
 * (tests/call/fake_ops.c; installed by the tests as a custom operator package). */
#ifndef ACLNN_FAKE_EVERYTHING_H_
#define ACLNN_FAKE_EVERYTHING_H_

#include "aclnn/aclnn_base.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    FAKE_MODE_ADD = 0,
    FAKE_MODE_SUB = 1,
} FakeMode;

/* c = alpha + sum(betas) + offset + small + count + sum(ints[i] for mask[i]) + fscale * sum(weights)
 *     + strlen(tag) (tag may be NULL);
 * out[k] = sign * scale * x[k] + c (FAKE_MODE_ADD) or - c (FAKE_MODE_SUB), sign = negate ? -1 : 1;
 * extra (may be NULL) = 2 * x; outs[i][k] = scale * xs[i][k] + x[k].
 * Float32 tensors, all of x's number of elements; ints and mask of equal length. */
__attribute__((visibility("default"))) aclnnStatus aclnnFakeEverythingGetWorkspaceSize(
    const aclTensor *x, const aclTensorList *xs, const aclIntArray *ints, const aclBoolArray *mask,
    const aclFloatArray *weights, const aclScalar *alpha, const aclScalarList *betas, int64_t offset,
    int8_t small, uint16_t count, bool negate, double scale, float fscale, const char *tag, FakeMode mode,
    aclTensor *out, aclTensor *extra, aclTensorList *outs, uint64_t *workspaceSize, aclOpExecutor **executor);
__attribute__((visibility("default"))) aclnnStatus aclnnFakeEverything(void *workspace, uint64_t workspaceSize,
    aclOpExecutor *executor, aclrtStream stream);

/* out (float64, [1 + len(values), 2]): row 0 = (value's aclDataType, value), row 1 + i = values[i]. */
__attribute__((visibility("default"))) aclnnStatus aclnnFakeScalarInfoGetWorkspaceSize(
    const aclScalar *value, const aclScalarList *values, aclTensor *out, uint64_t *workspaceSize,
    aclOpExecutor **executor);
__attribute__((visibility("default"))) aclnnStatus aclnnFakeScalarInfo(void *workspace, uint64_t workspaceSize,
    aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif
