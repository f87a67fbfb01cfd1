/*
 * What the sample-style programs of tests/sim_c/ share, written the way the official aclnn
 * samples write it: CHECK_RET / LOG_PRINT, the deterministic input value(i), shape helpers,
 * Init, CreateAclTensor, phase 2 with its workspace, the "check ..." and "result[i] is: v"
 * lines, and main's frame (RunSample) ending in the live-handle counters and "failures: <n>".
 * Each program is one translation unit, so everything here is static.
 */
#ifndef ACLNN_PY_TESTS_SIM_C_SAMPLE_COMMON_H
#define ACLNN_PY_TESTS_SIM_C_SAMPLE_COMMON_H

#include <cstdio>
#include <cstring>
#include <initializer_list>
#include <vector>

#include "acl/acl.h"
#include "aclnn/aclnn_base.h"
#include "opdev/op_errno.h"
#include "aclsim/aclsim.h"

#define CHECK_RET(cond, return_expr) \
    do {                             \
        if (!(cond)) {               \
            return_expr;             \
        }                            \
    } while (0)

#define LOG_PRINT(message, ...)         \
    do {                                \
        printf(message, ##__VA_ARGS__); \
    } while (0)

/* Failed checks; a program exits non-zero when there is any. */
static int g_failures = 0;

/* Element i (row-major) of the deterministic inputs; exact in float16.  tests/sim/test_c_ops.py
 * rebuilds the same values. */
static inline float InputValue(int64_t i) { return static_cast<float>((i * 7) % 17 - 8) * 0.125f; }

static inline int64_t GetShapeSize(const std::vector<int64_t> &shape)
{
    int64_t size = 1;
    for (auto d : shape) {
        size *= d;
    }
    return size;
}

static inline std::vector<int64_t> ContiguousStrides(const std::vector<int64_t> &shape)
{
    std::vector<int64_t> strides(shape.size(), 1);
    for (int64_t i = static_cast<int64_t>(shape.size()) - 2; i >= 0; i--) {
        strides[i] = shape[i + 1] * strides[i + 1];
    }
    return strides;
}

static inline int Init(int32_t deviceId, aclrtStream *stream)
{
    auto ret = aclInit(nullptr);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclInit failed. ERROR: %d\n", ret); return ret);
    ret = aclrtSetDevice(deviceId);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclrtSetDevice failed. ERROR: %d\n", ret); return ret);
    ret = aclrtCreateStream(stream);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclrtCreateStream failed. ERROR: %d\n", ret); return ret);
    return 0;
}

/* Copies hostData (storage elements) to the device and describes a view of it. */
template <typename T>
static int CreateAclTensor(const std::vector<T> &hostData, const std::vector<int64_t> &shape,
                           const std::vector<int64_t> &strides, int64_t offset, void **deviceAddr,
                           aclDataType dataType, aclTensor **tensor, aclFormat format = ACL_FORMAT_ND)
{
    auto size = hostData.size() * sizeof(T);
    auto ret = aclrtMalloc(deviceAddr, size > 0 ? size : 1, ACL_MEM_MALLOC_HUGE_FIRST);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclrtMalloc failed. ERROR: %d\n", ret); return ret);
    if (size > 0) {
        ret = aclrtMemcpy(*deviceAddr, size, hostData.data(), size, ACL_MEMCPY_HOST_TO_DEVICE);
        CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclrtMemcpy failed. ERROR: %d\n", ret); return ret);
    }
    int64_t storage = static_cast<int64_t>(hostData.size());
    *tensor = aclCreateTensor(shape.data(), shape.size(), dataType, strides.data(), offset, format,
                              &storage, 1, *deviceAddr);
    CHECK_RET(*tensor != nullptr, LOG_PRINT("aclCreateTensor failed.\n"); return -1);
    return 0;
}

/* value(0), ..., value(n - 1). */
static inline std::vector<float> InputValues(int64_t n)
{
    std::vector<float> values(n);
    for (int64_t i = 0; i < n; i++) {
        values[i] = InputValue(i);
    }
    return values;
}

/* CreateAclTensor for a contiguous float tensor: float16 (values converted with
 * aclFloatToFloat16) when half, else float32. */
static inline int CreateFloatTensor(const std::vector<float> &values, const std::vector<int64_t> &shape, bool half,
                                    void **deviceAddr, aclTensor **tensor, aclFormat format = ACL_FORMAT_ND)
{
    if (!half) {
        return CreateAclTensor(values, shape, ContiguousStrides(shape), 0, deviceAddr, ACL_FLOAT, tensor, format);
    }
    std::vector<aclFloat16> halves(values.size());
    for (size_t i = 0; i < values.size(); i++) {
        halves[i] = aclFloatToFloat16(values[i]);
    }
    return CreateAclTensor(halves, shape, ContiguousStrides(shape), 0, deviceAddr, ACL_FLOAT16, tensor, format);
}

/* Prints one "check ..." line: `got` must be `want` and, for an error, come with a recent
 * error message. */
static inline void Expect(const char *what, aclnnStatus got, aclnnStatus want)
{
    const char *msg = aclGetRecentErrMsg();
    bool ok = got == want && (want == ACL_SUCCESS || (msg != nullptr && msg[0] != '\0'));
    LOG_PRINT("check %s: status %d (expected %d) %s; message: %s\n", what, got, want, ok ? "ok" : "FAILED",
              msg != nullptr ? msg : "(null)");
    if (!ok) {
        g_failures++;
    }
}

/* The signature every aclnn phase-2 function (aclnnXxx) has. */
typedef aclnnStatus (*AclnnPhase2)(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                   aclrtStream stream);

/* Phase 2 as the samples run it: allocates the workspace phase 1 asked for, runs `phase2`
 * (called `name` in messages) on the stream, synchronises it and frees the workspace. */
static inline int RunPhase2(const char *name, AclnnPhase2 phase2, uint64_t workspaceSize, aclOpExecutor *executor,
                            aclrtStream stream)
{
    void *workspaceAddr = nullptr;
    if (workspaceSize > 0) {
        auto ret = aclrtMalloc(&workspaceAddr, workspaceSize, ACL_MEM_MALLOC_HUGE_FIRST);
        CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("allocate workspace failed. ERROR: %d\n", ret); return ret);
    }
    auto ret = phase2(workspaceAddr, workspaceSize, executor, stream);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("%s failed. ERROR: %d\n", name, ret); return ret);
    ret = aclrtSynchronizeStream(stream);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclrtSynchronizeStream failed. ERROR: %d\n", ret); return ret);
    if (workspaceSize > 0) {
        aclrtFree(workspaceAddr);
    }
    return 0;
}

/* A result element as printed; aclFloat16 (a uint16_t) holds the bits of a half. */
template <typename T>
static inline double ResultValue(T v)
{
    return static_cast<double>(v);
}
static inline double ResultValue(aclFloat16 v) { return aclFloat16ToFloat(v); }

/* Copies `count` elements of type T back from deviceAddr and prints them as
 * "result[i] is: v" lines. */
template <typename T>
static int PrintResult(const void *deviceAddr, int64_t count)
{
    std::vector<T> resultData(count, T(0));
    auto ret = aclrtMemcpy(resultData.data(), resultData.size() * sizeof(T), deviceAddr, count * sizeof(T),
                           ACL_MEMCPY_DEVICE_TO_HOST);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("copy result from device to host failed. ERROR: %d\n", ret);
              return ret);
    for (int64_t i = 0; i < count; i++) {
        LOG_PRINT("result[%ld] is: %f\n", static_cast<long>(i), ResultValue(resultData[i]));
    }
    return 0;
}

/* PrintResult of a float tensor: float16 when half, else float32. */
static inline int PrintFloatResult(const void *deviceAddr, int64_t count, bool half)
{
    return half ? PrintResult<aclFloat16>(deviceAddr, count) : PrintResult<float>(deviceAddr, count);
}

/* The simulator's live handles and device memory: one "counters: ..." line and a check that
 * nothing is left. */
static inline void PrintLiveCounters()
{
    aclsimCounters c;
    memset(&c, 0, sizeof c);
    aclsimGetCounters(&c);
    long long live = c.tensors + c.int_arrays + c.bool_arrays + c.float_arrays + c.scalars + c.executors +
                     c.tensor_lists + c.scalar_lists + c.device_blocks + c.device_bytes;
    LOG_PRINT("counters: tensors=%lld int_arrays=%lld bool_arrays=%lld executors=%lld device_blocks=%lld "
              "device_bytes=%lld live=%lld\n",
              (long long)c.tensors, (long long)c.int_arrays, (long long)c.bool_arrays, (long long)c.executors,
              (long long)c.device_blocks, (long long)c.device_bytes, live);
    Expect("no live handles or device memory", live == 0 ? 0 : 1, 0);
}

/* One case of a program: 0, or the error that stops the program. */
typedef int (*SampleCase)(aclrtStream stream);

/* A program's main: Init, the cases in turn (stopping at the first that fails), then release
 * the stream and device, print the counters and "failures: <n>"; non-zero if any check failed. */
static inline int RunSample(std::initializer_list<SampleCase> cases)
{
    int32_t deviceId = 0;
    aclrtStream stream;
    auto ret = Init(deviceId, &stream);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("Init acl failed. ERROR: %d\n", ret); return ret);
    for (SampleCase run : cases) {
        ret = run(stream);
        CHECK_RET(ret == ACL_SUCCESS, return ret);
    }

    aclrtDestroyStream(stream);
    PrintLiveCounters();
    aclrtResetDevice(deviceId);
    aclFinalize();
    LOG_PRINT("failures: %d\n", g_failures);
    return g_failures == 0 ? 0 : 1;
}

#endif
