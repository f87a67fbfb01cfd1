/*
 * Stream capture (CANN's graph mode) on the simulator, the way an LLM-serving loop uses it:
 * an aclnn operator's phase 2 and a host function queued on a captured stream are recorded,
 * not run; executing the model runtime instance replays them, reading the inputs as they are
 * at each replay; destroying it releases what it holds (the captured executor).
 * Prints "check <what>: ... ok|FAILED" lines and "failures: <n>"; exits non-zero on a failure.
 */
#include <vector>

#include "acl/acl.h"
#include "aclnnop/aclnn_pad2d_backward.h"
#include "sample_common.h"

static int g_hostCalls = 0;

static void CountHostCall(void *args) { (*static_cast<int *>(args))++; }

static void Check(const char *what, bool ok)
{
    LOG_PRINT("check %s: %s\n", what, ok ? "ok" : "FAILED");
    if (!ok) {
        g_failures++;
    }
}

static std::vector<float> Read(void *deviceAddr, size_t n)
{
    std::vector<float> out(n, -1.0f);
    aclrtMemcpy(out.data(), n * sizeof(float), deviceAddr, n * sizeof(float), ACL_MEMCPY_DEVICE_TO_HOST);
    return out;
}

static int CaptureAndReplay(aclrtStream stream)
{
    /* gradInput of ReflectionPad2dBackward: self (1, 1, 3, 3), padding 1 on every side. */
    std::vector<int64_t> selfShape = {1, 1, 3, 3}, gradShape = {1, 1, 5, 5};
    std::vector<float> ones(25, 1.0f), twos(25, 2.0f), zeros(9, 0.0f);
    void *gradAddr = nullptr, *selfAddr = nullptr, *outAddr = nullptr;
    aclTensor *grad = nullptr, *self = nullptr, *out = nullptr;
    auto ret = CreateAclTensor(ones, gradShape, ContiguousStrides(gradShape), 0, &gradAddr, ACL_FLOAT, &grad);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    ret = CreateAclTensor(zeros, selfShape, ContiguousStrides(selfShape), 0, &selfAddr, ACL_FLOAT, &self);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    ret = CreateAclTensor(zeros, selfShape, ContiguousStrides(selfShape), 0, &outAddr, ACL_FLOAT, &out);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    std::vector<int64_t> paddingData = {1, 1, 1, 1};
    aclIntArray *padding = aclCreateIntArray(paddingData.data(), 4);

    /* The reference: the operator run directly. */
    uint64_t workspaceSize = 0;
    aclOpExecutor *executor = nullptr;
    ret = aclnnReflectionPad2dBackwardGetWorkspaceSize(grad, self, padding, out, &workspaceSize, &executor);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    ret = RunPhase2("aclnnReflectionPad2dBackward", aclnnReflectionPad2dBackward, workspaceSize, executor, stream);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    std::vector<float> reference = Read(outAddr, 9);
    Check("the direct run writes gradInput", reference[0] == 1.0f && reference[4] == 9.0f);
    aclrtMemset(outAddr, 36, 0, 36);

    /* Capture phase 2 and a host function. */
    Expect("capturing the default stream is refused", aclmdlRICaptureBegin(nullptr, ACL_MODEL_RI_CAPTURE_MODE_RELAXED),
           ACL_ERROR_RT_PARAM_INVALID);
    ret = aclmdlRICaptureBegin(stream, ACL_MODEL_RI_CAPTURE_MODE_RELAXED);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclmdlRICaptureBegin failed. ERROR: %d\n", ret); return ret);
    aclmdlRICaptureStatus status = ACL_MODEL_RI_CAPTURE_STATUS_NONE;
    aclmdlRI captured = nullptr;
    ret = aclmdlRICaptureGetInfo(stream, &status, &captured);
    Check("the stream reports an active capture", ret == ACL_SUCCESS && status == ACL_MODEL_RI_CAPTURE_STATUS_ACTIVE &&
                                                  captured != nullptr);
    Expect("a second capture of the stream is refused", aclmdlRICaptureBegin(stream, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL),
           ACL_ERROR_RT_STREAM_CAPTURED);
    ret = aclnnReflectionPad2dBackwardGetWorkspaceSize(grad, self, padding, out, &workspaceSize, &executor);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    void *workspace = nullptr;
    if (workspaceSize > 0) {
        aclrtMalloc(&workspace, workspaceSize, ACL_MEM_MALLOC_HUGE_FIRST);
    }
    ret = aclnnReflectionPad2dBackward(workspace, workspaceSize, executor, stream);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    ret = aclrtLaunchHostFunc(stream, CountHostCall, &g_hostCalls);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    aclmdlRI model = nullptr;
    ret = aclmdlRICaptureEnd(stream, &model);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclmdlRICaptureEnd failed. ERROR: %d\n", ret); return ret);
    Check("the model is the one GetInfo named", model == captured);
    Expect("ending a capture twice is refused", aclmdlRICaptureEnd(stream, &captured), ACL_ERROR_RT_STREAM_NOT_CAPTURED);
    aclrtSynchronizeStream(stream);
    Check("captured work is recorded, not run", Read(outAddr, 9)[4] == 0.0f && g_hostCalls == 0);

    /* Replays. */
    ret = aclmdlRIExecuteAsync(model, stream);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclmdlRIExecuteAsync failed. ERROR: %d\n", ret); return ret);
    Check("a queued replay waits for the stream", g_hostCalls == 0);
    aclrtSynchronizeStream(stream);
    Check("the first replay gives the direct run's result", Read(outAddr, 9) == reference && g_hostCalls == 1);
    aclrtMemcpy(gradAddr, 100, twos.data(), 100, ACL_MEMCPY_HOST_TO_DEVICE);
    aclmdlRIExecuteAsync(model, stream);
    aclrtSynchronizeStream(stream);
    std::vector<float> doubled = Read(outAddr, 9);
    bool twice = g_hostCalls == 2;
    for (int i = 0; i < 9; i++) {
        twice = twice && doubled[i] == 2.0f * reference[i];
    }
    Check("a replay reads the inputs as they are now", twice);
    ret = aclmdlRIExecute(model, -1);
    Check("aclmdlRIExecute replays at once", ret == ACL_SUCCESS && g_hostCalls == 3);
    uint32_t id = 0;
    Check("the model has an id", aclmdlRIGetId(model, &id) == ACL_SUCCESS && id > 0);

    aclsimCounters before;
    aclsimGetCounters(&before);
    Check("the model holds the captured executor", before.executors == 1);
    ret = aclmdlRIDestroy(model);
    aclsimCounters after;
    aclsimGetCounters(&after);
    Check("destroying the model releases it", ret == ACL_SUCCESS && after.executors == 0);
    Expect("a destroyed model cannot run", aclmdlRIExecuteAsync(model, stream), ACL_ERROR_RT_PARAM_INVALID);

    aclDestroyTensor(grad);
    aclDestroyTensor(self);
    aclDestroyTensor(out);
    aclDestroyIntArray(padding);
    aclrtFree(gradAddr);
    aclrtFree(selfAddr);
    aclrtFree(outAddr);
    if (workspace != nullptr) {
        aclrtFree(workspace);
    }
    return 0;
}

int main() { return RunSample({CaptureAndReplay}); }
