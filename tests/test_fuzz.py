"""scripts/fuzz.py: a few thousand random calls through every public entry point end in a
result or AclnnError/TypeError/ValueError, crash nothing, and leave no handle or device memory;
among them caller streams, prepared executors, closes from other threads and forks."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "fuzz.py"


def test_fuzz_finds_nothing(sim_lib):
    proc = subprocess.run([sys.executable, str(SCRIPT), "--calls", "3000", "--seed", "20261124", "--chunk", "1500"],
                          capture_output=True, text=True, timeout=600, env=dict(os.environ, ACLNN_PY_BACKEND="sim"))
    summary = proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else ""
    assert proc.returncode == 0 and "calls=3000 findings=0" in summary, proc.stdout[-3000:] + proc.stderr[-6000:]
    kinds = json.loads(proc.stdout.split("calls per kind: ", 1)[1].splitlines()[0])
    assert set(kinds) == {"op", "tensor", "array", "capi", "stream", "other_thread", "fork"}, kinds
