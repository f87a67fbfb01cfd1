/*
 * aclnn_py simulator nnopbase: what executor.c offers the other nnopbase sources (not
 * exported): changing the device address phase 2 uses for one of an executor's tensors.
 */
#ifndef ACLSIM_NNOPBASE_EXECUTOR_INTERNAL_H
#define ACLSIM_NNOPBASE_EXECUTOR_INTERNAL_H

#include <stddef.h>

#include "../sim_internal.h"
#include "registry.h"

/* Which of an executor's tensors an index counts: inputs, outputs, or inputs then outputs. */
enum nn_side { NN_INPUTS, NN_OUTPUTS, NN_BOTH };

/* Tensor `index` of `side` (list elements counted one by one) now lives at addr.
 * 561103 (+ message) unless executor is live; 161002 when index is out of range or the
 * tensor was NULL in phase 1. */
NN_HIDDEN aclnnStatus nn_executor_set_addr(aclOpExecutor *executor, enum nn_side side, size_t index, void *addr,
                                           const char *api);

/* Element `relative` of the tensor-list argument `ir_index` of `side` (arguments counted in
 * prototype order, inputs then outputs for NN_BOTH) now lives at addr.  561103 unless
 * executor is live; 161002 when ir_index is out of range or names a plain tensor, when
 * relative >= the list's size, or when the element was NULL in phase 1. */
NN_HIDDEN aclnnStatus nn_executor_set_list_addr(aclOpExecutor *executor, enum nn_side side, size_t ir_index,
                                                size_t relative, void *addr, const char *api);

#endif
