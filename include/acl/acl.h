/*
 * aclnn_py: the ACL umbrella header the aclnn samples include (acl/acl.h).  In CANN 9.1 it
 * includes the runtime API (acl_rt.h, where aclInit, aclFinalize, aclGetRecentErrMsg and
 * aclrtGetVersion are declared) and the model/operator headers the simulator does not have.
 */
#ifndef ACL_ACL_H
#define ACL_ACL_H

#include "acl_rt.h"

#endif
