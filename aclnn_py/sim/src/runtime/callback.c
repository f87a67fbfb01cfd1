/*
 * Host work queued on a stream: aclrtLaunchCallback, whose callback CANN hands to the thread
 * subscribed to the stream (aclrtSubscribeReport), which runs it in aclrtProcessReport, and
 * aclrtLaunchHostFunc, run by the thread of an aclrtSubscribeHostFunc in aclrtProcessHostFunc,
 * or where the stream runs when it has none.  A blocking callback and every host function hold
 * the stream until they have run.  Depends on device.c (streams) only.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdlib.h>
#include <time.h>

#include "runtime_internal.h"

/* ---- callbacks, host functions and the threads subscribed to run them ------------------ */

/* Callbacks (aclrtLaunchCallback) go to the thread of an aclrtSubscribeReport; host functions
 * (aclrtLaunchHostFunc) to the thread of an aclrtSubscribeHostFunc, or run where the stream
 * runs when its stream has none. */
enum report_kind { CALLBACK, HOST_FUNC };

static pthread_mutex_t report_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t report_cond = PTHREAD_COND_INITIALIZER;

struct subscription {
    struct subscription *next;
    enum report_kind kind;
    uint64_t thread;
    aclrtStream stream; /* the handle as given (NULL: the default stream) */
};

struct report {
    struct report *next;
    enum report_kind kind;
    uint64_t thread;
    aclrtCallback fn;
    void *user_data;
    int block, done;
};

static struct subscription *subscriptions;
static struct report *reports; /* FIFO of callbacks waiting for their thread */

/* In a forked child, with rt_lock held by the only thread (state.c): the subscribed threads,
 * the streams they served and the stream threads waiting on blocking callbacks are the
 * parent's and do not exist here, and report_lock may have been held by one of them. */
static void forget_after_fork(void)
{
    while (subscriptions != NULL) {
        struct subscription *s = subscriptions;
        subscriptions = s->next;
        free(s);
    }
    while (reports != NULL) {
        struct report *r = reports;
        reports = r->next;
        free(r);
    }
    pthread_mutex_init(&report_lock, NULL);
    pthread_cond_init(&report_cond, NULL);
}

__attribute__((constructor)) static void register_fork_hook(void)
{
    rt_at_fork_child(forget_after_fork);
}

static struct subscription **find_subscription_locked(enum report_kind kind, aclrtStream stream)
{
    for (struct subscription **p = &subscriptions; *p != NULL; p = &(*p)->next) {
        if ((*p)->kind == kind && (*p)->stream == stream) {
            return p;
        }
    }
    return NULL;
}

static aclError subscribe(const char *api, enum report_kind kind, uint64_t threadId, aclrtStream stream)
{
    aclError err = ACL_SUCCESS;
    pthread_mutex_lock(&rt_lock);
    struct rt_stream *s = rt_resolve_stream_locked(stream, api, &err);
    pthread_mutex_unlock(&rt_lock);
    if (s == NULL) {
        return rt_error(err);
    }
    struct subscription *sub = malloc(sizeof *sub);
    if (sub == NULL) {
        return rt_fail(ACL_ERROR_RT_MEMORY_ALLOCATION, "%s: out of host memory", api);
    }
    pthread_mutex_lock(&report_lock);
    if (find_subscription_locked(kind, stream) != NULL) {
        pthread_mutex_unlock(&report_lock);
        free(sub);
        return rt_fail(ACL_ERROR_RT_STREAM_SUBSCRIBE, "%s: stream %p is already subscribed", api, stream);
    }
    sub->kind = kind;
    sub->thread = threadId;
    sub->stream = stream;
    sub->next = subscriptions;
    subscriptions = sub;
    pthread_mutex_unlock(&report_lock);
    return ACL_SUCCESS;
}

static aclError unsubscribe(const char *api, enum report_kind kind, uint64_t threadId, aclrtStream stream)
{
    pthread_mutex_lock(&report_lock);
    struct subscription **p = find_subscription_locked(kind, stream);
    if (p == NULL || (*p)->thread != threadId) {
        pthread_mutex_unlock(&report_lock);
        return rt_fail(ACL_ERROR_RT_STREAM_SUBSCRIBE, "%s: stream %p is not subscribed by thread %llu", api, stream,
                       (unsigned long long)threadId);
    }
    struct subscription *sub = *p;
    *p = sub->next;
    pthread_mutex_unlock(&report_lock);
    free(sub);
    return ACL_SUCCESS;
}

aclError aclrtSubscribeReport(uint64_t threadId, aclrtStream stream)
{
    return subscribe("aclrtSubscribeReport", CALLBACK, threadId, stream);
}

aclError aclrtUnSubscribeReport(uint64_t threadId, aclrtStream stream)
{
    return unsubscribe("aclrtUnSubscribeReport", CALLBACK, threadId, stream);
}

aclError aclrtSubscribeHostFunc(uint64_t hostFuncThreadId, aclrtStream exeStream)
{
    return subscribe("aclrtSubscribeHostFunc", HOST_FUNC, hostFuncThreadId, exeStream);
}

aclError aclrtUnSubscribeHostFunc(uint64_t hostFuncThreadId, aclrtStream exeStream)
{
    return unsubscribe("aclrtUnSubscribeHostFunc", HOST_FUNC, hostFuncThreadId, exeStream);
}

struct callback_task {
    enum report_kind kind;
    aclrtCallback fn;
    void *user_data;
    int block;
    int routed; /* 0: run where the stream runs (a host function without a subscribed thread) */
    uint64_t thread;
};

static aclError run_callback(void *ctx)
{
    struct callback_task *c = ctx;
    if (!c->routed) {
        c->fn(c->user_data);
        return ACL_SUCCESS;
    }
    struct report *r = calloc(1, sizeof *r);
    if (r == NULL) {
        return rt_fail(ACL_ERROR_RT_MEMORY_ALLOCATION, "aclrtLaunchCallback: out of host memory for the report");
    }
    r->kind = c->kind;
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
    struct subscription **sub = find_subscription_locked(CALLBACK, stream);
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
    c->kind = CALLBACK;
    c->fn = fn;
    c->user_data = userData;
    c->block = blockType == ACL_CALLBACK_BLOCK;
    c->routed = 1;
    c->thread = thread;
    return rt_error(aclsim_stream_enqueue(api, stream, run_callback, free, c));
}

/* The stream goes on once the host function has run (on the subscribed thread, if any). */
aclError aclrtLaunchHostFunc(aclrtStream stream, aclrtHostFunc fn, void *args)
{
    if (fn == NULL) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "aclrtLaunchHostFunc: fn must not be NULL");
    }
    struct callback_task *c = malloc(sizeof *c);
    if (c == NULL) {
        return rt_fail(ACL_ERROR_RT_MEMORY_ALLOCATION, "aclrtLaunchHostFunc: out of host memory");
    }
    pthread_mutex_lock(&report_lock);
    struct subscription **sub = find_subscription_locked(HOST_FUNC, stream);
    c->routed = sub != NULL;
    c->thread = sub != NULL ? (*sub)->thread : 0;
    pthread_mutex_unlock(&report_lock);
    c->kind = HOST_FUNC;
    c->fn = fn;
    c->user_data = args;
    c->block = 1;
    return rt_error(aclsim_stream_enqueue("aclrtLaunchHostFunc", stream, run_callback, free, c));
}

/* Runs on the subscribed thread: the next report of that kind for it, waiting up to timeout
 * ms (-1: for ever) for one; ACL_ERROR_RT_REPORT_TIMEOUT when none came. */
static aclError process(const char *api, enum report_kind kind, int32_t timeout)
{
    if (timeout < -1) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "%s: timeout must be -1 or >= 0, got %d", api, (int)timeout);
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
        while (*p != NULL && ((*p)->thread != me || (*p)->kind != kind || (*p)->done)) {
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
            return rt_fail(ACL_ERROR_RT_REPORT_TIMEOUT, "%s: nothing came to run within %d ms", api, (int)timeout);
        }
    }
}

aclError aclrtProcessReport(int32_t timeout)
{
    return process("aclrtProcessReport", CALLBACK, timeout);
}

aclError aclrtProcessHostFunc(int32_t timeout)
{
    return process("aclrtProcessHostFunc", HOST_FUNC, timeout);
}
