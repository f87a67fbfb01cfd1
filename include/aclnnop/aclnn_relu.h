/*
 * aclnn_py: Relu (two-phase aclnn API; signatures as in CANN's aclnnop/aclnn_relu.h, ops-nn).
 * CANN declares out const and writes it (aclnn_py's call treats it as an output all the same:
 * aclnn_py/_convert/params.py, WRITTEN_CONST).
 * Phase 1 checks the arguments and returns the workspace size and a single-use executor;
 * phase 2 queues the computation on the stream.
 */
#ifndef ACLNNOP_ACLNN_RELU_H
#define ACLNNOP_ACLNN_RELU_H

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnReluGetWorkspaceSize(const aclTensor *self, const aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnRelu(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, const aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif
