/* The matrix products' shared checks and kernel (matmul_common.h). */
#include "matmul_common.h"

#include <stdio.h>

#include "../kernels/gemm.h"
#include "../kernels/parallel.h"

aclnnStatus aclsim_mm_check_cube(const char *api, int8_t cubeMathType)
{
    if (cubeMathType < -1 || cubeMathType > 4) {
        return aclsim_ops_invalid(api, "cubeMathType must be -1 (FP16FP32_KEEP_DTYPE), 0 (KEEP_DTYPE), "
                                  "1 (ALLOW_FP32_DOWN_PRECISION), 2 (USE_FP16), 3 (USE_HF32) or 4 (USE_FP32_ADD), "
                                  "got %d", (int)cubeMathType);
    }
    return ACLNN_SUCCESS;
}

aclnnStatus aclsim_mm_check_rank(const char *api, const char *name, const aclTensor *t, uint64_t rank)
{
    if (t->ndim != rank) {
        return aclsim_ops_invalid(api, "%s must be %llu-D, got %llu-D shape %s", name, (unsigned long long)rank,
                                  (unsigned long long)t->ndim, aclsim_ops_shape(t).s);
    }
    return ACLNN_SUCCESS;
}

aclnnStatus aclsim_mm_check_k(const char *api, const char *name_a, const aclTensor *a, const char *name_b,
                              const aclTensor *b, int b_dim)
{
    if (aclsim_ops_dim(a, -1) != aclsim_ops_dim(b, b_dim)) {
        return aclsim_ops_invalid(api, "%s %s and %s %s do not agree in K: %s's last dim must equal %s's %s dim",
                                  name_a, aclsim_ops_shape(a).s, name_b, aclsim_ops_shape(b).s, name_a, name_b,
                                  b_dim == 0 ? "first" : "second-to-last");
    }
    return ACLNN_SUCCESS;
}

aclnnStatus aclsim_mm_broadcast_batch(const char *api, const char *name_a, const aclTensor *a, const char *name_b,
                                      const aclTensor *b, int64_t *dims, int *ndim)
{
    int na = a->ndim > 2 ? (int)a->ndim - 2 : 0, nb = b->ndim > 2 ? (int)b->ndim - 2 : 0;
    int width = na > nb ? na : nb;
    for (int d = 0; d < width; ++d) {
        int64_t p = d - (width - na) >= 0 ? a->view_dims[d - (width - na)] : 1;
        int64_t q = d - (width - nb) >= 0 ? b->view_dims[d - (width - nb)] : 1;
        if (p != q && p != 1 && q != 1) {
            return aclsim_ops_invalid(api, "the batch dims of %s %s and %s %s do not broadcast", name_a,
                                      aclsim_ops_shape(a).s, name_b, aclsim_ops_shape(b).s);
        }
        dims[d] = p == 1 ? q : p;
    }
    *ndim = width;
    return ACLNN_SUCCESS;
}

aclDataType aclsim_mm_round_to(aclDataType a, aclDataType b, int8_t cubeMathType)
{
    if (a == ACL_BF16 && b == ACL_BF16) {
        return ACL_FLOAT; /* computed in bfloat16: the inputs as they are */
    }
    if (cubeMathType == 2 && !(a == ACL_FLOAT16 && b == ACL_FLOAT16)) {
        return ACL_FLOAT16; /* USE_FP16: float32 / bfloat16 values rounded to float16 */
    }
    return ACL_FLOAT;
}

void aclsim_mm_operand(aclsim_mm_plan *plan, int which, const aclTensor *t)
{
    int64_t *bs = which == 0 ? plan->a_bs : plan->b_bs;
    int64_t rs, cs;
    if (t->ndim == 1) {
        rs = which == 0 ? 0 : t->strides[0];
        cs = which == 0 ? t->strides[0] : 0;
    } else {
        rs = t->strides[t->ndim - 2];
        cs = t->strides[t->ndim - 1];
    }
    int nbatch = t->ndim > 2 ? (int)t->ndim - 2 : 0;
    for (int d = 0; d < plan->batch_ndim; ++d) {
        int own = d - (plan->batch_ndim - nbatch);
        bs[d] = own >= 0 && t->view_dims[own] != 1 ? t->strides[own] : 0;
    }
    if (which == 0) {
        plan->a_rs = rs;
        plan->a_cs = cs;
    } else {
        plan->b_rs = rs;
        plan->b_cs = cs;
    }
}

/* Workspace: the offsets of each product (3 per batch), the float32 result, the GEMM's packing. */
static uint64_t offsets_bytes(const aclsim_mm_plan *p)
{
    return aclsim_ops_region((uint64_t)(3 * p->batches), sizeof(int64_t));
}

static uint64_t result_bytes(const aclsim_mm_plan *p)
{
    return aclsim_ops_region((uint64_t)(p->batches * p->m * p->n), sizeof(float));
}

static aclnnStatus mm_kernel(aclOpExecutor *ex, void *workspace)
{
    const aclsim_mm_plan *p = aclsim_executor_params(ex, sizeof *p);
    unsigned read = (1u << p->a_input) | (1u << p->b_input) | (p->bias_input >= 0 ? 1u << p->bias_input : 0u);
    ACLSIM_OPS_TRY(aclsim_ops_kernel_check_memory(p->kernel, ex, read, 1));
    const aclTensor *a = aclsim_executor_input(ex, p->a_input), *b = aclsim_executor_input(ex, p->b_input);
    aclTensor *out = aclsim_executor_output(ex, 0);
    int64_t *offsets = workspace;
    float *c = (float *)((char *)workspace + offsets_bytes(p));
    void *pack = (char *)workspace + offsets_bytes(p) + result_bytes(p);
    int64_t mn = p->m * p->n;

    if (p->epilogue != ACLSIM_MM_BIAS_ONLY) {
        for (int64_t i = 0; i < p->batches; ++i) {
            int64_t rest = i, oa = a->offset, ob = b->offset;
            for (int d = p->batch_ndim - 1; d >= 0; --d) {
                int64_t at = rest % p->batch_dims[d];
                rest /= p->batch_dims[d];
                oa += at * p->a_bs[d];
                ob += at * p->b_bs[d];
            }
            offsets[3 * i] = oa;
            offsets[3 * i + 1] = ob;
            offsets[3 * i + 2] = i * mn;
        }
        aclsim_gemm_args g = {
            .m = p->m, .n = p->n, .k = p->k, .a = a->data, .a_rs = p->a_rs, .a_cs = p->a_cs,
            .b = b->data, .b_rs = p->b_rs, .b_cs = p->b_cs, .c = c, .ldc = p->n,
            .a_type = a->dtype, .b_type = b->dtype, .round_to = p->round_to,
        };
        aclsim_gemm_batched(&g, offsets, p->batches, p->threads, pack);
    }
    if (p->epilogue == ACLSIM_MM_PRODUCT_ONLY) {
        for (int64_t i = 0; i < p->batches * mn; ++i) {
            c[i] *= p->alpha;
        }
    } else if (p->epilogue != ACLSIM_MM_PRODUCT) {
        const aclTensor *bias = aclsim_executor_input(ex, p->bias_input);
        for (int64_t i = 0; i < p->m; ++i) {
            float *row = c + i * p->n;
            for (int64_t j = 0; j < p->n; ++j) {
                float s = (float)aclsim_ops_load(bias->data, bias->dtype, bias->offset + i * p->bias_rs + j * p->bias_cs);
                if (p->epilogue == ACLSIM_MM_BIAS_ONLY) {
                    row[j] = p->beta * s;
                } else {
                    row[j] = p->alpha * row[j] + p->beta * s;
                }
            }
        }
    }
    aclsim_ops_write_f32(out, c);
    return ACLNN_SUCCESS;
}

aclnnStatus aclsim_mm_finish(const char *kernel, aclsim_mm_plan *plan, const aclTensor *const *inputs, int n_inputs,
                             aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor)
{
    plan->threads = aclsim_cores();
    snprintf(plan->kernel, sizeof plan->kernel, "%s", kernel);
    uint64_t pack = plan->epilogue == ACLSIM_MM_BIAS_ONLY
                        ? 0
                        : aclsim_gemm_batched_workspace_size(plan->m, plan->n, plan->k, plan->batches, plan->threads);
    uint64_t workspace = offsets_bytes(plan) + result_bytes(plan) + pack;
    const aclTensor *outputs[] = {out};
    return aclsim_ops_finish(kernel, mm_kernel, workspace, plan, sizeof *plan, inputs, n_inputs, outputs, 1,
                             workspaceSize, executor);
}
