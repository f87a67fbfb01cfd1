/* Uses a type that another operator header declares (and includes it). Its name sorts before
 * that header's, so reading headers in order does not declare the type first by luck. */
#ifndef CORPUS_A_ENUM_USER_H_
#define CORPUS_A_ENUM_USER_H_
#include "aclnn/aclnn_base.h"
#include "aclnn_corpus_enum.h"
#ifdef __cplusplus
extern "C" {
#endif

__attribute__((visibility("default"))) aclnnStatus aclnnCorpusModeUserGetWorkspaceSize(
    const aclTensor *self, CorpusMode mode, aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor);
__attribute__((visibility("default"))) aclnnStatus aclnnCorpusModeUser(void *workspace, uint64_t workspaceSize,
                                                                      aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif
#endif
