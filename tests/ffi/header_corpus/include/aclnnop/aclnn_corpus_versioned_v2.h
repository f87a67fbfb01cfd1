/* The next version of aclnn_corpus_versioned.h, repeating its enum. */
#ifndef CORPUS_VERSIONED_V2_H_
#define CORPUS_VERSIONED_V2_H_
#include "aclnn/aclnn_base.h"
#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    CORPUS_ACT_NONE = 0,
    CORPUS_ACT_RELU = 1,
} CorpusActType;

__attribute__((visibility("default"))) aclnnStatus aclnnCorpusVersionedV2GetWorkspaceSize(
    const aclTensorList *x, const aclTensor *groupList, int64_t actType, aclTensorList *out,
    uint64_t *workspaceSize, aclOpExecutor **executor);
__attribute__((visibility("default"))) aclnnStatus aclnnCorpusVersionedV2(void *workspace, uint64_t workspaceSize,
                                                                         aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif
#endif
