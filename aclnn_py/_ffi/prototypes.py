"""The function prototypes of a cdef (the binding's headers as ``declarations`` reads them): each
function's return type and parameters, its C signature as text, and the Python type a C type
maps to. ``capi`` mirrors every function from them; ``tools/stubs.py`` writes its type stub."""

from __future__ import annotations

import re


_PROTOTYPE = re.compile(r"^(?P<ret>[\w\s\*]+?)\s*\b(?P<name>\w+)\s*\((?P<params>[^()]*)\)$")


def prototypes(cdef: str) -> dict[str, tuple[str, list[tuple[str, str]]]]:
    """``name -> (return type, [(C type, parameter name), ...])`` of every function the cdef
    text declares."""
    body = " ".join(line for line in cdef.splitlines() if not line.startswith(("#", "/*")))
    found: dict[str, tuple[str, list[tuple[str, str]]]] = {}
    for statement in body.split(";"):
        statement = " ".join(statement.split())
        if statement.startswith(("typedef", "struct", "enum")) or "{" in statement or "}" in statement:
            continue
        m = _PROTOTYPE.match(statement)
        if m is None:
            continue
        params: list[tuple[str, str]] = []
        for param in m["params"].split(","):
            param = param.strip()
            if not param or param == "void":
                continue
            p = re.match(r"^(?P<type>.*?[\s\*])(?P<name>\w+)$", param)
            params.append((" ".join(p["type"].replace("*", " * ").split()).replace("* *", "**"), p["name"])
                          if p else (param, ""))
        found[m["name"]] = (" ".join(m["ret"].split()), params)
    return found


def c_signature(name: str, ret: str, params: list[tuple[str, str]]) -> str:
    args = ", ".join(f"{t}{'' if t.endswith('*') else ' '}{n}".strip() for t, n in params) or "void"
    return f"{ret} {name}({args})"


# C parameter types of the operators' phase 1 -> what the mirror accepts for them.
_C_TO_PYTHON = {
    "const aclTensor *": "CData | Tensor | None",
    "aclTensor *": "CData | Tensor | None",
    "const aclIntArray *": "CData | IntArray | None",
    "const aclBoolArray *": "CData | BoolArray | None",
    "const aclFloatArray *": "CData | FloatArray | None",
    "const aclScalar *": "CData | Scalar | None",
    "bool": "bool",
    "double": "float",
    "float": "float",
}


def python_type(c_type: str) -> str:
    """The Python annotation the mirror gives a C parameter type."""
    if c_type in _C_TO_PYTHON:
        return _C_TO_PYTHON[c_type]
    if re.fullmatch(r"(u?int(8|16|32|64)_t|int|size_t)", c_type):
        return "int"
    return "CData"
