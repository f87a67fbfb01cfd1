/*
 * What ReflectionPad2d and its gradient share (and aclnn_py/ops/_pad2d.py, word for
 * word in the messages): the reflected source of a padded position and the limit on each pad.
 * padding = [left, right, top, bottom].
 */
#ifndef ACLSIM_OPS_PAD2D_COMMON_H
#define ACLSIM_OPS_PAD2D_COMMON_H

#include "ops_common.h"

/* The source of padded position t (relative to the unpadded start) along an axis of n: the
 * mirror excludes the edge element, r(t) = -t if t < 0, 2(n - 1) - t if t >= n, else t. */
static inline int64_t aclsim_pad2d_reflect(int64_t t, int64_t n)
{
    if (t < 0) {
        return -t;
    }
    return t >= n ? 2 * (n - 1) - t : t;
}

/* left, right < W and top, bottom < H of self (..., H, W); padding has 4 elements. */
ACLSIM_OPS_API aclnnStatus aclsim_pad2d_check_below(const char *api, const aclIntArray *padding, const aclTensor *self);

#endif
