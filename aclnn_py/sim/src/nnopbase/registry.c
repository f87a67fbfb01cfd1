/*
 * An open-addressing hash set of live pointers (linear probing, backward-shift deletion),
 * each with the kind of object it is.
 */
#include <stdlib.h>

#include "registry.h"

pthread_mutex_t nn_lock = PTHREAD_MUTEX_INITIALIZER;

/* fork() while another thread holds nn_lock must not leave it held in the child, where that
 * thread does not exist.  Descriptors and executors are host objects: the child inherits
 * them as they are (the runtime's handlers, in libascendcl, run before these in the child
 * and after them in prepare; the two locks are never held together, so any order is safe). */
static void before_fork(void)
{
    pthread_mutex_lock(&nn_lock);
}

static void after_fork_in_parent(void)
{
    pthread_mutex_unlock(&nn_lock);
}

static void after_fork_in_child(void)
{
    pthread_mutex_init(&nn_lock, NULL);
}

__attribute__((constructor)) static void register_fork_handlers(void)
{
    pthread_atfork(before_fork, after_fork_in_parent, after_fork_in_child);
}

struct slot {
    uintptr_t key; /* 0 = empty */
    enum nn_kind kind;
};

static struct slot *slots;
static size_t capacity; /* a power of two */
static size_t used;

static size_t hash(uintptr_t key)
{
    uint64_t h = (uint64_t)key;
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    return (size_t)h;
}

static long find(uintptr_t key)
{
    if (capacity == 0) {
        return -1;
    }
    for (size_t i = hash(key) & (capacity - 1);; i = (i + 1) & (capacity - 1)) {
        if (slots[i].key == key) {
            return (long)i;
        }
        if (slots[i].key == 0) {
            return -1;
        }
    }
}

static void insert_slot(struct slot *table, size_t cap, uintptr_t key, enum nn_kind kind)
{
    size_t i = hash(key) & (cap - 1);
    while (table[i].key != 0) {
        i = (i + 1) & (cap - 1);
    }
    table[i].key = key;
    table[i].kind = kind;
}

int nn_add_locked(const void *p, enum nn_kind kind)
{
    uintptr_t key = (uintptr_t)p;
    long at = find(key);
    if (at >= 0) {
        slots[at].kind = kind;
        return 0;
    }
    if ((used + 1) * 2 > capacity) {
        size_t cap = capacity != 0 ? capacity * 2 : 256;
        struct slot *table = calloc(cap, sizeof *table);
        if (table == NULL) {
            return -1;
        }
        for (size_t i = 0; i < capacity; i++) {
            if (slots[i].key != 0) {
                insert_slot(table, cap, slots[i].key, slots[i].kind);
            }
        }
        free(slots);
        slots = table;
        capacity = cap;
    }
    insert_slot(slots, capacity, key, kind);
    used++;
    return 0;
}

enum nn_kind nn_kind_locked(const void *p)
{
    long at = p != NULL ? find((uintptr_t)p) : -1;
    return at >= 0 ? slots[at].kind : NN_NONE;
}

void nn_set_kind_locked(const void *p, enum nn_kind kind)
{
    long at = find((uintptr_t)p);
    if (at >= 0) {
        slots[at].kind = kind;
    }
}

void nn_remove_locked(const void *p)
{
    long at = find((uintptr_t)p);
    if (at < 0) {
        return;
    }
    size_t hole = (size_t)at;
    slots[hole].key = 0;
    used--;
    /* Shift later members of the probe run back so that lookups never stop early. */
    for (size_t i = (hole + 1) & (capacity - 1); slots[i].key != 0; i = (i + 1) & (capacity - 1)) {
        size_t home = hash(slots[i].key) & (capacity - 1);
        size_t dist_home = (i - home) & (capacity - 1);
        size_t dist_hole = (i - hole) & (capacity - 1);
        if (dist_home >= dist_hole) {
            slots[hole] = slots[i];
            slots[i].key = 0;
            hole = i;
        }
    }
    if (used == 0) {
        free(slots);
        slots = NULL;
        capacity = 0;
    }
}

const char *nn_kind_name(enum nn_kind kind)
{
    switch (kind) {
    case NN_TENSOR:
    case NN_TENSOR_IN_LIST:
        return "aclTensor";
    case NN_INT_ARRAY:
        return "aclIntArray";
    case NN_BOOL_ARRAY:
        return "aclBoolArray";
    case NN_FLOAT_ARRAY:
        return "aclFloatArray";
    case NN_SCALAR:
    case NN_SCALAR_IN_LIST:
        return "aclScalar";
    case NN_TENSOR_LIST:
        return "aclTensorList";
    case NN_SCALAR_LIST:
        return "aclScalarList";
    case NN_EXECUTOR:
        return "aclOpExecutor";
    case NN_NONE:
        break;
    }
    return "nothing";
}
