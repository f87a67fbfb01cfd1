/*
 * aclnn_py simulator-only API (not part of CANN).  Defined in the simulator's
 * lib64/libaclsim.so (link it, or dlopen it), which no CANN has.
 */
#ifndef ACLSIM_ACLSIM_H
#define ACLSIM_ACLSIM_H

#include <stdint.h>
#include "acl/acl_base_rt.h"

/* The CANN release whose headers include/ follows (its acl_rt.h says ACL 1.17.0): what
 * aclsysGetVersionStr reports and the toolkit's version.info records. */
#define ACLSIM_CANN_VERSION "9.1.0"

#ifdef __cplusplus
extern "C" {
#endif

/* Live handles and device memory of the whole process.  device_bytes counts the sizes
 * requested from aclrtMalloc (not the 32-byte rounding and padding). */
typedef struct aclsimCounters {
    int64_t tensors;
    int64_t int_arrays;
    int64_t bool_arrays;
    int64_t float_arrays;
    int64_t scalars;
    int64_t executors;
    int64_t streams;
    int64_t events;
    int64_t device_blocks;
    int64_t device_bytes;
    int64_t tensor_lists;
    int64_t scalar_lists;
    int64_t host_blocks;
    int64_t contexts;
} aclsimCounters;

ACL_FUNC_VISIBILITY aclError aclsimGetCounters(aclsimCounters *out);

#ifdef __cplusplus
}
#endif

#endif
