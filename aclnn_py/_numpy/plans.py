"""The numpy backend's plans: an operator's checks run once per call signature.

On the numpy backend an operator is a ``NumpyOp``: its checks run once per call signature
(shapes, dtypes, strides, parameter values) and leave a ``Plan``, so that a repeated valid call
goes straight to its kernel; a tiny call's cost is then the kernel's few NumPy calls.
"""

from __future__ import annotations

import os
import struct
import threading
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np


# A call touching fewer bytes than this cannot run for long: the progress line (shown after
# half a second) is not even looked up for it. 1 MiB is ~0.1 ms at the copy bandwidth of any
# current machine; the kernels make a few passes over their data at most, each of a few NumPy
# calls, so such a call ends thousands of times sooner than a progress line would appear.
QUICK_BYTES = 1 << 20

# Plans kept per operator: a network has tens of distinct layer geometries, not hundreds; a
# plan is small (its matrix, for the small path, is at most _small.MAX_MATRIX_ELEMENTS).
_CACHED_PLANS = 256


_DOUBLE = struct.Struct("<d")

# The tag of a tensor list's entry in a key (never equal to an int's, a bool's or a float's).
_TENSORS = object()


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


def signature(args: tuple[Any, ...], floats: bool = False, tensor_lists: bool = False) -> tuple[object, ...] | None:
    """The key of one call's arguments in the plan cache, or None (no caching) when an
    argument is of a kind it does not cover.

    An ndarray stands for its shape, dtype and strides (no check reads tensor data); a list or
    tuple of ndarrays, with ``tensor_lists`` (an aclTensorList: ``NumpyOp``'s ``tensor_lists``),
    for each one's; a list or tuple of ints for its values, one of bools for their type and values; an int or None for
    itself; a bool for its type and value; with ``floats``, a float for its type and bits (an
    aclScalar such as InplaceAdd's alpha or InplaceFillScalar's value, which its plan holds
    converted: ``NumpyOp``'s ``floats``).
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
            if tensor_lists and items and type(items[0]) is np.ndarray:  # an aclTensorList (Cat's tensors)
                arrays: list[object] = [_TENSORS]
                for v in items:
                    if type(v) is not np.ndarray:
                        return None  # (a None or another kind: prepared, its checks raise)
                    arrays.append((v.shape, v.dtype, v.strides))
                key.append(tuple(arrays))
                continue
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
        elif kind is float and floats:
            # By its bits: -0.0 == 0.0 and every NaN differs from itself (an aclScalar's value
            # is its bits); the tag keeps it apart from the int and the bool it may equal.
            key.append((float, _DOUBLE.pack(value)))
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
    environment (the device memory) on every call.

    ``floats``: a float argument keys by its bits too (else a call with one is prepared every
    time); for an operator whose plan depends on its floats' values alone (its ``run`` reads
    its tensors from its own arguments, never from ``prepare``'s).
    ``tensor_lists``: a list or tuple of ndarrays keys by their shapes, dtypes and strides (an
    aclTensorList), for an operator taking one; elsewhere such a list is not cached (an
    aclIntArray of 0-d arrays would key by their shapes, not their values)."""

    def __init__(self, prepare: Callable[..., Prepared], *, floats: bool = False, tensor_lists: bool = False) -> None:
        self.prepare = prepare
        self.floats = floats
        self.tensor_lists = tensor_lists
        self.__module__ = prepare.__module__
        self._plans: dict[tuple[object, ...], Plan] = {}
        self._lock = threading.Lock()
        _NUMPY_OPS.append(self)

    def plan(self, args: tuple[object, ...]) -> Prepared:
        """The plan of a call with ``args``, and the arguments to run it with (``args`` when the
        plan was cached, else what ``prepare`` coerced)."""
        key = signature(args, self.floats, self.tensor_lists)
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


def _new_locks_in_child() -> None:
    """A forked child's locks: a parent thread may have been storing a plan."""
    for op in _NUMPY_OPS:
        op._lock = threading.Lock()


os.register_at_fork(after_in_child=_new_locks_in_child)


def forget_plans() -> None:
    """Empty every operator's plan cache (for a test that changes how plans are made)."""
    for op in _NUMPY_OPS:
        with op._lock:
            op._plans.clear()
