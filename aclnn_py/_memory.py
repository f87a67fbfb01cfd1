"""How much device memory the CPU backends have: one rule for the simulator and the numpy backend.

A shape that passes an operator's checks may still need more memory than a device has; on the
NPU that is ``aclrtMalloc`` failing with 207001 (ACL_ERROR_RT_MEMORY_ALLOCATION). The simulator's
device has a fixed amount of memory and fails the same way beyond it. The numpy backend applies
the same limit to the results it is about to allocate, so such a call is the same ``AclnnError``
207001 from ``aclrtMalloc`` on both, never NumPy's ``MemoryError`` or an exhausted host.

The rule (the simulator applies the same one; see ``aclnn_py/sim/README.md``):

* ``ACLNN_PY_SIM_DEVICE_MEMORY``, a positive number of bytes, if set;
* else ``DEVICE_FRACTION`` of the smaller of the machine's physical memory (``os.sysconf``) and
  the memory limit of this process's cgroup (v2 ``memory.max``, v1 ``memory.limit_in_bytes``).
"""

from __future__ import annotations

import functools
import os

from ._errors import ACL_ERROR_RT_MEMORY_ALLOCATION, AclnnError

DEVICE_MEMORY_ENV = "ACLNN_PY_SIM_DEVICE_MEMORY"
DEVICE_FRACTION = 1 / 2

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
    """The memory limit of this process's cgroup in bytes, or None if it has none."""
    paths = []
    try:
        with open("/proc/self/cgroup") as f:
            for line in f:
                _, controllers, path = line.rstrip("\n").split(":", 2)
                if controllers == "":  # v2 unified hierarchy
                    paths.append(os.path.join(_CGROUP_ROOT, path.lstrip("/"), "memory.max"))
                elif "memory" in controllers.split(","):
                    paths.append(os.path.join(_CGROUP_ROOT, "memory", path.lstrip("/"), "memory.limit_in_bytes"))
    except (OSError, ValueError):
        pass
    # Inside a container the cgroup's own directory is usually mounted as the root.
    paths += [os.path.join(_CGROUP_ROOT, "memory.max"), os.path.join(_CGROUP_ROOT, "memory", "memory.limit_in_bytes")]
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
    return int(min(known) * DEVICE_FRACTION) if known else 2**62


def device_memory() -> int:
    """The CPU backends' device memory in bytes (module docstring): ``ACLNN_PY_SIM_DEVICE_MEMORY``
    when it is a positive integer, else the machine's rule."""
    text = os.environ.get(DEVICE_MEMORY_ENV, "")
    if text.isdigit() and int(text) > 0:
        return int(text)
    return _machine_limit()


def check_allocation(nbytes: int) -> None:
    """AclnnError 207001 from ``aclrtMalloc`` if results of ``nbytes`` exceed the device memory."""
    limit = device_memory()
    if nbytes > limit:
        raise AclnnError(ACL_ERROR_RT_MEMORY_ALLOCATION, "aclrtMalloc",
                         f"out of device memory: {nbytes} bytes requested, the device has {limit} "
                         f"(numpy backend; {DEVICE_MEMORY_ENV} sets it)")
