"""A Tensor released while cffi holds its parser lock: garbage collection may run a Tensor's
finalizer inside cffi (parsing a type string, resolving a function) on the same thread, and cffi's
lock is not re-entrant, so a release that looked up a type or a function there would hang for
good. ``Library.__init__`` looks them up beforehand (``RELEASE_FUNCTIONS``, ``tensor_p``)."""

from __future__ import annotations

import subprocess
import sys
import textwrap


def test_a_release_inside_cffis_lock_does_not_hang(sim_lib):
    # A fresh process: nothing else has parsed "aclTensor *" or resolved aclDestroyTensor yet.
    code = textwrap.dedent("""
        import numpy as np
        import aclnn_py
        from aclnn_py._runtime import loader

        lib = loader.library("sim")
        tensors = [aclnn_py.Tensor.from_numpy(np.ones(4, np.float32), backend="sim") for _ in range(2)]
        lib.synchronize()
        with lib.ffi._lock:          # (as cffi holds it while it parses or resolves)
            tensors[0].close()       # its finalizer: aclDestroyTensor, the block to the pool
            del tensors[1]           # the same, run by the garbage collector's reference count
        print("released")
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout.strip() == "released", done.stderr
