"""scripts/op_cost.py: the cost-per-operator table reads each operator's files from its registration."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))
import op_cost  # noqa: E402


def test_counts_code_lines_only(tmp_path):
    source = tmp_path / "x.c"
    source.write_text("/* a\n * block\n */\n#include <a.h>\n\n// note\nint f(void)\n{\n    return 0; /* end */\n}\n")
    assert op_cost.code_lines(source) == 5
    py = tmp_path / "x.py"
    py.write_text('"""doc"""\n\n# comment\nx = 1\n')
    assert op_cost.code_lines(py) == 2


def test_table_and_summary():
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "op_cost.py"), "--exclude", "cast"], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    rows = {m.group(1): (int(m.group(2)), int(m.group(3))) for m in
            re.finditer(r"^(\w+) +(\d+) +(\d+) +\d+$", done.stdout, re.M)}
    assert rows["relu"][0] > 20 and rows["relu"][1] > 10       # its module and relu.c
    assert rows["adds"][1] == rows["add"][1]                     # add.c shared out between Add and Adds
    assert "cast" not in rows and len(rows) >= 12
    assert re.search(r"^Python: median [\d.]+, largest \d+ \(\w+\) over \d+ operators$", done.stdout, re.M)
    assert "aclnn_py/sim/src/ops/elementwise.c" in done.stdout.splitlines()[-1]
    assert op_cost.c_file("NoSuchOperator") is None
