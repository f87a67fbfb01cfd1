/*
 * aclDumpOpTensors: with the operator dump on (aclInit's configuration file names a
 * dump_path), queue on the stream a task that writes each tensor's elements, in the view's
 * row-major order, to <dump_path>/<opType>.<opName>.<input|output>.<i>.bin (raw bytes,
 * aclDataTypeSize each).  CANN writes its own dump format; the simulator's is the raw data.
 * With the dump off the call only checks its arguments, as CANN's does nothing then.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../sim_internal.h"

#define PATH_CAPACITY 4096

struct dump_task {
    char dir[PATH_CAPACITY];
    char op_type[128];
    char op_name[128];
    size_t inputs, count;
    aclTensor tensors[]; /* copies taken at the call */
};

/* Append the view's elements to f in row-major order; 0 on a write error. */
static int write_view(FILE *f, const aclTensor *t)
{
    size_t elem = aclDataTypeSize(t->dtype);
    int64_t index[ACLSIM_MAX_DIMS] = {0};
    for (uint64_t d = 0; d < t->ndim; d++) {
        if (t->view_dims[d] == 0) {
            return 1;
        }
    }
    for (;;) {
        int64_t at = t->offset;
        for (uint64_t d = 0; d < t->ndim; d++) {
            at += index[d] * t->strides[d];
        }
        if (fwrite((const char *)t->data + at * (int64_t)elem, 1, elem, f) != elem) {
            return 0;
        }
        int64_t d = (int64_t)t->ndim - 1;
        for (; d >= 0 && ++index[d] == t->view_dims[d]; d--) {
            index[d] = 0;
        }
        if (d < 0) {
            return 1;
        }
    }
}

static aclError run_dump(void *ctx)
{
    const struct dump_task *task = ctx;
    for (size_t i = 0; i < task->count; i++) {
        const aclTensor *t = &task->tensors[i];
        int input = i < task->inputs;
        size_t k = input ? i : i - task->inputs;
        char path[PATH_CAPACITY + 300];
        snprintf(path, sizeof path, "%s/%s.%s.%s.%zu.bin", task->dir, task->op_type, task->op_name,
                 input ? "input" : "output", k);
        if (!aclsim_tensor_memory_ok(t)) {
            aclsim_set_error("aclDumpOpTensors: %s tensor %zu no longer lies in live device memory", input ? "input" : "output", k);
            return ACL_ERROR_RT_DEVICE_MEM_ERROR;
        }
        aclsim_device_prepare(t->data);
        FILE *f = fopen(path, "wb");
        int ok = f != NULL && write_view(f, t);
        if (f != NULL && fclose(f) != 0) {
            ok = 0;
        }
        if (!ok) {
            aclsim_set_error("aclDumpOpTensors: cannot write %s", path);
            return ACL_ERROR_RT_INTERNAL_ERROR;
        }
    }
    return ACL_SUCCESS;
}

aclnnStatus aclDumpOpTensors(const char *opType, const char *opName, aclTensor **tensors, size_t inputTensorNum,
                             size_t outputTensorNum, aclrtStream stream)
{
    static const char api[] = "aclDumpOpTensors";
    size_t count = inputTensorNum + outputTensorNum;
    if (opType == NULL || opName == NULL || (tensors == NULL && count > 0)) {
        aclsim_set_error("%s: %s must not be NULL", api, opType == NULL ? "opType" : opName == NULL ? "opName" : "tensors");
        return ACLNN_ERR_PARAM_NULLPTR;
    }
    if (count < inputTensorNum) {
        aclsim_set_error("%s: inputTensorNum + outputTensorNum overflows", api);
        return ACLNN_ERR_PARAM_INVALID;
    }
    for (size_t i = 0; i < count; i++) {
        if (tensors[i] == NULL || !aclsim_is_live_tensor(tensors[i])) {
            aclsim_set_error("%s: tensors[%zu] is %s", api, i, tensors[i] == NULL ? "NULL" : "not a live aclTensor");
            return tensors[i] == NULL ? ACLNN_ERR_PARAM_NULLPTR : ACLNN_ERR_PARAM_INVALID;
        }
        if (!aclsim_tensor_memory_ok(tensors[i])) {
            aclsim_set_error("%s: tensors[%zu] does not lie in live device memory", api, i);
            return ACLNN_ERR_PARAM_INVALID;
        }
    }
    char dir[PATH_CAPACITY];
    if (!aclsim_dump_path(dir, sizeof dir)) {
        return ACLNN_SUCCESS;
    }
    if (strlen(opType) >= 128 || strlen(opName) >= 128 || strchr(opType, '/') != NULL || strchr(opName, '/') != NULL) {
        aclsim_set_error("%s: opType and opName must be shorter than 128 characters and contain no '/'", api);
        return ACLNN_ERR_PARAM_INVALID;
    }
    struct dump_task *task = malloc(sizeof *task + count * sizeof(aclTensor));
    if (task == NULL) {
        aclsim_set_error("%s: out of host memory", api);
        return ACLNN_ERR_INNER;
    }
    strcpy(task->dir, dir);
    strcpy(task->op_type, opType);
    strcpy(task->op_name, opName);
    task->inputs = inputTensorNum;
    task->count = count;
    for (size_t i = 0; i < count; i++) {
        task->tensors[i] = *tensors[i];
    }
    aclError err = aclsim_stream_enqueue("aclDumpOpTensors", stream, run_dump, free, task);
    return err == ACL_SUCCESS ? ACLNN_SUCCESS : ACLNN_ERR_RUNTIME_ERROR;
}
