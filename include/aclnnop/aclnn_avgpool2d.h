/*
 * aclnn_py: AvgPool2d (two-phase aclnn API; signatures as in CANN's aclnnop/aclnn_avgpool2d.h).
 * Phase 1 checks the arguments and returns the workspace size and a single-use executor;
 * phase 2 queues the computation on the stream.
 */
#ifndef ACLNNOP_ACLNN_AVGPOOL2D_H
#define ACLNNOP_ACLNN_AVGPOOL2D_H

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnAvgPool2dGetWorkspaceSize(const aclTensor *self, const aclIntArray *kernelSize, const aclIntArray *strides, const aclIntArray *paddings, const bool ceilMode, const bool countIncludePad, const int64_t divisorOverride, const int8_t cubeMathType, aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnAvgPool2d(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif
