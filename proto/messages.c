/* The schema of every message: one table each, from which the codec and the JSON renderer work.
 * Field names here are the wire names and the JSON names (DESIGN §4), exactly. */
#include <stddef.h>

#include "proto/proto.h"

#define F(st, member, name, type, req, max, sub)                       \
        {                                                              \
                name, type, offsetof(st, member), req, max, sub, false \
        }
#define SCHEMA(var, st, name, fields) \
        const struct proto_schema var = { name, sizeof(st), fields, sizeof(fields) / sizeof(fields[0]), 0 }
/* A struct that records which of its fields were given (proto_schema.given_offset). */
#define SCHEMA_GIVEN(var, st, name, fields, given)                                                      \
        const struct proto_schema var = { name, sizeof(st), fields, sizeof(fields) / sizeof(fields[0]), \
                                          offsetof(st, given) }
/* A field of the supervisor's facts for the broker (proto_field.internal). */
#define FI(st, member, name, sub)                                              \
        {                                                                      \
                name, PF_OPT_STRUCT, offsetof(st, member), false, 0, sub, true \
        }
#define REQ true
#define OPT false

/* Sizes of the text fields of an event (proto.h). */
#define EV_SHORT PROTO_REASON_MAX
#define EV_OP PROTO_EV_OP_MAX
#define EV_MESSAGE PROTO_EV_MESSAGE_MAX
#define EV_TRACEBACK PROTO_EV_TRACEBACK_MAX

static const struct proto_field hello_f[] = {
        F(struct proto_hello, role, "role", PF_STR, REQ, 32, NULL),
        F(struct proto_hello, software, "software", PF_STR, OPT, 128, NULL),
};
static SCHEMA(hello_s, struct proto_hello, "hello", hello_f);

static const struct proto_field input_f[] = {
        F(struct proto_input, name, "name", PF_STR, REQ, PROTO_NAME_MAX, NULL),
        F(struct proto_input, data, "data", PF_BIN, OPT, PROTO_FRAME_MAX, NULL),
        F(struct proto_input, fd, "fd", PF_OPT_INT, OPT, 0, NULL),
};
static SCHEMA(input_s, struct proto_input, "input", input_f);

/* In the order of enum proto_limit_field (proto.h): bit i of proto_limits.given is field i. */
static const struct proto_field limits_f[] = {
        F(struct proto_limits, wall_s, "wall_s", PF_UINT, OPT, 0, NULL),
        F(struct proto_limits, cpu_s, "cpu_s", PF_UINT, OPT, 0, NULL),
        F(struct proto_limits, memory_mb, "memory_mb", PF_UINT, OPT, 0, NULL),
        F(struct proto_limits, output_bytes, "output_bytes", PF_UINT, OPT, 0, NULL),
        F(struct proto_limits, files_bytes, "files_bytes", PF_UINT, OPT, 0, NULL),
        F(struct proto_limits, pids, "pids", PF_UINT, OPT, 0, NULL),
        F(struct proto_limits, cpu_quota_pct, "cpu_quota_pct", PF_OPT_INT, OPT, 0, NULL),
};
static SCHEMA_GIVEN(limits_s, struct proto_limits, "limits", limits_f, given);

static const struct proto_field run_request_f[] = {
        F(struct proto_run_request, request_id, "request_id", PF_STR, OPT, PROTO_ID_MAX, NULL),
        F(struct proto_run_request, source, "source", PF_STR, REQ, PROTO_SOURCE_MAX, NULL),
        F(struct proto_run_request, inputs, "inputs", PF_ARRAY, OPT, PROTO_INPUTS_MAX, &input_s),
        F(struct proto_run_request, limits, "limits", PF_STRUCT, OPT, 0, &limits_s),
        F(struct proto_run_request, capabilities_requested, "capabilities_requested", PF_STRV, OPT, PROTO_CAPS_MAX,
          NULL),
        F(struct proto_run_request, capabilities_approved, "capabilities_approved", PF_STRV, OPT, PROTO_CAPS_MAX, NULL),
        F(struct proto_run_request, variables, "variables", PF_STR, OPT, PROTO_VARIABLES_MAX, NULL),
        F(struct proto_run_request, save_source, "save_source", PF_BOOL, OPT, 0, NULL),
        F(struct proto_run_request, tool_name, "tool_name", PF_STR, OPT, PROTO_NAME_MAX, NULL),
        F(struct proto_run_request, args, "args", PF_STRV, OPT, PROTO_ARGS_MAX, NULL),
        F(struct proto_run_request, stream_output, "stream_output", PF_BOOL, OPT, 0, NULL),
        F(struct proto_run_request, egress, "egress", PF_OPT_INT, OPT, 0, NULL),
        F(struct proto_run_request, python_layers_off, "python_layers_off", PF_BOOL, OPT, 0, NULL),
};
static SCHEMA(run_request_s, struct proto_run_request, "run_request", run_request_f);

static const struct proto_field event_f[] = {
        F(struct proto_event, t_ms, "t_ms", PF_UINT, REQ, 0, NULL),
        F(struct proto_event, layer, "layer", PF_STR, REQ, 32, NULL),
        F(struct proto_event, kind, "kind", PF_STR, REQ, 64, NULL),
        F(struct proto_event, op, "op", PF_STR, OPT, EV_OP, NULL),
        F(struct proto_event, reason, "reason", PF_STR, OPT, EV_SHORT, NULL),
        F(struct proto_event, message, "message", PF_STR, OPT, EV_MESSAGE, NULL),
        F(struct proto_event, line, "line", PF_OPT_INT, OPT, 0, NULL),
        F(struct proto_event, col, "col", PF_OPT_INT, OPT, 0, NULL),
        F(struct proto_event, traceback, "traceback", PF_STR, OPT, EV_TRACEBACK, NULL),
};
SCHEMA(proto_event_schema, struct proto_event, "event", event_f);

static const struct proto_field run_event_f[] = {
        F(struct proto_run_event, request_id, "request_id", PF_STR, OPT, PROTO_ID_MAX, NULL),
        F(struct proto_run_event, run_id, "run_id", PF_STR, REQ, PROTO_ID_MAX, NULL),
        F(struct proto_run_event, event, "event", PF_STRUCT, REQ, 0, &proto_event_schema),
};
static SCHEMA(run_event_s, struct proto_run_event, "run_event", run_event_f);

static const struct proto_field run_output_f[] = {
        F(struct proto_run_output, request_id, "request_id", PF_STR, OPT, PROTO_ID_MAX, NULL),
        F(struct proto_run_output, run_id, "run_id", PF_STR, REQ, PROTO_ID_MAX, NULL),
        F(struct proto_run_output, stream, "stream", PF_STR, REQ, 8, NULL),
        F(struct proto_run_output, text, "text", PF_STR, REQ, PROTO_OUTPUT_CHUNK_TEXT_MAX, NULL),
};
static SCHEMA(run_output_s, struct proto_run_output, "run_output", run_output_f);

static const struct proto_field isolation_f[] = {
        F(struct proto_isolation, tier, "tier", PF_STR, REQ, 64, NULL),
        F(struct proto_isolation, mechanisms, "mechanisms", PF_STRV, REQ, 64, NULL),
};
static SCHEMA(isolation_s, struct proto_isolation, "isolation", isolation_f);

static const struct proto_field artifact_f[] = {
        F(struct proto_artifact, path, "path", PF_STR, REQ, PROTO_PATH_MAX, NULL),
        F(struct proto_artifact, bytes, "bytes", PF_UINT, REQ, 0, NULL),
        F(struct proto_artifact, sha256, "sha256", PF_STR, REQ, 64, NULL),
};
static SCHEMA(artifact_s, struct proto_artifact, "artifact", artifact_f);

static const struct proto_field capabilities_f[] = {
        F(struct proto_capabilities, requested, "requested", PF_STRV, REQ, PROTO_CAPS_MAX, NULL),
        F(struct proto_capabilities, granted, "granted", PF_STRV, REQ, PROTO_CAPS_MAX, NULL),
        F(struct proto_capabilities, denied, "denied", PF_STRV, REQ, PROTO_CAPS_MAX, NULL),
};
static SCHEMA(capabilities_s, struct proto_capabilities, "capabilities", capabilities_f);

static const struct proto_field blast_radius_f[] = {
        F(struct proto_blast_radius, read, "read", PF_STRV, REQ, 64, NULL),
        F(struct proto_blast_radius, write, "write", PF_STRV, REQ, 64, NULL),
        F(struct proto_blast_radius, network, "network", PF_STR, REQ, EV_OP, NULL), /* a granted run's is long */
        F(struct proto_blast_radius, hosts, "hosts", PF_STRV, OPT, 80, NULL),
        F(struct proto_blast_radius, processes, "processes", PF_STR, REQ, EV_SHORT, NULL),
        F(struct proto_blast_radius, limits, "limits", PF_STRUCT, REQ, 0, &limits_s),
};
static SCHEMA(blast_radius_s, struct proto_blast_radius, "blast_radius", blast_radius_f);

static const struct proto_field cgroup_figures_f[] = {
        F(struct proto_cgroup_figures, version, "version", PF_STR, REQ, 8, NULL),
        F(struct proto_cgroup_figures, memory_peak_bytes, "memory_peak_bytes", PF_OPT_INT, OPT, 0, NULL),
        F(struct proto_cgroup_figures, oom_kills, "oom_kills", PF_OPT_INT, OPT, 0, NULL),
        F(struct proto_cgroup_figures, pids_peak, "pids_peak", PF_OPT_INT, OPT, 0, NULL),
        F(struct proto_cgroup_figures, forks_refused, "forks_refused", PF_OPT_INT, OPT, 0, NULL),
        F(struct proto_cgroup_figures, cpu_throttled_ms, "cpu_throttled_ms", PF_OPT_INT, OPT, 0, NULL),
};
static SCHEMA(cgroup_figures_s, struct proto_cgroup_figures, "cgroup", cgroup_figures_f);

static const struct proto_field variable_dropped_f[] = {
        F(struct proto_variable_dropped, name, "name", PF_STR, REQ, PROTO_NAME_MAX, NULL),
        F(struct proto_variable_dropped, type, "type", PF_STR, REQ, PROTO_NAME_MAX, NULL),
        F(struct proto_variable_dropped, reason, "reason", PF_STR, REQ, PROTO_REASON_MAX, NULL),
};
SCHEMA(proto_variable_dropped_schema, struct proto_variable_dropped, "variable_dropped", variable_dropped_f);

static const struct proto_field connection_f[] = {
        F(struct proto_connection, host, "host", PF_STR, REQ, 256, NULL),
        F(struct proto_connection, port, "port", PF_UINT, REQ, 65535, NULL),
        F(struct proto_connection, address, "address", PF_STR, REQ, 64, NULL),
        F(struct proto_connection, bytes_out, "bytes_out", PF_UINT, REQ, 0, NULL),
        F(struct proto_connection, bytes_in, "bytes_in", PF_UINT, REQ, 0, NULL),
};
static SCHEMA(connection_s, struct proto_connection, "connection", connection_f);

static const struct proto_field blast_facts_f[] = {
        F(struct proto_blast_facts, direct, "direct", PF_BOOL, REQ, 0, NULL),
        F(struct proto_blast_facts, workdir, "workdir", PF_STR, REQ, PROTO_PATH_MAX, NULL),
        F(struct proto_blast_facts, tmp, "tmp", PF_STR, REQ, PROTO_PATH_MAX, NULL),
        F(struct proto_blast_facts, inputs, "inputs", PF_UINT, REQ, 0, NULL),
        F(struct proto_blast_facts, inputs_bytes, "inputs_bytes", PF_UINT, REQ, 0, NULL),
        F(struct proto_blast_facts, landlock_abi, "landlock_abi", PF_UINT, REQ, 1000, NULL),
        F(struct proto_blast_facts, seccomp_verified, "seccomp_verified", PF_BOOL, REQ, 0, NULL),
        F(struct proto_blast_facts, netns, "netns", PF_BOOL, REQ, 0, NULL),
        F(struct proto_blast_facts, pidns, "pidns", PF_BOOL, REQ, 0, NULL),
        F(struct proto_blast_facts, pids_unbounded, "pids_unbounded", PF_BOOL, REQ, 0, NULL),
        F(struct proto_blast_facts, egress, "egress", PF_BOOL, OPT, 0, NULL),
};
SCHEMA(proto_blast_facts_schema, struct proto_blast_facts, "blast_facts", blast_facts_f);

static const struct proto_field run_result_f[] = {
        F(struct proto_run_result, request_id, "request_id", PF_STR, OPT, PROTO_ID_MAX, NULL),
        F(struct proto_run_result, run_id, "run_id", PF_STR, REQ, PROTO_ID_MAX, NULL),
        F(struct proto_run_result, status, "status", PF_STR, REQ, 16, NULL),
        F(struct proto_run_result, exit_code, "exit_code", PF_OPT_INT, OPT, 0, NULL),
        F(struct proto_run_result, signal, "signal", PF_STR, OPT, 16, NULL),
        F(struct proto_run_result, killed, "killed", PF_STR, OPT, EV_SHORT, NULL),
        F(struct proto_run_result, isolation, "isolation", PF_STRUCT, REQ, 0, &isolation_s),
        F(struct proto_run_result, events, "events", PF_ARRAY, REQ, PROTO_EVENTS_MAX, &proto_event_schema),
        F(struct proto_run_result, out_text, "stdout", PF_STR, REQ, PROTO_OUTPUT_MAX, NULL),
        F(struct proto_run_result, stdout_truncated, "stdout_truncated", PF_BOOL, REQ, 0, NULL),
        F(struct proto_run_result, stdout_bytes, "stdout_bytes", PF_UINT, REQ, 0, NULL),
        F(struct proto_run_result, err_text, "stderr", PF_STR, REQ, PROTO_OUTPUT_MAX, NULL),
        F(struct proto_run_result, stderr_truncated, "stderr_truncated", PF_BOOL, REQ, 0, NULL),
        F(struct proto_run_result, stderr_bytes, "stderr_bytes", PF_UINT, REQ, 0, NULL),
        F(struct proto_run_result, artifacts_dir, "artifacts_dir", PF_STR, OPT, PROTO_PATH_MAX, NULL),
        F(struct proto_run_result, artifacts, "artifacts", PF_ARRAY, REQ, PROTO_ARTIFACTS_MAX, &artifact_s),
        F(struct proto_run_result, peak_rss_mb, "peak_rss_mb", PF_DOUBLE, REQ, 0, NULL),
        F(struct proto_run_result, cpu_ms, "cpu_ms", PF_UINT, REQ, 0, NULL),
        F(struct proto_run_result, wall_ms, "wall_ms", PF_UINT, REQ, 0, NULL),
        F(struct proto_run_result, capabilities, "capabilities", PF_STRUCT, REQ, 0, &capabilities_s),
        F(struct proto_run_result, blast_radius, "blast_radius", PF_STRUCT, REQ, 0, &blast_radius_s),
        F(struct proto_run_result, cgroup, "cgroup", PF_OPT_STRUCT, OPT, 0, &cgroup_figures_s),
        F(struct proto_run_result, variables, "variables", PF_STR, OPT, PROTO_VARIABLES_MAX, NULL),
        F(struct proto_run_result, variables_dropped, "variables_dropped", PF_ARRAY, OPT, PROTO_VARIABLES_DROPPED_MAX,
          &proto_variable_dropped_schema),
        F(struct proto_run_result, final_answer, "final_answer", PF_STR, OPT, PROTO_FINAL_ANSWER_MAX, NULL),
        F(struct proto_run_result, connections, "connections", PF_ARRAY, OPT, PROTO_CONNECTIONS_MAX, &connection_s),
        F(struct proto_run_result, not_stored, "not_stored", PF_STR, OPT, EV_MESSAGE, NULL),
        FI(struct proto_run_result, blast_facts, "blast_facts", &proto_blast_facts_schema),
};
SCHEMA(proto_run_result_schema, struct proto_run_result, "run_result", run_result_f);

static const struct proto_field probe_request_f[] = {
        F(struct proto_probe_request, request_id, "request_id", PF_STR, OPT, PROTO_ID_MAX, NULL),
};
static SCHEMA(probe_request_s, struct proto_probe_request, "probe_request", probe_request_f);

static const struct proto_field mechanism_f[] = {
        F(struct proto_mechanism, name, "name", PF_STR, REQ, 64, NULL),
        F(struct proto_mechanism, available, "available", PF_BOOL, REQ, 0, NULL),
        F(struct proto_mechanism, probed, "probed", PF_BOOL, REQ, 0, NULL),
        F(struct proto_mechanism, in_force, "in_force", PF_BOOL, REQ, 0, NULL),
        F(struct proto_mechanism, evidence, "evidence", PF_STR, REQ, EV_MESSAGE, NULL),
};
static SCHEMA(mechanism_s, struct proto_mechanism, "mechanism", mechanism_f);

/* Each outcome is a short word ("ok", an errno name); each text at most an event's message. */
static const struct proto_field probe_facts_f[] = {
        F(struct proto_probe_facts, start_failure, "start_failure", PF_STR, OPT, EV_MESSAGE, NULL),
        F(struct proto_probe_facts, jail_ran, "jail_ran", PF_BOOL, REQ, 0, NULL),
        F(struct proto_probe_facts, jail_failure, "jail_failure", PF_STR, OPT, EV_MESSAGE, NULL),
        F(struct proto_probe_facts, interp, "interp", PF_BOOL, REQ, 0, NULL),
        F(struct proto_probe_facts, direct, "direct", PF_BOOL, REQ, 0, NULL),
        F(struct proto_probe_facts, no_userns, "no_userns", PF_STR, OPT, EV_MESSAGE, NULL),
        F(struct proto_probe_facts, jail_write, "jail_write", PF_STR, REQ, 32, NULL),
        F(struct proto_probe_facts, jail_read, "jail_read", PF_STR, REQ, 32, NULL),
        F(struct proto_probe_facts, jail_unlisted, "jail_unlisted", PF_STR, REQ, 32, NULL),
        F(struct proto_probe_facts, jail_connect, "jail_connect", PF_STR, REQ, 32, NULL),
        F(struct proto_probe_facts, control_write, "control_write", PF_STR, REQ, 32, NULL),
        F(struct proto_probe_facts, control_read, "control_read", PF_STR, REQ, 32, NULL),
        F(struct proto_probe_facts, control_unlisted, "control_unlisted", PF_STR, REQ, 32, NULL),
        F(struct proto_probe_facts, control_connect, "control_connect", PF_STR, REQ, 32, NULL),
        F(struct proto_probe_facts, port, "port", PF_UINT, REQ, 0, NULL),
        F(struct proto_probe_facts, accepted_jail, "accepted_jail", PF_UINT, REQ, 0, NULL),
        F(struct proto_probe_facts, accepted_control, "accepted_control", PF_UINT, REQ, 0, NULL),
        F(struct proto_probe_facts, jail_target, "jail_target", PF_STR, REQ, PROTO_PATH_MAX, NULL),
        F(struct proto_probe_facts, canary, "canary", PF_STR, REQ, PROTO_PATH_MAX, NULL),
        F(struct proto_probe_facts, seccomp_refusal, "seccomp_refusal", PF_STR, REQ, EV_MESSAGE, NULL),
        F(struct proto_probe_facts, landlock_refusal, "landlock_refusal", PF_STR, REQ, EV_MESSAGE, NULL),
        F(struct proto_probe_facts, seccomp_mech, "seccomp_mech", PF_STR, REQ, EV_MESSAGE, NULL),
        F(struct proto_probe_facts, landlock_mech, "landlock_mech", PF_STR, REQ, EV_MESSAGE, NULL),
        F(struct proto_probe_facts, cgroup_mech, "cgroup_mech", PF_STR, REQ, EV_MESSAGE, NULL),
        F(struct proto_probe_facts, rlimits_mech, "rlimits_mech", PF_STR, REQ, EV_MESSAGE, NULL),
        F(struct proto_probe_facts, seccomp_loaded, "seccomp_loaded", PF_BOOL, REQ, 0, NULL),
        F(struct proto_probe_facts, kernel_landlock_abi, "kernel_landlock_abi", PF_UINT, REQ, 0, NULL),
        F(struct proto_probe_facts, audit_off, "audit_off", PF_STR, OPT, EV_MESSAGE, NULL),
        F(struct proto_probe_facts, cgroup_description, "cgroup_description", PF_STR, REQ, EV_MESSAGE, NULL),
};
SCHEMA(proto_probe_facts_schema, struct proto_probe_facts, "probe_facts", probe_facts_f);

static const struct proto_field probe_result_f[] = {
        F(struct proto_probe_result, request_id, "request_id", PF_STR, OPT, PROTO_ID_MAX, NULL),
        F(struct proto_probe_result, tier, "tier", PF_STR, REQ, 64, NULL),
        F(struct proto_probe_result, mechanisms, "mechanisms", PF_ARRAY, REQ, 64, &mechanism_s),
        FI(struct proto_probe_result, facts, "facts", &proto_probe_facts_schema),
};
static SCHEMA(probe_result_s, struct proto_probe_result, "probe_result", probe_result_f);

static const struct proto_field model_f[] = {
        F(struct proto_model, url, "url", PF_STR, OPT, 2048, NULL),
        F(struct proto_model, name, "name", PF_STR, OPT, 256, NULL),
};
static SCHEMA(model_s, struct proto_model, "model", model_f);

static const struct proto_field task_submit_f[] = {
        F(struct proto_task_submit, request_id, "request_id", PF_STR, OPT, PROTO_ID_MAX, NULL),
        F(struct proto_task_submit, task, "task", PF_STR, REQ, 64 * 1024, NULL),
        F(struct proto_task_submit, inputs, "inputs", PF_ARRAY, OPT, PROTO_INPUTS_MAX, &input_s),
        F(struct proto_task_submit, capabilities_approved, "capabilities_approved", PF_STRV, OPT, PROTO_CAPS_MAX, NULL),
        F(struct proto_task_submit, max_steps, "max_steps", PF_UINT, OPT, 100, NULL),
        F(struct proto_task_submit, time_budget_s, "time_budget_s", PF_UINT, OPT, 86400, NULL),
        F(struct proto_task_submit, model, "model", PF_OPT_STRUCT, OPT, 0, &model_s),
};
static SCHEMA(task_submit_s, struct proto_task_submit, "task_submit", task_submit_f);

static const struct proto_field task_event_f[] = {
        F(struct proto_task_event, task_id, "task_id", PF_STR, REQ, PROTO_ID_MAX, NULL),
        F(struct proto_task_event, step, "step", PF_UINT, REQ, 0, NULL),
        F(struct proto_task_event, kind, "kind", PF_STR, REQ, 64, NULL),
        F(struct proto_task_event, message, "message", PF_STR, OPT, 256 * 1024,
          NULL), /* a model reply, an observation */
        F(struct proto_task_event, code, "code", PF_STR, OPT, PROTO_SOURCE_MAX, NULL),
        F(struct proto_task_event, event, "event", PF_OPT_STRUCT, OPT, 0, &proto_event_schema),
};
static SCHEMA(task_event_s, struct proto_task_event, "task_event", task_event_f);

static const struct proto_field task_step_f[] = {
        F(struct proto_task_step, code, "code", PF_STR, REQ, PROTO_SOURCE_MAX, NULL),
        F(struct proto_task_step, run, "run", PF_STRUCT, REQ, 0, &proto_run_result_schema),
};
static SCHEMA(task_step_s, struct proto_task_step, "task_step", task_step_f);

static const struct proto_field deliverable_f[] = {
        F(struct proto_deliverable, run_id, "run_id", PF_STR, REQ, PROTO_ID_MAX, NULL),
        F(struct proto_deliverable, source, "source", PF_STR, REQ, PROTO_SOURCE_MAX, NULL),
        F(struct proto_deliverable, artifacts, "artifacts", PF_ARRAY, REQ, PROTO_ARTIFACTS_MAX, &artifact_s),
};
static SCHEMA(deliverable_s, struct proto_deliverable, "deliverable", deliverable_f);

static const struct proto_field task_result_f[] = {
        F(struct proto_task_result, task_id, "task_id", PF_STR, REQ, PROTO_ID_MAX, NULL),
        F(struct proto_task_result, status, "status", PF_STR, REQ, 16, NULL),
        F(struct proto_task_result, error, "error", PF_STR, OPT, EV_MESSAGE, NULL),
        F(struct proto_task_result, steps, "steps", PF_ARRAY, REQ, 100, &task_step_s),
        F(struct proto_task_result, deliverable, "deliverable", PF_OPT_STRUCT, OPT, 0, &deliverable_s),
        F(struct proto_task_result, not_stored, "not_stored", PF_STR, OPT, EV_MESSAGE, NULL),
        F(struct proto_task_result, trace_incomplete, "trace_incomplete", PF_STR, OPT, EV_MESSAGE, NULL),
};
static SCHEMA(task_result_s, struct proto_task_result, "task_result", task_result_f);

static const struct proto_field trace_request_f[] = {
        F(struct proto_trace_request, request_id, "request_id", PF_STR, OPT, PROTO_ID_MAX, NULL),
        F(struct proto_trace_request, task_id, "task_id", PF_STR, REQ, PROTO_ID_MAX, NULL),
};
static SCHEMA(trace_request_s, struct proto_trace_request, "trace_request", trace_request_f);

static const struct proto_field artifact_request_f[] = {
        F(struct proto_artifact_request, request_id, "request_id", PF_STR, OPT, PROTO_ID_MAX, NULL),
        F(struct proto_artifact_request, id, "id", PF_STR, REQ, PROTO_ID_MAX, NULL),
        F(struct proto_artifact_request, path, "path", PF_STR, REQ, PROTO_PATH_MAX, NULL),
};
static SCHEMA(artifact_request_s, struct proto_artifact_request, "artifact_request", artifact_request_f);

static const struct proto_field artifact_data_f[] = {
        F(struct proto_artifact_data, request_id, "request_id", PF_STR, OPT, PROTO_ID_MAX, NULL),
        F(struct proto_artifact_data, data, "data", PF_BIN, REQ, PROTO_CHUNK_MAX, NULL),
};
static SCHEMA(artifact_data_s, struct proto_artifact_data, "artifact_data", artifact_data_f);

static const struct proto_field artifact_end_f[] = {
        F(struct proto_artifact_end, request_id, "request_id", PF_STR, OPT, PROTO_ID_MAX, NULL),
        F(struct proto_artifact_end, path, "path", PF_STR, REQ, PROTO_PATH_MAX, NULL),
        F(struct proto_artifact_end, bytes, "bytes", PF_UINT, REQ, 0, NULL),
        F(struct proto_artifact_end, sha256, "sha256", PF_STR, REQ, 64, NULL),
};
static SCHEMA(artifact_end_s, struct proto_artifact_end, "artifact_end", artifact_end_f);

static const struct proto_field list_request_f[] = {
        F(struct proto_list_request, request_id, "request_id", PF_STR, OPT, PROTO_ID_MAX, NULL),
        F(struct proto_list_request, kind, "kind", PF_STR, REQ, 8, NULL),
        F(struct proto_list_request, limit, "limit", PF_UINT, OPT, PROTO_LIST_MAX, NULL),
};
static SCHEMA(list_request_s, struct proto_list_request, "list_request", list_request_f);

static const struct proto_field list_entry_f[] = {
        F(struct proto_list_entry, id, "id", PF_STR, REQ, PROTO_ID_MAX, NULL),
        F(struct proto_list_entry, status, "status", PF_STR, REQ, 32, NULL),
        F(struct proto_list_entry, time, "time", PF_STR, REQ, 32, NULL),
        F(struct proto_list_entry, tool, "tool", PF_STR, REQ, PROTO_NAME_MAX, NULL),
        F(struct proto_list_entry, uid, "uid", PF_OPT_INT, OPT, 0, NULL),
};
static SCHEMA(list_entry_s, struct proto_list_entry, "list_entry", list_entry_f);

static const struct proto_field list_result_f[] = {
        F(struct proto_list_result, request_id, "request_id", PF_STR, OPT, PROTO_ID_MAX, NULL),
        F(struct proto_list_result, kind, "kind", PF_STR, REQ, 8, NULL),
        F(struct proto_list_result, entries, "entries", PF_ARRAY, OPT, PROTO_LIST_MAX, &list_entry_s),
};
static SCHEMA(list_result_s, struct proto_list_result, "list_result", list_result_f);

static const struct proto_field show_request_f[] = {
        F(struct proto_show_request, request_id, "request_id", PF_STR, OPT, PROTO_ID_MAX, NULL),
        F(struct proto_show_request, id, "id", PF_STR, REQ, PROTO_ID_MAX, NULL),
};
static SCHEMA(show_request_s, struct proto_show_request, "show_request", show_request_f);

static const struct proto_field cancel_f[] = {
        F(struct proto_cancel, request_id, "request_id", PF_STR, OPT, PROTO_ID_MAX, NULL),
        F(struct proto_cancel, run_id, "run_id", PF_STR, OPT, PROTO_ID_MAX, NULL),
        F(struct proto_cancel, task_id, "task_id", PF_STR, OPT, PROTO_ID_MAX, NULL),
};
static SCHEMA(cancel_s, struct proto_cancel, "cancel", cancel_f);

static const struct proto_field error_f[] = {
        F(struct proto_error, code, "code", PF_STR, REQ, 32, NULL),
        F(struct proto_error, message, "message", PF_STR, REQ, EV_MESSAGE, NULL),
        F(struct proto_error, field, "field", PF_STR, OPT, EV_SHORT, NULL),
        F(struct proto_error, request_id, "request_id", PF_STR, OPT, PROTO_ID_MAX, NULL),
};
static SCHEMA(error_s, struct proto_error, "error", error_f);

static const struct proto_field run_spec_f[] = {
        F(struct proto_run_spec, source, "source", PF_STR, REQ, PROTO_SOURCE_MAX, NULL),
        F(struct proto_run_spec, variables, "variables", PF_STR, OPT, PROTO_VARIABLES_MAX, NULL),
        F(struct proto_run_spec, workdir, "workdir", PF_STR, REQ, PROTO_PATH_MAX, NULL),
        F(struct proto_run_spec, read_roots, "read_roots", PF_STRV, REQ, 8, NULL),
        F(struct proto_run_spec, write_roots, "write_roots", PF_STRV, REQ, 8, NULL),
        F(struct proto_run_spec, scratch, "scratch", PF_STR, OPT, PROTO_PATH_MAX, NULL),
        F(struct proto_run_spec, capabilities_granted, "capabilities_granted", PF_STRV, OPT, PROTO_CAPS_MAX, NULL),
        F(struct proto_run_spec, platform_processor, "platform_processor", PF_STR, OPT, 256, NULL),
        F(struct proto_run_spec, platform_file, "platform_file", PF_STR, OPT, 1024, NULL),
        F(struct proto_run_spec, test_no_python_layers, "test_no_python_layers", PF_BOOL, OPT, 0, NULL),
        F(struct proto_run_spec, test_break, "test_break", PF_STR, OPT, 32, NULL),
        F(struct proto_run_spec, expect_seccomp, "expect_seccomp", PF_BOOL, OPT, 0, NULL),
        F(struct proto_run_spec, direct, "direct", PF_BOOL, OPT, 0, NULL),
        F(struct proto_run_spec, landlock_abi, "landlock_abi", PF_UINT, OPT, 255, NULL),
        F(struct proto_run_spec, save_source, "save_source", PF_BOOL, OPT, 0, NULL),
        F(struct proto_run_spec, args, "args", PF_STRV, OPT, PROTO_ARGS_MAX, NULL),
        F(struct proto_run_spec, warm, "warm", PF_BOOL, OPT, 0, NULL),
};
static SCHEMA(run_spec_s, struct proto_run_spec, "run_spec", run_spec_f);

static const struct proto_field runner_event_f[] = {
        F(struct proto_runner_event, event, "event", PF_STRUCT, REQ, 0, &proto_event_schema),
        F(struct proto_runner_event, variables, "variables", PF_STR, OPT, PROTO_VARIABLES_MAX, NULL),
        F(struct proto_runner_event, variables_dropped, "variables_dropped", PF_ARRAY, OPT, PROTO_VARIABLES_DROPPED_MAX,
          &proto_variable_dropped_schema),
        F(struct proto_runner_event, final_answer, "final_answer", PF_STR, OPT, PROTO_FINAL_ANSWER_MAX, NULL),
};
static SCHEMA(runner_event_s, struct proto_runner_event, "runner_event", runner_event_f);

static const struct proto_field ui_login_f[] = {
        F(struct proto_ui_login, request_id, "request_id", PF_STR, OPT, PROTO_ID_MAX, NULL),
        F(struct proto_ui_login, inputs, "inputs", PF_STRV, OPT, PROTO_INPUTS_MAX, NULL),
};
static SCHEMA(ui_login_s, struct proto_ui_login, "ui_login", ui_login_f);

static const struct proto_field ui_link_f[] = {
        F(struct proto_ui_link, request_id, "request_id", PF_STR, OPT, PROTO_ID_MAX, NULL),
        F(struct proto_ui_link, url, "url", PF_STR, REQ, 512, NULL),
        F(struct proto_ui_link, expires_s, "expires_s", PF_UINT, REQ, 0, NULL),
};
static SCHEMA(ui_link_s, struct proto_ui_link, "ui_link", ui_link_f);

#define run_result_s proto_run_result_schema

const struct proto_schema *const proto_schemas[_PROTO_TYPE_MAX] = {
#define X(up, low) [PROTO_##up] = &low##_s,
        PROTO_MESSAGES(X)
#undef X
};
