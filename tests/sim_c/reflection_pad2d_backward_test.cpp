/*
 * aclnnReflectionPad2dBackward on the simulator, written the way the official aclnn samples are.
 *
 * Deterministic inputs, rebuilt by tests/sim/test_c_ops.py: storage element i (row-major
 * over the storage, counting float components for complex data) holds
 *     value(i) = ((i * 7) % 17 - 8) * 0.125
 * Case "float32" reads gradOutput through a non-contiguous view: the storage is
 * (1, 2, 7, 6) and the view (1, 2, 6, 7) swaps its last two dims.
 * Each case prints "== case <name> ==" and "result[i] is: v" lines (complex: re, im in turn).
 * Negative cases print one "check ..." line each; the program exits non-zero if any check
 * fails, and ends with the simulator's live-handle counters.
 */
#include <cstdio>
#include <cstring>
#include <vector>

#include "acl/acl.h"
#include "aclnnop/aclnn_pad2d_backward.h"
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

static int g_failures = 0;

static float InputValue(int64_t i) { return static_cast<float>((i * 7) % 17 - 8) * 0.125f; }

static int64_t GetShapeSize(const std::vector<int64_t> &shape)
{
    int64_t size = 1;
    for (auto d : shape) {
        size *= d;
    }
    return size;
}

static std::vector<int64_t> ContiguousStrides(const std::vector<int64_t> &shape)
{
    std::vector<int64_t> strides(shape.size(), 1);
    for (int64_t i = static_cast<int64_t>(shape.size()) - 2; i >= 0; i--) {
        strides[i] = shape[i + 1] * strides[i + 1];
    }
    return strides;
}

static int Init(int32_t deviceId, aclrtStream *stream)
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

static void Expect(const char *what, aclnnStatus got, aclnnStatus want)
{
    const char *msg = aclGetRecentErrMsg();
    bool ok = got == want && (want == ACL_SUCCESS || (msg != nullptr && msg[0] != '\0'));
    LOG_PRINT("check %s: status %d (expected %d) %s; message: %s\n", what, got, want, ok ? "ok" : "FAILED",
              msg != nullptr ? msg : "(null)");
    if (!ok) {
        g_failures++;
    }
}


/* One call; gradInput is printed as floats (complex as re, im pairs). */
template <typename T>
static int RunCase(aclrtStream stream, const char *name, const std::vector<T> &gradStorage,
                   const std::vector<int64_t> &gradShape, const std::vector<int64_t> &gradStrides,
                   const std::vector<int64_t> &selfShape, const std::vector<int64_t> &paddingData,
                   aclDataType dataType, int lanes)
{
    int64_t elements = GetShapeSize(selfShape);
    std::vector<T> selfHostData(elements * lanes, T(0));
    std::vector<T> gradInputHostData(elements * lanes, T(0));
    void *gradDeviceAddr = nullptr;
    void *selfDeviceAddr = nullptr;
    void *gradInputDeviceAddr = nullptr;
    aclTensor *gradOutput = nullptr;
    aclTensor *self = nullptr;
    aclTensor *gradInput = nullptr;
    auto ret = CreateAclTensor(gradStorage, gradShape, gradStrides, 0, &gradDeviceAddr, dataType, &gradOutput);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    ret = CreateAclTensor(selfHostData, selfShape, ContiguousStrides(selfShape), 0, &selfDeviceAddr, dataType, &self);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    ret = CreateAclTensor(gradInputHostData, selfShape, ContiguousStrides(selfShape), 0, &gradInputDeviceAddr,
                          dataType, &gradInput);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    aclIntArray *padding = aclCreateIntArray(paddingData.data(), paddingData.size());

    uint64_t workspaceSize = 0;
    aclOpExecutor *executor;
    ret = aclnnReflectionPad2dBackwardGetWorkspaceSize(gradOutput, self, padding, gradInput, &workspaceSize,
                                                       &executor);
    CHECK_RET(ret == ACL_SUCCESS,
              LOG_PRINT("aclnnReflectionPad2dBackwardGetWorkspaceSize failed. ERROR: %d\n", ret);
              return ret);
    LOG_PRINT("workspaceSize is: %llu\n", static_cast<unsigned long long>(workspaceSize));
    void *workspaceAddr = nullptr;
    if (workspaceSize > 0) {
        ret = aclrtMalloc(&workspaceAddr, workspaceSize, ACL_MEM_MALLOC_HUGE_FIRST);
        CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("allocate workspace failed. ERROR: %d\n", ret); return ret);
    }
    ret = aclnnReflectionPad2dBackward(workspaceAddr, workspaceSize, executor, stream);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclnnReflectionPad2dBackward failed. ERROR: %d\n", ret); return ret);
    ret = aclrtSynchronizeStream(stream);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclrtSynchronizeStream failed. ERROR: %d\n", ret); return ret);

    std::vector<T> resultData(elements * lanes, T(0));
    ret = aclrtMemcpy(resultData.data(), resultData.size() * sizeof(T), gradInputDeviceAddr,
                      resultData.size() * sizeof(T), ACL_MEMCPY_DEVICE_TO_HOST);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("copy result from device to host failed. ERROR: %d\n", ret);
              return ret);
    LOG_PRINT("== case %s ==\n", name);
    for (size_t i = 0; i < resultData.size(); i++) {
        LOG_PRINT("result[%ld] is: %f\n", static_cast<long>(i), static_cast<double>(resultData[i]));
    }

    aclDestroyTensor(gradOutput);
    aclDestroyTensor(self);
    aclDestroyTensor(gradInput);
    aclDestroyIntArray(padding);
    aclrtFree(gradDeviceAddr);
    aclrtFree(selfDeviceAddr);
    aclrtFree(gradInputDeviceAddr);
    if (workspaceSize > 0) {
        aclrtFree(workspaceAddr);
    }
    return 0;
}

/* Case "float32": self (1, 2, 3, 4), padding [left 2, right 1, top 1, bottom 2], gradOutput
 * (1, 2, 6, 7) read through swapped strides. */
static int RunFloat32Case(aclrtStream stream)
{
    std::vector<float> gradStorage(1 * 2 * 7 * 6);
    for (size_t i = 0; i < gradStorage.size(); i++) {
        gradStorage[i] = InputValue(static_cast<int64_t>(i));
    }
    return RunCase<float>(stream, "float32", gradStorage, {1, 2, 6, 7}, {84, 42, 1, 6}, {1, 2, 3, 4}, {2, 1, 1, 2},
                          ACL_FLOAT, 1);
}

/* Case "complex64": 3-D self (2, 3, 3), padding [1, 1, 2, 0], gradOutput (2, 5, 5). */
static int RunComplex64Case(aclrtStream stream)
{
    std::vector<float> gradStorage(2 * 5 * 5 * 2);
    for (size_t i = 0; i < gradStorage.size(); i++) {
        gradStorage[i] = InputValue(static_cast<int64_t>(i));
    }
    return RunCase<float>(stream, "complex64", gradStorage, {2, 5, 5}, {25, 5, 1}, {2, 3, 3}, {1, 1, 2, 0},
                          ACL_COMPLEX64, 2);
}

static int RunNegativeCases(aclrtStream stream)
{
    (void)stream;
    std::vector<int64_t> selfShape = {1, 2, 3, 4};
    std::vector<int64_t> gradShape = {1, 2, 5, 6};
    std::vector<float> gradHostData(GetShapeSize(gradShape), 1.0f);
    std::vector<float> selfHostData(GetShapeSize(selfShape), 0.0f);
    std::vector<aclFloat16> halfHostData(GetShapeSize(selfShape), 0);
    void *gradDeviceAddr = nullptr, *selfDeviceAddr = nullptr, *gradInputDeviceAddr = nullptr;
    void *halfDeviceAddr = nullptr;
    aclTensor *gradOutput = nullptr, *self = nullptr, *gradInput = nullptr, *halfGradInput = nullptr;
    auto ret = CreateAclTensor(gradHostData, gradShape, ContiguousStrides(gradShape), 0, &gradDeviceAddr, ACL_FLOAT,
                               &gradOutput);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    ret = CreateAclTensor(selfHostData, selfShape, ContiguousStrides(selfShape), 0, &selfDeviceAddr, ACL_FLOAT, &self);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    ret = CreateAclTensor(selfHostData, selfShape, ContiguousStrides(selfShape), 0, &gradInputDeviceAddr, ACL_FLOAT,
                          &gradInput);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    ret = CreateAclTensor(halfHostData, selfShape, ContiguousStrides(selfShape), 0, &halfDeviceAddr, ACL_FLOAT16,
                          &halfGradInput);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    std::vector<int64_t> goodData = {1, 1, 1, 1};
    std::vector<int64_t> threeData = {1, 1, 1};
    std::vector<int64_t> wideData = {4, 0, 1, 1};     /* left 4 is not < W = 4 */
    std::vector<int64_t> negativeData = {3, -1, 1, 1}; /* the gradOutput shape still matches */
    aclIntArray *good = aclCreateIntArray(goodData.data(), 4);
    aclIntArray *three = aclCreateIntArray(threeData.data(), 3);
    aclIntArray *wide = aclCreateIntArray(wideData.data(), 4);
    aclIntArray *negative = aclCreateIntArray(negativeData.data(), 4);

    uint64_t workspaceSize = 0;
    aclOpExecutor *executor = nullptr;
    ret = aclnnReflectionPad2dBackwardGetWorkspaceSize(gradOutput, self, three, gradInput, &workspaceSize, &executor);
    Expect("padding with 3 elements", ret, ACLNN_ERR_PARAM_INVALID);
    ret = aclnnReflectionPad2dBackwardGetWorkspaceSize(gradOutput, self, wide, gradInput, &workspaceSize, &executor);
    Expect("left padding not smaller than W", ret, ACLNN_ERR_PARAM_INVALID);
    ret = aclnnReflectionPad2dBackwardGetWorkspaceSize(gradOutput, self, negative, gradInput, &workspaceSize,
                                                       &executor);
    Expect("negative padding", ret, ACLNN_ERR_PARAM_INVALID);
    ret = aclnnReflectionPad2dBackwardGetWorkspaceSize(gradOutput, self, good, halfGradInput, &workspaceSize,
                                                       &executor);
    Expect("gradInput dtype differs from self", ret, ACLNN_ERR_PARAM_INVALID);
    ret = aclnnReflectionPad2dBackwardGetWorkspaceSize(gradOutput, self, nullptr, gradInput, &workspaceSize,
                                                       &executor);
    Expect("padding NULL", ret, ACLNN_ERR_PARAM_NULLPTR);
    ret = aclnnReflectionPad2dBackwardGetWorkspaceSize(gradOutput, self, good, gradInput, nullptr, &executor);
    Expect("workspaceSize NULL", ret, ACLNN_ERR_PARAM_NULLPTR);

    aclDestroyTensor(gradOutput);
    aclDestroyTensor(self);
    aclDestroyTensor(gradInput);
    aclDestroyTensor(halfGradInput);
    aclDestroyIntArray(good);
    aclDestroyIntArray(three);
    aclDestroyIntArray(wide);
    aclDestroyIntArray(negative);
    aclrtFree(gradDeviceAddr);
    aclrtFree(selfDeviceAddr);
    aclrtFree(gradInputDeviceAddr);
    aclrtFree(halfDeviceAddr);
    return 0;
}

static void PrintCounters()
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

int main()
{
    int32_t deviceId = 0;
    aclrtStream stream;
    auto ret = Init(deviceId, &stream);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("Init acl failed. ERROR: %d\n", ret); return ret);

    ret = RunFloat32Case(stream);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    ret = RunComplex64Case(stream);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    ret = RunNegativeCases(stream);
    CHECK_RET(ret == ACL_SUCCESS, return ret);

    aclrtDestroyStream(stream);
    PrintCounters();
    aclrtResetDevice(deviceId);
    aclFinalize();
    LOG_PRINT("failures: %d\n", g_failures);
    return g_failures == 0 ? 0 : 1;
}
