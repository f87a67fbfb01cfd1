/*
 * Float overflow status (aclrtGetOverflowStatus & co.).  CANN reports the overflow of the tasks
 * on every stream of the current device, and on an Atlas A2 (the simulated 910B) the status is
 * the process's (every device's tasks set it, a reset clears it for all), so the
 * simulator keeps one status per process; a status query or reset is itself a task,
 * queued on a stream, that copies the status into device memory or clears it when the stream
 * gets there (asynchronous: synchronise the stream before reading the copy).
 *
 * The simulator's kernels report their floating-point outputs through nnopbase's one hook
 * (executor.c, once per output after the kernel ran), which asks aclsim_overflow_mode what to
 * do and calls aclsim_overflow_record on an overflow: in Inf/NaN mode (CANN's default on an
 * A2) an Inf or NaN made from finite inputs, in saturation mode a result that had to be
 * saturated, and then only on a stream whose overflow switch was on when the task was
 * queued (aclrtSetStreamOverflowSwitch applies to the tasks queued after it).
 * Depends on device.c (streams, the running task) and memory.c (device ranges).
 */
#define _POSIX_C_SOURCE 200809L

#include <stdlib.h>
#include <string.h>

#include "runtime_internal.h"

/* aclrtGetOverflowStatus: "the size is fixed at 64 bytes" (CANN's parameter description). */
#define STATUS_BYTES 64u

static uint32_t overflowed; /* under rt_lock: the process's status (an A2's) */

aclrtFloatOverflowMode aclsim_overflow_mode(void)
{
    const struct rt_task *t = rt_running_task();
    if (t == NULL) {
        return ACL_RT_OVERFLOW_MODE_UNDEF;
    }
    return rt_sat_mode();
}

void aclsim_overflow_record(void)
{
    const struct rt_task *t = rt_running_task();
    if (t == NULL) {
        return;
    }
    if (rt_sat_mode() == ACL_RT_OVERFLOW_MODE_SATURATION && t->overflow_check == 0) {
        return; /* detection is off for this task's stream */
    }
    pthread_mutex_lock(&rt_lock);
    overflowed = 1;
    pthread_mutex_unlock(&rt_lock);
}

enum status_op {
    GET,      /* write the status at addr */
    GET_DESC, /* write it at the address held in addr's first 8 bytes (the 910B's layout) */
    RESET
};

struct status_task {
    enum status_op op;
    void *addr;
    uint64_t size;
    char api[40];
};

static aclError write_status(const struct status_task *st, void *where, uint64_t size, uint32_t status)
{
    pthread_mutex_lock(&rt_lock);
    int ok = rt_device_range_ok_locked(where, size);
    pthread_mutex_unlock(&rt_lock);
    if (!ok) {
        return rt_fail(ACL_ERROR_RT_DEVICE_MEM_ERROR,
                       "%s: %p does not hold %llu bytes of device memory when the status task runs", st->api, where,
                       (unsigned long long)size);
    }
    aclsim_device_prepare(where);
    uint64_t n = size < STATUS_BYTES ? size : STATUS_BYTES;
    memset(where, 0, n);
    memcpy(where, &status, sizeof status);
    return ACL_SUCCESS;
}

static aclError run_status(void *ctx)
{
    struct status_task *st = ctx;
    pthread_mutex_lock(&rt_lock);
    uint32_t status = overflowed;
    if (st->op == RESET) {
        overflowed = 0;
    }
    pthread_mutex_unlock(&rt_lock);
    if (st->op == GET) {
        return write_status(st, st->addr, st->size, status);
    }
    if (st->op == GET_DESC) {
        pthread_mutex_lock(&rt_lock);
        int ok = rt_device_range_ok_locked(st->addr, sizeof(uint64_t));
        pthread_mutex_unlock(&rt_lock);
        if (!ok) {
            return rt_fail(ACL_ERROR_RT_DEVICE_MEM_ERROR, "%s: outputAddr %p was freed before the status task ran",
                           st->api, st->addr);
        }
        uint64_t where = 0;
        memcpy(&where, st->addr, sizeof where);
        return write_status(st, (void *)(uintptr_t)where, st->size, status);
    }
    return ACL_SUCCESS;
}

static aclError queue_status(const char *api, enum status_op op, void *addr, uint64_t size, uint64_t min_size,
                             aclrtStream stream)
{
    if (op != RESET && addr == NULL) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "%s: outputAddr must not be NULL", api);
    }
    if (op != RESET && size < min_size) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "%s: outputSize %llu is less than the %llu bytes the status takes", api,
                       (unsigned long long)size, (unsigned long long)min_size);
    }
    struct status_task *st = calloc(1, sizeof *st);
    if (st == NULL) {
        return rt_fail(ACL_ERROR_RT_MEMORY_ALLOCATION, "%s: out of host memory", api);
    }
    st->op = op;
    st->addr = addr;
    st->size = size;
    snprintf(st->api, sizeof st->api, "%s", api);
    aclError err = ACL_SUCCESS;
    pthread_mutex_lock(&rt_lock);
    uint64_t need = op == GET ? size : sizeof(uint64_t);
    if (op != RESET && !rt_device_range_ok_locked(addr, need)) {
        err = rt_fail(ACL_ERROR_INVALID_PARAM, "%s: outputAddr %p does not hold %llu bytes of device memory", api, addr,
                      (unsigned long long)need);
    } else {
        struct rt_stream *s = rt_resolve_stream_locked(stream, api, &err);
        if (s != NULL) {
            err = rt_enqueue_locked(s, run_status, free, st);
            if (err != ACL_SUCCESS) {
                aclsim_set_error("%s: out of host memory", api);
            }
        }
    }
    pthread_mutex_unlock(&rt_lock);
    if (err != ACL_SUCCESS) {
        free(st);
    }
    return rt_error(err);
}

aclError aclrtGetOverflowStatus(void *outputAddr, size_t outputSize, aclrtStream stream)
{
    return queue_status("aclrtGetOverflowStatus", GET, outputAddr, outputSize, STATUS_BYTES, stream);
}

aclError aclrtResetOverflowStatus(aclrtStream stream)
{
    return queue_status("aclrtResetOverflowStatus", RESET, NULL, 0, 0, stream);
}

aclError aclrtGetFloatOverflowStatus(void *outputAddr, uint64_t outputSize, aclrtStream stream)
{
    return queue_status("aclrtGetFloatOverflowStatus", GET, outputAddr, outputSize, STATUS_BYTES, stream);
}

aclError aclrtResetFloatOverflowStatus(aclrtStream stream)
{
    return queue_status("aclrtResetFloatOverflowStatus", RESET, NULL, 0, 0, stream);
}

/* CANN's check modes (torch_npu's CheckOverflowMode): 0 the original mode, 1 the debug mode;
 * the simulator keeps one status, which both read and clear. */
#define MAX_CHECK_MODE 1u

aclError aclrtNpuGetFloatOverFlowStatus(void *outputAddr, uint64_t outputSize, uint32_t checkMode, aclrtStream stream)
{
    const char *api = "aclrtNpuGetFloatOverFlowStatus";
    if (checkMode > MAX_CHECK_MODE) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "%s: checkMode must be 0 or 1, got %u", api, (unsigned)checkMode);
    }
    /* On a 910B the buffer's first 8 bytes hold the device address the status is written to
     * (how nnopbase's overflow check prepares it). */
    return queue_status(api, GET_DESC, outputAddr, outputSize, sizeof(uint32_t), stream);
}

aclError aclrtNpuClearFloatOverFlowStatus(uint32_t checkMode, aclrtStream stream)
{
    const char *api = "aclrtNpuClearFloatOverFlowStatus";
    if (checkMode > MAX_CHECK_MODE) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "%s: checkMode must be 0 or 1, got %u", api, (unsigned)checkMode);
    }
    return queue_status(api, RESET, NULL, 0, 0, stream);
}
