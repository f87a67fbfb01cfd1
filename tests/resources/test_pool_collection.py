"""A garbage collection inside the caching allocator's critical section: it runs the
finalizers of DeviceBuffers in the cycles it frees, which give their blocks back to the same
pool on the same thread. With a plain Lock that deadlocked (a full run of the suite hung in
test_async_errors: give_all -> a list made under the lock -> collection -> DeviceBuffer
finalizer -> give -> give_all -> lock). Run in a subprocess: a hang is a timeout, a failure."""

from __future__ import annotations

import subprocess
import sys

SCRIPT = r"""
import gc
import numpy as np
import aclnn_py
from aclnn_py._runtime import pool

lib = aclnn_py.Tensor.empty((4,), np.float32, backend="sim").lib
lib.synchronize()
p = pool.pool(lib)


class Collecting(dict):
    # the pool's dict, collecting garbage each time it is read under the lock
    def get(self, *args):
        gc.collect()
        return super().get(*args)


gc.disable()
for n in (3, 5, 7):
    t = aclnn_py.Tensor.empty((n,), np.float32, backend="sim")
    t.cycle = t  # garbage only a collection frees, its buffer's finalizer giving the block back
    del t
p.blocks = Collecting(p.blocks)
count, nbytes = sum(len(v) for v in dict.values(p.blocks)), p.nbytes
ptr = lib.ffi.new("void **")
lib.call("aclrtMalloc", ptr, 64, 0)
address = int(lib.ffi.cast("uintptr_t", ptr[0]))
p.give_all([address], [64])
assert address in dict.get(p.blocks, 64, []), "the given block is kept"
kept = sum(len(v) for v in dict.values(p.blocks))
assert kept == count + 4 and p.nbytes == nbytes + 64 + 12 + 20 + 28, (kept, p.nbytes)
p.trim()
print("ok")
"""


def test_a_collection_under_the_pools_lock_does_not_deadlock():
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr
