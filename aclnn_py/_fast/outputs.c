/* aclnn_py._fast._entry's device outputs (included by entry.c): the new output Tensor of a
 * device plan made without running Python code, and the releases of device handles in C.
 *
 * A device-Tensor chain makes a new output Tensor per operator call and drops it a few calls
 * later; done in Python (objects, the caching allocator, the finalizers), that was four times
 * the cost of the call itself. Here:
 *
 * make_output: a block of the output's size: a dropped output's on this thread's own stream
 *   (reuse_block), else from the caching allocator (DevicePool.take, else
 *   aclrtMalloc, the pool emptied and the allocation tried once more on a failure; zeros when
 *   the output starts as zeros), its aclTensor (the dropped output's, which waited with its
 *   block, when it is of the same form: a C caller keeps an aclTensor for its buffer alike),
 *   and the Tensor object with the attributes
 *   tensor.output_form lists and one OWNED release of both. Its cffi pointer (handle) is made
 *   from its address on first use, and its DeviceBuffer when it is first asked for: the
 *   release hands the block over to it then (split_block; tensor.py's __getattr__). No check
 *   runs: the form is the output of a call of this key whose checks passed on the Python path.
 *
 * Release: what weakref.finalize was for the Python path's handles, without its registry: it
 *   runs once, when called (Tensor.close, DeviceBuffer.free) or when collected with its owner.
 *   Its common case is C; anything else is the Python path's own release:
 *   OWNED   an output's aclTensor and/or its block (HAS_HANDLE, HAS_BLOCK):
 *           the aclTensor: aclDestroyTensor now, on the owner thread (Tensor.release_handle
 *           otherwise);
 *           the block: back to the pool now, or once the stream is past the work queued on it:
 *           into the thread's GIVE release waiting for the stream (state.batch; a new one is
 *           appended to the waiting releases when there is none or it is full: Library.defer's
 *           bookkeeping, synchronising at its bounds); on another thread, during a capture or
 *           a stream= call, DeviceBuffer.release_block;
 *   GIVE    up to GIVE_MOST blocks back to the pool (DevicePool.give_all), a waiting release;
 *           the aclTensors kept with them (block_returned) destroyed first;
 *   FREE    aclrtFree of a call's own device memory (its NumPy inputs' copies, its workspace),
 *           a waiting release.
 *   A GIVE or FREE release dropped without being run frees nothing (a forked child drops the
 *   parent's waiting releases: their memory is the parent's), as a dropped functools.partial.
 *   Failures are not raised (a finalizer cannot raise), as on the Python path.
 */

enum { REL_OWNED = 1, REL_GIVE = 3, REL_FREE = 4 };
enum { HAS_HANDLE = 1, HAS_BLOCK = 2 }; /* an OWNED release's count */

static PyObject *thread_state(PyObject *lib); /* (entry.c) */
static int pending_bounds_as_read(Py_ssize_t *most, long long *bytes);

#define GIVE_MOST (MAX_ARGS + 1)

typedef struct {
    PyObject_HEAD
    int kind;
    int count;                 /* what is still to release (OWNED: flags; else addresses): 0 once run */
    int ran;                   /* GIVE: it has run (no block is added then) */
    unsigned long owner;       /* the owner thread (OWNED) */
    PyObject *lib, *pool, *handover;
    status_t (*fn)(void *);    /* aclDestroyTensor (OWNED), aclrtFree (FREE) */
    void *handle;              /* OWNED: the aclTensor */
    uint64_t nbytes;           /* the block's (OWNED), all of them (FREE) */
    /* The lists of a GIVE or FREE release, GIVE_MOST each, in one allocation (lists); an OWNED
     * release, the common one (one per output), has only its block (own_block), so that it
     * stays small enough for Python's small-object allocator: */
    void **addresses;          /* OWNED: [0] the block */
    uint64_t *sizes;           /* GIVE: each block's */
    int nfree;                 /* GIVE: calls' own blocks to aclrtFree (fn) first, */
    void **frees;              /* (device_queued_here, entry.c) */
    uint64_t *free_sizes;      /* their sizes where known (a workspace's), else 0 */
    void **handles;            /* GIVE: each block's output aclTensor kept with it, or NULL */
    PyObject **keys;           /*   and that output's fast_key (held), or NULL */
    void *lists;               /* (NULL for OWNED) */
    void *own_block[1];
    PyObject *key;             /* OWNED: the output's fast_key (held; its aclTensor goes with the block) */
    status_t (*destroy)(void *); /* GIVE: aclDestroyTensor of the kept aclTensors */
} release_t;

/* Set by setup_outputs(): the release type, Tensor.release_handle and DeviceBuffer.release_block (the
 * Python path's releases), an empty tuple (tp_new's arguments). */
static PyObject *release_type, *tensor_release, *buffer_release, *empty_tuple;
static PyObject *s_finalized, *s_give, *s_give_all, *s_take, *s_trim, *s_finalizer, *s_handle_address, *s_blocks;

/* A new release (NULL with an error). */
static release_t *release_new(int kind, PyObject *lib, PyObject *pool, PyObject *owner) {
    release_t *r = PyObject_GC_New(release_t, (PyTypeObject *)release_type);
    if (!r) return NULL;
    r->kind = kind;
    r->count = 0;
    r->ran = 0;
    r->owner = 0;
    r->fn = NULL;
    r->handle = NULL;
    r->nbytes = 0;
    r->nfree = 0;
    r->handover = NULL;
    r->lists = NULL;
    r->own_block[0] = NULL;
    r->addresses = r->own_block;
    r->sizes = r->free_sizes = NULL;
    r->frees = r->handles = NULL;
    r->keys = NULL;
    r->key = NULL;
    r->destroy = NULL;
    r->lib = r->pool = NULL;
    if (kind != REL_OWNED) {
        char *lists = PyMem_Calloc(GIVE_MOST, 3 * sizeof(void *) + 2 * sizeof(uint64_t) + sizeof(PyObject *));
        if (!lists) {
            Py_DECREF(r);
            PyErr_NoMemory();
            return NULL;
        }
        r->lists = lists;
        r->addresses = (void **)lists;
        r->frees = (void **)(lists + GIVE_MOST * sizeof(void *));
        r->sizes = (uint64_t *)(lists + 2 * GIVE_MOST * sizeof(void *));
        r->free_sizes = (uint64_t *)(lists + 2 * GIVE_MOST * sizeof(void *) + GIVE_MOST * sizeof(uint64_t));
        r->handles = (void **)(lists + 2 * GIVE_MOST * sizeof(void *) + 2 * GIVE_MOST * sizeof(uint64_t));
        r->keys = (PyObject **)(lists + 3 * GIVE_MOST * sizeof(void *) + 2 * GIVE_MOST * sizeof(uint64_t));
    }
    Py_INCREF(lib);
    r->lib = lib;
    Py_XINCREF(pool);
    r->pool = pool;
    if (owner) {
        /* (thread ident, handover): state.owner */
        PyObject *ident = PyTuple_Check(owner) && PyTuple_Size(owner) == 2 ? PyTuple_GetItem(owner, 0) : NULL;
        r->owner = ident ? PyLong_AsUnsignedLong(ident) : (unsigned long)-1;
        if (!ident || PyErr_Occurred()) {
            if (!PyErr_Occurred()) PyErr_SetString(PyExc_SystemError, "aclnn_py fast entry: a thread's owner is not (ident, handover)");
            Py_DECREF(r);
            return NULL;
        }
        r->handover = PyTuple_GetItem(owner, 1);
        Py_INCREF(r->handover);
    }
    PyObject_GC_Track((PyObject *)r);
    return r;
}

/* pool.give(address, nbytes); 0 or -1 (an error set). */
static int pool_give(PyObject *pool, void *address, uint64_t nbytes) {
    PyObject *a = PyLong_FromVoidPtr(address), *n = a ? PyLong_FromUnsignedLongLong(nbytes) : NULL;
    PyObject *r = n ? PyObject_CallMethodObjArgs(pool, s_give, a, n, NULL) : NULL;
    Py_XDECREF(a);
    Py_XDECREF(n);
    Py_XDECREF(r);
    return r ? 0 : -1;
}

/* Whether the thread's calls queue on its own stream with no capture in progress (what the
 * entry's fast bookkeeping and a block's reuse need): 1, 0, or -1 with an error. */
static int on_own_stream(PyObject *state) {
    PyObject *capture = state_get(state, ST_CAPTURE);
    PyObject *stream = capture ? state_get(state, ST_STREAM) : NULL;
    PyObject *own = stream ? state_get(state, ST_OWN) : NULL;
    int result = own ? capture == Py_None && stream == own && stream != Py_None : -1;
    Py_XDECREF(capture);
    Py_XDECREF(stream);
    Py_XDECREF(own);
    return result;
}

/* BLOCK's common case: 1 done, 0 not (then the Python path's release runs; an error of this
 * attempt is cleared). A failure of the synchronisation at the bounds is not raised (the block
 * waits with the others then), as Library.defer's in DeviceBuffer.release_block.
 * With kept non-NULL, the output's aclTensor and fast_key go into the batch with the block
 * when it waits there (*kept set to 1): a new output of the same form that takes the block
 * back takes them too (reuse_block), as a caller keeps an aclTensor for its buffer. */
static int block_returned(release_t *self, int *kept) {
    PyObject *state = thread_state(self->lib);
    if (!state) return 0;
    int done = 0;
    PyObject *pending = state_get(state, ST_PENDING);
    if (!pending || !PyList_Check(pending)) goto out;
    if (PyList_Size(pending) == 0) {
        /* nothing queued on the thread's stream may use it */
        pool_give(self->pool, self->addresses[0], self->nbytes);
        done = 1;
        goto out;
    }
    if (on_own_stream(state) <= 0) goto out;
    /* Library.defer: the return waits with the others; at its bounds the stream is synchronised. */
    PyObject *held = state_get(state, ST_NBYTES);
    long long was = held ? PyLong_AsLongLong(held) : -1;
    Py_XDECREF(held);
    if (was < 0 || PyErr_Occurred()) goto out;
    PyObject *total = PyLong_FromUnsignedLongLong((unsigned long long)was + self->nbytes);
    if (!total) goto out;
    PyObject *batch = state_get(state, ST_BATCH);
    release_t *give = batch && Py_TYPE(batch) == (PyTypeObject *)release_type ? (release_t *)batch : NULL;
    if (give && !give->pool && !give->ran && give->lib == self->lib) {  /* (a batch of calls' blocks so far) */
        Py_INCREF(self->pool);
        give->pool = self->pool;
    }
    if (!give || give->ran || give->pool != self->pool || give->count >= GIVE_MOST) {
        Py_XDECREF(batch);
        give = release_new(REL_GIVE, self->lib, self->pool, NULL);
        if (!give || PyList_Append(pending, (PyObject *)give) || state_set(state, ST_BATCH, (PyObject *)give)) {
            /* (appended and not the batch: it runs empty) */
            Py_XDECREF((PyObject *)give);
            Py_DECREF(total);
            goto out;
        }
    }
    give->addresses[give->count] = self->addresses[0];
    give->sizes[give->count] = self->nbytes;
    give->handles[give->count] = NULL;
    give->keys[give->count] = NULL;
    if (kept && self->key) {
        give->handles[give->count] = self->handle;
        Py_INCREF(self->key);
        give->keys[give->count] = self->key;
        give->destroy = self->fn;
        *kept = 1;
    }
    give->count++;
    Py_DECREF((PyObject *)give);
    state_set(state, ST_NBYTES, total); /* (the bound's count; a failure is cleared) */
    Py_DECREF(total);
    done = 1;
    Py_ssize_t max_pending;
    long long max_bytes;
    if (pending_bounds_as_read(&max_pending, &max_bytes) == 0 &&
        (PyList_Size(pending) >= max_pending || was + (long long)self->nbytes >= max_bytes)) {
        PyObject *r = PyObject_CallMethodObjArgs(self->lib, s_synchronize, NULL);
        Py_XDECREF(r);
    }
out:
    PyErr_Clear();
    Py_XDECREF(pending);
    Py_DECREF(state);
    return done;
}

/* An OWNED release's aclTensor: destroyed here on the owner thread, else handed over by
 * Tensor.release_handle. */
static void release_handle_part(release_t *self, int here) {
    if (here) {
        self->fn(self->handle);
        return;
    }
    PyObject *address = PyLong_FromVoidPtr(self->handle);
    PyObject *ident = address ? PyLong_FromUnsignedLong(self->owner) : NULL;
    PyObject *r = ident ? PyObject_CallFunctionObjArgs(tensor_release, self->lib, address, ident, self->handover, NULL)
                        : NULL;
    Py_XDECREF(r);
    Py_XDECREF(address);
    Py_XDECREF(ident);
    PyErr_Clear();
}

/* An OWNED release's block where block_returned did not take it: DeviceBuffer.release_block
 * (another thread's, a capture, a caller's stream). */
static void release_block_part(release_t *self) {
    PyObject *address = PyLong_FromVoidPtr(self->addresses[0]);
    PyObject *ident = address ? PyLong_FromUnsignedLong(self->owner) : NULL;
    PyObject *nbytes = ident ? PyLong_FromUnsignedLongLong(self->nbytes) : NULL;
    PyObject *r = nbytes ? PyObject_CallFunctionObjArgs(buffer_release, self->lib, self->pool, address, nbytes, ident,
                                                        self->handover, NULL)
                         : NULL;
    Py_XDECREF(r);
    Py_XDECREF(address);
    Py_XDECREF(ident);
    Py_XDECREF(nbytes);
    PyErr_Clear();
}

/* Run the release once (later calls do nothing); errors are not raised (cleared). */
static void release_run(release_t *self) {
    int count = self->count;
    if (self->kind == REL_GIVE) {
        if (self->ran) return;
        self->ran = 1;
    } else if (!count) {
        return;
    }
    self->count = 0;
    PyObject *finalized = PyObject_GetAttr(self->lib, s_finalized);
    int gone = finalized ? PyObject_IsTrue(finalized) : -1;
    Py_XDECREF(finalized);
    if (gone) {  /* torn down (or unknown): nothing to call */
        for (int i = 0; self->keys && i < count; ++i) Py_CLEAR(self->keys[i]);
        PyErr_Clear();
        return;
    }
    if (self->kind == REL_FREE) {
        for (int i = count - 1; i >= 0; --i) self->fn(self->addresses[i]);
    } else if (self->kind == REL_GIVE) {
        for (int i = self->nfree - 1; i >= 0; --i) self->fn(self->frees[i]);
        self->nfree = 0;
        for (int i = 0; i < count; ++i)
            if (self->handles[i]) {
                self->destroy(self->handles[i]);
                self->handles[i] = NULL;
                Py_CLEAR(self->keys[i]);
            }
        if (!count) return;
        PyObject *addresses = PyTuple_New(count), *sizes = addresses ? PyTuple_New(count) : NULL;
        for (int i = 0; sizes && i < count; ++i) {
            PyObject *a = PyLong_FromVoidPtr(self->addresses[i]), *n = PyLong_FromUnsignedLongLong(self->sizes[i]);
            if (!a || !n) {
                Py_XDECREF(a);
                Py_XDECREF(n);
                Py_CLEAR(sizes);
                break;
            }
            PyTuple_SetItem(addresses, i, a);
            PyTuple_SetItem(sizes, i, n);
        }
        PyObject *r = sizes ? PyObject_CallMethodObjArgs(self->pool, s_give_all, addresses, sizes, NULL) : NULL;
        Py_XDECREF(r);
        Py_XDECREF(addresses);
        Py_XDECREF(sizes);
    } else {
        int here = PyThread_get_thread_ident() == self->owner;
        int kept = 0, returned = here && (count & HAS_BLOCK) && block_returned(self, count & HAS_HANDLE ? &kept : NULL);
        if ((count & HAS_HANDLE) && !kept) release_handle_part(self, here);
        if ((count & HAS_BLOCK) && !returned) release_block_part(self);
    }
    PyErr_Clear();
}

static PyObject *release_call(PyObject *op, PyObject *args, PyObject *kwargs) {
    if (PyTuple_Size(args) || (kwargs && PyDict_Size(kwargs))) {
        PyErr_SetString(PyExc_TypeError, "a release takes no arguments");
        return NULL;
    }
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    release_run((release_t *)op);
    PyErr_Restore(type, value, tb);
    Py_RETURN_NONE;
}

/* split_block(): the block as a new OWNED release of it alone, for the output's DeviceBuffer
 * made on first use: (release, address, nbytes), or None when this release holds no block. */
static PyObject *release_split_block(PyObject *op, PyObject *unused) {
    (void)unused;
    release_t *self = (release_t *)op;
    if (self->kind != REL_OWNED || !(self->count & HAS_BLOCK)) Py_RETURN_NONE;
    release_t *r = release_new(REL_OWNED, self->lib, self->pool, NULL);
    if (!r) return NULL;
    r->owner = self->owner;
    Py_XINCREF(self->handover);
    r->handover = self->handover;
    PyObject *address = PyLong_FromVoidPtr(self->addresses[0]);
    PyObject *nbytes = address ? PyLong_FromUnsignedLongLong(self->nbytes) : NULL;
    PyObject *result = nbytes ? PyTuple_Pack(3, (PyObject *)r, address, nbytes) : NULL;
    Py_XDECREF(address);
    Py_XDECREF(nbytes);
    if (result) {  /* handed over */
        r->addresses[0] = self->addresses[0];
        r->nbytes = self->nbytes;
        r->count = HAS_BLOCK;
        self->count &= ~HAS_BLOCK;
    }
    Py_DECREF((PyObject *)r);
    return result;
}

/* owner: (thread ident, handover) of an OWNED release. */
static PyObject *release_owner(PyObject *op, void *closure) {
    (void)closure;
    release_t *self = (release_t *)op;
    PyObject *ident = PyLong_FromUnsignedLong(self->owner);
    PyObject *owner = ident ? PyTuple_Pack(2, ident, self->handover ? self->handover : Py_None) : NULL;
    Py_XDECREF(ident);
    return owner;
}

static PyObject *release_alive(PyObject *op, void *closure) {
    (void)closure;
    release_t *self = (release_t *)op;
    return PyBool_FromLong(self->kind == REL_GIVE ? !self->ran : self->count != 0);
}

static int release_traverse(PyObject *op, visitproc visit, void *arg) {
    release_t *self = (release_t *)op;
    Py_VISIT(self->lib);
    Py_VISIT(self->pool);
    Py_VISIT(self->handover);
    Py_VISIT(self->key);
    for (int i = 0; self->keys && i < self->count; ++i) Py_VISIT(self->keys[i]);
    Py_VISIT(Py_TYPE(op));
    return 0;
}

static int release_clear(PyObject *op) {
    release_t *self = (release_t *)op;
    for (int i = 0; self->keys && i < self->count; ++i) Py_CLEAR(self->keys[i]); /* (an unrun batch's) */
    Py_CLEAR(self->key);
    self->count = 0; /* (a cycle being collected: release_finalize ran first) */
    Py_CLEAR(self->lib);
    Py_CLEAR(self->pool);
    Py_CLEAR(self->handover);
    return 0;
}

/* An OWNED release collected unrun runs (a GIVE or FREE release does not: module docstring).
 * The garbage collector calls this before it clears a cycle the release is in (an output
 * Tensor in a reference cycle); a plain deallocation calls it itself. */
static void release_finalize(PyObject *op) {
    release_t *self = (release_t *)op;
    if (self->count && self->lib && self->kind == REL_OWNED) {
        PyObject *etype, *value, *tb;
        PyErr_Fetch(&etype, &value, &tb);
        release_run(self);
        PyErr_Restore(etype, value, tb);
    }
}

static void release_dealloc(PyObject *op) {
    PyTypeObject *type = Py_TYPE(op);
    PyObject_GC_UnTrack(op);
    release_finalize(op);
    release_clear(op);
    PyMem_Free(((release_t *)op)->lists);
    freefunc free_ = (freefunc)PyType_GetSlot(type, Py_tp_free);
    free_(op);
    Py_DECREF(type);
}

static PyGetSetDef release_getset[] = {
    {"alive", release_alive, NULL, "whether it has not run yet", NULL},
    {"owner", release_owner, NULL, "(owner thread ident, its handover)", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyMethodDef release_methods[] = {
    {"split_block", release_split_block, METH_NOARGS,
     "split_block() -> (release of the block alone, address, nbytes) or None: the block handed over"},
    {NULL, NULL, 0, NULL},
};

static PyType_Slot release_slots[] = {
    {Py_tp_doc, "The release of device handles the fast entry made (outputs.c): runs once, when called or "
                "collected."},
    {Py_tp_call, release_call},
    {Py_tp_getset, release_getset},
    {Py_tp_methods, release_methods},
    {Py_tp_traverse, release_traverse},
    {Py_tp_clear, release_clear},
    {Py_tp_finalize, release_finalize},
    {Py_tp_dealloc, release_dealloc},
    {0, NULL},
};

static PyType_Spec release_spec = {
    "aclnn_py._fast._entry.Release", sizeof(release_t), 0, Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC, release_slots,
};

/* A FREE release of a call's own device memory (later), or NULL with an error. */
static PyObject *free_release(PyObject *lib, const api_t *api, const deferred_t *later) {
    release_t *r = release_new(REL_FREE, lib, NULL, NULL);
    if (!r) return NULL;
    r->fn = api->free_;
    for (int i = 0; i < later->count; ++i) r->addresses[i] = later->blocks[i];
    r->nbytes = later->nbytes;
    r->count = later->count;
    return (PyObject *)r;
}

/* Whether b (or NULL) is a batch still waiting for the stream that holds calls' own blocks of
 * lib freed with api's aclrtFree (or none yet). */
static int open_batch(const release_t *b, PyObject *lib, const api_t *api) {
    return b && b->kind == REL_GIVE && !b->ran && b->lib == lib && (!b->fn || b->fn == api->free_);
}

/* The thread's batch (state.batch) with room for n more of a call's own blocks, made and
 * appended to the waiting releases when there is none with room (a new reference; NULL with an
 * error). */
static release_t *waiting_batch(PyObject *state, PyObject *lib, const api_t *api, PyObject *pending, int n) {
    PyObject *batch = state_get(state, ST_BATCH);
    if (!batch) return NULL;
    release_t *b = Py_TYPE(batch) == (PyTypeObject *)release_type ? (release_t *)batch : NULL;
    if (open_batch(b, lib, api) && b->nfree + n <= GIVE_MOST) {
        b->fn = api->free_;
        return b;
    }
    Py_DECREF(batch);
    b = release_new(REL_GIVE, lib, NULL, NULL);
    if (!b) return NULL;
    b->fn = api->free_;
    if (PyList_Append(pending, (PyObject *)b) || state_set(state, ST_BATCH, (PyObject *)b)) {
        Py_DECREF((PyObject *)b); /* (appended and not the batch: it runs empty) */
        return NULL;
    }
    return b;
}

/* -- the outputs of a device plan -------------------------------------------------------- */

/* A new output Tensor's attributes: the form's (the same for every output of the form), then
 * the call's own. Tensor keeps them in __slots__: set_tensor_type finds their offsets, and an
 * output of exactly that class gets them written there (no attribute lookup, no dictionary);
 * another class gets them as attributes. */
enum { TA_LIB, TA_DTYPE, TA_SHAPE, TA_STRIDES, TA_OFFSET, TA_FORMAT, TA_FORM_FIELDS,
       TA_FINALIZER = TA_FORM_FIELDS, TA_HANDLE_ADDRESS, TA_FAST_KEY, TA_FIELDS };
static PyObject *s_lib, *s_shape, *s_strides, *s_offset, *s_format;
static PyObject **const tensor_fields[TA_FIELDS] = {&s_lib, &s_dtype, &s_shape, &s_strides, &s_offset, &s_format,
                                                    &s_finalizer, &s_handle_address, &s_fast_key};
static PyObject *tensor_slots_type;     /* the class whose offsets are known, or NULL */
static Py_ssize_t tensor_at[TA_FIELDS];

/* set_tensor_type(cls): the class of new output Tensors (tensor.Tensor), its slots found;
 * whether they were (else its attributes are set). */
static PyObject *set_tensor_type(PyObject *module, PyObject *cls) {
    (void)module;
    return set_slotted_type(&tensor_slots_type, cls, tensor_fields, TA_FIELDS, tensor_at);
}

/* tensor.<field> (a new reference; NULL with an error): read at its slot's offset on an
 * instance of exactly the slotted class, else (or unset there) as an attribute. */
static PyObject *tensor_get(PyObject *obj, int field) {
    PyObject *value = (PyObject *)Py_TYPE(obj) == tensor_slots_type ? *(PyObject **)((char *)obj + tensor_at[field])
                                                                    : NULL;
    if (!value) return PyObject_GetAttr(obj, *tensor_fields[field]);
    Py_INCREF(value);
    return value;
}

typedef struct form {
    int zero, ndim;
    int32_t acl, format;
    int64_t dims[MAX_DIMS], strides[MAX_DIMS], offset, storage;
    uint64_t nbytes;
    PyObject *nbytes_obj, *pool, *tensor_type_, *token;
    PyObject *attrs[TA_FORM_FIELDS];  /* the Tensor's attributes of the form */
} form_t;

static void form_clear(form_t *f) {
    Py_CLEAR(f->nbytes_obj);
    Py_CLEAR(f->pool);
    Py_CLEAR(f->tensor_type_);
    Py_CLEAR(f->token);
    for (int i = 0; i < TA_FORM_FIELDS; ++i) Py_CLEAR(f->attrs[i]);
}

static int int64s(PyObject *seq, int64_t *out, int *n) {
    PyObject *t = PySequence_Tuple(seq);
    if (!t) return -1;
    Py_ssize_t len = PyTuple_Size(t);
    if (len > MAX_DIMS) {
        Py_DECREF(t);
        PyErr_SetString(PyExc_ValueError, "plan: an output of more than MAX_DIMS dimensions");
        return -1;
    }
    for (Py_ssize_t i = 0; i < len; ++i) out[i] = PyLong_AsLongLong(PyTuple_GetItem(t, i));
    Py_DECREF(t);
    *n = (int)len;
    return PyErr_Occurred() ? -1 : 0;
}

/* A form from tensor.output_form's tuple: 0, or -1 with an error (form_clear releases what
 * it holds either way). */
static int form_from(PyObject *spec, form_t *f) {
    PyObject *shape, *strides, *pool, *tensor_type_, *tensor_attrs, *token;
    int zero, nstrides;
    long long offset, storage;
    unsigned long long nbytes;
    if (!PyArg_ParseTuple(spec, "piOOLiLKOOO!O", &zero, &f->acl, &shape, &strides, &offset, &f->format, &storage,
                          &nbytes, &pool, &tensor_type_, &PyDict_Type, &tensor_attrs, &token))
        return -1;
    f->zero = zero;
    f->offset = offset;
    f->storage = storage;
    f->nbytes = nbytes;
    if (!(f->nbytes_obj = PyLong_FromUnsignedLongLong(nbytes))) return -1;
    PyObject *values[] = {pool, tensor_type_, token};
    PyObject **slots[] = {&f->pool, &f->tensor_type_, &f->token};
    for (size_t i = 0; i < sizeof slots / sizeof slots[0]; ++i) {
        Py_INCREF(values[i]);
        *slots[i] = values[i];
    }
    for (int i = 0; i < TA_FORM_FIELDS; ++i) {
        PyObject *value = PyDict_GetItemWithError(tensor_attrs, *tensor_fields[i]); /* (borrowed) */
        if (!value) {
            if (!PyErr_Occurred())
                PyErr_Format(PyExc_ValueError, "plan: an output form without the Tensor's %R", *tensor_fields[i]);
            return -1;
        }
        Py_INCREF(value);
        f->attrs[i] = value;
    }
    if (!PyType_Check(f->tensor_type_)) {
        PyErr_SetString(PyExc_TypeError, "plan: an output form without its type");
        return -1;
    }
    if (int64s(shape, f->dims, &f->ndim) || int64s(strides, f->strides, &nstrides)) return -1;
    if (nstrides != f->ndim) {
        PyErr_SetString(PyExc_ValueError, "plan: an output form with one stride per dimension");
        return -1;
    }
    return 0;
}

/* A new output Tensor of form f with the call's own attributes (finalizer, handle_address,
 * fast_key); NULL with an error. */
static PyObject *new_tensor(const form_t *f, PyObject *finalizer, PyObject *handle_address, PyObject *fast_key) {
    PyObject *values[TA_FIELDS];
    for (int i = 0; i < TA_FORM_FIELDS; ++i) values[i] = f->attrs[i];
    values[TA_FINALIZER] = finalizer;
    values[TA_HANDLE_ADDRESS] = handle_address;
    values[TA_FAST_KEY] = fast_key;
    newfunc tp_new = (newfunc)PyType_GetSlot((PyTypeObject *)f->tensor_type_, Py_tp_new);
    PyObject *obj = tp_new ? tp_new((PyTypeObject *)f->tensor_type_, empty_tuple, NULL) : NULL;
    if (!obj) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_SystemError, "aclnn_py fast entry: a type without tp_new");
        return NULL;
    }
    int direct = f->tensor_type_ == tensor_slots_type;
    for (int i = 0; i < TA_FIELDS; ++i) {
        if (direct) {
            Py_INCREF(values[i]);
            SET_REF(*(PyObject **)((char *)obj + tensor_at[i]), values[i]);
        } else if (PyObject_SetAttr(obj, *tensor_fields[i], values[i])) {
            Py_DECREF(obj);
            return NULL;
        }
    }
    return obj;
}

/* Raise the Python path's error of the helper's result `code` for op (fast_failed); NULL. */
static PyObject *raise_result(PyObject *lib, PyObject *op, int64_t code) {
    PyObject *c = PyLong_FromLongLong(code);
    if (c) {
        PyObject *r = PyObject_CallFunctionObjArgs(fast_failed, lib, op, c, NULL);
        Py_XDECREF(r);
        Py_DECREF(c);
    }
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_SystemError, "aclnn_py fast entry: a failure raised nothing");
    return NULL;
}

/* DevicePool.take(nbytes) (a new reference: an address or None; NULL with an error), done here
 * under the pool's lock when it is free (pool.py's docstring), else by the method. */
static PyObject *pool_take(PyObject *pool, PyObject *n, uint64_t nbytes) {
    PyObject *blocks = PyObject_GetAttr(pool, s_blocks);
    PyObject *list = blocks && PyDict_Check(blocks) ? PyDict_GetItemWithError(blocks, n) : NULL;
    Py_XINCREF(list);
    Py_XDECREF(blocks);
    if (!list) {
        if (PyErr_Occurred()) return NULL;
        Py_RETURN_NONE;  /* (no block of that size: take's own first answer) */
    }
    PyObject *lock = PyList_Check(list) ? PyObject_GetAttr(pool, s_lock) : NULL;
    PyObject *got = lock ? PyObject_CallMethodObjArgs(lock, s_acquire, Py_False, NULL) : NULL;
    int held = got ? PyObject_IsTrue(got) : -1;
    Py_XDECREF(got);
    PyObject *result = NULL;
    if (held <= 0) {
        PyErr_Clear();
        result = PyObject_CallMethodObjArgs(pool, s_take, n, NULL);
    } else {
        Py_ssize_t size = PyList_Size(list);
        if (size <= 0) {
            result = Py_None;
            Py_INCREF(result);
        } else {
            PyObject *total = PyObject_GetAttr(pool, s_nbytes);
            long long was = total ? PyLong_AsLongLong(total) : -1;
            Py_XDECREF(total);
            PyObject *less = was >= 0 && !PyErr_Occurred() ? PyLong_FromLongLong(was - (long long)nbytes) : NULL;
            if (less && !PyObject_SetAttr(pool, s_nbytes, less)) {
                result = PyList_GetItem(list, size - 1);
                Py_INCREF(result);
                if (PyList_SetSlice(list, size - 1, size, NULL)) Py_CLEAR(result);
            }
            Py_XDECREF(less);
        }
        PyObject *r = PyObject_CallMethodObjArgs(lock, s_release, NULL);
        if (!r) Py_CLEAR(result);
        Py_XDECREF(r);
    }
    Py_XDECREF(lock);
    Py_DECREF(list);
    return result;
}

/* A block of f->nbytes (> 0): the pool's, else aclrtMalloc (once more after emptying the
 * pool); NULL with an error. */
static void *take_block(const form_t *f, PyObject *lib, PyObject *op, const api_t *api) {
    PyObject *cached = pool_take(f->pool, f->nbytes_obj, f->nbytes);
    if (!cached) return NULL;
    void *block = NULL;
    if (cached != Py_None) {
        block = PyLong_AsVoidPtr(cached);
        Py_DECREF(cached);
        return block ? block : (PyErr_Occurred() ? NULL : (PyErr_SetString(PyExc_SystemError, "a NULL block"), NULL));
    }
    Py_DECREF(cached);
    status_t s = api->malloc_(&block, (size_t)f->nbytes, ACL_MEM_MALLOC_HUGE_FIRST);
    if (s) {
        PyObject *r = PyObject_CallMethodObjArgs(f->pool, s_trim, NULL);
        if (!r) return NULL;
        Py_DECREF(r);
        s = api->malloc_(&block, (size_t)f->nbytes, ACL_MEM_MALLOC_HUGE_FIRST);
    }
    if (s) return raise_result(lib, op, RESULT(s, AT_MALLOC));
    return block;
}

/* A block of f->nbytes from the thread's batch (outputs dropped while work was queued, their
 * blocks waiting for the stream), for a new output the next kernel on this thread's own stream
 * writes: the stream runs that write after every use of the block queued before it, as a
 * caching allocator reuses a block on the stream it was freed on. Not for an output that
 * starts as zeros (aclrtMemset is not ordered on the stream), nor on a caller's stream or
 * during a capture. NULL when there is none (no error). */
static void *reuse_block(PyObject *state, int own, const form_t *f, void **handle, PyObject **key) {
    *handle = NULL;
    *key = NULL;
    if (f->zero) return NULL;
    PyObject *batch = own > 0 ? state_get(state, ST_BATCH) : NULL;
    void *block = NULL;
    if (batch && Py_TYPE(batch) == (PyTypeObject *)release_type) {
        release_t *g = (release_t *)batch;
        for (int i = g->ran || g->pool != f->pool ? -1 : g->count - 1; i >= 0; --i)
            if (g->sizes[i] == f->nbytes) {
                block = g->addresses[i];
                void *h = g->handles[i];
                PyObject *k = g->keys[i];
                g->count--;
                g->addresses[i] = g->addresses[g->count];
                g->sizes[i] = g->sizes[g->count];
                g->handles[i] = g->handles[g->count];
                g->keys[i] = g->keys[g->count];
                g->handles[g->count] = NULL;
                g->keys[g->count] = NULL;
                if (h && PyTuple_Check(k) && PyTuple_Size(k) == 3 && PyTuple_GetItem(k, 0) == f->token) {
                    *handle = h; /* (the same form: the aclTensor of this block as it would be made) */
                    *key = k;
                } else {
                    if (h) g->destroy(h);
                    Py_XDECREF(k);
                }
                break;
            }
    }
    if (block) {
        /* no longer waiting to be freed: out of the bound's count (Library.defer's) */
        PyObject *held = state_get(state, ST_NBYTES);
        long long was = held ? PyLong_AsLongLong(held) : -1;
        Py_XDECREF(held);
        PyObject *less = was >= (long long)f->nbytes ? PyLong_FromLongLong(was - (long long)f->nbytes) : NULL;
        if (less) state_set(state, ST_NBYTES, less);
        Py_XDECREF(less);
    }
    PyErr_Clear();
    Py_XDECREF(batch);
    return block;
}

/* The thread's batch when a call on lib may take its workspace from the blocks of earlier
 * calls waiting in it (on the thread's own stream, no capture: reuse_block's rule), with
 * *reuse pointing at them; else NULL (no error). A new reference. */
static release_t *workspace_source(PyObject *state, int own, PyObject *lib, const api_t *api, reuse_t *reuse) {
    reuse->count = 0;
    PyObject *batch = state && own > 0 ? state_get(state, ST_BATCH) : NULL;
    PyErr_Clear();
    release_t *b = batch && Py_TYPE(batch) == (PyTypeObject *)release_type ? (release_t *)batch : NULL;
    if (!open_batch(b, lib, api) || !b->nfree) {  /* (blocks in it: its fn is api's free) */
        Py_XDECREF(batch);
        return NULL;
    }
    reuse->count = b->nfree;
    reuse->blocks = b->frees;
    reuse->sizes = b->free_sizes;
    return b;
}

/* The call took block reuse->taken of batch b (workspace_source) for its workspace: it is no
 * longer b's to free, nor in the bound's count (the call's own blocks count anew). */
static void workspace_taken(PyObject *state, release_t *b, const reuse_t *reuse) {
    int i = reuse->taken;
    if (i < 0 || i >= b->nfree) return;
    uint64_t size = b->free_sizes[i];
    b->nfree--;
    b->frees[i] = b->frees[b->nfree];
    b->free_sizes[i] = b->free_sizes[b->nfree];
    PyObject *held = state_get(state, ST_NBYTES);
    long long was = held ? PyLong_AsLongLong(held) : -1;
    Py_XDECREF(held);
    PyObject *less = was >= (long long)size ? PyLong_FromLongLong(was - (long long)size) : NULL;
    if (less) state_set(state, ST_NBYTES, less);
    Py_XDECREF(less);
    PyErr_Clear();
}

/* A new output Tensor of form f on lib (this thread's state), its aclTensor in *handle; NULL
 * with an error (everything made released). */
static PyObject *make_output(const form_t *f, PyObject *lib, PyObject *state, int own, PyObject *op, const api_t *api,
                             void **handle) {
    PyObject *owner = state_get(state, ST_OWNER);
    if (!owner) return NULL;
    PyObject *result = NULL, *handle_address = NULL, *fast_key = NULL;
    release_t *owned = release_new(REL_OWNED, lib, f->pool, owner);
    Py_DECREF(owner);
    if (!owned) return NULL;
    owned->fn = (status_t (*)(void *))api->destroy_tensor;
    void *block = NULL, *h = NULL;
    if (f->nbytes) {
        block = reuse_block(state, own, f, &h, &fast_key); /* (and its aclTensor, when kept) */
        if (h) {
            owned->handle = h;
            owned->count = HAS_HANDLE; /* the aclTensor is the release's from here */
        }
        if (!block) block = take_block(f, lib, op, api);
        if (!block) goto out;
        owned->addresses[0] = block;
        owned->nbytes = f->nbytes;
        owned->count |= HAS_BLOCK;  /* the block is the release's from here */
        if (f->zero) {
            status_t s = api->memset_(block, (size_t)f->nbytes, 0, (size_t)f->nbytes);
            if (s) { raise_result(lib, op, RESULT(s, AT_MEMSET)); goto out; }
        }
    }
    if (h) {
        handle_address = PyTuple_GetItem(fast_key, 1);
        Py_INCREF(handle_address);
    } else {
        h = api->create_tensor(f->dims, (uint64_t)f->ndim, f->acl, f->strides, f->offset, f->format, &f->storage, 1,
                               block);
        if (!h) { raise_result(lib, op, RESULT(ACLNN_ERR_PARAM_INVALID, AT_CREATE_TENSOR)); goto out; }
        owned->handle = h;
        owned->count |= HAS_HANDLE;
        handle_address = PyLong_FromVoidPtr(h);
        PyObject *memory = handle_address ? PyLong_FromVoidPtr(block) : NULL;
        fast_key = memory ? PyTuple_Pack(3, f->token, handle_address, memory) : NULL;
        Py_XDECREF(memory);
        if (!fast_key) goto out;
    }
    Py_INCREF(fast_key);
    owned->key = fast_key; /* (its aclTensor may go with its block: block_returned) */
    result = new_tensor(f, (PyObject *)owned, handle_address, fast_key);
    if (result) *handle = h;
out:
    /* (on a failure, the release dropped here frees what it holds) */
    Py_XDECREF(fast_key);
    Py_XDECREF(handle_address);
    Py_DECREF((PyObject *)owned);
    return result;
}

/* -- ACLNN_PY_BLOCKING, read as queued.blocking() reads it, without a call while it is unchanged */

static PyObject *os_module, *blocking_key, *last_raw, *s_data, *s_environ;
static PyObject *last_environ, *last_data;  /* os.environ as last read, and its _data */
static int have_last, last_blocking;

/* queued.blocking(): 1, 0, or -1 with an error. */
static int is_blocking(void) {
    /* (as Setting.raw: anew; from the module's namespace, as pending_bounds) */
    PyObject *names = os_module && PyModule_Check(os_module) ? PyModule_GetDict(os_module) : NULL;
    PyObject *environ = names ? PyDict_GetItemWithError(names, s_environ) : NULL;
    PyObject *data;
    if (environ && environ == last_environ) {  /* (os.environ's mapping, made once with it) */
        data = last_data;
        Py_INCREF(data);
    } else {
        Py_XINCREF(environ);
        data = environ ? PyObject_GetAttr(environ, s_data) : NULL;
        if (data && PyDict_Check(data)) {
            SET_REF(last_environ, environ);  /* (the reference taken above) */
            Py_INCREF(data);
            SET_REF(last_data, data);
        } else {
            Py_XDECREF(environ);
        }
    }
    PyObject *raw = NULL;
    int known = 0;
    if (data && PyDict_Check(data)) {
        raw = PyDict_GetItemWithError(data, blocking_key);
        if (!raw && PyErr_Occurred()) { Py_DECREF(data); return -1; }
        known = 1;
        if (have_last && raw == last_raw) {
            Py_DECREF(data);
            return last_blocking;
        }
        Py_XINCREF(raw);
    }
    Py_XDECREF(data);
    PyErr_Clear(); /* (no _data: os.environ replaced; asked every time) */
    PyObject *b = PyObject_CallNoArgs(blocking);
    int value = b ? PyObject_IsTrue(b) : -1;
    Py_XDECREF(b);
    if (value < 0 || !known) {
        Py_XDECREF(raw);
        if (value >= 0) have_last = 0;
        return value;
    }
    SET_REF(last_raw, raw); /* (kept alive: its identity cannot be another value's) */
    have_last = 1;
    last_blocking = value;
    return value;
}
