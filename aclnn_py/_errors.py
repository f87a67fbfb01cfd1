"""Status codes and the one exception type: the single place where a status becomes an error.

aclnn (``aclnnStatus``) and ACL runtime (``aclError``) codes share one numeric space, so one
table names both.  ``AclnnError`` is raised for every failing status on every backend, with
the C function that failed and the library's recent error text, e.g.::

    aclnnXxxGetWorkspaceSize: ACLNN_ERR_PARAM_INVALID (161002): parameter check failed —
    kernelSize[0] must be > 0, got kernelSize = [0, 2]
"""

from __future__ import annotations

# Every status code of the headers: aclnnStatus (include/aclnn/opdev/op_errno.h, nnopbase's
# opdev header), aclError (acl/acl_base_rt.h) and the runtime layer's codes
# (acl/error_codes/rt_error_codes.h), read from them by ``_constants`` (``_constants.__all__``).
from ._constants import *  # noqa: F403
from ._constants import STATUS_CODES

_MEANINGS = {
    ACLNN_ERR_PARAM_NULLPTR: "a required pointer argument is NULL",
    ACLNN_ERR_PARAM_INVALID: "parameter check failed",
    ACLNN_ERR_RUNTIME_ERROR: "an NPU runtime call inside the API failed",
    ACLNN_ERR_INNER: "internal error",
    ACLNN_ERR_INNER_FIND_KERNEL_ERROR: "kernel binary not found (is the ops package installed?)",
    ACLNN_ERR_INNER_NULLPTR: "internal null pointer",
    ACLNN_ERR_INNER_OPP_PATH_NOT_FOUND: "ASCEND_OPP_PATH is not set",
    ACL_ERROR_INVALID_PARAM: "invalid parameter",
    ACL_ERROR_UNINITIALIZE: "aclInit has not been called",
    ACL_ERROR_REPEAT_INITIALIZE: "aclInit was already called",
    ACL_ERROR_REPEAT_FINALIZE: "aclFinalize was already called",
    ACL_ERROR_BAD_ALLOC: "memory allocation failed",
    ACL_ERROR_INVALID_DEVICE: "invalid device",
    ACL_ERROR_RT_PARAM_INVALID: "invalid runtime parameter",
    ACL_ERROR_RT_INVALID_DEVICEID: "invalid device id",
    ACL_ERROR_RT_MEMORY_ALLOCATION: "device out of memory",
    ACL_ERROR_RT_NO_DEVICE: "no device",
    ACL_ERROR_RT_AICORE_EXCEPTION: "AI Core exception",
}

# A code's name: the last the headers define for it, in alphabetical order (ACL_ERROR_NONE and
# ACL_RT_SUCCESS are aliases of ACL_SUCCESS); two are fixed by hand: 0 is reported as
# ACLNN_SUCCESS, and 561105 by its correct spelling, not CANN's deprecated KEY_CONFILICT.
STATUS_NAMES: dict[int, str] = {value: name for name, value in sorted(STATUS_CODES.items(), reverse=True)}
STATUS_NAMES[0] = "ACLNN_SUCCESS"
STATUS_NAMES[ACLNN_ERR_INNER_KEY_CONFLICT] = "ACLNN_ERR_INNER_KEY_CONFLICT"


def status_name(status: int) -> str:
    """The symbolic name of an aclnn / ACL status code (``"UNKNOWN"`` if it has none)."""
    return STATUS_NAMES.get(status, "UNKNOWN")


class AclnnError(RuntimeError):
    """A failing aclnn or ACL call, on any backend.

    Attributes:
        status: the aclnnStatus / aclError code (e.g. 161002).
        api: the C function that failed (e.g. ``"aclnnXxxGetWorkspaceSize"``).
        message: the library's recent error text (``aclGetRecentErrMsg``); for a parameter
            check, ``"<api>: <the constraint violated and the values received>"``, the same
            text on the numpy backend as on the simulator.
    """

    def __init__(self, status: int, api: str, message: str = "") -> None:
        self.status = int(status)
        self.api = api
        self.message = message
        meaning = _MEANINGS.get(self.status, "")
        text = f"{api}: {status_name(self.status)} ({self.status})"
        if meaning:
            text += f": {meaning}"
        if message:
            # Libraries often start their message with the function's name: say it once.
            shown = message[len(api) + 2:] if message.startswith(f"{api}: ") else message
            text += f" — {shown}"
        super().__init__(text)

    def __reduce__(self) -> tuple[type[AclnnError], tuple[int, str, str]]:
        return (type(self), (self.status, self.api, self.message))


def _as_library_text(api: str, message: str) -> str:
    """``message`` as the simulator's recent error text says it: after the function's name."""
    return message if message.startswith(f"{api}: ") else f"{api}: {message}"


def param_invalid(api: str, message: str) -> AclnnError:
    """The error every backend raises for a documented parameter violation (161002)."""
    return AclnnError(ACLNN_ERR_PARAM_INVALID, api, _as_library_text(api, message))


def param_nullptr(api: str, message: str) -> AclnnError:
    """The error every backend raises for a missing required argument (161001)."""
    return AclnnError(ACLNN_ERR_PARAM_NULLPTR, api, _as_library_text(api, message))
