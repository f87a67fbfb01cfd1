#!/usr/bin/env python3
"""Per-module coverage of the product (aclnn_py/**.py) from the data ``pytest --cov`` wrote
(.coverage; the tests' Python subprocesses included, see [tool.coverage.run] in
pyproject.toml): prints every module's figure and fails (exit 1) when one is below the floor.

    python -m pytest -q --cov && python scripts/coverage_gate.py [--floor 90]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

FLOOR = 90.0


def module_coverage(data_file: str = ".coverage") -> dict[str, float]:
    """{module path: percent of statements covered} of every measured product module."""
    import coverage

    cov = coverage.Coverage(data_file=data_file)
    cov.load()
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "coverage.json"
        cov.json_report(outfile=str(out), include=["aclnn_py/*"])
        files = json.loads(out.read_text())["files"]
    return {name: f["summary"]["percent_covered"] for name, f in sorted(files.items())
            if f["summary"]["num_statements"]}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--floor", type=float, default=FLOOR, help="minimum percent per module (default %(default)s)")
    ap.add_argument("--data-file", default=".coverage")
    opts = ap.parse_args(argv)
    if not Path(opts.data_file).is_file():
        print(f"coverage_gate: no coverage data ({opts.data_file}); run `python -m pytest -q --cov` first",
              file=sys.stderr)
        return 2
    figures = module_coverage(opts.data_file)
    below = {m: p for m, p in figures.items() if p < opts.floor}
    print(f"coverage per product module (floor {opts.floor:g}%):")
    for module, percent in figures.items():
        print(f"  {module:48s} {percent:5.1f}%{'  BELOW' if module in below else ''}")
    if below:
        print(f"coverage_gate: {len(below)} module(s) below {opts.floor:g}%: {', '.join(below)}", file=sys.stderr)
        return 1
    print(f"coverage_gate: all {len(figures)} modules at or above {opts.floor:g}%")
    return 0


if __name__ == "__main__":
    sys.exit(main())
