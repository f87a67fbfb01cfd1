"""The caching allocator of device memory: ``DeviceBuffer``'s blocks, kept for reuse.

A device-Tensor chain makes a new output ``Tensor`` per operator call; ``aclrtMalloc`` and
``aclrtFree`` per call cost more than the call's own host work. A freed buffer's block is kept
here, by its exact size, and the next buffer of that size takes it (a caching allocator, as
PyTorch's CUDA one; CANN and the simulator allow a block to be reused as any new allocation).

Stream-ordered: a block reaches the pool only when ``aclrtFree`` would have been called for it,
that is after the work queued on the owner's stream that may use it is done
(``DeviceBuffer.release_block`` defers the return until the stream is synchronised, as it defers a
free). A block in the pool is therefore never read or written by queued work, and handing it
out again is as safe as a fresh allocation.

Bounded: at most ``MAX_CACHED_BYTES`` are kept (beyond, a block is freed); a failed allocation
empties the pool and is tried once more, so cached blocks never make an allocation fail that
would succeed without them. ``trim()`` frees every cached block (tests counting device bytes;
``aclnn_py.empty_cache``, which calls ``trim_all``). Thread-safe (one lock, made anew in a forked child, which also
forgets the parent's blocks: they are the parent's device memory). The lock is reentrant, and
nothing is allocated under it that a garbage collection could start on: a collection runs the
finalizers of the ``DeviceBuffer``s in the cycles it frees, which give their blocks back here
on the same thread (a ``Lock`` deadlocked there).

Blocks are kept as their addresses (ints). The fast entry (``aclnn_py/_fast/outputs.c``) takes
a block itself: the last of ``blocks[nbytes]``, with ``nbytes`` lowered, under ``lock`` when it
gets it without waiting (else it calls ``take``); it gives blocks back with ``give_all``."""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
import weakref
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .library import Library

#: Device bytes the pool keeps at most (per library).
MAX_CACHED_BYTES = 256 << 20
#: Blocks kept per size at most (a chain returns its dropped outputs' blocks in bursts, at each
#: synchronisation: up to ``library.MAX_PENDING_RELEASES`` of them).
MAX_BLOCKS_PER_SIZE = 1024


class DevicePool:
    """Free device blocks of one library by size (module docstring)."""

    def __init__(self, lib: Library) -> None:
        self.lib = lib
        #: The cached blocks' addresses by size; ``nbytes`` is their total.
        self.blocks: dict[int, list[int]] = {}
        self.nbytes = 0
        self.lock = threading.RLock()

    def take(self, nbytes: int) -> int | None:
        """The address of a cached block of exactly ``nbytes``, or None."""
        blocks = self.blocks.get(nbytes)
        if not blocks:
            return None
        with self.lock:
            if not blocks:
                return None
            self.nbytes -= nbytes
            return blocks.pop()

    def give(self, address: int, nbytes: int) -> None:
        """Keep the block at ``address`` of ``nbytes`` (no queued work uses it any more), or
        free it when the pool is full or the library torn down."""
        self.give_all((address,), (nbytes,))

    def give_all(self, addresses: Sequence[int], sizes: Sequence[int]) -> None:
        """``give`` each block at ``addresses`` of ``sizes`` bytes (the fast entry gives back
        the outputs dropped while work was queued this way, at the synchronisation)."""
        lib = self.lib
        if lib.finalized:
            return
        # (the lists made before the lock: module docstring)
        pairs = list(zip(addresses, sizes))
        fresh: dict[int, list[int]] = {nbytes: [] for nbytes in sizes if nbytes not in self.blocks}
        freed: list[int] = []
        with self.lock:
            for i in range(len(pairs)):
                address, nbytes = pairs[i]
                blocks = self.blocks.get(nbytes)
                if blocks is None:  # (a list made before the lock, else one from trim's race)
                    blocks = self.blocks.setdefault(nbytes, fresh.get(nbytes) or [])
                if self.nbytes + nbytes <= MAX_CACHED_BYTES and len(blocks) < MAX_BLOCKS_PER_SIZE:
                    blocks.append(address)
                    self.nbytes += nbytes
                else:
                    freed.append(address)
        if freed:
            free, cast = lib.fn("aclrtFree"), lib.ffi.cast
            for address in freed:
                free(cast("void *", address))

    def trim(self) -> None:
        """Free every cached block."""
        blocks: list[int] = []
        with self.lock:
            lists = list(self.blocks.values())  # (a collection on this allocation comes before it)
            for i in range(len(lists)):
                blocks += lists[i]
                lists[i].clear()  # (a take that looked its list up before the lock finds it empty)
            self.blocks.clear()
            self.nbytes = 0
        if self.lib.finalized:
            return
        free, cast = self.lib.fn("aclrtFree"), self.lib.ffi.cast
        for address in blocks:
            free(cast("void *", address))

    def forget(self) -> None:
        """In a forked child: the blocks are the parent's; drop them without a call."""
        self.lock = threading.RLock()
        self.blocks = {}
        self.nbytes = 0


_pools: dict[int, DevicePool] = {}
_pools_lock = threading.Lock()


def pool(lib: Library) -> DevicePool:
    """The pool of ``lib`` (made on first use)."""
    found = _pools.get(id(lib))
    if found is not None and found.lib is lib:
        return found
    with _pools_lock:
        found = _pools.get(id(lib))
        if found is None or found.lib is not lib:
            found = _pools[id(lib)] = DevicePool(lib)
            weakref.finalize(lib, _pools.pop, id(lib), None)
    return found


def trim_all() -> None:
    """Free the cached blocks of every library (``aclnn_py.empty_cache``)."""
    for p in list(_pools.values()):
        p.trim()


def _new_locks_in_child() -> None:
    global _pools_lock
    _pools_lock = threading.Lock()
    for p in _pools.values():
        p.forget()


os.register_at_fork(after_in_child=_new_locks_in_child)


__all__ = ["DevicePool", "pool", "trim_all", "MAX_CACHED_BYTES"]
