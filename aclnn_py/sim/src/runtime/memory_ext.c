/*
 * The memory API beyond allocation and plain copies: allocation variants, host registration,
 * pointer attributes, managed memory, virtual memory (reserve, physical allocation, map,
 * access), batch and offset copies.  Built on memory.c's tables (rt_add_range_locked & co.)
 * and device.c's streams; nothing below depends on this file.
 *
 * Virtual memory: aclrtReserveMemAddress reserves an inaccessible address range (mmap
 * PROT_NONE); aclrtMallocPhysical creates the physical memory as an anonymous shared memory
 * file (memfd), which aclrtMapMem maps over part of a reserved range (MAP_FIXED), making it
 * device memory there; aclrtMemSetAccess changes the protection of a mapped range.
 */
#define _GNU_SOURCE /* memfd_create */

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "runtime_internal.h"

/* The granularity of physical allocations and mappings: a huge page. */
#define VMM_GRANULARITY ((size_t)2 << 20)

static aclError no_device(const char *api)
{
    return rt_fail(ACL_ERROR_RT_CONTEXT_NULL, "%s: no device is set on this thread (call aclrtSetDevice first)", api);
}

/* ---- allocation variants ----------------------------------------------------------------- */

/* Cached device memory: the host's memory is cache-coherent already. */
aclError aclrtMallocCached(void **devPtr, size_t size, aclrtMemMallocPolicy policy)
{
    (void)policy;
    return rt_device_malloc(devPtr, size, "aclrtMallocCached");
}

static aclError check_config(const char *api, const aclrtMallocConfig *cfg)
{
    if (cfg == NULL) {
        return ACL_SUCCESS;
    }
    if (cfg->numAttrs > 0 && cfg->attrs == NULL) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "%s: cfg->attrs must not be NULL when cfg->numAttrs > 0", api);
    }
    for (size_t i = 0; i < cfg->numAttrs; i++) {
        const aclrtMallocAttribute *a = &cfg->attrs[i];
        if (a->attr == ACL_RT_MEM_ATTR_DEVICE_ID && a->value.deviceId != (uint32_t)rt_current_device()) {
            return rt_fail(ACL_ERROR_INVALID_PARAM, "%s: attribute DEVICE_ID %u is not the current device %d", api,
                           (unsigned)a->value.deviceId, rt_current_device());
        }
        if (a->attr < ACL_RT_MEM_ATTR_RSV || a->attr > ACL_RT_MEM_ATTR_VA_FLAG) {
            return rt_fail(ACL_ERROR_INVALID_PARAM, "%s: unknown attribute %d", api, (int)a->attr);
        }
    }
    return ACL_SUCCESS;
}

aclError aclrtMallocWithCfg(void **devPtr, size_t size, aclrtMemMallocPolicy policy, aclrtMallocConfig *cfg)
{
    (void)policy;
    aclError err = check_config("aclrtMallocWithCfg", cfg);
    return err != ACL_SUCCESS ? err : rt_device_malloc(devPtr, size, "aclrtMallocWithCfg");
}

aclError aclrtMallocForTaskScheduler(void **devPtr, size_t size, aclrtMemMallocPolicy policy, aclrtMallocConfig *cfg)
{
    (void)policy;
    aclError err = check_config("aclrtMallocForTaskScheduler", cfg);
    return err != ACL_SUCCESS ? err : rt_device_malloc(devPtr, size, "aclrtMallocForTaskScheduler");
}

aclError aclrtMallocHostWithCfg(void **ptr, uint64_t size, aclrtMallocConfig *cfg)
{
    aclError err = check_config("aclrtMallocHostWithCfg", cfg);
    if (err == ACL_SUCCESS && size > SIZE_MAX) {
        err = rt_fail(ACL_ERROR_INVALID_PARAM, "aclrtMallocHostWithCfg: size %llu does not fit this host",
                      (unsigned long long)size);
    }
    return err != ACL_SUCCESS ? err : aclrtMallocHost(ptr, (size_t)size);
}

/* ---- managed memory's advice ------------------------------------------------------------ */

/* What aclrtMemManagedAdvise and aclrtMemManagedPrefetchAsync set, per page of a managed
 * block (aclrtMemManagedGetAttr[s] reads it back); held in memory.c's block (its managed
 * slot), so aclrtFree releases it with the block. */
#define MANAGED_PAGE ((size_t)4096)

struct page_advice {
    uint8_t read_mostly;
    uint8_t accessed_by_host;
    aclrtMemManagedLocation preferred; /* type INVALID: none */
    aclrtMemManagedLocation prefetched;
    uint64_t accessed_by;              /* bit d: device d */
};

struct managed {
    size_t pages;
    struct page_advice page[];
};

/* Unset locations read back with id -2 (CANN: "otherwise -2"). */
#define NO_LOCATION_ID (-2)

static aclError managed_attach(void *p, size_t size)
{
    size_t pages = (size + MANAGED_PAGE - 1) / MANAGED_PAGE;
    struct managed *m = calloc(1, sizeof *m + pages * sizeof m->page[0]);
    if (m == NULL) {
        aclrtFree(p);
        return rt_fail(ACL_ERROR_RT_MEMORY_ALLOCATION, "aclrtMemAllocManaged: out of host memory");
    }
    m->pages = pages;
    for (size_t i = 0; i < pages; i++) {
        m->page[i].preferred = (aclrtMemManagedLocation){ACL_MEM_LOCATIONTYPE_INVALID, NO_LOCATION_ID};
        m->page[i].prefetched = m->page[i].preferred;
    }
    uintptr_t base = 0;
    size_t block = 0;
    pthread_mutex_lock(&rt_lock);
    void **slot = rt_managed_slot_locked(p, &base, &block);
    if (slot != NULL) {
        *slot = m;
    }
    pthread_mutex_unlock(&rt_lock);
    if (slot == NULL) { /* freed by another thread meanwhile: nothing to attach to */
        free(m);
    }
    return ACL_SUCCESS;
}

/* With rt_lock held: the advice of the managed block holding [ptr, ptr + size) and the pages
 * the range covers, or NULL with the error set. */
static struct managed *managed_range_locked(const char *api, const void *ptr, size_t size, size_t *first,
                                            size_t *last, aclError *err)
{
    uintptr_t base = 0;
    size_t block = 0;
    void **slot = ptr != NULL ? rt_managed_slot_locked(ptr, &base, &block) : NULL;
    if (slot == NULL || *slot == NULL) {
        *err = rt_fail(ACL_ERROR_INVALID_PARAM, "%s: %p is not managed memory (aclrtMemAllocManaged)", api, ptr);
        return NULL;
    }
    size_t offset = (uintptr_t)ptr - base;
    if (size == 0 || size > block - offset) {
        *err = rt_fail(ACL_ERROR_INVALID_PARAM, "%s: size %zu must be > 0 and stay inside the managed block of %zu "
                       "bytes", api, size, block);
        return NULL;
    }
    *first = offset / MANAGED_PAGE;
    *last = (offset + size - 1) / MANAGED_PAGE;
    return *slot;
}

static int valid_location(aclrtMemManagedLocation loc)
{
    switch (loc.type) {
    case ACL_MEM_LOCATIONTYPE_DEVICE:
        return loc.id >= 0 && loc.id < rt_device_count();
    case ACL_MEM_LOCATIONTYPE_HOST:
    case ACL_MEM_LOCATIONTYPE_HOST_NUMA_CURRENT:
        return 1;
    case ACL_MEM_LOCATIONTYPE_HOST_NUMA:
        return loc.id >= 0;
    default:
        return 0;
    }
}

/* The location as stored: the host's id reads back -1. */
static aclrtMemManagedLocation stored(aclrtMemManagedLocation loc)
{
    if (loc.type == ACL_MEM_LOCATIONTYPE_HOST || loc.type == ACL_MEM_LOCATIONTYPE_HOST_NUMA_CURRENT) {
        loc.id = -1;
    }
    return loc;
}

/* Managed memory is reachable from the host and the device: on the simulator device memory is. */
aclError aclrtMemAllocManaged(void **ptr, uint64_t size, uint32_t flag)
{
    if (flag != ACL_RT_MEM_ATTACH_GLOBAL) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "aclrtMemAllocManaged: flag must be ACL_RT_MEM_ATTACH_GLOBAL, got %u",
                       (unsigned)flag);
    }
    if (size > SIZE_MAX) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "aclrtMemAllocManaged: size too large");
    }
    aclError err = rt_device_malloc(ptr, (size_t)size, "aclrtMemAllocManaged");
    if (err != ACL_SUCCESS) {
        return err;
    }
    return managed_attach(*ptr, (size_t)size);
}

aclError aclrtFreeWithDevSync(void *devPtr)
{
    aclError err = aclrtSynchronizeDevice();
    return err != ACL_SUCCESS ? err : aclrtFree(devPtr);
}

aclError aclrtFreeHostWithDevSync(void *hostPtr)
{
    aclError err = aclrtSynchronizeDevice();
    return err != ACL_SUCCESS ? err : aclrtFreeHost(hostPtr);
}

/* ---- what an address is ------------------------------------------------------------------ */

static aclError device_range(const char *api, const void *p, size_t size)
{
    pthread_mutex_lock(&rt_lock);
    int ok = rt_device_range_ok_locked(p, size);
    pthread_mutex_unlock(&rt_lock);
    return ok ? ACL_SUCCESS
              : rt_fail(ACL_ERROR_INVALID_PARAM, "%s: the %zu bytes at %p are not inside one device allocation", api,
                        size, p);
}

/* The host's caches are coherent with the simulated device: nothing to write back or drop. */
aclError aclrtMemFlush(void *devPtr, size_t size)
{
    return device_range("aclrtMemFlush", devPtr, size);
}

aclError aclrtMemInvalidate(void *devPtr, size_t size)
{
    return device_range("aclrtMemInvalidate", devPtr, size);
}

aclError aclrtPointerGetAttributes(const void *ptr, aclrtPtrAttributes *attributes)
{
    if (ptr == NULL || attributes == NULL) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "aclrtPointerGetAttributes: ptr and attributes must not be NULL");
    }
    uintptr_t base;
    size_t size;
    int device;
    enum rt_range_kind kind;
    pthread_mutex_lock(&rt_lock);
    int found = rt_range_info_locked(ptr, &base, &size, &device, &kind);
    pthread_mutex_unlock(&rt_lock);
    memset(attributes, 0, sizeof *attributes);
    long page = sysconf(_SC_PAGESIZE);
    attributes->pageSize = (uint32_t)(page > 0 ? page : 4096);
    if (!found) {
        attributes->location.type = ACL_MEM_LOCATION_TYPE_UNREGISTERED;
        return ACL_SUCCESS;
    }
    if (kind == RT_RANGE_DEVICE || kind == RT_RANGE_MAPPED) {
        attributes->location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
        attributes->location.id = (uint32_t)device;
        if (kind == RT_RANGE_MAPPED) {
            attributes->pageSize = (uint32_t)VMM_GRANULARITY;
        }
    } else {
        attributes->location.type = ACL_MEM_LOCATION_TYPE_HOST;
    }
    return ACL_SUCCESS;
}

aclError aclrtMemGetAddressRange(void *ptr, void **pbase, size_t *psize)
{
    uintptr_t base;
    size_t size;
    int device;
    enum rt_range_kind kind;
    pthread_mutex_lock(&rt_lock);
    int found = ptr != NULL && rt_range_info_locked(ptr, &base, &size, &device, &kind) &&
                (kind == RT_RANGE_DEVICE || kind == RT_RANGE_MAPPED);
    pthread_mutex_unlock(&rt_lock);
    if (!found) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "aclrtMemGetAddressRange: %p is not device memory", ptr);
    }
    if (pbase != NULL) {
        *pbase = (void *)base;
    }
    if (psize != NULL) {
        *psize = size;
    }
    return ACL_SUCCESS;
}

/* checkResult: 1 when every address is of memType (ACL_RT_MEM_TYPE_DEV: device memory; the
 * simulator has no DVPP or reserved memory), else 0. */
aclError aclrtCheckMemType(void **addrList, uint32_t size, uint32_t memType, uint32_t *checkResult, uint32_t reserve)
{
    (void)reserve;
    const uint32_t known = ACL_RT_MEM_TYPE_DEV | ACL_RT_MEM_TYPE_DVPP | ACL_RT_MEM_TYPE_RSVD;
    if ((addrList == NULL && size > 0) || checkResult == NULL || memType == 0 || (memType & ~known) != 0) {
        return rt_fail(ACL_ERROR_INVALID_PARAM,
                       "aclrtCheckMemType: addrList, checkResult must not be NULL and memType a mask of ACL_RT_MEM_TYPE_*");
    }
    int all = 1;
    pthread_mutex_lock(&rt_lock);
    for (uint32_t i = 0; i < size && all; i++) {
        uintptr_t base;
        size_t len;
        int device;
        enum rt_range_kind kind;
        int dev = rt_range_info_locked(addrList[i], &base, &len, &device, &kind) &&
                  (kind == RT_RANGE_DEVICE || kind == RT_RANGE_MAPPED);
        all = dev && (memType & ACL_RT_MEM_TYPE_DEV) != 0;
    }
    pthread_mutex_unlock(&rt_lock);
    *checkResult = (uint32_t)all;
    return ACL_SUCCESS;
}

/* ---- host registration --------------------------------------------------------------------- */

static aclError host_register(const char *api, void *ptr, uint64_t size)
{
    if (ptr == NULL || size == 0 || size > SIZE_MAX) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "%s: ptr must not be NULL and size must be in (0, SIZE_MAX]", api);
    }
    pthread_mutex_lock(&rt_lock);
    int d = rt_current_device();
    uintptr_t base;
    size_t len;
    int device;
    enum rt_range_kind kind;
    aclError err = ACL_SUCCESS;
    if (d < 0) {
        err = no_device(api);
    } else if (rt_range_info_locked(ptr, &base, &len, &device, &kind) && kind != RT_RANGE_HOST) {
        err = rt_fail(ACL_ERROR_INVALID_PARAM, "%s: %p is %s already", api, ptr,
                      kind == RT_RANGE_REGISTERED ? "registered" : "device memory");
    } else if (rt_add_range_locked((uintptr_t)ptr, (size_t)size, d, RT_RANGE_REGISTERED) != ACL_SUCCESS) {
        err = rt_fail(ACL_ERROR_RT_MEMORY_ALLOCATION, "%s: out of host memory", api);
    }
    pthread_mutex_unlock(&rt_lock);
    return err;
}

/* The device reaches registered host memory at the same address (it is the host's). */
aclError aclrtHostRegister(void *ptr, uint64_t size, aclrtHostRegisterType type, void **devPtr)
{
    if (devPtr == NULL) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "aclrtHostRegister: devPtr must not be NULL");
    }
    if (type != ACL_HOST_REGISTER_MAPPED && type != ACL_HOST_REGISTER_IOMEMORY && type != ACL_HOST_REGISTER_READONLY) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "aclrtHostRegister: unknown type %d", (int)type);
    }
    aclError err = host_register("aclrtHostRegister", ptr, size);
    if (err == ACL_SUCCESS) {
        *devPtr = ptr;
    }
    return err;
}

aclError aclrtHostRegisterV2(void *ptr, uint64_t size, uint32_t flag)
{
    const uint32_t known = ACL_HOST_REG_MAPPED | ACL_HOST_REG_IOMEMORY | ACL_HOST_REG_READONLY | ACL_HOST_REG_PINNED;
    if ((flag & ~known) != 0) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "aclrtHostRegisterV2: unknown flag bits 0x%x", (unsigned)(flag & ~known));
    }
    return host_register("aclrtHostRegisterV2", ptr, size);
}

aclError aclrtHostGetDevicePointer(void *pHost, void **pDevice, uint32_t flag)
{
    if (pHost == NULL || pDevice == NULL || flag != 0) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "aclrtHostGetDevicePointer: pHost and pDevice must not be NULL, flag 0");
    }
    uintptr_t base;
    size_t len;
    int device;
    enum rt_range_kind kind;
    pthread_mutex_lock(&rt_lock);
    int found = rt_range_info_locked(pHost, &base, &len, &device, &kind) && kind == RT_RANGE_REGISTERED;
    pthread_mutex_unlock(&rt_lock);
    if (!found) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "aclrtHostGetDevicePointer: %p is not registered host memory", pHost);
    }
    *pDevice = pHost;
    return ACL_SUCCESS;
}

aclError aclrtHostUnregister(void *ptr)
{
    pthread_mutex_lock(&rt_lock);
    int removed = ptr != NULL && rt_remove_range_locked((uintptr_t)ptr, RT_RANGE_REGISTERED);
    pthread_mutex_unlock(&rt_lock);
    return removed ? ACL_SUCCESS
                   : rt_fail(ACL_ERROR_INVALID_PARAM, "aclrtHostUnregister: %p was not registered (by its start)", ptr);
}

aclError aclrtHostMemMapCapabilities(uint32_t deviceId, aclrtHacType hacType, aclrtHostMemMapCapability *capabilities)
{
    if (capabilities == NULL) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "aclrtHostMemMapCapabilities: capabilities must not be NULL");
    }
    if ((int64_t)deviceId >= rt_device_count()) {
        return rt_fail(ACL_ERROR_RT_INVALID_DEVICEID, "aclrtHostMemMapCapabilities: invalid device id %u",
                       (unsigned)deviceId);
    }
    if (hacType < ACL_RT_HAC_TYPE_STARS || hacType > ACL_RT_HAC_TYPE_CCU) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "aclrtHostMemMapCapabilities: unknown hacType %d", (int)hacType);
    }
    *capabilities = ACL_RT_HOST_MEM_MAP_SUPPORTED; /* every engine is the host CPU */
    return ACL_SUCCESS;
}

/* ---- managed memory hints ------------------------------------------------------------------ */

/* Advice and prefetches would place memory; on the simulator it is where both sides reach
 * it already, so they are recorded (per page) for aclrtMemManagedGetAttr[s]. */
aclError aclrtMemManagedAdvise(const void *const ptr, uint64_t size, aclrtMemManagedAdviseType advise,
                               aclrtMemManagedLocation location)
{
    const char *api = "aclrtMemManagedAdvise";
    if (advise < ACL_MEM_ADVISE_SET_READ_MOSTLY || advise > ACL_MEM_ADVISE_UNSET_ACCESSED_BY) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "%s: unknown advice %d", api, (int)advise);
    }
    int needs_location = advise == ACL_MEM_ADVISE_SET_PREFERRED_LOCATION || advise == ACL_MEM_ADVISE_SET_ACCESSED_BY ||
                         advise == ACL_MEM_ADVISE_UNSET_ACCESSED_BY;
    int accessed = advise == ACL_MEM_ADVISE_SET_ACCESSED_BY || advise == ACL_MEM_ADVISE_UNSET_ACCESSED_BY;
    if (needs_location && (!valid_location(location) ||
                           (accessed && location.type != ACL_MEM_LOCATIONTYPE_DEVICE &&
                            location.type != ACL_MEM_LOCATIONTYPE_HOST))) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "%s: location (type %d, id %d) is not a device or host location the "
                       "advice %d takes", api, (int)location.type, (int)location.id, (int)advise);
    }
    if (size > SIZE_MAX) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "%s: size too large", api);
    }
    aclError err = ACL_SUCCESS;
    size_t first = 0, last = 0;
    pthread_mutex_lock(&rt_lock);
    struct managed *m = managed_range_locked(api, ptr, (size_t)size, &first, &last, &err);
    for (size_t i = first; m != NULL && i <= last; i++) {
        struct page_advice *a = &m->page[i];
        switch (advise) {
        case ACL_MEM_ADVISE_SET_READ_MOSTLY:
        case ACL_MEM_ADVISE_UNSET_READ_MOSTLY:
            a->read_mostly = advise == ACL_MEM_ADVISE_SET_READ_MOSTLY;
            break;
        case ACL_MEM_ADVISE_SET_PREFERRED_LOCATION:
            a->preferred = stored(location);
            break;
        case ACL_MEM_ADVISE_UNSET_PREFERRED_LOCATION:
            a->preferred = (aclrtMemManagedLocation){ACL_MEM_LOCATIONTYPE_INVALID, NO_LOCATION_ID};
            break;
        default:
            if (location.type == ACL_MEM_LOCATIONTYPE_HOST) {
                a->accessed_by_host = advise == ACL_MEM_ADVISE_SET_ACCESSED_BY;
            } else if (advise == ACL_MEM_ADVISE_SET_ACCESSED_BY) {
                a->accessed_by |= (uint64_t)1 << location.id;
            } else {
                a->accessed_by &= ~((uint64_t)1 << location.id);
            }
            break;
        }
    }
    pthread_mutex_unlock(&rt_lock);
    return rt_error(err);
}

struct prefetch_task {
    const void *ptr;
    size_t size;
    aclrtMemManagedLocation location;
};

/* The prefetch is done when the stream gets there: then it is the range's last one. */
static aclError run_prefetch(void *ctx)
{
    struct prefetch_task *p = ctx;
    aclError err = ACL_SUCCESS;
    size_t first = 0, last = 0;
    pthread_mutex_lock(&rt_lock);
    struct managed *m = managed_range_locked("aclrtMemManagedPrefetchAsync", p->ptr, p->size, &first, &last, &err);
    for (size_t i = first; m != NULL && i <= last; i++) {
        m->page[i].prefetched = p->location;
    }
    pthread_mutex_unlock(&rt_lock);
    return err != ACL_SUCCESS ? ACL_ERROR_RT_DEVICE_MEM_ERROR : ACL_SUCCESS;
}

aclError aclrtMemManagedPrefetchAsync(const void *ptr, size_t size, aclrtMemManagedLocation location, uint32_t flags,
                                      aclrtStream stream)
{
    const char *api = "aclrtMemManagedPrefetchAsync";
    (void)flags;
    if (!valid_location(location)) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "%s: location (type %d, id %d) is not a device or host location", api,
                       (int)location.type, (int)location.id);
    }
    struct prefetch_task *p = malloc(sizeof *p);
    if (p == NULL) {
        return rt_fail(ACL_ERROR_RT_MEMORY_ALLOCATION, "%s: out of host memory", api);
    }
    *p = (struct prefetch_task){ptr, size, stored(location)};
    aclError err = ACL_SUCCESS;
    size_t first = 0, last = 0;
    pthread_mutex_lock(&rt_lock);
    if (managed_range_locked(api, ptr, size, &first, &last, &err) != NULL) {
        struct rt_stream *s = rt_resolve_stream_locked(stream, api, &err);
        if (s != NULL) {
            err = rt_enqueue_locked(s, run_prefetch, free, p);
            if (err != ACL_SUCCESS) {
                aclsim_set_error("%s: out of host memory", api);
            }
        }
    }
    pthread_mutex_unlock(&rt_lock);
    if (err != ACL_SUCCESS) {
        free(p);
    }
    return rt_error(err);
}

/* One attribute of [ptr, ptr + size) into data (dataSize bytes), with rt_lock held.  A
 * location the pages do not share reads as none (CANN: the result is then invalid). */
static aclError managed_attr_locked(const char *api, aclrtMemManagedRangeAttribute attribute, const struct managed *m,
                                    size_t first, size_t last, void *data, size_t dataSize)
{
    if (data == NULL) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "%s: data must not be NULL", api);
    }
    int list = attribute == ACL_MEM_RANGE_ATTRIBUTE_ACCESSED_BY;
    if (attribute < ACL_MEM_RANGE_ATTRIBUTE_READ_MOSTLY || attribute > ACL_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_ID) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "%s: unknown attribute %d", api, (int)attribute);
    }
    if (list ? dataSize == 0 || dataSize % sizeof(int32_t) != 0 : dataSize != sizeof(int32_t)) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "%s: dataSize %zu for attribute %d must be %s", api, dataSize,
                       (int)attribute, list ? "a multiple of 4" : "4");
    }
    int32_t *out = data;
    if (list) {
        uint64_t devices = ~(uint64_t)0;
        int host = 1;
        for (size_t i = first; i <= last; i++) {
            devices &= m->page[i].accessed_by;
            host = host && m->page[i].accessed_by_host;
        }
        size_t n = dataSize / sizeof(int32_t), k = 0;
        for (int d = 0; d < ACLSIM_MAX_DEVICES && k < n; d++) {
            if ((devices >> d) & 1u) {
                out[k++] = d;
            }
        }
        if (host && k < n) {
            out[k++] = -1;
        }
        while (k < n) {
            out[k++] = NO_LOCATION_ID;
        }
        return ACL_SUCCESS;
    }
    if (attribute == ACL_MEM_RANGE_ATTRIBUTE_READ_MOSTLY) {
        int all = 1;
        for (size_t i = first; i <= last; i++) {
            all = all && m->page[i].read_mostly;
        }
        *out = all;
        return ACL_SUCCESS;
    }
    int prefetch = attribute >= ACL_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION;
    aclrtMemManagedLocation loc = prefetch ? m->page[first].prefetched : m->page[first].preferred;
    for (size_t i = first + 1; i <= last; i++) {
        aclrtMemManagedLocation other = prefetch ? m->page[i].prefetched : m->page[i].preferred;
        if (other.type != loc.type || other.id != loc.id) {
            loc = (aclrtMemManagedLocation){ACL_MEM_LOCATIONTYPE_INVALID, NO_LOCATION_ID};
            break;
        }
    }
    if (attribute == ACL_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_TYPE ||
        attribute == ACL_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_TYPE) {
        *out = (int32_t)loc.type;
    } else {
        *out = loc.id;
    }
    return ACL_SUCCESS;
}

aclError aclrtMemManagedGetAttr(aclrtMemManagedRangeAttribute attribute, const void *ptr, size_t size, void *data,
                                size_t dataSize)
{
    const char *api = "aclrtMemManagedGetAttr";
    aclError err = ACL_SUCCESS;
    size_t first = 0, last = 0;
    pthread_mutex_lock(&rt_lock);
    const struct managed *m = managed_range_locked(api, ptr, size, &first, &last, &err);
    if (m != NULL) {
        err = managed_attr_locked(api, attribute, m, first, last, data, dataSize);
    }
    pthread_mutex_unlock(&rt_lock);
    return rt_error(err);
}

aclError aclrtMemManagedGetAttrs(aclrtMemManagedRangeAttribute *attributes, size_t numAttributes, const void *ptr,
                                 size_t size, void **data, size_t *dataSizes)
{
    const char *api = "aclrtMemManagedGetAttrs";
    if (attributes == NULL || data == NULL || dataSizes == NULL || numAttributes == 0) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "%s: attributes, data and dataSizes must not be NULL and "
                       "numAttributes > 0", api);
    }
    aclError err = ACL_SUCCESS;
    size_t first = 0, last = 0;
    pthread_mutex_lock(&rt_lock);
    const struct managed *m = managed_range_locked(api, ptr, size, &first, &last, &err);
    for (size_t i = 0; m != NULL && i < numAttributes && err == ACL_SUCCESS; i++) {
        err = managed_attr_locked(api, attributes[i], m, first, last, data[i], dataSizes[i]);
    }
    pthread_mutex_unlock(&rt_lock);
    return rt_error(err);
}

/* ---- batch and offset copies --------------------------------------------------------------- */

static aclError batch(const char *api, void **dsts, size_t *destMaxs, void **srcs, size_t *sizes, size_t numBatches,
                      aclrtMemcpyBatchAttr *attrs, size_t *attrsIndexes, size_t numAttrs, size_t *failIndex, int async,
                      aclrtStream stream)
{
    if (dsts == NULL || destMaxs == NULL || srcs == NULL || sizes == NULL || numBatches == 0 || attrs == NULL ||
        attrsIndexes == NULL || numAttrs == 0 || numAttrs > numBatches) {
        return rt_fail(ACL_ERROR_INVALID_PARAM,
                       "%s: the arrays must not be NULL, numBatches > 0 and 0 < numAttrs <= numBatches", api);
    }
    if (attrsIndexes[0] != 0) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "%s: attrsIndexes[0] must be 0", api);
    }
    for (size_t a = 1; a < numAttrs; a++) {
        if (attrsIndexes[a] <= attrsIndexes[a - 1] || attrsIndexes[a] >= numBatches) {
            return rt_fail(ACL_ERROR_INVALID_PARAM, "%s: attrsIndexes must increase and stay below numBatches", api);
        }
    }
    size_t a = 0;
    for (size_t i = 0; i < numBatches; i++) {
        while (a + 1 < numAttrs && attrsIndexes[a + 1] <= i) {
            a++;
        }
        /* Each copy goes where its attribute's locations say (the runtime finds out from the
         * addresses, as ACL_MEMCPY_DEFAULT does). */
        int dst_dev = attrs[a].dstLoc.type == ACL_MEM_LOCATION_TYPE_DEVICE;
        int src_dev = attrs[a].srcLoc.type == ACL_MEM_LOCATION_TYPE_DEVICE;
        aclrtMemcpyKind kind = dst_dev ? (src_dev ? ACL_MEMCPY_DEVICE_TO_DEVICE : ACL_MEMCPY_HOST_TO_DEVICE)
                                       : (src_dev ? ACL_MEMCPY_DEVICE_TO_HOST : ACL_MEMCPY_HOST_TO_HOST);
        aclError err = async ? rt_memcpy_async(api, dsts[i], destMaxs[i], srcs[i], sizes[i], kind, stream)
                             : rt_memcpy(api, dsts[i], destMaxs[i], srcs[i], sizes[i], kind);
        if (err != ACL_SUCCESS) {
            if (failIndex != NULL) {
                *failIndex = i;
            }
            return err;
        }
    }
    if (failIndex != NULL) {
        *failIndex = SIZE_MAX;
    }
    return ACL_SUCCESS;
}

aclError aclrtMemcpyBatch(void **dsts, size_t *destMaxs, void **srcs, size_t *sizes, size_t numBatches,
                          aclrtMemcpyBatchAttr *attrs, size_t *attrsIndexes, size_t numAttrs, size_t *failIndex)
{
    if (failIndex == NULL) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "aclrtMemcpyBatch: failIndex must not be NULL");
    }
    return batch("aclrtMemcpyBatch", dsts, destMaxs, srcs, sizes, numBatches, attrs, attrsIndexes, numAttrs, failIndex,
                 0, NULL);
}

aclError aclrtMemcpyBatchV2(void **dsts, size_t *destMaxs, void **srcs, size_t *sizes, size_t numBatches,
                            aclrtMemcpyBatchAttr *attrs, size_t *attrsIndexes, size_t numAttrs)
{
    return batch("aclrtMemcpyBatchV2", dsts, destMaxs, srcs, sizes, numBatches, attrs, attrsIndexes, numAttrs, NULL, 0,
                 NULL);
}

aclError aclrtMemcpyBatchAsync(void **dsts, size_t *destMaxs, void **srcs, size_t *sizes, size_t numBatches,
                               aclrtMemcpyBatchAttr *attrs, size_t *attrsIndexes, size_t numAttrs, size_t *failIndex,
                               aclrtStream stream)
{
    if (failIndex == NULL) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "aclrtMemcpyBatchAsync: failIndex must not be NULL");
    }
    return batch("aclrtMemcpyBatchAsync", dsts, destMaxs, srcs, sizes, numBatches, attrs, attrsIndexes, numAttrs,
                 failIndex, 1, stream);
}

aclError aclrtMemcpyBatchAsyncV2(void **dsts, size_t *destMaxs, void **srcs, size_t *sizes, size_t numBatches,
                                 aclrtMemcpyBatchAttr *attrs, size_t *attrsIndexes, size_t numAttrs, aclrtStream stream)
{
    return batch("aclrtMemcpyBatchAsyncV2", dsts, destMaxs, srcs, sizes, numBatches, attrs, attrsIndexes, numAttrs,
                 NULL, 1, stream);
}

/* dst and src point at the base addresses; the copy is from *src + srcDataOffset to
 * *dst + dstDataOffset, the addresses read when the call is made. */
aclError aclrtMemcpyAsyncWithOffset(void **dst, size_t destMax, size_t dstDataOffset, const void **src, size_t count,
                                    size_t srcDataOffset, aclrtMemcpyKind kind, aclrtStream stream)
{
    if (dst == NULL || src == NULL || *dst == NULL || *src == NULL) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "aclrtMemcpyAsyncWithOffset: dst, src and what they point at must not be NULL");
    }
    if (dstDataOffset > destMax) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "aclrtMemcpyAsyncWithOffset: dstDataOffset (%zu) exceeds destMax (%zu)",
                       dstDataOffset, destMax);
    }
    return rt_memcpy_async("aclrtMemcpyAsyncWithOffset", (char *)*dst + dstDataOffset, destMax - dstDataOffset,
                           (const char *)*src + srcDataOffset, count, kind, stream);
}

/* ---- virtual memory ------------------------------------------------------------------------ */

struct reservation {
    struct reservation *next;
    uintptr_t base;
    size_t size;
};

struct physical {
    struct physical *next;
    int fd;
    size_t size;
    aclrtPhysicalMemProp prop;
    int maps; /* live mappings of it */
};

struct mapping {
    struct mapping *next;
    uintptr_t base;
    size_t size;
    struct physical *phys;
    uint64_t access; /* aclrtMemAccessFlags */
};

static struct reservation *reservations; /* all under rt_lock */
static struct physical *physicals;
static struct mapping *mappings;

static struct reservation *reservation_of_locked(uintptr_t p, size_t size)
{
    for (struct reservation *r = reservations; r != NULL; r = r->next) {
        if (p >= r->base && p - r->base <= r->size && size <= r->size - (p - r->base)) {
            return r;
        }
    }
    return NULL;
}

static struct physical *find_physical_locked(aclrtDrvMemHandle handle)
{
    for (struct physical *m = physicals; m != NULL; m = m->next) {
        if ((aclrtDrvMemHandle)m == handle) {
            return m;
        }
    }
    return NULL;
}

static struct mapping **find_mapping_locked(uintptr_t base)
{
    for (struct mapping **m = &mappings; *m != NULL; m = &(*m)->next) {
        if ((*m)->base == base) {
            return m;
        }
    }
    return NULL;
}

static aclError reserve(const char *api, void **virPtr, size_t size, size_t alignment, void *expectPtr, uint64_t flags)
{
    (void)flags;
    if (virPtr == NULL || size == 0 || size % VMM_GRANULARITY != 0) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "%s: virPtr must not be NULL and size a positive multiple of %zu", api,
                       VMM_GRANULARITY);
    }
    if (alignment != 0 && (alignment & (alignment - 1)) != 0) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "%s: alignment must be 0 or a power of two, got %zu", api, alignment);
    }
    size_t align = alignment > VMM_GRANULARITY ? alignment : VMM_GRANULARITY;
    struct reservation *r = malloc(sizeof *r);
    /* Over-reserve to align, then give back the ends. */
    void *p = r != NULL ? mmap(expectPtr, size + align, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0)
                        : MAP_FAILED;
    if (p == MAP_FAILED) {
        free(r);
        return rt_fail(ACL_ERROR_RT_MEMORY_ALLOCATION, "%s: cannot reserve %zu bytes of address space", api, size);
    }
    uintptr_t start = ((uintptr_t)p + align - 1) & ~(uintptr_t)(align - 1);
    if (start > (uintptr_t)p) {
        munmap(p, start - (uintptr_t)p);
    }
    size_t tail = (uintptr_t)p + size + align - (start + size);
    if (tail > 0) {
        munmap((void *)(start + size), tail);
    }
    r->base = start;
    r->size = size;
    pthread_mutex_lock(&rt_lock);
    r->next = reservations;
    reservations = r;
    pthread_mutex_unlock(&rt_lock);
    *virPtr = (void *)start;
    return ACL_SUCCESS;
}

aclError aclrtReserveMemAddress(void **virPtr, size_t size, size_t alignment, void *expectPtr, uint64_t flags)
{
    return reserve("aclrtReserveMemAddress", virPtr, size, alignment, expectPtr, flags);
}

aclError aclrtReserveMemAddressNoUCMemory(void **virPtr, size_t size, size_t alignment, void *expectPtr, uint64_t flags)
{
    return reserve("aclrtReserveMemAddressNoUCMemory", virPtr, size, alignment, expectPtr, flags);
}

aclError aclrtReleaseMemAddress(void *virPtr)
{
    pthread_mutex_lock(&rt_lock);
    struct reservation **link = &reservations;
    while (*link != NULL && (*link)->base != (uintptr_t)virPtr) {
        link = &(*link)->next;
    }
    struct reservation *r = *link;
    int busy = 0;
    for (struct mapping *m = mappings; r != NULL && m != NULL; m = m->next) {
        busy |= m->base - r->base < r->size;
    }
    if (r != NULL && !busy) {
        *link = r->next;
    }
    pthread_mutex_unlock(&rt_lock);
    if (r == NULL) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "aclrtReleaseMemAddress: %p is not a reserved address", virPtr);
    }
    if (busy) {
        return rt_fail(ACL_ERROR_RT_PARAM_INVALID, "aclrtReleaseMemAddress: memory is still mapped in the range at %p "
                       "(aclrtUnmapMem first)", virPtr);
    }
    munmap((void *)r->base, r->size);
    free(r);
    return ACL_SUCCESS;
}

aclError aclrtMemGetAllocationGranularity(aclrtPhysicalMemProp *prop, aclrtMemGranularityOptions option,
                                          size_t *granularity)
{
    if (prop == NULL || granularity == NULL) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "aclrtMemGetAllocationGranularity: prop and granularity must not be NULL");
    }
    if (option != ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM && option != ACL_RT_MEM_ALLOC_GRANULARITY_RECOMMENDED) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "aclrtMemGetAllocationGranularity: unknown option %d", (int)option);
    }
    *granularity = VMM_GRANULARITY;
    return ACL_SUCCESS;
}

aclError aclrtMallocPhysical(aclrtDrvMemHandle *handle, size_t size, const aclrtPhysicalMemProp *prop, uint64_t flags)
{
    const char *api = "aclrtMallocPhysical";
    (void)flags;
    if (handle == NULL || prop == NULL || size == 0 || size % VMM_GRANULARITY != 0) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "%s: handle and prop must not be NULL and size a positive multiple of %zu",
                       api, VMM_GRANULARITY);
    }
    if (prop->allocationType != ACL_MEM_ALLOCATION_TYPE_PINNED || prop->location.type != ACL_MEM_LOCATION_TYPE_DEVICE ||
        (int64_t)prop->location.id >= rt_device_count()) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "%s: prop must ask for pinned memory on a simulated device", api);
    }
    pthread_mutex_lock(&rt_lock);
    uint64_t room = rt_device_memory_total() - rt_device_memory_used_locked();
    pthread_mutex_unlock(&rt_lock);
    if (size > room) {
        return rt_fail(ACL_ERROR_RT_MEMORY_ALLOCATION, "%s: %zu bytes do not fit the %llu bytes of device memory left",
                       api, size, (unsigned long long)room);
    }
    struct physical *m = calloc(1, sizeof *m);
    int fd = m != NULL ? memfd_create("aclsim-physical", MFD_CLOEXEC) : -1;
    if (fd < 0 || ftruncate(fd, (off_t)size) != 0) {
        if (fd >= 0) {
            close(fd);
        }
        free(m);
        return rt_fail(ACL_ERROR_RT_MEMORY_ALLOCATION, "%s: cannot create %zu bytes of memory (%s)", api, size,
                       strerror(errno));
    }
    m->fd = fd;
    m->size = size;
    m->prop = *prop;
    pthread_mutex_lock(&rt_lock);
    m->next = physicals;
    physicals = m;
    pthread_mutex_unlock(&rt_lock);
    *handle = m;
    return ACL_SUCCESS;
}

aclError aclrtFreePhysical(aclrtDrvMemHandle handle)
{
    pthread_mutex_lock(&rt_lock);
    struct physical *m = find_physical_locked(handle);
    int busy = m != NULL && m->maps > 0;
    if (m != NULL && !busy) {
        struct physical **link = &physicals;
        while (*link != m) {
            link = &(*link)->next;
        }
        *link = m->next;
    }
    pthread_mutex_unlock(&rt_lock);
    if (m == NULL) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "aclrtFreePhysical: %p is not a physical memory handle", handle);
    }
    if (busy) {
        return rt_fail(ACL_ERROR_RT_PARAM_INVALID, "aclrtFreePhysical: the memory is still mapped (aclrtUnmapMem first)");
    }
    close(m->fd);
    free(m);
    return ACL_SUCCESS;
}

aclError aclrtMemGetAllocationPropertiesFromHandle(aclrtDrvMemHandle handle, aclrtPhysicalMemProp *prop)
{
    if (prop == NULL) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "aclrtMemGetAllocationPropertiesFromHandle: prop must not be NULL");
    }
    pthread_mutex_lock(&rt_lock);
    struct physical *m = find_physical_locked(handle);
    if (m != NULL) {
        *prop = m->prop;
    }
    pthread_mutex_unlock(&rt_lock);
    return m != NULL ? ACL_SUCCESS
                     : rt_fail(ACL_ERROR_INVALID_PARAM, "aclrtMemGetAllocationPropertiesFromHandle: %p is not a handle",
                               handle);
}

aclError aclrtMapMem(void *virPtr, size_t size, size_t offset, aclrtDrvMemHandle handle, uint64_t flags)
{
    const char *api = "aclrtMapMem";
    (void)flags;
    struct mapping *map = malloc(sizeof *map);
    if (map == NULL) {
        return rt_fail(ACL_ERROR_RT_MEMORY_ALLOCATION, "%s: out of host memory", api);
    }
    aclError err = ACL_SUCCESS;
    pthread_mutex_lock(&rt_lock);
    struct physical *m = find_physical_locked(handle);
    uintptr_t base;
    size_t len;
    int device;
    enum rt_range_kind kind;
    if (m == NULL) {
        err = rt_fail(ACL_ERROR_INVALID_PARAM, "%s: %p is not a physical memory handle", api, handle);
    } else if (size == 0 || size % VMM_GRANULARITY != 0 || offset % VMM_GRANULARITY != 0 || offset > m->size ||
               size > m->size - offset) {
        err = rt_fail(ACL_ERROR_INVALID_PARAM, "%s: size and offset must be multiples of %zu inside the physical memory",
                      api, VMM_GRANULARITY);
    } else if (reservation_of_locked((uintptr_t)virPtr, size) == NULL) {
        err = rt_fail(ACL_ERROR_INVALID_PARAM, "%s: [%p, +%zu) is not inside a reserved address range", api, virPtr,
                      size);
    } else if (rt_range_info_locked(virPtr, &base, &len, &device, &kind) ||
               rt_range_info_locked((char *)virPtr + size - 1, &base, &len, &device, &kind)) {
        err = rt_fail(ACL_ERROR_INVALID_PARAM, "%s: part of [%p, +%zu) is mapped already", api, virPtr, size);
    } else if (mmap(virPtr, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, m->fd, (off_t)offset) == MAP_FAILED) {
        err = rt_fail(ACL_ERROR_RT_MEMORY_ALLOCATION, "%s: cannot map the memory (%s)", api, strerror(errno));
    } else if (rt_add_range_locked((uintptr_t)virPtr, size, (int)m->prop.location.id, RT_RANGE_MAPPED) != ACL_SUCCESS) {
        mmap(virPtr, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1, 0);
        err = rt_fail(ACL_ERROR_RT_MEMORY_ALLOCATION, "%s: out of host memory", api);
    } else {
        map->base = (uintptr_t)virPtr;
        map->size = size;
        map->phys = m;
        map->access = ACL_RT_MEM_ACCESS_FLAGS_READWRITE;
        map->next = mappings;
        mappings = map;
        m->maps++;
        map = NULL;
    }
    pthread_mutex_unlock(&rt_lock);
    free(map);
    return err;
}

aclError aclrtUnmapMem(void *virPtr)
{
    pthread_mutex_lock(&rt_lock);
    struct mapping **link = virPtr != NULL ? find_mapping_locked((uintptr_t)virPtr) : NULL;
    struct mapping *map = link != NULL ? *link : NULL;
    if (map != NULL) {
        *link = map->next;
        map->phys->maps--;
        rt_remove_range_locked(map->base, RT_RANGE_MAPPED);
        /* Back to reserved, inaccessible address space. */
        mmap((void *)map->base, map->size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1, 0);
    }
    pthread_mutex_unlock(&rt_lock);
    if (map == NULL) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "aclrtUnmapMem: %p is not the start of a mapping", virPtr);
    }
    free(map);
    return ACL_SUCCESS;
}

aclError aclrtMemSetAccess(void *virPtr, size_t size, aclrtMemAccessDesc *desc, size_t count)
{
    const char *api = "aclrtMemSetAccess";
    if (desc == NULL || count == 0) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "%s: desc must not be NULL and count > 0", api);
    }
    uint64_t flags = desc[count - 1].flags; /* one device: the last word on it wins */
    int prot = flags == ACL_RT_MEM_ACCESS_FLAGS_READWRITE ? PROT_READ | PROT_WRITE
               : flags == ACL_RT_MEM_ACCESS_FLAGS_READ    ? PROT_READ
               : flags == ACL_RT_MEM_ACCESS_FLAGS_NONE    ? PROT_NONE
                                                          : -1;
    if (prot < 0) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "%s: unknown access flags %llu", api, (unsigned long long)flags);
    }
    pthread_mutex_lock(&rt_lock);
    struct mapping **link = virPtr != NULL ? find_mapping_locked((uintptr_t)virPtr) : NULL;
    struct mapping *map = link != NULL ? *link : NULL;
    aclError err = ACL_SUCCESS;
    if (map == NULL || size == 0 || size > map->size) {
        err = rt_fail(ACL_ERROR_INVALID_PARAM, "%s: [%p, +%zu) is not inside one mapping starting there", api, virPtr,
                      size);
    } else if (mprotect(virPtr, size, prot) != 0) {
        err = rt_fail(ACL_ERROR_RT_PARAM_INVALID, "%s: cannot change the access (%s)", api, strerror(errno));
    } else {
        map->access = flags;
    }
    pthread_mutex_unlock(&rt_lock);
    return err;
}

aclError aclrtMemGetAccess(void *virPtr, aclrtMemLocation *location, uint64_t *flag)
{
    if (location == NULL || flag == NULL) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "aclrtMemGetAccess: location and flag must not be NULL");
    }
    pthread_mutex_lock(&rt_lock);
    struct mapping *found = NULL;
    for (struct mapping *m = mappings; m != NULL; m = m->next) {
        if ((uintptr_t)virPtr - m->base < m->size) {
            found = m;
        }
    }
    if (found != NULL) {
        *location = found->phys->prop.location;
        *flag = found->access;
    }
    pthread_mutex_unlock(&rt_lock);
    return found != NULL ? ACL_SUCCESS
                         : rt_fail(ACL_ERROR_INVALID_PARAM, "aclrtMemGetAccess: %p is not mapped memory", virPtr);
}

/* ---- usage -------------------------------------------------------------------------------- */

/* One module uses device memory on the simulator: aclrtMalloc's callers. */
aclError aclrtGetMemUsageInfo(int32_t deviceId, aclrtMemUsageInfo *memUsageInfo, size_t inputNum, size_t *outputNum)
{
    if (memUsageInfo == NULL || outputNum == NULL || inputNum == 0) {
        return rt_fail(ACL_ERROR_INVALID_PARAM,
                       "aclrtGetMemUsageInfo: memUsageInfo and outputNum must not be NULL and inputNum > 0");
    }
    if (deviceId < 0 || deviceId >= rt_device_count()) {
        return rt_fail(ACL_ERROR_RT_INVALID_DEVICEID, "aclrtGetMemUsageInfo: invalid device id %d", (int)deviceId);
    }
    memset(memUsageInfo, 0, sizeof *memUsageInfo);
    snprintf(memUsageInfo->name, sizeof memUsageInfo->name, "APP");
    pthread_mutex_lock(&rt_lock);
    memUsageInfo->curMemSize = rt_device_memory_used_locked();
    memUsageInfo->memPeakSize = rt_device_memory_peak_locked();
    pthread_mutex_unlock(&rt_lock);
    *outputNum = 1;
    return ACL_SUCCESS;
}

aclError aclrtMemManagedPrefetchBatchAsync(const void **ptrs, size_t *sizes, size_t count,
                                           aclrtMemManagedLocation *prefetchLocs, size_t *prefetchLocIdxs,
                                           size_t numPrefetchLocs, uint64_t flags, aclrtStream stream)
{
    if (ptrs == NULL || sizes == NULL || count == 0 || prefetchLocs == NULL || prefetchLocIdxs == NULL ||
        numPrefetchLocs == 0 || numPrefetchLocs > count) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "aclrtMemManagedPrefetchBatchAsync: the arrays must not be NULL, "
                       "count > 0 and 0 < numPrefetchLocs <= count");
    }
    size_t loc = 0;
    for (size_t i = 0; i < count; i++) {
        while (loc + 1 < numPrefetchLocs && prefetchLocIdxs[loc + 1] <= i) {
            loc++;
        }
        aclError err = aclrtMemManagedPrefetchAsync(ptrs[i], sizes[i], prefetchLocs[loc], (uint32_t)flags, stream);
        if (err != ACL_SUCCESS) {
            return err;
        }
    }
    return ACL_SUCCESS;
}

/* ---- copies described in memory ---------------------------------------------------------- */

/* What aclrtSetMemcpyDesc writes into the caller's descriptor memory. */
struct memcpy_desc {
    uint64_t magic;
    void *src, *dst;
    size_t count;
};
#define DESC_MAGIC 0x61636c73696d6463ull /* "aclsimdc" */

aclError aclrtGetMemcpyDescSize(aclrtMemcpyKind kind, size_t *descSize)
{
    if (descSize == NULL || kind < ACL_MEMCPY_HOST_TO_HOST || kind > ACL_MEMCPY_INTER_DEVICE_TO_DEVICE) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "aclrtGetMemcpyDescSize: descSize must not be NULL and kind known");
    }
    *descSize = sizeof(struct memcpy_desc);
    return ACL_SUCCESS;
}

aclError aclrtSetMemcpyDesc(void *desc, aclrtMemcpyKind kind, void *srcAddr, void *dstAddr, size_t count, void *config)
{
    (void)config;
    if (desc == NULL || srcAddr == NULL || dstAddr == NULL) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "aclrtSetMemcpyDesc: desc, srcAddr and dstAddr must not be NULL");
    }
    if (kind < ACL_MEMCPY_HOST_TO_HOST || kind > ACL_MEMCPY_INTER_DEVICE_TO_DEVICE) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "aclrtSetMemcpyDesc: invalid memcpy kind %d", (int)kind);
    }
    struct memcpy_desc d = {DESC_MAGIC, srcAddr, dstAddr, count};
    /* The descriptor lives in device memory: written like any device write. */
    return rt_memcpy("aclrtSetMemcpyDesc", desc, sizeof d, &d, sizeof d, ACL_MEMCPY_DEFAULT);
}

struct desc_copy_task {
    void *desc;
    aclrtMemcpyKind kind;
};

/* The descriptor is device memory the stream reads when it gets to the copy (work queued
 * before it, a kernel or another copy, may have written it). */
static aclError run_desc_copy(void *ctx)
{
    const char *api = "aclrtMemcpyAsyncWithDesc";
    struct desc_copy_task *c = ctx;
    pthread_mutex_lock(&rt_lock);
    int ok = rt_device_range_ok_locked(c->desc, sizeof(struct memcpy_desc));
    pthread_mutex_unlock(&rt_lock);
    if (!ok) {
        return rt_fail(ACL_ERROR_RT_DEVICE_MEM_ERROR, "%s: the descriptor at %p was freed before the copy ran", api,
                       c->desc);
    }
    struct memcpy_desc d;
    memcpy(&d, c->desc, sizeof d);
    if (d.magic != DESC_MAGIC) {
        return rt_fail(ACL_ERROR_RT_PARAM_INVALID, "%s: %p held no descriptor (aclrtSetMemcpyDesc) when the copy ran",
                       api, c->desc);
    }
    return rt_memcpy(api, d.dst, d.count, d.src, d.count, c->kind);
}

aclError aclrtMemcpyAsyncWithDesc(void *desc, aclrtMemcpyKind kind, aclrtStream stream)
{
    const char *api = "aclrtMemcpyAsyncWithDesc";
    if (desc == NULL) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "%s: desc must not be NULL", api);
    }
    if (kind < ACL_MEMCPY_HOST_TO_HOST || kind > ACL_MEMCPY_INTER_DEVICE_TO_DEVICE) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "%s: invalid memcpy kind %d", api, (int)kind);
    }
    struct desc_copy_task *c = malloc(sizeof *c);
    if (c == NULL) {
        return rt_fail(ACL_ERROR_RT_MEMORY_ALLOCATION, "%s: out of host memory", api);
    }
    *c = (struct desc_copy_task){desc, kind};
    aclError err = ACL_SUCCESS;
    pthread_mutex_lock(&rt_lock);
    if (!rt_device_range_ok_locked(desc, sizeof(struct memcpy_desc))) {
        err = rt_fail(ACL_ERROR_INVALID_PARAM, "%s: desc %p does not hold a descriptor's %zu bytes of device memory",
                      api, desc, sizeof(struct memcpy_desc));
    } else {
        struct rt_stream *s = rt_resolve_stream_locked(stream, api, &err);
        if (s != NULL) {
            err = rt_enqueue_locked(s, run_desc_copy, free, c);
            if (err != ACL_SUCCESS) {
                aclsim_set_error("%s: out of host memory", api);
            }
        }
    }
    pthread_mutex_unlock(&rt_lock);
    if (err != ACL_SUCCESS) {
        free(c);
    }
    return rt_error(err);
}

/* ---- copies that wait for unpinned host memory --------------------------------------------- */

/* 1 if p is host memory the runtime does not know (neither aclrtMallocHost nor registered nor
 * device memory): CANN copies it before returning. */
static int unpinned_host(const void *p)
{
    uintptr_t base = 0;
    size_t size = 0;
    int device = 0;
    enum rt_range_kind kind = RT_RANGE_DEVICE;
    pthread_mutex_lock(&rt_lock);
    int known = rt_range_info_locked(p, &base, &size, &device, &kind);
    pthread_mutex_unlock(&rt_lock);
    return !known;
}

/* aclrtMemcpyAsync, but a copy from or to unpinned host memory is complete when the call
 * returns (the stream runs up to it); host-to-host copies cannot be asynchronous on an A2. */
aclError aclrtMemcpyAsyncWithCondition(void *dst, size_t destMax, const void *src, size_t count, aclrtMemcpyKind kind,
                                       aclrtStream stream)
{
    const char *api = "aclrtMemcpyAsyncWithCondition";
    if (kind == ACL_MEMCPY_HOST_TO_HOST) {
        return rt_fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "%s: a host-to-host copy cannot be asynchronous "
                       "(ACL_MEMCPY_HOST_TO_HOST)", api);
    }
    aclError err = rt_memcpy_async(api, dst, destMax, src, count, kind, stream);
    if (err != ACL_SUCCESS || !(unpinned_host(dst) || unpinned_host(src))) {
        return err;
    }
    pthread_mutex_lock(&rt_lock);
    struct rt_stream *s = rt_resolve_stream_locked(stream, api, &err);
    int run_now = s != NULL && !s->capturing; /* a captured copy is recorded, not run */
    if (run_now) {
        rt_stream_use_locked(s);
    }
    pthread_mutex_unlock(&rt_lock);
    if (!run_now) {
        return rt_error(err);
    }
    err = rt_drain(s);
    rt_stream_done(s);
    return rt_error(err);
}

/* ---- waits on a value in device memory ----------------------------------------------------- */

/* aclrtValueWait's comparisons (CANN's ACL_STREAM_WAIT_VALUE_*). */
enum { WAIT_GEQ = 0, WAIT_EQ = 1, WAIT_AND = 2, WAIT_NOR = 3 };

static int value_reached(uint64_t cur, uint64_t value, uint32_t flag)
{
    switch (flag) {
    case WAIT_GEQ:
        return (int64_t)(cur - value) >= 0;
    case WAIT_EQ:
        return cur == value;
    case WAIT_AND:
        return (cur & value) != 0;
    default:
        return ~(cur | value) != 0;
    }
}

/* The stream goes on once the value is there.  Until then the device's other streams run
 * (the writer is usually queued on one of them); with none left to run, the wait polls for
 * another thread's write, until the synchronisation's deadline if it has one. */
static aclError run_value_wait(void *ctx)
{
    struct rt_value_task *v = ctx;
    const struct rt_task *self = rt_running_task();
    int device = self != NULL ? self->device : -1;
    for (;;) {
        pthread_mutex_lock(&rt_lock);
        uint64_t *addr = v->addr, value = v->value;
        uint32_t flag = v->flag;
        int ok = rt_device_range_ok_locked(addr, sizeof *addr);
        uint64_t cur = ok ? __atomic_load_n(addr, __ATOMIC_ACQUIRE) : 0;
        pthread_mutex_unlock(&rt_lock);
        if (!ok) {
            return rt_fail(ACL_ERROR_RT_DEVICE_MEM_ERROR, "aclrtValueWait: device memory was freed before the wait ran");
        }
        if (value_reached(cur, value, flag)) {
            return ACL_SUCCESS;
        }
        if (rt_run_other_work(device)) {
            continue;
        }
        int64_t deadline = rt_task_deadline();
        if (deadline >= 0 && rt_deadline(0) >= deadline) {
            return RT_TASK_NOT_DONE;
        }
        struct timespec pause = {0, 1000000}; /* 1 ms */
        nanosleep(&pause, NULL);
    }
}

aclError aclrtValueWait(void *devAddr, uint64_t value, uint32_t flag, aclrtStream stream)
{
    const char *api = "aclrtValueWait";
    if (flag > WAIT_NOR || ((uintptr_t)devAddr & 7u) != 0) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "%s: flag must be 0..3 (ACL_STREAM_WAIT_VALUE_*) and devAddr 8-byte "
                       "aligned, got flag %u and %p", api, (unsigned)flag, devAddr);
    }
    struct rt_value_task *v = malloc(sizeof *v);
    if (v == NULL) {
        return rt_fail(ACL_ERROR_RT_MEMORY_ALLOCATION, "%s: out of host memory", api);
    }
    *v = (struct rt_value_task){devAddr, value, flag};
    aclError err = ACL_SUCCESS;
    pthread_mutex_lock(&rt_lock);
    if (!rt_device_range_ok_locked(devAddr, sizeof(uint64_t))) {
        err = rt_fail(ACL_ERROR_INVALID_PARAM, "%s: devAddr %p does not hold 8 bytes of device memory", api, devAddr);
    } else {
        struct rt_stream *s = rt_resolve_stream_locked(stream, api, &err);
        if (s != NULL) {
            err = rt_enqueue_typed_locked(s, ACL_MODEL_RI_TASK_VALUE_WAIT, run_value_wait, free, v);
        }
    }
    pthread_mutex_unlock(&rt_lock);
    if (err != ACL_SUCCESS) {
        free(v);
    }
    return rt_error(err);
}

/* ---- reductions and value writes queued on a stream -------------------------------------- */

struct reduce_task {
    void *dst;
    const void *src;
    uint64_t count; /* bytes */
    aclrtReduceKind kind;
    aclDataType type;
};

static float bf16_to_float(uint16_t v)
{
    uint32_t bits = (uint32_t)v << 16;
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

static uint16_t float_to_bf16(float f)
{
    uint32_t bits;
    memcpy(&bits, &f, sizeof bits);
    if ((bits & 0x7fffffffu) > 0x7f800000u) {
        return (uint16_t)((bits >> 16) | 0x40u); /* a quiet NaN */
    }
    bits += 0x7fffu + ((bits >> 16) & 1u); /* round to nearest, ties to even */
    return (uint16_t)(bits >> 16);
}

static double combine(aclrtReduceKind kind, double a, double b)
{
    return kind == ACL_RT_MEMCPY_SDMA_AUTOMATIC_SUM ? a + b : kind == ACL_RT_MEMCPY_SDMA_AUTOMATIC_MAX ? (a > b ? a : b)
                                                                                                  : (a < b ? a : b);
}

#define REDUCE_INTS(T)                                                                                                 \
    do {                                                                                                               \
        T *d = r->dst;                                                                                                 \
        const T *s = r->src;                                                                                           \
        for (size_t i = 0; i < n; i++) {                                                                               \
            /* Sums wrap as the integer type does in two's complement. */                                             \
            d[i] = r->kind == ACL_RT_MEMCPY_SDMA_AUTOMATIC_SUM ? (T)((uint64_t)d[i] + (uint64_t)s[i])                 \
                                                               : (T)combine(r->kind, (double)d[i], (double)s[i]);      \
        }                                                                                                              \
    } while (0)

static size_t reduce_element_size(aclDataType type)
{
    switch (type) {
    case ACL_INT8:
        return 1;
    case ACL_INT16:
    case ACL_FLOAT16:
    case ACL_BF16:
        return 2;
    case ACL_INT32:
    case ACL_FLOAT:
        return 4;
    default:
        return 0;
    }
}

static aclError run_reduce(void *ctx)
{
    struct reduce_task *r = ctx;
    pthread_mutex_lock(&rt_lock);
    int ok = rt_device_range_ok_locked(r->dst, r->count) && rt_device_range_ok_locked(r->src, r->count);
    pthread_mutex_unlock(&rt_lock);
    if (!ok) {
        return rt_fail(ACL_ERROR_RT_DEVICE_MEM_ERROR, "aclrtReduceAsync: device memory was freed before the queued "
                       "operation ran");
    }
    aclsim_device_prepare(r->dst);
    aclsim_device_prepare(r->src);
    size_t n = (size_t)(r->count / reduce_element_size(r->type));
    switch (r->type) {
    case ACL_INT8:
        REDUCE_INTS(int8_t);
        break;
    case ACL_INT16:
        REDUCE_INTS(int16_t);
        break;
    case ACL_INT32:
        REDUCE_INTS(int32_t);
        break;
    case ACL_FLOAT: {
        float *d = r->dst;
        const float *s = r->src;
        for (size_t i = 0; i < n; i++) {
            d[i] = r->kind == ACL_RT_MEMCPY_SDMA_AUTOMATIC_SUM ? d[i] + s[i] : (float)combine(r->kind, d[i], s[i]);
        }
        break;
    }
    case ACL_FLOAT16: {
        aclFloat16 *d = r->dst;
        const aclFloat16 *s = r->src;
        for (size_t i = 0; i < n; i++) {
            d[i] = aclFloatToFloat16((float)combine(r->kind, aclFloat16ToFloat(d[i]), aclFloat16ToFloat(s[i])));
        }
        break;
    }
    default: {
        uint16_t *d = r->dst;
        const uint16_t *s = r->src;
        for (size_t i = 0; i < n; i++) {
            d[i] = float_to_bf16((float)combine(r->kind, bf16_to_float(d[i]), bf16_to_float(s[i])));
        }
        break;
    }
    }
    return ACL_SUCCESS;
}

/* dst = dst (kind) src, element-wise over count bytes of type. */
aclError aclrtReduceAsync(void *dst, const void *src, uint64_t count, aclrtReduceKind kind, aclDataType type,
                          aclrtStream stream, void *reserve)
{
    const char *api = "aclrtReduceAsync";
    if (reserve != NULL) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "%s: reserve must be NULL", api);
    }
    if (kind == ACL_RT_MEMCPY_SDMA_AUTOMATIC_EQUAL) {
        return rt_fail(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "%s: ACL_RT_MEMCPY_SDMA_AUTOMATIC_EQUAL is not supported", api);
    }
    if (kind < ACL_RT_MEMCPY_SDMA_AUTOMATIC_SUM || kind > ACL_RT_MEMCPY_SDMA_AUTOMATIC_MIN) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "%s: unknown reduce kind %d", api, (int)kind);
    }
    size_t element = reduce_element_size(type);
    if (element == 0) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "%s: type %d is not one of int8, int16, int32, float16, float32, bfloat16",
                       api, (int)type);
    }
    if (count % element != 0) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "%s: count (%llu bytes) is not a whole number of elements", api,
                       (unsigned long long)count);
    }
    struct reduce_task *r = malloc(sizeof *r);
    if (r == NULL) {
        return rt_fail(ACL_ERROR_RT_MEMORY_ALLOCATION, "%s: out of host memory", api);
    }
    *r = (struct reduce_task){dst, src, count, kind, type};
    aclError err = ACL_SUCCESS;
    pthread_mutex_lock(&rt_lock);
    if (!rt_device_range_ok_locked(dst, count) || !rt_device_range_ok_locked(src, count)) {
        err = rt_fail(ACL_ERROR_INVALID_PARAM, "%s: dst and src must each hold count bytes of device memory", api);
    } else {
        struct rt_stream *s = rt_resolve_stream_locked(stream, api, &err);
        if (s != NULL) {
            err = rt_enqueue_locked(s, run_reduce, free, r);
        }
    }
    pthread_mutex_unlock(&rt_lock);
    if (err != ACL_SUCCESS) {
        free(r);
    }
    return rt_error(err);
}

/* The task's parameters are read under rt_lock when it runs: a model's aclmdlRIUpdate may
 * change them between replays (capture.c). */
static aclError run_value_write(void *ctx)
{
    struct rt_value_task *v = ctx;
    pthread_mutex_lock(&rt_lock);
    uint64_t *addr = v->addr, value = v->value;
    int ok = rt_device_range_ok_locked(addr, sizeof *addr);
    pthread_mutex_unlock(&rt_lock);
    if (!ok) {
        return rt_fail(ACL_ERROR_RT_DEVICE_MEM_ERROR, "aclrtValueWrite: device memory was freed before the write ran");
    }
    aclsim_device_prepare(addr);
    *addr = value;
    return ACL_SUCCESS;
}

/* Writes the 64-bit value at devAddr when the stream gets there. */
aclError aclrtValueWrite(void *devAddr, uint64_t value, uint32_t flag, aclrtStream stream)
{
    const char *api = "aclrtValueWrite";
    if (flag != 0 || ((uintptr_t)devAddr & 7u) != 0) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "%s: flag must be 0 and devAddr 8-byte aligned", api);
    }
    struct rt_value_task *v = malloc(sizeof *v);
    if (v == NULL) {
        return rt_fail(ACL_ERROR_RT_MEMORY_ALLOCATION, "%s: out of host memory", api);
    }
    *v = (struct rt_value_task){devAddr, value, flag};
    aclError err = ACL_SUCCESS;
    pthread_mutex_lock(&rt_lock);
    if (!rt_device_range_ok_locked(devAddr, sizeof(uint64_t))) {
        err = rt_fail(ACL_ERROR_INVALID_PARAM, "%s: devAddr %p does not hold 8 bytes of device memory", api, devAddr);
    } else {
        struct rt_stream *s = rt_resolve_stream_locked(stream, api, &err);
        if (s != NULL) {
            err = rt_enqueue_typed_locked(s, ACL_MODEL_RI_TASK_VALUE_WRITE, run_value_write, free, v);
        }
    }
    pthread_mutex_unlock(&rt_lock);
    if (err != ACL_SUCCESS) {
        free(v);
    }
    return rt_error(err);
}
