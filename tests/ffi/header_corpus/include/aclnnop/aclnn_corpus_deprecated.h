/* A deprecation notice: visibility and deprecated in one attribute over several lines, with a
 * message of concatenated strings holding parentheses, semicolons, braces, "//" and a quote. */
#ifndef CORPUS_DEPRECATED_H_
#define CORPUS_DEPRECATED_H_
#include "aclnn/aclnn_base.h"
#ifdef __cplusplus
extern "C" {
#endif

__attribute__((
    visibility("default"),
    deprecated(
        "aclnnCorpusOldGetWorkspaceSize (the first phase) will be removed; "
        "use aclnnCorpusNewGetWorkspaceSize() instead {see https://example.invalid/docs} "
        "and say \"thanks\"."))) aclnnStatus
aclnnCorpusOldGetWorkspaceSize(const aclTensor *self, const aclIntArray *dims, aclTensor *out,
                               uint64_t *workspaceSize, aclOpExecutor **executor);

__attribute__((visibility("default"),
               deprecated("aclnnCorpusOld (the second phase) will be removed; use aclnnCorpusNew()"))) aclnnStatus
aclnnCorpusOld(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream);

__attribute__((visibility("default"))) aclnnStatus aclnnCorpusNewGetWorkspaceSize(
    const aclTensor *self, const aclIntArray *dims, aclTensor *out, uint64_t *workspaceSize,
    aclOpExecutor **executor);
__attribute__((visibility("default"))) aclnnStatus aclnnCorpusNew(
    void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif
#endif
