"""The simulator toolkit home: layout, library names and SONAMEs, exported symbols per
library (exactly CANN's, each operator in its package's library), the filter libraries,
set_env.sh, `python -m aclnn_py.sim`, and the build's behaviour without a compiler."""

from __future__ import annotations

import os
import re
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from aclnn_py import sim
from aclnn_py._ffi.op_packages import operator_packages
from aclnn_py.sim import _build

C_TESTS = Path(__file__).resolve().parents[1] / "sim_c"

INCLUDE = Path(__file__).resolve().parents[2] / "include"


def dynamic_entries(library: Path) -> dict[str, list[str]]:
    """{'SONAME': [...], 'NEEDED': [...], 'FILTER': [...], 'RUNPATH': [...]} of an ELF64 LE file."""
    data = library.read_bytes()
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", data, 0x3A)
    sections = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
    tags = {1: "NEEDED", 14: "SONAME", 29: "RUNPATH", 0x7FFFFFFF: "FILTER"}
    out: dict[str, list[str]] = {name: [] for name in tags.values()}
    for _n, sh_type, _f, _a, offset, size, link, _i, _al, _es in sections:
        if sh_type != 6:  # SHT_DYNAMIC
            continue
        strtab = sections[link][4]
        for pos in range(offset, offset + size, 16):
            tag, value = struct.unpack_from("<qQ", data, pos)
            if tag == 0:
                break
            if tag in tags:
                end = data.index(b"\0", strtab + value)
                out[tags[tag]].append(data[strtab + value:end].decode())
    return out


def declared_functions(*headers: str) -> set[str]:
    names = set()
    for header in headers:
        for line in (INCLUDE / header).read_text().splitlines():
            m = re.match(r"^(?:ACL_FUNC_VISIBILITY|ACLNN_API) .*?(\w+)\(", line)
            if m:
                names.add(m.group(1))
    return names


def test_layout(sim_home):
    home = Path(sim_home)
    for name in _build.ALL_LIBRARIES:
        assert (home / "lib64" / name).is_file(), name
    for header in ("acl/acl.h", "aclnn/acl_meta.h", "aclnn/aclnn_base.h", "aclnnop/aclnn_util.h",
                   "aclnnop/aclnn_avgpool2d_backward.h", "aclsim/aclsim.h"):
        assert (home / "include" / header).is_file(), header
    assert (home / "set_env.sh").is_file()
    assert (home / "opp").is_dir()
    assert sim.libraries() == {n: str(home / "lib64" / n) for n in sim.LOAD_ORDER}
    assert Path(sim.include_dir(), "acl", "acl.h").is_file()


CANN_RUNTIME = ("libascendcl.so", "libacl_rt.so")


def test_libraries_have_their_sonames_and_dependencies(sim_home):
    """libaclsim.so holds the code; the CANN runtime and nnopbase names are filters of it;
    each operator library records what CANN's records, plus libaclsim.so."""
    lib64 = Path(sim_home) / "lib64"
    for name in _build.ALL_LIBRARIES:
        entries = dynamic_entries(lib64 / name)
        assert entries["SONAME"] == [name]
        assert entries["RUNPATH"] == ["$ORIGIN"]
        if name == "libaclsim.so":
            assert not [n for n in entries["NEEDED"] if n.startswith(("libascendcl", "libacl_rt", "libnnopbase", "libopapi"))]
        elif name in (*CANN_RUNTIME, "libnnopbase.so"):
            assert entries["FILTER"] == ["libaclsim.so"], name
        else:
            assert {"libnnopbase.so", "libascendcl.so", "libaclsim.so"} <= set(entries["NEEDED"]), name


def defined_symbols(library: Path) -> set[str]:
    """``nm -D --defined-only``'s names (the build's ELF reader where nm is missing)."""
    if shutil.which("nm") is None:
        return set(_build.exported_functions(library))
    out = subprocess.run(["nm", "-D", "--defined-only", str(library)], capture_output=True, text=True, check=True)
    return {line.split()[-1] for line in out.stdout.splitlines() if line.strip()}


def expected_exports() -> dict[str, set[str]]:
    """What each CANN-named library defines in CANN: the runtime every function of the acl/
    headers, nnopbase every function of the aclnn/ headers, each operator library the
    functions of its operators' headers (the package table), libopapi.so all of them."""
    def under(directory: str) -> set[str]:
        return declared_functions(*(p.relative_to(INCLUDE).as_posix() for p in (INCLUDE / directory).rglob("*.h")))

    expected = {name: under("acl") for name in CANN_RUNTIME}
    expected["libnnopbase.so"] = under("aclnn")
    expected["libopapi.so"] = set()
    for _package, library, header in operator_packages().values():
        functions = declared_functions(f"aclnnop/{header}")
        expected.setdefault(library, set()).update(functions)
        expected["libopapi.so"].update(functions)
    return expected


def test_each_cann_library_exports_exactly_cann_functions(sim_home):
    lib64 = Path(sim_home) / "lib64"
    expected = expected_exports()
    assert set(expected) == set(_build.ALL_LIBRARIES) - {"libaclsim.so"}
    for name, functions in expected.items():
        exported = defined_symbols(lib64 / name)
        assert not {s for s in exported if s.startswith("aclsim")}, name
        assert exported == functions, (name, sorted(exported ^ functions))
    assert len(expected["libascendcl.so"]) > 40 and len(expected["libnnopbase.so"]) > 30
    from aclnn_py.ops import OPERATORS  # (two functions per registered operator, in its package's library)
    assert [len(expected[f"libopapi_{p}.so"]) for p in ("nn", "math", "cv")] == [
        2 * sum(op.library == f"libopapi_{p}.so" for op in OPERATORS) for p in ("nn", "math", "cv")]


def test_the_simulator_library_defines_the_simulator_api(sim_home):
    aclsim = defined_symbols(Path(sim_home) / "lib64" / "libaclsim.so")
    assert declared_functions("aclsim/aclsim.h") <= aclsim
    assert declared_functions("acl/acl_rt.h", "acl/acl_base_rt.h", "aclnn/acl_meta.h") <= aclsim
    assert not {s for s in aclsim if s.startswith("aclnn") and s not in ("aclnnInit", "aclnnFinalize")}


@pytest.mark.parametrize("libs", [
    ("libascendcl.so", "libnnopbase.so", "libopapi.so"),
    ("libascendcl.so", "libnnopbase.so", "libopapi_math.so", "libopapi_nn.so"),
    ("libacl_rt.so", "libnnopbase.so", "libopapi_math.so", "libopapi_cv.so"),
    ("libacl_rt.so", "libnnopbase.so", "libopapi.so"),
], ids=["classic", "ops-nn", "ops-cv", "runtime-repo"])
def test_official_link_sets(sim_home, c_env, tmp_path, libs):
    """Each library set an official sample CMakeLists links (by absolute path) builds the
    runtime test, which then runs with one simulator state."""
    if shutil.which("g++") is None:
        pytest.skip("g++ not installed")
    home = Path(sim_home)
    exe = tmp_path / "runtime_test"
    subprocess.run(["g++", "-std=c++11", f"-I{home / 'include'}", f"-I{home / 'include' / 'aclnn'}",
                    str(C_TESTS / "runtime_test.cpp"), *(str(home / "lib64" / l) for l in libs),
                    str(home / "lib64" / "libaclsim.so"),  # the test checks aclsimGetCounters
                    "-o", str(exe)],
                   check=True, capture_output=True)
    needed = dynamic_entries(exe)["NEEDED"]
    assert not any("/" in n for n in needed), needed  # SONAMEs, not paths, are recorded
    proc = subprocess.run([str(exe)], env=c_env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout[-3000:]


def test_cli_home_and_include(sim_home):
    env = {**os.environ, "ACLNN_PY_SIM_HOME": sim_home}
    proc = subprocess.run([sys.executable, "-m", "aclnn_py.sim", "home"], capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == str(Path(sim_home).resolve())
    proc = subprocess.run([sys.executable, "-m", "aclnn_py.sim", "include"], capture_output=True, text=True, env=env)
    assert proc.returncode == 0 and Path(proc.stdout.strip(), "acl", "acl.h").is_file()


def test_home_not_built_says_how_to_build(tmp_path, monkeypatch):
    monkeypatch.setenv("ACLNN_PY_SIM_HOME", str(tmp_path / "nowhere"))
    with pytest.raises(sim.SimNotBuiltError, match="python -m aclnn_py.sim build"):
        sim.home()
    proc = subprocess.run([sys.executable, "-m", "aclnn_py.sim", "home"], capture_output=True, text=True)
    assert proc.returncode == 1 and "not built" in proc.stderr


def test_set_env_exports_the_cann_variables(sim_home):
    if shutil.which("bash") is None:
        pytest.skip("bash not installed")
    script = (f'source "{sim_home}/set_env.sh" && '
              'echo "$ASCEND_HOME_PATH|$ASCEND_TOOLKIT_HOME|$ASCEND_OPP_PATH|$ASCEND_CUSTOM_PATH|$LD_LIBRARY_PATH"')
    proc = subprocess.run(["bash", "-c", script], capture_output=True, text=True, cwd="/",
                          env={"PATH": os.environ.get("PATH", ""), "LD_LIBRARY_PATH": "/x"})
    home = str(Path(sim_home).resolve())
    assert proc.stdout.strip().split("|") == [home, home, f"{home}/opp", home, f"{home}/lib64:/x"]


def test_no_compiler_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setenv("CC", "/nonexistent/bin/cc")
    with pytest.raises(_build.SimBuildError, match=r"\$CC is set to '/nonexistent/bin/cc'.*apt-get install gcc"):
        _build.build(tmp_path / "home")
    monkeypatch.setenv("CC", "")
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(_build.SimBuildError, match=r"\$CC is not set and 'cc' is not on PATH"):
        _build.build(tmp_path / "home")


def test_build_is_warning_free_and_incremental(tmp_path):
    """-Wall -Wextra -Werror over every simulator source (a fresh home, from a snapshot of the
    sources so that edits made meanwhile do not matter); a second build is skipped."""
    if shutil.which(os.environ["CC"].split()[0] if os.environ.get("CC") else "cc") is None:
        pytest.skip("no C compiler")
    src = tmp_path / "src"
    include = tmp_path / "include"
    shutil.copytree(_build.SRC_DIR, src)
    shutil.copytree(sim.include_dir(), include)
    home = _build.build(tmp_path / "home", src_dir=src, include_dir=include, werror=True)
    assert _build.is_current(home, src_dir=src, include_dir=include, werror=True)
    stamp = home / "lib64" / _build.STAMP
    before = stamp.stat().st_mtime_ns
    assert _build.build(home, src_dir=src, include_dir=include, werror=True) == home
    assert stamp.stat().st_mtime_ns == before
    (src / "runtime" / "error.c").write_text((src / "runtime" / "error.c").read_text() + "\n")
    assert not _build.is_current(home, src_dir=src, include_dir=include, werror=True)


def test_both_runtime_names_share_one_runtime_state(sim_home, c_env):
    """CANN 9's libacl_rt.so and the compatibility libascendcl.so are one runtime: a device set
    through one name is the current device seen through the other."""
    script = (
        "import ctypes, sys\n"
        "a = ctypes.CDLL(sys.argv[1] + '/libascendcl.so'); b = ctypes.CDLL(sys.argv[1] + '/libacl_rt.so')\n"
        "device = ctypes.c_int32(-1)\n"
        "assert b.aclrtGetDevice(ctypes.byref(device)) != 0\n"
        "assert a.aclrtSetDevice(0) == 0 and b.aclrtGetDevice(ctypes.byref(device)) == 0 and device.value == 0\n"
        "assert b.aclrtResetDevice(0) == 0 and a.aclrtGetDevice(ctypes.byref(device)) != 0\n"
        "print('one state')\n"
    )
    proc = subprocess.run([sys.executable, "-c", script, str(Path(sim_home) / "lib64")], env=c_env,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and proc.stdout.strip() == "one state", proc.stderr
