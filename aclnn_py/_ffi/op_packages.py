"""Which CANN operator package defines each operator aclnn_py ships, as each operator declares it.

Since CANN 8.5 each operator repository builds its own library (ops-nn → ``libopapi_nn.so``,
ops-math → ``libopapi_math.so``, ops-cv → ``libopapi_cv.so``), and the classic
``libopapi.so`` aggregates them.  The simulator's build compiles each operator into the
library its declaration names (and into the aggregate), its tests derive each library's exports
from it, and the binding names the library in its error when an operator is missing.

The one source is each operator's registration, ``OPERATOR = register(Operator(...))`` at the
end of ``aclnn_py/ops/<op>.py`` (``aclnn_py/ops/_registry.py``), whose ``c_name``, ``header``,
``package`` and ``library`` are string literals.  This module reads them from the modules'
text, without importing them: ``aclnn_py/sim/_build.py`` runs this file by path inside pip's
isolated build environment, where ``aclnn_py`` cannot be imported (so: no package-relative
imports here).  ``tests/test_registry.py`` checks that this reading and the registry agree.
The simulator's source of an operator declared in ``include/aclnnop/aclnn_<stem>.h`` is
``aclnn_py/sim/src/ops/<stem>.c``.
"""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

#: The classic library that aggregates every package's operators.
AGGREGATE_LIBRARY = "libopapi.so"

OPS_DIR = Path(__file__).resolve().parent.parent / "ops"

_FIELDS = ("package", "library", "header")


def _declaration(path: Path) -> tuple[str, tuple[str, str, str]] | None:
    """``(c_name, (package, library, header))`` of the module's ``OPERATOR = ...Operator(...)``."""
    text = path.read_text(encoding="utf-8")
    start = re.search(r"^OPERATOR = ", text, re.M)
    if start is None:
        return None
    for node in ast.parse(text[start.start():], str(path)).body:  # the declaration and what follows it
        if not (isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "OPERATOR"
                                                     for t in node.targets)):
            continue
        call: ast.expr | None = node.value
        while isinstance(call, ast.Call) and not (isinstance(call.func, ast.Name) and call.func.id == "Operator"):
            call = call.args[0] if call.args else None  # register(Operator(...))
        if not isinstance(call, ast.Call):
            raise ValueError(f"{path}: OPERATOR is not an Operator(...) call")
        given = {k.arg: k.value for k in call.keywords}
        c_name = call.args[1] if len(call.args) > 1 else given.get("c_name")
        try:
            values = [ast.literal_eval(v) for v in (c_name, *(given[f] for f in _FIELDS))]  # type: ignore[arg-type]
        except (KeyError, ValueError) as exc:
            raise ValueError(f"{path}: the Operator's c_name, {', '.join(_FIELDS)} must be string literals") from exc
        return values[0], (values[1], values[2], values[3])
    return None


@functools.cache
def operator_packages(ops_dir: Path = OPS_DIR) -> dict[str, tuple[str, str, str]]:
    """operator (the aclnn<Name> of its two functions) -> (package, library, header in include/aclnnop/),
    in the order of the modules' names."""
    found = {}
    for path in sorted(ops_dir.glob("[!_]*.py")):
        declared = _declaration(path)
        if declared is not None:
            found[declared[0]] = declared[1]
    return found


def _dtype_rules(path: Path) -> dict[str, tuple[str, ...]]:
    """The module's ``DTYPE_RULES = {rule: (aclDataType name, ...)}`` literal ({} if none)."""
    text = path.read_text(encoding="utf-8")
    start = re.search(r"^DTYPE_RULES = ", text, re.M)
    if start is None:
        return {}
    node = ast.parse(text[start.start():], str(path)).body[0]
    try:
        rules = ast.literal_eval(node.value) if isinstance(node, ast.Assign) else None
    except ValueError:
        rules = None
    if not (isinstance(rules, dict) and all(isinstance(k, str) and isinstance(v, tuple) and
                                            all(isinstance(n, str) and n.startswith("ACL_") for n in v)
                                            for k, v in rules.items())):
        raise ValueError(f"{path}: DTYPE_RULES must be a literal {{rule: (aclDataType name, ...)}}")
    return rules


@functools.cache
def dtype_rules(ops_dir: Path = OPS_DIR) -> dict[str, dict[str, tuple[str, ...]]]:
    """operator -> {rule: the aclDataType names it accepts}: each operator module's ``DTYPE_RULES``,
    the one table of its dtype checks. The numpy backend checks with it; the simulator's build
    generates ``aclsim_dtype_rules.h`` from it (``c_header``) for the C checks."""
    found = {}
    for path in sorted(ops_dir.glob("[!_]*.py")):
        declared = _declaration(path)
        if declared is not None:
            found[declared[0]] = _dtype_rules(path)
    return found


def c_header(rules: dict[str, dict[str, tuple[str, ...]]]) -> str:
    """The C header of the dtype table: ``ACLSIM_DTYPES_<operator>_<rule>`` expands to the rule's
    aclDataType list, to initialise an array (``ACLSIM_DTYPES_COUNT`` counts its elements)."""
    lines = ["/* Generated by aclnn_py/sim/_build.py from each operator's DTYPE_RULES (aclnn_py/ops/<op>.py):",
             " * the dtype table the numpy backend checks with too. Do not edit. */",
             "#ifndef ACLSIM_DTYPE_RULES_H", "#define ACLSIM_DTYPE_RULES_H", "",
             "#define ACLSIM_DTYPES_COUNT(array) (sizeof(array) / sizeof((array)[0]))", ""]
    for op, table in rules.items():
        for rule, names in table.items():
            lines.append(f"#define ACLSIM_DTYPES_{op}_{rule} {', '.join(names)}")
    return "\n".join(lines + ["", "#endif", ""])


def operator_of(function: str) -> str | None:
    """The operator an aclnn function belongs to (``aclnnXxxGetWorkspaceSize`` -> ``Xxx``), or None
    for a function of no operator aclnn_py ships."""
    for name in operator_packages():
        if function in (f"aclnn{name}", f"aclnn{name}GetWorkspaceSize"):
            return name
    return None
