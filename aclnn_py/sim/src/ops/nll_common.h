/*
 * What aclnnNLLLoss and aclnnNLLLossBackward share (the Python side: aclnn_py/ops/_nll.py):
 * the reduction check, the rank checks of self and target, the weight's shape, and the range
 * check of the target values a kernel runs before it writes anything (a target outside [0, C)
 * that is not ignoreIndex is a device fault, 507015, naming the first such target).
 */
#ifndef ACLSIM_OPS_NLL_COMMON_H
#define ACLSIM_OPS_NLL_COMMON_H

#include "ops_common.h"

enum { ACLSIM_NLL_NONE = 0, ACLSIM_NLL_MEAN = 1, ACLSIM_NLL_SUM = 2 };

ACLSIM_OPS_API aclnnStatus aclsim_nll_check_reduction(const char *api, int64_t reduction);
/* self 1-D or 2-D, then target 0-D or 1-D. */
ACLSIM_OPS_API aclnnStatus aclsim_nll_check_ranks(const char *api, const aclTensor *self, const aclTensor *target);
/* weight 1-D of size C (self's last dim). */
ACLSIM_OPS_API aclnnStatus aclsim_nll_check_weight(const char *api, const aclTensor *weight, const aclTensor *self);
ACLSIM_OPS_API aclnnStatus aclsim_nll_check_one_element(const char *api, const char *name, const aclTensor *t);

/*
 * Kernel time: the first `n` targets (0-D: the one) as class indices into rows[0 .. n), an
 * ignored row as -1; ACLSIM_OPS_KERNEL_FAULT (+ message naming `kernel`) when one lies outside
 * [0, classes) and is not ignoreIndex.
 */
ACLSIM_OPS_API aclnnStatus aclsim_nll_rows(const char *kernel, const aclTensor *target, int64_t n, int64_t classes,
                                           int64_t ignore_index, int64_t *rows);

#endif
