/* The broker's side of anvil-egress (docs/egress.md, "The control socket"): for a run granted
 * network (relay.c), one control connection of its own, opened before the run_request is
 * sent and kept for the run's life, since the proxy closes a run with the connection that
 * opened it: a broker that dies leaves no approval behind.
 *
 *   E1  connect (SOCK_SEQPACKET, non-blocking), send "open" with the granted hosts; a failure
 *       here is the run's CAP_EGRESS_DOWN, said at once (bro_egress_open returns NULL)
 *   E2  "opened" with one fd (SCM_RIGHTS): relay.c sends it as run_request.egress; "error",
 *       the end of the connection, anything else, or no answer in EGRESS_OPEN_MS: the run is
 *       not granted network (CAP_EGRESS_REFUSED or CAP_EGRESS_DOWN), never an open network
 *   E3  each "event" while the run lives: relayed into the run's trace (layer proxy), kept
 *       for its result (at most EGRESS_EVENTS_MAX; the rest counted), "allowed" ones listed
 *       as its connections
 *   E4  the run's end: "close", and "closed" waited for (EGRESS_CLOSE_MS at most) before the
 *       result is stored; the connection's end mid-run is the proxy's (PROXY_GONE)
 *
 * What the daemon sends is read as untrusted: one message a datagram, at most 64 KiB, JSON
 * decoded strictly (duplicate and unknown keys refused), each text within the frame's bounds.
 * A message that is none of these ends the connection, and so the run's way out. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "broker/broker.h"
#include "lib/log.h"
#include "policy/cap_scope.h"
#include "policy/reasons.h"
#include "proto/names.h"

#define EGRESS_OPEN_MS 5000
#define EGRESS_CLOSE_MS 5000
#define EGRESS_MSG_MAX (64 * 1024)
#define EGRESS_EVENTS_MAX 128

enum eg_state {
        EG_OPENING,
        EG_OPEN,
        EG_CLOSING,
        EG_DONE
};

struct bro_egress {
        struct bro_relay *r; /* NULL once the relay has let it go */
        uv_poll_t poll;
        uv_timer_t timer;
        int fd;
        unsigned handles;     /* open until their close callbacks */
        bool handles_closing; /* uv_close called on them */
        bool released;        /* the relay let it go (bro_egress_free): freed once handles is 0 */
        enum eg_state state;
        char run_id[PROTO_ID_MAX + 1];
        struct bro_egress_record rec;
};

static void maybe_free(struct bro_egress *e)
{
        if (e->handles || !e->released)
                return;
        if (e->fd >= 0)
                (void)close(e->fd); /* the proxy closes the run with it */
        bro_egress_record_free(&e->rec);
        free(e);
}

static void on_handle_closed(uv_handle_t *h)
{
        struct bro_egress *e = h->data;
        e->handles--;
        maybe_free(e);
}

static void close_handles(struct bro_egress *e)
{
        if (e->handles_closing)
                return;
        e->handles_closing = true;
        uv_close((uv_handle_t *)&e->poll, on_handle_closed);
        uv_close((uv_handle_t *)&e->timer, on_handle_closed);
}

void bro_egress_record_free(struct bro_egress_record *rec)
{
        for (size_t i = 0; i < rec->events.n; i++)
                proto_schema_free(&proto_event_schema, (struct proto_event *)rec->events.items + i);
        free(rec->events.items);
        for (size_t i = 0; i < rec->conns.n; i++) {
                struct proto_connection *c = (struct proto_connection *)rec->conns.items + i;
                free(c->host);
                free(c->address);
        }
        free(rec->conns.items);
        memset(rec, 0, sizeof(*rec));
}

/* The end of the exchange: the handles closed; the relay told once (unless it let go). */
static void finish(struct bro_egress *e, int fd, enum pol_why why)
{
        enum eg_state was = e->state;
        e->state = EG_DONE;
        close_handles(e);
        struct bro_relay *r = e->r;
        if (!r)
                return;
        if (was == EG_OPENING) {
                bro_relay_egress_opened(r, e, fd, why); /* it lets go of e */
        } else if (was == EG_CLOSING) {
                bro_relay_egress_done(r, e);
        }
        /* EG_OPEN: the proxy's end mid-run (rec.gone); the relay learns it at E4 */
}

static void on_timer(uv_timer_t *t)
{
        struct bro_egress *e = t->data;
        log_error("egress run %s: anvil-egress did not answer \"%s\" within %d ms", e->run_id,
                  e->state == EG_OPENING ? "open" : "close", e->state == EG_OPENING ? EGRESS_OPEN_MS : EGRESS_CLOSE_MS);
        if (e->state == EG_CLOSING)
                e->rec.unclosed = true;
        finish(e, -1, POL_WHY_CAP_EGRESS_DOWN);
}

static char *dup_max(json_t *v, size_t max)
{
        const char *s = json_string_value(v);
        return s && strlen(s) <= max ? strdup(s) : NULL;
}

/* E3: an "event": kept and relayed. -EINVAL: it is not one. */
static int take_event(struct bro_egress *e, json_t *ev)
{
        json_t *layer, *kind, *reason, *op, *message, *host = NULL, *address = NULL;
        json_int_t t_ms, port = -1, out = -1, in = -1;
        json_error_t je;
        if (json_unpack_ex(ev, &je, JSON_STRICT, "{s:I, s:o, s:o, s:o, s:o, s?o, s?I, s?o, s?I, s?I, s:o}", "t_ms",
                           &t_ms, "layer", &layer, "kind", &kind, "reason", &reason, "op", &op, "host", &host, "port",
                           &port, "address", &address, "bytes_out", &out, "bytes_in", &in, "message", &message) < 0 ||
            t_ms < 0 || !json_is_string(layer) || strcmp(json_string_value(layer), "proxy") != 0 ||
            !json_is_string(kind) ||
            (strcmp(json_string_value(kind), "allowed") != 0 && strcmp(json_string_value(kind), "blocked") != 0))
                return -EINVAL;
        struct proto_event pe = { .t_ms = (uint64_t)t_ms };
        pe.layer = strdup("proxy");
        pe.kind = dup_max(kind, 64);
        pe.reason = dup_max(reason, PROTO_REASON_MAX);
        pe.op = dup_max(op, PROTO_EV_OP_MAX);
        pe.message = dup_max(message, PROTO_EV_MESSAGE_MAX);
        int r = pe.layer && pe.kind && pe.reason && pe.op && pe.message ? 0 : -EINVAL;
        bool allowed = r == 0 && strcmp(pe.kind, "allowed") == 0;
        if (allowed &&
            (!json_is_string(host) || !json_is_string(address) || port < 1 || port > 65535 || out < 0 || in < 0))
                r = -EINVAL;
        if (r == 0 && e->r)
                bro_relay_egress_event(e->r, &pe);
        if (r == 0 && allowed && e->rec.conns.n < PROTO_CONNECTIONS_MAX) {
                struct proto_connection *c = proto_array_push(&e->rec.conns, sizeof(*c));
                if (c) {
                        c->host = dup_max(host, 256);
                        c->address = dup_max(address, 64);
                        c->port = (uint64_t)port;
                        c->bytes_out = (uint64_t)out;
                        c->bytes_in = (uint64_t)in;
                        if (!c->host || !c->address) {
                                free(c->host);
                                free(c->address);
                                e->rec.conns.n--;
                        }
                }
        } else if (r == 0 && allowed)
                e->rec.conns_dropped++;
        struct proto_event *kept = NULL;
        if (r == 0 && e->rec.events.n < EGRESS_EVENTS_MAX)
                kept = proto_array_push(&e->rec.events, sizeof(*kept));
        if (kept) {
                *kept = pe;
                return 0;
        }
        if (r == 0)
                e->rec.dropped++;
        proto_schema_free(&proto_event_schema, &pe);
        return r;
}

/* One message: 0, or -EINVAL (it ends the connection). fd: the one that came with it, taken
 * if it is the "opened" one (else closed by the caller). */
static int take_msg(struct bro_egress *e, const char *buf, size_t len, int *fd)
{
        json_error_t je;
        json_t *m = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &je);
        const char *type = json_string_value(json_object_get(m, "type"));
        const char *run_id = json_string_value(json_object_get(m, "run_id"));
        int r = -EINVAL;
        if (!type || !run_id || strcmp(run_id, e->run_id) != 0)
                goto out;
        if (e->state == EG_OPENING && strcmp(type, "opened") == 0) {
                const char *path;
                struct stat st;
                if (json_unpack_ex(m, &je, JSON_STRICT, "{s:s, s:s, s:s}", "type", &type, "run_id", &run_id, "socket",
                                   &path) < 0 ||
                    *fd < 0 || fstat(*fd, &st) < 0 || !S_ISSOCK(st.st_mode))
                        goto out;
                e->state = EG_OPEN;
                uv_timer_stop(&e->timer);
                int taken = *fd;
                *fd = -1;
                log_info("egress run %s: opened (%s)", e->run_id, path);
                struct bro_relay *rl = e->r;
                if (rl)
                        bro_relay_egress_opened(rl, e, taken, POL_WHY_NONE);
                else
                        (void)close(taken);
                r = 0;
        } else if (e->state == EG_OPENING && strcmp(type, "error") == 0) {
                log_error("egress run %s: anvil-egress refused it: %.300s", e->run_id,
                          json_string_value(json_object_get(m, "message")) ?: "(no message)");
                json_decref(m);
                finish(e, -1, POL_WHY_CAP_EGRESS_REFUSED);
                return 0;
        } else if (e->state != EG_OPENING && strcmp(type, "event") == 0) {
                json_t *ev;
                if (json_unpack_ex(m, &je, JSON_STRICT, "{s:s, s:s, s:o}", "type", &type, "run_id", &run_id, "event",
                                   &ev) == 0)
                        r = take_event(e, ev);
        } else if (e->state == EG_CLOSING && strcmp(type, "closed") == 0) {
                json_int_t allowed, blocked, bytes, dropped;
                if (json_unpack_ex(m, &je, JSON_STRICT, "{s:s, s:s, s:I, s:I, s:I, s:I}", "type", &type, "run_id",
                                   &run_id, "allowed", &allowed, "blocked", &blocked, "bytes", &bytes, "events_dropped",
                                   &dropped) == 0 &&
                    dropped >= 0) {
                        e->rec.dropped += (uint64_t)dropped;
                        log_info("egress run %s: closed: %lld allowed, %lld blocked, %lld bytes, %lld events not sent",
                                 e->run_id, (long long)allowed, (long long)blocked, (long long)bytes,
                                 (long long)dropped);
                        json_decref(m);
                        finish(e, -1, POL_WHY_NONE);
                        return 0;
                }
        }
out:
        json_decref(m);
        return r;
}

static void on_readable(uv_poll_t *p, int status, int events)
{
        struct bro_egress *e = p->data;
        (void)events;
        for (;;) {
                static char buf[EGRESS_MSG_MAX + 1];
                char cbuf[CMSG_SPACE(4 * sizeof(int))];
                struct iovec iov = { buf, sizeof(buf) };
                struct msghdr mh = {
                        .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof(cbuf)
                };
                ssize_t n = status < 0 ? -1 : recvmsg(e->fd, &mh, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
                if (n < 0 && status == 0 && (errno == EAGAIN || errno == EINTR))
                        return;
                int fds[4], n_fds = 0;
                for (struct cmsghdr *c = n > 0 ? CMSG_FIRSTHDR(&mh) : NULL; c; c = CMSG_NXTHDR(&mh, c))
                        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
                                for (size_t k = 0; k < (c->cmsg_len - CMSG_LEN(0)) / sizeof(int) && n_fds < 4; k++)
                                        memcpy(&fds[n_fds++], CMSG_DATA(c) + k * sizeof(int), sizeof(int));
                int fd = n_fds == 1 ? fds[0] : -1;
                int bad = n <= 0 || (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) || n_fds > 1;
                if (!bad)
                        bad = take_msg(e, buf, (size_t)n, &fd) < 0;
                for (int k = 0; k < n_fds; k++)
                        if (fds[k] != -1 && (n_fds > 1 || fd == fds[k]))
                                (void)close(fds[k]);
                if (!bad && e->state != EG_DONE)
                        continue;
                if (e->state == EG_DONE)
                        return;
                if (n > 0)
                        log_error("egress run %s: a message from anvil-egress that is none it sends (%zd bytes): the "
                                  "connection is ended, and the run's way out with it",
                                  e->run_id, n);
                else
                        log_error("egress run %s: anvil-egress ended the control connection%s", e->run_id,
                                  e->state == EG_OPENING ? " before the run was opened" : "");
                if (e->state == EG_OPEN)
                        e->rec.gone = true;
                finish(e, -1, POL_WHY_CAP_EGRESS_DOWN);
                return;
        }
}

static int send_json(int fd, json_t *m)
{
        char *text = json_dumps(m, JSON_COMPACT);
        json_decref(m);
        if (!text)
                return -ENOMEM;
        ssize_t n = send(fd, text, strlen(text), MSG_NOSIGNAL | MSG_DONTWAIT);
        int r = n == (ssize_t)strlen(text) ? 0 : n < 0 ? -errno : -EIO;
        free(text);
        return r;
}

struct bro_egress *bro_egress_open(struct bro_relay *r, const char *path, const char *run_id, const struct pol_scope *s,
                                   enum pol_why *why)
{
        *why = POL_WHY_CAP_EGRESS_DOWN;
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        if (strlen(path) >= sizeof(sa.sun_path))
                return NULL;
        memcpy(sa.sun_path, path, strlen(path) + 1);
        int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0) {
                log_error("egress run %s: socket: %s", run_id, strerror(errno));
                return NULL;
        }
        /* A Unix socket's connect completes at once or fails (EAGAIN: its backlog is full). */
        if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
                log_error("egress run %s: cannot connect to anvil-egress at %s: %s", run_id, path, strerror(errno));
                (void)close(fd);
                return NULL;
        }
        json_t *hosts = json_array(), *ranges = json_array();
        for (size_t i = 0; i < s->n_hosts; i++)
                json_array_append_new(hosts, json_string(s->hosts[i].text));
        for (size_t i = 0; i < s->n_ranges; i++)
                json_array_append_new(ranges, json_string(s->ranges[i].text));
        json_t *m = json_pack("{s:s, s:s, s:o}", "type", "open", "run_id", run_id, "hosts", hosts);
        if (m && s->n_ranges)
                json_object_set_new(m, "addresses", ranges);
        else
                json_decref(ranges);
        int e_ = m ? send_json(fd, m) : -ENOMEM;
        struct bro_egress *e = e_ == 0 ? calloc(1, sizeof(*e)) : NULL;
        if (!e) {
                log_error("egress run %s: cannot send \"open\" to anvil-egress at %s: %s", run_id, path,
                          strerror(e_ < 0 ? -e_ : ENOMEM));
                (void)close(fd);
                return NULL;
        }
        e->r = r;
        e->fd = fd;
        e->state = EG_OPENING;
        snprintf(e->run_id, sizeof(e->run_id), "%s", run_id);
        uv_loop_t *loop = bro_relay_loop(r);
        if (uv_poll_init(loop, &e->poll, fd) < 0) {
                (void)close(fd);
                free(e);
                return NULL;
        }
        (void)uv_timer_init(loop, &e->timer);
        e->poll.data = e->timer.data = e;
        e->handles = 2; /* uv_timer_init cannot fail */
        (void)uv_poll_start(&e->poll, UV_READABLE | UV_DISCONNECT, on_readable);
        (void)uv_timer_start(&e->timer, on_timer, EGRESS_OPEN_MS, 0);
        *why = POL_WHY_NONE;
        return e;
}

bool bro_egress_close(struct bro_egress *e)
{
        if (e->state != EG_OPEN)
                return false; /* done already (the proxy ended): nothing to wait for */
        json_t *m = json_pack("{s:s, s:s}", "type", "close", "run_id", e->run_id);
        if (!m || send_json(e->fd, m) < 0) {
                e->rec.unclosed = true;
                e->state = EG_DONE;
                close_handles(e);
                return false;
        }
        e->state = EG_CLOSING;
        (void)uv_timer_start(&e->timer, on_timer, EGRESS_CLOSE_MS, 0);
        return true;
}

struct bro_egress_record *bro_egress_record(struct bro_egress *e)
{
        return &e->rec;
}

void bro_egress_free(struct bro_egress *e)
{
        if (!e)
                return;
        e->r = NULL;
        e->released = true;
        e->state = EG_DONE;
        close_handles(e);
        maybe_free(e);
}
