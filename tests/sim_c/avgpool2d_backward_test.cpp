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
#include <vector>

#include "acl/acl.h"
#include "aclnnop/aclnn_avgpool2d_backward.h"
#include "sample_common.h"

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
    int64_t selfSize = GetShapeSize(c.selfShape);
    std::vector<float> gradHostData = InputValues(GetShapeSize(c.gradShape));
    std::vector<float> zeros(selfSize, 0.0f);

    void *gradDeviceAddr = nullptr;
    void *selfDeviceAddr = nullptr;
    void *gradInputDeviceAddr = nullptr;
    aclTensor *gradOutput = nullptr;
    aclTensor *self = nullptr;
    aclTensor *gradInput = nullptr;
    auto ret = CreateFloatTensor(gradHostData, c.gradShape, c.half, &gradDeviceAddr, &gradOutput, format);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    ret = CreateFloatTensor(zeros, c.selfShape, c.half, &selfDeviceAddr, &self, format);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    ret = CreateFloatTensor(zeros, c.selfShape, c.half, &gradInputDeviceAddr, &gradInput, format);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
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
    ret = RunPhase2("aclnnAvgPool2dBackward", aclnnAvgPool2dBackward, workspaceSize, executor, stream);
    CHECK_RET(ret == ACL_SUCCESS, return ret);

    LOG_PRINT("== case %s ==\n", c.name);
    ret = PrintFloatResult(gradInputDeviceAddr, selfSize, c.half);
    CHECK_RET(ret == ACL_SUCCESS, return ret);

    aclDestroyTensor(gradOutput);
    aclDestroyTensor(self);
    aclDestroyTensor(gradInput);
    aclDestroyIntArray(kernelSize);
    aclDestroyIntArray(stride);
    aclDestroyIntArray(padding);
    aclrtFree(gradDeviceAddr);
    aclrtFree(selfDeviceAddr);
    aclrtFree(gradInputDeviceAddr);
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

int main()
{
    return RunSample({RunFloat32Case, RunNclCase, RunFloat16Case, RunNegativeCases});
}
