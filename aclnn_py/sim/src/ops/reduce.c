/*
 * The reducing operators' shared dims checks and walks (see reduce.h).
 */
#include "reduce.h"

aclnnStatus aclsim_red_check_dim(const char *api, const char *name, int64_t dim, const char *tensor, uint64_t rank,
                                 int64_t *wrapped)
{
    int64_t top = rank > 0 ? (int64_t)rank : 1;
    if (dim < -top || dim > top - 1) {
        return aclsim_ops_invalid(api, "%s = %lld must be in [%lld, %lld] for %s of rank %llu", name, (long long)dim,
                                  (long long)-top, (long long)(top - 1), tensor, (unsigned long long)rank);
    }
    *wrapped = dim < 0 ? dim + top : dim;
    return ACLNN_SUCCESS;
}

aclnnStatus aclsim_red_check_dims(const char *api, const char *name, const aclIntArray *dims, const char *tensor,
                                  uint64_t rank, uint32_t *mask)
{
    int64_t top = rank > 0 ? (int64_t)rank : 1;
    uint32_t seen = 0;
    for (uint64_t i = 0; i < dims->size; ++i) {
        int64_t d = dims->values[i];
        if (d < -top || d > top - 1) {
            return aclsim_ops_invalid(api, "%s value %lld must be in [%lld, %lld] for %s of rank %llu, got %s", name,
                                      (long long)d, (long long)-top, (long long)(top - 1), tensor,
                                      (unsigned long long)rank, aclsim_ops_ints(dims).s);
        }
        int64_t w = d < 0 ? d + top : d;
        if (seen & (1u << w)) {
            return aclsim_ops_invalid(api, "%s must not name dim %lld twice, got %s", name, (long long)w,
                                      aclsim_ops_ints(dims).s);
        }
        seen |= 1u << w;
    }
    *mask = dims->size == 0 ? (rank >= 32 ? 0xffffffffu : (1u << rank) - 1u) : seen & ((1u << rank) - 1u);
    return ACLNN_SUCCESS;
}

void aclsim_red_split(const aclTensor *t, uint32_t mask, aclsim_red_walk *kept, aclsim_red_walk *reduced)
{
    kept->n = reduced->n = 0;
    kept->count = reduced->count = 1;
    for (uint64_t i = 0; i < t->ndim; ++i) {
        aclsim_red_walk *w = (mask & (1u << i)) ? reduced : kept;
        if (t->view_dims[i] == 1 && w->n > 0) {
            continue; /* a dim of 1 walks nowhere (a leading one is kept: a walk of no dims is one element) */
        }
        w->dims[w->n] = t->view_dims[i];
        w->strides[w->n] = t->strides[i];
        w->count *= t->view_dims[i];
        ++w->n;
    }
}

int64_t aclsim_red_offset(const aclsim_red_walk *w, int64_t index)
{
    int64_t offset = 0;
    for (int d = w->n - 1; d >= 0; --d) {
        offset += (index % w->dims[d]) * w->strides[d];
        index /= w->dims[d];
    }
    return offset;
}

/* Each run of the walk's last dim within [first, first + count): fn over (offset, count, done). */
#define WALK_RUNS(w, base, first, count, BODY)                                                                        \
    do {                                                                                                               \
        int64_t last_ = (w)->n > 0 ? (w)->dims[(w)->n - 1] : 1;                                                       \
        int64_t step_ = (w)->n > 0 ? (w)->strides[(w)->n - 1] : 0;                                                    \
        int64_t done_ = 0;                                                                                             \
        while (done_ < (count)) {                                                                                      \
            int64_t at_ = (first) + done_;                                                                             \
            int64_t in_row_ = at_ % last_;                                                                             \
            int64_t run_ = last_ - in_row_ < (count) - done_ ? last_ - in_row_ : (count) - done_;                     \
            int64_t offset_ = (base) + aclsim_red_offset((w), at_);                                                    \
            BODY;                                                                                                      \
            done_ += run_;                                                                                             \
        }                                                                                                              \
    } while (0)

void aclsim_red_gather(const aclTensor *t, int64_t base, const aclsim_red_walk *w, int64_t first, int64_t count,
                       float *dst)
{
    WALK_RUNS(w, base, first, count, aclsim_ops_gather_f32(t->data, t->dtype, offset_, step_, run_, dst + done_));
}

void aclsim_red_scatter(aclTensor *t, int64_t base, const aclsim_red_walk *w, int64_t first, int64_t count,
                        const float *src)
{
    WALK_RUNS(w, base, first, count, aclsim_ops_scatter_f32(t->data, t->dtype, offset_, step_, run_, src + done_));
}

aclnnStatus aclsim_red_check_rank(const char *api, const char *name, const aclTensor *t, uint64_t lo, uint64_t hi)
{
    if (t->ndim >= lo && t->ndim <= hi) {
        return ACLNN_SUCCESS;
    }
    return aclsim_ops_invalid(api, "%s must have %llu to %llu dims, got %llu-D shape %s", name, (unsigned long long)lo,
                              (unsigned long long)hi, (unsigned long long)t->ndim, aclsim_ops_shape(t).s);
}

aclnnStatus aclsim_red_check_channels(const char *api, const char *name, const aclTensor *t, int64_t c)
{
    if (t == NULL || (t->ndim == 1 && t->view_dims[0] == c)) {
        return ACLNN_SUCCESS;
    }
    return aclsim_ops_invalid(api, "%s shape must be [C] = [%lld] (input's dim 1), got %s", name, (long long)c,
                              aclsim_ops_shape(t).s);
}

float aclsim_red_channel(const aclTensor *t, int64_t c, float absent)
{
    return t == NULL ? absent : (float)aclsim_ops_load(t->data, t->dtype, t->offset + c * t->strides[0]);
}
