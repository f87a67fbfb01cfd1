"""Reading the operator headers of an installed CANN: every construct of the corpus in
header_corpus/include/aclnnop (written for these tests, one construct per header) is declared,
and the one deliberately unparseable prototype fails alone, saying why."""

from __future__ import annotations

import cffi
import pytest

from aclnn_py._ffi.declarations import include_dir, read_cdef
from aclnn_py._ffi.operator_headers import OperatorDeclarer, find_operator_header, operator_header_files, parse_operator_header, read_operator_header

from corpus import ALL_OPERATORS, BROKEN, BROKEN_TYPE, CORPUS, EXPECTED

PHASE2 = "aclnnStatus(*)(void *, uint64_t, aclOpExecutor *, aclrtStream)"


def fresh_declarer() -> OperatorDeclarer:
    """A new FFI holding only the binding's own declarations, as the npu backend starts."""
    ffi = cffi.FFI()
    ffi.cdef(read_cdef(include_dir()))
    return OperatorDeclarer(ffi)


def declared_ctype(ffi, name: str) -> str:
    """The C type of a declared (not necessarily exported) function, as a pointer type."""
    # cffi keeps each declared function's type under "function <name>".
    model = ffi._parser._declarations[f"function {name}"][0]
    return ffi.getctype(ffi.typeof(model.get_c_name()))


def test_the_corpus_is_what_the_tests_expect():
    assert sorted(p.name for p in operator_header_files([CORPUS])) == sorted(EXPECTED)


@pytest.mark.parametrize("header", sorted(EXPECTED))
def test_operators_read_from_each_header(header):
    assert read_operator_header(CORPUS / header).operators() == EXPECTED[header]


def test_every_operator_of_the_corpus_is_declared_but_the_broken_one():
    declarer = fresh_declarer()
    errors = {}
    for path in operator_header_files([CORPUS]):
        errors.update(declarer.declare_header(read_operator_header(path), [CORPUS]))
    for op in ALL_OPERATORS:
        for name in (f"{op}GetWorkspaceSize", op):
            if name == f"{BROKEN}GetWorkspaceSize":
                assert not declarer.declared(name) and errors[name]
            else:
                assert declarer.declared(name) and errors[name] == "", (name, errors.get(name))
    # Its second phase has no unknown type: only the unparseable prototype fails.
    assert declarer.declared(BROKEN)


def test_the_unparseable_prototype_says_why():
    declarer = fresh_declarer()
    declared, why, header = declarer.declare(f"{BROKEN}GetWorkspaceSize", [CORPUS])
    assert not declared and header == CORPUS / "aclnn_corpus_broken.h"
    assert f"unknown type {BROKEN_TYPE}" in why
    for neighbour in ("aclnnCorpusBeforeBrokenGetWorkspaceSize", "aclnnCorpusAfterBrokenGetWorkspaceSize"):
        assert declarer.declared(neighbour)


def test_cxx_helpers_are_reported_not_declared():
    errors = fresh_declarer().declare_header(read_operator_header(CORPUS / "aclnn_corpus_thing_inner.h"), [CORPUS])
    assert "default argument" in errors["CorpusThingCheck"]
    assert "scope" in errors["CorpusThingValidate"]
    assert "inline function" in errors["CorpusThingAlign"]
    assert "scope" in errors["CorpusThingName"]
    assert errors["CorpusThingSupported"] == "" and errors["InnerCorpusThingGetWorkspaceSize"] == ""
    assert errors["aclnnInnerCorpusThingGetWorkspaceSize"] == "" and errors["aclnnInnerCorpusThing"] == ""
    # The namespace and the template are skipped whole: nothing inside them is a C declaration.
    assert not {"IsEmpty", "CheckThingShape", "CorpusThingMax"} & set(errors)


@pytest.mark.parametrize("name, ctype", [
    ("aclnnCorpusOldGetWorkspaceSize",
     "aclnnStatus(*)(const aclTensor *, const aclIntArray *, aclTensor *, uint64_t *, aclOpExecutor * *)"),
    ("aclnnCorpusOld", PHASE2),
    ("aclnnCorpusSpaced", PHASE2),
    ("aclnnCorpusListsGetWorkspaceSize",
     "aclnnStatus(*)(const aclTensorList *, const aclScalarList *, const aclIntArray *, const aclFloatArray *, "
     "const aclBoolArray *, const aclScalar *, aclDataType, float, const char *, aclTensorList *, uint64_t *, "
     "aclOpExecutor * *)"),
    ("aclnnCorpusModeGetWorkspaceSize",
     "aclnnStatus(*)(const aclTensor *, CorpusMode, enum CorpusLayout, const CorpusTiling *, CorpusCallback, "
     "aclTensor *, uint64_t *, aclOpExecutor * *)"),
    ("aclnnCorpusRetiredGetWorkspaceSize",
     "aclnnStatus(*)(const aclTensor *, float, aclTensor *, uint64_t *, aclOpExecutor * *)"),
    ("aclnnCorpusRetired", PHASE2),
    ("aclnnCorpusRetiredV2GetWorkspaceSize",
     "aclnnStatus(*)(const aclTensor *, float, aclTensor *, uint64_t *, aclOpExecutor * *)"),
    ("aclnnCorpusRetiredV2", PHASE2),
    ("aclnnInnerCorpusAllReduceGetWorkspaceSize",
     "aclnnStatus(*)(const aclTensor *, const char *, int64_t, CorpusServerType, aclTensor *, uint64_t *, "
     "aclOpExecutor * *)"),
    ("aclnnInnerCorpusAllReduce", PHASE2),
    ("aclnnInnerCorpusGather", PHASE2),
    ("CorpusSetServerType", "void(*)(void *, CorpusServerType)"),
])
def test_declared_signatures(name, ctype):
    declarer = fresh_declarer()
    assert declarer.declare(name, [CORPUS])[0]
    ffi = declarer.ffi
    assert declared_ctype(ffi, name) == ffi.getctype(ffi.typeof(ctype))
    lib = ffi.dlopen(None)
    with pytest.raises(AttributeError):  # declared (cffi knows it), exported by no library here
        getattr(lib, name)


def test_a_type_from_an_included_operator_header_is_declared_first():
    """aclnn_corpus_a_enum_user.h uses CorpusMode from aclnn_corpus_enum.h, which it includes."""
    declarer = fresh_declarer()
    declared, why, _ = declarer.declare("aclnnCorpusModeUserGetWorkspaceSize", [CORPUS])
    assert declared, why
    assert declarer.ffi.typeof("CorpusMode") is not None


def test_repeated_enum_in_two_headers_does_not_collide():
    declarer = fresh_declarer()
    for name in ("aclnnCorpusVersionedGetWorkspaceSize", "aclnnCorpusVersionedV2GetWorkspaceSize"):
        declared, why, _ = declarer.declare(name, [CORPUS])
        assert declared, why


def test_deprecation_message_with_parentheses_semicolons_and_slashes():
    header = parse_operator_header(
        '__attribute__((deprecated("a (b); c // d /* e */ \\" f"))) aclnnStatus aclnnX(int a);\n'
        "__attribute__ ((visibility(\"default\"))) aclnnStatus aclnnY(int b); // done\n")
    assert [p.text for p in header.prototypes.values()] == ["aclnnStatus aclnnX(int a);", "aclnnStatus aclnnY(int b);"]


def test_deprecation_macros_and_extern_leave_plain_prototypes():
    """What CANN's headers write before the return type (ACL_DEPRECATED_MESSAGE("..."),
    ACL_DEPRECATED, a vendor's MACRO("..."), the extern storage class) is not part of the
    prototype: each keeps its own name and a text cffi declares."""
    header = parse_operator_header(
        'ACL_DEPRECATED_MESSAGE("x (y); z // w") ACLNN_API aclnnStatus aclnnAGetWorkspaceSize(int64_t a);\n'
        "ACL_DEPRECATED aclnnStatus aclnnA(int64_t b);\n"
        'VENDOR_OLD("v") VENDOR_OLDER("w") aclnnStatus aclnnB(int64_t c);\n'
        "extern aclnnStatus aclnnC(int64_t d);\n"
        "ACLNN_API extern aclnnStatus aclnnD(int64_t e);\n"
        'extern "C" extern aclnnStatus aclnnE(int64_t f);\n'
        "typedef enum { CORPUS_OLD ACL_DEPRECATED_MESSAGE(\"use CORPUS_NEW\") = 1, CORPUS_NEW = 1 } CorpusRenamed;\n")
    assert {name: p.text for name, p in header.prototypes.items()} == {
        "aclnnAGetWorkspaceSize": "aclnnStatus aclnnAGetWorkspaceSize(int64_t a);",
        "aclnnA": "aclnnStatus aclnnA(int64_t b);",
        "aclnnB": "aclnnStatus aclnnB(int64_t c);",
        "aclnnC": "aclnnStatus aclnnC(int64_t d);",
        "aclnnD": "aclnnStatus aclnnD(int64_t e);",
        "aclnnE": "aclnnStatus aclnnE(int64_t f);",
    }
    assert header.operators() == ["aclnnA"]
    declarer = fresh_declarer()
    assert set(declarer.declare_header(header).values()) == {""}
    assert int(declarer.ffi.cast("CorpusRenamed", 1)) == 1


def test_the_first_folder_wins(tmp_path):
    (tmp_path / "aclnn_corpus_plain.h").write_text(
        "aclnnStatus aclnnCorpusPlain(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,"
        " aclrtStream stream);\n")
    assert find_operator_header("aclnnCorpusPlain", [tmp_path, CORPUS]).path == tmp_path / "aclnn_corpus_plain.h"
    assert find_operator_header("aclnnCorpusPlain", [CORPUS, tmp_path]).path == CORPUS / "aclnn_corpus_plain.h"
    assert find_operator_header("aclnnCorpusNothing", [tmp_path, CORPUS]) is None


def test_a_prototype_cffi_rejects_fails_alone_in_a_batch(tmp_path):
    """Prototypes are declared in one cdef; when cffi rejects one, it is singled out."""
    header = parse_operator_header(
        "aclnnStatus aclnnOkA(int64_t a);\n"
        "aclnnStatus aclnnBadSyntax(const aclTensor *self,, int64_t dim);\n"
        "aclnnStatus aclnnOkB(const aclTensor *b);\n", tmp_path / "aclnn_batch.h")
    declarer = fresh_declarer()
    errors = declarer.declare_header(header)
    assert errors["aclnnOkA"] == "" and errors["aclnnOkB"] == ""
    assert errors["aclnnBadSyntax"].startswith("cffi cannot parse it")
    assert declarer.declared("aclnnOkA") and declarer.declared("aclnnOkB") and not declarer.declared("aclnnBadSyntax")


def test_an_include_too_long_for_a_file_name_is_no_operator_header(tmp_path):
    header = tmp_path / "aclnn_long_include.h"
    header.write_text(f'#include "aclnn_{"x" * 300}.h"\n#include "aclnn/aclnn_base.h"\n'
                      "aclnnStatus aclnnLongIncludeGetWorkspaceSize(uint64_t *workspaceSize, aclOpExecutor **executor);\n")
    errors = fresh_declarer().declare_header(read_operator_header(header), [tmp_path])
    assert errors == {"aclnnLongIncludeGetWorkspaceSize": ""}


NESTING = """
import sys
from aclnn_py._ffi.operator_headers import parse_operator_header
depth = int(sys.argv[1])
text = ("#ifdef CORPUS_A\\n" * depth + "aclnnStatus aclnnDropped(int a);\\n" + "#endif\\n" * depth
        + "#ifndef CORPUS_B\\n" * depth + "aclnnStatus aclnnKept(int b);\\n" + "#endif\\n" * depth)
print(sorted(parse_operator_header(text).prototypes))
"""


def test_deeply_nested_conditionals_are_read_in_linear_time():
    """Each line looked at every open #if (quadratic in the nesting): 200,000 levels took hours.
    In a child, so that such a reading fails the test instead of stopping the run."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", NESTING, "200000"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    # an #ifdef of an unknown macro is kept as written (the reader evaluates no macro)
    assert done.stdout.strip() == "['aclnnDropped', 'aclnnKept']"


def test_else_branches():
    """The #else of "#ifdef __cplusplus" is the C side; inside a dropped block it stays dropped."""
    header = parse_operator_header(
        "#ifdef __cplusplus\naclnnStatus aclnnCxxSide(int a);\n#else\naclnnStatus aclnnCSide(int b);\n#endif\n"
        "#if 0\n#ifdef CORPUS_X\naclnnStatus aclnnOffA(int c);\n#else\naclnnStatus aclnnOffB(int d);\n#endif\n"
        "#elif 1\naclnnStatus aclnnOn(int e);\n#endif\n")
    assert sorted(header.prototypes) == ["aclnnCSide", "aclnnOn"]


def test_an_included_header_that_cannot_be_read(monkeypatch):
    """Its types are unknown: what uses them says so; the rest is declared."""
    from aclnn_py._ffi import operator_headers

    real = operator_headers.read_operator_header
    refused = CORPUS / "aclnn_corpus_enum.h"

    def refusing(path):
        if path == refused:
            raise PermissionError(13, "Permission denied", str(path))
        return real(path)

    monkeypatch.setattr(operator_headers, "read_operator_header", refusing)
    header = parse_operator_header(
        '#include "aclnn_corpus_enum.h"\n'
        "aclnnStatus aclnnUsesMode(CorpusMode mode);\naclnnStatus aclnnPlainToo(int64_t a);\n",
        CORPUS / "aclnn_includer.h")
    errors = fresh_declarer().declare_header(header, [CORPUS])
    assert errors["aclnnPlainToo"] == "" and "unknown type CorpusMode" in errors["aclnnUsesMode"]
