/*
 * aclnnAvgPool2dBackward on the simulator, written the way the official aclnn samples are
 * (4-D tensors NCHW, 3-D tensors NCL).
 *
 * Deterministic inputs, rebuilt by tests/sim/test_c_ops.py: gradOutput element i (row-major)
 * holds value(i) = ((i * 7) % 17 - 8) * 0.125 (exact in float16).
 * Each case prints "== case <name> ==" and "result[i] is: v" lines.  Negative cases print one
 * "check ..." line each; the program exits non-zero if any check fails, and ends with the
 * simulator's live-handle counters.
 */
#include <cstdio>
#include <cstring>
#include <vector>

#include "acl/acl.h"
#include "aclnnop/aclnn_avgpool2d_backward.h"
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


struct PoolCase {
    const char *name;
    std::vector<int64_t> gradShape;
    std::vector<int64_t> selfShape;
    std::vector<int64_t> kernelSize;
    std::vector<int64_t> stride; /* empty: pass a NULL stride */
    std::vector<int64_t> padding;
    bool ceilMode;
    bool countIncludePad;
    int64_t divisorOverride;
    int8_t cubeMathType;
    bool half;
};

static int RunCase(aclrtStream stream, const PoolCase &c)
{
    aclFormat format = c.selfShape.size() == 4 ? ACL_FORMAT_NCHW : ACL_FORMAT_NCL;
    aclDataType dataType = c.half ? ACL_FLOAT16 : ACL_FLOAT;
    int64_t gradSize = GetShapeSize(c.gradShape);
    int64_t selfSize = GetShapeSize(c.selfShape);
    std::vector<float> gradFloat(gradSize);
    std::vector<aclFloat16> gradHalf(gradSize);
    for (int64_t i = 0; i < gradSize; i++) {
        gradFloat[i] = InputValue(i);
        gradHalf[i] = aclFloatToFloat16(gradFloat[i]);
    }
    std::vector<float> zerosFloat(selfSize, 0.0f);
    std::vector<aclFloat16> zerosHalf(selfSize, aclFloatToFloat16(0.0f));

    void *gradDeviceAddr = nullptr;
    void *selfDeviceAddr = nullptr;
    void *gradInputDeviceAddr = nullptr;
    aclTensor *gradOutput = nullptr;
    aclTensor *self = nullptr;
    aclTensor *gradInput = nullptr;
    int ret;
    if (c.half) {
        ret = CreateAclTensor(gradHalf, c.gradShape, ContiguousStrides(c.gradShape), 0, &gradDeviceAddr, dataType,
                              &gradOutput, format);
        CHECK_RET(ret == ACL_SUCCESS, return ret);
        ret = CreateAclTensor(zerosHalf, c.selfShape, ContiguousStrides(c.selfShape), 0, &selfDeviceAddr, dataType,
                              &self, format);
        CHECK_RET(ret == ACL_SUCCESS, return ret);
        ret = CreateAclTensor(zerosHalf, c.selfShape, ContiguousStrides(c.selfShape), 0, &gradInputDeviceAddr,
                              dataType, &gradInput, format);
        CHECK_RET(ret == ACL_SUCCESS, return ret);
    } else {
        ret = CreateAclTensor(gradFloat, c.gradShape, ContiguousStrides(c.gradShape), 0, &gradDeviceAddr, dataType,
                              &gradOutput, format);
        CHECK_RET(ret == ACL_SUCCESS, return ret);
        ret = CreateAclTensor(zerosFloat, c.selfShape, ContiguousStrides(c.selfShape), 0, &selfDeviceAddr, dataType,
                              &self, format);
        CHECK_RET(ret == ACL_SUCCESS, return ret);
        ret = CreateAclTensor(zerosFloat, c.selfShape, ContiguousStrides(c.selfShape), 0, &gradInputDeviceAddr,
                              dataType, &gradInput, format);
        CHECK_RET(ret == ACL_SUCCESS, return ret);
    }
    aclIntArray *kernelSize = aclCreateIntArray(c.kernelSize.data(), c.kernelSize.size());
    aclIntArray *stride = c.stride.empty() ? nullptr : aclCreateIntArray(c.stride.data(), c.stride.size());
    aclIntArray *padding = aclCreateIntArray(c.padding.data(), c.padding.size());

    uint64_t workspaceSize = 0;
    aclOpExecutor *executor;
    ret = aclnnAvgPool2dBackwardGetWorkspaceSize(gradOutput, self, kernelSize, stride, padding, c.ceilMode,
                                                 c.countIncludePad, c.divisorOverride, c.cubeMathType, gradInput,
                                                 &workspaceSize, &executor);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclnnAvgPool2dBackwardGetWorkspaceSize failed. ERROR: %d\n", ret);
              return ret);
    LOG_PRINT("workspaceSize is: %llu\n", static_cast<unsigned long long>(workspaceSize));
    void *workspaceAddr = nullptr;
    if (workspaceSize > 0) {
        ret = aclrtMalloc(&workspaceAddr, workspaceSize, ACL_MEM_MALLOC_HUGE_FIRST);
        CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("allocate workspace failed. ERROR: %d\n", ret); return ret);
    }
    ret = aclnnAvgPool2dBackward(workspaceAddr, workspaceSize, executor, stream);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclnnAvgPool2dBackward failed. ERROR: %d\n", ret); return ret);
    ret = aclrtSynchronizeStream(stream);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclrtSynchronizeStream failed. ERROR: %d\n", ret); return ret);

    LOG_PRINT("== case %s ==\n", c.name);
    if (c.half) {
        std::vector<aclFloat16> resultData(selfSize, 0);
        ret = aclrtMemcpy(resultData.data(), resultData.size() * sizeof(aclFloat16), gradInputDeviceAddr,
                          selfSize * sizeof(aclFloat16), ACL_MEMCPY_DEVICE_TO_HOST);
        CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("copy result from device to host failed. ERROR: %d\n", ret);
                  return ret);
        for (int64_t i = 0; i < selfSize; i++) {
            LOG_PRINT("result[%ld] is: %f\n", static_cast<long>(i), aclFloat16ToFloat(resultData[i]));
        }
    } else {
        std::vector<float> resultData(selfSize, 0);
        ret = aclrtMemcpy(resultData.data(), resultData.size() * sizeof(float), gradInputDeviceAddr,
                          selfSize * sizeof(float), ACL_MEMCPY_DEVICE_TO_HOST);
        CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("copy result from device to host failed. ERROR: %d\n", ret);
                  return ret);
        for (int64_t i = 0; i < selfSize; i++) {
            LOG_PRINT("result[%ld] is: %f\n", static_cast<long>(i), resultData[i]);
        }
    }

    aclDestroyTensor(gradOutput);
    aclDestroyTensor(self);
    aclDestroyTensor(gradInput);
    aclDestroyIntArray(kernelSize);
    aclDestroyIntArray(stride);
    aclDestroyIntArray(padding);
    aclrtFree(gradDeviceAddr);
    aclrtFree(selfDeviceAddr);
    aclrtFree(gradInputDeviceAddr);
    if (workspaceSize > 0) {
        aclrtFree(workspaceAddr);
    }
    return 0;
}

/* Case "float32_ceil": kernel [3, 2], stride [2], padding [1], ceilMode, real-element divisor. */
static int RunFloat32Case(aclrtStream stream)
{
    PoolCase c = {"float32_ceil", {1, 2, 3, 4}, {1, 2, 5, 6}, {3, 2}, {2}, {1}, true, false, 0, 1, false};
    return RunCase(stream, c);
}

/* Case "ncl_stride_null": 3-D NCL input, kernel [2], stride NULL (= kernel), divisorOverride 3. */
static int RunNclCase(aclrtStream stream)
{
    PoolCase c = {"ncl_stride_null", {3, 2, 2}, {3, 4, 4}, {2}, {}, {0}, false, true, 3, 0, false};
    return RunCase(stream, c);
}

/* Case "float16": kernel [2, 2], stride [1, 1], padding [1, 0], countIncludePad. */
static int RunFloat16Case(aclrtStream stream)
{
    PoolCase c = {"float16", {2, 1, 5, 3}, {2, 1, 4, 4}, {2, 2}, {1, 1}, {1, 0}, false, true, 0, 0, true};
    return RunCase(stream, c);
}

static int RunNegativeCases(aclrtStream stream)
{
    std::vector<int64_t> gradShape = {1, 1, 2, 2};
    std::vector<int64_t> selfShape = {1, 1, 4, 4};
    std::vector<float> gradHostData(GetShapeSize(gradShape), 1.0f);
    std::vector<float> selfHostData(GetShapeSize(selfShape), 0.0f);
    void *gradDeviceAddr = nullptr, *selfDeviceAddr = nullptr, *gradInputDeviceAddr = nullptr;
    void *ndDeviceAddr = nullptr;
    aclTensor *gradOutput = nullptr, *self = nullptr, *gradInput = nullptr, *ndGradOutput = nullptr;
    auto ret = CreateAclTensor(gradHostData, gradShape, ContiguousStrides(gradShape), 0, &gradDeviceAddr, ACL_FLOAT,
                               &gradOutput, ACL_FORMAT_NCHW);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    ret = CreateAclTensor(gradHostData, gradShape, ContiguousStrides(gradShape), 0, &ndDeviceAddr, ACL_FLOAT,
                          &ndGradOutput, ACL_FORMAT_ND);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    ret = CreateAclTensor(selfHostData, selfShape, ContiguousStrides(selfShape), 0, &selfDeviceAddr, ACL_FLOAT, &self,
                          ACL_FORMAT_NCHW);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    ret = CreateAclTensor(selfHostData, selfShape, ContiguousStrides(selfShape), 0, &gradInputDeviceAddr, ACL_FLOAT,
                          &gradInput, ACL_FORMAT_NCHW);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    std::vector<int64_t> kernel2 = {2, 2};
    std::vector<int64_t> kernel3 = {2, 2, 2};
    std::vector<int64_t> kernel4 = {4};
    std::vector<int64_t> pad0 = {0};
    std::vector<int64_t> pad2 = {2};
    aclIntArray *kernelSize = aclCreateIntArray(kernel2.data(), 2);
    aclIntArray *kernelSize3 = aclCreateIntArray(kernel3.data(), 3);
    aclIntArray *bigKernel = aclCreateIntArray(kernel4.data(), 1);
    aclIntArray *padding = aclCreateIntArray(pad0.data(), 1);
    aclIntArray *widePadding = aclCreateIntArray(pad2.data(), 1);

    uint64_t workspaceSize = 0;
    aclOpExecutor *executor = nullptr;
    ret = aclnnAvgPool2dBackwardGetWorkspaceSize(gradOutput, self, kernelSize3, nullptr, padding, false, true, 0, 0,
                                                 gradInput, &workspaceSize, &executor);
    Expect("kernelSize with 3 elements", ret, ACLNN_ERR_PARAM_INVALID);
    ret = aclnnAvgPool2dBackwardGetWorkspaceSize(ndGradOutput, self, kernelSize, nullptr, padding, false, true, 0, 0,
                                                 gradInput, &workspaceSize, &executor);
    Expect("gradOutput in ND format", ret, ACLNN_ERR_PARAM_INVALID);
    ret = aclnnAvgPool2dBackwardGetWorkspaceSize(gradOutput, self, kernelSize, nullptr, widePadding, false, true, 0,
                                                 0, gradInput, &workspaceSize, &executor);
    Expect("padding larger than kernelSize / 2", ret, ACLNN_ERR_PARAM_INVALID);
    ret = aclnnAvgPool2dBackwardGetWorkspaceSize(gradOutput, self, kernelSize, nullptr, padding, false, true, 0, 5,
                                                 gradInput, &workspaceSize, &executor);
    Expect("cubeMathType 5", ret, ACLNN_ERR_PARAM_INVALID);
    ret = aclnnAvgPool2dBackwardGetWorkspaceSize(gradOutput, self, bigKernel, nullptr, padding, false, true, 0, 0,
                                                 gradInput, &workspaceSize, &executor);
    Expect("gradOutput H, W differ from the pooled size", ret, ACLNN_ERR_PARAM_INVALID);
    ret = aclnnAvgPool2dBackwardGetWorkspaceSize(gradOutput, nullptr, kernelSize, nullptr, padding, false, true, 0, 0,
                                                 gradInput, &workspaceSize, &executor);
    Expect("self NULL", ret, ACLNN_ERR_PARAM_NULLPTR);
    ret = aclnnAvgPool2dBackwardGetWorkspaceSize(gradOutput, self, kernelSize, nullptr, padding, false, true, 0, 0,
                                                 gradInput, &workspaceSize, nullptr);
    Expect("executor NULL", ret, ACLNN_ERR_PARAM_NULLPTR);

    /* Empty tensors: success, no workspace, nothing computed. */
    std::vector<int64_t> emptyGradShape = {0, 1, 2, 2};
    std::vector<int64_t> emptySelfShape = {0, 1, 4, 4};
    std::vector<float> noData;
    void *emptyGradDeviceAddr = nullptr, *emptySelfDeviceAddr = nullptr, *emptyGradInputDeviceAddr = nullptr;
    aclTensor *emptyGrad = nullptr, *emptySelf = nullptr, *emptyGradInput = nullptr;
    ret = CreateAclTensor(noData, emptyGradShape, ContiguousStrides(emptyGradShape), 0, &emptyGradDeviceAddr,
                          ACL_FLOAT, &emptyGrad, ACL_FORMAT_NCHW);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    ret = CreateAclTensor(noData, emptySelfShape, ContiguousStrides(emptySelfShape), 0, &emptySelfDeviceAddr,
                          ACL_FLOAT, &emptySelf, ACL_FORMAT_NCHW);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    ret = CreateAclTensor(noData, emptySelfShape, ContiguousStrides(emptySelfShape), 0, &emptyGradInputDeviceAddr,
                          ACL_FLOAT, &emptyGradInput, ACL_FORMAT_NCHW);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    workspaceSize = 99;
    ret = aclnnAvgPool2dBackwardGetWorkspaceSize(emptyGrad, emptySelf, kernelSize, nullptr, padding, false, true, 0, 0,
                                                 emptyGradInput, &workspaceSize, &executor);
    Expect("empty tensors are accepted", ret, ACL_SUCCESS);
    Expect("empty tensors need no workspace", workspaceSize == 0 ? 0 : 1, 0);
    if (ret == ACL_SUCCESS) {
        Expect("empty tensors run", aclnnAvgPool2dBackward(nullptr, 0, executor, stream), ACL_SUCCESS);
        Expect("empty tensors synchronise", aclrtSynchronizeStream(stream), ACL_SUCCESS);
    }

    aclDestroyTensor(gradOutput);
    aclDestroyTensor(ndGradOutput);
    aclDestroyTensor(self);
    aclDestroyTensor(gradInput);
    aclDestroyTensor(emptyGrad);
    aclDestroyTensor(emptySelf);
    aclDestroyTensor(emptyGradInput);
    aclDestroyIntArray(kernelSize);
    aclDestroyIntArray(kernelSize3);
    aclDestroyIntArray(bigKernel);
    aclDestroyIntArray(padding);
    aclDestroyIntArray(widePadding);
    aclrtFree(gradDeviceAddr);
    aclrtFree(ndDeviceAddr);
    aclrtFree(selfDeviceAddr);
    aclrtFree(gradInputDeviceAddr);
    aclrtFree(emptyGradDeviceAddr);
    aclrtFree(emptySelfDeviceAddr);
    aclrtFree(emptyGradInputDeviceAddr);
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
    ret = RunNclCase(stream);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    ret = RunFloat16Case(stream);
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
