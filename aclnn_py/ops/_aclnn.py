"""The two-phase aclnn call shared by every operator on ``npu`` and ``sim``.

An op file marshals its arguments through a ``Call`` (NumPy arrays are copied to the device,
``Tensor`` arguments are used in place, int/bool lists become aclIntArray/aclBoolArray,
``None`` becomes NULL so that the library itself reports 161001), then ``Call.run`` does
``aclnnXxxGetWorkspaceSize`` -> workspace (only when > 0) -> ``aclnnXxx`` on this thread's
stream. Parameter checking is the library's: the same C code path as on the NPU.

Results: if any tensor argument was a device ``Tensor``, the outputs are returned as
``Tensor``s without waiting (the chain stays on the device; workspace and temporaries are
released when the stream is next synchronised). Otherwise the stream is synchronised and the
outputs come back as NumPy arrays. Every handle is released exactly once, on errors too.
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence

import numpy as np

from ..tensor import BoolArray, DeviceBuffer, IntArray, Tensor, Transaction


class Call:
    def __init__(self, lib, api: str) -> None:
        self.lib = lib
        self.api = api
        self.ffi = lib.ffi
        self.device_io = False
        self.tx = Transaction()
        self._temps: list[Tensor] = []          # inputs copied from NumPy: read by queued work
        self._arrays: list = []                 # int/bool arrays: CANN copies them in phase 1

    def __enter__(self) -> "Call":
        self.tx.__enter__()
        return self

    def __exit__(self, *exc) -> None:
        self.tx.__exit__(*exc)

    # -- arguments ----------------------------------------------------------------------

    def tensor(self, name: str, value) -> object:
        """The aclTensor* for a tensor argument (NULL for None)."""
        if value is None:
            return self.ffi.NULL
        if isinstance(value, Tensor):
            if value.lib is not self.lib:
                raise TypeError(f"{self.api}: {name} is a Tensor of backend {value.lib.backend!r}, "
                                f"but this call runs on {self.lib.backend!r}")
            if value.buffer is None:
                raise TypeError(f"{self.api}: {name} is a closed Tensor")
            self.device_io = True
            return value.handle
        if not isinstance(value, np.ndarray):
            raise TypeError(f"{self.api}: {name} must be a numpy.ndarray or aclnn_py.Tensor, "
                            f"got {type(value).__name__}")
        t = Tensor.from_numpy(value, backend=self.lib.backend)
        self.tx.add(t.close)
        self._temps.append(t)
        return t.handle

    def int_array(self, name: str, values) -> object:
        """The aclIntArray* for a sequence of ints (NULL for None)."""
        if values is None:
            return self.ffi.NULL
        arr = IntArray(_ints(self.api, name, values), backend=self.lib.backend)
        self.tx.add(arr.close)
        self._arrays.append(arr)
        return arr.handle

    def bool_array(self, name: str, values) -> object:
        if values is None:
            return self.ffi.NULL
        if isinstance(values, (str, bytes)) or not isinstance(values, (Sequence, np.ndarray)):
            raise TypeError(f"{self.api}: {name} must be a sequence of bools, got {type(values).__name__}")
        flags = []
        for i, v in enumerate(values):
            if not isinstance(v, (bool, np.bool_)):
                raise TypeError(f"{self.api}: {name}[{i}] must be a bool, got {type(v).__name__}")
            flags.append(bool(v))
        arr = BoolArray(flags, backend=self.lib.backend)
        self.tx.add(arr.close)
        self._arrays.append(arr)
        return arr.handle

    def output(self, shape: Sequence[int] | None, dtype, *, zero: bool = False) -> Tensor | None:
        """A new device tensor for an output (None -> NULL output); ``zero`` fills it with 0
        for operators that leave parts of their output unwritten."""
        if shape is None:
            return None
        t = Tensor.empty(safe_shape(shape), dtype, backend=self.lib.backend)
        self.tx.add(t.close)
        if zero and t.buffer.nbytes:
            self.lib.call("aclrtMemset", t.buffer.ptr, t.buffer.nbytes, 0, t.buffer.nbytes)
        return t

    def handle(self, t: Tensor | None):
        return self.ffi.NULL if t is None else t.handle

    # -- the two phases -------------------------------------------------------------------

    def run(self, op: str, *args) -> None:
        """``{op}GetWorkspaceSize(*args, &size, &executor)`` then ``{op}(ws, size, executor, stream)``."""
        lib, ffi = self.lib, self.ffi
        stream = lib.stream()
        size_p = ffi.new("uint64_t *")
        executor_p = ffi.new("aclOpExecutor **")
        lib.call(f"{op}GetWorkspaceSize", *args, size_p, executor_p)
        size = int(size_p[0])
        workspace = None
        try:
            if size > 0:
                workspace = DeviceBuffer(lib, size)
            lib.call(op, workspace.ptr if workspace else ffi.NULL, size, executor_p[0], stream)
        except BaseException:
            # Phase 2 did not take the executor: destroy it here, or nothing ever will.
            lib.fn("aclDestroyAclOpExecutor")(executor_p[0])
            if workspace is not None:
                workspace.free()
            raise
        # The workspace and the device copies of NumPy inputs live until the kernel has run.
        if workspace is not None:
            lib.defer(workspace.free)
        for t in self._temps:
            lib.defer(t.close)
        for arr in self._arrays:
            arr.close()

    def results(self, outputs: Sequence[Tensor | None]) -> list:
        """The outputs: device ``Tensor``s when any input was one (no waiting), else NumPy
        arrays after the stream has been synchronised (the device outputs are then freed)."""
        self.tx.keep()  # from here on every handle has its owner
        if self.device_io:
            return list(outputs)
        try:
            self.lib.synchronize()
            return [None if t is None else t.numpy() for t in outputs]
        finally:
            for t in outputs:
                if t is not None:
                    t.close()


# Outputs whose shape the arguments make impossible (negative, or too large to allocate) get a
# stand-in of the same rank: the library then reports the argument at fault, as it would on
# the NPU for a caller who passed such an output.
_MAX_OUTPUT_ELEMENTS = 2**36


def safe_shape(shape: Sequence[int]) -> tuple[int, ...]:
    dims = tuple(int(d) for d in shape)
    total = 1
    for d in dims:
        total *= max(d, 1)
    if any(d < 0 for d in dims) or total > _MAX_OUTPUT_ELEMENTS:
        return tuple(1 for _ in dims)
    return dims


def dtype_of(value, default=np.float32) -> np.dtype:
    """The dtype of a tensor argument (ndarray or Tensor), or ``default`` for None."""
    return np.dtype(getattr(value, "dtype", default))


def shape_of(value) -> tuple[int, ...]:
    return tuple(getattr(value, "shape", ()))


def _ints(api: str, name: str, values) -> list[int]:
    if isinstance(values, np.ndarray):
        values = values.tolist()
    if isinstance(values, (str, bytes)) or not isinstance(values, Sequence):
        raise TypeError(f"{api}: {name} must be a sequence of ints, got {type(values).__name__}")
    out = []
    for i, v in enumerate(values):
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Integral):
            raise TypeError(f"{api}: {name}[{i}] must be an int, got {type(v).__name__}")
        v = int(v)
        if not -(2**63) <= v < 2**63:
            from .._errors import param_invalid

            raise param_invalid(api, f"{name}[{i}] = {v} does not fit in int64")
        out.append(v)
    return out
