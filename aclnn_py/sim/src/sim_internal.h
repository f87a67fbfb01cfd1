/*
 * aclnn_py simulator: internal interface shared by the runtime, nnopbase and the
 * operators.  Not installed, not part of CANN; exported by libaclsim.so only (the
 * CANN-named libraries export CANN's functions and nothing else).
 *
 * Who provides what (all compiled into libaclsim.so but the operators):
 *   runtime/     aclsim_set_error, aclsim_device_range_ok, aclsim_stream_enqueue,
 *                aclsim_counter_add, aclsim_machine_memory
 *   nnopbase/    descriptors (struct aclTensor ...), aclsim_tensor_memory_ok, executors,
 *                aclsim_launch
 *   ops/         the operators (libopapi*.so): phase 1 validates, builds an executor with the
 *                descriptor copies and parameters it needs and a kernel; phase 2 is
 *                aclsim_launch.
 *
 * Error text: every failing call sets this thread's recent error message with
 * aclsim_set_error before returning its status; aclGetRecentErrMsg() hands it out once.
 */
#ifndef ACLSIM_SIM_INTERNAL_H
#define ACLSIM_SIM_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "acl/acl.h"
#include "aclnn/aclnn_base.h"
#include "aclnn/opdev/op_errno.h"
#include "aclsim/aclsim.h"

#if defined(__GNUC__)
#define ACLSIM_INTERNAL __attribute__((visibility("default")))
#define ACLSIM_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define ACLSIM_INTERNAL
#define ACLSIM_PRINTF(f, a)
#endif

/* A hot loop's function compiled twice on x86-64 Linux with GCC, for AVX2 and for the baseline
 * (the build targets no CPU model: CI may run on another), the one the CPU runs chosen when the
 * library is loaded.  AVX2 holds twice the elements per instruction; it brings no FMA, so the
 * arithmetic (and its bits) is the baseline's.  Elsewhere it is the baseline alone. */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
#define ACLSIM_AVX2_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define ACLSIM_AVX2_CLONES
#endif

#ifdef __cplusplus
extern "C" {
#endif

#define ACLSIM_MAX_DIMS 8

/* ---- descriptors (created by aclCreateXxx in libnnopbase) ---------------------------- */

struct aclTensor {
    int64_t view_dims[ACLSIM_MAX_DIMS];
    uint64_t ndim;
    int64_t strides[ACLSIM_MAX_DIMS]; /* in elements; contiguous when NULL was passed */
    int64_t offset;                   /* in elements */
    aclDataType dtype;
    aclFormat format;
    int64_t storage_dims[ACLSIM_MAX_DIMS];
    uint64_t storage_ndim;
    void *data;                       /* device address of element 0 of the storage */
};

struct aclIntArray {
    uint64_t size;
    int64_t *values; /* NULL when size == 0 */
};

struct aclBoolArray {
    uint64_t size;
    bool *values;
};

struct aclFloatArray {
    uint64_t size;
    float *values;
};

struct aclScalar {
    aclDataType dtype;
    /* aclDataTypeSize(dtype) bytes, native byte order; aligned for any of them, as the loads
     * read them in place (after the 4-byte dtype they were 4-byte aligned: UBSan's misaligned
     * int64 load in aclnnAddmm's alpha) */
    _Alignas(16) unsigned char value[16];
};

struct aclTensorList {
    uint64_t size;
    aclTensor **tensors; /* owned */
};

struct aclScalarList {
    uint64_t size;
    aclScalar **scalars; /* owned */
};

/* ---- runtime services (libascendcl) --------------------------------------------------- */

/* printf-style; replaces this thread's recent error message. */
ACLSIM_INTERNAL void aclsim_set_error(const char *fmt, ...) ACLSIM_PRINTF(1, 2);

/* The environment variable that sets the simulated device's memory size in bytes. */
#define ACLSIM_DEVICE_MEMORY_ENV "ACLNN_PY_SIM_DEVICE_MEMORY"

/* The memory this process may use: physical memory or the cgroup (v2 or v1) limit, the
 * smaller.  Host allocations sized by a caller's argument are refused beyond it. */
ACLSIM_INTERNAL uint64_t aclsim_machine_memory(void);

/* 1 if [ptr, ptr + bytes) lies inside one live aclrtMalloc block (its requested size). */
ACLSIM_INTERNAL int aclsim_device_range_ok(const void *ptr, uint64_t bytes);

/* Before device memory at ptr is read or written by anything but aclrtMemcpy/aclrtMemset (a
 * kernel, aclDumpOpTensors): the 0xFF fill of its block, which aclrtMalloc leaves to the first
 * use (runtime/memory.c).  Nothing for an address outside device memory. */
ACLSIM_INTERNAL void aclsim_device_prepare(const void *ptr);

/* aclsim_device_prepare for memory a kernel writes before anything reads it: the `bytes` bytes
 * at ptr, each written.  When they cover ptr's block from its start only the padding after them
 * is filled (their fill would be overwritten: aclrtMemcpy's rule for an upload), else the whole
 * block as aclsim_device_prepare. */
ACLSIM_INTERNAL void aclsim_device_prepare_write(void *ptr, uint64_t bytes);

/* A unit of queued stream work.  run() executes at stream synchronisation, in FIFO order,
 * on the synchronising thread; a non-zero return is the aclError the synchronisation
 * reports (the task sets the message).  release() (may be NULL) frees ctx; it is called
 * exactly once, after run() or instead of it when the task is dropped. */
typedef aclError (*aclsim_task_run_fn)(void *ctx);
typedef void (*aclsim_task_release_fn)(void *ctx);

/* Queue a task; stream NULL = the calling thread's current device's default stream.
 * On failure (invalid stream, no device set, OOM) returns the error, sets the message
 * (naming `api` and its parameter `stream`) and calls release(ctx). */
ACLSIM_INTERNAL aclError aclsim_stream_enqueue(const char *api, aclrtStream stream, aclsim_task_run_fn run,
                                               aclsim_task_release_fn release, void *ctx);
/* aclsim_stream_enqueue for an operator's kernel (a model reports it as ACL_MODEL_RI_TASK_KERNEL). */
ACLSIM_INTERNAL aclError aclsim_stream_launch(const char *api, aclrtStream stream, aclsim_task_run_fn run,
                                              aclsim_task_release_fn release, void *ctx);

/* Float overflow (runtime/overflow.c): what the task running on this thread must do with a
 * floating-point result, as the device's saturation mode (aclrtSetDeviceSatMode) and the
 * stream's overflow switch say: ACL_RT_OVERFLOW_MODE_INFNAN (record an Inf/NaN made from
 * finite inputs), ACL_RT_OVERFLOW_MODE_SATURATION (saturate Inf to the largest finite value,
 * NaN to 0, and record it), or ACL_RT_OVERFLOW_MODE_UNDEF (nothing: no task, or overflow
 * detection is off for it). */
ACLSIM_INTERNAL aclrtFloatOverflowMode aclsim_overflow_mode(void);
/* Records an overflow of the task running on this thread (the process's status, as on an
 * Atlas A2, that aclrtGetOverflowStatus & co. report until reset). */
ACLSIM_INTERNAL void aclsim_overflow_record(void);

enum aclsim_counter {
    ACLSIM_CNT_TENSORS,
    ACLSIM_CNT_INT_ARRAYS,
    ACLSIM_CNT_BOOL_ARRAYS,
    ACLSIM_CNT_FLOAT_ARRAYS,
    ACLSIM_CNT_SCALARS,
    ACLSIM_CNT_EXECUTORS,
    ACLSIM_CNT_STREAMS,
    ACLSIM_CNT_EVENTS,
    ACLSIM_CNT_DEVICE_BLOCKS,
    ACLSIM_CNT_DEVICE_BYTES,
    ACLSIM_CNT_TENSOR_LISTS,
    ACLSIM_CNT_SCALAR_LISTS,
    ACLSIM_CNT_HOST_BLOCKS,
    ACLSIM_CNT_CONTEXTS,
    ACLSIM_CNT_COUNT
};

/* Adds delta to one of the counters aclsimGetCounters reports (thread-safe). */
ACLSIM_INTERNAL void aclsim_counter_add(enum aclsim_counter which, int64_t delta);

/* 1 and the directory in out when aclInit's configuration turned the operator dump on
 * ({"dump": {"dump_path": ...}}), else 0. */
ACLSIM_INTERNAL int aclsim_dump_path(char *out, size_t capacity);

/* ---- tensors and executors (libnnopbase) ---------------------------------------------- */

/* 1 if every element the view can touch (offset + strides * (dims - 1), in bytes, negative
 * strides included) lies in one live device block, or the view has no elements. */
ACLSIM_INTERNAL int aclsim_tensor_memory_ok(const aclTensor *t);

/* 1 if the pointer is a live descriptor of that type (created and not yet destroyed). */
ACLSIM_INTERNAL int aclsim_is_live_tensor(const aclTensor *t);
ACLSIM_INTERNAL int aclsim_is_live_int_array(const aclIntArray *a);
ACLSIM_INTERNAL int aclsim_is_live_bool_array(const aclBoolArray *a);
ACLSIM_INTERNAL int aclsim_is_live_float_array(const aclFloatArray *a);
ACLSIM_INTERNAL int aclsim_is_live_scalar(const aclScalar *s);

/* Runs at stream synchronisation.  Non-zero return => the stream reports
 * ACL_ERROR_RT_AICORE_EXCEPTION (507015) at aclrtSynchronizeStream, with the text the
 * kernel gave aclsim_set_error. */
typedef aclnnStatus (*aclsim_kernel_fn)(aclOpExecutor *executor, void *workspace);

/* For a kernel that has read back every element of its output `index` (the executor's slot)
 * after writing it and found no Inf or NaN (aclsim_nonfinite_run on each piece, while the piece
 * is still in cache): the overflow hook run after the kernel (nnopbase/float_results.c) then
 * does not read that output again; it would find nothing to record or saturate.  Only for the
 * kernel running on the calling thread (the note is the thread's, cleared before each kernel);
 * a kernel that found an Inf or NaN says nothing and the hook reads the output as usual. */
ACLSIM_INTERNAL void aclsim_kernel_outputs_finite(int index);

/* 1 if one of the n elements of dtype at element offsets first, first + stride, ... of data is
 * Inf or NaN (0 for a dtype that is not FLOAT, FLOAT16, BFLOAT16 or DOUBLE): the overflow
 * hook's test, for kernels that check their pieces themselves. */
ACLSIM_INTERNAL int aclsim_nonfinite_run(const void *data, aclDataType dtype, int64_t first, int64_t stride,
                                         int64_t n);

/* aclsim_nonfinite_run's test of one FLOAT, for a kernel to fold into the loop that writes the
 * values (a call per short run cost as much as the run's arithmetic): or the results together;
 * bit 31 of the or is set iff one value was Inf or NaN (an all-ones exponent carries into it). */
static inline uint32_t aclsim_f32_nonfinite_bits(float v)
{
    uint32_t bits;
    memcpy(&bits, &v, sizeof bits);
    return (bits & 0x7f800000u) + 0x00800000u;
}

/* NULL + error message on OOM.  op_name is copied (e.g. "aclnnXxxBackward"). */
ACLSIM_INTERNAL aclOpExecutor *aclsim_executor_new(const char *op_name, aclsim_kernel_fn run,
                                                   uint64_t workspace_size);

/* Store a copy of *t (t may be NULL: an empty slot), so callers may destroy their
 * descriptors right after phase 1.  Returns the slot index, or -1 (+ message) on OOM.
 * Add them in the order of the API's tensor arguments: the index is what
 * aclSetInputTensorAddr / aclSetOutputTensorAddr take. */
ACLSIM_INTERNAL int aclsim_executor_add_input(aclOpExecutor *ex, const aclTensor *t);
ACLSIM_INTERNAL int aclsim_executor_add_output(aclOpExecutor *ex, const aclTensor *t);

/* A tensor-list argument: a copy of each element in its own slot (the first one's index is
 * returned; an empty list adds none).  aclSetDynamic*TensorAddr address them by the list's
 * argument position and the element's position in it; the flat index of
 * aclSetInputTensorAddr / aclSetTensorAddr counts them one by one. */
ACLSIM_INTERNAL int aclsim_executor_add_input_list(aclOpExecutor *ex, const aclTensorList *list);
ACLSIM_INTERNAL int aclsim_executor_add_output_list(aclOpExecutor *ex, const aclTensorList *list);

/* The stored copies; NULL for an empty slot or an index out of range. */
ACLSIM_INTERNAL const aclTensor *aclsim_executor_input(const aclOpExecutor *ex, int index);
ACLSIM_INTERNAL aclTensor *aclsim_executor_output(const aclOpExecutor *ex, int index);

/* A zeroed blob of `size` bytes owned by the executor (operator parameters, copied int
 * arrays ...); later calls with size <= the first one return the same pointer.
 * NULL (+ message) on OOM. */
ACLSIM_INTERNAL void *aclsim_executor_params(aclOpExecutor *ex, size_t size);

/* The inputs whose data the kernel reads (bit i: input i; the kernel checks them again when it
 * runs, aclsim_ops_kernel_check_memory).  Any other input contributes its shape, dtype and
 * format only (e.g. an operator's `self` whose shape alone sizes the gradient): its data may
 * then be NULL, which phase 2 does not refuse, so a caller need not upload it (the binding
 * does not, on the simulator, for its registration's shape_only arguments).  A non-NULL
 * address is checked as every other.  Not called: every input is read. */
ACLSIM_INTERNAL void aclsim_executor_set_inputs_read(aclOpExecutor *ex, unsigned inputs_read);

/* The outputs the kernel writes every element of before reading any (bit k: output k), as
 * Relu's or Add's out.  Such an output whose view is contiguous from its block's start gets
 * only its padding filled with 0xFF before the kernel runs (aclsim_device_prepare_write), not
 * its whole block: on a large elementwise call that fill was a fifth of the call's passes over
 * memory.  Not called: every output's block is filled whole first. */
ACLSIM_INTERNAL void aclsim_executor_set_outputs_written(aclOpExecutor *ex, unsigned outputs_written);

ACLSIM_INTERNAL uint64_t aclsim_executor_workspace_size(const aclOpExecutor *ex);

/* Free an executor whose phase 1 failed after it was created. */
ACLSIM_INTERNAL void aclsim_executor_discard(aclOpExecutor *ex);

/* The body of every phase-2 aclnnXxx(workspace, workspaceSize, executor, stream).
 * Checks: executor NULL => 161001; not a live executor (already run, destroyed, never
 * created) or a normal one launched before => 561000 (see ACLSIM_ERR_NOT_AN_EXECUTOR in
 * executor.c); workspace NULL with workspaceSize > 0 => 161001 (CANN's check);
 * workspaceSize < the required size, or workspace / a stored tensor not inside one live
 * device allocation of the size needed => 161002.  Then queues the kernel on `stream`
 * (NULL = current device's default stream; not a live stream => 361001).  A normal
 * executor is freed after its kernel ran; a repeatable one lives until
 * aclDestroyAclOpExecutor.  When phase 2 fails on a live, not yet launched, normal
 * executor, that executor is freed too (it is single-use and the caller has no other way
 * to release it; CANN deletes it as well).  Before the kernel runs, the tensors and
 * workspace are checked again (memory freed meanwhile => 507015 at synchronisation).
 * `api` is the public function name used in messages. */
ACLSIM_INTERNAL aclnnStatus aclsim_launch(const char *api, void *workspace, uint64_t workspace_size,
                                          aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif
