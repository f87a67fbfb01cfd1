"""The headers under include/ are valid C11 and C++11 and keep the conventions the cffi
line filter relies on (see include/acl/acl_base_rt.h)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

INCLUDE = Path(__file__).resolve().parents[2] / "include"
HEADERS = sorted(p.relative_to(INCLUDE).as_posix() for p in INCLUDE.rglob("*.h"))

CANN_HEADERS = [
    "acl/acl.h",
    "acl/acl_base.h",
    "acl/acl_base_rt.h",
    "acl/acl_rt.h",
    "aclnn/acl_meta.h",
    "aclnn/aclnn_base.h",
    "aclnnop/aclnn_util.h",
    "aclnnop/aclnn_im2col_backward.h",
    "aclnnop/aclnn_max_unpool2d_backward.h",
    "aclnnop/aclnn_pad2d_backward.h",
    "aclnnop/aclnn_avgpool2d_backward.h",
    "aclnnop/aclnn_convolution_backward.h",
]


def test_toolkit_header_names_exist():
    missing = [h for h in CANN_HEADERS + ["aclsim/aclsim.h"] if not (INCLUDE / h).is_file()]
    assert not missing


def _compile(compiler: str, std: str, header: str, extra: list[str]) -> subprocess.CompletedProcess:
    if shutil.which(compiler) is None:
        pytest.skip(f"{compiler} not installed")
    source = f'#include "{header}"\n#include "{header}"\n'  # twice: include guards work
    language = "c" if compiler == "gcc" else "c++"
    return subprocess.run(
        [compiler, f"-std={std}", "-Wall", "-Wextra", "-Werror", *extra, "-fsyntax-only", f"-I{INCLUDE}",
         f"-I{INCLUDE / 'aclnn'}", "-x", language, "-"],
        input=source, capture_output=True, text=True,
    )


@pytest.mark.parametrize("header", HEADERS)
def test_header_is_c11(header):
    proc = _compile("gcc", "c11", header, [])
    assert proc.returncode == 0, proc.stderr


@pytest.mark.parametrize("header", HEADERS)
def test_header_is_cxx11(header):
    proc = _compile("g++", "c++11", header, [])
    assert proc.returncode == 0, proc.stderr


def test_all_op_headers_together_in_cxx():
    if shutil.which("g++") is None:
        pytest.skip("g++ not installed")
    source = "".join(f'#include "{h}"\n' for h in CANN_HEADERS + ["aclsim/aclsim.h"])
    source += "int main() { aclFormat f = aclFormat::ACL_FORMAT_NCHW; return f == ACL_FORMAT_ND; }\n"
    proc = subprocess.run(["g++", "-std=c++11", "-Wall", "-Werror", "-fsyntax-only", f"-I{INCLUDE}",
                           f"-I{INCLUDE / 'aclnn'}", "-x", "c++", "-"], input=source, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


_FUNCTION = re.compile(r"^(ACL_FUNC_VISIBILITY|ACLNN_API) [^;]*\([^;]*\);$")


@pytest.mark.parametrize("header", HEADERS)
def test_line_filter_conventions(header):
    """One-line prototypes with a visibility macro; only the extern "C" #ifdef blocks;
    integer #defines as plain literals."""
    text = re.sub(r"/\*.*?\*/", "", (INCLUDE / header).read_text(), flags=re.S)
    lines = [line.rstrip() for line in text.splitlines()]
    depth = 0
    guard_blocks = 0
    for number, line in enumerate(lines, 1):
        where = f"{header}:{number}: {line}"
        stripped = line.strip()
        if stripped.startswith("#"):
            directive = stripped[1:].strip()
            if directive.startswith("if"):
                depth += 1
                if directive.replace(" ", "") == "ifdef__cplusplus":
                    guard_blocks += 1
                    assert lines[number].strip() in ('extern "C" {', "}"), where
            elif directive.startswith("endif"):
                depth -= 1
            elif directive.startswith("define") and depth == 1:
                parts = directive.split()
                if len(parts) == 3 and not parts[2].startswith(("__attribute__", '"')):
                    assert re.fullmatch(r"-?(0[xX][0-9a-fA-F]+|\d+)[uUlL]*", parts[2]), where
            elif directive.startswith("include"):
                assert all(not l.strip() or l.strip().startswith("#") for l in lines[: number - 1]
                           if not l.strip().startswith("//")), f"#include after declarations: {where}"
            continue
        # A deprecation marker (on its own line before a prototype, or before an enum member's
        # value or a struct member) is dropped by the line filter like the visibility macros.
        stripped = re.sub(r'ACL_DEPRECATED_MESSAGE\("[^"]*"\) ?', "", stripped)
        if not stripped:
            continue
        if "(" in stripped and stripped.endswith(";") and not stripped.startswith("typedef"):
            assert _FUNCTION.match(stripped), f"not a one-line prototype with a visibility macro: {where}"
        if "(" in stripped and not stripped.endswith(";") and not stripped.startswith(("typedef", "}")):
            pytest.fail(f"a declaration spans lines: {where}")
    assert depth == 0, header
    assert guard_blocks in (0, 2), f"{header}: extern \"C\" guards must be two #ifdef __cplusplus blocks"
