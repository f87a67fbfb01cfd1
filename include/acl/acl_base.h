/*
 * aclnn_py: ACL base declarations.  CANN's acl_base.h adds model/op data buffers on top of
 * acl_base_rt.h; the simulator needs none of them, so this file only pulls in the runtime
 * base types and the runtime error codes.
 */
#ifndef ACL_ACL_BASE_H
#define ACL_ACL_BASE_H

#include "acl_base_rt.h"
#include "error_codes/rt_error_codes.h"

#endif
