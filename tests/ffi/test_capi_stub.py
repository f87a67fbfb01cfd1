"""``aclnn_py/capi.pyi`` is what the generator makes from the headers and ``capi.py`` today."""

from __future__ import annotations

import inspect

from aclnn_py import capi
from aclnn_py._ffi import prototypes
from aclnn_py.tools import stubs
from aclnn_py._ffi.declarations import include_dir, read_cdef


def test_committed_stub_is_current():
    assert stubs.STUB_PATH.read_text() == stubs.render(), (
        "aclnn_py/capi.pyi is stale: python -m aclnn_py.tools.stubs > aclnn_py/capi.pyi")


def test_every_public_function_has_its_c_prototype():
    text = stubs.render()
    protos = prototypes.prototypes(read_cdef(include_dir()))
    functions = [n for n, v in vars(capi).items()
                 if not n.startswith("_") and inspect.isfunction(v) and v.__module__ == capi.__name__
                 and n != "new"]  # the mirror's one helper of its own: memory for output parameters
    assert "aclrtMalloc" in functions and "aclnnAvgPool2dBackwardGetWorkspaceSize" in functions
    for name in functions:
        assert name in protos, f"{name} is not declared by the headers"
        assert f"C: ``{prototypes.c_signature(name, *protos[name])};``" in text


def test_prototype_parsing():
    protos = prototypes.prototypes("typedef int aclError;\n#define X 1\n"
                              "aclError aclrtMalloc(void **devPtr, size_t size, aclrtMemMallocPolicy policy);\n"
                              "const char *aclGetRecentErrMsg(void);\ntypedef struct { int (*f)(int); } s;")
    assert protos == {"aclrtMalloc": ("aclError", [("void **", "devPtr"), ("size_t", "size"),
                                                   ("aclrtMemMallocPolicy", "policy")]),
                      "aclGetRecentErrMsg": ("const char *", [])}
    assert prototypes.c_signature("aclrtMalloc", *protos["aclrtMalloc"]) == \
        "aclError aclrtMalloc(void **devPtr, size_t size, aclrtMemMallocPolicy policy)"
