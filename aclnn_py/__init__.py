"""aclnn_py: call Huawei Ascend CANN aclnn operators from Python.

Backends: ``npu`` (real CANN through cffi), ``sim`` (the same cffi path on the project's
CANN-compatible CPU simulator), ``numpy`` (pure NumPy; the default where there is no NPU).
"""

# First: ``_ffi`` imports ``_errors`` and ``_constants``, which read the headers through
# ``_ffi.ffi()`` (see ``_ffi/__init__.py``).
from . import _ffi  # noqa: F401  (isort: skip)
from . import _errors as errors
from ._backend import BACKENDS, get_backend, set_backend, use_backend
from ._device import get_device, set_device
from ._dtypes import aclDataType, aclFormat, bfloat16
from ._errors import AclnnError
from ._ffi.discovery import BackendUnavailable
from .tensor import BoolArray, FloatArray, IntArray, Scalar, Tensor
from . import ops
from .ops import *  # noqa: F403  (the operator functions: aclnn_py.ops lists them, the registry declares them)
from ._compare import compare
from .call import Prepared, call, prepare

__version__ = "0.1.0"


def get_include() -> str:
    """The directory of the C headers (acl/, aclnn/, aclnnop/) the binding is built from; they ship
    with the package, with or without the simulator."""
    from ._ffi.declarations import include_dir

    return str(include_dir())


__all__ = [
    "BACKENDS",
    "AclnnError",
    "BackendUnavailable",
    "BoolArray",
    "FloatArray",
    "IntArray",
    "Prepared",
    "Scalar",
    "Tensor",
    "get_include",
    "aclDataType",
    "aclFormat",
    "bfloat16",
    "call",
    "compare",
    "errors",
    "get_backend",
    "get_device",
    "prepare",
    "set_backend",
    "set_device",
    "use_backend",
]
__all__ += [op.name for op in ops.OPERATORS]
