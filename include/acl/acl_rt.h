/*
 * aclnn_py: ACL runtime API (devices, contexts, streams, events, memory).  Signatures and
 * enum values are CANN's acl/acl_rt.h; only what the aclnn samples and the binding use.
 */
#ifndef ACL_ACL_RT_H
#define ACL_ACL_RT_H

#include <stdint.h>
#include <stddef.h>
#include "acl_base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The ACL interface version aclrtGetVersion reports (CANN 9's acl_rt.h: 1.15.0). */
#define ACL_MAJOR_VERSION 1
#define ACL_MINOR_VERSION 15
#define ACL_PATCH_VERSION 0

typedef enum aclrtRunMode {
    ACL_DEVICE = 0,
    ACL_HOST = 1
} aclrtRunMode;

typedef enum aclrtEventRecordedStatus {
    ACL_EVENT_RECORDED_STATUS_NOT_READY = 0,
    ACL_EVENT_RECORDED_STATUS_COMPLETE = 1
} aclrtEventRecordedStatus;

typedef enum aclrtMemcpyKind {
    ACL_MEMCPY_HOST_TO_HOST = 0,
    ACL_MEMCPY_HOST_TO_DEVICE = 1,
    ACL_MEMCPY_DEVICE_TO_HOST = 2,
    ACL_MEMCPY_DEVICE_TO_DEVICE = 3,
    ACL_MEMCPY_DEFAULT = 4,
    ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE = 5,
    ACL_MEMCPY_INNER_DEVICE_TO_DEVICE = 6,
    ACL_MEMCPY_INTER_DEVICE_TO_DEVICE = 7
} aclrtMemcpyKind;

typedef enum aclrtMemMallocPolicy {
    ACL_MEM_MALLOC_HUGE_FIRST = 0,
    ACL_MEM_MALLOC_HUGE_ONLY = 1,
    ACL_MEM_MALLOC_NORMAL_ONLY = 2,
    ACL_MEM_MALLOC_HUGE_FIRST_P2P = 3,
    ACL_MEM_MALLOC_HUGE_ONLY_P2P = 4,
    ACL_MEM_MALLOC_NORMAL_ONLY_P2P = 5,
    ACL_MEM_MALLOC_HUGE1G_ONLY = 6,
    ACL_MEM_MALLOC_HUGE1G_ONLY_P2P = 7,
    ACL_MEM_TYPE_LOW_BAND_WIDTH = 0x0100,
    ACL_MEM_TYPE_HIGH_BAND_WIDTH = 0x1000,
    ACL_MEM_ACCESS_USER_SPACE_READONLY = 0x100000
} aclrtMemMallocPolicy;

typedef enum aclrtMemAttr {
    ACL_DDR_MEM = 0,
    ACL_HBM_MEM = 1,
    ACL_DDR_MEM_HUGE = 2,
    ACL_DDR_MEM_NORMAL = 3,
    ACL_HBM_MEM_HUGE = 4,
    ACL_HBM_MEM_NORMAL = 5,
    ACL_DDR_MEM_P2P_HUGE = 6,
    ACL_DDR_MEM_P2P_NORMAL = 7,
    ACL_HBM_MEM_P2P_HUGE = 8,
    ACL_HBM_MEM_P2P_NORMAL = 9,
    ACL_HBM_MEM_HUGE1G = 10,
    ACL_HBM_MEM_P2P_HUGE1G = 11,
    ACL_MEM_NORMAL = 12,
    ACL_MEM_HUGE = 13,
    ACL_MEM_HUGE1G = 14,
    ACL_MEM_P2P_NORMAL = 15,
    ACL_MEM_P2P_HUGE = 16,
    ACL_MEM_P2P_HUGE1G = 17
} aclrtMemAttr;

ACL_FUNC_VISIBILITY aclError aclrtSetDevice(int32_t deviceId);
ACL_FUNC_VISIBILITY aclError aclrtResetDevice(int32_t deviceId);
ACL_FUNC_VISIBILITY aclError aclrtResetDeviceForce(int32_t deviceId);
ACL_FUNC_VISIBILITY aclError aclrtGetDevice(int32_t *deviceId);
ACL_FUNC_VISIBILITY aclError aclrtGetDeviceCount(uint32_t *count);
ACL_FUNC_VISIBILITY aclError aclrtGetRunMode(aclrtRunMode *runMode);
ACL_FUNC_VISIBILITY aclError aclrtSynchronizeDevice(void);

ACL_FUNC_VISIBILITY aclError aclrtCreateContext(aclrtContext *context, int32_t deviceId);
ACL_FUNC_VISIBILITY aclError aclrtDestroyContext(aclrtContext context);
ACL_FUNC_VISIBILITY aclError aclrtSetCurrentContext(aclrtContext context);
ACL_FUNC_VISIBILITY aclError aclrtGetCurrentContext(aclrtContext *context);

ACL_FUNC_VISIBILITY aclError aclrtCreateStream(aclrtStream *stream);
ACL_FUNC_VISIBILITY aclError aclrtCreateStreamWithConfig(aclrtStream *stream, uint32_t priority, uint32_t flag);
ACL_FUNC_VISIBILITY aclError aclrtDestroyStream(aclrtStream stream);
ACL_FUNC_VISIBILITY aclError aclrtSynchronizeStream(aclrtStream stream);
ACL_FUNC_VISIBILITY aclError aclrtSynchronizeStreamWithTimeout(aclrtStream stream, int32_t timeout);

ACL_FUNC_VISIBILITY aclError aclrtCreateEvent(aclrtEvent *event);
ACL_FUNC_VISIBILITY aclError aclrtCreateEventWithFlag(aclrtEvent *event, uint32_t flag);
ACL_FUNC_VISIBILITY aclError aclrtDestroyEvent(aclrtEvent event);
ACL_FUNC_VISIBILITY aclError aclrtRecordEvent(aclrtEvent event, aclrtStream stream);
ACL_FUNC_VISIBILITY aclError aclrtSynchronizeEvent(aclrtEvent event);
ACL_FUNC_VISIBILITY aclError aclrtQueryEventStatus(aclrtEvent event, aclrtEventRecordedStatus *status);
ACL_FUNC_VISIBILITY aclError aclrtEventElapsedTime(float *ms, aclrtEvent startEvent, aclrtEvent endEvent);

ACL_FUNC_VISIBILITY aclError aclrtMalloc(void **devPtr, size_t size, aclrtMemMallocPolicy policy);
ACL_FUNC_VISIBILITY aclError aclrtMallocAlign32(void **devPtr, size_t size, aclrtMemMallocPolicy policy);
ACL_FUNC_VISIBILITY aclError aclrtFree(void *devPtr);
ACL_FUNC_VISIBILITY aclError aclrtMallocHost(void **hostPtr, size_t size);
ACL_FUNC_VISIBILITY aclError aclrtFreeHost(void *hostPtr);
ACL_FUNC_VISIBILITY aclError aclrtMemcpy(void *dst, size_t destMax, const void *src, size_t count, aclrtMemcpyKind kind);
ACL_FUNC_VISIBILITY aclError aclrtMemcpyAsync(void *dst, size_t destMax, const void *src, size_t count, aclrtMemcpyKind kind, aclrtStream stream);
ACL_FUNC_VISIBILITY aclError aclrtMemset(void *devPtr, size_t maxCount, int32_t value, size_t count);
ACL_FUNC_VISIBILITY aclError aclrtMemsetAsync(void *devPtr, size_t maxCount, int32_t value, size_t count, aclrtStream stream);
ACL_FUNC_VISIBILITY aclError aclrtGetMemInfo(aclrtMemAttr attr, size_t *free, size_t *total);

#ifdef __cplusplus
}
#endif

#endif
