"""The header declarer's work grows linearly with what it reads, however many prototypes fail.

Work is counted, not timed: each parse cffi makes costs the text it is given plus one
``typedef int X;`` line for every type name its parser knows (cffi writes them before the text
on every ``cdef``), so the work of a parse is its lines plus those typedefs. Each header of
the generated sets declares a type of its own, so the known types grow with the input too: a
retry that re-parses once per failure (halving a batch) grows with the square of the input."""

from __future__ import annotations

from pathlib import Path

import cffi
import pytest
from cffi import cparser

from aclnn_py._ffi.declarations import include_dir, read_cdef
from aclnn_py._ffi.operator_headers import OperatorDeclarer, parse_operator_header

PHASE2 = "aclnnStatus aclnnOp{i}(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream);\n"
FAILURES = {
    # pycparser rejects it: nothing of the batch is declared
    "syntax": "aclnnStatus aclnnOp{i}GetWorkspaceSize(const aclTensor *self,, Op{i}Mode mode, uint64_t *workspaceSize);\n",
    # it parses, then cffi rejects it, having declared what came before it in the batch
    "semantic": "aclnnStatus aclnnOp{i}GetWorkspaceSize(const aclTensor *self[OP{i}_UNDEFINED], Op{i}Mode mode, "
                "uint64_t *workspaceSize);\n",
}
GOOD = "aclnnStatus aclnnOp{i}GetWorkspaceSize(const aclTensor *self, Op{i}Mode mode, uint64_t *workspaceSize);\n"


def headers(n: int, failing: str | None) -> list:
    """``n`` headers, each declaring an enum type and two prototypes, the first of which fails
    (``failing``: which kind of failure; None: none fails)."""
    out = []
    for i in range(n):
        text = (f"typedef enum {{ OP{i}_A = 0, OP{i}_B = 1 }} Op{i}Mode;\n"
                + (FAILURES[failing] if failing else GOOD).format(i=i) + PHASE2.format(i=i))
        out.append(parse_operator_header(text, Path(f"/corpus/aclnn_op{i}.h")))
    return out


def fresh_declarer() -> OperatorDeclarer:
    ffi = cffi.FFI()
    ffi.cdef(read_cdef(include_dir()))
    return OperatorDeclarer(ffi)


def declare_counting(monkeypatch, n: int, failing: str | None) -> tuple[int, dict]:
    """(the parse work of declaring ``n`` generated headers in one call, its results)."""
    declarer = fresh_declarer()  # the binding's own declarations are not counted
    work = 0
    original = cparser.Parser._parse

    def counting(self, csource):
        nonlocal work
        work += csource.count("\n") + 1 + sum(key.startswith("typedef ") for key in self._declarations)
        return original(self, csource)

    monkeypatch.setattr(cparser.Parser, "_parse", counting)
    results = declarer.declare_headers(headers(n, failing))
    monkeypatch.undo()
    return work, results


@pytest.mark.parametrize("failing", ["syntax", "semantic"])
def test_failures_cost_linear_work(monkeypatch, failing):
    small, small_results = declare_counting(monkeypatch, 100, failing)
    large, large_results = declare_counting(monkeypatch, 400, failing)
    for n, results in ((100, small_results), (400, large_results)):
        assert len(results) == n
        for i, (path, errors) in enumerate(results.items()):
            assert errors[f"aclnnOp{i}GetWorkspaceSize"].startswith("cffi cannot parse it"), (path, errors)
            assert errors[f"aclnnOp{i}"] == "", (path, errors)
    # 4 times the input: linear work is 4 times as much; a parse per failure, 16 times.
    assert large <= 4.5 * small, (small, large)


def test_declarable_headers_cost_linear_work_too(monkeypatch):
    small, _ = declare_counting(monkeypatch, 100, None)
    large, results = declare_counting(monkeypatch, 400, None)
    assert all(set(errors.values()) == {""} for errors in results.values())
    assert large <= 4.5 * small, (small, large)


def test_a_failure_that_cffi_meets_after_declaring_others_leaves_them_declared():
    """cffi declares a batch's declarations one by one: when one fails, those before it stay
    declared, and are reported declared (not as a 'multiple declarations' failure of a retry)."""
    header = parse_operator_header(
        "aclnnStatus aclnnOkA(int64_t a);\n"
        "aclnnStatus aclnnBadSize(const aclTensor *self[CORPUS_NO_SUCH_CONSTANT]);\n"
        "aclnnStatus aclnnOkB(const aclTensor *b);\n", "/corpus/aclnn_semantic.h")
    declarer = fresh_declarer()
    errors = declarer.declare_header(header)
    assert errors["aclnnOkA"] == "" and errors["aclnnOkB"] == "", errors
    assert "CORPUS_NO_SUCH_CONSTANT" in errors["aclnnBadSize"] or "constant" in errors["aclnnBadSize"], errors
    assert declarer.declared("aclnnOkA") and declarer.declared("aclnnOkB") and not declarer.declared("aclnnBadSize")


def test_results_stay_right_when_the_check_alone_is_wrong(monkeypatch):
    """Should the check alone pass what the batch rejects, the rest are declared one by one."""
    from aclnn_py._ffi import operator_headers

    monkeypatch.setattr(operator_headers._AloneChecker, "check", lambda self, text: "")
    header = parse_operator_header(
        "aclnnStatus aclnnOkA(int64_t a);\n"
        "aclnnStatus aclnnBadSyntax(const aclTensor *self,, int64_t dim);\n"
        "aclnnStatus aclnnOkB(const aclTensor *b);\n", "/corpus/aclnn_disagree.h")
    declarer = fresh_declarer()
    errors = declarer.declare_header(header)
    assert errors["aclnnOkA"] == "" and errors["aclnnOkB"] == ""
    assert errors["aclnnBadSyntax"].startswith("cffi cannot parse it")
    assert declarer.declared("aclnnOkA") and declarer.declared("aclnnOkB") and not declarer.declared("aclnnBadSyntax")


def test_a_struct_completed_after_a_failure_is_completed_once(monkeypatch):
    """The check alone of a struct's definition must not fill in the declarer's own opaque
    struct of that name (the batch that follows would find it defined twice, and fall back to
    declaring one by one)."""
    declarer = fresh_declarer()
    cdefs = []  # each cdef's error ('' when it declared everything)
    original = OperatorDeclarer._cdef
    monkeypatch.setattr(OperatorDeclarer, "_cdef", lambda self, text: cdefs.append(original(self, text)) or cdefs[-1])
    header = parse_operator_header(
        "typedef struct CorpusLater CorpusLater;\n"
        "typedef struct { int64_t size[CORPUS_NO_SUCH_SIZE]; } CorpusBadType;\n"
        "struct CorpusLater { int64_t first; int64_t second; };\n"
        "aclnnStatus aclnnUsesLater(struct CorpusLater *later);\n", "/corpus/aclnn_b.h")
    assert declarer.declare_header(header) == {"aclnnUsesLater": ""}
    assert declarer.ffi.sizeof("CorpusLater") == 16
    assert not declarer._known("typedef CorpusBadType")
    # the types (the bad one fails), what passed the check alone, the prototype
    assert [bool(error) for error in cdefs] == [True, False, False], cdefs


def test_the_check_alone_knows_the_constants_a_prototype_names():
    """An enumerator used as an array size (cffi needs its value) when the batch fails."""
    header = parse_operator_header(
        "typedef enum { CORPUS_DIMS = 8 } CorpusDims;\n"
        "aclnnStatus aclnnBroken(const aclTensor *self,, int64_t dim);\n"
        "aclnnStatus aclnnSized(const int64_t shape[CORPUS_DIMS]);\n", "/corpus/aclnn_sized.h")
    declarer = fresh_declarer()
    errors = declarer.declare_header(header)
    assert errors["aclnnSized"] == "" and errors["aclnnBroken"].startswith("cffi cannot parse it")
