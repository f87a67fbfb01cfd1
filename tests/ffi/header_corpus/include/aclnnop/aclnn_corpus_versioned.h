/* The same anonymous enum typedef as aclnn_corpus_versioned_v2.h (each version of an operator
 * repeats it): declaring both headers must not collide. */
#ifndef CORPUS_VERSIONED_H_
#define CORPUS_VERSIONED_H_
#include "aclnn/aclnn_base.h"
#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    CORPUS_ACT_NONE = 0,
    CORPUS_ACT_RELU = 1,
} CorpusActType;

__attribute__((visibility("default"))) aclnnStatus aclnnCorpusVersionedGetWorkspaceSize(
    const aclTensorList *x, int64_t actType, aclTensorList *out, uint64_t *workspaceSize, aclOpExecutor **executor);
__attribute__((visibility("default"))) aclnnStatus aclnnCorpusVersioned(void *workspace, uint64_t workspaceSize,
                                                                       aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif
#endif
