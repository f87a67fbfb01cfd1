/*
 * The bottom of the runtime's sources: the one lock of its state and the fork handling every
 * other source hooks into.  device.c (devices, contexts, streams, events) and memory.c
 * (device and host memory, copies) both depend on this file and memory.c on device.c, never
 * the other way: each registers what it must forget in a forked child here, instead of one
 * calling the other's reset.
 */
#define _POSIX_C_SOURCE 200809L

#include "runtime_internal.h"

pthread_mutex_t rt_lock = PTHREAD_MUTEX_INITIALIZER;

#define MAX_FORK_HOOKS 8

static void (*fork_hooks[MAX_FORK_HOOKS])(void);
static int fork_hook_count;

void rt_at_fork_child(void (*forget)(void))
{
    /* Called by load-time constructors only, before any thread or fork can exist. */
    if (fork_hook_count < MAX_FORK_HOOKS) {
        fork_hooks[fork_hook_count++] = forget;
    }
}

/*
 * fork() while another thread is inside the runtime must not leave the child with rt_lock
 * held by a thread that does not exist there: the forking thread takes it first.
 */
static void before_fork(void)
{
    pthread_mutex_lock(&rt_lock);
}

static void after_fork_in_parent(void)
{
    pthread_mutex_unlock(&rt_lock);
}

static void after_fork_in_child(void)
{
    /* Only the forking thread exists: no other thread holds or waits for anything. */
    for (int i = 0; i < fork_hook_count; i++) {
        fork_hooks[i]();
    }
    pthread_mutex_init(&rt_lock, NULL);
}

__attribute__((constructor)) static void register_fork_handlers(void)
{
    pthread_atfork(before_fork, after_fork_in_parent, after_fork_in_child);
}
