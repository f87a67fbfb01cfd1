/*
 * Descriptors: aclCreateXxx / aclDestroyXxx / aclGetXxx for tensors, int/bool/float arrays,
 * scalars and tensor/scalar lists.  Every descriptor is registered while alive, so a double
 * destroy returns ACLNN_ERR_PARAM_INVALID with a message instead of corrupting the heap.
 * Creating returns NULL (and sets the recent error text) on bad arguments, as CANN does.
 */
#include <stdlib.h>
#include <string.h>

#include "../sim_internal.h"
#include "registry.h"

/* ---- helpers ------------------------------------------------------------------------- */

/* Register a new object or free it (via the caller) when the registry is out of memory. */
static int register_new(const void *p, enum nn_kind kind, enum aclsim_counter counter, const char *api)
{
    pthread_mutex_lock(&nn_lock);
    int rc = nn_add_locked(p, kind);
    pthread_mutex_unlock(&nn_lock);
    if (rc != 0) {
        aclsim_set_error("%s: out of host memory", api);
        return -1;
    }
    aclsim_counter_add(counter, 1);
    return 0;
}

static enum nn_kind kind_of(const void *p)
{
    pthread_mutex_lock(&nn_lock);
    enum nn_kind k = nn_kind_locked(p);
    pthread_mutex_unlock(&nn_lock);
    return k;
}

/* Unregister p if it is a live `kind`; else set the message and return non-zero. */
static aclnnStatus take_for_destroy(const void *p, enum nn_kind kind, const char *api)
{
    pthread_mutex_lock(&nn_lock);
    enum nn_kind k = nn_kind_locked(p);
    if (k == kind) {
        nn_remove_locked(p);
    }
    pthread_mutex_unlock(&nn_lock);
    if (k == kind) {
        return ACLNN_SUCCESS;
    }
    if (k == NN_TENSOR_IN_LIST || k == NN_SCALAR_IN_LIST) {
        aclsim_set_error("%s: %p belongs to a list; it is destroyed with the list", api, p);
    } else if (k != NN_NONE) {
        aclsim_set_error("%s: %p is an %s, not an %s", api, p, nn_kind_name(k), nn_kind_name(kind));
    } else {
        aclsim_set_error("%s: %p is not a live %s (already destroyed?)", api, p, nn_kind_name(kind));
    }
    return ACLNN_ERR_PARAM_INVALID;
}

static aclnnStatus check_live(const void *p, enum nn_kind kind, const char *api, const char *what)
{
    enum nn_kind k = kind_of(p);
    if (k == kind || (kind == NN_TENSOR && k == NN_TENSOR_IN_LIST) || (kind == NN_SCALAR && k == NN_SCALAR_IN_LIST)) {
        return ACLNN_SUCCESS;
    }
    aclsim_set_error("%s: %s %p is not a live %s", api, what, p, nn_kind_name(kind));
    return ACLNN_ERR_PARAM_INVALID;
}

int aclsim_is_live_tensor(const aclTensor *t)
{
    enum nn_kind k = kind_of(t);
    return k == NN_TENSOR || k == NN_TENSOR_IN_LIST;
}

int aclsim_is_live_int_array(const aclIntArray *a)
{
    return kind_of(a) == NN_INT_ARRAY;
}

int aclsim_is_live_bool_array(const aclBoolArray *a)
{
    return kind_of(a) == NN_BOOL_ARRAY;
}

int aclsim_is_live_float_array(const aclFloatArray *a)
{
    return kind_of(a) == NN_FLOAT_ARRAY;
}

int aclsim_is_live_scalar(const aclScalar *s)
{
    enum nn_kind k = kind_of(s);
    return k == NN_SCALAR || k == NN_SCALAR_IN_LIST;
}

/* ---- tensors ------------------------------------------------------------------------- */

static int fill_tensor(aclTensor *t, const int64_t *viewDims, uint64_t viewDimsNum, aclDataType dataType,
                       const int64_t *stride, int64_t offset, aclFormat format, const int64_t *storageDims,
                       uint64_t storageDimsNum, void *tensorData, const char *api)
{
    if (viewDims == NULL && viewDimsNum > 0) {
        aclsim_set_error("%s: viewDims is NULL but viewDimsNum is %llu", api, (unsigned long long)viewDimsNum);
        return -1;
    }
    if (storageDims == NULL && storageDimsNum > 0) {
        aclsim_set_error("%s: storageDims is NULL but storageDimsNum is %llu", api,
                         (unsigned long long)storageDimsNum);
        return -1;
    }
    if (viewDimsNum > ACLSIM_MAX_DIMS || storageDimsNum > ACLSIM_MAX_DIMS) {
        aclsim_set_error("%s: at most %d dimensions are supported, got viewDimsNum %llu and storageDimsNum %llu",
                         api, ACLSIM_MAX_DIMS, (unsigned long long)viewDimsNum, (unsigned long long)storageDimsNum);
        return -1;
    }
    memset(t, 0, sizeof *t);
    t->ndim = viewDimsNum;
    for (uint64_t i = 0; i < viewDimsNum; i++) {
        t->view_dims[i] = viewDims[i];
    }
    if (stride != NULL) {
        for (uint64_t i = 0; i < viewDimsNum; i++) {
            t->strides[i] = stride[i];
        }
    } else {
        int64_t step = 1;
        for (uint64_t i = viewDimsNum; i-- > 0;) {
            t->strides[i] = step;
            step *= viewDims[i] > 1 ? viewDims[i] : 1;
        }
    }
    t->offset = offset;
    t->dtype = dataType;
    t->format = format;
    t->storage_ndim = storageDimsNum;
    for (uint64_t i = 0; i < storageDimsNum; i++) {
        t->storage_dims[i] = storageDims[i];
    }
    t->data = tensorData;
    return 0;
}

aclTensor *aclCreateTensor(const int64_t *viewDims, uint64_t viewDimsNum, aclDataType dataType,
                           const int64_t *stride, int64_t offset, aclFormat format, const int64_t *storageDims,
                           uint64_t storageDimsNum, void *tensorData)
{
    aclTensor tmp;
    if (fill_tensor(&tmp, viewDims, viewDimsNum, dataType, stride, offset, format, storageDims, storageDimsNum,
                    tensorData, "aclCreateTensor") != 0) {
        return NULL;
    }
    aclTensor *t = malloc(sizeof *t);
    if (t == NULL) {
        aclsim_set_error("aclCreateTensor: out of host memory");
        return NULL;
    }
    *t = tmp;
    if (register_new(t, NN_TENSOR, ACLSIM_CNT_TENSORS, "aclCreateTensor") != 0) {
        free(t);
        return NULL;
    }
    return t;
}

aclnnStatus aclInitTensor(aclTensor *tensor, const int64_t *viewDims, uint64_t viewDimsNum, aclDataType dataType,
                          const int64_t *stride, int64_t offset, aclFormat format, const int64_t *storageDims,
                          uint64_t storageDimsNum, void *tensorDataAddr)
{
    if (tensor == NULL) {
        aclsim_set_error("aclInitTensor: tensor must not be NULL");
        return ACLNN_ERR_PARAM_NULLPTR;
    }
    aclnnStatus st = check_live(tensor, NN_TENSOR, "aclInitTensor", "tensor");
    if (st != ACLNN_SUCCESS) {
        return st;
    }
    aclTensor tmp;
    if (fill_tensor(&tmp, viewDims, viewDimsNum, dataType, stride, offset, format, storageDims, storageDimsNum,
                    tensorDataAddr, "aclInitTensor") != 0) {
        return ACLNN_ERR_PARAM_INVALID;
    }
    *tensor = tmp;
    return ACLNN_SUCCESS;
}

aclnnStatus aclDestroyTensor(const aclTensor *tensor)
{
    if (tensor == NULL) {
        return ACLNN_SUCCESS;
    }
    aclnnStatus st = take_for_destroy(tensor, NN_TENSOR, "aclDestroyTensor");
    if (st == ACLNN_SUCCESS) {
        free((void *)tensor);
        aclsim_counter_add(ACLSIM_CNT_TENSORS, -1);
    }
    return st;
}

static int64_t *copy_dims(const int64_t *src, uint64_t n)
{
    int64_t *out = malloc((n > 0 ? n : 1) * sizeof *out);
    if (out != NULL && n > 0) {
        memcpy(out, src, n * sizeof *out);
    }
    return out;
}

static aclnnStatus get_dims(const aclTensor *tensor, int64_t **out, uint64_t *num, int which, const char *api)
{
    if (tensor == NULL || out == NULL || num == NULL) {
        aclsim_set_error("%s: tensor and the output pointers must not be NULL", api);
        return ACLNN_ERR_PARAM_NULLPTR;
    }
    aclnnStatus st = check_live(tensor, NN_TENSOR, api, "tensor");
    if (st != ACLNN_SUCCESS) {
        return st;
    }
    const int64_t *src = which == 0 ? tensor->view_dims : which == 1 ? tensor->storage_dims : tensor->strides;
    uint64_t n = which == 1 ? tensor->storage_ndim : tensor->ndim;
    int64_t *copy = copy_dims(src, n);
    if (copy == NULL) {
        aclsim_set_error("%s: out of host memory", api);
        return ACLNN_ERR_INNER;
    }
    *out = copy;
    *num = n;
    return ACLNN_SUCCESS;
}

aclnnStatus aclGetViewShape(const aclTensor *tensor, int64_t **viewDims, uint64_t *viewDimsNum)
{
    return get_dims(tensor, viewDims, viewDimsNum, 0, "aclGetViewShape");
}

aclnnStatus aclGetStorageShape(const aclTensor *tensor, int64_t **storageDims, uint64_t *storageDimsNum)
{
    return get_dims(tensor, storageDims, storageDimsNum, 1, "aclGetStorageShape");
}

aclnnStatus aclGetViewStrides(const aclTensor *tensor, int64_t **stridesValue, uint64_t *stridesNum)
{
    return get_dims(tensor, stridesValue, stridesNum, 2, "aclGetViewStrides");
}

#define TENSOR_GETTER(name, type, field)                                                                               \
    aclnnStatus name(const aclTensor *tensor, type *out)                                                               \
    {                                                                                                                  \
        if (tensor == NULL || out == NULL) {                                                                           \
            aclsim_set_error(#name ": tensor and the output pointer must not be NULL");                                \
            return ACLNN_ERR_PARAM_NULLPTR;                                                                            \
        }                                                                                                              \
        aclnnStatus st = check_live(tensor, NN_TENSOR, #name, "tensor");                                               \
        if (st == ACLNN_SUCCESS) {                                                                                     \
            *out = tensor->field;                                                                                      \
        }                                                                                                              \
        return st;                                                                                                     \
    }

TENSOR_GETTER(aclGetViewOffset, int64_t, offset)
TENSOR_GETTER(aclGetFormat, aclFormat, format)
TENSOR_GETTER(aclGetDataType, aclDataType, dtype)

aclnnStatus aclGetRawTensorAddr(const aclTensor *tensor, void **addr)
{
    if (tensor == NULL || addr == NULL) {
        aclsim_set_error("aclGetRawTensorAddr: tensor and addr must not be NULL");
        return ACLNN_ERR_PARAM_NULLPTR;
    }
    aclnnStatus st = check_live(tensor, NN_TENSOR, "aclGetRawTensorAddr", "tensor");
    if (st == ACLNN_SUCCESS) {
        *addr = tensor->data;
    }
    return st;
}

aclnnStatus aclSetRawTensorAddr(aclTensor *tensor, void *addr)
{
    if (tensor == NULL) {
        aclsim_set_error("aclSetRawTensorAddr: tensor must not be NULL");
        return ACLNN_ERR_PARAM_NULLPTR;
    }
    aclnnStatus st = check_live(tensor, NN_TENSOR, "aclSetRawTensorAddr", "tensor");
    if (st == ACLNN_SUCCESS) {
        tensor->data = addr;
    }
    return st;
}

/* ---- scalars and arrays -------------------------------------------------------------- */

aclScalar *aclCreateScalar(void *value, aclDataType dataType)
{
    if (value == NULL) {
        aclsim_set_error("aclCreateScalar: value must not be NULL");
        return NULL;
    }
    size_t size = aclDataTypeSize(dataType);
    if (size == 0 || size > sizeof(((aclScalar *)0)->value)) {
        aclsim_set_error("aclCreateScalar: unsupported data type %d", (int)dataType);
        return NULL;
    }
    aclScalar *s = calloc(1, sizeof *s);
    if (s == NULL) {
        aclsim_set_error("aclCreateScalar: out of host memory");
        return NULL;
    }
    s->dtype = dataType;
    memcpy(s->value, value, size);
    if (register_new(s, NN_SCALAR, ACLSIM_CNT_SCALARS, "aclCreateScalar") != 0) {
        free(s);
        return NULL;
    }
    return s;
}

aclnnStatus aclDestroyScalar(const aclScalar *scalar)
{
    if (scalar == NULL) {
        return ACLNN_SUCCESS;
    }
    aclnnStatus st = take_for_destroy(scalar, NN_SCALAR, "aclDestroyScalar");
    if (st == ACLNN_SUCCESS) {
        free((void *)scalar);
        aclsim_counter_add(ACLSIM_CNT_SCALARS, -1);
    }
    return st;
}

/* One create / destroy / size triple per array type; each owns a malloc'ed copy of the
 * caller's values (NULL when empty). */
#define DEFINE_ARRAY(Name, elem_type, kind, counter)                                                                   \
    acl##Name *aclCreate##Name(const elem_type *value, uint64_t size)                                                  \
    {                                                                                                                  \
        const char *api = "aclCreate" #Name;                                                                           \
        if (value == NULL && size > 0) {                                                                               \
            aclsim_set_error("%s: value is NULL but size is %llu", api, (unsigned long long)size);                     \
            return NULL;                                                                                               \
        }                                                                                                              \
        if (size > aclsim_machine_memory() / sizeof(elem_type)) {                                                      \
            aclsim_set_error("%s: size %llu is too large: its copy would take more than the machine's %llu bytes",    \
                             api, (unsigned long long)size, (unsigned long long)aclsim_machine_memory());              \
            return NULL;                                                                                               \
        }                                                                                                              \
        acl##Name *a = calloc(1, sizeof *a);                                                                           \
        elem_type *values = size > 0 ? malloc((size_t)size * sizeof *values) : NULL;                                   \
        if (a == NULL || (size > 0 && values == NULL)) {                                                               \
            free(a);                                                                                                   \
            free(values);                                                                                              \
            aclsim_set_error("%s: out of host memory", api);                                                           \
            return NULL;                                                                                               \
        }                                                                                                              \
        if (size > 0) {                                                                                                \
            memcpy(values, value, (size_t)size * sizeof *values);                                                      \
        }                                                                                                              \
        a->size = size;                                                                                                \
        a->values = values;                                                                                            \
        if (register_new(a, kind, counter, api) != 0) {                                                                \
            free(values);                                                                                              \
            free(a);                                                                                                   \
            return NULL;                                                                                               \
        }                                                                                                              \
        return a;                                                                                                      \
    }                                                                                                                  \
                                                                                                                       \
    aclnnStatus aclDestroy##Name(const acl##Name *array)                                                               \
    {                                                                                                                  \
        if (array == NULL) {                                                                                           \
            return ACLNN_SUCCESS;                                                                                      \
        }                                                                                                              \
        aclnnStatus st = take_for_destroy(array, kind, "aclDestroy" #Name);                                            \
        if (st == ACLNN_SUCCESS) {                                                                                     \
            free(array->values);                                                                                       \
            free((void *)array);                                                                                       \
            aclsim_counter_add(counter, -1);                                                                           \
        }                                                                                                              \
        return st;                                                                                                     \
    }                                                                                                                  \
                                                                                                                       \
    aclnnStatus aclGet##Name##Size(const acl##Name *array, uint64_t *size)                                             \
    {                                                                                                                  \
        if (array == NULL || size == NULL) {                                                                           \
            aclsim_set_error("aclGet" #Name "Size: array and size must not be NULL");                                  \
            return ACLNN_ERR_PARAM_NULLPTR;                                                                            \
        }                                                                                                              \
        aclnnStatus st = check_live(array, kind, "aclGet" #Name "Size", "array");                                      \
        if (st == ACLNN_SUCCESS) {                                                                                     \
            *size = array->size;                                                                                       \
        }                                                                                                              \
        return st;                                                                                                     \
    }

DEFINE_ARRAY(IntArray, int64_t, NN_INT_ARRAY, ACLSIM_CNT_INT_ARRAYS)
DEFINE_ARRAY(BoolArray, bool, NN_BOOL_ARRAY, ACLSIM_CNT_BOOL_ARRAYS)
DEFINE_ARRAY(FloatArray, float, NN_FLOAT_ARRAY, ACLSIM_CNT_FLOAT_ARRAYS)

/* ---- lists (own their elements) ------------------------------------------------------- */

/* Check that the non-NULL items are distinct live `item` objects and hand them to a list. */
static int adopt_items(const void *const *items, uint64_t size, enum nn_kind item, enum nn_kind owned,
                       const char *api)
{
    pthread_mutex_lock(&nn_lock);
    for (uint64_t i = 0; i < size; i++) {
        if (items[i] == NULL) {
            continue;
        }
        int bad = nn_kind_locked(items[i]) != item;
        for (uint64_t j = 0; j < i && !bad; j++) {
            bad = items[j] == items[i];
        }
        if (bad) {
            pthread_mutex_unlock(&nn_lock);
            aclsim_set_error("%s: element %llu (%p) is not a live %s that no list owns yet", api,
                             (unsigned long long)i, items[i], nn_kind_name(item));
            return -1;
        }
    }
    for (uint64_t i = 0; i < size; i++) {
        if (items[i] != NULL) {
            nn_set_kind_locked(items[i], owned);
        }
    }
    pthread_mutex_unlock(&nn_lock);
    return 0;
}

static void release_items(void *const *items, uint64_t size, enum nn_kind owned, enum nn_kind item)
{
    pthread_mutex_lock(&nn_lock);
    for (uint64_t i = 0; i < size; i++) {
        if (items[i] != NULL && nn_kind_locked(items[i]) == owned) {
            nn_set_kind_locked(items[i], item);
        }
    }
    pthread_mutex_unlock(&nn_lock);
}

/* Lists: create adopts the elements, destroy destroys the adopted ones. */
#define DEFINE_LIST(Name, Item, field, kind, item_kind, owned_kind, counter, item_counter)                            \
    acl##Name *aclCreate##Name(const acl##Item *const *value, uint64_t size)                                           \
    {                                                                                                                  \
        const char *api = "aclCreate" #Name;                                                                           \
        if (value == NULL && size > 0) {                                                                               \
            aclsim_set_error("%s: value is NULL but size is %llu", api, (unsigned long long)size);                     \
            return NULL;                                                                                               \
        }                                                                                                              \
        if (size > aclsim_machine_memory() / sizeof(acl##Item *)) {                                                    \
            aclsim_set_error("%s: size %llu is too large: its copy would take more than the machine's %llu bytes",    \
                             api, (unsigned long long)size, (unsigned long long)aclsim_machine_memory());              \
            return NULL;                                                                                               \
        }                                                                                                              \
        acl##Name *list = calloc(1, sizeof *list);                                                                     \
        acl##Item **items = calloc(size > 0 ? (size_t)size : 1, sizeof *items);                                        \
        if (list == NULL || items == NULL) {                                                                           \
            free(list);                                                                                                \
            free(items);                                                                                               \
            aclsim_set_error("%s: out of host memory", api);                                                           \
            return NULL;                                                                                               \
        }                                                                                                              \
        if (adopt_items((const void *const *)value, size, item_kind, owned_kind, api) != 0) {                          \
            free(list);                                                                                                \
            free(items);                                                                                               \
            return NULL;                                                                                               \
        }                                                                                                              \
        for (uint64_t i = 0; i < size; i++) {                                                                          \
            items[i] = (acl##Item *)value[i];                                                                          \
        }                                                                                                              \
        list->size = size;                                                                                             \
        list->field = items;                                                                                           \
        if (register_new(list, kind, counter, api) != 0) {                                                             \
            release_items((void *const *)items, size, owned_kind, item_kind);                                          \
            free(items);                                                                                               \
            free(list);                                                                                                \
            return NULL;                                                                                               \
        }                                                                                                              \
        return list;                                                                                                   \
    }                                                                                                                  \
                                                                                                                       \
    aclnnStatus aclDestroy##Name(const acl##Name *array)                                                               \
    {                                                                                                                  \
        if (array == NULL) {                                                                                           \
            return ACLNN_SUCCESS;                                                                                      \
        }                                                                                                              \
        aclnnStatus st = take_for_destroy(array, kind, "aclDestroy" #Name);                                            \
        if (st != ACLNN_SUCCESS) {                                                                                     \
            return st;                                                                                                 \
        }                                                                                                              \
        for (uint64_t i = 0; i < array->size; i++) {                                                                   \
            if (array->field[i] != NULL && take_owned(array->field[i], owned_kind)) {                                  \
                free(array->field[i]);                                                                                 \
                aclsim_counter_add(item_counter, -1);                                                                  \
            }                                                                                                          \
        }                                                                                                              \
        free(array->field);                                                                                            \
        free((void *)array);                                                                                           \
        aclsim_counter_add(counter, -1);                                                                               \
        return ACLNN_SUCCESS;                                                                                          \
    }                                                                                                                  \
                                                                                                                       \
    aclnnStatus aclGet##Name##Size(const acl##Name *array, uint64_t *size)                                             \
    {                                                                                                                  \
        if (array == NULL || size == NULL) {                                                                           \
            aclsim_set_error("aclGet" #Name "Size: list and size must not be NULL");                                   \
            return ACLNN_ERR_PARAM_NULLPTR;                                                                            \
        }                                                                                                              \
        aclnnStatus st = check_live(array, kind, "aclGet" #Name "Size", "list");                                       \
        if (st == ACLNN_SUCCESS) {                                                                                     \
            *size = array->size;                                                                                       \
        }                                                                                                              \
        return st;                                                                                                     \
    }

/* Unregister an element its list owns; 0 if it is not (still) owned. */
static int take_owned(const void *p, enum nn_kind owned)
{
    pthread_mutex_lock(&nn_lock);
    int mine = nn_kind_locked(p) == owned;
    if (mine) {
        nn_remove_locked(p);
    }
    pthread_mutex_unlock(&nn_lock);
    return mine;
}

DEFINE_LIST(TensorList, Tensor, tensors, NN_TENSOR_LIST, NN_TENSOR, NN_TENSOR_IN_LIST, ACLSIM_CNT_TENSOR_LISTS,
            ACLSIM_CNT_TENSORS)
DEFINE_LIST(ScalarList, Scalar, scalars, NN_SCALAR_LIST, NN_SCALAR, NN_SCALAR_IN_LIST, ACLSIM_CNT_SCALAR_LISTS,
            ACLSIM_CNT_SCALARS)
