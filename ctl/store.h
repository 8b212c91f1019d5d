/* What anvilctl reads back of the broker's store (ctl/store.c): past runs and tasks listed
 * and shown, a run's trace, and artifacts copied out (-o DIR). */
#pragma once

#include <stdbool.h>

#include "proto/proto.h"

/* -o DIR of run and submit (NULL: none). */
extern const char *ctl_out_dir;

/* The artifacts of a run's result, or of a task's deliverable, copied into ctl_out_dir
 * through the broker: 0, or the exit status after saying on stderr what was not copied. */
int ctl_out_run(const struct proto_run_result *r);
int ctl_out_task(const struct proto_task_result *r);

int ctl_cmd_runs(int argc, char **argv);  /* anvilctl runs, anvilctl tasks */
int ctl_cmd_show(int argc, char **argv);  /* anvilctl show ID [--json] [-o DIR] */
int ctl_store_help(const char *cmd);       /* anvilctl help runs|tasks|show */
int ctl_trace_run(const char *run_id);    /* anvilctl trace RUN_ID */

/* ctl/main.c's: a run's or a task's result as run and submit print it; one event. */
void ctl_print_run(const struct proto_run_result *r, bool json);
void ctl_print_task(const struct proto_task_result *r, bool json);
void ctl_print_event(const struct proto_event *e);
