/*
 * The runtime functions the simulator declares (CANN's prototypes, include/acl/) but does not
 * honour: each is defined here from the one table, unsupported.def, and returns the status
 * CANN returns for a feature the device does not support (ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
 * 207000; NULL for the two that return a handle), after setting this thread's recent error
 * message (aclGetRecentErrMsg) and last error (aclrtGetLastError) naming the function.  So a
 * CANN program that uses them compiles, links and is told at run time, never by a missing
 * symbol nor by a silent success.
 *
 * Each row's first field says why: the kinds of NO_CPU work a CPU cannot stand in for, or
 * NOT_YET for what a CPU could do but the simulator does not do yet.
 */
#define _POSIX_C_SOURCE 200809L

#include "runtime_internal.h"

static const char *why(enum aclsim_unsupported_kind kind)
{
    switch (kind) {
    case ACLSIM_WHY_KERNELS:
        return "device kernel binaries cannot be loaded, inspected or launched on a CPU";
    case ACLSIM_WHY_IPC:
        return "there is no device memory or event to share with another process or server";
    case ACLSIM_WHY_NOTIFY:
        return "the simulator has no hardware notifies";
    case ACLSIM_WHY_SNAPSHOT:
        return "the simulator cannot snapshot a device";
    case ACLSIM_WHY_MBUF:
        return "the simulator has no device buffer queues (mbuf)";
    case ACLSIM_WHY_DEVICE_CONTROL:
        return "the simulator has no device-side control flow (labels, stream switches, conditions)";
    case ACLSIM_WHY_HW_MAINTENANCE:
        return "the simulator has no device caches, core groups, memory error repair or hardware tracing";
    case ACLSIM_WHY_MODEL_DUMP:
        return "the simulator runs no offline models";
    case ACLSIM_WHY_NOT_YET:
        break;
    }
    return "not implemented by the simulator yet";
}

void aclsim_unsupported(const char *api, enum aclsim_unsupported_kind kind)
{
    aclsim_set_error("%s: feature not supported by the aclnn_py CANN simulator (%s)", api, why(kind));
    rt_set_last_error(ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
}

#pragma GCC diagnostic ignored "-Wunused-parameter"

#define ACLSIM_UNSUPPORTED(kind, ret, name, params, failure)                                                         \
    ret name params                                                                                                    \
    {                                                                                                                  \
        aclsim_unsupported(#name, ACLSIM_WHY_##kind);                                                                  \
        return failure;                                                                                                \
    }
#include "unsupported.def"
#undef ACLSIM_UNSUPPORTED
