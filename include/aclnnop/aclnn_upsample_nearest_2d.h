/*
 * aclnn_py: UpsampleNearest2d (two-phase aclnn API; signatures as in CANN's aclnnop/aclnn_upsample_nearest_2d.h).
 * Phase 1 checks the arguments and returns the workspace size and a single-use executor;
 * phase 2 queues the computation on the stream.
 */
#ifndef ACLNNOP_ACLNN_UPSAMPLE_NEAREST_2D_H
#define ACLNNOP_ACLNN_UPSAMPLE_NEAREST_2D_H

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnUpsampleNearest2dGetWorkspaceSize(const aclTensor *self, const aclIntArray *outputSize, aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnUpsampleNearest2d(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, const aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif
