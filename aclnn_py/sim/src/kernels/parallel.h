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

#include <stdbool.h>
#include <stdint.h>

#include "../sim_internal.h"

/* Most threads a kernel uses: the online cores, at most 4 (as the numpy backend's workers). */
enum { ACLSIM_MAX_WORKERS = 4 };

/* min(online cores, ACLSIM_MAX_WORKERS), at least 1. */
ACLSIM_INTERNAL int aclsim_cores(void);

/* How many workers `items` independent items of about `cost` element operations each are worth:
 * 1 below ACLSIM_PARALLEL_MIN_WORK operations in all or, below ACLSIM_PARALLEL_BUSY_WORK, on a
 * busy machine (aclsim_machine_busy), else min(aclsim_cores(), items); ACLSIM_WORKERS overrides
 * all of that (aclsim_forced_workers).
 * The floor, 2^18 (a 1 MiB FLOAT tensor through an elementwise kernel), is where a split starts
 * to pay on this 2-core machine now that the helpers sleep between loops instead of being started
 * per loop (started per loop, a 1 ms kernel's median went to 6-8 ms with 2^18 as the floor, and
 * it was 2^22).  Measured whole aclnn calls from NumPy arrays (upload, kernel, overflow test,
 * download; medians of 150-300 calls, ACLSIM_WORKERS=1 and 2 alternating process by process,
 * load average 1.1-1.4, one core partly held by another program): Relu (64,1024) 0.06 ms on one
 * thread against 0.11-0.12 split (the wake-up costs more than 64 Ki elements); (256,1024)
 * 0.35-0.36 -> 0.21-0.27; (512,1024) 0.87-0.93 -> 0.41-0.59; (1000,2048) 2.9-3.8 -> 1.9-2.0;
 * (8,256,56,56) 11.8-16.2 -> 7.4-8.6.  Muls with the floors here against ACLSIM_WORKERS=1:
 * (256,1024) 0.51-0.57 -> 0.48-0.49; (8,64,56,56) 2.72-2.74 -> 1.57-1.67.  (These split the
 * copies, fills and scans of the call as well as the kernel: a memory-bound pass alone was not
 * measured on a quiet machine, another program held a core throughout.) */
#define ACLSIM_PARALLEL_MIN_WORK ((int64_t)1 << 18)
ACLSIM_INTERNAL int aclsim_workers(int64_t items, int64_t cost);

/* The same for `items` pieces of a memory-bound pass over `bytes` bytes in all (a copy, a fill,
 * a scan): 1 below ACLSIM_PARALLEL_MIN_BYTES, 1 MiB, or below ACLSIM_PARALLEL_BUSY_BYTES on a busy
 * machine; 1 MiB is the elementwise floor's bytes (the
 * measurements above split the copies, the 0xFF fills and the overflow scans with the kernel).
 * It was 8 MiB, from a measurement that found two threads copying 25.7 MB little faster than
 * one (1.2 -> 1.05 ms) and splits from 4 MiB a little slower (avg_pool2d (8,256,28,28) 0.75 ->
 * 0.79 ms), taken when the helpers could land on the caller's core (see parallel.c, Cores). */
#define ACLSIM_PARALLEL_MIN_BYTES ((int64_t)1 << 20)
ACLSIM_INTERNAL int aclsim_byte_workers(int64_t items, int64_t bytes);

/* Work from which a split is made on a busy machine too: the old floors, 2^22 element operations
 * and 8 MiB, which the simulator split from before the load was looked at.  Below them a busy
 * machine gets no split.  Gating these as well cost more than it saved here: at load averages of
 * 3.4-5.5 on the 2 cores (scripts/bench.py's own processes and another program's test run),
 * interleaved runs of the build without the gate (splitting) and with it (not splitting):
 * reflection_pad2d forward p1 (8,64,112,112) sim/numpy 1.45 and 1.87 against 2.47 and 2.83,
 * avg_pool2d fwd inception k3 s1 p1 (8,192,35,35) 3.74 and 3.99 against 6.39 and 5.73. */
#define ACLSIM_PARALLEL_BUSY_WORK ((int64_t)1 << 22)
#define ACLSIM_PARALLEL_BUSY_BYTES ((int64_t)8 << 20)

/* Whether the machine is busy: its 1-minute load average is at least the online cores + 1 (the
 * numpy backend's rule, aclnn_py/_numpy/workers.py machine_busy): other programs hold the cores,
 * and a share handed to a helper waits for one (a split then costs more than it gives).  Read
 * at most once a second. */
ACLSIM_INTERNAL bool aclsim_machine_busy(void);

/* The environment variable ACLSIM_WORKERS=n (1 .. ACLSIM_MAX_WORKERS) makes aclsim_workers and
 * aclsim_byte_workers return min(n, items) whatever the work and the load (read once, at the
 * first loop): for tests that a split gives the same bits as one worker, and for measuring.
 * aclsim_forced_workers returns n, 0 when it is unset or not such a number. */
#define ACLSIM_WORKERS_ENV "ACLSIM_WORKERS"
ACLSIM_INTERNAL int aclsim_forced_workers(void);

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
