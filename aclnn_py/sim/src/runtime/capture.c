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

struct rt_model {
    struct rt_model *next;
    struct rt_task *head, *tail; /* the recorded work */
    uint32_t task_count;
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
        m->task_count++;
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
        free(t);
    }
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

/* One replay of the recorded work, in order; the first failure ends it (its status is the
 * replay's).  Never runs with rt_lock held: the tasks take it. */
static aclError replay(struct rt_model *m, int64_t deadline)
{
    for (struct rt_task *t = m->head; t != NULL; t = t->next) {
        if (deadline >= 0 && t != m->head) {
            struct timespec now;
            clock_gettime(CLOCK_MONOTONIC, &now);
            if ((int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000 >= deadline) {
                return ACL_ERROR_RT_STREAM_SYNC_TIMEOUT;
            }
        }
        aclError err = t->run(t->ctx);
        if (err != ACL_SUCCESS) {
            return err;
        }
    }
    return ACL_SUCCESS;
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
