/*
 * acl_base_rt.h's host-only helpers: data buffers, application log, and the readers of the
 * exception information a device exception callback receives.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdarg.h>
#include <stdlib.h>

#include "runtime_internal.h"

struct aclDataBuffer {
    void *data;
    size_t size;
};

aclDataBuffer *aclCreateDataBuffer(void *data, size_t size)
{
    aclDataBuffer *b = malloc(sizeof *b);
    if (b == NULL) {
        rt_fail(ACL_ERROR_BAD_ALLOC, "aclCreateDataBuffer: out of host memory");
        return NULL;
    }
    b->data = data;
    b->size = size;
    return b;
}

aclError aclDestroyDataBuffer(const aclDataBuffer *dataBuffer)
{
    if (dataBuffer == NULL) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "aclDestroyDataBuffer: dataBuffer must not be NULL");
    }
    free((void *)dataBuffer);
    return ACL_SUCCESS;
}

aclError aclUpdateDataBuffer(aclDataBuffer *dataBuffer, void *data, size_t size)
{
    if (dataBuffer == NULL) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "aclUpdateDataBuffer: dataBuffer must not be NULL");
    }
    dataBuffer->data = data;
    dataBuffer->size = size;
    return ACL_SUCCESS;
}

void *aclGetDataBufferAddr(const aclDataBuffer *dataBuffer)
{
    return dataBuffer != NULL ? dataBuffer->data : NULL;
}

uint32_t aclGetDataBufferSize(const aclDataBuffer *dataBuffer)
{
    return dataBuffer != NULL ? (uint32_t)dataBuffer->size : 0;
}

size_t aclGetDataBufferSizeV2(const aclDataBuffer *dataBuffer)
{
    return dataBuffer != NULL ? dataBuffer->size : 0;
}

/* CANN writes application logs to its log files; the simulator has none, so it honours the
 * switch CANN offers to print them instead (ASCEND_SLOG_PRINT_TO_STDOUT=1), filtered by
 * ASCEND_GLOBAL_LOG_LEVEL (0 debug .. 3 error, default 3) like CANN's logs. */
void aclAppLog(aclLogLevel logLevel, const char *func, const char *file, uint32_t line, const char *fmt, ...)
{
    const char *to_stdout = getenv("ASCEND_SLOG_PRINT_TO_STDOUT");
    if (to_stdout == NULL || to_stdout[0] != '1' || fmt == NULL) {
        return;
    }
    const char *level_env = getenv("ASCEND_GLOBAL_LOG_LEVEL");
    long threshold = level_env != NULL && level_env[0] != '\0' ? strtol(level_env, NULL, 10) : ACL_ERROR;
    if ((long)logLevel < threshold) {
        return;
    }
    static const char *const names[] = {"DEBUG", "INFO", "WARNING", "ERROR"};
    const char *name = (int)logLevel >= 0 && (int)logLevel <= 3 ? names[logLevel] : "UNKNOWN";
    flockfile(stdout);
    printf("[%s] APP(%s:%u %s): ", name, file != NULL ? file : "?", (unsigned)line, func != NULL ? func : "?");
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    putchar('\n');
    funlockfile(stdout);
}

/* ---- exception information ------------------------------------------------------------ */

#define NO_INFO 0xFFFFFFFFu

uint32_t aclrtGetTaskIdFromExceptionInfo(const aclrtExceptionInfo *info)
{
    return info != NULL ? info->task_id : NO_INFO;
}

uint32_t aclrtGetStreamIdFromExceptionInfo(const aclrtExceptionInfo *info)
{
    return info != NULL ? info->stream_id : NO_INFO;
}

uint32_t aclrtGetThreadIdFromExceptionInfo(const aclrtExceptionInfo *info)
{
    return info != NULL ? info->thread_id : NO_INFO;
}

uint32_t aclrtGetDeviceIdFromExceptionInfo(const aclrtExceptionInfo *info)
{
    return info != NULL ? info->device_id : NO_INFO;
}

uint32_t aclrtGetErrorCodeFromExceptionInfo(const aclrtExceptionInfo *info)
{
    return info != NULL ? (uint32_t)info->error_code : NO_INFO;
}
