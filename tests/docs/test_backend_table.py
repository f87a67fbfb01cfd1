"""README's "What works where" table, cell by cell, against what each backend does.

Every cell starts with "yes" or "no"; for each row the feature is tried on each backend
(tests/docs/backend_probes.py for the Python API, the tools as commands) and the outcome must
be the cell's. Some cells say more, and that is checked too (which status a "no" raises, what
`call` reaches beyond aclnn_py's operators, what selftest compares with, what bench times).

The npu column is tried on the ``npu`` backend over the simulator's libraries laid out as an
installed CANN (``$ACLNN_PY_ASCEND_HOME``), with the tests' operators beyond aclnn_py's
(``aclnnFakeScalarInfo`` & co.) installed as a custom operator package: the binding's npu code path,
on libraries that answer as CANN's do. (There is no NPU here.)
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from doc_blocks import ROOT
from helpers import build_fake_operator_package

IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")
PROBES = Path(__file__).with_name("backend_probes.py")
COLUMNS = ("numpy", "sim", "npu")


def _table() -> dict[str, dict[str, str]]:
    readme = (ROOT / "README.md").read_text()
    section = readme.split("\n## What works where\n", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("|")]
    header = [cell.strip() for cell in rows[0].strip("|").split("|")]
    assert header[1:] == [f"`{c}`" for c in COLUMNS], header
    table = {}
    for row in rows[2:]:
        cells = [cell.strip() for cell in row.strip("|").split("|")]
        table[cells[0]] = dict(zip(COLUMNS, cells[1:], strict=True))
    return table


TABLE = _table()


def _says(cell: str) -> bool:
    word = re.match(r"(yes|no)\b", cell)
    assert word is not None, f"a cell starts with yes or no: {cell!r}"
    return word[1] == "yes"


def _environment(backend: str, sim_lib, tmp_path: Path) -> dict[str, str]:
    env = dict(os.environ, ACLNN_PY_BACKEND=backend)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    for name in ("ACLNN_PY_ASCEND_HOME", "ASCEND_CUSTOM_OPP_PATH", "ACLSIM_DEVICE_COUNT", "ACLNN_PY_DEVICE"):
        env.pop(name, None)
    if backend == "npu":
        if shutil.which("gcc") is None:
            (pytest.fail if IN_CI else pytest.skip)("gcc is needed to build the stand-in operator package")
        home = Path(sim_lib.toolkit.home)
        env.update(ACLNN_PY_ASCEND_HOME=str(home),
                   ASCEND_CUSTOM_OPP_PATH=str(build_fake_operator_package(home, tmp_path / "package")))
    return env


def _tool(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "aclnn_py", *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=300)


def test_every_row_is_checked():
    assert set(TABLE) == set(ROWS), set(TABLE) ^ set(ROWS)


@pytest.mark.parametrize("backend", COLUMNS)
def test_the_table_is_what_the_backend_does(sim_lib, backend, tmp_path):
    env = _environment(backend, sim_lib, tmp_path)
    done = subprocess.run([sys.executable, str(PROBES), backend], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    probes = json.loads(done.stdout)
    for row, check in ROWS.items():
        cell = TABLE[row][backend]
        check(cell, _says(cell), probes, env, backend)


def _works(probes, name: str, says: bool, cell: str) -> None:
    outcome = probes[name]
    assert outcome["works"] == says, (cell, outcome)
    status = re.search(r"`AclnnError` (\d+)", cell)
    if not says and status:
        assert (outcome["error"], outcome["status"]) == ("AclnnError", int(status[1])), (cell, outcome)


def _probe(name: str):
    return lambda cell, says, probes, env, backend: _works(probes, name, says, cell)


def _call(cell, says, probes, env, backend):
    _works(probes, "call", says, cell)
    # "aclnn_py's operators": nothing beyond them; "any the installed CANN declares": a test operator too.
    beyond = "aclnn_py's operators" not in cell
    assert probes["call_beyond"]["works"] == beyond, (cell, probes["call_beyond"])


def _stream(cell, says, probes, env, backend):
    _works(probes, "stream", says, cell)
    assert probes["stream_checked"]["works"], probes["stream_checked"]


def _set_device(cell, says, probes, env, backend):
    _works(probes, "set_device", says, cell)
    if "recorded only" in cell:
        assert probes["second_device"]["works"], probes["second_device"]
    if "(default 1)" in cell:
        assert probes["second_device"]["status"] == 107001, probes["second_device"]


def _info(cell, says, probes, env, backend):
    done = _tool(env, "info")
    assert (done.returncode == 0 and f"default backend: {backend}" in done.stdout) == says, done.stdout + done.stderr


def _ops(cell, says, probes, env, backend):
    done = _tool(env, "ops", "--backend", backend)
    assert (done.returncode == 0 and "aclnnAvgPool2dBackward" in done.stdout) == says, done.stdout + done.stderr


def _selftest(cell, says, probes, env, backend):
    done = _tool(env, "selftest", "--backend", backend, "--op", "reflection_pad2d_backward")
    assert (done.returncode == 0) == says, done.stdout + done.stderr
    reference = "PyTorch" if "against PyTorch" in cell else "numpy"
    assert f"{backend} vs {reference}" in done.stdout.splitlines()[0], done.stdout


def _bench(cell, says, probes, env, backend):
    done = _tool(env, "bench", "reflection_pad2d_backward", "--backend", backend, "--repeats", "2", "--warmup", "1")
    assert (done.returncode == 0) == says, done.stdout + done.stderr
    clock = re.search(r"(wall|device) time", cell)
    assert clock is not None and f"{clock[0]} " in done.stdout, (cell, done.stdout)


#: README's row (its first cell, verbatim) -> how to check its cells.
ROWS = {
    "the operator functions (`avg_pool2d_backward`, ...)": _probe("operator_functions"),
    "`call(name, ...)`: an operator by its C name": _call,
    "`prepare(name, ...)`: set up once, run many times": _probe("prepare"),
    "`Tensor`: data kept on the device between calls": _probe("tensor"),
    "`capi`: the C API, function by function": _probe("capi"),
    "`stream=`: queue the work on your stream": _stream,
    "`set_device(i)`": _set_device,
    "`compare(op, ..., backends=(a, b))`": _probe("compare"),
    "`python -m aclnn_py info`": _info,
    "`python -m aclnn_py ops`": _ops,
    "`python -m aclnn_py selftest`": _selftest,
    "`python -m aclnn_py bench OP`": _bench,
}
