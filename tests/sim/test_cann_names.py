"""Names as CANN has them: a program written against the simulator's include/ uses only
names CANN's headers declare, in the headers CANN declares them in (aclrtGetVersion and the
ACL_*_VERSION macros, all of aclrtMemAttr, the ACLNN_ERR_* codes of opdev/op_errno.h), and
aclnn_py's status table agrees with the headers."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from aclnn_py import _errors
from aclnn_py._ffi import ffi

INCLUDE = Path(__file__).resolve().parents[2] / "include"
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")


def compile_cxx(source: str, tmp_path: Path) -> subprocess.CompletedProcess:
    """Compile (no link) a C++11 program with the official samples' include dirs."""
    if shutil.which("g++") is None:
        (pytest.fail if IN_CI else pytest.skip)("g++ not installed")
    path = tmp_path / "program.cpp"
    path.write_text(source)
    return subprocess.run(["g++", "-std=c++11", "-Wall", "-Werror", "-fsyntax-only", f"-I{INCLUDE}",
                           f"-I{INCLUDE / 'aclnn'}", str(path)], capture_output=True, text=True)


def test_status_codes_equal_the_headers():
    names = [n for n in vars(_errors) if n.startswith(("ACL_", "ACLNN_")) and isinstance(getattr(_errors, n), int)]
    assert len(names) > 60
    constants = ffi().dlopen(None)  # the declarations' integer constants, no simulator needed
    mismatched = {n: (getattr(_errors, n), getattr(constants, n, None)) for n in names
                  if getattr(_errors, n) != getattr(constants, n, None)}
    assert mismatched == {}


NEW_NAMES = """
#include <cstdio>
#include "acl/acl.h"
#include "aclnnop/aclnn_avgpool2d_backward.h"
#include "opdev/op_errno.h"

int main()
{
    int32_t major = 0, minor = 0, patch = 0;
    aclError ret = aclrtGetVersion(&major, &minor, &patch);
    static_assert(ACL_MAJOR_VERSION == 1 && ACL_MINOR_VERSION == 17 && ACL_PATCH_VERSION == 0, "CANN 9.1's version");
    static_assert(ACL_HBM_MEM_HUGE1G == 10 && ACL_HBM_MEM_P2P_HUGE1G == 11 && ACL_MEM_NORMAL == 12 &&
                  ACL_MEM_HUGE == 13 && ACL_MEM_HUGE1G == 14 && ACL_MEM_P2P_NORMAL == 15 &&
                  ACL_MEM_P2P_HUGE == 16 && ACL_MEM_P2P_HUGE1G == 17, "aclrtMemAttr");
    size_t freeBytes = 0, total = 0;
    aclrtGetMemInfo(ACL_MEM_P2P_HUGE1G, &freeBytes, &total);
    static_assert(ACLNN_ERR_PARAM_INVALID == 161002 && ACLNN_ERR_INNER_KEY_CONFLICT == 561105 &&
                  ACLNN_ERR_INNER_KEY_CONFILICT == 561105, "op_errno.h");
    aclnnStatus status = ACLNN_SUCCESS;
    std::printf("%d %d\\n", ret, status);
    return 0;
}
"""


def test_a_program_using_cann_names_compiles(tmp_path):
    proc = compile_cxx(NEW_NAMES, tmp_path)
    assert proc.returncode == 0, proc.stderr


@pytest.mark.parametrize("source, missing", [
    # Not a CANN function (CANN's is aclrtGetVersion).
    ('#include "acl/acl.h"\nint main() { int32_t a, b, c; return aclGetVersion(&a, &b, &c); }\n', "aclGetVersion"),
    # The status codes live in opdev/op_errno.h, which no aclnn header includes.
    ('#include "aclnnop/aclnn_avgpool2d_backward.h"\nint main() { return ACLNN_ERR_PARAM_INVALID; }\n',
     "ACLNN_ERR_PARAM_INVALID"),
    # ACLNN_API comes from aclnnop/aclnn_util.h, not from aclnn_base.h.
    ('#include "aclnn/aclnn_base.h"\nACLNN_API int f();\nint main() { return 0; }\n', "ACLNN_API"),
], ids=["aclGetVersion", "ACLNN_ERR-without-op_errno", "ACLNN_API-from-aclnn_base"])
def test_names_cann_does_not_declare_there_do_not_compile(tmp_path, source, missing):
    proc = compile_cxx(source, tmp_path)
    assert proc.returncode != 0 and missing in proc.stderr, proc.stderr
