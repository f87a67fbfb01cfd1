/*
 * The elementwise operators' shared promotion, checks, scalar conversion and kernel (see
 * elementwise.h).
 */
#include "elementwise.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../kernels/parallel.h"
#include "half_bits.h"

/* ---------------------------------------------------------------- promotion */

/* The rows and columns of the table, in this order (aclnn_py/_numpy/elementwise.py's PROMOTED). */
static const aclDataType ORDER[] = {ACL_FLOAT, ACL_FLOAT16, ACL_BF16,  ACL_DOUBLE, ACL_INT8,      ACL_UINT8,
                                    ACL_INT16, ACL_INT32,   ACL_INT64, ACL_BOOL,   ACL_COMPLEX64, ACL_COMPLEX128};
#define N_ORDER ((int)(sizeof ORDER / sizeof ORDER[0]))

enum { f32, f16, bf16, f64, s8, u8, s16, s32, s64, b1, c64, c128 };

/* PyTorch's category promotion (CANN's kPromoteTypesLookup); tests/ops/test_elementwise.py
 * compares this table with the Python one. */
static const unsigned char PROMOTE[N_ORDER][N_ORDER] = {
    /* PROMOTE-TABLE-BEGIN */
    {f32, f32, f32, f64, f32, f32, f32, f32, f32, f32, c64, c128},
    {f32, f16, f32, f64, f16, f16, f16, f16, f16, f16, c64, c128},
    {f32, f32, bf16, f64, bf16, bf16, bf16, bf16, bf16, bf16, c64, c128},
    {f64, f64, f64, f64, f64, f64, f64, f64, f64, f64, c128, c128},
    {f32, f16, bf16, f64, s8, s16, s16, s32, s64, s8, c64, c128},
    {f32, f16, bf16, f64, s16, u8, s16, s32, s64, u8, c64, c128},
    {f32, f16, bf16, f64, s16, s16, s16, s32, s64, s16, c64, c128},
    {f32, f16, bf16, f64, s32, s32, s32, s32, s64, s32, c64, c128},
    {f32, f16, bf16, f64, s64, s64, s64, s64, s64, s64, c64, c128},
    {f32, f16, bf16, f64, s8, u8, s16, s32, s64, b1, c64, c128},
    {c64, c64, c64, c128, c64, c64, c64, c64, c64, c64, c64, c128},
    {c128, c128, c128, c128, c128, c128, c128, c128, c128, c128, c128, c128},
    /* PROMOTE-TABLE-END */
};

static int order_of(aclDataType t)
{
    for (int i = 0; i < N_ORDER; ++i) {
        if (ORDER[i] == t) {
            return i;
        }
    }
    return -1;
}

aclDataType aclsim_ew_promote(aclDataType a, aclDataType b)
{
    if (a == b) {
        return a;
    }
    int i = order_of(a), j = order_of(b);
    return i < 0 || j < 0 ? ACL_DT_UNDEFINED : ORDER[PROMOTE[i][j]];
}

aclDataType aclsim_ew_scalar_promote(aclDataType self, aclDataType other, aclDataType out, bool bf16_as_float)
{
    if (aclsim_ops_is_complex(self) || aclsim_ops_is_complex(other)) {
        return aclsim_ew_promote(self, other);
    }
    if (aclsim_ops_is_floating(self)) {
        return bf16_as_float && self == ACL_BF16 ? ACL_FLOAT : self;
    }
    if (other == ACL_DOUBLE && (out == ACL_FLOAT || (bf16_as_float && self == ACL_BOOL))) {
        return ACL_FLOAT;
    }
    if (aclsim_ops_is_floating(other) || self == ACL_BOOL) {
        return aclsim_ew_promote(self, other);
    }
    return self;
}

/* ---------------------------------------------------------------- checks */

aclnnStatus aclsim_ew_check_promoted(const char *api, const char *name_a, aclDataType a, const char *name_b,
                                     aclDataType b, aclDataType promoted)
{
    if (promoted != ACL_DT_UNDEFINED) {
        return ACLNN_SUCCESS;
    }
    return aclsim_ops_invalid(api, "%s dtype %s and %s dtype %s cannot be promoted to a common dtype", name_a,
                              aclsim_ops_dtype_name(a), name_b, aclsim_ops_dtype_name(b));
}

aclnnStatus aclsim_ew_check_alpha(const char *api, const aclScalar *alpha, aclDataType promoted)
{
    if (promoted == ACL_BOOL) {
        if (!aclsim_ops_is_integral(alpha->dtype) && alpha->dtype != ACL_BOOL) {
            return aclsim_ops_invalid(api, "alpha dtype %s cannot be cast to the promoted dtype BOOL (it must be an "
                                      "integer or BOOL)", aclsim_ops_dtype_name(alpha->dtype));
        }
    } else if (!aclsim_ops_can_cast(alpha->dtype, promoted)) {
        return aclsim_ops_invalid(api, "alpha dtype %s cannot be cast to the promoted dtype %s",
                                  aclsim_ops_dtype_name(alpha->dtype), aclsim_ops_dtype_name(promoted));
    }
    return ACLNN_SUCCESS;
}

aclnnStatus aclsim_ew_check_cast_to(const char *api, aclDataType promoted, const char *name, const aclTensor *t)
{
    if (aclsim_ops_can_cast(promoted, t->dtype)) {
        return ACLNN_SUCCESS;
    }
    return aclsim_ops_invalid(api, "the promoted dtype %s cannot be cast to %s dtype %s",
                              aclsim_ops_dtype_name(promoted), name, aclsim_ops_dtype_name(t->dtype));
}

aclnnStatus aclsim_ew_check_cast_to_out(const char *api, aclDataType promoted, const aclTensor *out)
{
    return aclsim_ew_check_cast_to(api, promoted, "out", out);
}

aclnnStatus aclsim_ew_check_inplace(const char *api, const char *name_dst, const aclTensor *dst, const char *name_src,
                                    const aclTensor *src)
{
    uint64_t n = dst->ndim > src->ndim ? dst->ndim : src->ndim;
    bool same = src->ndim <= dst->ndim;
    for (uint64_t i = 1; i <= n; ++i) {
        int64_t x = i <= dst->ndim ? dst->view_dims[dst->ndim - i] : 1;
        int64_t y = i <= src->ndim ? src->view_dims[src->ndim - i] : 1;
        if (x != y && x != 1 && y != 1) {
            return aclsim_ops_invalid(api, "%s shape %s and %s shape %s cannot be broadcast", name_dst,
                                      aclsim_ops_shape(dst).s, name_src, aclsim_ops_shape(src).s);
        }
        same = same && (y == x || y == 1);
    }
    if (!same) {
        return aclsim_ops_invalid(api, "%s shape %s must broadcast to %s shape %s (the broadcast shape must be %s's)",
                                  name_src, aclsim_ops_shape(src).s, name_dst, aclsim_ops_shape(dst).s, name_dst);
    }
    return ACLNN_SUCCESS;
}

aclnnStatus aclsim_ew_check_rank(const char *api, const char *name, const aclTensor *t)
{
    if (t->ndim <= ACLSIM_EW_MAX_DIMS) {
        return ACLNN_SUCCESS;
    }
    return aclsim_ops_invalid(api, "%s must have at most %d dims, got %llu-D shape %s", name, ACLSIM_EW_MAX_DIMS,
                              (unsigned long long)t->ndim, aclsim_ops_shape(t).s);
}

aclnnStatus aclsim_ew_check_broadcast(const char *api, const char *name_a, const aclTensor *a, const char *name_b,
                                      const aclTensor *b, const aclTensor *out)
{
    uint64_t n = a->ndim > b->ndim ? a->ndim : b->ndim;
    int64_t shape[ACLSIM_MAX_DIMS];
    for (uint64_t i = 1; i <= n; ++i) {
        int64_t x = i <= a->ndim ? a->view_dims[a->ndim - i] : 1;
        int64_t y = i <= b->ndim ? b->view_dims[b->ndim - i] : 1;
        if (x != y && x != 1 && y != 1) {
            return aclsim_ops_invalid(api, "%s shape %s and %s shape %s cannot be broadcast", name_a,
                                      aclsim_ops_shape(a).s, name_b, aclsim_ops_shape(b).s);
        }
        shape[n - i] = x == 1 ? y : x;
    }
    bool same = out->ndim == n;
    for (uint64_t i = 0; same && i < n; ++i) {
        same = out->view_dims[i] == shape[i];
    }
    if (!same) {
        return aclsim_ops_invalid(api, "out shape must be the broadcast shape %s of %s and %s, got %s",
                                  aclsim_ops_int_list(shape, n).s, name_a, name_b, aclsim_ops_shape(out).s);
    }
    return ACLNN_SUCCESS;
}

aclnnStatus aclsim_ew_check_out_shape(const char *api, const aclTensor *out, const aclTensor *self)
{
    if (aclsim_ops_same_shape(out, self)) {
        return ACLNN_SUCCESS;
    }
    return aclsim_ops_invalid(api, "out shape must equal self shape %s, got %s", aclsim_ops_shape(self).s,
                              aclsim_ops_shape(out).s);
}

/* ---------------------------------------------------------------- values */

typedef enum { CAT_FLOAT, CAT_DOUBLE, CAT_INT, CAT_COMPLEX } category;

static category category_of(aclDataType promoted)
{
    if (aclsim_ops_is_complex(promoted)) {
        return CAT_COMPLEX;
    }
    if (promoted == ACL_DOUBLE) {
        return CAT_DOUBLE;
    }
    return aclsim_ops_is_floating(promoted) ? CAT_FLOAT : CAT_INT;
}

/* float rounded to FLOAT16 or BFLOAT16 and back (FLOAT: unchanged). */
static float round_float(float v, aclDataType t)
{
    if (t == ACL_FLOAT16) {
        return aclsim_hb_half_to_float(aclsim_hb_float_to_half(v));
    }
    if (t == ACL_BF16) {
        return aclsim_hb_bf16_to_float(aclsim_hb_float_to_bf16(v));
    }
    return v;
}

/* An int64 wrapped to the width of t (BOOL: 0 or 1), as the integer unit's result in t. */
static int64_t wrap_int(int64_t v, aclDataType t)
{
    switch (t) {
    case ACL_INT8: return (int8_t)(uint8_t)v;
    case ACL_UINT8: return (uint8_t)v;
    case ACL_INT16: return (int16_t)(uint16_t)v;
    case ACL_INT32: return (int32_t)(uint32_t)v;
    case ACL_BOOL: return v != 0;
    default: return v;
    }
}

aclsim_ew_value aclsim_ew_scalar_as(const aclScalar *s, aclDataType to)
{
    aclsim_ew_value v = {0};
    bool inexact = aclsim_ops_is_floating(s->dtype) || aclsim_ops_is_complex(s->dtype);
    switch (category_of(to)) {
    case CAT_COMPLEX:
        aclsim_ops_load_complex(s->value, s->dtype, 0, v.c);
        if (to == ACL_COMPLEX64) {
            v.c[0] = (float)v.c[0];
            v.c[1] = (float)v.c[1];
        }
        break;
    case CAT_DOUBLE:
        v.d = aclsim_ops_load(s->value, s->dtype, 0);
        break;
    case CAT_FLOAT:
        v.f = round_float((float)aclsim_ops_load(s->value, s->dtype, 0), to);
        break;
    case CAT_INT:
        if (to == ACL_BOOL && inexact) {
            double c[2];
            aclsim_ops_load_complex(s->value, s->dtype, 0, c);
            v.i = hypot(c[0], c[1]) >= FLT_EPSILON;
        } else {
            v.i = wrap_int(aclsim_ops_load_int(s->value, s->dtype, 0), to);
        }
        break;
    }
    return v;
}

void aclsim_ew_set_alpha(aclsim_ew_params *p, const aclScalar *alpha)
{
    double c[2];
    aclsim_ops_load_complex(alpha->value, alpha->dtype, 0, c);
    float one = (float)c[0];
    p->has_alpha = one > 1 || one < 1;
    if (p->has_alpha) {
        p->alpha = aclsim_ew_scalar_as(alpha, p->promoted == ACL_FLOAT16 ? ACL_FLOAT : p->promoted);
    }
}

/* ---------------------------------------------------------------- the kernel */

/* Elements of the last dim handled as one piece (the gathered rows a worker holds). */
#define CHUNK ACLSIM_EW_CHUNK

typedef struct {
    const aclsim_ew_params *p;
    const aclTensor *a, *b; /* b NULL: the scalar */
    aclTensor *out;
    int ndim;                                    /* after merging dims */
    int64_t dims[ACLSIM_MAX_DIMS];
    int64_t sa[ACLSIM_MAX_DIMS], sb[ACLSIM_MAX_DIMS], so[ACLSIM_MAX_DIMS]; /* strides, 0 where broadcast */
    int64_t chunks;                              /* pieces per row of the last dim */
    char *scratch;                               /* per worker: three rows of CHUNK 16-byte values */
    bool check;                                  /* test each piece written for Inf / NaN */
    bool nonfinite[ACLSIM_MAX_WORKERS];          /* per worker: a piece held one */
} ew_job;

/* t's strides aligned to out's dims at the right, 0 where t's dim is broadcast. */
static void broadcast_strides(const aclTensor *t, const aclTensor *out, int64_t *s)
{
    for (uint64_t i = 0; i < out->ndim; ++i) {
        s[i] = 0;
    }
    for (uint64_t i = 1; t != NULL && i <= t->ndim; ++i) {
        s[out->ndim - i] = t->view_dims[t->ndim - i] == 1 ? 0 : t->strides[t->ndim - i];
    }
}

/* Merge adjacent dims that every operand walks as one (contiguous runs become one row). */
static void merge_dims(ew_job *j, const aclTensor *out)
{
    int64_t sa[ACLSIM_MAX_DIMS], sb[ACLSIM_MAX_DIMS], so[ACLSIM_MAX_DIMS];
    broadcast_strides(j->a, out, sa);
    broadcast_strides(j->b, out, sb);
    for (uint64_t i = 0; i < out->ndim; ++i) {
        so[i] = out->strides[i];
    }
    int n = 0;
    for (uint64_t i = 0; i < out->ndim; ++i) {
        if (out->view_dims[i] == 1) {
            continue; /* a dim of 1 is walked by no stride */
        }
        if (n > 0 && sa[i] * out->view_dims[i] == j->sa[n - 1] && sb[i] * out->view_dims[i] == j->sb[n - 1] &&
            so[i] * out->view_dims[i] == j->so[n - 1]) {
            j->dims[n - 1] *= out->view_dims[i];
            j->sa[n - 1] = sa[i];
            j->sb[n - 1] = sb[i];
            j->so[n - 1] = so[i];
            continue;
        }
        j->dims[n] = out->view_dims[i];
        j->sa[n] = sa[i];
        j->sb[n] = sb[i];
        j->so[n] = so[i];
        ++n;
    }
    if (n == 0) {
        j->dims[0] = 1;
        j->sa[0] = j->sb[0] = j->so[0] = 0;
        n = 1;
    }
    j->ndim = n;
}

static void compute_float(const ew_job *j, const float *a, const float *b, float *o, int64_t n)
{
    const aclsim_ew_params *p = j->p;
    if (p->op == ACLSIM_EW_MUL) {
        for (int64_t i = 0; i < n; ++i) {
            o[i] = a[i] * b[i];
        }
    } else if (p->op == ACLSIM_EW_MAX) {
        for (int64_t i = 0; i < n; ++i) {
            o[i] = a[i] > b[i] || a[i] != a[i] ? a[i] : b[i];
        }
    } else if (p->op == ACLSIM_EW_THRESHOLD_GRAD) {
        float threshold = p->alpha.f;
        for (int64_t i = 0; i < n; ++i) {
            o[i] = b[i] <= threshold ? 0.0f : a[i];
        }
    } else if (p->has_alpha) {
        float alpha = p->alpha.f;
        for (int64_t i = 0; i < n; ++i) {
            o[i] = a[i] + alpha * b[i];
        }
    } else {
        for (int64_t i = 0; i < n; ++i) {
            o[i] = a[i] + b[i];
        }
    }
    if (p->promoted != ACL_FLOAT) {
        for (int64_t i = 0; i < n; ++i) {
            o[i] = round_float(o[i], p->promoted);
        }
    }
}

/* FLOAT self, other (or scalar) and out: computed where they are, without copies. */
static bool direct_types(const aclsim_ew_params *p, const aclTensor *a, const aclTensor *b, const aclTensor *out)
{
    aclsim_ew_op op = p->op;
    return (op == ACLSIM_EW_ADD || op == ACLSIM_EW_MUL || op == ACLSIM_EW_MAX || op == ACLSIM_EW_THRESHOLD_GRAD) &&
           p->promoted == ACL_FLOAT && a->dtype == ACL_FLOAT && (b == NULL || b->dtype == ACL_FLOAT) &&
           out->dtype == ACL_FLOAT;
}

static bool direct_float(const ew_job *j)
{
    return direct_types(j->p, j->a, j->b, j->out);
}

static bool float_type(aclDataType t);

uint64_t aclsim_ew_workspace_size(const aclsim_ew_params *p, const aclTensor *a, const aclTensor *b,
                                  const aclTensor *out)
{
    bool rows;
    if (p->op == ACLSIM_EW_FILL) {
        rows = false;
    } else if (p->op == ACLSIM_EW_CAST) {
        rows = float_type(a->dtype) && float_type(out->dtype); /* cast_piece's float row */
    } else {
        rows = !direct_types(p, a, b, out) && category_of(p->promoted) == CAT_FLOAT; /* buffered_piece's */
    }
    return rows ? ACLSIM_EW_WORKSPACE : 0;
}

/* One loop of `expr` (of x = a's element, y = b's) for each stride pattern of a piece: all three
 * contiguous, b one value along the piece (a scalar or a broadcast dim), a one value, or strided;
 * the first three are plain loops the compiler vectorises. */
#define EW_DIRECT_LOOPS(expr)                                                                                   \
    do {                                                                                                        \
        if (so == 1 && sa == 1 && sb == 1) {                                                                    \
            for (int64_t i = 0; i < n; ++i) {                                                                   \
                float x = a[i], y = b[i];                                                                       \
                o[i] = (expr);                                                                                  \
            }                                                                                                   \
        } else if (so == 1 && sa == 1 && sb == 0) {                                                             \
            float y = b[0];                                                                                     \
            for (int64_t i = 0; i < n; ++i) {                                                                   \
                float x = a[i];                                                                                 \
                o[i] = (expr);                                                                                  \
            }                                                                                                   \
        } else if (so == 1 && sa == 0 && sb == 1) {                                                             \
            float x = a[0];                                                                                     \
            for (int64_t i = 0; i < n; ++i) {                                                                   \
                float y = b[i];                                                                                 \
                o[i] = (expr);                                                                                  \
            }                                                                                                   \
        } else {                                                                                                \
            for (int64_t i = 0; i < n; ++i) {                                                                   \
                float x = a[i * sa], y = b[i * sb];                                                             \
                o[i * so] = (expr);                                                                             \
            }                                                                                                   \
        }                                                                                                       \
    } while (0)

/* MAX (Relu) and THRESHOLD_GRAD of FLOAT operands where they are: compute_float's expressions.
 * This and direct_piece are compiled for AVX2 too: ew_range's AVX2 clone calls them, not
 * inlined, and they had run its baseline SSE2 loops. */
ACLSIM_AVX2_CLONES static void direct_select(const ew_job *j, int64_t oa, int64_t ob, int64_t oo, int64_t n)
{
    const aclsim_ew_params *p = j->p;
    int last = j->ndim - 1;
    int64_t sa = j->sa[last], sb = j->b != NULL ? j->sb[last] : 0, so = j->so[last];
    const float *a = (const float *)j->a->data + oa;
    const float *b = j->b != NULL ? (const float *)j->b->data + ob : &p->scalar.f;
    float *o = (float *)j->out->data + oo;
    if (p->op == ACLSIM_EW_MAX) {
        EW_DIRECT_LOOPS(x > y || x != x ? x : y);
    } else {
        float threshold = p->alpha.f;
        EW_DIRECT_LOOPS(y <= threshold ? 0.0f : x);
    }
}

ACLSIM_AVX2_CLONES static void direct_piece(const ew_job *j, int64_t oa, int64_t ob, int64_t oo, int64_t n)
{
    const aclsim_ew_params *p = j->p;
    int last = j->ndim - 1;
    int64_t sa = j->sa[last], sb = j->b != NULL ? j->sb[last] : 0, so = j->so[last];
    const float *a = (const float *)j->a->data + oa;
    const float *b = j->b != NULL ? (const float *)j->b->data + ob : &p->scalar.f;
    float *o = (float *)j->out->data + oo;
    float alpha = p->has_alpha ? p->alpha.f : 1.0f;
    if (sa == 1 && sb == 1 && so == 1) {
        if (p->op == ACLSIM_EW_MUL) {
            for (int64_t i = 0; i < n; ++i) {
                o[i] = a[i] * b[i];
            }
        } else {
            for (int64_t i = 0; i < n; ++i) {
                o[i] = a[i] + alpha * b[i];
            }
        }
    } else if (sa == 1 && sb == 0 && so == 1) {
        float c = p->op == ACLSIM_EW_MUL ? b[0] : alpha * b[0];
        if (p->op == ACLSIM_EW_MUL) {
            for (int64_t i = 0; i < n; ++i) {
                o[i] = a[i] * c;
            }
        } else {
            for (int64_t i = 0; i < n; ++i) {
                o[i] = a[i] + c;
            }
        }
    } else if (p->op == ACLSIM_EW_MUL) {
        for (int64_t i = 0; i < n; ++i) {
            o[i * so] = a[i * sa] * b[i * sb];
        }
    } else {
        for (int64_t i = 0; i < n; ++i) {
            o[i * so] = a[i * sa] + alpha * b[i * sb];
        }
    }
}

/* One piece through the compute type's buffers: gather (converted to the promoted dtype),
 * compute, round, store converted to out's dtype. */
static void buffered_piece(const ew_job *j, int64_t oa, int64_t ob, int64_t oo, int64_t n, char *scratch)
{
    const aclsim_ew_params *p = j->p;
    const aclTensor *A = j->a, *B = j->b;
    aclTensor *O = j->out;
    int last = j->ndim - 1;
    int64_t sa = j->sa[last], sb = j->sb[last], so = j->so[last];
    aclDataType t = p->promoted;
    switch (category_of(t)) {
    case CAT_FLOAT: {
        float *a = (float *)scratch, *b = a + CHUNK, *o = b + CHUNK;
        aclsim_ops_gather_f32(A->data, A->dtype, oa, sa, n, a);
        if (A->dtype != t) {
            for (int64_t i = 0; i < n; ++i) {
                a[i] = round_float(a[i], t);
            }
        }
        if (B != NULL) {
            aclsim_ops_gather_f32(B->data, B->dtype, ob, sb, n, b);
            if (B->dtype != t) {
                for (int64_t i = 0; i < n; ++i) {
                    b[i] = round_float(b[i], t);
                }
            }
        } else {
            for (int64_t i = 0; i < n; ++i) {
                b[i] = p->scalar.f;
            }
        }
        compute_float(j, a, b, o, n);
        aclsim_ops_scatter_f32(O->data, O->dtype, oo, so, n, o);
        break;
    }
    case CAT_DOUBLE:
        for (int64_t i = 0; i < n; ++i) {
            double x = aclsim_ops_load(A->data, A->dtype, oa + i * sa);
            double y = B != NULL ? aclsim_ops_load(B->data, B->dtype, ob + i * sb) : p->scalar.d;
            double r = p->op == ACLSIM_EW_MUL   ? x * y
                       : p->op == ACLSIM_EW_MAX ? (x > y || x != x ? x : y)
                                                : x + (p->has_alpha ? p->alpha.d * y : y);
            aclsim_ops_store(O->data, O->dtype, oo + i * so, r);
        }
        break;
    case CAT_INT:
        for (int64_t i = 0; i < n; ++i) {
            int64_t x = wrap_int(aclsim_ops_load_int(A->data, A->dtype, oa + i * sa), t);
            int64_t y = B != NULL ? wrap_int(aclsim_ops_load_int(B->data, B->dtype, ob + i * sb), t) : p->scalar.i;
            int64_t r;
            if (t == ACL_BOOL) {
                r = p->op == ACLSIM_EW_MUL ? (x && y) : (x || ((p->has_alpha ? p->alpha.i : 1) && y));
            } else if (p->op == ACLSIM_EW_MAX) {
                r = x > y ? x : y;
            } else if (p->op == ACLSIM_EW_THRESHOLD_GRAD) {
                r = (float)y <= p->alpha.f ? 0 : x;
            } else if (p->op == ACLSIM_EW_MUL) {
                r = (int64_t)((uint64_t)x * (uint64_t)y);
            } else {
                uint64_t by = p->has_alpha ? (uint64_t)p->alpha.i * (uint64_t)y : (uint64_t)y;
                r = (int64_t)((uint64_t)x + by);
            }
            aclsim_ops_store_int(O->data, O->dtype, oo + i * so, wrap_int(r, t));
        }
        break;
    case CAT_COMPLEX:
        for (int64_t i = 0; i < n; ++i) {
            double x[2], y[2], r[2];
            aclsim_ops_load_complex(A->data, A->dtype, oa + i * sa, x);
            if (B != NULL) {
                aclsim_ops_load_complex(B->data, B->dtype, ob + i * sb, y);
            } else {
                y[0] = p->scalar.c[0];
                y[1] = p->scalar.c[1];
            }
            if (t == ACL_COMPLEX64) { /* inputs converted to the promoted dtype first */
                x[0] = (float)x[0], x[1] = (float)x[1], y[0] = (float)y[0], y[1] = (float)y[1];
            }
            if (p->op == ACLSIM_EW_MUL) {
                r[0] = x[0] * y[0] - x[1] * y[1];
                r[1] = x[0] * y[1] + x[1] * y[0];
            } else if (p->has_alpha) {
                r[0] = x[0] + (p->alpha.c[0] * y[0] - p->alpha.c[1] * y[1]);
                r[1] = x[1] + (p->alpha.c[0] * y[1] + p->alpha.c[1] * y[0]);
            } else {
                r[0] = x[0] + y[0];
                r[1] = x[1] + y[1];
            }
            aclsim_ops_store_complex(O->data, O->dtype, oo + i * so, r);
        }
        break;
    }
}

void aclsim_ew_convert(const void *data, aclDataType from, int64_t index, aclTensor *out, int64_t o_index)
{
    aclDataType to = out->dtype;
    if (aclsim_ops_is_complex(to)) {
        double c[2];
        aclsim_ops_load_complex(data, from, index, c);
        if (from == ACL_UINT64) {
            c[0] = (double)(uint64_t)aclsim_ops_load_int(data, from, index);
        }
        aclsim_ops_store_complex(out->data, to, o_index, c);
    } else if (to == ACL_BOOL) {
        double c[2];
        aclsim_ops_load_complex(data, from, index, c);
        aclsim_ops_store_int(out->data, to, o_index, c[0] != 0 || c[1] != 0);
    } else if (aclsim_ops_is_floating(to)) {
        if (from == ACL_UINT64) {
            aclsim_ops_store(out->data, to, o_index, (double)(uint64_t)aclsim_ops_load_int(data, from, index));
        } else if (aclsim_ops_is_integral(from) || from == ACL_BOOL) {
            aclsim_ops_store(out->data, to, o_index, (double)aclsim_ops_load_int(data, from, index));
        } else {
            aclsim_ops_store(out->data, to, o_index, aclsim_ops_load(data, from, index));
        }
    } else if (aclsim_ops_is_integral(from) || from == ACL_BOOL) {
        aclsim_ops_store_int(out->data, to, o_index, aclsim_ops_load_int(data, from, index));
    } else {
        double v = trunc(aclsim_ops_load(data, from, index)); /* the real part of a complex */
        int64_t i = v != v ? 0 : v >= 9223372036854775807.0 ? INT64_MAX : v <= -9223372036854775808.0 ? INT64_MIN
                                                                                                    : (int64_t)v;
        aclsim_ops_store_int(out->data, to, o_index, i);
    }
}

static bool float_type(aclDataType t)
{
    return t == ACL_FLOAT || t == ACL_FLOAT16 || t == ACL_BF16;
}

static void cast_piece(const ew_job *j, int64_t oa, int64_t oo, int64_t n, char *scratch)
{
    int last = j->ndim - 1;
    int64_t sa = j->sa[last], so = j->so[last];
    if (j->a->dtype == j->out->dtype && sa == 1 && so == 1) { /* the same dtype, both contiguous: the bytes */
        size_t item = aclsim_ops_dtype_size(j->a->dtype);
        memcpy((char *)j->out->data + oo * (int64_t)item, (const char *)j->a->data + oa * (int64_t)item,
               (size_t)n * item);
        return;
    }
    if (float_type(j->a->dtype) && float_type(j->out->dtype)) {
        /* FLOAT, FLOAT16, BFLOAT16 among themselves: through a float row (the same values) */
        float *row = (float *)scratch;
        aclsim_ops_gather_f32(j->a->data, j->a->dtype, oa, sa, n, row);
        aclsim_ops_scatter_f32(j->out->data, j->out->dtype, oo, so, n, row);
        return;
    }
    for (int64_t i = 0; i < n; ++i) {
        aclsim_ew_convert(j->a->data, j->a->dtype, oa + i * sa, j->out, oo + i * so);
    }
}

/* FILL: the scalar (in out's compute type) stored once, its bytes repeated along the row. */
static void fill_piece(const ew_job *j, int64_t oo, int64_t n)
{
    aclTensor *O = j->out;
    const aclsim_ew_value *v = &j->p->scalar;
    switch (category_of(O->dtype)) {
    case CAT_COMPLEX: aclsim_ops_store_complex(O->data, O->dtype, oo, v->c); break;
    case CAT_DOUBLE: aclsim_ops_store(O->data, O->dtype, oo, v->d); break;
    case CAT_FLOAT: aclsim_ops_store(O->data, O->dtype, oo, v->f); break;
    case CAT_INT: aclsim_ops_store_int(O->data, O->dtype, oo, v->i); break;
    }
    size_t item = aclsim_ops_dtype_size(O->dtype);
    char *first = (char *)O->data + oo * (int64_t)item;
    int64_t so = j->so[j->ndim - 1];
    if (so == 1) {
        bool zero = true; /* 0 of any type (not -0.0): all its bytes zero, the rest one memset */
        for (size_t k = 0; k < item; ++k) {
            zero = zero && first[k] == 0;
        }
        if (zero && n > 1) {
            memset(first + item, 0, (size_t)(n - 1) * item);
            return;
        }
        int64_t done = 1;
        while (done < n) { /* doubling copies of what is written */
            int64_t count = done < n - done ? done : n - done;
            memcpy(first + done * (int64_t)item, first, (size_t)count * item);
            done += count;
        }
        return;
    }
    for (int64_t i = 1; i < n; ++i) {
        memcpy(first + i * so * (int64_t)item, first, item);
    }
}

ACLSIM_AVX2_CLONES static void ew_range(void *ctx, int64_t begin, int64_t end, int worker)
{
    ew_job *j = ctx;
    int last = j->ndim - 1;
    int64_t row_len = j->dims[last];
    char *scratch = j->scratch != NULL ? j->scratch + (size_t)worker * 3 * CHUNK * 16 : NULL;
    bool direct = direct_float(j);
    for (int64_t item = begin; item < end; ++item) {
        int64_t row = item / j->chunks, piece = item % j->chunks;
        int64_t oa = j->a->offset, ob = j->b != NULL ? j->b->offset : 0, oo = j->out->offset;
        for (int d = last - 1; d >= 0; --d) {
            int64_t idx = row % j->dims[d];
            row /= j->dims[d];
            oa += idx * j->sa[d];
            ob += idx * j->sb[d];
            oo += idx * j->so[d];
        }
        int64_t first = piece * CHUNK, n = row_len - first < CHUNK ? row_len - first : CHUNK;
        oa += first * j->sa[last];
        ob += first * j->sb[last];
        oo += first * j->so[last];
        if (j->p->op == ACLSIM_EW_FILL) {
            fill_piece(j, oo, n);
        } else if (j->p->op == ACLSIM_EW_CAST) {
            cast_piece(j, oa, oo, n, scratch);
        } else if (direct && (j->p->op == ACLSIM_EW_MAX || j->p->op == ACLSIM_EW_THRESHOLD_GRAD)) {
            direct_select(j, oa, ob, oo, n);
        } else if (direct) {
            direct_piece(j, oa, ob, oo, n);
        } else {
            buffered_piece(j, oa, ob, oo, n, scratch);
        }
        /* (a FILL piece holds n copies of its first element: that one tells) */
        if (j->check && !j->nonfinite[worker] && /* the piece just written, while it is in cache */
            aclsim_nonfinite_run(j->out->data, j->out->dtype, oo, j->so[last], j->p->op == ACLSIM_EW_FILL ? 1 : n)) {
            j->nonfinite[worker] = true;
        }
    }
}

/* An input the output overlaps but is not exactly (a shifted or broadcast view of the same
 * memory) is read from a copy: the output is written piece by piece. */
static bool needs_copy(const aclTensor *in, const aclTensor *out)
{
    if (in == NULL || !aclsim_ops_views_overlap(in, out)) {
        return false;
    }
    if (in->data != out->data || in->offset != out->offset || in->dtype != out->dtype ||
        !aclsim_ops_same_shape(in, out)) {
        return true;
    }
    for (uint64_t i = 0; i < in->ndim; ++i) {
        if (in->view_dims[i] != 1 && in->strides[i] != out->strides[i]) {
            return true;
        }
    }
    return false;
}

typedef struct {
    aclsim_ew_params p;
    const char *kernel;
} ew_executor_params;

static aclnnStatus ew_kernel(aclOpExecutor *ex, void *workspace)
{
    const ew_executor_params *ep = aclsim_executor_params(ex, sizeof *ep);
    bool scalar = ep->p.scalar_other;
    ACLSIM_OPS_TRY(aclsim_ops_kernel_check_memory(ep->kernel, ex, ep->p.op == ACLSIM_EW_FILL ? 0u : scalar ? 1u : 3u, 1));
    bool finite = true;
    ACLSIM_OPS_TRY(aclsim_ew_run(ep->kernel, &ep->p, aclsim_executor_input(ex, 0),
                                 scalar ? NULL : aclsim_executor_input(ex, 1), aclsim_executor_output(ex, 0), workspace,
                                 &finite));
    if (finite) {
        aclsim_kernel_outputs_finite(0);
    }
    return ACLNN_SUCCESS;
}

aclnnStatus aclsim_ew_run(const char *kernel, const aclsim_ew_params *p, const aclTensor *a, const aclTensor *b,
                          aclTensor *out, void *workspace, bool *finite)
{
    ew_job j = {.p = p, .a = a, .b = b, .out = out, .scratch = workspace, .check = finite != NULL};
    aclTensor staged[2];
    void *copies[2] = {NULL, NULL};
    const aclTensor **inputs[2] = {&j.a, &j.b};
    for (int i = 0; i < 2; ++i) {
        if (needs_copy(*inputs[i], j.out)) {
            if (!aclsim_ops_stage(kernel, *inputs[i], &staged[i], &copies[i])) {
                free(copies[0]);
                return ACLSIM_OPS_KERNEL_FAULT;
            }
            *inputs[i] = &staged[i];
        }
    }
    merge_dims(&j, j.out);
    int64_t row_len = j.dims[j.ndim - 1];
    j.chunks = (row_len + CHUNK - 1) / CHUNK;
    int64_t items = aclsim_ops_numel(j.out) / row_len * j.chunks;
    int workers = aclsim_workers(items, row_len < CHUNK ? row_len : CHUNK);
    aclsim_parallel(items, workers, ew_range, &j);
    for (int w = 0; finite != NULL && w < ACLSIM_MAX_WORKERS; ++w) {
        *finite = *finite && !j.nonfinite[w];
    }
    free(copies[0]);
    free(copies[1]);
    return ACLNN_SUCCESS;
}

aclnnStatus aclsim_ew_finish(const char *api, const char *kernel, const aclsim_ew_params *p, const char *name_a,
                             const aclTensor *a, const char *name_b, const aclTensor *b, aclTensor *out,
                             uint64_t *workspace_size, aclOpExecutor **executor)
{
    return aclsim_ew_finish_into(api, kernel, p, name_a, a, name_b, b, "out", out, workspace_size, executor);
}

aclnnStatus aclsim_ew_finish_into(const char *api, const char *kernel, const aclsim_ew_params *p, const char *name_a,
                                  const aclTensor *a, const char *name_b, const aclTensor *b, const char *name_out,
                                  aclTensor *out, uint64_t *workspace_size, aclOpExecutor **executor)
{
    if (aclsim_ops_is_empty(a) || (b != NULL && aclsim_ops_is_empty(b)) || aclsim_ops_is_empty(out)) {
        return aclsim_ops_finish(kernel, aclsim_ops_noop_kernel, 0, NULL, 0, NULL, 0, NULL, 0, workspace_size,
                                 executor);
    }
    ACLSIM_OPS_TRY(aclsim_ops_check_memory(api, name_a, a));
    if (b != NULL) {
        ACLSIM_OPS_TRY(aclsim_ops_check_memory(api, name_b, b));
    }
    if (a != out) {
        ACLSIM_OPS_TRY(aclsim_ops_check_memory(api, name_out, out));
    }
    ew_executor_params ep = {.p = *p, .kernel = kernel};
    ep.p.scalar_other = b == NULL;
    uint64_t workspace = aclsim_ew_workspace_size(p, a, b, out);
    const aclTensor *inputs[] = {a, b};
    const aclTensor *outputs[] = {out};
    aclnnStatus status = aclsim_ops_finish(kernel, ew_kernel, workspace, &ep, sizeof ep, inputs, b != NULL ? 2 : 1,
                                           outputs, 1, workspace_size, executor);
    if (status == ACLNN_SUCCESS) {
        /* (FILL reads no input: its a is out itself, for the shape) */
        aclsim_executor_set_inputs_read(*executor, p->op == ACLSIM_EW_FILL ? 0u : b != NULL ? 3u : 1u);
        aclsim_executor_set_outputs_written(*executor, 1u);
    }
    return status;
}
