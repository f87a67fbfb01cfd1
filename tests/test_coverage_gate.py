"""scripts/coverage_gate.py: passes at the floor, fails below it or without data."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _gate():
    spec = importlib.util.spec_from_file_location("coverage_gate", ROOT / "scripts" / "coverage_gate.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_gate(monkeypatch, tmp_path, capsys):
    gate = _gate()
    data = tmp_path / ".coverage"
    assert gate.main(["--data-file", str(data)]) == 2
    data.write_text("")
    monkeypatch.setattr(gate, "module_coverage", lambda data_file: {"aclnn_py/a.py": 90.0, "aclnn_py/b.py": 100.0})
    assert gate.main(["--data-file", str(data)]) == 0
    monkeypatch.setattr(gate, "module_coverage", lambda data_file: {"aclnn_py/a.py": 89.9, "aclnn_py/b.py": 100.0})
    assert gate.main(["--data-file", str(data)]) == 1
    out = capsys.readouterr()
    assert "aclnn_py/a.py" in out.out and "BELOW" in out.out and "below 90%" in out.err
    assert gate.main(["--data-file", str(data), "--floor", "80"]) == 0


def test_module_coverage_reads_real_data(tmp_path, monkeypatch):
    import coverage

    gate = _gate()
    package = tmp_path / "aclnn_py"
    package.mkdir()
    module = package / "m.py"
    module.write_text("def f(x):\n    if x:\n        return 1\n    return 2\n")
    monkeypatch.chdir(tmp_path)
    # Data as a run that called f(1) records it (no second tracer inside this measured session).
    data = coverage.CoverageData(basename=str(tmp_path / ".coverage"))
    data.add_lines({str(module): [1, 2, 3]})
    data.write()
    figures = gate.module_coverage(str(tmp_path / ".coverage"))
    assert list(figures) == ["aclnn_py/m.py"] and figures["aclnn_py/m.py"] == 75.0
