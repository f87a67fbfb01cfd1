/* Pooling windows shared by the pooling operators (pool_common.h). */
#include <math.h>
#include <stdlib.h>

#include "pool_common.h"

static bool out_size(int64_t in, int64_t k, int64_t s, int64_t p, int64_t d, bool ceil_mode, bool trunc,
                     int64_t *out)
{
    int64_t reach, numerator;
    if (!aclsim_ops_mul(d, k - 1, &reach) || !aclsim_ops_add(in, p, &numerator) ||
        !aclsim_ops_add(numerator, p, &numerator) || !aclsim_ops_add(numerator, -reach - 1, &numerator) ||
        !aclsim_ops_add(numerator, ceil_mode ? s - 1 : 0, &numerator)) {
        return false;
    }
    int64_t o = (trunc ? numerator / s : aclsim_ops_floor_div(numerator, s)) + 1;
    if (ceil_mode) {
        int64_t start, end;
        if (!aclsim_ops_mul(o - 1, s, &start) || !aclsim_ops_add(in, p, &end)) {
            return false;
        }
        if (start >= end) {
            o -= 1;
        }
    }
    *out = o;
    return true;
}

bool aclsim_pool_out_size(int64_t in, int64_t k, int64_t s, int64_t p, int64_t d, bool ceil_mode, int64_t *out)
{
    return out_size(in, k, s, p, d, ceil_mode, false, out);
}

bool aclsim_pool_out_size_trunc(int64_t in, int64_t k, int64_t s, int64_t p, bool ceil_mode, int64_t *out)
{
    return out_size(in, k, s, p, 1, ceil_mode, true, out);
}

void aclsim_pool_pair(const aclIntArray *a, const int64_t fallback[2], int64_t out[2])
{
    if (a == NULL || a->size == 0) {
        out[0] = fallback[0];
        out[1] = fallback[1];
        return;
    }
    out[0] = a->values[0];
    out[1] = a->values[a->size == 1 ? 0 : 1];
}

int64_t aclsim_pool_nearest_source(int64_t i, int64_t size, int64_t o, double scale)
{
    if (o == size) { /* PyTorch's shortcuts, which ignore a given scale */
        return i;
    }
    if (o == 2 * size) {
        return i / 2;
    }
    float ratio = scale > 0 ? (float)(1.0 / scale) : (float)size / (float)o;
    int64_t source = (int64_t)floorf((float)i * ratio);
    return source < size - 1 ? source : size - 1;
}

/* "<name> must have <words> elements" unless a's length is one of `lengths` (n of them). */
static aclnnStatus check_length(const char *api, const char *name, const aclIntArray *a, const uint64_t *lengths,
                                int n, const char *words)
{
    for (int i = 0; i < n; ++i) {
        if (a->size == lengths[i]) {
            return ACLNN_SUCCESS;
        }
    }
    return aclsim_ops_invalid(api, "%s must have %s elements, got %s", name, words, aclsim_ops_ints(a).s);
}

aclnnStatus aclsim_pool_max_window(const char *api, const aclIntArray *kernelSize, const aclIntArray *stride,
                                   const aclIntArray *padding, const aclIntArray *dilation, int64_t k[2],
                                   int64_t s[2], int64_t p[2], int64_t d[2])
{
    static const uint64_t one_two[] = {1, 2}, zero_one_two[] = {0, 1, 2};
    ACLSIM_OPS_TRY(check_length(api, "kernelSize", kernelSize, one_two, 2, "1 or 2"));
    ACLSIM_OPS_TRY(check_length(api, "stride", stride, zero_one_two, 3, "0, 1 or 2"));
    ACLSIM_OPS_TRY(check_length(api, "padding", padding, one_two, 2, "1 or 2"));
    ACLSIM_OPS_TRY(check_length(api, "dilation", dilation, one_two, 2, "1 or 2"));
    ACLSIM_OPS_TRY(aclsim_ops_check_array_min(api, "kernelSize", kernelSize, 0, true));
    ACLSIM_OPS_TRY(aclsim_ops_check_array_min(api, "stride", stride, 0, true));
    aclsim_pool_pair(kernelSize, NULL, k);
    aclsim_pool_pair(padding, NULL, p);
    if (p[0] < 0 || p[1] < 0 || p[0] > k[0] / 2 || p[1] > k[1] / 2) {
        return aclsim_ops_invalid(api, "padding must be >= 0 and <= kernelSize / 2, got kernelSize = %s, padding = %s",
                                  aclsim_ops_ints(kernelSize).s, aclsim_ops_ints(padding).s);
    }
    aclsim_pool_pair(dilation, NULL, d);
    if (d[0] != 1 || d[1] != 1) {
        return aclsim_ops_invalid(api, "dilation must be 1 on Atlas A2/A3, got %s", aclsim_ops_ints(dilation).s);
    }
    aclsim_pool_pair(stride, k, s);
    return ACLNN_SUCCESS;
}

/* ---------------------------------------------------------------- the plane-wise operators */

aclnnStatus aclsim_pool_check_rank34(const char *api, const aclTensor *self)
{
    if (self->ndim != 3 && self->ndim != 4) {
        return aclsim_ops_invalid(api, "self must be 3-D or 4-D (NCL or NCHW), got %s shape %s",
                                  aclsim_ops_format_name(self->format), aclsim_ops_shape(self).s);
    }
    return ACLNN_SUCCESS;
}

aclnnStatus aclsim_pool_check_format(const char *api, const char *name, const aclTensor *t, const aclTensor *self,
                                     bool not_private)
{
    if (t->format != self->format || (not_private && aclsim_ops_is_private_format(self->format))) {
        return aclsim_ops_invalid(api, "%s format must equal self format%s, got %s and %s", name,
                                  not_private ? " and not be private" : "", aclsim_ops_format_name(t->format),
                                  aclsim_ops_format_name(self->format));
    }
    return ACLNN_SUCCESS;
}

bool aclsim_pool_same_leading(const aclTensor *a, const aclTensor *b)
{
    if (a->ndim != b->ndim) {
        return false;
    }
    for (uint64_t d = 0; d + 2 < a->ndim; ++d) {
        if (a->view_dims[d] != b->view_dims[d]) {
            return false;
        }
    }
    return true;
}

int64_t aclsim_pool_planes(const aclTensor *t)
{
    return (t->ndim == 4 ? t->view_dims[0] : 1) * aclsim_ops_dim(t, -3);
}

aclnnStatus aclsim_pool_run_planes(const char *kernel, const aclTensor **input, const aclTensor *out, int64_t planes,
                                   int workers, aclsim_range_fn fn, void *job)
{
    aclTensor staged;
    void *copy = NULL;
    if (aclsim_ops_views_overlap(*input, out)) {
        if (!aclsim_ops_stage(kernel, *input, &staged, &copy)) {
            return ACLSIM_OPS_KERNEL_FAULT;
        }
        *input = &staged;
    }
    aclsim_parallel(planes, workers, fn, job);
    free(copy);
    return ACLNN_SUCCESS;
}
