"""fork() while another thread holds one of the binding's locks (issue #26, point 1): the
child has only the forking thread, so a lock held by any other thread of the parent would
never be released there. Every lock is made anew in the child; the child's calls go on.

Each case runs in a subprocess with a timeout: a hang is a failure, not a stuck suite."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork() on this platform")

FIRST_LOAD = r"""
import os, sys, threading, time
import numpy as np
import aclnn_py._runtime.loader as ffi_package

# The first sim call of another thread is loading the backend (slowly) when this one forks.
loading, real = threading.Event(), ffi_package._toolkit
def slow_toolkit(name):
    loading.set()
    time.sleep(0.5)
    return real(name)
ffi_package._toolkit = slow_toolkit
first = threading.Thread(target=ffi_package.library, args=("sim",))
first.start()
loading.wait()
pid = os.fork()
if pid == 0:
    import aclnn_py
    g = np.ones((1, 1, 6, 6), np.float32); x = np.zeros((1, 1, 4, 4), np.float32)
    r = aclnn_py.reflection_pad2d_backward(g, x, [1, 1, 1, 1], backend="sim")
    os._exit(0 if r.shape == x.shape else 3)
first.join()
_, status = os.waitpid(pid, 0)
print("child", os.waitstatus_to_exitcode(status))
"""

# Each of the binding's locks held by another thread at the fork: in the child every one must
# be free (acquire without blocking succeeds), and the calls that take them work.
EVERY_LOCK = r"""
import os, sys, threading
import numpy as np
import aclnn_py
from aclnn_py import _ffi, _fast
from aclnn_py._ffi import operator_headers
from aclnn_py._numpy import blas as _blas, placement as _placement, plans as _plans, workers as _workers
from aclnn_py._runtime import loader

call_module = sys.modules["aclnn_py.call"]  # (aclnn_py.call is the function)
lib = loader.library("sim")
g = np.ones((1, 1, 6, 6), np.float32); x = np.zeros((1, 1, 4, 4), np.float32)
aclnn_py.reflection_pad2d_backward(g, x, [1, 1, 1, 1], backend="numpy")
prepared = aclnn_py.prepare("aclnnReflectionPad2dBackward", g, x, [1, 1, 1, 1], np.zeros_like(x), backend="sim")

def locks():
    found = {
        "loader._lock": loader._lock, "_ffi.ffi()._lock": _ffi.ffi()._lock, "_fast._lock": _fast._lock,
        "call._signatures_lock": call_module._signatures_lock,
        "operator_headers._declarers_lock": operator_headers._declarers_lock,
        "_workers._pool_lock": _workers._pool_lock, "_blas._lock": _blas._lock,
        "_placement._lock": _placement._lock, "Library._lock": lib._lock,
    }
    import cffi.cparser
    found["cffi.cparser.lock"] = cffi.cparser.lock  # (pycparser's, shared by every FFI)
    for i, made in enumerate(f for f in list(_ffi._made) if f is not _ffi.ffi()):
        found[f"FFI {i}"] = made._lock  # (the helper's, the address cast's, the constants')
    guard = getattr(prepared, "_guard", None)  # (a prepared executor's lock)
    if guard is not None:
        found["Prepared guard"] = guard.lock
    for i, declarer in enumerate(operator_headers._declarers.values()):
        found[f"declarer {i}"] = declarer._lock
    for i, op in enumerate(_plans._NUMPY_OPS):
        found[f"NumpyOp {i}"] = op._lock
    return found

held, release = threading.Event(), threading.Event()
def hold_them():
    try:
        for lock in locks().values():
            lock.acquire()
    finally:
        held.set()
    release.wait()
    for lock in locks().values():
        lock.release()
holder = threading.Thread(target=hold_them)
holder.start()
held.wait()
pid = os.fork()
if pid == 0:
    stuck = [name for name, lock in locks().items() if not lock.acquire(blocking=False)]
    if stuck:
        print("held in the child:", ", ".join(stuck), file=sys.stderr)
        os._exit(4)
    for lock in locks().values():
        lock.release()
    r = aclnn_py.reflection_pad2d_backward(g, x, [1, 1, 1, 1], backend="sim")
    n = aclnn_py.reflection_pad2d_backward(np.ones((1, 1, 8, 8), np.float32), np.zeros((1, 1, 6, 6), np.float32),
                                           [1, 1, 1, 1], backend="numpy")  # a new plan
    prepared.close()
    os._exit(0 if r.shape == x.shape and n.shape == (1, 1, 6, 6) else 3)
release.set()
holder.join()
_, status = os.waitpid(pid, 0)
prepared.close()
print("child", os.waitstatus_to_exitcode(status))
"""


# The first use of a C type string (``ffi.new("float *")`` in a call with a FLOAT parameter) is
# parsed by pycparser under cffi's locks: another thread parsing one at the fork left the child
# waiting for ever in its own first such call (scripts/fuzz.py --seed 2911, BatchNormBackward).
PARSING = r"""
import os, threading
import cffi.cparser
import numpy as np
import aclnn_py
from aclnn_py import _ffi

_ffi.ffi()
held, release = threading.Event(), threading.Event()
def parse_slowly():
    with cffi.cparser.lock, _ffi.ffi()._lock:   # (where a parse of a new type string is)
        held.set()
        release.wait()
parser = threading.Thread(target=parse_slowly)
parser.start()
held.wait()
pid = os.fork()
if pid == 0:
    _ffi.ffi().new("unsigned short[3][5]")   # a type string nothing has parsed yet
    g = np.ones((1, 1, 6, 6), np.float32); x = np.zeros((1, 1, 4, 4), np.float32)
    r = aclnn_py.reflection_pad2d_backward(g, x, [1, 1, 1, 1], backend="sim")
    os._exit(0 if r.shape == x.shape else 3)
release.set()
parser.join()
_, status = os.waitpid(pid, 0)
print("child", os.waitstatus_to_exitcode(status))
"""


def _run(script: str) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=30)
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"the parent or the forked child hung: {(exc.stderr or b'')[-2000:]!r}")


def test_fork_during_the_first_backend_load(sim_lib):
    done = _run(FIRST_LOAD)
    assert done.returncode == 0 and done.stdout.strip() == "child 0", done.stdout + done.stderr


def test_a_type_parsed_in_a_forked_child_while_the_parent_parsed_one(sim_lib):
    done = _run(PARSING)
    assert done.returncode == 0 and done.stdout.strip() == "child 0", done.stdout + done.stderr


def test_every_lock_of_the_binding_is_free_in_a_forked_child(sim_lib):
    done = _run(EVERY_LOCK)
    assert done.returncode == 0 and done.stdout.strip() == "child 0", done.stdout + done.stderr


def test_the_fork_handlers_replace_every_held_lock(monkeypatch):
    """The handlers the child runs, run here (in the parent; their state is restored after):
    each lock another thread holds is replaced by a free one."""
    import threading

    import aclnn_py  # noqa: F401  (every module below loaded)
    from aclnn_py import _fast, _ffi
    from aclnn_py._ffi import operator_headers
    from aclnn_py._numpy import blas as _blas, placement as _placement, plans as _plans, workers as _workers
    from aclnn_py._runtime import loader

    import cffi.cparser

    call_module = sys.modules["aclnn_py.call"]
    _ffi.ffi()
    owners = [(loader, "_lock"), *((f, "_lock") for f in list(_ffi._made)), (cffi.cparser, "lock"),
              (_fast, "_lock"), (call_module, "_signatures_lock"),
              (operator_headers, "_declarers_lock"), (_workers, "_pool_lock"), (_blas, "_lock"),
              (_placement, "_lock"), *((op, "_lock") for op in _plans._NUMPY_OPS),
              *((d, "_lock") for d in operator_headers._declarers.values()),
              *((g, "lock") for g in list(call_module._guards))]
    for owner, attribute in owners:
        monkeypatch.setattr(owner, attribute, getattr(owner, attribute))  # (undone after the test)
    for name in ("_workers", "_placed", "_others", "_holding"):
        value = getattr(_placement, name)
        monkeypatch.setattr(_placement, name, value.copy() if hasattr(value, "copy") else value)
    monkeypatch.setattr(_blas, "_depth", _blas._depth)
    old = [getattr(owner, attribute) for owner, attribute in owners]
    held, done = threading.Event(), threading.Event()

    def hold() -> None:
        for lock in old:
            lock.acquire()
        held.set()
        done.wait()
        for lock in old:
            lock.release()

    holder = threading.Thread(target=hold)
    holder.start()
    held.wait()
    try:
        for handler in (_ffi._new_locks_in_child, loader._new_lock_in_child, _fast._new_lock_in_child,
                        call_module._new_locks_in_child, operator_headers._new_locks_in_child,
                        _workers._new_lock_in_child, _plans._new_locks_in_child,
                        _blas._new_lock_in_child, _placement._new_lock_in_child):
            handler()
        for (owner, attribute), was in zip(owners, old):
            lock = getattr(owner, attribute)
            assert lock is not was and lock.acquire(blocking=False), (owner, attribute)
            lock.release()
        assert _blas._depth == 0 and not _placement._holding and not _placement._workers
    finally:
        done.set()
        holder.join()


SUBSCRIBED = r"""
import os
import aclnn_py
from aclnn_py import capi

aclnn_py.set_backend("sim")
capi.aclrtSetDevice(0)
capi.aclrtSubscribeReport(1234, None)  # the default stream's callbacks go to thread 1234
pid = os.fork()
if pid == 0:
    # The parent's subscription (and its thread) is not the child's: subscribing again works.
    capi.aclrtSetDevice(0)
    capi.aclrtSubscribeReport(1234, None)
    capi.aclrtUnSubscribeReport(1234, None)
    os._exit(0)
_, status = os.waitpid(pid, 0)
capi.aclrtUnSubscribeReport(1234, None)
print("child", os.waitstatus_to_exitcode(status))
"""


def test_a_forked_child_has_no_report_subscriptions(sim_lib):
    """The simulator's callback state (report_lock, the subscriptions to report threads) is the
    parent's: a forked child starts without it, as it starts without the parent's streams."""
    done = subprocess.run([sys.executable, "-c", SUBSCRIBED], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout.strip() == "child 0", done.stdout + done.stderr
