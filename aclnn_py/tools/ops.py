"""``python -m aclnn_py ops``: every operator the toolkit's headers declare, the library that
defines it (a package's, such as ``libopapi_nn.so``, rather than the aggregate ``libopapi.so``),
and whether the binding can declare it (and why not).

An operator is a pair ``aclnnXxxGetWorkspaceSize`` / ``aclnnXxx`` declared by a header of
``include/aclnnop/`` or of a custom operator package (``op_api/include/``, searched first, as
the libraries are); it is listed under its phase-2 name, ``aclnnXxx``. The libraries are read,
not loaded (their ELF symbol tables), and the headers are declared into a fresh cffi FFI the
way ``capi`` declares them on first use: no device is needed, and the toolkit's libraries need
not even load on this host. Point it at any directory with CANN's layout with
``ASCEND_HOME_PATH=/path/to/cann`` (or ``$ACLNN_PY_ASCEND_HOME``) and ``--backend npu``.

Exit status: 0, or 1 when the toolkit is not found or a NAME given is not declared or not
exported.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import warnings
from dataclasses import asdict, dataclass
from pathlib import Path

from .._runtime import backend as _backend
from .._ffi.discovery import BackendUnavailable, Toolkit, find_cann
from .._ffi.op_packages import AGGREGATE_LIBRARY
from .._ffi.operator_headers import OperatorDeclarer, OperatorHeader, operator_header_files, read_operator_header

PHASE1 = "GetWorkspaceSize"


@dataclass
class OperatorEntry:
    name: str               # the phase-2 function, e.g. aclnnAdd
    header: str | None      # the header that declares it (the first one, in search order)
    library: str | None     # the library that defines it (a package's before the aggregate libopapi.so)
    declared: bool          # both functions can be declared through cffi
    error: str              # why not, or ""


def _declarer() -> OperatorDeclarer:
    from .._ffi import new_ffi
    from .._ffi.declarations import include_dir, read_cdef

    ffi = new_ffi()
    ffi.cdef(read_cdef(include_dir()))
    return OperatorDeclarer(ffi)


def _exports(toolkit: Toolkit) -> list[tuple[Path, frozenset[str]]]:
    from .._ffi.elf import exported_functions

    found = []
    for library in toolkit.operator_libraries:
        try:
            found.append((library, exported_functions(library)))
        except (OSError, ValueError) as exc:  # unreadable or damaged: it exports nothing we can see
            why = (exc.strerror or str(exc)) if isinstance(exc, OSError) else str(exc)
            warnings.warn(f"{library}: {why}; its operators are not listed as exported", UserWarning, stacklevel=3)
    return found


def _library(op: str, exports: list[tuple[Path, frozenset[str]]]) -> str | None:
    """The library that defines ``op``: the first, in search order, that exports both its
    functions (else either), the aggregate ``libopapi.so`` after the package libraries it
    aggregates (``libopapi_nn.so``...), which define what it re-exports."""
    exports = sorted(exports, key=lambda entry: entry[0].name == AGGREGATE_LIBRARY)  # stable
    both = next((lib for lib, names in exports if op in names and op + PHASE1 in names), None)
    either = both or next((lib for lib, names in exports if op in names or op + PHASE1 in names), None)
    return str(either) if either is not None else None


def normalize(name: str) -> str:
    """``Add``, ``aclnnAdd`` or ``aclnnAddGetWorkspaceSize`` -> ``aclnnAdd``."""
    if not name.startswith("aclnn"):
        name = "aclnn" + name
    return name[: -len(PHASE1)] if name.endswith(PHASE1) and name != "aclnn" + PHASE1 else name


def collect(toolkit: Toolkit, names: list[str] | None = None) -> list[OperatorEntry]:
    """The operators of ``toolkit`` (only ``names``, when given), in header search order."""
    wanted = {normalize(n) for n in names} if names else None
    folders = toolkit.header_folders
    exports = _exports(toolkit)
    declarer = _declarer()
    listed: list[tuple[OperatorHeader, list[str]]] = []   # (header, its operators not listed before)
    seen: set[str] = set()
    for path in operator_header_files(folders):
        try:
            header = read_operator_header(path)
        except OSError as exc:  # unreadable (no permission), or gone since the folder was listed
            warnings.warn(f"{path}: {exc.strerror or exc}; its operators are not listed", UserWarning, stacklevel=2)
            continue
        ops = [op for op in header.operators() if op not in seen and (wanted is None or op in wanted)]
        if ops:
            seen.update(ops)
            listed.append((header, ops))
    errors = declarer.declare_headers([header for header, _ in listed], folders)
    entries: dict[str, OperatorEntry] = {}
    for header, ops in listed:
        for op in ops:
            problems = []
            for function in (op + PHASE1, op):
                if function not in header.prototypes:
                    problems.append(f"{function}: not declared by {header.path.name}")
                elif errors[header.path].get(function):
                    problems.append(f"{function}: {errors[header.path][function]}")
            entries[op] = OperatorEntry(op, str(header.path), _library(op, exports), not problems,
                                        "; ".join(problems))
    for op in sorted(wanted or ()):
        if op not in entries:
            entries[op] = OperatorEntry(op, None, _library(op, exports), False,
                                        "no header declares " + op + PHASE1)
    return list(entries.values())


def _toolkit(backend: str) -> Toolkit:
    if backend == "npu":
        return find_cann()
    from .._runtime.loader import _toolkit as sim_toolkit

    return sim_toolkit("sim")


def _default_backend() -> str:
    env = os.environ.get(_backend.ENV_VAR, "")
    if env in ("npu", "sim"):
        return env
    try:
        find_cann()
    except BackendUnavailable:
        return "sim"
    return "npu"


def _relative(path: str | None, home: Path) -> str:
    if path is None:
        return "-"
    p = Path(path)
    return str(p.relative_to(home)) if p.is_relative_to(home) else str(p)


def format_table(toolkit: Toolkit, backend: str, entries: list[OperatorEntry]) -> str:
    home = toolkit.home
    lines = [f"toolkit: {home} (backend {backend}" + (f", from {toolkit.source})" if toolkit.source else ")")]
    for package in toolkit.custom:
        lines.append(f"custom operator package: {package.root} (from {package.source})")
    rows = [(e.name, "yes" if e.declared else "NO", _relative(e.library, home), _relative(e.header, home))
            for e in entries]
    header = ("operator", "declared", "library", "header")
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(3)]
    lines.append("")
    for row in [header, *rows]:
        lines.append("  ".join(cell.ljust(widths[i]) if i < 3 else cell for i, cell in enumerate(row)).rstrip())
    undeclared = [e for e in entries if not e.declared]
    if undeclared:
        lines += ["", "not declarable:"] + [f"  {e.name}: {e.error}" for e in undeclared]
    exported = sum(e.library is not None for e in entries)
    lines += ["", f"{len(entries)} operators: {len(entries) - len(undeclared)} declarable, "
                  f"{exported} exported by a library"]
    return "\n".join(lines)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("names", nargs="*", metavar="NAME",
                        help="only these operators (aclnnAdd, Add or aclnnAddGetWorkspaceSize)")
    parser.add_argument("--backend", choices=("npu", "sim"), default=None,
                        help="whose toolkit (default: $ACLNN_PY_BACKEND if npu or sim, else npu where CANN "
                             "is found, else sim)")
    parser.add_argument("--json", action="store_true",
                        help="print a JSON list of {name, header, library, declared, error}")


def _collect(args: argparse.Namespace) -> tuple[str, Toolkit, list[OperatorEntry]]:
    backend = args.backend or _default_backend()
    toolkit = _toolkit(backend)
    return backend, toolkit, collect(toolkit, args.names)


def run(args: argparse.Namespace) -> int:
    # What is wrong with the configuration (a custom package, a library) is told once, plainly:
    # a command's user has no use for the source line that warned.
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("default")
        try:
            backend, toolkit, entries = _collect(args)
        except BackendUnavailable as exc:
            unavailable: BackendUnavailable | None = exc
        else:
            unavailable = None
    for warning in caught:
        print(f"warning: {warning.message}", file=sys.stderr)
    if unavailable is not None:
        print(unavailable, file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps([asdict(e) for e in entries], indent=1))
    else:
        print(format_table(toolkit, backend, entries))
    if args.names and any(not e.declared or e.library is None for e in entries):
        return 1
    return 0


__all__ = ["OperatorEntry", "collect", "format_table", "normalize"]
