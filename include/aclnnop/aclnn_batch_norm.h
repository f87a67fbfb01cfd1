/*
 * aclnn_py: BatchNorm (two-phase aclnn API; signatures as in CANN's aclnnop/aclnn_batch_norm.h, ops-nn).
 * runningMean and runningVar are read and, when training, updated in place (aclnn_py's call and
 * typed function pass their values in: aclnn_py/_convert/params.py, READ_AND_WRITTEN).
 * Phase 1 checks the arguments and returns the workspace size and a single-use executor;
 * phase 2 queues the computation on the stream.
 */
#ifndef ACLNNOP_ACLNN_BATCH_NORM_H
#define ACLNNOP_ACLNN_BATCH_NORM_H

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnBatchNormGetWorkspaceSize(const aclTensor *input, const aclTensor *weight, const aclTensor *bias, aclTensor *runningMean, aclTensor *runningVar, bool training, double momentum, double eps, aclTensor *output, aclTensor *saveMean, aclTensor *saveInvstd, uint64_t *workspaceSize, aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnBatchNorm(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif
