/* Limits of a run: the defaults, the ranges a client may ask for, and the resolution of a
 * request into the limits in force. Pure: no side effects, unit-tested. */
#pragma once

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
/* An agent step's source, saved beside what it wrote (run_request.save_source). */
#define POL_SOURCE_ARTIFACT "tool.py"

/* Fields of req not given take the defaults; a given value out of range, 0 included, is an
 * error naming the field ("run_request.limits.memory_mb: 10 is below the minimum of 64",
 * "run_request.limits.wall_s: 0 is below the minimum of 1"). */
int pol_limits_resolve(const struct proto_limits *req, struct proto_limits *out, struct anvil_err *err);

/* Input file names: [A-Za-z0-9._-], 1..PROTO_NAME_MAX bytes, not starting with '.', unique.
 * field names the list in the message: "run_request.inputs", "task_submit.inputs", "inputs". */
int pol_inputs_check(const struct proto_array *inputs, const char *field, struct anvil_err *err);
