/*
 * aclnn_py simulator nnopbase: the float overflow hook's element checks (float_results.c),
 * used by executor.c once per tensor of a kernel run (not exported).
 */
#ifndef ACLSIM_NNOPBASE_FLOAT_RESULTS_H
#define ACLSIM_NNOPBASE_FLOAT_RESULTS_H

#include "../sim_internal.h"
#include "registry.h"

/* 1 if an element of t's view (its storage at data) is Inf or NaN; with saturate, each such
 * element becomes the largest finite value of its sign (Inf) or 0 (NaN).  0 for a tensor of
 * no floating-point type. */
NN_HIDDEN int nn_nonfinite(const aclTensor *t, void *data, int saturate);

/* 1 if the elements of a (at a_data) and b (at b_data) may share bytes. */
NN_HIDDEN int nn_overlaps(const aclTensor *a, const void *a_data, const aclTensor *b, const void *b_data);

#endif
