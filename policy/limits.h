/* Limits of a run: the defaults, the ranges a client may ask for, and the resolution of a
 * request into the limits in force. Pure: no side effects, unit-tested. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "lib/err.h"
#include "proto/proto.h"

/* Each limit a request may set: its default (a field left out) and its range. No range holds
 * 0: a field given as 0 is refused like any other value out of range. */
#define POL_WALL_S_DEFAULT 10
#define POL_WALL_S_MIN 1
#define POL_WALL_S_MAX 3600
#define POL_CPU_S_DEFAULT 5
#define POL_CPU_S_MIN 1
#define POL_CPU_S_MAX 3600
#define POL_MEMORY_MB_DEFAULT 512
#define POL_MEMORY_MB_MIN 64 /* below this the interpreter itself does not start */
#define POL_MEMORY_MB_MAX (64 * 1024)
#define POL_OUTPUT_DEFAULT (1024 * 1024)
#define POL_OUTPUT_MIN 1
#define POL_OUTPUT_MAX PROTO_OUTPUT_MAX
#define POL_FILES_DEFAULT (64ull * 1024 * 1024)
#define POL_FILES_MIN 4096
#define POL_FILES_MAX (1024ull * 1024 * 1024)
#define POL_PIDS_DEFAULT 64
#define POL_PIDS_MIN 8
#define POL_PIDS_MAX 1024
/* A task's (task.json, task_submit): its steps and its time budget, when the task gives none,
 * and the most it may ask for (anvilctl checks them; the broker applies the defaults). */
#define POL_TASK_STEPS_DEFAULT 6
#define POL_TASK_STEPS_MAX 100
#define POL_TASK_BUDGET_S_DEFAULT 600
#define POL_TASK_BUDGET_S_MAX 86400
/* The tool's arguments (run_request.args): at most this many, this many bytes in all. */
#define POL_ARGS_MAX 256
#define POL_ARGS_BYTES_MAX (64 * 1024)
/* An agent step's source, saved beside what it wrote (run_request.save_source). */
#define POL_SOURCE_ARTIFACT "tool.py"

/* The limits in force on one supervisor: each limit's default and maximum, in the order of
 * enum proto_limit_field. Its configuration ([limits]) may move a default and lower a maximum,
 * never beyond the compiled range above: what the jail can hold (a memory_mb under 64 does
 * not start the interpreter) and what the protocol carries (output_bytes) stay the compiled
 * minimum and maximum. */
#define POL_LIMITS_N 6 /* wall_s .. pids: the fields a request may set */
struct pol_limit_range {
        uint64_t dflt, max;
};
struct pol_limits_table {
        struct pol_limit_range r[POL_LIMITS_N];
};

/* The compiled table: every default and maximum above. */
void pol_limits_table_init(struct pol_limits_table *t);
/* A limit's name in requests and in the configuration ("wall_s"); NULL past the last. */
const char *pol_limit_name(unsigned field);
/* The configuration's key for a limit's default ("wall_s") or maximum ("wall_s_max"): its
 * field, and which. -ENOENT if it names neither. */
int pol_limit_key(const char *key, unsigned *field, bool *is_max);
/* Sets a default or a maximum: within the compiled minimum and maximum ("expected 1..3600"),
 * else -ERANGE. */
int pol_limits_table_set(struct pol_limits_table *t, unsigned field, bool is_max, uint64_t v, struct anvil_err *err);
/* Every default at most its maximum; else -EINVAL, *field the first that is not, and the
 * message naming both keys ("wall_s = 20 is over wall_s_max = 10"). */
int pol_limits_table_check(const struct pol_limits_table *t, unsigned *field, struct anvil_err *err);

/* Fields of req not given take the table's defaults; a given value out of range, 0 included,
 * is an error naming the field and the bound in force ("run_request.limits.memory_mb: 10 is
 * below the minimum of 64", "run_request.limits.wall_s: 0 is below the minimum of 1",
 * "run_request.limits.wall_s: 100 is over the maximum of 60" with a table's maximum of 60). */
int pol_limits_resolve(const struct pol_limits_table *t, const struct proto_limits *req, struct proto_limits *out,
                       struct anvil_err *err);

/* Input file names: [A-Za-z0-9._-] and spaces (not first or last), 1..PROTO_NAME_MAX bytes,
 * not starting with '.', unique: never '/', "..", NUL or a control character. Each input is
 * its data or an fd, one of the two. fd_modes: the st_mode of each of the n_fds fds that came
 * with the frame (their index is an input's fd), or NULL for a message whose inputs are bytes
 * only; every fd is named by exactly one input and is a regular file or a directory.
 * field names the list in the message: "run_request.inputs", "task_submit.inputs", "inputs". */
int pol_inputs_check(const struct proto_array *inputs, const char *field, const unsigned *fd_modes, size_t n_fds,
                     struct anvil_err *err);
/* A run_request's fds: its inputs' (as pol_inputs_check) and, when run_request.egress is
 * given, that one fd, which must be a socket and no input's: the count is the inputs' that
 * name one plus one. fd_modes as for pol_inputs_check (non-NULL when n_fds > 0). */
int pol_run_fds_check(const struct proto_run_request *req, const unsigned *fd_modes, size_t n_fds,
                      struct anvil_err *err);
/* An input name as pol_inputs_check takes it. */
int pol_input_name_ok(const char *name);

/* The tool's arguments (run_request.args, its sys.argv[1:]): at most POL_ARGS_MAX, of at most
 * POL_ARGS_BYTES_MAX bytes together. Each is a string without NUL, of at most PROTO_PATH_MAX
 * bytes: the decoder's rule for every list of strings. field: "run_request.args". */
int pol_args_check(const struct proto_strv *args, const char *field, struct anvil_err *err);
