"""NumPy dtype <-> aclDataType, in one table (bfloat16 through ml_dtypes).

``aclDataType`` and ``aclFormat`` are read from the headers (``aclnn_py._constants``)."""

from __future__ import annotations

import ml_dtypes
import numpy as np
from numpy.typing import DTypeLike

from ._constants import aclDataType as aclDataType, aclFormat as aclFormat

bfloat16 = np.dtype(ml_dtypes.bfloat16)

_NUMPY_TO_ACL: dict[np.dtype, aclDataType] = {
    np.dtype(np.float32): aclDataType.ACL_FLOAT,
    np.dtype(np.float16): aclDataType.ACL_FLOAT16,
    np.dtype(np.int8): aclDataType.ACL_INT8,
    np.dtype(np.int32): aclDataType.ACL_INT32,
    np.dtype(np.uint8): aclDataType.ACL_UINT8,
    np.dtype(np.int16): aclDataType.ACL_INT16,
    np.dtype(np.uint16): aclDataType.ACL_UINT16,
    np.dtype(np.uint32): aclDataType.ACL_UINT32,
    np.dtype(np.int64): aclDataType.ACL_INT64,
    np.dtype(np.uint64): aclDataType.ACL_UINT64,
    np.dtype(np.float64): aclDataType.ACL_DOUBLE,
    np.dtype(np.bool_): aclDataType.ACL_BOOL,
    np.dtype(np.complex64): aclDataType.ACL_COMPLEX64,
    np.dtype(np.complex128): aclDataType.ACL_COMPLEX128,
    bfloat16: aclDataType.ACL_BF16,
    np.dtype(ml_dtypes.float8_e5m2): aclDataType.ACL_FLOAT8_E5M2,
    np.dtype(ml_dtypes.float8_e4m3fn): aclDataType.ACL_FLOAT8_E4M3FN,
}
_ACL_TO_NUMPY: dict[aclDataType, np.dtype] = {v: k for k, v in _NUMPY_TO_ACL.items()}

# The names the aclnn documentation uses in its dtype lists.
_DOC_NAMES = {
    aclDataType.ACL_FLOAT: "FLOAT",
    aclDataType.ACL_FLOAT16: "FLOAT16",
    aclDataType.ACL_BF16: "BFLOAT16",
    aclDataType.ACL_DOUBLE: "DOUBLE",
    aclDataType.ACL_BOOL: "BOOL",
}


def to_acl(dtype: DTypeLike) -> aclDataType:
    """The aclDataType of a NumPy dtype; TypeError if CANN has no such type."""
    dt = np.dtype(dtype)
    try:
        return _NUMPY_TO_ACL[dt]
    except KeyError:
        raise TypeError(f"NumPy dtype {dt} has no aclDataType counterpart") from None


def to_numpy(acl_dtype: int) -> np.dtype:
    """The NumPy dtype of an aclDataType value; TypeError if NumPy cannot hold it."""
    try:
        return _ACL_TO_NUMPY[aclDataType(acl_dtype)]
    except (KeyError, ValueError):
        raise TypeError(f"aclDataType {acl_dtype} has no NumPy counterpart") from None


def dtype_name(dtype: DTypeLike) -> str:
    """The aclnn documentation's name for a dtype (FLOAT, FLOAT16, BFLOAT16, INT64, ...)."""
    dt = np.dtype(dtype)
    acl = _NUMPY_TO_ACL.get(dt)
    if acl is None:
        return str(dt)
    return _DOC_NAMES.get(acl, acl.name.removeprefix("ACL_"))


def itemsize(acl_dtype: int) -> int:
    """Bytes per element, as aclDataTypeSize() reports it for the types NumPy can hold."""
    return to_numpy(acl_dtype).itemsize


def is_low_precision_float(dtype: DTypeLike) -> bool:
    """float16 and bfloat16: computed in float32 and cast back by the numpy kernels."""
    dt = np.dtype(dtype)
    return bool(dt == np.float16 or dt == bfloat16)


def compute_dtype(dtype: DTypeLike) -> np.dtype:
    """The dtype a NumPy kernel accumulates in for results of ``dtype``."""
    return np.dtype(np.float32) if is_low_precision_float(dtype) else np.dtype(dtype)


_FORMAT_BY_RANK = {3: aclFormat.ACL_FORMAT_NCL, 4: aclFormat.ACL_FORMAT_NCHW, 5: aclFormat.ACL_FORMAT_NCDHW}


def format_for_rank(ndim: int) -> aclFormat:
    """The view format torch_npu (and this binding) gives a tensor of this rank."""
    return _FORMAT_BY_RANK.get(ndim, aclFormat.ACL_FORMAT_ND)
