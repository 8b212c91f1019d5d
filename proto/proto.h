/* proto/: the wire, shared by every program: framing, the schema-driven codec, the messages'
 * tables, the names of layers, kinds, codes and mechanisms (names.h), JSON rendering, the
 * bounded libuv stream. It runs in the root supervisor on clients' and runners' bytes, in the
 * unprivileged broker and anvilctl, and in the untrusted runner: every decoder is strict and
 * bounded, and fuzzed (make fuzz). */
/* The wire protocol (DESIGN §3): a frame is a 4-byte big-endian length, then one msgpack map
 * with string keys, at most PROTO_FRAME_MAX bytes. Every map has "v" (PROTO_VERSION) and
 * "type". Decoding is strict (see schema.h); an error names the field.
 *
 * run_spec and runner_event are internal: supervisor -> anvil-py on stdin, and anvil-py ->
 * supervisor on fd 3. They use the same framing and the same strict decoder, because what
 * comes back out of the jail is as untrusted as what comes in from a client. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/err.h"
#include "proto/schema.h"

#define PROTO_VERSION 1
#define PROTO_FRAME_MAX (16u * 1024 * 1024)
#define PROTO_VALUES_MAX (1u << 18) /* bounds msgpack-c's allocation per frame to a few MB */
#define PROTO_DEPTH_MAX 8           /* deepest legitimate message (task_result) has 6 levels */

#define PROTO_SOURCE_MAX (1024u * 1024)
#define PROTO_VARIABLES_MAX (1024u * 1024)   /* a JSON object as text, in and out */
#define PROTO_VARIABLES_DROPPED_MAX 100      /* variables not kept, listed (all are counted) */
#define PROTO_FINAL_ANSWER_MAX (256u * 1024) /* a JSON value as text */
/* A runner_event frame holds an event and at most the variables with their dropped list, or
 * a final answer: the supervisor reads frames of fd 3 up to this size. */
#define PROTO_RUNNER_FRAME_MAX (PROTO_VARIABLES_MAX + PROTO_FINAL_ANSWER_MAX + 256u * 1024)
#define PROTO_INPUTS_MAX 32
#define PROTO_NAME_MAX 128
#define PROTO_ID_MAX 64
#define PROTO_OUTPUT_MAX (2u * 1024 * 1024) /* per stream, after the run's own cap */
#define PROTO_EVENTS_MAX 256
#define PROTO_ARTIFACTS_MAX 1000
#define PROTO_PATH_MAX 4096
#define PROTO_CAPS_MAX 16
#define PROTO_REASON_MAX 256 /* an event's reason, a dropped variable's */
/* The tool's arguments (run_request.args, run_spec.args): each a string of at most
 * PROTO_PATH_MAX bytes, as every string of a list; the count decoded at most this, and
 * policy/limits.h's POL_ARGS_MAX and POL_ARGS_BYTES_MAX the bounds a request is held to. */
#define PROTO_ARGS_MAX 1024
/* run_output: at most this many bytes of what the tool wrote, a frame; as text, each invalid
 * byte becomes U+FFFD (3 bytes). */
#define PROTO_OUTPUT_CHUNK_MAX (64u * 1024)
#define PROTO_OUTPUT_CHUNK_TEXT_MAX (3 * PROTO_OUTPUT_CHUNK_MAX)
/* An event's other texts: a path fits in op, a traceback in traceback. A sender cuts what is
 * longer (the runner: runner/events.c); the decoder refuses it. */
#define PROTO_EV_OP_MAX 1024
#define PROTO_EV_MESSAGE_MAX 4096
#define PROTO_EV_TRACEBACK_MAX 16384

/* One list, from which the type enum, the type names and the schema table are made. */
#define PROTO_MESSAGES(X)                     \
        X(HELLO, hello)                       \
        X(RUN_REQUEST, run_request)           \
        X(RUN_EVENT, run_event)               \
        X(RUN_RESULT, run_result)             \
        X(PROBE_REQUEST, probe_request)       \
        X(PROBE_RESULT, probe_result)         \
        X(TASK_SUBMIT, task_submit)           \
        X(TASK_EVENT, task_event)             \
        X(TASK_RESULT, task_result)           \
        X(TRACE_REQUEST, trace_request)       \
        X(ARTIFACT_REQUEST, artifact_request) \
        X(ARTIFACT_DATA, artifact_data)       \
        X(ARTIFACT_END, artifact_end)         \
        X(LIST_REQUEST, list_request)         \
        X(LIST_RESULT, list_result)           \
        X(SHOW_REQUEST, show_request)         \
        X(CANCEL, cancel)                     \
        X(ERROR, error)                       \
        X(RUN_SPEC, run_spec)                 \
        X(RUNNER_EVENT, runner_event)         \
        X(RUN_OUTPUT, run_output)             \
        X(UI_LOGIN, ui_login)                 \
        X(UI_LINK, ui_link)

enum proto_type {
#define X(up, low) PROTO_##up,
        PROTO_MESSAGES(X)
#undef X
        _PROTO_TYPE_MAX
};

struct proto_hello {
        char *role;     /* "client", "broker" or "supervisor" */
        char *software; /* optional, e.g. "anvilctl 0.1" */
};

/* An input is its bytes (data) or a file descriptor that came with the frame (fd: an index
 * into the fds received with the frame's first bytes, SCM_RIGHTS; docs/protocol.md), never
 * both. The name: letters, digits, '.', '_', '-' and inner spaces, no leading dot (checked by
 * receivers, pol_inputs_check). */
struct proto_input {
        char *name;
        struct proto_bytes data; /* data == NULL: not given (goes out as nil) */
        struct proto_opt_int fd;
};

/* A field absent (or nil) means "the server's default"; receivers check the ranges, in which
 * 0 never is (policy/limits.c). In memory 0 stands for unset and goes out as nil; a decoded
 * struct says in `given` which fields the sender wrote, so that an explicit 0 is refused
 * rather than taken for the default. */
enum proto_limit_field {
        PROTO_LIMIT_WALL_S,
        PROTO_LIMIT_CPU_S,
        PROTO_LIMIT_MEMORY_MB,
        PROTO_LIMIT_OUTPUT_BYTES,
        PROTO_LIMIT_FILES_BYTES,
        PROTO_LIMIT_PIDS,
        PROTO_LIMIT_CPU_QUOTA_PCT,
};

struct proto_limits {
        uint64_t wall_s;
        uint64_t cpu_s;
        uint64_t memory_mb;
        uint64_t output_bytes; /* per stream */
        uint64_t files_bytes;  /* total size of artifacts/ */
        uint64_t pids;
        /* Only in a run_result's blast_radius: the CPU quota in percent of one CPU, as read back
         * from the run's cgroup; null when none was in force. A request may not set it. */
        struct proto_opt_int cpu_quota_pct;
        uint64_t given; /* decoded: bit (1 << enum proto_limit_field) for each field present, not nil */
};

struct proto_run_request {
        char *request_id; /* optional, echoed in run_event/run_result/error */
        char *source;
        struct proto_array inputs; /* of struct proto_input */
        struct proto_limits limits;
        struct proto_strv capabilities_requested;
        struct proto_strv capabilities_approved;
        char *variables;        /* optional JSON text, for agent steps */
        bool save_source;       /* an agent step: the source saved as artifacts/tool.py (POL_SOURCE_ARTIFACT)
                           * when the tool ends well having written an artifact */
        char *tool_name;        /* optional, the client's name for the tool ("report.py"): the broker
                           * keeps it for `anvilctl runs` and does not pass it on */
        struct proto_strv args; /* the tool's sys.argv[1:] (pol_args_check) */
        /* The client follows the run: what the tool writes comes as run_output frames, as it
         * is written, besides the result's copy (run.c, "output as it comes"). */
        bool stream_output;
        /* The run's way out (issue 17): the index, among the fds that came with the frame, of
         * an O_PATH fd of the run's anvil-egress socket, as an input's fd is an index. Only
         * with `network` approved; the supervisor binds it into the jail (docs/egress.md). */
        struct proto_opt_int egress;
        /* The run's Python layers off (no pre-check, no audit hook), to see the kernel layers
         * alone, as the probe does: anvilctl verify's checks of them. The run says so (event
         * layers_disabled); the kernel layers are the boundary either way, so a client gives
         * up only its own run's explanations. A cold jail: warm ones are built with them on. */
        bool python_layers_off;
};

struct proto_event {
        uint64_t t_ms; /* since the run started */
        char *layer;   /* the runner's: precheck|audit|runner; the supervisor's:
                        * seccomp|landlock|cgroup|rlimit|policy|supervisor */
        char *kind;
        char *op;
        char *reason;
        char *message;
        struct proto_opt_int line;
        struct proto_opt_int col; /* 1-based, with line, for pre-check findings */
        char *traceback;
};

struct proto_run_event {
        char *request_id;
        char *run_id;
        struct proto_event event;
};

/* A piece of what the tool wrote, as it came (run_request.stream_output): the next bytes of
 * the result's stdout or stderr, within the run's output cap, made valid UTF-8. */
struct proto_run_output {
        char *request_id;
        char *run_id;
        char *stream; /* "stdout" or "stderr" */
        char *text;
};

struct proto_isolation {
        char *tier;
        struct proto_strv mechanisms; /* only what was observed in force for this run */
};

struct proto_artifact {
        char *path; /* relative to artifacts_dir */
        uint64_t bytes;
        char *sha256; /* lowercase hex */
};

struct proto_capabilities {
        struct proto_strv requested;
        struct proto_strv granted;
        struct proto_strv denied;
};

struct proto_blast_radius {
        struct proto_strv read;  /* paths inside the jail the tool could read */
        struct proto_strv write; /* paths inside the jail the tool could write */
        char *network;
        struct proto_strv hosts; /* network granted: its hosts and ranges (the broker's) */
        char *processes;
        struct proto_limits limits; /* as applied to this run, beside the observed peaks */
};

/* What the kernel counted in the run's cgroup, read at its end. A figure this kernel does not
 * offer is null. */
struct proto_cgroup_figures {
        char *version;                          /* "v2" or "v1" */
        struct proto_opt_int memory_peak_bytes; /* v2 memory.peak, v1 memory.max_usage_in_bytes */
        struct proto_opt_int oom_kills;         /* kills by the kernel's OOM killer at the hard limit */
        struct proto_opt_int pids_peak;         /* processes and threads at the peak */
        struct proto_opt_int forks_refused;     /* pids.events max: forks refused at the pids limit */
        struct proto_opt_int cpu_throttled_ms;  /* time held back by the CPU quota */
};

/* A variable the tool left that the next step will not have, and why (DESIGN §8). */
struct proto_variable_dropped {
        char *name;   /* cut at PROTO_NAME_MAX bytes */
        char *type;   /* the value's type, e.g. "DataFrame", "module" */
        char *reason; /* read after the name: "is not JSON-serialisable" */
};

/* The supervisor's facts about a run's blast radius (internal: supervisor -> broker only). The
 * supervisor sends blast_radius.read with the jail's paths alone, and these; the broker
 * renders the rest of read, write, network and processes from them and the limits
 * (broker/render.c), then drops them. Prose is not the root daemon's work. */
struct proto_blast_facts {
        bool direct;           /* on the host's paths: no namespaces, no tmpfs */
        char *workdir;         /* where inputs/ and artifacts/ are, as the tool sees it */
        char *tmp;             /* its /tmp, as the tool sees it */
        uint64_t inputs;       /* regular files in inputs/ */
        uint64_t inputs_bytes; /* their size */
        uint64_t landlock_abi; /* the ABI in force (applied and seen enforced), 0: none */
        bool seccomp_verified; /* verified from outside for this run (S6a) */
        bool netns, pidns;     /* namespaces of its own, verified */
        bool pids_unbounded;   /* neither a pids cgroup nor RLIMIT_NPROC */
        bool egress;           /* network granted: the egress socket bound in, the relay (docs/egress.md) */
};

/* A connection anvil-egress made for the run (its "allowed" event), as the broker heard it. */
struct proto_connection {
        char *host;
        uint64_t port;
        char *address;
        uint64_t bytes_out, bytes_in;
};
#define PROTO_CONNECTIONS_MAX 256

struct proto_run_result {
        char *request_id;
        char *run_id;
        char *status; /* ok|error|blocked|killed */
        struct proto_opt_int exit_code;
        char *signal; /* e.g. "SIGSEGV" when the tool died of a signal */
        char *killed; /* e.g. "killed: timeout", NULL unless killed */
        struct proto_isolation isolation;
        struct proto_array events; /* of struct proto_event */
        char *out_text;            /* "stdout" */
        bool stdout_truncated;
        uint64_t stdout_bytes; /* everything the tool wrote, kept or not */
        char *err_text;        /* "stderr" */
        bool stderr_truncated;
        uint64_t stderr_bytes;
        char *artifacts_dir;
        struct proto_array artifacts; /* of struct proto_artifact */
        double peak_rss_mb;
        uint64_t cpu_ms;
        uint64_t wall_ms;
        struct proto_capabilities capabilities;
        struct proto_blast_radius blast_radius;
        struct proto_cgroup_figures *cgroup; /* NULL: the run had no cgroup */
        /* What the tool left for the next step of an agent (DESIGN §8), from the runner's last
         * "variables" event: a JSON object as text, and what was not kept; NULL and none when
         * the tool did not reach its end (refused before it ran, killed). The tool's word, like
         * every event after "started": the next run decodes it again, strictly, in its jail. */
        char *variables;
        struct proto_array variables_dropped; /* of struct proto_variable_dropped */
        struct proto_array connections;       /* of struct proto_connection: the broker's, never the
                                         * supervisor's (dropped if it sends one) */
        /* The value of the tool's last final_answer(value), as JSON text; NULL if it gave none
         * or was killed. */
        char *final_answer;
        /* The broker's word, never the supervisor's (the broker drops one it is sent): set on a
         * result it relays but could not store in DIR/results, saying why (POL_NOT_STORED). */
        char *not_stored;
        struct proto_blast_facts *blast_facts; /* internal: the broker renders and drops it */
};

struct proto_probe_request {
        char *request_id;
};

struct proto_mechanism {
        char *name;
        bool available;
        bool probed;
        bool in_force;
        char *evidence;
};

/* What the probe found, as facts (internal: supervisor -> broker only): the supervisor decides
 * each mechanism's available/probed/in_force and the tier, and sends each evidence empty; the
 * broker writes the evidence from these (broker/render.c), then drops them. The outcomes of
 * the probe tool's attempts are its own words ("ok", an errno name, "" for no answer), read
 * from where the tool ran: untrusted, bounded, only formatted in. */
struct proto_probe_facts {
        char *start_failure; /* the probe could not be started: why; nothing else is set */
        bool jail_ran;       /* its jail ran it to a result */
        char *jail_failure;  /* else why not */
        bool interp;         /* it reported */
        bool direct;
        char *no_userns; /* direct: why no user namespace */
        char *jail_write, *jail_read, *jail_unlisted, *jail_connect;
        char *control_write, *control_read, *control_unlisted, *control_connect;
        uint64_t port;
        uint64_t accepted_jail, accepted_control;                        /* connections the listener counted */
        char *jail_target;                                               /* where the write outside was tried */
        char *canary;                                                    /* the host file the read was tried on */
        char *seccomp_refusal;                                           /* the seccomp event's message, "" none */
        char *landlock_refusal;                                          /* the Landlock denial explained, "" none */
        char *seccomp_mech, *landlock_mech, *cgroup_mech, *rlimits_mech; /* as the jail reported
                                                                              each in force, "" */
        bool seccomp_loaded;                                             /* the filter was loaded */
        uint64_t kernel_landlock_abi;
        char *audit_off;          /* why Landlock's denials are not explained, or NULL */
        char *cgroup_description; /* the supervisor's cgroup mode, said */
};

struct proto_probe_result {
        char *request_id;
        char *tier;
        struct proto_array mechanisms;   /* of struct proto_mechanism */
        struct proto_probe_facts *facts; /* internal: the broker renders and drops it */
};

struct proto_model {
        char *url;
        char *name;
};

struct proto_task_submit {
        char *request_id;
        char *task;
        struct proto_array inputs; /* of struct proto_input */
        struct proto_strv capabilities_approved;
        uint64_t max_steps;        /* 0: the broker's default */
        uint64_t time_budget_s;    /* 0: the broker's default */
        struct proto_model *model; /* optional */
};

struct proto_task_event {
        char *task_id;
        uint64_t step;
        char *kind;
        char *message;
        char *code;
        struct proto_event *event; /* optional */
};

struct proto_task_step {
        char *code;
        struct proto_run_result run;
};

struct proto_deliverable {
        char *run_id;
        char *source;
        struct proto_array artifacts; /* of struct proto_artifact */
};

struct proto_task_result {
        char *task_id;
        char *status; /* ok|failed|cancelled|interrupted */
        char *error;
        struct proto_array steps; /* of struct proto_task_step */
        struct proto_deliverable *deliverable;
        char *not_stored;       /* sent, but not stored in DIR/tasks: why (POL_NOT_STORED) */
        char *trace_incomplete; /* lines of its trace were not written (POL_TRACE_INCOMPLETE) */
};

/* anvilctl trace: the broker replays a stored task's trace as task_event frames, then its
 * task_result. */
struct proto_trace_request {
        char *request_id;
        char *task_id;
};

/* An artifact of a stored run (id: a run id) or of a task's deliverable (id: a task id),
 * copied out to a client allowed to see it (the broker's, broker/serve.c): answered by
 * artifact_data frames of at most PROTO_CHUNK_MAX bytes each, then an artifact_end with the
 * size and SHA-256 the broker counted over what it sent; or an error frame. */
#define PROTO_CHUNK_MAX (256u * 1024)
struct proto_artifact_request {
        char *request_id;
        char *id;
        char *path; /* as the result lists it, relative to its artifacts_dir */
};

struct proto_artifact_data {
        char *request_id;
        struct proto_bytes data;
};

struct proto_artifact_end {
        char *request_id;
        char *path;
        uint64_t bytes;
        char *sha256;
};

/* The caller's stored runs or tasks (root: everyone's), newest first. */
#define PROTO_LIST_MAX 1000
struct proto_list_request {
        char *request_id;
        char *kind;     /* "runs" or "tasks" */
        uint64_t limit; /* at most this many, 0: PROTO_LIST_MAX */
};

struct proto_list_entry {
        char *id;
        char *status;
        char *time;               /* when it was stored, UTC, ISO 8601 */
        char *tool;               /* the tool's name, a task's first words; "" unknown */
        struct proto_opt_int uid; /* its owner; null: stored before owners were (root's only) */
};

struct proto_list_result {
        char *request_id;
        char *kind;
        struct proto_array entries; /* of struct proto_list_entry */
};

/* A stored run (answered by its run_result) or task (its task_result). */
struct proto_show_request {
        char *request_id;
        char *id;
};

/* anvilctl ui: a one-time login link to the broker's web UI for the caller's uid (the
 * broker's, broker/http_auth.c); inputs names the fds that come with it (--inputs DIR),
 * answered by ui_link or an error. */
struct proto_ui_login {
        char *request_id;
        struct proto_strv inputs;
};

struct proto_ui_link {
        char *request_id;
        char *url;
        uint64_t expires_s;
};

struct proto_cancel {
        char *request_id;
        char *run_id;
        char *task_id;
};

struct proto_error {
        char *code; /* bad_frame|bad_message|forbidden|busy|bad_request|sandbox_failed|internal */
        char *message;
        char *field; /* the offending field's path, when one is to blame */
        char *request_id;
};

struct proto_run_spec {
        char *source;
        char *variables;
        char *workdir;                 /* shown as "./" in messages */
        struct proto_strv read_roots;  /* where a tool's data may be read */
        struct proto_strv write_roots; /* and written */
        char *scratch;                 /* the private /tmp: read and written besides */
        struct proto_strv capabilities_granted;
        char *platform_processor;   /* `uname -p`, run outside the jail (pre-warm) */
        char *platform_file;        /* `file -b` of the interpreter, likewise */
        bool test_no_python_layers; /* no pre-check, no audit hook: test builds, and the
                                                 supervisor's own probe runs */
        char *test_break;           /* test builds: a kernel layer the runner leaves out */
        bool expect_seccomp;        /* the tier promises it: refuse the run without it */
        bool direct;                /* no namespaces (the landlock+seccomp rung): the
                                                 runner does not look for them */
        uint64_t landlock_abi;      /* Landlock ABI the jail is restricted with, 0: none;
                                                 the runner checks it is enforced (R6) */
        bool save_source;           /* run_request.save_source: the runner writes the
                                                 source to write_roots[0]/tool.py (R9b) */
        struct proto_strv args;     /* run_request.args: the tool's sys.argv[1:] */
        bool warm;                  /* a warm jail's first half: after R6 the runner
                                                 imports the data stack and waits for a second
                                                 run_spec, of which it takes only source,
                                                 variables, args and save_source */
};

struct proto_runner_event {
        struct proto_event event;
        /* Payloads, each only on the event of its kind ("variables", "final_answer"; layer
         * runner), and only after "started": the supervisor refuses them anywhere else. */
        char *variables;                      /* the JSON object the tool left */
        struct proto_array variables_dropped; /* of struct proto_variable_dropped */
        char *final_answer;                   /* the value's JSON */
};

struct proto_msg {
        enum proto_type type;
        union {
#define X(up, low) struct proto_##low low;
                PROTO_MESSAGES(X)
#undef X
        } u;
};

extern const struct proto_schema *const proto_schemas[_PROTO_TYPE_MAX];
extern const struct proto_schema proto_event_schema, proto_run_result_schema, proto_variable_dropped_schema;
/* The supervisor's facts (internal fields), for broker/render.c to free what it rendered. */
extern const struct proto_schema proto_blast_facts_schema, proto_probe_facts_schema;

const char *proto_type_name(enum proto_type t);

/* Decodes one frame's payload (without the 4-byte length). On error, err's message starts
 * with the field's path: "run_request.limits.wall_s: expected an unsigned integer, got a
 * string"; proto_err_field() extracts it. */
int proto_decode(const uint8_t *buf, size_t len, struct proto_msg *out, struct anvil_err *err);

/* Encodes a whole frame, 4-byte length included, into a malloc'd buffer. */
int proto_encode(const struct proto_msg *m, uint8_t **out, size_t *out_len, struct anvil_err *err);

void proto_msg_free(struct proto_msg *m);

/* An error frame's message, its strings borrowed (not to be freed): a field of "" is none.
 * The one builder the supervisor, the broker and proto_encode_error share. */
void proto_error_msg(struct proto_msg *m, const char *code, const char *message, const char *field,
                     const char *request_id);

/* Builds and encodes an error frame. */
int proto_encode_error(const char *code, const char *message, const char *field, const char *request_id, uint8_t **out,
                       size_t *out_len);

/* The field path an error message starts with ("run_request.limits.wall_s"), copied into
 * buf; empty when the error is about the frame as a whole. */
void proto_err_field(const struct anvil_err *err, char *buf, size_t size);

/* Incremental frame reader: feed bytes as they arrive, take whole frames out. */
struct proto_reader {
        uint8_t *buf;
        size_t len, cap;
        size_t pending; /* bytes of the frame last handed out, dropped at the next call */
        size_t max;     /* largest frame accepted, PROTO_FRAME_MAX unless lowered */
};

void proto_reader_init(struct proto_reader *r, size_t max);
void proto_reader_free(struct proto_reader *r);
int proto_reader_feed(struct proto_reader *r, const void *data, size_t n, struct anvil_err *err);
/* 1: payload and len describe the next frame, valid until the next call; 0: need more bytes;
 * <0: the stream is corrupt (a length over the limit, or zero). */
int proto_reader_next(struct proto_reader *r, const uint8_t **payload, size_t *len, struct anvil_err *err);
/* True if bytes of an unfinished frame are buffered (a truncated frame at end of stream). */
bool proto_reader_partial(const struct proto_reader *r);

/* Blocking helpers for simple clients and the runner: one whole frame. */
int proto_write_msg(int fd, const struct proto_msg *m, struct anvil_err *err);
/* Returns 1 with *m filled, 0 at a clean end of stream, <0 on error. */
int proto_read_msg(int fd, struct proto_reader *r, struct proto_msg *m, struct anvil_err *err);

/* Helpers to build messages. */
int proto_strv_push(struct proto_strv *v, const char *s);
void proto_strv_free(struct proto_strv *v);
void *proto_array_push(struct proto_array *a, size_t item_size);
char *proto_strdup(const char *s);
