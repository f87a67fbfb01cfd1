/* The per-run host sequence of a prepared aclnn call on tiny tensors, as a C program does it:
 * phase 1 once on a repeatable executor (aclSetAclOpExecutorRepeatable), then per run the new
 * input data (and the output's current content, as aclnn_py.prepare does for in-place
 * operators) copied into the same device buffers, phase 2, synchronise, result copied back.
 * scripts/bench.py builds this against the simulator toolkit and compares a run of
 * aclnn_py.prepare's object, and a one-shot aclnn_py.call, with it.
 *
 *   overhead_repeatable ITERATIONS   -> prints "per_run_us <microseconds>"
 *
 * Built with -DOVERHEAD_LIBRARY -shared, a library whose overhead_repeatable_run(ITERATIONS)
 * returns the microseconds per run, for scripts/bench.py to run inside its own process.
 */
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "acl/acl.h"
#include "overhead_common.h"

/* Phase 1 once, then `iterations` runs (after 200 warm-up runs) on `stream`: microseconds per
 * run; 1 in *wrong when the result is not the expected one. */
static double run(aclrtStream stream, long iterations, int *wrong) {
    const int64_t grad_shape[4] = {1, 1, 6, 6}, self_shape[4] = {1, 1, 4, 4};
    const int64_t padding[4] = {1, 1, 1, 1};
    float grad[36], self[16], result[16] = {0};
    for (int i = 0; i < 36; ++i) grad[i] = 1.0f;
    for (int i = 0; i < 16; ++i) self[i] = 1.0f;

    void *g_dev, *x_dev, *out_dev, *workspace = NULL;
    size_t g_bytes, x_bytes, out_bytes;
    aclTensor *g = probe_tensor(grad_shape, NULL, &g_dev, &g_bytes);
    aclTensor *x = probe_tensor(self_shape, NULL, &x_dev, &x_bytes);
    aclTensor *out = probe_tensor(self_shape, NULL, &out_dev, &out_bytes);
    aclIntArray *pad = aclCreateIntArray(padding, 4);
    uint64_t workspace_size = 0;
    aclOpExecutor *executor = NULL;
    CHECK(aclrtMemcpy(g_dev, g_bytes, grad, g_bytes, ACL_MEMCPY_HOST_TO_DEVICE));
    CHECK(aclrtMemcpy(x_dev, x_bytes, self, x_bytes, ACL_MEMCPY_HOST_TO_DEVICE));
    CHECK(PROBE_PHASE1(g, x, pad, out, &workspace_size, &executor));
    CHECK(aclSetAclOpExecutorRepeatable(executor));
    if (workspace_size > 0) CHECK(aclrtMalloc(&workspace, workspace_size, ACL_MEM_MALLOC_HUGE_FIRST));

    struct timespec t0, t1;
    for (long it = -200; it < iterations; ++it) { /* 200 warm-up runs */
        if (it == 0) clock_gettime(CLOCK_MONOTONIC, &t0);
        CHECK(aclrtMemcpy(g_dev, g_bytes, grad, g_bytes, ACL_MEMCPY_HOST_TO_DEVICE));
        CHECK(aclrtMemcpy(x_dev, x_bytes, self, x_bytes, ACL_MEMCPY_HOST_TO_DEVICE));
        CHECK(aclrtMemcpy(out_dev, out_bytes, result, out_bytes, ACL_MEMCPY_HOST_TO_DEVICE));
        CHECK(PROBE_PHASE2(workspace, workspace_size, executor, stream));
        CHECK(aclrtSynchronizeStream(stream));
        CHECK(aclrtMemcpy(result, sizeof result, out_dev, sizeof result, ACL_MEMCPY_DEVICE_TO_HOST));
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double us = per_iteration_us(&t0, &t1, iterations);
    *wrong = !PROBE_RESULT_OK(result);
    CHECK(aclDestroyAclOpExecutor(executor));
    aclDestroyTensor(g);
    aclDestroyTensor(x);
    aclDestroyTensor(out);
    aclDestroyIntArray(pad);
    if (workspace) aclrtFree(workspace);
    aclrtFree(g_dev);
    aclrtFree(x_dev);
    aclrtFree(out_dev);
    return us;
}

#ifdef OVERHEAD_LIBRARY
/* Built as a shared library (-DOVERHEAD_LIBRARY -shared): the loop inside scripts/bench.py's
 * process (see overhead.c); -1 for a wrong result. */
__attribute__((visibility("default"))) double overhead_repeatable_run(long iterations) {
    static aclrtStream stream;
    int wrong;
    if (!stream) CHECK(aclrtCreateStream(&stream));
    double us = run(stream, iterations, &wrong);
    return wrong ? -1.0 : us;
}
#else
int main(int argc, char **argv) {
    long iterations = argc > 1 ? atol(argv[1]) : 10000;
    aclrtStream stream;
    int wrong;
    CHECK(aclInit(NULL));
    CHECK(aclrtSetDevice(0));
    CHECK(aclrtCreateStream(&stream));
    printf("per_run_us %.3f\n", run(stream, iterations, &wrong));
    if (wrong) {
        fprintf(stderr, "unexpected result\n");
        return 1;
    }
    CHECK(aclrtDestroyStream(stream));
    CHECK(aclrtResetDevice(0));
    CHECK(aclFinalize());
    return 0;
}
#endif
