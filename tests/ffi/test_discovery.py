"""Library discovery for the npu backend: a fake toolkit home, and none at all."""

from __future__ import annotations

import pytest

from aclnn_py import AclnnError
from aclnn_py._ffi import discovery
from aclnn_py._ffi.discovery import BackendUnavailable, find_cann, toolkit_at


@pytest.fixture(autouse=True)
def clean_env(monkeypatch, tmp_path):
    for var in (discovery.OVERRIDE_VAR, "ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME", "LD_LIBRARY_PATH"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setattr(discovery, "DEFAULT_HOMES", (str(tmp_path / "no-ascend-toolkit"), str(tmp_path / "no-cann")))
    find_cann.cache_clear()
    yield
    find_cann.cache_clear()


def make_home(root, *names):
    lib64 = root / "lib64"
    lib64.mkdir(parents=True)
    for n in names:
        (lib64 / n).write_bytes(b"")
    return root


def test_nothing_found_lists_every_place_tried(tmp_path, monkeypatch):
    monkeypatch.setenv("ASCEND_HOME_PATH", str(tmp_path / "missing"))
    with pytest.raises(BackendUnavailable) as info:
        find_cann()
    text = str(info.value)
    assert str(tmp_path / "missing") in text and "$ASCEND_HOME_PATH" in text
    assert "no-ascend-toolkit" in text and "no-cann" in text
    assert "set_env.sh" in text and discovery.OVERRIDE_VAR in text


def test_classic_home(tmp_path, monkeypatch):
    home = make_home(tmp_path / "latest", "libascendcl.so", "libnnopbase.so", "libopapi.so")
    monkeypatch.setenv("ASCEND_HOME_PATH", str(home))
    tk = find_cann()
    assert tk.home == home and tk.runtime.name == "libascendcl.so"
    assert [p.name for p in tk.ops] == ["libopapi.so"] and tk.source == "$ASCEND_HOME_PATH"


def test_split_op_libraries_and_acl_rt(tmp_path, monkeypatch):
    home = make_home(tmp_path / "cann", "libacl_rt.so", "libnnopbase.so", "libopapi_nn.so", "libopapi_math.so")
    monkeypatch.setenv("ASCEND_TOOLKIT_HOME", str(home))
    tk = find_cann()
    assert tk.runtime.name == "libacl_rt.so"
    assert [p.name for p in tk.ops] == ["libopapi_math.so", "libopapi_nn.so"]


def test_override_wins(tmp_path, monkeypatch):
    a = make_home(tmp_path / "a", "libascendcl.so", "libnnopbase.so", "libopapi.so")
    b = make_home(tmp_path / "b", "libascendcl.so", "libnnopbase.so", "libopapi.so")
    monkeypatch.setenv("ASCEND_HOME_PATH", str(a))
    monkeypatch.setenv(discovery.OVERRIDE_VAR, str(b))
    assert find_cann().home == b


def test_loader_path(tmp_path, monkeypatch):
    home = make_home(tmp_path / "t", "libascendcl.so", "libnnopbase.so", "libopapi.so")
    monkeypatch.setenv("LD_LIBRARY_PATH", f"/nonexistent:{home / 'lib64'}")
    assert find_cann().source == "$LD_LIBRARY_PATH"


@pytest.mark.parametrize("names, reason", [
    (("libnnopbase.so", "libopapi.so"), "neither libascendcl.so nor libacl_rt.so"),
    (("libascendcl.so", "libopapi.so"), "no libnnopbase.so"),
    (("libascendcl.so", "libnnopbase.so"), "no libopapi.so and no libopapi_*.so"),
])
def test_incomplete_home_says_why(tmp_path, names, reason):
    home = make_home(tmp_path / "h", *names)
    tk, why = toolkit_at(home)
    assert tk is None and reason in why


def test_npu_backend_without_cann_raises_and_does_not_fall_back(monkeypatch):
    import numpy as np

    import aclnn_py
    from aclnn_py._runtime import loader

    monkeypatch.setattr(loader, "LOADED", {})
    with pytest.raises(BackendUnavailable, match="no CANN toolkit found"):
        aclnn_py.reflection_pad2d_backward(np.zeros((1, 4, 4), np.float32), np.zeros((1, 2, 2), np.float32),
                                           [1, 1, 1, 1], backend="npu")


def test_npu_backend_with_unloadable_libraries(tmp_path, monkeypatch):
    from aclnn_py._runtime import loader

    home = make_home(tmp_path / "fake", "libascendcl.so", "libnnopbase.so", "libopapi.so")
    monkeypatch.setenv("ASCEND_HOME_PATH", str(home))
    monkeypatch.setattr(loader, "LOADED", {})
    with pytest.raises(BackendUnavailable, match="loading .*fake.* failed"):
        loader.library("npu")


def test_a_missing_operator_fails_when_called_naming_it(sim_lib):
    """A CANN without an operator (here: the simulator's runtime and nnopbase, no libopapi)
    loads, and the operator's call fails with 200001 naming it; an operator with no prototype in
    include/ says so instead of blaming the installed CANN."""
    from aclnn_py._ffi import ffi as make_ffi
    from aclnn_py._ffi.discovery import Toolkit
    from aclnn_py._runtime.library import Library

    kit = sim_lib.toolkit
    partial = Library("sim", Toolkit(kit.home, kit.runtime, kit.base, ()), make_ffi())
    assert partial.has("aclrtMalloc")
    with pytest.raises(AclnnError) as info:
        partial.fn("aclnnIm2colBackwardGetWorkspaceSize")
    assert info.value.status == 200001 and info.value.api == "aclnnIm2colBackwardGetWorkspaceSize"
    assert "no loaded sim library exports" in info.value.message and "predate" in info.value.message
    with pytest.raises(AclnnError) as info:
        sim_lib.fn("aclnnSubGetWorkspaceSize")
    assert info.value.status == 200001 and "no C declaration of aclnnSubGetWorkspaceSize" in info.value.message


FAKE_HEADER = """\
/* An operator header as an installed CANN ships it (C++ guards, ACLNN_API, a wrapped line). */
#ifndef OP_API_INC_FAKE_SCALE_H_
#define OP_API_INC_FAKE_SCALE_H_
#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

/* out = self * factor */
ACLNN_API aclnnStatus aclnnFakeScaleGetWorkspaceSize(const aclTensor *self, double factor,
                                                     aclTensor *out, uint64_t *workspaceSize,
                                                     aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnFakeScale(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                     aclrtStream stream);

#ifdef __cplusplus
}
#endif
#endif
"""

FAKE_SOURCE = """\
#include "aclnnop/aclnn_fake_scale.h"
aclnnStatus aclnnFakeScaleGetWorkspaceSize(const aclTensor *self, double factor, aclTensor *out,
                                           uint64_t *workspaceSize, aclOpExecutor **executor)
{
    (void)out;
    if (self == NULL) return 161001;
    if (factor != factor) return 161002;
    *workspaceSize = 64;
    *executor = NULL;
    return 0;
}
aclnnStatus aclnnFakeScale(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)
{
    (void)workspace; (void)executor; (void)stream;
    return workspaceSize == 64 ? 0 : 161002;
}
"""


def test_any_operator_of_the_installed_cann_is_declared_from_its_header(sim_lib, tmp_path):
    """An operator aclnn_py ships no header for is declared, when first used, from the
    toolkit's include/aclnnop/ header, and called."""
    import shutil
    import subprocess

    from aclnn_py import sim
    from aclnn_py._ffi import ffi as make_ffi
    from aclnn_py._ffi.discovery import Toolkit
    from aclnn_py._runtime.library import Library

    if shutil.which("gcc") is None:
        pytest.skip("gcc is needed to build the fake operator library")
    (tmp_path / "include" / "aclnnop").mkdir(parents=True)
    (tmp_path / "include" / "aclnnop" / "aclnn_fake_scale.h").write_text(FAKE_HEADER)
    (tmp_path / "fake.c").write_text(FAKE_SOURCE)
    (tmp_path / "lib64").mkdir()
    library = tmp_path / "lib64" / "libopapi_fake.so"
    include = sim.include_dir()
    subprocess.run(["gcc", "-std=c11", "-shared", "-fPIC", f"-I{tmp_path / 'include'}", f"-I{include}",
                    f"-I{include}/aclnn", f"-I{include}/aclnnop", str(tmp_path / "fake.c"), "-o", str(library)], check=True)

    kit = sim_lib.toolkit
    lib = Library("sim", Toolkit(tmp_path, kit.runtime, kit.base, (library,)), make_ffi())
    ffi = lib.ffi
    size, executor = ffi.new("uint64_t *"), ffi.new("aclOpExecutor **")
    phase1 = lib.fn("aclnnFakeScaleGetWorkspaceSize")
    assert phase1(ffi.NULL, 2.0, ffi.NULL, size, executor) == 161001
    assert phase1(ffi.cast("aclTensor *", 8), 2.0, ffi.NULL, size, executor) == 0 and size[0] == 64
    assert lib.fn("aclnnFakeScale")(ffi.NULL, 64, ffi.NULL, ffi.NULL) == 0
    with pytest.raises(AclnnError) as info:
        lib.fn("aclnnNoSuchOpGetWorkspaceSize")
    assert info.value.status == 200001 and "no C declaration" in info.value.message


def test_override_is_the_only_place_searched(tmp_path, monkeypatch):
    """CANN's set_env.sh exports $ASCEND_HOME_PATH; an explicit $ACLNN_PY_ASCEND_HOME that does
    not qualify is an error naming it, not a silent fall-back to the set_env.sh toolkit."""
    a = make_home(tmp_path / "a", "libascendcl.so", "libnnopbase.so", "libopapi.so")
    monkeypatch.setenv("ASCEND_HOME_PATH", str(a))
    monkeypatch.setenv(discovery.OVERRIDE_VAR, str(tmp_path / "no-cann"))
    with pytest.raises(BackendUnavailable) as info:
        find_cann()
    text = str(info.value)
    assert f"${discovery.OVERRIDE_VAR} is set" in text and str(tmp_path / "no-cann") in text
    assert str(a) not in text


LONG = "h" * 300  # longer than any file name may be


def test_a_home_too_long_for_a_file_name_is_a_place_tried(tmp_path, monkeypatch):
    monkeypatch.setenv("ASCEND_HOME_PATH", str(tmp_path / LONG))
    with pytest.raises(BackendUnavailable) as info:
        find_cann()
    assert "File name too long" in str(info.value) and "$ASCEND_HOME_PATH" in str(info.value)


def test_a_library_path_entry_too_long_for_a_file_name_is_passed_over(tmp_path, monkeypatch):
    home = make_home(tmp_path / "cann", "libascendcl.so", "libnnopbase.so", "libopapi.so")
    monkeypatch.setenv("LD_LIBRARY_PATH", f"{tmp_path / LONG}:{home / 'lib64'}")
    assert find_cann().home == home
    toolkit, reason = toolkit_at(home / LONG)
    assert toolkit is None and "File name too long" in reason
