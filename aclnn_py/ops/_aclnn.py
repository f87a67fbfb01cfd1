"""The two-phase aclnn call shared by every operator on ``npu`` and ``sim``.

An op file marshals its arguments through a ``Call`` (NumPy arrays are copied to the device,
``Tensor`` arguments are used in place, int/bool lists become aclIntArray/aclBoolArray,
``None`` becomes NULL so that the library itself reports 161001), then ``Call.run`` does
``aclnnXxxGetWorkspaceSize`` -> workspace (only when > 0) -> ``aclnnXxx`` on this thread's
stream. Parameter checking is the library's: the same C code path as on the NPU.

Results: if any tensor argument was a device ``Tensor``, the outputs are returned as
``Tensor``s without waiting (the chain stays on the device; the workspace and the device
copies of NumPy inputs are freed when the stream is next synchronised). Otherwise the stream
is synchronised and the outputs come back as NumPy arrays.

Temporaries are raw handles owned by the call (no wrapper objects: this is the per-call hot
path). Each release is registered the moment its handle exists, and every one runs exactly
once: in reverse order on an error, after the stream has finished on success.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from .._dtypes import _NUMPY_TO_ACL, format_for_rank
from .._errors import ACLNN_ERR_PARAM_INVALID, ACL_ERROR_RT_MEMORY_ALLOCATION, AclnnError, param_invalid
from ..tensor import DeviceView, Tensor, _byte_bounds, _contiguous, _quietly
from ._common import INT64_MAX, bool_array_arg, int_arg, int_array_arg, tensor_input, unnamed_dtype

ACL_MEM_MALLOC_HUGE_FIRST = 0
ACL_MEMCPY_HOST_TO_DEVICE = 1
ACL_MEMCPY_DEVICE_TO_HOST = 2


_ACL_DTYPE = {dt: int(acl) for dt, acl in _NUMPY_TO_ACL.items()}
_FORMATS = {r: int(format_for_rank(r)) for r in range(9)}


def _format(ndim: int) -> int:
    f = _FORMATS.get(ndim)
    return int(format_for_rank(ndim)) if f is None else f


class _Functions:
    """The C functions and cffi types of the per-call path, looked up once per library."""

    def __init__(self, lib) -> None:
        for name in ("aclrtMalloc", "aclrtFree", "aclrtMemcpy", "aclrtMemset", "aclCreateTensor",
                     "aclDestroyTensor", "aclCreateIntArray", "aclDestroyIntArray", "aclCreateBoolArray",
                     "aclDestroyBoolArray", "aclDestroyAclOpExecutor"):
            setattr(self, name, lib.fn(name))
        self.void_pp = lib.ffi.typeof("void **")
        self.u64_p = lib.ffi.typeof("uint64_t *")
        self.executor_pp = lib.ffi.typeof("aclOpExecutor **")


def _functions(lib) -> _Functions:
    c = getattr(lib, "_call_functions", None)
    if c is None:
        c = lib._call_functions = _Functions(lib)
    return c


def _keep_alive(view: DeviceView) -> None:
    """The release of a caller's device tensor: nothing, but the reference held until then."""


def _release_all(waiting: list[tuple[Callable, object]]) -> None:
    for release, arg in waiting:
        _quietly(lambda: release(arg))


class Call:
    def __init__(self, lib, api: str) -> None:
        self.lib = lib
        self.api = api
        self.ffi = lib.ffi
        self.fn = lib.fn
        self.c = _functions(lib)
        self.stream = lib.stream()  # also sets up runtime and device for this thread
        self.device_io = False
        # (release function, its argument, frees device memory that queued work may still use)
        self._releases: list[tuple[Callable, object, bool]] = []
        self._outputs: list[tuple[object, tuple, np.dtype, int] | Tensor] = []
        self._refused: Exception | None = None
        self._deferred_bytes = 0  # device memory of the temporaries freed after the stream

    def __enter__(self) -> "Call":
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        releases, self._releases = self._releases, []
        if exc_type is not None:
            for release, arg, _ in reversed(releases):
                _quietly(lambda: release(arg))
            return
        if self.device_io:
            waiting = []
            for release, arg, after_stream in reversed(releases):
                if after_stream:
                    waiting.append((release, arg))
                else:
                    release(arg)
            # One deferred release per call: the call's temporaries, freed once the stream is
            # past its kernel (the library bounds how many calls and bytes may wait).
            self.lib.defer(lambda: _release_all(waiting), self._deferred_bytes)
        else:
            for release, arg, _ in reversed(releases):
                release(arg)

    # -- raw handles ----------------------------------------------------------------------

    def _malloc(self, nbytes: int):
        if nbytes == 0:
            return self.ffi.NULL
        if nbytes >= 2**64:  # beyond size_t: no device has it
            raise AclnnError(ACL_ERROR_RT_MEMORY_ALLOCATION, "aclrtMalloc",
                             f"cannot allocate {nbytes} bytes of device memory")
        c = self.c
        p = self.ffi.new(c.void_pp)
        status = c.aclrtMalloc(p, nbytes, ACL_MEM_MALLOC_HUGE_FIRST)
        if status:
            self.lib.check(status, "aclrtMalloc")
        ptr = p[0]
        self._releases.append((c.aclrtFree, ptr, True))
        self._deferred_bytes += nbytes
        return ptr

    def _descriptor(self, shape: tuple, dtype: np.dtype, strides: Sequence[int], storage: int, ptr):
        ffi = self.ffi
        # (cffi turns a list argument for a ``T *`` parameter into a temporary C array.)
        c = self.c
        handle = c.aclCreateTensor(shape, len(shape), _ACL_DTYPE[dtype], strides, 0,
                                   _format(len(shape)), (storage,), 1, ptr)
        if handle == ffi.NULL:
            raise AclnnError(ACLNN_ERR_PARAM_INVALID, "aclCreateTensor",
                             self.lib.recent_error() or f"could not create a tensor of shape {list(shape)}")
        self._releases.append((c.aclDestroyTensor, handle, False))
        return handle

    # -- arguments ----------------------------------------------------------------------

    def tensor(self, name: str, value: object) -> object:
        """The aclTensor* for a tensor argument (NULL for None): a device ``Tensor`` or a
        torch_npu tensor in place, a CPU array-like copied to the device (``tensor_input``)."""
        value = value if type(value) is np.ndarray else tensor_input(self.api, name, value)
        if value is None:
            return self.ffi.NULL
        if isinstance(value, DeviceView):
            # Caller-owned device memory: a non-owning aclTensor over it, kept alive (through
            # the view's owner) until the stream is past this call.
            self.device_io = True
            self._releases.append((_keep_alive, value, True))
            return self._descriptor(value.shape, value.dtype, value.strides, value.span,
                                    self.ffi.cast("void *", value.ptr))
        if isinstance(value, Tensor):
            if value.lib is not self.lib:
                raise TypeError(f"{self.api}: {name} is a Tensor of backend {value.lib.backend!r}, "
                                f"but this call runs on {self.lib.backend!r}")
            if value.buffer is None:
                raise TypeError(f"{self.api}: {name} is a closed Tensor")
            self.device_io = True
            return value.handle
        if value.dtype not in _ACL_DTYPE:
            raise unnamed_dtype(self.api, name, value.dtype)
        ptr, strides, storage = self.upload(value)
        return self._descriptor(value.shape, value.dtype, strides, storage, ptr)

    def upload(self, value: np.ndarray) -> tuple[object, Sequence[int], int]:
        """A device copy of the ndarray ``value`` (an aclDataType's dtype), freed with the call:
        ``(address, strides in elements, storage elements)`` of the view it holds."""
        item = value.itemsize
        if value.size == 0:
            return self.ffi.NULL, _contiguous(value.shape), 0
        if value.flags.c_contiguous:
            nbytes = value.nbytes
            source = self.ffi.from_buffer(value)
            strides = _contiguous(value.shape)
        else:
            if any(s < 0 or s % item for s in value.strides):
                value = np.ascontiguousarray(value)
            # A strided view is copied as the bytes it spans and described by its strides.
            low, high = _byte_bounds(value)
            nbytes = high - low
            source = self.ffi.cast("void *", low)
            strides = [s // item for s in value.strides]
        ptr = self._malloc(nbytes)
        status = self.c.aclrtMemcpy(ptr, nbytes, source, nbytes, ACL_MEMCPY_HOST_TO_DEVICE)
        if status:
            self.lib.check(status, "aclrtMemcpy")
        return ptr, strides, nbytes // item

    def descriptor(self, shape: Sequence[int], dtype: np.dtype, strides: Sequence[int], offset: int, storage: int,
                   ptr, format: int | None = None, *, owned: bool = True) -> object:
        """An aclTensor over device memory ``ptr``; destroyed with the call when ``owned``
        (else the caller hands it to an owner, e.g. ``aclCreateTensorList``)."""
        ffi = self.ffi
        handle = self.c.aclCreateTensor(shape, len(shape), _ACL_DTYPE[dtype], strides, offset,
                                        _format(len(shape)) if format is None else format, (storage,), 1, ptr)
        if handle == ffi.NULL:
            raise AclnnError(ACLNN_ERR_PARAM_INVALID, "aclCreateTensor",
                             self.lib.recent_error() or f"could not create a tensor of shape {list(shape)}")
        if owned:
            self._releases.append((self.c.aclDestroyTensor, handle, False))
        return handle

    def adopt(self, release: Callable, handle) -> None:
        """Release ``handle`` (made outside the call) with ``release`` when the call ends."""
        self._releases.append((release, handle, False))

    def int_array(self, name: str, values) -> object:
        """The aclIntArray* for a sequence of ints (NULL for None)."""
        if values is None:
            return self.ffi.NULL
        ints = int_array_arg(self.api, name, values)
        handle = self.c.aclCreateIntArray(ints, len(ints))
        if handle == self.ffi.NULL:
            raise AclnnError(ACLNN_ERR_PARAM_INVALID, "aclCreateIntArray", self.lib.recent_error())
        self._releases.append((self.c.aclDestroyIntArray, handle, False))
        return handle

    def bool_array(self, name: str, values) -> object:
        """The aclBoolArray* for a sequence of bools (NULL for None)."""
        if values is None:
            return self.ffi.NULL
        flags = bool_array_arg(self.api, name, values)
        handle = self.c.aclCreateBoolArray(flags, len(flags))
        if handle == self.ffi.NULL:
            raise AclnnError(ACLNN_ERR_PARAM_INVALID, "aclCreateBoolArray", self.lib.recent_error())
        self._releases.append((self.c.aclDestroyBoolArray, handle, False))
        return handle

    def output(self, shape: Sequence[int] | None, dtype, *, zero: bool = False,
               refused: Exception | None = None) -> object:
        """The aclTensor* of a new output (NULL for None). ``zero`` fills it with 0 for
        operators that leave parts of their output unwritten. Marshal the inputs first: an
        output is a device ``Tensor`` handed to the caller when an input was one.

        ``refused``: the error of the op's shape-only checks on the arguments ``shape`` was
        derived from (``shape_check_error``), or None when they passed. A refused output is a
        stand-in: the intended shape (so the library reports the argument really at fault, in
        its own order) over a single element with zero strides, so nothing is allocated from
        arguments the library is about to refuse; ``run`` raises ``refused`` if the library
        accepts them all the same."""
        if shape is None:
            self._outputs.append(None)
            return self.ffi.NULL
        dtype = np.dtype(dtype)
        if refused is not None:
            if self._refused is None:
                self._refused = refused
            dims = tuple(int(d) for d in shape)
            if any(not 0 <= d <= INT64_MAX for d in dims):
                dims = (1,) * len(dims)
            ptr = self._malloc(dtype.itemsize)
            self._outputs.append((ptr, dims, dtype, 0))
            return self._descriptor(dims, dtype, (0,) * len(dims), 1, ptr)
        shape = safe_shape(shape)
        if self.device_io:
            t = Tensor.empty(shape, dtype, backend=self.lib.backend)
            self._releases.append((Tensor.close, t, False))
            self._outputs.append(t)
            ptr, nbytes, handle = t.buffer.ptr, t.buffer.nbytes, t.handle
        else:
            nbytes = dtype.itemsize
            for d in shape:
                nbytes *= d
            ptr = self._malloc(nbytes)
            handle = self._descriptor(shape, dtype, _contiguous(shape), nbytes // dtype.itemsize, ptr)
            self._outputs.append((ptr, shape, dtype, nbytes))
        if zero and nbytes:
            self.lib.check(self.c.aclrtMemset(ptr, nbytes, 0, nbytes), "aclrtMemset")
        return handle

    # -- the two phases -------------------------------------------------------------------

    def run(self, op: str, *args) -> None:
        """``{op}GetWorkspaceSize(*args, &size, &executor)`` then ``{op}(ws, size, executor, stream)``."""
        lib, ffi = self.lib, self.ffi
        size_p = ffi.new(self.c.u64_p)
        executor_p = ffi.new(self.c.executor_pp)
        lib.check(self.fn(f"{op}GetWorkspaceSize")(*args, size_p, executor_p), f"{op}GetWorkspaceSize")
        if self._refused is not None:
            # The library accepted arguments the binding's shape checks refuse (a documented
            # deviation of the numpy path): fail as the numpy backend does, not into a stand-in.
            self.c.aclDestroyAclOpExecutor(executor_p[0])
            refused = self._refused
            if isinstance(refused, AclnnError):
                raise refused
            raise param_invalid(self.api, f"inconsistent arguments: {refused}")
        size = int(size_p[0])
        try:
            workspace = self._malloc(size)
        except BaseException:
            # Phase 2 never ran, so it never took the executor: destroy it, or nothing will.
            self.c.aclDestroyAclOpExecutor(executor_p[0])
            raise
        # Phase 2 consumes the executor whatever its outcome (single use).
        lib.check(self.fn(op)(workspace, size, executor_p[0], self.stream), op)

    def repeatable(self, op: str, *args) -> tuple[object, object, int]:
        """``{op}GetWorkspaceSize(*args, &size, &executor)``, then
        ``aclSetAclOpExecutorRepeatable(executor)`` and the workspace (freed with the call):
        ``(executor, workspace, size)``. The caller runs phase 2 as often as it likes and
        destroys the executor with ``aclDestroyAclOpExecutor`` before the call ends."""
        lib, ffi = self.lib, self.ffi
        size_p = ffi.new(self.c.u64_p)
        executor_p = ffi.new(self.c.executor_pp)
        lib.check(self.fn(f"{op}GetWorkspaceSize")(*args, size_p, executor_p), f"{op}GetWorkspaceSize")
        executor = executor_p[0]
        try:
            lib.check(self.fn("aclSetAclOpExecutorRepeatable")(executor), "aclSetAclOpExecutorRepeatable")
            workspace = self._malloc(int(size_p[0]))
        except BaseException:
            self.c.aclDestroyAclOpExecutor(executor)
            raise
        return executor, workspace, int(size_p[0])

    def results(self) -> list:
        """The outputs, in the order they were made: device ``Tensor``s when any input was
        one (no waiting), else NumPy arrays after the stream has been synchronised."""
        if self.device_io:
            # The caller owns the outputs now.
            outputs = {id(o) for o in self._outputs if isinstance(o, Tensor)}
            self._releases = [r for r in self._releases if not (r[0] is Tensor.close and id(r[1]) in outputs)]
            return list(self._outputs)
        self.lib.synchronize()
        out = []
        for o in self._outputs:
            if o is None:
                out.append(None)
                continue
            ptr, shape, dtype, nbytes = o
            host = np.empty(shape, dtype)
            if nbytes:
                self.lib.check(self.c.aclrtMemcpy(self.ffi.from_buffer(host), nbytes, ptr, nbytes,
                                                  ACL_MEMCPY_DEVICE_TO_HOST), "aclrtMemcpy")
            out.append(host)
        return out


# Outputs whose shape the arguments make impossible (negative, or more elements than int64
# counts) get a stand-in of the same rank: the library then reports the argument at fault, as
# it would on the NPU for a caller who passed such an output. A shape that is only too large
# for the device memory is kept: aclrtMalloc reports it (207001), as on the NPU.
_MAX_OUTPUT_ELEMENTS = 2**63 - 1


def safe_shape(shape: Sequence[int]) -> tuple[int, ...]:
    if type(shape) is tuple and len(shape) <= 8 and all(type(d) is int and 0 <= d < 2**31 for d in shape):
        return shape  # the common case: a NumPy shape, far from the limit
    dims = tuple(int(d) for d in shape)
    total = 1
    for d in dims:
        total *= max(d, 1)
    if any(d < 0 for d in dims) or total > _MAX_OUTPUT_ELEMENTS:
        return tuple(1 for _ in dims)
    return dims


def shape_check_error(checks: Callable[[], object]) -> Exception | None:
    """The error of ``checks`` (the numpy path's shape-only checks of an op, on the arguments
    as given), or None when they pass: only then is an output sized from those arguments. It
    chooses the output's size; the library still checks every argument and reports what is
    wrong, so any failure here (161001/161002, a wrong Python type, a malformed shape) only
    means "do not allocate"."""
    try:
        checks()
    except Exception as exc:
        return exc
    return None


def dtype_of(value, default=np.float32) -> np.dtype:
    """The dtype of a tensor argument (ndarray or Tensor), or ``default`` for None."""
    return np.dtype(getattr(value, "dtype", default))


def shape_of(value) -> tuple[int, ...]:
    return tuple(getattr(value, "shape", ()))


def c_int(api: str, name: str, value, bits: int) -> int:
    """A scalar for a C integer parameter of ``bits`` bits (``int`` / ``int8_t`` ...): a value
    the C type cannot hold never reaches the library, so it is refused here as CANN would
    refuse an out-of-range value (161002), instead of cffi's OverflowError."""
    v = int_arg(api, name, value)
    if not -(2 ** (bits - 1)) <= v < 2 ** (bits - 1):
        raise param_invalid(api, f"{name} = {v} does not fit the C parameter's int{bits}_t")
    return v
