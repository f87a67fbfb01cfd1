/*
 * aclnn_py: basic ACL runtime types, written for this project after the public CANN ABI
 * (see /work/shared/reference/CANN_ABI.md).  Enum values and signatures are CANN's; the
 * text is ours.
 *
 * Conventions kept by every header under include/ (the cffi layer turns them into
 * ffi.cdef input with a line filter, aclnn_py/_ffi/declarations.py):
 *   - one function declaration per line, prefixed by ACL_FUNC_VISIBILITY or ACLNN_API;
 *   - integer constants as "#define NAME <literal>" or enum members;
 *   - no #if blocks inside declarations other than the extern "C" guards;
 *   - only <stdint.h>, <stddef.h>, <stdbool.h> types.
 * Unlike CANN (static const int), the aclError codes are #defines; the values are equal.
 */
#ifndef ACL_ACL_BASE_RT_H
#define ACL_ACL_BASE_RT_H

#include <stdint.h>
#include <stddef.h>

#ifndef ACL_FUNC_VISIBILITY
#ifdef __GNUC__
#define ACL_FUNC_VISIBILITY __attribute__((visibility("default")))
#else
#define ACL_FUNC_VISIBILITY
#endif
#endif

#ifdef __cplusplus
extern "C" {
#endif

typedef int aclError;
typedef uint16_t aclFloat16;
typedef void *aclrtStream;
typedef void *aclrtEvent;
typedef void *aclrtContext;

#define ACL_SUCCESS 0
#define ACL_ERROR_NONE 0
#define ACL_ERROR_INVALID_PARAM 100000
#define ACL_ERROR_UNINITIALIZE 100001
#define ACL_ERROR_REPEAT_INITIALIZE 100002
#define ACL_ERROR_INVALID_FILE 100003
#define ACL_ERROR_WRITE_FILE 100004
#define ACL_ERROR_INVALID_FILE_SIZE 100005
#define ACL_ERROR_PARSE_FILE 100006
#define ACL_ERROR_OP_NOT_FOUND 100024
#define ACL_ERROR_OP_LOAD_FAILED 100025
#define ACL_ERROR_UNSUPPORTED_DATA_TYPE 100026
#define ACL_ERROR_FORMAT_NOT_MATCH 100027
#define ACL_ERROR_REPEAT_FINALIZE 100037
#define ACL_ERROR_INVALID_OPP_PATH 148049
#define ACL_ERROR_RELATIVE_RESOURCE_NOT_CLEARED 148051
#define ACL_ERROR_BAD_ALLOC 200000
#define ACL_ERROR_API_NOT_SUPPORT 200001
#define ACL_ERROR_INVALID_DEVICE 200002
#define ACL_ERROR_MEMORY_ADDRESS_UNALIGNED 200003
#define ACL_ERROR_RESOURCE_NOT_MATCH 200004
#define ACL_ERROR_INVALID_RESOURCE_HANDLE 200005
#define ACL_ERROR_FEATURE_UNSUPPORTED 200006
#define ACL_ERROR_PROF_MODULES_UNSUPPORTED 200007
#define ACL_ERROR_STORAGE_OVER_LIMIT 300000
#define ACL_ERROR_INTERNAL_ERROR 500000
#define ACL_ERROR_FAILURE 500001
#define ACL_ERROR_GE_FAILURE 500002
#define ACL_ERROR_RT_FAILURE 500003
#define ACL_ERROR_DRV_FAILURE 500004
#define ACL_ERROR_PROFILING_FAILURE 500005

typedef enum {
    ACL_DT_UNDEFINED = -1,
    ACL_FLOAT = 0,
    ACL_FLOAT16 = 1,
    ACL_INT8 = 2,
    ACL_INT32 = 3,
    ACL_UINT8 = 4,
    ACL_INT16 = 6,
    ACL_UINT16 = 7,
    ACL_UINT32 = 8,
    ACL_INT64 = 9,
    ACL_UINT64 = 10,
    ACL_DOUBLE = 11,
    ACL_BOOL = 12,
    ACL_STRING = 13,
    ACL_COMPLEX64 = 16,
    ACL_COMPLEX128 = 17,
    ACL_BF16 = 27,
    ACL_INT4 = 29,
    ACL_UINT1 = 30,
    ACL_COMPLEX32 = 33,
    ACL_HIFLOAT8 = 34,
    ACL_FLOAT8_E5M2 = 35,
    ACL_FLOAT8_E4M3FN = 36,
    ACL_FLOAT8_E8M0 = 37,
    ACL_FLOAT6_E3M2 = 38,
    ACL_FLOAT6_E2M3 = 39,
    ACL_FLOAT4_E2M1 = 40,
    ACL_FLOAT4_E1M2 = 41
} aclDataType;

typedef enum {
    ACL_FORMAT_UNDEFINED = -1,
    ACL_FORMAT_NCHW = 0,
    ACL_FORMAT_NHWC = 1,
    ACL_FORMAT_ND = 2,
    ACL_FORMAT_NC1HWC0 = 3,
    ACL_FORMAT_FRACTAL_Z = 4,
    ACL_FORMAT_NC1HWC0_C04 = 12,
    ACL_FORMAT_HWCN = 16,
    ACL_FORMAT_NDHWC = 27,
    ACL_FORMAT_FRACTAL_NZ = 29,
    ACL_FORMAT_NCDHW = 30,
    ACL_FORMAT_NDC1HWC0 = 32,
    ACL_FRACTAL_Z_3D = 33,
    ACL_FORMAT_NC = 35,
    ACL_FORMAT_NCL = 47,
    ACL_FORMAT_FRACTAL_NZ_C0_16 = 50,
    ACL_FORMAT_FRACTAL_NZ_C0_32 = 51,
    ACL_FORMAT_FRACTAL_NZ_C0_2 = 52,
    ACL_FORMAT_FRACTAL_NZ_C0_4 = 53,
    ACL_FORMAT_FRACTAL_NZ_C0_8 = 54
} aclFormat;

ACL_FUNC_VISIBILITY size_t aclDataTypeSize(aclDataType dataType);
ACL_FUNC_VISIBILITY float aclFloat16ToFloat(aclFloat16 value);
ACL_FUNC_VISIBILITY aclFloat16 aclFloatToFloat16(float value);
ACL_FUNC_VISIBILITY const char *aclrtGetSocName(void);

#ifdef __cplusplus
}
#endif

#endif
