/* The classic form: ACLNN_API from aclnn_util.h, C++ guards, one wrapped prototype. */
#ifndef CORPUS_PLAIN_H_
#define CORPUS_PLAIN_H_

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnCorpusPlainGetWorkspaceSize(const aclTensor *self, const aclTensor *other,
                                                       aclTensor *out, uint64_t *workspaceSize,
                                                       aclOpExecutor **executor);

ACLNN_API aclnnStatus aclnnCorpusPlain(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                       aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif  // CORPUS_PLAIN_H_
