"""How much device memory the CPU backends have: one rule for the simulator and the numpy backend.

A shape that passes an operator's checks may still need more memory than a device has; on the
NPU that is ``aclrtMalloc`` failing with 207001 (ACL_ERROR_RT_MEMORY_ALLOCATION). The simulator's
device has a fixed amount of memory and fails the same way beyond it. The numpy backend applies
the same limit to the results it is about to allocate, so such a call is the same ``AclnnError``
207001 from ``aclrtMalloc`` on both, never NumPy's ``MemoryError`` or an exhausted host.

The rule (the simulator applies the same one; see ``docs/simulator.md``):

* ``ACLNN_PY_SIM_DEVICE_MEMORY`` if set and not empty: its value in bytes, decimal digits only;
  any other value (or ``0``) gives a device with no memory, so every allocation fails and the
  message names the variable;
* else ``DEVICE_FRACTION`` of the smaller of the machine's physical memory (``os.sysconf``) and
  the memory limit of this process's cgroup (v2 ``memory.max``, v1 ``memory.limit_in_bytes``),
  at most ``DEVICE_CAP`` bytes.
"""

from __future__ import annotations

import functools
import os

from .._environ import Setting
from .._errors import ACL_ERROR_RT_MEMORY_ALLOCATION, AclnnError

DEVICE_MEMORY_ENV = "ACLNN_PY_SIM_DEVICE_MEMORY"
DEVICE_FRACTION = 1 / 2
DEVICE_CAP = 2**48  # the simulator's cap (src/runtime/memory.c)

_CGROUP_ROOT = "/sys/fs/cgroup"


def _read_limit(path: str) -> int | None:
    """A cgroup memory limit file's value in bytes (None when absent, unreadable or unlimited)."""
    try:
        with open(path) as f:
            text = f.read().strip()
    except OSError:
        return None
    if not text.isdigit():  # "max" (v2): no limit
        return None
    value = int(text)
    return value if 0 < value < 2**62 else None  # v1 says "no limit" with a huge page-rounded number


def cgroup_memory_limit() -> int | None:
    """The cgroup memory limit in bytes, or None if there is none: the smaller of the values of
    ``/sys/fs/cgroup/memory.max`` (v2) and ``/sys/fs/cgroup/memory/memory.limit_in_bytes`` (v1)
    that exist and hold a positive number (the files the simulator reads, in a container the
    container's own limit)."""
    paths = (os.path.join(_CGROUP_ROOT, "memory.max"), os.path.join(_CGROUP_ROOT, "memory", "memory.limit_in_bytes"))
    limits = [v for v in map(_read_limit, paths) if v is not None]
    return min(limits) if limits else None


def physical_memory() -> int | None:
    """The machine's physical memory in bytes (None where os.sysconf cannot tell)."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, OSError, ValueError):
        return None


@functools.lru_cache(maxsize=1)
def _machine_limit() -> int:
    known = [v for v in (physical_memory(), cgroup_memory_limit()) if v]
    return min(int(min(known) * DEVICE_FRACTION), DEVICE_CAP) if known else DEVICE_CAP


def _parse_device_memory(text: str) -> int:
    if not text:
        return _machine_limit()
    return int(text) if text.isascii() and text.isdigit() and int(text) < 2**64 else 0


# Read on every call (tests and users change it at run time), parsed when it changed.
_DEVICE_MEMORY = Setting(DEVICE_MEMORY_ENV, _parse_device_memory)


def device_memory() -> int:
    """The CPU backends' device memory in bytes (module docstring): ``ACLNN_PY_SIM_DEVICE_MEMORY``
    when it is a positive integer, else the machine's rule."""
    return _DEVICE_MEMORY.get()


def check_allocation(nbytes: int) -> None:
    """AclnnError 207001 from ``aclrtMalloc`` if results of ``nbytes`` exceed the device memory."""
    limit = device_memory()
    if nbytes > limit:
        raise AclnnError(ACL_ERROR_RT_MEMORY_ALLOCATION, "aclrtMalloc",
                         f"out of device memory: {nbytes} bytes requested, the device has {limit} "
                         f"(numpy backend; {DEVICE_MEMORY_ENV} sets it)")
