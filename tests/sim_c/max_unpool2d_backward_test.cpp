/*
 * aclnnMaxUnpool2dBackward on the simulator, written the way the official aclnn samples are.
 *
 * Deterministic inputs (element i in row-major order), rebuilt by tests/sim/test_c_ops.py:
 *     float gradOutput:   value(i) = ((i * 7) % 17 - 8) * 0.125
 *     int32 gradOutput:   ivalue(i) = (i * 7) % 17 - 8
 *     indices:            index(i) = (i * 7) % (oH * oW)
 * Each case prints "== case <name> ==" and then "result[i] is: v" lines.  Negative cases
 * print one "check ..." line each; the program exits non-zero if any check fails, and ends
 * with the simulator's live-handle counters.
 */
#include <cstdio>
#include <cstring>
#include <vector>

#include "acl/acl.h"
#include "aclnnop/aclnn_max_unpool2d_backward.h"
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


/* One call: gradOutput, self, indices, outputSize -> out; prints out as case `name`. */
template <typename G, typename I, typename O>
static int RunCase(aclrtStream stream, const char *name, const std::vector<int64_t> &gradShape,
                   const std::vector<G> &gradHostData, aclDataType gradType, const std::vector<int64_t> &selfShape,
                   const std::vector<I> &indicesHostData, aclDataType indicesType, aclDataType outType)
{
    int64_t oH = gradShape[gradShape.size() - 2];
    int64_t oW = gradShape[gradShape.size() - 1];
    std::vector<int64_t> outputSizeData = {oH, oW};
    std::vector<G> selfHostData(GetShapeSize(selfShape), G(0));
    std::vector<O> outHostData(GetShapeSize(selfShape), O(0));

    void *gradDeviceAddr = nullptr;
    void *selfDeviceAddr = nullptr;
    void *indicesDeviceAddr = nullptr;
    void *outDeviceAddr = nullptr;
    aclTensor *gradOutput = nullptr;
    aclTensor *self = nullptr;
    aclTensor *indices = nullptr;
    aclTensor *out = nullptr;
    auto ret = CreateAclTensor(gradHostData, gradShape, ContiguousStrides(gradShape), 0, &gradDeviceAddr, gradType,
                               &gradOutput);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    ret = CreateAclTensor(selfHostData, selfShape, ContiguousStrides(selfShape), 0, &selfDeviceAddr, gradType, &self);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    ret = CreateAclTensor(indicesHostData, selfShape, ContiguousStrides(selfShape), 0, &indicesDeviceAddr,
                          indicesType, &indices);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    ret = CreateAclTensor(outHostData, selfShape, ContiguousStrides(selfShape), 0, &outDeviceAddr, outType, &out);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    aclIntArray *outputSize = aclCreateIntArray(outputSizeData.data(), 2);

    uint64_t workspaceSize = 0;
    aclOpExecutor *executor;
    ret = aclnnMaxUnpool2dBackwardGetWorkspaceSize(gradOutput, self, indices, outputSize, out, &workspaceSize,
                                                   &executor);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclnnMaxUnpool2dBackwardGetWorkspaceSize failed. ERROR: %d\n", ret);
              return ret);
    LOG_PRINT("workspaceSize is: %llu\n", static_cast<unsigned long long>(workspaceSize));
    void *workspaceAddr = nullptr;
    if (workspaceSize > 0) {
        ret = aclrtMalloc(&workspaceAddr, workspaceSize, ACL_MEM_MALLOC_HUGE_FIRST);
        CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("allocate workspace failed. ERROR: %d\n", ret); return ret);
    }
    ret = aclnnMaxUnpool2dBackward(workspaceAddr, workspaceSize, executor, stream);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclnnMaxUnpool2dBackward failed. ERROR: %d\n", ret); return ret);
    ret = aclrtSynchronizeStream(stream);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclrtSynchronizeStream failed. ERROR: %d\n", ret); return ret);

    auto size = GetShapeSize(selfShape);
    std::vector<O> resultData(size, O(0));
    ret = aclrtMemcpy(resultData.data(), resultData.size() * sizeof(O), outDeviceAddr, size * sizeof(O),
                      ACL_MEMCPY_DEVICE_TO_HOST);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("copy result from device to host failed. ERROR: %d\n", ret);
              return ret);
    LOG_PRINT("== case %s ==\n", name);
    for (int64_t i = 0; i < size; i++) {
        LOG_PRINT("result[%ld] is: %f\n", static_cast<long>(i), static_cast<double>(resultData[i]));
    }

    aclDestroyTensor(gradOutput);
    aclDestroyTensor(self);
    aclDestroyTensor(indices);
    aclDestroyTensor(out);
    aclDestroyIntArray(outputSize);
    aclrtFree(gradDeviceAddr);
    aclrtFree(selfDeviceAddr);
    aclrtFree(indicesDeviceAddr);
    aclrtFree(outDeviceAddr);
    if (workspaceSize > 0) {
        aclrtFree(workspaceAddr);
    }
    return 0;
}

/* Case "float32": 4-D float gradOutput (2, 2, 4, 5), self (2, 2, 2, 3), int64 indices. */
static int RunFloat32Case(aclrtStream stream)
{
    std::vector<int64_t> gradShape = {2, 2, 4, 5};
    std::vector<int64_t> selfShape = {2, 2, 2, 3};
    std::vector<float> gradHostData(GetShapeSize(gradShape));
    for (size_t i = 0; i < gradHostData.size(); i++) {
        gradHostData[i] = InputValue(static_cast<int64_t>(i));
    }
    std::vector<int64_t> indicesHostData(GetShapeSize(selfShape));
    for (size_t i = 0; i < indicesHostData.size(); i++) {
        indicesHostData[i] = static_cast<int64_t>((i * 7) % 20);
    }
    return RunCase<float, int64_t, float>(stream, "float32", gradShape, gradHostData, ACL_FLOAT, selfShape,
                                          indicesHostData, ACL_INT64, ACL_FLOAT);
}

/* Case "int32_to_float32": 3-D int32 gradOutput (2, 4, 4), self (2, 3, 3), int32 indices,
 * out float32 (CANN casts gradOutput's dtype into out's). */
static int RunInt32Case(aclrtStream stream)
{
    std::vector<int64_t> gradShape = {2, 4, 4};
    std::vector<int64_t> selfShape = {2, 3, 3};
    std::vector<int32_t> gradHostData(GetShapeSize(gradShape));
    for (size_t i = 0; i < gradHostData.size(); i++) {
        gradHostData[i] = static_cast<int32_t>((i * 7) % 17) - 8;
    }
    std::vector<int32_t> indicesHostData(GetShapeSize(selfShape));
    for (size_t i = 0; i < indicesHostData.size(); i++) {
        indicesHostData[i] = static_cast<int32_t>((i * 7) % 16);
    }
    return RunCase<int32_t, int32_t, float>(stream, "int32_to_float32", gradShape, gradHostData, ACL_INT32, selfShape,
                                            indicesHostData, ACL_INT32, ACL_FLOAT);
}

static int RunNegativeCases(aclrtStream stream)
{
    std::vector<int64_t> gradShape = {1, 2, 4, 4};
    std::vector<int64_t> selfShape = {1, 2, 2, 2};
    std::vector<float> gradHostData(GetShapeSize(gradShape), 1.0f);
    std::vector<float> selfHostData(GetShapeSize(selfShape), 0.0f);
    std::vector<float> outHostData(GetShapeSize(selfShape), 5.0f);
    std::vector<int64_t> indicesHostData = {0, 3, 5, 15, 1, 2, 16, 4}; /* 16 is outside [0, 16) */
    std::vector<float> floatIndices(GetShapeSize(selfShape), 0.0f);
    std::vector<int32_t> intOutData(GetShapeSize(selfShape), 0);
    void *gradDeviceAddr = nullptr, *selfDeviceAddr = nullptr, *indicesDeviceAddr = nullptr;
    void *outDeviceAddr = nullptr, *floatIndicesDeviceAddr = nullptr, *intOutDeviceAddr = nullptr;
    aclTensor *gradOutput = nullptr, *self = nullptr, *indices = nullptr, *out = nullptr;
    aclTensor *badIndices = nullptr, *intOut = nullptr;
    auto strides = ContiguousStrides(selfShape);
    auto ret = CreateAclTensor(gradHostData, gradShape, ContiguousStrides(gradShape), 0, &gradDeviceAddr, ACL_FLOAT,
                               &gradOutput);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    ret = CreateAclTensor(selfHostData, selfShape, strides, 0, &selfDeviceAddr, ACL_FLOAT, &self);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    ret = CreateAclTensor(indicesHostData, selfShape, strides, 0, &indicesDeviceAddr, ACL_INT64, &indices);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    ret = CreateAclTensor(outHostData, selfShape, strides, 0, &outDeviceAddr, ACL_FLOAT, &out);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    ret = CreateAclTensor(floatIndices, selfShape, strides, 0, &floatIndicesDeviceAddr, ACL_FLOAT, &badIndices);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    ret = CreateAclTensor(intOutData, selfShape, strides, 0, &intOutDeviceAddr, ACL_INT32, &intOut);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    std::vector<int64_t> outputSizeData = {4, 4};
    std::vector<int64_t> badOutputSizeData = {4, 5};
    aclIntArray *outputSize = aclCreateIntArray(outputSizeData.data(), 2);
    aclIntArray *badOutputSize = aclCreateIntArray(badOutputSizeData.data(), 2);

    uint64_t workspaceSize = 0;
    aclOpExecutor *executor = nullptr;
    ret = aclnnMaxUnpool2dBackwardGetWorkspaceSize(gradOutput, self, indices, badOutputSize, out, &workspaceSize,
                                                   &executor);
    Expect("outputSize differs from gradOutput's last two dims", ret, ACLNN_ERR_PARAM_INVALID);
    ret = aclnnMaxUnpool2dBackwardGetWorkspaceSize(gradOutput, self, badIndices, outputSize, out, &workspaceSize,
                                                   &executor);
    Expect("float32 indices", ret, ACLNN_ERR_PARAM_INVALID);
    ret = aclnnMaxUnpool2dBackwardGetWorkspaceSize(gradOutput, self, indices, outputSize, intOut, &workspaceSize,
                                                   &executor);
    Expect("float32 gradOutput cannot be cast to an int32 out", ret, ACLNN_ERR_PARAM_INVALID);
    ret = aclnnMaxUnpool2dBackwardGetWorkspaceSize(gradOutput, self, nullptr, outputSize, out, &workspaceSize,
                                                   &executor);
    Expect("indices NULL", ret, ACLNN_ERR_PARAM_NULLPTR);
    ret = aclnnMaxUnpool2dBackwardGetWorkspaceSize(gradOutput, self, indices, outputSize, out, &workspaceSize,
                                                   nullptr);
    Expect("executor NULL", ret, ACLNN_ERR_PARAM_NULLPTR);

    /* An index outside [0, oH * oW): phase 1 does not look at index values (as CANN); the
     * kernel refuses to run, the stream reports 507015 and out keeps its contents. */
    ret = aclnnMaxUnpool2dBackwardGetWorkspaceSize(gradOutput, self, indices, outputSize, out, &workspaceSize,
                                                   &executor);
    Expect("an out-of-range index passes phase 1", ret, ACL_SUCCESS);
    void *workspaceAddr = nullptr;
    if (ret == ACL_SUCCESS) {
        if (workspaceSize > 0) {
            aclrtMalloc(&workspaceAddr, workspaceSize, ACL_MEM_MALLOC_HUGE_FIRST);
        }
        ret = aclnnMaxUnpool2dBackward(workspaceAddr, workspaceSize, executor, stream);
        Expect("an out-of-range index is queued", ret, ACL_SUCCESS);
        ret = aclrtSynchronizeStream(stream);
        Expect("an out-of-range index fails at synchronisation", ret, ACL_ERROR_RT_AICORE_EXCEPTION);
        std::vector<float> back(outHostData.size(), 0.0f);
        aclrtMemcpy(back.data(), back.size() * sizeof(float), outDeviceAddr, back.size() * sizeof(float),
                    ACL_MEMCPY_DEVICE_TO_HOST);
        bool untouched = true;
        for (auto v : back) {
            untouched = untouched && v == 5.0f;
        }
        Expect("out is untouched after the failed kernel", untouched ? 0 : 1, 0);
        if (workspaceSize > 0) {
            aclrtFree(workspaceAddr);
        }
    }

    aclDestroyTensor(gradOutput);
    aclDestroyTensor(self);
    aclDestroyTensor(indices);
    aclDestroyTensor(out);
    aclDestroyTensor(badIndices);
    aclDestroyTensor(intOut);
    aclDestroyIntArray(outputSize);
    aclDestroyIntArray(badOutputSize);
    aclrtFree(gradDeviceAddr);
    aclrtFree(selfDeviceAddr);
    aclrtFree(indicesDeviceAddr);
    aclrtFree(outDeviceAddr);
    aclrtFree(floatIndicesDeviceAddr);
    aclrtFree(intOutDeviceAddr);
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
    ret = RunInt32Case(stream);
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
