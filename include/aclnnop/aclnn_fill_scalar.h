/*
 * aclnn_py: InplaceFillScalar (two-phase aclnn API; signatures as in CANN's aclnnop/aclnn_fill_scalar.h,
 * ops-math).  selfRef is written in place: every element of its view set to value.
 */
#ifndef ACLNNOP_ACLNN_FILL_SCALAR_H
#define ACLNNOP_ACLNN_FILL_SCALAR_H

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnInplaceFillScalarGetWorkspaceSize(aclTensor *selfRef, const aclScalar *value, uint64_t *workspaceSize, aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnInplaceFillScalar(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif
