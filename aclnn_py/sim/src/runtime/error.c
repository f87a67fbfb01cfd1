/*
 * Recent error text (per thread, obtain-and-clear like CANN's aclGetRecentErrMsg, which
 * returns NULL when there is nothing to report), the per-thread last error code
 * (aclrtGetLastError clears it, aclrtPeekAtLastError does not) and the simulator's handle
 * counters.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "runtime_internal.h"

#define ERR_CAPACITY 2048

static _Thread_local char tl_message[ERR_CAPACITY];
static _Thread_local char tl_handed_out[ERR_CAPACITY];

static _Thread_local aclError tl_last_error;

static _Atomic int64_t counters[ACLSIM_CNT_COUNT];

void rt_set_last_error(aclError code)
{
    if (code != ACL_SUCCESS) {
        tl_last_error = code;
    }
}

aclError rt_fail(aclError code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tl_message, sizeof tl_message, fmt, ap);
    va_end(ap);
    rt_set_last_error(code);
    return code;
}

static aclError last_error(aclrtLastErrLevel level, const char *api, int clear)
{
    if (level != ACL_RT_THREAD_LEVEL) {
        return rt_fail(ACL_ERROR_RT_PARAM_INVALID, "%s: level must be ACL_RT_THREAD_LEVEL (0), got %d", api, (int)level);
    }
    aclError code = tl_last_error;
    if (clear) {
        tl_last_error = ACL_SUCCESS;
    }
    return code;
}

/* CANN: the last error of a runtime call on this thread (a failing call's status, or the
 * error of asynchronous work reported at synchronisation); GetLastError also clears it. */
aclError aclrtGetLastError(aclrtLastErrLevel level)
{
    return last_error(level, "aclrtGetLastError", 1);
}

aclError aclrtPeekAtLastError(aclrtLastErrLevel level)
{
    return last_error(level, "aclrtPeekAtLastError", 0);
}

void aclsim_set_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tl_message, sizeof tl_message, fmt, ap);
    va_end(ap);
}

const char *aclGetRecentErrMsg(void)
{
    if (tl_message[0] == '\0') {
        return NULL;
    }
    /* The returned text stays valid until this thread's next call. */
    memcpy(tl_handed_out, tl_message, sizeof tl_handed_out);
    tl_message[0] = '\0';
    return tl_handed_out;
}

void aclsim_counter_add(enum aclsim_counter which, int64_t delta)
{
    if ((int)which < 0 || which >= ACLSIM_CNT_COUNT) {
        return;
    }
    atomic_fetch_add_explicit(&counters[which], delta, memory_order_relaxed);
}

void rt_counter_set(enum aclsim_counter which, int64_t value)
{
    if ((int)which < 0 || which >= ACLSIM_CNT_COUNT) {
        return;
    }
    atomic_store_explicit(&counters[which], value, memory_order_relaxed);
}

static int64_t counter(enum aclsim_counter which)
{
    return atomic_load_explicit(&counters[which], memory_order_relaxed);
}

aclError aclsimGetCounters(aclsimCounters *out)
{
    if (out == NULL) {
        aclsim_set_error("aclsimGetCounters: out must not be NULL");
        return ACL_ERROR_INVALID_PARAM;
    }
    out->tensors = counter(ACLSIM_CNT_TENSORS);
    out->int_arrays = counter(ACLSIM_CNT_INT_ARRAYS);
    out->bool_arrays = counter(ACLSIM_CNT_BOOL_ARRAYS);
    out->float_arrays = counter(ACLSIM_CNT_FLOAT_ARRAYS);
    out->scalars = counter(ACLSIM_CNT_SCALARS);
    out->executors = counter(ACLSIM_CNT_EXECUTORS);
    out->streams = counter(ACLSIM_CNT_STREAMS);
    out->events = counter(ACLSIM_CNT_EVENTS);
    out->device_blocks = counter(ACLSIM_CNT_DEVICE_BLOCKS);
    out->device_bytes = counter(ACLSIM_CNT_DEVICE_BYTES);
    out->tensor_lists = counter(ACLSIM_CNT_TENSOR_LISTS);
    out->scalar_lists = counter(ACLSIM_CNT_SCALAR_LISTS);
    out->host_blocks = counter(ACLSIM_CNT_HOST_BLOCKS);
    out->contexts = counter(ACLSIM_CNT_CONTEXTS);
    return ACL_SUCCESS;
}
