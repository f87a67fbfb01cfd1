/*
 * Model runtime instances (aclmdlRI): CANN's graph mode.  Work queued on a stream while it is
 * captured (aclmdlRICaptureBegin .. aclmdlRICaptureEnd) or bound to a model being built
 * (aclmdlRIBuildBegin, aclmdlRIBindStream .. aclmdlRIEndTask) is recorded, not run (device.c's
 * rt_enqueue_locked puts it on the stream's capture list); the model owns the recorded tasks
 * and replays them, in order, each time it is executed (aclmdlRIExecuteAsync queues one
 * replay on a stream, aclmdlRIExecute runs one now), until aclmdlRIDestroy releases them
 * (e.g. the executors of captured aclnn phase-2 launches).  Depends on device.c only.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "runtime_internal.h"

struct destroy_callback {
    struct destroy_callback *next;
    aclrtCallback fn;
    void *user_data;
};

/* A task group (aclmdlRICaptureTaskGrpBegin .. End): tasks of the model that
 * aclmdlRICaptureTaskUpdateBegin .. End may replace.  Owned by its model. */
struct rt_task_group {
    struct rt_task_group *next;
    struct rt_model *model;
    int ended;
    uint32_t count;
    struct rt_task **tasks;
};

/* What an update replaced while the model was replaying: released once no replay runs. */
struct retired {
    struct retired *next;
    aclsim_task_release_fn release;
    void *ctx;
};

struct rt_model {
    struct rt_model *next;
    struct rt_task *head, *tail; /* the recorded work */
    uint32_t task_count;
    struct rt_task_group *groups;
    int running;                 /* replays in progress */
    struct retired *retired;
    uint32_t id;
    int device;
    int building;                /* aclmdlRIBuildBegin .. aclmdlRIBuildEnd */
    int aborted;
    int queued;                  /* replays queued on streams (they hold the model) */
    int destroyed;               /* aclmdlRIDestroy called while replays were queued */
    struct rt_stream *stream;    /* the stream it was captured from / last bound */
    char name[128];
    struct destroy_callback *on_destroy;
};

static struct rt_model *models; /* live (not destroyed) models, under rt_lock */
static uint32_t next_model_id = 1;
static _Thread_local aclmdlRICaptureMode tl_capture_mode = ACL_MODEL_RI_CAPTURE_MODE_GLOBAL;

static struct rt_model *find_model_locked(aclmdlRI handle)
{
    for (struct rt_model *m = models; m != NULL; m = m->next) {
        if ((aclmdlRI)m == handle) {
            return m;
        }
    }
    return NULL;
}

static void unlist_model_locked(struct rt_model *m)
{
    for (struct rt_model **p = &models; *p != NULL; p = &(*p)->next) {
        if (*p == m) {
            *p = m->next;
            return;
        }
    }
}

static aclError bad_model(const char *api, aclmdlRI model)
{
    return rt_fail(ACL_ERROR_RT_PARAM_INVALID, "%s: %p is not a live model runtime instance", api, model);
}

static struct rt_model *new_model_locked(int device)
{
    struct rt_model *m = calloc(1, sizeof *m);
    if (m != NULL) {
        m->id = next_model_id++;
        m->device = device;
        m->next = models;
        models = m;
    }
    return m;
}

/* With rt_lock held: move what s recorded to the end of its model. */
static void collect_locked(struct rt_stream *s)
{
    struct rt_model *m = s->capture_model;
    for (struct rt_task *t = s->captured_head; t != NULL; t = t->next) {
        t->seq = m->task_count++;
    }
    if (s->captured_head != NULL) {
        if (m->tail != NULL) {
            m->tail->next = s->captured_head;
        } else {
            m->head = s->captured_head;
        }
        m->tail = s->captured_tail;
    }
    s->captured_head = s->captured_tail = NULL;
}

static void release_retired(struct retired *r)
{
    while (r != NULL) {
        struct retired *next = r->next;
        if (r->release != NULL) {
            r->release(r->ctx);
        }
        free(r);
        r = next;
    }
}

static void free_model(struct rt_model *m)
{
    for (struct destroy_callback *c = m->on_destroy; c != NULL; c = c->next) {
        c->fn(c->user_data);
    }
    while (m->on_destroy != NULL) {
        struct destroy_callback *c = m->on_destroy;
        m->on_destroy = c->next;
        free(c);
    }
    while (m->head != NULL) {
        struct rt_task *t = m->head;
        m->head = t->next;
        if (t->release != NULL) {
            t->release(t->ctx);
        }
        free(t->pending_params);
        free(t);
    }
    while (m->groups != NULL) {
        struct rt_task_group *g = m->groups;
        m->groups = g->next;
        free(g->tasks);
        free(g);
    }
    release_retired(m->retired);
    free(m);
}

/* ---- capture ------------------------------------------------------------------------- */

static aclError begin(const char *api, aclrtStream stream, aclmdlRI into, aclmdlRICaptureMode mode)
{
    if (mode < ACL_MODEL_RI_CAPTURE_MODE_GLOBAL || mode > ACL_MODEL_RI_CAPTURE_MODE_RELAXED) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "%s: unknown capture mode %d", api, (int)mode);
    }
    if (stream == NULL) {
        return rt_fail(ACL_ERROR_RT_PARAM_INVALID, "%s: the default stream cannot be captured (create a stream)", api);
    }
    aclError err = ACL_SUCCESS;
    pthread_mutex_lock(&rt_lock);
    struct rt_stream *s = rt_resolve_stream_locked(stream, api, &err);
    struct rt_model *m = NULL;
    if (s != NULL && s->is_default) {
        err = rt_fail(ACL_ERROR_RT_PARAM_INVALID, "%s: the default stream cannot be captured (create a stream)", api);
    } else if (s != NULL && s->capturing) {
        err = rt_fail(ACL_ERROR_RT_STREAM_CAPTURED, "%s: stream %p is already being captured", api, stream);
    } else if (s != NULL && into != NULL) {
        m = find_model_locked(into);
        if (m == NULL) {
            err = bad_model(api, into);
        }
    } else if (s != NULL) {
        m = new_model_locked(s->device);
        if (m == NULL) {
            err = rt_fail(ACL_ERROR_RT_MEMORY_ALLOCATION, "%s: out of host memory", api);
        }
    }
    if (err == ACL_SUCCESS) {
        s->capturing = 1;
        s->capture_model = m;
        m->stream = s;
    }
    pthread_mutex_unlock(&rt_lock);
    return rt_error(err);
}

aclError aclmdlRICaptureBegin(aclrtStream stream, aclmdlRICaptureMode mode)
{
    return begin("aclmdlRICaptureBegin", stream, NULL, mode);
}

aclError aclmdlRICaptureToModelRIBegin(aclrtStream stream, aclmdlRI modelRI, aclmdlRICaptureMode mode)
{
    if (modelRI == NULL) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "aclmdlRICaptureToModelRIBegin: modelRI must not be NULL");
    }
    return begin("aclmdlRICaptureToModelRIBegin", stream, modelRI, mode);
}

aclError aclmdlRICaptureGetInfo(aclrtStream stream, aclmdlRICaptureStatus *status, aclmdlRI *modelRI)
{
    if (status == NULL) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "aclmdlRICaptureGetInfo: status must not be NULL");
    }
    aclError err = ACL_SUCCESS;
    pthread_mutex_lock(&rt_lock);
    struct rt_stream *s = rt_resolve_stream_locked(stream, "aclmdlRICaptureGetInfo", &err);
    if (s != NULL) {
        int active = s->capturing && !s->capture_model_building;
        *status = active ? ACL_MODEL_RI_CAPTURE_STATUS_ACTIVE : ACL_MODEL_RI_CAPTURE_STATUS_NONE;
        if (modelRI != NULL) {
            *modelRI = active ? (aclmdlRI)s->capture_model : NULL;
        }
    }
    pthread_mutex_unlock(&rt_lock);
    return rt_error(err);
}

aclError aclmdlRICaptureEnd(aclrtStream stream, aclmdlRI *modelRI)
{
    const char *api = "aclmdlRICaptureEnd";
    if (modelRI == NULL) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "%s: modelRI must not be NULL", api);
    }
    aclError err = ACL_SUCCESS;
    pthread_mutex_lock(&rt_lock);
    struct rt_stream *s = rt_resolve_stream_locked(stream, api, &err);
    if (s != NULL && (!s->capturing || s->capture_model_building)) {
        err = rt_fail(ACL_ERROR_RT_STREAM_NOT_CAPTURED, "%s: stream %p is not being captured", api, stream);
    } else if (s != NULL) {
        collect_locked(s);
        *modelRI = s->capture_model;
        s->capturing = 0;
        s->capture_model = NULL;
        s->open_group = NULL; /* a group begun and not ended stays empty */
    }
    pthread_mutex_unlock(&rt_lock);
    return rt_error(err);
}

aclError aclmdlRICaptureThreadExchangeMode(aclmdlRICaptureMode *mode)
{
    if (mode == NULL) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "aclmdlRICaptureThreadExchangeMode: mode must not be NULL");
    }
    if (*mode < ACL_MODEL_RI_CAPTURE_MODE_GLOBAL || *mode > ACL_MODEL_RI_CAPTURE_MODE_RELAXED) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "aclmdlRICaptureThreadExchangeMode: unknown capture mode %d", (int)*mode);
    }
    aclmdlRICaptureMode previous = tl_capture_mode;
    tl_capture_mode = *mode;
    *mode = previous;
    return ACL_SUCCESS;
}

/* ---- building a model from bound streams --------------------------------------------- */

aclError aclmdlRIBuildBegin(aclmdlRI *modelRI, uint32_t flag)
{
    if (modelRI == NULL) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "aclmdlRIBuildBegin: modelRI must not be NULL");
    }
    if (flag != 0) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "aclmdlRIBuildBegin: flag must be 0, got %u", (unsigned)flag);
    }
    pthread_mutex_lock(&rt_lock);
    int d = rt_current_device();
    struct rt_model *m = d >= 0 ? new_model_locked(d) : NULL;
    if (m != NULL) {
        m->building = 1;
    }
    pthread_mutex_unlock(&rt_lock);
    if (d < 0) {
        return rt_fail(ACL_ERROR_RT_CONTEXT_NULL, "aclmdlRIBuildBegin: no device is set on this thread");
    }
    if (m == NULL) {
        return rt_fail(ACL_ERROR_RT_MEMORY_ALLOCATION, "aclmdlRIBuildBegin: out of host memory");
    }
    *modelRI = m;
    return ACL_SUCCESS;
}

/* With rt_lock held: the model (being built) and the stream, or NULL with the error set. */
static struct rt_stream *model_stream_locked(const char *api, aclmdlRI modelRI, aclrtStream stream,
                                             struct rt_model **model, aclError *err)
{
    *model = find_model_locked(modelRI);
    if (*model == NULL) {
        *err = bad_model(api, modelRI);
        return NULL;
    }
    struct rt_stream *s = rt_resolve_stream_locked(stream, api, err);
    if (s != NULL && s->is_default) {
        *err = rt_fail(ACL_ERROR_RT_PARAM_INVALID, "%s: the default stream cannot be bound to a model", api);
        return NULL;
    }
    return s;
}

aclError aclmdlRIBindStream(aclmdlRI modelRI, aclrtStream stream, uint32_t flag)
{
    const char *api = "aclmdlRIBindStream";
    (void)flag;
    aclError err = ACL_SUCCESS;
    struct rt_model *m = NULL;
    pthread_mutex_lock(&rt_lock);
    struct rt_stream *s = model_stream_locked(api, modelRI, stream, &m, &err);
    if (s != NULL && s->capturing) {
        err = rt_fail(ACL_ERROR_RT_STREAM_MODEL, "%s: stream %p is already captured or bound", api, stream);
    } else if (s != NULL && !m->building) {
        err = rt_fail(ACL_ERROR_RT_PARAM_INVALID, "%s: the model is not being built (aclmdlRIBuildBegin)", api);
    } else if (s != NULL) {
        s->capturing = 1;
        s->capture_model_building = 1;
        s->capture_model = m;
        m->stream = s;
    }
    pthread_mutex_unlock(&rt_lock);
    return rt_error(err);
}

aclError aclmdlRIEndTask(aclmdlRI modelRI, aclrtStream stream)
{
    const char *api = "aclmdlRIEndTask";
    aclError err = ACL_SUCCESS;
    struct rt_model *m = NULL;
    pthread_mutex_lock(&rt_lock);
    struct rt_stream *s = model_stream_locked(api, modelRI, stream, &m, &err);
    if (s != NULL && (!s->capturing || s->capture_model != m)) {
        err = rt_fail(ACL_ERROR_RT_STREAM_MODEL, "%s: stream %p is not bound to the model", api, stream);
    } else if (s != NULL) {
        collect_locked(s);
    }
    pthread_mutex_unlock(&rt_lock);
    return rt_error(err);
}

aclError aclmdlRIUnbindStream(aclmdlRI modelRI, aclrtStream stream)
{
    const char *api = "aclmdlRIUnbindStream";
    aclError err = ACL_SUCCESS;
    struct rt_model *m = NULL;
    pthread_mutex_lock(&rt_lock);
    struct rt_stream *s = model_stream_locked(api, modelRI, stream, &m, &err);
    if (s != NULL && (!s->capturing || s->capture_model != m)) {
        err = rt_fail(ACL_ERROR_RT_STREAM_MODEL, "%s: stream %p is not bound to the model", api, stream);
    } else if (s != NULL) {
        collect_locked(s);
        s->capturing = 0;
        s->capture_model_building = 0;
        s->capture_model = NULL;
        s->open_group = NULL;
    }
    pthread_mutex_unlock(&rt_lock);
    return rt_error(err);
}

aclError aclmdlRIBuildEnd(aclmdlRI modelRI, void *reserve)
{
    (void)reserve;
    pthread_mutex_lock(&rt_lock);
    struct rt_model *m = find_model_locked(modelRI);
    if (m != NULL) {
        m->building = 0;
    }
    pthread_mutex_unlock(&rt_lock);
    return m != NULL ? ACL_SUCCESS : bad_model("aclmdlRIBuildEnd", modelRI);
}

/* ---- execution ----------------------------------------------------------------------- */

/* One replay of the recorded work, in order, but the disabled tasks; the first failure ends
 * it (its status is the replay's).  Never runs with rt_lock held: the tasks take it.  Each
 * task's work is read under the lock (an update may replace it between tasks); what an
 * update replaces meanwhile is released once the last replay ends. */
static aclError replay(struct rt_model *m, int64_t deadline)
{
    pthread_mutex_lock(&rt_lock);
    m->running++;
    struct rt_task *t = m->head;
    pthread_mutex_unlock(&rt_lock);
    aclError err = ACL_SUCCESS;
    for (struct rt_task *first = t; t != NULL && err == ACL_SUCCESS;) {
        if (deadline >= 0 && t != first) {
            struct timespec now;
            clock_gettime(CLOCK_MONOTONIC, &now);
            if ((int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000 >= deadline) {
                err = ACL_ERROR_RT_STREAM_SYNC_TIMEOUT;
                break;
            }
        }
        pthread_mutex_lock(&rt_lock);
        int disabled = t->disabled;
        aclsim_task_run_fn run = t->run;
        void *ctx = t->ctx;
        struct rt_task *next = t->next;
        pthread_mutex_unlock(&rt_lock);
        if (!disabled) {
            err = rt_run_task(t, run, ctx);
            if (err == RT_TASK_NOT_DONE) {
                err = ACL_ERROR_RT_STREAM_SYNC_TIMEOUT; /* a replay is not resumed half-way */
            }
        }
        t = next;
    }
    pthread_mutex_lock(&rt_lock);
    struct retired *retired = NULL;
    if (--m->running == 0) {
        retired = m->retired;
        m->retired = NULL;
    }
    pthread_mutex_unlock(&rt_lock);
    release_retired(retired);
    return err;
}

static aclError run_replay(void *ctx)
{
    struct rt_model *m = ctx;
    pthread_mutex_lock(&rt_lock);
    int aborted = m->aborted || m->destroyed;
    pthread_mutex_unlock(&rt_lock);
    return aborted ? ACL_SUCCESS : replay(m, -1);
}

static void release_replay(void *ctx)
{
    struct rt_model *m = ctx;
    pthread_mutex_lock(&rt_lock);
    int free_now = --m->queued == 0 && m->destroyed;
    pthread_mutex_unlock(&rt_lock);
    if (free_now) {
        free_model(m);
    }
}

aclError aclmdlRIExecuteAsync(aclmdlRI modelRI, aclrtStream stream)
{
    const char *api = "aclmdlRIExecuteAsync";
    aclError err = ACL_SUCCESS;
    pthread_mutex_lock(&rt_lock);
    struct rt_model *m = find_model_locked(modelRI);
    struct rt_stream *s = m != NULL ? rt_resolve_stream_locked(stream, api, &err) : NULL;
    if (m == NULL) {
        err = bad_model(api, modelRI);
    } else if (s != NULL && s->capture_model == m) {
        err = rt_fail(ACL_ERROR_RT_MODEL_CAPTURED, "%s: the model is still being captured or built on that stream", api);
    } else if (s != NULL) {
        err = rt_enqueue_locked(s, run_replay, release_replay, m);
        if (err == ACL_SUCCESS) {
            m->queued++;
            m->aborted = 0;
        } else {
            aclsim_set_error("%s: out of host memory", api);
        }
    }
    pthread_mutex_unlock(&rt_lock);
    return rt_error(err);
}

aclError aclmdlRIExecute(aclmdlRI modelRI, int32_t timeout)
{
    const char *api = "aclmdlRIExecute";
    if (timeout < -1) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "%s: timeout must be -1 or >= 0, got %d", api, (int)timeout);
    }
    pthread_mutex_lock(&rt_lock);
    struct rt_model *m = find_model_locked(modelRI);
    if (m != NULL) {
        m->queued++; /* held while it runs, like a queued replay */
        m->aborted = 0;
    }
    pthread_mutex_unlock(&rt_lock);
    if (m == NULL) {
        return bad_model(api, modelRI);
    }
    aclError err = replay(m, rt_deadline(timeout));
    release_replay(m);
    if (err == ACL_ERROR_RT_STREAM_SYNC_TIMEOUT) {
        return rt_fail(err, "%s: the model did not complete within %d ms", api, (int)timeout);
    }
    return rt_error(err);
}

aclError aclmdlRIAbort(aclmdlRI modelRI)
{
    pthread_mutex_lock(&rt_lock);
    struct rt_model *m = find_model_locked(modelRI);
    if (m != NULL) {
        m->aborted = 1; /* the replays still queued do nothing */
    }
    pthread_mutex_unlock(&rt_lock);
    return m != NULL ? ACL_SUCCESS : bad_model("aclmdlRIAbort", modelRI);
}

aclError aclmdlRIDestroy(aclmdlRI modelRI)
{
    pthread_mutex_lock(&rt_lock);
    struct rt_model *m = find_model_locked(modelRI);
    int free_now = 0;
    if (m != NULL) {
        /* A stream still capturing into it stops (what it recorded goes with the model). */
        if (m->stream != NULL && rt_stream_is_live_locked(m->stream) && m->stream->capture_model == m) {
            collect_locked(m->stream);
            m->stream->capturing = 0;
            m->stream->capture_model_building = 0;
            m->stream->capture_model = NULL;
            m->stream->open_group = NULL;
        }
        unlist_model_locked(m);
        m->destroyed = 1;
        free_now = m->queued == 0;
    }
    pthread_mutex_unlock(&rt_lock);
    if (m == NULL) {
        return bad_model("aclmdlRIDestroy", modelRI);
    }
    if (free_now) {
        free_model(m);
    }
    return ACL_SUCCESS;
}

/* ---- names, ids, callbacks, inspection ------------------------------------------------ */

aclError aclmdlRISetName(aclmdlRI modelRI, const char *name)
{
    if (name == NULL) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "aclmdlRISetName: name must not be NULL");
    }
    pthread_mutex_lock(&rt_lock);
    struct rt_model *m = find_model_locked(modelRI);
    if (m != NULL) {
        snprintf(m->name, sizeof m->name, "%s", name);
    }
    pthread_mutex_unlock(&rt_lock);
    return m != NULL ? ACL_SUCCESS : bad_model("aclmdlRISetName", modelRI);
}

aclError aclmdlRIGetName(aclmdlRI modelRI, uint32_t maxLen, char *name)
{
    if (name == NULL || maxLen == 0) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "aclmdlRIGetName: name must not be NULL and maxLen must be > 0");
    }
    pthread_mutex_lock(&rt_lock);
    struct rt_model *m = find_model_locked(modelRI);
    int fits = m != NULL && strlen(m->name) < maxLen;
    if (fits) {
        memcpy(name, m->name, strlen(m->name) + 1);
    }
    pthread_mutex_unlock(&rt_lock);
    if (m == NULL) {
        return bad_model("aclmdlRIGetName", modelRI);
    }
    return fits ? ACL_SUCCESS : rt_fail(ACL_ERROR_INVALID_PARAM, "aclmdlRIGetName: maxLen %u is too small", (unsigned)maxLen);
}

aclError aclmdlRIGetId(aclmdlRI modelRI, uint32_t *modelRIId)
{
    if (modelRIId == NULL) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "aclmdlRIGetId: modelRIId must not be NULL");
    }
    pthread_mutex_lock(&rt_lock);
    struct rt_model *m = find_model_locked(modelRI);
    if (m != NULL) {
        *modelRIId = m->id;
    }
    pthread_mutex_unlock(&rt_lock);
    return m != NULL ? ACL_SUCCESS : bad_model("aclmdlRIGetId", modelRI);
}

aclError aclmdlRIDestroyRegisterCallback(aclmdlRI modelRI, aclrtCallback func, void *userData)
{
    if (func == NULL) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "aclmdlRIDestroyRegisterCallback: func must not be NULL");
    }
    struct destroy_callback *c = malloc(sizeof *c);
    if (c == NULL) {
        return rt_fail(ACL_ERROR_RT_MEMORY_ALLOCATION, "aclmdlRIDestroyRegisterCallback: out of host memory");
    }
    c->fn = func;
    c->user_data = userData;
    pthread_mutex_lock(&rt_lock);
    struct rt_model *m = find_model_locked(modelRI);
    if (m != NULL) {
        c->next = m->on_destroy;
        m->on_destroy = c;
    }
    pthread_mutex_unlock(&rt_lock);
    if (m == NULL) {
        free(c);
        return bad_model("aclmdlRIDestroyRegisterCallback", modelRI);
    }
    return ACL_SUCCESS;
}

aclError aclmdlRIDestroyUnregisterCallback(aclmdlRI modelRI, aclrtCallback func)
{
    struct destroy_callback *found = NULL;
    pthread_mutex_lock(&rt_lock);
    struct rt_model *m = find_model_locked(modelRI);
    if (m != NULL) {
        for (struct destroy_callback **p = &m->on_destroy; *p != NULL; p = &(*p)->next) {
            if ((*p)->fn == func) {
                found = *p;
                *p = found->next;
                break;
            }
        }
    }
    pthread_mutex_unlock(&rt_lock);
    if (m == NULL) {
        return bad_model("aclmdlRIDestroyUnregisterCallback", modelRI);
    }
    if (found == NULL) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "aclmdlRIDestroyUnregisterCallback: func is not registered");
    }
    free(found);
    return ACL_SUCCESS;
}

aclError aclmdlRIGetStreams(aclmdlRI modelRI, aclrtStream *streams, uint32_t *numStreams)
{
    if (numStreams == NULL) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "aclmdlRIGetStreams: numStreams must not be NULL");
    }
    pthread_mutex_lock(&rt_lock);
    struct rt_model *m = find_model_locked(modelRI);
    uint32_t n = m != NULL && m->stream != NULL ? 1 : 0;
    if (m != NULL && streams != NULL && n > 0) {
        if (*numStreams < n) {
            pthread_mutex_unlock(&rt_lock);
            return rt_fail(ACL_ERROR_INVALID_PARAM, "aclmdlRIGetStreams: room for %u streams, the model has %u",
                           (unsigned)*numStreams, (unsigned)n);
        }
        streams[0] = (aclrtStream)m->stream;
    }
    pthread_mutex_unlock(&rt_lock);
    if (m == NULL) {
        return bad_model("aclmdlRIGetStreams", modelRI);
    }
    *numStreams = n;
    return ACL_SUCCESS;
}

/* A summary of the model on standard output (CANN prints its task graph). */
aclError aclmdlRIDebugPrint(aclmdlRI modelRI)
{
    pthread_mutex_lock(&rt_lock);
    struct rt_model *m = find_model_locked(modelRI);
    if (m != NULL) {
        printf("aclmdlRI %u \"%s\": %u task%s recorded, device %d\n", (unsigned)m->id, m->name,
               (unsigned)m->task_count, m->task_count == 1 ? "" : "s", m->device);
        fflush(stdout);
    }
    pthread_mutex_unlock(&rt_lock);
    return m != NULL ? ACL_SUCCESS : bad_model("aclmdlRIDebugPrint", modelRI);
}

aclError aclmdlRIDebugJsonPrint(aclmdlRI modelRI, const char *path, uint32_t flags)
{
    const char *api = "aclmdlRIDebugJsonPrint";
    if (path == NULL) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "%s: path must not be NULL", api);
    }
    if (flags != ACL_MDLRI_DEBUG_JSON_PRINT_SUMMARY && flags != ACL_MDLRI_DEBUG_JSON_PRINT_VERBOSE) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "%s: unknown flags %u", api, (unsigned)flags);
    }
    pthread_mutex_lock(&rt_lock);
    struct rt_model *m = find_model_locked(modelRI);
    uint32_t id = m != NULL ? m->id : 0, tasks = m != NULL ? m->task_count : 0;
    int device = m != NULL ? m->device : -1;
    pthread_mutex_unlock(&rt_lock);
    if (m == NULL) {
        return bad_model(api, modelRI);
    }
    FILE *f = fopen(path, "w");
    if (f == NULL) {
        return rt_fail(ACL_ERROR_WRITE_FILE, "%s: cannot write %s", api, path);
    }
    fprintf(f, "{\"modelRI\": %u, \"device\": %d, \"tasks\": %u}\n", (unsigned)id, device, (unsigned)tasks);
    return fclose(f) == 0 ? ACL_SUCCESS : rt_fail(ACL_ERROR_WRITE_FILE, "%s: cannot write %s", api, path);
}

/* ---- the tasks of a model: inspection, parameters, disabling, task groups --------------- */

/* With rt_lock held: the live task `handle` names, and its model. */
static struct rt_task *find_task_locked(aclmdlRITask handle, struct rt_model **model)
{
    for (struct rt_model *m = models; m != NULL; m = m->next) {
        for (struct rt_task *t = m->head; t != NULL; t = t->next) {
            if ((aclmdlRITask)t == handle) {
                *model = m;
                return t;
            }
        }
    }
    return NULL;
}

static aclError bad_task(const char *api, aclmdlRITask task)
{
    return rt_fail(ACL_ERROR_RT_PARAM_INVALID, "%s: %p is not a task of a live model runtime instance "
                   "(aclmdlRIGetTasksByStream)", api, task);
}

/* With rt_lock held: the live task group `handle` names. */
static struct rt_task_group *find_group_locked(aclrtTaskGrp handle)
{
    for (struct rt_model *m = models; m != NULL; m = m->next) {
        for (struct rt_task_group *g = m->groups; g != NULL; g = g->next) {
            if ((aclrtTaskGrp)g == handle) {
                return g;
            }
        }
    }
    return NULL;
}

aclError aclmdlRIGetTasksByStream(aclrtStream stream, aclmdlRITask *tasks, uint32_t *numTasks)
{
    const char *api = "aclmdlRIGetTasksByStream";
    if (numTasks == NULL) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "%s: numTasks must not be NULL", api);
    }
    aclError err = ACL_SUCCESS;
    pthread_mutex_lock(&rt_lock);
    struct rt_stream *s = rt_resolve_stream_locked(stream, api, &err);
    struct rt_model *m = NULL;
    for (struct rt_model *it = models; s != NULL && it != NULL && m == NULL; it = it->next) {
        if (it->stream == s) {
            m = it; /* the latest model the stream was captured into (the list is newest first) */
        }
    }
    uint32_t n = 0;
    for (struct rt_task *t = m != NULL ? m->head : NULL; t != NULL; t = t->next) {
        n += t->origin == s;
    }
    if (s != NULL && m == NULL) {
        err = rt_fail(ACL_ERROR_RT_PARAM_INVALID, "%s: stream %p is not associated with a live model runtime instance",
                      api, stream);
    } else if (s != NULL && tasks != NULL && *numTasks < n) {
        err = rt_fail(ACL_ERROR_INVALID_PARAM, "%s: room for %u tasks, the stream has %u", api, (unsigned)*numTasks,
                      (unsigned)n);
    } else if (s != NULL) {
        uint32_t i = 0;
        for (struct rt_task *t = tasks != NULL ? m->head : NULL; t != NULL; t = t->next) {
            if (t->origin == s) {
                tasks[i++] = (aclmdlRITask)t;
            }
        }
        *numTasks = n;
    }
    pthread_mutex_unlock(&rt_lock);
    return rt_error(err);
}

aclError aclmdlRITaskGetType(aclmdlRITask task, aclmdlRITaskType *type)
{
    if (type == NULL) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "aclmdlRITaskGetType: type must not be NULL");
    }
    struct rt_model *m = NULL;
    pthread_mutex_lock(&rt_lock);
    struct rt_task *t = find_task_locked(task, &m);
    if (t != NULL) {
        *type = t->type;
    }
    pthread_mutex_unlock(&rt_lock);
    return t != NULL ? ACL_SUCCESS : bad_task("aclmdlRITaskGetType", task);
}

aclError aclmdlRITaskGetSeqId(aclmdlRITask task, uint32_t *id)
{
    if (id == NULL) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "aclmdlRITaskGetSeqId: id must not be NULL");
    }
    struct rt_model *m = NULL;
    pthread_mutex_lock(&rt_lock);
    struct rt_task *t = find_task_locked(task, &m);
    if (t != NULL) {
        *id = t->seq;
    }
    pthread_mutex_unlock(&rt_lock);
    return t != NULL ? ACL_SUCCESS : bad_task("aclmdlRITaskGetSeqId", task);
}

static int is_event_task(aclmdlRITaskType type)
{
    return type == ACL_MODEL_RI_TASK_EVENT_RECORD || type == ACL_MODEL_RI_TASK_EVENT_WAIT ||
           type == ACL_MODEL_RI_TASK_EVENT_RESET;
}

/* The parameters the task runs with now (those set but not yet applied by aclmdlRIUpdate are
 * not).  A kernel task of the simulator is an aclnn operator's kernel: it has no function
 * handle nor argument block, so its kernel parameters read as zero. */
aclError aclmdlRITaskGetParams(aclmdlRITask task, aclmdlRITaskParams *params)
{
    if (params == NULL) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "aclmdlRITaskGetParams: params must not be NULL");
    }
    struct rt_model *m = NULL;
    pthread_mutex_lock(&rt_lock);
    struct rt_task *t = find_task_locked(task, &m);
    if (t != NULL) {
        memset(params, 0, sizeof *params);
        params->type = t->type;
        params->taskGrp = t->group != NULL && t->group->ended ? (aclrtTaskGrp)t->group : NULL;
        if (is_event_task(t->type)) {
            void *event = *(void *const *)t->ctx;
            uint32_t flags = rt_event_flags_locked(event);
            /* The three event structs share their layout: event, eventFlag, then one flag. */
            params->eventRecordTaskParams.event = event;
            params->eventRecordTaskParams.eventFlag = flags;
        } else if (t->type == ACL_MODEL_RI_TASK_VALUE_WRITE) {
            const struct rt_value_task *v = t->ctx;
            params->valueWriteTaskParams.devAddr = v->addr;
            params->valueWriteTaskParams.value = v->value;
        } else if (t->type == ACL_MODEL_RI_TASK_VALUE_WAIT) {
            const struct rt_value_task *v = t->ctx;
            params->valueWaitTaskParams.devAddr = v->addr;
            params->valueWaitTaskParams.value = v->value;
            params->valueWaitTaskParams.flag = v->flag;
        }
    }
    pthread_mutex_unlock(&rt_lock);
    return t != NULL ? ACL_SUCCESS : bad_task("aclmdlRITaskGetParams", task);
}

/* aclrtValueWait's comparisons: ACL_STREAM_WAIT_VALUE_GEQ (0) .. _NOR (3). */
#define MAX_VALUE_WAIT_FLAG 3u

/* Stages new parameters of a value write or wait task; aclmdlRIUpdate applies them. */
aclError aclmdlRITaskSetParams(aclmdlRITask task, aclmdlRITaskParams *params)
{
    const char *api = "aclmdlRITaskSetParams";
    if (params == NULL) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "%s: params must not be NULL", api);
    }
    struct rt_value_task *staged = malloc(sizeof *staged);
    if (staged == NULL) {
        return rt_fail(ACL_ERROR_RT_MEMORY_ALLOCATION, "%s: out of host memory", api);
    }
    aclError err = ACL_SUCCESS;
    struct rt_model *m = NULL;
    pthread_mutex_lock(&rt_lock);
    struct rt_task *t = find_task_locked(task, &m);
    if (t == NULL) {
        err = bad_task(api, task);
    } else if (params->type != t->type) {
        err = rt_fail(ACL_ERROR_INVALID_PARAM, "%s: params->type %d is not the task's type %d", api, (int)params->type,
                      (int)t->type);
    } else if (t->type == ACL_MODEL_RI_TASK_KERNEL) {
        err = rt_fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "%s: the simulator's kernel tasks are aclnn operators' kernels, "
                      "with no function handle or argument block to set", api);
    } else if (t->type != ACL_MODEL_RI_TASK_VALUE_WRITE && t->type != ACL_MODEL_RI_TASK_VALUE_WAIT) {
        err = rt_fail(ACL_ERROR_RT_TASK_TYPE_NOT_SUPPORT, "%s: the parameters of a task of type %d cannot be set "
                      "(CANN reports event tasks' parameters only)", api, (int)t->type);
    } else {
        int wait = t->type == ACL_MODEL_RI_TASK_VALUE_WAIT;
        void *addr = wait ? params->valueWaitTaskParams.devAddr : params->valueWriteTaskParams.devAddr;
        uint64_t value = wait ? params->valueWaitTaskParams.value : params->valueWriteTaskParams.value;
        uint32_t flag = wait ? params->valueWaitTaskParams.flag : 0;
        if (((uintptr_t)addr & 7u) != 0 || !rt_device_range_ok_locked(addr, sizeof(uint64_t))) {
            err = rt_fail(ACL_ERROR_INVALID_PARAM, "%s: devAddr %p is not 8 aligned bytes of device memory", api, addr);
        } else if (flag > MAX_VALUE_WAIT_FLAG) {
            err = rt_fail(ACL_ERROR_INVALID_PARAM, "%s: unknown value wait flag %u", api, (unsigned)flag);
        } else {
            *staged = (struct rt_value_task){addr, value, flag};
            free(t->pending_params);
            t->pending_params = staged;
            staged = NULL;
        }
    }
    pthread_mutex_unlock(&rt_lock);
    free(staged);
    return rt_error(err);
}

/* Marks the task disabled from the next aclmdlRIUpdate on: replays skip it. */
aclError aclmdlRITaskDisable(aclmdlRITask task)
{
    struct rt_model *m = NULL;
    pthread_mutex_lock(&rt_lock);
    struct rt_task *t = find_task_locked(task, &m);
    if (t != NULL) {
        t->disable_pending = 1;
    }
    pthread_mutex_unlock(&rt_lock);
    return t != NULL ? ACL_SUCCESS : bad_task("aclmdlRITaskDisable", task);
}

/* Applies what aclmdlRITaskSetParams and aclmdlRITaskDisable staged for the model's tasks. */
aclError aclmdlRIUpdate(aclmdlRI modelRI)
{
    pthread_mutex_lock(&rt_lock);
    struct rt_model *m = find_model_locked(modelRI);
    for (struct rt_task *t = m != NULL ? m->head : NULL; t != NULL; t = t->next) {
        if (t->disable_pending) {
            t->disabled = 1;
            t->disable_pending = 0;
        }
        if (t->pending_params != NULL) {
            *(struct rt_value_task *)t->ctx = *t->pending_params; /* runs read it under rt_lock */
            free(t->pending_params);
            t->pending_params = NULL;
        }
    }
    pthread_mutex_unlock(&rt_lock);
    return m != NULL ? ACL_SUCCESS : bad_model("aclmdlRIUpdate", modelRI);
}

aclError aclmdlRICaptureTaskGrpBegin(aclrtStream stream)
{
    const char *api = "aclmdlRICaptureTaskGrpBegin";
    struct rt_task_group *g = calloc(1, sizeof *g);
    if (g == NULL) {
        return rt_fail(ACL_ERROR_RT_MEMORY_ALLOCATION, "%s: out of host memory", api);
    }
    aclError err = ACL_SUCCESS;
    pthread_mutex_lock(&rt_lock);
    struct rt_stream *s = rt_resolve_stream_locked(stream, api, &err);
    if (s != NULL && !s->capturing) {
        err = rt_fail(ACL_ERROR_RT_STREAM_NOT_CAPTURED, "%s: stream %p is not being captured", api, stream);
    } else if (s != NULL && s->open_group != NULL) {
        err = rt_fail(ACL_ERROR_RT_PARAM_INVALID, "%s: a task group is already begun on stream %p "
                      "(aclmdlRICaptureTaskGrpEnd first)", api, stream);
    } else if (s != NULL) {
        struct rt_model *m = s->capture_model;
        g->model = m;
        g->next = m->groups;
        m->groups = g;
        s->open_group = g;
        g = NULL;
    }
    pthread_mutex_unlock(&rt_lock);
    free(g);
    return rt_error(err);
}

aclError aclmdlRICaptureTaskGrpEnd(aclrtStream stream, aclrtTaskGrp *handle)
{
    const char *api = "aclmdlRICaptureTaskGrpEnd";
    if (handle == NULL) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "%s: handle must not be NULL", api);
    }
    aclError err = ACL_SUCCESS;
    pthread_mutex_lock(&rt_lock);
    struct rt_stream *s = rt_resolve_stream_locked(stream, api, &err);
    struct rt_task_group *g = s != NULL ? s->open_group : NULL;
    if (s != NULL && !s->capturing) {
        err = rt_fail(ACL_ERROR_RT_STREAM_NOT_CAPTURED, "%s: stream %p is not being captured", api, stream);
    } else if (s != NULL && g == NULL) {
        err = rt_fail(ACL_ERROR_RT_PARAM_INVALID, "%s: no task group was begun on stream %p", api, stream);
    } else if (s != NULL) {
        /* Its tasks are still on the stream's capture list, or already in the model (a bound
         * stream's aclmdlRIEndTask collects them). */
        struct rt_task *lists[2] = {g->model->head, s->captured_head};
        uint32_t n = 0;
        for (int l = 0; l < 2; l++) {
            for (struct rt_task *t = lists[l]; t != NULL; t = t->next) {
                n += t->group == g;
            }
        }
        struct rt_task **tasks = calloc(n > 0 ? n : 1, sizeof *tasks);
        if (tasks == NULL) {
            err = rt_fail(ACL_ERROR_RT_MEMORY_ALLOCATION, "%s: out of host memory", api);
        } else {
            uint32_t i = 0;
            for (int l = 0; l < 2; l++) {
                for (struct rt_task *t = lists[l]; t != NULL; t = t->next) {
                    if (t->group == g) {
                        tasks[i++] = t;
                    }
                }
            }
            g->tasks = tasks;
            g->count = n;
            g->ended = 1;
            s->open_group = NULL;
            *handle = (aclrtTaskGrp)g;
        }
    }
    pthread_mutex_unlock(&rt_lock);
    return rt_error(err);
}

aclError aclmdlRICaptureTaskUpdateBegin(aclrtStream stream, aclrtTaskGrp handle)
{
    const char *api = "aclmdlRICaptureTaskUpdateBegin";
    aclError err = ACL_SUCCESS;
    pthread_mutex_lock(&rt_lock);
    struct rt_stream *s = rt_resolve_stream_locked(stream, api, &err);
    struct rt_task_group *g = s != NULL ? find_group_locked(handle) : NULL;
    if (s != NULL && (g == NULL || !g->ended)) {
        err = rt_fail(ACL_ERROR_RT_PARAM_INVALID, "%s: %p is not a task group of a live model runtime instance "
                      "(aclmdlRICaptureTaskGrpEnd)", api, handle);
    } else if (s != NULL && s->capturing) {
        err = rt_fail(ACL_ERROR_RT_STREAM_CAPTURED, "%s: stream %p is being captured; updates go on a stream that is "
                      "not", api, stream);
    } else if (s != NULL && s->update_group != NULL) {
        err = rt_fail(ACL_ERROR_RT_PARAM_INVALID, "%s: stream %p is already updating a task group", api, stream);
    } else if (s != NULL) {
        s->update_group = g;
    }
    pthread_mutex_unlock(&rt_lock);
    return rt_error(err);
}

/* The update queued on the stream: when the stream gets there, the group's tasks take the
 * work queued between UpdateBegin and UpdateEnd, one for one. */
struct update_task {
    struct rt_task_group *group;
    struct rt_task *replacements; /* what is left to release (the replaced work after the swap) */
};

static aclError run_update(void *ctx)
{
    struct update_task *u = ctx;
    pthread_mutex_lock(&rt_lock);
    struct rt_task_group *g = find_group_locked((aclrtTaskGrp)u->group);
    if (g == NULL) {
        pthread_mutex_unlock(&rt_lock);
        return rt_fail(ACL_ERROR_RT_PARAM_INVALID, "aclmdlRICaptureTaskUpdateEnd: the task group's model was "
                       "destroyed before the update ran");
    }
    struct rt_task *r = u->replacements;
    for (uint32_t i = 0; i < g->count && r != NULL; i++, r = r->next) {
        struct rt_task *t = g->tasks[i];
        aclsim_task_run_fn run = t->run;
        aclsim_task_release_fn release = t->release;
        void *task_ctx = t->ctx;
        t->run = r->run;
        t->release = r->release;
        t->ctx = r->ctx;
        t->overflow_check = r->overflow_check;
        r->run = run;
        r->release = release;
        r->ctx = task_ctx;
    }
    if (g->model->running > 0) {
        /* A replay may be running the replaced work: it is released when the last one ends. */
        for (r = u->replacements; r != NULL; r = r->next) {
            struct retired *keep = malloc(sizeof *keep);
            if (keep != NULL) { /* out of memory: it leaks rather than being freed under a replay */
                *keep = (struct retired){g->model->retired, r->release, r->ctx};
                g->model->retired = keep;
            }
            r->release = NULL;
        }
    }
    pthread_mutex_unlock(&rt_lock);
    return ACL_SUCCESS;
}

static void release_update(void *ctx)
{
    struct update_task *u = ctx;
    rt_release_tasks(u->replacements);
    free(u);
}

aclError aclmdlRICaptureTaskUpdateEnd(aclrtStream stream)
{
    const char *api = "aclmdlRICaptureTaskUpdateEnd";
    struct update_task *u = calloc(1, sizeof *u);
    if (u == NULL) {
        return rt_fail(ACL_ERROR_RT_MEMORY_ALLOCATION, "%s: out of host memory", api);
    }
    aclError err = ACL_SUCCESS;
    struct rt_task *refused = NULL;
    pthread_mutex_lock(&rt_lock);
    struct rt_stream *s = rt_resolve_stream_locked(stream, api, &err);
    struct rt_task_group *g = s != NULL ? s->update_group : NULL;
    if (s != NULL && g == NULL) {
        err = rt_fail(ACL_ERROR_RT_PARAM_INVALID, "%s: stream %p is not updating a task group "
                      "(aclmdlRICaptureTaskUpdateBegin)", api, stream);
    } else if (s != NULL) {
        struct rt_task *work = s->update_head;
        s->update_head = s->update_tail = NULL;
        s->update_group = NULL;
        int live = find_group_locked((aclrtTaskGrp)g) != NULL; /* the model may be gone */
        uint32_t n = 0;
        int same_types = 1;
        for (struct rt_task *t = work; live && t != NULL; t = t->next, n++) {
            same_types = same_types && (n >= g->count || t->type == g->tasks[n]->type);
        }
        if (!live) {
            err = rt_fail(ACL_ERROR_RT_PARAM_INVALID, "%s: the task group's model was destroyed", api);
        } else if (n != g->count || !same_types) {
            err = rt_fail(ACL_ERROR_INVALID_PARAM, "%s: %u task(s) were queued for a group of %u; the number and "
                          "types of the tasks must be the group's", api, (unsigned)n, (unsigned)g->count);
        }
        if (err != ACL_SUCCESS) {
            refused = work;
        } else {
            u->group = g;
            u->replacements = work;
            err = rt_enqueue_locked(s, run_update, release_update, u);
            if (err == ACL_SUCCESS) {
                u = NULL;
            } else {
                aclsim_set_error("%s: out of host memory", api);
            }
        }
    }
    pthread_mutex_unlock(&rt_lock);
    rt_release_tasks(refused);
    if (u != NULL) {
        release_update(u);
    }
    return rt_error(err);
}
