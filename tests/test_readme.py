"""README.md is for users and stays short; its install and test commands are what .ci/run runs.

Its code blocks, like those of docs/, are run by tests/docs/test_code_blocks.py, and its table
of what works on which backend is checked by tests/docs/test_backend_table.py.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()
CI = (ROOT / ".ci" / "run").read_text()
MAX_LINES = 200


def _section(title: str) -> str:
    """The text of README's ``## title`` section."""
    return README.split(f"\n## {title}\n", 1)[1].split("\n## ", 1)[0]


def _console_blocks(text: str) -> list[str]:
    return [body.strip() for body in re.findall(r"^```console\n(.*?)^```$", text, re.M | re.S)]


def test_readme_is_short():
    assert len(README.splitlines()) <= MAX_LINES


def test_readme_has_the_two_commands_ci_runs():
    install = _console_blocks(_section("Install and run an operator"))
    tests = _console_blocks(_section("Run the tests"))
    assert install == ["python -m pip install -e . && python examples/quickstart.py"]
    assert tests == ['python -m pip install -e ".[test]" torch==2.13.0 && python -m pytest -q --cov '
                     '&& python scripts/coverage_gate.py']
    assert f"\n{install[0]} || exit $?\n" in CI and f"\n{tests[0]} || exit $?\n" in CI


def test_readme_names_the_docs_build_ci_runs():
    command = re.search(r"^(python -m pip install -q -e \"\.\[docs\]\" && (python -m sphinx .*)) \|\| exit \$\?$",
                        CI, re.M)
    assert command is not None
    sphinx = command[2].replace(" -q", "")
    assert "-W" in sphinx and f"`{sphinx}`" in _section("Run the tests")
    assert '`python -m pip install -e ".[docs]"`' in _section("Run the tests")


def test_readme_links_exist():
    links = re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", README)
    assert links
    for link in links:
        assert not link.startswith("http"), link   # pages of this repository only
        assert (ROOT / link).is_file(), link


def test_ci_stops_at_any_failed_command(tmp_path):
    """bash's set -e ignores a failure inside an && list unless it is the list's last command:
    every && list of .ci/run must end with `|| exit $?`, and such a line does fail the script."""
    lists = [line for line in CI.splitlines() if "&&" in line and not line.lstrip().startswith("#")]
    assert lists and all(line.rstrip().endswith("|| exit $?") for line in lists), lists
    script = tmp_path / "run"
    script.write_text("set -euo pipefail\ntrue && false && true || exit $?\necho reached\n")
    done = subprocess.run(["bash", str(script)], capture_output=True, text=True)
    assert done.returncode == 1 and "reached" not in done.stdout
