/* The broker's socket: clients (anvilctl, and the web UI's requests, each on a socketpair
 * adopted as a client with its session's uid: bro_client_adopt) and the list of messages they may
 * send. A request for the sandbox is handed to relay.c; anything a client may not send gets
 * an error frame and the connection is closed. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "broker/agent.h"
#include "broker/broker.h"
#include "broker/http.h"
#include "lib/list.h"
#include "lib/cleanup.h"
#include "lib/log.h"
#include "policy/cap_scope.h"
#include "policy/reasons.h"

void bro_client_send(struct bro_client *c, const struct proto_msg *m)
{
        if (c->stream.closing || c->stream.paused)
                return; /* going away: nothing more reaches it */
        (void)proto_stream_send(&c->stream, m);
}

void bro_client_error(struct bro_client *c, const char *code, const char *message, const char *field,
                      const char *request_id)
{
        struct proto_msg m;
        proto_error_msg(&m, code, message, field, request_id);
        bro_client_send(c, &m);
}

/* ---- the bounds per uid (docs/operations.md "Bounds on clients"; broker.h says which is global, and why) ---- */

int bro_client_inflight_check(struct bro_client *c, const char *what, char *msg, size_t size)
{
        if (c->n_inflight >= BRO_MAX_INFLIGHT) {
                snprintf(msg, size, "%s: at most %d requests may be in flight on one connection", what,
                         BRO_MAX_INFLIGHT);
                return -EBUSY;
        }
        unsigned n = 0, max = c->srv->cfg.bounds.max_inflight_per_uid;
        for (struct bro_client *o = c->srv->clients; o; o = o->next)
                if (o->user == c->user)
                        n += o->n_inflight;
        if (n >= max) {
                POL_REASON(msg, size, INFLIGHT_UID_CAP, what, (unsigned)c->uid, max, "broker");
                return -EBUSY;
        }
        return 0;
}

/* A connection with a request in flight (a run, a probe, a task) waits for it: not idle. */
static bool client_busy(struct proto_stream *s)
{
        const struct bro_client *c = s->data;
        return c->n_inflight > 0;
}

static void on_client_closed(struct proto_stream *s)
{
        struct bro_client *c = s->data;
        bro_relays_client_gone(c);
        bro_tasks_client_gone(c);
        bro_serve_client_gone(c);
        LIST_REMOVE(c);
        c->srv->n_clients--;
        if (c->admitted) {
                c->srv->n_admitted--;
                c->user->n_conns--;
        }
        if (c->user)
                proto_user_put(c->user);
        free(c);
}

/* A capability with hosts is read strictly (policy/cap_scope.h); a plain name is the
 * supervisor's to deny, as it always was. (A client's egress fd was refused before this, in
 * sandbox_request.) */
static int run_request_check(struct bro_client *c, const struct proto_run_request *req)
{
        char msg[512];
        const struct proto_strv *lists[] = { &req->capabilities_requested, &req->capabilities_approved };
        static const char *const fields[] = { "run_request.capabilities_requested",
                                              "run_request.capabilities_approved" };
        for (size_t l = 0; l < 2; l++)
                for (size_t i = 0; i < lists[l]->n; i++)
                        if (strchr(lists[l]->items[i], '=') &&
                            pol_cap_check(fields[l], lists[l]->items[i], msg, sizeof(msg)) < 0) {
                                bro_client_error(c, "bad_request", msg, fields[l], req->request_id);
                                return -EINVAL;
                        }
        return 0;
}

/* Requests for the sandbox: busy beyond BRO_MAX_INFLIGHT or --max-inflight-per-uid, else
 * relayed. Takes over *m. */
static void sandbox_request(struct bro_client *c, struct proto_msg *m, const char *request_id)
{
        /* A run_request's input fds (the stream would refuse them on any other message). */
        int fds[PROTO_INPUTS_MAX];
        size_t n_fds = m->type == PROTO_RUN_REQUEST ? proto_stream_take_fds(&c->stream, fds, PROTO_INPUTS_MAX) : 0;
        char msg[512];
        if (c->srv->stopping) {
                bro_client_error(c, "busy", "The broker is stopping", NULL, request_id);
                goto refused;
        }
        /* The run's egress socket is the broker's to give (it opens the run at anvil-egress,
         * docs/egress.md): one from a client would be a socket of the client's choosing bound
         * into the jail, and a blast radius claiming the proxy. */
        if (m->type == PROTO_RUN_REQUEST && m->u.run_request.egress.set) {
                bro_client_error(c, "bad_request", POL_REASON(msg, sizeof(msg), EGRESS_FROM_CLIENT),
                                 "run_request.egress", request_id);
                goto refused;
        }
        if (bro_client_inflight_check(c, proto_type_name(m->type), msg, sizeof(msg)) < 0) {
                log_info("%s: %s refused, %u requests in flight: %s", c->stream.name, proto_type_name(m->type),
                         c->n_inflight, msg);
                bro_client_error(c, "busy", msg, NULL, request_id);
                goto refused;
        }
        if (m->type == PROTO_RUN_REQUEST && run_request_check(c, &m->u.run_request) < 0)
                goto refused;
        bro_relay_start(c, m, fds, n_fds);
        return;
refused:
        for (size_t i = 0; i < n_fds; i++)
                (void)close(fds[i]);
        proto_msg_free(m);
}

static void on_client_msg(struct proto_stream *s, struct proto_msg *m)
{
        struct bro_client *c = s->data;
        switch (m->type) {
        case PROTO_HELLO: {
                struct proto_msg r = { .type = PROTO_HELLO };
                r.u.hello.role = "broker";
                r.u.hello.software = "anvil-broker " ANVIL_VERSION;
                bro_client_send(c, &r);
                break;
        }
        case PROTO_RUN_REQUEST: sandbox_request(c, m, m->u.run_request.request_id); return; /* m taken over */
        case PROTO_PROBE_REQUEST: sandbox_request(c, m, m->u.probe_request.request_id); return;
        case PROTO_CANCEL:
                if (m->u.cancel.task_id) {
                        if (!bro_task_cancel(c, &m->u.cancel))
                                bro_client_error(
                                        c, "bad_request",
                                        "cancel.task_id: no task in flight on this connection has this task_id",
                                        "cancel.task_id", m->u.cancel.request_id);
                } else {
                        bro_relay_cancel(c, &m->u.cancel);
                }
                break;
        case PROTO_TASK_SUBMIT: bro_task_submit(c, m); return; /* m taken over */
        case PROTO_TRACE_REQUEST: bro_trace_replay(c, &m->u.trace_request); break;
        case PROTO_ARTIFACT_REQUEST: bro_serve_artifact(c, &m->u.artifact_request); break;
        case PROTO_LIST_REQUEST: bro_serve_list(c, &m->u.list_request); break;
        case PROTO_SHOW_REQUEST: bro_serve_show(c, &m->u.show_request); break;
        case PROTO_UI_LOGIN: {
                int fds[PROTO_INPUTS_MAX];
                size_t n_fds = proto_stream_take_fds(&c->stream, fds, PROTO_INPUTS_MAX);
                bro_http_login(c, m, fds, n_fds); /* takes the fds */
                break;
        }
        default: {
                /* Frames only a server sends (run_event, run_result, error...) and the runner's
                 * internal ones: a client that sends them is confused or hostile. */
                char msg[96];
                snprintf(msg, sizeof(msg), "message.type: '%s' is not accepted by the broker",
                         proto_type_name(m->type));
                log_warn("%s: %s, closing", c->stream.name, msg);
                proto_stream_fail(s, "bad_request", msg, "message.type", NULL);
        }
        }
        proto_msg_free(m);
}

static struct bro_client *client_new(struct bro_server *srv)
{
        struct bro_client *c = calloc(1, sizeof(*c));
        if (!c)
                return NULL;
        c->srv = srv;
        if (proto_stream_init_fds(srv->loop, &c->stream, on_client_msg, on_client_closed, c) < 0) {
                free(c);
                return NULL;
        }
        LIST_PREPEND(srv->clients, c);
        srv->n_clients++;
        return c;
}

/* From here on a client is the same whoever it came from: bounded, admitted, read. 0, or <0
 * (it is closed). */
static int client_admit(struct bro_client *c)
{
        struct bro_server *srv = c->srv;
        struct proto_user *u =
                proto_user_get(&srv->users, c->uid, srv->cfg.bounds.max_partial, srv->cfg.bounds.max_unread);
        if (!u) {
                proto_stream_close(&c->stream);
                return -ENOMEM;
        }
        c->user = u;
        /* Bounded from here on: a refused connection that leaves its error frame unread is not
         * held for it. */
        const struct bro_bounds *b = &srv->cfg.bounds;
        proto_stream_bound(&c->stream, &b->stream, &u->quota, client_busy);
        if (srv->stopping) {
                proto_stream_fail(&c->stream, "busy", "The broker is stopping", NULL, NULL);
                return -ESHUTDOWN;
        }
        if (!proto_user_admit(&c->stream, u, &srv->n_admitted, b->max_conns_per_uid, b->max_conns, "broker"))
                return -EBUSY;
        c->admitted = true;
        int r = proto_stream_start(&c->stream);
        if (r < 0) {
                log_warn("%s: Failed to read: %s", c->stream.name, uv_strerror(r));
                proto_stream_close(&c->stream);
        }
        return r;
}

static void on_connection(uv_stream_t *listener, int status)
{
        struct bro_server *srv = listener->data;
        if (status < 0) {
                log_warn("accept on %s: %s", srv->cfg.listen_path, uv_strerror(status));
                return;
        }
        struct bro_client *c = client_new(srv);
        if (!c)
                return; /* libuv retries: the connection waits in the backlog */
        struct ucred cred;
        if (proto_stream_accept(listener, &c->stream, &cred) < 0) {
                proto_stream_close(&c->stream);
                return;
        }
        c->uid = cred.uid;
        c->pid = cred.pid;
        (void)client_admit(c);
}

int bro_client_adopt(struct bro_server *srv, int fd, uid_t uid, struct anvil_err *err)
{
        struct bro_client *c = client_new(srv);
        if (!c) {
                (void)close(fd);
                return anvil_err_set(err, ENOMEM, "out of memory");
        }
        if (proto_stream_open(&c->stream, fd, err) < 0) {
                (void)close(fd);
                proto_stream_close(&c->stream);
                return -EIO;
        }
        c->uid = uid;
        c->pid = 0;
        snprintf(c->stream.name, sizeof(c->stream.name), "web uid %u", (unsigned)uid);
        int r = client_admit(c);
        return r < 0 ? anvil_err_set(err, -r, "not admitted") : 0; /* the caller says why (http_link.c) */
}

int bro_server_listen(struct bro_server *srv, struct anvil_err *err)
{
        int fd = srv->listen_fd, r;
        srv->listener.data = srv;
        if (fd == 0)
                return proto_listen(srv->loop, &srv->listener, srv->cfg.listen_path, srv->cfg.socket_group,
                                    on_connection, err);
        /* Handed over by systemd (sdlisten.c): its owner, group and mode are the socket unit's,
         * and the path is systemd's to remove, not ours (bro_server_unlink). */
        srv->listen_activated = true;
        log_info("%s: the socket passed by systemd (LISTEN_FDS)", srv->cfg.listen_path);
        if ((r = uv_pipe_init(srv->loop, &srv->listener, 0)) < 0 || (r = uv_pipe_open(&srv->listener, fd)) < 0 ||
            (r = uv_listen((uv_stream_t *)&srv->listener, 64, on_connection)) < 0)
                return anvil_err_set(err, -r, "Failed to listen on the socket systemd passed (%s): %s",
                                     srv->cfg.listen_path, uv_strerror(r));
        return 0;
}

void bro_server_unlink(struct bro_server *srv)
{
        if (!srv->listen_activated)
                (void)unlink(srv->cfg.listen_path);
}

void bro_server_stop(struct bro_server *srv)
{
        srv->stopping = true;
        if (!uv_is_closing((uv_handle_t *)&srv->listener))
                uv_close((uv_handle_t *)&srv->listener, NULL);
        bro_tasks_stop(srv);
        /* A client with nothing in flight is closed. One with a run (cancelled by relay.c's
         * bro_stop_begin) or a task (cancelled above, its result being written) is read no
         * more and ended once its last result is sent (bro_stop_poke). */
        for (struct bro_client *c = srv->clients; c; c = c->next) {
                if (c->n_inflight > 0)
                        (void)uv_read_stop((uv_stream_t *)&c->stream.pipe);
                else
                        proto_stream_close(&c->stream);
        }
}
