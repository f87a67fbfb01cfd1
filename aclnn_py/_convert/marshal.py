"""The arguments of one ``call`` or ``prepare`` made into C arguments by their declared C types
(``params``), inside a ``Call``: each tensor remembered where its data lives (``TensorSlot``), so
that a prepared executor can be fed again and ndarray outputs written back."""

from __future__ import annotations

import functools
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, TypeAlias

import numpy as np

from .._constants import ACL_MEMCPY_DEVICE_TO_HOST
from .._runtime.tensor import Tensor
from .arrays import BoolArray, FloatArray, IntArray, Scalar
from .executor import Call, overwritten_by
from .params import Param, Signature
from .values import (bool_array_arg, call_tensor, float_array_arg, int_array_arg, output_tensor, plain_value,
                     python_scalar, sequence_arg)

if TYPE_CHECKING:
    pass



WRAPPERS = {"int_array": IntArray, "bool_array": BoolArray, "float_array": FloatArray}


def fixed_value(api: str, p: Param, value: object) -> object:
    """A non-tensor argument as a comparable value (what phase 1 copies into the executor)."""
    if value is None:
        return None
    if p.kind in WRAPPERS:
        if isinstance(value, WRAPPERS[p.kind]):
            return tuple(value.values)
        return {"int_array": int_array_arg, "bool_array": bool_array_arg,
                "float_array": float_array_arg}[p.kind](api, p.name, value)
    if p.kind == "scalar":
        s = value.value if isinstance(value, Scalar) else python_scalar(api, p.name, value)
        return (s.dtype, s.item())
    if p.kind == "scalar_list":
        items = sequence_arg(api, p.name, value, "aclScalarList")
        return tuple(fixed_value(api, Param(f"{p.name}[{i}]", "", "scalar"), v) for i, v in enumerate(items))
    return plain_value(api, p, value)


class Marshal:
    """Converts one call's arguments inside a ``Call``, remembering for each tensor where its
    data lives, so that a prepared executor can be fed again."""

    def __init__(self, call: Call, sig: Signature, values: list[object], *, own_descriptors: bool) -> None:
        self.call, self.sig = call, sig
        self.ffi = call.ffi
        # own_descriptors: a Tensor argument gets a descriptor of its own (not the Tensor's), since
        # re-pointing the executor's tensors re-points the descriptor too.
        self.own = own_descriptors
        self.slots: list[object] = []      # per parameter: a TensorSlot, a list of them, or the fixed value
        self.args: list[object] = []
        self.inputs = self.outputs = 0        # tensors so far, list elements one by one
        # Tensor and tensor-list arguments so far: a list's position for aclSetDynamic*TensorAddr.
        self.input_args = self.output_args = 0
        for p, v in zip(sig.params, values):
            self.args.append(self._convert(p, v))

    def _convert(self, p: Param, v: object) -> object:
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
        self.slots.append(fixed_value(api, p, v))
        return call.argument(p, v)

    def _tensor(self, p: Param, v: object, output: bool, *, in_list: bool = False) -> "TensorSlot":
        api, call = self.sig.api, self.call
        value = output_tensor(api, p.name, v) if output else (None if v is None else call_tensor(api, p.name, v))
        index = self.outputs if output else self.inputs
        if output:
            self.outputs += 1
        else:
            self.inputs += 1
        if value is None:
            if in_list:
                raise TypeError(f"{api}: {p.name} must be a tensor, got None")
            return TensorSlot(p.name, output, index, None, self.ffi.NULL, None)
        if isinstance(value, Tensor):
            buffer = value.check_argument(api, p.name, call.lib)
            call.device_io = True
            call.uses(buffer)
            if self.own or in_list:
                handle = call.descriptor(value.shape, value.dtype, value.strides, value.offset,
                                         buffer.nbytes // value.dtype.itemsize, buffer.ptr,
                                         value.format, owned=not in_list)
            else:
                handle = value.handle
            return TensorSlot(p.name, output, index, layout_of(value), handle, buffer.ptr)
        # (ascontiguousarray only when not contiguous: it makes a 0-d array 1-d; an argument the
        # operator overwrites whole is not copied in: ``executor.declare_unread``)
        overwritten = output and not in_list and p.name == overwritten_by(api)
        host = value if value.flags.c_contiguous else \
            np.empty(value.shape, value.dtype) if overwritten else np.ascontiguousarray(value)
        ptr, strides, storage = call.upload(host, copy=not overwritten)
        handle = call.descriptor(host.shape, host.dtype, strides, 0, storage, ptr, owned=not in_list)
        return TensorSlot(p.name, output, index, layout_of(host), handle, ptr, host_nbytes=host.nbytes,
                           value=value if output else None, copied_in=not overwritten)

    def _tensor_list(self, p: Param, v: object) -> object:
        api = self.sig.api
        items = sequence_arg(api, p.name, v, "aclTensorList")
        ir_index = self.output_args if p.output else self.input_args
        if p.output:
            self.output_args += 1
        else:
            self.input_args += 1
        slots: list[TensorSlot] = []
        for i, item in enumerate(items):
            if p.output:
                output_tensor(api, f"{p.name}[{i}]", item)  # checked before anything is made

        def make(i: int, item: object) -> object:
            slot = self._tensor(Param(f"{p.name}[{i}]", "", "tensor"), item, p.output, in_list=True)
            slot.list_position = (ir_index, i)
            slots.append(slot)
            return slot.handle

        handle = self.call.owning_list([functools.partial(make, i, item) for i, item in enumerate(items)],
                                       "aclCreateTensorList", "aclDestroyTensorList", "aclDestroyTensor")
        for slot in slots:
            slot.list_handle = handle
        self.slots.append(slots)
        return handle


# What layout_of returns: (shape, dtype, strides or None, offset, "Tensor" or "ndarray").
Layout: TypeAlias = tuple[tuple[int, ...], np.dtype, tuple[int, ...] | None, int, str]


def layout_of(value: np.ndarray | Tensor) -> Layout:
    """What a prepared executor fixed of a tensor: shape, dtype, and for a Tensor its view."""
    if isinstance(value, Tensor):
        return (tuple(value.shape), value.dtype, tuple(value.strides), value.offset, "Tensor")
    return (tuple(value.shape), value.dtype, None, 0, "ndarray")


def describe(layout: Layout) -> str:
    shape, dtype, strides, offset, kind = layout
    view = f", strides {list(strides)}, offset {offset}" if kind == "Tensor" else ""  # type: ignore[arg-type]  # (a Tensor's strides are given)
    return f"{kind} {list(shape)} {dtype}{view}"


class TensorSlot:
    """One tensor of the executor: where its data is, and (for ndarrays) the host side."""

    __slots__ = ("name", "output", "index", "layout", "handle", "ptr", "host_nbytes", "value",
                 "copied_in", "list_position", "list_handle")

    def __init__(self, name: str, output: bool, index: int, layout: Layout | None, handle: object, ptr: object,
                 host_nbytes: int = 0, value: np.ndarray | None = None, copied_in: bool = True) -> None:
        self.name, self.output, self.index, self.layout = name, output, index, layout
        self.handle, self.ptr, self.host_nbytes, self.value = handle, ptr, host_nbytes, value
        self.copied_in = copied_in  # (an ndarray's host bytes go to the device before a run; not
        # for an argument the operator overwrites whole: ``executor.declare_unread``)
        self.list_position: tuple[int, int] | None = None  # (which tensor-list argument, index in it)
        self.list_handle: object = None


def download(call: Call, slots: Iterable[TensorSlot]) -> None:
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


def flat_slots(slots: Iterable[object]) -> list[TensorSlot]:
    out: list[TensorSlot] = []
    for s in slots:
        if isinstance(s, TensorSlot):
            out.append(s)
        elif isinstance(s, list):
            out.extend(s)
    return out


def results_of(sig: Signature, values: list[object]) -> Any:
    # (type: ignore: a tensor_list value was found a sequence when it was converted.)
    outs = [list(v) if p.kind == "tensor_list" else v for p, v in zip(sig.params, values) if p.output]  # type: ignore[call-overload]
    if not outs:
        return None
    return outs[0] if len(outs) == 1 else tuple(outs)
