"""CANN's integer constants, read from the binding's own C headers: written once, in ``include/``.

Everything here comes from the cffi declarations of the headers the package ships and the
simulator is compiled against (``aclnn_py._ffi.constants_ffi()``: the integer constants and
enums of ``ffi()``'s declarations, without parsing every prototype), when this module is first
imported; no simulator, no CANN and no compiler are needed, only the headers. Nothing is
copied by hand:

* ``aclDataType``, ``aclFormat``: ``IntEnum``\\ s with every enumerator of the C enums of those
  names (``acl/acl_base_rt.h``);
* ``ACL_MEMCPY_*`` (``aclrtMemcpyKind``) and ``ACL_MEM_*`` (``aclrtMemMallocPolicy``,
  ``acl/acl_rt.h``): plain ints;
* the status codes: every ``#define`` of ``ACL_SUCCESS``, ``ACL_RT_SUCCESS``, ``ACL_ERROR_*``
  (``acl/acl_base_rt.h``, ``acl/error_codes/rt_error_codes.h``) and ``ACLNN_SUCCESS``,
  ``ACLNN_ERR_*`` (``aclnn/opdev/op_errno.h``): plain ints, also in ``STATUS_CODES``.
  ``__all__`` lists them (and only them): ``aclnn_py._errors`` (``aclnn_py.errors``)
  re-exports them with ``from ._constants import *``.

For type checkers the names are declared by ``_constants.pyi``, which ``python -m
aclnn_py.tools.stubs constants`` generates from the same declarations;
``tests/ffi/test_constants.py`` regenerates it and fails on any difference, so a header
change cannot leave it stale.
"""

from __future__ import annotations

import enum
import re

from ._ffi import constants_ffi

_STATUS = re.compile(r"ACL_SUCCESS|ACL_RT_SUCCESS|ACL_ERROR_\w+|ACLNN_SUCCESS|ACLNN_ERR_\w+")
# The integer-constant enums exported as plain ints (name -> value).
INT_ENUMS = ("aclrtMemcpyKind", "aclrtMemMallocPolicy")
# The enums exported as IntEnum classes of the same name.
ENUM_CLASSES = ("aclDataType", "aclFormat")


def enumerators(c_enum: str) -> dict[str, int]:
    """``name -> value`` of every enumerator of the C enum type ``c_enum``, by value."""
    items = constants_ffi().typeof(c_enum).relements.items()
    return dict(sorted(items, key=lambda item: item[1]))


def _status_codes() -> dict[str, int]:
    lib = constants_ffi().dlopen(None)  # ABI mode: the declarations' integer constants, no library needed
    names = sorted(n for n in dir(lib) if _STATUS.fullmatch(n))
    return {n: int(getattr(lib, n)) for n in names}


def _enum_class(c_enum: str, doc: str) -> type[enum.IntEnum]:
    # (Type checkers read _constants.pyi, not this module; run alone, mypy --strict finds only this.)
    cls = enum.IntEnum(c_enum, enumerators(c_enum), module=__name__)  # type: ignore[misc]
    cls.__doc__ = doc
    return cls


STATUS_CODES: dict[str, int] = _status_codes()
"""Every status code the headers define: ``name -> value`` (aliases included)."""

aclDataType = _enum_class("aclDataType", "Values of ``aclDataType`` (acl/acl_base_rt.h).")
aclFormat = _enum_class("aclFormat", "Values of ``aclFormat`` (acl/acl_base_rt.h).")

globals().update(STATUS_CODES)
for _c_enum in INT_ENUMS:
    globals().update(enumerators(_c_enum))
del _c_enum

__all__ = sorted(STATUS_CODES)
