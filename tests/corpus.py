"""The operator header corpus (tests/ffi/header_corpus), written for the tests: where it is and
what each header declares. Shared by the header reader's tests and `ops`'s."""

from __future__ import annotations

from pathlib import Path

INCLUDE = Path(__file__).resolve().parent / "ffi" / "header_corpus" / "include"
CORPUS = INCLUDE / "aclnnop"

# header -> the operators (phase-2 names) it declares, in order
EXPECTED = {
    "aclnn_corpus_a_enum_user.h": ["aclnnCorpusModeUser"],
    "aclnn_corpus_broken.h": ["aclnnCorpusBeforeBroken", "aclnnCorpusBroken", "aclnnCorpusAfterBroken"],
    "aclnn_corpus_collective_inner.h": ["aclnnInnerCorpusAllReduce", "aclnnInnerCorpusGather"],
    "aclnn_corpus_deprecated.h": ["aclnnCorpusOld", "aclnnCorpusNew"],
    "aclnn_corpus_deprecated_macro.h": ["aclnnCorpusRetired", "aclnnCorpusRetiredV2"],
    "aclnn_corpus_enum.h": ["aclnnCorpusMode"],
    "aclnn_corpus_meta_types.h": ["aclnnCorpusLists"],
    "aclnn_corpus_plain.h": ["aclnnCorpusPlain"],
    "aclnn_corpus_thing_inner.h": ["aclnnInnerCorpusThing"],
    "aclnn_corpus_versioned.h": ["aclnnCorpusVersioned"],
    "aclnn_corpus_versioned_v2.h": ["aclnnCorpusVersionedV2"],
    "aclnn_corpus_visibility.h": ["aclnnCorpusVisible"],
    "aclnn_corpus_visibility_spaced.h": ["aclnnCorpusSpaced"],
}
ALL_OPERATORS = [op for header in sorted(EXPECTED) for op in EXPECTED[header]]
# The one operator whose first phase cannot be declared (a type no header declares).
BROKEN = "aclnnCorpusBroken"
BROKEN_TYPE = "aclCorpusUndeclared"
