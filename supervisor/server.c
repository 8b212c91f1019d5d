/* The supervisor's socket: who may connect (SO_PEERCRED), and the closed list of operations
 * a client may ask for. Anything else gets an error frame and the connection is closed. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "lib/list.h"
#include "lib/log.h"
#include "supervisor/supervisor.h"

void sup_client_send(struct sup_client *c, const struct proto_msg *m)
{
        (void)proto_stream_send(&c->stream, m);
}

void sup_client_error(struct sup_client *c, const char *code, const char *message, const char *field,
                      const char *request_id)
{
        struct proto_msg m = { .type = PROTO_ERROR };
        m.u.error.code = (char *)code;
        m.u.error.message = (char *)message;
        m.u.error.field = (field && *field) ? (char *)field : NULL;
        m.u.error.request_id = (char *)request_id;
        sup_client_send(c, &m);
}

static void on_client_closed(struct proto_stream *s)
{
        struct sup_client *c = s->data;
        sup_runs_client_gone(c->srv, c);
        sup_probe_client_gone(c->srv, c);
        LIST_REMOVE(c);
        c->srv->n_clients--;
        free(c);
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
                sup_run_start(c, &m->u.run_request);
                break;
        case PROTO_CANCEL:
                sup_run_cancel(c, &m->u.cancel);
                break;
        case PROTO_PROBE_REQUEST:
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
        if (proto_stream_init(srv->loop, &c->stream, on_client_msg, on_client_closed, c) < 0) {
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
        if (!allowed(srv, cred.uid)) {
                log_warn("%s: refused, uid not allowed", c->stream.name);
                proto_stream_fail(&c->stream, "forbidden", "This uid may not use the supervisor (see --allow-uid)",
                                  NULL, NULL);
                return;
        }
        if (srv->n_clients > SUP_MAX_CLIENTS || srv->stopping) {
                proto_stream_fail(&c->stream, "busy", "Too many connections", NULL, NULL);
                return;
        }
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
