/* One prototype cffi cannot parse (a type no header declares) beside two good ones: the bad
 * one fails alone, with the reason; the others are declared. */
#ifndef CORPUS_BROKEN_H_
#define CORPUS_BROKEN_H_
#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"
#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnCorpusBeforeBrokenGetWorkspaceSize(const aclTensor *self, aclTensor *out,
                                                              uint64_t *workspaceSize, aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnCorpusBeforeBroken(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                              aclrtStream stream);

ACLNN_API aclnnStatus aclnnCorpusBrokenGetWorkspaceSize(const aclTensor *self, const aclCorpusUndeclared *plan,
                                                        aclTensor *out, uint64_t *workspaceSize,
                                                        aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnCorpusBroken(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                        aclrtStream stream);

ACLNN_API aclnnStatus aclnnCorpusAfterBrokenGetWorkspaceSize(const aclTensor *self, aclTensor *out,
                                                             uint64_t *workspaceSize, aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnCorpusAfterBroken(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                             aclrtStream stream);

#ifdef __cplusplus
}
#endif
#endif
