"""aclnn_py: call Huawei Ascend CANN aclnn operators from Python.

Backends: ``npu`` (real CANN through cffi), ``sim`` (the same cffi path on the project's
CANN-compatible CPU simulator), ``numpy`` (pure NumPy; the default where there is no NPU).
"""

from . import _errors as errors
from ._runtime.backend import BACKENDS, get_backend, set_backend, use_backend
from ._runtime.current_device import get_device
from ._runtime.device import set_device
from ._dtypes import aclDataType, aclFormat, bfloat16
from ._errors import AclnnError
from ._ffi.discovery import BackendUnavailable
from ._convert.arrays import BoolArray, FloatArray, IntArray, Scalar
from ._runtime.tensor import Tensor
from ._runtime.graph import Graph, capture
from ._runtime.pool import trim_all as _trim_all
from . import ops
from .ops import *  # noqa: F403  (the operator functions: aclnn_py.ops lists them, the registry declares them)
from ._compare import compare
from .call import Prepared, call, prepare

__version__ = "0.1.0"

# The public classes show their public names (``aclnn_py.AclnnError``) in tracebacks and reprs;
# pickling finds them there too.
for _public in (AclnnError, BackendUnavailable, BoolArray, FloatArray, IntArray, Scalar, Tensor, Prepared, Graph):
    _public.__module__ = __name__
del _public


def empty_cache() -> None:
    """Free the device memory the caching allocator keeps (``npu``, ``sim``).

    A released ``Tensor``'s device block is kept for the next ``Tensor`` of its size, at most
    256 MiB in all, and device-memory figures (``aclrtGetMemInfo``) count those blocks as in use.
    This gives every kept block of every loaded backend back to the runtime (``aclrtFree``).
    A block whose stream may still use it is not kept yet: it reaches the cache once the stream
    is synchronised (reading a result with ``Tensor.numpy()`` synchronises it). Nothing is done
    on ``numpy``, which has no device memory, or for a backend not loaded."""
    _trim_all()


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
    "Graph",
    "IntArray",
    "Prepared",
    "Scalar",
    "Tensor",
    "get_include",
    "aclDataType",
    "aclFormat",
    "bfloat16",
    "call",
    "capture",
    "compare",
    "empty_cache",
    "errors",
    "get_backend",
    "get_device",
    "prepare",
    "set_backend",
    "set_device",
    "use_backend",
]
__all__ += [op.name for op in ops.OPERATORS]
