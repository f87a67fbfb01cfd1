/*
 * The nnopbase functions that re-point a repeatable executor's tensors (aclSetTensorAddr,
 * aclSetDynamic{Input,Output,}TensorAddr and their capitalised aliases), checked by what
 * phase 2 computes afterwards, and aclDumpOpTensors.  Uses the FakeSum test operator
 * (fake_sum_op.c): outs[i] = xs[i] + bias, prototype order xs (0), bias (1), outs (2).
 *
 * usage: tensor_addr_test <acl.json turning the dump on>
 * Prints "FAIL ..." lines and exits 1 on a failed check.
 */
#include <stdio.h>
#include <string.h>

#include "acl/acl.h"
#include "aclnn/aclnn_base.h"
#include "opdev/op_errno.h"

aclnnStatus aclnnFakeSumGetWorkspaceSize(const aclTensorList *xs, const aclTensor *bias, aclTensorList *outs,
                                         uint64_t *workspaceSize, aclOpExecutor **executor);
aclnnStatus aclnnFakeSum(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream);

#define N 4
static int failures;

static void check(int ok, const char *what)
{
    if (!ok) {
        printf("FAIL %s (%s)\n", what, aclGetRecentErrMsg() ? aclGetRecentErrMsg() : "no message");
        failures++;
    }
}

static void *device(float value)
{
    float host[N];
    void *p = NULL;
    for (int i = 0; i < N; i++) {
        host[i] = value + (float)i;
    }
    aclrtMalloc(&p, sizeof host, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMemcpy(p, sizeof host, host, sizeof host, ACL_MEMCPY_HOST_TO_DEVICE);
    return p;
}

/* 1 if the device buffer holds base + i + bias + i for each i. */
static int holds(void *p, float base, float bias)
{
    float host[N];
    aclrtMemcpy(host, sizeof host, p, sizeof host, ACL_MEMCPY_DEVICE_TO_HOST);
    for (int i = 0; i < N; i++) {
        if (host[i] != base + bias + 2.0f * (float)i) {
            return 0;
        }
    }
    return 1;
}

static aclTensor *tensor(void *data)
{
    int64_t shape[1] = {N};
    return aclCreateTensor(shape, 1, ACL_FLOAT, NULL, 0, ACL_FORMAT_ND, shape, 1, data);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        return 2;
    }
    check(aclInit(argv[1]) == ACL_SUCCESS, "aclInit with the dump configuration");
    aclrtSetDevice(0);
    aclrtStream stream = NULL;
    aclrtCreateStream(&stream);

    void *x0 = device(10), *x1 = device(20), *bias = device(1), *out0 = device(0), *out1 = device(0);
    aclTensor *xsItems[2] = {tensor(x0), tensor(x1)};
    aclTensor *outsItems[2] = {tensor(out0), tensor(out1)};
    aclTensorList *xs = aclCreateTensorList((const aclTensor *const *)xsItems, 2);
    aclTensorList *outs = aclCreateTensorList((const aclTensor *const *)outsItems, 2);
    aclTensor *biasTensor = tensor(bias);

    uint64_t workspaceSize = 0;
    aclOpExecutor *executor = NULL;
    check(aclnnFakeSumGetWorkspaceSize(xs, biasTensor, outs, &workspaceSize, &executor) == ACLNN_SUCCESS, "phase 1");
    check(aclSetAclOpExecutorRepeatable(executor) == ACLNN_SUCCESS, "repeatable");
    check(aclnnFakeSum(NULL, 0, executor, stream) == ACLNN_SUCCESS, "run 1");
    aclrtSynchronizeStream(stream);
    check(holds(out0, 10, 1) && holds(out1, 20, 1), "run 1 computes xs[i] + bias");

    /* New inputs: xs[1] through its list position, bias through the flat index (xs[0],
     * xs[1], bias, outs[0], outs[1]); a new output through the output list. */
    void *x1b = device(300), *biasB = device(5), *out0b = device(0);
    check(aclSetDynamicInputTensorAddr(executor, 0, 1, xs, x1b) == ACLNN_SUCCESS, "aclSetDynamicInputTensorAddr");
    check(aclSetTensorAddr(executor, 2, biasTensor, biasB) == ACLNN_SUCCESS, "aclSetTensorAddr");
    check(aclSetDynamicOutputTensorAddr(executor, 0, 0, outs, out0b) == ACLNN_SUCCESS,
          "aclSetDynamicOutputTensorAddr");
    void *raw = NULL;
    aclGetRawTensorAddr(xsItems[1], &raw);
    check(raw == x1b, "the list's own element gets the new address");
    aclGetRawTensorAddr(biasTensor, &raw);
    check(raw == biasB, "the caller's tensor gets the new address");
    check(aclnnFakeSum(NULL, 0, executor, stream) == ACLNN_SUCCESS, "run 2");
    aclrtSynchronizeStream(stream);
    check(holds(out0b, 10, 5) && holds(out1, 300, 5), "run 2 reads and writes the new addresses");
    check(holds(out0, 10, 1), "run 2 leaves the old output alone");

    /* aclSetDynamicTensorAddr counts arguments across inputs then outputs: outs is 2. */
    void *out1b = device(0);
    check(AclSetDynamicTensorAddr(executor, 2, 1, outs, out1b) == ACLNN_SUCCESS, "AclSetDynamicTensorAddr");
    check(AclSetTensorAddr(executor, 0, xsItems[0], x1b) == ACLNN_SUCCESS, "AclSetTensorAddr");
    check(aclnnFakeSum(NULL, 0, executor, stream) == ACLNN_SUCCESS, "run 3");
    aclrtSynchronizeStream(stream);
    check(holds(out1b, 300, 5) && holds(out0b, 300, 5), "run 3 uses the dynamic output and flat input addresses");

    /* The documented failures. */
    check(aclSetDynamicInputTensorAddr(executor, 1, 0, xs, x0) == ACLNN_ERR_PARAM_INVALID, "bias is no list");
    check(aclSetDynamicInputTensorAddr(executor, 2, 0, xs, x0) == ACLNN_ERR_PARAM_INVALID, "irIndex past the inputs");
    check(aclSetDynamicTensorAddr(executor, 3, 0, outs, x0) == ACLNN_ERR_PARAM_INVALID, "irIndex past all");
    check(aclSetDynamicOutputTensorAddr(executor, 0, 2, outs, x0) == ACLNN_ERR_PARAM_INVALID, "relativeIndex 2 of 2");
    check(aclSetDynamicOutputTensorAddr(NULL, 0, 0, outs, x0) == ACLNN_ERR_INNER_NULLPTR, "executor NULL");
    check(aclSetDynamicOutputTensorAddr(executor, 0, 0, NULL, x0) == ACLNN_ERR_INNER_NULLPTR, "tensors NULL");
    check(aclSetTensorAddr(executor, 5, biasTensor, x0) == ACLNN_ERR_PARAM_INVALID, "flat index 5 of 5");
    check(aclSetTensorAddr(executor, 0, NULL, x0) == ACLNN_ERR_INNER_NULLPTR, "tensor NULL");
    check(AclSetInputTensorAddr(executor, 2, biasTensor, biasB) == ACLNN_SUCCESS, "AclSetInputTensorAddr");
    check(AclSetOutputTensorAddr(executor, 1, outsItems[1], out1b) == ACLNN_SUCCESS, "AclSetOutputTensorAddr");
    check(AclSetDynamicInputTensorAddr(executor, 0, 0, xs, x0) == ACLNN_SUCCESS, "AclSetDynamicInputTensorAddr");
    check(AclSetDynamicOutputTensorAddr(executor, 0, 0, outs, out0b) == ACLNN_SUCCESS, "AclSetDynamicOutputTensorAddr");
    check(aclDestroyAclOpExecutor(executor) == ACLNN_SUCCESS, "aclDestroyAclOpExecutor");

    /* The dump (on: aclInit's configuration names a dump_path), queued on the stream. */
    aclTensor *dumped[3] = {xsItems[0], biasTensor, outsItems[0]};
    check(aclDumpOpTensors("FakeSum", "fake_sum", dumped, 2, 1, stream) == ACLNN_SUCCESS, "aclDumpOpTensors");
    check(aclrtSynchronizeStream(stream) == ACL_SUCCESS, "the dump runs at synchronisation");
    check(aclDumpOpTensors(NULL, "x", dumped, 1, 0, stream) == ACLNN_ERR_PARAM_NULLPTR, "opType NULL");
    check(aclDumpOpTensors("FakeSum", "x", NULL, 1, 0, stream) == ACLNN_ERR_PARAM_NULLPTR, "tensors NULL");
    /* Off after aclFinalize and an aclInit without configuration: nothing is written. */
    aclrtSynchronizeStream(stream);
    aclFinalize();
    check(aclInit(NULL) == ACL_SUCCESS, "aclInit without configuration");
    check(aclDumpOpTensors("FakeSum", "off", dumped, 2, 1, stream) == ACLNN_SUCCESS, "aclDumpOpTensors, dump off");
    aclrtSynchronizeStream(stream);

    aclDestroyTensorList(xs);
    aclDestroyTensorList(outs);
    aclDestroyTensor(biasTensor);
    void *blocks[] = {x0, x1, bias, out0, out1, x1b, biasB, out0b, out1b};
    for (size_t i = 0; i < sizeof blocks / sizeof blocks[0]; i++) {
        aclrtFree(blocks[i]);
    }
    aclrtDestroyStream(stream);
    aclrtResetDevice(0);
    aclFinalize();
    printf("%s\n", failures == 0 ? "PASS" : "FAILED");
    return failures == 0 ? 0 : 1;
}
