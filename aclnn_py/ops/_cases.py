"""What the operators' argument makers share (each operator declares its own maker in its module,
``Operator.case``; see ``aclnn_py/ops/_registry.py``).

Each maker takes the forward input's shape (``[N,] C, H, W``: the image whose gradient the
operator computes), a dtype, the operator's parameters, and a random generator, and returns an
``OpCall`` whose arguments are consistent (gradOutput has the shape the parameters imply, the
max-unpool indices point inside their windows). Values are seeded random: normal floats,
small integers, random bools.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, SupportsInt, Unpack

import numpy as np
from numpy.typing import DTypeLike

from .._dtypes import dtype_name


@dataclass(frozen=True)
class OpCall:
    """One call of an operator: ``getattr(aclnn_py, op)(*args)``."""

    op: str
    args: tuple[np.ndarray, Unpack[tuple[Any, ...]]]  # the gradient first, then arrays, lists, flags
    case: str = ""  # the parameters in a few words, e.g. "k3 s2 p1 ceil"

    @property
    def dtype(self) -> np.dtype:
        """The first tensor's dtype (of a tensor list: its first element's)."""
        first = self.args[0]
        return first[0].dtype if isinstance(first, (list, tuple)) and first else first.dtype

    def describe(self) -> str:
        """The tensor arguments' shapes and dtypes, and the case."""
        tensors = ", ".join(f"{list(a.shape)}" if isinstance(a, np.ndarray) else
                            "[" + ", ".join(f"{list(t.shape)}" for t in a) + "]"
                            for a in self.args if isinstance(a, np.ndarray) or
                            (isinstance(a, (list, tuple)) and all(isinstance(t, np.ndarray) for t in a)))
        return f"{self.op}({tensors}) {dtype_name(self.dtype)} {self.case}".rstrip()


def random_array(rng: np.random.Generator, shape: Sequence[int], dtype: DTypeLike) -> np.ndarray:
    """Normal floats (complex: both parts), integers in [-100, 100] clipped to the dtype, bools."""
    dt = np.dtype(dtype)
    shape = tuple(shape)
    if dt == np.bool_:
        return rng.random(shape) < 0.5
    if np.issubdtype(dt, np.integer):
        info = np.iinfo(dt)
        return rng.integers(max(info.min, -100), min(info.max, 100), size=shape, endpoint=True).astype(dt)
    if np.issubdtype(dt, np.complexfloating):
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dt)
    return rng.standard_normal(shape, dtype=np.float32).astype(dt)


def pair(value: int | Sequence[int]) -> tuple[int, ...]:
    return (value, value) if isinstance(value, int) else tuple(value)


def dims(values: Iterable[SupportsInt]) -> str:
    """``(3, 3)`` -> ``"3"``, ``(3, 2)`` -> ``"3x2"``: parameters in a few characters."""
    values = [int(v) for v in values]
    return str(values[0]) if len(set(values)) == 1 else "x".join(map(str, values))
