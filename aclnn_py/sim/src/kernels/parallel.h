/*
 * The simulator's kernel threads (libaclsim.so, for the operator libraries and kernels/gemm.c).
 *
 * A kernel runs on the thread that synchronises its stream; aclsim_parallel lends it helper
 * threads for the duration of one loop: started, given their share, joined.  No thread
 * outlives the call, so nothing is left running at fork(), at aclFinalize or at exit.
 * The shares are fixed by (items, workers) alone, so a kernel that makes each item's result
 * depend on that item only gives the same bits for any number of workers.
 */
#ifndef ACLSIM_KERNELS_PARALLEL_H
#define ACLSIM_KERNELS_PARALLEL_H

#include <stdint.h>

#include "../sim_internal.h"

/* Most threads a kernel uses: the online cores, at most 4 (as the numpy backend's workers). */
enum { ACLSIM_MAX_WORKERS = 4 };

/* min(online cores, ACLSIM_MAX_WORKERS), at least 1. */
ACLSIM_INTERNAL int aclsim_cores(void);

/* How many workers `items` independent items of about `cost` element operations each are worth:
 * 1 below ACLSIM_PARALLEL_MIN_WORK operations in all, else min(aclsim_cores(), items).  The floor
 * is a few milliseconds of work on one thread: besides its start (tens of microseconds), a helper
 * thread on a busy machine may wait a whole scheduler time slice before it runs, and the kernel
 * waits for it (measured: a 1 ms kernel's median went to 6-8 ms with 2^18 as the floor). */
#define ACLSIM_PARALLEL_MIN_WORK ((int64_t)1 << 22)
ACLSIM_INTERNAL int aclsim_workers(int64_t items, int64_t cost);

/* fn(ctx, begin, end, worker) for worker = 0 .. workers-1 over the consecutive ranges
 * [items * w / workers, items * (w + 1) / workers); worker 0 runs on the calling thread, the
 * others on threads started here and joined before returning (a thread that cannot be started
 * has its share run by the calling thread).  workers is clamped to [1, ACLSIM_MAX_WORKERS]. */
typedef void (*aclsim_range_fn)(void *ctx, int64_t begin, int64_t end, int worker);
ACLSIM_INTERNAL void aclsim_parallel(int64_t items, int workers, aclsim_range_fn fn, void *ctx);

#endif
