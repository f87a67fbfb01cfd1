"""Python values -> the values the C arguments are made of: the one place where a tensor
argument becomes an ndarray (or stays a device ``Tensor``), a list becomes the ints of an
aclIntArray, a number the value of an aclScalar, and so on, for every backend and every path
(the typed operator functions, ``call`` and ``prepare``).

Python-level misuse (a list where a tensor belongs, a float where an int belongs, a dtype with
no aclDataType) is a ``TypeError`` naming the parameter; a value the C type cannot hold is
``AclnnError`` 161002, as CANN refuses an out-of-range value. The messages are the same on
every backend.
"""

from __future__ import annotations

import numbers
import operator
import sys
from collections.abc import Callable, Sequence

import numpy as np
from numpy.typing import DTypeLike

from .._dtypes import _NUMPY_TO_ACL, bfloat16, to_acl
from .._errors import param_invalid
from .._runtime.tensor import DeviceView, Tensor, device_view
from .params import Param

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
        # A subclass (np.matrix, a memmap) as a plain array over the same memory: the kernels
        # index and reshape it as an ndarray, as the device copy on npu/sim reads its bytes.
        array = value.view(np.ndarray)
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


def host_array(api: str, name: str, value: object) -> np.ndarray:
    """A tensor argument of a plan's call (checked already: an ndarray-like, not None) as an
    ndarray; the common case, an ndarray, as it is."""
    if type(value) is np.ndarray:
        return value
    array = tensor_arg(api, name, value)
    assert array is not None  # (the checks refused None)
    return array


def float_array_arg(api: str, name: str, values: object) -> tuple[float, ...]:
    """An aclFloatArray argument: a 1-D sequence of real numbers (bool is rejected), each
    as the float32 the C array holds; a finite value beyond float32's range is ValueError
    rather than a silent infinity."""
    if isinstance(values, np.ndarray):
        if values.ndim != 1:
            raise TypeError(f"{api}: {name} must be a 1-D sequence of numbers, got an array of shape "
                            f"{list(values.shape)}")
        values = values.tolist()
    if isinstance(values, (str, bytes)) or not isinstance(values, Sequence):
        raise TypeError(f"{api}: {name} must be a sequence of numbers, got {type(values).__name__}")
    out = []
    for i, v in enumerate(values):
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Real):
            raise TypeError(f"{api}: {name}[{i}] must be a real number, got {type(v).__name__}")
        f = float(v)
        if np.isfinite(f) and abs(f) > float(np.finfo(np.float32).max):
            raise ValueError(f"{api}: {name}[{i}] = {f} is outside float32's range")
        out.append(f)
    return tuple(out)


def scalar_value(api: str, value: object, dtype: DTypeLike) -> np.ndarray:
    """The one ``dtype`` value an aclScalar copies, as a 0-d array: TypeError for a dtype
    CANN has no name for or a value that is not a number; ValueError for a value the dtype
    cannot hold or more than one value."""
    if isinstance(value, (str, bytes)) or value is None:
        raise TypeError(f"{api}: value must be a number, got {type(value).__name__}")
    try:
        dt = np.dtype(dtype)
    except TypeError as exc:
        raise TypeError(f"{api}: dataType {dtype!r} is not a dtype: {exc}") from None
    to_acl(dt)
    try:
        held = np.asarray(value)
    except Exception as exc:
        raise TypeError(f"{api}: value {value!r} is not a number ({exc})") from None
    if held.size != 1 or held.ndim:
        raise ValueError(f"{api}: value must be one number, got an array of shape {list(held.shape)}")
    if held.dtype.kind not in "biufc":
        raise TypeError(f"{api}: value must be a number, got {held.dtype}")
    try:
        with np.errstate(all="raise"):
            out = np.asarray(held.item(), dtype=dt)
    except (OverflowError, FloatingPointError, ValueError, TypeError) as exc:
        raise ValueError(f"{api}: value {value!r} does not fit {dt} ({exc})") from None
    return out


# -- by declared C type: call/prepare's arguments ----------------------------------------------

_FLOAT32_MAX = float(np.finfo(np.float32).max)


def call_tensor(api: str, name: str, value: object) -> np.ndarray | Tensor | None:
    """A tensor argument as an ndarray (a CPU array-like is viewed or copied) or a Tensor: the
    op functions' one coercion (``_convert.values.tensor_input``), less torch_npu's device tensors,
    which ``call`` does not take yet."""
    value = tensor_input(api, name, value)
    if isinstance(value, DeviceView):
        raise TypeError(f"{api}: {name} is a device tensor of torch_npu; aclnn_py.call takes NumPy arrays, "
                        "CPU array-likes and aclnn_py.Tensor (the operator functions take torch_npu tensors)")
    return value


def output_tensor(api: str, name: str, value: object) -> np.ndarray | Tensor | None:
    if value is None or isinstance(value, Tensor):
        return value
    if not isinstance(value, np.ndarray):
        raise TypeError(f"{api}: {name} is an output (aclTensor *): it must be a writable numpy.ndarray, an "
                        f"aclnn_py.Tensor or None, got {type(value).__name__}")
    if not value.flags.writeable:
        raise TypeError(f"{api}: {name} is an output (aclTensor *) and must be writable")
    if value.dtype not in _NUMPY_TO_ACL:
        raise unnamed_dtype(api, name, value.dtype)
    return value


def python_scalar(api: str, name: str, value: object) -> np.ndarray:
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


def sequence_arg(api: str, name: str, value: object, what: str) -> Sequence[object]:
    if isinstance(value, (str, bytes, np.ndarray)) or not isinstance(value, Sequence):
        raise TypeError(f"{api}: {name} ({what}) must be a sequence, got {type(value).__name__}")
    return value


def float_arg(api: str, name: str, value: object) -> float:
    """A float/double argument: any real number but a bool."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"{api}: {name} must be a real number, got {type(value).__name__}")
    return float(value)


def plain_value(api: str, p: Param, value: object) -> bool | int | float | bytes | None:
    """A plain C value (int types, enums, bool, float, double, char *)."""
    if p.kind == "bool":
        return bool_arg(api, p.name, value)
    if p.kind == "int":
        v = int_arg(api, p.name, value)
        if not p.low <= v <= p.high:
            raise param_invalid(api, f"{p.name} = {v} does not fit the C parameter's {p.ctype}")
        return v
    if p.kind == "float":
        f = float_arg(api, p.name, value)
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


def c_int(api: str, name: str, value: object, bits: int) -> int:
    """A scalar for a C integer parameter of ``bits`` bits (``int`` / ``int8_t`` ...): a value
    the C type cannot hold never reaches the library, so it is refused here as CANN would
    refuse an out-of-range value (161002), instead of cffi's OverflowError."""
    v = int_arg(api, name, value)
    if not -(2 ** (bits - 1)) <= v < 2 ** (bits - 1):
        raise param_invalid(api, f"{name} = {v} does not fit the C parameter's int{bits}_t")
    return v
