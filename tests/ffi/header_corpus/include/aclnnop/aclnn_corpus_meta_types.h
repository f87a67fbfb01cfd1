/* Every meta type an operator takes: tensor and scalar lists, int/float/bool arrays, scalars,
 * a data type, a const stream. */
#ifndef CORPUS_META_TYPES_H_
#define CORPUS_META_TYPES_H_
#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"
#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnCorpusListsGetWorkspaceSize(
    const aclTensorList *tensors,          // one or more inputs
    const aclScalarList *scalars,          /* one per input */
    const aclIntArray *sizes,
    const aclFloatArray *weights,
    const aclBoolArray *mask,
    const aclScalar *alpha,
    aclDataType outDtype,
    float epsilon,
    const char *reduction,
    aclTensorList *out,
    uint64_t *workspaceSize,
    aclOpExecutor **executor);

ACLNN_API aclnnStatus aclnnCorpusLists(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                       const aclrtStream stream);

#ifdef __cplusplus
}
#endif
#endif
