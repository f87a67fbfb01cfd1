/*
 * aclnn_py: BatchMatMul (two-phase aclnn API; signatures as in CANN's aclnnop/aclnn_batch_matmul.h, ops-nn).
 * Phase 1 checks the arguments and returns the workspace size and a single-use executor;
 * phase 2 queues the computation on the stream.
 */
#ifndef ACLNNOP_ACLNN_BATCH_MATMUL_H
#define ACLNNOP_ACLNN_BATCH_MATMUL_H

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnBatchMatMulGetWorkspaceSize(const aclTensor *self, const aclTensor *mat2, aclTensor *out, int8_t cubeMathType, uint64_t *workspaceSize, aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnBatchMatMul(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif
