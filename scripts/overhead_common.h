/* What scripts/overhead.c and overhead_repeatable.c share: a status check that prints the
 * failing call with the runtime's recent error message and exits. */
#ifndef ACLNN_PY_OVERHEAD_COMMON_H
#define ACLNN_PY_OVERHEAD_COMMON_H

#include <stdio.h>
#include <stdlib.h>

#include "acl/acl.h"

#define CHECK(expr)                                                              \
    do {                                                                         \
        int status_ = (int)(expr);                                               \
        if (status_ != 0) {                                                      \
            /* Read once: the call hands the message over and clears it. */      \
            const char *message_ = aclGetRecentErrMsg();                          \
            fprintf(stderr, "%s failed: %d %s\n", #expr, status_,                \
                    message_ ? message_ : "(no message)");                       \
            exit(1);                                                             \
        }                                                                        \
    } while (0)

#endif
