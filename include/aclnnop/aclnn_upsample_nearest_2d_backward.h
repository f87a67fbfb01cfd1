/*
 * aclnn_py: UpsampleNearest2dBackward (two-phase aclnn API; signatures as in CANN's aclnnop/aclnn_upsample_nearest_2d_backward.h).
 * Phase 1 checks the arguments and returns the workspace size and a single-use executor;
 * phase 2 queues the computation on the stream.
 */
#ifndef ACLNNOP_ACLNN_UPSAMPLE_NEAREST_2D_BACKWARD_H
#define ACLNNOP_ACLNN_UPSAMPLE_NEAREST_2D_BACKWARD_H

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnUpsampleNearest2dBackwardGetWorkspaceSize(const aclTensor *gradOut, const aclIntArray *outputSize, const aclIntArray *inputSize, double scalesH, double scalesW, aclTensor *gradInput, uint64_t *workspaceSize, aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnUpsampleNearest2dBackward(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif
