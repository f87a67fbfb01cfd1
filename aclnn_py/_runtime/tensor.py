"""Owning wrappers of device memory: ``DeviceBuffer``, ``Tensor`` (an aclTensor over it), and
``DeviceView`` (a caller's device memory, e.g. a torch_npu tensor's, used in place).

Every handle is released exactly once: by ``close()`` (also the context-manager exit), or by
a finalizer when the object is garbage-collected; finalizers never raise and do nothing once
the backend has been torn down at exit. Device memory is freed only after the owning thread's
stream has finished the work queued on it (dropped on another thread: after the owning thread's
next synchronisation, or at once if that thread has ended). A wrapper made of one handle gives it to its
finalizer the moment it exists; one built from several (a ``Tensor`` and its new device
memory) is built inside a ``Transaction`` (``resources``): a
failure halfway through (``aclCreateTensor`` refusing after ``aclrtMalloc`` succeeded...)
releases what was already acquired, and on success the owners take the handles over.
"""

from __future__ import annotations

import functools
import numbers
import operator
import threading
import weakref
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeAlias

import numpy as np
from numpy.typing import DTypeLike

from .._constants import ACL_MEM_MALLOC_HUGE_FIRST, ACL_MEMCPY_DEVICE_TO_HOST, ACL_MEMCPY_HOST_TO_DEVICE
from .._dtypes import bfloat16, format_for_rank, to_acl
from .._errors import ACLNN_ERR_PARAM_INVALID, AclnnError
from . import pool as _pool
from .backend import device_library
from .resources import Transaction, quietly

if TYPE_CHECKING:
    from .library import Library

CData: TypeAlias = Any  # a cffi pointer

INT64_MAX = int(np.iinfo(np.int64).max)  # sizes, strides and offsets are int64_t in C

try:  # NumPy 2
    from numpy.lib.array_utils import byte_bounds as _byte_bounds
except ImportError:  # pragma: no cover - NumPy 1.x
    _byte_bounds = np.byte_bounds  # type: ignore[attr-defined]


def _index(api: str, name: str, value: object) -> int:
    """An int argument of the Python layer (bool and non-integers are TypeError; a value
    outside int64 is ValueError: the C side holds every size and stride in int64_t)."""
    if type(value) is int:
        v = value
    elif isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{api}: {name} must be an int, got {type(value).__name__}")
    else:
        v = operator.index(value)
    if not -INT64_MAX - 1 <= v <= INT64_MAX:
        raise ValueError(f"{api}: {name} = {v} does not fit in int64")
    return v


def _dims(api: str, name: str, values: object) -> tuple[int, ...]:
    """A sequence of int64 values (a shape or strides)."""
    if type(values) is tuple or type(values) is list:
        # The common case (a NumPy shape, strides computed here): plain ints, checked in one
        # pass; anything else takes the general path below, which names the bad element.
        for v in values:
            if type(v) is not int or not -INT64_MAX - 1 <= v <= INT64_MAX:
                break
        else:
            return tuple(values)
    if isinstance(values, (str, bytes)) or not isinstance(values, (Sequence, np.ndarray)):
        raise TypeError(f"{api}: {name} must be a sequence of ints, got {type(values).__name__}")
    if isinstance(values, np.ndarray) and values.ndim != 1:
        raise TypeError(f"{api}: {name} must be a 1-D sequence of ints, got an array of shape {list(values.shape)}")
    return tuple(_index(api, f"{name}[{i}]", v) for i, v in enumerate(values))


def check_view(api: str, shape: Sequence[int], strides: Sequence[int], offset: int, storage: int) -> None:
    """ValueError unless the view ``shape``/``strides``/``offset`` (elements) lies inside a
    storage of ``storage`` elements: no negative dimension, stride or offset (CANN has no
    negative strides), one stride per dimension, and the last element it reaches below
    ``storage``. A view with a zero dimension reaches nothing."""
    if any(d < 0 for d in shape):
        raise ValueError(f"{api}: shape must not have negative dimensions, got {list(shape)}")
    if len(strides) != len(shape):
        raise ValueError(f"{api}: strides must have one entry per dimension ({len(shape)}), got {list(strides)}")
    if any(s < 0 for s in strides):
        raise ValueError(f"{api}: strides must be >= 0 (CANN has no negative strides), got {list(strides)}")
    if any(s > INT64_MAX for s in strides):
        # Row-major strides of a shape with a zero dimension count it as one: the others' product
        # can pass int64 although the view has no element (shape (2, 2**62, 4, 0)).
        raise ValueError(f"{api}: the strides {list(strides)} of shape {list(shape)} do not fit int64_t")
    if offset < 0:
        raise ValueError(f"{api}: offset must be >= 0, got {offset}")
    if 0 in shape:
        return
    last = offset + sum((d - 1) * s for d, s in zip(shape, strides))
    if last >= storage:
        raise ValueError(f"{api}: the view (shape {list(shape)}, strides {list(strides)}, offset {offset}) reaches "
                         f"element {last}, outside its storage of {storage} elements")


class DeviceBuffer:
    """``aclrtMalloc``'d device memory, freed once (after queued work) by ``free()`` or GC."""

    #: The block's address, held by the buffer of an output the fast entry made (its ``ptr`` is
    #: made from it on first use).
    address: int

    def __init__(self, lib: Library, nbytes: int) -> None:
        self.lib = lib
        self.nbytes = _index("aclnn_py.DeviceBuffer", "nbytes", nbytes)
        if self.nbytes < 0:
            raise ValueError(f"aclnn_py.DeviceBuffer: nbytes must be >= 0, got {self.nbytes}")
        handover = lib.handover()  # (runtime, device and stream ready before the first allocation)
        #: The thread whose stream the memory's work queues on, and what hands it releases.
        self.owner: tuple[int, Any] = (threading.get_ident(), handover)
        self._finalizer: Callable[[], object] | None = None
        if self.nbytes == 0:
            self.ptr = lib.ffi.NULL
            return
        self.ptr = _allocate(lib, self.nbytes)
        # (One handle: its finalizer owns it from the moment it exists.)
        self._finalizer = weakref.finalize(self, DeviceBuffer.release_block, lib, _pool.pool(lib),
                                           int(lib.ffi.cast("uintptr_t", self.ptr)), self.nbytes, *self.owner)

    @staticmethod
    def release_block(lib: Library, pool: _pool.DevicePool, address: int, nbytes: int, owner_thread: int,
                 handover: Any) -> None:
        """The block at ``address`` back to the caching allocator ``pool`` (which keeps it for
        the next buffer of its size, or frees it): only once the stream is past the work that
        may use it, as a free would be. (The fast entry's outputs: its ``Release`` does this in
        C, and calls this off its common case.)"""
        if lib.finalized:
            return
        free = functools.partial(pool.give, address, nbytes)
        if threading.get_ident() != owner_thread:
            # Dropped on another thread (close(), or the last reference went there): the owner's
            # queued work may still touch it, and only the owner knows its streams. Freed after
            # the owner's next synchronisation, or now if the owner has ended.
            quietly(lambda: lib.hand_over(handover, free))
            return
        try:  # (``quietly``, inline: this runs for every output a device chain drops)
            state = getattr(lib.local, "state", None)  # (lib.has_pending(), inline)
            if state is not None and state.pending:
                # Queued work may still touch it. (Past the pending budget this synchronises; a
                # finalizer cannot raise a failure of queued work, so it is dropped here.)
                lib.defer(free, nbytes)
            else:
                free()
        except Exception:
            pass

    def free(self) -> None:
        if self._finalizer is not None:
            self._finalizer()

    if not TYPE_CHECKING:  # (hidden from mypy: every other missing attribute stays an error there)
        def __getattr__(self, name: str) -> Any:
            return _pointer_on_first_use(self, name, "ptr", "address", "void *")

    def upload(self, address: int, nbytes: int) -> None:
        """Synchronous copy of ``nbytes`` host bytes at ``address`` to the start of the buffer
        (the caller keeps the host memory alive for the call)."""
        if nbytes:
            self.lib.call("aclrtMemcpy", self.ptr, self.nbytes, self.lib.ffi.cast("void *", address),
                          nbytes, ACL_MEMCPY_HOST_TO_DEVICE)

    def download(self, out: np.ndarray, offset: int = 0) -> None:
        """Synchronous device -> host copy into the C-contiguous ``out`` of its bytes from byte
        ``offset`` of the buffer on."""
        if out.nbytes:
            self.lib.call("aclrtMemcpy", self.lib.ffi.cast("void *", out.ctypes.data), out.nbytes,
                          self.lib.ffi.cast("char *", self.ptr) + offset, out.nbytes, ACL_MEMCPY_DEVICE_TO_HOST)


def _pointer_on_first_use(obj: Any, name: str, pointer: str, key: str, ctype: str) -> CData:
    """``obj.<pointer>`` of an object the fast entry made (``aclnn_py/_fast/outputs.c``): it holds
    the address (attribute ``key``) and the cffi pointer of type ``ctype`` is made on first use
    (and kept). Any other missing attribute is the usual AttributeError (``__getattr__``)."""
    address = getattr(obj, key, None) if name == pointer else None  # (key unset: __getattr__ says so)
    if address is None:
        raise AttributeError(f"'{type(obj).__name__}' object has no attribute '{name}'")
    made = obj.lib.ffi.cast(ctype, address)
    setattr(obj, pointer, made)
    return made


def _allocate(lib: Library, nbytes: int) -> CData:
    """``nbytes`` (> 0) of device memory: a cached block of that size (``pool``), else
    ``aclrtMalloc``; a failed allocation empties the cache and is tried once more."""
    cache = _pool.pool(lib)
    address = cache.take(nbytes)
    if address is not None:
        return lib.ffi.cast("void *", address)
    p = lib.ffi.new("void **")
    status = lib.fn("aclrtMalloc")(p, nbytes, ACL_MEM_MALLOC_HUGE_FIRST)
    if status and cache.nbytes:
        cache.trim()
        status = lib.fn("aclrtMalloc")(p, nbytes, ACL_MEM_MALLOC_HUGE_FIRST)
    lib.check(status, "aclrtMalloc")
    return p[0]


class _Shaped:
    """``ndim`` and ``size`` of something with a ``shape`` (as ``numpy.ndarray``'s)."""

    __slots__ = ()
    shape: tuple[int, ...]

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        """The number of elements."""
        n = 1
        for d in self.shape:
            n *= d
        return n


class Tensor(_Shaped):
    """A device-resident tensor: an ``aclTensor`` over device memory, on ``npu`` or ``sim``.

    ``shape``, ``strides`` (in elements, like ``aclCreateTensor``), ``offset`` (elements) and
    ``format`` describe the view; several views may share one device buffer. ``numpy()`` or
    ``np.asarray(tensor)`` downloads it (after the work queued on this thread's stream).
    """

    # Slots: the fast entry makes an output Tensor per operator call and writes these directly
    # (``aclnn_py/_fast/outputs.c``, ``set_tensor_type``); ``handle`` and ``buffer`` of such an
    # output are made on first use (``__getattr__``). A user's own attributes go to a
    # dictionary, made when the first one is set.
    __slots__ = ("buffer", "lib", "dtype", "shape", "strides", "offset", "format", "handle", "handle_address",
                 "_finalizer", "fast_key", "__weakref__", "__dict__")

    def __init__(self, buffer: DeviceBuffer, shape: Sequence[int], dtype: DTypeLike, strides: Sequence[int] | None = None,
                 offset: int = 0, format: int | None = None) -> None:
        if not isinstance(buffer, DeviceBuffer):
            raise TypeError(f"aclnn_py.Tensor: buffer must be a DeviceBuffer, got {type(buffer).__name__}")
        self.buffer: DeviceBuffer | None = buffer
        self.lib = buffer.lib
        self.dtype = np.dtype(dtype)
        acl_dtype = int(to_acl(self.dtype))  # TypeError for dtypes CANN has no name for
        self.shape = _dims("aclnn_py.Tensor", "shape", shape)
        self.strides = (_dims("aclnn_py.Tensor", "strides", strides) if strides is not None
                        else _contiguous(self.shape))
        self.offset = _index("aclnn_py.Tensor", "offset", offset)
        self.format = _index("aclnn_py.Tensor", "format",
                             format_for_rank(len(self.shape)) if format is None else format)
        if not -(2**31) <= self.format < 2**31:
            raise ValueError(f"aclnn_py.Tensor: format = {self.format} is not an aclFormat value")
        storage_elements = buffer.nbytes // self.dtype.itemsize
        check_view("aclnn_py.Tensor", self.shape, self.strides, self.offset, storage_elements)
        ffi = self.lib.ffi
        dims = ffi.new("int64_t[]", self.shape or [0])
        st = ffi.new("int64_t[]", self.strides or [0])
        storage = ffi.new("int64_t[]", [storage_elements])
        handle = self.lib.fn("aclCreateTensor")(
            dims, len(self.shape), acl_dtype, st, self.offset, self.format,
            storage, 1, buffer.ptr)
        if handle == ffi.NULL:
            raise AclnnError(ACLNN_ERR_PARAM_INVALID, "aclCreateTensor",
                             self.lib.recent_error() or f"could not create a tensor of shape {list(self.shape)}")
        self.handle = handle
        address = int(ffi.cast("uintptr_t", handle))
        self._finalizer: Callable[[], object] = weakref.finalize(self, Tensor.release_handle, self.lib, address,
                                                                 *buffer.owner)
        #: What the fast entry keys and passes this Tensor by, None once closed: its view's token,
        #: its aclTensor's address, and its device memory's (an element of a tensor list is
        #: described anew over that memory).
        self.fast_key: tuple[tuple[Any, ...], int, int] | None = (
            _token(self.lib, self.dtype, self.shape, self.strides, self.offset, self.format, storage_elements),
            address, int(ffi.cast("uintptr_t", buffer.ptr)))

    if not TYPE_CHECKING:  # (hidden from mypy: every other missing attribute stays an error there)
        def __getattr__(self, name: str) -> Any:
            if name == "buffer":
                return self._output_buffer()
            return _pointer_on_first_use(self, name, "handle", "handle_address", "aclTensor *")

    def _output_buffer(self) -> DeviceBuffer | None:
        """The ``DeviceBuffer`` of an output the fast entry made (``aclnn_py/_fast/outputs.c``),
        made when first asked for: the output's release hands its block over to it (views
        share it from then on). None once the output is released (as ``close`` leaves it)."""
        release: Any = getattr(self, "_finalizer", None)
        split = getattr(release, "split_block", None)
        if split is None:
            raise AttributeError(f"'{type(self).__name__}' object has no attribute 'buffer'")
        if not release.alive:
            self.buffer = None
            return None
        taken = split()
        buffer = DeviceBuffer.__new__(DeviceBuffer)
        buffer.lib, buffer.owner = self.lib, release.owner
        if taken is None:  # a zero-size output: no memory
            buffer.nbytes, buffer.ptr, buffer._finalizer = 0, self.lib.ffi.NULL, None
        else:
            buffer._finalizer, buffer.address, buffer.nbytes = taken
        self.buffer = buffer
        return buffer

    @staticmethod
    def release_handle(lib: Library, address: int, owner_thread: int, handover: Any) -> None:
        """``aclDestroyTensor`` of the aclTensor at ``address``: now on the owner thread, else
        after its next synchronisation; nothing once the library is torn down. (The fast
        entry's outputs: its ``Release`` does this in C, and calls this off the owner thread.)"""
        if lib.finalized:
            return
        destroy = lib.fn("aclDestroyTensor")
        handle = lib.ffi.cast(lib.tensor_p, address)  # (no type parsed here: Library.__init__)
        if threading.get_ident() != owner_thread:
            # The owner thread may be in the middle of a call that reads the descriptor.
            quietly(lambda: lib.hand_over(handover, lambda: destroy(handle)))
            return
        try:  # (``quietly``, inline)
            destroy(handle)
        except Exception:
            pass

    # -- construction ---------------------------------------------------------------------

    @classmethod
    def from_numpy(cls, array: np.ndarray, *, backend: str | None = None, format: int | None = None) -> "Tensor":
        """Copy ``array`` to the device. A view with non-negative strides keeps its strides
        (the span it covers is copied and described by strides and offset); others are made
        contiguous first."""
        if not isinstance(array, np.ndarray):
            raise TypeError(f"Tensor.from_numpy expects a numpy.ndarray, got {type(array).__name__}")
        to_acl(array.dtype)  # TypeError for dtypes CANN has no name for
        lib = device_library(backend)
        item = array.itemsize
        if array.size == 0:
            return cls(DeviceBuffer(lib, 0), array.shape, array.dtype, format=format)
        if not array.flags.c_contiguous and any(s < 0 or s % item for s in array.strides):
            array = np.ascontiguousarray(array)  # (only when not contiguous: it makes a 0-d array 1-d)
        # The bytes the view spans, copied as they lie: strides describe the view on the device.
        low, high = _byte_bounds(array)
        with Transaction() as tx:
            buf = DeviceBuffer(lib, high - low)
            tx.add(DeviceBuffer.free, buf)
            buf.upload(low, high - low)
            strides = [s // item for s in array.strides]
            tensor = cls(buf, array.shape, array.dtype, strides, 0, format)
            tx.keep()  # the Tensor holds the buffer now
        return tensor

    @classmethod
    def empty(cls, shape: Sequence[int], dtype: DTypeLike, *, backend: str | None = None, format: int | None = None) -> "Tensor":
        """A new contiguous device tensor (contents undefined)."""
        dtype = np.dtype(dtype)
        to_acl(dtype)  # TypeError for dtypes CANN has no name for
        shape = _dims("aclnn_py.Tensor.empty", "shape", shape)
        if any(d < 0 for d in shape):
            raise ValueError(f"aclnn_py.Tensor.empty: shape must not have negative dimensions, got {list(shape)}")
        nbytes = dtype.itemsize
        for d in shape:
            nbytes *= d
        if nbytes > INT64_MAX:
            raise ValueError(f"aclnn_py.Tensor.empty: shape {list(shape)} of {dtype} needs {nbytes} bytes, "
                             "more than int64 can count")
        lib = device_library(backend)
        with Transaction() as tx:
            buf = DeviceBuffer(lib, nbytes)
            tx.add(DeviceBuffer.free, buf)
            tensor = cls(buf, shape, dtype, format=format)
            tx.keep()  # the Tensor holds the buffer now
        return tensor

    def view(self, shape: Sequence[int], strides: Sequence[int], offset: int = 0) -> "Tensor":
        """Another aclTensor over the same device memory (strides and offset in elements).

        ValueError if the view reaches outside the buffer, or has a negative stride or offset."""
        return Tensor(self._live_buffer("view"), shape, self.dtype, strides, offset)

    def _live_buffer(self, what: str) -> DeviceBuffer:
        if self.buffer is None:
            raise ValueError(f"aclnn_py.Tensor.{what}: the Tensor is closed")
        return self.buffer

    def check_argument(self, api: str, name: str, lib: Library) -> DeviceBuffer:
        """Its device buffer; TypeError unless this Tensor can be argument ``name`` of a call of
        ``api`` on ``lib``: it lives on that library's backend and is not closed."""
        if self.lib is not lib:
            raise TypeError(f"{api}: {name} is a Tensor of backend {self.lib.backend!r}, "
                            f"but this call runs on {lib.backend!r}")
        if self.buffer is None:
            raise TypeError(f"{api}: {name} is a closed Tensor")
        return self.buffer

    # -- data -----------------------------------------------------------------------------

    def numpy(self) -> np.ndarray:
        """A host copy (C-contiguous); waits for the work queued on this thread's stream.

        ValueError when the host cannot hold the copy (a view with zero strides may describe
        far more elements than its buffer has)."""
        buffer = self._live_buffer("numpy")
        self.lib.synchronize()
        try:
            if 0 in self.shape:
                return np.empty(self.shape, self.dtype)
            if all(s == c for s, c, d in zip(self.strides, _contiguous(self.shape), self.shape) if d > 1):
                # A contiguous view (a whole Tensor, a run of rows): its bytes straight into the
                # result, one copy (a device copy of a few MiB into a new array and then a copy
                # of that took 2-5x as long: each into fresh pages)
                out = np.empty(self.shape, self.dtype)
                buffer.download(out, self.offset * self.dtype.itemsize)
                return out
            host = np.empty(buffer.nbytes // self.dtype.itemsize, dtype=self.dtype)
            buffer.download(host)
            # (A dimension of 1 never steps: its stride, however large, does not matter.)
            view = np.lib.stride_tricks.as_strided(
                host[self.offset:], self.shape,
                [s * self.dtype.itemsize if d > 1 else 0 for d, s in zip(self.shape, self.strides)])
            return np.array(view, order="C", copy=True)  # (order "K" would keep a transposed view's)
        except MemoryError as exc:
            raise ValueError(f"aclnn_py.Tensor.numpy: a host copy of shape {list(self.shape)} ({self.size} "
                             f"elements of {self.dtype}) cannot be allocated: {exc}") from None

    def copy_from(self, array: object) -> None:
        """Write ``array`` (an array-like of this Tensor's shape and dtype) into its device
        memory, after the work queued on this thread's stream (which may read or write it): new
        data for a chain's input, e.g. between replays of a captured graph (``aclnn_py.capture``).
        A contiguous view only (ValueError otherwise, and for another shape or dtype)."""
        buffer = self._live_buffer("copy_from")
        host = np.asarray(array)
        if host.shape != self.shape or host.dtype != self.dtype:
            raise ValueError(f"aclnn_py.Tensor.copy_from: expected shape {list(self.shape)} and dtype {self.dtype}, "
                             f"got shape {list(host.shape)} and dtype {host.dtype}")
        if self.strides != _contiguous(self.shape) and 0 not in self.shape:
            raise ValueError(f"aclnn_py.Tensor.copy_from: the Tensor is a strided view (strides {list(self.strides)}); "
                             "write into a contiguous Tensor")
        if not host.flags.c_contiguous:
            host = np.ascontiguousarray(host)
        self.lib.synchronize()
        if host.nbytes:
            start = self.offset * self.dtype.itemsize
            ffi = self.lib.ffi
            self.lib.call("aclrtMemcpy", ffi.cast("char *", buffer.ptr) + start, buffer.nbytes - start,
                          ffi.cast("void *", host.ctypes.data), host.nbytes, ACL_MEMCPY_HOST_TO_DEVICE)

    def __array__(self, dtype: DTypeLike | None = None, copy: bool | None = None) -> np.ndarray:
        """``np.asarray(tensor)``: waits for the queued work and downloads (NumPy 2 protocol).

        A device tensor is never host memory, so ``copy=False`` is a ValueError."""
        if copy is False:
            raise ValueError("aclnn_py.Tensor: a device tensor cannot be viewed as a NumPy array without a copy "
                             "(np.asarray downloads it; copy=False is impossible)")
        host = self.numpy()
        return host if dtype is None else host.astype(dtype, copy=False)

    @property
    def acl_dtype(self) -> int:
        return int(to_acl(self.dtype))

    def close(self) -> None:
        """Destroy the aclTensor now and drop this view's hold on the device memory. ``handle``
        is None from then on: the binding may reuse the destroyed aclTensor's memory for a new
        output, so the old pointer would name another tensor."""
        self.fast_key = None  # (first: the fast entry no longer takes it)
        self._finalizer()
        self.buffer = None
        self.handle = None

    def __enter__(self) -> "Tensor":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return (f"Tensor(shape={list(self.shape)}, dtype={self.dtype}, strides={list(self.strides)}, "
                f"offset={self.offset}, backend={self.lib.backend!r})")


# torch dtypes by name (``str(torch.float32)`` is ``"torch.float32"``): read without importing torch.
_TORCH_DTYPES = {
    "float32": np.float32, "float": np.float32, "float16": np.float16, "half": np.float16,
    "bfloat16": bfloat16, "float64": np.float64, "double": np.float64, "int8": np.int8,
    "uint8": np.uint8, "int16": np.int16, "short": np.int16, "int32": np.int32, "int": np.int32,
    "int64": np.int64, "long": np.int64, "bool": np.bool_, "complex64": np.complex64,
    "complex128": np.complex128, "uint16": np.uint16, "uint32": np.uint32, "uint64": np.uint64,
}


class DeviceView(_Shaped):
    """Device memory a caller owns (a torch_npu tensor), described for a non-owning aclTensor.

    ``ptr`` is the address of the first element (torch_npu's ``data_ptr()`` already includes the
    storage offset), ``strides`` are in elements; ``owner`` is the caller's object, kept alive
    until the stream is past the call that uses it."""

    __slots__ = ("ptr", "shape", "strides", "dtype", "owner")

    def __init__(self, ptr: int, shape: tuple[int, ...], strides: tuple[int, ...], dtype: np.dtype,
                 owner: object) -> None:
        self.ptr, self.shape, self.strides, self.dtype, self.owner = ptr, shape, strides, dtype, owner

    @property
    def span(self) -> int:
        """Elements from the first to one past the last the view reaches (0 when empty)."""
        if 0 in self.shape:
            return 0
        return 1 + sum((d - 1) * s for d, s in zip(self.shape, self.strides))


def device_view(api: str, name: str, value: object) -> DeviceView | None:
    """A ``DeviceView`` of ``value`` if it has torch_npu's interface (``device.type == "npu"``,
    ``data_ptr()``, ``shape``, ``stride()``, ``dtype``, ``storage_offset()``), else None.

    TypeError for such an object whose dtype CANN has no name for; ValueError for a negative
    stride or offset (CANN has none)."""
    device = getattr(value, "device", None)
    if getattr(device, "type", None) != "npu":
        return None
    if not all(callable(getattr(value, m, None)) for m in ("data_ptr", "stride", "storage_offset")):
        return None
    torch_dtype = str(getattr(value, "dtype", ""))
    dtype = _TORCH_DTYPES.get(torch_dtype.removeprefix("torch."))
    if dtype is None:
        raise TypeError(f"{api}: {name} dtype {torch_dtype} has no aclDataType counterpart")
    shape = _dims(api, f"{name}.shape", tuple(getattr(value, "shape")))
    strides = _dims(api, f"{name}.stride()", tuple(value.stride()))  # type: ignore[attr-defined]
    offset = _index(api, f"{name}.storage_offset()", value.storage_offset())  # type: ignore[attr-defined]
    check_view(api, shape, strides, offset, INT64_MAX)
    ptr = _index(api, f"{name}.data_ptr()", value.data_ptr())  # type: ignore[attr-defined]
    if ptr == 0 and 0 not in shape:
        raise ValueError(f"{api}: {name}.data_ptr() is NULL for a non-empty tensor")
    return DeviceView(ptr, shape, strides, np.dtype(dtype), value)


def output_form(tensor: Tensor, zero: bool) -> tuple[Any, ...]:
    """What the fast entry (``aclnn_py/_fast/outputs.c``'s ``make_output``) makes a new output
    Tensor like ``tensor`` from, without Python code per call: its view as ``aclCreateTensor``
    takes it, whether it starts as zeros, the caching allocator, and the attributes of the new
    ``Tensor`` that are the same for every output of this form. ``tensor`` is an output the
    Python path made (``Tensor.empty``): its view was checked then.

    ``(zero, aclDataType, shape, strides, offset, format, storage elements, bytes, pool, Tensor
    type, its attributes, token)``; the entry adds per call ``_finalizer`` (the release of the
    aclTensor and the block), ``handle_address`` and ``fast_key``. ``handle`` is made from
    ``handle_address`` on first use, and ``buffer`` when first asked for (``_output_buffer``)."""
    assert tensor.fast_key is not None and tensor.buffer is not None
    token = tensor.fast_key[0]
    lib, storage, nbytes = tensor.lib, token[6], tensor.buffer.nbytes
    tensor_attributes = {"lib": lib, "dtype": tensor.dtype, "shape": tensor.shape, "strides": tensor.strides,
                         "offset": tensor.offset, "format": tensor.format}
    return (bool(zero), int(to_acl(tensor.dtype)), tensor.shape, tensor.strides, tensor.offset, tensor.format,
            storage, nbytes, _pool.pool(lib), Tensor, tensor_attributes, token)


_TOKENS: dict[tuple[Any, ...], tuple[Any, ...]] = {}
_MAX_TOKENS = 4096


def _token(lib: Library, dtype: np.dtype, shape: tuple[int, ...], strides: tuple[int, ...], offset: int, fmt: int,
           storage: int) -> tuple[Any, ...]:
    """The one tuple ``(lib, dtype, shape, strides, offset, format, storage elements)`` of a
    Tensor's view: the fast entry keys a Tensor argument by this object's identity (its plans
    hold it, so the identity is never another view's while a plan can be found by it)."""
    key = (lib, dtype, shape, strides, offset, fmt, storage)
    found = _TOKENS.get(key)
    if found is None:
        if len(_TOKENS) >= _MAX_TOKENS:
            _TOKENS.clear()
        found = _TOKENS.setdefault(key, key)
    return found


@functools.lru_cache(maxsize=1024)
def _contiguous(shape: tuple[int, ...]) -> tuple[int, ...]:
    """Row-major strides in elements (a zero dimension counts as one); cached per shape."""
    strides, acc = [], 1
    for d in reversed(shape):
        strides.append(acc)
        acc *= max(int(d), 1)
    return tuple(reversed(strides))


__all__ = ["DeviceBuffer", "DeviceView", "Tensor"]
