/* The catalog of every reason string Anvil reports (DESIGN §5). One list: the enum, the
 * formats and the test that asserts each verbatim all come from it. A reason is never written
 * anywhere else; code refers to it by its id. */
#pragma once

#include <stddef.h>

/* id, printf format. Arguments are documented beside each. */
#define POL_REASONS(X)                                                                          \
        X(KILLED_TIMEOUT, "killed: timeout")                                                    \
        X(KILLED_CPU, "killed: cpu limit")                                                      \
        X(KILLED_CANCELLED, "killed: cancelled")                                                \
        X(KILLED_STOPPING, "killed: the supervisor is stopping")                                \
        /* observed peak MB (double), cap MB (unsigned long long) */                            \
        X(KILLED_MEMORY, "killed: memory (peak %.1f MB > %llu MB cap)")                         \
        /* stream name, kept bytes (unsigned long long), written bytes (unsigned long long) */  \
        X(OUTPUT_TRUNCATED, "%s truncated: kept the first %llu of %llu bytes")                  \
        /* artifact path */                                                                     \
        X(ARTIFACT_NOT_REGULAR, "artifact '%s' is not a regular file and is not listed")        \
        /* files cap (unsigned long long) */                                                    \
        X(ARTIFACTS_CAP_REACHED, "artifacts: the files cap of %llu bytes was reached; any write past it was refused") \
        /* events dropped (unsigned long long) */                                               \
        X(EVENTS_DROPPED, "%llu more events were not recorded (limit reached)")                 \
        /* decoder error */                                                                     \
        X(RUNNER_EVENT_MALFORMED, "the runner sent a malformed event (%s); later events ignored") \
        /* layer, evidence */                                                                   \
        X(REFUSED_NOT_IN_FORCE, "refused: %s not in force (%s)")

enum pol_reason {
#define X(id, fmt) POL_##id,
        POL_REASONS(X)
#undef X
        _POL_REASON_MAX
};

/* The format of a reason, for the catalog test and for callers that format it. */
const char *pol_reason_format(enum pol_reason r);

/* Formats reason r into buf. Returns buf. */
char *pol_reason(char *buf, size_t size, enum pol_reason r, ...);
