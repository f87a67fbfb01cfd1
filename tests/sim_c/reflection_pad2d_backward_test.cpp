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
#include <vector>

#include "acl/acl.h"
#include "aclnnop/aclnn_pad2d_backward.h"
#include "sample_common.h"

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
    ret = RunPhase2("aclnnReflectionPad2dBackward", aclnnReflectionPad2dBackward, workspaceSize, executor, stream);
    CHECK_RET(ret == ACL_SUCCESS, return ret);

    LOG_PRINT("== case %s ==\n", name);
    ret = PrintResult<T>(gradInputDeviceAddr, elements * lanes);
    CHECK_RET(ret == ACL_SUCCESS, return ret);

    aclDestroyTensor(gradOutput);
    aclDestroyTensor(self);
    aclDestroyTensor(gradInput);
    aclDestroyIntArray(padding);
    aclrtFree(gradDeviceAddr);
    aclrtFree(selfDeviceAddr);
    aclrtFree(gradInputDeviceAddr);
    return 0;
}

/* Case "float32": self (1, 2, 3, 4), padding [left 2, right 1, top 1, bottom 2], gradOutput
 * (1, 2, 6, 7) read through swapped strides. */
static int RunFloat32Case(aclrtStream stream)
{
    return RunCase<float>(stream, "float32", InputValues(1 * 2 * 7 * 6), {1, 2, 6, 7}, {84, 42, 1, 6}, {1, 2, 3, 4},
                          {2, 1, 1, 2}, ACL_FLOAT, 1);
}

/* Case "complex64": 3-D self (2, 3, 3), padding [1, 1, 2, 0], gradOutput (2, 5, 5). */
static int RunComplex64Case(aclrtStream stream)
{
    return RunCase<float>(stream, "complex64", InputValues(2 * 5 * 5 * 2), {2, 5, 5}, {25, 5, 1}, {2, 3, 3},
                          {1, 1, 2, 0}, ACL_COMPLEX64, 2);
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

int main()
{
    return RunSample({RunFloat32Case, RunComplex64Case, RunNegativeCases});
}
