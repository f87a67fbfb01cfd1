/*
 * aclnnIm2colBackward on the simulator, written the way the official aclnn samples are.
 *
 * Inputs are deterministic: element i (row-major) of every input is
 *     value(i) = ((i * 7) % 17 - 8) * 0.125
 * (exact in float16); tests/sim/test_c_ops.py rebuilds them and compares the printed results
 * with PyTorch.  Each case prints "== case <name> ==" and then "result[i] is: v" lines.
 * Negative cases print one "check ..." line each; the program exits non-zero if any check
 * fails, and ends with the simulator's live-handle counters.
 */
#include <cstdio>
#include <cstring>
#include <vector>

#include "acl/acl.h"
#include "aclnnop/aclnn_im2col_backward.h"
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
                           aclDataType dataType, aclTensor **tensor)
{
    auto size = hostData.size() * sizeof(T);
    auto ret = aclrtMalloc(deviceAddr, size > 0 ? size : 1, ACL_MEM_MALLOC_HUGE_FIRST);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclrtMalloc failed. ERROR: %d\n", ret); return ret);
    if (size > 0) {
        ret = aclrtMemcpy(*deviceAddr, size, hostData.data(), size, ACL_MEMCPY_HOST_TO_DEVICE);
        CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclrtMemcpy failed. ERROR: %d\n", ret); return ret);
    }
    int64_t storage = static_cast<int64_t>(hostData.size());
    *tensor = aclCreateTensor(shape.data(), shape.size(), dataType, strides.data(), offset, ACL_FORMAT_ND,
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

/* Case "float32": batched gradOutput (1, 12, 9) into a strided out view (1, 2, 4, 5) that
 * sits at offset 1 of a (1, 2, 4, 7) buffer; the other elements must stay 99. */
static int RunFloat32Case(aclrtStream stream)
{
    std::vector<int64_t> gradShape = {1, 12, 9};
    std::vector<int64_t> outShape = {1, 2, 4, 5};
    std::vector<int64_t> outStrides = {56, 28, 7, 1};
    std::vector<float> gradHostData(GetShapeSize(gradShape));
    for (size_t i = 0; i < gradHostData.size(); i++) {
        gradHostData[i] = InputValue(static_cast<int64_t>(i));
    }
    std::vector<float> outHostData(56, 99.0f);
    std::vector<int64_t> inputSizeData = {4, 5};
    std::vector<int64_t> kernelSizeData = {2, 3};
    std::vector<int64_t> dilationData = {1, 1};
    std::vector<int64_t> paddingData = {1, 0};
    std::vector<int64_t> strideData = {2, 1};

    void *gradDeviceAddr = nullptr;
    void *outDeviceAddr = nullptr;
    aclTensor *grad = nullptr;
    aclTensor *out = nullptr;
    auto ret = CreateAclTensor(gradHostData, gradShape, ContiguousStrides(gradShape), 0, &gradDeviceAddr,
                               ACL_FLOAT, &grad);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    ret = CreateAclTensor(outHostData, outShape, outStrides, 1, &outDeviceAddr, ACL_FLOAT, &out);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    aclIntArray *inputSize = aclCreateIntArray(inputSizeData.data(), 2);
    aclIntArray *kernelSize = aclCreateIntArray(kernelSizeData.data(), 2);
    aclIntArray *dilation = aclCreateIntArray(dilationData.data(), 2);
    aclIntArray *padding = aclCreateIntArray(paddingData.data(), 2);
    aclIntArray *stride = aclCreateIntArray(strideData.data(), 2);

    uint64_t workspaceSize = 0;
    aclOpExecutor *executor;
    ret = aclnnIm2colBackwardGetWorkspaceSize(grad, inputSize, kernelSize, dilation, padding, stride, out,
                                              &workspaceSize, &executor);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclnnIm2colBackwardGetWorkspaceSize failed. ERROR: %d\n", ret);
              return ret);
    LOG_PRINT("workspaceSize is: %llu\n", static_cast<unsigned long long>(workspaceSize));
    void *workspaceAddr = nullptr;
    if (workspaceSize > 0) {
        ret = aclrtMalloc(&workspaceAddr, workspaceSize, ACL_MEM_MALLOC_HUGE_FIRST);
        CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("allocate workspace failed. ERROR: %d\n", ret); return ret);
    }
    ret = aclnnIm2colBackward(workspaceAddr, workspaceSize, executor, stream);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclnnIm2colBackward failed. ERROR: %d\n", ret); return ret);
    ret = aclrtSynchronizeStream(stream);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclrtSynchronizeStream failed. ERROR: %d\n", ret); return ret);

    std::vector<float> resultData(outHostData.size(), 0);
    ret = aclrtMemcpy(resultData.data(), resultData.size() * sizeof(float), outDeviceAddr,
                      resultData.size() * sizeof(float), ACL_MEMCPY_DEVICE_TO_HOST);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("copy result from device to host failed. ERROR: %d\n", ret);
              return ret);
    LOG_PRINT("== case float32 ==\n");
    int64_t i = 0;
    int untouched = 0;
    for (int64_t c = 0; c < 2; c++) {
        for (int64_t h = 0; h < 4; h++) {
            for (int64_t w = 0; w < 7; w++) {
                float v = resultData[c * 28 + h * 7 + w];
                if (w >= 1 && w <= 5) {
                    LOG_PRINT("result[%ld] is: %f\n", static_cast<long>(i++), v);
                } else if (v == 99.0f) {
                    untouched++;
                }
            }
        }
    }
    Expect("elements outside the strided out view are untouched", untouched == 16 ? 0 : 1, 0);

    aclDestroyTensor(grad);
    aclDestroyTensor(out);
    aclDestroyIntArray(inputSize);
    aclDestroyIntArray(kernelSize);
    aclDestroyIntArray(dilation);
    aclDestroyIntArray(padding);
    aclDestroyIntArray(stride);
    aclrtFree(gradDeviceAddr);
    aclrtFree(outDeviceAddr);
    if (workspaceSize > 0) {
        aclrtFree(workspaceAddr);
    }
    return 0;
}

/* Case "float16": unbatched gradOutput (4, 6) float16 into out (1, 3, 3) float16. */
static int RunFloat16Case(aclrtStream stream)
{
    std::vector<int64_t> gradShape = {4, 6};
    std::vector<int64_t> outShape = {1, 3, 3};
    std::vector<aclFloat16> gradHostData(GetShapeSize(gradShape));
    for (size_t i = 0; i < gradHostData.size(); i++) {
        gradHostData[i] = aclFloatToFloat16(InputValue(static_cast<int64_t>(i)));
    }
    std::vector<aclFloat16> outHostData(GetShapeSize(outShape), aclFloatToFloat16(0.0f));
    std::vector<int64_t> inputSizeData = {3, 3};
    std::vector<int64_t> kernelSizeData = {2, 2};
    std::vector<int64_t> dilationData = {2, 1};
    std::vector<int64_t> paddingData = {1, 1};
    std::vector<int64_t> strideData = {1, 2};

    void *gradDeviceAddr = nullptr;
    void *outDeviceAddr = nullptr;
    aclTensor *grad = nullptr;
    aclTensor *out = nullptr;
    auto ret = CreateAclTensor(gradHostData, gradShape, ContiguousStrides(gradShape), 0, &gradDeviceAddr,
                               ACL_FLOAT16, &grad);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    ret = CreateAclTensor(outHostData, outShape, ContiguousStrides(outShape), 0, &outDeviceAddr, ACL_FLOAT16, &out);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    aclIntArray *inputSize = aclCreateIntArray(inputSizeData.data(), 2);
    aclIntArray *kernelSize = aclCreateIntArray(kernelSizeData.data(), 2);
    aclIntArray *dilation = aclCreateIntArray(dilationData.data(), 2);
    aclIntArray *padding = aclCreateIntArray(paddingData.data(), 2);
    aclIntArray *stride = aclCreateIntArray(strideData.data(), 2);

    uint64_t workspaceSize = 0;
    aclOpExecutor *executor;
    ret = aclnnIm2colBackwardGetWorkspaceSize(grad, inputSize, kernelSize, dilation, padding, stride, out,
                                              &workspaceSize, &executor);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclnnIm2colBackwardGetWorkspaceSize failed. ERROR: %d\n", ret);
              return ret);
    void *workspaceAddr = nullptr;
    if (workspaceSize > 0) {
        ret = aclrtMalloc(&workspaceAddr, workspaceSize, ACL_MEM_MALLOC_HUGE_FIRST);
        CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("allocate workspace failed. ERROR: %d\n", ret); return ret);
    }
    ret = aclnnIm2colBackward(workspaceAddr, workspaceSize, executor, stream);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclnnIm2colBackward failed. ERROR: %d\n", ret); return ret);
    ret = aclrtSynchronizeStream(stream);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclrtSynchronizeStream failed. ERROR: %d\n", ret); return ret);

    auto size = GetShapeSize(outShape);
    std::vector<aclFloat16> resultData(size, 0);
    ret = aclrtMemcpy(resultData.data(), resultData.size() * sizeof(aclFloat16), outDeviceAddr,
                      size * sizeof(aclFloat16), ACL_MEMCPY_DEVICE_TO_HOST);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("copy result from device to host failed. ERROR: %d\n", ret);
              return ret);
    LOG_PRINT("== case float16 ==\n");
    for (int64_t i = 0; i < size; i++) {
        LOG_PRINT("result[%ld] is: %f\n", static_cast<long>(i), aclFloat16ToFloat(resultData[i]));
    }

    aclDestroyTensor(grad);
    aclDestroyTensor(out);
    aclDestroyIntArray(inputSize);
    aclDestroyIntArray(kernelSize);
    aclDestroyIntArray(dilation);
    aclDestroyIntArray(padding);
    aclDestroyIntArray(stride);
    aclrtFree(gradDeviceAddr);
    aclrtFree(outDeviceAddr);
    if (workspaceSize > 0) {
        aclrtFree(workspaceAddr);
    }
    return 0;
}

/* Parameter checks, an empty gradOutput, and NULL pointers. */
static int RunNegativeCases(aclrtStream stream)
{
    std::vector<int64_t> gradShape = {1, 12, 9};
    std::vector<int64_t> outShape = {1, 2, 4, 5};
    std::vector<float> gradHostData(GetShapeSize(gradShape), 1.0f);
    std::vector<float> outHostData(GetShapeSize(outShape), 5.0f);
    void *gradDeviceAddr = nullptr;
    void *outDeviceAddr = nullptr;
    aclTensor *grad = nullptr;
    aclTensor *out = nullptr;
    auto ret = CreateAclTensor(gradHostData, gradShape, ContiguousStrides(gradShape), 0, &gradDeviceAddr,
                               ACL_FLOAT, &grad);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    ret = CreateAclTensor(outHostData, outShape, ContiguousStrides(outShape), 0, &outDeviceAddr, ACL_FLOAT, &out);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    std::vector<int64_t> two = {2, 3};
    std::vector<int64_t> three = {2, 3, 1};
    std::vector<int64_t> inputSizeData = {4, 5};
    std::vector<int64_t> badInputSizeData = {4, 6}; /* block grid 3 x 4 = 12 columns, not 9 */
    std::vector<int64_t> ones = {1, 1};
    std::vector<int64_t> paddingData = {1, 0};
    std::vector<int64_t> strideData = {2, 1};
    aclIntArray *inputSize = aclCreateIntArray(inputSizeData.data(), 2);
    aclIntArray *badInputSize = aclCreateIntArray(badInputSizeData.data(), 2);
    aclIntArray *kernelSize = aclCreateIntArray(two.data(), 2);
    aclIntArray *kernelSize3 = aclCreateIntArray(three.data(), 3);
    aclIntArray *dilation = aclCreateIntArray(ones.data(), 2);
    aclIntArray *padding = aclCreateIntArray(paddingData.data(), 2);
    aclIntArray *stride = aclCreateIntArray(strideData.data(), 2);

    uint64_t workspaceSize = 0;
    aclOpExecutor *executor = nullptr;
    ret = aclnnIm2colBackwardGetWorkspaceSize(grad, inputSize, kernelSize3, dilation, padding, stride, out,
                                              &workspaceSize, &executor);
    Expect("kernelSize with 3 elements", ret, ACLNN_ERR_PARAM_INVALID);
    ret = aclnnIm2colBackwardGetWorkspaceSize(grad, badInputSize, kernelSize, dilation, padding, stride, out,
                                              &workspaceSize, &executor);
    Expect("gradOutput L does not match the block grid", ret, ACLNN_ERR_PARAM_INVALID);
    ret = aclnnIm2colBackwardGetWorkspaceSize(nullptr, inputSize, kernelSize, dilation, padding, stride, out,
                                              &workspaceSize, &executor);
    Expect("gradOutput NULL", ret, ACLNN_ERR_PARAM_NULLPTR);
    ret = aclnnIm2colBackwardGetWorkspaceSize(grad, inputSize, kernelSize, dilation, padding, stride, out,
                                              nullptr, &executor);
    Expect("workspaceSize NULL", ret, ACLNN_ERR_PARAM_NULLPTR);

    /* An empty gradOutput: success, workspace 0, out left as it was. */
    std::vector<int64_t> emptyShape = {1, 12, 0};
    std::vector<int64_t> emptyTensorStrides = {0, 0, 1};
    std::vector<float> noData;
    std::vector<int64_t> bigKernelData = {3, 4};
    std::vector<int64_t> smallInputData = {1, 1};
    std::vector<int64_t> zeros = {0, 0};
    std::vector<int64_t> smallOutShape = {1, 1, 1, 1};
    std::vector<float> smallOutData = {5.0f};
    void *emptyDeviceAddr = nullptr;
    void *smallOutDeviceAddr = nullptr;
    aclTensor *empty = nullptr;
    aclTensor *smallOut = nullptr;
    ret = CreateAclTensor(noData, emptyShape, emptyTensorStrides, 0, &emptyDeviceAddr, ACL_FLOAT, &empty);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    ret = CreateAclTensor(smallOutData, smallOutShape, ContiguousStrides(smallOutShape), 0, &smallOutDeviceAddr,
                          ACL_FLOAT, &smallOut);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    aclIntArray *bigKernel = aclCreateIntArray(bigKernelData.data(), 2);
    aclIntArray *smallInput = aclCreateIntArray(smallInputData.data(), 2);
    aclIntArray *noPadding = aclCreateIntArray(zeros.data(), 2);
    aclIntArray *emptyStride = aclCreateIntArray(two.data(), 2);
    /* Block grid ((1 - 3 - 1 + 2) / 2, (1 - 4 - 1 + 3) / 3) = (0, 0): L = 0. */
    workspaceSize = 123;
    ret = aclnnIm2colBackwardGetWorkspaceSize(empty, smallInput, bigKernel, dilation, noPadding, emptyStride, smallOut,
                                              &workspaceSize, &executor);
    Expect("empty gradOutput is accepted", ret, ACL_SUCCESS);
    Expect("empty gradOutput needs no workspace", workspaceSize == 0 ? 0 : 1, 0);
    if (ret == ACL_SUCCESS) {
        ret = aclnnIm2colBackward(nullptr, 0, executor, stream);
        Expect("empty gradOutput runs", ret, ACL_SUCCESS);
        ret = aclrtSynchronizeStream(stream);
        Expect("empty gradOutput synchronises", ret, ACL_SUCCESS);
        float back = 0.0f;
        aclrtMemcpy(&back, sizeof back, smallOutDeviceAddr, sizeof back, ACL_MEMCPY_DEVICE_TO_HOST);
        Expect("empty gradOutput leaves out untouched", back == 5.0f ? 0 : 1, 0);
    }

    aclDestroyTensor(grad);
    aclDestroyTensor(out);
    aclDestroyTensor(empty);
    aclDestroyTensor(smallOut);
    aclDestroyIntArray(inputSize);
    aclDestroyIntArray(badInputSize);
    aclDestroyIntArray(kernelSize);
    aclDestroyIntArray(kernelSize3);
    aclDestroyIntArray(dilation);
    aclDestroyIntArray(padding);
    aclDestroyIntArray(stride);
    aclDestroyIntArray(bigKernel);
    aclDestroyIntArray(smallInput);
    aclDestroyIntArray(noPadding);
    aclDestroyIntArray(emptyStride);
    aclrtFree(gradDeviceAddr);
    aclrtFree(outDeviceAddr);
    aclrtFree(emptyDeviceAddr);
    aclrtFree(smallOutDeviceAddr);
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
