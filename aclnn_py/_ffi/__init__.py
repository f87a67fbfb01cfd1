"""The cffi layer (ABI mode): declarations read from include/, library discovery, loading."""

from __future__ import annotations

from .._errors import AclnnError, ACL_ERROR_API_NOT_SUPPORT


def npu_present() -> bool:
    """True where real CANN libraries and at least one device are found."""
    return False


def library(name: str):
    """The loaded libraries of backend ``name`` (``"npu"`` or ``"sim"``)."""
    raise AclnnError(ACL_ERROR_API_NOT_SUPPORT, f"backend {name!r}",
                     "the cffi layer is not built yet; use backend='numpy'")
