/* An "inner" header: C operators beside C++-only helpers that are not guarded by
 * __cplusplus (a namespace, inline functions with bodies, references, default arguments, a
 * template, a std:: return type, an attribute after the declarator), an extern "C" block
 * without a guard, and an internal two-phase pair without the aclnn prefix (not an operator). */
#ifndef CORPUS_THING_INNER_H_
#define CORPUS_THING_INNER_H_
#include "aclnn/aclnn_base.h"

extern "C" {
__attribute__((visibility("default"))) aclnnStatus aclnnInnerCorpusThingGetWorkspaceSize(
    const aclTensor *query, const aclTensor *key, double scale, aclTensor *out, uint64_t *workspaceSize,
    aclOpExecutor **executor);
__attribute__((visibility("default"))) aclnnStatus aclnnInnerCorpusThing(void *workspace, uint64_t workspaceSize,
                                                                        aclOpExecutor *executor, aclrtStream stream);
}

namespace corpus {
struct ThingShape {
    int64_t batch;
    int64_t seq;
};
inline bool IsEmpty(const aclTensor *t) { return t == nullptr; }
bool CheckThingShape(const aclTensor &query, const ThingShape &shape);
}  // namespace corpus

inline int64_t CorpusThingAlign(int64_t value, int64_t align = 32)
{
    return (value + align - 1) / align * align;
}

aclnnStatus CorpusThingCheck(const aclTensor *query, int64_t headNum = 1);
std::string CorpusThingName(const aclTensor *query);
bool CorpusThingSupported(void) __attribute__((weak));
__attribute__((visibility("default"))) aclnnStatus InnerCorpusThingGetWorkspaceSize(const aclTensor *query,
    uint64_t *workspaceSize, aclOpExecutor **executor);
__attribute__((visibility("default"))) aclnnStatus InnerCorpusThing(void *workspace, uint64_t workspaceSize,
    aclOpExecutor *executor, aclrtStream stream);
aclnnStatus CorpusThingValidate(const corpus::ThingShape *shape);
template <typename T> T CorpusThingMax(T a, T b) { return a > b ? a : b; }

#endif
