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

Temporaries are raw handles owned by the call's ``Transaction`` (``aclnn_py._runtime.resources``; no
wrapper objects: this is the per-call hot path). Each release is registered the moment its
handle exists, and every one runs exactly once, newest first: when the call ends, or, for
device memory work queued on the stream may still use, once the stream is past that work.

The fast path (``aclnn_py/_fast``, where its helper library was built and ``ACLNN_PY_FAST`` is
not 0): ``tensor``/``int_array``/``bool_array``/``output`` check their arguments as above but
only describe the C objects, returning a placeholder (``_Slot``) that ``run`` accepts; ``run``
then does the whole sequence (device buffers, copies, descriptors, both phases, workspace,
synchronisation, copies back, releases) in one crossing into the helper; a device ``Tensor``
with a ``fast_key`` is passed by its own descriptor. A call the helper does not cover (another
device tensor or view, a tensor list it cannot describe: ``tensor_list``, a refused output
stand-in, more than ``_fast.MAX_FLOATS`` floating-point parameters, more than
``_fast.MAX_DIMS`` dimensions, an argument ``run`` cannot describe) is replayed through the
path above at the point it is met, with the same results and errors.

Plans (``planned``, with the fast entry ``aclnn_py/_fast/entry.c`` built): an op call whose key
(backend library, and per argument an ndarray's dtype, shape, strides and writability, or a
list's or scalar's values and types) was seen before skips all of the above; the entry replays
the plan recorded from the first call of that key, which ran the op's Python path (and so its
checks) to a success through the helper. ``_plan_spec`` turns that call into the plan.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Iterable, Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Any, TypeAlias, TypeVar, cast

import numpy as np
from numpy.typing import DTypeLike

from .. import _fast
from .._constants import ACL_MEM_MALLOC_HUGE_FIRST, ACL_MEMCPY_DEVICE_TO_HOST, ACL_MEMCPY_HOST_TO_DEVICE
from .._dtypes import _NUMPY_TO_ACL, format_for_rank
from .._errors import ACLNN_ERR_PARAM_INVALID, ACL_ERROR_RT_MEMORY_ALLOCATION, AclnnError, param_invalid
from .._runtime.library import not_capturable
from .._runtime.resources import Release, Transaction
# (type: ignore: _runtime/tensor.py picks NumPy's byte_bounds by NumPy version under this private name,
# shared within the package but not re-exported.)
from .._runtime.tensor import DeviceBuffer, DeviceView, Tensor, _byte_bounds, _contiguous, output_form  # type: ignore[attr-defined]
from .arrays import BoolArray, FloatArray, IntArray, Scalar
from .params import PLAIN_KINDS, Param
from .values import (INT64_MAX, bool_array_arg, float_array_arg, int_array_arg, not_a_tensor, plain_value,
                     python_scalar, sequence_arg, tensor_input, unnamed_dtype)

if TYPE_CHECKING:
    from cffi import FFI

    from .arrays import _HostArray

    from .._runtime.library import Library

#: An output of a call, in the order made: None (a NULL output), ``(device address, shape,
#: dtype, nbytes)`` of a device copy on the ABI-mode path, a device ``Tensor`` (when an input
#: was one), or the host array the fast path writes into.
_Output: TypeAlias = "tuple[FFI.CData, tuple[int, ...], np.dtype, int] | Tensor | np.ndarray | None"
# (type: ignore[call-overload] on ``ffi.from_buffer(ndarray)``: an ndarray is a buffer, but
# NumPy's stubs declare its ``__buffer__`` for Python >= 3.12 only.)

_F = TypeVar("_F", bound=Callable[..., Any])


_ACL_DTYPE = {dt: int(acl) for dt, acl in _NUMPY_TO_ACL.items()}
_FORMATS = {r: int(format_for_rank(r)) for r in range(9)}
#: The caller-made handle objects each kind of parameter also takes.
WRAPPERS: dict[str, type[_HostArray] | type[Scalar]] = {
    "int_array": IntArray, "bool_array": BoolArray, "float_array": FloatArray, "scalar": Scalar}


def _format(ndim: int) -> int:
    f = _FORMATS.get(ndim)
    return int(format_for_rank(ndim)) if f is None else f


class _Functions:
    """The C functions and cffi types of the per-call path, looked up once per library."""

    aclrtMalloc: Callable[..., int]
    aclrtFree: Callable[..., int]
    aclrtMemcpy: Callable[..., int]
    aclrtMemset: Callable[..., int]
    aclCreateTensor: Callable[..., FFI.CData]
    aclDestroyTensor: Callable[..., int]
    aclCreateIntArray: Callable[..., FFI.CData]
    aclDestroyIntArray: Callable[..., int]
    aclCreateBoolArray: Callable[..., FFI.CData]
    aclDestroyBoolArray: Callable[..., int]
    aclCreateFloatArray: Callable[..., FFI.CData]
    aclDestroyFloatArray: Callable[..., int]
    aclCreateScalar: Callable[..., FFI.CData]
    aclDestroyScalar: Callable[..., int]
    aclDestroyAclOpExecutor: Callable[..., int]

    def __init__(self, lib: Library) -> None:
        for name in ("aclrtMalloc", "aclrtFree", "aclrtMemcpy", "aclrtMemset", "aclCreateTensor",
                     "aclDestroyTensor", "aclCreateIntArray", "aclDestroyIntArray", "aclCreateBoolArray",
                     "aclDestroyBoolArray", "aclCreateFloatArray", "aclDestroyFloatArray", "aclCreateScalar",
                     "aclDestroyScalar", "aclDestroyAclOpExecutor"):
            setattr(self, name, lib.fn(name))
        self.void_pp = lib.ffi.typeof("void **")
        self.u64_p = lib.ffi.typeof("uint64_t *")
        self.executor_pp = lib.ffi.typeof("aclOpExecutor **")


def _functions(lib: Library) -> _Functions:
    return lib.cached("_convert.executor functions", _Functions)


#: The backends on which a tensor argument whose data the operator never reads (its
#: registration's ``shape_only``: it takes their shape, dtype and format only) is described,
#: not uploaded: a descriptor of its shape and dtype, row-major, over NULL data, so the library
#: still checks shape, dtype and format exactly as before and nothing is allocated or copied for
#: it. Only ``sim``, whose operators declare the inputs their kernels read (``INPUTS_READ`` in
#: ``aclnn_py/sim/src/ops/<op>.c``; phase 2 accepts NULL data for any other); on ``npu`` it is
#: uploaded as every other argument (whether CANN's own code paths leave such an argument's data
#: unread is not something this binding can check).
_SHAPE_ONLY_BACKENDS = frozenset({"sim"})
_shape_only_by_api: dict[str, frozenset[str]] = {}
#: The argument written in place whose every element the operator writes from its other
#: arguments alone, never reading it (its registration's ``overwrites``: InplaceZero's
#: ``selfRef``), by the operator's phase 1: an ndarray passed for it gets device memory and the
#: copy back, never the copy to the device, on every backend (a copy of the caller's values the
#: operator would only overwrite: a gradient of a few MiB crossing to the device for nothing at
#: every ``zero_grad``). The device copy of a written ndarray is always C-contiguous (a view is
#: written back element by element), so the operator writes all of it.
_overwritten_by_api: dict[str, str] = {}


def declare_unread(api: str, shape_only: Sequence[str], overwritten: str | None) -> None:
    """Record the arguments whose data the operator whose phase 1 is ``api`` never reads: its
    ``shape_only`` inputs, and the argument it writes whole in place (``overwritten``, or
    None); the operator registry does, for each operator it registers."""
    _shape_only_by_api[api] = frozenset(shape_only)
    if overwritten is None:
        _overwritten_by_api.pop(api, None)
    else:
        _overwritten_by_api[api] = overwritten


def _shape_only(api: str) -> frozenset[str]:
    """The ``shape_only`` arguments of the registered operator whose phase 1 is ``api``."""
    return _shape_only_by_api.get(api, frozenset())


def overwritten_by(api: str) -> str | None:
    """The argument the registered operator whose phase 1 is ``api`` overwrites whole, or None."""
    return _overwritten_by_api.get(api)


def _strided_bytes(value: np.ndarray) -> tuple[np.ndarray, int, int]:
    """A non-contiguous, non-empty ndarray as the bytes to copy to the device: ``(array, address
    of its lowest byte, byte count)``. A strided view is copied as the bytes it spans and
    described by its strides, unless it has gaps, negative or unaligned strides: then its
    elements alone, made contiguous on the host (a few elements of a huge buffer must not need
    the buffer's size on the device)."""
    low, high = _byte_bounds(value)
    item = value.itemsize
    if high - low > value.nbytes or any(s < 0 or s % item for s in value.strides):
        value = np.ascontiguousarray(value)
        low, high = _byte_bounds(value)
    return value, low, high - low


def _keep_alive(view: DeviceView) -> None:
    """The release of a caller's device tensor: nothing, but the reference held until then."""


def _queued_work(_: None) -> None:
    """The release a call with device Tensors always defers: nothing, but its place in the
    thread's queue of releases waiting for the stream."""


# Outputs above this size leave the fast path: its host result is made before the call, and a
# size the device cannot hold must fail in aclrtMalloc (207001) as on the path above, not in the
# host's allocator.
_FAST_MAX_OUTPUT_BYTES = 1 << 28
_INT64 = (-(2**63), 2**63 - 1)

# The fast path's descriptions of contiguous tensors and outputs, per (shape, dtype[, zero]):
# made once, reused by every call of that geometry (bounded: cleared when full).
_DESCRIPTIONS: dict[tuple[int, tuple[int, ...], np.dtype, int], tuple[list[int], int]] = {}
_MAX_DESCRIPTIONS = 4096


def scalar_item(held: np.ndarray) -> list[int] | None:
    """fastcall.c's SCALAR item of an aclScalar's value (its 0-d array, ``python_scalar``'s):
    its dtype and bytes in one little-endian word; None when it holds more than 8 bytes."""
    if held.nbytes > 8:
        return None
    return [_fast.SCALAR, _ACL_DTYPE[held.dtype], int.from_bytes(held.tobytes().ljust(8, b"\0"), "little", signed=True)]


def float_item(ffi: FFI, real: str, value: float) -> list[int]:
    """fastcall.c's FLOAT_VALUE item of a ``real`` ("float" or "double") parameter: the bits of
    ``value`` as cffi converts it for the ABI-mode call (a float's in the low 32)."""
    held = ffi.new(f"{real} *", value)
    return [_fast.FLOAT_VALUE, int(ffi.cast("uint32_t *" if real == "float" else "int64_t *", held)[0])]


def device_description(tensor: Tensor, buffer: DeviceBuffer) -> list[int]:
    """fastcall.c's DEVICE_IN item of an open device Tensor (``buffer``, its memory): a new
    descriptor of its view, as ``_element`` makes one for an element of a tensor list."""
    return [_fast.DEVICE_IN, _ACL_DTYPE[tensor.dtype], tensor.format, tensor.ndim, *tensor.shape, *tensor.strides,
            tensor.offset, buffer.nbytes // tensor.dtype.itemsize]


def _contiguous_description(kind: int, shape: tuple[int, ...], dtype: np.dtype,
                            zero: int = 0) -> tuple[list[int], int]:
    """(description, nbytes) of a C-contiguous tensor (``kind`` HOST_IN) or output (HOST_OUT)."""
    key = (kind, shape, dtype, zero)
    found = _DESCRIPTIONS.get(key)
    if found is not None:
        return found
    ndim = len(shape)
    item = dtype.itemsize
    nbytes = item
    for d in shape:
        nbytes *= d
    desc = [kind, _ACL_DTYPE[dtype], _format(ndim), ndim, *shape, *_contiguous(shape), nbytes // item, nbytes]
    if kind == _fast.HOST_OUT:
        desc.append(zero)
    if len(_DESCRIPTIONS) >= _MAX_DESCRIPTIONS:
        _DESCRIPTIONS.clear()
    _DESCRIPTIONS[key] = found = (desc, nbytes)
    return found


class _Slot:
    """A C object the fast path will make: what ``run`` passes for it (``desc`` and, for a
    tensor, ``pointer``; for a tensor list, a list of them), how to make it on the ABI-mode path
    (``replay``), and the handle once made there."""

    __slots__ = ("desc", "pointer", "replay", "handle")

    def __init__(self, desc: list[int], pointer: "FFI.CData | list[FFI.CData] | None", replay: tuple[Any, ...]) -> None:
        self.desc = desc
        self.pointer = pointer
        self.replay = replay
        self.handle: object = None


#: Raise the error of the helper's failure ``result`` (``aclnn_py._fast.failed``).
_fast_failed = _fast.failed


# -- plans: an op call of a geometry already seen, in one step ----------------------------------

_recording = threading.local()  # .calls: the Calls made while an op call is being recorded

#: A plan as the entry takes it (``aclnn_py/_fast/entry.c``'s plan_from_spec): (op, phase-1 and
#: phase-2 addresses, description, pointer sources, outputs to make as (shape, dtype) or None,
#: results, result mode). Pointer sources and results are ``(kind, index)``, the kinds and modes
#: the entry's constants: ``ARG`` argument ``index`` (its bytes; as a result, the argument
#: itself), ``NEW_OUTPUT`` output ``index`` made by the entry, ``NULL``, ``ARG_WRITTEN`` argument
#: ``index``'s bytes, written back; modes ``SINGLE``, ``TUPLE``, ``NONE``.
#: A device plan (device Tensor arguments) has outputs ``tensor.output_form(output, zero)`` (what
#: the entry makes each new output Tensor from) and a ninth item, 1.
PlanSpec: TypeAlias = "tuple[Any, ...]"


def set_plans(on: bool) -> bool:
    """Whether op calls replay plans (True, the default) or marshal every call (the "no plan"
    path scripts/bench.py measures); returns the previous setting."""
    entry = _fast.entry()
    return bool(entry.set_plans(on)) if entry is not None else False


def _plan_spec(call: Call, args: tuple[Any, ...], result: object) -> PlanSpec | None:
    """The plan of an op call that took the helper's path to a success (``call``, the only
    Call the op made, with ``args``, returning ``result``), or None when it cannot be replayed."""
    entry = _fast.entry()
    if call._fast_last is None or call._fast is None or entry is None:
        return None
    op, phases, desc, slots = call._fast_last
    null = call.ffi.NULL
    # (cast: a call that took the fast path made host arrays, or None, for its outputs.)
    outputs = cast("list[np.ndarray | Tensor | None]", call._outputs)
    device = call.device_io
    zeros: dict[int, bool] = {}
    pointers: list[tuple[int, int | None]] = []
    written: list[int] = []  # the arguments written in place, by index
    listed: set[int] = set()  # the arguments made into tensor lists, by index
    for arg in slots:
        if arg is null:
            pointers.append((entry.NULL, None))  # a NULL argument (POINTER in the description)
            continue
        slot = cast(_Slot, arg)  # (the rest are slots)
        if slot.pointer is None:
            continue  # an int/bool array: wholly in the description
        kind = slot.replay[0]
        if device and slot.desc[0] == _fast.POINTER:
            if kind in ("tensor", "inplace"):
                index = next((i for i, a in enumerate(args) if a is slot.replay[2]), None)
                if index is None or type(args[index]) is not Tensor:
                    return None
                pointers.append((entry.TENSOR, index))
                if kind == "inplace":
                    written.append(index)
            else:
                address = int(call.ffi.cast("uintptr_t", cast("FFI.CData", slot.pointer)))
                index = next((i for i, o in enumerate(outputs) if type(o) is Tensor and o.fast_key is not None
                              and o.fast_key[1] == address), None)
                if index is None:
                    return None
                zeros[index] = bool(slot.replay[3])
                pointers.append((entry.NEW_OUTPUT, index))
            continue
        if kind == "tensor":
            index = next((i for i, a in enumerate(args) if a is slot.replay[2]), None)
            if index is None or type(args[index]) is not np.ndarray or not args[index].flags.c_contiguous:
                return None  # an array the op made itself, or one whose bytes are not one block
            pointers.append((entry.ARG, index) if slot.pointer != null else (entry.NULL, None))
        elif kind == "tensor_list":
            # The argument that is this list element by element (the op may have made a new
            # list of the same arrays); the entry numbers the elements of every list of
            # ndarrays among the arguments in order (its key's items).
            # (a list of device Tensors: each element's memory, as the entry reads it per call,
            # numbered among the elements of such lists)
            items = slot.replay[2]
            found = [i for i, a in enumerate(args) if type(a) in (list, tuple) and len(a) == len(items)
                     and all(x is y for x, y in zip(a, items))]
            if len(found) != 1:
                return None
            element = type(items[0])
            base = sum(len(a) for a in args[:found[0]] if type(a) in (list, tuple) and a and type(a[0]) is element)
            if base + len(items) > _fast.MAX_LIST or element is not (Tensor if device else np.ndarray):
                return None
            listed.add(found[0])
            if device:
                pointers += [(entry.DEVICE_ITEM, base + j) for j in range(len(items))]
            else:
                pointers += [(entry.ITEM, base + j) if p != null else (entry.NULL, None)
                             for j, p in enumerate(cast("list[FFI.CData]", slot.pointer))]
        elif kind == "inplace":
            index = next((i for i, a in enumerate(args) if a is slot.replay[2]), None)
            if index is None or type(args[index]) is not np.ndarray:
                return None
            pointers.append((entry.ARG_WRITTEN, index) if slot.pointer != null else (entry.NULL, None))
            written.append(index)
        elif kind == "output":
            if slot.pointer == null:
                pointers.append((entry.NULL, None))  # an empty output: no memory, none copied back
                continue
            address = int(call.ffi.cast("intptr_t", cast("FFI.CData", slot.pointer)))
            index = next((i for i, o in enumerate(outputs) if type(o) is np.ndarray and o.ctypes.data == address), None)
            if index is None:
                return None
            pointers.append((entry.NEW_OUTPUT, index))
        else:
            return None
    if any(type(a) in (list, tuple) and a and type(a[0]) in (np.ndarray, Tensor) and i not in listed
           for i, a in enumerate(args)):
        return None  # a list of arrays or Tensors the entry keys by geometry, but not a tensor list here
    if written and not (device and outputs):
        # An in-place call: its result is the argument it wrote (outputs it makes: none). (A
        # device call with outputs too, e.g. BatchNorm's running statistics as Tensors: its
        # written Tensors are pointers as any other, its results its outputs.)
        if outputs or len(written) != 1 or result is not args[written[0]]:
            return None
        return (op, _fast.address(phases[0]), _fast.address(phases[1]), desc, pointers, [],
                [(entry.ARG, written[0])], entry.SINGLE, *((1,) if device else ()))
    if len(outputs) == 1 and result is outputs[0]:
        mode = entry.SINGLE
    elif type(result) is tuple and len(result) == len(outputs) and all(r is o for r, o in zip(result, outputs)):
        mode = entry.TUPLE
    else:
        return None
    if device:
        # (each output a Tensor this call made: its form, with whether it starts as zeros)
        made: list[tuple[Any, ...] | None] = []
        for i, o in enumerate(outputs):
            if o is None:
                made.append(None)
            elif type(o) is Tensor and o.fast_key is not None and o.buffer is not None and i in zeros:
                made.append(output_form(o, zeros[i]))
            else:
                return None
        return (op, _fast.address(phases[0]), _fast.address(phases[1]), desc, pointers, made,
                [(entry.NEW_OUTPUT, i) for i in range(len(outputs))], mode, 1)
    return (op, _fast.address(phases[0]), _fast.address(phases[1]), desc, pointers,
            [None if o is None else (o.shape, o.dtype) for o in cast("list[np.ndarray | None]", outputs)],
            [(entry.NEW_OUTPUT, i) for i in range(len(outputs))], mode)


def _record(aclnn_impl: Callable[..., Any], lib: Library, args: tuple[Any, ...]) -> tuple[Any, PlanSpec | None, bool]:
    """Run an op call of a new geometry on the Python path, which checks its arguments:
    ``(result, plan or None, whether to store it)``. Reached only when the call has a key; a
    call that raises stores nothing, so the checks run again for it."""
    calls = _recording.__dict__.get("calls")
    if calls is not None:  # a nested op call: only the outer one records
        return aclnn_impl(lib, *args), None, False
    _recording.calls = calls = []
    try:
        result = aclnn_impl(lib, *args)
    finally:
        _recording.calls = None
    arrays = [id(a) for a in args if type(a) is np.ndarray or type(a) is Tensor]
    if len(set(arrays)) < len(arrays):
        # One array at several places: its slots cannot tell which place each came from, and a
        # later call of this key may pass different arrays there. Record that call instead.
        return result, None, False
    return result, _plan_spec(calls[0], args, result) if len(calls) == 1 else None, True


def planned(aclnn_impl: _F) -> _F:
    """Decorate an op's ``_aclnn(lib, *args)`` with the fast entry (``aclnn_py/_fast/entry.c``):
    a call whose arguments and backend were seen before replays the recorded C sequence in one
    crossing; the first call of a geometry runs ``aclnn_impl`` (the Python path: its checks,
    then the helper or the ABI-mode path) and is recorded if it took the helper to a success
    with nothing else. Without the entry (not built, or ``ACLNN_PY_FAST=0``), ``aclnn_impl``
    itself. The planner's ``plans()`` lists its keys (tests)."""
    entry = _fast.entry()
    if entry is None:
        return aclnn_impl
    return cast(_F, entry.Planner(aclnn_impl, _record))


class Call:
    def __init__(self, lib: Library, api: str, *, fast: bool = True) -> None:
        """``fast=False``: the ABI-mode path only, so that ``tensor``/``int_array``/``bool_array``/
        ``output`` return the C handles themselves (on the fast path they return placeholders
        valid only as arguments of this call's ``run``)."""
        self.lib = lib
        self.api = api
        self.ffi = lib.ffi
        self.fn = lib.fn
        self.c = _functions(lib)
        self.stream = lib.stream()  # also sets up runtime and device for this thread
        self.device_io = False
        self._resources = Transaction()  # every handle the call acquires
        self._hold = self._resources.hold
        self._launched = False  # phase 2 queued work that may use the call's device memory
        self._outputs: list[_Output] = []
        self._refused: Exception | None = None
        self._fast = _fast.api_for(lib) if fast else None  # None: the ABI-mode path only
        self._slots: list[_Slot] = []
        self._fast_done = False
        # The tensors the operator writes in place (``inplace``): (the caller's value, its
        # device copy's address or None, nbytes of that copy).
        self._written: list[tuple[Any, Any, int]] = []
        # (op, phases, description, pointer slots) of the crossing
        self._fast_last: tuple[str, tuple[Any, Any, tuple[str | None, ...]], list[int], list[_Slot | FFI.CData]] | None = None
        # the arguments described without upload (``_SHAPE_ONLY_BACKENDS``)
        self._shape_only = _shape_only(api) if lib.backend in _SHAPE_ONLY_BACKENDS else frozenset()
        self._overwritten = overwritten_by(api)  # (an ndarray passed for it is not uploaded)
        #: The capture in progress on this thread's stream (``aclnn_py.capture``), or None.
        self._capture = lib.capture_state() if lib.capturing else None
        recording = _recording.__dict__.get("calls")
        if recording is not None:
            recording.append(self)

    def __enter__(self) -> "Call":
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        # The call's device memory waits for the stream (one deferred release per call, the
        # library bounding how many calls and bytes may wait) when the call returns device
        # Tensors without waiting, or fails with its kernel queued; else the stream has
        # finished with it (NumPy results are copied back after a synchronisation) or never
        # had it.
        queued = self.device_io if exc is None else self._launched
        self._resources.end(exc, self.lib if queued else None)
        if exc is None and self.device_io and self._launched:
            # The call returns with its work queued: a later failure of it names this call.
            self.lib.queued_call(self.api.removesuffix("GetWorkspaceSize"))

    def end(self, exc: BaseException | None = None) -> None:
        """Release the call's handles (once: a second end releases nothing); ``exc``: the
        error the call failed with, which then propagates instead of a release's."""
        self.__exit__(None if exc is None else type(exc), exc, None)

    # -- raw handles ----------------------------------------------------------------------

    def _malloc(self, nbytes: int) -> FFI.CData:
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
        ptr: FFI.CData = p[0]
        self._hold((c.aclrtFree, ptr, True, nbytes))
        return ptr

    def _descriptor(self, shape: Sequence[int], dtype: np.dtype, strides: Sequence[int], storage: int,
                    ptr: FFI.CData) -> FFI.CData:
        ffi = self.ffi
        # (cffi turns a list argument for a ``T *`` parameter into a temporary C array.)
        c = self.c
        handle = c.aclCreateTensor(shape, len(shape), _ACL_DTYPE[dtype], strides, 0,
                                   _format(len(shape)), (storage,), 1, ptr)
        if handle == ffi.NULL:
            raise AclnnError(ACLNN_ERR_PARAM_INVALID, "aclCreateTensor",
                             self.lib.recent_error() or f"could not create a tensor of shape {list(shape)}")
        self._hold((c.aclDestroyTensor, handle, False, 0))
        return handle

    # -- arguments ----------------------------------------------------------------------

    def tensor(self, name: str, value: object) -> object:
        """The aclTensor* for a tensor argument (NULL for None): a device ``Tensor`` or a
        torch_npu tensor in place, a CPU array-like copied to the device (``tensor_input``)."""
        value = value if type(value) is np.ndarray else tensor_input(self.api, name, value)
        if value is None:
            return self.ffi.NULL
        if self._fast is not None:
            if type(value) is np.ndarray or not isinstance(value, (Tensor, DeviceView)):
                return self._fast_tensor(name, value)
            if type(value) is Tensor and value.fast_key is not None:
                # A device Tensor: its own descriptor, passed as it is (the call then leaves
                # its work queued and returns device Tensors: ``device_io``).
                self.uses(value.check_argument(self.api, name, self.lib))
                self.device_io = True
                return self._record([_fast.POINTER], value.handle, ("tensor", name, value))
            self._leave_fast()  # device memory of the caller's: the ABI-mode path describes it
        return self._element(name, value)

    def inplace(self, name: str, value: object) -> object:
        """The aclTensor* of a tensor the operator writes in place (CANN's ``selfRef``),
        already coerced by ``values.output_tensor`` (a writable ndarray, a ``Tensor`` or None
        for NULL): a device ``Tensor`` is used in place; an ndarray is copied to the device and
        the result copied back into it (``written``), its own strides honoured, so a view
        writes its elements only."""
        if value is None:
            return self.ffi.NULL
        if isinstance(value, np.ndarray) and self._fast is not None:
            if value.flags.c_contiguous and value.ndim <= _fast.MAX_DIMS:
                # (overwritten whole: device memory and the copy back only, as an output's)
                kind = _fast.HOST_OUT if name == self._overwritten else _fast.HOST_INOUT
                desc, nbytes = _contiguous_description(kind, value.shape, value.dtype)
                pointer = self.ffi.from_buffer(value) if nbytes else self.ffi.NULL  # type: ignore[call-overload]
                self._written.append((value, None, 0))
                return self._record(desc, pointer, ("inplace", name, value))
            self._leave_fast()
        elif self._fast is not None:
            if type(value) is Tensor and value.fast_key is not None:
                # A device Tensor, written where it is: its own descriptor (as ``tensor``).
                self.uses(value.check_argument(self.api, name, self.lib))
                self.device_io = True
                self._written.append((value, None, 0))
                return self._record([_fast.POINTER], value.handle, ("inplace", name, value))
            self._leave_fast()
        return self._element(name, value, written=True)

    def tensor_list(self, name: str, items: object) -> object:
        """The aclTensorList* of a list of tensor arguments (NULL for None), each coerced by
        ``values.tensor_input`` already (None: a NULL element, which the library reports): an
        ndarray copied to the device, a device ``Tensor`` described where it is. The list owns
        its elements' descriptors (``owning_list``: destroyed one by one only when the list
        cannot be made); it, and the device copies, are released with the call. On the fast
        path a list of C-contiguous ndarrays, or of open device Tensors of this backend, is
        described to the helper (``TENSOR_LIST``), which makes it in the same order."""
        if items is None:
            return self.ffi.NULL
        if self._fast is not None:
            slot = self._fast_tensor_list(name, cast("list[object]", items))
            if slot is not None:
                return slot
            self._leave_fast()  # (the helper describes lists of host arrays only)

        def make(k: int, value: object) -> object:
            return self.ffi.NULL if value is None else self._element(f"{name}[{k}]", value, owned=False)

        return self.owning_list([functools.partial(make, k, v) for k, v in enumerate(cast("list[object]", items))],
                                "aclCreateTensorList", "aclDestroyTensorList", "aclDestroyTensor")

    def _element(self, name: str, value: object, *, owned: bool = True, written: bool = False) -> object:
        """The aclTensor* of one tensor on the ABI-mode path (an argument, a tensor written in
        place, an element of a tensor list), the one place each kind is described:

        * a device ``Tensor``: its own descriptor (``owned``) or a new one over its memory;
        * a ``DeviceView`` (a caller's device memory): a non-owning descriptor, the view kept
          alive until the stream is past the call;
        * an ndarray: copied to the device (``upload``; shape only for a shape-only parameter,
          device memory only for an overwritten one: ``declare_unread``), its copy freed with
          the call.

        Device memory the call's work uses is ``uses``'d (a capture keeps it as long as its
        graph). ``owned``: the descriptor is the call's to release; else the caller hands it to
        an owner (``aclCreateTensorList``). ``written``: the operator writes it in place: an
        ndarray's result is copied back (``written()``), its own strides honoured."""
        if isinstance(value, Tensor):
            buffer = value.check_argument(self.api, name, self.lib)
            self.uses(buffer)
            self.device_io = True
            if written:
                self._written.append((value, None, 0))
            if owned:
                return value.handle
            return self.descriptor(value.shape, value.dtype, value.strides, value.offset,
                                   buffer.nbytes // value.dtype.itemsize, buffer.ptr, value.format, owned=False)
        if isinstance(value, DeviceView):
            self.device_io = True
            self.uses(value)
            self._hold((_keep_alive, value, True, 0))
            return self.descriptor(value.shape, value.dtype, value.strides, 0, value.span,
                                   self.ffi.cast("void *", value.ptr), owned=owned)
        array = cast(np.ndarray, value)
        if array.dtype not in _ACL_DTYPE:
            raise unnamed_dtype(self.api, name, array.dtype)
        if owned and not written and name in self._shape_only:
            return self.descriptor(array.shape, array.dtype, _contiguous(array.shape), 0, array.size, self.ffi.NULL)
        if written and name == self._overwritten:  # (its values are never read: not uploaded)
            host = array if array.flags.c_contiguous else np.empty(array.shape, array.dtype)
            ptr, strides, storage = self.upload(host, copy=False)
        else:
            host = array if not written or array.flags.c_contiguous else np.ascontiguousarray(array)
            ptr, strides, storage = self.upload(host)
        if written:
            self._written.append((array, ptr, host.nbytes))
        return self.descriptor(host.shape, host.dtype, strides, 0, storage, ptr, owned=owned)

    def written(self) -> list[Any]:
        """The tensors written in place, in the order given, each the caller's own: an ndarray
        with the result copied back (after the stream has been synchronised), a ``Tensor``
        as it is (no waiting)."""
        synchronised = self._fast_done
        for value, ptr, nbytes in self._written:
            if ptr is None or not nbytes:
                continue  # (a Tensor; the fast path's, copied back already; an empty array)
            if not synchronised:
                self.lib.synchronize()
                synchronised = True
            host: np.ndarray = value if value.flags.c_contiguous else np.empty(value.shape, value.dtype)
            self.lib.check(self.c.aclrtMemcpy(self.ffi.from_buffer(host), nbytes, ptr, nbytes,  # type: ignore[call-overload]
                                              ACL_MEMCPY_DEVICE_TO_HOST), "aclrtMemcpy")
            if host is not value:
                value[...] = host
        return [value for value, _, _ in self._written]

    def upload(self, value: np.ndarray, *, copy: bool = True) -> tuple[FFI.CData, Sequence[int], int]:
        """A device copy of the ndarray ``value`` (an aclDataType's dtype), freed with the call:
        ``(address, strides in elements, storage elements)`` of the view it holds; without
        ``copy``, device memory for a C-contiguous ``value`` the operator overwrites whole
        (``declare_unread``), its bytes not copied."""
        item = value.itemsize
        if value.size == 0:
            return self.ffi.NULL, _contiguous(value.shape), 0
        strides: Sequence[int]
        if value.flags.c_contiguous:
            nbytes = value.nbytes
            source = self.ffi.from_buffer(value)  # type: ignore[call-overload]
            strides = _contiguous(value.shape)
        else:
            value, low, nbytes = _strided_bytes(value)
            source = self.ffi.cast("void *", low)
            strides = [s // item for s in value.strides]
        ptr = self._malloc(nbytes)
        if copy:
            status = self.c.aclrtMemcpy(ptr, nbytes, source, nbytes, ACL_MEMCPY_HOST_TO_DEVICE)
            if status:
                self.lib.check(status, "aclrtMemcpy")
        return ptr, strides, nbytes // item

    def descriptor(self, shape: Sequence[int], dtype: np.dtype, strides: Sequence[int], offset: int, storage: int,
                   ptr: FFI.CData, format: int | None = None, *, owned: bool = True) -> object:
        """An aclTensor over device memory ``ptr``; destroyed with the call when ``owned``
        (else the caller hands it to an owner, e.g. ``aclCreateTensorList``)."""
        ffi = self.ffi
        handle = self.c.aclCreateTensor(shape, len(shape), _ACL_DTYPE[dtype], strides, offset,
                                        _format(len(shape)) if format is None else format, (storage,), 1, ptr)
        if handle == ffi.NULL:
            raise AclnnError(ACLNN_ERR_PARAM_INVALID, "aclCreateTensor",
                             self.lib.recent_error() or f"could not create a tensor of shape {list(shape)}")
        if owned:
            self._hold((self.c.aclDestroyTensor, handle, False, 0))
        return handle

    def uses(self, memory: object) -> None:
        """The call's work reads or writes ``memory`` (a device Tensor's buffer, a caller's
        device view): a capture in progress keeps it alive as long as its graph."""
        if self._capture is not None:
            self._capture.keep.append(memory)

    def adopt(self, release: Release, handle: object) -> None:
        """Release ``handle`` (made outside the call) with ``release`` when the call ends."""
        self._hold((release, handle, False, 0))

    def int_array(self, name: str, values: object, *, coerced: bool = False) -> object:
        """The aclIntArray* for a sequence of ints (NULL for None); ``coerced``: ``values`` is
        ``int_array_arg``'s tuple already."""
        if values is None:
            return self.ffi.NULL
        ints = cast("tuple[int, ...]", values) if coerced else int_array_arg(self.api, name, values)
        assert ints is not None  # (None only for None)
        if self._fast is not None and len(ints) <= _fast.MAX_ARRAY:
            return self._record([_fast.INT_ARRAY, len(ints), *ints], None, ("int_array", name, ints))
        return self._made(self.c.aclCreateIntArray(ints, len(ints)), "aclCreateIntArray", self.c.aclDestroyIntArray)

    def bool_array(self, name: str, values: object, *, coerced: bool = False) -> object:
        """The aclBoolArray* for a sequence of bools (NULL for None); ``coerced``: ``values`` is
        ``bool_array_arg``'s tuple already."""
        if values is None:
            return self.ffi.NULL
        flags = cast("tuple[bool, ...]", values) if coerced else bool_array_arg(self.api, name, values)
        assert flags is not None  # (None only for None)
        if self._fast is not None and len(flags) <= _fast.MAX_ARRAY:
            return self._record([_fast.BOOL_ARRAY, len(flags), *map(int, flags)], None, ("bool_array", name, flags))
        return self._made(self.c.aclCreateBoolArray(flags, len(flags)), "aclCreateBoolArray",
                          self.c.aclDestroyBoolArray)

    def float_array(self, name: str, values: object) -> object:
        """The aclFloatArray* for a sequence of real numbers (NULL for None)."""
        if values is None:
            return self.ffi.NULL
        floats = float_array_arg(self.api, name, values)
        return self._made(self.c.aclCreateFloatArray(floats, len(floats)), "aclCreateFloatArray",
                          self.c.aclDestroyFloatArray)

    def scalar(self, name: str, value: object, *, owned: bool = True) -> object:
        """The aclScalar* of a number (its dtype as torch_npu infers it: ``python_scalar``) or of
        an ``aclnn_py.Scalar``'s value, copied; ``owned=False`` for an element of a list, which
        the list destroys."""
        held = value.value if isinstance(value, Scalar) else python_scalar(self.api, name, value)
        item = scalar_item(held) if self._fast is not None and owned else None
        if item is not None:  # the helper makes it from its value (a plan can then replay the call)
            return self._record(item, None, ("scalar", name, value))
        handle = self.c.aclCreateScalar(self.ffi.cast("void *", held.ctypes.data), _ACL_DTYPE[held.dtype])
        return self._made(handle, "aclCreateScalar", self.c.aclDestroyScalar if owned else None)

    def owning_list(self, makers: Iterable[Callable[[], object]], create: str, destroy: str,
                    destroy_item: str) -> object:
        """A list (``aclCreateTensorList``, ``aclCreateScalarList``) that takes ownership of its
        elements: each is made unowned by its maker, and destroyed one by one only when the list
        cannot be made."""
        items: list[object] = []
        with Transaction() as elements:
            release_item = self.fn(destroy_item)
            for make in makers:
                item = make()
                items.append(item)
                elements.add(release_item, item)
            handle = self._made(self.fn(create)(items, len(items)), create, self.fn(destroy))
            elements.keep()  # the list destroys them
        return handle

    def wrapped(self, name: str, value: _HostArray | Scalar) -> object:
        """The handle of an ``IntArray``/``BoolArray``/``FloatArray``/``Scalar`` the caller made
        (theirs: not released with the call), if it belongs to this call's backend."""
        if value.lib is not self.lib:
            raise TypeError(f"{self.api}: {name} belongs to backend {value.lib.backend!r}, "
                            f"but this call runs on {self.lib.backend!r}")
        return value.handle

    def _made(self, handle: FFI.CData, create: str, release: Release | None) -> FFI.CData:
        """``handle`` fresh from ``create``, released with the call by ``release`` (if any)."""
        if handle == self.ffi.NULL:
            raise AclnnError(ACLNN_ERR_PARAM_INVALID, create, self.lib.recent_error())
        if release is not None:
            self._hold((release, handle, False, 0))
        return handle

    def argument(self, p: Param, value: object) -> object:
        """The C argument of parameter ``p``, not a tensor, by its declared C type (``params``):
        an int/bool/float array or an ``IntArray``-like object, a scalar or a list of them, or
        a plain C value (range-checked ints, bools, floats, strings). None is NULL for a
        pointer. The one conversion ``call``, ``prepare`` and the typed functions share."""
        if p.kind in PLAIN_KINDS:
            plain = plain_value(self.api, p, value)
            if p.kind != "string":
                return plain
            return self.ffi.NULL if plain is None else self.ffi.new("char[]", plain)
        if value is None:
            return self.ffi.NULL
        if p.kind in ("tensor", "tensor_list"):
            raise TypeError(f"{self.api}: {p.name} is a tensor parameter: Call.tensor converts it")
        if isinstance(value, WRAPPERS.get(p.kind, ())):
            return self.wrapped(p.name, value)  # type: ignore[arg-type]  # (a wrapper, just checked)
        if p.kind == "int_array":
            return self.int_array(p.name, value)
        if p.kind == "bool_array":
            return self.bool_array(p.name, value)
        if p.kind == "float_array":
            return self.float_array(p.name, value)
        if p.kind == "scalar":
            return self.scalar(p.name, value)
        items = sequence_arg(self.api, p.name, value, "aclScalarList")
        return self.owning_list([functools.partial(self.scalar, f"{p.name}[{i}]", s, owned=False)
                                 for i, s in enumerate(items)],
                                "aclCreateScalarList", "aclDestroyScalarList", "aclDestroyScalar")

    def output(self, shape: Sequence[int] | None, dtype: DTypeLike, *, zero: bool = False,
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
        if not isinstance(dtype, np.dtype):
            dtype = np.dtype(dtype)
        if self._fast is not None:
            if refused is None:
                slot = (self._fast_device_output if self.device_io else self._fast_output)(safe_shape(shape), dtype, zero)
                if slot is not None:
                    return slot
            self._leave_fast()
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
            self._hold((Tensor.close, t, False, 0))
            self._outputs.append(t)
            self.uses(t.buffer)
            # (type: ignore: a new Tensor is open, its buffer set.)
            ptr, nbytes, handle = t.buffer.ptr, t.buffer.nbytes, t.handle  # type: ignore[union-attr]
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

    # -- the fast path ----------------------------------------------------------------------

    def _record(self, desc: list[int], pointer: "FFI.CData | list[FFI.CData] | None", replay: tuple[Any, ...]) -> _Slot:
        slot = _Slot(desc, pointer, replay)
        self._slots.append(slot)
        return slot

    def _fast_tensor(self, name: str, value: object) -> object:
        if not isinstance(value, np.ndarray):
            raise not_a_tensor(self.api, name, value)
        dtype = value.dtype
        acl = _ACL_DTYPE.get(dtype)
        if acl is None:
            raise unnamed_dtype(self.api, name, dtype)
        shape = value.shape
        ndim = len(shape)
        if name in self._shape_only and ndim <= _fast.MAX_DIMS:
            # described over NULL data, nothing allocated or copied (storage: its elements)
            desc, _ = _contiguous_description(_fast.HOST_IN, shape, dtype)
            return self._record([*desc[:-1], 0], self.ffi.NULL, ("tensor", name, value))
        if ndim <= _fast.MAX_DIMS and value.flags.c_contiguous:
            desc, nbytes = _contiguous_description(_fast.HOST_IN, shape, dtype)
            if nbytes == 0:  # no device memory, no copy (the storage is then 0 elements too)
                return self._record(desc, self.ffi.NULL, ("tensor", name, value))
            # ``value`` (kept in ``replay``) keeps the bytes the pointer points at alive.
            slot = _Slot(desc, self.ffi.from_buffer(value), ("tensor", name, value))  # type: ignore[call-overload]
            self._slots.append(slot)
            return slot
        item = value.itemsize
        if value.size == 0:
            return self._record([_fast.HOST_IN, acl, _format(ndim), ndim, *shape, *_contiguous(shape), 0, 0],
                                self.ffi.NULL, ("tensor", name, value))
        else:
            value, low, nbytes = _strided_bytes(value)
            strides = [s // item for s in value.strides]
            source = self.ffi.cast("void *", low)
        if ndim > _fast.MAX_DIMS:
            self._leave_fast()
            return self.tensor(name, value)
        return self._record([_fast.HOST_IN, acl, _format(ndim), ndim, *shape, *strides, nbytes // item, nbytes],
                            source, ("tensor", name, value))

    def _fast_tensor_list(self, name: str, items: list[object]) -> _Slot | None:
        """fastcall.c's TENSOR_LIST item of a list of C-contiguous ndarrays (the pointer: a list,
        one per element, NULL for an empty one) or of device Tensors, or None: the ABI-mode path
        makes it (and raises what is wrong with an element)."""
        if not 0 < len(items) <= _fast.MAX_LIST:
            return None
        if type(items[0]) is Tensor:
            return self._fast_device_list(name, items)
        desc = [_fast.TENSOR_LIST, len(items)]
        pointers: list[FFI.CData] = []
        for v in items:
            if type(v) is not np.ndarray or v.ndim > _fast.MAX_DIMS or not v.flags.c_contiguous \
                    or v.dtype not in _ACL_DTYPE:
                return None
            item, nbytes = _contiguous_description(_fast.HOST_IN, v.shape, v.dtype)
            desc += item
            pointers.append(self.ffi.from_buffer(v) if nbytes else self.ffi.NULL)  # type: ignore[call-overload]
        # (``items``, kept in ``replay``, keeps the bytes the pointers point at alive)
        return self._record(desc, pointers, ("tensor_list", name, items))

    def _fast_device_list(self, name: str, items: list[object]) -> _Slot | None:
        """The TENSOR_LIST of DEVICE_IN items of a list of open device Tensors of this call's
        backend (each described over its memory as ``_element`` describes it), or None."""
        tensors = cast("list[Tensor]", items)
        if not all(type(t) is Tensor and t.fast_key is not None and t.lib is self.lib and t.ndim <= _fast.MAX_DIMS
                   for t in tensors):
            return None
        desc = [_fast.TENSOR_LIST, len(items)]
        pointers: list[FFI.CData] = []
        for k, t in enumerate(tensors):
            buffer = t.check_argument(self.api, f"{name}[{k}]", self.lib)
            self.uses(buffer)
            desc += device_description(t, buffer)
            pointers.append(buffer.ptr)
        self.device_io = True
        return self._record(desc, pointers, ("tensor_list", name, items))

    def _fast_output(self, shape: tuple[int, ...], dtype: np.dtype, zero: bool) -> _Slot | None:
        if len(shape) > _fast.MAX_DIMS or dtype not in _ACL_DTYPE:
            return None
        desc, nbytes = _contiguous_description(_fast.HOST_OUT, shape, dtype, 1 if zero else 0)
        if nbytes > _FAST_MAX_OUTPUT_BYTES:
            return None
        host = np.empty(shape, dtype)
        slot = _Slot(desc, self.ffi.from_buffer(host) if nbytes else self.ffi.NULL,  # type: ignore[call-overload]
                     ("output", shape, dtype, zero))
        self._slots.append(slot)
        self._outputs.append(host)
        return slot

    def _fast_device_output(self, shape: tuple[int, ...], dtype: np.dtype, zero: bool) -> _Slot | None:
        """A new output Tensor (when an input was a device Tensor), passed by its descriptor."""
        if len(shape) > _fast.MAX_DIMS or dtype not in _ACL_DTYPE:
            return None
        t = Tensor.empty(shape, dtype, backend=self.lib.backend)
        self._hold((Tensor.close, t, False, 0))
        self._outputs.append(t)
        self.uses(t.buffer)
        # (type: ignore: a new Tensor is open, its buffer set.)
        ptr, nbytes = t.buffer.ptr, t.buffer.nbytes  # type: ignore[union-attr]
        if zero and nbytes:
            self.lib.check(self.c.aclrtMemset(ptr, nbytes, 0, nbytes), "aclrtMemset")
        slot = _Slot([_fast.POINTER], t.handle, ("output", shape, dtype, zero))
        self._slots.append(slot)
        return slot

    def _leave_fast(self) -> None:
        """Make what was described so far on the ABI-mode path, and stay on it."""
        if self._fast is None:
            return
        self._fast = None
        slots = list(self._slots)
        outputs, self._outputs = self._outputs, []
        self._written = []  # (made again below: only slots were written before)
        for slot in slots:
            kind, *args = slot.replay
            if kind == "output":
                shape, dtype, zero = args
                slot.handle = self.output(shape, dtype, zero=zero)
            else:
                slot.handle = getattr(self, kind)(*args)
        # ``output(None)`` placeholders kept their places among the outputs.
        made = iter(self._outputs)
        self._outputs = [None if o is None else next(made) for o in outputs]

    def _fast_run(self, op: str, args: tuple[Any, ...]) -> bool:
        """The whole call in one crossing; False when the helper cannot take it."""
        fast = self._fast
        assert fast is not None  # (run calls it on the fast path only)
        if len(args) > _fast.MAX_ARGS:
            return False
        phases = fast.phases(self.lib, op)
        if phases is None:
            return False
        desc: list[int] = []
        pointers: list[FFI.CData] = []
        plannable = True
        null = self.ffi.NULL
        lo, hi = _INT64
        floats = phases[2]
        for a, real in zip(args, floats):
            t = type(a)
            if real is not None:
                if t is not float and t is not int:
                    return False
                desc += float_item(self.ffi, real, a)
            elif t is _Slot:
                if self.device_io and (a.desc[0] in (_fast.HOST_OUT, _fast.HOST_INOUT)
                                       or (a.desc[0] == _fast.TENSOR_LIST and a.desc[2] != _fast.DEVICE_IN)):
                    # (an asynchronous call copies nothing back, and its device memory the
                    # helper hands back holds no list's copies: the ABI-mode path)
                    return False
                desc += a.desc
                if type(a.pointer) is list:
                    pointers += a.pointer
                elif a.pointer is not None:
                    pointers.append(a.pointer)
            elif (t is int or t is bool) and lo <= a <= hi:
                desc.append(_fast.VALUE)
                desc.append(int(a))
            elif a is null or (isinstance(a, self.ffi.CData) and self.ffi.typeof(a).kind == "pointer"):
                desc.append(_fast.POINTER)
                pointers.append(a)
                plannable = plannable and a == null
            else:
                return False
        if self.device_io:
            # Device Tensors: nothing waits; the call's device memory waits for the stream.
            later = fast.ffi.new("aclnnpy_deferred *")
            result = fast.call_async(fast.table, phases[0], phases[1], self.stream, desc, len(desc), pointers, later)
            self._fast_done = True
            if later.launched:
                self._launched = True
                self._hold((_queued_work, None, True, int(later.nbytes)))
                for i in range(later.count):
                    block = self.ffi.cast("void *", int(fast.ffi.cast("uintptr_t", later.blocks[i])))
                    self._hold((self.c.aclrtFree, block, True, 0))
            if result:
                _fast_failed(self.lib, op, result)
        else:
            result = fast.call(fast.table, phases[0], phases[1], self.stream, desc, len(desc), pointers)
            self._fast_done = True
            if result:
                self._outputs = []
                _fast_failed(self.lib, op, result)
            if self.lib.has_pending():
                self.lib.synchronize()  # what earlier device-Tensor calls left waiting on the stream
        if plannable:
            self._fast_last = (op, phases, desc, [a for a in args if type(a) is _Slot or a is null])
        return True

    # -- the two phases -------------------------------------------------------------------

    def run(self, op: str, *args: Any) -> None:
        """``{op}GetWorkspaceSize(*args, &size, &executor)`` then ``{op}(ws, size, executor, stream)``."""
        if self._capture is not None and not self.device_io:
            raise not_capturable("copies its results to the host (no device Tensor argument)")
        if self._fast is not None:
            if self._fast_run(op, args):
                return
            self._leave_fast()
        if self._slots:
            args = tuple(a.handle if type(a) is _Slot else a for a in args)
        lib, ffi = self.lib, self.ffi
        size_p = ffi.new(self.c.u64_p)
        executor_p = ffi.new(self.c.executor_pp)
        lib.check(self.fn(f"{op}GetWorkspaceSize")(*args, size_p, executor_p), f"{op}GetWorkspaceSize")
        executor = executor_p[0]
        size = int(size_p[0])
        workspace = ffi.NULL
        if size or self._refused is not None:
            # Until phase 2 takes it, the executor is the call's: destroyed if what comes before
            # fails, or nothing will. (With nothing in between, it goes straight to phase 2.)
            self._hold((self.c.aclDestroyAclOpExecutor, executor, False, 0))
            if self._refused is not None:
                # The library accepted arguments the binding's shape checks refuse (a documented
                # deviation of the numpy path): fail as the numpy backend does, not into a stand-in.
                refused = self._refused
                if isinstance(refused, AclnnError):
                    raise refused
                raise param_invalid(self.api, f"inconsistent arguments: {refused}")
            workspace = self._malloc(size)
            self._resources.detach(executor)
        # Phase 2 consumes the executor whatever its outcome (single use); from then on the
        # call's device memory may be in use by queued work until the stream is past it.
        self._launched = True
        if self.device_io:
            # The caller's Tensors too: their memory dropped on this thread waits for the
            # stream as long as something does (Library.has_pending), so one always does.
            self._hold((_queued_work, None, True, 0))
        status = self.fn(op)(workspace, size, executor, self.stream)
        if status:
            lib.check(status, op)

    def repeatable(self, op: str, *args: Any) -> tuple[object, object, int]:
        """``{op}GetWorkspaceSize(*args, &size, &executor)``, then
        ``aclSetAclOpExecutorRepeatable(executor)`` and the workspace (freed with the call):
        ``(executor, workspace, size)``. The caller runs phase 2 as often as it likes and
        destroys the executor with ``aclDestroyAclOpExecutor`` before the call ends."""
        lib, ffi = self.lib, self.ffi
        size_p = ffi.new(self.c.u64_p)
        executor_p = ffi.new(self.c.executor_pp)
        lib.check(self.fn(f"{op}GetWorkspaceSize")(*args, size_p, executor_p), f"{op}GetWorkspaceSize")
        executor = executor_p[0]
        self._hold((self.c.aclDestroyAclOpExecutor, executor, False, 0))
        lib.check(self.fn("aclSetAclOpExecutorRepeatable")(executor), "aclSetAclOpExecutorRepeatable")
        workspace = self._malloc(int(size_p[0]))
        self._resources.detach(executor)  # the caller's now (it destroys it before the call ends)
        return executor, workspace, int(size_p[0])

    def results(self) -> list[Any]:
        """The outputs, in the order they were made: device ``Tensor``s when any input was
        one (no waiting), else NumPy arrays after the stream has been synchronised.

        (Each is ``np.ndarray | Tensor | None``; ``Any`` because the op knows which of its
        outputs it made, and of which kind, and assigns them accordingly.)"""
        if self._fast_done and not self.device_io:
            return list(self._outputs)
        if self.device_io:
            for o in self._outputs:
                if isinstance(o, Tensor):
                    self._resources.detach(o)  # the caller's now
            return list(self._outputs)
        self.lib.synchronize()
        out: list[np.ndarray | None] = []
        for o in self._outputs:
            if o is None:
                out.append(None)
                continue
            # (cast: on the ABI-mode path without device_io every output is a device copy.)
            ptr, shape, dtype, nbytes = cast("tuple[FFI.CData, tuple[int, ...], np.dtype, int]", o)
            host = np.empty(shape, dtype)
            if nbytes:
                self.lib.check(self.c.aclrtMemcpy(self.ffi.from_buffer(host), nbytes, ptr, nbytes,  # type: ignore[call-overload]
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


def dtype_of(value: object, default: DTypeLike = np.float32) -> np.dtype:
    """The dtype of a tensor argument (ndarray or Tensor), or ``default`` for None."""
    dtype: np.dtype = np.dtype(getattr(value, "dtype", default))
    return dtype


def shape_of(value: object) -> tuple[int, ...]:
    return tuple(getattr(value, "shape", ()))
