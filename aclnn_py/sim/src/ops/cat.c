/*
 * aclnnCat: out = torch.cat(tensors, dim): the tensors promoted to a common dtype, concatenated
 * along dim, converted to out's dtype.  1-D tensors of shape [0] are dropped first (legacy
 * PyTorch); with none left the call succeeds and writes nothing.  The checks in ops-math's order
 * (aclnn_py/ops/cat.py); each tensor reaches its slice of out through the elementwise kernel's
 * CAST (elementwise.h), through a temporary of the promoted dtype where that rounds.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aclnnop/aclnn_cat.h"
#include "aclsim_dtype_rules.h" /* generated at build: the dtype table (aclnn_py/ops/<op>.py DTYPE_RULES) */
#include "elementwise.h"
#include "../kernels/parallel.h"

static const char API[] = "aclnnCatGetWorkspaceSize";
static const char KERNEL[] = "aclnnCat";

typedef struct {
    int64_t dim;          /* normalised */
    aclDataType promoted; /* the tensors' common dtype */
    uint64_t count;       /* tensors in the list (the dropped ones included) */
} cat_params;

/* A 1-D tensor of shape [0], dropped before everything else. */
static bool dropped(const aclTensor *t)
{
    return t->ndim == 1 && t->view_dims[0] == 0;
}

/* The bytes copy (copy_blocks): out and every part contiguous, of out's dtype. */
typedef struct {
    char *out;                 /* out's first element */
    int64_t row;               /* bytes of out per index of the dims before dim */
    uint64_t parts;            /* the parts kept (not dropped) */
    const char *const *from;   /* [parts] each part's first element */
    const int64_t *at;         /* [parts + 1] byte offsets of the parts in a row of out; at[parts] = row */
    int64_t total;             /* bytes of out */
} cat_copy;

enum { CAT_PIECE = 64 * 1024 }; /* bytes of out per item of the parallel loop */

/* Pieces [begin, end) of out: each run of a part's block inside a piece, one memcpy. */
static void copy_pieces(void *ctx, int64_t begin, int64_t end, int worker)
{
    (void)worker;
    const cat_copy *c = ctx;
    int64_t pos = begin * CAT_PIECE, stop = end * CAT_PIECE < c->total ? end * CAT_PIECE : c->total;
    while (pos < stop) {
        int64_t outer = pos / c->row, r = pos % c->row;
        uint64_t lo = 0, hi = c->parts - 1; /* the last part whose block starts at or before r */
        while (lo < hi) {
            uint64_t mid = (lo + hi + 1) / 2;
            if (c->at[mid] <= r) {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        int64_t width = c->at[lo + 1] - c->at[lo], into = r - c->at[lo];
        int64_t len = width - into < stop - pos ? width - into : stop - pos;
        memcpy(c->out + pos, c->from[lo] + outer * width + into, (size_t)len);
        pos += len;
    }
}

/* Whether kept part t goes into out as bytes (copy_blocks; out contiguous too): of out's dtype,
 * empty or contiguous and apart from out. */
static bool part_copyable(const aclTensor *t, const aclTensor *out)
{
    return t->dtype == out->dtype &&
           (aclsim_ops_is_empty(t) || (aclsim_ops_is_contiguous(t) && !aclsim_ops_views_overlap(t, out)));
}

/* Every kept part of out's dtype, it and out contiguous and apart: out is, per index of the dims
 * before dim, the parts' blocks one after another, copied as bytes in one parallel loop (the
 * elementwise runner took one loop per part, each a hand-off to the helpers).  Interleaved A/B on
 * device tensors, medians of 200: googlenet 4a (8,[192,208,48,64],14,14) 0.82 -> 0.76 ms,
 * inception-v3 mixed_5b 1.70 -> 1.52, densenet121 (8,[256,32],28,28) 1.16 -> 1.15; the rest of
 * a call from host arrays is the uploads, the download and the Python side.  *done is false
 * where the parts are not all such (the elementwise runner then); false on a failed allocation. */
static bool copy_blocks(const cat_params *cp, aclOpExecutor *ex, aclTensor *out, bool *done)
{
    *done = false;
    if (!aclsim_ops_is_contiguous(out)) {
        return true;
    }
    uint64_t kept = 0;
    for (uint64_t i = 0; i < cp->count; ++i) {
        const aclTensor *t = aclsim_executor_input(ex, (int)i);
        if (dropped(t)) {
            continue;
        }
        if (!part_copyable(t, out)) {
            return true;
        }
        kept++;
    }
    size_t item = aclsim_ops_dtype_size(out->dtype);
    int64_t inner = (int64_t)item; /* bytes per index of dim, of the dims after it */
    for (uint64_t d = (uint64_t)cp->dim + 1; d < out->ndim; ++d) {
        inner *= out->view_dims[d];
    }
    const char **from = malloc(kept * sizeof *from);
    int64_t *at = malloc((kept + 1) * sizeof *at);
    if (from == NULL || at == NULL) {
        free(from);
        free(at);
        aclsim_set_error("%s: out of host memory", KERNEL);
        return false;
    }
    uint64_t k = 0;
    at[0] = 0;
    for (uint64_t i = 0; i < cp->count; ++i) {
        const aclTensor *t = aclsim_executor_input(ex, (int)i);
        if (!dropped(t)) {
            from[k] = aclsim_ops_is_empty(t) ? NULL : (const char *)t->data + t->offset * (int64_t)item;
            at[k + 1] = at[k] + t->view_dims[cp->dim] * inner;
            k++;
        }
    }
    cat_copy c = {(char *)out->data + out->offset * (int64_t)item, at[kept], kept, from, at,
                  aclsim_ops_numel(out) * (int64_t)item};
    int64_t pieces = (c.total + CAT_PIECE - 1) / CAT_PIECE;
    aclsim_parallel(pieces, aclsim_byte_workers(pieces, c.total), copy_pieces, &c);
    free(from);
    free(at);
    *done = true;
    return true;
}

static aclnnStatus convert_parts(const cat_params *cp, aclOpExecutor *ex, aclTensor *out, void *workspace);

static aclnnStatus cat_kernel(aclOpExecutor *ex, void *workspace)
{
    const cat_params *cp = aclsim_executor_params(ex, sizeof *cp);
    aclTensor *out = aclsim_executor_output(ex, 0);
    bool copied;
    if (!copy_blocks(cp, ex, out, &copied)) {
        return ACLSIM_OPS_KERNEL_FAULT;
    }
    if (copied) {
        aclsim_kernel_outputs_finite(0); /* a copy: an Inf or NaN it wrote was in a part */
        return ACLNN_SUCCESS;
    }
    if (aclsim_executor_workspace_size(ex) != 0) {
        return convert_parts(cp, ex, out, workspace);
    }
    /* Phase 1 found the bytes copy and asked for no workspace; the addresses changed since
     * (aclSetTensorAddr): the conversions' buffers from host memory, as a temporary. */
    void *scratch = malloc(ACLSIM_EW_WORKSPACE);
    if (scratch == NULL) {
        aclsim_set_error("%s: out of host memory", KERNEL);
        return ACLSIM_OPS_KERNEL_FAULT;
    }
    aclnnStatus status = convert_parts(cp, ex, out, scratch);
    free(scratch);
    return status;
}

/* Each kept part into its slice of out through the elementwise kernel's CAST (workspace:
 * ACLSIM_EW_WORKSPACE bytes). */
static aclnnStatus convert_parts(const cat_params *cp, aclOpExecutor *ex, aclTensor *out, void *workspace)
{
    aclsim_ew_params to_out = {.op = ACLSIM_EW_CAST, .promoted = out->dtype};
    aclsim_ew_params to_promoted = {.op = ACLSIM_EW_CAST, .promoted = cp->promoted};
    int64_t at = 0;
    bool finite = true; /* every part written was tested or copied: they cover out whole */
    for (uint64_t i = 0; i < cp->count; ++i) {
        const aclTensor *t = aclsim_executor_input(ex, (int)i);
        if (dropped(t)) {
            continue;
        }
        int64_t n = t->view_dims[cp->dim];
        aclTensor part = *out; /* t's slice of out */
        part.view_dims[cp->dim] = n;
        part.offset = out->offset + at * out->strides[cp->dim];
        at += n;
        if (aclsim_ops_is_empty(t)) {
            continue;
        }
        if (t->dtype == out->dtype) {
            /* a copy: an Inf or NaN it writes was in t, which the overflow hook would find and
             * record nothing (so no test of the part: it was 3.5% of a googlenet Cat's samples) */
            ACLSIM_OPS_TRY(aclsim_ew_run(KERNEL, &to_out, t, NULL, &part, workspace, NULL));
            continue;
        }
        if (t->dtype == cp->promoted || cp->promoted == out->dtype) {
            ACLSIM_OPS_TRY(aclsim_ew_run(KERNEL, &to_out, t, NULL, &part, workspace, &finite));
            continue;
        }
        /* through the promoted dtype (an INT32 2049 with FLOAT16 tensors is 2048 in any out) */
        aclTensor mid = *t;
        int64_t stride = 1;
        for (uint64_t d = t->ndim; d-- > 0;) {
            mid.strides[d] = stride;
            stride *= t->view_dims[d];
        }
        mid.offset = 0;
        mid.dtype = cp->promoted;
        mid.data = malloc((size_t)stride * aclsim_ops_dtype_size(cp->promoted));
        if (mid.data == NULL) {
            aclsim_set_error("%s: out of host memory for a tensor converted to %s", KERNEL,
                             aclsim_ops_dtype_name(cp->promoted));
            return ACLSIM_OPS_KERNEL_FAULT;
        }
        aclnnStatus status = aclsim_ew_run(KERNEL, &to_promoted, t, NULL, &mid, workspace, NULL);
        if (status == ACLNN_SUCCESS) {
            status = aclsim_ew_run(KERNEL, &to_out, &mid, NULL, &part, workspace, &finite);
        }
        free(mid.data);
        ACLSIM_OPS_TRY(status);
    }
    if (finite) {
        aclsim_kernel_outputs_finite(0);
    }
    return ACLNN_SUCCESS;
}

aclnnStatus aclnnCatGetWorkspaceSize(const aclTensorList *tensors, int64_t dim, aclTensor *out, uint64_t *workspaceSize,
                                     aclOpExecutor **executor)
{
    static const aclDataType dtypes[] = {ACLSIM_DTYPES_Cat_DTYPES}; /* the one table */
    char name[32];

    ACLSIM_OPS_CHECK_HANDLES(API, out);
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "tensors", tensors));
    /* the pre-pass: [0]-shaped tensors dropped; none left is a success that writes nothing */
    const aclTensor *first = NULL;
    for (uint64_t i = 0; i < tensors->size; ++i) {
        if (tensors->tensors[i] == NULL) {
            return aclsim_ops_nullptr(API, "tensors[%llu] must not be NULL", (unsigned long long)i);
        }
        if (first == NULL && !dropped(tensors->tensors[i])) {
            first = tensors->tensors[i];
        }
    }
    if (workspaceSize == NULL || executor == NULL) {
        return aclsim_ops_nullptr(API, "%s must not be NULL", workspaceSize == NULL ? "workspaceSize" : "executor");
    }
    if (first == NULL) {
        return aclsim_ops_finish(KERNEL, aclsim_ops_noop_kernel, 0, NULL, 0, NULL, 0, NULL, 0, workspaceSize,
                                 executor);
    }
    ACLSIM_OPS_TRY(aclsim_ops_check_not_null(API, "out", out));
    aclDataType promoted = first->dtype;
    for (uint64_t i = 0; i < tensors->size; ++i) {
        const aclTensor *t = tensors->tensors[i];
        if (!dropped(t)) {
            snprintf(name, sizeof name, "tensors[%llu]", (unsigned long long)i);
            ACLSIM_OPS_TRY(aclsim_ops_check_dtype(API, name, t, dtypes, ACLSIM_DTYPES_COUNT(dtypes)));
        }
    }
    ACLSIM_OPS_TRY(aclsim_ops_check_dtype(API, "out", out, dtypes, ACLSIM_DTYPES_COUNT(dtypes)));
    for (uint64_t i = 0; i < tensors->size; ++i) {
        const aclTensor *t = tensors->tensors[i];
        if (dropped(t)) {
            continue;
        }
        aclDataType next = aclsim_ew_promote(promoted, t->dtype);
        snprintf(name, sizeof name, "tensors[%llu]", (unsigned long long)i);
        ACLSIM_OPS_TRY(aclsim_ew_check_promoted(API, "the promoted", promoted, name, t->dtype, next));
        promoted = next;
    }
    if (promoted == ACL_COMPLEX128) {
        return aclsim_ops_invalid(API, "the tensors promote to COMPLEX128, which Cat does not compute");
    }
    ACLSIM_OPS_TRY(aclsim_ew_check_cast_to_out(API, promoted, out));
    ACLSIM_OPS_TRY(aclsim_ew_check_rank(API, "tensors[0]", first));
    int64_t rank = (int64_t)first->ndim;
    if (dim < -rank || dim >= rank || rank == 0) {
        return aclsim_ops_invalid(API, "dim %lld is out of range [%lld, %lld] for tensors of %lld dims", (long long)dim,
                                  (long long)-rank, (long long)rank - 1, (long long)rank);
    }
    int64_t axis = dim < 0 ? dim + rank : dim;
    int64_t total = 0;
    bool any = false;
    for (uint64_t i = 0; i < tensors->size; ++i) {
        const aclTensor *t = tensors->tensors[i];
        if (dropped(t)) {
            continue;
        }
        bool same = t->ndim == first->ndim;
        for (int64_t d = 0; same && d < rank; ++d) {
            same = d == axis || t->view_dims[d] == first->view_dims[d];
        }
        if (!same) {
            return aclsim_ops_invalid(API, "tensors[%llu] shape %s must match the first tensor's shape %s except in "
                                      "dim %lld", (unsigned long long)i, aclsim_ops_shape(t).s,
                                      aclsim_ops_shape(first).s, (long long)axis);
        }
        total += t->view_dims[axis];
        any = any || !aclsim_ops_is_empty(t);
    }
    if (!any) {
        return aclsim_ops_finish(KERNEL, aclsim_ops_noop_kernel, 0, NULL, 0, NULL, 0, NULL, 0, workspaceSize,
                                 executor);
    }
    int64_t shape[ACLSIM_MAX_DIMS];
    bool same = out->ndim == first->ndim;
    for (int64_t d = 0; d < rank; ++d) {
        shape[d] = d == axis ? total : first->view_dims[d];
        same = same && out->view_dims[d] == shape[d];
    }
    if (!same) {
        return aclsim_ops_invalid(API, "out shape must be %s (the tensors concatenated in dim %lld), got %s",
                                  aclsim_ops_int_list(shape, (uint64_t)rank).s, (long long)axis,
                                  aclsim_ops_shape(out).s);
    }
    for (uint64_t i = 0; i < tensors->size; ++i) {
        if (!dropped(tensors->tensors[i]) && !aclsim_ops_is_empty(tensors->tensors[i])) {
            snprintf(name, sizeof name, "tensors[%llu]", (unsigned long long)i);
            ACLSIM_OPS_TRY(aclsim_ops_check_memory(API, name, tensors->tensors[i]));
        }
    }
    ACLSIM_OPS_TRY(aclsim_ops_check_memory(API, "out", out));
    /* No workspace where the kernel copies the parts' bytes (copy_blocks): a 384 KiB one cost a
     * call from NumPy arrays its allocation and 0xFF fill, tiny (2,[2,3]) 8.7 -> 3.6 us of CPU. */
    bool bytes = aclsim_ops_is_contiguous(out);
    for (uint64_t i = 0; bytes && i < tensors->size; ++i) {
        bytes = dropped(tensors->tensors[i]) || part_copyable(tensors->tensors[i], out);
    }
    aclOpExecutor *ex = aclsim_executor_new(KERNEL, cat_kernel, bytes ? 0 : ACLSIM_EW_WORKSPACE);
    if (ex == NULL) {
        return ACLNN_ERR_INNER_CREATE_EXECUTOR;
    }
    cat_params *cp = aclsim_executor_params(ex, sizeof *cp);
    if (cp == NULL || aclsim_executor_add_input_list(ex, tensors) < 0 || aclsim_executor_add_output(ex, out) < 0) {
        aclsim_executor_discard(ex);
        return ACLNN_ERR_INNER_CREATE_EXECUTOR;
    }
    *cp = (cat_params){.dim = axis, .promoted = promoted, .count = tensors->size};
    /* The parts cover out whole (their lengths along dim add up to out's): no 0xFF fill first
     * (8% of a googlenet Cat's samples). */
    aclsim_executor_set_outputs_written(ex, 1u);
    *workspaceSize = aclsim_executor_workspace_size(ex);
    *executor = ex;
    return ACLNN_SUCCESS;
}

aclnnStatus aclnnCat(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, const aclrtStream stream)
{
    return aclsim_launch(KERNEL, workspace, workspaceSize, executor, stream);
}
