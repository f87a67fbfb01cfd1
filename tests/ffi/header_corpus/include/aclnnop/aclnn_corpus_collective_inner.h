/* An "inner" header of a distributed (communication + compute) operator: its prototypes
 * carry the extern storage class, written before the return type or after ACLNN_API, beside
 * an enum of the header and a weak hook declared extern "C" on its own line. */
#ifndef CORPUS_COLLECTIVE_INNER_H_
#define CORPUS_COLLECTIVE_INNER_H_
#include "aclnn/aclnn_base.h"
#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    CORPUS_SERVER_AICPU = 0,
    CORPUS_SERVER_MTE = 1,
    CORPUS_SERVER_END
} CorpusServerType;

extern "C" void __attribute__((weak)) CorpusSetServerType(void *executor, CorpusServerType serverType);

extern aclnnStatus aclnnInnerCorpusAllReduceGetWorkspaceSize(
    const aclTensor *x, const char *group, int64_t rankSize, CorpusServerType serverType,
    aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor);
extern aclnnStatus
aclnnInnerCorpusAllReduce(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream);

ACLNN_API extern aclnnStatus aclnnInnerCorpusGatherGetWorkspaceSize(const aclTensor *x, const char *group,
    aclTensor *gatherOut, uint64_t *workspaceSize, aclOpExecutor **executor);
extern ACLNN_API aclnnStatus aclnnInnerCorpusGather(void *workspace, uint64_t workspaceSize,
    aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif
#endif
