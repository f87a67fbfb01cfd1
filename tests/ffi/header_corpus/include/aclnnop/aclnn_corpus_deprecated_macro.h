/* A deprecation written through the runtime's macros before ACLNN_API, as the operator
 * headers of CANN 8.x write it: ACL_DEPRECATED_MESSAGE("...") (from acl/acl_base_rt.h, which
 * this header does not define) on its own line or on the prototype's line, its message holding
 * parentheses, a semicolon and "//"; the bare ACL_DEPRECATED; and a vendor's own
 * deprecation macro, which the reader knows nothing of. */
#ifndef CORPUS_DEPRECATED_MACRO_H_
#define CORPUS_DEPRECATED_MACRO_H_
#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"
#ifdef __cplusplus
extern "C" {
#endif

ACL_DEPRECATED_MESSAGE("aclnnCorpusRetiredGetWorkspaceSize will be deprecated (in 9.0); use "
                       "aclnnCorpusRetiredV2GetWorkspaceSize // instead")
ACLNN_API aclnnStatus aclnnCorpusRetiredGetWorkspaceSize(const aclTensor *self, float scale, aclTensor *out,
                                                         uint64_t *workspaceSize, aclOpExecutor **executor);

ACL_DEPRECATED_MESSAGE("aclnnCorpusRetired will be deprecated, use aclnnCorpusRetiredV2 instead") ACLNN_API
aclnnStatus aclnnCorpusRetired(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                               aclrtStream stream);

ACL_DEPRECATED ACLNN_API aclnnStatus aclnnCorpusRetiredV2GetWorkspaceSize(const aclTensor *self, float scale,
    aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor);

CORPUS_VENDOR_DEPRECATED("use aclnnCorpusRetiredV3") ACLNN_API aclnnStatus aclnnCorpusRetiredV2(
    void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif
#endif
