/* The per-call host sequence of one aclnn call on tiny tensors, as a C program does it
 * (the official samples' order): device buffers + H2D copies, descriptors, both phases,
 * synchronise, D2H copy, release everything. scripts/bench.py builds this against the
 * simulator toolkit and compares the binding's time for the same call with it.
 *
 *   overhead ITERATIONS   -> prints "per_call_us <microseconds>"
 *
 * Built with -DOVERHEAD_LIBRARY -shared, it is instead a library whose overhead_run(ITERATIONS)
 * returns the microseconds per call, for scripts/bench.py to run inside its own process.
 */
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "acl/acl.h"
#include "overhead_common.h"

/* The timed loop: `iterations` calls (after 200 warm-up calls) on `stream`; microseconds per
 * call, the result of the last call in `result`. */
static double run(aclrtStream stream, long iterations, float *result) {
    const int64_t grad_shape[4] = {1, 1, 6, 6}, self_shape[4] = {1, 1, 4, 4};
    const int64_t padding[4] = {1, 1, 1, 1};
    float grad[36], self[16];
    for (int i = 0; i < 36; ++i) grad[i] = 1.0f;
    for (int i = 0; i < 16; ++i) self[i] = 1.0f;

    struct timespec t0, t1;
    for (long it = -200; it < iterations; ++it) { /* 200 warm-up calls */
        if (it == 0) clock_gettime(CLOCK_MONOTONIC, &t0);
        void *g_dev, *x_dev, *out_dev, *workspace = NULL;
        aclTensor *g = probe_tensor(grad_shape, grad, &g_dev, NULL);
        aclTensor *x = probe_tensor(self_shape, self, &x_dev, NULL);
        aclTensor *out = probe_tensor(self_shape, NULL, &out_dev, NULL);
        aclIntArray *pad = aclCreateIntArray(padding, 4);
        uint64_t workspace_size = 0;
        aclOpExecutor *executor = NULL;
        CHECK(PROBE_PHASE1(g, x, pad, out, &workspace_size, &executor));
        if (workspace_size > 0) CHECK(aclrtMalloc(&workspace, workspace_size, ACL_MEM_MALLOC_HUGE_FIRST));
        CHECK(PROBE_PHASE2(workspace, workspace_size, executor, stream));
        CHECK(aclrtSynchronizeStream(stream));
        CHECK(aclrtMemcpy(result, 16 * sizeof(float), out_dev, 16 * sizeof(float), ACL_MEMCPY_DEVICE_TO_HOST));
        aclDestroyTensor(g);
        aclDestroyTensor(x);
        aclDestroyTensor(out);
        aclDestroyIntArray(pad);
        if (workspace) aclrtFree(workspace);
        aclrtFree(g_dev);
        aclrtFree(x_dev);
        aclrtFree(out_dev);
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    return per_iteration_us(&t0, &t1, iterations);
}

#ifdef OVERHEAD_LIBRARY
/* Built as a shared library (-DOVERHEAD_LIBRARY -shared), the loop runs inside the process of
 * scripts/bench.py, which loaded the same toolkit and already initialised the runtime and set
 * the device on its thread: the C program and the binding then share the process and the
 * machine's scheduling. Its own stream, made on the first call; -1 for a wrong result. */
__attribute__((visibility("default"))) double overhead_run(long iterations) {
    static aclrtStream stream;
    float result[16];
    if (!stream) CHECK(aclrtCreateStream(&stream));
    double us = run(stream, iterations, result);
    return PROBE_RESULT_OK(result) ? us : -1.0;
}
#else
int main(int argc, char **argv) {
    long iterations = argc > 1 ? atol(argv[1]) : 10000;
    float result[16];
    aclrtStream stream;
    CHECK(aclInit(NULL));
    CHECK(aclrtSetDevice(0));
    CHECK(aclrtCreateStream(&stream));
    printf("per_call_us %.3f\n", run(stream, iterations, result));
    if (!PROBE_RESULT_OK(result)) {
        fprintf(stderr, "unexpected result %f\n", result[5]);
        return 1;
    }
    CHECK(aclrtDestroyStream(stream));
    CHECK(aclrtResetDevice(0));
    CHECK(aclFinalize());
    return 0;
}
#endif
