"""The checks operators share: each raises CANN's status code with a message naming the
parameter, the rule and the values (the simulator's messages, word for word:
``tests/ops/test_invalid_cases.py`` holds both backends to that).

Each ``ops/<op>.py`` validates its arguments with these *before* computing anything, in the
order CANN checks them, so that the numpy backend fails exactly where the NPU would. A value
CANN would reject is ``AclnnError`` 161002; a missing required argument (``None``) is
``AclnnError`` 161001. As on npu/sim, where the binding converts every argument before the
library sees any, Python types (``aclnn_py._convert.values``) come before NULLs.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any, SupportsInt

import numpy as np

from .._dtypes import dtype_name, format_for_rank
from .._errors import param_invalid, param_nullptr

FLOAT32 = np.dtype(np.float32)
FLOAT16 = np.dtype(np.float16)


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
