"""The fenced code blocks of the documentation pages, and the runner that executes a page's
Python blocks in one process (``python doc_blocks.py < blocks.json``).

A block is the text between a fence line ```` ```<language> ```` and the next ```` ``` ````.
Its first line ``# needs an NPU`` labels a block for an Atlas host with CANN; the label is a
comment, so it shows in the rendered page (on GitHub and in the Sphinx build alike).
"""

from __future__ import annotations

import json
import re
import sys
import traceback
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PAGES = ["README.md", "examples/README.md", *sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "docs").glob("*.md"))]
NPU_LABEL = "# needs an NPU"
PYTHON = ("python",)
SHELL = ("console", "bash")
#: Fences that hold no code to run: program output, C sources, diagrams.
NOT_CODE = ("text", "c", "cpp", "cmake", "ini")
_FENCE = re.compile(r"^```(.*)$")


@dataclass(frozen=True)
class Block:
    page: str      # relative to the repository root
    line: int      # the page's line number of the block's first line of code
    language: str  # the fence's info string ("python", "console", "{eval-rst}", ...)
    source: str

    @property
    def needs_npu(self) -> bool:
        return self.source.startswith(NPU_LABEL)

    @property
    def where(self) -> str:
        return f"{self.page}:{self.line}"


def blocks(page: str) -> list[Block]:
    """Every fenced block of ``page`` (a path relative to the root), in order."""
    found, lines, i = [], (ROOT / page).read_text(encoding="utf-8").splitlines(), 0
    while i < len(lines):
        opening = _FENCE.match(lines[i])
        if opening is None:
            i += 1
            continue
        end = lines.index("```", i + 1)   # a ValueError here is an unclosed fence
        found.append(Block(page, i + 2, opening[1].strip(), "\n".join(lines[i + 1:end]) + "\n"))
        i = end + 1
    return found


def run(python_blocks: list[dict[str, object]], backend: str) -> int:
    """Run each block in a namespace of its own, after ``set_backend(backend)`` (a block may
    have changed it); print each failure's traceback, with the page's line numbers. Returns
    the number of failures."""
    import aclnn_py

    failures = 0
    for data in python_blocks:
        block = Block(**data)  # type: ignore[arg-type]
        aclnn_py.set_backend(backend)
        print(f"--- {block.where} on {backend}", flush=True)
        # Padding with empty lines makes the traceback's line numbers the page's.
        code = compile("\n" * (block.line - 1) + block.source, block.page, "exec")
        try:
            exec(code, {"__name__": "__main__"})
        except BaseException:
            failures += 1
            print(f"FAILED: {block.where} on {backend}", flush=True)
            traceback.print_exc(file=sys.stdout)
    return failures


def as_json(selected: list[Block]) -> str:
    return json.dumps([asdict(b) for b in selected])


if __name__ == "__main__":
    sys.exit(min(run(json.load(sys.stdin), sys.argv[1]), 1))
