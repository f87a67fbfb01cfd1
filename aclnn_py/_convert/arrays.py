"""Owning wrappers of the host-side argument handles: ``IntArray``, ``BoolArray``,
``FloatArray`` (``aclIntArray`` & co.) and ``Scalar`` (``aclScalar``), made from Python values
checked by ``values``. CANN copies the values at creation; each handle is released exactly once,
by ``close()`` (also the context-manager exit) or by a finalizer that never raises.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Self, TypeAlias

from numpy.typing import DTypeLike

from .._dtypes import to_acl
from .._errors import ACLNN_ERR_PARAM_INVALID, AclnnError
from .._runtime.backend import device_library
from .._runtime.resources import quietly
from .values import bool_array_arg, float_array_arg, int_array_arg, scalar_value

if TYPE_CHECKING:
    from .._runtime.library import Library

CData: TypeAlias = Any  # a cffi pointer


class _HostArray:
    """Shared code of the aclIntArray / aclBoolArray / aclFloatArray wrappers (each subclass
    names its C functions and element type, and the coercion its values go through:
    ``values.int_array_arg`` & co., the same as for an argument of a call)."""

    _c_type = ""
    _create = ""
    _destroy = ""
    _values: Callable[[str, str, object], tuple[Any, ...] | None]

    def __init__(self, values: Sequence[object], *, backend: str | None = None) -> None:
        self.values = self._checked(values)
        self.lib = device_library(backend)
        self.handle = self._make(self.lib, self.values)
        self._finalizer = weakref.finalize(self, _HostArray._release, self.lib, self._destroy, self.handle)

    @classmethod
    def create(cls, lib: Library, values: object) -> CData:
        """A raw handle of ``values`` (checked as the wrapper checks them) that the caller
        releases: the C-API mirror's ``aclCreate*Array``."""
        return cls._make(lib, cls._checked(values))

    @classmethod
    def _checked(cls, values: object) -> tuple[Any, ...]:
        if values is None:
            raise TypeError(f"{cls._create}: values must be a sequence, got None")
        checked = cls._values(cls._create, "values", values)
        assert checked is not None  # (None only for None)
        return checked

    @classmethod
    def _make(cls, lib: Library, values: tuple[Any, ...]) -> CData:
        ffi = lib.ffi
        handle = lib.fn(cls._create)(ffi.new(f"{cls._c_type}[]", list(values) or [0]), len(values))
        if handle == ffi.NULL:
            raise AclnnError(ACLNN_ERR_PARAM_INVALID, cls._create, lib.recent_error())
        return handle

    @staticmethod
    def _release(lib: Library, destroy: str, handle: CData) -> None:
        if not lib.finalized:
            quietly(lambda: lib.fn(destroy)(handle))

    def close(self) -> None:
        self._finalizer()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __len__(self) -> int:
        return len(self.values)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({list(self.values)})"


class IntArray(_HostArray):
    """An ``aclIntArray`` (int64 values, copied by CANN at creation)."""

    _c_type, _create, _destroy = "int64_t", "aclCreateIntArray", "aclDestroyIntArray"
    _values = staticmethod(int_array_arg)


class BoolArray(_HostArray):
    """An ``aclBoolArray``."""

    _c_type, _create, _destroy = "bool", "aclCreateBoolArray", "aclDestroyBoolArray"
    _values = staticmethod(bool_array_arg)


class FloatArray(_HostArray):
    """An ``aclFloatArray`` (float32 values)."""

    _c_type, _create, _destroy = "float", "aclCreateFloatArray", "aclDestroyFloatArray"
    _values = staticmethod(float_array_arg)


class Scalar:
    """An ``aclScalar`` holding one value of ``dtype`` (copied by CANN at creation)."""

    def __init__(self, value: object, dtype: DTypeLike, *, backend: str | None = None) -> None:
        self.value = scalar_value("aclCreateScalar", value, dtype)
        self.lib = device_library(backend)
        ffi = self.lib.ffi
        handle = self.lib.fn("aclCreateScalar")(ffi.cast("void *", self.value.ctypes.data),
                                                int(to_acl(self.value.dtype)))
        if handle == ffi.NULL:
            raise AclnnError(ACLNN_ERR_PARAM_INVALID, "aclCreateScalar", self.lib.recent_error())
        self.handle = handle
        self._finalizer = weakref.finalize(self, _HostArray._release, self.lib, "aclDestroyScalar", handle)

    def close(self) -> None:
        self._finalizer()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
