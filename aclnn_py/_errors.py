"""Status codes and the one exception type: the single place where a status becomes an error.

aclnn (``aclnnStatus``) and ACL runtime (``aclError``) codes share one numeric space, so one
table names both.  ``AclnnError`` is raised for every failing status on every backend, with
the C function that failed and the library's recent error text, e.g.::

    aclnnAvgPool2dBackwardGetWorkspaceSize: ACLNN_ERR_PARAM_INVALID (161002): parameter
    check failed — kernelSize[0] must be > 0, got kernelSize = [0, 2]
"""

from __future__ import annotations

# aclnnStatus (include/aclnn/opdev/op_errno.h, nnopbase's opdev header; tests/sim/test_cann_names.py
# checks that every code here equals the header's).
ACLNN_SUCCESS = 0
ACLNN_ERR_PARAM_NULLPTR = 161001
ACLNN_ERR_PARAM_INVALID = 161002
ACLNN_ERR_RUNTIME_ERROR = 361001
ACLNN_ERR_INNER = 561000
ACLNN_ERR_INNER_INFERSHAPE_ERROR = 561001
ACLNN_ERR_INNER_TILING_ERROR = 561002
ACLNN_ERR_INNER_FIND_KERNEL_ERROR = 561003
ACLNN_ERR_INNER_CREATE_EXECUTOR = 561101
ACLNN_ERR_INNER_NOT_TRANS_EXECUTOR = 561102
ACLNN_ERR_INNER_NULLPTR = 561103
ACLNN_ERR_INNER_WRONG_ATTR_INFO_SIZE = 561104
ACLNN_ERR_INNER_KEY_CONFLICT = 561105
ACLNN_ERR_INNER_INVALID_IMPL_MODE = 561106
ACLNN_ERR_INNER_OPP_PATH_NOT_FOUND = 561107
ACLNN_ERR_INNER_LOAD_JSON_FAILED = 561108
ACLNN_ERR_INNER_JSON_VALUE_NOT_FOUND = 561109
ACLNN_ERR_INNER_JSON_FORMAT_INVALID = 561110
ACLNN_ERR_INNER_JSON_DTYPE_INVALID = 561111
ACLNN_ERR_INNER_OPP_KERNEL_PKG_NOT_FOUND = 561112
ACLNN_ERR_INNER_OP_FILE_INVALID = 561113
ACLNN_ERR_INNER_ATTR_NUM_OUT_OF_BOUND = 561114
ACLNN_ERR_INNER_ATTR_LEN_NOT_ENOUGH = 561115
ACLNN_ERR_INNER_INPUT_NUM_IN_JSON_TOO_LARGE = 561116
ACLNN_ERR_INNER_INPUT_JSON_IS_NULL = 561117
ACLNN_ERR_INNER_STATIC_WORKSPACE_INVALID = 561118
ACLNN_ERR_INNER_STATIC_BLOCK_DIM_INVALID = 561119

# aclError (acl/acl_base_rt.h) and runtime-layer codes (acl/error_codes/rt_error_codes.h).
ACL_SUCCESS = 0
ACL_ERROR_INVALID_PARAM = 100000
ACL_ERROR_UNINITIALIZE = 100001
ACL_ERROR_REPEAT_INITIALIZE = 100002
ACL_ERROR_INVALID_FILE = 100003
ACL_ERROR_WRITE_FILE = 100004
ACL_ERROR_INVALID_FILE_SIZE = 100005
ACL_ERROR_PARSE_FILE = 100006
ACL_ERROR_OP_NOT_FOUND = 100024
ACL_ERROR_OP_LOAD_FAILED = 100025
ACL_ERROR_UNSUPPORTED_DATA_TYPE = 100026
ACL_ERROR_FORMAT_NOT_MATCH = 100027
ACL_ERROR_REPEAT_FINALIZE = 100037
ACL_ERROR_INVALID_OPP_PATH = 148049
ACL_ERROR_RELATIVE_RESOURCE_NOT_CLEARED = 148051
ACL_ERROR_BAD_ALLOC = 200000
ACL_ERROR_API_NOT_SUPPORT = 200001
ACL_ERROR_INVALID_DEVICE = 200002
ACL_ERROR_MEMORY_ADDRESS_UNALIGNED = 200003
ACL_ERROR_RESOURCE_NOT_MATCH = 200004
ACL_ERROR_INVALID_RESOURCE_HANDLE = 200005
ACL_ERROR_FEATURE_UNSUPPORTED = 200006
ACL_ERROR_PROF_MODULES_UNSUPPORTED = 200007
ACL_ERROR_STORAGE_OVER_LIMIT = 300000
ACL_ERROR_INTERNAL_ERROR = 500000
ACL_ERROR_FAILURE = 500001
ACL_ERROR_GE_FAILURE = 500002
ACL_ERROR_RT_FAILURE = 500003
ACL_ERROR_DRV_FAILURE = 500004
ACL_ERROR_PROFILING_FAILURE = 500005
ACL_ERROR_RT_PARAM_INVALID = 107000
ACL_ERROR_RT_INVALID_DEVICEID = 107001
ACL_ERROR_RT_CONTEXT_NULL = 107002
ACL_ERROR_RT_STREAM_CONTEXT = 107003
ACL_ERROR_RT_ADDR_UNALIGNED = 107008
ACL_ERROR_RT_INVALID_MEMORY_TYPE = 107016
ACL_ERROR_RT_INVALID_HANDLE = 107017
ACL_ERROR_RT_INVALID_MALLOC_TYPE = 107018
ACL_ERROR_RT_DEVICE_TASK_ABORT = 107022
ACL_ERROR_RT_FEATURE_NOT_SUPPORT = 207000
ACL_ERROR_RT_MEMORY_ALLOCATION = 207001
ACL_ERROR_RT_MEMORY_FREE = 207002
ACL_ERROR_RT_NO_DEVICE = 207004
ACL_ERROR_RT_NO_PERMISSION = 207006
ACL_ERROR_RT_INTERNAL_ERROR = 507000
ACL_ERROR_RT_AICORE_EXCEPTION = 507015
ACL_ERROR_RT_STREAM_SYNC_TIMEOUT = 507046
ACL_ERROR_RT_DEVICE_MEM_ERROR = 507053
ACL_ERROR_RT_DRV_INTERNAL_ERROR = 507899

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

STATUS_NAMES: dict[int, str] = {
    value: name
    for name, value in sorted(globals().items(), reverse=True)
    if name.startswith(("ACLNN_", "ACL_")) and isinstance(value, int)
}
STATUS_NAMES[0] = "ACLNN_SUCCESS"


def status_name(status: int) -> str:
    """The symbolic name of an aclnn / ACL status code (``"UNKNOWN"`` if it has none)."""
    return STATUS_NAMES.get(status, "UNKNOWN")


class AclnnError(RuntimeError):
    """A failing aclnn or ACL call, on any backend.

    Attributes:
        status: the aclnnStatus / aclError code (e.g. 161002).
        api: the C function that failed (e.g. ``"aclnnIm2colBackwardGetWorkspaceSize"``).
        message: the library's recent error text (``aclGetRecentErrMsg``) or, on the numpy
            backend, the constraint that was violated and the values received.
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


def param_invalid(api: str, message: str) -> AclnnError:
    """The error every backend raises for a documented parameter violation (161002)."""
    return AclnnError(ACLNN_ERR_PARAM_INVALID, api, message)


def param_nullptr(api: str, message: str) -> AclnnError:
    """The error every backend raises for a missing required argument (161001)."""
    return AclnnError(ACLNN_ERR_PARAM_NULLPTR, api, message)
