/*
 * Executors and the phase-2 launch shared by every aclnnXxx, plus aclnnInit/aclnnFinalize
 * and the tensor memory check.
 *
 * An executor holds copies of the descriptors its operator needs (so the caller may destroy
 * its own descriptors right after phase 1), a parameter blob, the kernel and the workspace
 * size.  Phase 2 queues a task on the stream; the task runs the kernel when the stream is
 * synchronised and then frees a normal executor.  A repeatable executor may be launched any
 * number of times and lives until aclDestroyAclOpExecutor (deferred while runs are queued).
 */
#include <stdlib.h>
#include <string.h>

#include "../sim_internal.h"
#include "executor_internal.h"
#include "float_results.h"
#include "registry.h"

/* One argument of the operator's prototype: a tensor (one slot) or a tensor list (one slot
 * per element, in order). */
struct argument {
    int first, count;
    int is_list;
};

struct slots {
    aclTensor *items;
    unsigned char *present;
    int count, capacity;
    struct argument *args;
    int nargs, args_capacity;
};

struct aclOpExecutor {
    char op_name[64];
    aclsim_kernel_fn kernel;
    uint64_t workspace_size;
    void *params;
    size_t params_size;
    struct slots inputs, outputs;
    int repeatable;
    int shape_only_set; /* inputs_read below was given (else every input counts as read) */
    unsigned inputs_read; /* bit i: the kernel reads input i's data (aclsim_executor_set_inputs_read) */
    unsigned outputs_written; /* bit k: the kernel writes output k whole (aclsim_executor_set_outputs_written) */
    int launched;
    int destroyed; /* aclDestroyAclOpExecutor came while runs were queued */
    int pending;   /* queued runs */
    int params_set;          /* aclsim_executor_params was called: params holds params_size bytes */
    size_t params_capacity;  /* the bytes params can hold (kept by a spare) */
    struct aclOpExecutor *next_spare;
};

/* Spare executors. A chain of operator calls queued on a stream frees its executors all at
 * once, when the stream is synchronised (hundreds of them); made and freed with malloc each
 * time, malloc's sorting of its bins then cost more than the calls' own checks. So
 * executor_free keeps up to SPARE_MOST freed executors, with their slot arrays and parameter
 * block, and aclsim_executor_new takes one back, emptied: as malloc would, it may hand out a
 * freed executor's address again (the registry tells a live executor from a stale pointer by
 * address either way). They are freed when the library is unloaded. Under nn_lock. */
#define SPARE_MOST 256
static struct aclOpExecutor *spares;
static int spare_count;

/* ---- tensors ------------------------------------------------------------------------- */

int aclsim_tensor_memory_ok(const aclTensor *t)
{
    if (t == NULL || t->ndim > ACLSIM_MAX_DIMS) {
        return 0;
    }
    int64_t lo = t->offset, hi = t->offset;
    for (uint64_t i = 0; i < t->ndim; i++) {
        if (t->view_dims[i] < 0) {
            return 0;
        }
        if (t->view_dims[i] == 0) {
            return 1; /* no element is ever touched */
        }
    }
    for (uint64_t i = 0; i < t->ndim; i++) {
        int64_t span;
        if (__builtin_mul_overflow(t->view_dims[i] - 1, t->strides[i], &span)) {
            return 0;
        }
        if (__builtin_add_overflow(span < 0 ? lo : hi, span, span < 0 ? &lo : &hi)) {
            return 0;
        }
    }
    int64_t elem = (int64_t)aclDataTypeSize(t->dtype);
    int64_t first, count, bytes;
    if (elem <= 0 || lo < 0 || __builtin_mul_overflow(lo, elem, &first) ||
        __builtin_add_overflow(hi - lo, 1, &count) || __builtin_mul_overflow(count, elem, &bytes)) {
        return 0;
    }
    if (t->data == NULL) {
        return 0;
    }
    return aclsim_device_range_ok((const char *)t->data + first, (uint64_t)bytes);
}

/* ---- executor construction (used by the operators' phase 1) ---------------------------- */

/* A spare executor emptied (everything zero but its arrays and their capacities), or NULL. */
static aclOpExecutor *take_spare(void)
{
    pthread_mutex_lock(&nn_lock);
    aclOpExecutor *ex = spares;
    if (ex != NULL) {
        spares = ex->next_spare;
        spare_count--;
    }
    pthread_mutex_unlock(&nn_lock);
    if (ex == NULL) {
        return NULL;
    }
    struct slots in = ex->inputs, out = ex->outputs;
    void *params = ex->params;
    size_t params_capacity = ex->params_capacity;
    memset(ex, 0, sizeof *ex);
    ex->inputs = (struct slots){.items = in.items, .present = in.present, .capacity = in.capacity,
                                .args = in.args, .args_capacity = in.args_capacity};
    ex->outputs = (struct slots){.items = out.items, .present = out.present, .capacity = out.capacity,
                                 .args = out.args, .args_capacity = out.args_capacity};
    ex->params = params;
    ex->params_capacity = params_capacity;
    return ex;
}

/* The host memory of an executor. */
static void free_memory(aclOpExecutor *ex)
{
    free(ex->inputs.items);
    free(ex->inputs.present);
    free(ex->inputs.args);
    free(ex->outputs.items);
    free(ex->outputs.present);
    free(ex->outputs.args);
    free(ex->params);
    free(ex);
}

__attribute__((destructor)) static void free_spares(void)
{
    pthread_mutex_lock(&nn_lock);
    aclOpExecutor *list = spares;
    spares = NULL;
    spare_count = 0;
    pthread_mutex_unlock(&nn_lock);
    while (list != NULL) {
        aclOpExecutor *next = list->next_spare;
        free_memory(list);
        list = next;
    }
}

aclOpExecutor *aclsim_executor_new(const char *op_name, aclsim_kernel_fn run, uint64_t workspace_size)
{
    aclOpExecutor *ex = take_spare();
    if (ex == NULL) {
        ex = calloc(1, sizeof *ex);
    }
    if (ex == NULL) {
        aclsim_set_error("%s: out of host memory creating the executor", op_name != NULL ? op_name : "aclnn");
        return NULL;
    }
    if (op_name != NULL) {
        strncpy(ex->op_name, op_name, sizeof ex->op_name - 1);
    }
    ex->kernel = run;
    ex->workspace_size = workspace_size;
    pthread_mutex_lock(&nn_lock);
    int rc = nn_add_locked(ex, NN_EXECUTOR);
    pthread_mutex_unlock(&nn_lock);
    if (rc != 0) {
        free_memory(ex);
        aclsim_set_error("%s: out of host memory creating the executor", op_name != NULL ? op_name : "aclnn");
        return NULL;
    }
    aclsim_counter_add(ACLSIM_CNT_EXECUTORS, 1);
    return ex;
}

static int add_slot(struct slots *s, const aclTensor *t, const char *op_name)
{
    if (s->count == s->capacity) {
        int cap = s->capacity != 0 ? s->capacity * 2 : 4;
        aclTensor *items = realloc(s->items, (size_t)cap * sizeof *items);
        if (items == NULL) {
            aclsim_set_error("%s: out of host memory", op_name);
            return -1;
        }
        s->items = items;
        unsigned char *present = realloc(s->present, (size_t)cap);
        if (present == NULL) {
            aclsim_set_error("%s: out of host memory", op_name);
            return -1;
        }
        s->present = present;
        s->capacity = cap;
    }
    if (t != NULL) {
        s->items[s->count] = *t;
    } else {
        memset(&s->items[s->count], 0, sizeof s->items[s->count]);
    }
    s->present[s->count] = t != NULL;
    return s->count++;
}

static int add_argument(struct slots *s, int is_list, const char *op_name)
{
    if (s->nargs == s->args_capacity) {
        int cap = s->args_capacity != 0 ? s->args_capacity * 2 : 4;
        struct argument *args = realloc(s->args, (size_t)cap * sizeof *args);
        if (args == NULL) {
            aclsim_set_error("%s: out of host memory", op_name);
            return -1;
        }
        s->args = args;
        s->args_capacity = cap;
    }
    s->args[s->nargs] = (struct argument){.first = s->count, .count = 0, .is_list = is_list};
    return s->nargs++;
}

static int add_tensor_argument(struct slots *s, const aclTensor *t, const char *op_name)
{
    int arg = add_argument(s, 0, op_name);
    int index = arg < 0 ? -1 : add_slot(s, t, op_name);
    if (index >= 0) {
        s->args[arg].count = 1;
    }
    return index;
}

static int add_list_argument(struct slots *s, const aclTensorList *list, const char *op_name)
{
    int arg = add_argument(s, 1, op_name);
    if (arg < 0) {
        return -1;
    }
    int first = s->count;
    for (uint64_t i = 0; list != NULL && i < list->size; i++) {
        if (add_slot(s, list->tensors[i], op_name) < 0) {
            return -1;
        }
        s->args[arg].count++;
    }
    return first;
}

int aclsim_executor_add_input(aclOpExecutor *ex, const aclTensor *t)
{
    return ex != NULL ? add_tensor_argument(&ex->inputs, t, ex->op_name) : -1;
}

int aclsim_executor_add_output(aclOpExecutor *ex, const aclTensor *t)
{
    return ex != NULL ? add_tensor_argument(&ex->outputs, t, ex->op_name) : -1;
}

int aclsim_executor_add_input_list(aclOpExecutor *ex, const aclTensorList *list)
{
    return ex != NULL ? add_list_argument(&ex->inputs, list, ex->op_name) : -1;
}

int aclsim_executor_add_output_list(aclOpExecutor *ex, const aclTensorList *list)
{
    return ex != NULL ? add_list_argument(&ex->outputs, list, ex->op_name) : -1;
}

static aclTensor *slot(const struct slots *s, int index)
{
    return (index >= 0 && index < s->count && s->present[index]) ? &s->items[index] : NULL;
}

const aclTensor *aclsim_executor_input(const aclOpExecutor *ex, int index)
{
    return ex != NULL ? slot(&ex->inputs, index) : NULL;
}

aclTensor *aclsim_executor_output(const aclOpExecutor *ex, int index)
{
    return ex != NULL ? slot(&ex->outputs, index) : NULL;
}

void *aclsim_executor_params(aclOpExecutor *ex, size_t size)
{
    if (ex == NULL) {
        return NULL;
    }
    if (ex->params_set && size <= ex->params_size) {
        return ex->params;
    }
    if (ex->params_set) {
        aclsim_set_error("%s: parameter block requested with %zu bytes after %zu", ex->op_name, size,
                         ex->params_size);
        return NULL;
    }
    if (ex->params != NULL && size <= ex->params_capacity) {
        memset(ex->params, 0, size); /* (a spare's block) */
    } else {
        free(ex->params);
        ex->params = calloc(1, size > 0 ? size : 1);
        if (ex->params == NULL) {
            ex->params_capacity = 0;
            aclsim_set_error("%s: out of host memory", ex->op_name);
            return NULL;
        }
        ex->params_capacity = size;
    }
    ex->params_size = size;
    ex->params_set = 1;
    return ex->params;
}

void aclsim_executor_set_inputs_read(aclOpExecutor *ex, unsigned inputs_read)
{
    ex->shape_only_set = 1;
    ex->inputs_read = inputs_read;
}

void aclsim_executor_set_outputs_written(aclOpExecutor *ex, unsigned outputs_written)
{
    ex->outputs_written = outputs_written;
}

uint64_t aclsim_executor_workspace_size(const aclOpExecutor *ex)
{
    return ex != NULL ? ex->workspace_size : 0;
}

/* Free an executor that is no longer registered: kept as a spare while there is room. */
static void executor_free(aclOpExecutor *ex)
{
    aclsim_counter_add(ACLSIM_CNT_EXECUTORS, -1);
    pthread_mutex_lock(&nn_lock);
    int kept = spare_count < SPARE_MOST;
    if (kept) {
        ex->next_spare = spares;
        spares = ex;
        spare_count++;
    }
    pthread_mutex_unlock(&nn_lock);
    if (!kept) {
        free_memory(ex);
    }
}

void aclsim_executor_discard(aclOpExecutor *ex)
{
    if (ex == NULL) {
        return;
    }
    pthread_mutex_lock(&nn_lock);
    int live = nn_kind_locked(ex) == NN_EXECUTOR;
    if (live) {
        nn_remove_locked(ex);
    }
    pthread_mutex_unlock(&nn_lock);
    if (live) {
        executor_free(ex);
    }
}

/* ---- public executor API ------------------------------------------------------------- */

/* What every executor entry point returns for a pointer that is not a live executor (already
 * run, destroyed, or never created).  CANN recognises its executors by a magic number and
 * returns ACLNN_ERR_INNER when that does not match (aclDestroyAclOpExecutor,
 * aclSetAclOpExecutorRepeatable); its phase 2 does not look and runs whatever it is given,
 * which is undefined behaviour the simulator reports with the same status.  NULL keeps the
 * status CANN gives it at each entry point (561103, or 161001 in phase 2). */
#define ACLSIM_ERR_NOT_AN_EXECUTOR ACLNN_ERR_INNER

/* With nn_lock held: the executor if it is live and not destroyed. */
static aclOpExecutor *live_executor_locked(aclOpExecutor *ex)
{
    return (ex != NULL && nn_kind_locked(ex) == NN_EXECUTOR && !ex->destroyed) ? ex : NULL;
}

aclnnStatus aclSetAclOpExecutorRepeatable(aclOpExecutor *executor)
{
    if (executor == NULL) {
        aclsim_set_error("aclSetAclOpExecutorRepeatable: executor must not be NULL");
        return ACLNN_ERR_INNER_NULLPTR;
    }
    pthread_mutex_lock(&nn_lock);
    aclOpExecutor *ex = live_executor_locked(executor);
    int late = ex != NULL && ex->launched && !ex->repeatable;
    if (ex != NULL && !late) {
        ex->repeatable = 1;
    }
    pthread_mutex_unlock(&nn_lock);
    if (ex == NULL) {
        aclsim_set_error("aclSetAclOpExecutorRepeatable: %p is not a live executor (already run, destroyed, or "
                         "never returned by phase 1)",
                         (void *)executor);
        return ACLSIM_ERR_NOT_AN_EXECUTOR;
    }
    if (late) {
        aclsim_set_error("aclSetAclOpExecutorRepeatable: executor %p of %s was already launched; call it right "
                         "after phase 1",
                         (void *)executor, ex->op_name);
        return ACLNN_ERR_PARAM_INVALID;
    }
    return ACLNN_SUCCESS;
}

aclnnStatus aclDestroyAclOpExecutor(aclOpExecutor *executor)
{
    if (executor == NULL) {
        aclsim_set_error("aclDestroyAclOpExecutor: executor must not be NULL");
        return ACLNN_ERR_INNER_NULLPTR;
    }
    pthread_mutex_lock(&nn_lock);
    aclOpExecutor *ex = live_executor_locked(executor);
    int free_now = 0;
    if (ex != NULL) {
        if (ex->pending > 0) {
            ex->destroyed = 1; /* the last queued run frees it */
        } else {
            nn_remove_locked(ex);
            free_now = 1;
        }
    }
    pthread_mutex_unlock(&nn_lock);
    if (ex == NULL) {
        aclsim_set_error("aclDestroyAclOpExecutor: %p is not a live executor (already run, destroyed, or never "
                         "returned by phase 1)",
                         (void *)executor);
        return ACLSIM_ERR_NOT_AN_EXECUTOR;
    }
    if (free_now) {
        executor_free(ex);
    }
    return ACLNN_SUCCESS;
}

static aclnnStatus set_tensor_addr(aclOpExecutor *executor, size_t index, aclTensor *tensor, void *addr, int output,
                                   const char *api)
{
    if (executor == NULL) {
        aclsim_set_error("%s: executor must not be NULL", api);
        return ACLNN_ERR_INNER_NULLPTR;
    }
    pthread_mutex_lock(&nn_lock);
    aclOpExecutor *ex = live_executor_locked(executor);
    aclTensor *t = NULL;
    if (ex != NULL && index <= (size_t)INT32_MAX) {
        t = slot(output ? &ex->outputs : &ex->inputs, (int)index);
        if (t != NULL) {
            t->data = addr;
        }
    }
    pthread_mutex_unlock(&nn_lock);
    if (ex == NULL) {
        aclsim_set_error("%s: %p is not a live executor (already run, destroyed, or never returned by phase 1)", api,
                         (void *)executor);
        return ACLSIM_ERR_NOT_AN_EXECUTOR;
    }
    if (t == NULL) {
        aclsim_set_error("%s: %s has no %s tensor %zu", api, ex->op_name, output ? "output" : "input", index);
        return ACLNN_ERR_PARAM_INVALID;
    }
    if (tensor != NULL && aclsim_is_live_tensor(tensor)) {
        tensor->data = addr;
    }
    return ACLNN_SUCCESS;
}

aclnnStatus aclSetInputTensorAddr(aclOpExecutor *executor, const size_t index, aclTensor *tensor, void *addr)
{
    return set_tensor_addr(executor, index, tensor, addr, 0, "aclSetInputTensorAddr");
}

aclnnStatus aclSetOutputTensorAddr(aclOpExecutor *executor, const size_t index, aclTensor *tensor, void *addr)
{
    return set_tensor_addr(executor, index, tensor, addr, 1, "aclSetOutputTensorAddr");
}

/* The tensor slot `index` counts across the sides `side` covers (inputs before outputs). */
static aclTensor *flat_slot(aclOpExecutor *ex, enum nn_side side, size_t index, int *count)
{
    const struct slots *sides[2] = {side != NN_OUTPUTS ? &ex->inputs : NULL, side != NN_INPUTS ? &ex->outputs : NULL};
    *count = 0;
    for (int i = 0; i < 2; i++) {
        if (sides[i] == NULL) {
            continue;
        }
        if (index < (size_t)*count + (size_t)sides[i]->count) {
            int local = (int)(index - (size_t)*count);
            *count += sides[i]->count;
            return sides[i]->present[local] ? &sides[i]->items[local] : NULL;
        }
        *count += sides[i]->count;
    }
    return NULL;
}

aclnnStatus nn_executor_set_addr(aclOpExecutor *executor, enum nn_side side, size_t index, void *addr,
                                 const char *api)
{
    pthread_mutex_lock(&nn_lock);
    aclOpExecutor *ex = live_executor_locked(executor);
    int count = 0;
    aclTensor *t = ex != NULL ? flat_slot(ex, side, index, &count) : NULL;
    if (t != NULL) {
        t->data = addr;
    }
    pthread_mutex_unlock(&nn_lock);
    if (ex == NULL) {
        aclsim_set_error("%s: %p is not a live executor", api, (void *)executor);
        return ACLNN_ERR_INNER_NULLPTR;
    }
    if (t == NULL) {
        if (index >= (size_t)count) {
            aclsim_set_error("%s: index %zu is out of range: %s has %d tensor%s", api, index, ex->op_name, count,
                             count == 1 ? "" : "s");
        } else {
            aclsim_set_error("%s: tensor %zu of %s was NULL in phase 1; its address cannot be set", api, index,
                             ex->op_name);
        }
        return ACLNN_ERR_PARAM_INVALID;
    }
    return ACLNN_SUCCESS;
}

aclnnStatus nn_executor_set_list_addr(aclOpExecutor *executor, enum nn_side side, size_t ir_index, size_t relative,
                                      void *addr, const char *api)
{
    enum { SET, NO_ARGUMENT, NOT_A_LIST, NO_ELEMENT, NULL_ELEMENT } outcome = SET;
    pthread_mutex_lock(&nn_lock);
    aclOpExecutor *ex = live_executor_locked(executor);
    int nargs = 0, size = 0;
    if (ex != NULL) {
        struct slots *sides[2] = {side != NN_OUTPUTS ? &ex->inputs : NULL, side != NN_INPUTS ? &ex->outputs : NULL};
        struct slots *owner = NULL;
        size_t local = ir_index;
        for (int i = 0; i < 2; i++) {
            if (sides[i] == NULL) {
                continue;
            }
            nargs += sides[i]->nargs;
            if (owner == NULL && local < (size_t)sides[i]->nargs) {
                owner = sides[i];
            } else if (owner == NULL) {
                local -= (size_t)sides[i]->nargs;
            }
        }
        if (owner == NULL) {
            outcome = NO_ARGUMENT;
        } else if (!owner->args[local].is_list) {
            outcome = NOT_A_LIST;
        } else if (relative >= (size_t)(size = owner->args[local].count)) {
            outcome = NO_ELEMENT;
        } else {
            int at = owner->args[local].first + (int)relative;
            if (owner->present[at]) {
                owner->items[at].data = addr;
            } else {
                outcome = NULL_ELEMENT;
            }
        }
    }
    pthread_mutex_unlock(&nn_lock);
    if (ex == NULL) {
        aclsim_set_error("%s: %p is not a live executor", api, (void *)executor);
        return ACLNN_ERR_INNER_NULLPTR;
    }
    switch (outcome) {
    case SET:
        return ACLNN_SUCCESS;
    case NO_ARGUMENT:
        aclsim_set_error("%s: irIndex %zu is out of range: %s has %d argument%s there", api, ir_index, ex->op_name,
                         nargs, nargs == 1 ? "" : "s");
        break;
    case NOT_A_LIST:
        aclsim_set_error("%s: argument %zu of %s is a tensor, not a tensor list", api, ir_index, ex->op_name);
        break;
    case NO_ELEMENT:
        aclsim_set_error("%s: relativeIndex %zu is out of range: argument %zu of %s is a list of %d tensor%s", api,
                         relative, ir_index, ex->op_name, size, size == 1 ? "" : "s");
        break;
    case NULL_ELEMENT:
        aclsim_set_error("%s: tensor %zu of argument %zu of %s was NULL in phase 1; its address cannot be set", api,
                         relative, ir_index, ex->op_name);
        break;
    }
    return ACLNN_ERR_PARAM_INVALID;
}

aclnnStatus aclnnInit(const char *configPath)
{
    (void)configPath;
    return ACLNN_SUCCESS;
}

aclnnStatus aclnnFinalize(void)
{
    return ACLNN_SUCCESS;
}

/* ---- phase 2 ------------------------------------------------------------------------- */

/* One queued run: the executor plus the addresses its tensors had at launch time (a
 * repeatable executor's addresses may be changed before the run happens). */
struct run {
    aclOpExecutor *ex;
    void *workspace;
    char api[64];
    int n_in, n_out;
    void *addrs[]; /* n_in input addresses, then n_out output addresses */
};

static int check_memory(const aclOpExecutor *ex, void *workspace, const char *api, int at_run)
{
    const char *when = at_run ? "when the kernel ran, " : "";
    if (ex->workspace_size > 0 && !aclsim_device_range_ok(workspace, ex->workspace_size)) {
        aclsim_set_error("%s: %sthe workspace %p does not hold the %llu bytes phase 1 asked for in one device "
                         "allocation",
                         api, when, workspace, (unsigned long long)ex->workspace_size);
        return 0;
    }
    for (int i = 0; i < ex->inputs.count + ex->outputs.count; i++) {
        int is_out = i >= ex->inputs.count;
        int k = is_out ? i - ex->inputs.count : i;
        const aclTensor *t = slot(is_out ? &ex->outputs : &ex->inputs, k);
        if (t != NULL && !is_out && t->data == NULL && ex->shape_only_set && k < 32 &&
            !((ex->inputs_read >> k) & 1u)) {
            continue; /* an input the kernel reads the shape of only: it needs no memory */
        }
        if (t != NULL && !aclsim_tensor_memory_ok(t)) {
            aclsim_set_error("%s: %sthe data of %s tensor %d (address %p) is not inside one device allocation "
                             "from aclrtMalloc",
                             api, when, is_out ? "output" : "input", k, t->data);
            return 0;
        }
    }
    return 1;
}

/* 1 if the kernel reads input i's data (not its shape only). */
static int input_read(const aclOpExecutor *ex, int i)
{
    return !ex->shape_only_set || i >= 32 || ((ex->inputs_read >> i) & 1u);
}

/* Before the kernel runs: the 0xFF fill of the block of output k (at addr), or only of the
 * padding after it where the kernel writes the output whole and its view is contiguous (a dim
 * of 1 walked by no stride): the bytes of its elements, from the first. */
static void prepare_output(const aclOpExecutor *ex, int k, void *addr)
{
    const aclTensor *t = slot(&ex->outputs, k);
    int64_t numel = 1, expect = 1;
    int whole = t != NULL && k < 32 && ((ex->outputs_written >> k) & 1u);
    for (uint64_t i = t != NULL ? t->ndim : 0; whole && i-- > 0;) {
        if (t->view_dims[i] != 1 && t->strides[i] != expect) {
            whole = 0;
        }
        expect *= t->view_dims[i];
        numel = expect;
    }
    if (!whole || numel == 0) {
        aclsim_device_prepare(addr);
        return;
    }
    uint64_t elem = aclDataTypeSize(t->dtype);
    aclsim_device_prepare_write((char *)addr + t->offset * (int64_t)elem, (uint64_t)numel * elem);
}

/* 1 if input i shares bytes with an output (the kernel may overwrite it). */
static int aliased_input(const struct run *r, int i)
{
    for (int k = 0; k < r->n_out; k++) {
        if (nn_overlaps(slot(&r->ex->inputs, i), r->addrs[i], slot(&r->ex->outputs, k), r->addrs[r->n_in + k])) {
            return 1;
        }
    }
    return 0;
}

/* Bit k: the running kernel checked its output k itself (aclsim_kernel_outputs_finite); this
 * thread's, cleared before each kernel. */
static _Thread_local uint64_t finite_outputs;

void aclsim_kernel_outputs_finite(int index)
{
    if (index >= 0 && index < 64) {
        finite_outputs |= (uint64_t)1 << index;
    }
}

/* The overflow hook: once per output of a kernel that ran (see float_results.c), but an output
 * the kernel found finite itself.  The inputs are read only when an output holds an Inf or
 * NaN, to tell an overflow from one passed on. */
static void float_results(const struct run *r, aclrtFloatOverflowMode mode, int nonfinite_input)
{
    const aclOpExecutor *ex = r->ex;
    int overflow = 0;
    for (int k = 0; k < r->n_out; k++) {
        if (k < 64 && ((finite_outputs >> k) & 1u)) {
            continue;
        }
        overflow |= nn_nonfinite(slot(&ex->outputs, k), r->addrs[r->n_in + k], mode == ACL_RT_OVERFLOW_MODE_SATURATION);
    }
    for (int i = 0; overflow && !nonfinite_input && i < r->n_in; i++) {
        /* An aliased input was read before the kernel ran (nonfinite_input says what it held). */
        nonfinite_input = input_read(ex, i) && !aliased_input(r, i) && nn_nonfinite(slot(&ex->inputs, i), r->addrs[i], 0);
    }
    if (overflow && !nonfinite_input) {
        aclsim_overflow_record();
    }
}

static aclError run_kernel(void *ctx)
{
    struct run *r = ctx;
    aclOpExecutor *ex = r->ex;
    pthread_mutex_lock(&nn_lock);
    for (int i = 0; i < r->n_in; i++) {
        ex->inputs.items[i].data = r->addrs[i];
    }
    for (int i = 0; i < r->n_out; i++) {
        ex->outputs.items[i].data = r->addrs[r->n_in + i];
    }
    pthread_mutex_unlock(&nn_lock);
    if (!check_memory(ex, r->workspace, r->api, 1)) {
        return ACL_ERROR_RT_AICORE_EXCEPTION;
    }
    if (ex->kernel == NULL) {
        return ACL_SUCCESS;
    }
    /* The 0xFF fill of the blocks the kernel may read or write in part, if still to be done
     * (an output's after the inputs': a block both are in is filled whole for the input). */
    for (int i = 0; i < r->n_in; i++) {
        aclsim_device_prepare(r->addrs[i]);
    }
    for (int k = 0; k < r->n_out; k++) {
        prepare_output(ex, k, r->addrs[r->n_in + k]);
    }
    aclsim_device_prepare(r->workspace);
    aclrtFloatOverflowMode mode = aclsim_overflow_mode();
    /* An input the kernel may overwrite (it shares bytes with an output) is read first. */
    int nonfinite_input = 0;
    for (int i = 0; mode != ACL_RT_OVERFLOW_MODE_UNDEF && i < r->n_in && !nonfinite_input; i++) {
        nonfinite_input = input_read(ex, i) && aliased_input(r, i) && nn_nonfinite(slot(&ex->inputs, i), r->addrs[i], 0);
    }
    finite_outputs = 0;
    aclnnStatus st = ex->kernel(ex, r->workspace);
    if (st != ACLNN_SUCCESS) {
        return ACL_ERROR_RT_AICORE_EXCEPTION;
    }
    if (mode != ACL_RT_OVERFLOW_MODE_UNDEF) {
        float_results(r, mode, nonfinite_input);
    }
    return ACL_SUCCESS;
}

static void release_run(void *ctx)
{
    struct run *r = ctx;
    aclOpExecutor *ex = r->ex;
    pthread_mutex_lock(&nn_lock);
    int free_now = --ex->pending == 0 && (!ex->repeatable || ex->destroyed);
    if (free_now) {
        nn_remove_locked(ex);
    }
    pthread_mutex_unlock(&nn_lock);
    if (free_now) {
        executor_free(ex);
    }
    free(r);
}

aclnnStatus aclsim_launch(const char *api, void *workspace, uint64_t workspace_size, aclOpExecutor *executor,
                          aclrtStream stream)
{
    if (api == NULL) {
        api = "aclnn";
    }
    if (executor == NULL) {
        aclsim_set_error("%s: executor must not be NULL (pass the executor phase 1 returned)", api);
        return ACLNN_ERR_PARAM_NULLPTR;
    }
    pthread_mutex_lock(&nn_lock);
    aclOpExecutor *ex = live_executor_locked(executor);
    int again = ex != NULL && ex->launched && !ex->repeatable;
    pthread_mutex_unlock(&nn_lock);
    if (ex == NULL) {
        aclsim_set_error("%s: executor %p is not a live executor: it already ran (an executor runs once unless "
                         "aclSetAclOpExecutorRepeatable was called), was destroyed, or was never returned by "
                         "phase 1 (undefined behaviour on CANN)",
                         api, (void *)executor);
        return ACLSIM_ERR_NOT_AN_EXECUTOR;
    }
    if (again) {
        aclsim_set_error("%s: executor %p was already launched; phase 2 may be called once per phase 1 unless "
                         "aclSetAclOpExecutorRepeatable was called",
                         api, (void *)executor);
        return ACLSIM_ERR_NOT_AN_EXECUTOR;
    }

    aclnnStatus st = ACLNN_SUCCESS;
    if (workspace == NULL && workspace_size > 0) {
        /* CANN's own check in phase 2, with its status. */
        aclsim_set_error("%s: workspace is NULL but workspaceSize is %llu", api, (unsigned long long)workspace_size);
        st = ACLNN_ERR_PARAM_NULLPTR;
    } else if (workspace_size < ex->workspace_size) {
        aclsim_set_error("%s: workspaceSize %llu is smaller than the %llu bytes phase 1 asked for", api,
                         (unsigned long long)workspace_size, (unsigned long long)ex->workspace_size);
        st = ACLNN_ERR_PARAM_INVALID;
    } else if (ex->workspace_size > 0 && workspace == NULL) {
        aclsim_set_error("%s: workspace is NULL but phase 1 asked for %llu bytes", api,
                         (unsigned long long)ex->workspace_size);
        st = ACLNN_ERR_PARAM_INVALID;
    } else if (!check_memory(ex, workspace, api, 0)) {
        st = ACLNN_ERR_PARAM_INVALID;
    }

    struct run *r = NULL;
    if (st == ACLNN_SUCCESS) {
        int n = ex->inputs.count + ex->outputs.count;
        r = calloc(1, sizeof *r + (size_t)n * sizeof r->addrs[0]);
        if (r == NULL) {
            aclsim_set_error("%s: out of host memory", api);
            st = ACLNN_ERR_INNER;
        } else {
            r->ex = ex;
            r->workspace = workspace;
            strncpy(r->api, api, sizeof r->api - 1);
            r->n_in = ex->inputs.count;
            r->n_out = ex->outputs.count;
            for (int i = 0; i < r->n_in; i++) {
                r->addrs[i] = ex->inputs.items[i].data;
            }
            for (int i = 0; i < r->n_out; i++) {
                r->addrs[r->n_in + i] = ex->outputs.items[i].data;
            }
        }
    }

    if (st != ACLNN_SUCCESS) {
        /* A normal executor is single-use: consume it so nothing leaks. */
        if (!ex->repeatable) {
            aclsim_executor_discard(ex);
        }
        return st;
    }

    pthread_mutex_lock(&nn_lock);
    ex->launched = 1;
    ex->pending++;
    pthread_mutex_unlock(&nn_lock);
    /* On failure the runtime calls release_run, which frees a normal executor. */
    aclError err = aclsim_stream_launch(api, stream, run_kernel, release_run, r);
    if (err != ACL_SUCCESS) {
        return ACLNN_ERR_RUNTIME_ERROR;
    }
    return ACLNN_SUCCESS;
}
