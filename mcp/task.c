/* anvil-mcp's submit_task (docs/mcp.md): a task given to the broker's agent, as `anvilctl
 * submit` gives it. The broker's own model writes the code actions, each run in a jail; the
 * host's model sees the task's progress and its TaskResult. The capabilities approved are
 * the user's (--approve), never the host model's; the model is the broker's configured one
 * (a task's own model URL is not offered: the prompt, with the inputs' first rows, would go
 * wherever the host's model said). Inputs are read as the host's user and sent as bytes (a
 * task's inputs are bytes only: docs/protocol.md). */
#define _GNU_SOURCE
#include <inttypes.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/cleanup.h"
#include "lib/fd.h"
#include "mcp/mcp.h"
#include "policy/limits.h"
#include "proto/json.h"
#include "proto/names.h"

/* The task's sentence, at most this (the broker cuts what it puts in the prompt). */
#define MCP_TASK_MAX (64u * 1024)

struct task_follow {
        struct mcp_call *c;
        struct proto_msg result;
        bool have;
};

static int on_task_frame(int fd, struct proto_msg *in, void *ctx, int *rc)
{
        (void)fd;
        struct task_follow *tf = ctx;
        if (in->type == PROTO_TASK_EVENT) {
                const struct proto_task_event *e = &in->u.task_event;
                if (e->task_id)
                        mcp_call_set_task(tf->c, e->task_id);
                char msg[400];
                const char *text = e->message ? e->message : "";
                if (e->event)
                        text = e->event->message ? e->event->message : e->event->kind;
                snprintf(msg, sizeof(msg), "task %s step %" PRIu64 ": %s: %.300s", e->task_id ? e->task_id : "?",
                         e->step, e->kind, text);
                mcp_progress(tf->c, msg);
                return 1;
        }
        if (in->type == PROTO_RUN_OUTPUT)
                return 1;
        if (in->type != PROTO_TASK_RESULT)
                return -1;
        tf->result = *in;
        memset(&in->u, 0, sizeof(in->u)); /* taken */
        tf->have = true;
        *rc = 0;
        return 0;
}

static int task_args(struct mcp_call *c, const json_t *a, struct proto_task_submit *sub, char *why, size_t size)
{
        static const char *const known[] = { "task", "inputs", "max_steps", "time_budget_s" };
        if (!a || !json_is_object(a))
                return mcp_param_type(c->id, "arguments", "an object");
        if (mcp_unknown_member(c->id, "arguments", a, known, sizeof(known) / sizeof(known[0])) < 0)
                return -1;
        const json_t *task = json_object_get(a, "task");
        if (!mcp_text_string(task, MCP_TASK_MAX) || !json_string_length(task))
                return mcp_param_type(c->id, "arguments.task",
                                      "a non-empty string of at most 65536 bytes, without NUL");
        sub->task = strdup(json_string_value(task));
        const json_t *steps = json_object_get(a, "max_steps"), *budget = json_object_get(a, "time_budget_s");
        if (steps && (!json_is_integer(steps) || json_integer_value(steps) < 1 ||
                      json_integer_value(steps) > POL_TASK_STEPS_MAX))
                return mcp_param_type(c->id, "arguments.max_steps", "an integer, 1..100");
        if (budget && (!json_is_integer(budget) || json_integer_value(budget) < 1 ||
                       json_integer_value(budget) > POL_TASK_BUDGET_S_MAX))
                return mcp_param_type(c->id, "arguments.time_budget_s", "an integer, 1..86400");
        sub->max_steps = steps ? (uint64_t)json_integer_value(steps) : 0;
        sub->time_budget_s = budget ? (uint64_t)json_integer_value(budget) : 0;
        for (size_t i = 0; i < mcp_approved.n; i++)
                if (proto_strv_push(&sub->capabilities_approved, mcp_approved.items[i]) < 0)
                        return mcp_param_type(c->id, "arguments", "smaller (out of memory)");
        const json_t *inputs = json_object_get(a, "inputs");
        if (inputs && (!json_is_array(inputs) || json_array_size(inputs) > PROTO_INPUTS_MAX))
                return mcp_param_type(c->id, "arguments.inputs", "an array of at most 32 strings");
        size_t i;
        const json_t *v;
        json_array_foreach(inputs, i, v)
        {
                if (!mcp_text_string(v, PROTO_PATH_MAX) || !json_string_length(v)) {
                        char p[64];
                        snprintf(p, sizeof(p), "arguments.inputs[%zu]", i);
                        return mcp_param_type(c->id, p, "a path: a string of at most 4096 bytes, without NUL");
                }
        }
        /* Read as this user: a file that cannot be is the tool's result, which the model can act on. */
        json_array_foreach(inputs, i, v)
        {
                struct anvil_err err = ANVIL_ERR_INIT;
                struct proto_input *in = proto_array_push(&sub->inputs, sizeof(*in));
                const char *path = json_string_value(v);
                uint8_t *data;
                size_t len;
                if (!in || fd_read_file(path, PROTO_FRAME_MAX, &data, &len, &err) < 0) {
                        POL_MCP_TEXT(why, size, TASK_INPUT, i, path, in ? err.msg : "out of memory");
                        return 1;
                }
                _cleanup_free_ char *copy = strdup(path);
                in->name = copy ? strdup(basename(copy)) : NULL;
                in->data.data = data;
                in->data.len = len;
        }
        return sub->task ? 0 : mcp_param_type(c->id, "arguments", "smaller (out of memory)");
}

/* The run of the task's deliverable, among its steps. */
static const struct proto_run_result *deliverable_run(const struct proto_task_result *r)
{
        const struct proto_task_step *s = r->steps.items;
        for (size_t i = 0; r->deliverable && i < r->steps.n; i++)
                if (s[i].run.run_id && strcmp(s[i].run.run_id, r->deliverable->run_id) == 0)
                        return &s[i].run;
        return NULL;
}

static void task_answer(struct mcp_call *c, const struct proto_task_result *r)
{
        struct mcp_text t;
        mcp_text_open(&t);
        if (!t.f) {
                mcp_error(c->id, RPC_INTERNAL_ERROR, "out of memory");
                return;
        }
        fprintf(t.f, "task %s: %s%s%s\n", r->task_id, r->status, r->error ? ": " : "", r->error ? r->error : "");
        const struct proto_task_step *s = r->steps.items;
        for (size_t i = 0; i < r->steps.n; i++) {
                fprintf(t.f, "  action %zu: run %s: %s\n", i + 1, s[i].run.run_id,
                        s[i].run.killed ? s[i].run.killed : s[i].run.status);
                mcp_runs_add(&s[i].run);
        }
        const struct proto_run_result *d = deliverable_run(r);
        json_t *content = json_array();
        if (d) {
                fprintf(t.f, "deliverable: the action of run %s\n", d->run_id);
                const struct proto_artifact *a = r->deliverable->artifacts.items;
                for (size_t i = 0; i < r->deliverable->artifacts.n; i++) {
                        char *uri = mcp_artifact_uri(d->run_id, a[i].path);
                        fprintf(t.f, "  %s  (%" PRIu64 " bytes, %s)  %s\n", a[i].path, a[i].bytes,
                                mcp_mime_type(a[i].path), uri ? uri : "");
                        free(uri);
                }
                mcp_add_images(c, d, content, t.f);
                if (mcp_version_at_least("2025-06-18")) {
                        json_t *links = mcp_resource_links(d);
                        json_array_extend(content, links);
                        json_decref(links);
                }
        }
        char *text = mcp_text_close(&t);
        json_array_insert_new(content, 0, mcp_text_content(text ? text : ""));
        free(text);
        bool ok = r->status && strcmp(r->status, "ok") == 0;
        json_t *res = json_pack("{s:o, s:b}", "content", content, "isError", !ok);
        if (mcp_version_at_least("2025-06-18")) {
                json_t *sc = proto_to_json(proto_schemas[PROTO_TASK_RESULT], r);
                if (sc)
                        json_object_set_new(res, "structuredContent", sc);
        }
        mcp_result(c->id, res);
}

void mcp_submit_task(struct mcp_call *c, const json_t *arguments)
{
        struct proto_msg m = { .type = PROTO_TASK_SUBMIT };
        struct proto_task_submit *sub = &m.u.task_submit;
        char why[PROTO_PATH_MAX + 512];
        int r = task_args(c, arguments, sub, why, sizeof(why));
        if (r != 0) {
                if (r > 0)
                        mcp_result_text(c, why, true);
                proto_msg_free(&m);
                return;
        }
        sub->request_id = strdup(c->rid);
        struct task_follow tf = { .c = c };
        char *failed = NULL;
        int rc = mcp_follow(c, &m, NULL, 0, false, on_task_frame, &tf, &failed);
        if (rc == 0 && !tf.have)
                rc = EXIT_CONNECT;
        if (mcp_call_cancelled(c))
                fprintf(stderr, "anvil-mcp: %s: cancelled: no answer sent; the task %s %s\n", c->rid, c->task_id,
                        tf.have ? tf.result.u.task_result.status : "did not end here");
        else if (rc != 0)
                mcp_request_failed(c, rc, failed, MCP_TASK);
        else
                task_answer(c, &tf.result.u.task_result);
        free(failed);
        if (tf.have)
                proto_msg_free(&tf.result);
        proto_msg_free(&m);
}
