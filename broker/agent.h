/* The agent's tasks (agent.c): task_submit, cancel by task_id, trace replay. */
#pragma once

#include "broker/broker.h"
#include "policy/limits.h"

#define BRO_TASK_STEPS_DEFAULT POL_TASK_STEPS_DEFAULT
#define BRO_TASK_BUDGET_S_DEFAULT POL_TASK_BUDGET_S_DEFAULT
/* A trace line replayed: a code action of PROTO_SOURCE_MAX bytes escaped as JSON (\u0001 is
 * 6 bytes) fits. A replay is read on the loop and queued to the client whole: bounded so
 * (agent.c); recover.c reads a trace within the same bounds. */
#define BRO_TRACE_LINE_MAX (8u << 20)
#define BRO_TRACE_FILE_MAX (64u << 20)

/* Takes over *m (a task_submit). Refusals are error frames to the client. */
void bro_task_submit(struct bro_client *c, struct proto_msg *m);
/* A cancel naming a task_id: a task submitted on this connection. False if it names none. */
bool bro_task_cancel(struct bro_client *c, const struct proto_cancel *cancel);
/* The client has gone: its tasks are cancelled. */
void bro_tasks_client_gone(struct bro_client *c);
/* The broker stops: every task is cancelled; their results are still written (the loop runs
 * until the thread pool's writes are done) and sent to clients still connected. */
void bro_tasks_stop(struct bro_server *srv);
/* anvilctl trace: replays DIR/traces/<task_id>.jsonl as task_event frames. */
void bro_trace_replay(struct bro_client *c, const struct proto_trace_request *req);
