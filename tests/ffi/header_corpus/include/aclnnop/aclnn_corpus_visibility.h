/* The attribute spelled out before the return type instead of ACLNN_API. */
#ifndef CORPUS_VISIBILITY_H_
#define CORPUS_VISIBILITY_H_
#include "aclnn/aclnn_base.h"
#ifdef __cplusplus
extern "C" {
#endif

__attribute__((visibility("default"))) aclnnStatus aclnnCorpusVisibleGetWorkspaceSize(
    const aclTensor *self, int64_t dim, bool keepDim, aclTensor *out, uint64_t *workspaceSize,
    aclOpExecutor **executor);

__attribute__((visibility("default"))) aclnnStatus aclnnCorpusVisible(
    void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif
#endif
