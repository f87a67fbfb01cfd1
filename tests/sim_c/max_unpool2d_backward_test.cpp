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
#include <vector>

#include "acl/acl.h"
#include "aclnnop/aclnn_max_unpool2d_backward.h"
#include "sample_common.h"

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
    ret = RunPhase2("aclnnMaxUnpool2dBackward", aclnnMaxUnpool2dBackward, workspaceSize, executor, stream);
    CHECK_RET(ret == ACL_SUCCESS, return ret);

    LOG_PRINT("== case %s ==\n", name);
    ret = PrintResult<O>(outDeviceAddr, GetShapeSize(selfShape));
    CHECK_RET(ret == ACL_SUCCESS, return ret);

    aclDestroyTensor(gradOutput);
    aclDestroyTensor(self);
    aclDestroyTensor(indices);
    aclDestroyTensor(out);
    aclDestroyIntArray(outputSize);
    aclrtFree(gradDeviceAddr);
    aclrtFree(selfDeviceAddr);
    aclrtFree(indicesDeviceAddr);
    aclrtFree(outDeviceAddr);
    return 0;
}

/* Case "float32": 4-D float gradOutput (2, 2, 4, 5), self (2, 2, 2, 3), int64 indices. */
static int RunFloat32Case(aclrtStream stream)
{
    std::vector<int64_t> gradShape = {2, 2, 4, 5};
    std::vector<int64_t> selfShape = {2, 2, 2, 3};
    std::vector<float> gradHostData = InputValues(GetShapeSize(gradShape));
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

int main()
{
    return RunSample({RunFloat32Case, RunInt32Case, RunNegativeCases});
}
