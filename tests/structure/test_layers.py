"""The package's imports go one way: each module imports only modules of its own layer or of
layers below it, and no import cycle exists among the files, counting every import (inside
functions and under ``TYPE_CHECKING`` too). ``LAYERS`` is the one list of the layers, lowest
first; docs/layout.md tells what each holds.
"""

from __future__ import annotations

import ast
from pathlib import Path

import aclnn_py

PACKAGE = Path(aclnn_py.__file__).parent

#: (layer, the modules in it: a name covers the module and everything under it), lowest first.
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("settings and the simulator's build", ("aclnn_py._environ", "aclnn_py.sim")),
    ("declarations and library discovery", ("aclnn_py._ffi",)),
    ("facts read from the declarations", ("aclnn_py._constants", "aclnn_py._errors", "aclnn_py._dtypes")),
    ("runtime", ("aclnn_py._runtime", "aclnn_py._fast")),
    ("argument conversion and the numpy backend's machinery", ("aclnn_py._convert", "aclnn_py._numpy")),
    ("operators", ("aclnn_py.ops",)),
    ("public API", ("aclnn_py", "aclnn_py.call", "aclnn_py._compare", "aclnn_py.capi")),
    ("tools", ("aclnn_py.tools", "aclnn_py.__main__")),
)


def _modules() -> dict[str, Path]:
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


MODULES = _modules()


def _target(name: str) -> str | None:
    """The module of the package that ``name`` (a module, or a module's attribute) is."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def imports_of(module: str) -> set[str]:
    """Every module of the package that importing ``module`` imports directly."""
    path = MODULES[module]
    is_package = path.name == "__init__.py"
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".") if is_package else module.split(".")[:-1]
                base = base[: len(base) - node.level + 1]
                prefix = ".".join(base + ([node.module] if node.module else []))
            else:
                prefix = node.module or ""
            names = [f"{prefix}.{a.name}" for a in node.names]
        else:
            continue
        for name in names:
            target = _target(name) if name.startswith("aclnn_py") else None
            if target is None:
                continue
            out.add(target)
    out.discard(module)
    return out


GRAPH = {m: imports_of(m) for m in MODULES}


def layer_of(module: str) -> int:
    best, chosen = -1, None
    for index, (_name, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > best:
                best, chosen = len(prefix), index
    assert chosen is not None, f"{module} is in no layer: add it to LAYERS"
    return chosen


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_no_import_cycle():
    assert cycles(GRAPH) == []


def test_imports_go_down_the_layers():
    upward = sorted(f"{m} ({LAYERS[layer_of(m)][0]}) imports {t} ({LAYERS[layer_of(t)][0]})"
                    for m, targets in GRAPH.items() for t in targets if layer_of(t) > layer_of(m))
    assert upward == []


def test_the_walk_sees_what_it_must():
    """The checks above are only as good as the walk: it finds a TYPE_CHECKING import, a
    function-level one and a submodule imported by name, and the cycle finder finds a planted
    cycle."""
    assert "aclnn_py._runtime.library" in GRAPH["aclnn_py._runtime.backend"]  # (TYPE_CHECKING)
    assert "aclnn_py._ffi.declarations" in GRAPH["aclnn_py.call"]  # (in a function)
    assert "aclnn_py._numpy.small" in GRAPH["aclnn_py.ops.reflection_pad2d_backward"]  # (from .. import x)
    planted = {m: set(t) for m, t in GRAPH.items()}
    planted["aclnn_py._errors"].add("aclnn_py.ops._checks")
    assert any("aclnn_py._errors" in c and "aclnn_py.ops._checks" in c for c in cycles(planted))
    assert layer_of("aclnn_py.ops.reflection_pad2d_backward") > layer_of("aclnn_py._convert.values")
