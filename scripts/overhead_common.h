/* What scripts/overhead.c and overhead_repeatable.c share: the probe operator's two functions
 * and a status check that prints the failing call with the runtime's recent error message and
 * exits.
 *
 * The probe is the registered operator scripts/bench.py names on the command line (the one whose
 * registry entry says overhead_probe=True): -DPROBE=<its C name> -DPROBE_HEADER="<its header>"
 * -DPROBE_EXPECT=<element 5 of its result on these inputs, from the numpy backend>. Its
 * functions take (gradOutput 1x1x6x6, self 1x1x4x4, an int array of 4, out 1x1x4x4).  */
#ifndef ACLNN_PY_OVERHEAD_COMMON_H
#define ACLNN_PY_OVERHEAD_COMMON_H

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "acl/acl.h"

#if !defined(PROBE) || !defined(PROBE_HEADER) || !defined(PROBE_EXPECT)
#error "build with -DPROBE=<C name> -DPROBE_HEADER=\"aclnnop/<header>\" -DPROBE_EXPECT=<value> (scripts/bench.py does)"
#endif
#include PROBE_HEADER

#define PROBE_CAT_(a, b, c) a##b##c
#define PROBE_CAT(a, b, c) PROBE_CAT_(a, b, c)
/* aclnn<PROBE>GetWorkspaceSize and aclnn<PROBE> */
#define PROBE_PHASE1 PROBE_CAT(aclnn, PROBE, GetWorkspaceSize)
#define PROBE_PHASE2 PROBE_CAT(aclnn, PROBE, )
/* The result's element 5 is the probe's value given by the bench. */
#define PROBE_RESULT_OK(result) ((result)[5] == (float)(PROBE_EXPECT))

#define CHECK(expr)                                                              \
    do {                                                                         \
        int status_ = (int)(expr);                                               \
        if (status_ != 0) {                                                      \
            /* Read once: the call hands the message over and clears it. */      \
            const char *message_ = aclGetRecentErrMsg();                          \
            fprintf(stderr, "%s failed: %d %s\n", #expr, status_,                \
                    message_ ? message_ : "(no message)");                       \
            exit(1);                                                             \
        }                                                                        \
    } while (0)


/* A float32 NCHW tensor of `shape` over new device memory (its size in *bytes when not NULL),
 * `host` (NULL: nothing) copied in. */
static aclTensor *probe_tensor(const int64_t *shape, const float *host, void **dev, size_t *bytes) {
    int64_t strides[4] = {shape[1] * shape[2] * shape[3], shape[2] * shape[3], shape[3], 1};
    int64_t storage = shape[0] * strides[0];
    size_t size = (size_t)storage * sizeof(float);
    CHECK(aclrtMalloc(dev, size, ACL_MEM_MALLOC_HUGE_FIRST));
    if (host) CHECK(aclrtMemcpy(*dev, size, host, size, ACL_MEMCPY_HOST_TO_DEVICE));
    if (bytes) *bytes = size;
    return aclCreateTensor(shape, 4, ACL_FLOAT, strides, 0, ACL_FORMAT_NCHW, &storage, 1, *dev);
}

/* Microseconds per iteration between two CLOCK_MONOTONIC readings (0 for no iterations). */
static double per_iteration_us(const struct timespec *t0, const struct timespec *t1, long iterations) {
    double us = ((double)(t1->tv_sec - t0->tv_sec) * 1e9 + (double)(t1->tv_nsec - t0->tv_nsec)) / 1e3;
    return iterations > 0 ? us / (double)iterations : 0.0;
}

#endif
