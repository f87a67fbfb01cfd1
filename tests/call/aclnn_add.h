/* A stand-in for CANN's aclnnAdd (out = self + alpha * other), with CANN's prototype, for the
 * tests (tests/call/fake_ops.c): float32 tensors of one shape, no broadcasting. */
#ifndef ACLNN_STAND_IN_ADD_H_
#define ACLNN_STAND_IN_ADD_H_

#include "aclnn/aclnn_base.h"

#ifdef __cplusplus
extern "C" {
#endif

__attribute__((visibility("default"))) aclnnStatus aclnnAddGetWorkspaceSize(const aclTensor *self,
    const aclTensor *other, const aclScalar *alpha, aclTensor *out, uint64_t *workspaceSize,
    aclOpExecutor **executor);
__attribute__((visibility("default"))) aclnnStatus aclnnAdd(void *workspace, uint64_t workspaceSize,
    aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif
