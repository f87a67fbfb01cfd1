"""Issue #24: every function of CANN 9.1.0's runtime and nnopbase headers (tests/sim/cann_api.txt,
417) is declared in include/ with CANN's prototype, exported by the library CANN exports it
from, defined by the simulator either as an implementation or as a row of the one table of
what it does not honour (aclnn_py/sim/src/runtime/unsupported.def), and reachable from
``aclnn_py.capi``; every row of that table returns ACL_ERROR_RT_FEATURE_NOT_SUPPORT with a
recent error message and last error naming the function.

``python tests/sim/test_runtime_coverage.py`` prints the figures (declared / exported /
implemented / unsupported, out of 417)."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
INCLUDE = REPO / "include"
INVENTORY = Path(__file__).resolve().parent / "cann_api.txt"
TABLE = REPO / "aclnn_py" / "sim" / "src" / "runtime" / "unsupported.def"
RUNTIME_LIBRARIES = ("libascendcl.so", "libacl_rt.so")
_ROW = re.compile(r"^ACLSIM_UNSUPPORTED\((\w+), ([^,]+), (\w+), \((.*)\), (\w+)\)$")


def inventory() -> list[tuple[str, str, str, str]]:
    """(header, library, function name, prototype) of each CANN function."""
    rows = []
    for line in INVENTORY.read_text().splitlines():
        if line and not line.startswith("#"):
            header, library, prototype = line.split("\t")
            rows.append((header, library, re.search(r"(\w+)\(", prototype).group(1), prototype))
    return rows


def table() -> dict[str, tuple[str, str, str, str]]:
    """name -> (why, return type, parameters, failure value) of unsupported.def."""
    rows = {}
    for line in TABLE.read_text().splitlines():
        if line.startswith("ACLSIM_UNSUPPORTED("):
            m = _ROW.match(line)
            assert m, line
            assert m[3] not in rows, f"{m[3]} twice in the table"
            rows[m[3]] = (m[1], m[2].strip(), m[4], m[5])
    return rows


def _normal(prototype: str) -> str:
    return " ".join(prototype.replace("*", " * ").replace("(", " ( ").replace(")", " ) ").replace(",", " , ").split())


def declarations(header: str) -> dict[str, str]:
    """name -> prototype (without the visibility macro) of one header of include/."""
    found = {}
    for line in (INCLUDE / header).read_text().splitlines():
        if line.startswith("ACL_FUNC_VISIBILITY "):
            prototype = line[len("ACL_FUNC_VISIBILITY "):]
            found[re.search(r"(\w+)\(", prototype).group(1)] = prototype
    return found


def figures(lib64: Path | None) -> dict[str, int]:
    from aclnn_py.sim import _build

    rows = inventory()
    declared = sum(1 for header, _l, name, proto in rows
                   if _normal(declarations(header).get(name, "")) == _normal(proto))
    out = {"CANN functions": len(rows), "declared with CANN's prototype": declared}
    if lib64 is not None:
        exports = {lib: set(_build.exported_functions(lib64 / lib)) for lib in ("libascendcl.so", "libnnopbase.so")}
        out["exported from CANN's library"] = sum(1 for _h, lib, name, _p in rows if name in exports[lib])
    unsupported = table()
    out["implemented"] = sum(1 for _h, _l, name, _p in rows if name not in unsupported)
    kinds = Counter(why for why, *_rest in unsupported.values())
    out["in the unsupported table"] = len(unsupported)
    out["  of which no CPU can honour"] = len(unsupported) - kinds["NOT_YET"]
    out["  of which NOT_YET"] = kinds["NOT_YET"]
    return out


def test_the_inventory_is_cann_9_1s_417_functions():
    rows = inventory()
    assert len(rows) == 417 and len({name for _h, _l, name, _p in rows}) == 417
    assert Counter(lib for _h, lib, _n, _p in rows) == {"libascendcl.so": 372, "libnnopbase.so": 45}


def test_every_function_is_declared_with_cann_prototype_in_cann_header():
    rows = inventory()
    for header, _library, name, prototype in rows:
        assert _normal(declarations(header).get(name, "")) == _normal(prototype), (header, name)
    # ... and the headers declare nothing else.
    declared = {n for h in {r[0] for r in rows} for n in declarations(h)}
    assert declared == {name for _h, _l, name, _p in rows}


def test_every_function_is_implemented_or_in_the_table_never_both(sim_home):
    from aclnn_py.sim import _build

    unsupported = table()
    names = {name for _h, _l, name, _p in inventory()}
    assert set(unsupported) <= names
    # Every name is defined in libaclsim.so (the build fails otherwise); the table's rows are the
    # only definitions of theirs: no source under src/ but unsupported.c defines one of them.
    assert names <= set(_build.exported_functions(Path(sim_home) / "lib64" / "libaclsim.so"))
    sources = [p for p in (REPO / "aclnn_py" / "sim" / "src").rglob("*.c") if p.name != "unsupported.c"]
    defined = set()
    for path in sources:
        defined |= set(re.findall(r"^[A-Za-z_][\w \*]*?\b(\w+)\([^;]*$", path.read_text(), re.M))
    assert not set(unsupported) & defined
    for name, (why, ret, _params, failure) in unsupported.items():
        assert why in ("KERNELS", "IPC", "NOTIFY", "SNAPSHOT", "MBUF", "DEVICE_CONTROL", "HW_MAINTENANCE",
                       "MODEL_DUMP", "NOT_YET"), name
        assert failure == ("ACL_ERROR_RT_FEATURE_NOT_SUPPORT" if ret == "aclError" else "NULL"), name


def test_each_function_is_exported_from_cann_library_only(sim_home):
    from aclnn_py.sim import _build

    lib64 = Path(sim_home) / "lib64"
    rows = inventory()
    runtime = {name for _h, lib, name, _p in rows if lib == "libascendcl.so"}
    nnopbase = {name for _h, lib, name, _p in rows if lib == "libnnopbase.so"}
    for library in RUNTIME_LIBRARIES:
        assert set(_build.exported_functions(lib64 / library)) == runtime, library
    assert set(_build.exported_functions(lib64 / "libnnopbase.so")) == nnopbase


def _compile(tmp_path: Path, name: str, source: str, link: list[str]) -> subprocess.CompletedProcess[str]:
    if shutil.which("g++") is None:
        pytest.skip("g++ not installed")
    path = tmp_path / f"{name}.cpp"
    path.write_text(source)
    return subprocess.run(["g++", "-std=c++11", "-Wall", "-Werror", "-Wno-deprecated-declarations",
                           f"-I{INCLUDE}", f"-I{INCLUDE / 'aclnn'}", str(path), "-o", str(tmp_path / name), *link],
                          capture_output=True, text=True)


def test_a_program_taking_every_function_address_links_against_ascendcl_and_nnopbase(sim_home, tmp_path):
    """Generated from include/: the address of each declared function, linked against
    libascendcl.so and libnnopbase.so by absolute path, as CANN's sample CMake files do."""
    names = [name for header in ("acl/acl_base_rt.h", "acl/acl_rt.h", "aclnn/acl_meta.h", "aclnn/aclnn_base.h")
             for name in declarations(header)]
    assert len(names) == 417
    source = '#include <cstdio>\n#include "acl/acl.h"\n#include "aclnn/aclnn_base.h"\n\n'
    source += "static void *const functions[] = {\n" + "".join(f"    (void *)&{n},\n" for n in names) + "};\n\n"
    source += ('int main() {\n    int missing = 0;\n    for (void *f : functions) missing += f == nullptr;\n'
               '    std::printf("%zu functions, %d missing\\n", sizeof functions / sizeof *functions, missing);\n'
               '    return missing;\n}\n')
    lib64 = Path(sim_home) / "lib64"
    proc = _compile(tmp_path, "addresses", source, [str(lib64 / "libascendcl.so"), str(lib64 / "libnnopbase.so")])
    assert proc.returncode == 0, proc.stderr
    run = subprocess.run([str(tmp_path / "addresses")], capture_output=True, text=True,
                         env={"LD_LIBRARY_PATH": str(lib64)})
    assert run.returncode == 0 and run.stdout == "417 functions, 0 missing\n", run.stdout + run.stderr


def test_cann_prototypes_redeclared_after_our_headers_compile(tmp_path):
    """Redeclaring a C function with other parameter or return types is an error in C++, so
    this compiles only if every prototype of include/ is CANN's (the inventory's)."""
    source = '#include "acl/acl.h"\n#include "aclnn/aclnn_base.h"\n\nextern "C" {\n'
    source += "".join(f"{proto}\n" for _h, _l, _n, proto in inventory())
    source += "}\n\nint main() { return 0; }\n"
    assert _compile(tmp_path, "redeclared", source, []).returncode == 0
    # The check has teeth: one changed parameter type is refused.
    broken = source.replace("aclError aclrtStreamWaitEvent(aclrtStream stream, aclrtEvent event);",
                            "aclError aclrtStreamWaitEvent(aclrtStream stream, int event);")
    assert broken != source
    proc = _compile(tmp_path, "broken", broken, [])
    assert proc.returncode != 0 and "aclrtStreamWaitEvent" in proc.stderr


def test_capi_reaches_every_function():
    from aclnn_py import capi
    from aclnn_py.tools import stubs

    stub = stubs.STUB_PATH.read_text()
    for _h, _l, name, _p in inventory():
        assert callable(getattr(capi, name)), name
        assert f"\ndef {name}(" in stub, name


def _zero_arguments(ffi, lib, name: str) -> list[object]:
    """Zero / NULL for each parameter of a function (the table's functions read none)."""
    args = []
    for arg in ffi.typeof(lib.fn(name)).args:
        if arg.kind in ("pointer", "function"):
            args.append(ffi.NULL)
        elif arg.kind == "struct":
            args.append(ffi.new(f"{arg.cname} *")[0])
        else:
            args.append(0)
    return args


def test_each_unsupported_function_says_so(sim_lib):
    ffi, fn = sim_lib.ffi, sim_lib.fn
    for name, (why, ret, _params, _failure) in table().items():
        result = fn(name)(*_zero_arguments(ffi, sim_lib, name))
        if ret == "aclError":
            assert result == 207000, name
        else:
            assert result == ffi.NULL, name
        message = sim_lib.recent_error()
        assert message.startswith(f"{name}: feature not supported by the aclnn_py CANN simulator"), message
        assert fn("aclrtPeekAtLastError")(0) == 207000
        assert fn("aclrtGetLastError")(0) == 207000
        assert fn("aclrtGetLastError")(0) == 0, "aclrtGetLastError clears"


if __name__ == "__main__":
    from aclnn_py import sim

    for key, value in figures(Path(sim.ensure_built()) / "lib64").items():
        print(f"{key:34} {value}")
    sys.exit(0)
