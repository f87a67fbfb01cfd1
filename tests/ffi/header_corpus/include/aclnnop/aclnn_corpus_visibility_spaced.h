/* A space between __attribute__ and its parentheses, and the name on the line after the type. */
#ifndef CORPUS_VISIBILITY_SPACED_H_
#define CORPUS_VISIBILITY_SPACED_H_
#include "aclnn/aclnn_base.h"
#ifdef __cplusplus
extern "C" {
#endif

__attribute__ ((visibility ("default")))
aclnnStatus
aclnnCorpusSpacedGetWorkspaceSize(const aclTensor *self, double alpha, aclTensor *out,
                                  uint64_t *workspaceSize, aclOpExecutor **executor);

__attribute__ ((visibility ("default")))
aclnnStatus
aclnnCorpusSpaced(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                  const aclrtStream stream);

#ifdef __cplusplus
}
#endif
#endif
