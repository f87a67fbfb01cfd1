"""The cffi declarations, read from the project's C headers in ``include/``.

Those headers ship with the package, independently of the simulator: a wheel carries a copy in
``aclnn_py/include`` (copied by ``setup.py`` at build time); a source checkout or an editable
install reads the repository's ``include/`` (``include_dir()``).

The headers the simulator is compiled against are also the only declaration source of the
cffi layer, so the two cannot drift. They are written to a small convention (see
``include/acl/acl_base_rt.h``) that lets a line filter turn them into ``ffi.cdef`` input:

* ``#include "..."`` / ``<acl/...>`` lines name the project headers to read first (system
  headers such as ``<stdint.h>`` are skipped: cffi knows their types);
* ``#ifdef __cplusplus`` blocks (the ``extern "C"`` guards) are dropped;
* ``#define NAME <integer literal>`` is kept (cffi turns it into an integer constant); every
  other preprocessor line is dropped;
* the visibility macros ``ACL_FUNC_VISIBILITY`` and ``ACLNN_API`` are removed, and so are the
  deprecation markers ``ACL_DEPRECATED_MESSAGE("...")`` / ``ACL_DEPRECATED`` (before a prototype,
  an enum member's value or a struct member; cffi has no use for them).
"""

from __future__ import annotations

import re
from pathlib import Path

from .op_packages import operator_packages

# The headers whose declarations the binding uses (each registered operator's too); what they
# include is read too.
ROOT_HEADERS = (
    "acl/acl.h",
    "aclnn/acl_meta.h",
    "aclnn/aclnn_base.h",
    "aclnn/opdev/op_errno.h",
    *(f"aclnnop/{header}" for _package, _library, header in operator_packages().values()),
    "aclsim/aclsim.h",
)

def include_dir() -> Path:
    """The binding's own headers (``acl/``, ``aclnn/``, ``aclnnop/``, ``aclsim/``): the copy a
    wheel carries in ``aclnn_py/include``, else the repository's ``include/``."""
    from ..sim import _build  # loadable by path from setup.py, so the one place that knows

    found = _build.source_include_dir()
    if found is None:
        raise FileNotFoundError(
            f"aclnn_py: its C headers are missing (no acl/acl.h in {_build.HERE.parent / 'include'} nor in "
            f"{_build.HERE.parent.parent / 'include'}); reinstall aclnn_py")
    return found


_VISIBILITY = re.compile(r"\b(ACL_FUNC_VISIBILITY|ACLNN_API)\b\s*")
_DEPRECATION = re.compile(r'\bACL_DEPRECATED_MESSAGE\s*\(\s*"(?:[^"\\]|\\.)*"\s*\)\s*|\bACL_DEPRECATED\b\s*')
_INCLUDE = re.compile(r'#\s*include\s*[<"]([^>"]+)[>"]')
_INT_DEFINE = re.compile(r"#\s*define\s+([A-Za-z_]\w*)\s+(-?(?:0[xX][0-9a-fA-F]+|\d+))[uUlL]*\s*(?://.*|/\*.*\*/)?$")
_BLOCK_COMMENT = re.compile(r"/\*.*?\*/", re.S)
_LINE_COMMENT = re.compile(r"//[^\n]*")


def _resolve(include: str, including: Path, include_dir: Path) -> Path | None:
    for candidate in (including.parent / include, include_dir / include, include_dir / "aclnn" / include):
        if candidate.is_file():
            return candidate
    return None  # a system header


def _filter(text: str) -> tuple[list[str], list[str]]:
    """(the declaration lines, the project headers it includes) of one header's text."""
    text = _BLOCK_COMMENT.sub("", text)
    out: list[str] = []
    includes: list[str] = []
    # A stack of "is this #if block dropped?" flags.
    dropped: list[bool] = []
    for raw in text.splitlines():
        line = _LINE_COMMENT.sub("", raw).rstrip() if not raw.lstrip().startswith("#") else raw.strip()
        stripped = line.strip()
        if stripped.startswith("#"):
            directive = stripped[1:].strip()
            if directive.startswith(("if", "ifdef", "ifndef")):
                dropped.append(any(dropped) or directive.replace(" ", "") == "ifdef__cplusplus")
            elif directive.startswith("endif"):
                if dropped:
                    dropped.pop()
            elif directive.startswith(("else", "elif")):
                pass  # only used for macro definitions, which are dropped anyway
            elif any(dropped):
                continue
            elif m := _INCLUDE.match(stripped):
                includes.append(m.group(1))
            elif m := _INT_DEFINE.match(stripped):
                out.append(f"#define {m.group(1)} {m.group(2)}")
            continue
        if any(dropped):
            continue
        stripped = _DEPRECATION.sub("", _VISIBILITY.sub("", stripped)).strip()
        if stripped:
            out.append(stripped)
    return out, includes


# An enum declaration: ``typedef enum [tag] {...} name;`` or a plain ``enum tag {...};``.
_ENUM_TYPEDEF = re.compile(r"(?:typedef\s+enum\b[^{};]*\{[^{}]*\}\s*\w+|(?<![\w])enum\s+\w+\s*\{[^{}]*\})\s*;")


def enum_declarations(cdef: str) -> list[str]:
    """The enum declarations of cdef text, each whole."""
    return _ENUM_TYPEDEF.findall(cdef)


def constants_cdef(cdef: str) -> str:
    """The integer constants of cdef text: its ``#define NAME <integer>`` lines and its
    enum declarations, without the rest (prototypes, structs)."""
    defines = [line for line in cdef.splitlines() if line.startswith("#define ")]
    return "\n".join(defines + enum_declarations(cdef)) + "\n"


def read_cdef(include_dir: str | Path, roots: tuple[str, ...] = ROOT_HEADERS) -> str:
    """The cdef text of ``roots`` and everything they include, each header once, in order."""
    include_dir = Path(include_dir)
    seen: set[Path] = set()
    chunks: list[str] = []

    def visit(path: Path) -> None:
        path = path.resolve()
        if path in seen:
            return
        seen.add(path)
        lines, includes = _filter(path.read_text())
        for inc in includes:
            target = _resolve(inc, path, include_dir)
            if target is not None:
                visit(target)
        chunks.append(f"/* {path.relative_to(include_dir.resolve()) if path.is_relative_to(include_dir.resolve()) else path} */")
        chunks.extend(lines)

    for root in roots:
        path = include_dir / root
        if not path.is_file():
            raise FileNotFoundError(f"aclnn_py: header {root} not found under {include_dir}")
        visit(path)
    return "\n".join(chunks) + "\n"
