"""Generates ``aclnn_py/capi.pyi``: the C-API mirror's type stub, so that editors show each
function's Python signature together with its C prototype.

The C prototypes come from the declarations the binding itself reads (``declarations.read_cdef``
over the shipped headers); the Python signatures from ``aclnn_py.capi`` (its functions'
annotations, and for the operators the prototype: phase 1 takes the C parameters minus
``workspaceSize`` and ``executor`` and returns them).

The stub is committed, not generated at build time: editable installs and source checkouts
(where editors and ``mypy`` read it) have no build step, and a committed file is reviewed like
code. ``tests/ffi/test_capi_stub.py`` regenerates it and fails on any difference, so it cannot
drift from the headers or from ``capi.py``. Regenerate with
``python -m aclnn_py._ffi.stubs > aclnn_py/capi.pyi``.

It also generates ``aclnn_py/_constants.pyi``, the declarations type checkers read for the
constants ``aclnn_py._constants`` builds from the headers at import (``IntEnum`` classes and
module-level ints: names no checker can see in the module itself);
``tests/ffi/test_constants.py`` keeps it current. Regenerate with
``python -m aclnn_py._ffi.stubs constants > aclnn_py/_constants.pyi``.
"""

from __future__ import annotations

import inspect
import re
import sys
import types
from collections.abc import Callable
from pathlib import Path

from .declarations import include_dir, read_cdef

STUB_PATH = Path(__file__).resolve().parent.parent / "capi.pyi"
CONSTANTS_STUB_PATH = Path(__file__).resolve().parent.parent / "_constants.pyi"

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


def _annotation(annotation: object) -> str:
    if annotation is inspect.Parameter.empty:
        return "Any"
    return annotation if isinstance(annotation, str) else getattr(annotation, "__name__", repr(annotation))


def _python_signature(fn: Callable[..., object]) -> str:
    sig = inspect.signature(fn)
    parts = []
    params = list(sig.parameters.values())
    for i, p in enumerate(params):
        text = f"{p.name}: {_annotation(p.annotation)}"
        if p.default is not inspect.Parameter.empty:
            text += " = ..."
        parts.append(("*" if p.kind is p.VAR_POSITIONAL else "") + text)
        if p.kind is p.POSITIONAL_ONLY and (i + 1 == len(params) or params[i + 1].kind is not p.POSITIONAL_ONLY):
            parts.append("/")
    return f"({', '.join(parts)}) -> {_annotation(sig.return_annotation)}"


def _doc(c_proto: str | None, python_doc: str | None) -> str:
    lines = [f"C: ``{c_proto};``"] if c_proto else []
    if python_doc:
        lines += ["", *inspect.cleandoc(python_doc).splitlines()]
    body = "\n".join(f"    {line}" if line else "" for line in lines).strip().replace("\\", "\\\\").replace('"""', '\\"\\"\\"')
    return f'    """{body}\n    """' if len(lines) > 1 else f'    """{body}"""'


def render() -> str:
    """The text of ``capi.pyi``."""
    from .. import capi

    protos = prototypes(read_cdef(include_dir()))
    out = [
        '"""Type stub of ``aclnn_py.capi`` (generated by ``python -m aclnn_py._ffi.stubs`` from the',
        "binding's C headers and ``capi.py``: do not edit). Each function's docstring starts with its",
        'C prototype."""',
        "",
        "from collections.abc import Callable, Sequence",
        "from typing import Any, TypeAlias",
        "",
        "from .tensor import BoolArray, FloatArray, IntArray, Scalar, Tensor",
        "",
        "CData: TypeAlias = Any",
        '"""A raw cffi pointer: a handle, or device memory."""',
        "Memory: TypeAlias = Any",
        '"""Host memory (a NumPy array or any C-contiguous buffer), or a device pointer."""',
        "",
    ]
    names = sorted(n for n in vars(capi) if not n.startswith("_"))
    for name in names:
        value = getattr(capi, name)
        if type(value) is int:
            out.append(f"{name}: int")
    out.append("OPERATORS: tuple[str, ...]")
    for name in names:
        value = getattr(capi, name)
        if not isinstance(value, types.FunctionType) or value.__module__ != capi.__name__:
            continue
        proto = protos.get(name)
        c_proto = c_signature(name, *proto) if proto else None
        if name.endswith("GetWorkspaceSize") and proto:
            params = ", ".join(f"{n}: {python_type(t)}" for t, n in proto[1][:-2])
            signature = f"({params}) -> tuple[int, CData]"
        elif name in capi.OPERATORS:
            signature = "(workspace: CData | None, workspaceSize: int, executor: CData, stream: CData) -> None"
        else:
            signature = _python_signature(value)
        out += ["", f"def {name}{signature}:", _doc(c_proto, value.__doc__)]
    out += ["", "def __getattr__(name: str) -> Callable[..., Any]:",
            '    """Any other aclnn operator the loaded library exports, resolved when first used."""', ""]
    return "\n".join(out)


def render_constants() -> str:
    """The text of ``_constants.pyi``."""
    from .. import _constants

    out = [
        '"""Type stub of ``aclnn_py._constants`` (generated by ``python -m aclnn_py._ffi.stubs constants``',
        'from the binding\'s C headers: do not edit)."""',
        "",
        "import enum",
        "",
        "INT_ENUMS: tuple[str, ...]",
        "ENUM_CLASSES: tuple[str, ...]",
        "STATUS_CODES: dict[str, int]",
        "",
        "def enumerators(c_enum: str) -> dict[str, int]: ...",
    ]
    for c_enum in _constants.ENUM_CLASSES:
        cls = getattr(_constants, c_enum)
        out += ["", "", f"class {c_enum}(enum.IntEnum):", f'    """{cls.__doc__}"""', ""]
        out += [f"    {m.name} = {int(m)}" for m in cls]
    out += ["", "", "# Status codes."]
    out += [f"{name}: int" for name in sorted(_constants.STATUS_CODES)]
    for c_enum in _constants.INT_ENUMS:
        out += ["", f"# {c_enum}."]
        out += [f"{name}: int" for name in _constants.enumerators(c_enum)]
    out += ["", "__all__ = [", *(f'    "{name}",' for name in _constants.__all__), "]", ""]
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    sys.stdout.write(render_constants() if args == ["constants"] else render())
    return 0


if __name__ == "__main__":
    sys.exit(main())
