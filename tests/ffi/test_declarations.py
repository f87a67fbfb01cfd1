"""The Python side and include/ agree: the cdef parses, constants match, signatures are CANN's."""

from __future__ import annotations

import cffi
import pytest

from aclnn_py import _errors
from aclnn_py._dtypes import aclDataType, aclFormat
from aclnn_py._ffi.declarations import ROOT_HEADERS, read_cdef
from aclnn_py.sim import include_dir


@pytest.fixture(scope="module")
def ffi():
    f = cffi.FFI()
    f.cdef(read_cdef(include_dir()))
    return f


@pytest.fixture(scope="module")
def consts(ffi):
    # In ABI mode, enum members and integer #defines are reachable through a dlopen(None) lib.
    return ffi.dlopen(None)


def test_every_root_header_is_read():
    text = read_cdef(include_dir())
    for root in ROOT_HEADERS:
        assert f"/* {root} */" in text


@pytest.mark.parametrize("member", list(aclDataType), ids=lambda m: m.name)
def test_dtype_enum_matches_header(consts, member):
    assert getattr(consts, member.name) == member.value


@pytest.mark.parametrize("member", list(aclFormat), ids=lambda m: m.name)
def test_format_enum_matches_header(consts, member):
    assert getattr(consts, member.name) == member.value


@pytest.mark.parametrize("name", [n for n in _errors.STATUS_NAMES.values()
                                  if n.startswith("ACL_ERROR_") and not n.startswith("ACL_ERROR_RT_")])
def test_acl_error_codes_match_header(consts, name):
    assert getattr(consts, name) == getattr(_errors, name)


# CANN's signatures (CANN_ABI.md section 4), as C function types.
SIGNATURES = {
    "aclInit": "aclError(*)(const char *)",
    "aclFinalize": "aclError(*)(void)",
    "aclGetRecentErrMsg": "const char *(*)(void)",
    "aclrtSetDevice": "aclError(*)(int32_t)",
    "aclrtResetDevice": "aclError(*)(int32_t)",
    "aclrtGetDevice": "aclError(*)(int32_t *)",
    "aclrtGetDeviceCount": "aclError(*)(uint32_t *)",
    "aclrtCreateStream": "aclError(*)(aclrtStream *)",
    "aclrtDestroyStream": "aclError(*)(aclrtStream)",
    "aclrtSynchronizeStream": "aclError(*)(aclrtStream)",
    "aclrtMalloc": "aclError(*)(void * *, size_t, aclrtMemMallocPolicy)",
    "aclrtFree": "aclError(*)(void *)",
    "aclrtMemcpy": "aclError(*)(void *, size_t, const void *, size_t, aclrtMemcpyKind)",
    "aclrtMemcpyAsync": "aclError(*)(void *, size_t, const void *, size_t, aclrtMemcpyKind, aclrtStream)",
    "aclrtMemset": "aclError(*)(void *, size_t, int32_t, size_t)",
    "aclrtCreateEvent": "aclError(*)(aclrtEvent *)",
    "aclrtRecordEvent": "aclError(*)(aclrtEvent, aclrtStream)",
    "aclrtEventElapsedTime": "aclError(*)(float *, aclrtEvent, aclrtEvent)",
    "aclDataTypeSize": "size_t(*)(aclDataType)",
    "aclCreateTensor": "aclTensor *(*)(const int64_t *, uint64_t, aclDataType, const int64_t *, int64_t, "
                       "aclFormat, const int64_t *, uint64_t, void *)",
    "aclCreateIntArray": "aclIntArray *(*)(const int64_t *, uint64_t)",
    "aclCreateBoolArray": "aclBoolArray *(*)(const bool *, uint64_t)",
    "aclCreateFloatArray": "aclFloatArray *(*)(const float *, uint64_t)",
    "aclCreateScalar": "aclScalar *(*)(void *, aclDataType)",
    "aclDestroyTensor": "aclnnStatus(*)(const aclTensor *)",
    "aclDestroyIntArray": "aclnnStatus(*)(const aclIntArray *)",
    "aclDestroyBoolArray": "aclnnStatus(*)(const aclBoolArray *)",
    "aclSetAclOpExecutorRepeatable": "aclnnStatus(*)(aclOpExecutor *)",
    "aclDestroyAclOpExecutor": "aclnnStatus(*)(aclOpExecutor *)",
    "aclnnIm2colBackwardGetWorkspaceSize":
        "aclnnStatus(*)(const aclTensor *, const aclIntArray *, const aclIntArray *, const aclIntArray *, "
        "const aclIntArray *, const aclIntArray *, aclTensor *, uint64_t *, aclOpExecutor * *)",
    "aclnnMaxUnpool2dBackwardGetWorkspaceSize":
        "aclnnStatus(*)(const aclTensor *, const aclTensor *, const aclTensor *, const aclIntArray *, "
        "aclTensor *, uint64_t *, aclOpExecutor * *)",
    "aclnnReflectionPad2dBackwardGetWorkspaceSize":
        "aclnnStatus(*)(const aclTensor *, const aclTensor *, const aclIntArray *, aclTensor *, uint64_t *, "
        "aclOpExecutor * *)",
    "aclnnAvgPool2dBackwardGetWorkspaceSize":
        "aclnnStatus(*)(const aclTensor *, const aclTensor *, const aclIntArray *, const aclIntArray *, "
        "const aclIntArray *, _Bool, _Bool, int64_t, int8_t, aclTensor *, uint64_t *, aclOpExecutor * *)",
    "aclnnConvolutionBackwardGetWorkspaceSize":
        "aclnnStatus(*)(const aclTensor *, const aclTensor *, const aclTensor *, const aclIntArray *, "
        "const aclIntArray *, const aclIntArray *, const aclIntArray *, _Bool, const aclIntArray *, int, "
        "const aclBoolArray *, int8_t, aclTensor *, aclTensor *, aclTensor *, uint64_t *, aclOpExecutor * *)",
}
PHASE2 = "aclnnStatus(*)(void *, uint64_t, aclOpExecutor *, aclrtStream)"
for _op in ("Im2colBackward", "MaxUnpool2dBackward", "ReflectionPad2dBackward", "AvgPool2dBackward",
            "ConvolutionBackward"):
    SIGNATURES[f"aclnn{_op}"] = PHASE2


@pytest.fixture(scope="module")
def declared():
    """name -> the declaration line of every function in include/."""
    out = {}
    for line in read_cdef(include_dir()).splitlines():
        head, paren, _ = line.partition("(")
        if paren and line.endswith(");") and not line.startswith(("typedef", "#")):
            out[head.replace("*", " ").split()[-1]] = line
    return out


def _as_pointer_type(line: str, name: str) -> str:
    """``ret name(params);`` -> ``ret (*)(params)``."""
    head, _, params = line.partition(f"{name}(")
    return f"{head.strip()}(*)({params[:-2]})"


@pytest.mark.parametrize("name", sorted(SIGNATURES))
def test_signature_is_canns(ffi, declared, name):
    assert name in declared, f"{name} is not declared in include/"
    got = ffi.getctype(ffi.typeof(_as_pointer_type(declared[name], name)))
    assert got == ffi.getctype(ffi.typeof(SIGNATURES[name]))
