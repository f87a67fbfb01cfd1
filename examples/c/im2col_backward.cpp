/*
 * aclnnIm2colBackward (col2im): a C++ program that behaves like the official sample in the
 * operator's documentation (hicann/ops-cv, image/col2im/docs/aclnnIm2colBackward.md) — the
 * same inputs, parameters and printed lines — written for aclnn_py; the Python port is
 * examples/im2col_backward.py.
 *
 *   gradOutput  (4, 2) float32, ND, [[0.1, 1.1], [2.1, 3.1], [4.1, 5.1], [6.1, 7.1]]
 *   inputSize [1, 1]  kernelSize [2, 2]  dilation [1, 1]  padding [1, 1]  stride [1, 2]
 *   out         (1, 1, 1) float32, ND, initialised to 0
 *
 * Prints one "result[i] is: v" line per element of out. Build and run: examples/README.md.
 */
#include <cstdint>
#include <cstdio>
#include <vector>

#include "acl/acl.h"
#include "aclnnop/aclnn_im2col_backward.h"

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

    /* 2. Inputs and output on the device, and the integer parameters. */
    const std::vector<int64_t> gradShape = {4, 2};
    const std::vector<int64_t> outShape = {1, 1, 1};
    const std::vector<float> gradHost = {0.1f, 1.1f, 2.1f, 3.1f, 4.1f, 5.1f, 6.1f, 7.1f};
    const std::vector<float> outHost = {0.0f};
    const std::vector<int64_t> inputSizeValues = {1, 1};
    const std::vector<int64_t> kernelSizeValues = {2, 2};
    const std::vector<int64_t> dilationValues = {1, 1};
    const std::vector<int64_t> paddingValues = {1, 1};
    const std::vector<int64_t> strideValues = {1, 2};

    DeviceTensor grad;
    DeviceTensor out;
    if (!CreateDeviceTensor(gradHost, gradShape, ACL_FLOAT, ACL_FORMAT_ND, &grad) ||
        !CreateDeviceTensor(outHost, outShape, ACL_FLOAT, ACL_FORMAT_ND, &out)) {
        return 1;
    }
    aclIntArray *inputSize = aclCreateIntArray(inputSizeValues.data(), inputSizeValues.size());
    aclIntArray *kernelSize = aclCreateIntArray(kernelSizeValues.data(), kernelSizeValues.size());
    aclIntArray *dilation = aclCreateIntArray(dilationValues.data(), dilationValues.size());
    aclIntArray *padding = aclCreateIntArray(paddingValues.data(), paddingValues.size());
    aclIntArray *stride = aclCreateIntArray(strideValues.data(), strideValues.size());
    if (inputSize == nullptr || kernelSize == nullptr || dilation == nullptr || padding == nullptr ||
        stride == nullptr) {
        fprintf(stderr, "aclCreateIntArray failed.\n");
        return 1;
    }

    /* 3. Phase one checks the parameters and sizes the workspace; phase two queues the work. */
    uint64_t workspaceSize = 0;
    aclOpExecutor *executor = nullptr;
    if (Failed("aclnnIm2colBackwardGetWorkspaceSize",
               aclnnIm2colBackwardGetWorkspaceSize(grad.tensor, inputSize, kernelSize, dilation, padding, stride,
                                                   out.tensor, &workspaceSize, &executor))) {
        return 1;
    }
    void *workspace = nullptr;
    if (workspaceSize > 0 &&
        Failed("aclrtMalloc (workspace)", aclrtMalloc(&workspace, workspaceSize, ACL_MEM_MALLOC_HUGE_FIRST))) {
        return 1;
    }
    if (Failed("aclnnIm2colBackward", aclnnIm2colBackward(workspace, workspaceSize, executor, stream))) {
        return 1;
    }

    /* 4. Wait for the stream. */
    if (Failed("aclrtSynchronizeStream", aclrtSynchronizeStream(stream))) {
        return 1;
    }

    /* 5. Copy the result back and print it. */
    std::vector<float> result(outHost.size(), 0.0f);
    size_t resultBytes = result.size() * sizeof(float);
    if (Failed("aclrtMemcpy (result)",
               aclrtMemcpy(result.data(), resultBytes, out.addr, resultBytes, ACL_MEMCPY_DEVICE_TO_HOST))) {
        return 1;
    }
    for (size_t i = 0; i < result.size(); i++) {
        printf("result[%ld] is: %f\n", static_cast<long>(i), result[i]);
    }

    /* 6. Destroy the descriptors, free the device memory, release stream, device and runtime. */
    aclDestroyTensor(grad.tensor);
    aclDestroyTensor(out.tensor);
    aclDestroyIntArray(inputSize);
    aclDestroyIntArray(kernelSize);
    aclDestroyIntArray(dilation);
    aclDestroyIntArray(padding);
    aclDestroyIntArray(stride);
    aclrtFree(grad.addr);
    aclrtFree(out.addr);
    if (workspaceSize > 0) {
        aclrtFree(workspace);
    }
    aclrtDestroyStream(stream);
    aclrtResetDevice(deviceId);
    aclFinalize();
    return 0;
}
