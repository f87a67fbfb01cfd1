/*
 * Device and host memory.
 *
 * "Device" memory is host memory handed out by aclrtMalloc and remembered in a table of
 * live blocks, so that copies, memsets, frees and the operators can check that an address
 * range really is device memory (no crash on a bad pointer, an error instead).  As on CANN
 * the size is rounded up to a multiple of 32 bytes plus 32 bytes of padding and the address
 * is 32-byte aligned; range checks use the size that was asked for.  New blocks are filled
 * with 0xFF bytes (NaN for floating types) so that output a kernel forgot to write shows.
 * The fill is done when the block is first used, not in aclrtMalloc: a copy or memset that
 * writes the block whole from its start (an input uploaded by aclrtMemcpy) fills only the
 * padding after it, as the bytes it writes would replace the fill anyway; anything else that
 * reads or writes the block first (a partial copy or memset, a copy from it, a kernel given it
 * as a tensor or workspace, aclDumpOpTensors) fills it whole first (aclsim_device_prepare).
 * Nobody can tell the difference: device memory is read only through those.
 *
 * aclrtMemcpy / aclrtMemset are synchronous and do not wait for queued stream work;
 * the Async variants are queued and re-check their device ranges when they run.
 *
 * Freed blocks are kept in a small cache and handed out again to an allocation of the same
 * rounded size: a fresh block costs one page fault per 4 KiB page on its first fill (and the
 * C library returns large blocks to the kernel on free), which made an operator call that
 * allocates its output and workspace several times slower than its kernel.  A cached block is
 * not device memory (it is not in the table of live blocks: a stale pointer into it is refused
 * as before), is not counted as used device memory, is refilled with 0xFF when reused, and is
 * marked inaccessible for AddressSanitizer and valgrind while it waits.  The cache is emptied
 * by aclFinalize and whenever the C library cannot allocate.
 */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE /* madvise(MADV_HUGEPAGE) */

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../kernels/parallel.h"
#include "runtime_internal.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#define CACHE_HIDE(p, n) ASAN_POISON_MEMORY_REGION((p), (n))
#define CACHE_SHOW(p, n) ASAN_UNPOISON_MEMORY_REGION((p), (n))
#elif defined(__has_include)
#if __has_include(<valgrind/memcheck.h>)
#include <valgrind/memcheck.h> /* header-only client requests: no-ops outside valgrind */
#define CACHE_HIDE(p, n) ((void)VALGRIND_MAKE_MEM_NOACCESS((p), (n)))
#define CACHE_SHOW(p, n) ((void)VALGRIND_MAKE_MEM_UNDEFINED((p), (n)))
#endif
#endif
#ifndef CACHE_HIDE
#define CACHE_HIDE(p, n) ((void)(p), (void)(n))
#define CACHE_SHOW(p, n) ((void)(p), (void)(n))
#endif

struct block {
    uintptr_t base;
    size_t size;
    int device;
    bool unfilled; /* the 0xFF fill is still to be done (see the top of this file) */
    bool mapped;   /* virtual memory mapped by aclrtMapMem (memory_ext.c), not aclrtMalloc's */
    void *managed; /* memory_ext.c's advice of an aclrtMemAllocManaged block (one malloc), or NULL */
};

/* Host memory registered with aclrtHostRegister: host memory for copies, and usable where a
 * device address is expected (a kernel's tensors), as the address CANN hands back is. */
struct range {
    uintptr_t base;
    size_t size;
    int device;
};
static struct range *registered;
static size_t registered_count;

/* Large copies and fills go in pieces of this many bytes: the C library moves a single large
 * block with non-temporal stores, which ran 1.4x slower here than pieces that fit the L2 cache
 * (38.5 MB uploaded in 2.1 ms as one memcpy, 1.5 ms in pieces of 64 KiB - 512 KiB, medians of
 * 15 rounds, alternating). */
#define PIECE ((size_t)256 << 10)

/* A large copy or fill is shared out to the kernel threads by pieces as aclsim_byte_workers
 * says (kernels/parallel.h: from ACLSIM_PARALLEL_MIN_BYTES on, not on a busy machine). */

typedef struct {
    char *dst;
    const char *src; /* NULL: fill with value */
    size_t n;
    int value;
} piece_job;

/* memcpy(dst, src, n) of ranges that do not overlap, as a loop of 32-byte loads and stores
 * (compiled for AVX2 too), the stores aligned to 32 bytes.  glibc 2.36's memcpy moves a piece
 * of this size with `rep movsb`, which on this AMD EPYC (Zen 4) ran 2-4x slower whenever the
 * source and destination are not at the same offset modulo 32 bytes, the common case here: a
 * large NumPy array starts 16 bytes into a page, a device block 64.  Pieces of 256 KiB, medians
 * of 15-41 rounds interleaved in one process, 25.7 MB from page + 16 to page + 64: memcpy
 * 4.5-6.4 ms, this loop 1.9-2.1; 4 MB (in L3): 0.35 against 0.12; at equal offsets both alike
 * (1.6-2.1 and 0.11-0.18 ms). */
ACLSIM_AVX2_CLONES static void copy_piece(char *restrict dst, const char *restrict src, size_t n)
{
    typedef unsigned char vec __attribute__((vector_size(32)));
    size_t head = (size_t)(-(uintptr_t)dst & 31);
    if (head > n) {
        head = n;
    }
    memcpy(dst, src, head);
    dst += head;
    src += head;
    n -= head;
    size_t i = 0;
    for (; i + 128 <= n; i += 128) {
        vec a, b, c, d;
        memcpy(&a, src + i, 32);
        memcpy(&b, src + i + 32, 32);
        memcpy(&c, src + i + 64, 32);
        memcpy(&d, src + i + 96, 32);
        *(vec *)(void *)(dst + i) = a;
        *(vec *)(void *)(dst + i + 32) = b;
        *(vec *)(void *)(dst + i + 64) = c;
        *(vec *)(void *)(dst + i + 96) = d;
    }
    memcpy(dst + i, src + i, n - i);
}

/* aclsim_parallel's share: the pieces [begin, end). */
static void move_pieces(void *ctx, int64_t begin, int64_t end, int worker)
{
    (void)worker;
    const piece_job *j = ctx;
    for (size_t at = (size_t)begin * PIECE; at < (size_t)end * PIECE && at < j->n; at += PIECE) {
        size_t len = j->n - at < PIECE ? j->n - at : PIECE;
        if (j->src != NULL) {
            copy_piece(j->dst + at, j->src + at, len);
        } else {
            memset(j->dst + at, j->value, len);
        }
    }
}

static void move_bytes(char *dst, const char *src, int value, size_t n)
{
    piece_job j = {dst, src, n, value};
    int64_t pieces = (int64_t)((n + PIECE - 1) / PIECE);
    aclsim_parallel(pieces, aclsim_byte_workers(pieces, (int64_t)n), move_pieces, &j);
}

/* memmove(dst, src, n), in pieces when the ranges do not overlap. */
static void copy_bytes(void *dst, const void *src, size_t n)
{
    uintptr_t d = (uintptr_t)dst, s = (uintptr_t)src;
    if (d < s + n && s < d + n) {
        memmove(dst, src, n);
    } else if (n <= PIECE) {
        copy_piece(dst, src, n);
    } else {
        move_bytes(dst, src, 0, n);
    }
}

/* memset(dst, value, n), in pieces. */
static void set_bytes(void *dst, int value, size_t n)
{
    move_bytes(dst, NULL, value, n);
}

/* Bytes of the block handed out for `size` requested: rounded up to 32, plus 32 of padding. */
static size_t block_capacity_of(size_t size)
{
    return ((size + 31) & ~(size_t)31) + 32;
}

/* Sorted by base address. */
static struct block *blocks;
static size_t block_count, block_capacity;
static uint64_t device_bytes;
static uint64_t device_peak; /* the most device_bytes has been */

struct host_block {
    struct host_block *next;
    void *ptr;
    size_t size;
};

static struct host_block *host_blocks;

/* Freed device blocks waiting for reuse (under rt_lock), oldest first.  Reuse needs the same
 * rounded capacity: an operator called again on the same shapes asks for the same sizes.
 * The bounds keep the memory the process holds idle small: at most CACHE_SLOTS blocks (a
 * call allocates a handful - inputs, outputs, workspace - so 32 slots cover several
 * alternating calls, and a linear search over them costs nothing next to an allocation), and
 * at most cache_limit() bytes: 1/8 of the simulated device (itself half the machine) and never
 * more than 1 GiB, which holds the blocks of one call of the largest case of scripts/bench.py
 * (reflection pad p1 on (8,64,224,224): four blocks of ~100 MB, its workspace included) while
 * the binding still holds the previous call's (it frees them one call later). */
#define CACHE_SLOTS 32
struct cached_block {
    void *ptr;
    size_t capacity;
};
static struct cached_block cache[CACHE_SLOTS];
static size_t cache_count;
static uint64_t cache_bytes;

static uint64_t cache_limit(void)
{
    uint64_t limit = rt_device_memory_total() / 8, cap = (uint64_t)1 << 30;
    return limit < cap ? limit : cap;
}

/* Transparent huge pages for a large fresh block, as NumPy does for its arrays of >= 4 MiB
 * (numpy/_core/src/multiarray/alloc.c): on a system whose THP setting is "madvise" the first
 * fill then takes one fault per 2 MiB instead of one per 4 KiB page.  Advice only: failure
 * changes nothing. */
static void hugepage_advice(void *p, size_t capacity)
{
#ifdef MADV_HUGEPAGE
    long page = sysconf(_SC_PAGESIZE);
    if (p == NULL || capacity < ((size_t)4 << 20) || page <= 0) {
        return;
    }
    uintptr_t start = ((uintptr_t)p + (uintptr_t)page - 1) & ~((uintptr_t)page - 1);
    uintptr_t end = ((uintptr_t)p + capacity) & ~((uintptr_t)page - 1);
    if (end > start) {
        (void)madvise((void *)start, end - start, MADV_HUGEPAGE);
    }
#else
    (void)p;
    (void)capacity;
#endif
}

/* With rt_lock held: a cached block of exactly `capacity` bytes, or NULL. */
static void *cache_take_locked(size_t capacity)
{
    for (size_t i = cache_count; i-- > 0;) { /* the newest first: its pages are the warmest */
        if (cache[i].capacity == capacity) {
            void *p = cache[i].ptr;
            memmove(&cache[i], &cache[i + 1], (cache_count - i - 1) * sizeof *cache);
            cache_count--;
            cache_bytes -= capacity;
            CACHE_SHOW(p, capacity);
            return p;
        }
    }
    return NULL;
}

/* With rt_lock held: keep a freed block for reuse, or free it when it does not fit; the
 * oldest blocks make room.  Never fails. */
static void cache_put_locked(void *p, size_t capacity)
{
    uint64_t limit = cache_limit();
    if (capacity > limit / 2) { /* one block may not take the whole cache */
        free(p);
        return;
    }
    size_t drop = 0;
    uint64_t bytes = cache_bytes;
    while (drop < cache_count && (cache_count - drop == CACHE_SLOTS || bytes + capacity > limit)) {
        bytes -= cache[drop].capacity;
        CACHE_SHOW(cache[drop].ptr, cache[drop].capacity);
        free(cache[drop].ptr);
        drop++;
    }
    memmove(&cache[0], &cache[drop], (cache_count - drop) * sizeof *cache);
    cache_count -= drop;
    CACHE_HIDE(p, capacity);
    cache[cache_count].ptr = p;
    cache[cache_count].capacity = capacity;
    cache_count++;
    cache_bytes = bytes + capacity;
}

void rt_memory_release_cache_locked(void)
{
    for (size_t i = 0; i < cache_count; i++) {
        CACHE_SHOW(cache[i].ptr, cache[i].capacity);
        free(cache[i].ptr);
    }
    cache_count = 0;
    cache_bytes = 0;
}

/* A decimal byte count: digits only, no sign, no suffix, no overflow.  0 if it is not one. */
static uint64_t parse_bytes(const char *text)
{
    uint64_t v = 0;
    if (text == NULL || *text < '0' || *text > '9') {
        return 0;
    }
    for (; *text >= '0' && *text <= '9'; text++) {
        if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, (uint64_t)(*text - '0'), &v)) {
            return 0;
        }
    }
    return *text == '\0' || *text == '\n' ? v : 0;
}

/* The first line of a cgroup limit file as bytes; 0 when absent or "max" (no limit). */
static uint64_t cgroup_limit(const char *path)
{
    char line[64];
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        return 0;
    }
    char *got = fgets(line, sizeof line, f);
    fclose(f);
    return got != NULL ? parse_bytes(line) : 0;
}

uint64_t aclsim_machine_memory(void)
{
    static _Atomic uint64_t cached;
    uint64_t m = atomic_load_explicit(&cached, memory_order_relaxed);
    if (m != 0) {
        return m;
    }
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    m = (pages > 0 && page > 0) ? (uint64_t)pages * (uint64_t)page : UINT64_MAX;
    static const char *const limits[] = {"/sys/fs/cgroup/memory.max",                   /* cgroup v2 */
                                         "/sys/fs/cgroup/memory/memory.limit_in_bytes"}; /* cgroup v1 */
    for (size_t i = 0; i < sizeof limits / sizeof limits[0]; i++) {
        uint64_t limit = cgroup_limit(limits[i]);
        if (limit != 0 && limit < m) {
            m = limit;
        }
    }
    atomic_store_explicit(&cached, m, memory_order_relaxed);
    return m;
}

/* With rt_lock held.  The rule is written down in aclnn_py/sim/README.md ("Device memory")
 * so that the numpy backend can apply the same one. */
uint64_t rt_device_memory_total(void)
{
    static int known;
    static uint64_t total;
    if (!known) {
        const char *env = getenv(ACLSIM_DEVICE_MEMORY_ENV);
        if (env != NULL && env[0] != '\0') {
            /* An unreadable value leaves 0 bytes, so every allocation fails and says why,
             * rather than silently simulating a device of another size. */
            total = parse_bytes(env);
        } else {
            /* Half of what the process may use: "device" memory is host memory here, and
             * the host side needs room as well, at least for the host copies of what is
             * on the device (every aclrtMemcpy pairs a device block with a host buffer). */
            total = aclsim_machine_memory() / 2;
        }
        if (total > (uint64_t)1 << 48) {
            total = (uint64_t)1 << 48; /* keeps the size arithmetic of a block far from overflow */
        }
        known = 1;
    }
    return total;
}

/* Sets the message of an allocation the size limit refuses. */
static void report_no_room(const char *api, size_t size, uint64_t used)
{
    const char *env = getenv(ACLSIM_DEVICE_MEMORY_ENV);
    uint64_t total = rt_device_memory_total();
    if (env != NULL && env[0] != '\0' && total == 0) {
        aclsim_set_error("%s: cannot allocate %zu bytes: %s=\"%s\" leaves the simulated device no memory (the "
                         "value must be a positive byte count in decimal digits)",
                         api, size, ACLSIM_DEVICE_MEMORY_ENV, env);
        return;
    }
    aclsim_set_error("%s: out of device memory: %zu bytes requested, %llu of %llu in use (the simulated device "
                     "size is %s; see aclnn_py/sim/README.md)",
                     api, size, (unsigned long long)used, (unsigned long long)total,
                     env != NULL && env[0] != '\0' ? "set by " ACLSIM_DEVICE_MEMORY_ENV
                                                    : "half of the machine's memory; set " ACLSIM_DEVICE_MEMORY_ENV
                                                      " to change it");
}

/* In a child after fork(), with rt_lock held by the only thread (state.c): forget every
 * device block (the parent's device memory is not the child's). */
static void forget_after_fork(void)
{
    /* The blocks stay allocated in the child (a stale pointer then reads the child's copy,
     * never freed memory); only the table goes, so none of them is device memory any more. */
    free(blocks);
    blocks = NULL;
    block_count = block_capacity = 0;
    device_bytes = 0;
    rt_counter_set(ACLSIM_CNT_DEVICE_BLOCKS, 0);
    rt_counter_set(ACLSIM_CNT_DEVICE_BYTES, 0);
}

__attribute__((constructor)) static void register_fork_hook(void)
{
    rt_at_fork_child(forget_after_fork);
}

uint64_t rt_device_memory_used_locked(void)
{
    return device_bytes;
}

uint64_t rt_device_memory_peak_locked(void)
{
    return device_peak;
}

/* Index of the block containing p, or -1. */
static long find_block_locked(uintptr_t p)
{
    size_t lo = 0, hi = block_count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (blocks[mid].base <= p) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    if (lo == 0) {
        return -1;
    }
    const struct block *b = &blocks[lo - 1];
    return (p - b->base < b->size) ? (long)(lo - 1) : -1;
}

static long find_registered_locked(uintptr_t p)
{
    for (size_t i = 0; i < registered_count; i++) {
        if (p - registered[i].base < registered[i].size) {
            return (long)i;
        }
    }
    return -1;
}

int rt_device_range_ok_locked(const void *p, uint64_t n)
{
    uintptr_t a = (uintptr_t)p;
    if (p == NULL) {
        return 0;
    }
    long i = find_block_locked(a);
    if (i < 0) {
        long r = find_registered_locked(a);
        return r >= 0 && n <= registered[r].size - (a - registered[r].base);
    }
    const struct block *b = &blocks[i];
    return n <= b->size - (a - b->base);
}

int aclsim_device_range_ok(const void *ptr, uint64_t bytes)
{
    pthread_mutex_lock(&rt_lock);
    int ok = rt_device_range_ok_locked(ptr, bytes);
    pthread_mutex_unlock(&rt_lock);
    return ok;
}

/* With rt_lock held: the 0xFF fill of the block containing p, if still to be done, before
 * anything reads it or writes part of it. */
static void fill_locked(const void *p)
{
    long i = p != NULL ? find_block_locked((uintptr_t)p) : -1;
    if (i >= 0 && blocks[i].unfilled) {
        set_bytes((void *)blocks[i].base, 0xff, block_capacity_of(blocks[i].size));
        blocks[i].unfilled = false;
    }
}

/* With rt_lock held: before the n bytes at p are written.  When they are the whole block from
 * its start, only the padding after them is filled; otherwise the whole block. */
static void prepare_write_locked(void *p, size_t n)
{
    long i = p != NULL ? find_block_locked((uintptr_t)p) : -1;
    if (i < 0 || !blocks[i].unfilled) {
        return;
    }
    struct block *b = &blocks[i];
    if ((uintptr_t)p == b->base && n >= b->size) {
        memset((char *)p + b->size, 0xff, block_capacity_of(b->size) - b->size);
        b->unfilled = false;
    } else {
        fill_locked(p);
    }
}

void aclsim_device_prepare(const void *ptr)
{
    pthread_mutex_lock(&rt_lock);
    fill_locked(ptr);
    pthread_mutex_unlock(&rt_lock);
}

void aclsim_device_prepare_write(void *ptr, uint64_t bytes)
{
    pthread_mutex_lock(&rt_lock);
    prepare_write_locked(ptr, bytes > SIZE_MAX ? SIZE_MAX : (size_t)bytes);
    pthread_mutex_unlock(&rt_lock);
}

static int is_device_locked(const void *p)
{
    return p != NULL && find_block_locked((uintptr_t)p) >= 0;
}

aclError rt_device_malloc(void **devPtr, size_t size, const char *api)
{
    if (devPtr == NULL) {
        aclsim_set_error("%s: devPtr must not be NULL", api);
        return rt_error(ACL_ERROR_INVALID_PARAM);
    }
    if (size == 0) {
        aclsim_set_error("%s: size must be greater than 0", api);
        return rt_error(ACL_ERROR_INVALID_PARAM);
    }
    pthread_mutex_lock(&rt_lock);
    int d = rt_current_device();
    if (d < 0) {
        pthread_mutex_unlock(&rt_lock);
        aclsim_set_error("%s: no device is set on this thread (call aclrtSetDevice first)", api);
        return rt_error(ACL_ERROR_RT_CONTEXT_NULL);
    }
    /* Checked before anything is allocated, so the rounding below cannot overflow either. */
    if (size > rt_device_memory_total() - device_bytes) {
        uint64_t used = device_bytes;
        pthread_mutex_unlock(&rt_lock);
        report_no_room(api, size, used);
        return rt_error(ACL_ERROR_RT_MEMORY_ALLOCATION);
    }
    size_t capacity = block_capacity_of(size);
    if (block_count == block_capacity) {
        size_t cap = block_capacity != 0 ? block_capacity * 2 : 64;
        struct block *grown = realloc(blocks, cap * sizeof *grown);
        if (grown == NULL) {
            pthread_mutex_unlock(&rt_lock);
            aclsim_set_error("%s: out of host memory", api);
            return rt_error(ACL_ERROR_RT_MEMORY_ALLOCATION);
        }
        blocks = grown;
        block_capacity = cap;
    }
    void *p = cache_take_locked(capacity);
    if (p == NULL) {
        p = aligned_alloc(32, capacity);
        hugepage_advice(p, capacity);
    }
    if (p == NULL && cache_count > 0) {
        rt_memory_release_cache_locked();
        p = aligned_alloc(32, capacity);
    }
    if (p == NULL) {
        pthread_mutex_unlock(&rt_lock);
        aclsim_set_error("%s: out of memory allocating %zu bytes", api, size);
        return rt_error(ACL_ERROR_RT_MEMORY_ALLOCATION);
    }
    size_t at = 0, end = block_count; /* the first block above p (blocks are sorted by base) */
    while (at < end) {
        size_t mid = at + (end - at) / 2;
        if (blocks[mid].base < (uintptr_t)p) {
            at = mid + 1;
        } else {
            end = mid;
        }
    }
    memmove(&blocks[at + 1], &blocks[at], (block_count - at) * sizeof *blocks);
    blocks[at].base = (uintptr_t)p;
    blocks[at].size = size;
    blocks[at].device = d;
    blocks[at].unfilled = true; /* filled at its first use */
    blocks[at].mapped = false;
    blocks[at].managed = NULL;
    block_count++;
    device_bytes += size;
    if (device_bytes > device_peak) {
        device_peak = device_bytes;
    }
    pthread_mutex_unlock(&rt_lock);

    aclsim_counter_add(ACLSIM_CNT_DEVICE_BLOCKS, 1);
    aclsim_counter_add(ACLSIM_CNT_DEVICE_BYTES, (int64_t)size);
    *devPtr = p;
    return ACL_SUCCESS;
}

aclError aclrtMalloc(void **devPtr, size_t size, aclrtMemMallocPolicy policy)
{
    (void)policy;
    return rt_device_malloc(devPtr, size, "aclrtMalloc");
}

aclError aclrtMallocAlign32(void **devPtr, size_t size, aclrtMemMallocPolicy policy)
{
    (void)policy;
    return rt_device_malloc(devPtr, size, "aclrtMallocAlign32");
}

aclError aclrtFree(void *devPtr)
{
    if (devPtr == NULL) {
        aclsim_set_error("aclrtFree: devPtr must not be NULL");
        return rt_error(ACL_ERROR_INVALID_PARAM);
    }
    pthread_mutex_lock(&rt_lock);
    long i = find_block_locked((uintptr_t)devPtr);
    if (i < 0 || blocks[i].base != (uintptr_t)devPtr || blocks[i].mapped) {
        pthread_mutex_unlock(&rt_lock);
        aclsim_set_error("aclrtFree: %p is not an address returned by aclrtMalloc (or it was already freed)", devPtr);
        return rt_error(ACL_ERROR_RT_PARAM_INVALID);
    }
    size_t size = blocks[i].size;
    void *managed = blocks[i].managed;
    memmove(&blocks[i], &blocks[i + 1], (block_count - (size_t)i - 1) * sizeof *blocks);
    block_count--;
    device_bytes -= size;
    if (block_count == 0) {
        free(blocks);
        blocks = NULL;
        block_capacity = 0;
    }
    cache_put_locked(devPtr, block_capacity_of(size));
    pthread_mutex_unlock(&rt_lock);
    free(managed);
    aclsim_counter_add(ACLSIM_CNT_DEVICE_BLOCKS, -1);
    aclsim_counter_add(ACLSIM_CNT_DEVICE_BYTES, -(int64_t)size);
    return ACL_SUCCESS;
}

aclError aclrtMallocHost(void **hostPtr, size_t size)
{
    if (hostPtr == NULL || size == 0) {
        aclsim_set_error("aclrtMallocHost: hostPtr must not be NULL and size must be greater than 0");
        return rt_error(ACL_ERROR_INVALID_PARAM);
    }
    if (size > aclsim_machine_memory()) {
        aclsim_set_error("aclrtMallocHost: cannot allocate %zu bytes: more than the machine's memory (%llu bytes)",
                         size, (unsigned long long)aclsim_machine_memory());
        return rt_error(ACL_ERROR_RT_MEMORY_ALLOCATION);
    }
    struct host_block *h = malloc(sizeof *h);
    void *p = aligned_alloc(64, (size + 63) & ~(size_t)63);
    if (h == NULL || p == NULL) {
        free(h);
        free(p);
        aclsim_set_error("aclrtMallocHost: out of host memory allocating %zu bytes", size);
        return rt_error(ACL_ERROR_RT_MEMORY_ALLOCATION);
    }
    h->ptr = p;
    h->size = size;
    pthread_mutex_lock(&rt_lock);
    h->next = host_blocks;
    host_blocks = h;
    pthread_mutex_unlock(&rt_lock);
    aclsim_counter_add(ACLSIM_CNT_HOST_BLOCKS, 1);
    *hostPtr = p;
    return ACL_SUCCESS;
}

aclError aclrtFreeHost(void *hostPtr)
{
    if (hostPtr == NULL) {
        aclsim_set_error("aclrtFreeHost: hostPtr must not be NULL");
        return rt_error(ACL_ERROR_INVALID_PARAM);
    }
    pthread_mutex_lock(&rt_lock);
    struct host_block **link = &host_blocks;
    while (*link != NULL && (*link)->ptr != hostPtr) {
        link = &(*link)->next;
    }
    struct host_block *h = *link;
    if (h != NULL) {
        *link = h->next;
    }
    pthread_mutex_unlock(&rt_lock);
    if (h == NULL) {
        aclsim_set_error("aclrtFreeHost: %p is not an address returned by aclrtMallocHost (or it was already freed)",
                         hostPtr);
        return rt_error(ACL_ERROR_RT_PARAM_INVALID);
    }
    free(h->ptr);
    free(h);
    aclsim_counter_add(ACLSIM_CNT_HOST_BLOCKS, -1);
    return ACL_SUCCESS;
}

static const char *kind_name(aclrtMemcpyKind kind)
{
    switch (kind) {
    case ACL_MEMCPY_HOST_TO_HOST:
        return "ACL_MEMCPY_HOST_TO_HOST";
    case ACL_MEMCPY_HOST_TO_DEVICE:
        return "ACL_MEMCPY_HOST_TO_DEVICE";
    case ACL_MEMCPY_DEVICE_TO_HOST:
        return "ACL_MEMCPY_DEVICE_TO_HOST";
    case ACL_MEMCPY_DEVICE_TO_DEVICE:
        return "ACL_MEMCPY_DEVICE_TO_DEVICE";
    case ACL_MEMCPY_DEFAULT:
        return "ACL_MEMCPY_DEFAULT";
    case ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE:
        return "ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE";
    case ACL_MEMCPY_INNER_DEVICE_TO_DEVICE:
        return "ACL_MEMCPY_INNER_DEVICE_TO_DEVICE";
    case ACL_MEMCPY_INTER_DEVICE_TO_DEVICE:
        return "ACL_MEMCPY_INTER_DEVICE_TO_DEVICE";
    }
    return "an unknown kind";
}

/* With rt_lock held: check a copy; on success *dst_dev / *src_dev say which side is
 * device memory. */
static aclError check_copy_locked(const char *api, void *dst, size_t destMax, const void *src, size_t count,
                                  aclrtMemcpyKind kind, int *dst_dev, int *src_dev)
{
    if (dst == NULL || src == NULL) {
        aclsim_set_error("%s: dst and src must not be NULL", api);
        return rt_error(ACL_ERROR_INVALID_PARAM);
    }
    if (count > destMax) {
        aclsim_set_error("%s: count (%zu) is larger than destMax (%zu)", api, count, destMax);
        return rt_error(ACL_ERROR_INVALID_PARAM);
    }
    int want_dst, want_src;
    switch (kind) {
    case ACL_MEMCPY_HOST_TO_HOST:
        want_dst = 0;
        want_src = 0;
        break;
    case ACL_MEMCPY_HOST_TO_DEVICE:
    case ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE:
        want_dst = 1;
        want_src = 0;
        break;
    case ACL_MEMCPY_DEVICE_TO_HOST:
        want_dst = 0;
        want_src = 1;
        break;
    case ACL_MEMCPY_DEVICE_TO_DEVICE:
    case ACL_MEMCPY_INNER_DEVICE_TO_DEVICE:
    case ACL_MEMCPY_INTER_DEVICE_TO_DEVICE:
        want_dst = 1;
        want_src = 1;
        break;
    case ACL_MEMCPY_DEFAULT:
        want_dst = is_device_locked(dst);
        want_src = is_device_locked(src);
        break;
    default:
        aclsim_set_error("%s: invalid memcpy kind %d", api, (int)kind);
        return rt_error(ACL_ERROR_INVALID_PARAM);
    }
    if (want_dst != is_device_locked(dst) || want_src != is_device_locked(src)) {
        aclsim_set_error("%s: %s needs a %s destination and a %s source, but dst %p is %s memory and src %p is %s "
                         "memory",
                         api, kind_name(kind), want_dst ? "device" : "host", want_src ? "device" : "host", dst,
                         is_device_locked(dst) ? "device" : "host", src, is_device_locked(src) ? "device" : "host");
        return rt_error(ACL_ERROR_INVALID_PARAM);
    }
    if (want_dst && !rt_device_range_ok_locked(dst, count)) {
        aclsim_set_error("%s: the %zu bytes at dst %p run past the end of its device allocation", api, count, dst);
        return rt_error(ACL_ERROR_INVALID_PARAM);
    }
    if (want_src && !rt_device_range_ok_locked(src, count)) {
        aclsim_set_error("%s: the %zu bytes at src %p run past the end of its device allocation", api, count, src);
        return rt_error(ACL_ERROR_INVALID_PARAM);
    }
    *dst_dev = want_dst;
    *src_dev = want_src;
    return ACL_SUCCESS;
}

/* With rt_lock held: the fills a copy of count bytes needs first (a source is read; a
 * destination is written, whole or in part).  The source first: it may be the same block. */
static void prepare_copy_locked(void *dst, int dst_dev, const void *src, int src_dev, size_t count)
{
    if (src_dev) {
        fill_locked(src);
    }
    if (dst_dev) {
        prepare_write_locked(dst, count);
    }
}

aclError aclrtMemcpy(void *dst, size_t destMax, const void *src, size_t count, aclrtMemcpyKind kind)
{
    return rt_memcpy("aclrtMemcpy", dst, destMax, src, count, kind);
}

aclError rt_memcpy(const char *api, void *dst, size_t destMax, const void *src, size_t count, aclrtMemcpyKind kind)
{
    int dd = 0, sd = 0;
    pthread_mutex_lock(&rt_lock);
    aclError err = check_copy_locked(api, dst, destMax, src, count, kind, &dd, &sd);
    if (err == ACL_SUCCESS) {
        prepare_copy_locked(dst, dd, src, sd, count);
    }
    pthread_mutex_unlock(&rt_lock);
    if (err == ACL_SUCCESS && count > 0) {
        copy_bytes(dst, src, count);
    }
    return err;
}

struct copy_task {
    void *dst;
    const void *src;
    size_t count;
    int dst_dev, src_dev;
    int is_set;
    unsigned char value;
};

static aclError run_copy(void *ctx)
{
    struct copy_task *c = ctx;
    pthread_mutex_lock(&rt_lock);
    int ok = (!c->dst_dev || rt_device_range_ok_locked(c->dst, c->count)) &&
             (c->is_set || !c->src_dev || rt_device_range_ok_locked(c->src, c->count));
    if (ok) {
        prepare_copy_locked(c->dst, c->dst_dev, c->src, !c->is_set && c->src_dev, c->count);
    }
    pthread_mutex_unlock(&rt_lock);
    if (!ok) {
        aclsim_set_error("%s: device memory was freed before the queued operation ran",
                         c->is_set ? "aclrtMemsetAsync" : "aclrtMemcpyAsync");
        return rt_error(ACL_ERROR_RT_DEVICE_MEM_ERROR);
    }
    if (c->count > 0) {
        if (c->is_set) {
            set_bytes(c->dst, c->value, c->count);
        } else {
            copy_bytes(c->dst, c->src, c->count);
        }
    }
    return ACL_SUCCESS;
}

static aclError enqueue_copy(const char *api, struct copy_task *c, aclrtStream stream)
{
    /* Called with rt_lock held; takes ownership of c. */
    aclError err = ACL_SUCCESS;
    struct rt_stream *s = rt_resolve_stream_locked(stream, api, &err);
    if (s == NULL) {
        free(c);
        return err;
    }
    err = rt_enqueue_locked(s, run_copy, free, c);
    if (err != ACL_SUCCESS) {
        free(c);
        aclsim_set_error("%s: out of host memory", api);
    }
    return err;
}

aclError aclrtMemcpyAsync(void *dst, size_t destMax, const void *src, size_t count, aclrtMemcpyKind kind,
                          aclrtStream stream)
{
    return rt_memcpy_async("aclrtMemcpyAsync", dst, destMax, src, count, kind, stream);
}

aclError rt_memcpy_async(const char *api, void *dst, size_t destMax, const void *src, size_t count,
                         aclrtMemcpyKind kind, aclrtStream stream)
{
    struct copy_task *c = calloc(1, sizeof *c);
    if (c == NULL) {
        aclsim_set_error("%s: out of host memory", api);
        return rt_error(ACL_ERROR_RT_MEMORY_ALLOCATION);
    }
    pthread_mutex_lock(&rt_lock);
    aclError err = check_copy_locked(api, dst, destMax, src, count, kind, &c->dst_dev, &c->src_dev);
    if (err != ACL_SUCCESS) {
        free(c);
    } else {
        c->dst = dst;
        c->src = src;
        c->count = count;
        err = enqueue_copy(api, c, stream);
    }
    pthread_mutex_unlock(&rt_lock);
    return err;
}

static aclError check_set_locked(const char *api, void *devPtr, size_t maxCount, size_t count)
{
    if (devPtr == NULL) {
        aclsim_set_error("%s: devPtr must not be NULL", api);
        return rt_error(ACL_ERROR_INVALID_PARAM);
    }
    if (count > maxCount) {
        aclsim_set_error("%s: count (%zu) is larger than maxCount (%zu)", api, count, maxCount);
        return rt_error(ACL_ERROR_INVALID_PARAM);
    }
    if (!rt_device_range_ok_locked(devPtr, count)) {
        aclsim_set_error("%s: the %zu bytes at %p are not inside one device allocation", api, count, devPtr);
        return rt_error(ACL_ERROR_INVALID_PARAM);
    }
    return ACL_SUCCESS;
}

aclError aclrtMemset(void *devPtr, size_t maxCount, int32_t value, size_t count)
{
    pthread_mutex_lock(&rt_lock);
    aclError err = check_set_locked("aclrtMemset", devPtr, maxCount, count);
    if (err == ACL_SUCCESS) {
        prepare_write_locked(devPtr, count);
    }
    pthread_mutex_unlock(&rt_lock);
    if (err == ACL_SUCCESS && count > 0) {
        set_bytes(devPtr, (unsigned char)value, count);
    }
    return err;
}

aclError aclrtMemsetAsync(void *devPtr, size_t maxCount, int32_t value, size_t count, aclrtStream stream)
{
    struct copy_task *c = calloc(1, sizeof *c);
    if (c == NULL) {
        aclsim_set_error("aclrtMemsetAsync: out of host memory");
        return rt_error(ACL_ERROR_RT_MEMORY_ALLOCATION);
    }
    pthread_mutex_lock(&rt_lock);
    aclError err = check_set_locked("aclrtMemsetAsync", devPtr, maxCount, count);
    if (err != ACL_SUCCESS) {
        free(c);
    } else {
        c->dst = devPtr;
        c->count = count;
        c->dst_dev = 1;
        c->is_set = 1;
        c->value = (unsigned char)value;
        err = enqueue_copy("aclrtMemsetAsync", c, stream);
    }
    pthread_mutex_unlock(&rt_lock);
    return err;
}

aclError aclrtGetMemInfo(aclrtMemAttr attr, size_t *free_bytes, size_t *total)
{
    (void)attr;
    if (free_bytes == NULL || total == NULL) {
        aclsim_set_error("aclrtGetMemInfo: free and total must not be NULL");
        return rt_error(ACL_ERROR_INVALID_PARAM);
    }
    pthread_mutex_lock(&rt_lock);
    uint64_t t = rt_device_memory_total();
    *total = (size_t)t;
    *free_bytes = (size_t)(t - device_bytes);
    pthread_mutex_unlock(&rt_lock);
    return ACL_SUCCESS;
}

/* ---- 2-D copies and 32-bit memsets ----------------------------------------------------- */

/* height rows of width bytes, rows dpitch / spitch bytes apart (a 32-bit set: value repeated
 * over count elements, height 1). */
struct rows_task {
    const char *api;
    char *dst;
    const char *src;
    size_t dpitch, spitch, width, height;
    int dst_dev, src_dev;
    int is_set32;
    uint32_t value;
};

/* Bytes from the first row's start to the last row's end. */
static size_t span(size_t pitch, size_t width, size_t height)
{
    return height == 0 ? 0 : (height - 1) * pitch + width;
}

static aclError check_rows_locked(struct rows_task *r, aclrtMemcpyKind kind)
{
    size_t dspan = span(r->dpitch, r->width, r->height);
    if (r->dst == NULL || (!r->is_set32 && r->src == NULL)) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "%s: dst and src must not be NULL", r->api);
    }
    if (r->is_set32) {
        r->dst_dev = 1;
    } else {
        if (r->width > r->dpitch || r->width > r->spitch) {
            return rt_fail(ACL_ERROR_INVALID_PARAM, "%s: width (%zu) must not exceed dpitch (%zu) nor spitch (%zu)",
                           r->api, r->width, r->dpitch, r->spitch);
        }
        /* The checks of aclrtMemcpy on the spans (the kind against where each side lies). */
        aclError err = check_copy_locked(r->api, r->dst, dspan, r->src, span(r->spitch, r->width, r->height), kind,
                                         &r->dst_dev, &r->src_dev);
        if (err != ACL_SUCCESS && span(r->spitch, r->width, r->height) <= dspan) {
            return err;
        }
        if (err != ACL_SUCCESS) {
            /* check_copy_locked refuses count > destMax; the spans differ, the rows do not. */
            aclError again = check_copy_locked(r->api, r->dst, dspan, r->src, dspan, kind, &r->dst_dev, &r->src_dev);
            if (again != ACL_SUCCESS) {
                return again;
            }
            if (r->src_dev && !rt_device_range_ok_locked(r->src, span(r->spitch, r->width, r->height))) {
                return rt_fail(ACL_ERROR_INVALID_PARAM, "%s: the source rows are not inside one device allocation", r->api);
            }
        }
        return ACL_SUCCESS;
    }
    if (!rt_device_range_ok_locked(r->dst, dspan)) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "%s: the %zu bytes at %p are not inside one device allocation", r->api,
                       dspan, (void *)r->dst);
    }
    return ACL_SUCCESS;
}

static void do_rows(const struct rows_task *r)
{
    if (r->is_set32) {
        uint32_t *p = (uint32_t *)(void *)r->dst;
        for (size_t i = 0; i < r->width / sizeof(uint32_t); i++) {
            p[i] = r->value;
        }
        return;
    }
    for (size_t row = 0; row < r->height; row++) {
        memmove(r->dst + row * r->dpitch, r->src + row * r->spitch, r->width);
    }
}

static aclError run_rows(void *ctx)
{
    struct rows_task *r = ctx;
    size_t dspan = span(r->dpitch, r->width, r->height);
    pthread_mutex_lock(&rt_lock);
    int ok = (!r->dst_dev || rt_device_range_ok_locked(r->dst, dspan)) &&
             (r->is_set32 || !r->src_dev || rt_device_range_ok_locked(r->src, span(r->spitch, r->width, r->height)));
    if (ok) {
        if (r->src_dev && !r->is_set32) {
            fill_locked(r->src);
        }
        if (r->dst_dev) {
            fill_locked(r->dst);
        }
    }
    pthread_mutex_unlock(&rt_lock);
    if (!ok) {
        return rt_fail(ACL_ERROR_RT_DEVICE_MEM_ERROR, "%s: device memory was freed before the queued operation ran",
                       r->api);
    }
    do_rows(r);
    return ACL_SUCCESS;
}

static aclError rows(struct rows_task *r, aclrtMemcpyKind kind, int async, aclrtStream stream)
{
    pthread_mutex_lock(&rt_lock);
    aclError err = check_rows_locked(r, kind);
    if (err == ACL_SUCCESS && !async) {
        if (r->src_dev && !r->is_set32) {
            fill_locked(r->src);
        }
        if (r->dst_dev) {
            fill_locked(r->dst);
        }
    }
    if (err == ACL_SUCCESS && async) {
        struct rows_task *copy = malloc(sizeof *copy);
        struct rt_stream *s = copy != NULL ? rt_resolve_stream_locked(stream, r->api, &err) : NULL;
        if (copy == NULL) {
            err = rt_fail(ACL_ERROR_RT_MEMORY_ALLOCATION, "%s: out of host memory", r->api);
        } else if (s != NULL) {
            *copy = *r;
            err = rt_enqueue_locked(s, run_rows, free, copy);
            if (err != ACL_SUCCESS) {
                aclsim_set_error("%s: out of host memory", r->api);
            }
        }
        if (err != ACL_SUCCESS) {
            free(copy);
        }
    }
    pthread_mutex_unlock(&rt_lock);
    if (err == ACL_SUCCESS && !async) {
        do_rows(r);
    }
    return rt_error(err);
}

aclError aclrtMemcpy2d(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width, size_t height,
                       aclrtMemcpyKind kind)
{
    struct rows_task r = {"aclrtMemcpy2d", dst, src, dpitch, spitch, width, height, 0, 0, 0, 0};
    return rows(&r, kind, 0, NULL);
}

aclError aclrtMemcpy2dAsync(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width, size_t height,
                            aclrtMemcpyKind kind, aclrtStream stream)
{
    struct rows_task r = {"aclrtMemcpy2dAsync", dst, src, dpitch, spitch, width, height, 0, 0, 0, 0};
    return rows(&r, kind, 1, stream);
}

static aclError set32(const char *api, void *ptr, size_t memSize, uint32_t value, size_t n, int async,
                      aclrtStream stream)
{
    if (n > memSize / sizeof(uint32_t)) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "%s: N (%zu) 32-bit values do not fit memSize (%zu bytes)", api, n,
                       memSize);
    }
    if (((uintptr_t)ptr & 3u) != 0) {
        return rt_fail(ACL_ERROR_INVALID_PARAM, "%s: ptr %p is not 4-byte aligned", api, ptr);
    }
    struct rows_task r = {api, ptr, NULL, n * sizeof(uint32_t), 0, n * sizeof(uint32_t), n > 0, 1, 0, 1, value};
    return rows(&r, ACL_MEMCPY_DEVICE_TO_DEVICE, async, stream);
}

aclError aclrtMemsetD32(void *ptr, size_t memSize, uint32_t value, size_t N)
{
    return set32("aclrtMemsetD32", ptr, memSize, value, N, 0, NULL);
}

aclError aclrtMemsetD32Async(void *ptr, size_t memSize, uint32_t value, size_t N, aclrtStream stream)
{
    return set32("aclrtMemsetD32Async", ptr, memSize, value, N, 1, stream);
}

/* ---- ranges for memory_ext.c ----------------------------------------------------------- */

aclError rt_add_range_locked(uintptr_t base, size_t size, int device, enum rt_range_kind kind)
{
    if (kind == RT_RANGE_REGISTERED) {
        struct range *grown = realloc(registered, (registered_count + 1) * sizeof *grown);
        if (grown == NULL) {
            return ACL_ERROR_RT_MEMORY_ALLOCATION;
        }
        registered = grown;
        registered[registered_count++] = (struct range){base, size, device};
        return ACL_SUCCESS;
    }
    if (block_count == block_capacity) {
        size_t cap = block_capacity != 0 ? block_capacity * 2 : 64;
        struct block *grown = realloc(blocks, cap * sizeof *grown);
        if (grown == NULL) {
            return ACL_ERROR_RT_MEMORY_ALLOCATION;
        }
        blocks = grown;
        block_capacity = cap;
    }
    size_t at = 0;
    while (at < block_count && blocks[at].base < base) {
        at++;
    }
    memmove(&blocks[at + 1], &blocks[at], (block_count - at) * sizeof *blocks);
    blocks[at] = (struct block){base, size, device, false, true, NULL};
    block_count++;
    return ACL_SUCCESS;
}

int rt_remove_range_locked(uintptr_t base, enum rt_range_kind kind)
{
    if (kind == RT_RANGE_REGISTERED) {
        for (size_t i = 0; i < registered_count; i++) {
            if (registered[i].base == base) {
                registered[i] = registered[--registered_count];
                return 1;
            }
        }
        return 0;
    }
    long i = find_block_locked(base);
    if (i < 0 || blocks[i].base != base || !blocks[i].mapped) {
        return 0;
    }
    memmove(&blocks[i], &blocks[i + 1], (block_count - (size_t)i - 1) * sizeof *blocks);
    block_count--;
    return 1;
}

void **rt_managed_slot_locked(const void *p, uintptr_t *base, size_t *size)
{
    long i = p != NULL ? find_block_locked((uintptr_t)p) : -1;
    if (i < 0 || blocks[i].mapped) {
        return NULL;
    }
    *base = blocks[i].base;
    *size = blocks[i].size;
    return &blocks[i].managed;
}

int rt_range_info_locked(const void *p, uintptr_t *base, size_t *size, int *device, enum rt_range_kind *kind)
{
    uintptr_t a = (uintptr_t)p;
    long i = p != NULL ? find_block_locked(a) : -1;
    if (i >= 0) {
        *base = blocks[i].base;
        *size = blocks[i].size;
        *device = blocks[i].device;
        *kind = blocks[i].mapped ? RT_RANGE_MAPPED : RT_RANGE_DEVICE;
        return 1;
    }
    long r = p != NULL ? find_registered_locked(a) : -1;
    if (r >= 0) {
        *base = registered[r].base;
        *size = registered[r].size;
        *device = registered[r].device;
        *kind = RT_RANGE_REGISTERED;
        return 1;
    }
    for (struct host_block *h = host_blocks; p != NULL && h != NULL; h = h->next) {
        if (a - (uintptr_t)h->ptr < h->size) {
            *base = (uintptr_t)h->ptr;
            *size = h->size;
            *device = -1;
            *kind = RT_RANGE_HOST;
            return 1;
        }
    }
    return 0;
}
