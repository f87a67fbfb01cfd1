"""Owning wrappers of CANN handles: device memory, ``Tensor``, ``IntArray``, ``BoolArray``,
``FloatArray``, ``Scalar``, and the ``Transaction`` that releases them on error paths.

Every handle is released exactly once: by ``close()`` (also the context-manager exit), or by
a finalizer when the object is garbage-collected; finalizers never raise and do nothing once
the backend has been torn down at exit. Device memory is freed only after the owning thread's
stream has finished the work queued on it.
"""

from __future__ import annotations

import functools
import threading
import weakref
from collections.abc import Callable, Sequence

import numpy as np

from . import _backend
from ._dtypes import format_for_rank, to_acl, to_numpy
from ._errors import ACLNN_ERR_PARAM_INVALID, AclnnError

ACL_MEM_MALLOC_HUGE_FIRST = 0
ACL_MEMCPY_HOST_TO_DEVICE = 1
ACL_MEMCPY_DEVICE_TO_HOST = 2

try:  # NumPy 2
    from numpy.lib.array_utils import byte_bounds as _byte_bounds
except ImportError:  # pragma: no cover - NumPy 1.x
    _byte_bounds = np.byte_bounds


def _library(backend: str | None):
    from . import _ffi

    name = _backend.resolve(backend)
    if name == "numpy":
        raise AclnnError(ACLNN_ERR_PARAM_INVALID, "aclnn_py.Tensor",
                         "device tensors need backend 'npu' or 'sim' (the current backend is 'numpy')")
    return _ffi.library(name)


def _quietly(release: Callable[[], None]) -> None:
    try:
        release()
    except Exception:  # a finalizer must never raise
        pass


class Transaction:
    """Register the release of each handle as it is acquired; on error, release in reverse.

    ``with Transaction() as tx: h = acquire(); tx.add(lambda: release(h)); ...`` — when the
    block raises, every registered release runs (newest first) and the error propagates;
    when it completes, the releases run too unless ``tx.keep()`` was called.
    """

    def __init__(self) -> None:
        self._releases: list[Callable[[], None]] = []
        self._keep = False

    def add(self, release: Callable[[], None]) -> None:
        self._releases.append(release)

    def keep(self) -> None:
        """On success, do not release (ownership passed on)."""
        self._keep = True

    def __enter__(self) -> "Transaction":
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None and self._keep:
            self._releases.clear()
            return
        releases, self._releases = self._releases, []
        for release in reversed(releases):
            if exc_type is None:
                release()
            else:
                _quietly(release)


class DeviceBuffer:
    """``aclrtMalloc``'d device memory, freed once (after queued work) by ``free()`` or GC."""

    def __init__(self, lib, nbytes: int) -> None:
        self.lib = lib
        self.nbytes = int(nbytes)
        lib.stream()  # runtime, device and stream ready before the first allocation
        if self.nbytes == 0:
            self.ptr = lib.ffi.NULL
            self._finalizer = None
            return
        p = lib.ffi.new("void **")
        lib.call("aclrtMalloc", p, self.nbytes, ACL_MEM_MALLOC_HUGE_FIRST)
        self.ptr = p[0]
        self._finalizer = weakref.finalize(self, DeviceBuffer._release, lib, self.ptr, threading.get_ident())

    @staticmethod
    def _release(lib, ptr, owner_thread: int) -> None:
        if lib.finalized:
            return
        free = lambda: lib.fn("aclrtFree")(ptr)  # noqa: E731
        if threading.get_ident() == owner_thread and getattr(lib._local, "pending", None):
            lib._local.pending.append(free)  # queued work may still touch it
        else:
            _quietly(free)

    def free(self) -> None:
        if self._finalizer is not None:
            self._finalizer()

    def upload(self, address: int, nbytes: int) -> None:
        """Synchronous copy of ``nbytes`` host bytes at ``address`` to the start of the buffer
        (the caller keeps the host memory alive for the call)."""
        if nbytes:
            self.lib.call("aclrtMemcpy", self.ptr, self.nbytes, self.lib.ffi.cast("void *", address),
                          nbytes, ACL_MEMCPY_HOST_TO_DEVICE)

    def download(self, out: np.ndarray) -> None:
        """Synchronous device -> host copy into the C-contiguous ``out``."""
        if out.nbytes:
            self.lib.call("aclrtMemcpy", self.lib.ffi.cast("void *", out.ctypes.data), out.nbytes,
                          self.ptr, out.nbytes, ACL_MEMCPY_DEVICE_TO_HOST)


class Tensor:
    """A device-resident tensor: an ``aclTensor`` over device memory, on ``npu`` or ``sim``.

    ``shape``, ``strides`` (in elements, like ``aclCreateTensor``), ``offset`` (elements) and
    ``format`` describe the view; several views may share one device buffer.
    """

    def __init__(self, buffer: DeviceBuffer, shape: Sequence[int], dtype, strides: Sequence[int] | None = None,
                 offset: int = 0, format: int | None = None) -> None:
        self.buffer = buffer
        self.lib = buffer.lib
        self.shape = tuple(int(d) for d in shape)
        self.dtype = np.dtype(dtype)
        self.strides = tuple(int(s) for s in strides) if strides is not None else _contiguous(self.shape)
        self.offset = int(offset)
        self.format = int(format_for_rank(len(self.shape)) if format is None else format)
        ffi = self.lib.ffi
        dims = ffi.new("int64_t[]", self.shape or [0])
        st = ffi.new("int64_t[]", self.strides or [0])
        storage = ffi.new("int64_t[]", [buffer.nbytes // self.dtype.itemsize])
        handle = self.lib.fn("aclCreateTensor")(
            dims, len(self.shape), int(to_acl(self.dtype)), st, self.offset, self.format,
            storage, 1, buffer.ptr)
        if handle == ffi.NULL:
            raise AclnnError(ACLNN_ERR_PARAM_INVALID, "aclCreateTensor",
                             self.lib.recent_error() or f"could not create a tensor of shape {list(self.shape)}")
        self.handle = handle
        self._finalizer = weakref.finalize(self, Tensor._release, self.lib, handle)

    @staticmethod
    def _release(lib, handle) -> None:
        if not lib.finalized:
            _quietly(lambda: lib.fn("aclDestroyTensor")(handle))

    # -- construction ---------------------------------------------------------------------

    @classmethod
    def from_numpy(cls, array: np.ndarray, *, backend: str | None = None, format: int | None = None) -> "Tensor":
        """Copy ``array`` to the device. A view with non-negative strides keeps its strides
        (the span it covers is copied and described by strides and offset); others are made
        contiguous first."""
        if not isinstance(array, np.ndarray):
            raise TypeError(f"Tensor.from_numpy expects a numpy.ndarray, got {type(array).__name__}")
        to_acl(array.dtype)  # TypeError for dtypes CANN has no name for
        lib = _library(backend)
        item = array.itemsize
        if array.size == 0:
            return cls(DeviceBuffer(lib, 0), array.shape, array.dtype, format=format)
        if array.flags.c_contiguous or any(s < 0 or s % item for s in array.strides):
            array = np.ascontiguousarray(array)
        # The bytes the view spans, copied as they lie: strides describe the view on the device.
        low, high = _byte_bounds(array)
        buf = DeviceBuffer(lib, high - low)
        try:
            buf.upload(low, high - low)
            strides = [s // item for s in array.strides]
            return cls(buf, array.shape, array.dtype, strides, 0, format)
        except BaseException:
            buf.free()
            raise

    @classmethod
    def empty(cls, shape: Sequence[int], dtype, *, backend: str | None = None, format: int | None = None) -> "Tensor":
        """A new contiguous device tensor (contents undefined)."""
        lib = _library(backend)
        shape = tuple(int(d) for d in shape)
        nbytes = int(np.prod(shape, dtype=object)) * np.dtype(dtype).itemsize
        buf = DeviceBuffer(lib, nbytes)
        try:
            return cls(buf, shape, dtype, format=format)
        except BaseException:
            buf.free()
            raise

    def view(self, shape: Sequence[int], strides: Sequence[int], offset: int = 0) -> "Tensor":
        """Another aclTensor over the same device memory (strides and offset in elements)."""
        return Tensor(self.buffer, shape, self.dtype, strides, offset)

    # -- data -----------------------------------------------------------------------------

    def numpy(self) -> np.ndarray:
        """A host copy (C-contiguous); waits for the work queued on this thread's stream."""
        self.lib.synchronize()
        host = np.empty(self.buffer.nbytes // self.dtype.itemsize, dtype=self.dtype)
        self.buffer.download(host)
        if not self.shape or 0 not in self.shape:
            view = np.lib.stride_tricks.as_strided(
                host[self.offset:], self.shape, [s * self.dtype.itemsize for s in self.strides])
            return np.array(view, copy=True)
        return np.empty(self.shape, self.dtype)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def acl_dtype(self) -> int:
        return int(to_acl(self.dtype))

    def close(self) -> None:
        """Destroy the aclTensor now and drop this view's hold on the device memory."""
        self._finalizer()
        self.buffer = None

    def __enter__(self) -> "Tensor":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        return (f"Tensor(shape={list(self.shape)}, dtype={self.dtype}, strides={list(self.strides)}, "
                f"offset={self.offset}, backend={self.lib.backend!r})")


@functools.lru_cache(maxsize=1024)
def _contiguous(shape: tuple[int, ...]) -> tuple[int, ...]:
    """Row-major strides in elements (a zero dimension counts as one); cached per shape."""
    strides, acc = [], 1
    for d in reversed(shape):
        strides.append(acc)
        acc *= max(int(d), 1)
    return tuple(reversed(strides))


class _HostArray:
    """Shared code of the aclIntArray / aclBoolArray / aclFloatArray wrappers."""

    _c_type = ""
    _create = ""
    _destroy = ""

    def __init__(self, values: Sequence, *, backend: str | None = None) -> None:
        self.lib = _library(backend)
        self.values = tuple(values)
        ffi = self.lib.ffi
        buf = ffi.new(f"{self._c_type}[]", list(self.values) or [0])
        handle = self.lib.fn(self._create)(buf, len(self.values))
        if handle == ffi.NULL:
            raise AclnnError(ACLNN_ERR_PARAM_INVALID, self._create, self.lib.recent_error())
        self.handle = handle
        self._finalizer = weakref.finalize(self, _HostArray._release, self.lib, self._destroy, handle)

    @staticmethod
    def _release(lib, destroy: str, handle) -> None:
        if not lib.finalized:
            _quietly(lambda: lib.fn(destroy)(handle))

    def close(self) -> None:
        self._finalizer()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __len__(self) -> int:
        return len(self.values)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({list(self.values)})"


class IntArray(_HostArray):
    """An ``aclIntArray`` (int64 values, copied by CANN at creation)."""

    _c_type, _create, _destroy = "int64_t", "aclCreateIntArray", "aclDestroyIntArray"


class BoolArray(_HostArray):
    """An ``aclBoolArray``."""

    _c_type, _create, _destroy = "bool", "aclCreateBoolArray", "aclDestroyBoolArray"


class FloatArray(_HostArray):
    """An ``aclFloatArray`` (float32 values)."""

    _c_type, _create, _destroy = "float", "aclCreateFloatArray", "aclDestroyFloatArray"


class Scalar:
    """An ``aclScalar`` holding one value of ``dtype`` (copied by CANN at creation)."""

    def __init__(self, value, dtype, *, backend: str | None = None) -> None:
        self.lib = _library(backend)
        self.value = np.asarray(value, dtype=dtype)
        ffi = self.lib.ffi
        handle = self.lib.fn("aclCreateScalar")(ffi.cast("void *", self.value.ctypes.data),
                                                int(to_acl(self.value.dtype)))
        if handle == ffi.NULL:
            raise AclnnError(ACLNN_ERR_PARAM_INVALID, "aclCreateScalar", self.lib.recent_error())
        self.handle = handle
        self._finalizer = weakref.finalize(self, _HostArray._release, self.lib, "aclDestroyScalar", handle)

    def close(self) -> None:
        self._finalizer()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


__all__ = ["BoolArray", "DeviceBuffer", "FloatArray", "IntArray", "Scalar", "Tensor", "Transaction", "to_numpy"]
