/*
 * aclnn_py simulator runtime (libascendcl): state shared between the runtime's sources.
 * Nothing here is exported.
 */
#ifndef ACLSIM_RUNTIME_INTERNAL_H
#define ACLSIM_RUNTIME_INTERNAL_H

#include <pthread.h>
#include <stdio.h>

#include "../sim_internal.h"

#define RT_HIDDEN __attribute__((visibility("hidden")))

#define ACLSIM_MAX_DEVICES 64

/*
 * The runtime's sources depend on each other one way only:
 *   state.c   rt_lock and fork handling (depends on nothing else here)
 *   error.c   recent error text, last error, counters
 *   device.c  devices, contexts, streams, events          -> state.c, error.c
 *   memory.c  device/host memory and copies                -> device.c (streams), state.c, error.c
 *   the other sources use the ones above, none of them uses the others.
 */

/* One lock for all runtime state (state.c).  Queued work never runs while it is held. */
RT_HIDDEN extern pthread_mutex_t rt_lock;

/* At load time (a constructor): forget(), run in a child after fork() with rt_lock held by
 * the only thread, drops the state of the parent the child must not use. */
RT_HIDDEN void rt_at_fork_child(void (*forget)(void));

/* What a task is, as aclmdlRITaskGetType names it (ACL_MODEL_RI_TASK_*).  For the EVENT_*
 * kinds ctx begins with the aclrtEvent; for VALUE_WRITE/VALUE_WAIT ctx is a struct
 * rt_value_task, read when the task runs (aclmdlRITaskSetParams may change it in a model). */
struct rt_value_task {
    uint64_t *addr;
    uint64_t value;
    uint32_t flag;
};

struct rt_task_group;

struct rt_task {
    struct rt_task *next;
    uint32_t id; /* unique per process (aclrtGetThreadLastTaskId, exception information) */
    aclsim_task_run_fn run;
    aclsim_task_release_fn release;
    void *ctx;
    aclmdlRITaskType type;
    int device;
    uint32_t overflow_check;      /* the stream's overflow switch when the task was queued */
    /* In a model (capture.c): */
    const struct rt_stream *origin; /* the stream it was queued on */
    uint32_t seq;                 /* aclmdlRITaskGetSeqId */
    int disabled;                 /* skipped by replays (aclmdlRITaskDisable + aclmdlRIUpdate) */
    int disable_pending;
    struct rt_value_task *pending_params; /* aclmdlRITaskSetParams, applied by aclmdlRIUpdate */
    struct rt_task_group *group;  /* aclmdlRICaptureTaskGrpBegin .. End */
};

struct rt_stream {
    struct rt_stream *prev, *next; /* list of user streams (default streams are not in it) */
    int device;
    int is_default;
    struct rt_task *head, *tail;
    pthread_mutex_t drain_lock; /* serialises draining so FIFO order holds across threads */
    int users;                  /* threads about to drain it or draining it (under rt_lock) */
    uint32_t priority, flags;   /* as created (aclrtCreateStreamWithConfig / V2) */
    uint64_t failure_mode;      /* ACL_STOP_ON_FAILURE or ACL_CONTINUE_ON_FAILURE */
    uint32_t overflow_switch, user_custom_tag, cache_op_info;
    int32_t id;
    uint32_t res_limit[2];      /* aclrtSetStreamResLimit's, per aclrtDevResLimitType (0: none) */
    /* Stream capture (capture.c): while capturing, queued work goes to this list, not run. */
    int capturing;
    int capture_model_building; /* bound to a model being built (aclmdlRIBindStream) */
    void *capture_model;
    struct rt_task *captured_head, *captured_tail;
    struct rt_task_group *open_group;   /* aclmdlRICaptureTaskGrpBegin .. End (capturing) */
    struct rt_task_group *update_group; /* aclmdlRICaptureTaskUpdateBegin .. End (not capturing) */
    struct rt_task *update_head, *update_tail; /* the work queued meanwhile: the group's new tasks */
};

/* With rt_lock held: keep a stream's memory alive while it is used without the lock. */
RT_HIDDEN void rt_stream_use_locked(struct rt_stream *s);
/* With rt_lock held: 1 if s is a live user stream or an open device's default stream. */
RT_HIDDEN int rt_stream_is_live_locked(const struct rt_stream *s);

/* Takes rt_lock: the matching release; wakes a thread waiting to free the stream. */
RT_HIDDEN void rt_stream_done(struct rt_stream *s);

/* With rt_lock held: free the blocks aclrtFree kept for reuse (memory.c). */
RT_HIDDEN void rt_memory_release_cache_locked(void);

/* Sets one of the aclsimGetCounters counters (thread-safe). */
RT_HIDDEN void rt_counter_set(enum aclsim_counter which, int64_t value);

/* Number of simulated devices (ACLSIM_DEVICE_COUNT, default 1, 0..64). */
RT_HIDDEN int rt_device_count(void);

/* The calling thread's current device if it is set and open, else -1. */
RT_HIDDEN int rt_current_device(void);

/* With rt_lock held: the stream `handle` names (NULL = current device's default stream),
 * or NULL after setting the error in *err and the message. */
RT_HIDDEN struct rt_stream *rt_resolve_stream_locked(aclrtStream handle, const char *api, aclError *err);

/* Run the queued tasks of a stream in FIFO order (rt_lock must NOT be held).  Returns the
 * first task error; the tasks queued behind a failed one run (ACL_CONTINUE_ON_FAILURE, CANN's
 * default) or are dropped (ACL_STOP_ON_FAILURE). */
RT_HIDDEN aclError rt_drain(struct rt_stream *s);

/* rt_drain that stops starting tasks once `deadline_ms` (CLOCK_MONOTONIC milliseconds; < 0:
 * none) has passed with tasks left: then returns `timeout_status` and leaves them queued. */
RT_HIDDEN aclError rt_drain_until(struct rt_stream *s, int64_t deadline_ms, aclError timeout_status);

/* What a task's run returns when it waits for something (aclrtValueWait) that has not come
 * by the deadline of the synchronisation running it (rt_task_deadline): the task stays first
 * in its queue and the synchronisation returns its timeout status. */
#define RT_TASK_NOT_DONE ((aclError)-1)
/* The deadline (CLOCK_MONOTONIC ms) of the synchronisation this thread runs tasks for; -1: none. */
RT_HIDDEN int64_t rt_task_deadline(void);
/* Runs the work queued on one stream of the device that no thread is running (the way a
 * device runs its streams side by side, for a task waiting on them); 0 if there was none. */
RT_HIDDEN int rt_run_other_work(int device);

/* CLOCK_MONOTONIC now + timeout milliseconds, or -1 for timeout -1 (wait for ever). */
RT_HIDDEN int64_t rt_deadline(int32_t timeout);

/* Append a task with rt_lock held. 0 or ACL_ERROR_RT_MEMORY_ALLOCATION.  A captured stream
 * records it (capture.c), a stream updating a task group keeps it for the group. */
RT_HIDDEN aclError rt_enqueue_locked(struct rt_stream *s, aclsim_task_run_fn run, aclsim_task_release_fn release,
                                     void *ctx);
/* Releases and frees a list of tasks that will not run (rt_lock must NOT be held). */
RT_HIDDEN void rt_release_tasks(struct rt_task *t);

/* rt_enqueue_locked for a task of another kind than ACL_MODEL_RI_TASK_DEFAULT. */
RT_HIDDEN aclError rt_enqueue_typed_locked(struct rt_stream *s, aclmdlRITaskType type, aclsim_task_run_fn run,
                                           aclsim_task_release_fn release, void *ctx);

/* Runs one task on this thread: the task the overflow hooks see as running (nested runs, a
 * wait draining another stream, restore the outer one).  run and ctx are the task's, read
 * by the caller (a model's task may be updated meanwhile). */
RT_HIDDEN aclError rt_run_task(const struct rt_task *t, aclsim_task_run_fn run, void *ctx);
/* The task this thread is running (NULL: none). */
RT_HIDDEN const struct rt_task *rt_running_task(void);

/* With rt_lock held: an event's creation flags (0 for an unknown event). */
RT_HIDDEN uint32_t rt_event_flags_locked(const void *event);

/* The device saturation mode (aclrtSetDeviceSatMode; info.c). */
RT_HIDDEN aclrtFloatOverflowMode rt_sat_mode(void);

/* With rt_lock held: 1 if [p, p + n) lies in one live device block. */
RT_HIDDEN int rt_device_range_ok_locked(const void *p, uint64_t n);

/* With rt_lock held: read the operator-dump settings of aclInit's configuration file
 * (NULL: dump off).  See dump_config.c. */
RT_HIDDEN void rt_dump_configure(FILE *config);

/* With rt_lock held: total simulated device memory, ACLNN_PY_SIM_DEVICE_MEMORY bytes or half
 * of aclsim_machine_memory() (the rule is in aclnn_py/sim/README.md). */
RT_HIDDEN uint64_t rt_device_memory_total(void);

/* memory.c's allocation and copies under the name of the calling API. */
RT_HIDDEN aclError rt_device_malloc(void **devPtr, size_t size, const char *api);
RT_HIDDEN aclError rt_memcpy(const char *api, void *dst, size_t destMax, const void *src, size_t count,
                             aclrtMemcpyKind kind);
RT_HIDDEN aclError rt_memcpy_async(const char *api, void *dst, size_t destMax, const void *src, size_t count,
                                   aclrtMemcpyKind kind, aclrtStream stream);

/* What an address lies in (memory.c's tables; memory_ext.c adds and removes the last two). */
enum rt_range_kind {
    RT_RANGE_DEVICE,     /* an aclrtMalloc block */
    RT_RANGE_HOST,       /* an aclrtMallocHost block */
    RT_RANGE_REGISTERED, /* host memory registered with aclrtHostRegister */
    RT_RANGE_MAPPED      /* virtual memory mapped by aclrtMapMem: device memory */
};
/* With rt_lock held: add a REGISTERED or MAPPED range (0 or ACL_ERROR_RT_MEMORY_ALLOCATION),
 * remove one by its base (1 if it was there), or describe the range holding p (1 if any). */
RT_HIDDEN aclError rt_add_range_locked(uintptr_t base, size_t size, int device, enum rt_range_kind kind);
RT_HIDDEN int rt_remove_range_locked(uintptr_t base, enum rt_range_kind kind);
RT_HIDDEN int rt_range_info_locked(const void *p, uintptr_t *base, size_t *size, int *device,
                                   enum rt_range_kind *kind);

/* With rt_lock held: the aclrtMalloc block holding p (its base and size) and its slot for
 * memory_ext.c's managed-memory advice (one malloc'd block, freed by aclrtFree), or NULL. */
RT_HIDDEN void **rt_managed_slot_locked(const void *p, uintptr_t *base, size_t *size);

/* With rt_lock held: the bytes of the live device blocks (memory.c). */
RT_HIDDEN uint64_t rt_device_memory_used_locked(void);
/* With rt_lock held: the most bytes the live device blocks have been (memory.c). */
RT_HIDDEN uint64_t rt_device_memory_peak_locked(void);

/* What a device exception callback (aclrtSetExceptionInfoCallback) is handed. */
struct rtExceptionInfo {
    uint32_t task_id;
    uint32_t stream_id;
    uint32_t thread_id;
    uint32_t device_id;
    aclError error_code;
};

/* ---- errors (error.c) -------------------------------------------------------------------- */

/* Sets this thread's last error (aclrtGetLastError / aclrtPeekAtLastError); 0 is ignored. */
RT_HIDDEN void rt_set_last_error(aclError code);

/* Records code as this thread's last error (if non-zero) and returns it. */
static inline aclError rt_error(aclError code)
{
    rt_set_last_error(code);
    return code;
}

/* printf-style: sets the recent error message and the last error, returns code. */
RT_HIDDEN aclError rt_fail(aclError code, const char *fmt, ...) ACLSIM_PRINTF(2, 3);

/* ---- the functions the simulator does not honour (unsupported.c, unsupported.def) --------- */

enum aclsim_unsupported_kind {
    ACLSIM_WHY_KERNELS,
    ACLSIM_WHY_IPC,
    ACLSIM_WHY_NOTIFY,
    ACLSIM_WHY_SNAPSHOT,
    ACLSIM_WHY_MBUF,
    ACLSIM_WHY_DEVICE_CONTROL,
    ACLSIM_WHY_HW_MAINTENANCE,
    ACLSIM_WHY_MODEL_DUMP,
    ACLSIM_WHY_NOT_YET
};

/* Sets the recent error message (naming api and why) and the last error to
 * ACL_ERROR_RT_FEATURE_NOT_SUPPORT. */
RT_HIDDEN void aclsim_unsupported(const char *api, enum aclsim_unsupported_kind kind);

#endif
