/*
 * Helper threads for one kernel loop (see parallel.h).
 */
#define _POSIX_C_SOURCE 200809L /* pthreads, sysconf */

#include "parallel.h"

#include <pthread.h>
#include <stdbool.h>
#include <unistd.h>

int aclsim_cores(void)
{
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    return cores < 1 ? 1 : cores > ACLSIM_MAX_WORKERS ? ACLSIM_MAX_WORKERS : (int)cores;
}

int aclsim_workers(int64_t items, int64_t cost)
{
    if (items <= 1 || cost <= 0 || items > INT64_MAX / cost || items * cost < ACLSIM_PARALLEL_MIN_WORK) {
        return 1;
    }
    int cores = aclsim_cores();
    return items < cores ? (int)items : cores;
}

typedef struct {
    aclsim_range_fn fn;
    void *ctx;
    int64_t begin, end;
    int worker;
} share;

static void *run_share(void *arg)
{
    const share *s = arg;
    s->fn(s->ctx, s->begin, s->end, s->worker);
    return NULL;
}

void aclsim_parallel(int64_t items, int workers, aclsim_range_fn fn, void *ctx)
{
    workers = workers < 1 ? 1 : workers > ACLSIM_MAX_WORKERS ? ACLSIM_MAX_WORKERS : workers;
    share shares[ACLSIM_MAX_WORKERS];
    pthread_t ids[ACLSIM_MAX_WORKERS];
    bool started[ACLSIM_MAX_WORKERS];
    for (int w = 0; w < workers; ++w) {
        shares[w] = (share){fn, ctx, items * w / workers, items * (w + 1) / workers, w};
        started[w] = false;
    }
    for (int w = 1; w < workers; ++w) {
        started[w] = pthread_create(&ids[w], NULL, run_share, &shares[w]) == 0;
    }
    run_share(&shares[0]);
    for (int w = 1; w < workers; ++w) {
        if (started[w]) {
            pthread_join(ids[w], NULL);
        } else {
            run_share(&shares[w]);
        }
    }
}
