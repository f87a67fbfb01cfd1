"""nnopbase's address-refresh and dump functions, for real: a test operator with tensor-list
arguments (tests/sim/tensor_addr/fake_sum_op.c, built against the simulator's internal
interface) runs on a repeatable executor whose tensors are re-pointed with aclSetTensorAddr,
aclSetDynamic{Input,Output,}TensorAddr and the capitalised aliases; what phase 2 computes
shows which addresses it used.  aclDumpOpTensors writes the tensors' data when aclInit's
configuration turns the dump on, and nothing when it is off."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from aclnn_py.sim import _build

HERE = Path(__file__).resolve().parent / "tensor_addr"
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")


def test_set_tensor_addr_family_and_dump(sim_home, c_env, tmp_path):
    if shutil.which("gcc") is None:
        (pytest.fail if IN_CI else pytest.skip)("gcc not installed")
    home = Path(sim_home)
    lib64 = home / "lib64"
    op = tmp_path / "libfake_sum.so"
    include = [f"-I{home / 'include'}", f"-I{home / 'include' / 'aclnn'}"]
    subprocess.run(["gcc", "-std=c11", "-shared", "-fPIC", *include, f"-I{_build.SRC_DIR}",
                    str(HERE / "fake_sum_op.c"), str(lib64 / "libaclsim.so"), "-o", str(op)], check=True)
    exe = tmp_path / "tensor_addr_test"
    subprocess.run(["gcc", "-std=c11", "-Wall", "-Werror", *include, str(HERE / "tensor_addr_test.c"), str(op),
                    str(lib64 / "libascendcl.so"), str(lib64 / "libnnopbase.so"), f"-Wl,-rpath,{tmp_path}",
                    f"-Wl,-rpath-link,{lib64}",
                    "-o", str(exe)], check=True)
    dump_dir = tmp_path / "dump"
    dump_dir.mkdir()
    config = tmp_path / "acl.json"
    config.write_text(json.dumps({"dump": {"dump_path": str(dump_dir), "dump_list": [], "dump_mode": "all"}}))
    proc = subprocess.run([str(exe), str(config)], env=c_env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and proc.stdout.strip().endswith("PASS"), proc.stdout + proc.stderr

    ramp = np.arange(4, dtype=np.float32)
    written = {p.name: np.fromfile(p, dtype=np.float32) for p in dump_dir.iterdir()}
    # At the dump xs[0] is back at its first block (10 + i), bias at the second (5 + i), and
    # outs[0] at the block run 3 wrote (xs[0] = 300 + i at the time, + bias).
    assert sorted(written) == ["FakeSum.fake_sum.input.0.bin", "FakeSum.fake_sum.input.1.bin",
                               "FakeSum.fake_sum.output.0.bin"]
    np.testing.assert_array_equal(written["FakeSum.fake_sum.input.0.bin"], 10 + ramp)
    np.testing.assert_array_equal(written["FakeSum.fake_sum.input.1.bin"], 5 + ramp)
    np.testing.assert_array_equal(written["FakeSum.fake_sum.output.0.bin"], 305 + 2 * ramp)
