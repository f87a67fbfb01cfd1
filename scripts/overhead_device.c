/* The per-call host sequence of one aclnn call on device-resident data, as a C program chaining
 * operators does it: the inputs and the output stay in device buffers made once; per call the
 * descriptors (aclCreateTensor x3, aclCreateIntArray) are made, phase 1, the workspace if any,
 * phase 2 on the stream, the descriptors destroyed; nothing waits per call. The stream is
 * synchronised every 256 calls (the bound at which aclnn_py waits by itself for queued work,
 * aclnn_py/_runtime/library.py's MAX_PENDING_RELEASES) and at the end of the loop, so the
 * device's work is inside the timed loop as it is for the binding. scripts/bench.py compares the
 * op functions and aclnn_py.call on device Tensors, and a captured chain's replay, with it.
 *
 *   overhead_device ITERATIONS   -> prints "per_call_us <microseconds>"
 *
 * Built with -DOVERHEAD_LIBRARY -shared, a library whose overhead_device_run(ITERATIONS)
 * returns the microseconds per call, for scripts/bench.py to run inside its own process.
 */
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "acl/acl.h"
#include "overhead_common.h"

#define SYNC_EVERY 256

/* `iterations` calls (after 200 warm-up calls) on `stream`: microseconds per call; 1 in *wrong
 * when the result is not the expected one. */
static double run(aclrtStream stream, long iterations, int *wrong) {
    const int64_t grad_shape[4] = {1, 1, 6, 6}, self_shape[4] = {1, 1, 4, 4};
    const int64_t grad_strides[4] = {36, 36, 6, 1}, self_strides[4] = {16, 16, 4, 1};
    const int64_t grad_storage = 36, self_storage = 16;
    const int64_t padding[4] = {1, 1, 1, 1};
    float grad[36], self[16], result[16] = {0};
    for (int i = 0; i < 36; ++i) grad[i] = 1.0f;
    for (int i = 0; i < 16; ++i) self[i] = 1.0f;

    void *g_dev, *x_dev, *out_dev;
    aclDestroyTensor(probe_tensor(grad_shape, grad, &g_dev, NULL));
    aclDestroyTensor(probe_tensor(self_shape, self, &x_dev, NULL));
    aclDestroyTensor(probe_tensor(self_shape, NULL, &out_dev, NULL));

    struct timespec t0, t1;
    void *workspaces[SYNC_EVERY];
    int held = 0;
    for (long it = -200; it < iterations; ++it) { /* 200 warm-up calls */
        if (it == 0) clock_gettime(CLOCK_MONOTONIC, &t0);
        aclTensor *g = aclCreateTensor(grad_shape, 4, ACL_FLOAT, grad_strides, 0, ACL_FORMAT_NCHW, &grad_storage, 1,
                                       g_dev);
        aclTensor *x = aclCreateTensor(self_shape, 4, ACL_FLOAT, self_strides, 0, ACL_FORMAT_NCHW, &self_storage, 1,
                                       x_dev);
        aclTensor *out = aclCreateTensor(self_shape, 4, ACL_FLOAT, self_strides, 0, ACL_FORMAT_NCHW, &self_storage,
                                         1, out_dev);
        aclIntArray *pad = aclCreateIntArray(padding, 4);
        uint64_t workspace_size = 0;
        aclOpExecutor *executor = NULL;
        void *workspace = NULL;
        CHECK(PROBE_PHASE1(g, x, pad, out, &workspace_size, &executor));
        if (workspace_size > 0) {
            CHECK(aclrtMalloc(&workspace, workspace_size, ACL_MEM_MALLOC_HUGE_FIRST));
            workspaces[held++] = workspace; /* freed once the stream is past the call */
        }
        CHECK(PROBE_PHASE2(workspace, workspace_size, executor, stream));
        aclDestroyTensor(g);
        aclDestroyTensor(x);
        aclDestroyTensor(out);
        aclDestroyIntArray(pad);
        if ((it + 1) % SYNC_EVERY == 0 || it + 1 == iterations) {
            CHECK(aclrtSynchronizeStream(stream));
            while (held > 0) aclrtFree(workspaces[--held]);
        }
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    CHECK(aclrtSynchronizeStream(stream));
    while (held > 0) aclrtFree(workspaces[--held]);
    CHECK(aclrtMemcpy(result, sizeof result, out_dev, sizeof result, ACL_MEMCPY_DEVICE_TO_HOST));
    *wrong = !PROBE_RESULT_OK(result);
    aclrtFree(g_dev);
    aclrtFree(x_dev);
    aclrtFree(out_dev);
    return per_iteration_us(&t0, &t1, iterations);
}

#ifdef OVERHEAD_LIBRARY
/* In scripts/bench.py's process (runtime initialised, device set on its thread): its own
 * stream, made on the first call; -1 for a wrong result. */
__attribute__((visibility("default"))) double overhead_device_run(long iterations) {
    static aclrtStream stream;
    int wrong = 0;
    if (!stream) CHECK(aclrtCreateStream(&stream));
    double us = run(stream, iterations, &wrong);
    return wrong ? -1.0 : us;
}
#else
int main(int argc, char **argv) {
    long iterations = argc > 1 ? atol(argv[1]) : 10000;
    int wrong = 0;
    aclrtStream stream;
    CHECK(aclInit(NULL));
    CHECK(aclrtSetDevice(0));
    CHECK(aclrtCreateStream(&stream));
    printf("per_call_us %.3f\n", run(stream, iterations, &wrong));
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
