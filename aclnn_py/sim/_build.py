"""Compile the simulator into a toolkit home laid out like an installed CANN toolkit.

Standard library only and free of package-relative imports: ``setup.py`` loads this file
by path, inside pip's isolated build environment, before ``aclnn_py`` is importable.

The home::

    <home>/include/          the project's headers (acl/, aclnn/, aclnnop/, aclsim/)
    <home>/lib64/libaclsim.so     the simulator's state and code: runtime and nnopbase, the
                                  internal aclsim_* interface and the aclsimGetCounters API
                                  (a name CANN does not have, so none of it shows in CANN's)
    <home>/lib64/libascendcl.so, libacl_rt.so (runtime), libnnopbase.so (descriptors, executors)
                                  ELF *filter* libraries of libaclsim.so, each defining exactly
                                  the functions CANN's library of that name defines (read from
                                  the headers): a program links against them as against CANN's,
                                  and at run time every symbol resolves into libaclsim.so, so
                                  the state exists once however a program names the libraries
    <home>/lib64/libopapi_nn.so, libopapi_math.so, libopapi_cv.so
                                  each operator in the package library CANN defines it in
                                  (each operator's declaration, read by
                                  aclnn_py/_ffi/op_packages.py)
    <home>/lib64/libopapi.so      the classic aggregate of every operator
    <home>/set_env.sh        exports ASCEND_HOME_PATH & co. like CANN's set_env.sh
    <home>/version.info      ``Version=<the CANN release the headers follow>``, as CANN's packages
                             record theirs (ACLSIM_CANN_VERSION of include/aclsim/aclsim.h)
    <home>/opp/README        so that ASCEND_OPP_PATH names a directory (no kernel packages)

Run ``python -m aclnn_py.sim build [--out DIR]`` to (re)build by hand.
"""

from __future__ import annotations

import hashlib
import os
import re
import shlex
import shutil
import struct
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SRC_DIR = HERE / "src"
DEFAULT_HOME = HERE / "toolkit"

#: The one library holding the simulator's state and code (these source sub-directories;
#: kernels/ is the compute the operator libraries share, e.g. the matrix product).
SIM_LIBRARY = "libaclsim.so"
SIM_SOURCES = ("runtime", "nnopbase", "kernels")

#: CANN-named filter library -> the headers declaring exactly the functions it defines.
FILTER_LIBRARIES = {
    "libascendcl.so": ("acl/acl.h", "acl/acl_rt.h", "acl/acl_base_rt.h"),
    "libacl_rt.so": ("acl/acl.h", "acl/acl_rt.h", "acl/acl_base_rt.h"),
    "libnnopbase.so": ("aclnn/acl_meta.h", "aclnn/aclnn_base.h"),
}

#: What an operator library records as NEEDED, like CANN's (the code it calls is in libaclsim.so).
OPERATOR_LIBRARY_NEEDS = ("libnnopbase.so", "libascendcl.so")


def _operator_packages() -> dict[str, Any]:
    """aclnn_py/_ffi/op_packages.py, read by path (see its docstring)."""
    import runpy

    return runpy.run_path(str(HERE.parent / "_ffi" / "op_packages.py"))


def operator_libraries() -> dict[str, tuple[str, ...]]:
    """{operator library: the headers in include/aclnnop/ of the operators it defines}: the
    package libraries, then the aggregate with every operator."""
    table = _operator_packages()
    libraries: dict[str, tuple[str, ...]] = {}
    for _package, library, header in table["operator_packages"]().values():
        if header not in libraries.get(library, ()):  # (a header may declare several operators)
            libraries[library] = libraries.get(library, ()) + (header,)
    libraries[table["AGGREGATE_LIBRARY"]] = tuple(h for hs in libraries.values() for h in hs)
    return libraries


#: Where the build writes the C headers it generates (under the toolkit home; git-ignored).
GENERATED = "generated"


def dtype_rules_header() -> str:
    """``aclsim_dtype_rules.h``: the operators' dtype table (each ``DTYPE_RULES`` in
    aclnn_py/ops/<op>.py, read by path like the package table), for the C checks."""
    table = _operator_packages()
    return str(table["c_header"](table["dtype_rules"]()))


def generated_include_dir(home: str | os.PathLike[str]) -> Path:
    """The directory of the headers the build generated (``-I`` it to compile src/ops/*.c)."""
    return Path(home) / GENERATED


ALL_LIBRARIES = (SIM_LIBRARY, *FILTER_LIBRARIES, *operator_libraries())

# -O3: GCC's full auto-vectoriser cost model (at -O2, GCC 12+ vectorises only loops that need no
# runtime check or epilogue); the operator kernels are written to be vectorised by it.
CFLAGS = ("-std=c11", "-O3", "-g", "-fPIC", "-pthread", "-fvisibility=hidden", "-Wall", "-Wextra")
STAMP = ".aclsim-build-stamp"


class SimBuildError(RuntimeError):
    """The simulator could not be built (no compiler, or a compile error)."""


def source_include_dir() -> Path | None:
    """The binding's headers: the copy an installed wheel carries (``aclnn_py/include``), or the
    repository's include/ in a source checkout; else None."""
    for candidate in (HERE.parent / "include", HERE.parent.parent / "include"):
        if (candidate / "acl" / "acl.h").is_file():
            return candidate
    return None


def find_compiler() -> list[str]:
    """The C compiler command: ``$CC`` (may carry arguments) or ``cc``."""
    cc = os.environ.get("CC", "").strip()
    argv = shlex.split(cc) if cc else ["cc"]
    if shutil.which(argv[0]) is None:
        origin = f"$CC is set to {cc!r}" if cc else "$CC is not set and 'cc' is not on PATH"
        raise SimBuildError(
            "aclnn_py: building the CANN simulator needs a C11 compiler, but none was found "
            f"({origin}). Install one (Debian/Ubuntu: apt-get install gcc; Fedora/RHEL: dnf install gcc; "
            "Alpine: apk add build-base; macOS is not supported) or point $CC at it, then reinstall "
            "aclnn_py or run `python -m aclnn_py.sim build`. The numpy backend works without it."
        )
    return argv


def _sources(sub: str, src_dir: Path) -> list[Path]:
    return sorted((src_dir / sub).glob("*.c"))


def _fingerprint(cc: list[str], src_dir: Path, include_dir: Path, werror: bool) -> str:
    h = hashlib.sha256()
    h.update(repr((cc, CFLAGS, werror, sys.platform, operator_libraries(), dtype_rules_header())).encode())
    for root in (src_dir, include_dir):
        for path in sorted(root.rglob("*")):
            if path.is_file() and path.suffix in (".c", ".h", ".def"):
                h.update(str(path.relative_to(root)).encode())
                h.update(path.read_bytes())
    return h.hexdigest()


def is_built(home: str | os.PathLike[str] = DEFAULT_HOME) -> bool:
    lib64 = Path(home) / "lib64"
    return all((lib64 / name).is_file() for name in ALL_LIBRARIES) and (Path(home) / "include" / "acl").is_dir()


def is_current(home: str | os.PathLike[str] = DEFAULT_HOME, *, src_dir: Path = SRC_DIR,
               include_dir: Path | None = None, werror: bool = False) -> bool:
    """True if ``home`` was built from the present sources with the present compiler."""
    home = Path(home)
    include_dir = include_dir or source_include_dir() or home / "include"
    try:
        stamp = (home / "lib64" / STAMP).read_text().strip()
        cc = find_compiler()
    except (OSError, SimBuildError):
        return False
    return is_built(home) and stamp == _fingerprint(cc, src_dir, include_dir, werror)


def _run(argv: list[str], what: str, verbose: bool) -> None:
    if verbose:
        print(" ".join(shlex.quote(a) for a in argv), file=sys.stderr)
    proc = subprocess.run(argv, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SimBuildError(
            f"aclnn_py: compiling the simulator's {what} failed (exit {proc.returncode}).\n"
            f"command: {' '.join(shlex.quote(a) for a in argv)}\n{proc.stderr.strip()}"
        )
    if verbose and proc.stderr.strip():
        print(proc.stderr.strip(), file=sys.stderr)


def _link_flags(name: str) -> list[str]:
    return [f"-Wl,-soname,{name}", "-Wl,-rpath,$ORIGIN", "-Wl,--no-undefined", "-lm"]


_DECLARATION = re.compile(r"^(?:ACL_FUNC_VISIBILITY|ACLNN_API)\b[^(]*?(\w+)\(", re.M)


def declared_functions(include_dir: Path, headers: tuple[str, ...]) -> list[str]:
    """The functions ``headers`` (paths under include/) declare, one prototype per line as
    every header under include/ writes them."""
    return sorted({m.group(1) for h in headers for m in _DECLARATION.finditer((include_dir / h).read_text())})


def exported_functions(library: Path) -> list[str]:
    """Names of the default-visibility functions and objects ``library`` defines (ELF64 LE)."""
    data = library.read_bytes()
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        raise SimBuildError(f"aclnn_py: {library} is not a 64-bit little-endian ELF file")
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", data, 0x3A)
    sections = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
    names = []
    for _name, sh_type, _flags, _addr, offset, size, link, _info, _align, entsize in sections:
        if sh_type != 11:  # SHT_DYNSYM
            continue
        str_offset = sections[link][4]
        for pos in range(offset + entsize, offset + size, entsize):  # entry 0 is the null symbol
            st_name, st_info, st_other, st_shndx = struct.unpack_from("<IBBH", data, pos)
            binding, kind, visibility = st_info >> 4, st_info & 0xF, st_other & 0x3
            if st_shndx == 0 or binding not in (1, 2) or kind not in (1, 2) or visibility != 0:
                continue
            end = data.index(b"\0", str_offset + st_name)
            names.append(data[str_offset + st_name:end].decode())
    return sorted(set(names))


def _install_include(include_dir: Path, home: Path, link: bool) -> None:
    target = home / "include"
    if target.is_symlink() or target.is_file():
        target.unlink()
    elif target.is_dir():
        shutil.rmtree(target)
    if link:
        target.symlink_to(include_dir.resolve(), target_is_directory=True)
    else:
        shutil.copytree(include_dir, target, ignore=shutil.ignore_patterns("*.pyc", "__pycache__"))


SET_ENV = """\
# Environment for the aclnn_py CANN simulator toolkit (bash or zsh: `source set_env.sh`).
# Sets the variables CANN's set_env.sh sets, pointing at this directory, plus
# ASCEND_CUSTOM_PATH, which the official aclnn sample CMakeLists.txt read.
if [ -n "${{BASH_SOURCE:-}}" ]; then
    _aclsim_home="$(cd "$(dirname "${{BASH_SOURCE[0]}}")" && pwd)"
elif [ -n "${{ZSH_VERSION:-}}" ]; then
    _aclsim_home="$(cd "$(dirname "${{(%):-%x}}")" && pwd)"
else
    _aclsim_home={home}
fi
export ASCEND_HOME_PATH="$_aclsim_home"
export ASCEND_TOOLKIT_HOME="$_aclsim_home"
export ASCEND_OPP_PATH="$_aclsim_home/opp"
export ASCEND_AICPU_PATH="$_aclsim_home"
export ASCEND_CUSTOM_PATH="$_aclsim_home"
export LD_LIBRARY_PATH="$_aclsim_home/lib64${{LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}}"
unset _aclsim_home
"""


_CANN_VERSION = re.compile(r'^#define ACLSIM_CANN_VERSION "([^"]+)"', re.M)


def cann_version(include_dir: Path) -> str:
    """The CANN release the headers follow (``ACLSIM_CANN_VERSION`` in aclsim/aclsim.h)."""
    found = _CANN_VERSION.search((include_dir / "aclsim" / "aclsim.h").read_text())
    if found is None:
        raise SimBuildError(f"aclnn_py: {include_dir}/aclsim/aclsim.h does not define ACLSIM_CANN_VERSION")
    return found.group(1)


def build(home: str | os.PathLike[str] = DEFAULT_HOME, *, src_dir: str | os.PathLike[str] = SRC_DIR,
          include_dir: str | os.PathLike[str] | None = None, link_include: bool = False,
          werror: bool = False, force: bool = False, verbose: bool = False) -> Path:
    """Build the toolkit into ``home`` (skipped when it is current, unless ``force``).

    ``include_dir`` defaults to the repository's include/ (source checkout) or the headers
    already in ``home``; ``link_include`` makes ``home/include`` a symlink to it (development).
    """
    home = Path(home).resolve()
    src_dir = Path(src_dir).resolve()
    if include_dir is None:
        include_dir = source_include_dir() or home / "include"
    include_dir = Path(include_dir).resolve()
    if not (include_dir / "acl" / "acl.h").is_file():
        raise SimBuildError(f"aclnn_py: the simulator headers are missing: {include_dir}/acl/acl.h not found")
    if not (src_dir / "runtime").is_dir():
        raise SimBuildError(f"aclnn_py: the simulator sources are missing: {src_dir}/runtime not found")
    cc = find_compiler()
    stamp = _fingerprint(cc, src_dir, include_dir, werror)
    if not force and is_built(home):
        try:
            if (home / "lib64" / STAMP).read_text().strip() == stamp:
                return home
        except OSError:
            pass

    lib64 = home / "lib64"
    lib64.mkdir(parents=True, exist_ok=True)
    (home / "opp").mkdir(exist_ok=True)
    (home / "opp" / "README").write_text(
        "aclnn_py CANN simulator: the operators are compiled into lib64/libopapi*.so; this directory\n"
        "only exists so that ASCEND_OPP_PATH names a directory.\n"
    )
    (lib64 / STAMP).unlink(missing_ok=True)
    flags = list(CFLAGS) + (["-Werror"] if werror else [])
    generated = generated_include_dir(home)
    generated.mkdir(exist_ok=True)
    (generated / "aclsim_dtype_rules.h").write_text(dtype_rules_header())
    includes = [f"-I{include_dir}", f"-I{src_dir}", f"-I{generated}"]
    with tempfile.TemporaryDirectory(prefix="aclsim-build-") as tmp_name:
        tmp = Path(tmp_name)
        sources = [str(p) for sub in SIM_SOURCES for p in _sources(sub, src_dir)]
        argv = cc + flags + includes + ["-shared", "-o", str(tmp / SIM_LIBRARY), *sources]
        # -Bsymbolic: the simulator's own calls stay inside it, whichever library a program
        # named first.
        argv += _link_flags(SIM_LIBRARY) + ["-Wl,-Bsymbolic"]
        _run(argv, f"{SIM_LIBRARY} ({', '.join(s + '/' for s in SIM_SOURCES)})", verbose)
        os.replace(tmp / SIM_LIBRARY, lib64 / SIM_LIBRARY)
        defined = set(exported_functions(lib64 / SIM_LIBRARY))
        for name, headers in FILTER_LIBRARIES.items():
            symbols = declared_functions(include_dir, headers)
            missing = sorted(set(symbols) - defined)
            if missing:
                raise SimBuildError(f"aclnn_py: {', '.join(headers)} declare functions the simulator does not "
                                    f"define, so {name} cannot export them: {', '.join(missing)}")
            # Stand-ins for the link editor only: at run time the filter resolves every one of
            # them in libaclsim.so.
            stub = tmp / f"{name}.c"
            stub.write_text("".join(f"void {sym}(void) {{}}\n" for sym in symbols))
            argv = cc + ["-O0", "-fPIC", "-shared", "-w", "-o", str(tmp / name), str(stub),
                         f"-Wl,-soname,{name}", f"-Wl,--filter,{SIM_LIBRARY}", "-Wl,-rpath,$ORIGIN"]
            _run(argv, f"{name} (filter of {SIM_LIBRARY})", verbose)
            os.replace(tmp / name, lib64 / name)
        # Each operator source compiled once; shared helpers (ops/*.c of no operator header)
        # go into every operator library.
        operators = operator_libraries()
        op_sources = {p.stem: p for p in _sources("ops", src_dir)}
        stems = {h[len("aclnn_"):-len(".h")] for hs in operators.values() for h in hs}
        absent = sorted(stems - set(op_sources))
        if absent:
            raise SimBuildError(f"aclnn_py: no simulator source for the operator headers of {', '.join(absent)} "
                                f"(expected {src_dir / 'ops'}/<stem>.c for include/aclnnop/aclnn_<stem>.h)")
        objects = {}
        for stem, path in op_sources.items():
            objects[stem] = tmp / f"{stem}.o"
            _run(cc + flags + includes + ["-c", "-o", str(objects[stem]), str(path)], f"ops/{path.name}", verbose)
        helpers = [str(objects[stem]) for stem in op_sources if stem not in stems]
        for name, headers in operators.items():
            mine = [str(objects[h[len("aclnn_"):-len(".h")]]) for h in headers]
            argv = cc + flags + ["-shared", "-o", str(tmp / name), *mine, *helpers, "-Wl,--no-as-needed"]
            argv += [str(lib64 / dep) for dep in OPERATOR_LIBRARY_NEEDS] + [str(lib64 / SIM_LIBRARY)]
            _run(argv + _link_flags(name), f"{name} ({', '.join(headers)})", verbose)
            os.replace(tmp / name, lib64 / name)
    if include_dir != (home / "include").resolve():
        _install_include(include_dir, home, link_include)
    (home / "set_env.sh").write_text(SET_ENV.format(home=shlex.quote(str(home))))
    (home / "version.info").write_text(f"Version={cann_version(include_dir)}\n")
    (lib64 / STAMP).write_text(stamp + "\n")
    return home


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m aclnn_py.sim build", description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(DEFAULT_HOME), help="toolkit home to build (default: %(default)s)")
    parser.add_argument("--force", action="store_true", help="rebuild even if up to date")
    parser.add_argument("--werror", action="store_true", help="treat compiler warnings as errors")
    parser.add_argument("--link-include", action="store_true", help="symlink include/ instead of copying it")
    parser.add_argument("-v", "--verbose", action="store_true", help="print the compiler commands")
    args = parser.parse_args(argv)
    try:
        home = build(args.out, werror=args.werror, force=args.force, link_include=args.link_include,
                     verbose=args.verbose)
    except SimBuildError as exc:
        print(exc, file=sys.stderr)
        return 1
    print(home)
    return 0


if __name__ == "__main__":
    sys.exit(main())
