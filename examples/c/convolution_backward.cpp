/*
 * aclnnConvolutionBackward: a C++ program that behaves like the official sample in the
 * operator's documentation (hicann/ops-nn, conv/convolution_backward/docs/aclnnConvolutionBackward.md)
 * — the same inputs, parameters and printed lines — written for aclnn_py; the Python port is
 * examples/convolution_backward.py.
 *
 *   gradOutput  (2, 2, 7, 7) float32, NCHW, all 1
 *   input       (2, 2, 7, 7) float32, NCHW, all 1
 *   weight      (2, 2, 1, 1) float32, NCHW, all 1
 *   biasSizes [2]  stride [1, 1]  padding [0, 0]  dilation [1, 1]  transposed false
 *   outputPadding [0, 0]  groups 1  outputMask [true, true, true]  cubeMathType 1
 *   gradInput (2, 2, 7, 7) and gradWeight (2, 2, 1, 1) float32 NCHW, gradBias (2) float32 ND,
 *   all initialised to 1
 *
 * Prints "gradInputResult[i] is: v", then "gradWeightResult[i] is: v", then
 * "gradBiasResult[i] is: v" lines. Build and run: examples/README.md.
 */
#include <cstdint>
#include <cstdio>
#include <vector>

#include "acl/acl.h"
#include "aclnnop/aclnn_convolution_backward.h"

namespace {

/* Reports a failed call on stderr, with CANN's text for it; true when status is an error. */
bool Failed(const char *api, int status)
{
    if (status == ACL_SUCCESS) {
        return false;
    }
    const char *detail = aclGetRecentErrMsg();
    fprintf(stderr, "%s failed. ERROR: %d\n%s\n", api, status, detail != nullptr ? detail : "");
    return true;
}

/* Device memory holding a copy of host data, and the aclTensor that describes it. */
struct DeviceTensor {
    void *addr;
    aclTensor *tensor;
};

template <typename T>
bool CreateDeviceTensor(const std::vector<T> &host, const std::vector<int64_t> &shape, aclDataType dataType,
                        aclFormat format, DeviceTensor *out)
{
    out->addr = nullptr;
    out->tensor = nullptr;
    size_t bytes = host.size() * sizeof(T);
    if (Failed("aclrtMalloc", aclrtMalloc(&out->addr, bytes, ACL_MEM_MALLOC_HUGE_FIRST)) ||
        Failed("aclrtMemcpy", aclrtMemcpy(out->addr, bytes, host.data(), bytes, ACL_MEMCPY_HOST_TO_DEVICE))) {
        return false;
    }
    std::vector<int64_t> strides(shape.size(), 1);  /* row-major: contiguous */
    for (size_t d = shape.size(); d > 1; d--) {
        strides[d - 2] = strides[d - 1] * shape[d - 1];
    }
    out->tensor = aclCreateTensor(shape.data(), shape.size(), dataType, strides.data(), 0, format, shape.data(),
                                  shape.size(), out->addr);
    if (out->tensor == nullptr) {
        fprintf(stderr, "aclCreateTensor failed.\n");
        return false;
    }
    return true;
}

/* Copies count floats of a device tensor back to the host and prints them under label. */
bool PrintResult(const char *label, const DeviceTensor &source, size_t count)
{
    std::vector<float> result(count, 0.0f);
    size_t bytes = count * sizeof(float);
    if (Failed("aclrtMemcpy (result)",
               aclrtMemcpy(result.data(), bytes, source.addr, bytes, ACL_MEMCPY_DEVICE_TO_HOST))) {
        return false;
    }
    for (size_t i = 0; i < count; i++) {
        printf("%s[%ld] is: %f\n", label, static_cast<long>(i), result[i]);
    }
    return true;
}

}  // namespace

int main()
{
    /* 1. Runtime, device, stream. */
    const int32_t deviceId = 0;
    aclrtStream stream = nullptr;
    if (Failed("aclInit", aclInit(nullptr)) || Failed("aclrtSetDevice", aclrtSetDevice(deviceId)) ||
        Failed("aclrtCreateStream", aclrtCreateStream(&stream))) {
        return 1;
    }

    /* 2. Inputs and outputs on the device, and the convolution parameters. */
    const std::vector<int64_t> gradOutputShape = {2, 2, 7, 7};
    const std::vector<int64_t> inputShape = {2, 2, 7, 7};
    const std::vector<int64_t> weightShape = {2, 2, 1, 1};
    const std::vector<int64_t> biasSizesValues = {2};
    const std::vector<int64_t> strideValues = {1, 1};
    const std::vector<int64_t> paddingValues = {0, 0};
    const std::vector<int64_t> dilationValues = {1, 1};
    const bool transposed = false;
    const std::vector<int64_t> outputPaddingValues = {0, 0};
    const int groups = 1;
    const bool outputMaskValues[3] = {true, true, true};  /* gradInput, gradWeight, gradBias */
    const int8_t cubeMathType = 1;  /* ALLOW_FP32_DOWN_PRECISION */

    const std::vector<float> gradOutputHost(2 * 2 * 7 * 7, 1.0f);
    const std::vector<float> inputHost(2 * 2 * 7 * 7, 1.0f);
    const std::vector<float> weightHost(2 * 2 * 1 * 1, 1.0f);
    const std::vector<float> gradBiasHost(2, 1.0f);

    DeviceTensor gradOutput;
    DeviceTensor input;
    DeviceTensor weight;
    DeviceTensor gradInput;
    DeviceTensor gradWeight;
    DeviceTensor gradBias;
    if (!CreateDeviceTensor(gradOutputHost, gradOutputShape, ACL_FLOAT, ACL_FORMAT_NCHW, &gradOutput) ||
        !CreateDeviceTensor(inputHost, inputShape, ACL_FLOAT, ACL_FORMAT_NCHW, &input) ||
        !CreateDeviceTensor(weightHost, weightShape, ACL_FLOAT, ACL_FORMAT_NCHW, &weight) ||
        !CreateDeviceTensor(inputHost, inputShape, ACL_FLOAT, ACL_FORMAT_NCHW, &gradInput) ||
        !CreateDeviceTensor(weightHost, weightShape, ACL_FLOAT, ACL_FORMAT_NCHW, &gradWeight) ||
        !CreateDeviceTensor(gradBiasHost, biasSizesValues, ACL_FLOAT, ACL_FORMAT_ND, &gradBias)) {
        return 1;
    }
    aclIntArray *biasSizes = aclCreateIntArray(biasSizesValues.data(), biasSizesValues.size());
    aclIntArray *stride = aclCreateIntArray(strideValues.data(), strideValues.size());
    aclIntArray *padding = aclCreateIntArray(paddingValues.data(), paddingValues.size());
    aclIntArray *dilation = aclCreateIntArray(dilationValues.data(), dilationValues.size());
    aclIntArray *outputPadding = aclCreateIntArray(outputPaddingValues.data(), outputPaddingValues.size());
    aclBoolArray *outputMask = aclCreateBoolArray(outputMaskValues, 3);
    if (biasSizes == nullptr || stride == nullptr || padding == nullptr || dilation == nullptr ||
        outputPadding == nullptr || outputMask == nullptr) {
        fprintf(stderr, "aclCreateIntArray/aclCreateBoolArray failed.\n");
        return 1;
    }

    /* 3. Phase one checks the parameters and sizes the workspace; phase two queues the work. */
    uint64_t workspaceSize = 0;
    aclOpExecutor *executor = nullptr;
    if (Failed("aclnnConvolutionBackwardGetWorkspaceSize",
               aclnnConvolutionBackwardGetWorkspaceSize(gradOutput.tensor, input.tensor, weight.tensor, biasSizes,
                                                        stride, padding, dilation, transposed, outputPadding, groups,
                                                        outputMask, cubeMathType, gradInput.tensor, gradWeight.tensor,
                                                        gradBias.tensor, &workspaceSize, &executor))) {
        return 1;
    }
    void *workspace = nullptr;
    if (workspaceSize > 0 &&
        Failed("aclrtMalloc (workspace)", aclrtMalloc(&workspace, workspaceSize, ACL_MEM_MALLOC_HUGE_FIRST))) {
        return 1;
    }
    if (Failed("aclnnConvolutionBackward", aclnnConvolutionBackward(workspace, workspaceSize, executor, stream))) {
        return 1;
    }

    /* 4. Wait for the stream. */
    if (Failed("aclrtSynchronizeStream", aclrtSynchronizeStream(stream))) {
        return 1;
    }

    /* 5. Copy the results back and print them. */
    if (!PrintResult("gradInputResult", gradInput, inputHost.size()) ||
        !PrintResult("gradWeightResult", gradWeight, weightHost.size()) ||
        !PrintResult("gradBiasResult", gradBias, gradBiasHost.size())) {
        return 1;
    }

    /* 6. Destroy the descriptors, free the device memory, release stream, device and runtime. */
    aclDestroyTensor(gradOutput.tensor);
    aclDestroyTensor(input.tensor);
    aclDestroyTensor(weight.tensor);
    aclDestroyTensor(gradInput.tensor);
    aclDestroyTensor(gradWeight.tensor);
    aclDestroyTensor(gradBias.tensor);
    aclDestroyIntArray(biasSizes);
    aclDestroyIntArray(stride);
    aclDestroyIntArray(padding);
    aclDestroyIntArray(dilation);
    aclDestroyIntArray(outputPadding);
    aclDestroyBoolArray(outputMask);
    aclrtFree(gradOutput.addr);
    aclrtFree(input.addr);
    aclrtFree(weight.addr);
    aclrtFree(gradInput.addr);
    aclrtFree(gradWeight.addr);
    aclrtFree(gradBias.addr);
    if (workspaceSize > 0) {
        aclrtFree(workspace);
    }
    aclrtDestroyStream(stream);
    aclrtResetDevice(deviceId);
    aclFinalize();
    return 0;
}
