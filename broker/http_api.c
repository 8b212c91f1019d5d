/* The web UI's JSON API (docs/web-api.md), in anvil-broker (unprivileged). Each request of a
 * session is turned into the frames a socket client would send, on a link of its own
 * (http_link.c) with the session's uid, and the frames that come back are turned into JSON
 * (proto_to_json, as `anvilctl ... --json` prints them): the broker's owner checks and bounds
 * hold as they hold on the socket, and no second way of reading the store exists. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "broker/http_int.h"
#include "broker/render.h"
#include "lib/cleanup.h"
#include "lib/log.h"
#include "policy/http_texts.h"
#include "proto/json.h"

#define STREAM_HIGH (1u << 20) /* an artifact's bytes waiting for the HTTP client: the link is not read beyond */

static void reply_error_frame(struct http_req *r, const struct proto_error *e)
{
        http_error(r, http_status_of(e->code), e->code, e->message);
}

static void end_link(struct http_req *r)
{
        if (r->link) {
                http_link_close(r->link);
                r->link = NULL;
        }
}

static void on_link_gone(void *owner)
{
        struct http_req *r = owner;
        r->link = NULL;
        if (r->ended)
                return;
        if (r->status) { /* answered: a stream begun and not ended is cut (queued or not yet) */
                if (!r->out_end) {
                        r->out_err = true;
                        http_stream_wake(r);
                }
                return;
        }
        char msg[128];
        http_error(r, 503, "unavailable", POL_HTTP_MSG(msg, sizeof(msg), GONE));
}

/* Sends m on a new link of r's; on_msg gets what comes back. False: r is answered. */
static bool ask(struct http_req *r, const struct proto_msg *m, void (*on_msg)(void *, struct proto_msg *))
{
        struct anvil_err err = ANVIL_ERR_INIT;
        r->link = http_link_open(r->h, r->uid, r, on_msg, on_link_gone, &err);
        if (!r->link) {
                http_error(r, 503, "busy", err.msg);
                return false;
        }
        if (http_link_send(r->link, m, NULL, 0) < 0) {
                end_link(r);
                char msg[128];
                http_error(r, 500, "internal", POL_HTTP_MSG(msg, sizeof(msg), SEND_FAILED));
                return false;
        }
        return true;
}

/* ---- answers that are one frame: probe, listings, shows ---- */

static void on_one(void *owner, struct proto_msg *m)
{
        struct http_req *r = owner;
        if (m->type == PROTO_ERROR) {
                reply_error_frame(r, &m->u.error);
        } else {
                json_t *j = proto_to_json(proto_schemas[m->type], &m->u);
                json_object_del(j, "v");
                json_object_del(j, "request_id");
                if (m->type == PROTO_RUN_RESULT) {
                        struct http_job *job = http_job_find(r->h, m->u.run_result.run_id, r->uid);
                        const char *src = job ? http_job_source(job) : NULL;
                        json_object_set_new(j, "source", src ? json_string(src) : json_null());
                }
                http_json(r, 200, j);
        }
        proto_msg_free(m);
        end_link(r);
}

/* A task: its result, then its trace (trace_request on the same link), gathered. */
static void on_task(void *owner, struct proto_msg *m)
{
        struct http_req *r = owner;
        if (!r->acc) {
                if (m->type != PROTO_TASK_RESULT) {
                        on_one(owner, m);
                        return;
                }
                r->acc = proto_to_json(proto_schemas[m->type], &m->u);
                json_object_del(r->acc, "v");
                json_object_set_new(r->acc, "trace", json_array());
                struct proto_msg t = { .type = PROTO_TRACE_REQUEST };
                t.u.trace_request.task_id = r->id;
                proto_msg_free(m);
                if (http_link_send(r->link, &t, NULL, 0) < 0) {
                        end_link(r);
                        http_json(r, 200, TAKE_PTR(r->acc));
                }
                return;
        }
        json_t *trace = json_object_get(r->acc, "trace");
        bool end = m->type != PROTO_TASK_EVENT || strcmp(m->u.task_event.kind, "trace_end") == 0;
        if (m->type == PROTO_TASK_EVENT && !end) {
                json_t *e = proto_to_json(proto_schemas[m->type], &m->u);
                json_object_del(e, "v");
                json_object_del(e, "type");
                json_array_append_new(trace, e);
        }
        proto_msg_free(m);
        if (end) {
                end_link(r);
                http_json(r, 200, TAKE_PTR(r->acc));
        }
}

/* ---- an artifact's bytes, streamed as they come ---- */

static void on_artifact(void *owner, struct proto_msg *m)
{
        struct http_req *r = owner;
        if (!r->status) { /* the first frame decides the status */
                if (m->type != PROTO_ARTIFACT_DATA && m->type != PROTO_ARTIFACT_END) {
                        if (m->type == PROTO_ERROR)
                                reply_error_frame(r, &m->u.error);
                        else
                                http_error(r, 500, "internal", "an unexpected answer from the broker");
                        proto_msg_free(m);
                        end_link(r);
                        return;
                }
                bool attach, sandbox;
                const char *type = bro_http_artifact_type(r->name, &attach, &sandbox);
                struct MHD_Response *resp = http_stream_response(r);
                if (!resp) {
                        http_error(r, 500, "internal", "out of memory");
                        proto_msg_free(m);
                        end_link(r);
                        return;
                }
                (void)MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, type);
                http_secure(resp, true);
                if (attach) {
                        /* the file's own name is not put in a header (it is the tool's): the
                         * page names the download (<a download>) */
                        (void)MHD_add_response_header(resp, "Content-Disposition", "attachment");
                }
                if (sandbox) { /* no script, no origin, even if a browser renders it as a document */
                        (void)MHD_del_response_header(resp, "Content-Security-Policy", HTTP_CSP);
                        (void)MHD_add_response_header(resp, "Content-Security-Policy", HTTP_CSP "; sandbox");
                }
                http_answer(r, 200, resp);
        }
        if (m->type == PROTO_ARTIFACT_DATA) {
                if (http_stream_append(r, (const char *)m->u.artifact_data.data.data, m->u.artifact_data.data.len) < 0)
                        r->out_err = true;
                if (r->out_len - r->out_off >= STREAM_HIGH && r->link) {
                        (void)uv_read_stop((uv_stream_t *)&r->link->stream.pipe); /* until the client takes it */
                        r->reading_paused = true;
                }
        } else if (m->type == PROTO_ARTIFACT_END) {
                r->out_end = true;
                end_link(r);
        } else {
                r->out_err = true; /* an error after bytes were sent: the answer is cut */
                end_link(r);
        }
        proto_msg_free(m);
        http_stream_wake(r);
}

/* ---- the events of a run or task not started from this broker's page: what is stored ---- */

static void sse_event(struct http_req *r, const char *type, json_t *data)
{
        size_t size;
        char *ev = http_sse_frame(type, data, &size);
        if (ev)
                (void)http_stream_append(r, ev, strlen(ev));
        free(ev);
}

static void on_stored_events(void *owner, struct proto_msg *m)
{
        struct http_req *r = owner;
        if (!r->status) {
                if (m->type == PROTO_ERROR) {
                        reply_error_frame(r, &m->u.error);
                        proto_msg_free(m);
                        end_link(r);
                        return;
                }
                struct MHD_Response *resp = http_stream_response(r);
                (void)MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "text/event-stream");
                http_secure(resp, true);
                http_answer(r, 200, resp);
        }
        json_t *j = m->type == PROTO_ERROR ? NULL : proto_to_json(proto_schemas[m->type], &m->u);
        json_object_del(j, "v");
        bool end = true;
        if (m->type == PROTO_TASK_EVENT && strcmp(m->u.task_event.kind, "trace_end") != 0) {
                sse_event(r, "task_event", j);
                end = false;
        } else if (m->type == PROTO_TASK_EVENT) {
                /* the trace replayed: then the stored result */
                json_decref(j);
                struct proto_msg s = { .type = PROTO_SHOW_REQUEST };
                s.u.show_request.id = r->id;
                end = http_link_send(r->link, &s, NULL, 0) < 0;
        } else if (m->type == PROTO_RUN_RESULT || m->type == PROTO_TASK_RESULT) {
                sse_event(r, "result", j);
        } else if (m->type == PROTO_ERROR) {
                sse_event(r, "error", json_pack("{s:s,s:s}", "code", m->u.error.code, "message", m->u.error.message));
        } else {
                json_decref(j);
        }
        proto_msg_free(m);
        if (end) {
                r->out_end = true;
                end_link(r);
        }
        http_stream_wake(r);
}

/* ---- files of web_dir/breakit ---- */

static void serve_breakit(struct http_req *r, const char *name, const char *type)
{
        char path[300], msg[256];
        snprintf(path, sizeof(path), "breakit/%s", name);
        int fd = bro_open_beneath(r->h->web_dirfd, path);
        struct stat st;
        if (fd >= 0 && (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size > (16 << 20))) {
                (void)close(fd);
                fd = -1;
        }
        if (fd < 0) {
                http_error(r, 404, "not_found", POL_HTTP_MSG(msg, sizeof(msg), NOT_FOUND));
                return;
        }
        struct MHD_Response *resp = MHD_create_response_from_fd((uint64_t)st.st_size, fd);
        (void)MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, type);
        http_secure(resp, true);
        http_answer(r, 200, resp);
}

static void me(struct http_req *r)
{
        struct passwd pw, *res = NULL;
        char buf[4096];
        (void)getpwuid_r(r->sess->uid, &pw, buf, sizeof(buf), &res);
        http_json(r, 200,
                  json_pack("{s:I,s:o}", "uid", (json_int_t)r->sess->uid, "user",
                            res ? json_string(res->pw_name) : json_null()));
}

static void folder(struct http_req *r)
{
        json_t *files = json_array();
        for (size_t i = 0; i < r->sess->n_files; i++)
                json_array_append_new(files, json_pack("{s:s,s:I}", "name", r->sess->names[i], "bytes",
                                                       (json_int_t)r->sess->sizes[i]));
        http_json(r, 200, json_pack("{s:o}", "files", files));
}

static void cancel(struct http_req *r, bool task)
{
        struct http_job *j = http_job_find(r->h, r->id, r->sess->uid);
        char msg[256];
        if (!j) {
                http_error(r, 404, "not_found", POL_HTTP_MSG(msg, sizeof(msg), NO_JOB, task ? "task" : "run", r->id));
                return;
        }
        int rc = http_job_cancel(j);
        if (rc == -EALREADY) {
                http_error(r, 409, "conflict", POL_HTTP_MSG(msg, sizeof(msg), JOB_ENDED, task ? "task" : "run", r->id));
                return;
        }
        http_json(r, rc < 0 ? 500 : 202, json_pack("{s:s,s:b}", "id", r->id, "cancelling", rc == 0));
}

static json_t *parse_body(struct http_req *r)
{
        char msg[512];
        json_error_t je;
        json_t *j = r->body ? json_loadb(r->body, r->body_len, JSON_REJECT_DUPLICATES, &je) : NULL;
        if (!json_is_object(j)) {
                json_decref(j);
                http_error(r, 400, "bad_request",
                           POL_HTTP_MSG(msg, sizeof(msg), BAD_JSON, r->body ? "not a JSON object" : "empty"));
                return NULL;
        }
        return j;
}

void http_api(struct http_req *r, const struct http_route *rt)
{
        struct proto_msg m = { 0 };
        r->kind = rt->kind;
        r->id = rt->id[0] ? strdup(rt->id) : NULL;
        r->name = rt->name ? strdup(rt->name) : NULL;
        switch (rt->kind) {
        case HR_ME: me(r); return;
        case HR_FOLDER: folder(r); return;
        case HR_BREAKIT: serve_breakit(r, "attempts.json", "application/json"); return;
        case HR_BREAKIT_FILE: serve_breakit(r, r->name, "text/plain; charset=utf-8"); return;
        case HR_PROBE:
                m.type = PROTO_PROBE_REQUEST;
                (void)ask(r, &m, on_one);
                return;
        case HR_RUNS:
        case HR_TASKS:
                if (rt->post) {
                        json_t *body = parse_body(r);
                        if (body && rt->kind == HR_RUNS)
                                http_job_start_run(r, body);
                        else if (body)
                                http_job_start_task(r, body);
                        return;
                }
                m.type = PROTO_LIST_REQUEST;
                m.u.list_request.kind = rt->kind == HR_RUNS ? "runs" : "tasks";
                (void)ask(r, &m, on_one);
                return;
        case HR_RUN:
        case HR_TASK:
                m.type = PROTO_SHOW_REQUEST;
                m.u.show_request.id = r->id;
                (void)ask(r, &m, rt->kind == HR_TASK ? on_task : on_one);
                return;
        case HR_RUN_ARTIFACT:
        case HR_TASK_ARTIFACT:
                m.type = PROTO_ARTIFACT_REQUEST;
                m.u.artifact_request.id = r->id;
                m.u.artifact_request.path = r->name;
                (void)ask(r, &m, on_artifact);
                return;
        case HR_RUN_CANCEL:
        case HR_TASK_CANCEL: cancel(r, rt->kind == HR_TASK_CANCEL); return;
        case HR_RUN_EVENTS:
        case HR_TASK_EVENTS: {
                struct http_job *j = http_job_find(r->h, r->id, r->sess->uid);
                if (j) {
                        http_job_follow(r, j);
                        return;
                }
                if (rt->kind == HR_TASK_EVENTS) {
                        m.type = PROTO_TRACE_REQUEST;
                        m.u.trace_request.task_id = r->id;
                } else {
                        m.type = PROTO_SHOW_REQUEST;
                        m.u.show_request.id = r->id;
                }
                (void)ask(r, &m, on_stored_events);
                return;
        }
        default: {
                char msg[64];
                http_error(r, 404, "not_found", POL_HTTP_MSG(msg, sizeof(msg), NOT_FOUND));
        }
        }
}

void http_req_gone(struct http_req *r)
{
        end_link(r);
        http_job_unstart(r);
        if (r->job)
                http_job_unfollow(r);
}
