/*
 * aclnn_py: InplaceCopy (two-phase aclnn API; signatures as in CANN's aclnnop/aclnn_copy.h, ops-math).
 * selfRef is written in place: src converted to its dtype and broadcast to its shape.
 */
#ifndef ACLNNOP_ACLNN_COPY_H
#define ACLNNOP_ACLNN_COPY_H

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnInplaceCopyGetWorkspaceSize(aclTensor *selfRef, const aclTensor *src, uint64_t *workspaceSize, aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnInplaceCopy(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, const aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif
