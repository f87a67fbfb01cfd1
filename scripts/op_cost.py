"""What an operator costs to add: non-blank, non-comment lines of its Python module, its
simulator C file and its header, per registered operator, with the median and the largest.

    python scripts/op_cost.py                                  # every operator
    python scripts/op_cost.py --exclude relu --exclude cast    # all but these

An operator's files are found from its registration: ``aclnn_py/ops/<name>.py``, the C file of
``aclnn_py/sim/src/ops/`` that defines ``aclnn<CName>GetWorkspaceSize`` (a file defining several
operators, as add.c defines Add and Adds, is shared out evenly among them), and
``include/aclnnop/<header>`` (likewise).
The shared machinery the operators stand on (the ``_*.py`` modules of ``aclnn_py/ops/``, the engines of
``aclnn_py/_numpy/``, the shared C of ``aclnn_py/sim/src/ops/``) is listed apart, once.
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from aclnn_py.ops._registry import operators  # noqa: E402

OPS_C = ROOT / "aclnn_py" / "sim" / "src" / "ops"


def code_lines(path: Path) -> int:
    """Lines that are neither blank nor only a comment (``#``, ``//``, or inside ``/* */``)."""
    count, in_block = 0, False
    for line in path.read_text().splitlines():
        text = line.strip()
        if in_block:
            if "*/" in text:
                in_block = False
                text = text.split("*/", 1)[1].strip()
            else:
                continue
        if text.startswith("/*"):
            if "*/" not in text:
                in_block = True
            continue
        if text and not text.startswith(("#", "//", "*")) or text.startswith("#include") or text.startswith("#define"):
            count += 1
    return count


def c_file(c_name: str) -> Path | None:
    definition = re.compile(rf"^aclnnStatus\s+aclnn{c_name}GetWorkspaceSize\s*\(", re.M)
    return next((path for path in sorted(OPS_C.glob("*.c")) if definition.search(path.read_text())), None)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--exclude", action="append", default=[], metavar="OP",
                        help="leave this operator (its Python name) out of the table (repeatable)")
    args = parser.parse_args(argv)
    c_of = {op.name: c_file(op.c_name) for op in operators()}
    sharing: dict[object, int] = {}
    for op in operators():
        for key in (c_of[op.name], op.header):
            sharing[key] = sharing.get(key, 0) + 1
    rows = []
    for op in operators():
        if op.name in args.exclude:
            continue
        module = ROOT / "aclnn_py" / "ops" / f"{op.name}.py"
        c = c_of[op.name]
        header = ROOT / "include" / "aclnnop" / op.header
        rows.append((op.name, code_lines(module), round(code_lines(c) / sharing[c]) if c else 0,
                     round(code_lines(header) / sharing[op.header])))
    own_c = {c for c in c_of.values() if c is not None}
    print(f"{'operator':34s} {'Python':>7s} {'C':>5s} {'header':>7s}")
    for name, py, c, h in rows:
        print(f"{name:34s} {py:7d} {c:5d} {h:7d}")
    if rows:
        for label, i in (("Python", 1), ("C", 2), ("header", 3)):
            values = [r[i] for r in rows]
            print(f"{label}: median {statistics.median(values):g}, largest {max(values)} "
                  f"({rows[values.index(max(values))][0]}) over {len(rows)} operators")
    shared_py = sorted(p for p in (ROOT / "aclnn_py" / "ops").glob("_*.py") if p.name != "__init__.py")
    shared_py += sorted(p for p in (ROOT / "aclnn_py" / "_numpy").rglob("*.py") if p.name != "__init__.py")
    shared_c = sorted(p for p in OPS_C.glob("*.[ch]") if p not in own_c)
    print("shared machinery (lines): " + ", ".join(f"{p.relative_to(ROOT)} {code_lines(p)}"
                                                  for p in shared_py + shared_c))
    return 0


if __name__ == "__main__":
    sys.exit(main())
