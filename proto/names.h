/* The wire's closed vocabularies, each one list: an event's layer and kind, an error frame's
 * code, a probe's mechanism. Each list makes its enum and its name table; the wire carries
 * the names, exactly as before, and code compares the enums (proto_*_from_name), never the
 * strings. A unit test (test_proto.c) walks every entry: name -> enum -> name, no two alike.
 *
 * Forward compatibility: the decoder keeps any name it is sent (an event's layer and kind, an
 * error's code are free strings on the wire, relayed verbatim by the broker), and a name not
 * in the list is PROTO_*_UNKNOWN here: compared with nothing, equal to no known value. */
#pragma once

#include <stdbool.h>

struct proto_event;
struct proto_strv;

/* Who recorded an event: the runner's layers, then the supervisor's. */
#define PROTO_LAYERS(X)                                                                         \
        X(PRECHECK, "precheck")                                                                 \
        X(AUDIT, "audit")                                                                       \
        X(RUNNER, "runner")                                                                     \
        X(PYTHON, "python") /* a runner's layer the supervisor accepts; none sends it today */   \
        X(SECCOMP, "seccomp")                                                                   \
        X(LANDLOCK, "landlock")                                                                 \
        X(CGROUP, "cgroup")                                                                     \
        X(RLIMIT, "rlimit")                                                                     \
        X(POLICY, "policy")                                                                     \
        X(SUPERVISOR, "supervisor")                                                             \
        X(PROXY, "proxy") /* anvil-egress's (egress/) */

/* What an event says. */
#define PROTO_EVENT_KINDS(X)                                                                    \
        /* a refusal, and refusals beyond a layer's limit */                                    \
        X(BLOCKED, "blocked")                                                                   \
        X(DROPPED, "dropped")                                                                   \
        X(REFUSED, "refused")                                                                   \
        X(KILLED, "killed")                                                                     \
        /* the runner's (runner/main.c) */                                                      \
        X(IN_FORCE, "in_force")                                                                 \
        X(STARTED, "started")                                                                   \
        X(FINISHED, "finished")                                                                 \
        X(EXCEPTION, "exception")                                                               \
        X(LAYERS_DISABLED, "layers_disabled")                                                   \
        X(SOURCE_SAVED, "source_saved")                                                         \
        X(SOURCE_NOT_SAVED, "source_not_saved")                                                 \
        X(VARIABLES_BOUND, "variables_bound")                                                   \
        X(VARIABLES, "variables")       /* its payload: the variables out */                    \
        X(FINAL_ANSWER, "final_answer") /* its payload: final_answer()'s value */               \
        X(WARM_READY, "warm_ready")     /* a warm jail's runner, waiting for its run */          \
        /* the supervisor's */                                                                  \
        X(TRUNCATED, "truncated")                                                               \
        X(NOT_EXPLAINED, "not_explained")                                                       \
        X(LANDLOCK_ABSENT, "landlock_absent")                                                   \
        X(SECCOMP_VERIFIED, "seccomp_verified")                                                 \
        X(MALFORMED_EVENT, "malformed_event")                                                   \
        X(TMP_FULL, "tmp_full")                                                                 \
        X(TMP_ENTRIES_FULL, "tmp_entries_full")                                                 \
        X(EVENTS_DROPPED, "events_dropped")                                                     \
        X(ARTIFACT_SKIPPED, "artifact_skipped")                                                 \
        X(ARTIFACTS_FULL, "artifacts_full")                                                     \
        X(ARTIFACTS_ENTRIES_FULL, "artifacts_entries_full")                                     \
        X(ARTIFACTS_NOT_LISTED, "artifacts_not_listed")                                         \
        X(ARTIFACTS_SKIPPED, "artifacts_skipped")                                               \
        X(CAPABILITY_GRANTED, "capability_granted")                                             \
        X(CAPABILITY_DENIED, "capability_denied")                                               \
        X(ALLOWED, "allowed") /* anvil-egress's: a connection made, with its bytes */           \
        X(WARM, "warm") /* the run took a warm jail (supervisor/warm.c) */                      \
        X(COLD, "cold") /* warm jails are on, and this run got a cold one: why */

/* What a task event says (task_event.kind: broker/agent.c's report, and the trace's end). */
#define PROTO_TASK_EVENT_KINDS(X)                                                               \
        X(STARTED, "started")                                                                   \
        X(DESCRIBE, "describe")                                                                 \
        X(DESCRIBE_RESULT, "describe_result")                                                   \
        X(PROMPT, "prompt")                                                                     \
        X(MODEL_REQUEST, "model_request")                                                       \
        X(MODEL_DELTA, "model_delta") /* a streamed reply as it grows: sent, not in the trace */ \
        X(MODEL_REPLY, "model_reply")                                                           \
        X(MODEL_ERROR, "model_error")                                                           \
        X(NO_CODE, "no_code")                                                                   \
        X(CODE, "code")                                                                         \
        X(CAPABILITIES, "capabilities")                                                         \
        X(RUN_EVENT, "run_event")                                                               \
        X(RUN_STDOUT, "run_stdout")                                                             \
        X(RUN_STDERR, "run_stderr")                                                             \
        X(RUN_ERROR, "run_error")                                                               \
        X(RUN_RESULT, "run_result")                                                             \
        X(OBSERVATION, "observation")                                                           \
        X(FINAL_ANSWER, "final_answer")                                                         \
        X(TIME_BUDGET, "time_budget")                                                           \
        X(CANCELLED, "cancelled")                                                               \
        X(TRACE_END, "trace_end")

/* An error frame's code (DESIGN §4): what the client may do about it. */
#define PROTO_ERROR_CODES(X)                                                                    \
        X(BAD_FRAME, "bad_frame")                                                               \
        X(BAD_MESSAGE, "bad_message")                                                           \
        X(BAD_REQUEST, "bad_request")                                                           \
        X(FORBIDDEN, "forbidden")                                                               \
        X(BUSY, "busy")                                                                         \
        X(NOT_FOUND, "not_found")                                                               \
        X(SANDBOX_FAILED, "sandbox_failed")                                                     \
        X(UNAVAILABLE, "unavailable")                                                           \
        X(INTERNAL, "internal")

/* A probe's mechanisms (probe_result.mechanisms[].name), in the probe's order. */
#define PROTO_MECHANISMS(X)                                                                     \
        X(INTERPRETER, "interpreter")                                                           \
        X(NAMESPACES, "namespaces")                                                             \
        X(SECCOMP, "seccomp")                                                                   \
        X(LANDLOCK, "landlock")                                                                 \
        X(KERNEL_AUDIT, "kernel audit")                                                         \
        X(CGROUP, "cgroup")                                                                     \
        X(RLIMITS, "rlimits")                                                                   \
        X(NETWORK_ISOLATION, "network isolation")                                               \
        X(FILESYSTEM_ISOLATION, "filesystem isolation")

enum proto_layer {
        PROTO_LAYER_UNKNOWN = 0,
#define X(id, name) PROTO_LAYER_##id,
        PROTO_LAYERS(X)
#undef X
        _PROTO_LAYER_MAX
};
enum proto_event_kind {
        PROTO_KIND_UNKNOWN = 0,
#define X(id, name) PROTO_KIND_##id,
        PROTO_EVENT_KINDS(X)
#undef X
        _PROTO_KIND_MAX
};
enum proto_task_kind {
        PROTO_TASK_UNKNOWN = 0,
#define X(id, name) PROTO_TASK_##id,
        PROTO_TASK_EVENT_KINDS(X)
#undef X
        _PROTO_TASK_MAX
};
enum proto_error_code {
        PROTO_ERR_UNKNOWN = 0,
#define X(id, name) PROTO_ERR_##id,
        PROTO_ERROR_CODES(X)
#undef X
        _PROTO_ERR_MAX
};
enum proto_mech {
        PROTO_MECH_UNKNOWN = 0,
#define X(id, name) PROTO_MECH_##id,
        PROTO_MECHANISMS(X)
#undef X
        _PROTO_MECH_MAX
};

/* The name on the wire ("unknown" for UNKNOWN or a value out of range). */
const char *proto_layer_name(enum proto_layer v);
const char *proto_kind_name(enum proto_event_kind v);
const char *proto_task_kind_name(enum proto_task_kind v);
const char *proto_error_code_name(enum proto_error_code v);
const char *proto_mech_name(enum proto_mech v);
/* The value of a name; UNKNOWN for NULL or a name not in the list. */
enum proto_layer proto_layer_from_name(const char *s);
enum proto_event_kind proto_kind_from_name(const char *s);
enum proto_task_kind proto_task_kind_from_name(const char *s);
enum proto_error_code proto_error_code_from_name(const char *s);
enum proto_mech proto_mech_from_name(const char *s);

/* Whether event e is of layer l and kind k (PROTO_KIND_UNKNOWN: any kind). */
bool proto_event_is(const struct proto_event *e, enum proto_layer l, enum proto_event_kind k);

/* A list of mechanisms seen in force (isolation.mechanisms, a jail's report), whose entries
 * are texts ("netns", "landlock ABI 6", "cgroup v2 (memory, pids)"): whether it holds the one
 * named exactly name, and the first entry that begins with prefix (NULL if none). */
bool proto_mechanisms_include(const struct proto_strv *v, const char *name);
const char *proto_mechanisms_find(const struct proto_strv *v, const char *prefix);
