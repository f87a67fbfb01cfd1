/*
 * The convolution lowering Convolution and the convolution gradients share (conv_lowering.c's top
 * comment describes it): the description of one call, its workspace plan and its kernel.
 */
#ifndef ACLSIM_OPS_CONV_LOWERING_H
#define ACLSIM_OPS_CONV_LOWERING_H

#include "ops_common.h"

/* The roles of the kernel's inputs: the source gradInput is computed from (gradOutput; a
 * forward's input), gradWeight's other factor (input), the weight, the forward's bias. */
enum { CONV_SOURCE, CONV_OTHER, CONV_WEIGHT, CONV_BIAS };
/* Its outputs (executor output slots): gradInput (a forward's output), gradWeight, gradBias. */
enum { CONV_GI, CONV_GW, CONV_GB };

typedef struct {
    const char *kernel;         /* phase 2's name, for kernel-time messages (a string literal) */
    int slot[4];                /* executor input slot of each role, -1 if none */
    unsigned inputs_read;       /* the executor inputs the kernel reads (bit i: slot i) */
    bool transposed;            /* gradInput gathers B into S's shape (else scatters S into B's) */
    bool empty;                 /* empty-tensor path: only zero-fill the requested grads */
    bool mask[3];
    int64_t n, cs, cb, groups;  /* batch, S channels, B channels, groups */
    int64_t ss[3], bs[3], ks[3];
    int64_t stride[3], dilation[3], pad[3];
    /* workspace regions, in bytes from the start */
    uint64_t at_grad_output, at_input, at_weight, at_grad_input, at_grad_weight, at_grad_bias, at_bias;
    bool in_place[3];           /* source, other, weight read where they are (float32, contiguous) */
    bool grad_input_in_place;   /* gradInput computed in the output itself (float32, contiguous) */
    int64_t chunk;              /* S positions per im2col chunk (gemm path) */
    int64_t workers;            /* threads of the gemm path, each on its own images */
    int64_t gemm_threads;       /* threads of each matrix product (> 1 only when there is one worker) */
    uint64_t at_cols;           /* per worker, the im2col chunk: (B channels / groups * taps) x chunk floats */
    uint64_t at_gemm;           /* per worker, the matrix product's packing space (gemm_bytes bytes) */
    uint64_t gemm_bytes;
    uint64_t at_partial_weight; /* per worker but the first, its partial gradWeight */
    bool depthwise;             /* finite data takes the depthwise path */
    int64_t depthwise_workers;  /* its threads, each with two padded planes at at_depthwise */
    uint64_t at_depthwise;
} aclsim_conv_params;

/* The workspace layout of a described, non-empty call (kernel, slot, mask, transposed and the
 * sizes set): fills the rest of *p and returns the workspace bytes.  `other` may be NULL when
 * gradWeight is not wanted, `grad_input` when gradInput is not; bias_length is gradBias's or
 * the forward bias's length. */
ACLSIM_OPS_API uint64_t aclsim_conv_plan(aclsim_conv_params *p, const aclTensor *source, const aclTensor *other,
                                         const aclTensor *weight, const aclTensor *grad_input, int64_t bias_length);

/* Phase 2 of every convolution operator (its executor's params: an aclsim_conv_params). */
ACLSIM_OPS_API aclnnStatus aclsim_conv_kernel(aclOpExecutor *ex, void *workspace);

/* ---------------------------------------------------------------- shared geometry (and
 * aclnn_py/ops/_conv.py, word for word in the messages) */

/* Front and total padding of spatial dim d: one value per dimension, or pairs ([left, right]
 * 1-D, [top, bottom, left, right] 2-D); a total beyond int64 saturates, so the size checks
 * that use it fail. */
ACLSIM_OPS_API void aclsim_conv_padding(const aclIntArray *padding, int spatial, int d, int64_t *front,
                                        int64_t *total);

/* The padded input holds the dilated kernel along spatial dim d (total: both paddings). */
ACLSIM_OPS_API aclnnStatus aclsim_conv_check_room(const char *api, int d, int64_t in, int64_t total, int64_t k,
                                                  const aclTensor *input, const aclTensor *weight,
                                                  const aclIntArray *padding, const aclIntArray *dilation);

/* (kernel - 1) * dilation + 1, a convolution's output size along one dimension (the room check
 * passed) and a transposed one's; false when it leaves int64. */
ACLSIM_OPS_API bool aclsim_conv_reach(int64_t k, int64_t dilation, int64_t *reach);
ACLSIM_OPS_API bool aclsim_conv_output_size(int64_t in, int64_t k, int64_t stride, int64_t dilation, int64_t total,
                                            int64_t *out);
ACLSIM_OPS_API bool aclsim_conv_transposed_output_size(int64_t in, int64_t k, int64_t stride, int64_t dilation,
                                                       int64_t total, int64_t output_padding, int64_t *out);

#endif
