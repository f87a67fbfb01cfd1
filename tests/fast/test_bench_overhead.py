"""scripts/bench.py's overhead section runs every row (the C programs built against the
simulator toolkit, the op function and call on each path, the prepared run) and leaves the
fast path as it found it. Timings are printed, never asserted."""

from __future__ import annotations

import re

from aclnn_py import _fast
from helpers import load_script


def test_overhead_rows(sim_lib, capsys):
    api = _fast.api_for(sim_lib)
    load_script("bench").overhead(rounds=2, calls=20)
    out = capsys.readouterr().out
    rows = ["C program", "C program, own process", "op function", "call", "op function, ABI mode", "call, ABI mode",
            "C repeatable", "C repeatable, own process", "prepared run", "C program, device buffers",
            "op function, device tensors", "call, device tensors", "graph replay, per operator"] + (["op function, no plan"] if api is not None else [])
    for row in rows:
        assert re.search(rf"^  {re.escape(row)} +\d+\.\d+ us", out, re.M), (row, out)
    assert len(re.findall(r"\d+\.\dx +\d+\.\dx C (program|repeatable)", out)) == len(rows) - 5, out
    assert re.search(r"^  op function, device tensors over op function \(NumPy arguments\): per-round median "
                     r"\d+\.\d+x$", out, re.M), out
    assert sim_lib.fast_api is api  # restored
    if _fast.entry() is not None:
        assert _fast.entry().set_plans(True) is True  # plans were left on
