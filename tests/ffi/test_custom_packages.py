"""Custom operator packages (``libcust_opapi.so``), found as CANN and torch_npu find them:
``$ASCEND_CUSTOM_OPP_PATH`` entries first, then ``$ASCEND_OPP_PATH/vendors`` in ``config.ini``
``load_priority`` order, all before the toolkit's own operator libraries."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from aclnn_py import AclnnError
from aclnn_py._ffi import discovery
from aclnn_py._ffi.discovery import CustomPackage, Toolkit, custom_packages

HEADER = """\
#ifndef CUSTOM_{guard}_H_
#define CUSTOM_{guard}_H_
#include "aclnn/aclnn_base.h"
#ifdef __cplusplus
extern "C" {{
#endif
__attribute__((visibility("default"))) aclnnStatus aclnn{op}GetWorkspaceSize(const aclTensor *self, double factor,
    aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor);
__attribute__((visibility("default"))) aclnnStatus aclnn{op}(void *workspace, uint64_t workspaceSize,
    aclOpExecutor *executor, aclrtStream stream);
#ifdef __cplusplus
}}
#endif
#endif
"""

# Each library tells who answered through the workspace size it reports.
SOURCE = """\
#include <stddef.h>
#include <stdint.h>
typedef struct aclTensor aclTensor;
typedef struct aclOpExecutor aclOpExecutor;
__attribute__((visibility("default"))) int32_t aclnn{op}GetWorkspaceSize(const aclTensor *self, double factor,
    aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor)
{{
    (void)self; (void)factor; (void)out;
    *workspaceSize = {size};
    *executor = NULL;
    return 0;
}}
__attribute__((visibility("default"))) int32_t aclnn{op}(void *workspace, uint64_t workspaceSize,
    aclOpExecutor *executor, void *stream)
{{
    (void)workspace; (void)executor; (void)stream;
    return workspaceSize == {size} ? 0 : 161002;
}}
"""


@pytest.fixture(autouse=True)
def clean_env(monkeypatch):
    for var in (discovery.CUSTOM_PATH_VAR, discovery.OPP_PATH_VAR):
        monkeypatch.delenv(var, raising=False)


def _compile(tmp_path, library, ops_sizes):
    if shutil.which("gcc") is None:
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail("gcc is needed to build the fake operator libraries, and CI must have it")
        pytest.skip("gcc is needed to build the fake operator libraries")
    source = tmp_path / f"{library.parent.parent.parent.name}_{library.stem}.c"
    source.write_text("".join(SOURCE.format(op=op, size=size) for op, size in ops_sizes))
    library.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run(["gcc", "-std=c11", "-shared", "-fPIC", str(source), "-o", str(library)], check=True)


def make_package(tmp_path, root, ops_sizes):
    """A custom package at ``root``: op_api/include/aclnn_<op>.h and op_api/lib/libcust_opapi.so."""
    include = root / "op_api" / "include"
    include.mkdir(parents=True)
    for op, _ in ops_sizes:
        (include / f"aclnn_{op.lower()}.h").write_text(HEADER.format(guard=op.upper(), op=op))
    _compile(tmp_path, root / "op_api" / "lib" / "libcust_opapi.so", ops_sizes)
    return root


def make_home(tmp_path, vendors_priority=None):
    """A toolkit home whose operator library exports FakeScale (workspace 64)."""
    home = tmp_path / "cann"
    (home / "include" / "aclnnop").mkdir(parents=True)
    (home / "include" / "aclnnop" / "aclnn_fake_scale.h").write_text(HEADER.format(guard="FAKE", op="FakeScale"))
    _compile(tmp_path, home / "lib64" / "libopapi_fake.so", [("FakeScale", 64)])
    if vendors_priority is not None:
        (home / "opp" / "vendors").mkdir(parents=True)
        (home / "opp" / "vendors" / "config.ini").write_text(f"load_priority={','.join(vendors_priority)}\n")
    return home


def load(sim_lib, home):
    from aclnn_py._ffi import ffi
    from aclnn_py._runtime.library import Library

    kit = sim_lib.toolkit
    toolkit = Toolkit(home, kit.runtime, kit.base, (home / "lib64" / "libopapi_fake.so",), "test",
                      custom_packages(home))
    return Library("sim", toolkit, ffi())


def workspace_of(lib, op):
    ffi = lib.ffi
    size, executor = ffi.new("uint64_t *"), ffi.new("aclOpExecutor **")
    assert lib.fn(f"aclnn{op}GetWorkspaceSize")(ffi.cast("aclTensor *", 8), 1.0, ffi.NULL, size, executor) == 0
    assert lib.fn(f"aclnn{op}")(ffi.NULL, size[0], ffi.NULL, ffi.NULL) == 0
    return size[0]


# -- discovery --------------------------------------------------------------------------------

def test_search_order(tmp_path, monkeypatch):
    opp = tmp_path / "opp"
    for name in ("low", "high", "unlisted"):
        (opp / "vendors" / name / "op_api" / "lib").mkdir(parents=True)
    (opp / "vendors" / "high" / "op_api" / "lib" / "libcust_opapi.so").write_bytes(b"")
    (opp / "vendors" / "config.ini").write_text("# vendors\nload_priority=high,missing,low\n")
    first, second = tmp_path / "first", tmp_path / "second"
    (first / "op_api" / "include").mkdir(parents=True)
    second.mkdir()
    monkeypatch.setenv(discovery.OPP_PATH_VAR, str(opp))
    monkeypatch.setenv(discovery.CUSTOM_PATH_VAR, f"{first}::{second}:{tmp_path / 'absent'}")
    packages = custom_packages(tmp_path / "home")
    assert [p.root for p in packages] == [first, second, opp / "vendors" / "high", opp / "vendors" / "low"]
    assert packages[0] == CustomPackage(first, None, first / "op_api" / "include", "$ASCEND_CUSTOM_OPP_PATH")
    assert packages[2].library == opp / "vendors" / "high" / "op_api" / "lib" / "libcust_opapi.so"
    assert "load_priority" in packages[2].source


def test_vendors_of_the_home_without_ascend_opp_path(tmp_path):
    (tmp_path / "home" / "opp" / "vendors" / "mine").mkdir(parents=True)
    (tmp_path / "home" / "opp" / "vendors" / "config.ini").write_text("load_priority=mine\n")
    assert [p.root.name for p in custom_packages(tmp_path / "home")] == ["mine"]


def test_toolkit_search_paths(tmp_path, monkeypatch):
    home = tmp_path / "home"
    (home / "lib64").mkdir(parents=True)
    for name in ("libascendcl.so", "libnnopbase.so", "libopapi.so"):
        (home / "lib64" / name).write_bytes(b"")
    package = tmp_path / "pkg"
    (package / "op_api" / "lib").mkdir(parents=True)
    (package / "op_api" / "include").mkdir()
    (package / "op_api" / "lib" / "libcust_opapi.so").write_bytes(b"")
    monkeypatch.setenv(discovery.CUSTOM_PATH_VAR, str(package))
    toolkit, _ = discovery.toolkit_at(home)
    assert toolkit.operator_libraries == (package / "op_api" / "lib" / "libcust_opapi.so", home / "lib64" / "libopapi.so")
    assert toolkit.header_folders == (package / "op_api" / "include", home / "include" / "aclnnop")


# -- loading ----------------------------------------------------------------------------------

def test_built_in_operator_without_custom_packages(sim_lib, tmp_path):
    assert workspace_of(load(sim_lib, make_home(tmp_path)), "FakeScale") == 64


def test_vendors_in_load_priority_order_override_the_built_in(sim_lib, tmp_path, monkeypatch):
    home = make_home(tmp_path, vendors_priority=["high", "low"])
    make_package(tmp_path, home / "opp" / "vendors" / "low", [("FakeScale", 128), ("CustLow", 8)])
    make_package(tmp_path, home / "opp" / "vendors" / "high", [("FakeScale", 256)])
    lib = load(sim_lib, home)
    assert workspace_of(lib, "FakeScale") == 256          # high before low before the built-in
    assert workspace_of(lib, "CustLow") == 8              # declared from low's op_api/include


def test_ascend_custom_opp_path_comes_first(sim_lib, tmp_path, monkeypatch):
    home = make_home(tmp_path, vendors_priority=["high"])
    make_package(tmp_path, home / "opp" / "vendors" / "high", [("FakeScale", 256)])
    package = make_package(tmp_path, tmp_path / "pkg", [("FakeScale", 512), ("CustOnly", 16)])
    monkeypatch.setenv(discovery.CUSTOM_PATH_VAR, str(package))
    lib = load(sim_lib, home)
    assert workspace_of(lib, "FakeScale") == 512
    assert workspace_of(lib, "CustOnly") == 16
    with pytest.raises(AclnnError) as info:
        lib.fn("aclnnCustNowhereGetWorkspaceSize")
    assert "no C declaration" in info.value.message and str(package / "op_api" / "include") in info.value.message


def test_custom_package_library_without_its_header(sim_lib, tmp_path, monkeypatch):
    """A package whose library exports an operator the toolkit's headers declare overrides it
    without a header of its own."""
    home = make_home(tmp_path)
    package = tmp_path / "pkg"
    _compile(tmp_path, package / "op_api" / "lib" / "libcust_opapi.so", [("FakeScale", 1024)])
    monkeypatch.setenv(discovery.CUSTOM_PATH_VAR, str(package))
    assert workspace_of(load(sim_lib, home), "FakeScale") == 1024



# -- hostile configuration ----------------------------------------------------------------------

LONG = "v" * 300  # longer than any file name may be (255 bytes on Linux)


def test_names_too_long_for_a_file_are_reported_and_skipped(tmp_path, monkeypatch):
    opp = tmp_path / "opp"
    for name in ("good", "after"):
        (opp / "vendors" / name / "op_api" / "include").mkdir(parents=True)
    (opp / "vendors" / "config.ini").write_text(f"load_priority=good,{LONG},after\n")
    entry = tmp_path / "pkg"
    entry.mkdir()
    monkeypatch.setenv(discovery.OPP_PATH_VAR, str(opp))
    monkeypatch.setenv(discovery.CUSTOM_PATH_VAR, f"{tmp_path / LONG}:{entry}")
    with pytest.warns(UserWarning) as caught:
        packages = custom_packages(tmp_path / "home")
    assert [p.root for p in packages] == [entry, opp / "vendors" / "good", opp / "vendors" / "after"]
    messages = [str(w.message) for w in caught]
    assert len(messages) == 2, messages
    assert all("File name too long" in m and "skipped" in m for m in messages), messages
    assert "$ASCEND_CUSTOM_OPP_PATH" in messages[0] and "load_priority" in messages[1]
    # The package is named, shortened to what a reader can take in.
    assert all("vvvvvvvvvv" in m and " characters)" in m and len(m) < 400 for m in messages), messages


def test_a_config_ini_that_cannot_be_read_is_reported(tmp_path, monkeypatch):
    monkeypatch.setenv(discovery.OPP_PATH_VAR, str(tmp_path / LONG))
    with pytest.warns(UserWarning, match="config.ini.*File name too long"):
        assert custom_packages(tmp_path / "home") == ()


def test_a_config_ini_that_is_not_a_file_is_not_read(tmp_path, monkeypatch):
    """A FIFO would block the reader forever; a directory is no configuration either."""
    import subprocess
    import sys

    vendors = tmp_path / "opp" / "vendors"
    vendors.mkdir(parents=True)
    os.mkfifo(vendors / "config.ini")
    code = ("import warnings; warnings.simplefilter('error'); from aclnn_py._ffi.discovery import custom_packages; "
            f"print(custom_packages({str(tmp_path / 'home')!r}))")
    env = {**os.environ, discovery.OPP_PATH_VAR: str(tmp_path / "opp"), discovery.CUSTOM_PATH_VAR: ""}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env=env)
    assert done.returncode == 0 and done.stdout.strip() == "()", done.stderr


def test_a_sim_call_survives_a_hostile_package_path(sim_lib, tmp_path):
    """The simulator's toolkit reads the same configuration: its first call must not fail."""
    import subprocess
    import sys

    code = ("import numpy as np, aclnn_py\n"
            "from aclnn_py._runtime import loader\n"
            "lib = loader.library('sim')\n"
            "print('loaded', len(lib.toolkit.custom))\n")
    env = {**os.environ, discovery.CUSTOM_PATH_VAR: str(tmp_path / LONG), discovery.OPP_PATH_VAR: str(tmp_path)}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "loaded 0"
    assert "File name too long" in done.stderr and "skipped" in done.stderr


def test_a_package_whose_library_cannot_be_loaded_is_skipped(sim_lib, tmp_path):
    """A corrupt libcust_opapi.so is reported, naming its package, and skipped: the backend
    loads and its built-in operators run (it made the whole backend unavailable)."""
    import subprocess
    import sys

    package = tmp_path / "broken"
    (package / discovery.CUSTOM_LIBRARY).parent.mkdir(parents=True)
    (package / discovery.CUSTOM_LIBRARY).write_bytes(b"\x7fELF not really a library")
    code = ("import warnings, numpy as np, aclnn_py\n"
            "g = np.ones((1, 1, 6, 6), np.float32); x = np.zeros((1, 1, 4, 4), np.float32)\n"
            "print(aclnn_py.reflection_pad2d_backward(g, x, [1, 1, 1, 1], backend='sim').sum())\n")
    env = {**os.environ, discovery.CUSTOM_PATH_VAR: str(package)}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "36.0"
    assert f"custom operator package {package}" in done.stderr and "skipped" in done.stderr
