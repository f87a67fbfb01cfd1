/*
 * Changing the device addresses a repeatable executor's phase 2 uses: aclSetTensorAddr
 * (tensors counted across inputs then outputs, list elements one by one) and the
 * aclSetDynamic*TensorAddr family (an element of a tensor-list argument, named by the
 * argument's position in the operator's prototype and the element's position in the list).
 * The caller's own descriptor (tensor, or the list's element) gets the new address too.
 * CANN declares each also with a capitalised name (AclSet...); both names are defined.
 */
#include "../sim_internal.h"
#include "executor_internal.h"
#include "registry.h"

static aclnnStatus set_addr(aclOpExecutor *executor, size_t index, aclTensor *tensor, void *addr, const char *api)
{
    if (executor == NULL || tensor == NULL) {
        aclsim_set_error("%s: %s must not be NULL", api, executor == NULL ? "executor" : "tensor");
        return ACLNN_ERR_INNER_NULLPTR;
    }
    aclnnStatus status = nn_executor_set_addr(executor, NN_BOTH, index, addr, api);
    if (status == ACLNN_SUCCESS && aclsim_is_live_tensor(tensor)) {
        tensor->data = addr;
    }
    return status;
}

static aclnnStatus set_list_addr(aclOpExecutor *executor, enum nn_side side, size_t ir_index, size_t relative,
                                 aclTensorList *tensors, void *addr, const char *api)
{
    if (executor == NULL || tensors == NULL) {
        aclsim_set_error("%s: %s must not be NULL", api, executor == NULL ? "executor" : "tensors");
        return ACLNN_ERR_INNER_NULLPTR;
    }
    pthread_mutex_lock(&nn_lock);
    int live = nn_kind_locked(tensors) == NN_TENSOR_LIST;
    uint64_t size = live ? tensors->size : 0;
    pthread_mutex_unlock(&nn_lock);
    if (!live) {
        aclsim_set_error("%s: %p is not a live aclTensorList", api, (void *)tensors);
        return ACLNN_ERR_PARAM_INVALID;
    }
    if (relative >= size) {
        aclsim_set_error("%s: relativeIndex %zu is out of range: the list has %llu tensor%s", api, relative,
                         (unsigned long long)size, size == 1 ? "" : "s");
        return ACLNN_ERR_PARAM_INVALID;
    }
    aclnnStatus status = nn_executor_set_list_addr(executor, side, ir_index, relative, addr, api);
    if (status == ACLNN_SUCCESS) {
        pthread_mutex_lock(&nn_lock);
        if (nn_kind_locked(tensors) == NN_TENSOR_LIST && relative < tensors->size) {
            tensors->tensors[relative]->data = addr;
        }
        pthread_mutex_unlock(&nn_lock);
    }
    return status;
}

aclnnStatus aclSetTensorAddr(aclOpExecutor *executor, const size_t index, aclTensor *tensor, void *addr)
{
    return set_addr(executor, index, tensor, addr, "aclSetTensorAddr");
}

aclnnStatus aclSetDynamicTensorAddr(aclOpExecutor *executor, size_t irIndex, const size_t relativeIndex,
                                    aclTensorList *tensors, void *addr)
{
    return set_list_addr(executor, NN_BOTH, irIndex, relativeIndex, tensors, addr, "aclSetDynamicTensorAddr");
}

aclnnStatus aclSetDynamicInputTensorAddr(aclOpExecutor *executor, size_t irIndex, const size_t relativeIndex,
                                         aclTensorList *tensors, void *addr)
{
    return set_list_addr(executor, NN_INPUTS, irIndex, relativeIndex, tensors, addr, "aclSetDynamicInputTensorAddr");
}

aclnnStatus aclSetDynamicOutputTensorAddr(aclOpExecutor *executor, size_t irIndex, const size_t relativeIndex,
                                          aclTensorList *tensors, void *addr)
{
    return set_list_addr(executor, NN_OUTPUTS, irIndex, relativeIndex, tensors, addr,
                         "aclSetDynamicOutputTensorAddr");
}

aclnnStatus AclSetInputTensorAddr(aclOpExecutor *executor, const size_t index, aclTensor *tensor, void *addr)
{
    return aclSetInputTensorAddr(executor, index, tensor, addr);
}

aclnnStatus AclSetOutputTensorAddr(aclOpExecutor *executor, const size_t index, aclTensor *tensor, void *addr)
{
    return aclSetOutputTensorAddr(executor, index, tensor, addr);
}

aclnnStatus AclSetTensorAddr(aclOpExecutor *executor, const size_t index, aclTensor *tensor, void *addr)
{
    return aclSetTensorAddr(executor, index, tensor, addr);
}

aclnnStatus AclSetDynamicTensorAddr(aclOpExecutor *executor, size_t irIndex, const size_t relativeIndex,
                                    aclTensorList *tensors, void *addr)
{
    return aclSetDynamicTensorAddr(executor, irIndex, relativeIndex, tensors, addr);
}

aclnnStatus AclSetDynamicInputTensorAddr(aclOpExecutor *executor, size_t irIndex, const size_t relativeIndex,
                                         aclTensorList *tensors, void *addr)
{
    return aclSetDynamicInputTensorAddr(executor, irIndex, relativeIndex, tensors, addr);
}

aclnnStatus AclSetDynamicOutputTensorAddr(aclOpExecutor *executor, size_t irIndex, const size_t relativeIndex,
                                          aclTensorList *tensors, void *addr)
{
    return aclSetDynamicOutputTensorAddr(executor, irIndex, relativeIndex, tensors, addr);
}
