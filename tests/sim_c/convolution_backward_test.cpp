/*
 * aclnnConvolutionBackward on the simulator, written the way the official aclnn samples are
 * (NCL / NCHW / NCDHW tensors, ND gradBias).
 *
 * Deterministic inputs, rebuilt by tests/sim/test_c_ops.py: element i (row-major) of each of
 * gradOutput, input and weight holds value(i) = ((i * 7) % 17 - 8) * 0.125 (exact in float16).
 * Each result prints "== case <name> <gradInput|gradWeight|gradBias> ==" and then
 * "result[i] is: v" lines.  Negative cases print one "check ..." line each; the program exits
 * non-zero if any check fails, and ends with the simulator's live-handle counters.
 */
#include <vector>

#include "acl/acl.h"
#include "aclnnop/aclnn_convolution_backward.h"
#include "sample_common.h"

struct ConvCase {
    const char *name;
    std::vector<int64_t> gradShape;
    std::vector<int64_t> inputShape;
    std::vector<int64_t> weightShape;
    std::vector<int64_t> biasSizes; /* empty: pass NULL */
    std::vector<int64_t> stride;
    std::vector<int64_t> padding;
    std::vector<int64_t> dilation;
    bool transposed;
    std::vector<int64_t> outputPadding;
    int groups;
    bool outputMask[3];
    bool half;
};

static std::vector<ConvCase> Cases()
{
    return {
        /* 2-D, 2 groups, stride [2, 1], dilation [1, 2]. */
        {"conv2d", {2, 6, 3, 4}, {2, 4, 5, 6}, {6, 2, 3, 3}, {6}, {2, 1}, {1, 1}, {1, 2}, false, {0, 0}, 2,
         {true, true, true}, false},
        /* 2-D with 4-element padding [top 1, bottom 0, left 2, right 1]; no gradBias, biasSizes NULL. */
        {"conv2d_pad4", {1, 3, 4, 3}, {1, 2, 4, 4}, {3, 2, 2, 3}, {}, {1, 2}, {1, 0, 2, 1}, {1, 1}, false, {0, 0}, 1,
         {true, true, false}, false},
        /* 1-D transposed with outputPadding, float16; no gradWeight. */
        {"conv1d_transposed", {2, 2, 8}, {2, 3, 4}, {3, 2, 3}, {2}, {2}, {1}, {1}, true, {1}, 1,
         {true, false, true}, true},
        /* 3-D depthwise (groups 2). */
        {"conv3d", {1, 2, 2, 3, 5}, {1, 2, 3, 4, 4}, {2, 1, 2, 2, 2}, {2}, {1, 2, 1}, {0, 1, 1}, {1, 1, 1}, false,
         {0, 0, 0}, 2, {true, true, true}, false},
    };
}

static aclFormat FormatOf(size_t rank)
{
    return rank == 3 ? ACL_FORMAT_NCL : (rank == 4 ? ACL_FORMAT_NCHW : ACL_FORMAT_NCDHW);
}

/* A device tensor of `shape` filled with value(i) (or `fill` when fill != 0). */
static int MakeTensor(const std::vector<int64_t> &shape, bool half, float fill, aclFormat format, void **addr,
                      aclTensor **tensor)
{
    int64_t size = GetShapeSize(shape);
    std::vector<float> data = fill != 0.0f ? std::vector<float>(size, fill) : InputValues(size);
    return CreateFloatTensor(data, shape, half, addr, tensor, format);
}

static int PrintCaseResult(const char *caseName, const char *what, void *addr, int64_t size, bool half)
{
    LOG_PRINT("== case %s %s ==\n", caseName, what);
    return PrintFloatResult(addr, size, half);
}

static int RunCase(aclrtStream stream, const ConvCase &c)
{
    aclFormat format = FormatOf(c.inputShape.size());
    int64_t cout = c.gradShape[1];
    std::vector<int64_t> biasShape = {cout};
    void *gradDeviceAddr = nullptr, *inputDeviceAddr = nullptr, *weightDeviceAddr = nullptr;
    void *gradInputDeviceAddr = nullptr, *gradWeightDeviceAddr = nullptr, *gradBiasDeviceAddr = nullptr;
    aclTensor *gradOutput = nullptr, *input = nullptr, *weight = nullptr;
    aclTensor *gradInput = nullptr, *gradWeight = nullptr, *gradBias = nullptr;
    auto ret = MakeTensor(c.gradShape, c.half, 0.0f, format, &gradDeviceAddr, &gradOutput);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    ret = MakeTensor(c.inputShape, c.half, 0.0f, format, &inputDeviceAddr, &input);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    ret = MakeTensor(c.weightShape, c.half, 0.0f, format, &weightDeviceAddr, &weight);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    if (c.outputMask[0]) {
        ret = MakeTensor(c.inputShape, c.half, -1.0f, format, &gradInputDeviceAddr, &gradInput);
        CHECK_RET(ret == ACL_SUCCESS, return ret);
    }
    if (c.outputMask[1]) {
        ret = MakeTensor(c.weightShape, c.half, -1.0f, format, &gradWeightDeviceAddr, &gradWeight);
        CHECK_RET(ret == ACL_SUCCESS, return ret);
    }
    if (c.outputMask[2]) {
        ret = MakeTensor(biasShape, c.half, -1.0f, ACL_FORMAT_ND, &gradBiasDeviceAddr, &gradBias);
        CHECK_RET(ret == ACL_SUCCESS, return ret);
    }
    aclIntArray *biasSizes = c.biasSizes.empty() ? nullptr : aclCreateIntArray(c.biasSizes.data(), c.biasSizes.size());
    aclIntArray *stride = aclCreateIntArray(c.stride.data(), c.stride.size());
    aclIntArray *padding = aclCreateIntArray(c.padding.data(), c.padding.size());
    aclIntArray *dilation = aclCreateIntArray(c.dilation.data(), c.dilation.size());
    aclIntArray *outputPadding = aclCreateIntArray(c.outputPadding.data(), c.outputPadding.size());
    aclBoolArray *outputMask = aclCreateBoolArray(c.outputMask, 3);
    int8_t cubeMathType = 1;

    uint64_t workspaceSize = 0;
    aclOpExecutor *executor;
    ret = aclnnConvolutionBackwardGetWorkspaceSize(gradOutput, input, weight, biasSizes, stride, padding, dilation,
                                                   c.transposed, outputPadding, c.groups, outputMask, cubeMathType,
                                                   gradInput, gradWeight, gradBias, &workspaceSize, &executor);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclnnConvolutionBackwardGetWorkspaceSize failed. ERROR: %d\n", ret);
              return ret);
    LOG_PRINT("workspaceSize is: %llu\n", static_cast<unsigned long long>(workspaceSize));
    ret = RunPhase2("aclnnConvolutionBackward", aclnnConvolutionBackward, workspaceSize, executor, stream);
    CHECK_RET(ret == ACL_SUCCESS, return ret);

    if (c.outputMask[0]) {
        ret = PrintCaseResult(c.name, "gradInput", gradInputDeviceAddr, GetShapeSize(c.inputShape), c.half);
        CHECK_RET(ret == ACL_SUCCESS, return ret);
    }
    if (c.outputMask[1]) {
        ret = PrintCaseResult(c.name, "gradWeight", gradWeightDeviceAddr, GetShapeSize(c.weightShape), c.half);
        CHECK_RET(ret == ACL_SUCCESS, return ret);
    }
    if (c.outputMask[2]) {
        ret = PrintCaseResult(c.name, "gradBias", gradBiasDeviceAddr, cout, c.half);
        CHECK_RET(ret == ACL_SUCCESS, return ret);
    }

    aclDestroyTensor(gradOutput);
    aclDestroyTensor(input);
    aclDestroyTensor(weight);
    aclDestroyTensor(gradInput);
    aclDestroyTensor(gradWeight);
    aclDestroyTensor(gradBias);
    aclDestroyIntArray(biasSizes);
    aclDestroyIntArray(stride);
    aclDestroyIntArray(padding);
    aclDestroyIntArray(dilation);
    aclDestroyIntArray(outputPadding);
    aclDestroyBoolArray(outputMask);
    aclrtFree(gradDeviceAddr);
    aclrtFree(inputDeviceAddr);
    aclrtFree(weightDeviceAddr);
    if (gradInputDeviceAddr != nullptr) {
        aclrtFree(gradInputDeviceAddr);
    }
    if (gradWeightDeviceAddr != nullptr) {
        aclrtFree(gradWeightDeviceAddr);
    }
    if (gradBiasDeviceAddr != nullptr) {
        aclrtFree(gradBiasDeviceAddr);
    }
    return 0;
}

static int RunCases(aclrtStream stream)
{
    for (const ConvCase &c : Cases()) {
        auto ret = RunCase(stream, c);
        CHECK_RET(ret == ACL_SUCCESS, return ret);
    }
    return 0;
}

static int RunNegativeCases(aclrtStream stream)
{
    std::vector<int64_t> gradShape = {2, 6, 3, 4};
    std::vector<int64_t> badGradShape = {2, 6, 3, 5};
    std::vector<int64_t> inputShape = {2, 4, 5, 6};
    std::vector<int64_t> weightShape = {6, 2, 3, 3};
    std::vector<int64_t> biasShape = {6};
    void *addr[8] = {nullptr};
    aclTensor *gradOutput = nullptr, *badGradOutput = nullptr, *input = nullptr, *weight = nullptr;
    aclTensor *gradInput = nullptr, *gradWeight = nullptr, *gradBias = nullptr;
    int ret = MakeTensor(gradShape, false, 0.0f, ACL_FORMAT_NCHW, &addr[0], &gradOutput);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    ret = MakeTensor(badGradShape, false, 0.0f, ACL_FORMAT_NCHW, &addr[1], &badGradOutput);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    ret = MakeTensor(inputShape, false, 0.0f, ACL_FORMAT_NCHW, &addr[2], &input);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    ret = MakeTensor(weightShape, false, 0.0f, ACL_FORMAT_NCHW, &addr[3], &weight);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    ret = MakeTensor(inputShape, false, 0.0f, ACL_FORMAT_NCHW, &addr[4], &gradInput);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    ret = MakeTensor(weightShape, false, 0.0f, ACL_FORMAT_NCHW, &addr[5], &gradWeight);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    ret = MakeTensor(biasShape, false, 0.0f, ACL_FORMAT_ND, &addr[6], &gradBias);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    std::vector<int64_t> strideData = {2, 1}, paddingData = {1, 1}, dilationData = {1, 2}, zeros = {0, 0};
    std::vector<int64_t> negativePaddingData = {1, -1}, outputPaddingData = {1, 0}, biasData = {6};
    bool maskAll[3] = {true, true, true};
    aclIntArray *biasSizes = aclCreateIntArray(biasData.data(), 1);
    aclIntArray *stride = aclCreateIntArray(strideData.data(), 2);
    aclIntArray *padding = aclCreateIntArray(paddingData.data(), 2);
    aclIntArray *negativePadding = aclCreateIntArray(negativePaddingData.data(), 2);
    aclIntArray *dilation = aclCreateIntArray(dilationData.data(), 2);
    aclIntArray *outputPadding = aclCreateIntArray(zeros.data(), 2);
    aclIntArray *badOutputPadding = aclCreateIntArray(outputPaddingData.data(), 2);
    aclBoolArray *mask = aclCreateBoolArray(maskAll, 3);
    aclBoolArray *shortMask = aclCreateBoolArray(maskAll, 2);

    uint64_t workspaceSize = 0;
    aclOpExecutor *executor = nullptr;
    ret = aclnnConvolutionBackwardGetWorkspaceSize(gradOutput, input, weight, biasSizes, stride, padding, dilation,
                                                   false, outputPadding, 2, shortMask, 1, gradInput, gradWeight,
                                                   gradBias, &workspaceSize, &executor);
    Expect("outputMask with 2 elements", ret, ACLNN_ERR_PARAM_NULLPTR);
    ret = aclnnConvolutionBackwardGetWorkspaceSize(gradOutput, input, weight, biasSizes, stride, padding, dilation,
                                                   false, outputPadding, 2, mask, 1, nullptr, gradWeight, gradBias,
                                                   &workspaceSize, &executor);
    Expect("outputMask[0] with gradInput NULL", ret, ACLNN_ERR_PARAM_NULLPTR);
    ret = aclnnConvolutionBackwardGetWorkspaceSize(gradOutput, input, weight, biasSizes, stride, padding, dilation,
                                                   false, outputPadding, 3, mask, 1, gradInput, gradWeight, gradBias,
                                                   &workspaceSize, &executor);
    Expect("groups 3 for input C 4 and weight C 2", ret, ACLNN_ERR_PARAM_INVALID);
    ret = aclnnConvolutionBackwardGetWorkspaceSize(badGradOutput, input, weight, biasSizes, stride, padding, dilation,
                                                   false, outputPadding, 2, mask, 1, gradInput, gradWeight, gradBias,
                                                   &workspaceSize, &executor);
    Expect("gradOutput W differs from the convolution's output size", ret, ACLNN_ERR_PARAM_INVALID);
    ret = aclnnConvolutionBackwardGetWorkspaceSize(gradOutput, input, weight, biasSizes, stride, negativePadding,
                                                   dilation, false, outputPadding, 2, mask, 1, gradInput, gradWeight,
                                                   gradBias, &workspaceSize, &executor);
    Expect("negative padding", ret, ACLNN_ERR_PARAM_INVALID);
    ret = aclnnConvolutionBackwardGetWorkspaceSize(gradOutput, input, weight, biasSizes, stride, padding, dilation,
                                                   false, badOutputPadding, 2, mask, 1, gradInput, gradWeight,
                                                   gradBias, &workspaceSize, &executor);
    Expect("outputPadding without transposed", ret, ACLNN_ERR_PARAM_INVALID);
    ret = aclnnConvolutionBackwardGetWorkspaceSize(gradOutput, input, weight, biasSizes, stride, padding, dilation,
                                                   false, outputPadding, 2, mask, 4, gradInput, gradWeight, gradBias,
                                                   &workspaceSize, &executor);
    Expect("cubeMathType 4", ret, ACLNN_ERR_PARAM_INVALID);
    ret = aclnnConvolutionBackwardGetWorkspaceSize(gradOutput, input, weight, biasSizes, stride, padding, dilation,
                                                   false, outputPadding, 2, mask, 1, gradInput, gradWeight, gradBias,
                                                   nullptr, &executor);
    Expect("workspaceSize NULL", ret, ACLNN_ERR_PARAM_NULLPTR);

    /* Empty input (N = 0): success; gradWeight and gradBias are filled with zeros. */
    std::vector<int64_t> emptyGradShape = {0, 6, 3, 4};
    std::vector<int64_t> emptyInputShape = {0, 4, 5, 6};
    std::vector<float> noData;
    void *emptyAddr[3] = {nullptr};
    aclTensor *emptyGrad = nullptr, *emptyInput = nullptr, *emptyGradInput = nullptr;
    ret = CreateAclTensor(noData, emptyGradShape, ContiguousStrides(emptyGradShape), 0, &emptyAddr[0], ACL_FLOAT,
                          &emptyGrad, ACL_FORMAT_NCHW);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    ret = CreateAclTensor(noData, emptyInputShape, ContiguousStrides(emptyInputShape), 0, &emptyAddr[1], ACL_FLOAT,
                          &emptyInput, ACL_FORMAT_NCHW);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    ret = CreateAclTensor(noData, emptyInputShape, ContiguousStrides(emptyInputShape), 0, &emptyAddr[2], ACL_FLOAT,
                          &emptyGradInput, ACL_FORMAT_NCHW);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    ret = aclnnConvolutionBackwardGetWorkspaceSize(emptyGrad, emptyInput, weight, biasSizes, stride, padding, dilation,
                                                   false, outputPadding, 2, mask, 1, emptyGradInput, gradWeight,
                                                   gradBias, &workspaceSize, &executor);
    Expect("empty input is accepted", ret, ACL_SUCCESS);
    if (ret == ACL_SUCCESS) {
        void *workspaceAddr = nullptr;
        if (workspaceSize > 0) {
            aclrtMalloc(&workspaceAddr, workspaceSize, ACL_MEM_MALLOC_HUGE_FIRST);
        }
        Expect("empty input runs", aclnnConvolutionBackward(workspaceAddr, workspaceSize, executor, stream),
               ACL_SUCCESS);
        Expect("empty input synchronises", aclrtSynchronizeStream(stream), ACL_SUCCESS);
        std::vector<float> weights(GetShapeSize(weightShape), 1.0f);
        std::vector<float> bias(6, 1.0f);
        aclrtMemcpy(weights.data(), weights.size() * sizeof(float), addr[5], weights.size() * sizeof(float),
                    ACL_MEMCPY_DEVICE_TO_HOST);
        aclrtMemcpy(bias.data(), bias.size() * sizeof(float), addr[6], bias.size() * sizeof(float),
                    ACL_MEMCPY_DEVICE_TO_HOST);
        bool zeros = true;
        for (auto v : weights) {
            zeros = zeros && v == 0.0f;
        }
        for (auto v : bias) {
            zeros = zeros && v == 0.0f;
        }
        Expect("empty input gives zero gradWeight and gradBias", zeros ? 0 : 1, 0);
        if (workspaceSize > 0) {
            aclrtFree(workspaceAddr);
        }
    }

    aclDestroyTensor(gradOutput);
    aclDestroyTensor(badGradOutput);
    aclDestroyTensor(input);
    aclDestroyTensor(weight);
    aclDestroyTensor(gradInput);
    aclDestroyTensor(gradWeight);
    aclDestroyTensor(gradBias);
    aclDestroyTensor(emptyGrad);
    aclDestroyTensor(emptyInput);
    aclDestroyTensor(emptyGradInput);
    aclDestroyIntArray(biasSizes);
    aclDestroyIntArray(stride);
    aclDestroyIntArray(padding);
    aclDestroyIntArray(negativePadding);
    aclDestroyIntArray(dilation);
    aclDestroyIntArray(outputPadding);
    aclDestroyIntArray(badOutputPadding);
    aclDestroyBoolArray(mask);
    aclDestroyBoolArray(shortMask);
    for (auto a : addr) {
        if (a != nullptr) {
            aclrtFree(a);
        }
    }
    for (auto a : emptyAddr) {
        aclrtFree(a);
    }
    return 0;
}

int main()
{
    return RunSample({RunCases, RunNegativeCases});
}
