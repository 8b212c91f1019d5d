/* Limits of a run: the defaults, the ranges a client may ask for, and the resolution of a
 * request into the limits in force. Pure: no side effects, unit-tested. */
#pragma once

#include "lib/err.h"
#include "proto/proto.h"

#define POL_WALL_S_DEFAULT 10
#define POL_WALL_S_MAX 3600
#define POL_CPU_S_DEFAULT 5
#define POL_CPU_S_MAX 3600
#define POL_MEMORY_MB_DEFAULT 512
#define POL_MEMORY_MB_MIN 64 /* below this the interpreter itself does not start */
#define POL_MEMORY_MB_MAX (64 * 1024)
#define POL_OUTPUT_DEFAULT (1024 * 1024)
#define POL_OUTPUT_MAX PROTO_OUTPUT_MAX
#define POL_FILES_DEFAULT (64ull * 1024 * 1024)
#define POL_FILES_MAX (1024ull * 1024 * 1024)
#define POL_PIDS_DEFAULT 64
#define POL_PIDS_MAX 1024
/* An agent step's source, saved beside what it wrote (run_request.save_source). */
#define POL_SOURCE_ARTIFACT "tool.py"

/* Zero fields of req take the defaults; a value out of range is an error naming the field
 * ("run_request.limits.memory_mb: 10 is below the minimum of 64"). */
int pol_limits_resolve(const struct proto_limits *req, struct proto_limits *out, struct anvil_err *err);

/* Input file names: [A-Za-z0-9._-], 1..PROTO_NAME_MAX bytes, not starting with '.', unique.
 * field names the list in the message: "run_request.inputs", "task_submit.inputs", "inputs". */
int pol_inputs_check(const struct proto_array *inputs, const char *field, struct anvil_err *err);
