"""Each operator is defined in the one package library CANN defines it in (the table in
aclnn_py/_ffi/op_packages.py): a program linked against another package's library fails to
link, as against CANN; linked against its own (or the aggregate libopapi.so) it links and
runs.  The binding's error for a missing operator names its library."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from aclnn_py._errors import AclnnError
from aclnn_py._ffi.op_packages import AGGREGATE_LIBRARY, operator_packages

IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")
PACKAGE_LIBRARIES = sorted({library for _p, library, _h in operator_packages().values()})

# Phase 1 with every argument 0/NULL: 161001 on the simulator, no device needed.  The operator's
# phase-1 function is called through a prototype of our own, so that one program serves all
# five operators; linking is what is tested.
PROGRAM = """\
#include <stdio.h>
#include "acl/acl.h"
#include "aclnnop/{header}"

int main(void)
{{
    /* Every parameter 0/NULL: on x86-64 and AArch64, integers and pointers take the same
     * argument registers and stack slots, so 17 null pointers cover every operator's list. */
    typedef int (*any_phase1)(void *, void *, void *, void *, void *, void *, void *, void *, void *,
                              void *, void *, void *, void *, void *, void *, void *, void *);
    any_phase1 phase1 = (any_phase1)aclnn{op}GetWorkspaceSize;
    int status = phase1(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);
    const char *text = aclGetRecentErrMsg();
    printf("%d %s\\n", status, text ? text : "");
    return status == 161001 ? 0 : 1;
}}
"""


def link(home: Path, tmp_path: Path, op: str, header: str, operator_library: str) -> subprocess.CompletedProcess:
    if shutil.which("gcc") is None:
        (pytest.fail if IN_CI else pytest.skip)("gcc not installed")
    source = tmp_path / f"{op}.c"
    source.write_text(PROGRAM.format(op=op, header=header))
    lib64 = home / "lib64"
    return subprocess.run(["gcc", "-std=c11", "-w", f"-I{home / 'include'}", f"-I{home / 'include' / 'aclnn'}",
                           str(source), str(lib64 / "libascendcl.so"), str(lib64 / "libnnopbase.so"),
                           str(lib64 / operator_library), "-o", str(tmp_path / op)],
                          capture_output=True, text=True)


@pytest.mark.parametrize("op", sorted(operator_packages()))
def test_an_operator_links_only_against_its_package_library(sim_home, c_env, tmp_path, op):
    home = Path(sim_home)
    _package, own, header = operator_packages()[op]
    for library in (own, AGGREGATE_LIBRARY):
        proc = link(home, tmp_path, op, header, library)
        assert proc.returncode == 0, proc.stderr
        run = subprocess.run([str(tmp_path / op)], env=c_env, capture_output=True, text=True, timeout=60)
        assert run.returncode == 0 and run.stdout.startswith("161001 "), run.stdout + run.stderr
    for library in PACKAGE_LIBRARIES:
        if library != own:
            proc = link(home, tmp_path, op, header, library)
            assert proc.returncode != 0, f"aclnn{op} linked against {library}"
            assert f"undefined reference to `aclnn{op}GetWorkspaceSize'" in proc.stderr, proc.stderr


def test_a_missing_operator_names_its_package_library(sim_lib):
    from aclnn_py._ffi import ffi as make_ffi
    from aclnn_py._ffi.discovery import Toolkit
    from aclnn_py._runtime.library import Library

    kit = sim_lib.toolkit
    nn_only = Library("sim", Toolkit(kit.home, kit.runtime, kit.base, (kit.lib_dir / "libopapi_nn.so",)), make_ffi())
    assert nn_only.has("aclnnConvolutionBackward")
    with pytest.raises(AclnnError) as info:
        nn_only.fn("aclnnIm2colBackwardGetWorkspaceSize")
    assert info.value.status == 200001
    assert "Im2colBackward is defined by ops-cv's libopapi_cv.so or the aggregate libopapi.so" in info.value.message
