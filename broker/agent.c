/* The agent (DESIGN §8): a task, submitted by a client (task_submit), is carried out as a
 * CodeAgent loop: the model writes a Python code action, the action runs in the sandbox
 * through exactly the path `anvilctl run` uses (a relay to the supervisor, its result stored
 * in DIR/results the same way), and what came of it goes back to the model as the next
 * message, until an action calls final_answer(), the step limit or the time budget is
 * reached, or the client cancels. The broker talks to the model; no jail ever does, and the
 * key never leaves this process.
 *
 * A task's life:
 *   A1  task_submit: checked; a task id; the trace opened (DIR/traces/<task_id>.jsonl); a
 *       task_event "started" names the id to the client
 *   A2  describe: a run of the broker's own tool (describe_py) over the inputs gives each
 *       input's rows, columns with dtypes and first rows: pandas reads them in the sandbox,
 *       the broker parses no user data but the JSON that tool prints. The read and write
 *       roots the prompt names are that run's observed blast radius, not a configuration
 *   A3  the system prompt (broker/prompt.c) and the task; a model request (model.c)
 *   A4  the reply: the capabilities it declares (the first reply only), its code action
 *       (broker/reply.c); no code: "No code was received..." is the next message, no run
 *   A5  the code action runs (a relay owned by the task) with the inputs, the capabilities
 *       the model declared and the user approved, and the previous action's variables; its
 *       events stream to the client as task_events
 *   A6  its result is a step; an action that called final_answer() ends the task; else its
 *       observation (broker/prompt.c) is the next message (A3)
 *   A7  the end: "ok" with a deliverable (the last action that ran to status ok and wrote an
 *       artifact; its source in its artifacts as tool.py and in DIR/tasks/<task_id>.tool.py,
 *       its artifacts in DIR/tasks/<task_id>.artifacts/, copied when its run was stored),
 *       or "failed" with a clear error, or "cancelled"; the TaskResult is written to
 *       DIR/tasks/<task_id>.json, then sent to the client
 *
 * Every step is a line of the trace as it happens; `anvilctl trace` replays it. A trace line
 * is one JSON object: t_ms, step, kind and the fields of the task_event it was sent as
 * (message, code, event), so a replay shows what the client saw, in order.
 *
 * The key: sent only to the broker's own --model-url. A task may name another model URL
 * (task.json's model.url); the request to it carries no key, so a client cannot make the
 * broker hand its key to a server of the client's choosing. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <sha2.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "broker/agent.h"
#include "broker/broker.h"
#include "broker/model.h"
#include "jail/jail.h" /* the jail's paths, for the prompt */
#include "lib/cleanup.h"
#include "lib/fd.h"
#include "lib/list.h"
#include "lib/log.h"
#include "lib/utf8.h"
#include "broker/reply.h"
#include "policy/limits.h"
#include "policy/cap_scope.h"
#include "policy/reasons.h"
#include "policy/rules.h"
#include "policy/variables.h"
#include "proto/names.h"
#include "proto/json.h"

#define TASK_OBSERVATION_MAX (64 * 1024)  /* what the model sees of one action */
#define TASK_PROMPT_MAX (128 * 1024)      /* the system prompt */
#define TASK_REPLY_KEPT (256 * 1024)      /* of a model's reply, in the conversation */
#define TASK_EVENT_TEXT_MAX (256 * 1024)  /* a task_event's message (proto/messages.c) */
#define TASK_ERROR_MAX 4000               /* a task_result's error (EV_MESSAGE) */
#define TASK_RESULT_BUDGET (12u << 20)    /* a TaskResult's texts, under PROTO_FRAME_MAX */
#define TRACE_LINE_MAX BRO_TRACE_LINE_MAX /* agent.h */
#define TRACE_FILE_MAX BRO_TRACE_FILE_MAX
#define DESCRIBE_COLUMNS_MAX 200

/* The broker's own tool for A2. It runs in the sandbox like any other and must pass the same
 * layers: the e2e tests run it on every task. Each input is described or its error given. */
static const char describe_py[] = "import json, os\n"
                                  "import pandas as pd\n"
                                  "out = []\n"
                                  "for name in sorted(os.listdir('inputs')):\n"
                                  "    path = os.path.join('inputs', name)\n"
                                  "    d = {'name': name, 'bytes': os.path.getsize(path)}\n"
                                  "    try:\n"
                                  "        low = name.lower()\n"
                                  "        if low.endswith(('.csv', '.tsv')):\n"
                                  "            df = pd.read_csv(path, sep='\\t' if low.endswith('.tsv') else ',')\n"
                                  "            d['rows'] = int(len(df))\n"
                                  "            d['columns'] = [{'name': str(c)[:200], 'dtype': str(t)} for c, t in "
                                  "list(df.dtypes.items())[:200]]\n"
                                  "            d['more_columns'] = max(0, len(df.columns) - 200)\n"
                                  "            d['head'] = df.head(5).to_csv(index=False)[:4000]\n"
                                  "        else:\n"
                                  "            with open(path, 'rb') as f:\n"
                                  "                d['head'] = f.read(2000).decode('utf-8', 'replace')\n"
                                  "    except Exception as e:\n"
                                  "        d['error'] = (type(e).__name__ + ': ' + str(e))[:1000]\n"
                                  "    out.append(d)\n"
                                  "print(json.dumps({'inputs': out}))\n";

#define TASK_TOOL_MAX 60 /* bytes of the task's first line a listing shows */

enum task_state {
        T_DESCRIBE,
        T_MODEL,
        T_RUN,
        T_SAVING,
        T_DONE
};

struct bro_task {
        struct bro_server *srv;
        struct bro_client *client; /* NULL once gone */
        struct bro_task *next, **pprev;
        char id[PROTO_ID_MAX + 1];
        uid_t uid; /* its client's (SO_PEERCRED): the owner of its runs, result and trace */
        char *request_id;
        struct proto_task_submit sub; /* taken over from the task_submit */
        struct bro_model_cfg model;   /* the broker's settings, or the task's url and name */
        json_t *messages;             /* the conversation, as sent to the model */
        enum task_state state;
        unsigned step; /* model turns taken */
        unsigned max_steps;
        uint64_t budget_s;
        uint64_t t0;
        long model_req;          /* in flight, or 0 */
        struct bro_relay *relay; /* in flight, or NULL */
        char *current_code;      /* the action running */
        char *variables;         /* JSON object text for the next action */
        bool caps_malformed;     /* the last reply's declaration was not understood: tell it */
        struct proto_strv caps_requested;
        struct proto_array steps; /* of struct proto_task_step */
        int trace_fd;
        uv_timer_t budget;
        bool budget_init;
        char *status, *error;                    /* the end, once known */
        const struct proto_task_step *delivered; /* an ok task's deliverable, in steps */
        unsigned trace_lost;                     /* trace lines not written, the first one's errno in trace_errno */
        int trace_errno;
        char *trace_incomplete, *not_stored; /* the TaskResult's notices (POL_TRACE_INCOMPLETE, POL_NOT_STORED) */
};

static void task_finish(struct bro_task *t, const char *status, const char *error);

/* ---- small helpers ---- */

static uint64_t task_ms(const struct bro_task *t)
{
        return now_ms() - t->t0;
}

/* As run ids: UTC time to the microsecond, strictly increasing within this broker, so that
 * task ids sort by age (retention keeps the newest by name), then 64 random bits. */
static void make_task_id(char *out, size_t size)
{
        static uint64_t last_us;
        uint64_t rnd = 0;
        if (getrandom(&rnd, sizeof(rnd), 0) != sizeof(rnd))
                rnd = now_ms() * 0x9E3779B97F4A7C15ull;
        struct timespec ts;
        (void)clock_gettime(CLOCK_REALTIME, &ts);
        uint64_t us = (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
        if (us <= last_us)
                us = last_us + 1;
        last_us = us;
        time_t sec = (time_t)(us / 1000000u);
        struct tm tm;
        gmtime_r(&sec, &tm);
        char day[24];
        strftime(day, sizeof(day), "%Y%m%dT%H%M%S", &tm);
        snprintf(out, size, "task-%s%06u-%016" PRIx64, day, (unsigned)(us % 1000000u), rnd);
}

/* A copy of text cut to at most max bytes on a character boundary. */
static char *cut_dup(const char *text, size_t max)
{
        size_t n = utf8_prefix_len(text, max);
        return strndup(text, n);
}

/* One line of the trace, written whole with one write (O_APPEND). */
static void trace_line(struct bro_task *t, const char *kind, json_t *fields)
{
        json_t *o = json_object();
        if (!o) {
                json_decref(fields);
                return;
        }
        json_object_set_new(o, "t_ms", json_integer((json_int_t)task_ms(t)));
        json_object_set_new(o, "step", json_integer(t->step));
        json_object_set_new(o, "kind", json_string(kind));
        if (fields)
                json_object_update(o, fields);
        json_decref(fields);
        char *line = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
        json_decref(o);
        if (!line)
                return;
        size_t n = strlen(line);
        char *buf = realloc(line, n + 2);
        if (!buf) {
                free(line);
                return;
        }
        buf[n] = '\n';
        struct anvil_err err = ANVIL_ERR_INIT;
        /* A line that fails (a full disk) is counted, and the TaskResult says so. */
        if (t->trace_fd >= 0 && fd_write_all(t->trace_fd, buf, n + 1, &err) < 0 && t->trace_lost++ == 0) {
                t->trace_errno = err.code;
                log_warn("task %s: a trace line was not written: %s; the task goes on, its trace incomplete", t->id,
                         err.msg);
        }
        free(buf);
}

/* What happened, to the trace and to the client (a task_event), the same fields in both. */
static void report(struct bro_task *t, const char *kind, const char *message, const char *code,
                   const struct proto_event *event, json_t *extra)
{
        _cleanup_free_ char *msg = message ? cut_dup(message, TASK_EVENT_TEXT_MAX) : NULL;
        json_t *f = extra ? extra : json_object();
        if (msg)
                json_object_set_new(f, "message", json_string(msg));
        if (code)
                json_object_set_new(f, "code", json_string(code));
        if (event)
                json_object_set_new(f, "event", proto_to_json(&proto_event_schema, event));
        trace_line(t, kind, f);
        if (!t->client)
                return;
        struct proto_msg m = { .type = PROTO_TASK_EVENT };
        m.u.task_event.task_id = t->id;
        m.u.task_event.step = t->step;
        m.u.task_event.kind = (char *)kind;
        m.u.task_event.message = msg;
        m.u.task_event.code = (char *)code;
        m.u.task_event.event = (struct proto_event *)event;
        bro_client_send(t->client, &m);
}

static void free_steps(struct proto_array *steps)
{
        for (size_t i = 0; i < steps->n; i++) {
                struct proto_task_step *s = (struct proto_task_step *)steps->items + i;
                free(s->code);
                proto_schema_free(proto_schemas[PROTO_RUN_RESULT], &s->run);
        }
        free(steps->items);
        *steps = (struct proto_array){ 0 };
}

static void task_free(struct bro_task *t)
{
        LIST_REMOVE(t);
        if (t->client)
                t->client->n_inflight--;
        proto_schema_free(proto_schemas[PROTO_TASK_SUBMIT], &t->sub);
        free_steps(&t->steps);
        proto_strv_free(&t->caps_requested);
        json_decref(t->messages);
        free(t->request_id);
        free(t->current_code);
        free(t->variables);
        free(t->status);
        free(t->error);
        free(t->trace_incomplete);
        free(t->not_stored);
        if (t->trace_fd >= 0)
                (void)close(t->trace_fd);
        explicit_bzero(&t->model, sizeof(t->model)); /* the key */
        free(t);
}

static void on_budget_closed(uv_handle_t *h)
{
        task_free(h->data);
}

static void task_release(struct bro_task *t)
{
        if (t->budget_init)
                uv_close((uv_handle_t *)&t->budget, on_budget_closed);
        else
                task_free(t);
}

static void fail_msg(struct bro_task *t, char *msg)
{
        msg[utf8_prefix_len(msg, TASK_ERROR_MAX)] = '\0';
        task_finish(t, "failed", msg);
}

/* The task fails with reason POL_ID (its arguments checked by the compiler, reasons.h). */
#define fail(t, ID, ...)                                                                    \
        do {                                                                                \
                char fail_buf_[TASK_ERROR_MAX + 1];                                         \
                fail_msg((t), POL_REASON(fail_buf_, sizeof(fail_buf_), ID, ##__VA_ARGS__)); \
        } while (0)

/* A run of the task's on the path of a client's run_request (relay.c). A request too large
 * once encoded (its inputs and variables together over a frame) is the task's bad_request. */
static void start_relay(struct bro_task *t, struct proto_msg *m, const struct bro_relay_owner *o)
{
        struct anvil_err err = ANVIL_ERR_INIT;
        t->relay = bro_relay_start_owned(t->srv, m, o, &err);
        if (!t->relay)
                fail(t, TASK_SANDBOX_FAILED, err.code == EMSGSIZE ? "bad_request" : "internal", err.msg);
}

/* ---- the end (A7) ---- */

/* Whether an artifact is the copy of the step's own source the runner saved (R9b): by its
 * name and its sha256, so a tool.py the tool wrote itself is the tool's artifact. */
static bool is_source_copy(const struct proto_task_step *s, const struct proto_artifact *a)
{
        if (strcmp(a->path, POL_SOURCE_ARTIFACT) != 0)
                return false;
        char hex[SHA256_DIGEST_STRING_LENGTH];
        SHA256Data((const uint8_t *)s->code, strlen(s->code), hex);
        return strcmp(hex, a->sha256) == 0;
}

/* Whether a step's run wrote something besides the copy of its own source. */
static bool wrote_artifact(const struct proto_task_step *s)
{
        const struct proto_artifact *a = s->run.artifacts.items;
        for (size_t i = 0; i < s->run.artifacts.n; i++)
                if (!is_source_copy(s, &a[i]))
                        return true;
        return false;
}

/* The deliverable: the last step that ran to status ok and wrote at least one artifact. */
static const struct proto_task_step *deliverable_step(const struct bro_task *t)
{
        const struct proto_task_step *s = t->steps.items;
        for (size_t i = t->steps.n; i-- > 0;)
                if (s[i].run.status && strcmp(s[i].run.status, "ok") == 0 && wrote_artifact(&s[i]))
                        return &s[i];
        return NULL;
}

/* The first line of a step's exception ("KeyError: 'amount'"), or its status. */
static void step_error_line(const struct proto_task_step *s, char *buf, size_t size)
{
        const struct proto_event *e = s->run.events.items;
        for (size_t i = s->run.events.n; i-- > 0;) {
                if (e[i].kind && strcmp(e[i].kind, "exception") == 0 && e[i].message) {
                        snprintf(buf, size, "%s", e[i].message);
                        buf[strcspn(buf, "\n")] = '\0';
                        return;
                }
        }
        snprintf(buf, size, "%s", s->run.killed ? s->run.killed : s->run.status);
}

static size_t slen(const char *x)
{
        return x ? strlen(x) : 0;
}

/* What a step's run weighs in a TaskResult, roughly: its texts (msgpack adds a few bytes to
 * each; TASK_RESULT_BUDGET leaves 4 MiB of a frame for that and the rest). */
static size_t step_weight(const struct proto_task_step *s)
{
        size_t w = slen(s->code) + slen(s->run.out_text) + slen(s->run.err_text) + slen(s->run.variables) +
                   slen(s->run.final_answer) + 1024;
        const struct proto_event *e = s->run.events.items;
        for (size_t i = 0; i < s->run.events.n; i++)
                w += slen(e[i].message) + slen(e[i].traceback) + slen(e[i].op) + slen(e[i].reason) + 64;
        return w;
}

/* A TaskResult fits in one frame: past TASK_RESULT_BUDGET bytes, each step's stdout and
 * stderr are cut to an equal share and marked truncated (stdout_bytes still says how much the
 * tool wrote); if that is not enough, the events of the oldest steps are left out, each run
 * keeping a count of them in a supervisor note. Every run stays whole in
 * DIR/results/<run_id>.json. */
static void fit_result(struct proto_array *steps)
{
        struct proto_task_step *s = steps->items;
        size_t total = 0;
        for (size_t i = 0; i < steps->n; i++)
                total += step_weight(&s[i]);
        if (total <= TASK_RESULT_BUDGET || steps->n == 0)
                return;
        size_t share = TASK_RESULT_BUDGET / (steps->n * 4);
        total = 0;
        for (size_t i = 0; i < steps->n; i++) {
                char **texts[2] = { &s[i].run.out_text, &s[i].run.err_text };
                bool *flags[2] = { &s[i].run.stdout_truncated, &s[i].run.stderr_truncated };
                for (int k = 0; k < 2; k++) {
                        char *x = *texts[k];
                        if (!x || strlen(x) <= share)
                                continue;
                        x[utf8_prefix_len(x, share)] = '\0';
                        *flags[k] = true;
                }
                total += step_weight(&s[i]);
        }
        for (size_t i = 0; i < steps->n && total > TASK_RESULT_BUDGET; i++) {
                struct proto_array *ev = &s[i].run.events;
                if (ev->n == 0)
                        continue;
                size_t before = step_weight(&s[i]), n = ev->n;
                struct proto_event *e = ev->items;
                for (size_t k = 0; k < n; k++)
                        proto_schema_free(&proto_event_schema, &e[k]);
                ev->n = 0;
                struct proto_event *note = proto_array_push(ev, sizeof(*note));
                if (note) {
                        *note = (struct proto_event){ .layer = strdup("supervisor"), .kind = strdup("events_dropped") };
                        if (asprintf(&note->message,
                                     "%zu events left out of the task's result to fit it; the run's "
                                     "result has them all",
                                     n) < 0)
                                note->message = NULL;
                }
                total -= before - step_weight(&s[i]);
        }
}

/* The TaskResult, once the task has ended; d holds its deliverable. Borrows from t. */
static void task_result(const struct bro_task *t, struct proto_task_result *res, struct proto_deliverable *d)
{
        *res = (struct proto_task_result){ .task_id = (char *)t->id,
                                           .status = t->status,
                                           .error = t->error,
                                           .steps = t->steps,
                                           .not_stored = t->not_stored,
                                           .trace_incomplete = t->trace_incomplete };
        if (t->delivered) {
                *d = (struct proto_deliverable){ .run_id = t->delivered->run.run_id,
                                                 .source = t->delivered->code,
                                                 .artifacts = t->delivered->run.artifacts };
                res->deliverable = d;
        }
}

static void on_result_saved(void *data, int rc, const char *failed, const char *error)
{
        struct bro_task *t = data;
        if (rc < 0) {
                log_error("task %s: its result was not stored: %s", t->id, error);
                bro_not_stored(&t->not_stored, "tasks", failed, -rc); /* the client is told */
                bro_store_mark_unstored(t->srv, t->id);
        }
        struct bro_client *c = t->client;
        if (c) {
                struct proto_msg m = { .type = PROTO_TASK_RESULT };
                struct proto_deliverable d;
                task_result(t, &m.u.task_result, &d);
                bro_client_send(c, &m);
                /* The task is over for its client now, not when its memory goes: a stopping
                 * broker ends a client with nothing left in flight (relay.c). */
                c->n_inflight--;
                t->client = NULL;
                if (t->srv->stopping)
                        bro_stop_poke(t->srv);
        }
        task_release(t);
}

/* A7: the end, exactly once. */
static void task_finish(struct bro_task *t, const char *status, const char *error)
{
        if (t->state >= T_SAVING)
                return;
        t->state = T_SAVING;
        if (t->budget_init)
                (void)uv_timer_stop(&t->budget);
        if (t->model_req > 0)
                bro_model_cancel(t->srv->model, t->model_req);
        t->model_req = 0;
        if (t->relay)
                bro_relay_abandon(t->relay);
        t->relay = NULL;
        t->status = strdup(status);
        t->error = error ? strdup(error) : NULL;
        fit_result(&t->steps);
        t->delivered = strcmp(status, "ok") == 0 ? deliverable_step(t) : NULL;
        const struct proto_task_step *ds = t->delivered;
        struct proto_task_result res;
        struct proto_deliverable d;
        task_result(t, &res, &d);
        json_t *f = json_object();
        json_object_set_new(f, "status", json_string(status));
        if (error)
                json_object_set_new(f, "error", json_string(error));
        if (ds)
                json_object_set_new(f, "deliverable_run", json_string(d.run_id));
        /* What a replay prints: the status, and the error or the deliverable's run. */
        json_object_set_new(f, "message",
                            json_sprintf("%s%s%s", status,
                                         error ? ": "
                                         : ds  ? ": the deliverable is run "
                                               : "",
                                         error ? error
                                         : ds  ? d.run_id
                                               : ""));
        trace_line(t, "end", f);
        if (t->trace_lost) { /* the last line is written: the count is final */
                char note[256];
                POL_REASON(note, sizeof(note), TRACE_INCOMPLETE, (unsigned long long)t->trace_lost,
                           strerror(t->trace_errno));
                t->trace_incomplete = strdup(note);
                res.trace_incomplete = t->trace_incomplete;
        }
        log_info("task %s: %s%s%s after %u steps in %" PRIu64 " ms", t->id, status, error ? ": " : "",
                 error ? error : "", t->step, task_ms(t));

        /* The deliverable's source beside the task's result, and the result itself: written
         * on the thread pool, then sent to the client. */
        json_t *j = proto_to_json(proto_schemas[PROTO_TASK_RESULT], &res);
        char *text = j ? json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10)) : NULL;
        json_decref(j);
        struct bro_save_file files[3] = { { 0 } };
        size_t n = 0;
        char result_name[PROTO_ID_MAX + 8], source_name[PROTO_ID_MAX + 16], meta_name[PROTO_ID_MAX + 8];
        snprintf(result_name, sizeof(result_name), "%s.json", t->id);
        snprintf(source_name, sizeof(source_name), "%s.tool.py", t->id);
        snprintf(meta_name, sizeof(meta_name), "%s" BRO_META_SUFFIX, t->id);
        if (ds)
                files[n++] = (struct bro_save_file){ source_name, strdup(ds->code) };
        /* Whose it is, and what a listing shows of it: the task's first line, cut. */
        char tool[TASK_TOOL_MAX + 4];
        const char *task = t->sub.task + strspn(t->sub.task, " \t\r\n");
        size_t len = strcspn(task, "\r\n"), cut = utf8_prefix_len(task, len < TASK_TOOL_MAX ? len : TASK_TOOL_MAX);
        snprintf(tool, sizeof(tool), "%.*s%s", (int)cut, task, cut < len ? "..." : "");
        char *meta = bro_task_meta_text(t->uid, tool, status, ds ? d.run_id : NULL, ds ? &d.artifacts : NULL);
        files[n++] = (struct bro_save_file){ meta_name, meta };
        files[n++] = (struct bro_save_file){ result_name, text };
        struct anvil_err err = ANVIL_ERR_INIT;
        if (!text || !meta ||
            bro_store_files(t->srv, t->srv->tasks_dirfd, files, n, t->id, ds ? d.run_id : NULL, on_result_saved, t,
                            &err) < 0) {
                for (size_t i = 0; i < n; i++)
                        free(files[i].text);
                on_result_saved(t, text && meta ? -(err.code ? err.code : EIO) : -ENOMEM, result_name,
                                text && meta ? err.msg : "out of memory");
        }
}

static void on_budget(uv_timer_t *h)
{
        struct bro_task *t = h->data;
        report(t, "time_budget", "the time budget ran out", NULL, NULL, NULL);
        fail(t, TASK_TIME_BUDGET, (unsigned long long)t->budget_s);
}

/* ---- the model (A3, A4) ---- */

static void run_action(struct bro_task *t, const char *code);
static void ask_model(struct bro_task *t);
static int add_user_message(struct bro_task *t, const char *text);

static int add_message(struct bro_task *t, const char *role, const char *content)
{
        json_t *m = json_pack("{s:s, s:s}", "role", role, "content", content);
        return m ? json_array_append_new(t->messages, m) : -1;
}

/* A4: the model's reply read: its capabilities and its code action. */
static void on_model(void *data, const struct bro_model_reply *reply, const char *error)
{
        struct bro_task *t = data;
        t->model_req = 0;
        if (t->state != T_MODEL)
                return;
        if (error) {
                report(t, "model_error", error, NULL, NULL, NULL);
                fail(t, TASK_MODEL_FAILED, error);
                return;
        }
        json_t *x = json_pack("{s:i, s:I, s:b}", "attempts", reply->attempts, "ms", (json_int_t)reply->ms, "streamed",
                              reply->streamed);
        /* A server's separate reasoning and the tools the model called: in the trace, never run. */
        _cleanup_free_ char *reasoning = reply->reasoning ? cut_dup(reply->reasoning, TASK_EVENT_TEXT_MAX) : NULL;
        if (x && reasoning)
                json_object_set_new(x, "reasoning", json_string(reasoning));
        if (x && reply->tool_calls)
                json_object_set_new(x, "tool_calls", json_string(reply->tool_calls));
        report(t, "model_reply", reply->content, NULL, NULL, x);
        /* The conversation keeps at most TASK_REPLY_KEPT bytes of a reply (a server may send
         * megabytes a turn; the code in it is parsed whole below), so that a task's messages
         * stay within max_steps * (TASK_REPLY_KEPT + TASK_OBSERVATION_MAX). */
        size_t full = strlen(reply->content);
        _cleanup_free_ char *kept = NULL;
        if (full > TASK_REPLY_KEPT) {
                size_t n = utf8_prefix_len(reply->content, TASK_REPLY_KEPT);
                char cut[64];
                BRO_AGENT_TEXT(cut, sizeof(cut), CUT, (unsigned long long)(full - n));
                if (asprintf(&kept, "%.*s\n%s", (int)n, reply->content, cut) < 0)
                        kept = NULL;
        }
        if ((full > TASK_REPLY_KEPT && !kept) || add_message(t, "assistant", kept ? kept : reply->content) < 0) {
                fail(t, TASK_INTERNAL, "out of memory");
                return;
        }
        size_t len = strlen(reply->content);
        /* What the model says it needs, in any reply (the prompt asks for it in the reply whose
         * code needs it): the union so far is requested for every later run, and the
         * supervisor grants what the user approved and says why not for the rest. */
        struct proto_strv declared = { 0 };
        int dr = bro_caps_declared(reply->content, len, &declared);
        if (dr > 0) {
                char line[512] = "the model asks for:";
                for (size_t i = 0; i < declared.n; i++) {
                        const char *name = declared.items[i];
                        bool known = false;
                        for (size_t k = 0; k < t->caps_requested.n; k++)
                                known |= strcmp(t->caps_requested.items[k], name) == 0;
                        if (!known && t->caps_requested.n < PROTO_CAPS_MAX)
                                (void)proto_strv_push(&t->caps_requested, name);
                        snprintf(line + strlen(line), sizeof(line) - strlen(line), " %s", name);
                }
                if (declared.n == 0)
                        snprintf(line + strlen(line), sizeof(line) - strlen(line), " nothing");
                report(t, "capabilities", line, NULL, NULL, NULL);
        } else if (dr == -EINVAL || dr == -E2BIG) {
                t->caps_malformed = true; /* said in the next message */
                report(t, "capabilities", bro_agent_format(POL_AGENT_CAPS_MALFORMED), NULL, NULL, NULL);
        }
        proto_strv_free(&declared);
        struct bro_reply pr;
        int rr = bro_reply_parse(reply->content, len, &pr);
        /* tool calls and no code (OpenAI's content null, or prose): the model is told so */
        if (rr == 0 && pr.kind != BRO_REPLY_CODE && reply->tool_calls) {
                bro_reply_free(&pr);
                rr = bro_reply_tool_calls(reply->tool_calls, &pr);
        }
        if (rr < 0) {
                fail(t, TASK_INTERNAL, "out of memory");
                return;
        }
        if (pr.kind != BRO_REPLY_CODE) {
                /* Never run, never counted as a step of the task's: the model is told. */
                _cleanup_free_ char *obs = bro_observation_no_code(&pr, TASK_OBSERVATION_MAX);
                bro_reply_free(&pr);
                report(t, "no_code", obs ? obs : "No code was received.", NULL, NULL, NULL);
                if (add_user_message(t, obs ? obs : "No code was received.") < 0) {
                        fail(t, TASK_INTERNAL, "out of memory");
                        return;
                }
                ask_model(t);
                return;
        }
        run_action(t, pr.code);
        bro_reply_free(&pr);
}

/* The next message to the model, after a declaration it made that was not understood. */
static int add_user_message(struct bro_task *t, const char *text)
{
        if (!t->caps_malformed)
                return add_message(t, "user", text);
        t->caps_malformed = false;
        _cleanup_free_ char *both = NULL;
        if (asprintf(&both, "%s\n\n%s", bro_agent_format(POL_AGENT_CAPS_MALFORMED), text) < 0)
                return -1;
        return add_message(t, "user", both);
}

/* A streamed reply as it grows, to the task's client as model_delta events: sent, not written
 * to the trace (its model_reply has the whole). Bounded as the reply is (the model client's
 * body bound), and by the client's bound on replies left unread. Called from inside the
 * transfer: it only sends. */
static void on_model_delta(void *data, const char *text, size_t len)
{
        struct bro_task *t = data;
        if (!t->client || t->state != T_MODEL)
                return;
        for (size_t off = 0; off < len;) { /* in pieces of at most TASK_EVENT_TEXT_MAX */
                size_t n = len - off;
                if (n > TASK_EVENT_TEXT_MAX)
                        n = utf8_complete_len((const uint8_t *)text + off, TASK_EVENT_TEXT_MAX);
                _cleanup_free_ char *piece = strndup(text + off, n);
                if (!piece || n == 0)
                        return;
                struct proto_msg e = { .type = PROTO_TASK_EVENT };
                e.u.task_event.task_id = t->id;
                e.u.task_event.step = t->step;
                e.u.task_event.kind = (char *)proto_task_kind_name(PROTO_TASK_MODEL_DELTA);
                e.u.task_event.message = piece;
                bro_client_send(t->client, &e);
                off += n;
        }
}

/* A3: the conversation so far to the model. */
static void ask_model(struct bro_task *t)
{
        if (t->state >= T_SAVING)
                return;
        if (t->step >= t->max_steps) {
                fail(t, TASK_STEP_LIMIT, (unsigned long long)t->max_steps);
                return;
        }
        t->step++;
        t->state = T_MODEL;
        char line[128];
        snprintf(line, sizeof(line), "step %u of at most %u: asking the model", t->step, t->max_steps);
        report(t, "model_request", line, NULL, NULL, NULL);
        long id = bro_model_chat_stream(t->srv->model, &t->model, t->messages, on_model, on_model_delta, t);
        if (id < 0) {
                fail(t, TASK_MODEL_FAILED, strerror((int)-id));
                return;
        }
        t->model_req = id;
}

/* ---- the sandbox (A2, A5, A6) ---- */

static void on_run_event(void *data, const struct proto_msg *m)
{
        struct bro_task *t = data;
        const struct proto_event *e = &m->u.run_event.event;
        json_t *x = json_pack("{s:s?}", "run_id", m->u.run_event.run_id);
        report(t, "run_event", NULL, NULL, e, x);
}

/* What an action's tool writes, as it writes it (run_request.stream_output), to the task's
 * client as run_stdout and run_stderr events: sent, not written to the trace, which has it in
 * the run's result and the observation. Bounded as the run's result is (its output cap), and
 * by the client's bound on replies left unread. */
static void on_run_output(void *data, const struct proto_msg *m)
{
        struct bro_task *t = data;
        const struct proto_run_output *o = &m->u.run_output;
        if (!t->client)
                return;
        struct proto_msg e = { .type = PROTO_TASK_EVENT };
        e.u.task_event.task_id = t->id;
        e.u.task_event.step = t->step;
        e.u.task_event.kind = (char *)proto_task_kind_name(strcmp(o->stream, "stderr") == 0 ? PROTO_TASK_RUN_STDERR
                                                                                            : PROTO_TASK_RUN_STDOUT);
        e.u.task_event.message = o->text;
        bro_client_send(t->client, &e);
}

static void on_run_error(void *data, const char *code, const char *message)
{
        struct bro_task *t = data;
        t->relay = NULL;
        if (t->state >= T_SAVING)
                return;
        report(t, "run_error", message, NULL, NULL, json_pack("{s:s}", "error_code", code));
        fail(t, TASK_SANDBOX_FAILED, code, message);
}

/* A run's request: the task's inputs (copied: each run is a run_request of its own). */
static int new_run_request(struct bro_task *t, const char *source, struct proto_msg *m)
{
        *m = (struct proto_msg){ .type = PROTO_RUN_REQUEST };
        struct proto_run_request *req = &m->u.run_request;
        req->source = strdup(source);
        req->request_id = strdup(t->id);
        if (!req->source || !req->request_id)
                return -1;
        const struct proto_input *in = t->sub.inputs.items;
        for (size_t i = 0; i < t->sub.inputs.n; i++) {
                struct proto_input *c = proto_array_push(&req->inputs, sizeof(*c));
                if (!c || !(c->name = strdup(in[i].name)) || !(c->data.data = malloc(in[i].data.len + 1)))
                        return -1;
                memcpy(c->data.data, in[i].data.data, in[i].data.len);
                c->data.len = in[i].data.len;
        }
        return 0;
}

/* What the model sees of a run: broker/prompt.c's observation, with the variables the
 * next action will have (next_vars: the keys of the JSON object it will be given, this run's
 * or, when this run left none, as a blocked or killed one, those it was given itself) and
 * those this run left that it will not. */
static char *run_observation(const struct proto_run_result *res, const char *next_vars)
{
        struct bro_obs_run obs;
        if (bro_obs_from_result(res, &obs) < 0)
                return NULL;
        json_error_t je;
        _cleanup_(json_decrefp) json_t *vars = next_vars ? json_loads(next_vars, JSON_REJECT_DUPLICATES, &je) : NULL;
        size_t nk = json_is_object(vars) ? json_object_size(vars) : 0, nd = res->variables_dropped.n;
        const char **kept = calloc(nk + 1, sizeof(*kept)), **dropped = calloc(nd + 1, sizeof(*dropped));
        char *text = NULL;
        if (kept && dropped) {
                size_t i = 0;
                const char *k;
                json_t *v;
                json_object_foreach(vars, k, v) kept[i++] = k;
                const struct proto_variable_dropped *d = res->variables_dropped.items;
                for (i = 0; i < nd; i++)
                        dropped[i] = d[i].name;
                obs.kept = kept;
                obs.n_kept = nk;
                obs.dropped = dropped;
                obs.n_dropped = nd;
                text = bro_observation(&obs, TASK_OBSERVATION_MAX);
        }
        free(kept);
        free(dropped);
        bro_obs_clear(&obs);
        return text;
}

/* A6: the action's result made a step; final_answer() ends the task, else its observation is the
 * next message. */
static void on_action_result(void *data, struct proto_msg *m)
{
        struct bro_task *t = data;
        t->relay = NULL;
        if (t->state != T_RUN) {
                proto_msg_free(m);
                return;
        }
        struct proto_task_step *s = proto_array_push(&t->steps, sizeof(*s));
        if (!s) {
                proto_msg_free(m);
                fail(t, TASK_INTERNAL, "out of memory");
                return;
        }
        s->code = t->current_code;
        t->current_code = NULL;
        s->run = m->u.run_result; /* taken over */
        memset(&m->u.run_result, 0, sizeof(m->u.run_result));
        proto_msg_free(m);
        const struct proto_run_result *res = &s->run;
        char line[256];
        snprintf(line, sizeof(line), "run %s: %s", res->run_id, res->killed ? res->killed : res->status);
        report(t, "run_result", line, NULL, NULL,
               json_pack("{s:s, s:s}", "run_id", res->run_id, "status", res->status));
        /* The variables it left are the next action's; a run that left none (blocked before
         * its first line, killed) changed nothing, and the next action has what it had. */
        if (res->variables) {
                free(t->variables);
                t->variables = strdup(res->variables);
        }
        if (res->final_answer) {
                report(t, "final_answer", res->final_answer, NULL, NULL, NULL);
                const struct proto_task_step *ds = deliverable_step(t);
                if (ds) {
                        task_finish(t, "ok", NULL);
                        return;
                }
                /* The last failed action, with what it died of. */
                const struct proto_task_step *all = t->steps.items;
                for (size_t i = t->steps.n; i-- > 0;) {
                        if (strcmp(all[i].run.status, "ok") != 0) {
                                char err[1024];
                                step_error_line(&all[i], err, sizeof(err));
                                fail(t, TASK_NO_DELIVERABLE_LAST, all[i].run.run_id, err);
                                return;
                        }
                }
                fail(t, TASK_NO_DELIVERABLE);
                return;
        }
        _cleanup_free_ char *obs = run_observation(res, t->variables);
        report(t, "observation", obs ? obs : "", NULL, NULL, NULL);
        if (!obs || add_user_message(t, obs) < 0) {
                fail(t, TASK_INTERNAL, "out of memory");
                return;
        }
        ask_model(t);
}

/* A5: the code action run through a relay the task owns. */
static void run_action(struct bro_task *t, const char *code)
{
        t->state = T_RUN;
        free(t->current_code);
        t->current_code = strdup(code);
        report(t, "code", NULL, code, NULL, NULL);
        struct proto_msg m = { .type = PROTO_RUN_REQUEST };
        int r = t->current_code ? new_run_request(t, code, &m) : -1;
        struct proto_run_request *req = &m.u.run_request;
        if (r == 0 && t->variables && !(req->variables = strdup(t->variables)))
                r = -1;
        for (size_t i = 0; r == 0 && i < t->caps_requested.n; i++)
                r = proto_strv_push(&req->capabilities_requested, t->caps_requested.items[i]);
        for (size_t i = 0; r == 0 && i < t->sub.capabilities_approved.n; i++)
                r = proto_strv_push(&req->capabilities_approved, t->sub.capabilities_approved.items[i]);
        req->save_source = true;
        req->stream_output = true; /* on_run_output */
        if (r < 0) {
                proto_msg_free(&m);
                fail(t, TASK_INTERNAL, "out of memory");
                return;
        }
        char what[32];
        snprintf(what, sizeof(what), "step %u", t->step);
        struct bro_relay_owner o = {
                on_run_event, on_action_result, on_run_error, t, t->uid, t->id, what, on_run_output
        };
        start_relay(t, &m, &o);
}

/* A2: what the describe run printed, decoded strictly: {"inputs": [{"name", "bytes",
 * "rows"?, "columns"?: [{"name", "dtype"}], "more_columns"?, "head"?, "error"?}]}. The
 * strings are the tool's output: bounded here, then again by the prompt's own bounds. */
struct description {
        json_t *doc;
        struct bro_prompt_input *inputs;
        struct bro_prompt_column *columns;
        char **heads;
        size_t n;
};

static void description_free(struct description *d)
{
        for (size_t i = 0; d->heads && i < d->n; i++)
                free(d->heads[i]);
        free(d->heads);
        free(d->inputs);
        free(d->columns);
        json_decref(d->doc);
}

static int parse_description(const char *text, struct description *d, char *why, size_t wsize)
{
        json_error_t je;
        *d = (struct description){ 0 };
        d->doc = json_loads(text ? text : "", JSON_REJECT_DUPLICATES, &je);
        json_t *list = json_object_get(d->doc, "inputs");
        if (!json_is_array(list) || json_array_size(list) > PROTO_INPUTS_MAX) {
                snprintf(why, wsize, "%s", d->doc ? "no list of inputs" : je.text);
                return -1;
        }
        size_t n = json_array_size(list), total_cols = 0;
        for (size_t i = 0; i < n; i++) {
                json_t *cols = json_object_get(json_array_get(list, i), "columns");
                if (cols && (!json_is_array(cols) || json_array_size(cols) > DESCRIBE_COLUMNS_MAX)) {
                        snprintf(why, wsize, "input %zu: its columns are not a list of at most %d", i,
                                 DESCRIBE_COLUMNS_MAX);
                        return -1;
                }
                total_cols += cols ? json_array_size(cols) : 0;
        }
        d->n = n;
        d->inputs = calloc(n + 1, sizeof(*d->inputs));
        d->columns = calloc(total_cols + 1, sizeof(*d->columns));
        d->heads = calloc(n + 1, sizeof(*d->heads));
        if (!d->inputs || !d->columns || !d->heads) {
                snprintf(why, wsize, "out of memory");
                return -1;
        }
        struct bro_prompt_column *col = d->columns;
        for (size_t i = 0; i < n; i++) {
                json_t *o = json_array_get(list, i), *cols = json_object_get(o, "columns");
                json_t *name = json_object_get(o, "name"), *rows = json_object_get(o, "rows");
                json_t *head = json_object_get(o, "head"), *error = json_object_get(o, "error");
                json_t *bytes = json_object_get(o, "bytes"), *more = json_object_get(o, "more_columns");
                if (!json_is_string(name) || !json_is_integer(bytes) || (rows && !json_is_integer(rows)) ||
                    (head && !json_is_string(head)) || (error && !json_is_string(error)) ||
                    (more && !json_is_integer(more)) || (rows && json_integer_value(rows) < 0) ||
                    (more && json_integer_value(more) < 0)) {
                        snprintf(why, wsize, "input %zu is not described as expected", i);
                        return -1;
                }
                struct bro_prompt_input *in = &d->inputs[i];
                in->name = json_string_value(name);
                in->rows_known = rows != NULL;
                in->rows = rows ? (unsigned long long)json_integer_value(rows) : 0;
                in->columns = col;
                if (more && json_integer_value(more) > 0)
                        in->columns_total =
                                (cols ? json_array_size(cols) : 0) + (unsigned long long)json_integer_value(more);
                for (size_t k = 0; cols && k < json_array_size(cols); k++) {
                        json_t *c = json_array_get(cols, k);
                        json_t *cn = json_object_get(c, "name"), *ct = json_object_get(c, "dtype");
                        if (!json_is_string(cn) || !json_is_string(ct)) {
                                snprintf(why, wsize, "input %zu: column %zu is not described as expected", i, k);
                                return -1;
                        }
                        col->name = json_string_value(cn);
                        col->dtype = json_string_value(ct);
                        col++;
                        in->n_columns++;
                }
                /* An input pandas could not read: what it said stands where its rows would. */
                if (error && asprintf(&d->heads[i], "(not read as a table: %s)%s%s", json_string_value(error),
                                      head ? "\n" : "", head ? json_string_value(head) : "") < 0)
                        d->heads[i] = NULL;
                in->head = error ? d->heads[i] : (head ? json_string_value(head) : NULL);
        }
        return 0;
}

/* The places of the task's own among the roots the describe run observed: those under the
 * jail's working directory, as the tool writes them (./inputs), without the supervisor's
 * note. The system's (/usr, /proc...) and /tmp (discarded) are no place for a deliverable or
 * the user's data. Each kept root is a string of out[] (freed with the array); returns n. */
static size_t task_roots(const struct proto_strv *seen, char **out, size_t max)
{
        size_t n = 0;
        const size_t wl = strlen(JAIL_WORKDIR "/");
        for (size_t i = 0; i < seen->n && n < max; i++) {
                const char *r = seen->items[i];
                if (strncmp(r, JAIL_WORKDIR "/", wl) != 0)
                        continue;
                size_t len = strcspn(r + wl, " ");
                if (len == 0 || asprintf(&out[n], "./%.*s", (int)len, r + wl) < 0)
                        continue;
                n++;
        }
        return n;
}

static void on_describe_result(void *data, struct proto_msg *m)
{
        struct bro_task *t = data;
        t->relay = NULL;
        if (t->state != T_DESCRIBE) {
                proto_msg_free(m);
                return;
        }
        const struct proto_run_result *res = &m->u.run_result;
        char line[256];
        snprintf(line, sizeof(line), "run %s: %s", res->run_id, res->killed ? res->killed : res->status);
        report(t, "describe_result", line, NULL, NULL,
               json_pack("{s:s, s:s}", "run_id", res->run_id, "status", res->status));
        struct description d = { 0 };
        char why[512] = "";
        if (strcmp(res->status, "ok") != 0 || parse_description(res->out_text, &d, why, sizeof(why)) < 0) {
                char msg[1024];
                if (!why[0]) {
                        struct proto_task_step fake = { .run = *res };
                        step_error_line(&fake, why, sizeof(why));
                }
                snprintf(msg, sizeof(msg), "the inputs could not be described (run %s): %s", res->run_id, why);
                description_free(&d);
                proto_msg_free(m);
                fail(t, TASK_INTERNAL, msg);
                return;
        }
        /* The roots as the describe run observed them (its blast radius), not as configured. */
        char *reads[8] = { 0 }, *writes[8] = { 0 };
        size_t n_reads = task_roots(&res->blast_radius.read, reads, 8);
        size_t n_writes = task_roots(&res->blast_radius.write, writes, 8);
        /* The hosts network may reach, as the relay will decide for a run asking for them all
         * (policy/cap_scope.h): what the user approved, if the server allows network. */
        char net_hosts[1024];
        const char *const every[] = { "network" };
        struct pol_scope *g = malloc(sizeof(*g));
        bool net = g && t->srv->cfg.egress_path &&
                   pol_net_resolve(every, 1, (const char *const *)t->sub.capabilities_approved.items,
                                   t->sub.capabilities_approved.n, !t->srv->cfg.network_off, g) == POL_WHY_NONE;
        if (net)
                pol_scope_text(g, net_hosts, sizeof(net_hosts));
        free(g);
        struct bro_prompt_in p = {
                .net_hosts = net ? net_hosts : NULL,
                .task = t->sub.task,
                .inputs = d.inputs,
                .n_inputs = d.n,
                .read_roots = (const char *const *)reads,
                .n_read_roots = n_reads,
                .write_roots = (const char *const *)writes,
                .n_write_roots = n_writes,
                .caps_approved = (const char *const *)t->sub.capabilities_approved.items,
                .n_caps_approved = t->sub.capabilities_approved.n,
        };
        _cleanup_free_ char *sys = bro_system_prompt(&p, TASK_PROMPT_MAX);
        int e = errno;
        for (size_t i = 0; i < 8; i++) {
                free(reads[i]);
                free(writes[i]);
        }
        description_free(&d);
        proto_msg_free(m);
        if (!sys) {
                fail(t, TASK_INTERNAL,
                     e == E2BIG ? "the inputs' description does not fit in the prompt"
                                : "the prompt could not be made (out of memory)");
                return;
        }
        if (add_message(t, "system", sys) < 0 || add_message(t, "user", bro_agent_format(POL_AGENT_BEGIN)) < 0) {
                fail(t, TASK_INTERNAL, "the prompt could not be made (out of memory)");
                return;
        }
        report(t, "prompt", sys, NULL, NULL, NULL);
        ask_model(t);
}

/* A2: the broker's describe tool run over the inputs. */
static void describe(struct bro_task *t)
{
        t->state = T_DESCRIBE;
        report(t, "describe", "describing the inputs in the sandbox", describe_py, NULL, NULL);
        struct proto_msg m;
        if (new_run_request(t, describe_py, &m) < 0) {
                proto_msg_free(&m);
                fail(t, TASK_INTERNAL, "out of memory");
                return;
        }
        struct bro_relay_owner o = {
                on_run_event, on_describe_result, on_run_error, t, t->uid, t->id, "describe", NULL
        };
        start_relay(t, &m, &o);
}

/* ---- A1: the submission ---- */

static int refuse(struct bro_client *c, struct proto_msg *m, const char *code, const char *field, const char *fmt, ...)
        __attribute__((format(printf, 5, 6)));
static int refuse(struct bro_client *c, struct proto_msg *m, const char *code, const char *field, const char *fmt, ...)
{
        char msg[1024];
        va_list ap;
        va_start(ap, fmt);
        (void)vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        log_info("%s: task_submit refused: %s", c->stream.name, msg);
        bro_client_error(c, code, msg, field, m->u.task_submit.request_id);
        proto_msg_free(m);
        return -1;
}

/* A1: a task_submit checked, given an id and a trace. */
void bro_task_submit(struct bro_client *c, struct proto_msg *m)
{
        struct bro_server *srv = c->srv;
        struct proto_task_submit *sub = &m->u.task_submit;
        struct anvil_err err = ANVIL_ERR_INIT;
        if (srv->stopping) {
                refuse(c, m, "busy", NULL, "The broker is stopping");
                return;
        }
        char busy[512];
        if (bro_client_inflight_check(c, "task_submit", busy, sizeof(busy)) < 0) {
                refuse(c, m, "busy", NULL, "%s", busy);
                return;
        }
        if (!sub->task[strspn(sub->task, " \t\r\n")]) {
                refuse(c, m, "bad_request", "task_submit.task", "task_submit.task: the task is empty");
                return;
        }
        if (pol_inputs_check(&sub->inputs, "task_submit.inputs", NULL, 0, &err) < 0) {
                refuse(c, m, "bad_request", "task_submit.inputs", "%s", err.msg);
                return;
        }
        if (sub->capabilities_approved.n > PROTO_CAPS_MAX) {
                refuse(c, m, "bad_request", "task_submit.capabilities_approved", "too many capabilities");
                return;
        }
        for (size_t i = 0; i < sub->capabilities_approved.n; i++) {
                const char *name = sub->capabilities_approved.items[i];
                char msg[512];
                if (pol_cap_check("task_submit.capabilities_approved", name, msg, sizeof(msg)) < 0) {
                        refuse(c, m, "bad_request", "task_submit.capabilities_approved", "%s", msg);
                        return;
                }
        }
        /* The model: the broker's settings, or the task's url and name. */
        struct bro_model_cfg mc = srv->cfg.model;
        if (sub->model && sub->model->url && strcmp(sub->model->url, srv->cfg.model.url) != 0) {
                /* The key goes only where the broker's operator pointed it. */
                snprintf(mc.url, sizeof(mc.url), "%s", sub->model->url);
                mc.key[0] = '\0';
        }
        if (sub->model && sub->model->name)
                snprintf(mc.model, sizeof(mc.model), "%s", sub->model->name);
        if (!mc.url[0]) {
                refuse(c, m, "bad_request", "task_submit.model.url",
                       "no model to ask: the broker has no --model-url and the task names no model.url");
                return;
        }
        if (!mc.model[0]) {
                refuse(c, m, "bad_request", "task_submit.model.name",
                       "no model to ask: the broker has no --model and the task names no model.name");
                return;
        }
        if (bro_model_cfg_check(&mc, &err) < 0) {
                refuse(c, m, "bad_request", "task_submit.model", "task_submit.model: %s", err.msg);
                return;
        }
        struct bro_task *t = calloc(1, sizeof(*t));
        if (!t) {
                refuse(c, m, "internal", NULL, "out of memory");
                return;
        }
        t->srv = srv;
        t->client = c;
        t->uid = c->uid;
        t->trace_fd = -1;
        t->t0 = now_ms();
        t->sub = *sub;
        memset(sub, 0, sizeof(*sub));
        proto_msg_free(m);
        LIST_PREPEND(srv->tasks, t);
        c->n_inflight++;
        t->request_id = t->sub.request_id ? strdup(t->sub.request_id) : NULL;
        t->max_steps = t->sub.max_steps ? (unsigned)t->sub.max_steps : BRO_TASK_STEPS_DEFAULT;
        t->budget_s = t->sub.time_budget_s ? t->sub.time_budget_s : BRO_TASK_BUDGET_S_DEFAULT;
        t->model = mc;
        explicit_bzero(&mc, sizeof(mc));
        t->messages = json_array();
        make_task_id(t->id, sizeof(t->id));
        char trace_name[PROTO_ID_MAX + 8];
        snprintf(trace_name, sizeof(trace_name), "%s.jsonl", t->id);
        t->trace_fd = openat(srv->traces_dirfd, trace_name,
                             O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0640);
        if (t->trace_fd < 0 || !t->messages) {
                char why[256];
                snprintf(why, sizeof(why), "the trace %s could not be created: %s", trace_name, strerror(errno));
                log_error("task %s: %s", t->id, why);
                bro_client_error(c, "internal", why, NULL, t->request_id);
                task_free(t);
                return;
        }
        /* Who may replay it, and what was asked: the first line. */
        json_t *inputs = json_array();
        const struct proto_input *in = t->sub.inputs.items;
        for (size_t i = 0; i < t->sub.inputs.n; i++)
                json_array_append_new(inputs,
                                      json_pack("{s:s, s:I}", "name", in[i].name, "bytes", (json_int_t)in[i].data.len));
        json_t *caps = json_array();
        for (size_t i = 0; i < t->sub.capabilities_approved.n; i++)
                json_array_append_new(caps, json_string(t->sub.capabilities_approved.items[i]));
        json_t *x = json_pack("{s:s, s:I, s:I, s:o, s:o, s:I, s:I, s:{s:s, s:s, s:b}}", "task_id", t->id, "uid",
                              (json_int_t)c->uid, "pid", (json_int_t)c->pid, "inputs", inputs, "capabilities_approved",
                              caps, "max_steps", (json_int_t)t->max_steps, "time_budget_s", (json_int_t)t->budget_s,
                              "model", "url", t->model.url, "name", t->model.model, "key", t->model.key[0] != '\0');
        report(t, "started", t->sub.task, NULL, NULL, x);
        log_info("%s: task %s started (%zu inputs, at most %u steps, %" PRIu64 " s, model %s at %s%s)", c->stream.name,
                 t->id, t->sub.inputs.n, t->max_steps, t->budget_s, t->model.model, t->model.url,
                 t->model.key[0] ? ", with the key" : "");
        int r = uv_timer_init(srv->loop, &t->budget);
        if (r == 0) {
                t->budget_init = true;
                t->budget.data = t;
                r = uv_timer_start(&t->budget, on_budget, t->budget_s * 1000, 0);
        }
        if (r < 0) {
                fail(t, TASK_INTERNAL, uv_strerror(r));
                return;
        }
        describe(t);
}

/* ---- cancel, client gone ---- */

static void cancel(struct bro_task *t, const char *who)
{
        if (t->state >= T_SAVING)
                return;
        char msg[256];
        POL_REASON(msg, sizeof(msg), TASK_CANCELLED, who);
        report(t, "cancelled", msg, NULL, NULL, NULL);
        task_finish(t, "cancelled", msg);
}

bool bro_task_cancel(struct bro_client *c, const struct proto_cancel *cc)
{
        for (struct bro_task *t = c->srv->tasks; t; t = t->next) {
                if (t->client == c && strcmp(t->id, cc->task_id) == 0) {
                        cancel(t, "the client");
                        return true;
                }
        }
        return false;
}

void bro_tasks_stop(struct bro_server *srv)
{
        struct bro_task *next;
        for (struct bro_task *t = srv->tasks; t; t = next) {
                next = t->next;
                cancel(t, "the broker, stopping");
        }
}

void bro_tasks_client_gone(struct bro_client *c)
{
        struct bro_task *next;
        for (struct bro_task *t = c->srv->tasks; t; t = next) {
                next = t->next;
                if (t->client != c)
                        continue;
                /* Its result is still stored; nothing more is sent. */
                c->n_inflight--;
                t->client = NULL;
                cancel(t, "the client's disconnection");
        }
}

/* ---- trace replay ---- */

static bool task_id_valid(const char *id)
{
        return bro_run_id_valid(id) && strncmp(id, "task-", 5) == 0;
}

/* A trace line back into the task_event it was sent as. */
static int line_to_event(json_t *o, const char *task_id, struct proto_msg *m, struct proto_event *ev)
{
        json_t *kind = json_object_get(o, "kind"), *step = json_object_get(o, "step");
        json_t *msg = json_object_get(o, "message"), *code = json_object_get(o, "code");
        json_t *e = json_object_get(o, "event");
        if (!json_is_string(kind) || !json_is_integer(step) || json_integer_value(step) < 0 ||
            (msg && !json_is_string(msg)) || (code && !json_is_string(code)))
                return -1;
        *m = (struct proto_msg){ .type = PROTO_TASK_EVENT };
        struct proto_task_event *te = &m->u.task_event;
        te->task_id = (char *)task_id;
        te->kind = (char *)json_string_value(kind);
        te->step = (uint64_t)json_integer_value(step);
        te->message = msg ? (char *)json_string_value(msg) : NULL;
        te->code = code ? (char *)json_string_value(code) : NULL;
        if (json_is_object(e)) {
                json_t *l = json_object_get(e, "layer"), *k = json_object_get(e, "kind"),
                       *tm = json_object_get(e, "t_ms");
                if (!json_is_string(l) || !json_is_string(k) || !json_is_integer(tm))
                        return -1;
                *ev = (struct proto_event){ .t_ms = (uint64_t)json_integer_value(tm),
                                            .layer = (char *)json_string_value(l),
                                            .kind = (char *)json_string_value(k) };
                const char *names[] = { "op", "reason", "message", "traceback" };
                char **slots[] = { &ev->op, &ev->reason, &ev->message, &ev->traceback };
                for (int i = 0; i < 4; i++) {
                        json_t *v = json_object_get(e, names[i]);
                        if (json_is_string(v))
                                *slots[i] = (char *)json_string_value(v);
                }
                json_t *ln = json_object_get(e, "line"), *col = json_object_get(e, "col");
                if (json_is_integer(ln))
                        ev->line = (struct proto_opt_int){ .set = true, .v = json_integer_value(ln) };
                if (json_is_integer(col))
                        ev->col = (struct proto_opt_int){ .set = true, .v = json_integer_value(col) };
                te->event = ev;
        }
        return 0;
}

void bro_trace_replay(struct bro_client *c, const struct proto_trace_request *req)
{
        struct bro_server *srv = c->srv;
        const char *rid = req->request_id;
        if (!task_id_valid(req->task_id)) {
                bro_client_error(c, "bad_request", "trace_request.task_id: not a task id (task-...)",
                                 "trace_request.task_id", rid);
                return;
        }
        char name[PROTO_ID_MAX + 8];
        snprintf(name, sizeof(name), "%s.jsonl", req->task_id);
        _cleanup_close_ int fd = openat(srv->traces_dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0) {
                char msg[256];
                snprintf(msg, sizeof(msg), "no trace of task %s here%s", req->task_id,
                         errno == ENOENT ? "" : ": cannot be opened");
                bro_client_error(c, errno == ENOENT ? "not_found" : "internal", msg, "trace_request.task_id", rid);
                return;
        }
        _cleanup_fclose_ FILE *f = fdopen(fd, "r");
        if (!f) {
                bro_client_error(c, "internal", "out of memory", NULL, rid);
                return;
        }
        fd = -EBADF;
        _cleanup_free_ char *buf = NULL;
        size_t cap = 0;
        ssize_t n;
        size_t lines = 0, total = 0;
        bool first = true;
        while ((n = getline(&buf, &cap, f)) > 0) {
                total += (size_t)n;
                if ((size_t)n > TRACE_LINE_MAX || total > TRACE_FILE_MAX) {
                        bro_client_error(c, "internal", "the trace is larger than a replay allows", NULL, rid);
                        return;
                }
                json_error_t je;
                _cleanup_(json_decrefp) json_t *o = json_loadb(buf, (size_t)n, JSON_REJECT_DUPLICATES, &je);
                struct proto_msg m;
                struct proto_event ev;
                if (!json_is_object(o) || line_to_event(o, req->task_id, &m, &ev) < 0) {
                        char msg[128];
                        snprintf(msg, sizeof(msg), "the trace's line %zu is malformed", lines + 1);
                        bro_client_error(c, "internal", msg, NULL, rid);
                        return;
                }
                if (first) {
                        /* Only the task's own user, or root, may read it. */
                        json_t *uid = json_object_get(o, "uid");
                        if (!json_is_integer(uid) || (c->uid != 0 && (uid_t)json_integer_value(uid) != c->uid)) {
                                bro_client_error(c, "forbidden", "this task's trace belongs to another user", NULL,
                                                 rid);
                                return;
                        }
                        first = false;
                }
                lines++;
                bro_client_send(c, &m);
        }
        struct proto_msg end = { .type = PROTO_TASK_EVENT };
        char msg[128];
        bool running = false;
        for (struct bro_task *t = srv->tasks; t; t = t->next)
                running |= strcmp(t->id, req->task_id) == 0;
        snprintf(msg, sizeof(msg), "%zu lines replayed%s", lines, running ? "; the task is still running" : "");
        end.u.task_event =
                (struct proto_task_event){ .task_id = (char *)req->task_id, .kind = "trace_end", .message = msg };
        bro_client_send(c, &end);
}
