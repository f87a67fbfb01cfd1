/*
 * One training step of a linear classifier written against CANN's aclnn API, the way the
 * official samples are: forward, loss, backward and an SGD update, all on device buffers and one
 * stream, with a synchronisation only where the host reads a result.
 *
 *   logits = Addmm(bias, x, weight^T)           x (4, 6), weight (5, 6) read through a transposed view
 *   logp   = LogSoftmax(logits, dim 1)
 *   loss, totalWeight = NLLLoss(logp, target, classWeight, mean, ignoreIndex -100)
 *   gradLogp   = NLLLossBackward(1, logp, target, classWeight, mean, -100, totalWeight)
 *   gradLogits = LogSoftmaxBackward(gradLogp, logp, dim 1)
 *   gradWeight = Mm(gradLogits^T, x)             gradLogits read through a transposed view
 *   gradBias   = ReduceSum(gradLogits, dims [0], keepDims false, FLOAT)
 *   weight += -0.5 * gradWeight; bias += -0.5 * gradBias   (InplaceAdd on the same device memory)
 *
 * Inputs, rebuilt by tests/sim/test_c_ops.py: x[i] = value(i), weight[i] = value(i + 11),
 * bias[i] = value(i + 5), classWeight[i] = 1 + i / 4, target = {1, 4, 0, 2}.
 * Cases printed: "logits", "loss", "total_weight", "grad_logits", "weight", "bias". Negative
 * cases follow: each operator's documented refusals with their status codes.
 */
#include <vector>

#include "acl/acl.h"
#include "aclnnop/aclnn_add.h"
#include "aclnnop/aclnn_addmm.h"
#include "aclnnop/aclnn_logsoftmax.h"
#include "aclnnop/aclnn_logsoftmax_backward.h"
#include "aclnnop/aclnn_mm.h"
#include "aclnnop/aclnn_nll_loss.h"
#include "aclnnop/aclnn_nll_loss_backward.h"
#include "aclnnop/aclnn_reduce_sum.h"
#include "sample_common.h"

namespace {

const int64_t N = 4;
const int64_t K = 6;
const int64_t C = 5;
const int64_t MEAN = 1;
const int64_t IGNORE_INDEX = -100;

/* Every device buffer and descriptor of the step, released together by Release(). */
struct Step {
    void *xAddr = nullptr, *weightAddr = nullptr, *biasAddr = nullptr, *targetAddr = nullptr;
    void *classWeightAddr = nullptr, *logitsAddr = nullptr, *logpAddr = nullptr, *lossAddr = nullptr;
    void *totalWeightAddr = nullptr, *gradLossAddr = nullptr, *gradLogpAddr = nullptr;
    void *gradLogitsAddr = nullptr, *gradWeightAddr = nullptr, *gradBiasAddr = nullptr;
    aclTensor *x = nullptr, *weightT = nullptr, *weight = nullptr, *bias = nullptr, *target = nullptr;
    aclTensor *classWeight = nullptr, *logits = nullptr, *logp = nullptr, *loss = nullptr;
    aclTensor *totalWeight = nullptr, *gradLoss = nullptr, *gradLogp = nullptr, *gradLogits = nullptr;
    aclTensor *gradLogitsT = nullptr, *gradWeight = nullptr, *gradBias = nullptr;
    aclScalar *one = nullptr, *step = nullptr;
    aclIntArray *batchDim = nullptr;

    void Release()
    {
        for (aclTensor *t : {x, weightT, weight, bias, target, classWeight, logits, logp, loss, totalWeight, gradLoss,
                             gradLogp, gradLogits, gradLogitsT, gradWeight, gradBias}) {
            if (t != nullptr) {
                aclDestroyTensor(t);
            }
        }
        for (aclScalar *s : {one, step}) {
            if (s != nullptr) {
                aclDestroyScalar(s);
            }
        }
        if (batchDim != nullptr) {
            aclDestroyIntArray(batchDim);
        }
        for (void *p : {xAddr, weightAddr, biasAddr, targetAddr, classWeightAddr, logitsAddr, logpAddr, lossAddr,
                        totalWeightAddr, gradLossAddr, gradLogpAddr, gradLogitsAddr, gradWeightAddr, gradBiasAddr}) {
            if (p != nullptr) {
                aclrtFree(p);
            }
        }
    }
};

std::vector<float> Shifted(int64_t n, int64_t shift)
{
    std::vector<float> v(n);
    for (int64_t i = 0; i < n; i++) {
        v[i] = InputValue(i + shift);
    }
    return v;
}

/* A second descriptor over a tensor's device memory: a (rows, cols) view of a (cols, rows) storage. */
aclTensor *Transposed(void *addr, int64_t rows, int64_t cols)
{
    std::vector<int64_t> shape = {rows, cols};
    std::vector<int64_t> strides = {1, rows};
    int64_t storage = rows * cols;
    return aclCreateTensor(shape.data(), 2, ACL_FLOAT, strides.data(), 0, ACL_FORMAT_ND, &storage, 1, addr);
}

/* Phase 1 failed: print it and stop the case. */
int Phase1Failed(const char *name, aclnnStatus ret)
{
    LOG_PRINT("%sGetWorkspaceSize failed. ERROR: %d (%s)\n", name, ret, aclGetRecentErrMsg());
    return ret == 0 ? -1 : ret;
}

/* Phase 2 without a synchronisation: the next operator on the stream runs after it. */
int Launch(const char *name, AclnnPhase2 phase2, uint64_t workspaceSize, aclOpExecutor *executor,
           aclrtStream stream, std::vector<void *> &workspaces)
{
    void *workspace = nullptr;
    if (workspaceSize > 0) {
        auto ret = aclrtMalloc(&workspace, workspaceSize, ACL_MEM_MALLOC_HUGE_FIRST);
        CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("allocate workspace failed. ERROR: %d\n", ret); return ret);
        workspaces.push_back(workspace);
    }
    auto ret = phase2(workspace, workspaceSize, executor, stream);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("%s failed. ERROR: %d\n", name, ret); return ret);
    return 0;
}

int Buffers(Step &s)
{
    std::vector<int64_t> target = {1, 4, 0, 2};
    std::vector<float> classWeight(C);
    for (int64_t i = 0; i < C; i++) {
        classWeight[i] = 1.0f + static_cast<float>(i) / 4.0f;
    }
    std::vector<float> one = {1.0f};
    int ret = CreateAclTensor(InputValues(N * K), {N, K}, {K, 1}, 0, &s.xAddr, ACL_FLOAT, &s.x);
    ret = ret != 0 ? ret : CreateAclTensor(Shifted(C * K, 11), {C, K}, {K, 1}, 0, &s.weightAddr, ACL_FLOAT, &s.weight);
    ret = ret != 0 ? ret : CreateAclTensor(Shifted(C, 5), {C}, {1}, 0, &s.biasAddr, ACL_FLOAT, &s.bias);
    ret = ret != 0 ? ret : CreateAclTensor(target, {N}, {1}, 0, &s.targetAddr, ACL_INT64, &s.target);
    ret = ret != 0 ? ret : CreateAclTensor(classWeight, {C}, {1}, 0, &s.classWeightAddr, ACL_FLOAT, &s.classWeight);
    ret = ret != 0 ? ret : CreateAclTensor(std::vector<float>(N * C), {N, C}, {C, 1}, 0, &s.logitsAddr, ACL_FLOAT,
                                           &s.logits);
    ret = ret != 0 ? ret : CreateAclTensor(std::vector<float>(N * C), {N, C}, {C, 1}, 0, &s.logpAddr, ACL_FLOAT,
                                           &s.logp);
    ret = ret != 0 ? ret : CreateAclTensor(std::vector<float>(1), {}, {}, 0, &s.lossAddr, ACL_FLOAT, &s.loss);
    ret = ret != 0 ? ret : CreateAclTensor(std::vector<float>(1), {}, {}, 0, &s.totalWeightAddr, ACL_FLOAT,
                                           &s.totalWeight);
    ret = ret != 0 ? ret : CreateAclTensor(one, {}, {}, 0, &s.gradLossAddr, ACL_FLOAT, &s.gradLoss);
    ret = ret != 0 ? ret : CreateAclTensor(std::vector<float>(N * C), {N, C}, {C, 1}, 0, &s.gradLogpAddr, ACL_FLOAT,
                                           &s.gradLogp);
    ret = ret != 0 ? ret : CreateAclTensor(std::vector<float>(N * C), {N, C}, {C, 1}, 0, &s.gradLogitsAddr,
                                           ACL_FLOAT, &s.gradLogits);
    ret = ret != 0 ? ret : CreateAclTensor(std::vector<float>(C * K), {C, K}, {K, 1}, 0, &s.gradWeightAddr,
                                           ACL_FLOAT, &s.gradWeight);
    ret = ret != 0 ? ret : CreateAclTensor(std::vector<float>(C), {C}, {1}, 0, &s.gradBiasAddr, ACL_FLOAT,
                                           &s.gradBias);
    CHECK_RET(ret == 0, return ret);
    s.weightT = Transposed(s.weightAddr, K, C);        /* weight^T: (K, C) over weight's (C, K) storage */
    s.gradLogitsT = Transposed(s.gradLogitsAddr, C, N); /* gradLogits^T: (C, N) over its (N, C) storage */
    float oneValue = 1.0f;
    float stepValue = -0.5f;
    s.one = aclCreateScalar(&oneValue, ACL_FLOAT);
    s.step = aclCreateScalar(&stepValue, ACL_FLOAT);
    int64_t dims[] = {0};
    s.batchDim = aclCreateIntArray(dims, 1);
    CHECK_RET(s.weightT && s.gradLogitsT && s.one && s.step && s.batchDim, LOG_PRINT("create failed\n"); return -1);
    return 0;
}

/* The step: every operator queued on the stream, one synchronisation at the end. */
int Queue(Step &s, aclrtStream stream, std::vector<void *> &workspaces)
{
    uint64_t size = 0;
    aclOpExecutor *executor = nullptr;
    aclnnStatus ret = aclnnAddmmGetWorkspaceSize(s.bias, s.x, s.weightT, s.one, s.one, s.logits, 0, &size, &executor);
    CHECK_RET(ret == ACL_SUCCESS, return Phase1Failed("aclnnAddmm", ret));
    CHECK_RET(Launch("aclnnAddmm", aclnnAddmm, size, executor, stream, workspaces) == 0, return -1);
    ret = aclnnLogSoftmaxGetWorkspaceSize(s.logits, 1, s.logp, &size, &executor);
    CHECK_RET(ret == ACL_SUCCESS, return Phase1Failed("aclnnLogSoftmax", ret));
    CHECK_RET(Launch("aclnnLogSoftmax", aclnnLogSoftmax, size, executor, stream, workspaces) == 0, return -1);
    ret = aclnnNLLLossGetWorkspaceSize(s.logp, s.target, s.classWeight, MEAN, IGNORE_INDEX, s.loss, s.totalWeight,
                                       &size, &executor);
    CHECK_RET(ret == ACL_SUCCESS, return Phase1Failed("aclnnNLLLoss", ret));
    CHECK_RET(Launch("aclnnNLLLoss", aclnnNLLLoss, size, executor, stream, workspaces) == 0, return -1);
    ret = aclnnNLLLossBackwardGetWorkspaceSize(s.gradLoss, s.logp, s.target, s.classWeight, MEAN, IGNORE_INDEX,
                                               s.totalWeight, s.gradLogp, &size, &executor);
    CHECK_RET(ret == ACL_SUCCESS, return Phase1Failed("aclnnNLLLossBackward", ret));
    CHECK_RET(Launch("aclnnNLLLossBackward", aclnnNLLLossBackward, size, executor, stream, workspaces) == 0,
              return -1);
    ret = aclnnLogSoftmaxBackwardGetWorkspaceSize(s.gradLogp, s.logp, 1, s.gradLogits, &size, &executor);
    CHECK_RET(ret == ACL_SUCCESS, return Phase1Failed("aclnnLogSoftmaxBackward", ret));
    CHECK_RET(Launch("aclnnLogSoftmaxBackward", aclnnLogSoftmaxBackward, size, executor, stream, workspaces) == 0,
              return -1);
    ret = aclnnMmGetWorkspaceSize(s.gradLogitsT, s.x, s.gradWeight, 0, &size, &executor);
    CHECK_RET(ret == ACL_SUCCESS, return Phase1Failed("aclnnMm", ret));
    CHECK_RET(Launch("aclnnMm", aclnnMm, size, executor, stream, workspaces) == 0, return -1);
    ret = aclnnReduceSumGetWorkspaceSize(s.gradLogits, s.batchDim, false, ACL_FLOAT, s.gradBias, &size, &executor);
    CHECK_RET(ret == ACL_SUCCESS, return Phase1Failed("aclnnReduceSum", ret));
    CHECK_RET(Launch("aclnnReduceSum", aclnnReduceSum, size, executor, stream, workspaces) == 0, return -1);
    ret = aclnnInplaceAddGetWorkspaceSize(s.weight, s.gradWeight, s.step, &size, &executor);
    CHECK_RET(ret == ACL_SUCCESS, return Phase1Failed("aclnnInplaceAdd", ret));
    CHECK_RET(Launch("aclnnInplaceAdd", aclnnInplaceAdd, size, executor, stream, workspaces) == 0, return -1);
    ret = aclnnInplaceAddGetWorkspaceSize(s.bias, s.gradBias, s.step, &size, &executor);
    CHECK_RET(ret == ACL_SUCCESS, return Phase1Failed("aclnnInplaceAdd", ret));
    return Launch("aclnnInplaceAdd", aclnnInplaceAdd, size, executor, stream, workspaces);
}

int Print(const Step &s)
{
    const char *names[] = {"logits", "loss", "total_weight", "grad_logits", "weight", "bias"};
    const void *addrs[] = {s.logitsAddr, s.lossAddr, s.totalWeightAddr, s.gradLogitsAddr, s.weightAddr, s.biasAddr};
    const int64_t counts[] = {N * C, 1, 1, N * C, C * K, C};
    for (int i = 0; i < 6; i++) {
        LOG_PRINT("== case %s ==\n", names[i]);
        int ret = PrintResult<float>(addrs[i], counts[i]);
        CHECK_RET(ret == 0, return ret);
    }
    return 0;
}

/* The step, then some refusals on its own tensors: each operator's check and status code. */
int RunStep(aclrtStream stream)
{
    Step s;
    std::vector<void *> workspaces;
    int ret = Buffers(s);
    ret = ret != 0 ? ret : Queue(s, stream, workspaces);
    if (ret == 0) {
        ret = aclrtSynchronizeStream(stream);
        if (ret != 0) {
            LOG_PRINT("aclrtSynchronizeStream failed. ERROR: %d\n", ret);
        }
    }
    for (void *w : workspaces) {
        aclrtFree(w);
    }
    ret = ret != 0 ? ret : Print(s);
    if (ret == 0) {
        uint64_t size = 0;
        aclOpExecutor *executor = nullptr;
        Expect("Addmm: mat1 (4, 6) @ mat2 (5, 6) do not chain",
               aclnnAddmmGetWorkspaceSize(s.bias, s.x, s.weight, s.one, s.one, s.logits, 0, &size, &executor),
               ACLNN_ERR_PARAM_INVALID);
        Expect("LogSoftmax: dim 2 of a 2-D self",
               aclnnLogSoftmaxGetWorkspaceSize(s.logits, 2, s.logp, &size, &executor), ACLNN_ERR_PARAM_INVALID);
        Expect("NLLLoss: reduction 3",
               aclnnNLLLossGetWorkspaceSize(s.logp, s.target, s.classWeight, 3, IGNORE_INDEX, s.loss, s.totalWeight,
                                            &size, &executor),
               ACLNN_ERR_PARAM_INVALID);
        Expect("NLLLoss: weight NULL",
               aclnnNLLLossGetWorkspaceSize(s.logp, s.target, nullptr, MEAN, IGNORE_INDEX, s.loss, s.totalWeight,
                                            &size, &executor),
               ACLNN_ERR_PARAM_NULLPTR);
        Expect("Mm: self (4, 6) and mat2 (4, 5) do not chain",
               aclnnMmGetWorkspaceSize(s.x, s.gradLogits, s.gradWeight, 0, &size, &executor), ACLNN_ERR_PARAM_INVALID);
        Expect("ReduceSum: out dtype INT64 is not the dtype argument FLOAT",
               aclnnReduceSumGetWorkspaceSize(s.gradLogits, s.batchDim, false, ACL_FLOAT, s.target, &size, &executor),
               ACLNN_ERR_PARAM_INVALID);
        Expect("InplaceAdd: other (4, 5) does not broadcast to selfRef (5, 6)",
               aclnnInplaceAddGetWorkspaceSize(s.weight, s.logits, s.step, &size, &executor),
               ACLNN_ERR_PARAM_INVALID);
    }
    s.Release();
    return ret;
}

}  // namespace

int main()
{
    return RunSample({RunStep});
}
