/* The binding's fast path: one aclnn call's whole host sequence in one crossing.
 *
 * Device buffers + H2D copies, aclCreateTensor/IntArray/BoolArray/Scalar, phase 1
 * ({op}GetWorkspaceSize), the workspace, phase 2 on the stream, aclrtSynchronizeStream, the
 * D2H copies into the caller's host arrays, and every release, exactly once, in reverse order
 * (on success after the synchronisation; on an error at once: the same order as
 * aclnn_py/ops/_aclnn.py's Call). It calls CANN's C API only through the function pointers it
 * is given (resolved by the binding from the libraries it loaded), so it runs the same on the
 * NPU (real CANN) as on the simulator, and it includes no CANN or Python header: it is loaded
 * by cffi's ABI mode like the CANN libraries, with no CPython ABI to match.
 *
 * The call is described by a flat int64 array, one item per argument of phase 1, in order:
 *   1 HOST_IN   dtype format ndim shape[ndim] strides[ndim] storage nbytes   (+1 host pointer)
 *   2 HOST_OUT  dtype format ndim shape[ndim] strides[ndim] storage nbytes zero (+1 host pointer)
 *   3 POINTER   (+1 pointer: an existing aclTensor*, NULL ...)
 *   4 INT_ARRAY n values[n]
 *   5 BOOL_ARRAY n values[n]
 *   6 VALUE     an integer argument (sign-extended to 64 bits)
 *   7 HOST_INOUT dtype format ndim shape[ndim] strides[ndim] storage nbytes  (+1 host pointer):
 *               copied in like HOST_IN and back like HOST_OUT (aclnn_py.call's ndarray outputs)
 *   8 SCALAR    dtype word: an aclScalar made of the value's bytes (at most 8, little-endian in
 *               word; aclCreateScalar copies them), destroyed with the call
 *   9 FLOAT_VALUE word: a double argument (its bits), or a float one (its bits in the low 32)
 *  10 TENSOR_LIST n, then n HOST_IN items (each +1 host pointer): an aclTensorList of n device
 *               copies, made as aclnn_py's Call.tensor_list makes it (each element's copy and
 *               descriptor, then aclCreateTensorList, which owns the descriptors from then on;
 *               its aclDestroyTensorList destroys them); at most MAX_LIST elements in one call,
 *               none in an asynchronous call; or n DEVICE_IN items
 *  11 DEVICE_IN dtype format ndim shape[ndim] strides[ndim] offset storage  (+1 device pointer):
 *               a descriptor over device memory the caller owns (an element of a list of device
 *               Tensors: the list takes the descriptor, never the memory); nothing is copied
 * then phase 1's own &workspaceSize and &executor.
 *
 * Phase 1 is called through a prototype of 64-bit integer slots, then MAX_FLOATS doubles. The
 * binding takes this path only for operators whose phase-1 parameters are pointers, integers
 * and at most MAX_FLOATS floats or doubles (it reads the prototype): on the Linux ABIs CANN
 * ships for (x86-64 System V, AArch64 AAPCS64) each integer or pointer argument travels in one
 * general register or one 8-byte stack slot exactly as a uint64_t holding its (sign- or
 * zero-extended) value does, and the caller removes the arguments; the floating-point ones
 * travel in the floating-point registers, the first eight of them there whatever their places
 * among the others, in order (a float in the low 32 bits of its register, which a double of
 * those bits fills), and take no integer register or stack slot.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

/* The layout of api_t and of the description: aclnn_py/_fast/__init__.py's ABI_VERSION must
 * equal it, or the binding does not use a helper built from other sources. */
#define ABI_VERSION 7

EXPORT int32_t aclnnpy_fast_abi_version(void) { return ABI_VERSION; }

typedef int32_t status_t;

/* CANN's functions, in the order of aclnn_py/_fast/__init__.py's API_FUNCTIONS. */
typedef struct {
    status_t (*malloc_)(void **, size_t, int32_t);
    status_t (*free_)(void *);
    status_t (*memcpy_)(void *, size_t, const void *, size_t, int32_t);
    status_t (*memset_)(void *, size_t, int32_t, size_t);
    void *(*create_tensor)(const int64_t *, uint64_t, int32_t, const int64_t *, int64_t, int32_t,
                           const int64_t *, uint64_t, void *);
    status_t (*destroy_tensor)(const void *);
    void *(*create_int_array)(const int64_t *, uint64_t);
    status_t (*destroy_int_array)(const void *);
    void *(*create_bool_array)(const bool *, uint64_t);
    status_t (*destroy_bool_array)(const void *);
    status_t (*destroy_executor)(void *);
    status_t (*synchronize)(void *);
    void *(*create_scalar)(void *, int32_t);
    status_t (*destroy_scalar)(const void *);
    void *(*create_tensor_list)(void *const *, uint64_t);
    status_t (*destroy_tensor_list)(const void *);
} api_t;

enum { HOST_IN = 1, HOST_OUT = 2, POINTER = 3, INT_ARRAY = 4, BOOL_ARRAY = 5, VALUE = 6, HOST_INOUT = 7, SCALAR = 8,
       FLOAT_VALUE = 9, TENSOR_LIST = 10, DEVICE_IN = 11 };

/* Where a failure happened: bits 32-39 of the result. */
enum {
    AT_MALLOC = 1, AT_H2D = 2, AT_CREATE_TENSOR = 3, AT_CREATE_INT_ARRAY = 4, AT_CREATE_BOOL_ARRAY = 5,
    AT_MEMSET = 6, AT_PHASE1 = 7, AT_WORKSPACE = 8, AT_PHASE2 = 9, AT_SYNCHRONIZE = 10, AT_D2H = 11,
    AT_DESCRIPTION = 12, AT_CREATE_SCALAR = 13, AT_CREATE_TENSOR_LIST = 14,
};

#define MAX_ARGS 30   /* phase-1 arguments besides &workspaceSize and &executor */
#define MAX_FLOATS 8  /* of them float or double (each in a floating-point register) */
#define MAX_DIMS 8
#define MAX_ARRAY 64
#define MAX_LIST 64   /* tensor-list elements in one call, all lists together */
#define MAX_HELD (MAX_ARGS + MAX_LIST)
#define ACL_MEM_MALLOC_HUGE_FIRST 0
#define ACL_MEMCPY_HOST_TO_DEVICE 1
#define ACL_MEMCPY_DEVICE_TO_HOST 2
#define ACLNN_ERR_PARAM_INVALID 161002
#define ACLNN_ERR_INNER 561000

typedef status_t (*phase1_t)(uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t,
                             uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t,
                             uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t,
                             uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t,
                             double, double, double, double, double, double, double, double);
typedef status_t (*phase2_t)(void *, uint64_t, void *, void *);

typedef struct {
    void *device;     /* aclrtFree'd */
    void *handle;     /* destroyed with kind's function */
    int kind;
    void *host;       /* HOST_OUT: where the result goes */
    uint64_t nbytes;
    uint64_t nbytes_device; /* the size of device */
} held_t;

static void release(const api_t *api, held_t *held, int count, void *workspace) {
    /* Reverse order of creation: the workspace was made last. */
    if (workspace) api->free_(workspace);
    for (int i = count - 1; i >= 0; --i) {
        held_t *h = &held[i];
        if (h->handle) {
            if (h->kind == INT_ARRAY) api->destroy_int_array(h->handle);
            else if (h->kind == BOOL_ARRAY) api->destroy_bool_array(h->handle);
            else if (h->kind == SCALAR) api->destroy_scalar(h->handle);
            else if (h->kind == TENSOR_LIST) api->destroy_tensor_list(h->handle);
            else api->destroy_tensor(h->handle);
        }
        if (h->device) api->free_(h->device);
    }
}

/* The result: the status in the low 32 bits, the stage that failed above them. */
#define RESULT(status_, at_) ((int64_t)(at_) << 32 | (int64_t)(uint32_t)(status_))

#define FAIL(status_, at_)                      \
    do {                                        \
        release(api, held, count, NULL);        \
        return RESULT(status_, at_);            \
    } while (0)

/* The device memory an asynchronous call leaves to the caller (its NumPy inputs' device copies
 * and its workspace): freed by the caller once the stream is past the call's work. */
typedef struct {
    int32_t launched;   /* phase 2 was called: the memory below may be in use by queued work */
    int32_t count;
    uint64_t nbytes;
    void *blocks[MAX_ARGS + 1];
} deferred_t;

/* Device memory an asynchronous call may take for its workspace instead of aclrtMalloc: blocks
 * of calls queued earlier on the same stream, waiting to be freed once it is past them (the
 * stream runs this call's work after theirs, as a caching allocator reuses a block on the
 * stream it was freed on). entry.c's, from the thread's batch; the block taken is in
 * later->blocks as the call's own from then on. */
typedef struct {
    int count;
    void *const *blocks;
    const uint64_t *sizes;
    int taken;               /* out: the index taken, or -1 */
    uint64_t workspace_size; /* out: the workspace's size (0: none; it is the last of later->blocks) */
} reuse_t;

static int64_t fast_call(const api_t *api, void *phase1, void *phase2, void *stream, const int64_t *desc,
                         int64_t desc_len, void *const *pointers, deferred_t *later, reuse_t *reuse) {
    if (reuse) {
        reuse->taken = -1;
        reuse->workspace_size = 0;
    }
    held_t held[MAX_HELD];
    uint64_t slots[MAX_ARGS + 2] = {0};
    double floats[MAX_FLOATS] = {0};
    int count = 0, index = 0, p = 0, nfloats = 0, listed = 0;
    int64_t at = 0;
    /* Inside a TENSOR_LIST: its first element's place in held and how many are still to come. */
    int list_first = 0;
    int64_t list_left = -1;
    while (at < desc_len) {
        if (index >= MAX_ARGS) FAIL(ACLNN_ERR_INNER, AT_DESCRIPTION);
        int64_t kind = desc[at++];
        /* (a list's elements: copies of host arrays, none in an asynchronous call, or device
         * memory's descriptors) */
        if (list_left > 0 && (later ? kind != DEVICE_IN : kind != HOST_IN && kind != DEVICE_IN))
            FAIL(ACLNN_ERR_INNER, AT_DESCRIPTION);
        held_t *h = &held[count];
        h->device = h->handle = h->host = NULL;
        h->kind = (int)kind;
        h->nbytes = h->nbytes_device = 0;
        if (kind == TENSOR_LIST) {
            if (list_left > 0 || at >= desc_len || desc[at] < 1 || desc[at] > MAX_LIST - listed)
                FAIL(ACLNN_ERR_INNER, AT_DESCRIPTION);
            list_left = desc[at++];
            listed += (int)list_left;
            list_first = count;
            continue;  /* its elements next; the list is made after the last */
        }
        if (kind == HOST_IN || kind == HOST_OUT || kind == HOST_INOUT || kind == DEVICE_IN) {
            /* An asynchronous call copies nothing back: no host output. */
            if (later && kind != HOST_IN && kind != DEVICE_IN) FAIL(ACLNN_ERR_INNER, AT_DESCRIPTION);
            int32_t dtype = (int32_t)desc[at], format = (int32_t)desc[at + 1];
            int64_t ndim = desc[at + 2];
            if (ndim < 0 || ndim > MAX_DIMS) FAIL(ACLNN_ERR_INNER, AT_DESCRIPTION);
            const int64_t *shape = desc + at + 3, *strides = shape + ndim;
            /* (DEVICE_IN: offset and storage where the others have storage and nbytes) */
            int64_t offset = kind == DEVICE_IN ? strides[ndim] : 0;
            int64_t storage = strides[kind == DEVICE_IN ? ndim + 1 : ndim];
            uint64_t nbytes = kind == DEVICE_IN ? 0 : (uint64_t)strides[ndim + 1];
            bool zero = kind == HOST_OUT && strides[ndim + 2];
            at += 3 + 2 * ndim + (kind == HOST_OUT ? 3 : 2);
            void *host = pointers[p++];
            ++count;  /* held from here on: what exists is released on a failure */
            if (kind == DEVICE_IN) {
                h->kind = HOST_IN; /* (released as a descriptor; the memory is the caller's) */
                h->device = NULL;
            } else if (nbytes) {
                status_t s = api->malloc_(&h->device, nbytes, ACL_MEM_MALLOC_HUGE_FIRST);
                if (s) { h->device = NULL; FAIL(s, AT_MALLOC); }
                h->nbytes_device = nbytes;
                if (kind != HOST_OUT) {
                    s = api->memcpy_(h->device, nbytes, host, nbytes, ACL_MEMCPY_HOST_TO_DEVICE);
                    if (s) FAIL(s, AT_H2D);
                }
                if (kind != HOST_IN) {
                    h->host = host;
                    h->nbytes = nbytes;
                }
            }
            h->handle = api->create_tensor(shape, (uint64_t)ndim, dtype, strides, offset, format, &storage, 1,
                                           kind == DEVICE_IN ? host : h->device);
            if (!h->handle) FAIL(ACLNN_ERR_PARAM_INVALID, AT_CREATE_TENSOR);
            if (zero && nbytes) {
                status_t s = api->memset_(h->device, nbytes, 0, nbytes);
                if (s) FAIL(s, AT_MEMSET);
            }
            if (list_left > 0) {
                if (--list_left) continue;  /* more elements of the list */
                /* The last element: the list, which owns the elements' descriptors from here on
                 * (their device copies stay held, freed after the list is destroyed). */
                void *items[MAX_LIST];
                int n = count - list_first;
                for (int i = 0; i < n; ++i) items[i] = held[list_first + i].handle;
                held_t *list = &held[count];
                list->device = list->host = NULL;
                list->kind = TENSOR_LIST;
                list->nbytes = list->nbytes_device = 0;
                list->handle = api->create_tensor_list(items, (uint64_t)n);
                if (!list->handle) FAIL(ACLNN_ERR_PARAM_INVALID, AT_CREATE_TENSOR_LIST);
                for (int i = 0; i < n; ++i) held[list_first + i].handle = NULL;
                ++count;
                list_left = -1;
                slots[index] = (uint64_t)(uintptr_t)list->handle;
            } else {
                slots[index] = (uint64_t)(uintptr_t)h->handle;
            }
        } else if (kind == INT_ARRAY || kind == BOOL_ARRAY) {
            int64_t n = desc[at++];
            if (n < 0 || n > MAX_ARRAY) FAIL(ACLNN_ERR_INNER, AT_DESCRIPTION);
            if (kind == INT_ARRAY) {
                h->handle = api->create_int_array(desc + at, (uint64_t)n);
            } else {
                bool flags[MAX_ARRAY];
                for (int64_t i = 0; i < n; ++i) flags[i] = desc[at + i] != 0;
                h->handle = api->create_bool_array(flags, (uint64_t)n);
            }
            at += n;
            if (!h->handle) FAIL(ACLNN_ERR_PARAM_INVALID, kind == INT_ARRAY ? AT_CREATE_INT_ARRAY : AT_CREATE_BOOL_ARRAY);
            ++count;
            slots[index] = (uint64_t)(uintptr_t)h->handle;
        } else if (kind == SCALAR) {
            /* [SCALAR, aclDataType, the value's bytes (at most 8) in one little-endian word]:
             * aclCreateScalar copies them */
            if (at + 2 > desc_len) FAIL(ACLNN_ERR_INNER, AT_DESCRIPTION);
            int32_t dtype = (int32_t)desc[at];
            int64_t word = desc[at + 1];
            at += 2;
            h->handle = api->create_scalar(&word, dtype);
            if (!h->handle) FAIL(ACLNN_ERR_PARAM_INVALID, AT_CREATE_SCALAR);
            ++count;
            slots[index] = (uint64_t)(uintptr_t)h->handle;
        } else if (kind == POINTER) {
            slots[index] = (uint64_t)(uintptr_t)pointers[p++];
        } else if (kind == VALUE) {
            slots[index] = (uint64_t)desc[at++];
        } else if (kind == FLOAT_VALUE) {
            /* its own register, not an integer slot */
            if (at >= desc_len || nfloats >= MAX_FLOATS) FAIL(ACLNN_ERR_INNER, AT_DESCRIPTION);
            memcpy(&floats[nfloats++], &desc[at++], sizeof(double));
            continue;
        } else {
            FAIL(ACLNN_ERR_INNER, AT_DESCRIPTION);
        }
        ++index;
    }
    if (list_left > 0) FAIL(ACLNN_ERR_INNER, AT_DESCRIPTION);
    uint64_t workspace_size = 0;
    void *executor = NULL;
    slots[index] = (uint64_t)(uintptr_t)&workspace_size;
    slots[index + 1] = (uint64_t)(uintptr_t)&executor;
    uint64_t *a = slots;
    status_t s = ((phase1_t)phase1)(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10], a[11],
                                    a[12], a[13], a[14], a[15], a[16], a[17], a[18], a[19], a[20], a[21],
                                    a[22], a[23], a[24], a[25], a[26], a[27], a[28], a[29], a[30], a[31],
                                    floats[0], floats[1], floats[2], floats[3], floats[4], floats[5], floats[6],
                                    floats[7]);
    if (s) FAIL(s, AT_PHASE1);
    void *workspace = NULL;
    for (int i = 0; workspace_size && later && reuse && i < reuse->count; ++i)
        if (reuse->sizes[i] == workspace_size) {
            workspace = reuse->blocks[i];
            reuse->taken = i;
            break;
        }
    if (reuse) reuse->workspace_size = workspace_size;
    if (workspace_size && !workspace) {
        s = api->malloc_(&workspace, workspace_size, ACL_MEM_MALLOC_HUGE_FIRST);
        if (s) {
            /* Phase 2 never ran, so it never took the executor. */
            api->destroy_executor(executor);
            FAIL(s, AT_WORKSPACE);
        }
    }
    /* Phase 2 consumes the executor whatever its outcome (single use). */
    int at_ = AT_PHASE2;
    s = ((phase2_t)phase2)(workspace, workspace_size, executor, stream);
    if (later) {
        /* Asynchronous: the descriptors and arrays go now (the launched work holds what it
         * needs of them), the device memory waits for the stream: the caller's to free. */
        later->launched = 1;
        later->count = 0;
        later->nbytes = 0;
        for (int i = 0; i < count; ++i) {
            if (held[i].device) {
                later->blocks[later->count++] = held[i].device;
                later->nbytes += held[i].nbytes_device;
                held[i].device = NULL;
            }
        }
        if (workspace) {
            later->blocks[later->count++] = workspace;
            later->nbytes += workspace_size;
        }
        release(api, held, count, NULL);
        return s ? RESULT(s, at_) : 0;
    }
    if (!s) {
        at_ = AT_SYNCHRONIZE;
        s = api->synchronize(stream);
        for (int i = 0; !s && i < count; ++i) {
            if (held[i].host && held[i].nbytes) {
                at_ = AT_D2H;
                s = api->memcpy_(held[i].host, held[i].nbytes, held[i].device, held[i].nbytes,
                                 ACL_MEMCPY_DEVICE_TO_HOST);
            }
        }
    }
    release(api, held, count, workspace);
    return s ? RESULT(s, at_) : 0;
}

EXPORT int64_t aclnnpy_fast_call(const void *api_p, void *phase1, void *phase2, void *stream,
                                 const int64_t *desc, int64_t desc_len, void *const *pointers) {
    return fast_call((const api_t *)api_p, phase1, phase2, stream, desc, desc_len, pointers, NULL, NULL);
}

/* The call without waiting (device Tensor results): no synchronisation, no host output; the
 * device memory it made (NumPy inputs' copies, the workspace) is left in *later for the
 * caller to free once the stream is past the work (later->launched: phase 2 was called; if
 * not, everything was released already). */
EXPORT int64_t aclnnpy_fast_call_async(const void *api_p, void *phase1, void *phase2, void *stream,
                                       const int64_t *desc, int64_t desc_len, void *const *pointers,
                                       void *later) {
    deferred_t *d = (deferred_t *)later;
    d->launched = 0;
    d->count = 0;
    d->nbytes = 0;
    return fast_call((const api_t *)api_p, phase1, phase2, stream, desc, desc_len, pointers, d, NULL);
}
