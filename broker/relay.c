/* One supervisor connection per client request (main.c, B1-B7): connect asynchronously,
 * send the request, relay what comes back, store run results, end the request exactly once.
 *
 * Every frame that arrives on a relay's connection belongs to its one request, so nothing
 * needs to be matched by id on the way back; the supervisor's frames are decoded strictly and
 * re-encoded for the client, never passed through as raw bytes. */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "broker/broker.h"
#include "broker/render.h"
#include "lib/list.h"
#include "lib/fd.h"
#include "lib/log.h"
#include "lib/startup.h"
#include "policy/cap_scope.h"
#include "policy/reasons.h"
#include "proto/names.h"

/* ---- ending a request: exactly one log line, one last frame ---- */

static void relay_end(struct bro_relay *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void relay_end(struct bro_relay *r, const char *fmt, ...)
{
        if (r->ended)
                return;
        r->ended = true;
        if (r->client) {
                r->client->n_inflight--;
                if (r->srv->stopping)
                        bro_stop_poke(r->srv); /* after its last frame, queued by the caller */
        }
        char what[512];
        va_list ap;
        va_start(ap, fmt);
        (void)vsnprintf(what, sizeof(what), fmt, ap);
        va_end(ap);
        log_info("request #%" PRIu64 ": ended after %" PRIu64 " ms: %s", r->seq, now_ms() - r->t0, what);
}

static void connect_supervisor(struct bro_relay *r);
static void finish_result(struct bro_relay *r, struct proto_msg *m);

static void relay_forward(struct bro_relay *r, const struct proto_msg *m)
{
        if (r->owner.data) {
                if (m->type == PROTO_RUN_EVENT && r->owner.event)
                        r->owner.event(r->owner.data, m);
                if (m->type == PROTO_RUN_OUTPUT && r->owner.output)
                        r->owner.output(r->owner.data, m);
                return;
        }
        if (r->client)
                bro_client_send(r->client, m);
}

static void relay_error(struct bro_relay *r, const char *code, const char *message)
{
        if (r->owner.data) {
                void *data = r->owner.data;
                r->owner.data = NULL; /* the request ends here for its owner */
                r->owner.error(data, code, message);
                return;
        }
        if (r->client)
                bro_client_error(r->client, code, message, NULL, r->request_id);
}

static void relay_maybe_free(struct bro_relay *r)
{
        if (!r->stream_closed || r->store_pending)
                return;
        LIST_REMOVE(r);
        bro_egress_free(r->egress);
        free(r->net_scope);
        if (r->req_held)
                proto_msg_free(&r->req);
        for (size_t i = 0; i < r->n_fds; i++)
                (void)close(r->fds[i]);
        free(r->request_id);
        free(r->cancel_request_id);
        free(r);
}

/* ---- frames from the supervisor ---- */

/* A frame the broker cannot decode, or one that has no business on this connection: the
 * supervisor is not behaving as the broker was built for, and the request cannot go on. */
static void relay_malformed(struct bro_relay *r, const char *why)
{
        char msg[512];
        log_error("request #%" PRIu64 ": malformed frame from the supervisor: %s", r->seq, why);
        snprintf(msg, sizeof(msg), "The broker could not understand the supervisor's reply: %s", why);
        relay_error(r, "internal", msg);
        relay_end(r, "internal: malformed frame from the supervisor");
        proto_stream_close(&r->stream);
}

static void learn_run_id(struct bro_relay *r, const char *run_id)
{
        if (r->run_id[0] || !run_id)
                return;
        snprintf(r->run_id, sizeof(r->run_id), "%s", run_id); /* the decoder caps it at PROTO_ID_MAX */
}

static void send_cancel(struct bro_relay *r, const char *request_id)
{
        struct proto_msg m = { .type = PROTO_CANCEL };
        m.u.cancel.request_id = (char *)request_id;
        m.u.cancel.run_id = r->run_id;
        r->cancel_sent = true;
        log_info("request #%" PRIu64 ": cancel of run %s %s the supervisor", r->seq, r->run_id,
                 r->stop_cancelled ? "sent to (the broker is stopping)" : "forwarded to");
        (void)proto_stream_send(&r->stream, &m);
}

/* B5: the result reaches the client only once it is stored (or could not be), so a client
 * that reads DIR/results/<run_id>.json after its run_result finds it. Takes over *m. */
static void deliver_result(struct bro_relay *r, struct proto_msg *m)
{
        const struct proto_run_result *res = &m->u.run_result;
        relay_end(r, "run_result %s%s%s, run %s", res->status, res->killed ? ", " : "", res->killed ? res->killed : "",
                  res->run_id);
        if (r->owner.data) {
                void *data = r->owner.data;
                r->owner.data = NULL;
                r->owner.result(data, m); /* taken over */
                return;
        }
        relay_forward(r, m);
        proto_msg_free(m);
}

void bro_relay_stored(struct bro_relay *r, struct proto_msg *m)
{
        r->store_pending = false;
        deliver_result(r, m);
        relay_maybe_free(r);
}

/* A result that is not stored is hashed here, on the loop (only when the store cannot take it). */
static void hash_inline(struct bro_relay *r, struct proto_msg *m)
{
        char failed[PROTO_PATH_MAX + 128];
        if (bro_hash_artifacts(&m->u.run_result, failed, sizeof(failed)) < 0 || failed[0])
                log_error("request #%" PRIu64 ": run %s: an artifact is not hashed: %s", r->seq, m->u.run_result.run_id,
                          failed[0] ? failed : "out of memory");
}

/* ---- network: the broker's word on it (issue 17; docs/egress.md) ----
 *
 * The broker decides network, with its hosts: granted = requested ∩ approved ∩ the server's
 * policy (policy/cap_scope.h, --network, --egress), then the proxy's run opened (egress.c).
 * The supervisor is sent names alone (a capability's hosts are the proxy's to enforce, not
 * root's to parse), network approved only when the broker granted it and an egress fd goes
 * with it; it still decides and records every capability, and its events about network are
 * given the broker's words here: the hosts granted, or why not. */

static bool strv_has(const struct proto_strv *v, const char *s)
{
        for (size_t i = 0; i < v->n; i++)
                if (strcmp(v->items[i], s) == 0)
                        return true;
        return false;
}

/* Each capability cut to its name, once; network dropped unless keep_network. In place. */
static void names_only(struct proto_strv *v, bool keep_network)
{
        size_t k = 0;
        for (size_t i = 0; i < v->n; i++) {
                char *eq = strchr(v->items[i], '=');
                if (eq)
                        *eq = '\0';
                struct proto_strv seen = { v->items, k };
                if ((!keep_network && strcmp(v->items[i], "network") == 0) || strv_has(&seen, v->items[i])) {
                        free(v->items[i]);
                        continue;
                }
                v->items[k++] = v->items[i];
        }
        v->n = k;
}

static void net_denied(struct bro_relay *r, enum pol_why why)
{
        r->net_why = why;
        names_only(&r->req.u.run_request.capabilities_approved, false);
        log_info("request #%" PRIu64 ": network denied: %s", r->seq, pol_why_text(why));
}

static void net_decide(struct bro_relay *r)
{
        struct proto_run_request *req = &r->req.u.run_request;
        const struct proto_strv *rq = &req->capabilities_requested, *ap = &req->capabilities_approved;
        r->net_asked = pol_net_listed((const char *const *)rq->items, rq->n);
        enum pol_why why = POL_WHY_CAP_NOT_APPROVED; /* out of memory: nothing granted */
        if (r->net_asked && (r->net_scope = malloc(sizeof(*r->net_scope))))
                why = pol_net_resolve((const char *const *)rq->items, rq->n, (const char *const *)ap->items, ap->n,
                                      !r->srv->cfg.network_off, r->net_scope);
        if (why == POL_WHY_NONE && !r->srv->cfg.egress_path)
                why = POL_WHY_CAP_EGRESS_NONE;
        names_only(&req->capabilities_requested, true);
        if (!r->net_asked || why != POL_WHY_NONE)
                net_denied(r, why);
        else
                names_only(&req->capabilities_approved, true);
}

void bro_relay_egress_opened(struct bro_relay *r, struct bro_egress *e, int fd, enum pol_why why)
{
        if (fd >= 0 && r->n_fds >= PROTO_INPUTS_MAX) { /* no room beside the inputs' fds */
                (void)close(fd);
                fd = -1;
                why = POL_WHY_CAP_EGRESS_REFUSED;
        }
        if (fd < 0) {
                bro_egress_free(e);
                r->egress = NULL;
                net_denied(r, why);
        } else {
                r->req.u.run_request.egress = (struct proto_opt_int){ .set = true, .v = (int64_t)r->n_fds };
                r->fds[r->n_fds++] = fd;
        }
        if (!r->stream.closing && r->req_held)
                connect_supervisor(r); /* B2, now */
}

/* The supervisor's event about network, in the broker's words. */
static void net_rewrite(struct bro_relay *r, struct proto_event *ev)
{
        if (!r->net_asked || !ev->layer || strcmp(ev->layer, "policy") != 0 || !ev->op ||
            strcmp(ev->op, "network") != 0)
                return;
        char msg[PROTO_EV_MESSAGE_MAX], hosts[PROTO_EV_MESSAGE_MAX - 64];
        char *m = NULL, *why = NULL;
        if (ev->kind && strcmp(ev->kind, "capability_granted") == 0 && r->net_why == POL_WHY_NONE && r->net_scope)
                m = strdup(POL_REASON(msg, sizeof(msg), CAP_GRANTED_HOSTS,
                                      pol_scope_text(r->net_scope, hosts, sizeof(hosts))));
        else if (ev->kind && strcmp(ev->kind, "capability_denied") == 0 && r->net_why != POL_WHY_NONE) {
                m = strdup(POL_REASON(msg, sizeof(msg), CAP_DENIED, "network", pol_why_text(r->net_why)));
                why = strdup(pol_why_text(r->net_why));
                if (why) {
                        free(ev->reason);
                        ev->reason = why;
                }
        }
        if (m) {
                free(ev->message);
                ev->message = m;
        }
}

void bro_relay_egress_event(struct bro_relay *r, const struct proto_event *ev)
{
        if (!r->run_id[0])
                return; /* kept for the result; no frame names a run before the supervisor did */
        struct proto_msg m = { .type = PROTO_RUN_EVENT };
        m.u.run_event.request_id = r->request_id;
        m.u.run_event.run_id = r->run_id;
        m.u.run_event.event = *ev;
        relay_forward(r, &m);
}

uv_loop_t *bro_relay_loop(struct bro_relay *r)
{
        return r->srv->loop;
}

static void free_connections(struct proto_array *a)
{
        for (size_t i = 0; i < a->n; i++) {
                struct proto_connection *c = (struct proto_connection *)a->items + i;
                free(c->host);
                free(c->address);
        }
        free(a->items);
        a->items = NULL;
        a->n = 0;
}

/* An event of the broker's in the result, if there is room. */
static void add_event(struct proto_run_result *res, const char *layer, const char *kind, const char *reason,
                      const char *message)
{
        struct proto_event *ev = res->events.n < PROTO_EVENTS_MAX ? proto_array_push(&res->events, sizeof(*ev)) : NULL;
        if (!ev)
                return;
        ev->t_ms = res->wall_ms;
        ev->layer = strdup(layer);
        ev->kind = strdup(kind);
        ev->reason = strdup(reason);
        ev->message = strdup(message);
}

/* The result's network, the broker's: its events reworded, the proxy's events after the
 * supervisor's (two places kept for the notes below), its connections, the hosts. */
static void net_result(struct bro_relay *r, struct proto_run_result *res)
{
        if (!r->net_asked)
                return;
        struct proto_event *evs = res->events.items;
        for (size_t i = 0; i < res->events.n; i++)
                net_rewrite(r, &evs[i]);
        if (strv_has(&res->capabilities.granted, "network") && r->net_scope && r->net_why == POL_WHY_NONE) {
                /* beside the supervisor's facts' line (render.c: granted, only through the proxy) */
                for (size_t i = 0; i < r->net_scope->n_hosts + r->net_scope->n_ranges; i++)
                        (void)proto_strv_push(&res->blast_radius.hosts,
                                              i < r->net_scope->n_hosts
                                                      ? r->net_scope->hosts[i].text
                                                      : r->net_scope->ranges[i - r->net_scope->n_hosts].text);
        }
        if (!r->egress)
                return;
        struct bro_egress_record *rec = bro_egress_record(r->egress);
        uint64_t dropped = rec->dropped;
        struct proto_event *pe = rec->events.items;
        for (size_t i = 0; i < rec->events.n; i++) {
                struct proto_event *ev =
                        res->events.n < PROTO_EVENTS_MAX - 2 ? proto_array_push(&res->events, sizeof(*ev)) : NULL;
                if (!ev) {
                        dropped++;
                        continue;
                }
                *ev = pe[i];
                memset(&pe[i], 0, sizeof(pe[i])); /* moved */
        }
        char msg[256];
        if (rec->gone)
                add_event(res, "proxy", "blocked", "proxy_gone", POL_REASON(msg, sizeof(msg), PROXY_GONE));
        if (dropped)
                add_event(res, "proxy", "events_dropped", "events_dropped",
                          POL_REASON(msg, sizeof(msg), EVENTS_DROPPED, (unsigned long long)dropped));
        res->connections = rec->conns;
        memset(&rec->conns, 0, sizeof(rec->conns)); /* moved */
}

void bro_relay_egress_done(struct bro_relay *r, struct bro_egress *e)
{
        (void)e;
        struct proto_msg *m = r->held_result;
        r->held_result = NULL;
        r->store_pending = false;
        if (!m)
                return;
        finish_result(r, m); /* net_result takes what it needs first */
        free(m);
        bro_egress_free(r->egress);
        r->egress = NULL;
        relay_maybe_free(r);
}

static void on_run_result(struct bro_relay *r, struct proto_msg *m)
{
        struct proto_run_result *res = &m->u.run_result;
        learn_run_id(r, res->run_id);
        r->done = true;
        proto_stream_close(&r->stream); /* nothing else comes for this request */
        /* not_stored, connections and hosts are the broker's word alone. */
        free(res->not_stored);
        res->not_stored = NULL;
        free_connections(&res->connections);
        proto_strv_free(&res->blast_radius.hosts);
        /* E4: the proxy's run closed, and its last events in, before the result is stored. */
        if (r->egress && (r->held_result = malloc(sizeof(*m)))) {
                *r->held_result = *m;
                r->store_pending = true; /* r is kept until the result is stored */
                if (bro_egress_close(r->egress))
                        return;
                bro_relay_egress_done(r, r->egress);
                return;
        }
        finish_result(r, m);
}

static void finish_result(struct bro_relay *r, struct proto_msg *m)
{
        struct anvil_err err = ANVIL_ERR_INIT;
        struct proto_run_result *res = &m->u.run_result;
        const char *run_id = res->run_id;
        net_result(r, res);
        /* The supervisor killed the run because the broker's stop asked it to: that is why it
         * was killed (its events still record the supervisor's cancel). A run that ended on
         * its own before the cancel came keeps its own status. */
        char why[64];
        if (r->stop_cancelled && res->killed && strcmp(res->killed, pol_reason_format(POL_KILLED_CANCELLED)) == 0) {
                char *k = strdup(POL_REASON(why, sizeof(why), KILLED_BROKER_STOPPING));
                if (k) {
                        free(res->killed);
                        res->killed = k;
                }
        }
        if (!bro_run_id_valid(run_id)) {
                log_error("request #%" PRIu64 ": run_result not stored: run_id '%.64s' is not of [0-9A-Za-z_-]{1,64}",
                          r->seq, run_id);
                bro_not_stored(&res->not_stored, "results", "<run_id>.json", EINVAL);
                hash_inline(r, m);
                deliver_result(r, m);
                return;
        }
        if (bro_store_result(r, m, &err) < 0) {
                log_error("request #%" PRIu64 ": run %s not stored: %s", r->seq, run_id, err.msg);
                char name[PROTO_ID_MAX + 8];
                snprintf(name, sizeof(name), "%s.json", run_id);
                bro_not_stored(&res->not_stored, "results", name, err.code ? err.code : EIO);
                hash_inline(r, m);
                deliver_result(r, m);
        }
}

/* Takes over *m. */
static void on_supervisor_msg(struct bro_relay *r, struct proto_msg *m)
{
        char why[96];
        /* The supervisor's facts become the prose clients see, before anything else reads it. */
        if (bro_render(m) < 0)
                log_error("request #%" PRIu64 ": out of memory writing a %s's prose", r->seq, proto_type_name(m->type));
        switch (m->type) {
        case PROTO_RUN_EVENT:
                if (r->kind != PROTO_RUN_REQUEST)
                        break;
                learn_run_id(r, m->u.run_event.run_id);
                net_rewrite(r, &m->u.run_event.event);
                relay_forward(r, m);
                if (r->cancel_pending) {
                        r->cancel_pending = false;
                        send_cancel(r, r->cancel_request_id);
                }
                proto_msg_free(m);
                return;
        case PROTO_RUN_OUTPUT:
                /* Only for a run whose client (or task: its owner's output hook) asked for it
                 * (run_request.stream_output). */
                if (r->kind != PROTO_RUN_REQUEST || !r->stream_output)
                        break;
                learn_run_id(r, m->u.run_output.run_id);
                relay_forward(r, m);
                proto_msg_free(m);
                return;
        case PROTO_RUN_RESULT:
                if (r->kind != PROTO_RUN_REQUEST)
                        break;
                on_run_result(r, m);
                return;
        case PROTO_PROBE_RESULT:
                if (r->kind != PROTO_PROBE_REQUEST)
                        break;
                r->done = true;
                relay_forward(r, m);
                relay_end(r, "probe_result, tier %s", m->u.probe_result.tier ? m->u.probe_result.tier : "?");
                proto_stream_close(&r->stream);
                proto_msg_free(m);
                return;
        case PROTO_ERROR:
                r->done = true;
                /* The supervisor's refusals of a whole connection (busy: one of its bounds,
                 * "forbidden", "bad_frame") carry no request_id; on this connection they can only
                 * be about this request, and the client needs the id to match them. */
                if (!m->u.error.request_id && r->request_id)
                        m->u.error.request_id = strdup(r->request_id);
                relay_end(r, "error %s: %s", m->u.error.code, m->u.error.message);
                if (r->owner.data) /* a task's run: its owner's error hook ends the step */
                        relay_error(r, m->u.error.code, m->u.error.message);
                else
                        relay_forward(r, m);
                proto_stream_close(&r->stream);
                proto_msg_free(m);
                return;
        default: break;
        }
        snprintf(why, sizeof(why), "a %s frame in reply to a %s", proto_type_name(m->type), proto_type_name(r->kind));
        proto_msg_free(m);
        relay_malformed(r, why);
}

static void on_supervisor_frame(struct proto_stream *s, struct proto_msg *m)
{
        on_supervisor_msg(s->data, m);
}

/* B6: a malformed frame from the supervisor is not answered with an error frame (it is the
 * server); the request ends with "internal" for the client. */
static void on_supervisor_bad(struct proto_stream *s, const char *code, const char *message)
{
        (void)code;
        relay_malformed(s->data, message);
}

static void on_supervisor_closed(struct proto_stream *s)
{
        struct bro_relay *r = s->data;
        r->stream_closed = true;
        if (!r->done && !r->ended) {
                char msg[128];
                snprintf(msg, sizeof(msg), "The supervisor closed the connection before the %s ended",
                         r->kind == PROTO_RUN_REQUEST ? "run" : "probe");
                relay_error(r, "supervisor_gone", msg);
                relay_end(r, "supervisor_gone");
        }
        relay_maybe_free(r);
}

static void on_connected(uv_connect_t *req, int status);

/* B2: a supervisor connection of the run's own. */
static void connect_supervisor(struct bro_relay *r)
{
        r->connect.data = r;
        /* libuv 1.44 reports every failure, even an immediate one, through on_connected. */
        uv_pipe_connect(&r->connect, &r->stream.pipe, r->srv->cfg.supervisor_path, on_connected);
}

/* B2 -> B3: connected (or failed: unavailable), the request re-encoded and sent. */
static void on_connected(uv_connect_t *req, int status)
{
        struct bro_relay *r = req->data;
        if (status == UV_ECANCELED || r->stream.closing)
                return; /* closed while connecting: the client has gone, or the broker stops */
        if (status < 0) {
                char msg[STARTUP_MSG_MAX];
                startup_supervisor_unreachable(msg, sizeof(msg), r->srv->cfg.supervisor_path, -status);
                relay_error(r, "unavailable", msg);
                relay_end(r, "unavailable: %s", uv_strerror(status));
                proto_stream_close(&r->stream);
                return;
        }
        int e = proto_stream_start(&r->stream);
        if (e < 0) {
                char msg[512];
                snprintf(msg, sizeof(msg), "Cannot read from the supervisor at %s: %s", r->srv->cfg.supervisor_path,
                         uv_strerror(e));
                relay_error(r, "unavailable", msg);
                relay_end(r, "unavailable: %s", uv_strerror(e));
                proto_stream_close(&r->stream);
                return;
        }
        /* Re-encoded from the decoded message: nothing the decoder did not check goes on. The
         * input fds go with its first bytes, in the order they came (the supervisor checks
         * them as strictly as if the client had sent them to it), and are closed here. */
        int sent = proto_stream_send_fds(&r->stream, &r->req, r->fds, r->n_fds);
        for (size_t i = 0; i < r->n_fds; i++)
                (void)close(r->fds[i]);
        r->n_fds = 0;
        proto_msg_free(&r->req);
        r->req_held = false;
        if (sent < 0) {
                relay_error(r, "internal", "The broker could not send the request to the supervisor");
                relay_end(r, "internal: sending to the supervisor failed (%s)", uv_strerror(sent));
                proto_stream_close(&r->stream);
        }
}

/* ---- requests from the client ---- */

static struct bro_relay *relay_new(struct bro_server *srv, struct bro_client *c, struct proto_msg *m,
                                   const struct bro_relay_owner *o, struct anvil_err *err);

void bro_relay_start(struct bro_client *c, struct proto_msg *m, const int *fds, size_t n_fds)
{
        struct anvil_err err = ANVIL_ERR_INIT;
        struct bro_relay *r = relay_new(c->srv, c, m, NULL, &err);
        for (size_t i = 0; i < n_fds; i++) {
                if (r && i < PROTO_INPUTS_MAX)
                        r->fds[r->n_fds++] = fds[i];
                else
                        (void)close(fds[i]);
        }
}

struct bro_relay *bro_relay_start_owned(struct bro_server *srv, struct proto_msg *m, const struct bro_relay_owner *o,
                                        struct anvil_err *err)
{
        return relay_new(srv, NULL, m, o, err);
}

void bro_relay_abandon(struct bro_relay *r)
{
        r->owner.data = NULL;
        relay_end(r, "abandoned, its task has ended");
        proto_stream_close(&r->stream);
}

/* F6: the broker passes a request on re-encoded, with every field written out (the
 * encoder's way), which may be larger than what the client sent: a client's frame within the
 * limit, with its optional fields left out, can come out over it. Whether it fits is known
 * only by encoding it, so it is encoded here, before anything starts: a request that does not
 * fit is the client's bad_request, which says so, never an internal error when it is sent. */
static int relay_fits(const struct proto_msg *m, char *msg, size_t size)
{
        uint8_t *buf;
        size_t len;
        struct anvil_err err = ANVIL_ERR_INIT;
        int r = proto_encode(m, &buf, &len, &err);
        if (r == 0) {
                free(buf);
                return 0;
        }
        if (r == -EMSGSIZE)
                POL_REASON(msg, size, RELAY_TOO_LARGE, err.msg);
        else
                snprintf(msg, size, "%s", err.msg);
        return r;
}

/* B1: a client's run_request or probe_request taken: within the connection's bound, and refused if
 * it would not fit in a frame once re-encoded (relay_fits).
 * A failure is said to the client (c), and in err for a task's run (c NULL): -EMSGSIZE for a
 * request too large (the task's inputs and variables), anything else the broker's own. */
static struct bro_relay *relay_new(struct bro_server *srv, struct bro_client *c, struct proto_msg *m,
                                   const struct bro_relay_owner *o, struct anvil_err *err)
{
        const char *rid = m->type == PROTO_RUN_REQUEST ? m->u.run_request.request_id : m->u.probe_request.request_id;
        char why[512];
        int fit = relay_fits(m, why, sizeof(why));
        if (fit < 0) {
                log_info("%s: %s refused: %s", c ? c->stream.name : "a task", proto_type_name(m->type), why);
                if (c)
                        bro_client_error(c, fit == -EMSGSIZE ? "bad_request" : "internal", why, NULL, rid);
                anvil_err_set(err, -fit, "%s", why);
                proto_msg_free(m);
                return NULL;
        }
        struct bro_relay *r = calloc(1, sizeof(*r));
        if (!r || (rid && !(r->request_id = strdup(rid)))) {
                anvil_err_set(err, ENOMEM, "Out of memory");
                if (c)
                        bro_client_error(c, "internal", "Out of memory", NULL, rid);
                free(r);
                proto_msg_free(m);
                return NULL;
        }
        int e = proto_stream_init(srv->loop, &r->stream, on_supervisor_frame, on_supervisor_closed, r);
        if (e < 0) {
                char msg[128];
                snprintf(msg, sizeof(msg), "Failed to create a connection to the supervisor: %s", uv_strerror(e));
                anvil_err_set(err, -e, "%s", msg);
                if (c)
                        bro_client_error(c, "internal", msg, NULL, rid);
                free(r->request_id);
                free(r);
                proto_msg_free(m);
                return NULL;
        }
        r->stream.on_bad = on_supervisor_bad;
        r->srv = srv;
        r->client = c;
        if (o)
                r->owner = *o;
        r->kind = m->type;
        if (c)
                r->uid = c->uid;
        if (o) {
                r->uid = o->uid;
                snprintf(r->task_id, sizeof(r->task_id), "%s", o->task_id ? o->task_id : "");
                snprintf(r->tool, sizeof(r->tool), "%s", o->tool ? o->tool : "");
        }
        if (m->type == PROTO_RUN_REQUEST && m->u.run_request.tool_name) {
                /* The broker's to keep, not the supervisor's to see. */
                if (c)
                        snprintf(r->tool, sizeof(r->tool), "%s", m->u.run_request.tool_name);
                free(m->u.run_request.tool_name);
                m->u.run_request.tool_name = NULL;
        }
        r->stream_output = m->type == PROTO_RUN_REQUEST && m->u.run_request.stream_output;
        r->req = *m; /* taken over */
        r->req_held = true;
        r->seq = ++srv->next_seq;
        r->t0 = now_ms();
        if (c) {
                LIST_PREPEND(c->relays, r);
                c->n_inflight++;
        } else
                LIST_PREPEND(srv->owned, r);
        snprintf(r->stream.name, sizeof(r->stream.name), "supervisor, request #%" PRIu64, r->seq);
        log_info("request #%" PRIu64 ": %s%s%s%s from %s, started", r->seq, proto_type_name(r->kind),
                 r->request_id ? " '" : "", r->request_id ? r->request_id : "", r->request_id ? "'" : "",
                 c ? c->stream.name : "a task");
        if (r->kind == PROTO_RUN_REQUEST)
                net_decide(r);
        if (r->net_asked && r->net_why == POL_WHY_NONE) {
                /* E1: the proxy's run first; the request is sent once it is open (or not). */
                char id[PROTO_ID_MAX + 1];
                enum pol_why net;
                snprintf(id, sizeof(id), "broker-%ld-%" PRIu64, (long)getpid(), r->seq);
                if ((r->egress = bro_egress_open(r, srv->cfg.egress_path, id, r->net_scope, &net)))
                        return r;
                net_denied(r, net);
        }
        connect_supervisor(r);
        return r;
}

void bro_relay_cancel(struct bro_client *c, const struct proto_cancel *cancel)
{
        struct bro_relay *found = NULL;
        for (struct bro_relay *r = c->relays; r && !found; r = r->next) {
                if (r->ended || r->done)
                        continue;
                if (cancel->run_id
                            ? (r->run_id[0] && strcmp(r->run_id, cancel->run_id) == 0)
                            : (cancel->request_id && r->request_id && strcmp(r->request_id, cancel->request_id) == 0))
                        found = r;
        }
        if (!found) {
                const char *msg =
                        cancel->run_id ? "cancel.run_id: no request in flight on this connection has this run_id"
                                       : "cancel.run_id: no request in flight on this connection has this request_id "
                                         "(give run_id or request_id)";
                bro_client_error(c, "bad_request", msg, "cancel.run_id", cancel->request_id);
                return;
        }
        if (found->run_id[0]) {
                send_cancel(found, cancel->request_id);
                return;
        }
        /* The supervisor cancels by run_id, which it names in its first frame about the run:
         * the cancel waits for it (B4). */
        char *rid = NULL;
        if (cancel->request_id && !(rid = strdup(cancel->request_id))) {
                bro_client_error(c, "internal", "Out of memory", NULL, cancel->request_id);
                return;
        }
        free(found->cancel_request_id);
        found->cancel_request_id = rid;
        found->cancel_pending = true;
        log_info("request #%" PRIu64 ": cancel requested, waiting for the supervisor to name the run", found->seq);
}

/* B7 */
void bro_relays_client_gone(struct bro_client *c)
{
        struct bro_relay *r;
        while ((r = c->relays)) {
                LIST_REMOVE(r);
                r->client = NULL;
                relay_end(r, "abandoned, the client has gone%s",
                          r->store_pending ? " (the result is still stored)" : "");
                proto_stream_close(&r->stream);
        }
}

/* ---- the broker's stop (main.c's SIGTERM and SIGINT) ----
 *
 * A run in flight is cancelled at the supervisor, not let finish. A stop must end within a
 * time the operator can count on (systemd sends SIGKILL after TimeoutStopSec, and a SIGKILL
 * loses every result), while a run may have up to an hour of wall clock: letting runs finish
 * would be bounded only by cutting them off anyway. A cancelled run still has a result, with
 * what the tool printed until then, as the supervisor's own stop gives (killed: the
 * supervisor is stopping), and a run cannot be resumed, so waiting would buy the client
 * nothing it cannot have by running it again. So: each run is cancelled, its result (killed:
 * the broker is stopping, unless it had ended on its own) stored and sent, and each client
 * ended once nothing of its is in flight; tasks are cancelled (agent.c). BRO_STOP_GRACE_S
 * bounds only the wait for the supervisor's answers and their writes; a second signal, or
 * the grace running out, ends what is left at once. */

static void on_stop_idle(uv_timer_t *t)
{
        struct bro_server *srv = t->data;
        for (struct bro_client *c = srv->clients; c; c = c->next)
                if (c->n_inflight == 0 && !c->stream.closing && !c->stream.paused)
                        proto_stream_end(&c->stream); /* what is queued is written first */
}

void bro_stop_poke(struct bro_server *srv)
{
        if (srv->stop_timers && !srv->stopping_now)
                (void)uv_timer_start(&srv->stop_idle, on_stop_idle, 0, 0);
}

static void on_stop_grace(uv_timer_t *t)
{
        char why[64];
        snprintf(why, sizeof(why), "the stop's grace of %d s ran out", BRO_STOP_GRACE_S);
        bro_stop_now(t->data, why);
}

/* A run not yet sent (still connecting) is refused as a new one would be; one whose client
 * asked for a cancel already keeps that cancel (and its reason); a probe ends by itself. */
static void stop_relay(struct bro_relay *r)
{
        if (r->req_held) {
                relay_error(r, "busy", "The broker is stopping");
                relay_end(r, "refused, the broker is stopping (it was not sent to the supervisor)");
                proto_stream_close(&r->stream); /* cancels the connect */
                return;
        }
        if (r->kind != PROTO_RUN_REQUEST || r->cancel_sent || r->cancel_pending)
                return;
        r->stop_cancelled = true;
        if (r->run_id[0]) {
                send_cancel(r, r->request_id);
                return;
        }
        free(r->cancel_request_id);
        r->cancel_request_id = r->request_id ? strdup(r->request_id) : NULL;
        r->cancel_pending = true; /* sent once the supervisor names the run (B4) */
        log_info("request #%" PRIu64 ": to be cancelled (the broker is stopping) once the supervisor names the run",
                 r->seq);
}

unsigned bro_stop_begin(struct bro_server *srv)
{
        if (!srv->stop_timers) {
                (void)uv_timer_init(srv->loop, &srv->stop_grace);
                (void)uv_timer_init(srv->loop, &srv->stop_idle);
                srv->stop_grace.data = srv->stop_idle.data = srv;
                srv->stop_timers = true;
        }
        /* No new client or request; tasks cancelled; clients with nothing in flight ended, the
         * others held (not read) until their last result is sent (clients.c). */
        bro_server_stop(srv);
        unsigned n = 0;
        for (struct bro_client *c = srv->clients; c; c = c->next)
                for (struct bro_relay *r = c->relays; r; r = r->next) {
                        n += !r->ended;
                        if (!r->ended && !r->done) /* else its result is being stored */
                                stop_relay(r);
                }
        (void)uv_timer_start(&srv->stop_grace, on_stop_grace, BRO_STOP_GRACE_S * 1000u, 0);
        uv_unref((uv_handle_t *)&srv->stop_grace);
        bro_stop_poke(srv);
        return n;
}

void bro_stop_now(struct bro_server *srv, const char *why)
{
        if (srv->stopping_now)
                return;
        srv->stopping_now = true;
        unsigned n = 0;
        char msg[160];
        snprintf(msg, sizeof(msg), "The broker stopped before this request ended (%s)", why);
        struct bro_client *cn;
        for (struct bro_client *c = srv->clients; c; c = cn) {
                cn = c->next;
                for (struct bro_relay *r = c->relays; r; r = r->next) {
                        if (!r->ended) {
                                n++;
                                /* Best effort: written now if the socket takes it, or lost
                                 * with the connection; never waited for. */
                                relay_error(r, "unavailable", msg);
                                relay_end(r, "abandoned, the broker stopped at once: %s%s", why,
                                          r->store_pending ? " (its result is still stored)" : "");
                        }
                        proto_stream_close(&r->stream);
                }
                proto_stream_close(&c->stream);
        }
        for (struct bro_relay *r = srv->owned; r; r = r->next)
                proto_stream_close(&r->stream);
        log_info("stopping at once: %s; %u requests in flight abandoned (closing their connections to the supervisor "
                 "makes it kill their runs)",
                 why, n);
}

void bro_stop_close(struct bro_server *srv)
{
        if (!srv->stop_timers)
                return;
        uv_close((uv_handle_t *)&srv->stop_grace, NULL);
        uv_close((uv_handle_t *)&srv->stop_idle, NULL);
        srv->stop_timers = false;
}
