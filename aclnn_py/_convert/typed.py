"""The npu/sim path of a typed operator function: the operator's declaration over the one
conversion ``call`` and ``prepare`` use.

An operator module declares its path once::

    _aclnn = planned(TypedCall("Xxx", outputs=_outputs, checks=_checks))

and calls ``_aclnn(library, *args)`` with its function's arguments in C order, outputs left out.
Each argument is converted by the C type the binding's header declares for it (``params``):
plain values first (range-checked ints, bools), then tensors (``values.tensor_input``: a CPU
array-like viewed or copied, a device ``Tensor`` in place), then lists (int/bool/float arrays,
scalars), each in C order: the order in which the numpy backend's checks meet Python type
errors too. ``outputs(*values)`` then says the shape and dtype of each output (None: NULL), and
``checks(*values)``, the operator's shape-only checks, whether those shapes may be allocated (a
refused output is a stand-in, so the library reports the argument at fault: ``Call.output``).
The two phases run through a ``Call``, on the fast path where its helper takes the call.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from .._ffi.declarations import include_dir
from .executor import Call, shape_check_error
from .params import PLAIN_KINDS, Param, Signature, read_signature
from .values import bool_array_arg, float_array_arg, int_array_arg, plain_value, tensor_input

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


class TypedCall:
    """``(library, *args) -> result``: the npu/sim path of one typed operator function (module
    docstring). ``none_is`` maps a plain parameter's C name to the value a Python None stands
    for (``divisorOverride``: 0). The result is the one output, or a tuple of them."""

    def __init__(self, c_name: str, outputs: Callable[..., Sequence[Output]], *,
                 checks: Callable[..., object] | None = None, none_is: Mapping[str, object] | None = None) -> None:
        self.op = f"aclnn{c_name}"
        self.api = f"{self.op}GetWorkspaceSize"
        self.outputs = outputs
        self.checks = checks
        self.none_is = dict(none_is or {})
        self._signatures: dict[int, Signature] = {}
        self.__name__ = self.__qualname__ = f"{c_name} on npu/sim"

    def signature(self, lib: Library) -> Signature:
        """The operator's parameters as the binding's own header declares them (the prototype
        every backend's checks follow), in the library's declarations."""
        found = self._signatures.get(id(lib.ffi))
        if found is None:
            found = read_signature(self.api, (Path(include_dir()) / "aclnnop",), lib.ffi)
            if any(p.kind == "tensor_list" for p in found.params):
                raise TypeError(f"{self.api}: a typed call of an operator with a tensor list is not supported; "
                                "aclnn_py.call converts tensor lists")
            self._signatures[id(lib.ffi)] = found
        return found

    def values(self, sig: Signature, args: Sequence[object]) -> list[object]:
        """The arguments of the non-output parameters, coerced in the order the module docstring
        gives (each kind's Python type errors first, named)."""
        inputs = [p for p in sig.params if not p.output]
        if len(args) != len(inputs):
            raise TypeError(f"{self.op}: takes {len(inputs)} arguments ({', '.join(p.name for p in inputs)}), "
                            f"got {len(args)}")
        values = list(args)
        stages: tuple[Callable[[Param], bool], ...] = (
            lambda p: p.kind in PLAIN_KINDS, lambda p: p.kind == "tensor", lambda p: True)
        done: set[int] = set()
        for stage in stages:
            for i, p in enumerate(inputs):
                if i in done or not stage(p):
                    continue
                done.add(i)
                v = values[i]
                if p.kind in PLAIN_KINDS:
                    values[i] = plain_value(self.api, p, self.none_is[p.name] if v is None and p.name in self.none_is
                                            else v)
                elif p.kind == "tensor":
                    values[i] = tensor_input(self.api, p.name, v)
                elif p.kind in _COERCE and v is not None:
                    values[i] = _COERCE[p.kind](self.api, p.name, v)
        return values

    def __call__(self, lib: Library, *args: object) -> Any:
        sig = self.signature(lib)
        values = self.values(sig, args)
        with Call(lib, self.api) as call:
            converted = iter([call.tensor(p.name, v) if p.kind == "tensor" else call.argument(p, v)
                              for p, v in zip((p for p in sig.params if not p.output), values)])
            checks = self.checks
            refused = None if checks is None else shape_check_error(lambda: checks(*values))
            made = iter([call.output(o.shape, o.dtype, zero=o.zero, refused=refused) for o in self.outputs(*values)])
            call.run(self.op, *[next(made) if p.output else next(converted) for p in sig.params])
            results = call.results()
        return results[0] if len(results) == 1 else tuple(results)
