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

import difflib
import functools
import os
import threading
import weakref
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from ._runtime import backend as _backend
from . import _fast
from ._constants import ACL_MEMCPY_HOST_TO_DEVICE
from ._errors import ACL_ERROR_API_NOT_SUPPORT, AclnnError, param_invalid
from ._runtime.resources import Transaction, quietly
from ._runtime.library import not_capturable
from ._runtime.tensor import DeviceBuffer, Tensor
from ._convert import executor as _aclnn
from ._convert.executor import _ACL_DTYPE, Call, _contiguous_description, device_description, float_item, scalar_item
from ._runtime.device import stream_address
from ._convert.values import bool_array_arg, int_array_arg
from .ops._dispatch import on_stream, outputs_given
from ._convert.marshal import (Marshal, TensorSlot, describe, download, fixed_value, flat_slots, layout_of,
                               results_of)
from ._convert.params import READ_AND_WRITTEN, Param, Signature, read_signature
from ._convert.values import call_tensor, output_tensor, plain_value, python_scalar, sequence_arg

if TYPE_CHECKING:

    from ._runtime.library import Library

_SUFFIX = "GetWorkspaceSize"


_signatures: dict[tuple[int, str], Signature] = {}
_signatures_lock = threading.Lock()


def _operator_name(name: object, where: str) -> str:
    """``name`` checked as an operator's C name (``"aclnnAdd"``, or its phase 1's name)."""
    if not isinstance(name, str):
        raise TypeError(f"{where}: the operator must be its C name as a str (e.g. 'aclnnAdd'), "
                        f"got {type(name).__name__}")
    if not name.startswith("aclnn") or name in ("aclnn", "aclnn" + _SUFFIX):
        raise ValueError(f"{where}: {name!r} is not an aclnn operator's C name (e.g. 'aclnnAdd')")
    return name[: -len(_SUFFIX)] if name.endswith(_SUFFIX) else name


def _unavailable(op: str, backend: str) -> AclnnError:
    """The error for an operator the numpy or sim backend does not have: it says so, names the
    near misses among those it has, and where to see them all."""
    known = sorted(_numpy_kernel_names())
    # Compared without the prefix all names share, and without case.
    by_fold = {k.removeprefix("aclnn").lower(): k for k in known}
    near = [by_fold[m] for m in difflib.get_close_matches(op.removeprefix("aclnn").lower(), by_fold, n=3, cutoff=0.75)]
    hint = f"; did you mean {' or '.join(near)}?" if near else "."
    elsewhere = (" On an Atlas host, backend 'npu' runs every operator of the installed CANN."
                 if backend == "numpy" else "")
    return AclnnError(ACL_ERROR_API_NOT_SUPPORT, op,
                      f"{op} is not available on the {backend} backend{hint} It has {len(known)} operators: "
                      f"{', '.join(known)}; `python -m aclnn_py ops` lists each backend's.{elsewhere}")


def _signature(lib: Library | None, name: str, where: str = "call") -> Signature:
    """The parameters of ``{name}GetWorkspaceSize`` as the toolkit's header declares them
    (``lib`` None: the numpy backend, which knows the binding's own headers)."""
    op = _operator_name(name, where)
    key = (id(lib), op)
    found = _signatures.get(key)
    if found is not None:
        return found
    from ._ffi import ffi as binding_ffi
    from ._ffi.declarations import include_dir

    api = op + _SUFFIX
    if lib is not None:
        try:
            lib.fn(api)  # declares it from its header; AclnnError naming it when none has it
            lib.fn(op)
        except AclnnError as exc:
            if lib.backend != "sim" or exc.status != ACL_ERROR_API_NOT_SUPPORT or op in _numpy_kernel_names():
                raise
            raise _unavailable(op, "sim") from None
        folders, ffi = lib.toolkit.header_folders, lib.ffi
    else:
        if op not in _numpy_kernel_names():
            raise _unavailable(op, "numpy")
        folders, ffi = (Path(include_dir()) / "aclnnop",), binding_ffi()
    found = read_signature(api, folders, ffi)
    with _signatures_lock:
        _signatures[key] = found
    return found


def _bind(sig: Signature, args: Sequence[object], kwargs: dict[str, object]) -> list[object]:
    if not kwargs and len(args) == len(sig.params):
        return list(args)  # the common case, without inspect's generic binding
    unknown = [k for k in kwargs if k not in sig.python.parameters]
    if unknown:
        # (inspect reports a missing parameter first: the unknown name is the mistake to show)
        names = {p.lower(): p for p in sig.python.parameters}
        near = difflib.get_close_matches(unknown[0].lower(), names, n=1, cutoff=0.6)
        hint = f"; did you mean {names[near[0]]}?" if near else ""
        raise TypeError(f"{sig.op}(): got an unexpected keyword argument {unknown[0]!r}{hint} (its parameters, "
                        f"by their C names: {', '.join(sig.python.parameters)})")
    try:
        bound = sig.python.bind(*args, **kwargs)
    except TypeError as exc:
        raise TypeError(f"{sig.op}(): {exc}") from None
    return [bound.arguments[p.name] for p in sig.params]


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


def _numpy_call(sig: Signature, values: list[object]) -> Any:
    from . import ops
    from .ops._registry import by_name

    kernel = getattr(ops, _numpy_kernel_names()[sig.op])
    # An in-place operator's function takes the tensors it writes as arguments (and writes them).
    inplace = by_name(sig.op).inplace
    inputs: list[object]
    outputs: list[tuple[Param, np.ndarray | Tensor | None]]
    inputs, outputs = [], []
    updated = READ_AND_WRITTEN.get(sig.api, frozenset())
    for p, v in zip(sig.params, values):
        if p.output and p.name in updated:
            inputs.append(output_tensor(sig.api, p.name, v))  # (the function updates it in place)
            outputs.append((p, None))
        elif p.output:
            outputs.append((p, output_tensor(sig.api, p.name, v)))
            if p.name == inplace:
                if isinstance(outputs[-1][1], Tensor):
                    raise TypeError(f"{sig.api}: {p.name} is an aclnn_py.Tensor, which needs backend 'npu' or 'sim'")
                inputs.append(outputs[-1][1])
        elif p.kind == "tensor" and v is not None:
            inputs.append(call_tensor(sig.api, p.name, v))
        else:
            inputs.append(v)
    given = outputs_given.set(True)  # (the caller passed the outputs the messages name)
    try:
        results = kernel(*inputs, backend="numpy")
    finally:
        outputs_given.reset(given)
    results = results if isinstance(results, tuple) else (results,)
    for (p, out), result in zip(outputs, results):
        if out is None or result is None or result is out:
            continue
        if isinstance(out, Tensor):
            raise TypeError(f"{sig.api}: {p.name} is an aclnn_py.Tensor, which needs backend 'npu' or 'sim'")
        if out.shape != result.shape or out.dtype != result.dtype:
            raise param_invalid(sig.api, f"{p.name} must have shape {list(result.shape)} and dtype {result.dtype}, "
                                         f"got {list(out.shape)} and {out.dtype}")
        out[...] = result
    return results_of(sig, values)


# -- public ------------------------------------------------------------------------------------

def _library(backend: str | None) -> Library | None:
    name = _backend.resolve(backend)
    if name == "numpy":
        return None
    from ._runtime import loader

    lib = loader.library(name)
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


def _call(lib: Library, sig: Signature, values: list[object]) -> Any:
    planner = _PLANS
    if planner is not None:
        result = planner.run(lib, sig.op, values)
        if result is not _fast.MISS:
            return result
    with Call(lib, sig.api, fast=False) as c:
        marshal = Marshal(c, sig, values, own_descriptors=False)
        c.run(sig.op, *marshal.args)
        downloads = [s for s in flat_slots(marshal.slots) if s.value is not None]
        if downloads:
            download(c, downloads)
        elif not c.device_io:
            c.lib.synchronize()  # the call's device memory is freed when it ends
    if planner is not None and _fast.api_for(lib) is not None:
        # Succeeded: the next call of this signature replays it (None: it takes this path).
        planner.add(lib, sig.op, values, _plan_spec(lib, sig, values))
    return results_of(sig, values)


def _plan_spec(lib: Library, sig: Signature, values: list[object]) -> _aclnn.PlanSpec | None:
    """The plan of a ``call`` that succeeded on the Python path with ``values``, or None when
    its arguments are not all of the kinds the helper describes: ndarray tensors (C-contiguous,
    writable outputs), device Tensors, input tensor lists of such ndarrays or of device Tensors, int/bool lists, integer and bool values, float and double values, Python
    numbers for scalars, None for a tensor."""
    fast, entry = _fast.api_for(lib), _fast.entry()
    phases = None if fast is None or len(values) > _fast.MAX_ARGS else fast.phases(lib, sig.op)
    if phases is None or entry is None:
        return None
    desc: list[int] = []
    pointers: list[tuple[int, int | None]] = []
    results: list[tuple[int, int]] = []
    device = host_list = False
    overwritten = _aclnn.overwritten_by(sig.api)
    for i, (p, v) in enumerate(zip(sig.params, values)):
        if p.kind == "tensor":
            if p.output:
                results.append((entry.ARG, i))
            if v is None:
                desc.append(_fast.POINTER)
                pointers.append((entry.NULL, None))
                continue
            if type(v) is Tensor and v.fast_key is not None:
                device = True  # its own descriptor; the call's work is left queued
                desc.append(_fast.POINTER)
                pointers.append((entry.TENSOR, i))
                continue
            if (type(v) is not np.ndarray or not v.flags.c_contiguous or v.ndim > _fast.MAX_DIMS
                    or v.dtype not in _ACL_DTYPE or (p.output and not v.flags.writeable)):
                return None
            # (an output the operator overwrites whole is not copied in: ``executor.declare_unread``)
            kind = (_fast.HOST_OUT if p.name == overwritten else _fast.HOST_INOUT) if p.output else _fast.HOST_IN
            item, nbytes = _contiguous_description(kind, v.shape, v.dtype)
            desc += item
            pointers.append(((entry.ARG_WRITTEN if p.output else entry.ARG), i) if nbytes else (entry.NULL, None))
        elif p.kind == "tensor_list" and not p.output and isinstance(v, (list, tuple)) and type(v) in (list, tuple) \
                and v:
            # the entry numbers the elements of every list of ndarrays among the arguments in
            # order (its key's items), and those of every list of Tensors (its device_items)
            items = v
            element = type(items[0])
            base = sum(len(a) for a in cast("list[list[object]]", values[:i])
                       if type(a) in (list, tuple) and a and type(a[0]) is element)
            if base + len(items) > _fast.MAX_LIST:
                return None
            desc += [_fast.TENSOR_LIST, len(items)]
            for j, e in enumerate(items):
                if element is Tensor:
                    if type(e) is not Tensor or e.fast_key is None or e.buffer is None or e.lib is not lib \
                            or e.ndim > _fast.MAX_DIMS:
                        return None
                    device = True  # a descriptor of each over its memory; the work is left queued
                    desc += device_description(e, e.buffer)
                    pointers.append((entry.DEVICE_ITEM, base + j))
                    continue
                host_list = True
                if (type(e) is not np.ndarray or not e.flags.c_contiguous or e.ndim > _fast.MAX_DIMS
                        or e.dtype not in _ACL_DTYPE):
                    return None
                item, nbytes = _contiguous_description(_fast.HOST_IN, e.shape, e.dtype)
                desc += item
                pointers.append((entry.ITEM, base + j) if nbytes else (entry.NULL, None))
        elif p.kind in ("int_array", "bool_array") and isinstance(v, (list, tuple)) and len(v) <= _fast.MAX_ARRAY:
            if p.kind == "int_array":
                ints = int_array_arg(sig.api, p.name, v) or ()
                desc += [_fast.INT_ARRAY, len(ints), *ints]
            else:
                flags = bool_array_arg(sig.api, p.name, v) or ()
                desc += [_fast.BOOL_ARRAY, len(flags), *map(int, flags)]
        elif p.kind in ("int", "bool") and type(v) in (int, bool):
            value = int(plain_value(sig.api, p, v))  # type: ignore[arg-type]
            if not -(2**63) <= value < 2**63:
                return None
            desc += [_fast.VALUE, value]
        elif p.kind == "float" and type(v) in (int, float) and phases[2][i] is not None:
            desc += float_item(lib.ffi, phases[2][i], plain_value(sig.api, p, v))  # type: ignore[arg-type]
        elif p.kind == "scalar" and type(v) in (int, float, bool):
            scalar = scalar_item(python_scalar(sig.api, p.name, v))
            if scalar is None:
                return None
            desc += scalar
        else:
            return None
    mode = entry.NONE if not results else entry.SINGLE if len(results) == 1 else entry.TUPLE
    if device:
        if entry.ARG_WRITTEN in (kind for kind, _ in pointers) or host_list:
            # an ndarray output beside device Tensors: copied back after a wait; a list of
            # ndarrays: its copies are not among the memory an asynchronous call hands back
            return None
        return (sig.op, _fast.address(phases[0]), _fast.address(phases[1]), desc, pointers, [], results, mode, 1)
    return (sig.op, _fast.address(phases[0]), _fast.address(phases[1]), desc, pointers, [], results, mode)


def prepare(name: str, *args: object, backend: str | None = None, **kwargs: object) -> "Prepared":
    """Phase 1 of ``name`` once, on a repeatable executor; the returned ``Prepared`` runs
    phase 2 when called with arguments of the same shapes and dtypes (``call``'s signature).
    Use it as a context manager (or ``close()`` it): that destroys the executor."""
    lib = _library(backend)
    sig = _signature(lib, name, "prepare")
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

    def __init__(self, sig: Signature, lib: Library | None, values: list[object]) -> None:
        self.sig = sig
        self.lib = lib
        self._thread = threading.get_ident()
        self._guard = _Guard()
        self._closed = False
        self._runner: Any = None  # the entry's one-crossing run (_one_crossing)
        if lib is None:
            self._finalizer = None
            self._phase1 = _phase1_slots(sig, values)
            return
        c = Call(lib, sig.api, fast=False)
        try:
            self._marshal = Marshal(c, sig, values, own_descriptors=True)
            self._executor, self._workspace, self._size = c.repeatable(sig.op, *self._marshal.args)
        except BaseException as exc:
            c.end(exc)
            raise
        self._call = c
        self._kernel = lib.fn(sig.op)
        self._phase1 = self._marshal.slots
        self._slots = flat_slots(self._marshal.slots)
        self._downloads = [s for s in self._slots if s.value is not None]
        self._queued = False  # whether the last run may still be on the stream
        # An event recorded behind the last run that left work queued: waited for before the
        # next run refills the memory, and before the release. An event, not that run's stream:
        # a caller's stream may be destroyed once synchronised, and a dead one cannot be waited for.
        self._done: list[Any] = [None]
        self._runner = self._one_crossing(lib, values)
        self._finalizer = weakref.finalize(self, Prepared._release, c, self._executor, self._done, self._guard,
                                           self._runner)

    def _one_crossing(self, lib: Library, values: list[object]) -> Any:
        """The entry's ``Runner`` of this executor (``entry.c``: a run with phase 1's key in one
        crossing), or None: without the entry, or when an argument is not of the kinds it runs
        (a Tensor, a tensor list, a non-contiguous array) or no NumPy output is copied back."""
        entry = _fast.entry()
        if entry is None or _fast.api_for(lib) is None or not self._downloads or len(values) > _fast.MAX_ARGS:
            return None
        slots = []
        for i, (p, v, slot) in enumerate(zip(self.sig.params, values, self._phase1)):
            if p.kind == "tensor_list" or (p.kind == "tensor" and v is not None and
                                           (type(v) is not np.ndarray or not v.flags.c_contiguous)):
                return None
            if isinstance(slot, TensorSlot) and slot.layout is not None:
                slots.append((i, slot, self._address(slot.ptr), slot.host_nbytes, slot.output, slot.value is not None,
                              slot.copied_in))
        functions = [self._kernel, self._executor, self._workspace] + [lib.fn(name) for name in (
            "aclrtSynchronizeEvent", "aclrtMemcpy", "aclrtRecordEvent", "aclrtSynchronizeStream")]
        if not all(isinstance(f, lib.ffi.CData) for f in functions):
            return None  # (a function wrapped in Python, a tracer's or a test's: it must see every call)
        addresses = [self._address(f) for f in functions[:3]] + [self._size] + [
            self._address(f) for f in functions[3:]] + [self._thread]
        results = tuple(i for i, p in enumerate(self.sig.params) if p.output)
        try:
            return entry.Runner(lib, self._guard, self.sig.op, tuple(values), tuple(slots), results, tuple(addresses),
                                Prepared._record_failed)
        except ValueError:  # (arguments the entry has no key for)
            return None

    def _address(self, cdata: Any) -> int:
        assert self.lib is not None
        return int(self.lib.ffi.cast("uintptr_t", cdata))

    @staticmethod
    def _release(c: Call, executor: object, done: list[Any], guard: _Guard, runner: Any) -> None:
        """Wait for a run in progress on another thread and for queued runs, destroy the
        executor, then the call's descriptors and memory: each step runs whatever the others
        do (an interrupted wait included). The entry's ``runner`` runs nothing from then on."""
        lib = c.lib
        if runner is not None:
            runner.close()  # (at once: a run in progress on another thread holds the lock)
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
            self._runner = None

    def __enter__(self) -> "Prepared":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # (``self`` positional-only: an operator's parameter may be named ``self``, as CANN's often are.)
    def __call__(self, /, *args: object, stream: object = None, **kwargs: object) -> Any:
        runner = self._runner
        if runner is not None and stream is None and not kwargs:
            # Phase 1's key, on its thread's own stream: checks, copies, phase 2, the wait and
            # the copies back in one crossing (else MISS: the path below checks and runs).
            result = runner(self, args)
            if result is not _fast.MISS:
                return result
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
            if self.lib.capturing and self.lib.capture_state() is not None:
                raise not_capturable("is a prepared run (its data copied in and its results out each run)")
            plan = self._check(values)
            if address is not None:
                return on_stream(self.lib, address, Prepared._run, self, values, plan)
            return self._run(self.lib, self, values, plan)

    @staticmethod
    def _run(lib: Library, self: "Prepared", values: list[object],
             plan: list[tuple[TensorSlot, np.ndarray | DeviceBuffer | None]]) -> Any:
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
                if slot.copied_in:  # (not an argument the operator overwrites whole)
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
            download(c, self._downloads)
        else:
            lib.queued_call(sig.op)  # (a later failure of the run names it)
        return results_of(sig, values)

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
            Prepared._record_failed(lib, stream, status)
        self._queued = True
        if mark:
            lib.mark_queued()

    @staticmethod
    def _record_failed(lib: Library, stream: Any, status: int) -> None:
        """Raise the failure ``status`` of ``aclrtRecordEvent`` behind a run just queued on
        ``stream``: nothing can wait for it later, so it is waited for now (the kernel was
        queued on a live stream)."""
        message = lib.recent_error()
        lib.call("aclrtSynchronizeStream", stream)
        raise AclnnError(status, "aclrtRecordEvent", message)

    def _check(self, values: list[object]) -> list[tuple[TensorSlot, np.ndarray | DeviceBuffer | None]]:
        """Every argument against phase 1's, before anything is done: ``(slot, new value)``,
        a Tensor's value its device memory (held for the run, though another thread close it)."""
        api, plan = self.sig.api, []
        for p, slot, v in zip(self.sig.params, self._phase1, values):
            if isinstance(slot, TensorSlot):
                plan.append((slot, self._same_tensor(p, slot, v)))
            elif isinstance(slot, list):
                items = sequence_arg(api, p.name, v, "aclTensorList")
                if len(items) != len(slot):
                    raise ValueError(f"{self.sig.op}: {p.name} had {len(slot)} tensors in phase 1, got {len(items)}")
                plan += [(s, self._same_tensor(p, s, item)) for s, item in zip(slot, items)]
            elif fixed_value(api, p, v) != slot:
                raise ValueError(f"{self.sig.op}: {p.name} differs from the value phase 1 was given "
                                 f"({slot!r}); prepare again for another one")
        return plan

    def _same_tensor(self, p: Param, slot: TensorSlot, v: object) -> np.ndarray | DeviceBuffer | None:
        api = self.sig.api
        value = output_tensor(api, slot.name, v) if slot.output else (None if v is None else call_tensor(api, slot.name, v))
        if slot.layout is None or value is None:
            if (slot.layout is None) != (value is None):
                raise ValueError(f"{self.sig.op}: {slot.name} was {'None' if slot.layout is None else 'a tensor'} "
                                 "in phase 1 and must stay so")
            return None
        buffer = value.buffer if isinstance(value, Tensor) else None  # (read once: close() may run elsewhere)
        if isinstance(value, Tensor) and (value.lib is not self.lib or buffer is None):
            raise TypeError(f"{api}: {slot.name} is a closed Tensor or one of another backend")
        layout = layout_of(value)
        if layout != slot.layout:
            what = ("shape, dtype, strides and offset" if layout[4] == slot.layout[4] == "Tensor" else
                    "shape and dtype" if layout[4] == slot.layout[4] else "kind (ndarray or Tensor)")
            raise ValueError(f"{self.sig.op}: {slot.name} must have phase 1's {what}: "
                             f"{describe(slot.layout)}, got {describe(layout)}")
        return buffer if isinstance(value, Tensor) else value

    def _repoint(self, slot: TensorSlot, ptr: object) -> None:
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


def _phase1_slots(sig: Signature, values: list[object]) -> list[object]:
    """On the numpy backend, what phase 1 fixes of each argument (``Marshal.slots``' kinds:
    a ``TensorSlot`` per tensor, a list of them per tensor list, else the value as
    ``fixed_value`` compares it), so a prepared run is held to it as on a device."""
    api, slots = sig.api, list[object]()
    for p, v in zip(sig.params, values):
        if p.kind == "tensor":
            slots.append(_phase1_tensor(api, p.name, p.output, v))
        elif p.kind == "tensor_list":
            items = sequence_arg(api, p.name, v, "aclTensorList")
            slots.append([_phase1_tensor(api, f"{p.name}[{i}]", p.output, item) for i, item in enumerate(items)])
        else:
            slots.append(fixed_value(api, p, v))
    return slots


def _phase1_tensor(api: str, name: str, output: bool, v: object) -> TensorSlot:
    value = output_tensor(api, name, v) if output else (None if v is None else call_tensor(api, name, v))
    return TensorSlot(name, output, 0, None if value is None else layout_of(value), None, None)
