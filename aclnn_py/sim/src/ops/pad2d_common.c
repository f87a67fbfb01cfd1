/* The checks ReflectionPad2d and its gradient share (pad2d_common.h). */

#include "pad2d_common.h"

aclnnStatus aclsim_pad2d_check_below(const char *api, const aclIntArray *padding, const aclTensor *self)
{
    static const char *const sides[] = {"left", "right", "top", "bottom"};
    const int64_t *pad = padding->values;
    int64_t h = aclsim_ops_dim(self, -2), w = aclsim_ops_dim(self, -1);
    for (int i = 0; i < 4; ++i) {
        int64_t limit = i < 2 ? w : h;
        if (pad[i] >= limit) {
            return aclsim_ops_invalid(api, "padding %s = %lld must be < the input %s = %lld (padding = %s, self %s)",
                                      sides[i], (long long)pad[i], i < 2 ? "width" : "height", (long long)limit,
                                      aclsim_ops_ints(padding).s, aclsim_ops_shape(self).s);
        }
    }
    return ACLNN_SUCCESS;
}
