/* Types the operator header declares itself: an anonymous enum typedef (long literals, a
 * trailing comma), a tagged enum, an opaque struct and a callback type. */
#ifndef CORPUS_ENUM_H_
#define CORPUS_ENUM_H_
#include "aclnn/aclnn_base.h"
#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    CORPUS_MODE_SUM = 0L,
    CORPUS_MODE_MEAN = 1L,
    CORPUS_MODE_MAX = 2L,
} CorpusMode;

enum CorpusLayout {
    CORPUS_LAYOUT_BSH = 0,
    CORPUS_LAYOUT_BNSD = 1
};

typedef struct CorpusTiling CorpusTiling;
typedef void (*CorpusCallback)(void *userData, int32_t status);

__attribute__((visibility("default"))) aclnnStatus aclnnCorpusModeGetWorkspaceSize(
    const aclTensor *self, CorpusMode mode, enum CorpusLayout layout, const CorpusTiling *tiling,
    CorpusCallback done, aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor);

__attribute__((visibility("default"))) aclnnStatus aclnnCorpusMode(void *workspace, uint64_t workspaceSize,
                                                                  aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif
#endif
