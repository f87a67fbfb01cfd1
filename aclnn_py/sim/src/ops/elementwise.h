/*
 * What the elementwise operators (Add, Adds, Mul, Muls, ...) share: CANN's type promotion
 * (op::PromoteType), the tensor-scalar rules, the checks with their messages (the numpy
 * backend's, word for word: aclnn_py/ops/_elementwise.py), aclScalar conversion, and one
 * kernel that computes a binary operation over broadcast, strided views.
 *
 * A computation runs in the promoted dtype: each input is converted to it, the result rounded
 * to it once and converted to out's dtype.  FLOAT16 and BFLOAT16 compute in float, integers
 * in int64 wrapped to the promoted width, complex in pairs of doubles.
 */
#ifndef ACLSIM_OPS_ELEMENTWISE_H
#define ACLSIM_OPS_ELEMENTWISE_H

#include "ops_common.h"
#include "../kernels/parallel.h"

/* Elementwise operators take tensors of at most this many dims (OP_CHECK_MAX_DIM). */
#define ACLSIM_EW_MAX_DIMS 8

typedef enum {
    ACLSIM_EW_ADD, /* a + alpha * b (BOOL: a or (alpha and b)) */
    ACLSIM_EW_MUL, /* a * b (BOOL: a and b) */
    ACLSIM_EW_MAX, /* a where a > b or a is NaN, else b (Relu: b the scalar 0) */
    ACLSIM_EW_THRESHOLD_GRAD, /* a (gradOutput) where b (self, as a float) is not <= alpha.f, else 0 */
    ACLSIM_EW_CAST, /* a converted to out's dtype (aclsim_ew_convert) */
    ACLSIM_EW_FILL, /* out = the scalar, already in out's dtype (a is out itself, not read) */
} aclsim_ew_op;

/* One value in each of the kernel's compute types. */
typedef struct {
    float f;
    double d;
    int64_t i;
    double c[2];
} aclsim_ew_value;

/* What an elementwise executor computes (its params). */
typedef struct {
    aclsim_ew_op op;
    aclDataType promoted; /* the dtype computed in */
    bool has_alpha;       /* ADD: b is multiplied by alpha */
    aclsim_ew_value alpha;
    bool scalar_other;    /* b is `scalar`, not the executor's input 1 */
    aclsim_ew_value scalar;
} aclsim_ew_params;

/* op::PromoteType(a, b), ACL_DT_UNDEFINED where the two do not promote. */
ACLSIM_OPS_API aclDataType aclsim_ew_promote(aclDataType a, aclDataType b);

/* 161002 when promoted is ACL_DT_UNDEFINED ("<a> dtype A and <b> dtype B cannot be promoted"). */
ACLSIM_OPS_API aclnnStatus aclsim_ew_check_promoted(const char *api, const char *name_a, aclDataType a,
                                                    const char *name_b, aclDataType b, aclDataType promoted);
/* Add's alpha: an integer or BOOL for a BOOL computation, else castable to the promoted dtype. */
ACLSIM_OPS_API aclnnStatus aclsim_ew_check_alpha(const char *api, const aclScalar *alpha, aclDataType promoted);
/* op::CanCast(promoted, out's dtype). */
ACLSIM_OPS_API aclnnStatus aclsim_ew_check_cast_to_out(const char *api, aclDataType promoted, const aclTensor *out);
/* op::CanCast(promoted, t's dtype), t named `name` (the in-place operators' selfRef). */
ACLSIM_OPS_API aclnnStatus aclsim_ew_check_cast_to(const char *api, aclDataType promoted, const char *name,
                                                   const aclTensor *t);
/* An in-place operator's source broadcasts to its destination: `src` and `dst` broadcast (any
 * rank: this may run before the rank checks), and their broadcast shape is dst's own. */
ACLSIM_OPS_API aclnnStatus aclsim_ew_check_inplace(const char *api, const char *name_dst, const aclTensor *dst,
                                                   const char *name_src, const aclTensor *src);
/* At most ACLSIM_EW_MAX_DIMS dims. */
ACLSIM_OPS_API aclnnStatus aclsim_ew_check_rank(const char *api, const char *name, const aclTensor *t);
/* a and b broadcast (NumPy's rule); the broadcast shape of out's must equal out's view shape. */
ACLSIM_OPS_API aclnnStatus aclsim_ew_check_broadcast(const char *api, const char *name_a, const aclTensor *a,
                                                     const char *name_b, const aclTensor *b, const aclTensor *out);
/* out has self's shape (the tensor-scalar operators). */
ACLSIM_OPS_API aclnnStatus aclsim_ew_check_out_shape(const char *api, const aclTensor *out, const aclTensor *self);

/* A2/A3's rule of a tensor and a scalar's compute dtype: Adds' PromoteTypeScalar or, with
 * bf16_as_float, Muls' InferTensorScalarDtype (see aclnn_py/_numpy/elementwise.py). */
ACLSIM_OPS_API aclDataType aclsim_ew_scalar_promote(aclDataType self, aclDataType other, aclDataType out,
                                                    bool bf16_as_float);

/* An aclScalar's value converted to `to` as C's static_cast (opbase's aclScalar::To), in the
 * compute type of `to` (a floating value to BOOL is |v| >= FLT_EPSILON). */
ACLSIM_OPS_API aclsim_ew_value aclsim_ew_scalar_as(const aclScalar *s, aclDataType to);
/* Add's alpha as A2/A3 apply it: no alpha when its float value is neither above nor below 1;
 * a float for FLOAT16 (the fused axpy's), else converted to the promoted dtype. */
ACLSIM_OPS_API void aclsim_ew_set_alpha(aclsim_ew_params *p, const aclScalar *alpha);

/* One element data[index] of dtype `from` into out[o_index] of out's dtype, as Cast converts:
 * complex to real keeps the real part; floating to an integer truncates toward zero, NaN to 0,
 * saturated to int64 and then wrapped to the width; complex to BOOL is "either part non-zero";
 * integers narrow modulo 2^bits; to FLOAT16/BFLOAT16 through double and float. */
ACLSIM_OPS_API void aclsim_ew_convert(const void *data, aclDataType from, int64_t index, aclTensor *out,
                                      int64_t o_index);

/* The end of an elementwise phase 1 (after every check): the executor of `p` over the inputs a
 * and b (NULL for a scalar operand) and out, each named for the memory checks' messages; a
 * no-op executor when an input is empty. */
ACLSIM_OPS_API aclnnStatus aclsim_ew_finish(const char *api, const char *kernel, const aclsim_ew_params *p,
                                            const char *name_a, const aclTensor *a, const char *name_b,
                                            const aclTensor *b, aclTensor *out, uint64_t *workspace_size,
                                            aclOpExecutor **executor);

/* The computation of `p` at once (the kernel's body): a and b (NULL: p's scalar) broadcast into
 * out, an input out overlaps staged first.  `workspace` holds aclsim_ew_workspace_size bytes.  With
 * `finite` not NULL each piece of out is tested for Inf / NaN right after it is written (in
 * cache: the overflow hook's separate pass over out is then not needed, see
 * aclsim_kernel_outputs_finite) and *finite set to false when one holds one (else left as is).
 * Split over the kernel threads (aclsim_workers) by pieces of the output: every element's
 * result depends on its own inputs only, so the bits are the same for any number of workers. */
ACLSIM_OPS_API aclnnStatus aclsim_ew_run(const char *kernel, const aclsim_ew_params *p, const aclTensor *a,
                                         const aclTensor *b, aclTensor *out, void *workspace, bool *finite);
#define ACLSIM_EW_CHUNK 2048 /* elements of the last dim handled as one piece */
#define ACLSIM_EW_WORKSPACE ((uint64_t)ACLSIM_MAX_WORKERS * 3 * ACLSIM_EW_CHUNK * 16)

/* The workspace aclsim_ew_run needs for `p` over these tensors: ACLSIM_EW_WORKSPACE where it
 * gathers rows into buffers (a FLOAT, FLOAT16 or BFLOAT16 computation other than the FLOAT one
 * done in place; a Cast between two of those types), else 0 (a NULL workspace will do).  A
 * 384 KiB workspace cost every call its allocation and 0xFF fill (~15 us) where no buffer is
 * used: Relu, Add, Mul ... of FLOAT, Fill, Cast to or from integers. */
ACLSIM_OPS_API uint64_t aclsim_ew_workspace_size(const aclsim_ew_params *p, const aclTensor *a, const aclTensor *b,
                                                 const aclTensor *out);

/* aclsim_ew_finish with out named `name_out` in the memory checks (an in-place selfRef). */
ACLSIM_OPS_API aclnnStatus aclsim_ew_finish_into(const char *api, const char *kernel, const aclsim_ew_params *p,
                                                 const char *name_a, const aclTensor *a, const char *name_b,
                                                 const aclTensor *b, const char *name_out, aclTensor *out,
                                                 uint64_t *workspace_size, aclOpExecutor **executor);

#endif
