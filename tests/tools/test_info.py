"""python -m aclnn_py info: what it finds on this host, on a broken CANN, and with the simulator
standing in for CANN."""

from __future__ import annotations

import json

import pytest

from aclnn_py import __main__ as cli_main
from aclnn_py.ops import operators
from aclnn_py.tools import info


def _status(report: dict, name: str) -> dict:
    return next(b for b in report["backends"] if b["name"] == name)


def _fake_cann(root):
    """A toolkit home whose libraries exist but are not libraries, with CANN's version file."""
    lib64 = root / "latest" / "lib64"
    lib64.mkdir(parents=True)
    for name in ("libascendcl.so", "libnnopbase.so", "libopapi.so"):
        (lib64 / name).write_bytes(b"")
    install = root / "latest" / "aarch64-linux"
    install.mkdir()
    (install / "ascend_toolkit_install.info").write_text("package_name=Ascend-cann-toolkit\nversion=8.0.RC2\n")
    return root / "latest"


# -- versions ---------------------------------------------------------------------------------

def test_toolkit_version_sources(tmp_path):
    home = tmp_path / "Ascend" / "latest"
    home.mkdir(parents=True)
    assert info.toolkit_version(home) == ("unknown", "")
    (home / "runtime").mkdir()
    (home / "runtime" / "version.info").write_text("Version=7.3.0.1.231\nversion_dir=8.0.RC2\n")
    assert info.toolkit_version(home)[0] == "7.3.0.1.231"
    (home.parent / "version.info").write_text("Version=7.5.0\n")
    assert info.toolkit_version(home) == ("7.5.0", str(home.parent / "version.info"))
    (home / "version.info").write_text("# comment\nVersion = 7.6.0\n")
    assert info.toolkit_version(home)[0] == "7.6.0"
    (home / "x86_64-linux").mkdir()
    (home / "x86_64-linux" / "ascend_toolkit_install.info").write_text("version=8.1.RC1\narch=x86_64\n")
    assert info.toolkit_version(home)[0] == "8.1.RC1"


# -- in this process --------------------------------------------------------------------------

def test_probe_sim(sim_lib):
    status = info.probe("sim")
    details = dict(status.details)
    assert status.usable and status.summary == "usable"
    assert details["SoC"] == "Ascend910B_sim" and int(details["devices"]) >= 1
    count = len(operators())
    assert details["operators"].startswith(f"{count} of {count}") and "libascendcl.so" in details["runtime"]
    # The simulator's toolkit records the CANN release its headers follow, as CANN's packages do.
    from aclnn_py.sim import _build
    assert details["toolkit version"].startswith(_build.cann_version(_build.source_include_dir()) + " (from ")


def test_probe_numpy():
    status = info.probe("numpy")
    assert status.usable and {"numpy", "ml_dtypes", "PyTorch"} <= dict(status.details).keys()


def test_sim_not_built(tmp_path, monkeypatch):
    monkeypatch.setenv("ACLNN_PY_SIM_HOME", str(tmp_path / "nowhere"))
    status = info.probe_isolated("sim")
    assert not status.usable and status.summary == "simulator not built"
    assert "python -m aclnn_py.sim build" in status.problem


def test_default_backend_rules(monkeypatch):
    statuses = {"npu": info.BackendStatus("npu", False, "no CANN toolkit found")}
    monkeypatch.delenv("ACLNN_PY_BACKEND", raising=False)
    assert info.default_backend(statuses)[0] == "numpy"
    statuses["npu"].usable = True
    assert info.default_backend(statuses)[0] == "npu"
    monkeypatch.setenv("ACLNN_PY_BACKEND", "sim")
    assert info.default_backend(statuses) == ("sim", "from $ACLNN_PY_BACKEND")
    monkeypatch.setenv("ACLNN_PY_BACKEND", "gpu")
    assert "is not one of" in info.default_backend(statuses)[1]


def test_main_in_process(sim_lib, capsys, monkeypatch):
    monkeypatch.delenv("ACLNN_PY_BACKEND", raising=False)
    assert cli_main.main(["info"]) == 0
    text = capsys.readouterr().out
    assert "sim    usable" in text and "numpy  usable" in text and "environment:" in text
    assert "default backend:" in text and "next: python -m aclnn_py selftest" in text


# -- the command line -------------------------------------------------------------------------

@pytest.mark.usefixtures("sim_lib")
def test_command_line_json(cli, tmp_path):
    done = cli("info", "--json", env={"ACLNN_PY_ASCEND_HOME": str(tmp_path / "no-cann")})
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["default_backend"] == "numpy" and report["default_usable"]
    npu, sim = _status(report, "npu"), _status(report, "sim")
    assert not npu["usable"] and str(tmp_path / "no-cann") in npu["problem"] and "set_env.sh" in npu["problem"]
    assert sim["usable"] and sim["details"]["SoC"] == "Ascend910B_sim"


def test_command_line_broken_cann_is_explained(cli, tmp_path):
    home = _fake_cann(tmp_path)
    done = cli("info", env={"ACLNN_PY_ASCEND_HOME": str(home), "ACLNN_PY_BACKEND": "npu"})
    assert done.returncode == 1  # the default backend (npu, as asked) is not usable
    assert "default backend: npu (from $ACLNN_PY_BACKEND) -> NOT USABLE" in done.stdout
    assert "NOT USABLE: found, but its libraries do not load" in done.stdout
    assert "8.0.RC2 (from " in done.stdout and str(home / "lib64" / "libascendcl.so") in done.stdout
    assert "fix: run the toolkit's set_env.sh" in done.stdout


@pytest.mark.usefixtures("sim_lib")
def test_command_line_simulator_as_cann(cli):
    # The simulator is laid out like a CANN toolkit: pointed at, it is found and probed as npu,
    # in its own process next to the sim probe.
    from aclnn_py import sim

    done = cli("info", "--json", env={"ACLNN_PY_ASCEND_HOME": sim.home(), "ACLSIM_DEVICE_COUNT": "2"})
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    npu = _status(report, "npu")
    assert npu["usable"] and npu["details"]["devices"] == "2" and npu["details"]["SoC"] == "Ascend910B_sim"
    assert report["default_backend"] == "npu" and _status(report, "sim")["usable"]


def test_command_line_help(cli):
    done = cli("--help")
    assert done.returncode == 0
    for command in ("info", "selftest", "bench"):
        assert command in done.stdout
    assert cli().returncode == 2


def test_probe_here_of_the_excluded_backend(sim_lib, monkeypatch):
    # This process loaded sim: npu (here, the simulator standing in for CANN) cannot load beside it.
    from aclnn_py import sim
    from aclnn_py._ffi import discovery

    monkeypatch.setenv(discovery.OVERRIDE_VAR, sim.home())
    discovery.find_cann.cache_clear()
    try:
        status = info.probe("npu")
    finally:
        discovery.find_cann.cache_clear()
    assert not status.usable and "has loaded backend 'sim'" in status.summary
    assert dict(status.details)["home"].startswith(sim.home())


def test_custom_operator_packages_are_reported(tmp_path, monkeypatch):
    home = _fake_cann(tmp_path)
    package = tmp_path / "custom"
    (package / "op_api" / "include").mkdir(parents=True)
    monkeypatch.setenv("ASCEND_CUSTOM_OPP_PATH", str(package))
    from aclnn_py._ffi.discovery import toolkit_at

    toolkit, _ = toolkit_at(home, "test")
    details = info._toolkit_details(toolkit)
    assert ("custom operator package",
            f"{package} (from $ASCEND_CUSTOM_OPP_PATH; no op_api/lib/libcust_opapi.so)") in details


def test_missing_binding_headers_are_named(monkeypatch):
    """A broken install without aclnn_py/include: the probe says so, not 'libraries do not load'."""
    def no_headers(name):
        raise FileNotFoundError("aclnn_py: its C headers are missing (no acl/acl.h in /x/include)")

    monkeypatch.setattr(info.loader, "library", no_headers)
    monkeypatch.setattr(info.loader, "loaded_backends", lambda: ())
    status = info._probe_loaded(info.BackendStatus("npu", False, "not probed"))
    assert not status.usable and status.summary == "aclnn_py's C headers are missing"
    assert "/x/include" in status.problem and "reinstall aclnn_py" in status.fix


# -- the fast path ----------------------------------------------------------------------------

def test_info_prints_the_fast_path(sim_lib, monkeypatch):
    monkeypatch.setenv("ACLNN_PY_FAST", "0")
    assert info.format_report(info.collect()).count("fast path (npu, sim): off: $ACLNN_PY_FAST='0'") == 1
