"""What every operator file shares: argument coercion, checks that raise CANN's status codes,
and dispatch to a backend.

Each ``ops/<op>.py`` validates its arguments with these helpers *before* computing anything,
in the order CANN checks them, so that the numpy backend fails exactly where the NPU would.
Python-level misuse (a list where a tensor belongs, a float where an int belongs, a dtype with
no aclDataType) is a ``TypeError``; a value CANN would reject is ``AclnnError`` 161002; a
missing required argument (``None``) is ``AclnnError`` 161001. As on npu/sim, where the binding
converts every argument before the library sees any, Python types come before NULLs. The
messages are the simulator's, word for word (``tests/ops/test_invalid_cases.py`` holds both
backends to that).

On the numpy backend an operator is a ``NumpyOp``: its checks run once per call signature
(shapes, dtypes, strides, parameter values) and leave a ``Plan``, so that a repeated valid call
goes straight to its kernel; a tiny call's cost is then the kernel's few NumPy calls.
"""

from __future__ import annotations

import functools
import math
import numbers
import operator
import os
import sys
import threading
from concurrent.futures import ThreadPoolExecutor, wait
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple, SupportsInt, TypeVar

import numpy as np

from .. import _backend, _ffi
from .._device import stream_address
from ..tools import _progress
from .._dtypes import _NUMPY_TO_ACL, bfloat16, dtype_name, format_for_rank
from .._errors import ACL_ERROR_RT_MEMORY_ALLOCATION, AclnnError, param_invalid, param_nullptr
from ._placement import forget_workers, pinned, register_worker
from ..tensor import DeviceView, Tensor, device_view

INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1

FLOAT32 = np.dtype(np.float32)
FLOAT16 = np.dtype(np.float16)


def tensor_input(api: str, name: str, value: object) -> np.ndarray | Tensor | DeviceView | None:
    """The one coercion of a tensor argument, shared by every backend.

    ``None`` (NULL) and an ``aclnn_py.Tensor`` are returned as they are; an object with
    torch_npu's interface (device type ``"npu"``) becomes a ``DeviceView`` of its device memory
    (no copy); any CPU array-like becomes an ndarray (no copy where its memory allows): a NumPy
    array, an object with ``__dlpack__`` (torch CPU tensors), ``__array__`` or the buffer
    protocol (``memoryview``, ``array.array``). Python lists, tuples, strings and scalars are
    not tensors: a TypeError, as in torch. So is an ndarray dtype CANN has no name for."""
    if type(value) is np.ndarray:  # the common case, first
        array = value
    elif value is None or isinstance(value, (Tensor, DeviceView)):
        return value
    elif isinstance(value, np.ndarray):
        array = value
    else:
        view = device_view(api, name, value)
        if view is not None:
            return view
        array = _host_array(api, name, value)
    if array.dtype not in _NUMPY_TO_ACL:
        raise unnamed_dtype(api, name, array.dtype)
    return array


_NOT_TENSORS = (str, bytes, list, tuple, dict, set, numbers.Number, np.generic)


def _host_array(api: str, name: str, value: object) -> np.ndarray:
    """A CPU array-like as an ndarray: ``__dlpack__`` first (zero-copy by design), then
    ``__array__``, then the buffer protocol (a torch bfloat16 tensor through an int16 view)."""
    if isinstance(value, _NOT_TENSORS):
        raise not_a_tensor(api, name, value)
    readers: list[Callable[[], object]] = []
    torch = sys.modules.get("torch")
    if torch is not None and getattr(value, "dtype", None) is getattr(torch, "bfloat16", None):
        # NumPy knows no bfloat16 (neither its DLPack import nor torch's __array__ has one):
        # the same memory as int16, viewed as ml_dtypes' bfloat16. No copy.
        readers.append(lambda: np.from_dlpack(value.view(torch.int16)).view(bfloat16))  # type: ignore[attr-defined]
    if hasattr(value, "__dlpack__"):
        readers.append(lambda: np.from_dlpack(value))
    if hasattr(value, "__array__"):
        readers.append(lambda: np.asarray(value))
    if not readers:
        try:
            memoryview(value)  # type: ignore[arg-type]
        except TypeError:
            raise not_a_tensor(api, name, value) from None
        readers.append(lambda: np.asarray(memoryview(value)))  # type: ignore[arg-type]
    failures = []
    for read in readers:
        try:
            array = read()
        except Exception as exc:  # each protocol may refuse (device memory, a dtype NumPy lacks)
            failures.append(f"{type(exc).__name__}: {exc}")
            continue
        if isinstance(array, np.ndarray):
            return array
        failures.append(f"got {type(array).__name__}")
    raise TypeError(f"{api}: {name} ({type(value).__name__}) cannot be read as a CPU array: "
                    + "; ".join(failures))


def tensor_arg(api: str, name: str, value: object) -> np.ndarray | None:
    """A tensor argument of the numpy backend as an ndarray (not copied where avoidable), or
    None (NULL: see ``check_not_null``). Device tensors are refused: this backend has no device."""
    array = tensor_input(api, name, value)
    if array is None or isinstance(array, np.ndarray):
        return array
    if isinstance(array, DeviceView):
        raise TypeError(f"{api}: {name} is an npu device tensor; the numpy backend takes CPU array-likes "
                        f"(use backend 'npu')")
    raise not_a_tensor(api, name, value)


def not_a_tensor(api: str, name: str, value: object) -> TypeError:
    """The error for a tensor argument of another Python type (the same words on every backend)."""
    return TypeError(f"{api}: {name} must be an array-like (a NumPy array, or an object with __dlpack__, "
                     f"__array__ or the buffer protocol; on npu and sim also an aclnn_py.Tensor), "
                     f"got {type(value).__name__}")


def repeated(value: object, count: int) -> object:
    """torch's one-int form of a list of equal values: an int becomes ``[value] * count``;
    anything else is returned as it is (for ``int_array_arg`` to check). bool is not an int here."""
    if type(value) is list:  # the common case, first
        return value
    if isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)):
        return [value] * count
    return value


def spatial_dims(*tensors: object, default: int = 2) -> int:
    """The number of spatial dimensions (rank - 2) of the first tensor argument with a rank of
    at least 3, for expanding one int to a per-dimension list; ``default`` when there is none."""
    for t in tensors:
        ndim = getattr(t, "ndim", None)
        if type(ndim) is int and ndim >= 3:
            return ndim - 2
    return default


def unnamed_dtype(api: str, name: str, dtype: np.dtype) -> TypeError:
    """The error for a tensor whose NumPy dtype has no aclDataType (float128, object, str, ...):
    no operator can be given such a tensor, so it is a Python type error on every backend (a
    dtype CANN names but the operator does not support is 161002, from the operator's checks)."""
    return TypeError(f"{api}: {name} dtype {dtype} has no aclDataType counterpart")


def int_arg(api: str, name: str, value: object) -> int:
    """An int64 scalar argument (Python or NumPy integer; bool is rejected)."""
    if type(value) is int and INT64_MIN <= value <= INT64_MAX:
        return value  # the common case, without the ABC checks below
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{api}: {name} must be an int, got {type(value).__name__}")
    v = operator.index(value)
    if not INT64_MIN <= v <= INT64_MAX:
        raise param_invalid(api, f"{name} = {v} does not fit in int64")
    return v


def bool_arg(api: str, name: str, value: object) -> bool:
    """A bool argument (Python or NumPy bool)."""
    if type(value) is bool:
        return value
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{api}: {name} must be a bool, got {type(value).__name__}")
    return bool(value)


def int_array_arg(api: str, name: str, value: object) -> tuple[int, ...] | None:
    """An aclIntArray argument: a sequence of int64 values, or None (NULL)."""
    if value is None:
        return None
    if isinstance(value, (list, tuple)) and type(value) in (list, tuple) and all(
            type(v) is int and INT64_MIN <= v <= INT64_MAX for v in value):
        return tuple(value)  # the common case, without the generic checks below
    if isinstance(value, np.ndarray):
        if value.ndim != 1 or not (np.issubdtype(value.dtype, np.integer)):
            raise TypeError(f"{api}: {name} must be a 1-D sequence of ints, got array {value.dtype}{list(value.shape)}")
        value = value.tolist()
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
        raise TypeError(f"{api}: {name} must be a sequence of ints, got {type(value).__name__}")
    return tuple(int_arg(api, f"{name}[{i}]", v) for i, v in enumerate(value))


def bool_array_arg(api: str, name: str, value: object) -> tuple[bool, ...] | None:
    """An aclBoolArray argument: a sequence of bools, or None (NULL)."""
    if isinstance(value, (list, tuple)) and type(value) in (list, tuple) and all(type(v) is bool for v in value):
        return tuple(value)  # the common case, without the generic checks below
    if value is None:
        return None
    if isinstance(value, np.ndarray):
        if value.ndim != 1 or value.dtype != np.bool_:
            raise TypeError(f"{api}: {name} must be a 1-D sequence of bools, got array {value.dtype}{list(value.shape)}")
        value = value.tolist()
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
        raise TypeError(f"{api}: {name} must be a sequence of bools, got {type(value).__name__}")
    if all(type(v) is bool for v in value):
        return tuple(value)  # the common case, without formatting a name per element
    return tuple(bool_arg(api, f"{name}[{i}]", v) for i, v in enumerate(value))


def check_not_null(api: str, **arguments: object) -> None:
    """161001 for the first of the required ``arguments`` (C names, in C order) that is None.

    Called after every argument's Python type was checked: on npu/sim the binding converts all
    arguments (a TypeError there) before the library sees a NULL."""
    for name, value in arguments.items():
        if value is None:
            raise param_nullptr(api, f"{name} must not be NULL")


def check(api: str, condition: bool, message: str | Callable[[], str]) -> None:
    """Raise 161002 with ``message`` unless ``condition`` holds.

    Pass the message as ``lambda: f"..."`` where formatting it costs more than the check:
    it is then only built for a failing check (tiny calls are dominated by such costs)."""
    if not condition:
        raise param_invalid(api, message() if callable(message) else message)


def check_dtype(api: str, name: str, array: np.ndarray, allowed: Sequence[np.dtype]) -> None:
    """161002 unless ``array.dtype`` is one of ``allowed`` (named as the aclnn docs name them)."""
    if array.dtype not in allowed:
        names = ", ".join(dtype_name(d) for d in allowed)
        raise param_invalid(api, f"{name} dtype must be one of [{names}], got {dtype_name(array.dtype)}")


def check_length(api: str, name: str, values: Sequence[int], size: int) -> None:
    """161002 unless the int array ``values`` has ``size`` elements (the simulator's
    ``aclsim_ops_check_array_size`` says the same)."""
    if len(values) != size:
        raise param_invalid(api, f"{name} must have {size} elements, got {shape_str(values)}")


def check_min(api: str, name: str, values: Sequence[int], floor: int, *, strict: bool) -> None:
    """161002 unless every element of ``values`` is > ``floor`` (``strict``) or >= it (the
    simulator's ``aclsim_ops_check_array_min`` says the same)."""
    if values and (min(values) <= floor if strict else min(values) < floor):
        raise param_invalid(api, f"{name} values must be {'>' if strict else '>='} {floor}, got {shape_str(values)}")


def check_same_dtype(api: str, name_a: str, a: np.ndarray, name_b: str, b: np.ndarray) -> None:
    if a.dtype != b.dtype:
        raise param_invalid(api, f"{name_a} dtype must equal {name_b} dtype, got {dtype_name(a.dtype)} and "
                                 f"{dtype_name(b.dtype)}")


def check_same_shape(api: str, name_a: str, a: Any, name_b: str, b: Any) -> None:
    """161002 unless ``a`` and ``b`` (arrays, or shapes) have the same shape."""
    shape_a, shape_b = tuple(getattr(a, "shape", a)), tuple(getattr(b, "shape", b))
    if shape_a != shape_b:
        raise param_invalid(api, f"{name_a} shape must equal {name_b} shape, got {shape_str(shape_a)} and "
                                 f"{shape_str(shape_b)}")


@functools.lru_cache(maxsize=None)
def format_name(ndim: int) -> str:
    """The name of the view format the binding gives a tensor of rank ``ndim`` (as the
    simulator's ``aclsim_ops_format_name`` spells it)."""
    return format_for_rank(ndim).name.removeprefix("ACL_FORMAT_")


def shape_str(shape: Sequence[SupportsInt]) -> str:
    return "[" + ", ".join(map(str, map(int, shape))) + "]"


# -- the numpy backend's plans: the checks run once per call signature -------------------------

# A call touching fewer bytes than this cannot run for long: the progress line (shown after
# half a second) is not even looked up for it. 1 MiB is ~0.1 ms at the copy bandwidth of any
# current machine; the kernels make a few passes over their data at most, each of a few NumPy
# calls, so such a call ends thousands of times sooner than a progress line would appear.
QUICK_BYTES = 1 << 20

# Plans kept per operator: a network has tens of distinct layer geometries, not hundreds; a
# plan is small (its matrix, for the small path, is at most _small.MAX_MATRIX_ELEMENTS).
_CACHED_PLANS = 256


class Plan(NamedTuple):
    """A ``NumpyOp``'s answer for one call signature, whose checks all passed: ``run(*args)``
    computes the call's result from its own arguments (or the leading ones, coerced);
    ``quick`` when it touches fewer than ``QUICK_BYTES`` (see ``dispatch``)."""

    run: Callable[..., Any]
    quick: bool


# What a NumpyOp's prepare returns: the plan, and the leading arguments its run reads, coerced.
Prepared = tuple[Plan, tuple[object, ...]]


def plan(run: Callable[..., Any], nbytes: int) -> Plan:
    """The plan running ``run`` for a call that reads and writes ``nbytes`` bytes."""
    return Plan(run, nbytes < QUICK_BYTES)


def signature(args: tuple[Any, ...]) -> tuple[object, ...] | None:
    """The key of one call's arguments in the plan cache, or None (no caching) when an
    argument is of a kind it does not cover.

    An ndarray stands for its shape, dtype and strides (no check reads tensor data); a list or
    tuple of ints for its values, one of bools for their type and values; an int or None for
    itself; a bool for its type and value.
    Types are exact: in Python ``True == 1 == 1.0`` and their hashes agree, so a bool or a float must not
    find the plan of an int (their checks differ: a TypeError), nor an ndarray subclass or a
    NumPy integer the plan of what they resemble. Anything else is not cached."""
    key: list[object] = []
    for value in args:
        kind = type(value)
        if kind is np.ndarray:
            key.append((value.shape, value.dtype, value.strides))
        elif kind is list or kind is tuple:
            items = tuple(value)
            if items and type(items[0]) is bool:  # an aclBoolArray (outputMask)
                for v in items:
                    if type(v) is not bool:
                        return None
                key.append((bool, items))  # (never equal to the ints' tuple: True == 1)
                continue
            for v in items:
                if type(v) is not int:
                    return None
            key.append(items)
        elif kind is int or value is None:
            key.append(value)  # (never equal to another kind's entry: tuples, or a bool's pair)
        elif kind is bool:
            key.append((bool, value))
        else:
            return None
    return tuple(key)


class NumpyOp:
    """The numpy backend of one operator, its checks run once per call signature.

    ``prepare(*args)`` coerces and checks the arguments as the operator's module says, raising
    its errors, and returns the ``Plan`` for them with the leading arguments its ``run`` reads,
    coerced (so that a first call does not convert a torch tensor twice). The checks depend on ``signature(args)``
    alone (shapes, dtypes, parameter values; max_unpool's index range, which depends on data,
    is its plan's ``run``'s to check), so the plan of a signature seen before is used again and
    a repeated valid call goes straight to its kernel. A new signature always runs every check;
    a call that raised leaves nothing in the cache. ``run`` re-checks what depends on the
    environment (the device memory) on every call."""

    def __init__(self, prepare: Callable[..., Prepared]) -> None:
        self.prepare = prepare
        self.__module__ = prepare.__module__
        self._plans: dict[tuple[object, ...], Plan] = {}
        self._lock = threading.Lock()
        _NUMPY_OPS.append(self)

    def plan(self, args: tuple[object, ...]) -> Prepared:
        """The plan of a call with ``args``, and the arguments to run it with (``args`` when the
        plan was cached, else what ``prepare`` coerced)."""
        key = signature(args)
        if key is not None:
            found = self._plans.get(key)
            if found is not None:
                return found, args
        made, coerced = self.prepare(*args)
        if key is not None:
            with self._lock:
                if len(self._plans) >= _CACHED_PLANS:
                    del self._plans[next(iter(self._plans))]  # the oldest
                self._plans[key] = made
        return made, coerced

    def __call__(self, *args: object) -> Any:
        chosen, args = self.plan(args)
        return chosen.run(*args)


_NUMPY_OPS: list[NumpyOp] = []


def forget_plans() -> None:
    """Empty every operator's plan cache (for a test that changes how plans are made)."""
    for op in _NUMPY_OPS:
        with op._lock:
            op._plans.clear()


def host_array(api: str, name: str, value: object) -> np.ndarray:
    """A tensor argument of a plan's call (checked already: an ndarray-like, not None) as an
    ndarray; the common case, an ndarray, as it is."""
    if type(value) is np.ndarray:
        return value
    array = tensor_arg(api, name, value)
    assert array is not None  # (the checks refused None)
    return array


def dispatch(backend: str | None, numpy_impl: Callable[..., Any], aclnn_impl: Callable[..., Any], *args: Any,
             stream: object = None) -> Any:
    """Run one op call on the backend it resolves to.

    ``numpy_impl(*args)`` runs on the numpy backend (with a progress line on stderr for a long
    call where ``ACLNN_PY_PROGRESS`` asks for one: ``tools/_progress.setting``; a ``NumpyOp``'s
    quick plans skip that, see ``Plan.quick``);
    ``aclnn_impl(library, *args)`` runs the two-phase aclnn call through the cffi layer on
    ``npu`` / ``sim``, queued on ``stream`` (a caller's stream: see ``on_stream``) if given.
    """
    name = _backend.resolve(backend)
    if stream is not None:
        address = stream_address(stream)  # checked on every backend: code runs on all of them
        if name != "numpy":
            return on_stream(_ffi.library(name), address, aclnn_impl, *args)
    if name == "numpy":
        try:
            if type(numpy_impl) is NumpyOp:
                chosen, args = numpy_impl.plan(args)
                if chosen.quick:
                    return chosen.run(*args)
                run: Callable[..., Any] = chosen.run
            else:
                run = numpy_impl
            show = _progress.setting()
            if show is False:
                return run(*args)
            with _progress.ticking(f"{numpy_impl.__module__.rpartition('.')[2]} on numpy", show):
                return run(*args)
        except MemoryError as error:
            # Results are checked against the device memory before they are made (_memory.py);
            # the host running out for the kernels' own buffers is the same failure.
            raise AclnnError(ACL_ERROR_RT_MEMORY_ALLOCATION, "aclrtMalloc",
                             f"out of memory for the numpy backend's buffers ({error})") from error
    return aclnn_impl(_ffi.library(name), *args)


def on_stream(lib: Any, address: int, run: Callable[..., Any], *args: Any) -> Any:
    """``run(lib, *args)`` with the calls queued on the caller's stream at ``address``: the
    binding neither destroys it nor waits for it, except that NumPy results wait for it
    (synchronised before they are copied back) and releases of temporaries wait for it."""
    previous = lib.enter_stream(address)
    try:
        return run(lib, *args)
    finally:
        lib.leave_stream(previous)


# -- threads for the memory-bound kernels ------------------------------------------------------

# One per core this process may use (a container's cpuset, taskset), at most 4.
_WORKERS = max(1, min(4, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1))
# Elements a worker thread must have to be worth one: 256 Ki elements take ~0.1-0.2 ms to
# stream through a NumPy loop, against ~20-50 us to hand a part to a worker and wait for it.
MIN_PARALLEL_ELEMENTS = 1 << 18
_pool: ThreadPoolExecutor | None = None
_pool_pid = 0
_pool_lock = threading.Lock()


def _new_locks_in_child() -> None:
    """A forked child's locks (``aclnn_py._ffi._new_locks_in_child``): a parent thread may have
    been storing a plan or making the pool."""
    global _pool_lock
    _pool_lock = threading.Lock()
    for op in _NUMPY_OPS:
        op._lock = threading.Lock()


os.register_at_fork(after_in_child=_new_locks_in_child)


def worker_count() -> int:
    """The number of parts ``in_parallel`` splits a large range into: one per core this process
    may run on, at most 4."""
    return _WORKERS


def _executor() -> ThreadPoolExecutor:
    """The backend's worker threads (one per core, at most 4), made on first use and anew in a
    forked child (a child inherits the pool object but not its threads)."""
    global _pool, _pool_pid
    with _pool_lock:
        if _pool is None or _pool_pid != os.getpid():
            forget_workers()
            _pool = ThreadPoolExecutor(_WORKERS, thread_name_prefix="aclnn_py", initializer=register_worker)
            _pool_pid = os.getpid()
        return _pool


# A thread keeps its scratch arrays (``scratch``) from call to call while they take at most this
# much together.  A fresh NumPy array of a few MiB is fresh pages from the kernel: glibc gives
# freed blocks back (it trims the heap top, and a worker thread's arena) and the next call
# faults them in again, zeroed.  Measured on the winograd engine's copies and tile buffers:
# resnet 3x3 (8,64,56,56) 2000 page faults and 6 ms of system time per call, 31 -> 26 ms wall
# with the buffers kept; dilated d2 (4,256,32,32) 62 -> 55 ms (in-process toggle, loaded machine).  Per thread (the caller and the
# 2-4 workers), so the memory held is bounded.
WORKSPACE_BYTES = 32 << 20


class _Workspace(threading.local):
    def __init__(self) -> None:
        super().__init__()
        self.buffers: dict[str, np.ndarray] = {}


_workspace = _Workspace()


def scratch(name: str, shape: tuple[int, ...]) -> np.ndarray:
    """An uninitialised float32 array of ``shape`` that the calling thread may get again at its
    next ``scratch(name, ...)`` (WORKSPACE_BYTES): its contents live until then, so one name is
    one array in use at a time per thread, and no result is ever a scratch array."""
    size = math.prod(shape)
    buffers = _workspace.buffers
    kept = buffers.get(name)
    if kept is not None and kept.size >= size:
        return kept[:size].reshape(shape)
    fresh = np.empty(size, np.float32)
    others = sum(b.nbytes for n, b in buffers.items() if n != name)
    if others + fresh.nbytes <= WORKSPACE_BYTES:
        buffers[name] = fresh
    return fresh.reshape(shape)


def in_parallel(count: int, work: Callable[[int, int], None], *, min_per_thread: int = 1) -> None:
    """Run ``work(start, stop)`` over ``[0, count)`` split into one contiguous part per worker
    thread (parts of at least ``min_per_thread``), the first part on the calling thread.

    For NumPy kernels that release the GIL and are bound by memory latency (gathers): BLAS
    kernels have threads of their own.  The workers' parts run under the caller's NumPy
    floating-point error state (``np.errstate`` is per thread)."""
    parts = max(1, min(_WORKERS, count // max(1, min_per_thread)))
    if parts == 1:
        work(0, count)
        return
    pool = _executor()
    bounds = [count * i // parts for i in range(parts + 1)]
    errors = np.geterr()
    # The first part runs on the calling thread, which is awake already: one hand-off fewer
    # (a woken worker can wait for a core that another program holds).
    # Each thread on a core of its own for the region (``_placement``).
    with pinned():
        futures = [pool.submit(_under, errors, work, a, b) for a, b in zip(bounds[1:-1], bounds[2:])]
        try:
            work(bounds[0], bounds[1])
        except BaseException:
            wait(futures)       # no worker still writes into the caller's arrays after it returns
            raise
        for f in futures:
            f.result()  # re-raises a worker's exception


def _under(errors: Mapping[str, Any], work: Callable[[int, int], None], start: int, stop: int) -> None:
    """``work(start, stop)`` under the floating-point error state ``errors`` (np.geterr's)."""
    with np.errstate(**errors):
        work(start, stop)


# What every operator function's docstring says of the arguments all of them take, written once:
# ``@documented`` puts each text where its docstring has the placeholder line.
_COMMON_DOC = {
    "        {backend_and_stream}\n": """\
        backend: ``"npu"``, ``"sim"`` or ``"numpy"``; default: the current backend.
        stream: on npu/sim, a stream the caller owns to queue the work on (an int address, a
            cffi ``aclrtStream``, or a torch_npu stream such as ``torch.npu.current_stream()``);
            the binding neither destroys it nor waits for it, except that NumPy results wait
            for it. Default: the thread's own stream. Checked, then ignored, on numpy.
""",
    "    {tensor_arguments}\n": """\
    Tensor arguments take a CPU array-like (a NumPy array, a torch CPU tensor or anything with
    ``__dlpack__``, ``__array__`` or the buffer protocol; not a Python list) and, on ``npu`` and
    ``sim``, an ``aclnn_py.Tensor`` or a torch_npu tensor (used in place, no copy). Results are
    NumPy arrays, or device ``Tensor``s when a tensor argument was on the device.
""",
}

_Documented = TypeVar("_Documented", bound=Callable[..., Any])


def documented(function: _Documented) -> _Documented:
    """``function`` with the shared argument texts (``_COMMON_DOC``) in its docstring."""
    doc = function.__doc__ or ""
    for placeholder, text in _COMMON_DOC.items():
        if placeholder not in doc:
            raise ValueError(f"{function.__name__}'s docstring lacks the line {placeholder.strip()}")
        doc = doc.replace(placeholder, text)
    function.__doc__ = doc
    return function
