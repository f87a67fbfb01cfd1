"""The npu/sim path of a typed operator function: the operator's declaration over the one
conversion ``call`` and ``prepare`` use.

An operator module declares its path once::

    _aclnn = planned(TypedCall("Xxx", outputs=_outputs, checks=_checks))

and calls ``_aclnn(library, *args)`` with its function's arguments in C order, outputs left out.
Each argument is converted by the C type the binding's header declares for it (``params``):
plain values first (range-checked ints, bools), then tensors (``values.tensor_input``: a CPU
array-like viewed or copied, a device ``Tensor`` in place; a tensor list is a Python list or
tuple of them, ``Call.tensor_list``), then lists (int/bool/float arrays,
scalars), each in C order: the order in which the numpy backend's checks meet Python type
errors too. A tensor CANN writes in place is an argument here, converted by ``Call.inplace`` (a
writable array or a device ``Tensor``, written where it is): every output of an in-place
operator (``outputs=None``), and the tensors CANN reads and updates beside its outputs
(``params.READ_AND_WRITTEN``: BatchNorm's running statistics). ``outputs(*values)`` then says the shape and dtype of each output (None: NULL), and
``checks(*values)``, the operator's shape-only checks, whether those shapes may be allocated (a
refused output is a stand-in, so the library reports the argument at fault: ``Call.output``).
The two phases run through a ``Call``, on the fast path where its helper takes the call.

An in-place operator (CANN's ``selfRef``: a tensor it writes, non-const or one of
``params.WRITTEN_CONST``) is declared without ``outputs``: its written tensors are then
arguments in their C places (a writable ndarray, a device ``Tensor``; ``values.output_tensor``
coerces them, with the tensors), written in place (``Call.inplace``), and the result is the
written argument itself, or a tuple of them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from .._ffi.declarations import include_dir
from .executor import Call
from .params import PLAIN_KINDS, READ_AND_WRITTEN, Param, Signature, read_signature
from .._dtypes import _NUMPY_TO_ACL
from .values import (bool_array_arg, float_array_arg, int_array_arg, output_tensor, plain_value, sequence_arg,
                     tensor_input)

if TYPE_CHECKING:
    from .._runtime.library import Library


class Output(NamedTuple):
    """One output of a typed call: its shape (None: the operator is passed NULL and None is
    returned there), dtype, and whether it starts as zeros (for an operator that leaves parts
    of it unwritten)."""

    shape: Sequence[int] | None
    dtype: np.dtype
    zero: bool = False


#: The coercion of each kind of non-tensor parameter before the call is made (the value the
#: operator's rules then read).
_COERCE: dict[str, Callable[[str, str, object], object]] = {
    "int_array": int_array_arg, "bool_array": bool_array_arg, "float_array": float_array_arg}


_PLAIN, _TENSOR, _COERCE_IT, _KEEP, _TENSORS, _WRITTEN_ARG = range(6)  # (the last: written in place)
#: How each kind of parameter is coerced before the call is made.
_CODE = {**{kind: _PLAIN for kind in PLAIN_KINDS}, "tensor": _TENSOR, **{kind: _COERCE_IT for kind in _COERCE},
         "tensor_list": _TENSORS}
#: The ``Call`` method that converts a coerced input of each kind, ``Call.argument`` for the
#: rest (a wrapper object was refused by the coercion already: the direct methods are the same).
_CONVERTER = {"tensor": 0, "int_array": 1, "bool_array": 2}  # (0, 1, 2: the branches of ``__call__``)
_ANY, _WRITTEN, _LIST = 3, 4, 5  # (4: a tensor written in place, ``Call.inplace``; 5: ``Call.tensor_list``)


class _Layout(NamedTuple):
    """One operator's parameters (``signature``), its inputs (the non-output parameters, in C
    order), the order its inputs are coerced in, ``(index, parameter, how)``, and the source of
    each C argument (an input's index, or None for an output)."""

    signature: Signature
    inputs: tuple[Param, ...]
    order: tuple[tuple[int, Param, int], ...]
    sources: tuple[int, ...]
    outputs_last: bool  # the outputs are the last C arguments (most operators)
    converters: tuple[int, ...]  # how ``Call`` converts each input (``_CONVERTER``)


class TypedCall:
    """``(library, *args) -> result``: the npu/sim path of one typed operator function (module
    docstring). ``none_is`` maps a plain parameter's C name to the value a Python None stands
    for (``divisorOverride``: 0). The result is the one output, or a tuple of them."""

    def __init__(self, c_name: str, outputs: Callable[..., Sequence[Output]] | None = None, *,
                 checks: Callable[..., object] | None = None, none_is: Mapping[str, object] | None = None) -> None:
        """``outputs`` None: an in-place operator (module docstring)."""
        self.op = f"aclnn{c_name}"
        self.api = f"{self.op}GetWorkspaceSize"
        self.outputs = outputs
        self.checks = checks
        self.none_is = dict(none_is or {})
        self._layouts: dict[int, _Layout] = {}
        self.__name__ = self.__qualname__ = f"{c_name} on npu/sim"

    def _layout(self, lib: Library) -> _Layout:
        """The operator's parameters as the binding's own header declares them (the prototype
        every backend's checks follow), in the library's declarations, and the order in which
        its arguments are coerced and converted (worked out once per library)."""
        found = self._layouts.get(id(lib.ffi))
        if found is None:
            sig = read_signature(self.api, (Path(include_dir()) / "aclnnop",), lib.ffi)
            if any(p.kind == "tensor_list" and p.output for p in sig.params):
                raise TypeError(f"{self.api}: a typed call of an operator with an output tensor list is not "
                                "supported; aclnn_py.call converts tensor lists")
            inplace = self.outputs is None  # every output is an argument, written in place
            updated = READ_AND_WRITTEN.get(self.api, frozenset())  # outputs CANN also reads: arguments too
            inputs = tuple(p for p in sig.params if inplace or not p.output or p.name in updated)
            stage = {i: 0 if p.kind in PLAIN_KINDS else 1 if p.kind in ("tensor", "tensor_list") else 2
                     for i, p in enumerate(inputs)}
            order = tuple(sorted(range(len(inputs)), key=lambda i: (stage[i], i)))
            # Where each C argument comes from: an input's index, or ~k for the k-th output.
            outputs = [p for p in sig.params if p.output and not inplace and p.name not in updated]
            sources = tuple(~outputs.index(p) if p in outputs else inputs.index(p) for p in sig.params)
            found = _Layout(sig, inputs, tuple((i, inputs[i], _WRITTEN_ARG if inputs[i].output
                                                else _CODE.get(inputs[i].kind, _KEEP)) for i in order),
                            sources, sources == tuple(range(len(inputs))) + tuple(~k for k in range(len(outputs))),
                            tuple(_WRITTEN if p.output else _LIST if p.kind == "tensor_list"
                                  else _CONVERTER.get(p.kind, _ANY) for p in inputs))
            self._layouts[id(lib.ffi)] = found
        return found

    def signature(self, lib: Library) -> Signature:
        """The operator's parameters as the binding's own header declares them."""
        return self._layout(lib).signature

    def values(self, layout: _Layout, args: Sequence[object]) -> list[object]:
        """The arguments of the non-output parameters, coerced in the order the module docstring
        gives (each kind's Python type errors first, named)."""
        if len(args) != len(layout.inputs):
            raise TypeError(f"{self.op}: takes {len(layout.inputs)} arguments "
                            f"({', '.join(p.name for p in layout.inputs)}), got {len(args)}")
        api, values = self.api, list(args)
        for i, p, code in layout.order:
            v = values[i]
            if code == _TENSOR:
                if type(v) is not np.ndarray or v.dtype not in _NUMPY_TO_ACL:  # (the common case: as it is)
                    values[i] = tensor_input(api, p.name, v)
            elif code == _PLAIN:
                values[i] = plain_value(api, p, self.none_is.get(p.name, v) if v is None else v)
            elif code == _COERCE_IT and v is not None:
                values[i] = _COERCE[p.kind](api, p.name, v)
            elif code == _WRITTEN_ARG:
                values[i] = output_tensor(api, p.name, v)
            elif code == _TENSORS and v is not None:  # (a list of tensors, each None (NULL) or a tensor)
                values[i] = [tensor_input(api, f"{p.name}[{k}]", t)
                             for k, t in enumerate(sequence_arg(api, p.name, v, "aclTensorList"))]
        return values

    def __call__(self, lib: Library, *args: object) -> Any:
        layout = self._layouts.get(id(lib.ffi)) or self._layout(lib)
        values = self.values(layout, args)
        with Call(lib, self.api) as call:
            converted = [call.tensor(p.name, v) if how == 0 else call.int_array(p.name, v, coerced=True) if how == 1
                         else call.bool_array(p.name, v, coerced=True) if how == 2
                         else call.inplace(p.name, v) if how == _WRITTEN
                         else call.tensor_list(p.name, v) if how == _LIST else call.argument(p, v)
                         for p, v, how in zip(layout.inputs, values, layout.converters)]
            refused: Exception | None = None
            if self.checks is not None and self.outputs is not None:
                try:  # (``shape_check_error``: any failure only means "do not allocate")
                    self.checks(*values)
                except Exception as exc:
                    refused = exc
            if self.outputs is None:  # (in place: nothing is allocated from the arguments, the library checks)
                call.run(self.op, *converted)
                results = call.written()
                return results[0] if len(results) == 1 else tuple(results)
            made = [call.output(o.shape, o.dtype, zero=o.zero, refused=refused) for o in self.outputs(*values)]
            if layout.outputs_last:
                call.run(self.op, *converted, *made)
            else:
                call.run(self.op, *[converted[i] if i >= 0 else made[~i] for i in layout.sources])
            call.written()  # (the tensors CANN also updates in place, READ_AND_WRITTEN: copied back)
            results = call.results()
        return results[0] if len(results) == 1 else tuple(results)
