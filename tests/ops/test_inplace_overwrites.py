"""``Operator.overwrites`` is a fact about the operator, checked here on numpy and sim: an
in-place operator that claims it (its result does not depend on what the written argument held,
so a timed loop needs no ``restorer``) gives the same result whatever that argument holds, and
one that does not claim it (InplaceAdd) gives a different one."""

from __future__ import annotations

import numpy as np
import pytest

from aclnn_py.ops import OPERATORS
from aclnn_py.ops._registry import _nothing

INPLACE = [op for op in OPERATORS if op.inplace is not None]


def _result(op, args, index, fill, backend):
    """The written argument after a call of ``op`` on ``args`` with that argument's values
    replaced by ``fill`` first (a copy: ``args`` stay as they are)."""
    target = np.array(args[index])
    target[...] = fill
    call_args = (*args[:index], target, *args[index + 1:])
    op.function(*call_args, backend=backend)
    return target


def test_the_inplace_operators_are_the_expected_ones():
    assert {op.name: op.overwrites for op in INPLACE} == {
        "inplace_add": False, "inplace_copy": True, "inplace_fill_scalar": True, "inplace_zero": True}


@pytest.mark.parametrize("op", INPLACE, ids=lambda op: op.name)
def test_the_result_depends_on_the_written_argument_only_where_it_does_not_overwrite(op, backend):
    _, make = op.benchmarks[-1]
    args = make(np.random.default_rng(0))
    index = op.written
    assert args[index].dtype.kind == "f"
    a = _result(op, args, index, 1.5, backend)
    b = _result(op, args, index, np.nan, backend)
    if op.overwrites:
        np.testing.assert_array_equal(a, b)  # (bit for bit: NaN nowhere either)
        assert op.restorer(args) is _nothing
    else:
        assert np.isnan(b).all() and not np.isnan(a).any()
        restore = op.restorer(args)
        before = args[index].copy()
        args[index][...] = 0
        restore()
        np.testing.assert_array_equal(args[index], before)
