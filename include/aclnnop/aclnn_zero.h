/*
 * aclnn_py: InplaceZero (two-phase aclnn API; signatures as in CANN's aclnnop/aclnn_zero.h, ops-math).
 * selfRef is written in place: every element of its view set to 0.
 */
#ifndef ACLNNOP_ACLNN_ZERO_H
#define ACLNNOP_ACLNN_ZERO_H

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnInplaceZeroGetWorkspaceSize(aclTensor *selfRef, uint64_t *workspaceSize, aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnInplaceZero(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif
