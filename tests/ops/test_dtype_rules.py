"""The dtype checks have one table (each operator's ``DTYPE_RULES``, ops/_registry.py): the numpy
backend checks with it and the simulator's C checks with the header its build generates from it.
Every dtype the binding can name, fed to every tensor parameter (inputs through the function,
outputs through ``call``), gives the same outcome on both backends: the same status and message
(which names the parameter), or the same success."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

import aclnn_py
from aclnn_py import AclnnError
from aclnn_py._dtypes import _NUMPY_TO_ACL, dtype_name
from aclnn_py._ffi import op_packages
from aclnn_py.ops._registry import Operator, numpy_dtypes, operators
from aclnn_py.sim import _build

OPS = operators()
IDS = {"ids": [op.name for op in OPS]}
ALL_DTYPES = sorted(_NUMPY_TO_ACL, key=str)


def _outcome(run) -> tuple:
    """("ok",), ("TypeError", text) or ("AclnnError", status, message without the "<api>: " the
    simulator's recent-error text starts with)."""
    try:
        run()
    except AclnnError as exc:
        return ("AclnnError", exc.status, exc.message.removeprefix(f"{exc.api}: "))
    except TypeError as exc:
        return ("TypeError", str(exc))
    return ("ok",)


def _parameters(op: Operator) -> list[str]:
    """The C parameter names of the operator's phase 1, from its header."""
    prototype = re.search(rf"{op.api}\s*\(([^)]*)\)", (Path(aclnn_py.get_include()) / "aclnnop" / op.header).read_text())
    return [re.findall(r"\w+", p)[-1] for p in prototype[1].split(",")]


def _judgement(op: Operator, outcome: tuple) -> tuple:
    """(kind, status, the first parameter the message names): what both backends must agree on."""
    if outcome[0] != "AclnnError":
        return outcome[:1]
    named = [(m.start(), p) for p in _parameters(op) for m in [re.search(rf"\b{p}\b", outcome[2])] if m]
    return ("AclnnError", outcome[1], min(named)[1] if named else None)


def _baseline(op: Operator) -> list:
    shape, _dtypes, params = op.selftest[0]
    return list(op.case(np.random.default_rng(0), shape, np.dtype(np.float32), **params).args)


@pytest.mark.parametrize("op", OPS, **IDS)
def test_every_dtype_of_every_input_same_outcome_on_both_backends(op: Operator, sim_lib):
    args = _baseline(op)
    positions = [i for i, a in enumerate(args) if isinstance(a, np.ndarray)]
    # (a tensor list: its last element changed, the first keeping the list's dtype)
    lists = [i for i, a in enumerate(args) if isinstance(a, list) and a and isinstance(a[-1], np.ndarray)]
    rejected = 0
    for i in positions + lists:
        for dtype in ALL_DTYPES:
            changed = list(args)
            changed[i] = args[i].astype(dtype) if i in positions else [*args[i][:-1], args[i][-1].astype(dtype)]
            outcomes = {b: _outcome(lambda: op.function(*changed, backend=b)) for b in ("numpy", "sim")}
            assert outcomes["numpy"] == outcomes["sim"], (i, dtype)  # the message too, for the inputs
            rejected += outcomes["sim"][0] != "ok"
    assert rejected > 0


@pytest.mark.parametrize("op", OPS, **IDS)
def test_every_output_refuses_the_dtypes_outside_the_table_on_both_backends(op: Operator, sim_lib):
    # Outputs are the caller's only through `call`. A dtype in no rule of the table is refused by
    # both backends with 161002. (Within the table the backends differ: the numpy backend's
    # `call` requires the result's own dtype of an output, where CANN accepts any the rules allow,
    # e.g. a BFLOAT16 `out` of im2col for a FLOAT gradOutput.)
    args = _baseline(op)
    shapes: list[tuple] = []
    op.c_arguments(args, lambda shape, dtype: shapes.append((shape, dtype)))
    inside = {d for names in op.dtypes.values() for d in numpy_dtypes(names)}
    for j in range(len(shapes)):
        for dtype in sorted(set(ALL_DTYPES) - inside, key=str):
            for b in ("numpy", "sim"):
                made = iter(range(len(shapes)))
                c_args = op.c_arguments(args, lambda shape, like: np.zeros(shape, dtype if next(made) == j else like))
                outcome = _outcome(lambda: aclnn_py.call(op.kernel, *c_args, backend=b))
                assert outcome[:2] == ("AclnnError", 161002), (j, dtype, b, outcome)
                assert _judgement(op, outcome)[2] is not None, outcome


class _TensorList:
    """A tensor-list argument seen as one tensor: its first element's dtype, ``astype`` of all."""

    def __init__(self, items: list) -> None:
        self.items, self.dtype = items, items[0].dtype

    def astype(self, dtype) -> list:
        return [t.astype(dtype) for t in self.items]


@pytest.mark.parametrize("op", OPS, **IDS)
def test_each_rule_is_the_check_of_some_input(op: Operator, sim_lib):
    # Each rule is what some input is checked against: on the simulator, exactly the dtypes
    # outside the rule are refused with the rule's list in the message.
    assert op.dtypes, op.name
    args = _baseline(op)
    for rule, names in op.dtypes.items():
        allowed = set(numpy_dtypes(names))
        listed = "dtype must be one of [" + ", ".join(dtype_name(d) for d in numpy_dtypes(names)) + "]"
        judged = []
        for i, a in enumerate(args):
            if isinstance(a, list) and a and all(isinstance(t, np.ndarray) for t in a):
                a = _TensorList(a)  # (a tensor list: every element of one dtype)
            if not isinstance(a, (np.ndarray, _TensorList)) or a.dtype not in allowed:
                continue
            refused = {d for d in ALL_DTYPES
                       if listed in str(_outcome(lambda: op.function(*args[:i], a.astype(d), *args[i + 1:],
                                                                      backend="sim"))[-1])}
            judged.append(refused == set(ALL_DTYPES) - allowed)
            # An operator that first requires some inputs to share a's dtype (NLLLoss: weight's
            # equals self's, before self's list) is judged with all of them changed together.
            tied = [j for j, b in enumerate(args) if isinstance(b, np.ndarray) and b.dtype == a.dtype]
            refused = {d for d in ALL_DTYPES
                       if listed in str(_outcome(lambda: op.function(
                           *[b.astype(d) if j in tied else b for j, b in enumerate(args)], backend="sim"))[-1])}
            judged.append(refused == set(ALL_DTYPES) - allowed)
        # ... or some output's (e.g. max pooling's indices), through `call`
        likes: list[np.dtype] = []
        op.c_arguments(args, lambda shape, dtype: likes.append(np.dtype(dtype)))
        for j, like in enumerate(likes):
            if like not in allowed:
                continue
            refused = set()
            for d in ALL_DTYPES:
                made = iter(range(len(likes)))
                c_args = op.c_arguments(args, lambda shape, dt: np.zeros(shape, d if next(made) == j else dt))
                if listed in str(_outcome(lambda: aclnn_py.call(op.kernel, *c_args, backend="sim"))[-1]):
                    refused.add(d)
            judged.append(refused == set(ALL_DTYPES) - allowed)
        assert any(judged), (op.name, rule)


def test_the_simulator_compiles_the_generated_table(sim_lib):
    header = _build.generated_include_dir(aclnn_py.sim.home()) / "aclsim_dtype_rules.h"
    assert header.read_text() == _build.dtype_rules_header()
    for op in OPS:
        for rule, names in op.dtypes.items():
            assert f"#define ACLSIM_DTYPES_{op.c_name}_{rule} {', '.join(names)}\n" in header.read_text()
    assert op_packages.dtype_rules() == {op.c_name: op.dtypes for op in OPS}


def test_no_simulator_source_keeps_its_own_dtype_list():
    stems = {op.header.removeprefix("aclnn_").removesuffix(".h"): op for op in OPS}
    for stem, op in stems.items():
        source = (_build.SRC_DIR / "ops" / f"{stem}.c").read_text()
        assert not re.search(r"aclDataType\s+\w+\[\]\s*=\s*\{\s*ACL_", source), stem
        for rule in op.dtypes:
            assert f"ACLSIM_DTYPES_{op.c_name}_{rule}" in source, (stem, rule)


def test_a_table_must_be_literal_acl_names(tmp_path):
    for text, ok in (('DTYPE_RULES = {"A": ("ACL_FLOAT",)}\n', True), ("DTYPE_RULES = {'A': NAMES}\n", False),
                     ('DTYPE_RULES = {"A": ("FLOAT",)}\n', False)):
        d = tmp_path / str(len(list(tmp_path.iterdir())))
        d.mkdir()
        (d / "op.py").write_text(text + 'OPERATOR = register(Operator(f, "Op", header="h.h", package="p", '
                                        'library="l"))\n')
        if ok:
            assert op_packages.dtype_rules(d) == {"Op": {"A": ("ACL_FLOAT",)}}
            assert "#define ACLSIM_DTYPES_Op_A ACL_FLOAT\n" in op_packages.c_header(op_packages.dtype_rules(d))
        else:
            with pytest.raises(ValueError, match="DTYPE_RULES"):
                op_packages.dtype_rules(d)
