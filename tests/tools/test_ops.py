"""python -m aclnn_py ops: the operators of a toolkit directory with CANN's layout (here, the
header corpus of tests/ffi plus libraries built for the test), read without loading anything."""

from __future__ import annotations

import json
import os
import shutil
import subprocess

import pytest

from aclnn_py._ffi.elf import exported_functions

from corpus import ALL_OPERATORS, BROKEN, BROKEN_TYPE, CORPUS

PAIR = """\
__attribute__((visibility("default"))) int aclnn{op}GetWorkspaceSize(void) {{ return 0; }}
__attribute__((visibility("default"))) int aclnn{op}(void) {{ return 0; }}
"""

CUSTOM_HEADER = """\
#include "aclnn/aclnn_base.h"
__attribute__((visibility("default"))) aclnnStatus aclnnCorpusPlainGetWorkspaceSize(const aclTensor *self,
    aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor);
__attribute__((visibility("default"))) aclnnStatus aclnnCorpusPlain(void *workspace, uint64_t workspaceSize,
    aclOpExecutor *executor, aclrtStream stream);
__attribute__((visibility("default"))) aclnnStatus aclnnCustomOnlyGetWorkspaceSize(aclTensor *out,
    uint64_t *workspaceSize, aclOpExecutor **executor);
__attribute__((visibility("default"))) aclnnStatus aclnnCustomOnly(void *workspace, uint64_t workspaceSize,
    aclOpExecutor *executor, aclrtStream stream);
"""


def compile_library(tmp_path, library, source: str):
    if shutil.which("gcc") is None:
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail("gcc is needed to build the fake libraries, and CI must have it")
        pytest.skip("gcc is needed to build the fake libraries")
    library.parent.mkdir(parents=True, exist_ok=True)
    c = tmp_path / f"{library.parent.name}_{library.stem}.c"
    c.write_text(source)
    subprocess.run(["gcc", "-shared", "-fPIC", "-fvisibility=hidden", str(c), "-o", str(library)], check=True)


@pytest.fixture
def corpus_home(tmp_path):
    """A CANN home: the corpus as include/aclnnop, a libopapi.so exporting two of its operators,
    runtime and nnopbase as files that are not even libraries (ops never loads them)."""
    home = tmp_path / "cann"
    shutil.copytree(CORPUS, home / "include" / "aclnnop")
    for name in ("libascendcl.so", "libnnopbase.so"):
        (home / "lib64").mkdir(exist_ok=True)
        (home / "lib64" / name).write_bytes(b"")
    compile_library(tmp_path, home / "lib64" / "libopapi.so",
                    PAIR.format(op="CorpusPlain") + PAIR.format(op="CorpusBroken")
                    + '__attribute__((visibility("default"))) int aclnnCorpusModeGetWorkspaceSize(void) { return 0; }\n')
    return home


def ops_env(home, **extra):
    env = {"ASCEND_HOME_PATH": str(home), "ACLNN_PY_BACKEND": "npu", "ASCEND_CUSTOM_OPP_PATH": "",
           "ASCEND_OPP_PATH": str(home / "opp")}
    env.update(extra)
    return env


def test_json_lists_every_operator_of_the_corpus(cli, corpus_home):
    done = cli("ops", "--json", env=ops_env(corpus_home))
    assert done.returncode == 0, done.stderr
    entries = json.loads(done.stdout)
    assert [e["name"] for e in entries] == ALL_OPERATORS
    assert all(set(e) == {"name", "header", "library", "declared", "error"} for e in entries)
    by_name = {e["name"]: e for e in entries}
    for name, entry in by_name.items():
        assert entry["declared"] == (name != BROKEN), entry
        assert (entry["error"] == "") == (name != BROKEN)
    assert BROKEN_TYPE in by_name[BROKEN]["error"] and "GetWorkspaceSize" in by_name[BROKEN]["error"]
    libopapi = str(corpus_home / "lib64" / "libopapi.so")
    assert by_name["aclnnCorpusPlain"]["library"] == libopapi and by_name[BROKEN]["library"] == libopapi
    assert by_name["aclnnCorpusMode"]["library"] == libopapi  # exports only the first phase
    assert by_name["aclnnCorpusOld"]["library"] is None
    assert by_name["aclnnCorpusPlain"]["header"] == str(corpus_home / "include" / "aclnnop" / "aclnn_corpus_plain.h")


def test_table(cli, corpus_home):
    done = cli("ops", env=ops_env(corpus_home))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith(f"toolkit: {corpus_home} (backend npu, from $ASCEND_HOME_PATH)")
    plain = next(line for line in lines if line.startswith("aclnnCorpusPlain "))
    assert plain.split() == ["aclnnCorpusPlain", "yes", "lib64/libopapi.so", "include/aclnnop/aclnn_corpus_plain.h"]
    assert next(line for line in lines if line.startswith("aclnnCorpusOld ")).split()[1:3] == ["yes", "-"]
    assert f"  {BROKEN}: {BROKEN}GetWorkspaceSize: unknown type {BROKEN_TYPE}" in done.stdout
    assert lines[-1] == f"{len(ALL_OPERATORS)} operators: {len(ALL_OPERATORS) - 1} declarable, 3 exported by a library"


@pytest.mark.parametrize("names, status", [
    (["CorpusPlain"], 0),
    (["aclnnCorpusPlainGetWorkspaceSize"], 0),
    (["aclnnCorpusOld"], 1),            # declared, but no library exports it
    (["CorpusPlain", BROKEN], 1),       # exported, but not declarable
    (["aclnnNoSuchOperator"], 1),
])
def test_names_and_exit_status(cli, corpus_home, names, status):
    done = cli("ops", "--json", *names, env=ops_env(corpus_home))
    assert done.returncode == status, done.stderr
    entries = json.loads(done.stdout)
    assert len(entries) == len(names)
    if names == ["aclnnNoSuchOperator"]:
        assert entries[0] == {"name": "aclnnNoSuchOperator", "header": None, "library": None, "declared": False,
                              "error": "no header declares aclnnNoSuchOperatorGetWorkspaceSize"}


def test_custom_package_comes_first(cli, corpus_home, tmp_path):
    package = tmp_path / "custom"
    (package / "op_api" / "include").mkdir(parents=True)
    (package / "op_api" / "include" / "aclnn_custom.h").write_text(CUSTOM_HEADER)
    compile_library(tmp_path, package / "op_api" / "lib" / "libcust_opapi.so",
                    PAIR.format(op="CorpusPlain") + PAIR.format(op="CustomOnly"))
    done = cli("ops", "--json", env=ops_env(corpus_home, ASCEND_CUSTOM_OPP_PATH=str(package)))
    assert done.returncode == 0, done.stderr
    entries = json.loads(done.stdout)
    assert [e["name"] for e in entries[:2]] == ["aclnnCorpusPlain", "aclnnCustomOnly"]
    assert len(entries) == len(ALL_OPERATORS) + 1
    for entry in entries[:2]:
        assert entry["declared"] and entry["header"] == str(package / "op_api" / "include" / "aclnn_custom.h")
        assert entry["library"] == str(package / "op_api" / "lib" / "libcust_opapi.so")
    text = cli("ops", env=ops_env(corpus_home, ASCEND_CUSTOM_OPP_PATH=str(package))).stdout
    assert f"custom operator package: {package} (from $ASCEND_CUSTOM_OPP_PATH)" in text


def test_the_package_library_is_named_before_the_aggregate(cli, corpus_home, tmp_path):
    """CANN 8.5+ ships each package's libopapi_<pkg>.so beside libopapi.so, which aggregates them
    (and is searched first when loading): ops names the package that defines an operator."""
    lib64 = corpus_home / "lib64"
    compile_library(tmp_path, lib64 / "libopapi_nn.so", PAIR.format(op="CorpusPlain"))
    compile_library(tmp_path, lib64 / "libopapi_math.so",
                    '__attribute__((visibility("default"))) int aclnnCorpusModeGetWorkspaceSize(void) { return 0; }\n')
    done = cli("ops", "--json", env=ops_env(corpus_home))
    assert done.returncode == 0, done.stderr
    by_name = {e["name"]: e for e in json.loads(done.stdout)}
    assert by_name["aclnnCorpusPlain"]["library"] == str(lib64 / "libopapi_nn.so")
    assert by_name["aclnnCorpusMode"]["library"] == str(lib64 / "libopapi_math.so")
    assert by_name[BROKEN]["library"] == str(lib64 / "libopapi.so")  # in no package library


def test_no_toolkit(cli, tmp_path):
    done = cli("ops", "--backend", "npu", env={"ACLNN_PY_ASCEND_HOME": str(tmp_path / "none")})
    assert done.returncode == 1 and "no CANN toolkit found" in done.stderr and done.stdout == ""


def test_exported_functions_reads_the_dynamic_symbol_table(tmp_path):
    library = tmp_path / "lib" / "libx.so"
    compile_library(tmp_path, library, PAIR.format(op="Shown") + "int aclnnHidden(void) { return 1; }\n"
                    '__attribute__((visibility("default"))) int aclnnData = 3;\n')
    assert {"aclnnShownGetWorkspaceSize", "aclnnShown"} <= exported_functions(library)
    assert "aclnnHidden" not in exported_functions(library) and "aclnnData" not in exported_functions(library)
    (tmp_path / "not.so").write_text("not an ELF file")
    with pytest.raises(ValueError):
        exported_functions(tmp_path / "not.so")


LONG = "v" * 300  # longer than any file name may be


def test_a_damaged_library_is_reported_and_the_rest_listed(cli, corpus_home, tmp_path):
    """A truncated ELF, and one whose section table lies past its end: a warning each."""
    lib64 = corpus_home / "lib64"
    compile_library(tmp_path, lib64 / "libopapi_nn.so", PAIR.format(op="CorpusPlain"))
    data = (lib64 / "libopapi_nn.so").read_bytes()
    (lib64 / "libopapi_nn.so").write_bytes(data[: len(data) // 2])
    past = bytearray(data)
    past[0x28:0x30] = (len(data) + 4096).to_bytes(8, "little")
    (lib64 / "libopapi_cv.so").write_bytes(bytes(past))
    done = cli("ops", "--json", env=ops_env(corpus_home))
    assert done.returncode == 0, done.stderr
    by_name = {e["name"]: e for e in json.loads(done.stdout)}
    assert by_name["aclnnCorpusPlain"]["library"] == str(lib64 / "libopapi.so")
    assert f"warning: {lib64 / 'libopapi_nn.so'}: a truncated ELF file" in done.stderr
    assert f"{lib64 / 'libopapi_cv.so'}: a truncated ELF file: the section table lies past its end" in done.stderr
    assert "Traceback" not in done.stderr and "UserWarning" not in done.stderr  # told plainly, once


def test_hostile_package_names_are_reported_and_skipped(cli, corpus_home, tmp_path):
    opp = corpus_home / "opp"
    (opp / "vendors").mkdir(parents=True)
    (opp / "vendors" / "config.ini").write_text(f"load_priority={LONG}\n")
    plain = cli("ops", "--json", env=ops_env(corpus_home))
    done = cli("ops", "--json", env=ops_env(corpus_home, ASCEND_CUSTOM_OPP_PATH=str(tmp_path / LONG)))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == json.loads(plain.stdout)
    assert done.stderr.count("File name too long; skipped") == 2, done.stderr


def test_an_unreadable_header_is_reported_and_the_rest_listed(corpus_home, monkeypatch):
    """(root reads any file whatever its mode: the refusal is simulated.)"""
    from aclnn_py._ffi.discovery import toolkit_at
    from aclnn_py.tools import ops

    unreadable = corpus_home / "include" / "aclnnop" / "aclnn_corpus_plain.h"
    real = ops.read_operator_header

    def refusing(path):
        if path == unreadable:
            raise PermissionError(13, "Permission denied", str(path))
        return real(path)

    monkeypatch.setattr(ops, "read_operator_header", refusing)
    monkeypatch.setenv("ASCEND_CUSTOM_OPP_PATH", "")
    toolkit, _ = toolkit_at(corpus_home)
    with pytest.warns(UserWarning, match=f"{unreadable}: Permission denied; its operators are not listed"):
        entries = ops.collect(toolkit)
    assert [e.name for e in entries] == [op for op in ALL_OPERATORS if op != "aclnnCorpusPlain"]
