/*
 * Devices, contexts, streams and events.
 *
 * A stream is a FIFO of tasks that runs only when someone synchronises it
 * (aclrtSynchronizeStream / aclrtSynchronizeDevice / aclrtSynchronizeEvent on an event
 * recorded on it), on the synchronising thread.  So work queued by aclrtMemcpyAsync or an
 * aclnnXxx phase 2 is not visible to a synchronous aclrtMemcpy before the stream is
 * synchronised, as on an NPU.  Destroying a stream, or resetting its device, first runs
 * what is still queued (the device would have executed it too) and frees the executors.
 *
 * Devices: aclrtSetDevice is ref-counted per process, the current device is per thread; a
 * device's default stream exists while it is set.  Calls that need a device on a thread
 * where none is set fail with ACL_ERROR_RT_CONTEXT_NULL, as CANN does without a context.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "runtime_internal.h"

/* Signalled (with rt_lock) when a stream's last user is done, for the thread freeing it. */
static pthread_cond_t stream_idle = PTHREAD_COND_INITIALIZER;

struct rt_context {
    struct rt_context *prev, *next; /* user contexts only */
    int device;
};

struct rt_event {
    struct rt_event *prev, *next;
    uint64_t serial;       /* unique per event, so a stale task can tell it is stale */
    uint64_t record_seq;   /* counts aclrtRecordEvent calls; the last one completes it */
    int recorded;
    int complete;
    struct timespec stamp;
    struct rt_stream *pending; /* the stream of the record still queued, or NULL */
};

struct rt_device {
    int refcount;
    struct rt_stream default_stream;
    struct rt_context default_context;
};

static struct rt_device devices[ACLSIM_MAX_DEVICES];
static struct rt_stream *user_streams;
static struct rt_context *user_contexts;
static struct rt_event *events;
static uint64_t next_event_serial = 1;

static _Thread_local int tl_device = -1;
static _Thread_local struct rt_context *tl_context;

#define LIST_PUSH(head, node)                                                                                          \
    do {                                                                                                               \
        (node)->prev = NULL;                                                                                           \
        (node)->next = (head);                                                                                         \
        if ((head) != NULL) {                                                                                          \
            (head)->prev = (node);                                                                                     \
        }                                                                                                              \
        (head) = (node);                                                                                               \
    } while (0)

#define LIST_REMOVE(head, node)                                                                                        \
    do {                                                                                                               \
        if ((node)->prev != NULL) {                                                                                    \
            (node)->prev->next = (node)->next;                                                                         \
        } else {                                                                                                       \
            (head) = (node)->next;                                                                                     \
        }                                                                                                              \
        if ((node)->next != NULL) {                                                                                    \
            (node)->next->prev = (node)->prev;                                                                         \
        }                                                                                                              \
        (node)->prev = (node)->next = NULL;                                                                            \
    } while (0)

/* ---- devices ------------------------------------------------------------------------- */

int rt_device_count(void)
{
    static int count = -1;
    if (count < 0) {
        const char *env = getenv("ACLSIM_DEVICE_COUNT");
        long n = 1;
        if (env != NULL && env[0] != '\0') {
            char *end = NULL;
            n = strtol(env, &end, 10);
            if (end == env || *end != '\0' || n < 0) {
                n = 1;
            }
            if (n > ACLSIM_MAX_DEVICES) {
                n = ACLSIM_MAX_DEVICES;
            }
        }
        count = (int)n;
    }
    return count;
}

int rt_current_device(void)
{
    int d = tl_device;
    return (d >= 0 && devices[d].refcount > 0) ? d : -1;
}

static int valid_device_id(int32_t id, const char *api, aclError *err)
{
    if (id < 0 || id >= rt_device_count()) {
        aclsim_set_error("%s: invalid device id %d (the simulator has %d device%s; set ACLSIM_DEVICE_COUNT for more)",
                         api, (int)id, rt_device_count(), rt_device_count() == 1 ? "" : "s");
        *err = ACL_ERROR_RT_INVALID_DEVICEID;
        return 0;
    }
    return 1;
}

/* With rt_lock held: open the device (first user initialises its default stream). */
static void device_retain_locked(int id)
{
    struct rt_device *d = &devices[id];
    if (d->refcount++ == 0) {
        memset(&d->default_stream, 0, sizeof d->default_stream);
        d->default_stream.device = id;
        d->default_stream.is_default = 1;
        pthread_mutex_init(&d->default_stream.drain_lock, NULL);
        d->default_context.device = id;
    }
}

static void stream_free(struct rt_stream *s);

void rt_stream_use_locked(struct rt_stream *s)
{
    s->users++;
}

void rt_stream_done(struct rt_stream *s)
{
    pthread_mutex_lock(&rt_lock);
    if (--s->users == 0) {
        pthread_cond_broadcast(&stream_idle);
    }
    pthread_mutex_unlock(&rt_lock);
}

/* Wait until no other thread is about to drain or is draining s (it is no longer findable,
 * so no new user can come). */
static void wait_unused(struct rt_stream *s)
{
    pthread_mutex_lock(&rt_lock);
    while (s->users > 0) {
        pthread_cond_wait(&stream_idle, &rt_lock);
    }
    pthread_mutex_unlock(&rt_lock);
}

/* Drop one user of the device (all of them if force); when none is left, run and destroy
 * its streams.  Returns 1 if the device is closed afterwards. */
static int device_release(int id, int force)
{
    pthread_mutex_lock(&rt_lock);
    struct rt_device *d = &devices[id];
    if (d->refcount == 0) {
        pthread_mutex_unlock(&rt_lock);
        return 1;
    }
    if (!force && --d->refcount > 0) {
        pthread_mutex_unlock(&rt_lock);
        return 0;
    }
    d->refcount = 0;
    struct rt_stream *orphans = NULL;
    for (struct rt_stream *s = user_streams, *next; s != NULL; s = next) {
        next = s->next;
        if (s->device == id) {
            LIST_REMOVE(user_streams, s);
            LIST_PUSH(orphans, s);
        }
    }
    pthread_mutex_unlock(&rt_lock);

    (void)rt_drain(&d->default_stream);
    wait_unused(&d->default_stream);
    pthread_mutex_destroy(&d->default_stream.drain_lock);
    while (orphans != NULL) {
        struct rt_stream *s = orphans;
        orphans = s->next;
        (void)rt_drain(s);
        wait_unused(s);
        stream_free(s);
        aclsim_counter_add(ACLSIM_CNT_STREAMS, -1);
    }
    return 1;
}

aclError aclrtGetDeviceCount(uint32_t *count)
{
    if (count == NULL) {
        aclsim_set_error("aclrtGetDeviceCount: count must not be NULL");
        return rt_error(ACL_ERROR_INVALID_PARAM);
    }
    *count = (uint32_t)rt_device_count();
    return ACL_SUCCESS;
}

aclError aclrtSetDevice(int32_t deviceId)
{
    aclError err = ACL_SUCCESS;
    if (!valid_device_id(deviceId, "aclrtSetDevice", &err)) {
        return err;
    }
    pthread_mutex_lock(&rt_lock);
    device_retain_locked(deviceId);
    pthread_mutex_unlock(&rt_lock);
    tl_device = deviceId;
    tl_context = NULL;
    return ACL_SUCCESS;
}

static aclError reset_device(int32_t deviceId, int force, const char *api)
{
    aclError err = ACL_SUCCESS;
    if (!valid_device_id(deviceId, api, &err)) {
        return err;
    }
    if (device_release(deviceId, force) && tl_device == deviceId) {
        tl_device = -1;
        tl_context = NULL;
    }
    return ACL_SUCCESS;
}

aclError aclrtResetDevice(int32_t deviceId)
{
    return reset_device(deviceId, 0, "aclrtResetDevice");
}

aclError aclrtResetDeviceForce(int32_t deviceId)
{
    return reset_device(deviceId, 1, "aclrtResetDeviceForce");
}

static aclError no_device(const char *api)
{
    aclsim_set_error("%s: no device is set on this thread (call aclrtSetDevice first)", api);
    return rt_error(ACL_ERROR_RT_CONTEXT_NULL);
}

aclError aclrtGetDevice(int32_t *deviceId)
{
    if (deviceId == NULL) {
        aclsim_set_error("aclrtGetDevice: deviceId must not be NULL");
        return rt_error(ACL_ERROR_INVALID_PARAM);
    }
    pthread_mutex_lock(&rt_lock);
    int d = rt_current_device();
    pthread_mutex_unlock(&rt_lock);
    if (d < 0) {
        return no_device("aclrtGetDevice");
    }
    *deviceId = d;
    return ACL_SUCCESS;
}

aclError aclrtGetRunMode(aclrtRunMode *runMode)
{
    if (runMode == NULL) {
        aclsim_set_error("aclrtGetRunMode: runMode must not be NULL");
        return rt_error(ACL_ERROR_INVALID_PARAM);
    }
    *runMode = ACL_HOST;
    return ACL_SUCCESS;
}

aclError aclrtSynchronizeDevice(void)
{
    pthread_mutex_lock(&rt_lock);
    int d = rt_current_device();
    if (d < 0) {
        pthread_mutex_unlock(&rt_lock);
        return no_device("aclrtSynchronizeDevice");
    }
    /* Snapshot the streams: draining runs without the lock. */
    size_t n = 0;
    for (struct rt_stream *s = user_streams; s != NULL; s = s->next) {
        n += (s->device == d);
    }
    struct rt_stream **todo = malloc((n + 1) * sizeof *todo);
    if (todo == NULL) {
        pthread_mutex_unlock(&rt_lock);
        aclsim_set_error("aclrtSynchronizeDevice: out of host memory");
        return rt_error(ACL_ERROR_RT_MEMORY_ALLOCATION);
    }
    size_t k = 0;
    todo[k++] = &devices[d].default_stream;
    for (struct rt_stream *s = user_streams; s != NULL; s = s->next) {
        if (s->device == d) {
            todo[k++] = s;
        }
    }
    for (size_t i = 0; i < k; i++) {
        rt_stream_use_locked(todo[i]);
    }
    pthread_mutex_unlock(&rt_lock);

    aclError first = ACL_SUCCESS;
    for (size_t i = 0; i < k; i++) {
        aclError e = rt_drain(todo[i]);
        rt_stream_done(todo[i]);
        if (first == ACL_SUCCESS) {
            first = e;
        }
    }
    free(todo);
    return first;
}

/* ---- contexts ------------------------------------------------------------------------ */

static struct rt_context *find_context_locked(aclrtContext handle)
{
    for (int i = 0; i < rt_device_count(); i++) {
        if (handle == (aclrtContext)&devices[i].default_context && devices[i].refcount > 0) {
            return &devices[i].default_context;
        }
    }
    for (struct rt_context *c = user_contexts; c != NULL; c = c->next) {
        if ((aclrtContext)c == handle) {
            return c;
        }
    }
    return NULL;
}

aclError aclrtCreateContext(aclrtContext *context, int32_t deviceId)
{
    aclError err = ACL_SUCCESS;
    if (context == NULL) {
        aclsim_set_error("aclrtCreateContext: context must not be NULL");
        return rt_error(ACL_ERROR_INVALID_PARAM);
    }
    if (!valid_device_id(deviceId, "aclrtCreateContext", &err)) {
        return err;
    }
    struct rt_context *c = calloc(1, sizeof *c);
    if (c == NULL) {
        aclsim_set_error("aclrtCreateContext: out of host memory");
        return rt_error(ACL_ERROR_RT_MEMORY_ALLOCATION);
    }
    c->device = deviceId;
    pthread_mutex_lock(&rt_lock);
    device_retain_locked(deviceId);
    LIST_PUSH(user_contexts, c);
    pthread_mutex_unlock(&rt_lock);
    aclsim_counter_add(ACLSIM_CNT_CONTEXTS, 1);
    tl_device = deviceId;
    tl_context = c;
    *context = c;
    return ACL_SUCCESS;
}

aclError aclrtDestroyContext(aclrtContext context)
{
    if (context == NULL) {
        aclsim_set_error("aclrtDestroyContext: context must not be NULL");
        return rt_error(ACL_ERROR_INVALID_PARAM);
    }
    pthread_mutex_lock(&rt_lock);
    struct rt_context *c = find_context_locked(context);
    if (c == NULL || c == &devices[c->device].default_context) {
        pthread_mutex_unlock(&rt_lock);
        aclsim_set_error("aclrtDestroyContext: %p is not a context created by aclrtCreateContext", context);
        return rt_error(ACL_ERROR_RT_PARAM_INVALID);
    }
    LIST_REMOVE(user_contexts, c);
    pthread_mutex_unlock(&rt_lock);
    int device = c->device;
    if (tl_context == c) {
        tl_context = NULL;
    }
    free(c);
    aclsim_counter_add(ACLSIM_CNT_CONTEXTS, -1);
    if (device_release(device, 0) && tl_device == device) {
        tl_device = -1;
    }
    return ACL_SUCCESS;
}

aclError aclrtSetCurrentContext(aclrtContext context)
{
    if (context == NULL) {
        aclsim_set_error("aclrtSetCurrentContext: context must not be NULL");
        return rt_error(ACL_ERROR_INVALID_PARAM);
    }
    pthread_mutex_lock(&rt_lock);
    struct rt_context *c = find_context_locked(context);
    pthread_mutex_unlock(&rt_lock);
    if (c == NULL) {
        aclsim_set_error("aclrtSetCurrentContext: %p is not a live context", context);
        return rt_error(ACL_ERROR_RT_PARAM_INVALID);
    }
    tl_device = c->device;
    tl_context = c;
    return ACL_SUCCESS;
}

aclError aclrtGetCurrentContext(aclrtContext *context)
{
    if (context == NULL) {
        aclsim_set_error("aclrtGetCurrentContext: context must not be NULL");
        return rt_error(ACL_ERROR_INVALID_PARAM);
    }
    pthread_mutex_lock(&rt_lock);
    int d = rt_current_device();
    pthread_mutex_unlock(&rt_lock);
    if (d < 0) {
        return no_device("aclrtGetCurrentContext");
    }
    *context = tl_context != NULL ? (aclrtContext)tl_context : (aclrtContext)&devices[d].default_context;
    return ACL_SUCCESS;
}

/* ---- streams ------------------------------------------------------------------------- */

static struct rt_stream *find_user_stream_locked(aclrtStream handle)
{
    for (struct rt_stream *s = user_streams; s != NULL; s = s->next) {
        if ((aclrtStream)s == handle) {
            return s;
        }
    }
    return NULL;
}

struct rt_stream *rt_resolve_stream_locked(aclrtStream handle, const char *api, aclError *err)
{
    int d = rt_current_device();
    if (d < 0) {
        *err = no_device(api);
        return NULL;
    }
    if (handle == NULL) {
        return &devices[d].default_stream;
    }
    struct rt_stream *s = find_user_stream_locked(handle);
    if (s == NULL) {
        aclsim_set_error("%s: stream %p is not a live stream (destroyed, or never created by aclrtCreateStream)",
                         api, handle);
        *err = ACL_ERROR_RT_PARAM_INVALID;
        return NULL;
    }
    if (s->device != d) {
        aclsim_set_error("%s: stream %p belongs to device %d but the current device is %d", api, handle, s->device, d);
        *err = ACL_ERROR_RT_STREAM_CONTEXT;
        return NULL;
    }
    return s;
}

aclError rt_enqueue_locked(struct rt_stream *s, aclsim_task_run_fn run, aclsim_task_release_fn release, void *ctx)
{
    struct rt_task *t = malloc(sizeof *t);
    if (t == NULL) {
        return rt_error(ACL_ERROR_RT_MEMORY_ALLOCATION);
    }
    t->next = NULL;
    t->run = run;
    t->release = release;
    t->ctx = ctx;
    if (s->tail != NULL) {
        s->tail->next = t;
    } else {
        s->head = t;
    }
    s->tail = t;
    return ACL_SUCCESS;
}

aclError aclsim_stream_enqueue(const char *api, aclrtStream stream, aclsim_task_run_fn run,
                               aclsim_task_release_fn release, void *ctx)
{
    aclError err = ACL_SUCCESS;
    if (api == NULL) {
        api = "launch";
    }
    pthread_mutex_lock(&rt_lock);
    struct rt_stream *s = rt_resolve_stream_locked(stream, api, &err);
    if (s != NULL) {
        err = rt_enqueue_locked(s, run, release, ctx);
        if (err != ACL_SUCCESS) {
            aclsim_set_error("%s: out of host memory while queueing a task", api);
        }
    }
    pthread_mutex_unlock(&rt_lock);
    if (err != ACL_SUCCESS && release != NULL) {
        release(ctx);
    }
    return err;
}

aclError rt_drain(struct rt_stream *s)
{
    aclError first = ACL_SUCCESS;
    pthread_mutex_lock(&s->drain_lock);
    for (;;) {
        pthread_mutex_lock(&rt_lock);
        struct rt_task *t = s->head;
        if (t != NULL) {
            s->head = t->next;
            if (s->head == NULL) {
                s->tail = NULL;
            }
        }
        pthread_mutex_unlock(&rt_lock);
        if (t == NULL) {
            break;
        }
        if (first == ACL_SUCCESS) {
            first = t->run(t->ctx);
        }
        /* After a failure the rest of the queue is dropped, as a device aborts the stream. */
        if (t->release != NULL) {
            t->release(t->ctx);
        }
        free(t);
    }
    pthread_mutex_unlock(&s->drain_lock);
    return first;
}

static void stream_free(struct rt_stream *s)
{
    pthread_mutex_destroy(&s->drain_lock);
    free(s);
}

aclError aclrtCreateStream(aclrtStream *stream)
{
    if (stream == NULL) {
        aclsim_set_error("aclrtCreateStream: stream must not be NULL");
        return rt_error(ACL_ERROR_INVALID_PARAM);
    }
    struct rt_stream *s = calloc(1, sizeof *s);
    if (s == NULL) {
        aclsim_set_error("aclrtCreateStream: out of host memory");
        return rt_error(ACL_ERROR_RT_MEMORY_ALLOCATION);
    }
    pthread_mutex_lock(&rt_lock);
    int d = rt_current_device();
    if (d < 0) {
        pthread_mutex_unlock(&rt_lock);
        free(s);
        return no_device("aclrtCreateStream");
    }
    s->device = d;
    pthread_mutex_init(&s->drain_lock, NULL);
    LIST_PUSH(user_streams, s);
    pthread_mutex_unlock(&rt_lock);
    aclsim_counter_add(ACLSIM_CNT_STREAMS, 1);
    *stream = s;
    return ACL_SUCCESS;
}

aclError aclrtCreateStreamWithConfig(aclrtStream *stream, uint32_t priority, uint32_t flag)
{
    (void)priority;
    (void)flag;
    return aclrtCreateStream(stream);
}

aclError aclrtDestroyStream(aclrtStream stream)
{
    if (stream == NULL) {
        aclsim_set_error("aclrtDestroyStream: stream must not be NULL (the default stream cannot be destroyed)");
        return rt_error(ACL_ERROR_INVALID_PARAM);
    }
    pthread_mutex_lock(&rt_lock);
    struct rt_stream *s = find_user_stream_locked(stream);
    if (s == NULL) {
        pthread_mutex_unlock(&rt_lock);
        aclsim_set_error("aclrtDestroyStream: %p is not a live stream (already destroyed?)", stream);
        return rt_error(ACL_ERROR_RT_PARAM_INVALID);
    }
    LIST_REMOVE(user_streams, s);
    pthread_mutex_unlock(&rt_lock);
    /* Queued work still runs (and releases its executors); its errors are not reported.  Any
     * thread may destroy a stream, also while another one synchronises it: that one finishes
     * first (it found the stream before it was unlisted) and only then is the stream freed. */
    (void)rt_drain(s);
    wait_unused(s);
    stream_free(s);
    aclsim_counter_add(ACLSIM_CNT_STREAMS, -1);
    return ACL_SUCCESS;
}

static aclError synchronize_stream(aclrtStream stream, const char *api)
{
    aclError err = ACL_SUCCESS;
    pthread_mutex_lock(&rt_lock);
    struct rt_stream *s = rt_resolve_stream_locked(stream, api, &err);
    if (s != NULL) {
        rt_stream_use_locked(s);
    }
    pthread_mutex_unlock(&rt_lock);
    if (s == NULL) {
        return err;
    }
    err = rt_drain(s);
    rt_stream_done(s);
    return err;
}

aclError aclrtSynchronizeStream(aclrtStream stream)
{
    return synchronize_stream(stream, "aclrtSynchronizeStream");
}

aclError aclrtSynchronizeStreamWithTimeout(aclrtStream stream, int32_t timeout)
{
    if (timeout < -1) {
        aclsim_set_error("aclrtSynchronizeStreamWithTimeout: timeout must be -1 or >= 0, got %d", (int)timeout);
        return rt_error(ACL_ERROR_INVALID_PARAM);
    }
    return synchronize_stream(stream, "aclrtSynchronizeStreamWithTimeout");
}

/* ---- events -------------------------------------------------------------------------- */

static struct rt_event *find_event_locked(aclrtEvent handle)
{
    for (struct rt_event *e = events; e != NULL; e = e->next) {
        if ((aclrtEvent)e == handle) {
            return e;
        }
    }
    return NULL;
}

static aclError bad_event(const char *api, aclrtEvent event)
{
    aclsim_set_error("%s: %p is not a live event", api, event);
    return rt_error(ACL_ERROR_RT_PARAM_INVALID);
}

aclError aclrtCreateEvent(aclrtEvent *event)
{
    if (event == NULL) {
        aclsim_set_error("aclrtCreateEvent: event must not be NULL");
        return rt_error(ACL_ERROR_INVALID_PARAM);
    }
    struct rt_event *e = calloc(1, sizeof *e);
    if (e == NULL) {
        aclsim_set_error("aclrtCreateEvent: out of host memory");
        return rt_error(ACL_ERROR_RT_MEMORY_ALLOCATION);
    }
    pthread_mutex_lock(&rt_lock);
    e->serial = next_event_serial++;
    LIST_PUSH(events, e);
    pthread_mutex_unlock(&rt_lock);
    aclsim_counter_add(ACLSIM_CNT_EVENTS, 1);
    *event = e;
    return ACL_SUCCESS;
}

aclError aclrtCreateEventWithFlag(aclrtEvent *event, uint32_t flag)
{
    (void)flag;
    return aclrtCreateEvent(event);
}

aclError aclrtDestroyEvent(aclrtEvent event)
{
    if (event == NULL) {
        aclsim_set_error("aclrtDestroyEvent: event must not be NULL");
        return rt_error(ACL_ERROR_INVALID_PARAM);
    }
    pthread_mutex_lock(&rt_lock);
    struct rt_event *e = find_event_locked(event);
    if (e == NULL) {
        pthread_mutex_unlock(&rt_lock);
        return bad_event("aclrtDestroyEvent", event);
    }
    LIST_REMOVE(events, e);
    pthread_mutex_unlock(&rt_lock);
    free(e);
    aclsim_counter_add(ACLSIM_CNT_EVENTS, -1);
    return ACL_SUCCESS;
}

struct record_task {
    struct rt_event *event;
    uint64_t serial;
    uint64_t seq;
};

static aclError run_record(void *ctx)
{
    struct record_task *r = ctx;
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    pthread_mutex_lock(&rt_lock);
    struct rt_event *e = find_event_locked(r->event);
    /* The event may have been destroyed, or recorded again, since this task was queued. */
    if (e != NULL && e->serial == r->serial && e->record_seq == r->seq) {
        e->stamp = now;
        e->complete = 1;
        e->pending = NULL;
    }
    pthread_mutex_unlock(&rt_lock);
    return ACL_SUCCESS;
}

/* Runs after run_record, or instead of it when the stream dropped the task after a failure:
 * then the event stays incomplete and no longer waits on that stream. */
static void release_record(void *ctx)
{
    struct record_task *r = ctx;
    pthread_mutex_lock(&rt_lock);
    struct rt_event *e = find_event_locked(r->event);
    if (e != NULL && e->serial == r->serial && e->record_seq == r->seq) {
        e->pending = NULL;
    }
    pthread_mutex_unlock(&rt_lock);
    free(r);
}

aclError aclrtRecordEvent(aclrtEvent event, aclrtStream stream)
{
    if (event == NULL) {
        aclsim_set_error("aclrtRecordEvent: event must not be NULL");
        return rt_error(ACL_ERROR_INVALID_PARAM);
    }
    struct record_task *r = malloc(sizeof *r);
    if (r == NULL) {
        aclsim_set_error("aclrtRecordEvent: out of host memory");
        return rt_error(ACL_ERROR_RT_MEMORY_ALLOCATION);
    }
    aclError err = ACL_SUCCESS;
    pthread_mutex_lock(&rt_lock);
    struct rt_event *e = find_event_locked(event);
    struct rt_stream *s = e != NULL ? rt_resolve_stream_locked(stream, "aclrtRecordEvent", &err) : NULL;
    if (e != NULL && s != NULL) {
        r->event = e;
        r->serial = e->serial;
        r->seq = ++e->record_seq;
        err = rt_enqueue_locked(s, run_record, release_record, r);
        if (err == ACL_SUCCESS) {
            e->recorded = 1;
            e->complete = 0;
            e->pending = s;
        }
    }
    pthread_mutex_unlock(&rt_lock);
    if (e == NULL) {
        free(r);
        return bad_event("aclrtRecordEvent", event);
    }
    if (err != ACL_SUCCESS) {
        free(r);
        if (s != NULL) { /* the stream was fine: queueing ran out of memory */
            aclsim_set_error("aclrtRecordEvent: out of host memory");
        }
    }
    return err;
}

aclError aclrtSynchronizeEvent(aclrtEvent event)
{
    if (event == NULL) {
        aclsim_set_error("aclrtSynchronizeEvent: event must not be NULL");
        return rt_error(ACL_ERROR_INVALID_PARAM);
    }
    pthread_mutex_lock(&rt_lock);
    struct rt_event *e = find_event_locked(event);
    struct rt_stream *pending = e != NULL ? e->pending : NULL;
    if (pending != NULL) {
        rt_stream_use_locked(pending);
    }
    pthread_mutex_unlock(&rt_lock);
    if (e == NULL) {
        return bad_event("aclrtSynchronizeEvent", event);
    }
    if (pending == NULL) {
        return ACL_SUCCESS;
    }
    /* The simulated device only works when asked: run the stream the record sits on. */
    aclError err = rt_drain(pending);
    rt_stream_done(pending);
    return err;
}

aclError aclrtQueryEventStatus(aclrtEvent event, aclrtEventRecordedStatus *status)
{
    if (event == NULL || status == NULL) {
        aclsim_set_error("aclrtQueryEventStatus: event and status must not be NULL");
        return rt_error(ACL_ERROR_INVALID_PARAM);
    }
    pthread_mutex_lock(&rt_lock);
    struct rt_event *e = find_event_locked(event);
    if (e != NULL) {
        *status = e->complete ? ACL_EVENT_RECORDED_STATUS_COMPLETE : ACL_EVENT_RECORDED_STATUS_NOT_READY;
    }
    pthread_mutex_unlock(&rt_lock);
    return e != NULL ? ACL_SUCCESS : bad_event("aclrtQueryEventStatus", event);
}

aclError aclrtEventElapsedTime(float *ms, aclrtEvent startEvent, aclrtEvent endEvent)
{
    if (ms == NULL || startEvent == NULL || endEvent == NULL) {
        aclsim_set_error("aclrtEventElapsedTime: ms, startEvent and endEvent must not be NULL");
        return rt_error(ACL_ERROR_INVALID_PARAM);
    }
    pthread_mutex_lock(&rt_lock);
    struct rt_event *a = find_event_locked(startEvent);
    struct rt_event *b = find_event_locked(endEvent);
    int ok = a != NULL && b != NULL && a->complete && b->complete;
    struct timespec ta = {0, 0}, tb = {0, 0};
    if (ok) {
        ta = a->stamp;
        tb = b->stamp;
    }
    pthread_mutex_unlock(&rt_lock);
    if (a == NULL) {
        return bad_event("aclrtEventElapsedTime", startEvent);
    }
    if (b == NULL) {
        return bad_event("aclrtEventElapsedTime", endEvent);
    }
    if (!ok) {
        aclsim_set_error("aclrtEventElapsedTime: both events must be recorded and complete "
                         "(synchronise the stream or the events first)");
        return rt_error(ACL_ERROR_RT_PARAM_INVALID);
    }
    double d = (double)(tb.tv_sec - ta.tv_sec) * 1e3 + (double)(tb.tv_nsec - ta.tv_nsec) / 1e6;
    *ms = (float)d;
    return ACL_SUCCESS;
}

/* ---- fork ---------------------------------------------------------------------------- */

/*
 * fork() while another thread is inside the runtime must not leave the child with rt_lock
 * held by a thread that does not exist there.  The parent's device state is not the child's
 * (on CANN a child cannot use its parent's device context): the child starts with no device
 * open and no streams, events, contexts or device memory; handles of those kinds it
 * inherited are not live (using them is an error, never a hang), work still queued in the
 * parent never runs in the child, and the child calls aclrtSetDevice to work again.  The
 * aclInit state, aclrtMallocHost blocks and (in nnopbase) descriptors are host state and
 * are inherited.  Documented in aclnn_py/sim/README.md.
 */

static void drop_tasks(struct rt_stream *s)
{
    while (s->head != NULL) {
        struct rt_task *t = s->head;
        s->head = t->next;
        free(t); /* not its context: releasing it would run nnopbase, whose lock is not ours */
    }
    s->tail = NULL;
}

/* In the child, with rt_lock held by the only thread (state.c). */
static void forget_after_fork(void)
{
    for (int i = 0; i < ACLSIM_MAX_DEVICES; i++) {
        if (devices[i].refcount > 0) {
            drop_tasks(&devices[i].default_stream);
            devices[i].refcount = 0; /* the default stream is set up again when reopened */
        }
    }
    while (user_streams != NULL) {
        struct rt_stream *s = user_streams;
        user_streams = s->next;
        drop_tasks(s);
        free(s); /* its drain lock may be held by a thread of the parent: never touched again */
    }
    while (user_contexts != NULL) {
        struct rt_context *c = user_contexts;
        user_contexts = c->next;
        free(c);
    }
    while (events != NULL) {
        struct rt_event *e = events;
        events = e->next;
        free(e);
    }
    tl_context = NULL;
    rt_counter_set(ACLSIM_CNT_STREAMS, 0);
    rt_counter_set(ACLSIM_CNT_EVENTS, 0);
    rt_counter_set(ACLSIM_CNT_CONTEXTS, 0);
    pthread_cond_init(&stream_idle, NULL);
}

__attribute__((constructor)) static void register_fork_hook(void)
{
    rt_at_fork_child(forget_after_fork);
}
