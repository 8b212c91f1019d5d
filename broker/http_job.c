/* Runs and tasks started from the web UI (POST /api/runs, POST /api/tasks) and their event
 * streams (GET /api/.../events), in anvil-broker (unprivileged). A job is one link
 * (http_link.c) that carries its run_request or task_submit, built from the page's JSON, and
 * stays open while it runs: closing a connection is how the broker cancels what is in flight
 * on it, so the job, not the POST, holds the link. Everything that comes back is kept as
 * server-sent events, bounded (HTTP_JOB_EVENTS_MAX), so that a follower that comes late gets
 * what happened so far and then the rest as it happens; the POST is answered once the run's
 * or task's id is known (its first frame). The newest HTTP_JOBS_MAX jobs are kept once ended
 * (and a run's source with it, for GET /api/runs/ID); none outlives the broker. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "broker/http_int.h"
#include "lib/cleanup.h"
#include "lib/list.h"
#include "lib/log.h"
#include "policy/http_texts.h"
#include "proto/json.h"

struct http_job {
        struct bro_http *h;
        bool task;
        char id[PROTO_ID_MAX + 1];
        uid_t uid;
        struct http_link *link;
        char *source;
        struct http_req *starter; /* the POST, until the id is known */
        char **events;
        size_t n_events, cap_events, bytes;
        bool dropped, ended;
        struct http_req *followers;
        struct http_job *next, **pprev;
};

static void job_free(struct http_job *j)
{
        LIST_REMOVE(j);
        j->h->n_jobs--;
        j->h->jobs_bytes -= j->bytes + (j->source ? strlen(j->source) : 0);
        while (j->followers) {
                struct http_req *r = j->followers;
                http_job_unfollow(r);
                r->out_end = true;
                http_stream_wake(r);
        }
        if (j->link)
                http_link_close(j->link);
        for (size_t i = 0; i < j->n_events; i++)
                free(j->events[i]);
        free(j->events);
        free(j->source);
        free(j);
}

/* The oldest ended jobs go beyond HTTP_JOBS_MAX, or HTTP_JOBS_BYTES_MAX. */
static void jobs_trim(struct bro_http *h)
{
        while (h->n_jobs > HTTP_JOBS_MAX || h->jobs_bytes > HTTP_JOBS_BYTES_MAX) {
                struct http_job *old = NULL;
                for (struct http_job *j = h->jobs; j; j = j->next)
                        if (j->ended)
                                old = j; /* prepended: the last ended is the oldest */
                if (!old)
                        return;
                job_free(old);
        }
}

void http_jobs_free(struct bro_http *h)
{
        while (h->jobs)
                job_free(h->jobs);
}

struct http_job *http_job_find(struct bro_http *h, const char *id, uid_t uid)
{
        for (struct http_job *j = h->jobs; j; j = j->next)
                if (j->id[0] && strcmp(j->id, id) == 0)
                        return uid == 0 || j->uid == uid ? j : NULL;
        return NULL;
}

const char *http_job_source(const struct http_job *j)
{
        return j->source;
}

/* ---- events ---- */

static void job_event(struct http_job *j, const char *type, json_t *data)
{
        size_t n = 0;
        char *ev = http_sse_frame(type, data, &n);
        bool last = strcmp(type, "result") == 0 || strcmp(type, "error") == 0;
        if (ev && j->bytes + n > HTTP_JOB_EVENTS_MAX && !last) {
                free(ev);
                if (!j->dropped) {
                        j->dropped = true;
                        job_event(j, "dropped", json_pack("{s:I}", "kept_bytes", (json_int_t)j->bytes));
                }
                return;
        }
        if (ev && j->n_events == j->cap_events) {
                size_t cap = j->cap_events ? j->cap_events * 2 : 64;
                char **ne = realloc(j->events, cap * sizeof(*ne));
                if (ne)
                        j->events = ne, j->cap_events = cap;
        }
        if (ev && j->n_events < j->cap_events) {
                j->events[j->n_events++] = ev;
                j->bytes += n;
                j->h->jobs_bytes += n;
        } else {
                free(ev);
        }
        for (struct http_req *r = j->followers; r; r = r->next)
                http_stream_wake(r);
}

/* A follower's copy is a window of its job's events (PULL_MAX at a time), not all of them:
 * many followers of one long job hold little more than the job itself. */
#define PULL_MAX (256u << 10)

void http_job_pull(struct http_req *r)
{
        struct http_job *j = r->job;
        while (r->job_next < j->n_events && r->out_len - r->out_off < PULL_MAX) {
                const char *ev = j->events[r->job_next++];
                if (http_stream_append(r, ev, strlen(ev)) < 0) {
                        r->out_err = true;
                        return;
                }
        }
        if (j->ended && r->job_next == j->n_events)
                r->out_end = true;
}

void http_job_follow(struct http_req *r, struct http_job *j)
{
        struct MHD_Response *resp = http_stream_response(r);
        if (!resp) {
                http_error(r, 500, "internal", "out of memory");
                return;
        }
        (void)MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "text/event-stream");
        http_secure(resp, true);
        r->job = j;
        r->job_next = 0;
        LIST_PREPEND(j->followers, r);
        http_answer(r, 200, resp);
}

void http_job_unfollow(struct http_req *r)
{
        if (!r->job)
                return;
        LIST_REMOVE(r);
        r->job = NULL;
}

void http_job_unstart(struct http_req *r)
{
        if (r->starting)
                r->starting->starter = NULL;
        r->starting = NULL;
}

int http_job_cancel(struct http_job *j)
{
        if (j->ended || !j->link)
                return -EALREADY;
        struct proto_msg m = { .type = PROTO_CANCEL };
        if (j->task)
                m.u.cancel.task_id = j->id;
        else
                m.u.cancel.run_id = j->id;
        return http_link_send(j->link, &m, NULL, 0) < 0 ? -EIO : 0;
}

/* ---- what comes back on the job's link ---- */

static void job_started(struct http_job *j, const char *id)
{
        if (j->id[0] || !id)
                return;
        snprintf(j->id, sizeof(j->id), "%s", id);
        log_info("http: %s %s started from the web UI by uid %u", j->task ? "task" : "run", j->id, (unsigned)j->uid);
        if (j->starter) {
                struct http_req *r = TAKE_PTR(j->starter);
                r->starting = NULL;
                http_json(r, 202, json_pack("{s:s}", "id", j->id));
        }
}

static void job_ended(struct http_job *j)
{
        j->ended = true;
        if (j->link) {
                http_link_close(j->link);
                j->link = NULL;
        }
        for (struct http_req *r = j->followers; r; r = r->next)
                http_stream_wake(r);
        jobs_trim(j->h);
}

static void on_job_msg(void *owner, struct proto_msg *m)
{
        struct http_job *j = owner;
        json_t *data = m->type == PROTO_ERROR ? NULL : proto_to_json(proto_schemas[m->type], &m->u);
        json_object_del(data, "v");
        json_object_del(data, "request_id");
        switch (m->type) {
        case PROTO_RUN_EVENT:
                job_started(j, m->u.run_event.run_id);
                job_event(j, "trace", json_incref(json_object_get(data, "event")));
                break;
        case PROTO_RUN_OUTPUT:
                job_started(j, m->u.run_output.run_id);
                job_event(j, "output",
                          json_pack("{s:s,s:s}", "stream", m->u.run_output.stream, "text", m->u.run_output.text));
                break;
        case PROTO_TASK_EVENT:
                job_started(j, m->u.task_event.task_id);
                job_event(j, "task_event", json_incref(data));
                break;
        case PROTO_RUN_RESULT:
        case PROTO_TASK_RESULT:
                job_started(j, m->type == PROTO_RUN_RESULT ? m->u.run_result.run_id : m->u.task_result.task_id);
                job_event(j, "result", json_incref(data));
                job_ended(j);
                break;
        case PROTO_ERROR:
                if (j->starter) {
                        struct http_req *r = TAKE_PTR(j->starter);
                        r->starting = NULL;
                        http_error(r, http_status_of(m->u.error.code), m->u.error.code, m->u.error.message);
                        json_decref(data);
                        proto_msg_free(m);
                        job_free(j); /* never started: nothing to keep */
                        return;
                }
                job_event(j, "error", json_pack("{s:s,s:s}", "code", m->u.error.code, "message", m->u.error.message));
                job_ended(j);
                break;
        default: break;
        }
        json_decref(data);
        proto_msg_free(m);
}

static void on_job_gone(void *owner)
{
        struct http_job *j = owner;
        j->link = NULL;
        if (j->starter) {
                struct http_req *r = TAKE_PTR(j->starter);
                r->starting = NULL;
                char msg[128];
                http_error(r, 503, "unavailable", POL_HTTP_MSG(msg, sizeof(msg), GONE));
                job_free(j);
                return;
        }
        if (!j->ended) {
                char msg[128];
                job_event(j, "error",
                          json_pack("{s:s,s:s}", "code", "unavailable", "message",
                                    POL_HTTP_MSG(msg, sizeof(msg), GONE_RESULT)));
                job_ended(j);
        }
}

/* ---- the page's JSON into a request ---- */

static int b64_val(char c)
{
        if (c >= 'A' && c <= 'Z')
                return c - 'A';
        if (c >= 'a' && c <= 'z')
                return c - 'a' + 26;
        if (c >= '0' && c <= '9')
                return c - '0' + 52;
        return c == '+' || c == '-' ? 62 : c == '/' || c == '_' ? 63 : -1;
}

/* Standard or URL-safe base64, padded or not; -EINVAL on any other byte. */
static int b64_decode(const char *s, struct proto_bytes *out)
{
        size_t n = strlen(s);
        while (n && s[n - 1] == '=')
                n--;
        uint8_t *d = malloc(n * 3 / 4 + 1);
        if (!d)
                return -ENOMEM;
        size_t o = 0;
        uint32_t acc = 0;
        int bits = 0;
        for (size_t i = 0; i < n; i++) {
                int v = b64_val(s[i]);
                if (v < 0) {
                        free(d);
                        return -EINVAL;
                }
                acc = acc << 6 | (uint32_t)v;
                bits += 6;
                if (bits >= 8) {
                        bits -= 8;
                        d[o++] = (uint8_t)(acc >> bits);
                }
        }
        out->data = d;
        out->len = o;
        return 0;
}

static bool keys_only(json_t *o, const char *const *keys, char *bad, size_t size)
{
        const char *k;
        json_t *v;
        json_object_foreach(o, k, v)
        {
                bool ok = false;
                for (size_t i = 0; keys[i]; i++)
                        ok |= strcmp(k, keys[i]) == 0;
                if (!ok) {
                        POL_HTTP_MSG(bad, size, FIELD_UNKNOWN, k);
                        return false;
                }
        }
        return true;
}

/* The folder file of the session named name: its index, or -1. */
static int folder_file(const struct http_session *s, const char *name)
{
        for (size_t i = 0; i < s->n_files; i++)
                if (strcmp(s->names[i], name) == 0)
                        return (int)i;
        return -1;
}

/* body.inputs into a (of struct proto_input): bytes, or (runs) an fd of the folder passed on
 * with the request, (tasks) its bytes read from that fd. 0, or -1 with why. */
static int inputs_of(const struct http_session *s, json_t *list, bool task, struct proto_array *a, int *fds,
                     size_t *n_fds, char *why, size_t size)
{
        size_t i;
        json_t *in;
        if (!list)
                return 0;
        if (!json_is_array(list) || json_array_size(list) > PROTO_INPUTS_MAX) {
                POL_HTTP_MSG(why, size, INPUTS_LIST, (unsigned)PROTO_INPUTS_MAX);
                return -1;
        }
        if (json_array_size(list) && !(a->items = calloc(json_array_size(list), sizeof(struct proto_input))))
                return snprintf(why, size, "out of memory"), -1;
        json_array_foreach(list, i, in)
        {
                static const char *const keys[] = { "name", "data_b64", "from_folder", NULL };
                struct proto_input *p = (struct proto_input *)a->items + i;
                json_t *name = json_object_get(in, "name"), *b64 = json_object_get(in, "data_b64"),
                       *from = json_object_get(in, "from_folder");
                a->n = i + 1;
                if (!json_is_object(in) || !keys_only(in, keys, why, size))
                        return json_is_object(in) ? -1
                                                  : (POL_HTTP_MSG(why, size, INPUT_SHAPE, (unsigned long long)i), -1);
                if (!json_is_string(name) || !json_is_string(b64) == !json_is_string(from)) {
                        POL_HTTP_MSG(why, size, INPUT_SHAPE, (unsigned long long)i);
                        return -1;
                }
                p->name = strdup(json_string_value(name));
                if (b64) {
                        if (b64_decode(json_string_value(b64), &p->data) < 0) {
                                POL_HTTP_MSG(why, size, INPUT_B64, (unsigned long long)i);
                                return -1;
                        }
                        continue;
                }
                int k = folder_file(s, json_string_value(from));
                if (k < 0) {
                        POL_HTTP_MSG(why, size, NO_FOLDER_FILE, json_string_value(from));
                        return -1;
                }
                if (!task) {
                        p->fd = (struct proto_opt_int){ .set = true, .v = (int64_t)*n_fds };
                        fds[(*n_fds)++] = s->fds[k];
                        continue;
                }
                /* A task's inputs are bytes (docs/protocol.md): read from the user's fd. */
                size_t want = s->sizes[k] < HTTP_FOLDER_FILE_MAX ? s->sizes[k] : HTTP_FOLDER_FILE_MAX;
                p->data.data = malloc(want + 1);
                ssize_t got = p->data.data ? pread(s->fds[k], p->data.data, want, 0) : -1;
                if (got < 0 || s->sizes[k] > HTTP_FOLDER_FILE_MAX) {
                        if (got < 0)
                                POL_HTTP_MSG(why, size, INPUT_UNREADABLE, (unsigned long long)i,
                                             json_string_value(from));
                        else
                                POL_HTTP_MSG(why, size, INPUT_TOO_BIG, (unsigned long long)i, json_string_value(from),
                                             (unsigned)(HTTP_FOLDER_FILE_MAX >> 20));
                        return -1;
                }
                p->data.len = (size_t)got;
        }
        return 0;
}

static void job_start(struct http_req *r, json_t *body, bool task)
{
        static const char *const run_keys[] = { "source", "inputs", "caps", "limits", "args", NULL };
        static const char *const task_keys[] = { "task",      "inputs",        "capabilities_approved",
                                                 "max_steps", "time_budget_s", NULL };
        char why[512], msg[600];
        int fds[PROTO_INPUTS_MAX];
        size_t n_fds = 0;
        struct proto_msg m = { .type = task ? PROTO_TASK_SUBMIT : PROTO_RUN_REQUEST };
        _cleanup_(json_decrefp) json_t *shape = json_object();
        if (!keys_only(body, task ? task_keys : run_keys, why, sizeof(why)))
                goto bad;
        /* Into the message's own shape, then decoded by its schema; the broker's strict
         * decoder then checks every bound again when the link's frame reaches it. */
        if (task) {
                json_object_set(shape, "task", json_object_get(body, "task"));
                json_object_set(shape, "capabilities_approved", json_object_get(body, "capabilities_approved"));
                json_object_set(shape, "max_steps", json_object_get(body, "max_steps"));
                json_object_set(shape, "time_budget_s", json_object_get(body, "time_budget_s"));
        } else {
                json_object_set(shape, "source", json_object_get(body, "source"));
                json_object_set(shape, "capabilities_requested", json_object_get(body, "caps"));
                json_object_set(shape, "capabilities_approved", json_object_get(body, "caps"));
                json_object_set(shape, "limits", json_object_get(body, "limits"));
                json_object_set(shape, "args", json_object_get(body, "args"));
                json_object_set_new(shape, "tool_name", json_string("web.py"));
                json_object_set_new(shape, "stream_output", json_true());
        }
        if (proto_from_json(proto_schemas[m.type], shape, &m.u) < 0) {
                if (task)
                        POL_HTTP_MSG(why, sizeof(why), TASK_FIELDS);
                else
                        POL_HTTP_MSG(why, sizeof(why), RUN_FIELDS);
                goto bad;
        }
        if (inputs_of(r->sess, json_object_get(body, "inputs"), task,
                      task ? &m.u.task_submit.inputs : &m.u.run_request.inputs, fds, &n_fds, why, sizeof(why)) < 0)
                goto bad;
        struct http_job *j = calloc(1, sizeof(*j));
        if (!j || (!task && !(j->source = strdup(m.u.run_request.source)))) {
                free(j);
                proto_msg_free(&m);
                json_decref(body);
                http_error(r, 500, "internal", "out of memory");
                return;
        }
        j->h = r->h;
        r->h->jobs_bytes += j->source ? strlen(j->source) : 0;
        j->task = task;
        j->uid = r->sess->uid;
        j->starter = r;
        r->starting = j;
        LIST_PREPEND(r->h->jobs, j);
        r->h->n_jobs++;
        struct anvil_err err = ANVIL_ERR_INIT;
        j->link = http_link_open(r->h, j->uid, j, on_job_msg, on_job_gone, &err);
        if (!j->link || http_link_send(j->link, &m, fds, n_fds) < 0) {
                j->starter = NULL;
                r->starting = NULL;
                job_free(j);
                if (!err.msg[0])
                        POL_HTTP_MSG(err.msg, sizeof(err.msg), SEND_FAILED);
                http_error(r, 503, "busy", err.msg);
        }
        proto_msg_free(&m);
        json_decref(body);
        jobs_trim(r->h);
        return;
bad:
        proto_msg_free(&m);
        json_decref(body);
        http_error(r, 400, "bad_request", POL_HTTP_MSG(msg, sizeof(msg), BAD_JSON, why));
}

void http_job_start_run(struct http_req *r, json_t *body)
{
        job_start(r, body, false);
}

void http_job_start_task(struct http_req *r, json_t *body)
{
        job_start(r, body, true);
}
