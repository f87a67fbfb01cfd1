"""The operator headers of an installed CANN (``include/aclnnop/*.h``, and ``op_api/include/*.h``
of custom operator packages), read into ``ffi.cdef`` input one declaration at a time.

The binding's own headers follow a convention a line filter can read (``declarations.py``);
real operator headers do not. What they contain, and what this reader does with it:

* ``ACLNN_API`` or ``__attribute__((visibility("default")))`` / ``__attribute__ ((...))``
  before the return type, and ``__attribute__((deprecated("...")))`` whose message may hold
  parentheses, semicolons and ``//``: removed (string-aware, parentheses balanced); so are
  the runtime's ``ACL_DEPRECATED`` and ``ACL_DEPRECATED_MESSAGE("...")`` (defined by
  ``acl/acl_base_rt.h``, before a prototype or after an enumerator), and any other upper-case
  ``MACRO(...)`` a declaration starts with (a vendor's deprecation);
* the ``extern`` storage class (prototypes of the ``*_inner`` headers of distributed
  operators): dropped, as it changes nothing in a function declaration;
* prototypes over many lines, comments between parameters: joined, comments removed;
* ``typedef enum {...} Name;``, ``enum``/``struct`` definitions and typedefs of the header
  itself (or of an operator header it includes): declared before its prototypes;
* C++-only helpers (``*_inner.h``): namespaces and inline function bodies are skipped; a
  prototype with a reference, a default argument, ``::`` or a template is reported as not
  declarable, with the reason, and does not hinder the other prototypes of its header;
* ``#ifdef __cplusplus`` blocks (the ``extern "C"`` guards) are dropped; a bare
  ``extern "C" {`` is unwrapped.

``OperatorDeclarer`` declares what the reader found into a ``cffi.FFI``: the headers' types in
one ``cdef``, then the prototypes in another (900 operators take about a second); a prototype
naming a type that no header declared fails beforehand, and one cffi rejects fails alone, with
the reason, found by checking each declaration alone: linear work however many fail.
"""

from __future__ import annotations

import functools
import os
import re
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from cffi import FFI

_IDENT = re.compile(r"[A-Za-z_]\w*")
_INCLUDE = re.compile(r'#\s*include\s*[<"]([^>"]+)[>"]')
# Object-like macros of CANN's headers that expand to attributes (or to nothing) before a
# declaration: acl/acl_base_rt.h defines ACL_FUNC_VISIBILITY and ACL_DEPRECATED, aclnn_base.h ACLNN_API.
_MACROS = re.compile(r"\b(?:ACLNN_API|ACL_FUNC_VISIBILITY|ACL_DEPRECATED)\b\s*")
_CXX_ONLY = ("namespace", "using", "template", "class", "static_assert", "friend")
_TYPE_KEYWORDS = ("typedef", "enum", "struct", "union")
_QUALIFIERS = ("void", "const", "volatile", "restrict", "__restrict", "signed", "unsigned", "short", "long")


def _c_type_words() -> frozenset[str]:
    """The words of the types cffi knows without a declaration (int, int64_t, size_t, bool...)."""
    from cffi import commontypes, model

    words = set(_QUALIFIERS)
    for name in (*model.PrimitiveType.ALL_PRIMITIVE_TYPES, *commontypes.COMMON_TYPES):
        words.update(name.split())
    return frozenset(words)


_C_TYPE_WORDS = _c_type_words()


@dataclass(frozen=True)
class Parameter:
    """One parameter of a prototype: its C type as written (``const aclTensor *``) and name."""

    type: str
    name: str

    @property
    def const(self) -> bool:
        """Whether what the pointer points to is ``const`` (``const T *``, ``T const *``)."""
        star = self.type.find("*")
        return "const" in _IDENT.findall(self.type[:star] if star >= 0 else self.type)

    @property
    def base(self) -> str:
        """The type without qualifiers and pointers (``aclTensor`` for ``const aclTensor *``)."""
        words = [w for w in _IDENT.findall(self.type) if w not in ("const", "volatile", "restrict", "__restrict")]
        return " ".join(words)

    @property
    def pointers(self) -> int:
        return self.type.count("*")


@dataclass
class Prototype:
    """One function declared by a header: its cdef text, or why it cannot be declared."""

    name: str
    text: str
    error: str = ""

    def parameters(self) -> tuple[Parameter, ...]:
        """The parameters in order (``()`` for ``(void)``); a parameter without a name is
        named ``arg<i>``."""
        params = self.text[self.text.find("(") + 1:self.text.rfind(")")].strip()
        if params in ("", "void"):
            return ()
        out = []
        for i, part in enumerate(params.split(",")):
            part = " ".join(part.replace("*", " * ").split())
            words = _IDENT.findall(part)
            named = len(words) > 1 and not part.endswith("*") and words[-1] not in _C_TYPE_WORDS
            ctype = part[:part.rfind(words[-1])].strip() if named else part
            out.append(Parameter(ctype.replace(" *", "*").replace("*", " *").replace("* *", "**").strip(),
                                 words[-1] if named else f"arg{i}"))
        return tuple(out)


@dataclass
class OperatorHeader:
    path: Path
    types: list[tuple[str, str]] = field(default_factory=list)   # (cffi declaration key, cdef text)
    prototypes: dict[str, Prototype] = field(default_factory=dict)
    includes: list[str] = field(default_factory=list)

    def operators(self) -> list[str]:
        """The operators (phase-2 names, e.g. ``aclnnAdd``) whose GetWorkspaceSize it declares
        (internal ones without the ``aclnn`` prefix, e.g. in ``*_inner.h``, are not operators)."""
        suffix = "GetWorkspaceSize"
        return [n[: -len(suffix)] for n in self.prototypes
                if n.startswith("aclnn") and n.endswith(suffix) and len(n) > len("aclnn" + suffix)]


# -- lexing -----------------------------------------------------------------------------------

def _after_literal(text: str, i: int) -> int:
    """The index after the string or character literal that starts at ``text[i]`` (a quote),
    backslash escapes included; ``len(text)`` for an unterminated one."""
    quote, j, n = text[i], i + 1, len(text)
    while j < n and text[j] != quote:
        j += 2 if text[j] == "\\" else 1
    return min(j + 1, n)


def _strip_comments(text: str) -> str:
    """``text`` with comments replaced by a space; string and character literals kept intact."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c in "\"'":
            j = _after_literal(text, i)
            out.append(text[i:j])
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
            out.append(" ")
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            i = n if j < 0 else j + 2
            out.append(" ")
        else:
            j = i
            while j < n and text[j] not in "\"'/":
                j += 1
            if j == i:  # a lone '/'
                j = i + 1
            out.append(text[i:j])
            i = j
    return "".join(out)


def _skip_balanced(text: str, i: int) -> int:
    """The index after the parenthesised group starting at ``text[i] == '('`` (string-aware)."""
    depth = 0
    n = len(text)
    while i < n:
        c = text[i]
        if c in "\"'":
            i = _after_literal(text, i)
            continue
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return n


# Attributes with an argument list: GCC's and MSVC's, and ACL_DEPRECATED_MESSAGE("...") of
# acl/acl_base_rt.h (before a prototype, or after an enumerator it deprecates).
_ATTRIBUTE = re.compile(r"\b(?:__attribute__|__declspec|ACL_DEPRECATED_MESSAGE)\s*\(|\[\[")
# A macro invoked before a declaration (``VENDOR_DEPRECATED("...") aclnnStatus f(...)``): C has no
# declaration starting ``NAME(...) word``, so an upper-case ``NAME(...)`` followed by a word is one.
_LEADING_MACRO = re.compile(r"[A-Z][A-Z0-9_]*\s*\(")


def _strip_attributes(text: str) -> str:
    """Remove ``__attribute__((...))`` (any spacing, nested parentheses, strings) and ``[[...]]``."""
    out: list[str] = []
    pos = 0
    while (m := _ATTRIBUTE.search(text, pos)) is not None:
        out.append(text[pos:m.start()])
        if m.group() == "[[":
            end = text.find("]]", m.end())
            pos = len(text) if end < 0 else end + 2
        else:
            pos = _skip_balanced(text, m.end() - 1)
        out.append(" ")
    out.append(text[pos:])
    return "".join(out)


def _preprocess(text: str) -> tuple[str, list[str]]:
    """(the declarations of a header as one string, the headers it includes)."""
    text = _strip_comments(text).replace("\\\n", " ")
    body: list[str] = []
    includes: list[str] = []
    dropped: list[bool] = []  # per open #if: is this block dropped?
    dropping = 0  # how many of them are (kept as a count: a line must not look at every open #if)
    word: re.Match[str] | str | None  # a directive's first identifier, then its text
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("#"):
            directive = stripped[1:].strip()
            word = _IDENT.match(directive)
            word = word.group() if word else ""
            if word in ("if", "ifdef", "ifndef"):
                compact = directive.replace(" ", "")
                dropped.append(dropping > 0 or compact in ("ifdef__cplusplus", "if0", "ifdefined(__cplusplus)"))
                dropping += dropped[-1]
            elif word == "endif":
                if dropped:
                    dropping -= dropped.pop()
            elif word in ("else", "elif"):
                # The #else of "#ifdef __cplusplus" is the C side: keep it (and the reverse).
                if dropped and dropping - dropped[-1] == 0:
                    dropping += 1 - 2 * dropped[-1]
                    dropped[-1] = not dropped[-1]
            elif not dropping and (m := _INCLUDE.match(stripped)):
                includes.append(m.group(1))
            continue
        if not dropping:
            body.append(line)
    return " ".join(body), includes


def _statements(text: str) -> list[tuple[str, bool]]:
    """Top-level statements as ``(text, ended_with_a_block)``; string-aware, braces balanced.

    A type definition (``typedef enum {...} X;``) runs to its ``;``; any other block
    (namespace, inline function body, ``extern "C" {``) ends its statement at the ``}``."""
    text = re.sub(r'\bextern\s+"C"\s*\{', " ", text)
    text = re.sub(r'\bextern\s+"C"', " ", text)
    out: list[tuple[str, bool]] = []
    start, depth, i, n = 0, 0, 0, len(text)
    while i < n:
        c = text[i]
        if c in "\"'":
            i = _after_literal(text, i)
            continue
        if c == "{":
            depth += 1
        elif c == "}":
            if depth == 0:  # the end of an unwrapped extern "C" block
                out.append((text[start:i], False))
                start = i + 1
            else:
                depth -= 1
                if depth == 0 and not text[start:i].lstrip().startswith(_TYPE_KEYWORDS):
                    out.append((text[start:i + 1], True))
                    start = i + 1
        elif c == ";" and depth == 0:
            out.append((text[start:i], False))
            start = i + 1
        i += 1
    out.append((text[start:], False))
    return [(" ".join(s.split()), block) for s, block in out if s.strip()]


# -- classifying ------------------------------------------------------------------------------

def _type_key(statement: str) -> str | None:
    """cffi's declaration key of a type statement (``typedef X``, ``enum X``, ``struct X``)."""
    if statement.startswith("typedef"):
        pointer = re.search(r"\(\s*\*\s*([A-Za-z_]\w*)\s*\)", statement)  # typedef R (*Name)(...)
        if pointer:
            return f"typedef {pointer.group(1)}"
        words = _IDENT.findall(re.sub(r"\{.*\}", " ", statement))
        return f"typedef {words[-1]}" if len(words) > 1 else None
    m = re.match(r"(enum|struct|union)\s+([A-Za-z_]\w*)", statement)
    return f"{m.group(1)} {m.group(2)}" if m else None


def _cxx_construct(params: str) -> str:
    """Why a parameter list is C++ only, or ''."""
    if "&" in params:
        return "a C++ reference parameter (&)"
    if "=" in params:
        return "a C++ default argument (=)"
    if "<" in params or ">" in params:
        return "a C++ template argument (<...>)"
    return ""


def _without_leading_macros(statement: str) -> str:
    """``statement`` without the ``NAME(...)`` macro invocations it starts with."""
    while (m := _LEADING_MACRO.match(statement)) is not None:
        rest = statement[_skip_balanced(statement, m.end() - 1):].lstrip()
        if not _IDENT.match(rest):
            break
        statement = rest
    return statement


def _prototype(statement: str, block: bool) -> Prototype | None:
    """The function a statement declares (or defines), or None when it declares none."""
    statement = _without_leading_macros(statement)
    paren = statement.find("(")
    if paren < 0:
        return None
    head = _IDENT.findall(statement[:paren])
    if not head:
        return None
    name = head[-1]
    if head[0] in _CXX_ONLY or name in ("sizeof", "decltype"):
        return None
    if block:
        return Prototype(name, statement, "an inline function defined in the header (not exported by a library)")
    if "inline" in head or "static" in head:
        return Prototype(name, statement + ";", "an inline/static function (not exported by a library)")
    if "extern" in head:  # the storage class of every function declaration: saying it changes nothing
        statement = re.sub(r"\bextern\s+", "", statement[:paren]) + statement[paren:]
        paren = statement.find("(")
    end = statement.rfind(")")
    reason = "a C++ scope (::)" if "::" in statement else _cxx_construct(statement[paren:end + 1])
    if reason:
        return Prototype(name, statement + ";", f"it uses {reason}, which C cannot declare")
    return Prototype(name, statement + ";")


def parse_operator_header(text: str, path: Path | str = "<text>") -> OperatorHeader:
    """The types and prototypes of an operator header's text."""
    body, includes = _preprocess(text)
    body = _MACROS.sub(" ", _strip_attributes(body))
    header = OperatorHeader(Path(path), includes=includes)
    first: re.Match[str] | str | None  # a statement's first identifier, then its text
    for statement, block in _statements(body):
        first = _IDENT.match(statement)
        first = first.group() if first else ""
        if first in _TYPE_KEYWORDS and not block:
            key = _type_key(statement)
            if key is not None:
                header.types.append((key, statement + ";"))
            continue
        proto = _prototype(statement, block)
        if proto is not None and proto.name not in header.prototypes:
            header.prototypes[proto.name] = proto
    return header


@functools.lru_cache(maxsize=4096)
def _read_cached(path: str, mtime_ns: int, size: int) -> OperatorHeader:
    return parse_operator_header(Path(path).read_text(errors="replace"), path)


def read_operator_header(path: str | Path) -> OperatorHeader:
    """``parse_operator_header`` of a file (cached while the file is unchanged)."""
    st = Path(path).stat()
    return _read_cached(str(path), st.st_mtime_ns, st.st_size)


def operator_header_files(folders: Iterable[str | os.PathLike[str]]) -> list[Path]:
    """Every ``*.h`` of ``folders`` (``include/aclnnop`` and custom ``op_api/include``), in
    search order: the folders in the order given, each sorted by name."""
    files: list[Path] = []
    for folder in folders:
        folder = Path(folder)
        if folder.is_dir():
            files += sorted(p for p in folder.glob("*.h") if p.is_file())
    return files


def find_operator_header(name: str, folders: Iterable[str | os.PathLike[str]]) -> OperatorHeader | None:
    """The first header of ``folders`` that declares function ``name``."""
    call = re.compile(rf"\b{re.escape(name)}\s*\(")
    for path in operator_header_files(folders):
        try:
            text = path.read_text(errors="replace")
        except OSError:
            continue
        if call.search(text):
            header = read_operator_header(path)
            if name in header.prototypes:
                return header
    return None


# -- declaring --------------------------------------------------------------------------------

def _included_operator_header(include: str, folders: Sequence[str | os.PathLike[str]]) -> Path | None:
    """The operator header (``aclnn*.h``, not ``aclnn_util.h``) an ``#include`` names, in the first
    folder that has it; None for any other header, or a name no file system can hold."""
    name = Path(include).name
    if not name.startswith("aclnn") or name == "aclnn_util.h":
        return None
    for folder in folders:
        target = Path(folder) / name
        try:
            if target.is_file():
                return target
        except (OSError, ValueError):  # a name too long for the file system, or holding a NUL
            return None
    return None


class _AloneChecker:
    """Checks declarations one at a time, each by a fresh cffi parser that knows only what its
    text names of what ``parser`` declared (and of what passed the check before it), so a
    check costs what its text holds, not every type ``parser`` knows."""

    _KINDS = ("typedef", "struct", "union", "enum")

    def __init__(self, parser: Any) -> None:
        self._known: dict[str, Any] = parser._declarations
        self._constants: dict[str, int] = parser._int_constants
        self._passed: dict[str, Any] = {}           # what earlier checks declared
        self._passed_constants: dict[str, int] = {}

    def check(self, text: str) -> str:
        """Why cffi rejects ``text`` (one declaration), or ''."""
        from cffi import cparser

        parser: Any = cparser.Parser()  # its declarations are private: not in types-cffi
        defines = "{" in text
        for word in set(_IDENT.findall(text)):
            for kind in self._KINDS:
                key = f"{kind} {word}"
                found = self._passed.get(key) or self._known.get(key)
                # A struct the text completes is left out: the check must not fill in the
                # fields of ``parser``'s own (still opaque) struct.
                if found is not None and not (defines and kind in ("struct", "union") and found[0].fldnames is None):
                    parser._declarations[key] = found
            value = self._passed_constants.get(word, self._constants.get(word))
            if value is not None:
                parser._int_constants[word] = value
        before = set(parser._declarations)
        try:
            parser.parse(text)
        except Exception as exc:  # cffi's CDefError / FFIError, pycparser's ParseError, ...
            return " ".join(str(exc).split())
        self._passed.update((k, v) for k, v in parser._declarations.items() if k not in before)
        self._passed_constants.update(parser._int_constants)
        return ""


class OperatorDeclarer:
    """Declares operator headers into one ``cffi.FFI`` (which already holds the binding's meta
    declarations), remembering what could not be declared and why."""

    def __init__(self, ffi: FFI) -> None:
        self.ffi = ffi
        self._lock = threading.RLock()
        self._done: dict[Path, dict[str, str]] = {}   # header -> {function: error ('' if declared)}

    def declared(self, name: str) -> bool:
        # cffi keeps every declaration under "<kind> <name>"; functions as "function <name>".
        return f"function {name}" in self.ffi._parser._declarations  # type: ignore[attr-defined]  # (not in types-cffi)

    def _known(self, key: str) -> bool:
        return key in self.ffi._parser._declarations  # type: ignore[attr-defined]  # (cffi's private parser)

    def _cdef(self, text: str) -> str:
        try:
            self.ffi.cdef(text)
        except Exception as exc:  # cffi's CDefError / FFIError / pycparser's ParseError
            return " ".join(str(exc).split())
        return ""

    def _collect_types(self, header: OperatorHeader, folders: Sequence[str | os.PathLike[str]], seen: set[Path],
                       found: dict[str, str]) -> None:
        """Add to ``found`` ({key: text}, in declaration order) the types of ``header`` that cffi
        does not know yet, after those of the operator headers it includes."""
        if header.path in seen:
            return
        seen.add(header.path)
        for include in header.includes:  # types of the operator headers it includes come first
            target = _included_operator_header(include, [header.path.parent, *folders])
            if target is None:
                continue
            try:
                included = read_operator_header(target)
            except OSError:  # unreadable: what uses its types fails as naming an unknown type
                continue
            self._collect_types(included, folders, seen, found)
        for key, text in header.types:
            if key not in found and not self._known(key):
                found[key] = text

    def declare_header(self, header: OperatorHeader, folders: Iterable[str | os.PathLike[str]] = ()) -> dict[str, str]:
        """Declare ``header``'s types and prototypes; ``{function: error, '' when declared}``."""
        return self.declare_headers([header], folders)[header.path]

    def declare_headers(self, headers: list[OperatorHeader], folders: Iterable[str | os.PathLike[str]] = ()) -> dict[Path, dict[str, str]]:
        """Declare the types, then the prototypes of ``headers`` (a function declared by an
        earlier header or already known is not declared again); per header,
        ``{function: error, '' when declared}``.

        Parsing is what costs (cffi re-reads every known type name on each ``cdef``), so the
        types go in one ``cdef`` and the prototypes in another; a prototype naming a type that
        no header declared is failed beforehand, and what cffi still rejects is found by
        ``_declare_all`` at a cost linear in the input, however many fail."""
        folders = [Path(f) for f in folders]
        with self._lock:
            todo = [h for h in headers if h.path not in self._done]
            types: dict[str, str] = {}
            seen: set[Path] = set()
            for header in todo:
                self._collect_types(header, folders or [header.path.parent], seen, types)
            # A type cffi rejects is reported through the prototypes that use it (unknown type).
            self._declare_all(list(types.items()))
            results: dict[Path, dict[str, str]] = {}
            batch: list[tuple[Prototype, dict[str, str]]] = []
            names: set[str] = set()
            for header in todo:
                result = results[header.path] = {name: p.error for name, p in header.prototypes.items()}
                for name, proto in header.prototypes.items():
                    if proto.error or name in names or self.declared(name):
                        continue
                    unknown = self._unknown_types(proto)
                    if unknown:
                        result[name] = f"unknown type {', '.join(unknown)} (declared by no header read)"
                        continue
                    names.add(name)
                    batch.append((proto, result))
            failed = self._declare_all([(f"function {proto.name}", proto.text) for proto, _ in batch])
            for i, error in failed.items():
                proto, result = batch[i]
                result[proto.name] = f"cffi cannot parse it: {error}"
            self._done.update(results)
            return {h.path: self._done[h.path] for h in headers}

    def _declare_all(self, declarations: list[tuple[str, str]]) -> dict[int, str]:
        """Declare ``declarations`` (each ``(cffi key, text)``, in order, no key known yet);
        ``{index: why not}`` of those cffi rejects.

        One ``cdef`` declares them all when none fails. When one does, cffi has declared those
        before it (a semantic error) or none (a parse error), and a retry of the rest would
        re-read every known type name once per failure (quadratic, when each header brings a
        type). Instead, each one not declared is checked alone by a parser that knows only the
        declarations its text names (work linear in its text); then what passed goes in one more
        ``cdef``. Should that still fail (the check alone and the batch disagree), the rest are
        declared one by one, so the results stay right whatever the cost."""
        if not declarations:
            return {}
        error = self._cdef("\n".join(text for _, text in declarations))
        if not error:
            return {}
        # cffi declares in order and stops at the failure: what it declared is the prefix whose
        # keys it knows now (it knew none of them before).
        declared = 0
        while declared < len(declarations) and self._known(declarations[declared][0]):
            declared += 1
        failed: dict[int, str] = {}
        passed: list[int] = []
        checker = _AloneChecker(self.ffi._parser)  # type: ignore[attr-defined]  # (cffi's private parser)
        for i in range(declared, len(declarations)):
            why = checker.check(declarations[i][1])
            if why:
                failed[i] = why
            else:
                passed.append(i)
        if passed and self._cdef("\n".join(declarations[i][1] for i in passed)):
            for i in passed:
                key, text = declarations[i]
                if not self._known(key) and (why := self._cdef(text)):
                    failed[i] = why
        return failed

    def _unknown_types(self, proto: Prototype) -> list[str]:
        """The identifiers in type position of a prototype's parameters (and return type) that
        name no type cffi knows or a header declared."""
        paren = proto.text.find("(")
        parts = [proto.text[:paren].rsplit(None, 1)[0] + " _"] if " " in proto.text[:paren].strip() else []
        parts += re.sub(r"\[[^\]]*\]", " ", proto.text[paren + 1:proto.text.rfind(")")]).split(",")  # sizes are no types
        unknown: list[str] = []
        for part in parts:
            words = _IDENT.findall(part)
            if len(words) > 1 and words[-1] not in _C_TYPE_WORDS:
                words = words[:-1]  # the parameter's name
            kind = ""
            for word in words:
                if word in ("struct", "enum", "union"):
                    kind = word
                    continue
                known = (self._known(f"{kind} {word}") if kind else
                         word in _C_TYPE_WORDS or self._known(f"typedef {word}"))
                kind = ""
                if not known and word not in unknown:
                    unknown.append(word)
        return unknown

    def declare(self, name: str, folders: Sequence[str | os.PathLike[str]]) -> tuple[bool, str, Path | None]:
        """Declare function ``name`` from the first header of ``folders`` that has it:
        ``(declared, why not, the header)``."""
        if self.declared(name):
            return True, "", None
        header = find_operator_header(name, folders)
        if header is None:
            return False, "no header declares it", None
        error = self.declare_header(header, folders).get(name, "")
        return not error, error, header.path


_declarers: dict[int, OperatorDeclarer] = {}
_declarers_lock = threading.Lock()


def _new_locks_in_child() -> None:
    """A forked child's locks (``aclnn_py._ffi._new_locks_in_child``): a parent thread may have
    been declaring a header."""
    global _declarers_lock
    _declarers_lock = threading.Lock()
    for declarer in _declarers.values():
        declarer._lock = threading.RLock()


os.register_at_fork(after_in_child=_new_locks_in_child)


def declarer_for(ffi: FFI) -> OperatorDeclarer:
    """The one declarer of ``ffi`` (every ``Library`` sharing an FFI shares what it declared)."""
    with _declarers_lock:
        found = _declarers.get(id(ffi))
        if found is None or found.ffi is not ffi:
            found = _declarers[id(ffi)] = OperatorDeclarer(ffi)
        return found
