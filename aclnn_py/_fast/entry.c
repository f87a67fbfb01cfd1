/* aclnn_py._fast._entry: the per-call fast entry, a CPython extension (the stable ABI of
 * Python 3.11: one build serves every later CPython).
 *
 * An op call whose arguments were seen before (same shapes, dtypes, strides, list and scalar
 * values, same backend library) replays the plan recorded the first time: the Python arguments
 * are read here (the buffer protocol for ndarrays, ints and bools for lists and scalars), the
 * plan is found in a hash table keyed by all of that, and the whole host sequence (device
 * buffers, copies, descriptors, both phases, workspace, synchronisation, copies back, every
 * release) runs in one crossing through fastcall.c's aclnnpy_fast_call, with the GIL released.
 * A call whose key has no plan yet goes through the binding's Python path, which checks the
 * arguments and records the plan only after the call succeeded (aclnn_py/ops/_aclnn.py).
 *
 * What a plan depends on and the key therefore holds:
 *   the backend's Library object (its identity), the operator name (call's plans),
 *   per argument its kind and: ndarray (exact type) -> dtype object (identity; the entry keeps
 *   it alive), writable, item size, ndim, shape, strides; list/tuple of ints/bools -> each
 *   element's type and value; list/tuple of ndarrays (a tensor list) -> each element's words
 *   as an ndarray argument's; list/tuple of Tensors -> each element's view (its token, as a
 *   Tensor argument's; its memory is passed, not keyed); int, bool -> value; float -> its bits;
 *   None.
 * Anything else (another type, a list of something else, an int beyond int64, a dtype the
 * buffer protocol does not export) has no key: such a call always takes the Python path.
 *
 * The device and the stream are not part of the key: a plan holds no device state, and every
 * run reads this thread's current stream from the Library (the caller's stream inside a
 * stream= call), opening device and stream through Library.stream() when the thread has none.
 */
#define Py_LIMITED_API 0x030B0000
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#include <pthread.h>
#include <string.h>

#include "fastcall.c"

/* The layout of a plan's description (plan_from_spec) and of the Planner's methods:
 * aclnn_py/_fast/__init__.py's ENTRY_VERSION must equal it, or the binding does not use an
 * entry built from other sources. The kinds below are read from this module by the binding. */
#define ENTRY_VERSION 12

#define MAX_KEY 640          /* int64 words of one key */
#define MAX_KEY_LIST 64      /* elements of a list argument */
#define MAX_PLANS 1024       /* entries of one table; it is cleared when full */
#define TABLE_SLOTS 2048     /* open addressing, a power of two > 2 * MAX_PLANS */
#define MAX_ADDRESSES 256    /* the cdata -> address cache */

/* Replace *slot by value (a new reference), dropping the old one (Py_XSETREF is not in the
 * limited API). */
#define SET_REF(slot, value)          \
    do {                              \
        PyObject *old_ = (PyObject *)(slot); \
        (slot) = (value);             \
        Py_XDECREF(old_);             \
    } while (0)

enum { K_ARRAY = 1, K_LIST, K_TUPLE, K_INT, K_BOOL, K_FLOAT, K_NONE, K_TENSOR, K_ARRAYS, K_TENSORS };
/* Where a pointer of a plan comes from. */
enum { P_ARG = 0, P_OUTPUT = 1, P_NULL = 2, P_ARG_WRITABLE = 3, P_TENSOR = 4, P_ITEM = 5, P_DEVICE_ITEM = 6 };
/* (P_ITEM: the bytes of an element of a list of ndarrays, by its place among the elements of
 * all such lists of the call, in argument order: key_t's items; P_DEVICE_ITEM: the device
 * memory of an element of a list of Tensors, by its place among the elements of all such
 * lists: key_t's device_items) */
/* What a plan returns. */
enum { R_SINGLE = 0, R_TUPLE = 1, R_NONE = 2 };

/* Set once by setup(). */
static PyObject *ndarray_type, *np_empty, *to_address, *fast_failed, *api_for, *miss;
/* Device plans: aclnn_py.Tensor (exact type), device_done(lib, op, release, nbytes, ok) after
 * phase 2 was launched. */
static PyObject *tensor_type, *device_done;
/* set_device_hooks(): library._nothing (the release a device call defers), queued.blocking,
 * the package's directory (queued._PACKAGE), queued.KEPT, library.MAX_PENDING_RELEASES. */
static PyObject *nothing, *blocking, *package;
static Py_ssize_t kept_calls;
/* The _runtime.library module: its MAX_PENDING_RELEASES and MAX_PENDING_BYTES, read when they
 * are checked (as Library.defer reads them). */
static PyObject *library_module, *s_max_pending, *s_max_bytes;

static Py_ssize_t last_most;  /* the bounds as last read (last_read: they were) */
static long long last_bytes;
static int last_read;

/* The bounds on a thread's waiting releases: 0, or -1 with an error. Read from the module's
 * namespace (a module's attribute lookup goes through its type first). */
static int pending_bounds(Py_ssize_t *most, long long *bytes) {
    PyObject *names = PyModule_GetDict(library_module); /* (borrowed) */
    PyObject *m = names ? PyDict_GetItemWithError(names, s_max_pending) : NULL;
    PyObject *b = m ? PyDict_GetItemWithError(names, s_max_bytes) : NULL;
    if (!b) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_AttributeError, "the library module's MAX_PENDING_RELEASES / MAX_PENDING_BYTES");
        return -1;
    }
    *most = PyLong_AsSsize_t(m);
    *bytes = PyLong_AsLongLong(b);
    if (PyErr_Occurred()) return -1;
    last_most = *most;
    last_bytes = *bytes;
    last_read = 1;
    return 0;
}

/* The bounds as every device call reads them anew (pending_bounds), for a dropped output's
 * block: a change of them shows from the next call on (a bound is a soft limit: reaching it
 * synchronises). */
static int pending_bounds_as_read(Py_ssize_t *most, long long *bytes) {
    if (!last_read) return pending_bounds(most, bytes);
    *most = last_most;
    *bytes = last_bytes;
    return 0;
}
static PyObject *addresses;  /* cdata -> int: stream and table addresses */
static PyObject *s_local, *s_state, *s_stream, *s_pending, *s_fast_api, *s_table, *s_dtype, *s_synchronize,
    *s_stream_method, *s_has_pending, *s_fast_key, *s_capturing, *s_queued, *s_capture, *s_f_code, *s_f_back,
    *s_f_lasti, *s_co_filename, *s_own, *s_nbytes, *s_lock, *s_acquire, *s_release, *s_queued_flag, *s_done, *s_value,
    *s_callers, *s_handover, *s_releases, *s_owner, *s_batch;
static int plans_on = 1;

/* -- a thread's state (library.ThreadStreams), read and written by its slots' offsets ------
 *
 * The per-call bookkeeping reads a dozen attributes of the thread's state; through
 * PyObject_GetAttr each is a type lookup and a descriptor call. Its class keeps them in
 * __slots__, which CPython lays out as object pointers at fixed offsets in the instance: those
 * offsets are found once (set_state_type: a value unique to each attribute is set, then looked
 * for in the instance's memory, each found exactly once), and read directly on an instance of
 * exactly that class (find_slots, below). Anything else (another type, an attribute not found
 * so, one unset) takes PyObject_GetAttr / PyObject_SetAttr, with the same results. */
static PyObject *state_type;                           /* the class, or NULL: attributes */
/* The attributes the entry reads, by index: */
enum { ST_STREAM, ST_OWN, ST_PENDING, ST_NBYTES, ST_QUEUED, ST_CAPTURE, ST_OWNER, ST_BATCH, ST_HANDOVER, ST_FIELDS };
static PyObject **const state_fields[ST_FIELDS] = {&s_stream, &s_own, &s_pending, &s_nbytes, &s_queued, &s_capture,
                                                   &s_owner, &s_batch, &s_handover};
static Py_ssize_t state_at[ST_FIELDS];                 /* their offsets in state_type's instances, or 0 */

static Py_ssize_t state_offset(PyObject *state, int field) {
    return (PyObject *)Py_TYPE(state) == state_type ? state_at[field] : 0;
}

/* state.<field> (a new reference), or NULL with an error. */
static PyObject *state_get(PyObject *state, int field) {
    Py_ssize_t at = state_offset(state, field);
    PyObject *value = at ? *(PyObject **)((char *)state + at) : NULL;
    if (!value) return PyObject_GetAttr(state, *state_fields[field]);
    Py_INCREF(value);
    return value;
}

/* state.<field> = value: 0, or -1 with an error. */
static int state_set(PyObject *state, int field, PyObject *value) {
    Py_ssize_t at = state_offset(state, field);
    if (!at) return PyObject_SetAttr(state, *state_fields[field], value);
    Py_INCREF(value);
    SET_REF(*(PyObject **)((char *)state + at), value);
    return 0;
}

/* Where instances of cls keep the attributes names[0..n): a class's __slots__ are object
 * pointers at fixed offsets in its instances, found here once (an instance made by
 * cls.__new__ gets a new object for each attribute, which is then looked for in the instance's
 * memory, and must be found exactly once). 1 with offsets[] set; 0 when not all of them are
 * found so (offsets zeroed, no error: the attributes are then read and set as attributes). */
static int find_slots(PyObject *cls, PyObject **const *names, int n, Py_ssize_t *offsets) {
    for (int f = 0; f < n; ++f) offsets[f] = 0;
    if (!PyType_Check(cls)) return 0;
    PyObject *size_obj = PyObject_GetAttrString(cls, "__basicsize__");
    Py_ssize_t size = size_obj ? PyLong_AsSsize_t(size_obj) : -1;
    Py_XDECREF(size_obj);
    PyObject *obj = size > 0 ? PyObject_CallMethod(cls, "__new__", "O", cls) : NULL;
    PyObject *marks = obj ? PyList_New(0) : NULL;
    int found_all = marks != NULL;
    for (int f = 0; found_all && f < n; ++f) {
        PyObject *mark = PyList_New(0);  /* (a new object: its address is in no other slot) */
        found_all = mark && !PyList_Append(marks, mark) && !PyObject_SetAttr(obj, *names[f], mark);
        int times = 0;
        for (Py_ssize_t at = (Py_ssize_t)sizeof(PyObject); found_all && at + (Py_ssize_t)sizeof(PyObject *) <= size;
             at += (Py_ssize_t)sizeof(PyObject *))
            if (*(PyObject **)((char *)obj + at) == mark) {
                offsets[f] = at;
                ++times;
            }
        found_all = found_all && times == 1;
        Py_XDECREF(mark);
    }
    Py_XDECREF(marks);
    Py_XDECREF(obj);
    if (!found_all || PyErr_Occurred()) {
        for (int f = 0; f < n; ++f) offsets[f] = 0;
        PyErr_Clear();
        return 0;
    }
    return 1;
}

/* *type = cls when its slots names[0..n) are found (find_slots: offsets), else NULL; whether
 * they were (Python's bool), or NULL with a TypeError when cls is not a class. */
static PyObject *set_slotted_type(PyObject **type, PyObject *cls, PyObject **const *names, int n, Py_ssize_t *offsets) {
    Py_CLEAR(*type);
    if (!PyType_Check(cls)) {
        PyErr_SetString(PyExc_TypeError, "a class expected");
        return NULL;
    }
    if (!find_slots(cls, names, n, offsets)) Py_RETURN_FALSE;
    Py_INCREF(cls);
    *type = cls;
    Py_RETURN_TRUE;
}

/* set_state_type(cls): the class of the threads' states (library.ThreadStreams), its slots
 * found; whether they were (else its attributes are read). */
static PyObject *set_state_type(PyObject *module, PyObject *cls) {
    (void)module;
    return set_slotted_type(&state_type, cls, state_fields, ST_FIELDS, state_at);
}

#include "outputs.c"

/* -- plans ----------------------------------------------------------------------------- */

typedef struct {
    void *phase1, *phase2;
    int64_t *desc;
    int64_t desc_len;
    int npointers;
    int8_t *pointer_kind;
    int32_t *pointer_index;
    int noutputs;
    PyObject **output_args; /* (shape, dtype) for numpy.empty, or NULL: a NULL output (None) */
    struct form *forms;     /* a device plan's: its outputs' forms (outputs.c), ndim -1: None */
    int nresults;
    int8_t *result_kind;    /* P_ARG: argument i as given; P_OUTPUT: new output i */
    int32_t *result_index;
    int mode;
    int device;             /* device Tensor arguments: outputs are new Tensors, nothing waits */
    PyObject *op;           /* the operator's C name, for errors */
} plan_t;

static void plan_free(plan_t *p) {
    if (!p) return;
    for (int i = 0; i < p->noutputs; ++i) Py_XDECREF(p->output_args ? p->output_args[i] : NULL);
    if (p->forms)
        for (int i = 0; i < p->noutputs; ++i) form_clear(&p->forms[i]);
    PyMem_Free(p->forms);
    Py_XDECREF(p->op);
    PyMem_Free(p->desc);
    PyMem_Free(p->pointer_kind);
    PyMem_Free(p->pointer_index);
    PyMem_Free(p->output_args);
    PyMem_Free(p->result_kind);
    PyMem_Free(p->result_index);
    PyMem_Free(p);
}

static void plan_capsule_free(PyObject *capsule) { plan_free(PyCapsule_GetPointer(capsule, "aclnn_py.plan")); }

static int pairs(PyObject *seq, const char *what, int max_kind, int *count, int8_t **kinds, int32_t **indexes) {
    PyObject *fast = PySequence_Tuple(seq);
    if (!fast) return -1;
    Py_ssize_t n = PyTuple_Size(fast);
    *count = (int)n;
    *kinds = PyMem_Calloc(n ? (size_t)n : 1, 1);
    *indexes = PyMem_Calloc(n ? (size_t)n : 1, sizeof(int32_t));
    if (!*kinds || !*indexes) { Py_DECREF(fast); PyErr_NoMemory(); return -1; }
    for (Py_ssize_t i = 0; i < n; ++i) {
        long kind, index;
        PyObject *pair = PyTuple_GetItem(fast, i);
        PyObject *second = pair && PyTuple_Check(pair) && PyTuple_Size(pair) == 2 ? PyTuple_GetItem(pair, 1) : NULL;
        if (!second) { Py_DECREF(fast); PyErr_Format(PyExc_ValueError, "%s: pairs expected", what); return -1; }
        kind = PyLong_AsLong(PyTuple_GetItem(pair, 0));
        index = second == Py_None ? 0 : PyLong_AsLong(second);
        if (PyErr_Occurred() || kind < 0 || kind > max_kind || index < 0 ||
            index >= (kind == P_ITEM || kind == P_DEVICE_ITEM ? MAX_LIST : MAX_ARGS)) {
            Py_DECREF(fast);
            if (!PyErr_Occurred()) PyErr_Format(PyExc_ValueError, "%s: bad pair", what);
            return -1;
        }
        (*kinds)[i] = (int8_t)kind;
        (*indexes)[i] = (int32_t)index;
    }
    Py_DECREF(fast);
    return 0;
}

/* How many pointers fastcall.c takes for desc (walked as it walks it), or -1 when desc is not
 * one it would accept whole: every plan is checked once, when it is made. *host_listed: the
 * copies of host arrays among lists' elements; *devices: the DEVICE_IN items. */
static int desc_pointers(const int64_t *desc, int64_t len, int *host_listed, int *devices) {
    int64_t at = 0, list_left = 0;
    int pointers = 0, items = 0, floats = 0, listed = 0;
    *host_listed = *devices = 0;
    while (at < len) {
        int64_t kind = desc[at++];
        if (list_left > 0) {
            if (kind != HOST_IN && kind != DEVICE_IN) return -1;
            if (kind == HOST_IN) ++*host_listed;
            --list_left;
            --items; /* (an element: the list is the argument) */
        }
        if (++items > MAX_ARGS) return -1;
        if (kind == TENSOR_LIST) {
            if (at >= len || desc[at] < 1 || desc[at] > MAX_LIST - listed) return -1;
            list_left = desc[at++];
            listed += (int)list_left;
        } else if (kind == HOST_IN || kind == HOST_OUT || kind == HOST_INOUT || kind == DEVICE_IN) {
            if (kind == DEVICE_IN) ++*devices;
            if (at + 3 > len) return -1;
            int64_t ndim = desc[at + 2];
            if (ndim < 0 || ndim > MAX_DIMS) return -1;
            at += 3 + 2 * ndim + (kind == HOST_OUT ? 3 : 2);
            ++pointers;
        } else if (kind == INT_ARRAY || kind == BOOL_ARRAY) {
            if (at >= len || desc[at] < 0 || desc[at] > MAX_ARRAY) return -1;
            at += 1 + desc[at];
        } else if (kind == SCALAR) {
            if (at + 2 > len) return -1;
            at += 2;
        } else if (kind == POINTER) {
            ++pointers;
        } else if (kind == VALUE) {
            ++at;
        } else if (kind == FLOAT_VALUE) {
            --items; /* (a floating-point register, not an argument slot) */
            if (++floats > MAX_FLOATS) return -1;
            ++at;
        } else {
            return -1;
        }
        if (at > len) return -1;
    }
    return list_left ? -1 : pointers;
}

/* A plan from its Python description (ops/_aclnn.py's plan_spec):
 * (op, phase1 address, phase2 address, desc ints, pointers [(kind, index)],
 *  outputs [(shape, dtype) or None], results [(kind, index)], mode[, device]);
 * a device plan's outputs are [tensor.output_form(...) or None] (outputs.c's forms). */
static PyObject *plan_from_spec(PyObject *spec) {
    PyObject *op, *desc, *pointers, *outputs, *results;
    unsigned long long phase1, phase2;
    int mode, device = 0;
    if (!PyArg_ParseTuple(spec, "UKKOOOOi|i", &op, &phase1, &phase2, &desc, &pointers, &outputs, &results, &mode,
                          &device))
        return NULL;
    plan_t *p = PyMem_Calloc(1, sizeof *p);
    if (!p) return PyErr_NoMemory();
    p->phase1 = (void *)(uintptr_t)phase1;
    p->phase2 = (void *)(uintptr_t)phase2;
    p->mode = mode;
    p->device = device != 0;
    Py_INCREF(op);
    p->op = op;
    PyObject *d = PySequence_Tuple(desc);
    if (!d) goto fail;
    p->desc_len = PyTuple_Size(d);
    p->desc = PyMem_Calloc(p->desc_len ? (size_t)p->desc_len : 1, sizeof(int64_t));
    if (!p->desc) { Py_DECREF(d); PyErr_NoMemory(); goto fail; }
    for (Py_ssize_t i = 0; i < p->desc_len; ++i) {
        p->desc[i] = PyLong_AsLongLong(PyTuple_GetItem(d, i));
        if (PyErr_Occurred()) { Py_DECREF(d); goto fail; }
    }
    Py_DECREF(d);
    if (pairs(pointers, "pointers", P_DEVICE_ITEM, &p->npointers, &p->pointer_kind, &p->pointer_index)) goto fail;
    if (pairs(results, "results", P_OUTPUT, &p->nresults, &p->result_kind, &p->result_index)) goto fail;
    PyObject *o = PySequence_Tuple(outputs);
    if (!o) goto fail;
    p->noutputs = (int)PyTuple_Size(o);
    p->output_args = PyMem_Calloc(p->noutputs ? (size_t)p->noutputs : 1, sizeof(PyObject *));
    if (!p->output_args) { Py_DECREF(o); PyErr_NoMemory(); goto fail; }
    if (p->device && !(p->forms = PyMem_Calloc(p->noutputs ? (size_t)p->noutputs : 1, sizeof(form_t)))) {
        Py_DECREF(o);
        PyErr_NoMemory();
        goto fail;
    }
    for (int i = 0; i < p->noutputs; ++i) {
        PyObject *item = PyTuple_GetItem(o, i);
        if (item == Py_None) {
            if (p->device) p->forms[i].ndim = -1;
        } else if (p->device) {
            if (form_from(item, &p->forms[i])) { Py_DECREF(o); goto fail; }
            Py_INCREF(item);
            p->output_args[i] = item;  /* (which outputs are None; the form is in forms) */
        } else {
            Py_INCREF(item);
            p->output_args[i] = item;
        }
    }
    Py_DECREF(o);
    int host_listed = 0, devices = 0;
    /* (a device plan's lists: of device memory only, as fastcall.c's asynchronous call takes them;
     * a host plan describes no device memory) */
    if (desc_pointers(p->desc, p->desc_len, &host_listed, &devices) != p->npointers ||
        (p->device ? host_listed : devices) != 0) {
        PyErr_SetString(PyExc_ValueError, "plan: a description fastcall.c would not take, or pointers for another one");
        goto fail;
    }
    if (p->npointers > MAX_ARGS + MAX_LIST || p->noutputs > MAX_ARGS || p->nresults > MAX_ARGS || p->mode < R_SINGLE ||
        p->mode > R_NONE) {
        PyErr_SetString(PyExc_ValueError, "plan out of bounds");
        goto fail;
    }
    for (int i = 0; i < p->npointers; ++i) {
        if (p->pointer_kind[i] == P_OUTPUT && p->pointer_index[i] >= p->noutputs) {
            PyErr_SetString(PyExc_ValueError, "plan: pointer to a missing output");
            goto fail;
        }
        if ((p->pointer_kind[i] == P_ITEM && p->device) || (p->pointer_kind[i] == P_DEVICE_ITEM && !p->device)) {
            PyErr_SetString(PyExc_ValueError, "plan: a host list's element in a device plan, or the reverse");
            goto fail;
        }
        if ((p->pointer_kind[i] == P_TENSOR || p->pointer_kind[i] == P_ARG_WRITABLE) && p->device != (p->pointer_kind[i] == P_TENSOR)) {
            PyErr_SetString(PyExc_ValueError, "plan: a Tensor pointer in a host plan, or a host output in a device plan");
            goto fail;
        }
    }
    for (int i = 0; i < p->nresults; ++i)
        if (p->result_kind[i] == P_OUTPUT && p->result_index[i] >= p->noutputs) {
            PyErr_SetString(PyExc_ValueError, "plan: result of a missing output");
            goto fail;
        }
    PyObject *capsule = PyCapsule_New(p, "aclnn_py.plan", plan_capsule_free);
    if (!capsule) goto fail;
    return capsule;
fail:
    plan_free(p);
    return NULL;
}

/* -- keys ------------------------------------------------------------------------------ */

typedef struct {
    int64_t words[MAX_KEY];
    Py_ssize_t len;
    PyObject *dtypes[MAX_ARGS + MAX_LIST]; /* new references, identities in words */
    int ndtypes;
    Py_buffer views[MAX_ARGS];
    int8_t has_view[MAX_ARGS];
    Py_buffer items[MAX_LIST];  /* the elements of lists of ndarrays, in argument order */
    int nitems;
    void *handles[MAX_ARGS];    /* a Tensor argument's aclTensor* */
    int8_t is_tensor[MAX_ARGS];
    void *device_items[MAX_LIST]; /* the device memory of the elements of lists of Tensors */
    int ndevice_items;
} key_t;

static void key_init(key_t *k) {
    k->len = 0;
    k->ndtypes = 0;
    k->nitems = 0;
    k->ndevice_items = 0;
    memset(k->has_view, 0, sizeof k->has_view);
    memset(k->is_tensor, 0, sizeof k->is_tensor);
}

/* The argument buffers the key held (before any Python code runs again). */
static void key_release_views(key_t *k) {
    for (int i = 0; i < MAX_ARGS; ++i)
        if (k->has_view[i]) {
            PyBuffer_Release(&k->views[i]);
            k->has_view[i] = 0;
        }
    for (int i = 0; i < k->nitems; ++i) PyBuffer_Release(&k->items[i]);
    k->nitems = 0;
}

/* Everything the key held. */
static void key_release(key_t *k) {
    key_release_views(k);
    for (int i = 0; i < k->ndtypes; ++i) Py_DECREF(k->dtypes[i]);
    k->ndtypes = 0;
}

#define PUT(v)                                      \
    do {                                            \
        if (k->len >= MAX_KEY) return 0;            \
        k->words[k->len++] = (int64_t)(v);          \
    } while (0)

static int key_int(key_t *k, PyObject *v) {
    if (PyBool_Check(v)) {
        PUT(K_BOOL);
        PUT(v == Py_True);
        return 1;
    }
    if (PyLong_CheckExact(v)) {
        int overflow = 0;
        long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
        if (overflow || (x == -1 && PyErr_Occurred())) {
            PyErr_Clear();
            return 0;
        }
        PUT(K_INT);
        PUT(x);
        return 1;
    }
    return 0;
}

/* An ndarray's words (its buffer v, held by the caller): 1, 0 none (no key), -1 error. */
/* A device Tensor's fast_key, a new reference: (the interned tuple of its view, its aclTensor*
 * and its device memory as ints); NULL, no error set, when it has none of that form (None once
 * closed: then no key, and the Python path reports it). */
static PyObject *fast_key_of(PyObject *tensor) {
    PyObject *fk = tensor_get(tensor, TA_FAST_KEY);
    if (!fk) {
        PyErr_Clear();
        return NULL;
    }
    if (!PyTuple_Check(fk) || PyTuple_Size(fk) != 3) {
        Py_DECREF(fk);
        return NULL;
    }
    return fk;
}

static int key_array(key_t *k, PyObject *a, Py_buffer *v) {
    PyObject *dtype = PyObject_GetAttr(a, s_dtype);
    if (!dtype) return -1;
    k->dtypes[k->ndtypes++] = dtype;
    if (v->ndim > MAX_DIMS) return 0;
    PUT(K_ARRAY);
    PUT((intptr_t)dtype);
    PUT(v->readonly);
    PUT(v->itemsize);
    PUT(v->ndim);
    for (int d = 0; d < v->ndim; ++d) PUT(v->shape[d]);
    for (int d = 0; d < v->ndim; ++d) PUT(v->strides[d]);
    return 1;
}

/* The key of (lib, name or NULL, args): 1 made, 0 none (a Python-path call), -1 error.
 * Buffers of ndarray arguments stay held in k->views (key_release). */
static int make_key(key_t *k, PyObject *lib, PyObject *name, PyObject *const *args, Py_ssize_t nargs) {
    key_init(k);
    if (nargs > MAX_ARGS) return 0;
    PUT((intptr_t)lib);
    PUT(nargs);
    if (name) {
        Py_hash_t h = PyObject_Hash(name);
        if (h == -1) return -1;
        PUT(h);
    }
    for (Py_ssize_t i = 0; i < nargs; ++i) {
        PyObject *a = args[i];
        PyTypeObject *t = Py_TYPE(a);
        if ((PyObject *)t == ndarray_type) {
            Py_buffer *v = &k->views[i];
            if (PyObject_GetBuffer(a, v, PyBUF_STRIDES) < 0) {
                PyErr_Clear(); /* e.g. a dtype the buffer protocol cannot describe */
                return 0;
            }
            k->has_view[i] = 1;
            int made = key_array(k, a, v);
            if (made <= 0) return made;
        } else if ((PyObject *)t == tensor_type) {
            PyObject *fk = fast_key_of(a);
            if (!fk) return 0;
            PyObject *token = PyTuple_GetItem(fk, 0);
            void *handle = PyLong_AsVoidPtr(PyTuple_GetItem(fk, 1));
            if (!handle) {
                PyErr_Clear();
                Py_DECREF(fk);
                return 0;
            }
            Py_INCREF(token);
            k->dtypes[k->ndtypes++] = token;
            Py_DECREF(fk);
            k->handles[i] = handle;
            k->is_tensor[i] = 1;
            PUT(K_TENSOR);
            PUT((intptr_t)token);
        } else if (t == &PyList_Type || t == &PyTuple_Type) {
            Py_ssize_t n = PySequence_Size(a);
            if (n < 0) return -1;
            if (n > MAX_KEY_LIST) return 0;
            PyObject *first = n ? (t == &PyList_Type ? PyList_GetItem(a, 0) : PyTuple_GetItem(a, 0)) : NULL;
            int arrays = first && (PyObject *)Py_TYPE(first) == ndarray_type;
            int tensors = first && (PyObject *)Py_TYPE(first) == tensor_type;
            PUT(t == &PyList_Type ? K_LIST : K_TUPLE);
            PUT(n);
            if (arrays) PUT(K_ARRAYS); /* a list of ndarrays (a tensor list): each element's words */
            if (tensors) PUT(K_TENSORS); /* a list of Tensors: each element's view (its token) */
            for (Py_ssize_t j = 0; j < n; ++j) {
                PyObject *e = t == &PyList_Type ? PyList_GetItem(a, j) : PyTuple_GetItem(a, j);
                if (!e) return -1;
                if (tensors) {
                    /* (open, of this view: its fast_key as a Tensor argument's; the device
                     * memory is passed, the list's descriptor made over it per call) */
                    if ((PyObject *)Py_TYPE(e) != tensor_type || k->nitems + k->ndevice_items >= MAX_LIST) return 0;
                    PyObject *fk = fast_key_of(e);
                    if (!fk) return 0;
                    void *data = PyLong_AsVoidPtr(PyTuple_GetItem(fk, 2));
                    if (!data && PyErr_Occurred()) {
                        PyErr_Clear();
                        Py_DECREF(fk);
                        return 0;
                    }
                    PyObject *token = PyTuple_GetItem(fk, 0);
                    Py_INCREF(token);
                    k->dtypes[k->ndtypes++] = token;
                    Py_DECREF(fk);
                    k->device_items[k->ndevice_items++] = data;
                    PUT(K_TENSOR);
                    PUT((intptr_t)token);
                    continue;
                }
                if (!arrays) {
                    if (!key_int(k, e)) return 0;
                    continue;
                }
                if ((PyObject *)Py_TYPE(e) != ndarray_type || k->nitems + k->ndevice_items >= MAX_LIST) return 0;
                Py_buffer *v = &k->items[k->nitems];
                if (PyObject_GetBuffer(e, v, PyBUF_STRIDES) < 0) {
                    PyErr_Clear();
                    return 0;
                }
                ++k->nitems;
                int made = key_array(k, e, v);
                if (made <= 0) return made;
            }
        } else if (a == Py_None) {
            PUT(K_NONE);
        } else if (PyBool_Check(a) || PyLong_CheckExact(a)) {
            if (!key_int(k, a)) return 0;
        } else if (PyFloat_CheckExact(a)) {
            double x = PyFloat_AsDouble(a);
            int64_t bits;
            memcpy(&bits, &x, sizeof bits);
            PUT(K_FLOAT);
            PUT(bits);
        } else {
            return 0;
        }
    }
    return 1;
}

static uint64_t key_hash(const key_t *k) {
    uint64_t h = 0x9E3779B97F4A7C15ull;
    for (Py_ssize_t i = 0; i < k->len; ++i) {
        h ^= (uint64_t)k->words[i];
        h *= 0xFF51AFD7ED558CCDull;
        h ^= h >> 32;
    }
    return h;
}

/* -- the table ------------------------------------------------------------------------- */

typedef struct {
    uint64_t hash;
    int64_t *words;
    Py_ssize_t len;
    PyObject *name;  /* call's operator name, or NULL */
    PyObject *plan;  /* a plan capsule, or Py_None: this key takes the Python path */
    PyObject *refs;  /* the library and dtypes whose identities the key holds */
} entry_t;

typedef struct {
    entry_t *slots;
    Py_ssize_t count;
} table_t;

static void table_clear(table_t *t) {
    if (!t->slots) return;
    for (Py_ssize_t i = 0; i < TABLE_SLOTS; ++i) {
        entry_t *e = &t->slots[i];
        if (!e->words) continue;
        PyMem_Free(e->words);
        Py_XDECREF(e->name);
        Py_XDECREF(e->plan);
        Py_XDECREF(e->refs);
        memset(e, 0, sizeof *e);
    }
    t->count = 0;
}

static entry_t *table_find(table_t *t, const key_t *k, uint64_t hash, PyObject *name) {
    if (!t->slots) return NULL;
    for (Py_ssize_t i = (Py_ssize_t)(hash & (TABLE_SLOTS - 1));; i = (i + 1) & (TABLE_SLOTS - 1)) {
        entry_t *e = &t->slots[i];
        if (!e->words) return NULL;
        if (e->hash == hash && e->len == k->len && !memcmp(e->words, k->words, (size_t)k->len * sizeof(int64_t))) {
            if (!name) return e;
            if (e->name == name) return e;
            int same = PyObject_RichCompareBool(e->name, name, Py_EQ);
            if (same < 0) PyErr_Clear();
            if (same > 0) return e;
        }
    }
}

/* Store plan (a capsule or None) under k; a full table is cleared first. 0, or -1 on error. */
static int table_add(table_t *t, const key_t *k, uint64_t hash, PyObject *name, PyObject *lib, PyObject *plan) {
    if (!t->slots) {
        t->slots = PyMem_Calloc(TABLE_SLOTS, sizeof(entry_t));
        if (!t->slots) { PyErr_NoMemory(); return -1; }
    }
    entry_t *e = table_find(t, k, hash, name);
    if (!e) {
        if (t->count >= MAX_PLANS) table_clear(t);
        Py_ssize_t i = (Py_ssize_t)(hash & (TABLE_SLOTS - 1));
        while (t->slots[i].words) i = (i + 1) & (TABLE_SLOTS - 1);
        e = &t->slots[i];
        PyObject *refs = PyTuple_New(1 + k->ndtypes);
        int64_t *words = PyMem_Malloc((size_t)k->len * sizeof(int64_t));
        if (!refs || !words) { Py_XDECREF(refs); PyMem_Free(words); PyErr_NoMemory(); return -1; }
        Py_INCREF(lib);
        PyTuple_SetItem(refs, 0, lib);
        for (int j = 0; j < k->ndtypes; ++j) {
            Py_INCREF(k->dtypes[j]);
            PyTuple_SetItem(refs, 1 + j, k->dtypes[j]);
        }
        memcpy(words, k->words, (size_t)k->len * sizeof(int64_t));
        e->words = words;
        e->len = k->len;
        e->hash = hash;
        e->refs = refs;
        Py_XINCREF(name);
        e->name = name;
        e->plan = NULL;
        ++t->count;
    }
    Py_INCREF(plan);
    SET_REF(e->plan, plan);
    return 0;
}

/* -- running a plan -------------------------------------------------------------------- */

/* The address a cffi pointer (a stream, the function table) holds. The last few asked for
 * are kept by identity (held, so no other object can have their address; a cffi pointer's
 * address never changes): a call asks for its table and its stream. */
#define SEEN_ADDRESSES 4
static PyObject *seen_cdata[SEEN_ADDRESSES];
static void *seen_address[SEEN_ADDRESSES];
static int seen_next;

static int address_of(PyObject *cdata, void **out) {
    for (int i = 0; i < SEEN_ADDRESSES; ++i)
        if (seen_cdata[i] == cdata) {
            *out = seen_address[i];
            return 0;
        }
    PyObject *found = PyDict_GetItemWithError(addresses, cdata);
    if (!found) {
        if (PyErr_Occurred()) return -1;
        found = PyObject_CallFunctionObjArgs(to_address, cdata, NULL);
        if (!found) return -1;
        if (PyDict_Size(addresses) >= MAX_ADDRESSES) PyDict_Clear(addresses);
        int failed = PyDict_SetItem(addresses, cdata, found);
        Py_DECREF(found);
        if (failed) return -1;
    }
    *out = PyLong_AsVoidPtr(found);
    if (*out == NULL && PyErr_Occurred()) return -1;
    Py_INCREF(cdata);
    SET_REF(seen_cdata[seen_next], cdata);
    seen_address[seen_next] = *out;
    seen_next = (seen_next + 1) % SEEN_ADDRESSES;
    return 0;
}

/* This thread's ThreadStreams of lib: lib.local.state, found through the threading.local in
 * two attribute lookups (its per-thread dictionary, then the attribute), which cost more than
 * the rest of a call's reads of the state. A thread's state of a library is made once
 * (Library._thread_stream) and stays until the thread ends, or until a fork (the child's
 * Library makes a new threading.local: after_fork_in_child). So the last one found is kept in
 * the thread's own dictionary (PyThreadState_GetDict: CPython clears it when the thread ends,
 * as it drops the thread's threading.local values), as (lib, state, fork count): valid for the
 * same library (held, so its address is no other's) in a process that has not forked since. */
static PyObject *s_state_cache;     /* the thread dictionary's key */
static volatile long forks_seen;    /* forks this process came from (at_fork_child) */
static int at_fork_registered;      /* (without it, nothing is kept) */

static void at_fork_child(void) { ++forks_seen; }

/* The new reference, or NULL without an error when the thread has no state of lib yet. */
static PyObject *thread_state(PyObject *lib) {
    PyObject *cache = NULL, *tdict = at_fork_registered ? PyThreadState_GetDict() : NULL; /* (borrowed) */
    if (tdict) {
        cache = PyDict_GetItemWithError(tdict, s_state_cache); /* (borrowed) */
        if (cache && PyTuple_Check(cache) && PyTuple_Size(cache) == 3 && PyTuple_GetItem(cache, 0) == lib &&
            PyLong_AsLong(PyTuple_GetItem(cache, 2)) == forks_seen) {
            PyObject *state = PyTuple_GetItem(cache, 1);
            Py_INCREF(state);
            return state;
        }
        PyErr_Clear();
    }
    PyObject *local = PyObject_GetAttr(lib, s_local);
    if (!local) { PyErr_Clear(); return NULL; }
    PyObject *state = PyObject_GetAttr(local, s_state);
    Py_DECREF(local);
    if (!state) {
        PyErr_Clear();
        return NULL;
    }
    if (tdict && state != Py_None) {
        PyObject *forks = PyLong_FromLong(forks_seen);
        PyObject *entry = forks ? PyTuple_Pack(3, lib, state, forks) : NULL;
        if (!entry || PyDict_SetItem(tdict, s_state_cache, entry)) PyErr_Clear(); /* (found anew next time) */
        Py_XDECREF(entry);
        Py_XDECREF(forks);
    }
    return state;
}

/* lib's fast API (new reference), or NULL with no error when the fast path is off for lib. */
static PyObject *fast_api(PyObject *lib) {
    PyObject *api = PyObject_GetAttr(lib, s_fast_api);
    if (!api) {
        if (!PyErr_ExceptionMatches(PyExc_AttributeError)) return NULL;
        PyErr_Clear();
        api = PyObject_CallFunctionObjArgs(api_for, lib, NULL);
        if (!api) return NULL;
    }
    if (api == Py_None) {
        Py_DECREF(api);
        return NULL;
    }
    return api;
}

/* Whether file (a source path, or anything else: 0) is under the package's directory: 1, 0,
 * -1 error. */
static Py_ssize_t in_package(PyObject *file) {
    return PyUnicode_Check(file) ? PyUnicode_Tailmatch(file, package, 0, PyUnicode_GetLength(package), -1) : 0;
}

/* Whether code (a code object) is the package's own: 1, 0, -1 error. Known codes are kept by
 * identity (hashing a code object hashes its constants), each with the code itself, so that
 * its address is not another code's while it is in the table (bounded: codes are few). */
static PyObject *codes_inside;
#define MAX_CODES 4096
static PyObject *last_code;  /* the code asked about last (held: a loop of calls asks again), and its answer */
static int last_code_inside;
static int code_inside(PyObject *code) {
    if (code == last_code) return last_code_inside;
    PyObject *id = PyLong_FromVoidPtr(code);
    if (!id) return -1;
    PyObject *known = PyDict_GetItemWithError(codes_inside, id);
    if (known) {
        Py_DECREF(id);
        Py_INCREF(code);
        SET_REF(last_code, code);
        last_code_inside = PyTuple_GetItem(known, 1) == Py_True;
        return last_code_inside;
    }
    PyObject *file = PyErr_Occurred() ? NULL : PyObject_GetAttr(code, s_co_filename);
    if (!file) { Py_DECREF(id); return -1; }
    Py_ssize_t inside = in_package(file);
    Py_DECREF(file);
    PyObject *entry = inside < 0 ? NULL : PyTuple_Pack(2, code, inside ? Py_True : Py_False);
    if (entry && PyDict_Size(codes_inside) >= MAX_CODES) PyDict_Clear(codes_inside);
    int failed = !entry || PyDict_SetItem(codes_inside, id, entry);
    Py_XDECREF(entry);
    Py_DECREF(id);
    return failed ? -1 : inside != 0;
}

/* Where the search for the caller's frame may start. Materialising a frame object (what
 * PyEval_GetFrame and f_back do to a running function's frame) costs more than the rest of a
 * call's bookkeeping, and the frames between the entry and the caller are the package's own,
 * made anew each call: so the search starts at sys._getframe(depth), which makes an object of
 * the frame it returns only, for the frames of the package it can skip for certain. The frame
 * that called the entry (PyEval_GetGlobals: its module's namespace, read without making the
 * frame) is the package's when its module is; a module whose code is only ever called by the
 * package's own (ops/_dispatch.py: by the op functions) says how many frames up are certainly
 * the package's (frames_inside). Known namespaces are kept by identity with the namespace
 * itself (bounded, as codes_inside), and the last one asked about beside them (a loop of calls
 * asks about the same one). */
static PyObject *get_frame, *namespaces_inside, *depths[8];
#define MAX_NAMESPACES 256
#define MAX_DECLARED 8
static PyObject *declared[MAX_DECLARED]; /* frames_inside's namespaces, */
static int declared_depth[MAX_DECLARED]; /* and their depths */

/* The depth at which the search starts for a call made from code of namespace globals (0: the
 * calling frame itself), or -1 with an error. */
static PyObject *last_globals;  /* the namespace asked about last (held), and its depth */
static int last_depth;
static int site_depth(PyObject *globals) {
    if (!globals || !get_frame || !namespaces_inside) return 0;
    for (int i = 0; i < MAX_DECLARED && declared[i]; ++i)
        if (declared[i] == globals) return declared_depth[i];
    if (globals == last_globals) return last_depth;
    PyObject *id = PyLong_FromVoidPtr(globals);
    if (!id) return -1;
    PyObject *known = PyDict_GetItemWithError(namespaces_inside, id);
    if (known) {
        Py_DECREF(id);
        int depth = (int)PyLong_AsLong(PyTuple_GetItem(known, 1));
        if (depth < 0) return -1;
        Py_INCREF(globals);
        SET_REF(last_globals, globals);
        last_depth = depth;
        return depth;
    }
    if (PyErr_Occurred()) { Py_DECREF(id); return -1; }
    PyObject *file = PyDict_GetItemString(globals, "__file__"); /* (borrowed; no error raised) */
    Py_ssize_t inside = file ? in_package(file) : 0;
    PyObject *entry = inside < 0 ? NULL : Py_BuildValue("(Oi)", globals, inside ? 1 : 0);
    if (entry && PyDict_Size(namespaces_inside) >= MAX_NAMESPACES) PyDict_Clear(namespaces_inside);
    int failed = !entry || PyDict_SetItem(namespaces_inside, id, entry);
    Py_XDECREF(entry);
    Py_DECREF(id);
    return failed ? -1 : inside != 0;
}

/* frames_inside(globals, depth): calls from the code of module namespace globals have at least
 * depth frames of the package's own on top of the stack, the calling one included. */
static PyObject *frames_inside(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    (void)module;
    long depth = nargs == 2 && PyDict_Check(args[0]) ? PyLong_AsLong(args[1]) : -1;
    if (depth < 1 || depth > (long)(sizeof depths / sizeof depths[0])) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_ValueError, "frames_inside(globals, depth): a module's namespace and 1 <= depth <= 8");
        return NULL;
    }
    int i = 0;
    while (i < MAX_DECLARED && declared[i] && declared[i] != args[0]) ++i;
    if (i == MAX_DECLARED) {
        PyErr_SetString(PyExc_ValueError, "frames_inside: at most 8 modules");
        return NULL;
    }
    Py_INCREF(args[0]);
    SET_REF(declared[i], args[0]);
    declared_depth[i] = (int)depth;
    Py_RETURN_NONE;
}

/* The caller's place, as queued.remember keeps it: (code, f_lasti) of the first frame outside
 * the package, or None. A new reference, NULL on error. */
static PyObject *caller_site(void) {
    int depth = site_depth(PyEval_GetGlobals());
    if (depth < 0) return NULL;
    PyObject *frame;
    if (depth == 0) {
        frame = (PyObject *)PyEval_GetFrame();
        Py_XINCREF(frame);
    } else {
        frame = PyObject_CallFunctionObjArgs(get_frame, depths[depth - 1], NULL);
        if (!frame) {
            if (!PyErr_ExceptionMatches(PyExc_ValueError)) return NULL;
            PyErr_Clear(); /* (a stack of fewer frames: none of them is outside the package) */
            Py_RETURN_NONE;
        }
    }
    while (frame && frame != Py_None) {
        PyObject *code = (PyObject *)PyFrame_GetCode((PyFrameObject *)frame);
        int inside = code_inside(code);
        if (inside < 0) { Py_DECREF(code); Py_DECREF(frame); return NULL; }
        if (!inside) {
            PyObject *lasti = PyObject_GetAttr(frame, s_f_lasti);
            Py_DECREF(frame);
            if (!lasti) { Py_DECREF(code); return NULL; }
            PyObject *site = PyTuple_Pack(2, code, lasti);
            Py_DECREF(code);
            Py_DECREF(lasti);
            return site;
        }
        Py_DECREF(code);
        PyObject *back = PyObject_GetAttr(frame, s_f_back);
        Py_DECREF(frame);
        if (!back) return NULL;
        frame = back;
    }
    Py_XDECREF(frame);
    Py_RETURN_NONE;
}

/* A device plan's call succeeded: what device_done does (Library.defer of its own device
 * memory, later's blocks; then queued_call), here: the blocks go into the thread's batch
 * (state.batch, outputs.c: one waiting release for the blocks of up to GIVE_MOST calls, so a
 * call adds no object to the waiting releases), and the call's bound on queued calls and
 * bytes is Library.defer's. 0 done, 1 not done (the caller calls device_done: a capture, a
 * caller's stream, a bound reached, ACLNN_PY_BLOCKING=1, no hooks), -1 error (nothing added to
 * the batch then). */
static int device_queued_here(PyObject *state, int own_stream, PyObject *lib, PyObject *op, const api_t *api,
                              const deferred_t *later, uint64_t workspace_size) {
    if (!nothing || !state) return 1;
    int done = 1;
    PyObject *total = NULL;
    PyObject *pending = state_get(state, ST_PENDING);
    PyObject *queued = pending ? state_get(state, ST_QUEUED) : NULL;
    if (!queued) { done = -1; goto out; }
    /* (own_stream 0: a caller's stream, where Library.defer records an event; or a capture,
     * which the graph keeps) */
    Py_ssize_t max_pending;
    long long max_bytes;
    if (pending_bounds(&max_pending, &max_bytes)) { done = -1; goto out; }
    if (!own_stream || !PyList_Check(pending) || !PyList_Check(queued) || PyList_Size(pending) + 1 >= max_pending ||
        PyList_Size(queued) + 1 >= max_pending || PyList_Size(queued) >= kept_calls)
        goto out;
    if (later->count) {
        /* the pending bytes and their bound (Library.defer's) */
        PyObject *held = state_get(state, ST_NBYTES);
        long long was = held ? PyLong_AsLongLong(held) : -1;
        Py_XDECREF(held);
        if (was < 0 || PyErr_Occurred()) { done = -1; goto out; }
        if ((unsigned long long)was + later->nbytes >= (unsigned long long)max_bytes) goto out;
        total = PyLong_FromUnsignedLongLong((unsigned long long)was + later->nbytes);
        if (!total) { done = -1; goto out; }
    }
    int blocks = is_blocking();
    if (blocks) { done = blocks < 0 ? -1 : 1; goto out; }
    PyObject *site = caller_site();
    PyObject *item = site ? PyTuple_Pack(2, op, site) : NULL;
    Py_XDECREF(site);
    release_t *batch = NULL;
    if (item && later->count) batch = waiting_batch(state, lib, api, pending, later->count);
    else if (item && !PyList_Size(pending) && PyList_Append(pending, nothing)) Py_CLEAR(item);
    /* (the work waits for the stream either way: with no memory of its own and nothing waiting
     * yet, library.nothing marks it, as Library.mark_queued does) */
    if (!item || (later->count && !batch) || PyList_Append(queued, item)) {
        Py_XDECREF(item);
        Py_XDECREF((PyObject *)batch);
        done = -1;
        goto out;
    }
    Py_DECREF(item);
    if (batch) {
        for (int i = 0; i < later->count; ++i) {
            /* (the workspace, when there is one, is the last: a later call may take it) */
            batch->free_sizes[batch->nfree] = i == later->count - 1 ? workspace_size : 0;
            batch->frees[batch->nfree++] = later->blocks[i];
        }
        Py_DECREF((PyObject *)batch);
        if (state_set(state, ST_NBYTES, total)) PyErr_Clear(); /* (the bound's count) */
    }
    done = 0;
out:
    Py_XDECREF(total);
    Py_XDECREF(pending);
    Py_XDECREF(queued);
    return done;
}


static PyObject *run_plan(PyObject *capsule, PyObject *lib, PyObject *api, PyObject *const *args, Py_ssize_t nargs,
                          key_t *k) {
    plan_t *p = PyCapsule_GetPointer(capsule, "aclnn_py.plan");
    if (!p) return NULL;
    PyObject *outputs[MAX_ARGS] = {NULL};
    Py_buffer out_views[MAX_ARGS];
    int8_t has_out_view[MAX_ARGS] = {0};
    void *pointers[MAX_ARGS + MAX_LIST];
    void *out_handles[MAX_ARGS] = {NULL};
    void *table = NULL, *stream = NULL;
    PyObject *result = NULL, *state = NULL, *stream_obj = NULL, *table_obj = NULL;
    int64_t status;

    table_obj = PyObject_GetAttr(api, s_table);
    if (!table_obj || address_of(table_obj, &table)) goto done;
    state = thread_state(lib);
    stream_obj = state ? state_get(state, ST_STREAM) : NULL;
    if (!stream_obj) PyErr_Clear();
    if (!stream_obj || stream_obj == Py_None) {
        /* No stream on this thread yet (first call, after set_device or fork): the Library
         * initialises the runtime, opens the device and makes the stream. */
        Py_XDECREF(stream_obj);
        stream_obj = PyObject_CallMethodObjArgs(lib, s_stream_method, NULL);
        if (!stream_obj) goto done;
        Py_XDECREF(state);
        state = thread_state(lib);
    }
    if (address_of(stream_obj, &stream)) goto done;
    if (p->device && !state) {
        PyErr_SetString(PyExc_SystemError, "aclnn_py fast entry: a device call on a thread without its state");
        goto done;
    }
    /* Whether the call queues on the thread's own stream, no capture in progress (what the
     * reuse of blocks and the bookkeeping in C need): read once for the call. */
    int own = p->device ? on_own_stream(state) : 0;
    if (own < 0) {
        PyErr_Clear(); /* (then the Python path's bookkeeping: device_done) */
        own = 0;
    }
    for (int i = 0; i < p->noutputs; ++i) {
        if (!p->output_args[i]) continue;
        if (p->device) {
            outputs[i] = make_output(&p->forms[i], lib, state, own, p->op, (const api_t *)table, &out_handles[i]);
            if (!outputs[i]) goto done;
            continue;
        }
        outputs[i] = PyObject_Call(np_empty, p->output_args[i], NULL);
        if (!outputs[i]) goto done;
        if (PyObject_GetBuffer(outputs[i], &out_views[i], PyBUF_WRITABLE) < 0) goto done;
        has_out_view[i] = 1;
    }
    for (int i = 0; i < p->npointers; ++i) {
        int index = p->pointer_index[i];
        switch (p->pointer_kind[i]) {
        case P_ARG:
        case P_ARG_WRITABLE:
            if (!k->has_view[index]) {
                PyErr_SetString(PyExc_SystemError, "aclnn_py fast entry: a plan's argument is not an array");
                goto done;
            }
            pointers[i] = k->views[index].buf;
            break;
        case P_ITEM:
            if (index >= k->nitems) {
                PyErr_SetString(PyExc_SystemError, "aclnn_py fast entry: a plan's list element is missing");
                goto done;
            }
            pointers[i] = k->items[index].buf;
            break;
        case P_DEVICE_ITEM:
            if (index >= k->ndevice_items) {
                PyErr_SetString(PyExc_SystemError, "aclnn_py fast entry: a plan's list element is missing");
                goto done;
            }
            pointers[i] = k->device_items[index];
            break;
        case P_TENSOR:
            if (!k->is_tensor[index]) {
                PyErr_SetString(PyExc_SystemError, "aclnn_py fast entry: a plan's argument is not a Tensor");
                goto done;
            }
            pointers[i] = k->handles[index];
            break;
        case P_OUTPUT:
            pointers[i] = p->device ? out_handles[index] : has_out_view[index] ? out_views[index].buf : NULL;
            break;
        default:
            pointers[i] = NULL;
        }
    }
    deferred_t later;
    later.launched = later.count = 0;
    later.nbytes = 0;
    reuse_t reuse = {0, NULL, NULL, -1, 0};
    release_t *source = p->device ? workspace_source(state, own, lib, (const api_t *)table, &reuse) : NULL;
    Py_BEGIN_ALLOW_THREADS
    if (p->device)
        status = fast_call((const api_t *)table, p->phase1, p->phase2, stream, p->desc, p->desc_len, pointers, &later,
                           &reuse);
    else
        status = aclnnpy_fast_call(table, p->phase1, p->phase2, stream, p->desc, p->desc_len, pointers);
    Py_END_ALLOW_THREADS
    if (source) {
        workspace_taken(state, source, &reuse);
        Py_DECREF((PyObject *)source);
    }
    if (p->device && later.launched) {
        /* The call's device memory waits for the stream; a success names this call for a
         * later failure of its work (Call.__exit__'s rule). */
        int here = status ? 1
                          : device_queued_here(state, own, lib, p->op, (const api_t *)table, &later, reuse.workspace_size);
        if (here < 0) {
            PyErr_Clear(); /* (device_done's bookkeeping instead: it raises what fails there too) */
            here = 1;
        }
        PyObject *r = NULL;
        if (here > 0) {
            PyObject *release = later.count ? free_release(lib, (const api_t *)table, &later) : NULL;
            PyObject *nbytes = later.count && !release ? NULL : PyLong_FromUnsignedLongLong(later.nbytes);
            if (nbytes) {
                r = PyObject_CallFunctionObjArgs(device_done, lib, p->op, release ? release : Py_None, nbytes,
                                                 status ? Py_False : Py_True, NULL);
                Py_DECREF(nbytes);
            }
            Py_XDECREF(release);
            if (!r) {
                if (!status) goto done;
                PyErr_Clear(); /* the call's own failure is the one to raise */
            }
        }
        Py_XDECREF(r);
    }
    for (int i = 0; i < p->noutputs; ++i)
        if (has_out_view[i]) {
            PyBuffer_Release(&out_views[i]);
            has_out_view[i] = 0;
        }
    if (status) {
        PyObject *code = PyLong_FromLongLong(status);
        if (code) {
            PyObject *r = PyObject_CallFunctionObjArgs(fast_failed, lib, p->op, code, NULL);
            Py_XDECREF(r); /* it raises */
            Py_DECREF(code);
        }
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_SystemError, "aclnn_py fast entry: a failure raised nothing");
        goto done;
    }
    /* What earlier device-Tensor calls left waiting on the stream (Call's rule). */
    PyObject *pending = state && !p->device ? state_get(state, ST_PENDING) : NULL;
    int waiting;
    if (p->device) {
        waiting = 0;
    } else if (pending) {
        waiting = PyObject_IsTrue(pending);
        Py_DECREF(pending);
    } else {
        PyErr_Clear();
        PyObject *r = PyObject_CallMethodObjArgs(lib, s_has_pending, NULL);
        waiting = r ? PyObject_IsTrue(r) : -1;
        Py_XDECREF(r);
    }
    if (waiting < 0) goto done;
    if (waiting) {
        PyObject *r = PyObject_CallMethodObjArgs(lib, s_synchronize, NULL);
        if (!r) goto done;
        Py_DECREF(r);
    }
    if (p->mode == R_NONE) {
        result = Py_None;
        Py_INCREF(result);
    } else {
        PyObject *items[MAX_ARGS];
        for (int i = 0; i < p->nresults; ++i) {
            int index = p->result_index[i];
            if (p->result_kind[i] == P_ARG && index >= nargs) {
                PyErr_SetString(PyExc_SystemError, "aclnn_py fast entry: a plan's result is not an argument");
                goto done;
            }
            items[i] = p->result_kind[i] == P_ARG ? args[index] : outputs[index] ? outputs[index] : Py_None;
        }
        if (p->mode == R_SINGLE) {
            result = p->nresults ? items[0] : Py_None;
            Py_INCREF(result);
        } else {
            result = PyTuple_New(p->nresults);
            if (result)
                for (int i = 0; i < p->nresults; ++i) {
                    Py_INCREF(items[i]);
                    PyTuple_SetItem(result, i, items[i]);
                }
        }
    }
done:
    for (int i = 0; i < p->noutputs; ++i) {
        if (has_out_view[i]) PyBuffer_Release(&out_views[i]);
        Py_XDECREF(outputs[i]);
    }
    Py_XDECREF(table_obj);
    Py_XDECREF(state);
    Py_XDECREF(stream_obj);
    return result;
}

/* -- the Planner type ------------------------------------------------------------------- */

typedef struct {
    PyObject_HEAD
    PyObject *impl;    /* the op's Python path: impl(lib, *args) */
    PyObject *record;  /* record(impl, lib, args) -> (result, spec, store) */
    PyObject *backends; /* call's: backend name -> Library, as the Python path resolved them */
    table_t table;
} planner_t;

/* Look (lib, name, args) up: on a plan, run it (a new reference, or NULL with an error);
 * else return `miss` (a borrowed sentinel: the Python path), *found_none telling whether the
 * key is known to take it. k is left for the caller to release. */
static PyObject *lookup_run(planner_t *self, PyObject *lib, PyObject *name, PyObject *const *args,
                            Py_ssize_t nargs, key_t *k, int *keyed, uint64_t *hash) {
    *keyed = 0;
    key_init(k);
    if (!plans_on) return miss;
    /* A capture in progress (aclnn_py.capture): the Python path, which keeps what the graph needs. */
    PyObject *capturing = PyObject_GetAttr(lib, s_capturing);
    if (!capturing) return NULL;
    int busy = PyObject_IsTrue(capturing);
    Py_DECREF(capturing);
    if (busy) return busy < 0 ? NULL : miss;
    PyObject *api = fast_api(lib);
    if (!api) return PyErr_Occurred() ? NULL : miss;
    int made = make_key(k, lib, name, args, nargs);
    if (made <= 0) {
        Py_DECREF(api);
        return made < 0 ? NULL : miss;
    }
    *keyed = 1;
    *hash = key_hash(k);
    entry_t *e = table_find(&self->table, k, *hash, name);
    if (!e || e->plan == Py_None) {
        Py_DECREF(api);
        return miss;
    }
    PyObject *plan = e->plan;
    Py_INCREF(plan); /* the table may be cleared while the GIL is released */
    PyObject *result = run_plan(plan, lib, api, args, nargs, k);
    Py_DECREF(plan);
    Py_DECREF(api);
    return result;
}

static PyObject *planner_call(PyObject *op, PyObject *args, PyObject *kwargs) {
    planner_t *self = (planner_t *)op;
    Py_ssize_t n = PyTuple_Size(args);
    if (n < 1 || (kwargs && PyDict_Size(kwargs)) || !self->impl || n - 1 > MAX_ARGS)
        return self->impl ? PyObject_Call(self->impl, args, kwargs)
                          : (PyErr_SetString(PyExc_TypeError, "this planner has no operator function"), NULL);
    PyObject *items[MAX_ARGS + 1];
    for (Py_ssize_t i = 0; i < n; ++i) items[i] = PyTuple_GetItem(args, i);
    PyObject *lib = items[0];
    key_t k;
    int keyed;
    uint64_t hash = 0;
    PyObject *result = lookup_run(self, lib, NULL, items + 1, n - 1, &k, &keyed, &hash);
    key_release_views(&k);
    if (result != miss || !keyed) {
        key_release(&k);
        return result != miss ? result : PyObject_Call(self->impl, args, NULL);
    }
    /* A key without a plan: the Python path, recorded (k's words and dtypes stay valid). */
    PyObject *tail = PyTuple_GetSlice(args, 1, n);
    PyObject *recorded = tail ? PyObject_CallFunctionObjArgs(self->record, self->impl, lib, tail, NULL) : NULL;
    Py_XDECREF(tail);
    result = NULL;
    if (recorded) {
        PyObject *spec, *store;
        if (PyArg_ParseTuple(recorded, "OOO", &result, &spec, &store)) {
            Py_INCREF(result);
            int keep = PyObject_IsTrue(store);
            PyObject *plan = NULL;
            if (keep > 0) plan = spec == Py_None ? (Py_INCREF(Py_None), Py_None) : plan_from_spec(spec);
            if (keep < 0 || (keep > 0 && (!plan || table_add(&self->table, &k, hash, NULL, lib, plan)))) {
                Py_CLEAR(result);
            }
            Py_XDECREF(plan);
        }
        Py_DECREF(recorded);
    }
    key_release(&k);
    return result;
}

/* The arguments of run/add as a tuple (a new reference, NULL on error) and, when there are at
 * most MAX_ARGS of them, their items in `items` (borrowed) and their number in *n (else *n = -1). */
static PyObject *argument_items(PyObject *args, PyObject **items, Py_ssize_t *n) {
    PyObject *seq = PySequence_Tuple(args);
    if (!seq) return NULL;
    *n = PyTuple_Size(seq);
    if (*n > MAX_ARGS) {
        *n = -1;
        return seq;
    }
    for (Py_ssize_t i = 0; i < *n; ++i) items[i] = PyTuple_GetItem(seq, i);
    return seq;
}

/* run(lib, name, args): call's route; the result, or the miss sentinel. */
static PyObject *planner_run(PyObject *op, PyObject *const *args, Py_ssize_t nargs) {
    planner_t *self = (planner_t *)op;
    if (nargs != 3 || !PyUnicode_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError, "run(lib, name, args)");
        return NULL;
    }
    PyObject *items[MAX_ARGS];
    Py_ssize_t n;
    PyObject *seq = argument_items(args[2], items, &n);
    if (!seq) return NULL;
    PyObject *result = miss;
    key_t k;
    int keyed = 0;
    uint64_t hash;
    key_init(&k);
    if (n >= 0) {
        result = lookup_run(self, args[0], args[1], items, n, &k, &keyed, &hash);
        key_release(&k);
    }
    Py_DECREF(seq);
    if (result == miss) Py_INCREF(miss);
    return result;
}

/* add(lib, name, args, spec): store call's plan (spec None: this key takes the Python path). */
static PyObject *planner_add(PyObject *op, PyObject *const *args, Py_ssize_t nargs) {
    planner_t *self = (planner_t *)op;
    if (nargs != 4 || !PyUnicode_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError, "add(lib, name, args, spec)");
        return NULL;
    }
    PyObject *items[MAX_ARGS];
    Py_ssize_t n;
    PyObject *seq = argument_items(args[2], items, &n);
    if (!seq) return NULL;
    key_t k;
    key_init(&k);
    int made = 0, failed = 0;
    if (n >= 0) {
        made = make_key(&k, args[0], args[1], items, n);
    }
    if (made > 0) {
        PyObject *plan = args[3] == Py_None ? (Py_INCREF(Py_None), Py_None) : plan_from_spec(args[3]);
        failed = !plan || table_add(&self->table, &k, key_hash(&k), args[1], args[0], plan);
        Py_XDECREF(plan);
    }
    key_release(&k);
    Py_DECREF(seq);
    if (made < 0 || failed) return NULL;
    return PyBool_FromLong(made > 0);
}

/* call(name, backend, args): aclnn_py.call's entry for a backend the Python path resolved
 * before (backend(name, lib)); the result, or the miss sentinel. */
static PyObject *planner_entry(PyObject *op, PyObject *const *args, Py_ssize_t nargs) {
    planner_t *self = (planner_t *)op;
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "call(name, backend, args)");
        return NULL;
    }
    /* (A backend that is not a str is the Python path's error to report.) */
    PyObject *lib = PyUnicode_CheckExact(args[1]) ? PyDict_GetItemWithError(self->backends, args[1]) : NULL;
    if (!lib || !PyUnicode_Check(args[0]) || !PyTuple_Check(args[2])) {
        if (PyErr_Occurred()) return NULL;
        Py_INCREF(miss);
        return miss;
    }
    Py_ssize_t n = PyTuple_Size(args[2]);
    PyObject *items[MAX_ARGS];
    PyObject *result = miss;
    key_t k;
    int keyed = 0;
    uint64_t hash;
    key_init(&k);
    if (n <= MAX_ARGS) {
        for (Py_ssize_t i = 0; i < n; ++i) items[i] = PyTuple_GetItem(args[2], i);
        Py_INCREF(lib);
        result = lookup_run(self, lib, args[0], items, n, &k, &keyed, &hash);
        key_release(&k);
        Py_DECREF(lib);
    }
    if (result == miss) Py_INCREF(miss);
    return result;
}

/* backend(name, lib): the Library the Python path resolved for backend name. */
static PyObject *planner_backend(PyObject *op, PyObject *const *args, Py_ssize_t nargs) {
    planner_t *self = (planner_t *)op;
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "backend(name, lib)");
        return NULL;
    }
    if (PyDict_SetItem(self->backends, args[0], args[1])) return NULL;
    Py_RETURN_NONE;
}

static PyObject *planner_clear(PyObject *op, PyObject *unused) {
    (void)unused;
    planner_t *self = (planner_t *)op;
    table_clear(&self->table);
    PyDict_Clear(self->backends);
    Py_RETURN_NONE;
}

/* plans(): [(name or None, planned)] of every key in the table (for tests). */
static PyObject *planner_plans(PyObject *op, PyObject *unused) {
    (void)unused;
    planner_t *self = (planner_t *)op;
    PyObject *out = PyList_New(0);
    if (!out || !self->table.slots) return out;
    for (Py_ssize_t i = 0; i < TABLE_SLOTS; ++i) {
        entry_t *e = &self->table.slots[i];
        if (!e->words) continue;
        PyObject *item = Py_BuildValue("(OO)", e->name ? e->name : Py_None, e->plan == Py_None ? Py_False : Py_True);
        if (!item || PyList_Append(out, item)) {
            Py_XDECREF(item);
            Py_DECREF(out);
            return NULL;
        }
        Py_DECREF(item);
    }
    return out;
}

static int planner_init(PyObject *op, PyObject *args, PyObject *kwargs) {
    planner_t *self = (planner_t *)op;
    PyObject *impl = Py_None, *record = Py_None;
    static char *names[] = {"impl", "record", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|OO", names, &impl, &record)) return -1;
    SET_REF(self->impl, impl == Py_None ? NULL : (Py_INCREF(impl), impl));
    SET_REF(self->record, (Py_INCREF(record), record));
    if (!self->backends && !(self->backends = PyDict_New())) return -1;
    return 0;
}

static int planner_traverse(PyObject *op, visitproc visit, void *arg) {
    planner_t *self = (planner_t *)op;
    Py_VISIT(self->impl);
    Py_VISIT(self->record);
    Py_VISIT(self->backends);
    Py_VISIT(Py_TYPE(op));
    return 0;
}

static int planner_tp_clear(PyObject *op) {
    planner_t *self = (planner_t *)op;
    Py_CLEAR(self->impl);
    Py_CLEAR(self->record);
    Py_CLEAR(self->backends);
    table_clear(&self->table);
    return 0;
}

static void planner_dealloc(PyObject *op) {
    planner_t *self = (planner_t *)op;
    PyTypeObject *type = Py_TYPE(op);
    PyObject_GC_UnTrack(op);
    planner_tp_clear(op);
    PyMem_Free(self->table.slots);
    self->table.slots = NULL;
    freefunc free_ = (freefunc)PyType_GetSlot(type, Py_tp_free);
    free_(op);
    Py_DECREF(type);
}

static PyMethodDef planner_methods[] = {
    {"run", (PyCFunction)(void (*)(void))planner_run, METH_FASTCALL, "run(lib, name, args): result or MISS"},
    {"add", (PyCFunction)(void (*)(void))planner_add, METH_FASTCALL, "add(lib, name, args, spec)"},
    {"call", (PyCFunction)(void (*)(void))planner_entry, METH_FASTCALL, "call(name, backend, args): result or MISS"},
    {"backend", (PyCFunction)(void (*)(void))planner_backend, METH_FASTCALL, "backend(name, lib)"},
    {"clear", planner_clear, METH_NOARGS, "forget every plan"},
    {"plans", planner_plans, METH_NOARGS, "[(name, planned)] per key"},
    {NULL, NULL, 0, NULL},
};

static PyMemberDef planner_members[] = {
    {"__wrapped__", T_OBJECT, offsetof(planner_t, impl), READONLY, "the op's Python path"},
    {NULL, 0, 0, 0, NULL},
};

static PyType_Slot planner_slots[] = {
    {Py_tp_doc, "Planner(impl=None, record=None): the plans of one op function (called as impl(lib, *args)) "
                "or of aclnn_py.call (run/add/call)."},
    {Py_tp_init, planner_init},
    {Py_tp_call, planner_call},
    {Py_tp_methods, planner_methods},
    {Py_tp_members, planner_members},
    {Py_tp_traverse, planner_traverse},
    {Py_tp_clear, planner_tp_clear},
    {Py_tp_dealloc, planner_dealloc},
    {Py_tp_new, PyType_GenericNew},
    {0, NULL},
};

static PyType_Spec planner_spec = {
    "aclnn_py._fast._entry.Planner", sizeof(planner_t), 0, Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC, planner_slots,
};

/* -- prepared runs (aclnn_py.prepare's object) ---------------------------------------------
 *
 * A run whose arguments have phase 1's key (same NumPy array geometry and dtypes, the same
 * list and scalar values: make_key's words) in one crossing: the executor's event waited for,
 * the H2D copies into the device memory phase 1 saw, phase 2, the event recorded behind it,
 * the synchronisation and the D2H copies into the NumPy outputs, all under the prepared
 * object's lock. Anything else (another key, a Tensor argument, another thread, a capture in
 * progress, a closed executor, its first run, releases waiting on the thread's stream...) is the
 * miss sentinel: Prepared.__call__'s Python path then checks, raises or runs, as before. A
 * failure status is raised by the Library's check (the Python path's error, word for word). */

typedef status_t (*event_fn_t)(void *);
typedef status_t (*record_fn_t)(void *, void *);
typedef status_t (*memcpy_fn_t)(void *, size_t, const void *, size_t, int32_t);

typedef struct {
    int arg;            /* the argument it is */
    PyObject *slot;     /* marshal.TensorSlot (its value set to the run's output array) */
    void *ptr;          /* its device memory */
    uint64_t nbytes;
    int output, download;
    int upload;         /* copied in each run (not an output the operator overwrites whole) */
} run_slot_t;

typedef struct {
    PyObject_HEAD
    PyObject *lib, *guard, *op, *record_failed, *refs;
    int64_t *words;
    Py_ssize_t len, nargs;
    run_slot_t slots[MAX_ARGS];
    int nslots;
    int32_t results[MAX_ARGS];
    int nresults;
    void *phase2, *executor, *workspace;
    uint64_t size;
    event_fn_t sync_event, sync_stream;
    record_fn_t record_event;
    memcpy_fn_t memcpy_;
    unsigned long thread;
    int closed;         /* close(): the executor is being destroyed (under the lock) */
} runner_t;


static int runner_init(PyObject *op, PyObject *args, PyObject *kwargs) {
    runner_t *self = (runner_t *)op;
    PyObject *lib, *guard, *values, *slots, *results, *funcs, *name, *record_failed;
    if (kwargs && PyDict_Size(kwargs)) { PyErr_SetString(PyExc_TypeError, "Runner takes no keywords"); return -1; }
    if (!PyArg_ParseTuple(args, "OOUO!O!O!O!O", &lib, &guard, &name, &PyTuple_Type, &values, &PyTuple_Type, &slots,
                          &PyTuple_Type, &results, &PyTuple_Type, &funcs, &record_failed))
        return -1;
    if (self->words) { PyErr_SetString(PyExc_TypeError, "Runner: made once"); return -1; }
    Py_ssize_t nargs = PyTuple_Size(values), nslots = PyTuple_Size(slots), nresults = PyTuple_Size(results);
    if (nargs > MAX_ARGS || nslots > MAX_ARGS || nresults > MAX_ARGS || PyTuple_Size(funcs) != 9) {
        PyErr_SetString(PyExc_ValueError, "Runner: out of bounds");
        return -1;
    }
    PyObject *items[MAX_ARGS];
    for (Py_ssize_t i = 0; i < nargs; ++i) items[i] = PyTuple_GetItem(values, i);
    key_t k;
    int made = make_key(&k, lib, NULL, items, nargs);
    key_release_views(&k);
    if (made <= 0) {
        key_release(&k);
        if (made == 0) PyErr_SetString(PyExc_ValueError, "Runner: arguments without a key");
        return -1;
    }
    for (Py_ssize_t i = 0; i < nargs; ++i)
        if (k.is_tensor[i] || k.ndevice_items) {
            key_release(&k);
            PyErr_SetString(PyExc_ValueError, "Runner: a Tensor argument");
            return -1;
        }
    self->refs = PyTuple_New(k.ndtypes);
    self->words = PyMem_Malloc((size_t)k.len * sizeof(int64_t));
    if (!self->refs || !self->words) { key_release(&k); PyErr_NoMemory(); return -1; }
    for (int j = 0; j < k.ndtypes; ++j) {
        Py_INCREF(k.dtypes[j]);
        PyTuple_SetItem(self->refs, j, k.dtypes[j]);
    }
    memcpy(self->words, k.words, (size_t)k.len * sizeof(int64_t));
    self->len = k.len;
    key_release(&k);
    self->nargs = nargs;
    for (Py_ssize_t i = 0; i < nslots; ++i) {
        PyObject *s = PyTuple_GetItem(slots, i);
        int arg, output, download, upload;
        unsigned long long ptr, nbytes;
        PyObject *slot;
        if (!PyTuple_Check(s) ||
            !PyArg_ParseTuple(s, "iOKKppp", &arg, &slot, &ptr, &nbytes, &output, &download, &upload))
            return -1;
        if (arg < 0 || arg >= nargs) { PyErr_SetString(PyExc_ValueError, "Runner: slot out of bounds"); return -1; }
        run_slot_t *r = &self->slots[self->nslots++];
        Py_INCREF(slot);
        r->slot = slot;
        r->arg = arg;
        r->ptr = (void *)(uintptr_t)ptr;
        r->nbytes = nbytes;
        r->output = output;
        r->download = download;
        r->upload = upload;
    }
    for (Py_ssize_t i = 0; i < nresults; ++i) {
        long index = PyLong_AsLong(PyTuple_GetItem(results, i));
        if (PyErr_Occurred()) return -1;
        if (index < 0 || index >= nargs) { PyErr_SetString(PyExc_ValueError, "Runner: result out of bounds"); return -1; }
        self->results[self->nresults++] = (int32_t)index;
    }
    unsigned long long f[9];
    for (int i = 0; i < 9; ++i) {
        f[i] = PyLong_AsUnsignedLongLong(PyTuple_GetItem(funcs, i));
        if (PyErr_Occurred()) return -1;
    }
    self->phase2 = (void *)(uintptr_t)f[0];
    self->executor = (void *)(uintptr_t)f[1];
    self->workspace = (void *)(uintptr_t)f[2];
    self->size = f[3];
    self->sync_event = (event_fn_t)(uintptr_t)f[4];
    self->memcpy_ = (memcpy_fn_t)(uintptr_t)f[5];
    self->record_event = (record_fn_t)(uintptr_t)f[6];
    self->sync_stream = (event_fn_t)(uintptr_t)f[7];
    self->thread = (unsigned long)f[8];
    Py_INCREF(lib);
    self->lib = lib;
    Py_INCREF(guard);
    self->guard = guard;
    Py_INCREF(name);
    self->op = name;
    Py_INCREF(record_failed);
    self->record_failed = record_failed;
    return 0;
}

/* Raise lib.check(status, api)'s error; NULL. */
static PyObject *runner_raise(runner_t *self, status_t status, const char *api) {
    PyObject *r = PyObject_CallMethod(self->lib, "check", "is", (int)status, api);
    Py_XDECREF(r);
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_SystemError, "aclnn_py fast entry: a failure raised nothing");
    return NULL;
}

/* Whether a Python truth value attribute of obj is set: 1, 0, -1 error. */
static int attr_true(PyObject *obj, PyObject *name) {
    PyObject *v = PyObject_GetAttr(obj, name);
    if (!v) return -1;
    int t = PyObject_IsTrue(v);
    Py_DECREF(v);
    return t;
}

/* The run, the lock held, the checks that can send it to the Python path done but the key's. */
static PyObject *runner_locked(runner_t *self, PyObject *prepared, PyObject *const *args) {
    PyObject *result = NULL, *state = NULL, *stream_obj = NULL, *own = NULL, *done = NULL, *event_obj = NULL;
    void *stream = NULL, *event = NULL;
    key_t k;
    int made = make_key(&k, self->lib, NULL, args, self->nargs);
    if (made < 0) goto out;
    if (!made || k.len != self->len || memcmp(k.words, self->words, (size_t)k.len * sizeof(int64_t))) {
        result = miss;
        goto out;
    }
    state = thread_state(self->lib);
    stream_obj = state ? state_get(state, ST_STREAM) : NULL;
    own = stream_obj ? state_get(state, ST_OWN) : NULL;
    done = own ? PyObject_GetAttr(prepared, s_done) : NULL;
    event_obj = done && PyList_Check(done) && PyList_Size(done) == 1 ? PyList_GetItem(done, 0) : NULL;
    Py_XINCREF(event_obj);
    if (!event_obj || event_obj == Py_None || stream_obj == Py_None || stream_obj != own) {
        /* (no stream yet, a caller's stream, no event yet: the Python path) */
        PyErr_Clear();
        result = miss;
        goto out;
    }
    if (address_of(stream_obj, &stream) || address_of(event_obj, &event)) goto out;
    int queued = attr_true(prepared, s_queued_flag);
    if (queued < 0) goto out;
    for (int i = 0; i < self->nslots; ++i)
        if (self->slots[i].nbytes && !k.has_view[self->slots[i].arg]) {
            PyErr_SetString(PyExc_SystemError, "aclnn_py fast entry: a slot's argument is not an array");
            goto out;
        }
    /* Without the GIL: the wait for the last run, the copies in, phase 2 and the event behind
     * it, up to the first failure (its stage, and for a copy its slot). */
    status_t s = 0;
    int stage = 0, copied = self->nslots;
    Py_BEGIN_ALLOW_THREADS
    if (queued && (s = self->sync_event(event))) stage = 1;
    for (int i = 0; !stage && i < self->nslots; ++i) {
        run_slot_t *r = &self->slots[i];
        if (r->upload && r->nbytes &&
            (s = self->memcpy_(r->ptr, r->nbytes, k.views[r->arg].buf, r->nbytes, ACL_MEMCPY_HOST_TO_DEVICE))) {
            stage = 2;
            copied = i;
        }
    }
    if (!stage && (s = ((phase2_t)self->phase2)(self->workspace, self->size, self->executor, stream))) stage = 3;
    if (!stage && (s = self->record_event(event, stream))) stage = 4;
    Py_END_ALLOW_THREADS
    if (stage == 1) { runner_raise(self, s, "aclrtSynchronizeEvent"); goto out; }
    if (queued && PyObject_SetAttr(prepared, s_queued_flag, Py_False)) goto out;
    for (int i = 0; i < copied; ++i) {
        run_slot_t *r = &self->slots[i];
        if (r->nbytes && r->output && PyObject_SetAttr(r->slot, s_value, args[r->arg])) goto out;
    }
    if (stage == 2) { runner_raise(self, s, "aclrtMemcpy"); goto out; }
    if (stage == 3) {
        PyObject *r = PyObject_CallMethod(self->lib, "check", "iO", (int)s, self->op);
        Py_XDECREF(r);
        goto out;
    }
    if (stage == 4) {
        PyObject *r = PyObject_CallFunction(self->record_failed, "OOi", self->lib, stream_obj, (int)s);
        Py_XDECREF(r);
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_SystemError, "aclnn_py fast entry: a failure raised nothing");
        goto out;
    }
    if (PyObject_SetAttr(prepared, s_queued_flag, Py_True)) goto out;
    /* download(): Library.synchronize, here when nothing else waits for the stream */
    int busy = 0;
    PyObject *names[] = {s_pending, s_callers, s_queued};
    for (int i = 0; i < 3 && !busy; ++i) {
        busy = attr_true(state, names[i]);
        if (busy < 0) goto out;
    }
    if (!busy) {
        PyObject *handover = state_get(state, ST_HANDOVER);
        busy = handover ? attr_true(handover, s_releases) : -1;
        Py_XDECREF(handover);
        if (busy < 0) goto out;
    }
    if (busy) {
        PyObject *r = PyObject_CallMethodObjArgs(self->lib, s_synchronize, NULL);
        if (!r) goto out;
        Py_DECREF(r);
    }
    /* (the wait, when nothing else waits, and the copies back, without the GIL) */
    stage = 0;
    Py_BEGIN_ALLOW_THREADS
    if (!busy && (s = self->sync_stream(stream))) stage = 1;
    for (int i = 0; !stage && i < self->nslots; ++i) {
        run_slot_t *r = &self->slots[i];
        if (r->download && r->nbytes &&
            (s = self->memcpy_(k.views[r->arg].buf, r->nbytes, r->ptr, r->nbytes, ACL_MEMCPY_DEVICE_TO_HOST)))
            stage = 2;
    }
    Py_END_ALLOW_THREADS
    if (stage) { runner_raise(self, s, stage == 1 ? "aclrtSynchronizeStream" : "aclrtMemcpy"); goto out; }
    if (self->nresults == 0) {
        result = Py_None;
        Py_INCREF(result);
    } else if (self->nresults == 1) {
        result = args[self->results[0]];
        Py_INCREF(result);
    } else {
        result = PyTuple_New(self->nresults);
        if (result)
            for (int i = 0; i < self->nresults; ++i) {
                Py_INCREF(args[self->results[i]]);
                PyTuple_SetItem(result, i, args[self->results[i]]);
            }
    }
out:
    key_release(&k);
    if (result == miss) Py_INCREF(miss);
    Py_XDECREF(event_obj);
    Py_XDECREF(done);
    Py_XDECREF(own);
    Py_XDECREF(stream_obj);
    Py_XDECREF(state);
    return result;
}

/* runner(prepared, args): the run's result, or MISS (the Python path). */
static PyObject *runner_call(PyObject *op, PyObject *args, PyObject *kwargs) {
    runner_t *self = (runner_t *)op;
    PyObject *prepared, *seq;
    if (!self->words) { PyErr_SetString(PyExc_TypeError, "Runner: not made"); return NULL; }
    if ((kwargs && PyDict_Size(kwargs)) || !PyArg_ParseTuple(args, "OO!", &prepared, &PyTuple_Type, &seq)) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "runner(prepared, args)");
        return NULL;
    }
    if (!plans_on || PyTuple_Size(seq) != self->nargs || PyThread_get_thread_ident() != self->thread) {
        Py_INCREF(miss);
        return miss;
    }
    int capturing = attr_true(self->lib, s_capturing);
    if (capturing) {
        if (capturing < 0) return NULL;
        Py_INCREF(miss);
        return miss;
    }
    PyObject *lock = PyObject_GetAttr(self->guard, s_lock);
    if (!lock) return NULL;
    PyObject *got = PyObject_CallMethodObjArgs(lock, s_acquire, Py_False, NULL);
    int acquired = got ? PyObject_IsTrue(got) : -1;
    Py_XDECREF(got);
    if (acquired <= 0) {
        /* (held by a close() on another thread: the Python path waits for it) */
        Py_DECREF(lock);
        if (acquired < 0) return NULL;
        Py_INCREF(miss);
        return miss;
    }
    PyObject *result = NULL;
    if (self->closed) {
        result = miss;  /* (the Python path raises) */
        Py_INCREF(result);
    } else {
        PyObject *items[MAX_ARGS];
        for (Py_ssize_t i = 0; i < self->nargs; ++i) items[i] = PyTuple_GetItem(seq, i);
        result = runner_locked(self, prepared, items);
    }
    PyObject *exc_type, *exc_value, *exc_tb;
    PyErr_Fetch(&exc_type, &exc_value, &exc_tb);
    PyObject *r = PyObject_CallMethodObjArgs(lock, s_release, NULL);
    Py_DECREF(lock);
    if (!r) {
        Py_XDECREF(result);
        Py_XDECREF(exc_type);
        Py_XDECREF(exc_value);
        Py_XDECREF(exc_tb);
        return NULL;
    }
    Py_DECREF(r);
    PyErr_Restore(exc_type, exc_value, exc_tb);
    return result;
}

/* close(): no run from now on (Prepared._release, the lock held, before the executor goes). */
static PyObject *runner_close(PyObject *op, PyObject *unused) {
    (void)unused;
    ((runner_t *)op)->closed = 1;
    Py_RETURN_NONE;
}

static PyMethodDef runner_methods[] = {
    {"close", runner_close, METH_NOARGS, "no run from now on"},
    {NULL, NULL, 0, NULL},
};

static int runner_traverse(PyObject *op, visitproc visit, void *arg) {
    runner_t *self = (runner_t *)op;
    Py_VISIT(self->lib);
    Py_VISIT(self->guard);
    Py_VISIT(self->record_failed);
    for (int i = 0; i < self->nslots; ++i) Py_VISIT(self->slots[i].slot);
    Py_VISIT(Py_TYPE(op));
    return 0;
}

static int runner_tp_clear(PyObject *op) {
    runner_t *self = (runner_t *)op;
    Py_CLEAR(self->lib);
    Py_CLEAR(self->guard);
    Py_CLEAR(self->op);
    Py_CLEAR(self->record_failed);
    Py_CLEAR(self->refs);
    for (int i = 0; i < self->nslots; ++i) Py_CLEAR(self->slots[i].slot);
    self->nslots = 0;
    PyMem_Free(self->words);
    self->words = NULL;
    return 0;
}

static void runner_dealloc(PyObject *op) {
    PyTypeObject *type = Py_TYPE(op);
    PyObject_GC_UnTrack(op);
    runner_tp_clear(op);
    freefunc free_ = (freefunc)PyType_GetSlot(type, Py_tp_free);
    free_(op);
    Py_DECREF(type);
}

static PyType_Slot runner_slots[] = {
    {Py_tp_doc, "Runner(lib, guard, op, values, slots, results, functions, record_failed): the one-crossing run "
                "of a prepared executor; runner(prepared, args) -> result or MISS."},
    {Py_tp_init, runner_init},
    {Py_tp_call, runner_call},
    {Py_tp_methods, runner_methods},
    {Py_tp_traverse, runner_traverse},
    {Py_tp_clear, runner_tp_clear},
    {Py_tp_dealloc, runner_dealloc},
    {Py_tp_new, PyType_GenericNew},
    {0, NULL},
};

static PyType_Spec runner_spec = {
    "aclnn_py._fast._entry.Runner", sizeof(runner_t), 0, Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC, runner_slots,
};

/* -- module ---------------------------------------------------------------------------- */

static PyObject *setup(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    (void)module;
    if (nargs != 8) {
        PyErr_SetString(PyExc_TypeError, "setup(ndarray, empty, to_address, fast_failed, api_for, miss, "
                                         "tensor_type, device_done)");
        return NULL;
    }
    PyObject **slots[] = {&ndarray_type, &np_empty, &to_address, &fast_failed, &api_for, &miss,
                          &tensor_type, &device_done};
    for (int i = 0; i < 8; ++i) {
        Py_INCREF(args[i]);
        SET_REF(*slots[i], args[i]);
    }
    Py_RETURN_NONE;
}

static PyObject *set_device_hooks(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    (void)module;
    if (nargs != 9 || !PyUnicode_Check(args[2])) {
        PyErr_SetString(PyExc_TypeError,
                        "set_device_hooks(nothing, blocking, package, kept, library_module, tensor_release, "
                        "buffer_release, os, blocking_key)");
        return NULL;
    }
    Py_ssize_t kept = PyLong_AsSsize_t(args[3]);
    if (PyErr_Occurred()) return NULL;
    PyObject **slots[] = {&nothing, &blocking, &package, &library_module, &tensor_release, &buffer_release,
                          &os_module, &blocking_key};
    int from[] = {0, 1, 2, 4, 5, 6, 7, 8};
    for (int i = 0; i < 8; ++i) {
        Py_INCREF(args[from[i]]);
        SET_REF(*slots[i], args[from[i]]);
    }
    have_last = 0;
    if (codes_inside) PyDict_Clear(codes_inside);  /* (another package directory) */
    if (namespaces_inside) PyDict_Clear(namespaces_inside);
    kept_calls = kept;
    Py_RETURN_NONE;
}

/* -- dispatch: the op functions' call, its common device case here ------------------------
 *
 * ops/_dispatch.py's dispatch(backend, numpy_impl, aclnn_impl, *args, stream=None, made=None):
 * with no stream and a backend (given, else get_backend()'s) whose Library is loaded
 * (loader.LOADED, read per call: tests replace it), aclnn_impl(lib, *args) is called from here,
 * with no Python frame of its own; an error it raises goes through failed(error, made) (the
 * note naming made outputs). Any other call is dispatch_python's, given the backend's name
 * where get_backend() was asked for it. */
static PyObject *py_dispatch, *loader_module, *dispatch_failed, *get_backend, *s_loaded, *s_stream_kw, *s_made_kw;

static PyObject *set_dispatch(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    (void)module;
    if (nargs != 4 || !PyModule_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError, "set_dispatch(dispatch_python, loader_module, failed, get_backend)");
        return NULL;
    }
    PyObject **slots[] = {&py_dispatch, &loader_module, &dispatch_failed, &get_backend};
    for (int i = 0; i < 4; ++i) {
        Py_INCREF(args[i]);
        SET_REF(*slots[i], args[i]);
    }
    Py_RETURN_NONE;
}

/* dispatch_python(*args, **keywords) as called, its first argument (the backend) replaced by
 * ``backend`` where not NULL (a new reference, or NULL with an error). */
static PyObject *dispatch_in_python(PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames, PyObject *backend) {
    PyObject *positional = PyTuple_New(nargs);
    if (!positional) return NULL;
    for (Py_ssize_t i = 0; i < nargs; ++i) {
        PyObject *item = i == 0 && backend ? backend : args[i];
        Py_INCREF(item);
        PyTuple_SetItem(positional, i, item);
    }
    PyObject *keywords = NULL;
    Py_ssize_t nkw = kwnames ? PyTuple_Size(kwnames) : 0;
    if (nkw) {
        keywords = PyDict_New();
        for (Py_ssize_t i = 0; keywords && i < nkw; ++i)
            if (PyDict_SetItem(keywords, PyTuple_GetItem(kwnames, i), args[nargs + i])) Py_CLEAR(keywords);
        if (!keywords) {
            Py_DECREF(positional);
            return NULL;
        }
    }
    PyObject *result = PyObject_Call(py_dispatch, positional, keywords);
    Py_DECREF(positional);
    Py_XDECREF(keywords);
    return result;
}

static PyObject *dispatch_entry(PyObject *module, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
    (void)module;
    if (!py_dispatch) {
        PyErr_SetString(PyExc_SystemError, "aclnn_py fast entry: dispatch before set_dispatch");
        return NULL;
    }
    PyObject *stream = NULL, *made = NULL;
    int other = nargs < 3;
    for (Py_ssize_t i = 0; kwnames && i < PyTuple_Size(kwnames); ++i) {
        PyObject *name = PyTuple_GetItem(kwnames, i);
        if (PyUnicode_Compare(name, s_stream_kw) == 0) stream = args[nargs + i];
        else if (PyUnicode_Compare(name, s_made_kw) == 0) made = args[nargs + i];
        else other = 1;
    }
    if (other || (stream && stream != Py_None) || PyErr_Occurred()) {
        PyErr_Clear();
        return dispatch_in_python(args, nargs, kwnames, NULL);
    }
    PyObject *backend = args[0];
    Py_INCREF(backend);
    if (backend == Py_None) {
        Py_DECREF(backend);
        backend = PyObject_CallNoArgs(get_backend);
        if (!backend) return NULL;
    }
    PyObject *lib = NULL;
    if (PyUnicode_CheckExact(backend)) {
        PyObject *names = PyModule_GetDict(loader_module); /* (borrowed) */
        PyObject *loaded = names ? PyDict_GetItemWithError(names, s_loaded) : NULL;
        lib = loaded && PyDict_CheckExact(loaded) ? PyDict_GetItemWithError(loaded, backend) : NULL;
    }
    if (!lib) {
        PyObject *result = NULL;
        /* (backend None: get_backend()'s name goes on, so that a call resolves it once) */
        if (!PyErr_Occurred()) result = dispatch_in_python(args, nargs, kwnames, backend);
        Py_DECREF(backend);
        return result;
    }
    Py_DECREF(backend);
    PyObject *call = PyTuple_New(nargs - 2);
    if (!call) return NULL;
    Py_INCREF(lib);
    PyTuple_SetItem(call, 0, lib);
    for (Py_ssize_t i = 3; i < nargs; ++i) {
        Py_INCREF(args[i]);
        PyTuple_SetItem(call, i - 2, args[i]);
    }
    PyObject *result = PyObject_Call(args[2], call, NULL);
    Py_DECREF(call);
    if (result || !made || made == Py_None) return result;
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyErr_NormalizeException(&type, &value, &tb);
    if (tb && value) PyException_SetTraceback(value, tb);
    PyObject *named = value ? PyObject_CallFunctionObjArgs(dispatch_failed, value, made, NULL) : NULL;
    if (!named || named == value) {
        Py_XDECREF(named);
        PyErr_Clear();
        PyErr_Restore(type, value, tb);
        return NULL;
    }
    Py_XDECREF(type);
    Py_XDECREF(value);
    Py_XDECREF(tb);
    PyObject *named_tb = PyException_GetTraceback(named);
    PyObject *named_type = (PyObject *)Py_TYPE(named);
    Py_INCREF(named_type);
    PyErr_Restore(named_type, named, named_tb);
    return NULL;
}

static PyObject *set_plans(PyObject *module, PyObject *flag) {
    (void)module;
    int on = PyObject_IsTrue(flag);
    if (on < 0) return NULL;
    int was = plans_on;
    plans_on = on;
    return PyBool_FromLong(was);
}

static PyObject *abi_version(PyObject *module, PyObject *unused) {
    (void)module;
    (void)unused;
    return Py_BuildValue("(ii)", aclnnpy_fast_abi_version(), ENTRY_VERSION);
}

static PyMethodDef module_methods[] = {
    {"setup", (PyCFunction)(void (*)(void))setup, METH_FASTCALL,
     "setup(ndarray, empty, to_address, fast_failed, api_for, miss, tensor_type, device_done)"},
    {"set_device_hooks", (PyCFunction)(void (*)(void))set_device_hooks, METH_FASTCALL,
     "set_device_hooks(nothing, blocking, package, kept, library_module, tensor_release, buffer_release, "
     "os, blocking_key): what a device "
     "call queues, kept in C"},
    {"frames_inside", (PyCFunction)(void (*)(void))frames_inside, METH_FASTCALL,
     "frames_inside(globals, depth): calls from this module's code have depth frames of the package's on top"},
    {"set_state_type", set_state_type, METH_O,
     "set_state_type(cls) -> whether the offsets of the thread state class's slots were found"},
    {"set_tensor_type", set_tensor_type, METH_O,
     "set_tensor_type(cls): the class of new output Tensors, whose slots the entry writes; whether they were found"},
    {"set_dispatch", (PyCFunction)(void (*)(void))set_dispatch, METH_FASTCALL,
     "set_dispatch(dispatch_python, loader_module, failed, get_backend): dispatch's hooks"},
    {"dispatch", (PyCFunction)(void (*)(void))dispatch_entry, METH_FASTCALL | METH_KEYWORDS,
     "dispatch(backend, numpy_impl, aclnn_impl, *args, stream=None, made=None): an op call (ops/_dispatch.py)"},
    {"set_plans", set_plans, METH_O, "set_plans(on) -> the previous setting: plans replayed or not"},
    {"abi_version", abi_version, METH_NOARGS, "(fastcall.c's ABI_VERSION, entry.c's ENTRY_VERSION) compiled in"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "aclnn_py._fast._entry", "The fast path's per-call entry (entry.c).", -1, module_methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__entry(void) {
    PyObject *m = PyModule_Create(&module_def);
    if (!m) return NULL;
    struct { PyObject **slot; const char *text; } strings[] = {
        {&s_local, "local"}, {&s_state, "state"}, {&s_stream, "stream"}, {&s_pending, "pending"},
        {&s_fast_api, "fast_api"}, {&s_table, "table"}, {&s_dtype, "dtype"}, {&s_synchronize, "synchronize"},
        {&s_stream_method, "stream"}, {&s_has_pending, "has_pending"}, {&s_fast_key, "fast_key"}, {&s_capturing, "capturing"},
        {&s_queued, "queued"}, {&s_capture, "capture"}, {&s_f_code, "f_code"}, {&s_f_back, "f_back"},
        {&s_f_lasti, "f_lasti"}, {&s_co_filename, "co_filename"}, {&s_own, "own"}, {&s_nbytes, "nbytes"},
        {&s_lock, "lock"}, {&s_acquire, "acquire"}, {&s_release, "release"}, {&s_queued_flag, "_queued"},
        {&s_done, "_done"}, {&s_value, "value"}, {&s_callers, "callers"}, {&s_handover, "handover"},
        {&s_releases, "releases"}, {&s_finalized, "finalized"}, {&s_give, "give"}, {&s_take, "take"},
        {&s_give_all, "give_all"}, {&s_batch, "batch"}, {&s_blocks, "blocks"},
        {&s_max_pending, "MAX_PENDING_RELEASES"}, {&s_max_bytes, "MAX_PENDING_BYTES"}, {&s_handle_address, "handle_address"},
        {&s_trim, "trim"}, {&s_owner, "owner"}, {&s_lib, "lib"},
        {&s_shape, "shape"}, {&s_strides, "strides"}, {&s_offset, "offset"}, {&s_format, "format"},
        {&s_finalizer, "_finalizer"}, {&s_data, "_data"}, {&s_environ, "environ"}, {&s_loaded, "LOADED"},
        {&s_stream_kw, "stream"}, {&s_made_kw, "made"}, {&s_state_cache, "aclnn_py._fast._entry.thread_state"},
    };
    for (size_t i = 0; i < sizeof strings / sizeof strings[0]; ++i)
        if (!*strings[i].slot && !(*strings[i].slot = PyUnicode_InternFromString(strings[i].text))) goto fail;
    if (!addresses && !(addresses = PyDict_New())) goto fail;
    if (!at_fork_registered && pthread_atfork(NULL, NULL, at_fork_child) == 0) at_fork_registered = 1;
    if (!empty_tuple && !(empty_tuple = PyTuple_New(0))) goto fail;
    if (!codes_inside && !(codes_inside = PyDict_New())) goto fail;
    if (!namespaces_inside && !(namespaces_inside = PyDict_New())) goto fail;
    for (int i = 0; i < (int)(sizeof depths / sizeof depths[0]); ++i)
        if (!depths[i] && !(depths[i] = PyLong_FromLong(i + 1))) goto fail;
    if (!get_frame) {
        PyObject *sys = PyImport_ImportModule("sys");
        get_frame = sys ? PyObject_GetAttrString(sys, "_getframe") : NULL;
        Py_XDECREF(sys);
        PyErr_Clear(); /* (without it, the search starts at the calling frame) */
    }
    if (!release_type && !(release_type = PyType_FromSpec(&release_spec))) goto fail;
    PyObject *type = PyType_FromSpec(&planner_spec);
    if (!type || PyModule_AddObject(m, "Planner", type)) {
        Py_XDECREF(type);
        goto fail;
    }
    PyObject *runner = PyType_FromSpec(&runner_spec);
    if (!runner || PyModule_AddObject(m, "Runner", runner)) {
        Py_XDECREF(runner);
        goto fail;
    }
    struct { const char *name; long value; } constants[] = {
        {"MAX_PLANS", MAX_PLANS}, {"ARG", P_ARG}, {"NEW_OUTPUT", P_OUTPUT}, {"NULL", P_NULL},
        {"ARG_WRITTEN", P_ARG_WRITABLE}, {"TENSOR", P_TENSOR}, {"ITEM", P_ITEM}, {"DEVICE_ITEM", P_DEVICE_ITEM}, {"SINGLE", R_SINGLE}, {"TUPLE", R_TUPLE}, {"NONE", R_NONE},
    };
    for (size_t i = 0; i < sizeof constants / sizeof constants[0]; ++i)
        if (PyModule_AddIntConstant(m, constants[i].name, constants[i].value)) goto fail;
    return m;
fail:
    Py_DECREF(m);
    return NULL;
}
