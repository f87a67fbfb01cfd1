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
#include <vector>

#include "acl/acl.h"
#include "aclnnop/aclnn_im2col_backward.h"
#include "sample_common.h"

/* The int-array arguments of one aclnnIm2colBackward call, two elements each. */
struct Im2colArgs {
    std::vector<int64_t> inputSize;
    std::vector<int64_t> kernelSize;
    std::vector<int64_t> dilation;
    std::vector<int64_t> padding;
    std::vector<int64_t> stride;
};

/* Phase 1 and phase 2 of aclnnIm2colBackward(grad, args) -> out, synchronised; prints the
 * workspace size when logWorkspaceSize. */
static int RunIm2colBackward(aclrtStream stream, const aclTensor *grad, aclTensor *out, const Im2colArgs &args,
                             bool logWorkspaceSize)
{
    aclIntArray *inputSize = aclCreateIntArray(args.inputSize.data(), 2);
    aclIntArray *kernelSize = aclCreateIntArray(args.kernelSize.data(), 2);
    aclIntArray *dilation = aclCreateIntArray(args.dilation.data(), 2);
    aclIntArray *padding = aclCreateIntArray(args.padding.data(), 2);
    aclIntArray *stride = aclCreateIntArray(args.stride.data(), 2);

    uint64_t workspaceSize = 0;
    aclOpExecutor *executor;
    auto ret = aclnnIm2colBackwardGetWorkspaceSize(grad, inputSize, kernelSize, dilation, padding, stride, out,
                                                   &workspaceSize, &executor);
    if (ret != ACL_SUCCESS) {
        LOG_PRINT("aclnnIm2colBackwardGetWorkspaceSize failed. ERROR: %d\n", ret);
    } else {
        if (logWorkspaceSize) {
            LOG_PRINT("workspaceSize is: %llu\n", static_cast<unsigned long long>(workspaceSize));
        }
        ret = RunPhase2("aclnnIm2colBackward", aclnnIm2colBackward, workspaceSize, executor, stream);
    }
    aclDestroyIntArray(inputSize);
    aclDestroyIntArray(kernelSize);
    aclDestroyIntArray(dilation);
    aclDestroyIntArray(padding);
    aclDestroyIntArray(stride);
    return ret;
}

/* Case "float32": batched gradOutput (1, 12, 9) into a strided out view (1, 2, 4, 5) that
 * sits at offset 1 of a (1, 2, 4, 7) buffer; the other elements must stay 99. */
static int RunFloat32Case(aclrtStream stream)
{
    std::vector<int64_t> gradShape = {1, 12, 9};
    std::vector<int64_t> outShape = {1, 2, 4, 5};
    std::vector<int64_t> outStrides = {56, 28, 7, 1};
    std::vector<float> outHostData(56, 99.0f);

    void *gradDeviceAddr = nullptr;
    void *outDeviceAddr = nullptr;
    aclTensor *grad = nullptr;
    aclTensor *out = nullptr;
    auto ret = CreateFloatTensor(InputValues(GetShapeSize(gradShape)), gradShape, false, &gradDeviceAddr, &grad);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    ret = CreateAclTensor(outHostData, outShape, outStrides, 1, &outDeviceAddr, ACL_FLOAT, &out);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    ret = RunIm2colBackward(stream, grad, out, {{4, 5}, {2, 3}, {1, 1}, {1, 0}, {2, 1}}, true);
    CHECK_RET(ret == ACL_SUCCESS, return ret);

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
    aclrtFree(gradDeviceAddr);
    aclrtFree(outDeviceAddr);
    return 0;
}

/* Case "float16": unbatched gradOutput (4, 6) float16 into out (1, 3, 3) float16. */
static int RunFloat16Case(aclrtStream stream)
{
    std::vector<int64_t> gradShape = {4, 6};
    std::vector<int64_t> outShape = {1, 3, 3};
    int64_t outSize = GetShapeSize(outShape);

    void *gradDeviceAddr = nullptr;
    void *outDeviceAddr = nullptr;
    aclTensor *grad = nullptr;
    aclTensor *out = nullptr;
    auto ret = CreateFloatTensor(InputValues(GetShapeSize(gradShape)), gradShape, true, &gradDeviceAddr, &grad);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    ret = CreateFloatTensor(std::vector<float>(outSize, 0.0f), outShape, true, &outDeviceAddr, &out);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    ret = RunIm2colBackward(stream, grad, out, {{3, 3}, {2, 2}, {2, 1}, {1, 1}, {1, 2}}, false);
    CHECK_RET(ret == ACL_SUCCESS, return ret);

    LOG_PRINT("== case float16 ==\n");
    ret = PrintResult<aclFloat16>(outDeviceAddr, outSize);
    CHECK_RET(ret == ACL_SUCCESS, return ret);

    aclDestroyTensor(grad);
    aclDestroyTensor(out);
    aclrtFree(gradDeviceAddr);
    aclrtFree(outDeviceAddr);
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

int main()
{
    return RunSample({RunFloat32Case, RunFloat16Case, RunNegativeCases});
}
