"""Any operator of the installed CANN by its C name: ``call`` (both phases, once) and
``prepare`` (phase 1 once on a repeatable executor, phase 2 on every run).

The arguments are those of ``aclnnXxxGetWorkspaceSize`` in C order without ``workspaceSize``
and ``executor``, by position or by C parameter name. Each is converted by the C type the
toolkit's own header declares (``include/aclnnop/*.h``, custom packages' ``op_api/include``):

=============================  ==============================================================
``const aclTensor *``          ``numpy.ndarray``, ``aclnn_py.Tensor``, any CPU array-like
                               (buffer protocol, ``__array__``, ``__dlpack__``); None is NULL
``aclTensor *`` (an output)    an ndarray written in place, a ``Tensor``, or None (NULL); the
                               ndarray's content goes in too (in-place operators read it)
``aclIntArray *`` & co.        sequences (or the ``IntArray``/``BoolArray``/``FloatArray``)
``aclScalar *``                a number: bool -> BOOL, int -> INT64, float -> DOUBLE,
                               complex -> COMPLEX128 (what torch_npu's at::Scalar conversion
                               gives), a NumPy scalar keeps its dtype; or an ``aclnn_py.Scalar``
``aclTensorList *``            a sequence of tensors (``aclScalarList *``: of scalars)
plain C scalars                Python values, checked against the C type's range (161002)
=============================  ==============================================================

Returns the outputs (the non-const ``aclTensor *`` / ``aclTensorList *`` arguments, as they
were passed), one unwrapped, several as a tuple. Outputs given as ndarrays are synchronised
and written before ``call`` returns; with ``Tensor`` outputs nothing waits. Workspace, stream
and the release of every handle are ``ops._aclnn.Call``'s, as for the five op functions.
"""

from __future__ import annotations

import functools
import inspect
import numbers
import os
import threading
import weakref
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias

import numpy as np
from numpy.typing import DTypeLike

from . import _backend, _fast
from ._constants import ACL_MEMCPY_DEVICE_TO_HOST, ACL_MEMCPY_HOST_TO_DEVICE
from ._errors import ACL_ERROR_API_NOT_SUPPORT, ACLNN_ERR_PARAM_INVALID, AclnnError, param_invalid
from ._resources import Transaction, quietly
from .tensor import (BoolArray, DeviceBuffer, DeviceView, FloatArray, IntArray, Scalar, Tensor, float_array_arg,
                     scalar_value)
from .ops import _aclnn
from .ops._aclnn import _ACL_DTYPE, Call, _contiguous_description
from ._device import stream_address
from .ops._common import (bool_arg, bool_array_arg, int_arg, int_array_arg, on_stream, tensor_input,
                          unnamed_dtype)

if TYPE_CHECKING:
    from cffi import FFI

    from ._ffi.library import Library
    from ._ffi.operator_headers import Parameter
    from .tensor import _HostArray

_SUFFIX = "GetWorkspaceSize"

# The kinds of parameter, by the declared type's name (pointers) or cffi's kind (plain values).
_POINTER_KINDS = {"aclTensor": "tensor", "aclTensorList": "tensor_list", "aclIntArray": "int_array",
                  "aclBoolArray": "bool_array", "aclFloatArray": "float_array", "aclScalar": "scalar",
                  "aclScalarList": "scalar_list"}
_WRAPPERS = {"int_array": IntArray, "bool_array": BoolArray, "float_array": FloatArray}
_FLOAT32_MAX = float(np.finfo(np.float32).max)
_NOT_INTEGERS = ("char", "wchar_t", "char16_t", "char32_t", "long double", "float _Complex", "double _Complex")


@dataclass(frozen=True)
class _Param:
    name: str
    ctype: str
    kind: str            # a _POINTER_KINDS value, or "int", "bool", "float", "string"
    output: bool = False  # a non-const aclTensor * / aclTensorList *
    low: int = 0          # the range of an integer parameter
    high: int = 0


@dataclass(frozen=True)
class _Signature:
    op: str
    api: str
    params: tuple[_Param, ...]
    python: inspect.Signature


def _c_param(ffi: FFI, api: str, p: Parameter) -> _Param:
    if p.pointers == 1 and p.base in _POINTER_KINDS:
        kind = _POINTER_KINDS[p.base]
        return _Param(p.name, p.type, kind, output=kind in ("tensor", "tensor_list") and not p.const)
    if p.pointers == 1 and p.base == "char":
        return _Param(p.name, p.type, "string")
    if p.pointers == 0:
        try:
            t: FFI.CType | None = ffi.typeof(p.type)
        except Exception:
            t = None
        if t is not None and t.kind == "primitive" and t.cname == "_Bool":
            return _Param(p.name, p.type, "bool")
        if t is not None and t.kind == "primitive" and t.cname in ("float", "double"):
            return _Param(p.name, p.type, "float")
        if t is not None and (t.kind == "enum" or t.kind == "primitive" and t.cname not in _NOT_INTEGERS):
            bits = 8 * ffi.sizeof(t)  # type: ignore[arg-type]  # (cffi takes a ctype; types-cffi lists str | CData)
            signed = t.kind == "enum" or int(ffi.cast(t, -1)) < 0
            low, high = (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1) if signed else (0, 2**bits - 1)
            return _Param(p.name, p.type, "int", low=low, high=high)
    raise AclnnError(ACL_ERROR_API_NOT_SUPPORT, api,
                     f"parameter {p.name} has C type {p.type!r}, which aclnn_py.call cannot convert")


_signatures: dict[tuple[int, str], _Signature] = {}
_signatures_lock = threading.Lock()


def _signature(lib: Library | None, name: str) -> _Signature:
    """The parameters of ``{name}GetWorkspaceSize`` as the toolkit's header declares them
    (``lib`` None: the numpy backend, which knows the binding's own headers)."""
    op = name[: -len(_SUFFIX)] if name.endswith(_SUFFIX) else name
    key = (id(lib), op)
    found = _signatures.get(key)
    if found is not None:
        return found
    from ._ffi import ffi as binding_ffi
    from ._ffi.declarations import include_dir
    from ._ffi.operator_headers import find_operator_header

    api = op + _SUFFIX
    if lib is not None:
        lib.fn(api)  # declares it from its header; AclnnError naming it when none has it
        lib.fn(op)
        folders, ffi = lib.toolkit.header_folders, lib.ffi
    else:
        if op not in _numpy_kernel_names():
            raise _needs_device(op)
        folders, ffi = (Path(include_dir()) / "aclnnop",), binding_ffi()
    header = find_operator_header(api, folders)
    if header is None or header.prototypes[api].error:
        where = ", ".join(str(f) for f in folders)
        raise AclnnError(ACL_ERROR_API_NOT_SUPPORT, api, f"no operator header in {where} declares {api}"
                         + (f" ({header.prototypes[api].error})" if header is not None else ""))
    c_params = header.prototypes[api].parameters()
    if [p.type for p in c_params[-2:]] != ["uint64_t *", "aclOpExecutor **"]:
        raise AclnnError(ACL_ERROR_API_NOT_SUPPORT, api, f"{api} does not end with (uint64_t *workspaceSize, "
                         "aclOpExecutor **executor): not a two-phase aclnn operator")
    params = tuple(_c_param(ffi, api, p) for p in c_params[:-2])
    python = inspect.Signature([inspect.Parameter(p.name, inspect.Parameter.POSITIONAL_OR_KEYWORD)
                                for p in params])
    found = _Signature(op, api, params, python)
    with _signatures_lock:
        _signatures[key] = found
    return found


def _bind(sig: _Signature, args: Sequence[object], kwargs: dict[str, object]) -> list[object]:
    if not kwargs and len(args) == len(sig.params):
        return list(args)  # the common case, without inspect's generic binding
    try:
        bound = sig.python.bind(*args, **kwargs)
    except TypeError as exc:
        raise TypeError(f"{sig.op}(): {exc}") from None
    return [bound.arguments[p.name] for p in sig.params]


# -- Python values -> C values -----------------------------------------------------------------

def _array(api: str, name: str, value: object) -> np.ndarray | Tensor | None:
    """A tensor argument as an ndarray (a CPU array-like is viewed or copied) or a Tensor: the
    op functions' one coercion (``ops._common.tensor_input``), less torch_npu's device tensors,
    which ``call`` does not take yet."""
    value = tensor_input(api, name, value)
    if isinstance(value, DeviceView):
        raise TypeError(f"{api}: {name} is a device tensor of torch_npu; aclnn_py.call takes NumPy arrays, "
                        "CPU array-likes and aclnn_py.Tensor (the operator functions take torch_npu tensors)")
    return value


def _output(api: str, name: str, value: object) -> np.ndarray | Tensor | None:
    if value is None or isinstance(value, Tensor):
        return value
    if not isinstance(value, np.ndarray):
        raise TypeError(f"{api}: {name} is an output (aclTensor *): it must be a writable numpy.ndarray, an "
                        f"aclnn_py.Tensor or None, got {type(value).__name__}")
    if not value.flags.writeable:
        raise TypeError(f"{api}: {name} is an output (aclTensor *) and must be writable")
    if value.dtype not in _ACL_DTYPE:
        raise unnamed_dtype(api, name, value.dtype)
    return value


def _scalar(api: str, name: str, value: object) -> np.ndarray:
    """The 0-d array an aclScalar copies (dtype as torch_npu infers it)."""
    if isinstance(value, (bool, np.bool_)):
        dtype: DTypeLike = np.bool_
    elif isinstance(value, np.generic):
        dtype = value.dtype
    elif isinstance(value, numbers.Integral):
        dtype = np.int64
    elif isinstance(value, numbers.Real):
        dtype = np.float64
    elif isinstance(value, numbers.Complex):
        dtype = np.complex128
    else:
        raise TypeError(f"{api}: {name} (aclScalar *) must be a number or an aclnn_py.Scalar, "
                        f"got {type(value).__name__}")
    try:
        return scalar_value(api, value, dtype)
    except (TypeError, ValueError) as exc:
        raise type(exc)(f"{api}: {name}: {exc}") from None


def _sequence(api: str, name: str, value: object, what: str) -> Sequence[object]:
    if isinstance(value, (str, bytes, np.ndarray)) or not isinstance(value, Sequence):
        raise TypeError(f"{api}: {name} ({what}) must be a sequence, got {type(value).__name__}")
    return value


def _plain(api: str, p: _Param, value: object) -> bool | int | float | bytes | None:
    """A plain C value (int types, enums, bool, float, double, char *)."""
    if p.kind == "bool":
        return bool_arg(api, p.name, value)
    if p.kind == "int":
        v = int_arg(api, p.name, value)
        if not p.low <= v <= p.high:
            raise param_invalid(api, f"{p.name} = {v} does not fit the C parameter's {p.ctype}")
        return v
    if p.kind == "float":
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
            raise TypeError(f"{api}: {p.name} must be a real number, got {type(value).__name__}")
        f = float(value)
        if p.ctype == "float" and np.isfinite(f) and abs(f) > _FLOAT32_MAX:
            raise param_invalid(api, f"{p.name} = {f} is outside float's range")
        return f
    if value is None:
        return None
    if not isinstance(value, (str, bytes)):
        raise TypeError(f"{api}: {p.name} ({p.ctype}) must be a str, got {type(value).__name__}")
    data = value.encode() if isinstance(value, str) else value
    if b"\0" in data:
        raise ValueError(f"{api}: {p.name} must not contain NUL characters")
    return data


def _fixed(api: str, p: _Param, value: object) -> object:
    """A non-tensor argument as a comparable value (what phase 1 copies into the executor)."""
    if value is None:
        return None
    if p.kind in _WRAPPERS:
        if isinstance(value, _WRAPPERS[p.kind]):
            return tuple(value.values)
        return {"int_array": int_array_arg, "bool_array": bool_array_arg,
                "float_array": float_array_arg}[p.kind](api, p.name, value)
    if p.kind == "scalar":
        s = value.value if isinstance(value, Scalar) else _scalar(api, p.name, value)
        return (s.dtype, s.item())
    if p.kind == "scalar_list":
        items = _sequence(api, p.name, value, "aclScalarList")
        return tuple(_fixed(api, _Param(f"{p.name}[{i}]", "", "scalar"), v) for i, v in enumerate(items))
    return _plain(api, p, value)


class _Marshal:
    """Converts one call's arguments inside a ``Call``, remembering for each tensor where its
    data lives, so that a prepared executor can be fed again."""

    def __init__(self, call: Call, sig: _Signature, values: list[object], *, own_descriptors: bool) -> None:
        self.call, self.sig = call, sig
        self.ffi = call.ffi
        # own_descriptors: a Tensor argument gets a descriptor of its own (not the Tensor's), since
        # re-pointing the executor's tensors re-points the descriptor too.
        self.own = own_descriptors
        self.slots: list[object] = []      # per parameter: a _TensorSlot, a list of them, or the fixed value
        self.args: list[object] = []
        self.inputs = self.outputs = 0        # tensors so far, list elements one by one
        # Tensor and tensor-list arguments so far: a list's position for aclSetDynamic*TensorAddr.
        self.input_args = self.output_args = 0
        for p, v in zip(sig.params, values):
            self.args.append(self._convert(p, v))

    def _convert(self, p: _Param, v: object) -> object:
        api, call = self.sig.api, self.call
        if p.kind == "tensor":
            slot = self._tensor(p, v, p.output)
            if p.output:
                self.output_args += 1
            else:
                self.input_args += 1
            self.slots.append(slot)
            return slot.handle
        if p.kind == "tensor_list":
            return self._tensor_list(p, v)
        self.slots.append(_fixed(api, p, v))
        if v is None:
            return self.ffi.NULL
        if p.kind in _WRAPPERS:
            if isinstance(v, _WRAPPERS[p.kind]):
                return self._wrapped(p, v)
            if p.kind == "int_array":
                return call.int_array(p.name, v)
            if p.kind == "bool_array":
                return call.bool_array(p.name, v)
            values = float_array_arg(api, p.name, v)
            return self._adopt(call.fn("aclCreateFloatArray")(values, len(values)), "aclCreateFloatArray",
                               "aclDestroyFloatArray")
        if p.kind == "scalar":
            return self._wrapped(p, v) if isinstance(v, Scalar) else self._scalar(p.name, v, owned=True)
        if p.kind == "scalar_list":
            items = _sequence(api, p.name, v, "aclScalarList")
            return self._list([lambda i=i, s=s: self._scalar(f"{p.name}[{i}]", s, owned=False)
                                       for i, s in enumerate(items)],
                              "aclCreateScalarList", "aclDestroyScalarList", "aclDestroyScalar")
        c = _plain(api, p, v)
        return self.ffi.new("char[]", c) if p.kind == "string" else c

    def _wrapped(self, p: _Param, v: _HostArray | Scalar) -> object:
        if v.lib is not self.call.lib:
            raise TypeError(f"{self.sig.api}: {p.name} belongs to backend {v.lib.backend!r}, "
                            f"but this call runs on {self.call.lib.backend!r}")
        return v.handle

    def _adopt(self, handle: FFI.CData, create: str, destroy: str) -> FFI.CData:
        if handle == self.ffi.NULL:
            raise AclnnError(ACLNN_ERR_PARAM_INVALID, create, self.call.lib.recent_error())
        self.call.adopt(self.call.fn(destroy), handle)
        return handle

    def _scalar(self, name: str, value: object, *, owned: bool) -> FFI.CData:
        # (A Scalar inside a list is copied: the list owns its elements.)
        held = value.value if isinstance(value, Scalar) else _scalar(self.sig.api, name, value)
        handle: FFI.CData = self.call.fn("aclCreateScalar")(self.ffi.cast("void *", held.ctypes.data), _ACL_DTYPE[held.dtype])
        if not owned:
            if handle == self.ffi.NULL:
                raise AclnnError(ACLNN_ERR_PARAM_INVALID, "aclCreateScalar", self.call.lib.recent_error())
            return handle
        return self._adopt(handle, "aclCreateScalar", "aclDestroyScalar")

    def _list(self, makers: Iterable[Callable[..., object]], create: str, destroy: str,
              destroy_item: str) -> FFI.CData:
        """A list that takes ownership of its elements: each made unowned, destroyed one by one
        only when the list cannot be made."""
        call, items = self.call, []
        with Transaction() as elements:
            release_item = call.fn(destroy_item)
            for make in makers:
                item = make()
                items.append(item)
                elements.add(release_item, item)
            handle: FFI.CData = call.fn(create)(items, len(items))
            if handle == self.ffi.NULL:
                raise AclnnError(ACLNN_ERR_PARAM_INVALID, create, call.lib.recent_error())
            call.adopt(call.fn(destroy), handle)
            elements.keep()  # the list destroys them
        return handle

    def _tensor(self, p: _Param, v: object, output: bool, *, in_list: bool = False) -> "_TensorSlot":
        api, call = self.sig.api, self.call
        value = _output(api, p.name, v) if output else (None if v is None else _array(api, p.name, v))
        index = self.outputs if output else self.inputs
        if output:
            self.outputs += 1
        else:
            self.inputs += 1
        if value is None:
            if in_list:
                raise TypeError(f"{api}: {p.name} must be a tensor, got None")
            return _TensorSlot(p.name, output, index, None, self.ffi.NULL, None)
        if isinstance(value, Tensor):
            buffer = value.check_argument(api, p.name, call.lib)
            call.device_io = True
            if self.own or in_list:
                handle = call.descriptor(value.shape, value.dtype, value.strides, value.offset,
                                         buffer.nbytes // value.dtype.itemsize, buffer.ptr,
                                         value.format, owned=not in_list)
            else:
                handle = value.handle
            return _TensorSlot(p.name, output, index, _layout(value), handle, buffer.ptr)
        # (ascontiguousarray makes a 0-d array 1-d: phase 1 sees the shape the caller passed)
        host = np.ascontiguousarray(value).reshape(value.shape)
        ptr, strides, storage = call.upload(host)
        handle = call.descriptor(host.shape, host.dtype, strides, 0, storage, ptr, owned=not in_list)
        return _TensorSlot(p.name, output, index, _layout(host), handle, ptr, host_nbytes=host.nbytes,
                           value=value if output else None)

    def _tensor_list(self, p: _Param, v: object) -> FFI.CData:
        api = self.sig.api
        items = _sequence(api, p.name, v, "aclTensorList")
        ir_index = self.output_args if p.output else self.input_args
        if p.output:
            self.output_args += 1
        else:
            self.input_args += 1
        slots: list[_TensorSlot] = []
        for i, item in enumerate(items):
            if p.output:
                _output(api, f"{p.name}[{i}]", item)  # checked before anything is made

        def make(i: int, item: object) -> object:
            slot = self._tensor(_Param(f"{p.name}[{i}]", "", "tensor"), item, p.output, in_list=True)
            slot.list_position = (ir_index, i)
            slots.append(slot)
            return slot.handle

        handle = self._list([lambda i=i, item=item: make(i, item) for i, item in enumerate(items)],
                            "aclCreateTensorList", "aclDestroyTensorList", "aclDestroyTensor")
        for slot in slots:
            slot.list_handle = handle
        self.slots.append(slots)
        return handle


# What _layout returns: (shape, dtype, strides or None, offset, "Tensor" or "ndarray").
_Layout: TypeAlias = tuple[tuple[int, ...], np.dtype, tuple[int, ...] | None, int, str]


def _layout(value: np.ndarray | Tensor) -> _Layout:
    """What a prepared executor fixed of a tensor: shape, dtype, and for a Tensor its view."""
    if isinstance(value, Tensor):
        return (tuple(value.shape), value.dtype, tuple(value.strides), value.offset, "Tensor")
    return (tuple(value.shape), value.dtype, None, 0, "ndarray")


class _TensorSlot:
    """One tensor of the executor: where its data is, and (for ndarrays) the host side."""

    __slots__ = ("name", "output", "index", "layout", "handle", "ptr", "host_nbytes", "value",
                 "list_position", "list_handle")

    def __init__(self, name: str, output: bool, index: int, layout: _Layout | None, handle: object, ptr: object,
                 host_nbytes: int = 0, value: np.ndarray | None = None) -> None:
        self.name, self.output, self.index, self.layout = name, output, index, layout
        self.handle, self.ptr, self.host_nbytes, self.value = handle, ptr, host_nbytes, value
        self.list_position: tuple[int, int] | None = None  # (which tensor-list argument, index in it)
        self.list_handle: FFI.CData | None = None


def _download(call: Call, slots: Iterable[_TensorSlot]) -> None:
    """Copy device results back into the ndarray outputs (the stream synchronised first)."""
    call.lib.synchronize()
    memcpy = call.c.aclrtMemcpy
    for slot in slots:
        out = slot.value
        assert out is not None  # (callers pass the slots with an ndarray output)
        host = out if out.flags.c_contiguous else np.empty(out.shape, out.dtype)
        if slot.host_nbytes:
            # (type: ignore: an ndarray is a buffer; NumPy's stubs declare __buffer__ for Python >= 3.12 only.)
            call.lib.check(memcpy(call.ffi.from_buffer(host), slot.host_nbytes, slot.ptr, slot.host_nbytes,  # type: ignore[call-overload]
                                  ACL_MEMCPY_DEVICE_TO_HOST), "aclrtMemcpy")
        if host is not out:
            out[...] = host


def _flat_slots(slots: Iterable[object]) -> list[_TensorSlot]:
    out: list[_TensorSlot] = []
    for s in slots:
        if isinstance(s, _TensorSlot):
            out.append(s)
        elif isinstance(s, list):
            out.extend(s)
    return out


def _results(sig: _Signature, values: list[object]) -> Any:
    # (type: ignore: a tensor_list value was found a sequence when it was converted.)
    outs = [list(v) if p.kind == "tensor_list" else v for p, v in zip(sig.params, values) if p.output]  # type: ignore[call-overload]
    if not outs:
        return None
    return outs[0] if len(outs) == 1 else tuple(outs)


# -- numpy backend: the registered operators' own kernels ----------------------------------------

@functools.cache
def _numpy_kernel_names() -> dict[str, str]:
    """C name of phase 2 -> Python name, of every registered operator."""
    from .ops._registry import operators

    return {op.kernel: op.name for op in operators()}


def _numpy_kernels() -> dict[str, Callable[..., Any]]:
    from . import ops

    # Looked up on the package at each call, so that a replaced function is the one that runs.
    return {kernel: getattr(ops, name) for kernel, name in _numpy_kernel_names().items()}


def _needs_device(op: str) -> AclnnError:
    return AclnnError(ACL_ERROR_API_NOT_SUPPORT, op, f"{op} needs backend 'npu' or 'sim': the numpy backend "
                      f"implements only {', '.join(_numpy_kernels())}")


def _numpy_call(sig: _Signature, values: list[object]) -> Any:
    from . import ops

    kernel = getattr(ops, _numpy_kernel_names()[sig.op])
    inputs: list[object]
    outputs: list[tuple[_Param, np.ndarray | Tensor | None]]
    inputs, outputs = [], []
    for p, v in zip(sig.params, values):
        if p.output:
            outputs.append((p, _output(sig.api, p.name, v)))
        elif p.kind == "tensor" and v is not None:
            inputs.append(_array(sig.api, p.name, v))
        else:
            inputs.append(v)
    results = kernel(*inputs, backend="numpy")
    results = results if isinstance(results, tuple) else (results,)
    for (p, out), result in zip(outputs, results):
        if out is None or result is None:
            continue
        if isinstance(out, Tensor):
            raise TypeError(f"{sig.api}: {p.name} is an aclnn_py.Tensor, which needs backend 'npu' or 'sim'")
        if out.shape != result.shape or out.dtype != result.dtype:
            raise param_invalid(sig.api, f"{p.name} must have shape {list(result.shape)} and dtype {result.dtype}, "
                                         f"got {list(out.shape)} and {out.dtype}")
        out[...] = result
    return _results(sig, values)


# -- public ------------------------------------------------------------------------------------

def _library(backend: str | None) -> Library | None:
    name = _backend.resolve(backend)
    if name == "numpy":
        return None
    from . import _ffi

    lib = _ffi.library(name)
    if _PLANS is not None:
        _PLANS.backend(name, lib)  # the entry's shortcut from this backend name to its library
    return lib


#: The plans of ``call`` (``aclnn_py/_fast/entry.c``'s Planner, keyed per library, operator name
#: and argument signature), or None without the fast entry.
_PLANS: Any = None if _fast.entry() is None else _fast.entry().Planner()


def call(name: str, *args: object, backend: str | None = None, stream: object = None, **kwargs: object) -> Any:
    """Run the aclnn operator ``name`` (``"aclnnAdd"``) once: phase 1 with the arguments of
    ``aclnnXxxGetWorkspaceSize`` (C order, or C names as keywords), then phase 2 on this
    thread's stream, or on ``stream`` (a stream the caller owns, as for the op functions:
    an int address, a cffi ``aclrtStream`` or a torch_npu stream; not destroyed, waited for
    only when NumPy outputs are copied back; checked, then ignored, on numpy). Returns the
    outputs (module docstring).

    Raises:
        AclnnError: the library's status; 200001 (ACL_ERROR_API_NOT_SUPPORT) naming ``name``
            when the toolkit declares or exports no such operator.
        TypeError: a missing or unknown argument, or one of the wrong Python type (named).
    """
    if _PLANS is not None and stream is None and not kwargs:
        # The fast entry: arguments by position whose signature was planned on this backend.
        result = _PLANS.call(name, backend if backend is not None else _backend.get_backend(), args)
        if result is not _fast.MISS:
            return result
    address = None if stream is None else stream_address(stream)
    lib = _library(backend)
    sig = _signature(lib, name)
    values = _bind(sig, args, kwargs)
    if lib is None:
        return _numpy_call(sig, values)
    if address is not None:
        return on_stream(lib, address, _call, sig, values)
    return _call(lib, sig, values)


def _call(lib: Library, sig: _Signature, values: list[object]) -> Any:
    planner = _PLANS
    if planner is not None:
        result = planner.run(lib, sig.op, values)
        if result is not _fast.MISS:
            return result
    with Call(lib, sig.api, fast=False) as c:
        marshal = _Marshal(c, sig, values, own_descriptors=False)
        c.run(sig.op, *marshal.args)
        downloads = [s for s in _flat_slots(marshal.slots) if s.value is not None]
        if downloads:
            _download(c, downloads)
        elif not c.device_io:
            c.lib.synchronize()  # the call's device memory is freed when it ends
    if planner is not None and _fast.api_for(lib) is not None:
        # Succeeded: the next call of this signature replays it (None: it takes this path).
        planner.add(lib, sig.op, values, _plan_spec(lib, sig, values))
    return _results(sig, values)


def _plan_spec(lib: Library, sig: _Signature, values: list[object]) -> _aclnn.PlanSpec | None:
    """The plan of a ``call`` that succeeded on the Python path with ``values``, or None when
    its arguments are not all of the kinds the helper describes: ndarray tensors (C-contiguous,
    writable outputs), int/bool lists, integer and bool values, None for a tensor."""
    fast, entry = _fast.api_for(lib), _fast.entry()
    phases = None if fast is None or len(values) > _fast.MAX_ARGS else fast.phases(lib, sig.op)
    if phases is None or entry is None:
        return None
    desc: list[int] = []
    pointers: list[tuple[int, int | None]] = []
    results: list[tuple[int, int]] = []
    for i, (p, v) in enumerate(zip(sig.params, values)):
        if p.kind == "tensor":
            if p.output:
                results.append((entry.ARG, i))
            if v is None:
                desc.append(_fast.POINTER)
                pointers.append((entry.NULL, None))
                continue
            if (type(v) is not np.ndarray or not v.flags.c_contiguous or v.ndim > _fast.MAX_DIMS
                    or v.dtype not in _ACL_DTYPE or (p.output and not v.flags.writeable)):
                return None
            item, nbytes = _contiguous_description(_fast.HOST_INOUT if p.output else _fast.HOST_IN, v.shape, v.dtype)
            desc += item
            pointers.append(((entry.ARG_WRITTEN if p.output else entry.ARG), i) if nbytes else (entry.NULL, None))
        elif p.kind in ("int_array", "bool_array") and isinstance(v, (list, tuple)) and len(v) <= _fast.MAX_ARRAY:
            if p.kind == "int_array":
                ints = int_array_arg(sig.api, p.name, v) or ()
                desc += [_fast.INT_ARRAY, len(ints), *ints]
            else:
                flags = bool_array_arg(sig.api, p.name, v) or ()
                desc += [_fast.BOOL_ARRAY, len(flags), *map(int, flags)]
        elif p.kind in ("int", "bool") and type(v) in (int, bool):
            value = int(_plain(sig.api, p, v))  # type: ignore[arg-type]
            if not -(2**63) <= value < 2**63:
                return None
            desc += [_fast.VALUE, value]
        else:
            return None
    mode = entry.NONE if not results else entry.SINGLE if len(results) == 1 else entry.TUPLE
    return (sig.op, _fast.address(phases[0]), _fast.address(phases[1]), desc, pointers, [], results, mode)


def prepare(name: str, *args: object, backend: str | None = None, **kwargs: object) -> "Prepared":
    """Phase 1 of ``name`` once, on a repeatable executor; the returned ``Prepared`` runs
    phase 2 when called with arguments of the same shapes and dtypes (``call``'s signature).
    Use it as a context manager (or ``close()`` it): that destroys the executor."""
    lib = _library(backend)
    sig = _signature(lib, name)
    values = _bind(sig, args, kwargs)
    if lib is None:
        # Checked now, as phase 1 checks them, on copies of the outputs (phase 1 writes nothing).
        _numpy_call(sig, [np.array(v) if p.output and isinstance(v, np.ndarray) else v
                          for p, v in zip(sig.params, values)])
    return Prepared(sig, lib, values)


class Prepared:
    """A repeatable executor of one operator and the arguments it was made with.

    Calling it runs phase 2 again: NumPy inputs are copied into the device memory phase 1
    saw; a ``Tensor`` elsewhere than before is re-pointed with ``aclSetInputTensorAddr`` /
    ``aclSetOutputTensorAddr`` (``aclSetDynamic{Input,Output}TensorAddr`` for an element of a
    tensor list); NumPy outputs are written in place. A tensor of another shape, dtype or view,
    or any other argument that differs from phase 1's, is a ValueError naming the parameter
    (phase 1 computed the executor from them). Runs on the stream of the thread that made it,
    or on ``stream=`` given to the run (a stream the caller owns, as for ``call``; a run after
    one on another stream waits for that one first). On the numpy backend each call recomputes,
    after the same checks against phase 1's arguments. ``close()`` from another thread waits
    for a run in progress; a run after it is a ValueError."""

    def __init__(self, sig: _Signature, lib: Library | None, values: list[object]) -> None:
        self.sig = sig
        self.lib = lib
        self._thread = threading.get_ident()
        self._guard = _Guard()
        self._closed = False
        if lib is None:
            self._finalizer = None
            self._phase1 = _phase1_slots(sig, values)
            return
        c = Call(lib, sig.api, fast=False)
        try:
            self._marshal = _Marshal(c, sig, values, own_descriptors=True)
            self._executor, self._workspace, self._size = c.repeatable(sig.op, *self._marshal.args)
        except BaseException as exc:
            c.end(exc)
            raise
        self._call = c
        self._kernel = lib.fn(sig.op)
        self._phase1 = self._marshal.slots
        self._slots = _flat_slots(self._marshal.slots)
        self._downloads = [s for s in self._slots if s.value is not None]
        self._queued = False  # whether the last run may still be on the stream
        # An event recorded behind the last run that left work queued: waited for before the
        # next run refills the memory, and before the release. An event, not that run's stream:
        # a caller's stream may be destroyed once synchronised, and a dead one cannot be waited for.
        self._done: list[Any] = [None]
        self._finalizer = weakref.finalize(self, Prepared._release, c, self._executor, self._done, self._guard)

    @staticmethod
    def _release(c: Call, executor: object, done: list[Any], guard: _Guard) -> None:
        """Wait for a run in progress on another thread and for queued runs, destroy the
        executor, then the call's descriptors and memory: each step runs whatever the others
        do (an interrupted wait included)."""
        lib = c.lib
        if lib.finalized:
            return
        with guard.lock:
            steps = Transaction()  # (run newest first)
            steps.add(Call.end, c)
            steps.add(c.c.aclDestroyAclOpExecutor, executor)
            steps.add(Prepared._wait, (lib, done))
            quietly(steps.end)

    @staticmethod
    def _wait(args: tuple[Library, list[Any]]) -> None:
        lib, done = args
        event, done[0] = done[0], None
        if event is not None:
            try:
                lib.call("aclrtSynchronizeEvent", event)
            finally:
                lib.call("aclrtDestroyEvent", event)

    def close(self) -> None:
        """Destroy the executor and release what phase 1 was given (once; later calls do
        nothing). Waits for a run in progress on another thread."""
        if self._finalizer is not None:
            self._finalizer()
        with self._guard.lock:
            self._closed = True

    def __enter__(self) -> "Prepared":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # (``self`` positional-only: an operator's parameter may be named ``self``, as CANN's often are.)
    def __call__(self, /, *args: object, stream: object = None, **kwargs: object) -> Any:
        sig = self.sig
        address = None if stream is None else stream_address(stream)
        values = _bind(sig, args, kwargs)
        with self._guard.lock:  # (close() on another thread waits for the run)
            if self._closed or self._finalizer is not None and not self._finalizer.alive:
                raise ValueError(f"{sig.op}: this prepared executor is closed")
            if self.lib is None:
                self._check(values)
                return _numpy_call(sig, values)
            if threading.get_ident() != self._thread:
                raise RuntimeError(f"{sig.op}: a prepared executor runs on the stream of the thread that prepared it")
            plan = self._check(values)
            if address is not None:
                return on_stream(self.lib, address, Prepared._run, self, values, plan)
            return self._run(self.lib, self, values, plan)

    @staticmethod
    def _run(lib: Library, self: "Prepared", values: list[object],
             plan: list[tuple[_TensorSlot, np.ndarray | DeviceBuffer | None]]) -> Any:
        sig = self.sig
        c, ffi = self._call, self._call.ffi
        memcpy = c.c.aclrtMemcpy
        stream = lib.stream()
        if self._queued:
            # The last run may still read the memory about to be refilled.
            lib.call("aclrtSynchronizeEvent", self._done[0])
            self._queued = False
        for slot, value in plan:
            if isinstance(value, DeviceBuffer):
                ptr = value.ptr
                if ptr != slot.ptr:
                    self._repoint(slot, ptr)
            elif slot.host_nbytes:
                host = np.ascontiguousarray(value)
                # (type: ignore: an ndarray is a buffer; NumPy's stubs declare __buffer__ for Python >= 3.12 only.)
                lib.check(memcpy(slot.ptr, slot.host_nbytes, ffi.from_buffer(host), slot.host_nbytes,  # type: ignore[call-overload]
                                      ACL_MEMCPY_HOST_TO_DEVICE), "aclrtMemcpy")
                if slot.output:
                    slot.value = value
        lib.check(self._kernel(self._workspace, self._size, self._executor, stream), sig.op)
        # (also before a download: its synchronisation may fail, or be interrupted)
        self._behind(lib, stream, mark=not self._downloads)
        if self._downloads:
            _download(c, self._downloads)
        return _results(sig, values)

    def _behind(self, lib: Library, stream: Any, *, mark: bool) -> None:
        """Record the executor's event behind the run just queued on ``stream``; ``mark``:
        the device memory of the caller's Tensors this thread drops from now on waits for it
        too (nothing else will synchronise the stream)."""
        event = self._done[0]
        if event is None:
            p = lib.ffi.new("aclrtEvent *")
            lib.call("aclrtCreateEvent", p)
            event = self._done[0] = p[0]
        status = lib.fn("aclrtRecordEvent")(event, stream)
        if status:
            # Nothing to wait for later: wait now (the kernel was queued on a live stream).
            message = lib.recent_error()
            lib.call("aclrtSynchronizeStream", stream)
            raise AclnnError(status, "aclrtRecordEvent", message)
        self._queued = True
        if mark:
            lib.mark_queued()

    def _check(self, values: list[object]) -> list[tuple[_TensorSlot, np.ndarray | DeviceBuffer | None]]:
        """Every argument against phase 1's, before anything is done: ``(slot, new value)``,
        a Tensor's value its device memory (held for the run, though another thread close it)."""
        api, plan = self.sig.api, []
        for p, slot, v in zip(self.sig.params, self._phase1, values):
            if isinstance(slot, _TensorSlot):
                plan.append((slot, self._same_tensor(p, slot, v)))
            elif isinstance(slot, list):
                items = _sequence(api, p.name, v, "aclTensorList")
                if len(items) != len(slot):
                    raise ValueError(f"{self.sig.op}: {p.name} had {len(slot)} tensors in phase 1, got {len(items)}")
                plan += [(s, self._same_tensor(p, s, item)) for s, item in zip(slot, items)]
            elif _fixed(api, p, v) != slot:
                raise ValueError(f"{self.sig.op}: {p.name} differs from the value phase 1 was given "
                                 f"({slot!r}); prepare again for another one")
        return plan

    def _same_tensor(self, p: _Param, slot: _TensorSlot, v: object) -> np.ndarray | DeviceBuffer | None:
        api = self.sig.api
        value = _output(api, slot.name, v) if slot.output else (None if v is None else _array(api, slot.name, v))
        if slot.layout is None or value is None:
            if (slot.layout is None) != (value is None):
                raise ValueError(f"{self.sig.op}: {slot.name} was {'None' if slot.layout is None else 'a tensor'} "
                                 "in phase 1 and must stay so")
            return None
        buffer = value.buffer if isinstance(value, Tensor) else None  # (read once: close() may run elsewhere)
        if isinstance(value, Tensor) and (value.lib is not self.lib or buffer is None):
            raise TypeError(f"{api}: {slot.name} is a closed Tensor or one of another backend")
        layout = _layout(value)
        if layout != slot.layout:
            what = ("shape, dtype, strides and offset" if layout[4] == slot.layout[4] == "Tensor" else
                    "shape and dtype" if layout[4] == slot.layout[4] else "kind (ndarray or Tensor)")
            raise ValueError(f"{self.sig.op}: {slot.name} must have phase 1's {what}: "
                             f"{_describe(slot.layout)}, got {_describe(layout)}")
        return buffer if isinstance(value, Tensor) else value

    def _repoint(self, slot: _TensorSlot, ptr: object) -> None:
        """The executor's tensor ``slot`` now reads (or writes) the device memory at ``ptr``."""
        assert self.lib is not None  # (only a device executor is repointed)
        side = "Output" if slot.output else "Input"
        if slot.list_position is None:
            api = f"aclSet{side}TensorAddr"
            status = self.lib.fn(api)(self._executor, slot.index, slot.handle, ptr)
        else:
            api = f"aclSetDynamic{side}TensorAddr"
            status = self.lib.fn(api)(self._executor, *slot.list_position, slot.list_handle, ptr)
        self.lib.check(status, api)
        slot.ptr = ptr


class _Guard:
    """The lock of one prepared executor: held by a run, taken by ``close()`` (and its
    finalizer). Made anew in a forked child, where a run the parent's other threads had in
    progress never ends."""

    __slots__ = ("lock", "__weakref__")

    def __init__(self) -> None:
        self.lock = threading.Lock()
        _guards.add(self)


_guards: weakref.WeakSet[_Guard] = weakref.WeakSet()


def _new_locks_in_child() -> None:
    """A forked child's locks (``aclnn_py._ffi._new_locks_in_child``)."""
    global _signatures_lock
    _signatures_lock = threading.Lock()
    for guard in list(_guards):
        guard.lock = threading.Lock()


os.register_at_fork(after_in_child=_new_locks_in_child)


def _phase1_slots(sig: _Signature, values: list[object]) -> list[object]:
    """On the numpy backend, what phase 1 fixes of each argument (``_Marshal.slots``' kinds:
    a ``_TensorSlot`` per tensor, a list of them per tensor list, else the value as
    ``_fixed`` compares it), so a prepared run is held to it as on a device."""
    api, slots = sig.api, list[object]()
    for p, v in zip(sig.params, values):
        if p.kind == "tensor":
            slots.append(_phase1_tensor(api, p.name, p.output, v))
        elif p.kind == "tensor_list":
            items = _sequence(api, p.name, v, "aclTensorList")
            slots.append([_phase1_tensor(api, f"{p.name}[{i}]", p.output, item) for i, item in enumerate(items)])
        else:
            slots.append(_fixed(api, p, v))
    return slots


def _phase1_tensor(api: str, name: str, output: bool, v: object) -> _TensorSlot:
    value = _output(api, name, v) if output else (None if v is None else _array(api, name, v))
    return _TensorSlot(name, output, 0, None if value is None else _layout(value), None, None)


def _describe(layout: _Layout) -> str:
    shape, dtype, strides, offset, kind = layout
    view = f", strides {list(strides)}, offset {offset}" if kind == "Tensor" else ""  # type: ignore[arg-type]  # (a Tensor's strides are given)
    return f"{kind} {list(shape)} {dtype}{view}"
