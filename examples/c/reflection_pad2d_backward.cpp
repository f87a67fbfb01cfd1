/*
 * aclnnReflectionPad2dBackward: a C++ program that behaves like the official sample in the
 * operator's documentation (hicann/ops-math,
 * conversion/pad_v3_grad_replicate/docs/aclnnReflectionPad2dBackward.md) — the same inputs,
 * parameters and printed lines — written for aclnn_py; the Python port is
 * examples/reflection_pad2d_backward.py.
 *
 *   gradOutput  (1, 1, 4, 4) float32, ND, all 1
 *   self        (1, 1, 2, 2) float32, ND, 1 2 3 4
 *   padding     [1, 1, 1, 1]
 *   gradInput   (1, 1, 2, 2) float32, ND, initialised to 0
 *
 * Prints one "result[i] is: v" line per element of gradInput. Build and run: examples/README.md.
 */
#include <cstdint>
#include <cstdio>
#include <vector>

#include "acl/acl.h"
#include "aclnnop/aclnn_pad2d_backward.h"

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

    /* 2. Inputs and output on the device, and the padding. */
    const std::vector<int64_t> gradOutputShape = {1, 1, 4, 4};
    const std::vector<int64_t> selfShape = {1, 1, 2, 2};
    const std::vector<float> gradOutputHost(16, 1.0f);
    const std::vector<float> selfHost = {1, 2, 3, 4};
    const std::vector<int64_t> paddingValues = {1, 1, 1, 1};  /* left, right, top, bottom */
    const std::vector<float> gradInputHost(4, 0.0f);

    DeviceTensor gradOutput;
    DeviceTensor self;
    DeviceTensor gradInput;
    if (!CreateDeviceTensor(gradOutputHost, gradOutputShape, ACL_FLOAT, ACL_FORMAT_ND, &gradOutput) ||
        !CreateDeviceTensor(selfHost, selfShape, ACL_FLOAT, ACL_FORMAT_ND, &self)) {
        return 1;
    }
    aclIntArray *padding = aclCreateIntArray(paddingValues.data(), paddingValues.size());
    if (padding == nullptr) {
        fprintf(stderr, "aclCreateIntArray failed.\n");
        return 1;
    }
    if (!CreateDeviceTensor(gradInputHost, selfShape, ACL_FLOAT, ACL_FORMAT_ND, &gradInput)) {
        return 1;
    }

    /* 3. Phase one checks the parameters and sizes the workspace; phase two queues the work. */
    uint64_t workspaceSize = 0;
    aclOpExecutor *executor = nullptr;
    if (Failed("aclnnReflectionPad2dBackwardGetWorkspaceSize",
               aclnnReflectionPad2dBackwardGetWorkspaceSize(gradOutput.tensor, self.tensor, padding, gradInput.tensor,
                                                            &workspaceSize, &executor))) {
        return 1;
    }
    void *workspace = nullptr;
    if (workspaceSize > 0 &&
        Failed("aclrtMalloc (workspace)", aclrtMalloc(&workspace, workspaceSize, ACL_MEM_MALLOC_HUGE_FIRST))) {
        return 1;
    }
    if (Failed("aclnnReflectionPad2dBackward",
               aclnnReflectionPad2dBackward(workspace, workspaceSize, executor, stream))) {
        return 1;
    }

    /* 4. Wait for the stream. */
    if (Failed("aclrtSynchronizeStream", aclrtSynchronizeStream(stream))) {
        return 1;
    }

    /* 5. Copy the result back and print it. */
    std::vector<float> result(gradInputHost.size(), 0.0f);
    size_t resultBytes = result.size() * sizeof(float);
    if (Failed("aclrtMemcpy (result)",
               aclrtMemcpy(result.data(), resultBytes, gradInput.addr, resultBytes, ACL_MEMCPY_DEVICE_TO_HOST))) {
        return 1;
    }
    for (size_t i = 0; i < result.size(); i++) {
        printf("result[%ld] is: %f\n", static_cast<long>(i), result[i]);
    }

    /* 6. Destroy the descriptors, free the device memory, release stream, device and runtime. */
    aclDestroyTensor(gradOutput.tensor);
    aclDestroyTensor(self.tensor);
    aclDestroyIntArray(padding);
    aclDestroyTensor(gradInput.tensor);
    aclrtFree(gradOutput.addr);
    aclrtFree(self.addr);
    aclrtFree(gradInput.addr);
    if (workspaceSize > 0) {
        aclrtFree(workspace);
    }
    aclrtDestroyStream(stream);
    aclrtResetDevice(deviceId);
    aclFinalize();
    return 0;
}
