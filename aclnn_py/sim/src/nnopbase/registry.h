/*
 * aclnn_py simulator nnopbase: the set of live descriptors and executors, so that a
 * destroyed or foreign pointer handed back to the library gives an error, not a crash.
 */
#ifndef ACLSIM_NNOPBASE_REGISTRY_H
#define ACLSIM_NNOPBASE_REGISTRY_H

#include <pthread.h>
#include <stdint.h>

#define NN_HIDDEN __attribute__((visibility("hidden")))

enum nn_kind {
    NN_NONE = 0,
    NN_TENSOR,
    NN_TENSOR_IN_LIST, /* a tensor owned by an aclTensorList */
    NN_INT_ARRAY,
    NN_BOOL_ARRAY,
    NN_FLOAT_ARRAY,
    NN_SCALAR,
    NN_SCALAR_IN_LIST,
    NN_TENSOR_LIST,
    NN_SCALAR_LIST,
    NN_EXECUTOR
};

/* Guards the registry and every executor's bookkeeping. */
NN_HIDDEN extern pthread_mutex_t nn_lock;

/* All with nn_lock held.  nn_add returns 0, or -1 when out of memory. */
NN_HIDDEN int nn_add_locked(const void *p, enum nn_kind kind);
NN_HIDDEN enum nn_kind nn_kind_locked(const void *p);
NN_HIDDEN void nn_set_kind_locked(const void *p, enum nn_kind kind);
NN_HIDDEN void nn_remove_locked(const void *p);

/* The human name of a kind, for messages. */
NN_HIDDEN const char *nn_kind_name(enum nn_kind kind);

#endif
