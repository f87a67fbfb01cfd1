/*
 * Stream capture (CANN's graph mode) on the simulator, the way an LLM-serving loop uses it:
 * an aclnn operator's phase 2 and a host function queued on a captured stream are recorded,
 * not run; executing the model runtime instance replays them, reading the inputs as they are
 * at each replay; destroying it releases what it holds (the captured executor).
 * The tasks of a model as CANN's task API shows them (aclmdlRIGetTasksByStream, their types,
 * sequence ids and parameters), a value write's parameters changed and a task disabled, both
 * applied by aclmdlRIUpdate, and a task group's kernel replaced through an update stream.
 * Prints "check <what>: ... ok|FAILED" lines and "failures: <n>"; exits non-zero on a failure.
 */
#include <cstring>
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

/* Queues ReflectionPad2dBackward (padding 1) of grad (1, 1, 5, 5) into out (1, 1, 3, 3) on
 * the stream, without synchronising: a captured or updating stream records it. */
static const uint64_t kWorkspaceBytes = 1 << 20;

static int QueuePadBackward(aclTensor *grad, aclTensor *self, aclTensor *out, aclIntArray *padding, void *workspace,
                            aclrtStream stream)
{
    uint64_t workspaceSize = 0;
    aclOpExecutor *executor = nullptr;
    auto ret = aclnnReflectionPad2dBackwardGetWorkspaceSize(grad, self, padding, out, &workspaceSize, &executor);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    CHECK_RET(workspaceSize <= kWorkspaceBytes, LOG_PRINT("workspace of %llu bytes\n", (unsigned long long)workspaceSize);
              return 1);
    return aclnnReflectionPad2dBackward(workspaceSize > 0 ? workspace : nullptr, workspaceSize, executor, stream);
}

static uint64_t ReadU64(void *deviceAddr)
{
    uint64_t v = 0;
    aclrtMemcpy(&v, 8, deviceAddr, 8, ACL_MEMCPY_DEVICE_TO_HOST);
    return v;
}

static int TaskApi(aclrtStream stream)
{
    std::vector<int64_t> selfShape = {1, 1, 3, 3}, gradShape = {1, 1, 5, 5};
    std::vector<float> ones(25, 1.0f), twos(25, 2.0f), zeros(9, 0.0f);
    void *onesAddr = nullptr, *twosAddr = nullptr, *selfAddr = nullptr, *outAddr = nullptr, *flag = nullptr;
    aclTensor *gradOnes = nullptr, *gradTwos = nullptr, *self = nullptr, *out = nullptr;
    auto ret = CreateAclTensor(ones, gradShape, ContiguousStrides(gradShape), 0, &onesAddr, ACL_FLOAT, &gradOnes);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    ret = CreateAclTensor(twos, gradShape, ContiguousStrides(gradShape), 0, &twosAddr, ACL_FLOAT, &gradTwos);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    ret = CreateAclTensor(zeros, selfShape, ContiguousStrides(selfShape), 0, &selfAddr, ACL_FLOAT, &self);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    ret = CreateAclTensor(zeros, selfShape, ContiguousStrides(selfShape), 0, &outAddr, ACL_FLOAT, &out);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    ret = aclrtMalloc(&flag, 8, ACL_MEM_MALLOC_HUGE_FIRST);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    aclrtMemset(flag, 8, 0, 8);
    void *workspace = nullptr;
    ret = aclrtMalloc(&workspace, kWorkspaceBytes, ACL_MEM_MALLOC_HUGE_FIRST);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    int64_t paddingData[4] = {1, 1, 1, 1};
    aclIntArray *padding = aclCreateIntArray(paddingData, 4);
    aclrtEvent event = nullptr;
    aclrtCreateEvent(&event);
    int hostCalls = 0;

    Expect("a task group needs a captured stream", aclmdlRICaptureTaskGrpBegin(stream), ACL_ERROR_RT_STREAM_NOT_CAPTURED);
    ret = aclmdlRICaptureBegin(stream, ACL_MODEL_RI_CAPTURE_MODE_RELAXED);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    aclrtValueWrite(flag, 5, 0, stream);
    aclrtRecordEvent(event, stream);
    aclrtTaskGrp group = nullptr;
    Expect("ending a task group never begun is refused", aclmdlRICaptureTaskGrpEnd(stream, &group),
           ACL_ERROR_RT_PARAM_INVALID);
    ret = aclmdlRICaptureTaskGrpBegin(stream);
    Check("a task group begins on the captured stream", ret == ACL_SUCCESS);
    Expect("a second group cannot begin inside it", aclmdlRICaptureTaskGrpBegin(stream), ACL_ERROR_RT_PARAM_INVALID);
    ret = QueuePadBackward(gradOnes, self, out, padding, workspace, stream);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    ret = aclmdlRICaptureTaskGrpEnd(stream, &group);
    Check("the task group ends with a handle", ret == ACL_SUCCESS && group != nullptr);
    Expect("an update cannot begin on a captured stream", aclmdlRICaptureTaskUpdateBegin(stream, group),
           ACL_ERROR_RT_STREAM_CAPTURED);
    aclrtLaunchHostFunc(stream, CountHostCall, &hostCalls);
    aclmdlRI model = nullptr;
    ret = aclmdlRICaptureEnd(stream, &model);
    CHECK_RET(ret == ACL_SUCCESS, return ret);

    uint32_t n = 0;
    ret = aclmdlRIGetTasksByStream(stream, nullptr, &n);
    Check("aclmdlRIGetTasksByStream counts the 4 recorded tasks", ret == ACL_SUCCESS && n == 4);
    std::vector<aclmdlRITask> tasks(4, nullptr);
    uint32_t room = 3;
    Expect("an array too small is refused", aclmdlRIGetTasksByStream(stream, tasks.data(), &room),
           ACL_ERROR_INVALID_PARAM);
    ret = aclmdlRIGetTasksByStream(stream, tasks.data(), &n);
    CHECK_RET(ret == ACL_SUCCESS && n == 4, return 1);
    const aclmdlRITaskType want[4] = {ACL_MODEL_RI_TASK_VALUE_WRITE, ACL_MODEL_RI_TASK_EVENT_RECORD,
                                      ACL_MODEL_RI_TASK_KERNEL, ACL_MODEL_RI_TASK_DEFAULT};
    bool typesOk = true, seqOk = true;
    for (uint32_t i = 0; i < 4; i++) {
        aclmdlRITaskType type = ACL_MODEL_RI_TASK_DEFAULT;
        uint32_t seq = 99;
        typesOk = typesOk && aclmdlRITaskGetType(tasks[i], &type) == ACL_SUCCESS && type == want[i];
        seqOk = seqOk && aclmdlRITaskGetSeqId(tasks[i], &seq) == ACL_SUCCESS && seq == i;
    }
    Check("the tasks' types are value write, event record, kernel, other", typesOk);
    Check("their sequence ids follow the order they were queued in", seqOk);
    aclmdlRITaskParams params;
    ret = aclmdlRITaskGetParams(tasks[0], &params);
    Check("a value write's parameters", ret == ACL_SUCCESS && params.type == ACL_MODEL_RI_TASK_VALUE_WRITE &&
                                        params.valueWriteTaskParams.devAddr == flag &&
                                        params.valueWriteTaskParams.value == 5 && params.taskGrp == nullptr);
    ret = aclmdlRITaskGetParams(tasks[1], &params);
    Check("an event record's parameters name the event", ret == ACL_SUCCESS &&
                                                         params.eventRecordTaskParams.event == event);
    ret = aclmdlRITaskGetParams(tasks[2], &params);
    Check("the kernel task belongs to the group", ret == ACL_SUCCESS && params.taskGrp == group);
    int bogus = 0;
    Expect("a task of no model is refused", aclmdlRITaskGetType(reinterpret_cast<aclmdlRITask>(&bogus), &params.type),
           ACL_ERROR_RT_PARAM_INVALID);

    ret = aclmdlRIExecute(model, -1);
    Check("the replay writes the value, the gradient and calls the host function",
          ret == ACL_SUCCESS && ReadU64(flag) == 5 && Read(outAddr, 9)[4] == 9.0f && hostCalls == 1);

    /* New parameters and a disabled task apply from aclmdlRIUpdate on. */
    aclmdlRITaskParams set;
    memset(&set, 0, sizeof set);
    set.type = ACL_MODEL_RI_TASK_VALUE_WRITE;
    set.valueWriteTaskParams.devAddr = flag;
    set.valueWriteTaskParams.value = 9;
    Check("a value write's parameters can be set", aclmdlRITaskSetParams(tasks[0], &set) == ACL_SUCCESS);
    Check("a task can be disabled", aclmdlRITaskDisable(tasks[3]) == ACL_SUCCESS);
    aclrtMemset(flag, 8, 0, 8);
    aclmdlRIExecute(model, -1);
    Check("before aclmdlRIUpdate the replay is unchanged", ReadU64(flag) == 5 && hostCalls == 2);
    Check("aclmdlRIUpdate applies them", aclmdlRIUpdate(model) == ACL_SUCCESS);
    aclmdlRIExecute(model, -1);
    Check("the replay writes the new value and skips the disabled task", ReadU64(flag) == 9 && hostCalls == 2);
    ret = aclmdlRITaskGetParams(tasks[0], &params);
    Check("the parameters read back", ret == ACL_SUCCESS && params.valueWriteTaskParams.value == 9);
    set.type = ACL_MODEL_RI_TASK_EVENT_RECORD;
    Expect("a type other than the task's is refused", aclmdlRITaskSetParams(tasks[0], &set), ACL_ERROR_INVALID_PARAM);
    Expect("an event task's parameters cannot be set", aclmdlRITaskSetParams(tasks[1], &set),
           ACL_ERROR_RT_TASK_TYPE_NOT_SUPPORT);
    set.type = ACL_MODEL_RI_TASK_KERNEL;
    Expect("a kernel task's parameters cannot be set", aclmdlRITaskSetParams(tasks[2], &set),
           ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
    set.type = ACL_MODEL_RI_TASK_VALUE_WRITE;
    set.valueWriteTaskParams.devAddr = &bogus;
    Expect("host memory as devAddr is refused", aclmdlRITaskSetParams(tasks[0], &set), ACL_ERROR_INVALID_PARAM);
    Expect("aclmdlRIUpdate of no model is refused", aclmdlRIUpdate(reinterpret_cast<aclmdlRI>(&bogus)),
           ACL_ERROR_RT_PARAM_INVALID);

    /* The group's kernel replaced through an update stream, in that stream's order. */
    aclrtStream update = nullptr;
    aclrtCreateStream(&update);
    Expect("ending an update never begun is refused", aclmdlRICaptureTaskUpdateEnd(update), ACL_ERROR_RT_PARAM_INVALID);
    Expect("an unknown group is refused", aclmdlRICaptureTaskUpdateBegin(update, reinterpret_cast<aclrtTaskGrp>(&bogus)),
           ACL_ERROR_RT_PARAM_INVALID);
    ret = aclmdlRICaptureTaskUpdateBegin(update, group);
    Check("an update begins on another stream", ret == ACL_SUCCESS);
    aclrtValueWrite(flag, 1, 0, update);
    aclrtValueWrite(flag, 2, 0, update);
    Expect("an update of other tasks than the group's is refused", aclmdlRICaptureTaskUpdateEnd(update),
           ACL_ERROR_INVALID_PARAM);
    aclrtSynchronizeStream(update);
    Check("the refused update's work never runs", ReadU64(flag) == 9);
    ret = aclmdlRICaptureTaskUpdateBegin(update, group);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    ret = QueuePadBackward(gradTwos, self, out, padding, workspace, update);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    ret = aclmdlRICaptureTaskUpdateEnd(update);
    Check("the update ends", ret == ACL_SUCCESS);
    aclrtMemset(outAddr, 36, 0, 36);
    aclmdlRIExecute(model, -1);
    Check("until the update stream runs the old kernel stays", Read(outAddr, 9)[4] == 9.0f);
    aclrtSynchronizeStream(update);
    Check("the update's kernel was not run on its stream", Read(outAddr, 9)[4] == 9.0f);
    aclmdlRIExecute(model, -1);
    Check("then the replay runs the new one", Read(outAddr, 9)[4] == 18.0f);
    aclsimCounters counters;
    aclsimGetCounters(&counters);
    Check("the replaced executor was released", counters.executors == 1);

    aclmdlRIDestroy(model);
    Expect("a destroyed model's tasks are refused", aclmdlRITaskGetSeqId(tasks[0], &n), ACL_ERROR_RT_PARAM_INVALID);
    Expect("a destroyed model's group is refused", aclmdlRICaptureTaskUpdateBegin(update, group),
           ACL_ERROR_RT_PARAM_INVALID);
    aclrtDestroyStream(update);
    aclrtDestroyEvent(event);
    aclDestroyTensor(gradOnes);
    aclDestroyTensor(gradTwos);
    aclDestroyTensor(self);
    aclDestroyTensor(out);
    aclDestroyIntArray(padding);
    aclrtFree(onesAddr);
    aclrtFree(twosAddr);
    aclrtFree(selfAddr);
    aclrtFree(outAddr);
    aclrtFree(flag);
    aclrtFree(workspace);
    return 0;
}

int main() { return RunSample({CaptureAndReplay, TaskApi}); }
