/*
 * aclnn_py: aclnn base header (aclnn/aclnn_base.h): the meta API plus aclnnInit and
 * aclnnFinalize, as in CANN.  The aclnnStatus codes are in aclnn/opdev/op_errno.h.
 */
#ifndef ACLNN_ACLNN_BASE_H
#define ACLNN_ACLNN_BASE_H

#include "aclnn/acl_meta.h"

#ifdef __cplusplus
extern "C" {
#endif

ACL_FUNC_VISIBILITY aclnnStatus aclnnInit(const char *configPath);
ACL_FUNC_VISIBILITY aclnnStatus aclnnFinalize(void);

#ifdef __cplusplus
}
#endif

#endif
