"""An operator's parameters by their declared C types: the one place that decides, from the
prototype a header declares, what kind of Python value each parameter takes (a tensor, an
output, an int/bool/float array, a scalar, a list, a plain C value, a string) and, for an
integer, the range its C type holds. ``call``, ``prepare`` and the typed operator functions
convert their arguments by these kinds (``values``, ``executor``, ``marshal``)."""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from .._errors import ACL_ERROR_API_NOT_SUPPORT, AclnnError
from .._ffi.operator_headers import find_operator_header

if TYPE_CHECKING:
    from cffi import FFI

    from .._ffi.operator_headers import Parameter

_SUFFIX = "GetWorkspaceSize"


# The kinds of parameter, by the declared type's name (pointers) or cffi's kind (plain values).
POINTER_KINDS = {"aclTensor": "tensor", "aclTensorList": "tensor_list", "aclIntArray": "int_array",
                 "aclBoolArray": "bool_array", "aclFloatArray": "float_array", "aclScalar": "scalar",
                 "aclScalarList": "scalar_list"}
#: The kinds of a parameter passed by value (``char *`` included), not as a handle.
PLAIN_KINDS = frozenset({"int", "bool", "float", "string"})
_NOT_INTEGERS = ("char", "wchar_t", "char16_t", "char32_t", "long double", "float _Complex", "double _Complex")


#: The parameters CANN declares ``const aclTensor *`` and writes all the same, by phase 1's name:
#: its headers' const-ness is no guide there, so these are outputs to ``call`` and ``prepare``
#: (written back) like every non-const ``aclTensor *`` (the one place that names them).
WRITTEN_CONST: dict[str, frozenset[str]] = {
    "aclnnReluGetWorkspaceSize": frozenset({"out"}),
    "aclnnInplaceAddGetWorkspaceSize": frozenset({"selfRef"}),
    "aclnnIm2colGetWorkspaceSize": frozenset({"out"}),
}

#: The non-const ``aclTensor *`` parameters CANN reads and then writes in place (BatchNorm's
#: running statistics), by phase 1's name: outputs to ``call`` (uploaded with their values and
#: written back), arguments to the typed function, which passes their values in and updates
#: them (``typed.TypedCall``, ``call``'s numpy path; the one place that names them).
READ_AND_WRITTEN: dict[str, frozenset[str]] = {
    "aclnnBatchNormGetWorkspaceSize": frozenset({"runningMean", "runningVar"}),
}


@dataclass(frozen=True)
class Param:
    """One parameter of a prototype, by its declared C type."""

    name: str
    ctype: str           # the C type (a plain integer by its width: int32_t for int)
    kind: str            # a POINTER_KINDS value, or "int", "bool", "float", "string"
    output: bool = False  # a non-const aclTensor * / aclTensorList *, or one of WRITTEN_CONST
    low: int = 0          # the range of an integer parameter
    high: int = 0


def param_of(ffi: FFI, api: str, p: Parameter) -> Param:
    """The kind of the parameter ``p`` of ``api`` (its C type resolved through ``ffi``);
    AclnnError 200001 for a C type no Python value converts to."""
    if p.pointers == 1 and p.base in POINTER_KINDS:
        kind = POINTER_KINDS[p.base]
        written = not p.const or p.name in WRITTEN_CONST.get(api, ())
        return Param(p.name, p.type, kind, output=kind in ("tensor", "tensor_list") and written)
    if p.pointers == 1 and p.base == "char":
        return Param(p.name, p.type, "string")
    if p.pointers == 0:
        try:
            t: FFI.CType | None = ffi.typeof(p.type)
        except Exception:
            t = None
        if t is not None and t.kind == "primitive" and t.cname == "_Bool":
            return Param(p.name, p.type, "bool")
        if t is not None and t.kind == "primitive" and t.cname in ("float", "double"):
            return Param(p.name, p.type, "float")
        if t is not None and (t.kind == "enum" or t.kind == "primitive" and t.cname not in _NOT_INTEGERS):
            bits = 8 * ffi.sizeof(t)  # type: ignore[arg-type]  # (cffi takes a ctype; types-cffi lists str | CData)
            signed = t.kind == "enum" or int(ffi.cast(t, -1)) < 0
            low, high = (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1) if signed else (0, 2**bits - 1)
            # (an enum by its name; a plain integer by its width, as ``int`` is an int32_t here)
            named = p.type if t.kind == "enum" else f"{'' if signed else 'u'}int{bits}_t"
            return Param(p.name, named, "int", low=low, high=high)
    raise AclnnError(ACL_ERROR_API_NOT_SUPPORT, api,
                     f"parameter {p.name} has C type {p.type!r}, which aclnn_py.call cannot convert")


@dataclass(frozen=True)
class Signature:
    """Phase 1's parameters (without workspaceSize and executor), and the Python signature that
    binds arguments to them by position or C name."""

    op: str
    api: str
    params: tuple[Param, ...]
    python: inspect.Signature


def read_signature(api: str, folders: Sequence[Path], ffi: FFI) -> Signature:
    """The signature of phase 1 ``api`` (``aclnnXxxGetWorkspaceSize``) as the first operator header
    in ``folders`` that declares it says, its C types resolved through ``ffi``; AclnnError 200001
    when none declares it or it is not a two-phase operator's."""
    header = find_operator_header(api, folders)
    if header is None or header.prototypes[api].error:
        where = ", ".join(str(f) for f in folders)
        raise AclnnError(ACL_ERROR_API_NOT_SUPPORT, api, f"no operator header in {where} declares {api}"
                         + (f" ({header.prototypes[api].error})" if header is not None else ""))
    c_params = header.prototypes[api].parameters()
    if [p.type for p in c_params[-2:]] != ["uint64_t *", "aclOpExecutor **"]:
        raise AclnnError(ACL_ERROR_API_NOT_SUPPORT, api, f"{api} does not end with (uint64_t *workspaceSize, "
                         "aclOpExecutor **executor): not a two-phase aclnn operator")
    params = tuple(param_of(ffi, api, p) for p in c_params[:-2])
    python = inspect.Signature([inspect.Parameter(p.name, inspect.Parameter.POSITIONAL_OR_KEYWORD)
                                for p in params])
    return Signature(api.removesuffix(_SUFFIX), api, params, python)
