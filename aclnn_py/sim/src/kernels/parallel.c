/*
 * Helper threads for one kernel loop (see parallel.h).
 *
 * The helpers are started at the first loop that wants them and then wait on a condition
 * variable between loops.  A loop is a job of fixed shares; the calling thread publishes it,
 * wakes the helpers and runs shares itself, each thread taking the next share not yet taken
 * (an atomic counter).  When no share is left the caller withdraws the job and waits only for
 * the helpers that took one: a helper that wakes late finds nothing to do and goes back to
 * sleep, so a loop never waits for a thread that has not started working on it.
 *
 * One loop at a time owns the helpers: a second thread calling meanwhile (two streams
 * synchronised at once, or a share function calling aclsim_parallel) runs its shares alone,
 * as does a loop when the helpers cannot be started.
 *
 * Cores (Linux): for the length of a shared loop the calling thread is held to the core it is on
 * and each helper to another core the caller may use; the caller gets its own affinity back at
 * the end (the helpers keep theirs until a loop wants other ones).  A helper woken by the
 * caller is otherwise placed by the kernel's wake-up balancing, which after a pause (the cores'
 * load decayed) puts it on the caller's core: both then queue on one core while the other
 * idles, until the load balancer moves one some tens of milliseconds later.  The numpy
 * backend does the same for its worker threads (aclnn_py/ops/_placement.py).  Measured (150 ms
 * pause then 20 ms of calls before each sample, median of 9): max_unpool2d 2x2 (8,64,56,56)
 * 3.9-4.0 ms against 3.0-3.1 back to back.  Where a core cannot be chosen (no
 * sched_setaffinity, one allowed core) nothing is changed.
 *
 * Process life: the helpers block every signal (they are delivered to the program's own
 * threads); a destructor stops and joins them when libaclsim.so is unloaded or the process
 * exits; after fork() the child has none of them (only the forking thread is copied) and starts
 * its own at its first loop.
 */
#define _GNU_SOURCE /* sched_getcpu, sched_setaffinity, pthread_setaffinity_np (Linux) */

#include "parallel.h"

#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

/* The online cores, unclamped (the load average counts runnable threads over all of them). */
static long online_cores(void)
{
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    return cores < 1 ? 1 : cores;
}


/* ACLSIM_WORKERS read once: 0 when unset or not a whole number in [1, ACLSIM_MAX_WORKERS]. */
static int forced;
static pthread_once_t forced_once = PTHREAD_ONCE_INIT;

static void read_forced(void)
{
    const char *env = getenv(ACLSIM_WORKERS_ENV);
    if (env != NULL && env[0] >= '1' && env[0] <= '0' + ACLSIM_MAX_WORKERS && env[1] == '\0') {
        forced = env[0] - '0';
    }
}

int aclsim_forced_workers(void)
{
    pthread_once(&forced_once, read_forced);
    return forced;
}

/* The load average and the online cores, each read at most once per LOAD_PERIOD_NS (a loop asks
 * per call, and getloadavg opens and parses /proc/loadavg: ~10 us; sysconf(_SC_NPROCESSORS_ONLN)
 * opens and parses /sys/devices/system/cpu/online: 3.45 us measured, and a Cat of 4 parts from
 * host arrays asked up to 9 times: per upload, per part and for the download). */
#define LOAD_PERIOD_NS 1000000000LL
static atomic_llong load_read_at = -LOAD_PERIOD_NS - 1; /* CLOCK_MONOTONIC ns of the last read */
static atomic_int load_busy;
static atomic_llong cores_read_at = -LOAD_PERIOD_NS - 1;
static atomic_int cores_seen; /* aclsim_cores' last answer, 0 before the first read */

/* CLOCK_MONOTONIC in ns, or -1 where it cannot be read. */
static long long monotonic_ns(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0) {
        return -1;
    }
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int aclsim_cores(void)
{
    long long now = monotonic_ns();
    long long last = atomic_load_explicit(&cores_read_at, memory_order_relaxed);
    int cores = atomic_load_explicit(&cores_seen, memory_order_relaxed);
    if (now < 0 || cores == 0 ||
        (now - last >= LOAD_PERIOD_NS &&
         atomic_compare_exchange_strong_explicit(&cores_read_at, &last, now, memory_order_relaxed,
                                                 memory_order_relaxed))) {
        long online = online_cores();
        cores = online > ACLSIM_MAX_WORKERS ? ACLSIM_MAX_WORKERS : (int)online;
        atomic_store_explicit(&cores_seen, cores, memory_order_relaxed);
    }
    return cores;
}

bool aclsim_machine_busy(void)
{
    long long now = monotonic_ns();
    if (now < 0) {
        return false;
    }
    long long last = atomic_load_explicit(&load_read_at, memory_order_relaxed);
    if (now - last >= LOAD_PERIOD_NS &&
        atomic_compare_exchange_strong_explicit(&load_read_at, &last, now, memory_order_relaxed,
                                                memory_order_relaxed)) {
        double load[1];
        int busy = getloadavg(load, 1) == 1 && load[0] >= (double)online_cores() + 1.0;
        atomic_store_explicit(&load_busy, busy, memory_order_relaxed);
    }
    return atomic_load_explicit(&load_busy, memory_order_relaxed) != 0;
}

/* Workers for `items` of `work` in all against `floor` and `busy_floor`: forced, or 1 below the
 * floor or, below busy_floor, on a busy machine, else min(cores, items). */
static int workers_for(int64_t items, int64_t work, int64_t floor, int64_t busy_floor)
{
    if (items <= 1) {
        return 1;
    }
    int want = aclsim_forced_workers();
    if (want == 0) {
        if (work < floor || (work < busy_floor && aclsim_machine_busy())) {
            return 1;
        }
        want = aclsim_cores();
    }
    return items < want ? (int)items : want;
}

int aclsim_workers(int64_t items, int64_t cost)
{
    if (items <= 1 || cost <= 0) {
        return 1;
    }
    return workers_for(items, items > INT64_MAX / cost ? INT64_MAX : items * cost, ACLSIM_PARALLEL_MIN_WORK,
                       ACLSIM_PARALLEL_BUSY_WORK);
}

int aclsim_byte_workers(int64_t items, int64_t bytes)
{
    return workers_for(items, bytes, ACLSIM_PARALLEL_MIN_BYTES, ACLSIM_PARALLEL_BUSY_BYTES);
}

typedef struct {
    aclsim_range_fn fn;
    void *ctx;
    int64_t items;
    int shares;
    atomic_int next; /* the next share to take */
} job;

/* Share s: [items * s / shares, items * (s + 1) / shares), worker s. */
static void run_shares(job *j)
{
    for (;;) {
        int s = atomic_fetch_add_explicit(&j->next, 1, memory_order_relaxed);
        if (s >= j->shares) {
            return;
        }
        j->fn(j->ctx, j->items * s / j->shares, j->items * (s + 1) / j->shares, s);
    }
}

/* The helpers' state, under pool_lock; `owned` is taken without it (atomic exchange). */
static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t pool_wake = PTHREAD_COND_INITIALIZER; /* a job was published, or stop */
static pthread_cond_t pool_idle = PTHREAD_COND_INITIALIZER; /* the last helper left a job */
static pthread_t helpers[ACLSIM_MAX_WORKERS - 1];
static int helper_count;    /* started in this process */
static bool helpers_failed; /* one could not be started: no more tries */
static bool stopping;
static job *current;        /* the job helpers may take shares of, NULL when none */
static uint64_t generation; /* jobs published so far */
static int working;         /* helpers inside `current` */
static atomic_int owned;    /* a loop owns the helpers */
#ifdef __linux__
static int placed[ACLSIM_MAX_WORKERS - 1]; /* the core each helper is held to, -1: none */
#endif

static void *helper_main(void *arg)
{
    (void)arg;
    uint64_t seen = 0;
    pthread_mutex_lock(&pool_lock);
    for (;;) {
        while (!stopping && (current == NULL || seen == generation)) {
            pthread_cond_wait(&pool_wake, &pool_lock);
        }
        if (stopping) {
            break;
        }
        seen = generation;
        job *j = current;
        working++;
        pthread_mutex_unlock(&pool_lock);
        run_shares(j);
        pthread_mutex_lock(&pool_lock);
        if (--working == 0) {
            pthread_cond_signal(&pool_idle);
        }
    }
    pthread_mutex_unlock(&pool_lock);
    return NULL;
}

/* With pool_lock held: start helpers up to `wanted` (not counting the caller); how many there are. */
static int start_helpers_locked(int wanted)
{
    if (wanted > ACLSIM_MAX_WORKERS - 1) {
        wanted = ACLSIM_MAX_WORKERS - 1;
    }
    if (helper_count >= wanted || helpers_failed || stopping) {
        return helper_count;
    }
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old); /* inherited by the new threads */
    while (helper_count < wanted) {
        if (pthread_create(&helpers[helper_count], NULL, helper_main, NULL) != 0) {
            helpers_failed = true;
            break;
        }
#ifdef __linux__
        placed[helper_count] = -1;
#endif
        helper_count++;
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return helper_count;
}

#ifdef __linux__
/* With pool_lock held and the helpers owned: holds the calling thread to its core and helper i
 * to the i-th other core in `allowed` (the caller's affinity, to give back); false where nothing
 * was changed. */
static bool hold_cores_locked(cpu_set_t *allowed)
{
    int cpu = sched_getcpu();
    if (cpu < 0 || sched_getaffinity(0, sizeof *allowed, allowed) != 0 || CPU_COUNT(allowed) < 2 ||
        !CPU_ISSET(cpu, allowed)) {
        return false;
    }
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    if (sched_setaffinity(0, sizeof one, &one) != 0) {
        return false;
    }
    int core = -1;
    for (int i = 0; i < helper_count; ++i) {
        do { /* the next allowed core other than the caller's, cyclically */
            core = (core + 1) % CPU_SETSIZE;
        } while (core == cpu || !CPU_ISSET(core, allowed));
        if (placed[i] != core) {
            cpu_set_t mine;
            CPU_ZERO(&mine);
            CPU_SET(core, &mine);
            placed[i] = pthread_setaffinity_np(helpers[i], sizeof mine, &mine) == 0 ? core : -1;
        }
    }
    return true;
}
#endif

void aclsim_parallel(int64_t items, int workers, aclsim_range_fn fn, void *ctx)
{
    workers = workers < 1 ? 1 : workers > ACLSIM_MAX_WORKERS ? ACLSIM_MAX_WORKERS : workers;
    if (workers == 1) { /* one share: the whole range, worker 0, straight away */
        fn(ctx, 0, items, 0);
        return;
    }
    job j = {fn, ctx, items, workers, 0};
    if (atomic_exchange_explicit(&owned, 1, memory_order_acquire) != 0) {
        run_shares(&j); /* alone: the helpers are busy with another loop */
        return;
    }
    pthread_mutex_lock(&pool_lock);
    bool shared = start_helpers_locked(workers - 1) > 0;
#ifdef __linux__
    cpu_set_t allowed;
    bool held = shared && hold_cores_locked(&allowed);
#endif
    if (shared) {
        current = &j;
        generation++;
        pthread_cond_broadcast(&pool_wake);
    }
    pthread_mutex_unlock(&pool_lock);
    run_shares(&j);
    if (shared) {
        pthread_mutex_lock(&pool_lock);
        current = NULL; /* no helper takes it up any more */
        while (working > 0) {
            pthread_cond_wait(&pool_idle, &pool_lock);
        }
        pthread_mutex_unlock(&pool_lock);
    }
#ifdef __linux__
    if (held) {
        (void)sched_setaffinity(0, sizeof allowed, &allowed); /* the caller's own, back */
    }
#endif
    atomic_store_explicit(&owned, 0, memory_order_release);
}

/* Unload or exit: stop the helpers and join them.  A loop still running on another thread
 * finishes its shares itself. */
__attribute__((destructor)) static void stop_helpers(void)
{
    pthread_mutex_lock(&pool_lock);
    stopping = true;
    pthread_cond_broadcast(&pool_wake);
    int count = helper_count;
    helper_count = 0;
    pthread_mutex_unlock(&pool_lock);
    for (int i = 0; i < count; ++i) {
        pthread_join(helpers[i], NULL);
    }
}

/* The child of fork() has only the forking thread: no helper, no loop of another thread, and
 * the lock may have been copied held (its holder does not exist here). */
static void pool_after_fork_in_child(void)
{
    pthread_mutex_init(&pool_lock, NULL);
    pthread_cond_init(&pool_wake, NULL);
    pthread_cond_init(&pool_idle, NULL);
    helper_count = 0;
    helpers_failed = false;
    current = NULL;
    working = 0;
    atomic_store_explicit(&owned, 0, memory_order_relaxed);
}

__attribute__((constructor)) static void register_pool_fork_handler(void)
{
    pthread_atfork(NULL, NULL, pool_after_fork_in_child);
}
