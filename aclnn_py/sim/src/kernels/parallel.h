/*
 * The simulator's kernel threads (libaclsim.so, for the operator libraries, kernels/gemm.c and
 * the runtime's large copies and fills).
 *
 * A kernel runs on the thread that synchronises its stream; aclsim_parallel lends it helper
 * threads for the duration of one loop.  The helpers are started once, at the first loop that
 * wants them, and sleep between loops (starting threads per loop cost ~40 us each); they block
 * signals, are joined when libaclsim.so is unloaded or the process exits, and a child of fork()
 * starts its own.  The shares are fixed by (items, workers) alone and each runs whole on one
 * thread, whichever takes it first, so a kernel that makes each item's result depend on that
 * item only gives the same bits for any number of workers, and one that keeps a partial result
 * per share gives the same bits for the same number of workers.
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
 * is a few milliseconds of work on one thread: a helper on a busy machine may wait a scheduler
 * time slice before it runs (the loop no longer waits for a helper that has not started, but it
 * gains nothing either), and when helpers were started per loop, a 1 ms kernel's median went to
 * 6-8 ms with 2^18 as the floor. */
#define ACLSIM_PARALLEL_MIN_WORK ((int64_t)1 << 22)
ACLSIM_INTERNAL int aclsim_workers(int64_t items, int64_t cost);

/* fn(ctx, begin, end, worker) for worker = 0 .. workers-1 over the consecutive ranges
 * [items * w / workers, items * (w + 1) / workers), each share once, on the calling thread or a
 * helper, whichever takes it first; returns when all have run.  The calling thread takes shares
 * until none is left and then waits only for the shares helpers have taken: a helper late to
 * wake finds none and leaves them to it.  Alone (no helper; the helpers busy with another
 * thread's loop; fn calling aclsim_parallel) the calling thread runs every share in order.
 * workers is clamped to [1, ACLSIM_MAX_WORKERS]; fn must not block on another share. */
typedef void (*aclsim_range_fn)(void *ctx, int64_t begin, int64_t end, int worker);
ACLSIM_INTERNAL void aclsim_parallel(int64_t items, int workers, aclsim_range_fn fn, void *ctx);

#endif
