/*
 * What Im2col and its gradient (col2im) share: the block count along one dimension (and
 * aclnn_py/ops/_im2col.py).
 */
#ifndef ACLSIM_OPS_IM2COL_COMMON_H
#define ACLSIM_OPS_IM2COL_COMMON_H

#include "ops_common.h"

/* (size + 2*pad - dil*(k - 1) - 1 + s) / s in int64 with C's truncating division (the floor
 * division + 1 of the documented formula wherever that is >= 1); false when an intermediate
 * leaves int64. */
static inline bool aclsim_im2col_blocks(int64_t size, int64_t pad, int64_t dil, int64_t k, int64_t s, int64_t *blocks)
{
    int64_t twice_pad, span, numerator;
    if (!aclsim_ops_mul(pad, 2, &twice_pad) || !aclsim_ops_mul(dil, k - 1, &span) ||
        !aclsim_ops_add(size, twice_pad, &numerator) || !aclsim_ops_add(numerator, -span, &numerator) ||
        !aclsim_ops_add(numerator, s - 1, &numerator)) {
        return false;
    }
    *blocks = numerator / s;
    return true;
}

#endif
