/* The supervisor's socket: who may connect (SO_PEERCRED), and the closed list of operations
 * a client may ask for. Anything else gets an error frame and the connection is closed. Each
 * connection is bounded (proto/stream.c), per uid over all its connections (struct proto_user)
 * and, for connections, in all (supervisor.h says why that one is global). */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "lib/list.h"
#include "lib/log.h"
#include "policy/reasons.h"
#include "supervisor/run.h"
#include "supervisor/supervisor.h"

void sup_client_send(struct sup_client *c, const struct proto_msg *m)
{
        /* A probe's result goes to every waiter at once (probe.c): no one waits any more. */
        if (m->type == PROTO_PROBE_RESULT)
                for (struct sup_client *o = c->srv->clients; o; o = o->next)
                        o->probe_waiting = false;
        (void)proto_stream_send(&c->stream, m);
}

void sup_client_error(struct sup_client *c, const char *code, const char *message, const char *field,
                      const char *request_id)
{
        struct proto_msg m;
        proto_error_msg(&m, code, message, field, request_id);
        sup_client_send(c, &m);
}

/* ---- the bounds per uid (docs/operations.md "Bounds on clients"; supervisor.h says which is global, and why) ---- */


/* Live runs of c's (c_only) or of its uid's. */
static unsigned runs_of(const struct sup_client *c, bool c_only)
{
        unsigned n = 0;
        for (const struct sup_run *r = c->srv->runs; r; r = r->next)
                if (r->client && (r->client == c || (!c_only && r->client->user == c->user)))
                        n++;
        return n;
}

/* A connection with a run in flight, or waiting for a probe, is not idle. */
static bool client_busy(struct proto_stream *s)
{
        const struct sup_client *c = s->data;
        return c->probe_waiting || runs_of(c, true) > 0;
}

static void on_client_closed(struct proto_stream *s)
{
        struct sup_client *c = s->data;
        sup_runs_client_gone(c->srv, c);
        sup_probe_client_gone(c->srv, c);
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

/* --max-inflight-per-uid: below --max-runs it keeps run slots for the other uids; at
 * --max-runs (the default) it is the slots' own bound, which run.c says in its own words. */
static void run_request(struct sup_client *c, struct proto_run_request *req)
{
        /* The input fds that came with it: never a path opened for the client (run.c). */
        int fds[PROTO_INPUTS_MAX];
        size_t n_fds = proto_stream_take_fds(&c->stream, fds, PROTO_INPUTS_MAX);
        unsigned max = c->srv->cfg.bounds.max_inflight_per_uid;
        if (max < c->srv->cfg.max_runs && runs_of(c, false) >= max) {
                char msg[256];
                POL_REASON(msg, sizeof(msg), INFLIGHT_UID_CAP, "run_request", (unsigned)c->uid, max, "supervisor");
                log_info("%s: run_request refused: %s", c->stream.name, msg);
                sup_client_error(c, "busy", msg, NULL, req->request_id);
                for (size_t i = 0; i < n_fds; i++)
                        (void)close(fds[i]);
                return;
        }
        sup_run_start(c, req, fds, n_fds);
}

static void on_client_msg(struct proto_stream *s, struct proto_msg *m)
{
        struct sup_client *c = s->data;
        switch (m->type) {
        case PROTO_HELLO: {
                struct proto_msg r = { .type = PROTO_HELLO };
                r.u.hello.role = "supervisor";
                r.u.hello.software = "anvil-supervisor " ANVIL_VERSION;
                sup_client_send(c, &r);
                break;
        }
        case PROTO_RUN_REQUEST:
                run_request(c, &m->u.run_request);
                break;
        case PROTO_CANCEL:
                sup_run_cancel(c, &m->u.cancel);
                break;
        case PROTO_PROBE_REQUEST:
                c->probe_waiting = true;
                sup_probe_request(c, m->u.probe_request.request_id);
                break;
        default: {
                char msg[96];
                snprintf(msg, sizeof(msg), "message.type: '%s' is not accepted by the supervisor",
                         proto_type_name(m->type));
                proto_stream_fail(s, "bad_request", msg, "message.type", NULL);
        }
        }
        proto_msg_free(m);
}

static bool allowed(const struct sup_server *srv, uid_t uid)
{
        if (uid == 0)
                return true;
        for (unsigned i = 0; i < srv->cfg.n_allow; i++)
                if (srv->cfg.allow_uids[i] == uid)
                        return true;
        return false;
}

static void on_connection(uv_stream_t *listener, int status)
{
        struct sup_server *srv = listener->data;
        if (status < 0)
                return;
        struct sup_client *c = calloc(1, sizeof(*c));
        if (!c)
                return;
        c->srv = srv;
        if (proto_stream_init_fds(srv->loop, &c->stream, on_client_msg, on_client_closed, c) < 0) {
                free(c);
                return;
        }
        LIST_PREPEND(srv->clients, c);
        srv->n_clients++;
        struct ucred cred;
        if (proto_stream_accept(listener, &c->stream, &cred) < 0) {
                proto_stream_close(&c->stream);
                return;
        }
        c->uid = cred.uid;
        c->pid = cred.pid;
        const struct sup_bounds *b = &srv->cfg.bounds;
        if (!allowed(srv, cred.uid)) {
                log_warn("%s: refused, uid not allowed", c->stream.name);
                proto_stream_bound(&c->stream, &b->stream, NULL, NULL);
                proto_stream_fail(&c->stream, "forbidden", "This uid may not use the supervisor (see --allow-uid)",
                                  NULL, NULL);
                return;
        }
        struct proto_user *u = proto_user_get(&srv->users, cred.uid, srv->cfg.bounds.max_partial,
                                              srv->cfg.bounds.max_unread);
        if (!u) {
                proto_stream_close(&c->stream);
                return;
        }
        c->user = u;
        proto_stream_bound(&c->stream, &b->stream, &u->quota, client_busy);
        if (srv->stopping) {
                proto_stream_fail(&c->stream, "busy", "The supervisor is stopping", NULL, NULL);
                return;
        }
        if (!proto_user_admit(&c->stream, u, &srv->n_admitted, b->max_conns_per_uid, b->max_conns, "supervisor"))
                return;
        c->admitted = true;
        (void)proto_stream_start(&c->stream);
}

void sup_server_stop_when_idle(struct sup_server *srv)
{
        if (!srv->stopping || srv->n_runs > 0)
                return;
        for (struct sup_client *c = srv->clients; c; c = c->next)
                proto_stream_end(&c->stream);
}

int sup_server_listen(struct sup_server *srv, struct anvil_err *err)
{
        int r = proto_listen(srv->loop, &srv->listener, srv->cfg.listen_path, srv->cfg.socket_group, on_connection, err);
        srv->listener.data = srv;
        return r;
}
