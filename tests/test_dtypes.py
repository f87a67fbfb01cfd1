"""The dtype table (aclnn_py/_dtypes.py): NumPy dtype <-> aclDataType both ways, element sizes,
the aclnn documentation's names, and clear errors for types one side does not have."""

from __future__ import annotations

import numpy as np
import pytest

from aclnn_py import aclDataType, bfloat16
from aclnn_py._dtypes import dtype_name, itemsize, to_acl, to_numpy

# (NumPy dtype, aclDataType, bytes per element as CANN's aclDataTypeSize gives them (CANN_ABI.md 2.1))
ROUND_TRIPS = [
    (np.float32, aclDataType.ACL_FLOAT, 4), (np.float16, aclDataType.ACL_FLOAT16, 2),
    (bfloat16, aclDataType.ACL_BF16, 2), (np.float64, aclDataType.ACL_DOUBLE, 8),
    (np.int8, aclDataType.ACL_INT8, 1), (np.int64, aclDataType.ACL_INT64, 8),
    (np.uint16, aclDataType.ACL_UINT16, 2), (np.bool_, aclDataType.ACL_BOOL, 1),
    (np.complex128, aclDataType.ACL_COMPLEX128, 16),
]


@pytest.mark.parametrize("dtype, acl, size", ROUND_TRIPS, ids=lambda v: str(v))
def test_round_trip_and_size(dtype, acl, size):
    assert to_acl(dtype) == acl
    assert to_numpy(int(acl)) == np.dtype(dtype)
    assert itemsize(int(acl)) == size


def test_types_one_side_lacks_are_type_errors():
    with pytest.raises(TypeError, match="float128|longdouble|has no aclDataType"):
        to_acl(np.longdouble)
    with pytest.raises(TypeError, match="aclDataType 13 has no NumPy counterpart"):  # ACL_STRING
        to_numpy(int(aclDataType.ACL_STRING))
    with pytest.raises(TypeError, match="aclDataType 999 has no NumPy counterpart"):  # not an enumerator
        itemsize(999)


def test_documentation_names():
    assert [dtype_name(d) for d in (np.float32, np.float16, bfloat16, np.float64, np.int64, np.bool_)] == \
        ["FLOAT", "FLOAT16", "BFLOAT16", "DOUBLE", "INT64", "BOOL"]
    assert dtype_name(np.dtype("U3")) == "<U3"  # no aclDataType: NumPy's own name
