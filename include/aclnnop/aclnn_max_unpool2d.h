/*
 * aclnn_py: MaxUnpool2d (two-phase aclnn API; signatures as in CANN's aclnnop/aclnn_max_unpool2d.h).
 * Phase 1 checks the arguments and returns the workspace size and a single-use executor;
 * phase 2 queues the computation on the stream.
 */
#ifndef ACLNNOP_ACLNN_MAX_UNPOOL2D_H
#define ACLNNOP_ACLNN_MAX_UNPOOL2D_H

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnMaxUnpool2dGetWorkspaceSize(const aclTensor *self, const aclTensor *indices, const aclIntArray *outputSize, aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnMaxUnpool2d(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif
