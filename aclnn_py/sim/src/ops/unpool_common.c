/* The index checks MaxUnpool2d and its gradient share (unpool_common.h). */
#include <stdio.h>

#include "unpool_common.h"

/* Row y of plane (n, c) of the indices into k[0 .. w), as int64. */
void aclsim_unpool_index_row(const aclTensor *t, int64_t w, int64_t n, int64_t c, int64_t y, int64_t *restrict k)
{
    int64_t is[4];
    aclsim_ops_nchw_strides(t, is);
    int64_t first = t->offset + n * is[0] + c * is[1] + y * is[2], step = is[3];
    if (t->dtype == ACL_INT64) {
        const int64_t *src = (const int64_t *)t->data + first;
        for (int64_t x = 0; x < w; ++x) {
            k[x] = src[x * step];
        }
    } else if (t->dtype == ACL_INT32) {
        const int32_t *src = (const int32_t *)t->data + first;
        for (int64_t x = 0; x < w; ++x) {
            k[x] = src[x * step];
        }
    } else {
        for (int64_t x = 0; x < w; ++x) {
            k[x] = aclsim_ops_load_int(t->data, t->dtype, first + x * step);
        }
    }
}

/* Whether plane (n, c) of t is h * w elements one after the other (rows of unit stride that
 * follow each other), so a kernel can treat it as one row of h * w elements. */
bool aclsim_unpool_plane_is_flat(const aclTensor *t, int64_t h, int64_t w)
{
    int64_t s[4];
    aclsim_ops_nchw_strides(t, s);
    return (s[3] == 1 || w == 1) && (s[2] == w || h == 1);
}

/* Whether any of the n indices at src lies outside [0, size): one vectorised pass.  With k as
 * int64 viewed as unsigned, k lies inside exactly when neither k nor size - 1 - k has its top bit
 * set (a negative k has it; so has size - 1 - k, wrapped, for k >= size): the pass ORs both into
 * one word, with the subtraction and OR the baseline x86-64 vector unit has for 64-bit lanes (a
 * comparison of 64-bit lanes it has not: a loop of comparisons ran one element at a time). */
#define ANY_OUTSIDE(type)                                                              \
    static bool any_outside_##type(const type *restrict src, int64_t n, int64_t size)  \
    {                                                                                  \
        uint64_t last = (uint64_t)size - 1, seen = 0;                                  \
        for (int64_t x = 0; x < n; ++x) {                                              \
            uint64_t k = (uint64_t)(int64_t)src[x];                                    \
            seen |= k | (last - k);                                                    \
        }                                                                              \
        return (seen >> 63) != 0;                                                      \
    }
ANY_OUTSIDE(int64_t)
ANY_OUTSIDE(int32_t)

/* The first of the n indices at first (step apart) of t outside [0, size) (INT64_MAX if none),
 * its value in *value; the slow path, run only on a span known to hold one (or a strided one). */
static int64_t first_outside(const aclTensor *t, int64_t first, int64_t step, int64_t n, int64_t size,
                             int64_t *value)
{
    for (int64_t x = 0; x < n; ++x) {
        int64_t k = aclsim_ops_load_int(t->data, t->dtype, first + x * step);
        if (k < 0 || k >= size) {
            *value = k;
            return x;
        }
    }
    return INT64_MAX;
}

/* Pass 1 on the planes [begin, end): the first index outside [0, oH*oW), as the element's
 * row-major position in bad_at[worker] (INT64_MAX when none) and its value in bad_index. */
static void check_planes(void *ctx, int64_t begin, int64_t end, int worker)
{
    aclsim_unpool_check *job = ctx;
    const aclsim_unpool_check *p = job;
    int64_t *k = job->scratch + worker * p->w, plane_size = p->oh * p->ow;
    job->bad_at[worker] = INT64_MAX;
    const aclTensor *t = job->indices;
    if (aclsim_unpool_plane_is_flat(t, p->h, p->w) && (t->dtype == ACL_INT64 || t->dtype == ACL_INT32)) {
        /* Each plane one vectorised pass over its indices where they lie. */
        int64_t is[4], hw = p->h * p->w;
        aclsim_ops_nchw_strides(t, is);
        for (int64_t plane = begin; plane < end; ++plane) {
            int64_t first = t->offset + plane / p->c * is[0] + plane % p->c * is[1];
            bool bad = t->dtype == ACL_INT64 ? any_outside_int64_t((const int64_t *)t->data + first, hw, plane_size)
                                             : any_outside_int32_t((const int32_t *)t->data + first, hw, plane_size);
            if (bad) {
                int64_t x = first_outside(t, first, 1, hw, plane_size, &job->bad_index[worker]);
                job->bad_at[worker] = plane * hw + x;
                return;
            }
        }
        return;
    }
    for (int64_t plane = begin; plane < end; ++plane) {
        for (int64_t y = 0; y < p->h; ++y) {
            aclsim_unpool_index_row(t, p->w, plane / p->c, plane % p->c, y, k);
            bool bad = false;
            for (int64_t x = 0; x < p->w; ++x) {
                bad |= k[x] < 0 || k[x] >= plane_size;
            }
            if (!bad) {
                continue;
            }
            for (int64_t x = 0;; ++x) {
                if (k[x] < 0 || k[x] >= plane_size) {
                    job->bad_at[worker] = (plane * p->h + y) * p->w + x;
                    job->bad_index[worker] = k[x];
                    return;
                }
            }
        }
    }
}


aclnnStatus aclsim_unpool_check_indices(const char *kernel, aclsim_unpool_check *job, int64_t planes, int workers)
{
    const aclsim_unpool_check *p = job;
    aclsim_parallel(planes, workers, check_planes, job);
    int first = 0;
    for (int w = 1; w < workers; ++w) {
        first = job->bad_at[w] < job->bad_at[first] ? w : first;
    }
    if (job->bad_at[first] == INT64_MAX) {
        return ACLNN_SUCCESS;
    }
    int64_t e = job->bad_at[first], x = e % p->w, y = e / p->w % p->h, c = e / (p->w * p->h) % p->c;
    int64_t n = e / (p->w * p->h * p->c);
    char at[96];
    if (job->indices->ndim == 4) {
        snprintf(at, sizeof at, "%lld, %lld, %lld, %lld", (long long)n, (long long)c, (long long)y, (long long)x);
    } else {
        snprintf(at, sizeof at, "%lld, %lld, %lld", (long long)c, (long long)y, (long long)x);
    }
    aclsim_set_error("%s: indices[%s] = %lld is outside [0, %lld) (outputSize = [%lld, %lld]); nothing was "
                     "written", kernel, at, (long long)job->bad_index[first], (long long)(p->oh * p->ow),
                     (long long)p->oh, (long long)p->ow);
    return ACLSIM_OPS_KERNEL_FAULT;
}
