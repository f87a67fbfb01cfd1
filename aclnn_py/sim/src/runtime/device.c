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
    uint32_t flags;        /* aclrtCreateEventWithFlag's */
    uint32_t id;
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
        d->default_stream.failure_mode = ACL_CONTINUE_ON_FAILURE; /* CANN's default */
        pthread_mutex_init(&d->default_stream.drain_lock, NULL);
        d->default_context.device = id;
    }
}

static void stream_free(struct rt_stream *s);
static void device_state(int32_t device, aclrtDeviceState state);
static void stream_state(aclrtStream stream, aclrtStreamState state);

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
        /* What it recorded for a model that was not collected yet goes with the stream. */
        pthread_mutex_lock(&rt_lock);
        struct rt_task *captured = s->captured_head, *update = s->update_head;
        s->captured_head = s->captured_tail = s->update_head = s->update_tail = NULL;
        s->capturing = 0;
        s->update_group = NULL;
        pthread_mutex_unlock(&rt_lock);
        rt_release_tasks(captured);
        rt_release_tasks(update);
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
    device_state(deviceId, ACL_RT_DEVICE_STATE_SET_PRE);
    pthread_mutex_lock(&rt_lock);
    device_retain_locked(deviceId);
    pthread_mutex_unlock(&rt_lock);
    tl_device = deviceId;
    tl_context = NULL;
    device_state(deviceId, ACL_RT_DEVICE_STATE_SET_POST);
    return ACL_SUCCESS;
}

static aclError reset_device(int32_t deviceId, int force, const char *api)
{
    aclError err = ACL_SUCCESS;
    if (!valid_device_id(deviceId, api, &err)) {
        return err;
    }
    device_state(deviceId, ACL_RT_DEVICE_STATE_RESET_PRE);
    if (device_release(deviceId, force) && tl_device == deviceId) {
        tl_device = -1;
        tl_context = NULL;
    }
    device_state(deviceId, ACL_RT_DEVICE_STATE_RESET_POST);
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

static aclError synchronize_device(const char *api, int32_t timeout)
{
    int64_t deadline = rt_deadline(timeout);
    pthread_mutex_lock(&rt_lock);
    int d = rt_current_device();
    if (d < 0) {
        pthread_mutex_unlock(&rt_lock);
        return no_device(api);
    }
    /* Snapshot the streams: draining runs without the lock. */
    size_t n = 0;
    for (struct rt_stream *s = user_streams; s != NULL; s = s->next) {
        n += (s->device == d);
    }
    struct rt_stream **todo = malloc((n + 1) * sizeof *todo);
    if (todo == NULL) {
        pthread_mutex_unlock(&rt_lock);
        return rt_fail(ACL_ERROR_RT_MEMORY_ALLOCATION, "%s: out of host memory", api);
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
        aclError e = rt_drain_until(todo[i], deadline, ACL_ERROR_RT_STREAM_SYNC_TIMEOUT);
        rt_stream_done(todo[i]);
        if (first == ACL_SUCCESS) {
            first = e;
        }
    }
    free(todo);
    if (first == ACL_ERROR_RT_STREAM_SYNC_TIMEOUT) {
        return rt_fail(first, "%s: the device's work did not complete within %d ms", api, (int)timeout);
    }
    return rt_error(first);
}

aclError aclrtSynchronizeDevice(void)
{
    return synchronize_device("aclrtSynchronizeDevice", -1);
}

aclError aclrtSynchronizeDeviceWithTimeout(int32_t timeout)
{
    if (timeout < -1) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "aclrtSynchronizeDeviceWithTimeout: timeout must be -1 or >= 0, got %d",
                       (int)timeout);
    }
    return synchronize_device("aclrtSynchronizeDeviceWithTimeout", timeout);
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
    if (handle == NULL || handle == (aclrtStream)&devices[d].default_stream) {
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

static uint32_t next_task_id = 1;
static _Thread_local uint32_t tl_last_task_id;

aclError rt_enqueue_typed_locked(struct rt_stream *s, aclmdlRITaskType type, aclsim_task_run_fn run,
                                 aclsim_task_release_fn release, void *ctx)
{
    struct rt_task *t = calloc(1, sizeof *t);
    if (t == NULL) {
        return rt_error(ACL_ERROR_RT_MEMORY_ALLOCATION);
    }
    t->id = next_task_id++;
    tl_last_task_id = t->id;
    t->run = run;
    t->release = release;
    t->ctx = ctx;
    t->type = type;
    t->device = s->device;
    t->overflow_check = s->overflow_switch;
    t->origin = s;
    struct rt_task **head = &s->head, **tail = &s->tail;
    if (s->capturing) {
        t->group = s->open_group;
        head = &s->captured_head;
        tail = &s->captured_tail;
    } else if (s->update_group != NULL) {
        head = &s->update_head;
        tail = &s->update_tail;
    }
    if (*tail != NULL) {
        (*tail)->next = t;
    } else {
        *head = t;
    }
    *tail = t;
    return ACL_SUCCESS;
}

aclError rt_enqueue_locked(struct rt_stream *s, aclsim_task_run_fn run, aclsim_task_release_fn release, void *ctx)
{
    return rt_enqueue_typed_locked(s, ACL_MODEL_RI_TASK_DEFAULT, run, release, ctx);
}

static _Thread_local const struct rt_task *tl_running_task;

aclError rt_run_task(const struct rt_task *t, aclsim_task_run_fn run, void *ctx)
{
    const struct rt_task *outer = tl_running_task;
    tl_running_task = t;
    aclError err = run(ctx);
    tl_running_task = outer;
    return err;
}

const struct rt_task *rt_running_task(void)
{
    return tl_running_task;
}

static aclError stream_enqueue(const char *api, aclrtStream stream, aclmdlRITaskType type, aclsim_task_run_fn run,
                               aclsim_task_release_fn release, void *ctx)
{
    aclError err = ACL_SUCCESS;
    if (api == NULL) {
        api = "launch";
    }
    pthread_mutex_lock(&rt_lock);
    struct rt_stream *s = rt_resolve_stream_locked(stream, api, &err);
    if (s != NULL) {
        err = rt_enqueue_typed_locked(s, type, run, release, ctx);
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

aclError aclsim_stream_enqueue(const char *api, aclrtStream stream, aclsim_task_run_fn run,
                               aclsim_task_release_fn release, void *ctx)
{
    return stream_enqueue(api, stream, ACL_MODEL_RI_TASK_DEFAULT, run, release, ctx);
}

aclError aclsim_stream_launch(const char *api, aclrtStream stream, aclsim_task_run_fn run,
                              aclsim_task_release_fn release, void *ctx)
{
    return stream_enqueue(api, stream, ACL_MODEL_RI_TASK_KERNEL, run, release, ctx);
}

/* ---- what happens to the device: exception, state and abort callbacks ----------------- */

static aclrtExceptionInfoCallback exception_callback; /* under rt_lock */
static aclError last_task_error[ACLSIM_MAX_DEVICES];   /* aclrtGetErrorVerbose's, under rt_lock */

/* Runs on the thread that ran the failed task, without rt_lock (the callback may call the runtime). */
static void report_task_failure(struct rt_stream *s, const struct rt_task *t, aclError error)
{
    pthread_mutex_lock(&rt_lock);
    aclrtExceptionInfoCallback callback = exception_callback;
    last_task_error[s->device] = error;
    pthread_mutex_unlock(&rt_lock);
    if (callback != NULL) {
        struct rtExceptionInfo info = {t->id, (uint32_t)(s->is_default ? 0 : s->id), (uint32_t)pthread_self(),
                                       (uint32_t)s->device, error};
        callback(&info);
    }
}

aclError aclrtSetExceptionInfoCallback(aclrtExceptionInfoCallback callback)
{
    pthread_mutex_lock(&rt_lock);
    exception_callback = callback;
    pthread_mutex_unlock(&rt_lock);
    return ACL_SUCCESS;
}

aclError aclrtGetErrorVerbose(int32_t deviceId, aclrtErrorInfo *errorInfo)
{
    aclError err = ACL_SUCCESS;
    if (errorInfo == NULL) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "aclrtGetErrorVerbose: errorInfo must not be NULL");
    }
    if (!valid_device_id(deviceId, "aclrtGetErrorVerbose", &err)) {
        return rt_error(err);
    }
    pthread_mutex_lock(&rt_lock);
    aclError last = last_task_error[deviceId];
    pthread_mutex_unlock(&rt_lock);
    memset(errorInfo, 0, sizeof *errorInfo);
    if (last == ACL_ERROR_RT_AICORE_EXCEPTION) {
        errorInfo->errorType = ACL_RT_ERROR_AICORE;
        errorInfo->hasDetail = 1;
        errorInfo->detail.aicoreErrType = ACL_RT_AICORE_ERROR_SW; /* a kernel refused its inputs */
    } else if (last == ACL_ERROR_RT_DEVICE_MEM_ERROR) {
        errorInfo->errorType = ACL_RT_ERROR_MEMORY;
    } else {
        errorInfo->errorType = last == ACL_SUCCESS ? ACL_RT_NO_ERROR : ACL_RT_ERROR_OTHERS;
    }
    return ACL_SUCCESS;
}

aclError aclrtGetThreadLastTaskId(uint32_t *taskId)
{
    if (taskId == NULL) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "aclrtGetThreadLastTaskId: taskId must not be NULL");
    }
    *taskId = tl_last_task_id;
    return ACL_SUCCESS;
}

#define MAX_STATE_CALLBACKS 16

struct named_callback {
    char name[64];
    void *fn;
    void *args;
};

static struct named_callback device_state_callbacks[MAX_STATE_CALLBACKS], stream_state_callbacks[MAX_STATE_CALLBACKS],
    abort_callbacks[MAX_STATE_CALLBACKS]; /* under rt_lock; fn NULL: a free slot */

/* Registers fn under name (again: replaces it); fn NULL removes the registration. */
static aclError register_named(const char *api, struct named_callback *table, const char *name, void *fn, void *args)
{
    if (name == NULL || name[0] == '\0' || strlen(name) >= sizeof table->name) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "%s: regName must be a name of 1 to %zu characters", api,
                       sizeof table->name - 1);
    }
    pthread_mutex_lock(&rt_lock);
    struct named_callback *slot = NULL;
    for (int i = 0; i < MAX_STATE_CALLBACKS; i++) {
        if (table[i].fn != NULL && strcmp(table[i].name, name) == 0) {
            slot = &table[i];
        }
    }
    for (int i = 0; i < MAX_STATE_CALLBACKS && slot == NULL && fn != NULL; i++) {
        if (table[i].fn == NULL) {
            slot = &table[i];
        }
    }
    if (slot != NULL) {
        snprintf(slot->name, sizeof slot->name, "%s", name);
        slot->fn = fn;
        slot->args = args;
    }
    pthread_mutex_unlock(&rt_lock);
    if (slot == NULL && fn != NULL) {
        return rt_fail(ACL_ERROR_STORAGE_OVER_LIMIT, "%s: %d callbacks are registered already", api, MAX_STATE_CALLBACKS);
    }
    return ACL_SUCCESS;
}

/* A copy of a table, taken with rt_lock, to call without it. */
static int snapshot(const struct named_callback *table, struct named_callback *out)
{
    int n = 0;
    pthread_mutex_lock(&rt_lock);
    for (int i = 0; i < MAX_STATE_CALLBACKS; i++) {
        if (table[i].fn != NULL) {
            out[n++] = table[i];
        }
    }
    pthread_mutex_unlock(&rt_lock);
    return n;
}

aclError aclrtRegDeviceStateCallback(const char *regName, aclrtDeviceStateCallback callback, void *args)
{
    return register_named("aclrtRegDeviceStateCallback", device_state_callbacks, regName, (void *)callback, args);
}

aclError aclrtRegStreamStateCallback(const char *regName, aclrtStreamStateCallback callback, void *args)
{
    return register_named("aclrtRegStreamStateCallback", stream_state_callbacks, regName, (void *)callback, args);
}

aclError aclrtSetDeviceTaskAbortCallback(const char *regName, aclrtDeviceTaskAbortCallback callback, void *args)
{
    return register_named("aclrtSetDeviceTaskAbortCallback", abort_callbacks, regName, (void *)callback, args);
}

static void device_state(int32_t device, aclrtDeviceState state)
{
    struct named_callback calls[MAX_STATE_CALLBACKS];
    int n = snapshot(device_state_callbacks, calls);
    for (int i = 0; i < n; i++) {
        ((aclrtDeviceStateCallback)calls[i].fn)(device, state, calls[i].args);
    }
}

static void stream_state(aclrtStream stream, aclrtStreamState state)
{
    struct named_callback calls[MAX_STATE_CALLBACKS];
    int n = snapshot(stream_state_callbacks, calls);
    for (int i = 0; i < n; i++) {
        ((aclrtStreamStateCallback)calls[i].fn)(stream, state, calls[i].args);
    }
}

int64_t rt_deadline(int32_t timeout)
{
    if (timeout < 0) {
        return -1;
    }
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000 + timeout;
}

static int past(int64_t deadline_ms)
{
    if (deadline_ms < 0) {
        return 0;
    }
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000 >= deadline_ms;
}

/* The streams this thread is draining, innermost last (a wait drains another stream). */
#define MAX_NESTED_DRAINS 64
static _Thread_local struct rt_stream *tl_draining[MAX_NESTED_DRAINS];
static _Thread_local int tl_draining_count;

static int is_draining(const struct rt_stream *s)
{
    for (int i = 0; i < tl_draining_count; i++) {
        if (tl_draining[i] == s) {
            return 1;
        }
    }
    return 0;
}

static aclError drain_until(struct rt_stream *s, int64_t deadline_ms, aclError timeout_status);

aclError rt_drain_until(struct rt_stream *s, int64_t deadline_ms, aclError timeout_status)
{
    if (is_draining(s) || tl_draining_count == MAX_NESTED_DRAINS) {
        return ACL_SUCCESS; /* already being run by this thread, further out */
    }
    tl_draining[tl_draining_count++] = s;
    aclError err = drain_until(s, deadline_ms, timeout_status);
    tl_draining_count--;
    return err;
}

/* The deadline of the synchronisation this thread is running tasks for (-1: none). */
static _Thread_local int64_t tl_deadline = -1;

int64_t rt_task_deadline(void)
{
    return tl_deadline;
}

int rt_run_other_work(int device)
{
    pthread_mutex_lock(&rt_lock);
    struct rt_stream *found = NULL;
    if (device >= 0 && device < ACLSIM_MAX_DEVICES && devices[device].refcount > 0) {
        struct rt_stream *d = &devices[device].default_stream;
        if (d->head != NULL && d->users == 0 && !is_draining(d)) {
            found = d;
        }
    }
    for (struct rt_stream *s = user_streams; found == NULL && s != NULL; s = s->next) {
        if (s->device == device && s->head != NULL && s->users == 0 && !is_draining(s)) {
            found = s;
        }
    }
    if (found != NULL) {
        rt_stream_use_locked(found);
    }
    pthread_mutex_unlock(&rt_lock);
    if (found == NULL) {
        return 0;
    }
    (void)rt_drain(found); /* its failures are its own synchroniser's to see: reported as exceptions */
    rt_stream_done(found);
    return 1;
}

static aclError drain_until(struct rt_stream *s, int64_t deadline_ms, aclError timeout_status)
{
    aclError first = ACL_SUCCESS;
    int64_t outer_deadline = tl_deadline;
    tl_deadline = deadline_ms;
    pthread_mutex_lock(&s->drain_lock);
    for (;;) {
        pthread_mutex_lock(&rt_lock);
        struct rt_task *t = s->head;
        int timed_out = t != NULL && past(deadline_ms);
        if (t != NULL && !timed_out) {
            s->head = t->next;
            if (s->head == NULL) {
                s->tail = NULL;
            }
        }
        int keep_going = s->failure_mode == ACL_CONTINUE_ON_FAILURE;
        pthread_mutex_unlock(&rt_lock);
        if (timed_out) {
            pthread_mutex_unlock(&s->drain_lock);
            tl_deadline = outer_deadline;
            return first != ACL_SUCCESS ? first : timeout_status;
        }
        if (t == NULL) {
            break;
        }
        if (first == ACL_SUCCESS || keep_going) {
            aclError e = rt_run_task(t, t->run, t->ctx);
            if (e == RT_TASK_NOT_DONE) {
                /* A wait ran out of the synchronisation's time: it stays first in the queue. */
                pthread_mutex_lock(&rt_lock);
                t->next = s->head;
                s->head = t;
                if (s->tail == NULL) {
                    s->tail = t;
                }
                pthread_mutex_unlock(&rt_lock);
                pthread_mutex_unlock(&s->drain_lock);
                tl_deadline = outer_deadline;
                return first != ACL_SUCCESS ? first : timeout_status;
            }
            if (e != ACL_SUCCESS) {
                report_task_failure(s, t, e);
            }
            if (first == ACL_SUCCESS) {
                first = e;
            }
        }
        /* After a failure the rest of the queue runs (ACL_CONTINUE_ON_FAILURE, CANN's
         * default) or is dropped, as a device stops the stream (ACL_STOP_ON_FAILURE). */
        if (t->release != NULL) {
            t->release(t->ctx);
        }
        free(t);
    }
    pthread_mutex_unlock(&s->drain_lock);
    tl_deadline = outer_deadline;
    return first;
}

aclError rt_drain(struct rt_stream *s)
{
    return rt_drain_until(s, -1, ACL_SUCCESS);
}

static void stream_free(struct rt_stream *s)
{
    pthread_mutex_destroy(&s->drain_lock);
    free(s);
}

/* CANN's stream priorities: 0 (the highest) to 7 (the lowest, the default). */
#define LEAST_PRIORITY 7
#define KNOWN_STREAM_FLAGS (ACL_STREAM_FAST_LAUNCH | ACL_STREAM_FAST_SYNC | ACL_STREAM_PERSISTENT | ACL_STREAM_HUGE | \
                            ACL_STREAM_CPU_SCHEDULE | ACL_STREAM_DEVICE_USE_ONLY)

static int32_t next_stream_id = 1;

static aclError create_stream(const char *api, aclrtStream *stream, uint32_t priority, uint32_t flags)
{
    if (stream == NULL) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "%s: stream must not be NULL", api);
    }
    if (priority > LEAST_PRIORITY) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "%s: priority %u is outside [0, %d] (aclrtDeviceGetStreamPriorityRange)",
                       api, (unsigned)priority, LEAST_PRIORITY);
    }
    if (flags & ~(uint32_t)KNOWN_STREAM_FLAGS) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "%s: unknown stream flag bits 0x%x", api,
                       (unsigned)(flags & ~(uint32_t)KNOWN_STREAM_FLAGS));
    }
    struct rt_stream *s = calloc(1, sizeof *s);
    if (s == NULL) {
        return rt_fail(ACL_ERROR_RT_MEMORY_ALLOCATION, "%s: out of host memory", api);
    }
    pthread_mutex_lock(&rt_lock);
    int d = rt_current_device();
    if (d < 0) {
        pthread_mutex_unlock(&rt_lock);
        free(s);
        return no_device(api);
    }
    s->device = d;
    s->priority = priority;
    s->flags = flags;
    /* CANN's default (aclrtSetStreamFailureMode): a failed task does not stop the ones after it. */
    s->failure_mode = ACL_CONTINUE_ON_FAILURE;
    s->id = next_stream_id++;
    pthread_mutex_init(&s->drain_lock, NULL);
    LIST_PUSH(user_streams, s);
    pthread_mutex_unlock(&rt_lock);
    aclsim_counter_add(ACLSIM_CNT_STREAMS, 1);
    *stream = s;
    stream_state(s, ACL_RT_STREAM_STATE_CREATE_POST);
    return ACL_SUCCESS;
}

aclError aclrtCreateStream(aclrtStream *stream)
{
    return create_stream("aclrtCreateStream", stream, LEAST_PRIORITY, 0);
}

aclError aclrtCreateStreamWithConfig(aclrtStream *stream, uint32_t priority, uint32_t flag)
{
    return create_stream("aclrtCreateStreamWithConfig", stream, priority, flag);
}

aclrtStreamConfigHandle *aclrtCreateStreamConfigHandle(void)
{
    aclrtStreamConfigHandle *h = calloc(1, sizeof *h);
    if (h == NULL) {
        rt_fail(ACL_ERROR_RT_MEMORY_ALLOCATION, "aclrtCreateStreamConfigHandle: out of host memory");
        return NULL;
    }
    h->priority = LEAST_PRIORITY;
    return h;
}

aclError aclrtDestroyStreamConfigHandle(aclrtStreamConfigHandle *handle)
{
    if (handle == NULL) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "aclrtDestroyStreamConfigHandle: handle must not be NULL");
    }
    free(handle);
    return ACL_SUCCESS;
}

aclError aclrtSetStreamConfigOpt(aclrtStreamConfigHandle *handle, aclrtStreamConfigAttr attr, const void *attrValue,
                                 size_t valueSize)
{
    const char *api = "aclrtSetStreamConfigOpt";
    if (handle == NULL || attrValue == NULL) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "%s: handle and attrValue must not be NULL", api);
    }
    size_t need = attr == ACL_RT_STREAM_WORK_ADDR_PTR ? sizeof(void *)
                  : attr == ACL_RT_STREAM_WORK_SIZE ? sizeof(size_t)
                  : attr == ACL_RT_STREAM_FLAG || attr == ACL_RT_STREAM_PRIORITY ? sizeof(uint32_t) : 0;
    if (need == 0) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "%s: unknown attribute %d", api, (int)attr);
    }
    if (valueSize != need) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "%s: valueSize is %zu, attribute %d takes %zu bytes", api, valueSize,
                       (int)attr, need);
    }
    switch (attr) {
    case ACL_RT_STREAM_WORK_ADDR_PTR:
        memcpy(&handle->workptr, attrValue, need);
        break;
    case ACL_RT_STREAM_WORK_SIZE:
        memcpy(&handle->workSize, attrValue, need);
        break;
    case ACL_RT_STREAM_FLAG: {
        uint32_t flag;
        memcpy(&flag, attrValue, need);
        handle->flag = flag;
        break;
    }
    default:
        memcpy(&handle->priority, attrValue, need);
        break;
    }
    return ACL_SUCCESS;
}

aclError aclrtCreateStreamV2(aclrtStream *stream, const aclrtStreamConfigHandle *handle)
{
    if (handle == NULL) {
        return create_stream("aclrtCreateStreamV2", stream, LEAST_PRIORITY, 0);
    }
    return create_stream("aclrtCreateStreamV2", stream, handle->priority, (uint32_t)handle->flag);
}

aclError aclrtDeviceGetStreamPriorityRange(int32_t *leastPriority, int32_t *greatestPriority)
{
    if (leastPriority == NULL || greatestPriority == NULL) {
        return rt_fail(ACL_ERROR_INVALID_PARAM,
                       "aclrtDeviceGetStreamPriorityRange: leastPriority and greatestPriority must not be NULL");
    }
    *leastPriority = LEAST_PRIORITY;
    *greatestPriority = 0;
    return ACL_SUCCESS;
}

void rt_release_tasks(struct rt_task *t)
{
    while (t != NULL) {
        struct rt_task *next = t->next;
        if (t->release != NULL) {
            t->release(t->ctx);
        }
        free(t);
        t = next;
    }
}

/* With rt_lock held: take the queued tasks off s (run nowhere: dropped). */
static struct rt_task *take_queue_locked(struct rt_stream *s)
{
    struct rt_task *t = s->head;
    s->head = s->tail = NULL;
    return t;
}

int rt_stream_is_live_locked(const struct rt_stream *s)
{
    for (int i = 0; i < rt_device_count(); i++) {
        if (s == &devices[i].default_stream) {
            return devices[i].refcount > 0;
        }
    }
    return find_user_stream_locked((aclrtStream)s) != NULL;
}

static aclError destroy_stream(aclrtStream stream, int force, const char *api)
{
    if (stream == NULL) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "%s: stream must not be NULL (the default stream cannot be destroyed)", api);
    }
    pthread_mutex_lock(&rt_lock);
    int live = find_user_stream_locked(stream) != NULL;
    pthread_mutex_unlock(&rt_lock);
    if (live) {
        stream_state(stream, ACL_RT_STREAM_STATE_DESTROY_PRE);
    }
    pthread_mutex_lock(&rt_lock);
    struct rt_stream *s = find_user_stream_locked(stream);
    if (s == NULL) {
        pthread_mutex_unlock(&rt_lock);
        return rt_fail(ACL_ERROR_RT_PARAM_INVALID, "%s: %p is not a live stream (already destroyed?)", api, stream);
    }
    if (s->capturing) {
        pthread_mutex_unlock(&rt_lock);
        return rt_fail(ACL_ERROR_RT_STREAM_CAPTURED,
                       "%s: stream %p is being captured or is bound to a model (aclmdlRICaptureEnd / "
                       "aclmdlRIUnbindStream first)", api, stream);
    }
    LIST_REMOVE(user_streams, s);
    struct rt_task *dropped = force ? take_queue_locked(s) : NULL;
    struct rt_task *captured = s->captured_head, *update = s->update_head;
    s->captured_head = s->captured_tail = s->update_head = s->update_tail = NULL;
    s->capturing = 0;
    s->update_group = NULL; /* an update begun and never ended is dropped with the stream */
    pthread_mutex_unlock(&rt_lock);
    rt_release_tasks(dropped);
    rt_release_tasks(captured);
    rt_release_tasks(update);
    /* Queued work still runs (and releases its executors) unless forced; its errors are not
     * reported.  Any thread may destroy a stream, also while another one synchronises it: that
     * one finishes first (it found the stream before it was unlisted) and only then is the
     * stream freed. */
    (void)rt_drain(s);
    wait_unused(s);
    stream_free(s);
    aclsim_counter_add(ACLSIM_CNT_STREAMS, -1);
    return ACL_SUCCESS;
}

aclError aclrtDestroyStream(aclrtStream stream)
{
    return destroy_stream(stream, 0, "aclrtDestroyStream");
}

aclError aclrtDestroyStreamForce(aclrtStream stream)
{
    return destroy_stream(stream, 1, "aclrtDestroyStreamForce");
}

static aclError synchronize_stream(aclrtStream stream, const char *api, int32_t timeout)
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
    err = rt_drain_until(s, rt_deadline(timeout), ACL_ERROR_RT_STREAM_SYNC_TIMEOUT);
    rt_stream_done(s);
    if (err == ACL_ERROR_RT_STREAM_SYNC_TIMEOUT) {
        return rt_fail(err, "%s: the stream's work did not complete within %d ms", api, (int)timeout);
    }
    return rt_error(err);
}

aclError aclrtSynchronizeStream(aclrtStream stream)
{
    return synchronize_stream(stream, "aclrtSynchronizeStream", -1);
}

aclError aclrtSynchronizeStreamWithTimeout(aclrtStream stream, int32_t timeout)
{
    if (timeout < -1) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "aclrtSynchronizeStreamWithTimeout: timeout must be -1 or >= 0, got %d",
                       (int)timeout);
    }
    return synchronize_stream(stream, "aclrtSynchronizeStreamWithTimeout", timeout);
}

/* With rt_lock held: the stream (NULL = default) or NULL with the error set. */
#define RESOLVE_OR_RETURN(s, stream, api)                                                                              \
    aclError err_ = ACL_SUCCESS;                                                                                       \
    pthread_mutex_lock(&rt_lock);                                                                                      \
    struct rt_stream *s = rt_resolve_stream_locked(stream, api, &err_);                                               \
    if (s == NULL) {                                                                                                   \
        pthread_mutex_unlock(&rt_lock);                                                                                \
        return rt_error(err_);                                                                                         \
    }

aclError aclrtStreamQuery(aclrtStream stream, aclrtStreamStatus *status)
{
    if (status == NULL) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "aclrtStreamQuery: status must not be NULL");
    }
    RESOLVE_OR_RETURN(s, stream, "aclrtStreamQuery");
    /* The simulated device runs a stream's work when it is synchronised: until then it is queued. */
    *status = s->head == NULL ? ACL_STREAM_STATUS_COMPLETE : ACL_STREAM_STATUS_NOT_READY;
    pthread_mutex_unlock(&rt_lock);
    return ACL_SUCCESS;
}

aclError aclrtStreamGetPriority(aclrtStream stream, uint32_t *priority)
{
    if (priority == NULL) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "aclrtStreamGetPriority: priority must not be NULL");
    }
    RESOLVE_OR_RETURN(s, stream, "aclrtStreamGetPriority");
    *priority = s->is_default ? LEAST_PRIORITY : s->priority;
    pthread_mutex_unlock(&rt_lock);
    return ACL_SUCCESS;
}

aclError aclrtStreamGetFlags(aclrtStream stream, uint32_t *flags)
{
    if (flags == NULL) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "aclrtStreamGetFlags: flags must not be NULL");
    }
    RESOLVE_OR_RETURN(s, stream, "aclrtStreamGetFlags");
    *flags = s->flags;
    pthread_mutex_unlock(&rt_lock);
    return ACL_SUCCESS;
}

aclError aclrtStreamGetId(aclrtStream stream, int32_t *streamId)
{
    if (streamId == NULL) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "aclrtStreamGetId: streamId must not be NULL");
    }
    RESOLVE_OR_RETURN(s, stream, "aclrtStreamGetId");
    *streamId = s->is_default ? 0 : s->id;
    pthread_mutex_unlock(&rt_lock);
    return ACL_SUCCESS;
}

aclError aclrtSetStreamFailureMode(aclrtStream stream, uint64_t mode)
{
    if (mode != ACL_CONTINUE_ON_FAILURE && mode != ACL_STOP_ON_FAILURE) {
        return rt_fail(ACL_ERROR_INVALID_PARAM,
                       "aclrtSetStreamFailureMode: mode must be ACL_CONTINUE_ON_FAILURE or ACL_STOP_ON_FAILURE, got %llu",
                       (unsigned long long)mode);
    }
    RESOLVE_OR_RETURN(s, stream, "aclrtSetStreamFailureMode");
    s->failure_mode = mode;
    pthread_mutex_unlock(&rt_lock);
    return ACL_SUCCESS;
}

/* Drops the work queued on the stream, which stays usable. */
aclError aclrtStreamAbort(aclrtStream stream)
{
    RESOLVE_OR_RETURN(s, stream, "aclrtStreamAbort");
    struct rt_task *dropped = take_queue_locked(s);
    pthread_mutex_unlock(&rt_lock);
    rt_release_tasks(dropped);
    return ACL_SUCCESS;
}

/* Stops what the stream is running, leaving its queue (CANN: streams created with
 * ACL_STREAM_DEVICE_USE_ONLY only).  The simulated device runs a stream only inside a
 * synchronisation, which has returned by the time this call can be made: nothing to stop. */
aclError aclrtStreamStop(aclrtStream stream)
{
    if (stream == NULL) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "aclrtStreamStop: stream must not be NULL (the default stream)");
    }
    RESOLVE_OR_RETURN(s, stream, "aclrtStreamStop");
    int device_only = (s->flags & ACL_STREAM_DEVICE_USE_ONLY) != 0;
    pthread_mutex_unlock(&rt_lock);
    if (!device_only) {
        return rt_fail(ACL_ERROR_RT_PARAM_INVALID, "aclrtStreamStop: only streams created with "
                       "ACL_STREAM_DEVICE_USE_ONLY can be stopped");
    }
    return ACL_SUCCESS;
}

aclError aclrtSetStreamAttribute(aclrtStream stream, aclrtStreamAttr stmAttrType, aclrtStreamAttrValue *value)
{
    const char *api = "aclrtSetStreamAttribute";
    if (value == NULL) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "%s: value must not be NULL", api);
    }
    if (stmAttrType == ACL_STREAM_ATTR_FAILURE_MODE) {
        return aclrtSetStreamFailureMode(stream, value->failureMode);
    }
    if (stmAttrType == ACL_STREAM_ATTR_PRIORITY && value->streamPriority > LEAST_PRIORITY) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "%s: priority %u is outside [0, %d]", api,
                       (unsigned)value->streamPriority, LEAST_PRIORITY);
    }
    if (stmAttrType < ACL_STREAM_ATTR_FLOAT_OVERFLOW_CHECK || stmAttrType > ACL_STREAM_ATTR_PRIORITY) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "%s: unknown attribute %d", api, (int)stmAttrType);
    }
    RESOLVE_OR_RETURN(s, stream, api);
    switch (stmAttrType) {
    case ACL_STREAM_ATTR_FLOAT_OVERFLOW_CHECK:
        s->overflow_switch = value->overflowSwitch;
        break;
    case ACL_STREAM_ATTR_USER_CUSTOM_TAG:
        s->user_custom_tag = value->userCustomTag;
        break;
    case ACL_STREAM_ATTR_CACHE_OP_INFO:
        s->cache_op_info = value->cacheOpInfoSwitch;
        break;
    default:
        s->priority = value->streamPriority;
        break;
    }
    pthread_mutex_unlock(&rt_lock);
    return ACL_SUCCESS;
}

aclError aclrtGetStreamAttribute(aclrtStream stream, aclrtStreamAttr stmAttrType, aclrtStreamAttrValue *value)
{
    const char *api = "aclrtGetStreamAttribute";
    if (value == NULL) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "%s: value must not be NULL", api);
    }
    if (stmAttrType < ACL_STREAM_ATTR_FAILURE_MODE || stmAttrType > ACL_STREAM_ATTR_PRIORITY) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "%s: unknown attribute %d", api, (int)stmAttrType);
    }
    RESOLVE_OR_RETURN(s, stream, api);
    memset(value, 0, sizeof *value);
    switch (stmAttrType) {
    case ACL_STREAM_ATTR_FAILURE_MODE:
        value->failureMode = s->failure_mode;
        break;
    case ACL_STREAM_ATTR_FLOAT_OVERFLOW_CHECK:
        value->overflowSwitch = s->overflow_switch;
        break;
    case ACL_STREAM_ATTR_USER_CUSTOM_TAG:
        value->userCustomTag = s->user_custom_tag;
        break;
    case ACL_STREAM_ATTR_CACHE_OP_INFO:
        value->cacheOpInfoSwitch = s->cache_op_info;
        break;
    default:
        value->streamPriority = s->is_default ? LEAST_PRIORITY : s->priority;
        break;
    }
    pthread_mutex_unlock(&rt_lock);
    return ACL_SUCCESS;
}

aclError aclrtSetStreamOverflowSwitch(aclrtStream stream, uint32_t flag)
{
    RESOLVE_OR_RETURN(s, stream, "aclrtSetStreamOverflowSwitch");
    s->overflow_switch = flag;
    pthread_mutex_unlock(&rt_lock);
    return ACL_SUCCESS;
}

aclError aclrtGetStreamOverflowSwitch(aclrtStream stream, uint32_t *flag)
{
    if (flag == NULL) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "aclrtGetStreamOverflowSwitch: flag must not be NULL");
    }
    RESOLVE_OR_RETURN(s, stream, "aclrtGetStreamOverflowSwitch");
    *flag = s->overflow_switch;
    pthread_mutex_unlock(&rt_lock);
    return ACL_SUCCESS;
}

aclError aclrtCtxGetCurrentDefaultStream(aclrtStream *stream)
{
    if (stream == NULL) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "aclrtCtxGetCurrentDefaultStream: stream must not be NULL");
    }
    pthread_mutex_lock(&rt_lock);
    int d = rt_current_device();
    pthread_mutex_unlock(&rt_lock);
    if (d < 0) {
        return rt_error(no_device("aclrtCtxGetCurrentDefaultStream"));
    }
    *stream = (aclrtStream)&devices[d].default_stream;
    return ACL_SUCCESS;
}

/* The simulator bounds streams by host memory only; this is what it reports as available. */
#define STREAM_LIMIT 2048

aclError aclrtGetStreamAvailableNum(uint32_t *streamCount)
{
    if (streamCount == NULL) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "aclrtGetStreamAvailableNum: streamCount must not be NULL");
    }
    pthread_mutex_lock(&rt_lock);
    uint32_t live = 0;
    for (struct rt_stream *s = user_streams; s != NULL; s = s->next) {
        live++;
    }
    pthread_mutex_unlock(&rt_lock);
    *streamCount = live < STREAM_LIMIT ? STREAM_LIMIT - live : 0;
    return ACL_SUCCESS;
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

#define KNOWN_EVENT_FLAGS (ACL_EVENT_SYNC | ACL_EVENT_CAPTURE_STREAM_PROGRESS | ACL_EVENT_TIME_LINE | \
                           ACL_EVENT_DEVICE_USE_ONLY | ACL_EVENT_EXTERNAL | ACL_EVENT_IPC)

static uint32_t next_event_id = 1;

static aclError create_event(const char *api, aclrtEvent *event, uint32_t flags)
{
    if (event == NULL) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "%s: event must not be NULL", api);
    }
    if (flags & ~(uint32_t)KNOWN_EVENT_FLAGS) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "%s: unknown event flag bits 0x%x", api,
                       (unsigned)(flags & ~(uint32_t)KNOWN_EVENT_FLAGS));
    }
    if (flags & ACL_EVENT_IPC) {
        aclsim_unsupported(api, ACLSIM_WHY_IPC);
        return ACL_ERROR_RT_FEATURE_NOT_SUPPORT;
    }
    struct rt_event *e = calloc(1, sizeof *e);
    if (e == NULL) {
        return rt_fail(ACL_ERROR_RT_MEMORY_ALLOCATION, "%s: out of host memory", api);
    }
    pthread_mutex_lock(&rt_lock);
    e->serial = next_event_serial++;
    e->flags = flags;
    e->id = next_event_id++;
    LIST_PUSH(events, e);
    pthread_mutex_unlock(&rt_lock);
    aclsim_counter_add(ACLSIM_CNT_EVENTS, 1);
    *event = e;
    return ACL_SUCCESS;
}

aclError aclrtCreateEvent(aclrtEvent *event)
{
    return create_event("aclrtCreateEvent", event, ACL_EVENT_SYNC | ACL_EVENT_TIME_LINE);
}

aclError aclrtCreateEventWithFlag(aclrtEvent *event, uint32_t flag)
{
    return create_event("aclrtCreateEventWithFlag", event, flag);
}

aclError aclrtCreateEventExWithFlag(aclrtEvent *event, uint32_t flag)
{
    return create_event("aclrtCreateEventExWithFlag", event, flag);
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

uint32_t rt_event_flags_locked(const void *event)
{
    struct rt_event *e = find_event_locked((aclrtEvent)event);
    return e != NULL ? e->flags : 0;
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
        err = rt_enqueue_typed_locked(s, ACL_MODEL_RI_TASK_EVENT_RECORD, run_record, release_record, r);
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

static aclError synchronize_event(aclrtEvent event, const char *api, int32_t timeout)
{
    if (event == NULL) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "%s: event must not be NULL", api);
    }
    pthread_mutex_lock(&rt_lock);
    struct rt_event *e = find_event_locked(event);
    struct rt_stream *pending = e != NULL ? e->pending : NULL;
    if (pending != NULL) {
        rt_stream_use_locked(pending);
    }
    pthread_mutex_unlock(&rt_lock);
    if (e == NULL) {
        return rt_error(bad_event(api, event));
    }
    if (pending == NULL) {
        return ACL_SUCCESS;
    }
    /* The simulated device only works when asked: run the stream the record sits on. */
    aclError err = rt_drain_until(pending, rt_deadline(timeout), ACL_ERROR_RT_EVENT_SYNC_TIMEOUT);
    rt_stream_done(pending);
    if (err == ACL_ERROR_RT_EVENT_SYNC_TIMEOUT) {
        return rt_fail(err, "%s: the event was not reached within %d ms", api, (int)timeout);
    }
    return rt_error(err);
}

aclError aclrtSynchronizeEvent(aclrtEvent event)
{
    return synchronize_event(event, "aclrtSynchronizeEvent", -1);
}

aclError aclrtSynchronizeEventWithTimeout(aclrtEvent event, int32_t timeout)
{
    if (timeout < -1) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "aclrtSynchronizeEventWithTimeout: timeout must be -1 or >= 0, got %d",
                       (int)timeout);
    }
    return synchronize_event(event, "aclrtSynchronizeEventWithTimeout", timeout);
}

aclError aclrtQueryEventStatus(aclrtEvent event, aclrtEventRecordedStatus *status)
{
    if (event == NULL || status == NULL) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "aclrtQueryEventStatus: event and status must not be NULL");
    }
    pthread_mutex_lock(&rt_lock);
    struct rt_event *e = find_event_locked(event);
    if (e != NULL) {
        *status = e->complete ? ACL_EVENT_RECORDED_STATUS_COMPLETE : ACL_EVENT_RECORDED_STATUS_NOT_READY;
    }
    pthread_mutex_unlock(&rt_lock);
    return e != NULL ? ACL_SUCCESS : rt_error(bad_event("aclrtQueryEventStatus", event));
}

/* The deprecated query: an event never recorded counts as complete (nothing to wait for). */
aclError aclrtQueryEvent(aclrtEvent event, aclrtEventStatus *status)
{
    if (event == NULL || status == NULL) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "aclrtQueryEvent: event and status must not be NULL");
    }
    pthread_mutex_lock(&rt_lock);
    struct rt_event *e = find_event_locked(event);
    if (e != NULL) {
        *status = e->pending == NULL ? ACL_EVENT_STATUS_COMPLETE : ACL_EVENT_STATUS_NOT_READY;
    }
    pthread_mutex_unlock(&rt_lock);
    return e != NULL ? ACL_SUCCESS : rt_error(bad_event("aclrtQueryEvent", event));
}

/* Whether a stream waiting on the event (aclrtStreamWaitEvent) may go on: its last record ran. */
aclError aclrtQueryEventWaitStatus(aclrtEvent event, aclrtEventWaitStatus *status)
{
    if (event == NULL || status == NULL) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "aclrtQueryEventWaitStatus: event and status must not be NULL");
    }
    pthread_mutex_lock(&rt_lock);
    struct rt_event *e = find_event_locked(event);
    if (e != NULL) {
        *status = e->pending == NULL ? ACL_EVENT_WAIT_STATUS_COMPLETE : ACL_EVENT_WAIT_STATUS_NOT_READY;
    }
    pthread_mutex_unlock(&rt_lock);
    return e != NULL ? ACL_SUCCESS : rt_error(bad_event("aclrtQueryEventWaitStatus", event));
}

aclError aclrtEventGetTimestamp(aclrtEvent event, uint64_t *timestamp)
{
    if (event == NULL || timestamp == NULL) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "aclrtEventGetTimestamp: event and timestamp must not be NULL");
    }
    pthread_mutex_lock(&rt_lock);
    struct rt_event *e = find_event_locked(event);
    int complete = e != NULL && e->complete;
    struct timespec stamp = complete ? e->stamp : (struct timespec){0, 0};
    pthread_mutex_unlock(&rt_lock);
    if (e == NULL) {
        return rt_error(bad_event("aclrtEventGetTimestamp", event));
    }
    if (!complete) {
        return rt_fail(ACL_ERROR_RT_PARAM_INVALID, "aclrtEventGetTimestamp: the event is not recorded and complete");
    }
    *timestamp = (uint64_t)stamp.tv_sec * 1000000u + (uint64_t)stamp.tv_nsec / 1000u; /* microseconds */
    return ACL_SUCCESS;
}

aclError aclrtGetEventId(aclrtEvent event, uint32_t *eventId)
{
    if (event == NULL || eventId == NULL) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "aclrtGetEventId: event and eventId must not be NULL");
    }
    pthread_mutex_lock(&rt_lock);
    struct rt_event *e = find_event_locked(event);
    if (e != NULL) {
        *eventId = e->id;
    }
    pthread_mutex_unlock(&rt_lock);
    return e != NULL ? ACL_SUCCESS : rt_error(bad_event("aclrtGetEventId", event));
}

/* ---- waits and resets queued on a stream ----------------------------------------------- */

struct event_task {
    struct rt_event *event;
    uint64_t serial;
    uint64_t seq; /* the record a wait waits for: the last one when it was queued */
};

/* aclrtStreamWaitEvent's task: the waiting stream goes on once the event's record has run,
 * so the work queued before the record (on its stream) runs first, on this thread. */
static aclError run_wait(void *ctx)
{
    struct event_task *w = ctx;
    pthread_mutex_lock(&rt_lock);
    struct rt_event *e = find_event_locked(w->event);
    /* A later record replaced the one waited for; a stream this thread is draining already
     * (the record queued behind this very wait, directly or through other waits) cannot be
     * run from here: both would wait for ever on a device, here they go on. */
    struct rt_stream *pending = e != NULL && e->serial == w->serial && e->record_seq == w->seq ? e->pending : NULL;
    if (pending != NULL && is_draining(pending)) {
        pending = NULL;
    }
    if (pending != NULL) {
        rt_stream_use_locked(pending);
    }
    pthread_mutex_unlock(&rt_lock);
    if (pending == NULL) {
        return ACL_SUCCESS; /* complete, never recorded, reset or destroyed: nothing to wait for */
    }
    aclError err = rt_drain(pending);
    rt_stream_done(pending);
    return err;
}

static aclError run_reset(void *ctx)
{
    struct event_task *r = ctx;
    pthread_mutex_lock(&rt_lock);
    struct rt_event *e = find_event_locked(r->event);
    if (e != NULL && e->serial == r->serial && e->pending == NULL) {
        e->recorded = 0;
        e->complete = 0;
    }
    pthread_mutex_unlock(&rt_lock);
    return ACL_SUCCESS;
}

static aclError enqueue_event_task(const char *api, aclrtEvent event, aclrtStream stream, aclsim_task_run_fn run,
                                   int wait_own_stream_ok)
{
    if (event == NULL) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "%s: event must not be NULL", api);
    }
    struct event_task *w = malloc(sizeof *w);
    if (w == NULL) {
        return rt_fail(ACL_ERROR_RT_MEMORY_ALLOCATION, "%s: out of host memory", api);
    }
    aclError err = ACL_SUCCESS;
    pthread_mutex_lock(&rt_lock);
    struct rt_event *e = find_event_locked(event);
    struct rt_stream *s = e != NULL ? rt_resolve_stream_locked(stream, api, &err) : NULL;
    if (e != NULL && s != NULL) {
        if (!wait_own_stream_ok && e->pending == s) {
            /* The record is ahead in this very stream: FIFO order already waits for it. */
            pthread_mutex_unlock(&rt_lock);
            free(w);
            return ACL_SUCCESS;
        }
        w->event = e;
        w->serial = e->serial;
        w->seq = e->record_seq;
        err = rt_enqueue_typed_locked(s, run == run_reset ? ACL_MODEL_RI_TASK_EVENT_RESET : ACL_MODEL_RI_TASK_EVENT_WAIT,
                                      run, free, w);
        if (err != ACL_SUCCESS) {
            aclsim_set_error("%s: out of host memory", api);
        }
    }
    pthread_mutex_unlock(&rt_lock);
    if (e == NULL) {
        free(w);
        return rt_error(bad_event(api, event));
    }
    if (s == NULL || err != ACL_SUCCESS) {
        free(w);
        return rt_error(err);
    }
    return ACL_SUCCESS;
}

aclError aclrtStreamWaitEvent(aclrtStream stream, aclrtEvent event)
{
    return enqueue_event_task("aclrtStreamWaitEvent", event, stream, run_wait, 0);
}

aclError aclrtStreamWaitEventWithTimeout(aclrtStream stream, aclrtEvent event, int32_t timeout)
{
    if (timeout < -1) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "aclrtStreamWaitEventWithTimeout: timeout must be -1 or >= 0, got %d",
                       (int)timeout);
    }
    /* The wait runs the recording stream to the record on this thread: it never waits on
     * another thread, so it cannot run out of time before the work is done. */
    return enqueue_event_task("aclrtStreamWaitEventWithTimeout", event, stream, run_wait, 0);
}

aclError aclrtResetEvent(aclrtEvent event, aclrtStream stream)
{
    return enqueue_event_task("aclrtResetEvent", event, stream, run_reset, 1);
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

/* ---- device-wide ---------------------------------------------------------------------- */

/* Drops the work queued on every stream of the device (the registered abort callbacks run
 * before and after, given the timeout). */
aclError aclrtDeviceTaskAbort(int32_t deviceId, uint32_t timeout)
{
    aclError err = ACL_SUCCESS;
    if (!valid_device_id(deviceId, "aclrtDeviceTaskAbort", &err)) {
        return rt_error(err);
    }
    struct named_callback calls[MAX_STATE_CALLBACKS];
    int n = snapshot(abort_callbacks, calls);
    for (int i = 0; i < n; i++) {
        ((aclrtDeviceTaskAbortCallback)calls[i].fn)(deviceId, ACL_RT_DEVICE_TASK_ABORT_PRE, timeout, calls[i].args);
    }
    struct rt_task *dropped = NULL;
    pthread_mutex_lock(&rt_lock);
    for (struct rt_stream *s = user_streams;; s = s->next) {
        struct rt_stream *which = s != NULL ? s : (devices[deviceId].refcount > 0 ? &devices[deviceId].default_stream : NULL);
        if (which != NULL && which->device == deviceId) {
            struct rt_task *queue = take_queue_locked(which);
            while (queue != NULL) {
                struct rt_task *next = queue->next;
                queue->next = dropped;
                dropped = queue;
                queue = next;
            }
        }
        if (s == NULL) {
            break;
        }
    }
    pthread_mutex_unlock(&rt_lock);
    rt_release_tasks(dropped);
    for (int i = 0; i < n; i++) {
        ((aclrtDeviceTaskAbortCallback)calls[i].fn)(deviceId, ACL_RT_DEVICE_TASK_ABORT_POST, timeout, calls[i].args);
    }
    return ACL_SUCCESS;
}

/* The simulator bounds events by host memory only; this is what it reports as available. */
#define EVENT_LIMIT 65536

aclError aclrtGetEventAvailNum(uint32_t *eventCount)
{
    if (eventCount == NULL) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "aclrtGetEventAvailNum: eventCount must not be NULL");
    }
    pthread_mutex_lock(&rt_lock);
    uint32_t live = 0;
    for (struct rt_event *e = events; e != NULL; e = e->next) {
        live++;
    }
    pthread_mutex_unlock(&rt_lock);
    *eventCount = live < EVENT_LIMIT ? EVENT_LIMIT - live : 0;
    return ACL_SUCCESS;
}

/* The primary context is the device's default one: active while the device is set. */
aclError aclrtGetPrimaryCtxState(int32_t deviceId, uint32_t *flags, int32_t *active)
{
    aclError err = ACL_SUCCESS;
    if (active == NULL) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "aclrtGetPrimaryCtxState: active must not be NULL");
    }
    if (!valid_device_id(deviceId, "aclrtGetPrimaryCtxState", &err)) {
        return rt_error(err);
    }
    pthread_mutex_lock(&rt_lock);
    *active = devices[deviceId].refcount > 0;
    pthread_mutex_unlock(&rt_lock);
    if (flags != NULL) {
        *flags = 0;
    }
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
