/*
 * aclnn_py: aclnnop/aclnn_util.h, which in CANN only provides ACLNN_API for the operator
 * headers beside it.
 */
#ifndef ACLNNOP_ACLNN_UTIL_H
#define ACLNNOP_ACLNN_UTIL_H

#ifndef ACLNN_API
#ifdef __GNUC__
#define ACLNN_API __attribute__((visibility("default")))
#else
#define ACLNN_API
#endif
#endif

#endif
