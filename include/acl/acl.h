/*
 * aclnn_py: the ACL umbrella header the aclnn samples include (acl/acl.h): process
 * initialisation and the recent-error text, plus the whole runtime API.
 */
#ifndef ACL_ACL_H
#define ACL_ACL_H

#include "acl_rt.h"

#ifdef __cplusplus
extern "C" {
#endif

ACL_FUNC_VISIBILITY aclError aclInit(const char *configPath);
ACL_FUNC_VISIBILITY aclError aclFinalize(void);
ACL_FUNC_VISIBILITY aclError aclFinalizeReference(uint64_t *refCount);
ACL_FUNC_VISIBILITY aclError aclrtGetVersion(int32_t *majorVersion, int32_t *minorVersion, int32_t *patchVersion);
ACL_FUNC_VISIBILITY const char *aclGetRecentErrMsg(void);

#ifdef __cplusplus
}
#endif

#endif
