"""What the rest of the suite leaves uncovered in the small modules (the CI gate keeps every
product module at or above its coverage floor, see .ci/run): backend selection, the C-API
mirror's runtime wrappers and argument checks, the simulator's and fast path's build entry
points, library loading refusals."""

from __future__ import annotations

import runpy
import sys
import threading
from pathlib import Path

import pytest

import aclnn_py
from aclnn_py import AclnnError, BackendUnavailable, _fast, capi, sim
from aclnn_py._runtime import loader
from aclnn_py._runtime import backend as _backend
from aclnn_py._ffi import elf, op_packages


# -- aclnn_py, _backend ----------------------------------------------------------------------

def test_get_include():
    assert (Path(aclnn_py.get_include()) / "acl" / "acl.h").is_file()


def test_backend_names_are_checked(monkeypatch):
    with pytest.raises(TypeError, match="must be a str"):
        _backend._check_name(3, "here")
    with pytest.raises(ValueError, match="unknown backend"):
        _backend._check_name("gpu", "here")
    monkeypatch.setattr(_backend, "_chosen", None)
    monkeypatch.setenv(_backend.ENV_VAR, "numpy")
    assert _backend.get_backend() == "numpy"
    monkeypatch.delenv(_backend.ENV_VAR)
    monkeypatch.setattr(_backend, "_auto", None)
    monkeypatch.setattr(loader, "npu_present", lambda: False)
    assert _backend.get_backend() == "numpy"
    monkeypatch.setattr(_backend, "_auto", None)
    monkeypatch.setattr(loader, "npu_present", lambda: True)
    assert _backend._automatic() == "npu"


# -- _ffi --------------------------------------------------------------------------------------

def test_toolkit_refusals(monkeypatch, tmp_path):
    with pytest.raises(ValueError, match="no C libraries"):
        loader._toolkit("numpy")

    def not_built():
        raise sim.SimNotBuiltError("not built")

    monkeypatch.setattr(sim, "home", not_built)
    with pytest.raises(BackendUnavailable, match="not built"):
        loader._toolkit("sim")
    monkeypatch.setattr(sim, "home", lambda: str(tmp_path))
    with pytest.raises(BackendUnavailable, match="incomplete"):
        loader._toolkit("sim")


def test_one_backend_per_process(sim_lib):
    with pytest.raises(BackendUnavailable, match="already loaded backend 'sim'"):
        loader.library("npu")


def test_npu_present_without_cann(sim_lib, monkeypatch):
    monkeypatch.setattr(loader, "find_cann", lambda: (_ for _ in ()).throw(BackendUnavailable("none")))
    loader.npu_present.cache_clear()
    try:
        assert loader.npu_present() is False
    finally:
        loader.npu_present.cache_clear()


def test_elf_refuses_an_empty_file(tmp_path):
    empty = tmp_path / "libempty.so"
    empty.write_bytes(b"")
    with pytest.raises(ValueError, match="empty"):
        elf.exported_functions(empty)


def test_operator_of():
    assert op_packages.operator_of("aclnnIm2colBackwardGetWorkspaceSize") == "Im2colBackward"
    assert op_packages.operator_of("aclnnNoSuchThing") is None


# -- sim ---------------------------------------------------------------------------------------

def test_sim_include_dir_falls_back_to_the_binding_headers(monkeypatch, tmp_path):
    monkeypatch.setattr(sim, "_location", lambda: tmp_path)
    assert (Path(sim.include_dir()) / "acl" / "acl.h").is_file()
    monkeypatch.setattr(sim._build, "source_include_dir", lambda: None)
    with pytest.raises(sim.SimNotBuiltError, match="no headers"):
        sim.include_dir()


def test_sim_main(monkeypatch, capsys):
    from aclnn_py.sim import __main__ as main_module
    from aclnn_py.sim import _build

    assert main_module.main([]) == 2
    assert main_module.main(["--help"]) == 0
    assert main_module.main(["what"]) == 2
    monkeypatch.setattr(_build, "main", lambda rest: 7 if rest == ["--force"] else 0)
    assert main_module.main(["build", "--force"]) == 7

    def not_built():
        raise sim.SimNotBuiltError("nothing here")

    monkeypatch.setattr(sim, "home", not_built)
    assert main_module.main(["home"]) == 1
    assert "nothing here" in capsys.readouterr().err


def test_sim_build_main(monkeypatch, tmp_path, capsys):
    from aclnn_py.sim import _build

    seen = {}

    def fake_build(out, **options):
        seen.update(options, out=out)
        return Path(out)

    monkeypatch.setattr(_build, "build", fake_build)
    assert _build.main(["--out", str(tmp_path), "--force", "--werror", "--link-include", "-v"]) == 0
    assert seen == dict(out=str(tmp_path), werror=True, force=True, link_include=True, verbose=True)
    assert str(tmp_path) in capsys.readouterr().out

    def failing(out, **options):
        raise _build.SimBuildError("no compiler")

    monkeypatch.setattr(_build, "build", failing)
    assert _build.main([]) == 1
    assert "no compiler" in capsys.readouterr().err


def test_sim_build_without_a_compiler(monkeypatch, tmp_path):
    from aclnn_py.sim import _build

    monkeypatch.setenv("CC", "no-such-compiler-aclnn")
    with pytest.raises(_build.SimBuildError, match="needs a C11 compiler"):
        _build.find_compiler()
    assert _build.is_current(tmp_path) is False


# -- the fast path's helper --------------------------------------------------------------------

def test_fast_build_failures(monkeypatch, tmp_path):
    from aclnn_py._fast import build

    monkeypatch.setenv("CC", "no-such-compiler-aclnn")
    with pytest.raises(build.FastBuildError, match="no C compiler"):
        build.build(tmp_path)
    monkeypatch.setattr(sys, "argv", ["build"])
    monkeypatch.delitem(sys.modules, "aclnn_py._fast.build", raising=False)
    with pytest.raises(SystemExit) as exit_info:
        runpy.run_module("aclnn_py._fast.build", run_name="__main__")
    assert exit_info.value.code == 1
    monkeypatch.delenv("CC")
    (tmp_path / "fastcall.c").write_text("this is not C\n")
    with pytest.raises(build.FastBuildError, match="compiling the fast path failed"):
        build.build(tmp_path, src_dir=tmp_path)


def test_fast_helper_of_another_version(monkeypatch):
    monkeypatch.setattr(_fast, "ABI_VERSION", -1)
    _fast.reset()
    try:
        assert _fast.helper() is None
    finally:
        monkeypatch.undo()
        _fast.reset()
    assert _fast.helper() is not None or not _fast.LIBRARY.is_file() or not _fast.enabled()


def test_fast_helper_that_does_not_load(monkeypatch, tmp_path):
    bad = tmp_path / "libaclnn_py_fast.so"
    bad.write_text("not a library")
    monkeypatch.setattr(_fast, "LIBRARY", bad)
    _fast.reset()
    try:
        assert _fast.helper() is None
    finally:
        monkeypatch.undo()
        _fast.reset()
    monkeypatch.setenv(_fast.ENV, "0")
    _fast.reset()
    try:
        assert _fast.helper() is None
    finally:
        monkeypatch.undo()
        _fast.reset()


# -- the C-API mirror: runtime wrappers and argument checks (in-process) ------------------------

def test_capi_needs_a_c_backend():
    with aclnn_py.use_backend("numpy"), pytest.raises(AclnnError, match="needs backend 'npu' or 'sim'"):
        capi.aclrtGetDevice()


def test_capi_runtime_wrappers(sim_lib):
    result = {}

    def body():  # a thread of its own: its device, context and stream stay its own
        with aclnn_py.use_backend("sim"):
            capi.aclrtSetDevice(0)
            assert capi.aclrtGetDevice() == 0
            assert capi.aclrtGetDeviceCount() >= 1
            assert isinstance(capi.aclrtGetSocName(), str)
            assert capi.aclGetRecentErrMsg() == "" or True
            context = capi.aclrtCreateContext(0)
            capi.aclrtSetCurrentContext(context)
            assert capi.aclrtGetCurrentContext() == context
            stream = capi.aclrtCreateStream()
            start, end = capi.aclrtCreateEvent(), capi.aclrtCreateEvent()
            capi.aclrtRecordEvent(start, stream)
            capi.aclrtRecordEvent(end, stream)
            capi.aclrtSynchronizeEvent(end)
            assert capi.aclrtEventElapsedTime(start, end) >= 0.0
            capi.aclrtDestroyEvent(start)
            capi.aclrtDestroyEvent(end)
            capi.aclrtSynchronizeStream(stream)
            capi.aclrtDestroyStream(stream)
            capi.aclrtSynchronizeDevice()
            host = capi.aclrtMallocHost(64)
            capi.aclrtFreeHost(host)
            capi.aclrtDestroyContext(context)
            capi.aclrtResetDevice(0)
            result["ok"] = True

    t = threading.Thread(target=body)
    t.start()
    t.join()
    assert result.get("ok")


def test_capi_argument_checks(sim_lib):
    sim_lib.stream()  # this thread's device and stream, as the binding sets them up
    with aclnn_py.use_backend("sim"):
        with pytest.raises(TypeError, match="must be an int"):
            capi.aclrtMalloc(16, True)
        with pytest.raises(ValueError, match="not a value of its enum"):
            capi.aclrtMalloc(16, -1)
        p = capi.aclrtMalloc(16)
        try:
            with pytest.raises(TypeError, match="int address"):
                capi.aclrtMemcpy(12345, 16, p, 16, capi.ACL_MEMCPY_DEVICE_TO_HOST)
            with pytest.raises(ValueError, match="is not an address"):
                capi.aclrtMemcpy(p, 16, -5, 16, capi.ACL_MEMCPY_DEVICE_TO_DEVICE)
            with pytest.raises(TypeError, match="device pointer"):
                capi.aclrtMemset("p", 16, 0, 16)
            capi.aclrtMemset(p, 16, 0, 16)
            t = capi.aclCreateTensor([4], 0, None, 0, 2, [4], int(sim_lib.ffi.cast("intptr_t", p)))
            capi.aclDestroyTensor(t)
            with pytest.raises(ValueError, match="tensorData is NULL"):
                capi.aclCreateTensor([4], 0, None, 0, 2, [4], None)
            with pytest.raises(ValueError, match="negative"):
                capi.aclCreateTensor([4], 0, None, 0, 2, [-4], p)
        finally:
            capi.aclrtFree(p)
        floats = capi.aclCreateFloatArray([1.0, 2.5])
        capi.aclDestroyFloatArray(floats)
        scalar = capi.aclCreateScalar(2.0, 0)
        capi.aclDestroyScalar(scalar)
        assert callable(capi.aclnnReflectionPad2dBackwardGetWorkspaceSize)
        assert callable(capi.aclnnReflectionPad2dBackward)
        with pytest.raises(AttributeError, match="no attribute"):
            capi.not_a_function  # noqa: B018


# -- tools/info: the probe's answers for devices that are absent or failing -------------------

class _FakeNpu:
    """A loaded 'npu' library with ``count`` devices (or failing with ``error``)."""

    def __init__(self, count: int, error: AclnnError | None = None, device_id: int = 0) -> None:
        import cffi

        self.ffi = cffi.FFI()
        self.count, self.error, self.device_id = count, error, device_id

    def ensure_initialized(self) -> None:
        if self.error is not None:
            raise self.error

    def has(self, name: str) -> bool:
        return False

    def call(self, api: str, p) -> None:
        p[0] = self.count

    def stream(self):
        return None

    def fn(self, name: str):
        return lambda: self.ffi.NULL


@pytest.mark.parametrize("fake, summary", [
    (_FakeNpu(0), "no device"),
    (_FakeNpu(1, device_id=3), "device 3 does not exist"),
    (_FakeNpu(1, error=AclnnError(507033, "aclInit", "driver gone")), "aclInit failed"),
    (_FakeNpu(1), "usable"),
])
def test_info_probe_of_a_loaded_library(monkeypatch, fake, summary):
    from aclnn_py.tools import info

    monkeypatch.setattr(info.loader, "loaded_backends", lambda: ())
    monkeypatch.setattr(info.loader, "library", lambda name: fake)
    status = info._probe_loaded(info.BackendStatus("npu", False, "not probed"))
    assert status.summary == summary
    if summary == "usable":  # no operator is exported by the fake: each is reported missing
        assert "missing" in dict(status.details)["operators"] and status.fix


def test_info_versions(tmp_path):
    from aclnn_py.tools import info

    plain = tmp_path / "version.info"
    plain.write_text("no version here\n")
    assert info._read_version(plain) is None
    assert info._package_version("no-such-distribution-aclnn-py") == "not installed"
