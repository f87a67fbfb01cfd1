"""CANN's constants are written once, in include/: ``aclnn_py._constants`` reads them from the
cffi declarations, every other module imports them from there, and the type stub is current."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from aclnn_py import _constants, _errors, aclDataType, aclFormat, capi, errors
from aclnn_py._ffi import ffi
from aclnn_py.tools import stubs

FASTCALL_C = Path(_constants.__file__).parent / "_fast" / "fastcall.c"


def test_committed_stub_is_current():
    assert stubs.CONSTANTS_STUB_PATH.read_text() == stubs.render_constants(), (
        "aclnn_py/_constants.pyi is stale: python -m aclnn_py.tools.stubs constants > aclnn_py/_constants.pyi")


@pytest.mark.parametrize("c_enum", ["aclDataType", "aclFormat", "aclrtMemcpyKind", "aclrtMemMallocPolicy"])
def test_every_enumerator_of_the_headers_with_its_value(c_enum):
    header = ffi().typeof(c_enum).relements
    assert len(header) > 3
    if c_enum in _constants.ENUM_CLASSES:
        cls = getattr(_constants, c_enum)
        assert {m.name: int(m) for m in cls} == header
    else:
        assert {n: getattr(_constants, n) for n in header} == header
        assert all(type(getattr(_constants, n)) is int for n in header)


def test_status_codes_are_every_define_of_the_headers():
    lib = ffi().dlopen(None)
    expected = {n: getattr(lib, n) for n in dir(lib) if re.fullmatch(r"ACL(NN)?_(SUCCESS|ERR(OR)?_\w+)|ACL_RT_SUCCESS", n)}
    assert _constants.STATUS_CODES == expected
    assert len(expected) > 60 and set(_constants.__all__) == set(expected)
    assert {n: getattr(errors, n) for n in expected} == expected


def test_cann_values_of_the_newer_dtypes():
    # CANN_ABI.md 2.1: FLOAT6 / FLOAT4 after FLOAT8_E8M0.
    assert (aclDataType.ACL_FLOAT8_E8M0, aclDataType.ACL_FLOAT6_E3M2, aclDataType.ACL_FLOAT6_E2M3,
            aclDataType.ACL_FLOAT4_E2M1, aclDataType.ACL_FLOAT4_E1M2) == (37, 38, 39, 40, 41)
    assert capi.ACL_FLOAT4_E1M2 == 41 and type(capi.ACL_FLOAT4_E1M2) is int


def test_public_names_keep_their_values():
    assert aclDataType(27) is aclDataType.ACL_BF16 and aclDataType.ACL_DT_UNDEFINED == -1
    assert aclFormat.ACL_FORMAT_NCL == 47 and aclFormat.ACL_FORMAT_ND == 2 and aclFormat.ACL_FORMAT_UNDEFINED == -1
    assert (capi.ACL_SUCCESS, capi.ACL_MEM_MALLOC_HUGE_FIRST, capi.ACL_MEM_MALLOC_HUGE_ONLY,
            capi.ACL_MEM_MALLOC_NORMAL_ONLY) == (0, 0, 1, 2)
    assert (capi.ACL_MEMCPY_HOST_TO_HOST, capi.ACL_MEMCPY_HOST_TO_DEVICE, capi.ACL_MEMCPY_DEVICE_TO_HOST,
            capi.ACL_MEMCPY_DEVICE_TO_DEVICE, capi.ACL_MEMCPY_DEFAULT) == (0, 1, 2, 3, 4)
    assert errors.ACLNN_ERR_PARAM_INVALID == 161002 and errors.ACL_ERROR_RT_MEMORY_ALLOCATION == 207001


def test_status_names():
    assert _errors.status_name(0) == "ACLNN_SUCCESS"
    assert _errors.status_name(561105) == "ACLNN_ERR_INNER_KEY_CONFLICT"  # not the deprecated misspelling
    assert _errors.status_name(161002) == "ACLNN_ERR_PARAM_INVALID"
    assert _errors.status_name(100002) == "ACL_ERROR_REPEAT_INITIALIZE"
    assert _errors.status_name(12345) == "UNKNOWN"
    codes = _constants.STATUS_CODES
    assert set(_errors.STATUS_NAMES) == set(codes.values())
    assert all(codes[name] == value for value, name in _errors.STATUS_NAMES.items())


def test_no_module_defines_the_constants_by_hand():
    package = Path(_constants.__file__).parent
    names = set(_constants.STATUS_CODES) | {m.name for c in (aclDataType, aclFormat) for m in c}
    names |= {n for e in _constants.INT_ENUMS for n in _constants.enumerators(e)}
    assignment = re.compile(r"^(\w+)\s*(?::[^=]*)?=\s*-?\d", re.M)
    offenders = {f"{path.relative_to(package)}: {m[1]}" for path in package.rglob("*.py")
                 for m in assignment.finditer(path.read_text()) if m[1] in names}
    assert offenders == set()


def test_the_fast_path_helper_uses_the_headers_values():
    # fastcall.c includes no CANN header (it is built without them): its copies are checked here.
    lib = ffi().dlopen(None)
    defines = dict(re.findall(r"^#define (ACL\w+) (-?\d+)$", FASTCALL_C.read_text(), re.M))
    assert {"ACL_MEM_MALLOC_HUGE_FIRST", "ACL_MEMCPY_HOST_TO_DEVICE", "ACLNN_ERR_PARAM_INVALID"} <= set(defines)
    assert {n: int(v) for n, v in defines.items()} == {n: getattr(lib, n) for n in defines}


def test_the_constants_declarations_are_those_of_the_full_declarations():
    from aclnn_py._ffi import constants_ffi
    from aclnn_py._ffi.declarations import constants_cdef

    full, constants = ffi().dlopen(None), constants_ffi().dlopen(None)
    names = set(dir(constants))
    assert len(names) > 150 and names <= set(dir(full))
    assert {n: getattr(constants, n) for n in names} == {n: getattr(full, n) for n in names}
    # Every integer constant of the full declarations is there (the rest are functions).
    assert {n for n in dir(full) if re.fullmatch(r"[A-Z][A-Z0-9_]+", n)} <= names
    assert constants_cdef("#define A 1\nint f(void);\ntypedef enum x {\nB = 2,\nC\n} x;\n"
                          "typedef struct { int a; } s;\n") == "#define A 1\ntypedef enum x {\nB = 2,\nC\n} x;\n"
