/*
 * Host work queued on a stream: aclrtLaunchHostFunc (runs when the stream reaches it) and
 * aclrtLaunchCallback, whose callback CANN hands to the thread subscribed to the stream
 * (aclrtSubscribeReport), which runs it in aclrtProcessReport; a blocking callback holds the
 * stream until it has run.  Depends on device.c (streams) only.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdlib.h>
#include <time.h>

#include "runtime_internal.h"

/* ---- host functions ------------------------------------------------------------------ */

struct host_func {
    aclrtHostFunc fn;
    void *args;
};

static aclError run_host_func(void *ctx)
{
    struct host_func *h = ctx;
    h->fn(h->args);
    return ACL_SUCCESS;
}

aclError aclrtLaunchHostFunc(aclrtStream stream, aclrtHostFunc fn, void *args)
{
    if (fn == NULL) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "aclrtLaunchHostFunc: fn must not be NULL");
    }
    struct host_func *h = malloc(sizeof *h);
    if (h == NULL) {
        return rt_fail(ACL_ERROR_RT_MEMORY_ALLOCATION, "aclrtLaunchHostFunc: out of host memory");
    }
    h->fn = fn;
    h->args = args;
    return rt_error(aclsim_stream_enqueue("aclrtLaunchHostFunc", stream, run_host_func, free, h));
}

/* ---- callbacks and their report threads ------------------------------------------------ */

static pthread_mutex_t report_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t report_cond = PTHREAD_COND_INITIALIZER;

struct subscription {
    struct subscription *next;
    uint64_t thread;
    aclrtStream stream; /* the handle as given (NULL: the default stream) */
};

struct report {
    struct report *next;
    uint64_t thread;
    aclrtCallback fn;
    void *user_data;
    int block, done;
};

static struct subscription *subscriptions;
static struct report *reports; /* FIFO of callbacks waiting for their thread */

static struct subscription **find_subscription_locked(aclrtStream stream)
{
    for (struct subscription **p = &subscriptions; *p != NULL; p = &(*p)->next) {
        if ((*p)->stream == stream) {
            return p;
        }
    }
    return NULL;
}

aclError aclrtSubscribeReport(uint64_t threadId, aclrtStream stream)
{
    aclError err = ACL_SUCCESS;
    pthread_mutex_lock(&rt_lock);
    struct rt_stream *s = rt_resolve_stream_locked(stream, "aclrtSubscribeReport", &err);
    pthread_mutex_unlock(&rt_lock);
    if (s == NULL) {
        return rt_error(err);
    }
    struct subscription *sub = malloc(sizeof *sub);
    if (sub == NULL) {
        return rt_fail(ACL_ERROR_RT_MEMORY_ALLOCATION, "aclrtSubscribeReport: out of host memory");
    }
    pthread_mutex_lock(&report_lock);
    if (find_subscription_locked(stream) != NULL) {
        pthread_mutex_unlock(&report_lock);
        free(sub);
        return rt_fail(ACL_ERROR_RT_STREAM_SUBSCRIBE, "aclrtSubscribeReport: stream %p is already subscribed", stream);
    }
    sub->thread = threadId;
    sub->stream = stream;
    sub->next = subscriptions;
    subscriptions = sub;
    pthread_mutex_unlock(&report_lock);
    return ACL_SUCCESS;
}

aclError aclrtUnSubscribeReport(uint64_t threadId, aclrtStream stream)
{
    pthread_mutex_lock(&report_lock);
    struct subscription **p = find_subscription_locked(stream);
    if (p == NULL || (*p)->thread != threadId) {
        pthread_mutex_unlock(&report_lock);
        return rt_fail(ACL_ERROR_RT_STREAM_SUBSCRIBE, "aclrtUnSubscribeReport: stream %p is not subscribed by thread %llu",
                       stream, (unsigned long long)threadId);
    }
    struct subscription *sub = *p;
    *p = sub->next;
    pthread_mutex_unlock(&report_lock);
    free(sub);
    return ACL_SUCCESS;
}

struct callback_task {
    aclrtCallback fn;
    void *user_data;
    int block;
    uint64_t thread;
};

static aclError run_callback(void *ctx)
{
    struct callback_task *c = ctx;
    struct report *r = calloc(1, sizeof *r);
    if (r == NULL) {
        return rt_fail(ACL_ERROR_RT_MEMORY_ALLOCATION, "aclrtLaunchCallback: out of host memory for the report");
    }
    r->thread = c->thread;
    r->fn = c->fn;
    r->user_data = c->user_data;
    r->block = c->block;
    pthread_mutex_lock(&report_lock);
    struct report **tail = &reports;
    while (*tail != NULL) {
        tail = &(*tail)->next;
    }
    *tail = r;
    pthread_cond_broadcast(&report_cond);
    if (r->block) {
        /* The stream holds here until the subscribed thread has run the callback. */
        while (!r->done) {
            pthread_cond_wait(&report_cond, &report_lock);
        }
        free(r);
    }
    pthread_mutex_unlock(&report_lock);
    return ACL_SUCCESS;
}

aclError aclrtLaunchCallback(aclrtCallback fn, void *userData, aclrtCallbackBlockType blockType, aclrtStream stream)
{
    const char *api = "aclrtLaunchCallback";
    if (fn == NULL) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "%s: fn must not be NULL", api);
    }
    if (blockType != ACL_CALLBACK_NO_BLOCK && blockType != ACL_CALLBACK_BLOCK) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "%s: blockType must be ACL_CALLBACK_NO_BLOCK or ACL_CALLBACK_BLOCK", api);
    }
    pthread_mutex_lock(&report_lock);
    struct subscription **sub = find_subscription_locked(stream);
    uint64_t thread = sub != NULL ? (*sub)->thread : 0;
    pthread_mutex_unlock(&report_lock);
    if (sub == NULL) {
        return rt_fail(ACL_ERROR_RT_STREAM_SUBSCRIBE,
                       "%s: stream %p has no report thread (call aclrtSubscribeReport first)", api, stream);
    }
    struct callback_task *c = malloc(sizeof *c);
    if (c == NULL) {
        return rt_fail(ACL_ERROR_RT_MEMORY_ALLOCATION, "%s: out of host memory", api);
    }
    c->fn = fn;
    c->user_data = userData;
    c->block = blockType == ACL_CALLBACK_BLOCK;
    c->thread = thread;
    return rt_error(aclsim_stream_enqueue(api, stream, run_callback, free, c));
}

/* Runs on the subscribed thread: the next callback for it, waiting up to timeout ms (-1: for
 * ever) for one; ACL_ERROR_RT_REPORT_TIMEOUT when none came. */
aclError aclrtProcessReport(int32_t timeout)
{
    if (timeout < -1) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "aclrtProcessReport: timeout must be -1 or >= 0, got %d", (int)timeout);
    }
    uint64_t me = (uint64_t)pthread_self();
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    if (timeout >= 0) {
        until.tv_sec += timeout / 1000;
        until.tv_nsec += (long)(timeout % 1000) * 1000000L;
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
    }
    pthread_mutex_lock(&report_lock);
    for (;;) {
        struct report **p = &reports;
        while (*p != NULL && ((*p)->thread != me || (*p)->done)) {
            p = &(*p)->next;
        }
        if (*p != NULL) {
            struct report *r = *p;
            *p = r->next;
            pthread_mutex_unlock(&report_lock);
            r->fn(r->user_data);
            pthread_mutex_lock(&report_lock);
            if (r->block) {
                r->done = 1; /* the stream's thread frees it */
                pthread_cond_broadcast(&report_cond);
            } else {
                free(r);
            }
            pthread_mutex_unlock(&report_lock);
            return ACL_SUCCESS;
        }
        int rc = timeout < 0 ? pthread_cond_wait(&report_cond, &report_lock)
                             : pthread_cond_timedwait(&report_cond, &report_lock, &until);
        if (rc != 0) {
            pthread_mutex_unlock(&report_lock);
            return rt_fail(ACL_ERROR_RT_REPORT_TIMEOUT, "aclrtProcessReport: no callback came within %d ms", (int)timeout);
        }
    }
}
