/* The proxied connections of anvil-egress (unprivileged; egress.h). One connection, one
 * request: its head is read whole (bounded in size and time), parsed by http-parser, checked
 * against the run's rules, its host resolved here (getaddrinfo on libuv's thread pool) and
 * every address checked; the connection is made to the address checked, never to the name
 * again (no second resolution, no DNS rebinding window). Then
 *   CONNECT host:port  -> "200 Connection established" and bytes both ways, opaque;
 *   GET http://host/.. -> the request rewritten to origin form, "Connection: close", its body
 *                         (Content-Length only) and nothing after it; the reply back with
 *                         "Connection: close" in its head (request.c does the rewriting).
 * A second request on the same connection is never read: a redirect, or any other host, is a
 * new connection, checked anew. Every decision is one event (egr_ctl_event): blocked with its
 * catalog message, or allowed with the bytes each way at the end. Any error closes the
 * connection: the client sees it end, never a path around the check.
 *
 * Lifetime: a connection owns up to three handles (the client, the upstream, a timer) and a
 * getaddrinfo request; it is freed when all have closed or called back (conn_unref). */
#include "egress/conn.h"

#include <http_parser.h>
#include <limits.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "lib/fd.h"
#include "lib/list.h"

static void conn_unref(struct egr_conn *c)
{
        if (--c->refs > 0)
                return;
        struct egr_run *run = c->run;
        if (c->ai)
                uv_freeaddrinfo(c->ai);
        free(c);
        run->n_alive--;
        if (run->closing && run->n_alive == 0 && run->listener_closed)
                egr_ctl_run_gone(run);
}

static void on_handle_closed(uv_handle_t *h)
{
        conn_unref(h->data);
}

/* c's event: what it asked, as far as it was understood, and its bytes. */
static void conn_event(struct egr_conn *c, const char *kind, const char *reason, const char *msg)
{
        bool known = c->host.kind == EGR_HOST_NAME || c->host.kind == EGR_HOST_IP;
        struct egr_event e = {
                .kind = kind,
                .reason = reason,
                .message = msg,
                .op = c->op[0] ? c->op : NULL,
                .host = known ? c->host.name : NULL,
                .port = known ? c->port : 0,
                .address = c->addr_text[0] ? c->addr_text : NULL,
                .bytes_out = c->out,
                .bytes_in = c->in,
        };
        egr_ctl_event(c->run, &e);
}

/* The record of an allowed connection, once, as it ends. */
static void conn_record(struct egr_conn *c)
{
        char msg[512];
        if (!c->allowed)
                return;
        c->allowed = false;
        POL_REASON(msg, sizeof(msg), PROXY_ALLOWED, c->op, c->addr_text, (unsigned long long)c->out,
                   (unsigned long long)c->in);
        c->run->n_allowed++;
        conn_event(c, "allowed", "allowed", msg);
}

void egr_conn_close(struct egr_conn *c)
{
        if (c->state == ST_CLOSING)
                return;
        conn_record(c);
        c->state = ST_CLOSING;
        LIST_REMOVE(c);
        c->run->n_conns--;
        if (c->up_inited && !uv_is_closing((uv_handle_t *)&c->up))
                uv_close((uv_handle_t *)&c->up, on_handle_closed);
        uv_close((uv_handle_t *)&c->client, on_handle_closed);
        uv_close((uv_handle_t *)&c->timer, on_handle_closed);
        /* getaddrinfo in flight: its callback runs (cancelled or not) and drops its ref */
        if (c->gai_pending)
                (void)uv_cancel((uv_req_t *)&c->gai);
}

/* ---- writing ---- */

struct wreq {
        uv_write_t w;
        struct egr_conn *c;
        char data[];
};

static void resume_reads(struct egr_conn *c);

static void on_written(uv_write_t *w, int status)
{
        struct wreq *r = (struct wreq *)w;
        struct egr_conn *c = r->c;
        free(r);
        if (status < 0) {
                egr_conn_close(c);
        } else if (c->state != ST_CLOSING) {
                resume_reads(c);
        }
        conn_unref(c);
}

int egr_conn_write(struct egr_conn *c, uv_stream_t *to, const void *data, size_t len)
{
        struct wreq *r = malloc(sizeof(*r) + len);
        if (!r)
                return -ENOMEM;
        memcpy(r->data, data, len);
        r->c = c;
        uv_buf_t b = uv_buf_init(r->data, (unsigned)len);
        int e = uv_write(&r->w, to, &b, 1, on_written);
        if (e < 0) {
                free(r);
                return e;
        }
        c->refs++;
        return 0;
}

/* ---- ending ---- */

struct sreq {
        uv_shutdown_t s;
        struct egr_conn *c;
};

static void on_flushed(uv_shutdown_t *s, int status)
{
        struct sreq *r = (struct sreq *)s;
        struct egr_conn *c = r->c;
        (void)status;
        free(r);
        egr_conn_close(c);
        conn_unref(c);
}

/* Ends the connection once what is queued to the client has gone (a refusal's reply, the end
 * of an upstream's reply): reads stop now, the upstream closes now. */
static void conn_finish(struct egr_conn *c)
{
        if (c->state >= ST_FINISHING)
                return;
        conn_record(c);
        (void)uv_read_stop((uv_stream_t *)&c->client);
        if (c->up_inited && !uv_is_closing((uv_handle_t *)&c->up))
                uv_close((uv_handle_t *)&c->up, on_handle_closed);
        if (c->gai_pending)
                (void)uv_cancel((uv_req_t *)&c->gai);
        struct sreq *r = malloc(sizeof(*r));
        if (!r || uv_shutdown(&r->s, (uv_stream_t *)&c->client, on_flushed) < 0) {
                free(r);
                egr_conn_close(c);
                return;
        }
        r->c = c;
        c->refs++;
        c->state = ST_FINISHING; /* still counted until on_flushed closes it */
        c->up_eof = c->client_eof = true;
}

/* Sends the refusal (an HTTP reply whose body is the message), records it, and ends. */
void egr_conn_refuse(struct egr_conn *c, const char *status, const char *reason, const char *msg)
{
        char reply[1024];
        int n = snprintf(reply, sizeof(reply),
                         "HTTP/1.1 %s\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n"
                         "X-Anvil-Refused: %s\r\nContent-Length: %zu\r\n\r\n%s\n",
                         status, reason, strlen(msg) + 1, msg);
        c->run->n_blocked++;
        c->cut = true;
        conn_event(c, "blocked", reason, msg);
        if (n > 0 && (size_t)n < sizeof(reply) && egr_conn_write(c, (uv_stream_t *)&c->client, reply, (size_t)n) == 0)
                conn_finish(c);
        else
                egr_conn_close(c);
}

/* Cuts an open connection (bytes, idle, lifetime, the run closed): its event, then the close,
 * at once (what was queued is dropped: the bound is the bound). */
void egr_conn_cut(struct egr_conn *c, const char *reason, const char *msg)
{
        if (c->state == ST_CLOSING)
                return;
        if (!c->cut) {
                c->cut = true;
                c->run->n_blocked++;
                conn_event(c, "blocked", reason, msg);
        }
        egr_conn_close(c);
}

/* ---- resolving and connecting ---- */

static void on_up_connected(uv_connect_t *req, int status);

/* Whether the run allows connecting to sa: a public address, or one in an approved range. */
static bool addr_ok(const struct egr_run *run, const struct sockaddr *sa, enum egr_range *range)
{
        *range = egr_addr_range(sa);
        return *range == EGR_RANGE_PUBLIC || egr_cidrs_hold(run->cidrs, run->n_cidrs, sa);
}

/* Connects to sa, which was checked: the upstream handle is made here, once. */
static void connect_to(struct egr_conn *c, const struct sockaddr *sa)
{
        char msg[600];
        int e;
        egr_addr_text(sa, c->addr_text, sizeof(c->addr_text));
        if (!c->up_inited) {
                if ((e = uv_tcp_init(egr_d.loop, &c->up)) < 0)
                        goto fail;
                c->up.data = c;
                c->up_inited = true;
                c->refs++;
        }
        uv_connect_t *req = malloc(sizeof(*req));
        if (!req) {
                e = UV_ENOMEM;
                goto fail;
        }
        req->data = c;
        struct sockaddr_storage ss;
        memcpy(&ss, sa, sa->sa_family == AF_INET ? sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6));
        ((struct sockaddr_in *)&ss)->sin_port = htons(c->port); /* same offset in sockaddr_in6 */
        if ((e = uv_tcp_connect(req, &c->up, (struct sockaddr *)&ss, on_up_connected)) < 0) {
                free(req);
                goto fail;
        }
        c->refs++;
        c->state = ST_CONNECTING;
        return;
fail:
        POL_REASON(msg, sizeof(msg), PROXY_CONNECT, c->op, c->addr_text, uv_strerror(e));
        egr_conn_refuse(c, "502 Bad Gateway", "connect", msg);
}

/* The next address of the resolver's answer that the run allows, from c->ai_next on; the first
 * refused one is kept for the message. */
static const struct addrinfo *next_allowed(struct egr_conn *c, const struct addrinfo **refused,
                                           enum egr_range *refused_range)
{
        for (const struct addrinfo *a = c->ai_next; a; a = a->ai_next) {
                enum egr_range r;
                if (a->ai_family != AF_INET && a->ai_family != AF_INET6)
                        continue;
                if (addr_ok(c->run, a->ai_addr, &r)) {
                        c->ai_next = a->ai_next;
                        return a;
                }
                if (!*refused) {
                        *refused = a;
                        *refused_range = r;
                }
        }
        c->ai_next = NULL;
        return NULL;
}

static void on_resolved(uv_getaddrinfo_t *req, int status, struct addrinfo *res)
{
        struct egr_conn *c = req->data;
        char msg[600], addr[INET6_ADDRSTRLEN + 8];
        c->gai_pending = false;
        c->ai = res;
        c->ai_next = res;
        if (c->state != ST_RESOLVING) {
                conn_unref(c);
                return;
        }
        c->last_ms = now_ms();
        if (status < 0) {
                POL_REASON(msg, sizeof(msg), PROXY_RESOLVE, c->op, uv_strerror(status));
                egr_conn_refuse(c, "502 Bad Gateway", "resolve", msg);
        } else {
                const struct addrinfo *refused = NULL;
                enum egr_range range = EGR_RANGE_PUBLIC;
                const struct addrinfo *a = next_allowed(c, &refused, &range);
                if (a) {
                        connect_to(c, a->ai_addr);
                } else if (refused) {
                        egr_addr_text(refused->ai_addr, addr, sizeof(addr));
                        snprintf(c->addr_text, sizeof(c->addr_text), "%s", addr);
                        POL_REASON(msg, sizeof(msg), PROXY_ADDRESS_RANGE, c->op, addr, egr_range_name(range));
                        egr_conn_refuse(c, "403 Forbidden", "address_range", msg);
                } else {
                        POL_REASON(msg, sizeof(msg), PROXY_RESOLVE, c->op, "no IPv4 or IPv6 address");
                        egr_conn_refuse(c, "502 Bad Gateway", "resolve", msg);
                }
        }
        conn_unref(c);
}

void egr_conn_decide(struct egr_conn *c)
{
        char msg[600];
        if (c->host.kind == EGR_HOST_IP) { /* named by a rule: its range approved with it */
                connect_to(c, (struct sockaddr *)&c->host.addr);
                return;
        }
        struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_protocol = IPPROTO_TCP };
        c->gai.data = c;
        int e = uv_getaddrinfo(egr_d.loop, &c->gai, on_resolved, c->host.name, NULL, &hints);
        if (e < 0) {
                POL_REASON(msg, sizeof(msg), PROXY_RESOLVE, c->op, uv_strerror(e));
                egr_conn_refuse(c, "502 Bad Gateway", "resolve", msg);
                return;
        }
        c->gai_pending = true;
        c->refs++;
        c->state = ST_RESOLVING;
}

/* ---- relaying ---- */

static char read_buf[65536]; /* one loop, one read at a time: copied out before the next */

static void alloc_relay(uv_handle_t *h, size_t suggested, uv_buf_t *b)
{
        (void)h;
        (void)suggested;
        *b = uv_buf_init(read_buf, sizeof(read_buf));
}

static bool over_bytes(struct egr_conn *c, size_t n)
{
        char msg[600];
        if (c->run->bytes + n <= c->run->limits.bytes) {
                c->run->bytes += n; /* what is relayed: a chunk past the limit is not */
                return false;
        }
        POL_REASON(msg, sizeof(msg), PROXY_BYTES_CAP, c->op, (unsigned long long)c->run->limits.bytes);
        egr_conn_cut(c, "bytes_cap", msg);
        return true;
}

static void on_client_read(uv_stream_t *s, ssize_t n, const uv_buf_t *b);
static void on_up_read(uv_stream_t *s, ssize_t n, const uv_buf_t *b);

/* Bytes from the client to the upstream: a request's body up to its length, or a tunnel's. */
static void to_up(struct egr_conn *c, const char *data, size_t n)
{
        if (!c->connect && c->chunked) {
                if ((n = egr_body_take(c, data, n)) == (size_t)-1)
                        return;
        } else if (!c->connect) {
                if (n > c->body_left)
                        n = (size_t)c->body_left; /* anything after the one request is dropped */
                c->body_left -= n;
        }
        if (n == 0 || over_bytes(c, n))
                return;
        c->out += n;
        if (egr_conn_write(c, (uv_stream_t *)&c->up, data, n) < 0) {
                egr_conn_close(c);
                return;
        }
        if (uv_stream_get_write_queue_size((uv_stream_t *)&c->up) > EGR_PENDING_MAX) {
                (void)uv_read_stop((uv_stream_t *)&c->client);
                c->client_paused = true;
        }
}

static void client_reads(struct egr_conn *c)
{
        bool want = !c->client_eof && (c->connect || egr_body_wanted(c));
        if (want && uv_read_start((uv_stream_t *)&c->client, alloc_relay, on_client_read) < 0)
                egr_conn_close(c);
        if (!want)
                (void)uv_read_stop((uv_stream_t *)&c->client);
}

static void resume_reads(struct egr_conn *c)
{
        if (c->state != ST_OPEN)
                return;
        if (c->client_paused && uv_stream_get_write_queue_size((uv_stream_t *)&c->up) <= EGR_PENDING_MAX / 2) {
                c->client_paused = false;
                client_reads(c);
        }
        if (c->state == ST_OPEN && c->up_paused &&
            uv_stream_get_write_queue_size((uv_stream_t *)&c->client) <= EGR_PENDING_MAX / 2) {
                c->up_paused = false;
                if (uv_read_start((uv_stream_t *)&c->up, alloc_relay, on_up_read) < 0)
                        egr_conn_close(c);
        }
}

static void on_up_read(uv_stream_t *s, ssize_t n, const uv_buf_t *b)
{
        struct egr_conn *c = s->data;
        char msg[600];
        if (c->state != ST_OPEN)
                return;
        if (n == UV_EOF && !c->connect && !c->reply_started) {
                POL_REASON(msg, sizeof(msg), PROXY_MALFORMED, "the server ended the connection before its reply head");
                egr_conn_cut(c, "malformed", msg);
                return;
        }
        if (n == UV_EOF) {
                conn_finish(c); /* the reply is whole: it goes out, then the close */
                return;
        }
        if (n < 0) {
                egr_conn_close(c);
                return;
        }
        c->last_ms = now_ms();
        if (n == 0 || over_bytes(c, (size_t)n))
                return;
        c->in += (uint64_t)n;
        size_t skip = 0;
        if (!c->connect && !c->reply_started) {
                size_t room = sizeof(c->head) - c->head_len;
                skip = (size_t)n < room ? (size_t)n : room;
                memcpy(c->head + c->head_len, b->base, skip);
                c->head_len += skip;
                if (egr_reply_head(c) != 1 || skip == (size_t)n)
                        return;
        }
        if (egr_conn_write(c, (uv_stream_t *)&c->client, b->base + skip, (size_t)n - skip) < 0) {
                egr_conn_close(c);
                return;
        }
        if (uv_stream_get_write_queue_size((uv_stream_t *)&c->client) > EGR_PENDING_MAX) {
                (void)uv_read_stop((uv_stream_t *)&c->up);
                c->up_paused = true;
        }
}

static void on_up_shut(uv_shutdown_t *s, int status)
{
        struct egr_conn *c = s->data;
        (void)status;
        free(s);
        conn_unref(c);
}

/* The client ended its side of a tunnel: the upstream is told (half-close), its reply read on. */
static void client_ended(struct egr_conn *c)
{
        c->client_eof = true;
        (void)uv_read_stop((uv_stream_t *)&c->client);
        uv_shutdown_t *s = malloc(sizeof(*s));
        if (!s)
                return;
        s->data = c;
        if (uv_shutdown(s, (uv_stream_t *)&c->up, on_up_shut) < 0) {
                free(s);
                return;
        }
        c->refs++;
}

/* The head has been parsed once the connection is made: the rest of what the client sent
 * after it goes on (a tunnel's first bytes, a body's). */
static void opened(struct egr_conn *c)
{
        static const char established[] = "HTTP/1.1 200 Connection established\r\n\r\n";
        size_t head_end = c->head_end;
        c->state = ST_OPEN;
        c->allowed = true;
        c->last_ms = now_ms();
        if (c->connect) {
                if (egr_conn_write(c, (uv_stream_t *)&c->client, established, sizeof(established) - 1) < 0) {
                        egr_conn_close(c);
                        return;
                }
        } else {
                char req[EGR_HEAD_MAX + 512];
                size_t n = egr_request_rewrite(c, req, sizeof(req));
                if (n >= sizeof(req)) { /* cannot be: the head was at most EGR_HEAD_MAX */
                        egr_conn_close(c);
                        return;
                }
                if (over_bytes(c, n))
                        return;
                c->out += n;
                if (egr_conn_write(c, (uv_stream_t *)&c->up, req, n) < 0) {
                        egr_conn_close(c);
                        return;
                }
        }
        if (head_end < c->head_len)
                to_up(c, c->head + head_end, c->head_len - head_end);
        if (c->state != ST_OPEN)
                return;
        c->head_len = 0; /* the request is sent: the buffer holds the reply's head now */
        if (uv_read_start((uv_stream_t *)&c->up, alloc_relay, on_up_read) < 0) {
                egr_conn_close(c);
                return;
        }
        client_reads(c);
}

static void on_up_connected(uv_connect_t *req, int status)
{
        struct egr_conn *c = req->data;
        char msg[600];
        free(req);
        if (c->state == ST_CONNECTING) {
                c->last_ms = now_ms();
                if (status == 0) {
                        opened(c);
                } else {
                        POL_REASON(msg, sizeof(msg), PROXY_CONNECT, c->op, c->addr_text, uv_strerror(status));
                        egr_conn_refuse(c, "502 Bad Gateway", "connect", msg);
                }
        }
        conn_unref(c);
}

/* ---- the client's side, the timer, the listener ---- */

static void alloc_head(uv_handle_t *h, size_t suggested, uv_buf_t *b)
{
        struct egr_conn *c = h->data;
        (void)suggested;
        if (c->state != ST_HEAD) {
                alloc_relay(h, suggested, b);
                return;
        }
        *b = uv_buf_init(c->head + c->head_len, (unsigned)(sizeof(c->head) - c->head_len));
}

static void on_client_read(uv_stream_t *s, ssize_t n, const uv_buf_t *b)
{
        struct egr_conn *c = s->data;
        char msg[600];
        if (c->state >= ST_FINISHING)
                return;
        if (n == UV_EOF || n < 0) {
                if (c->state == ST_OPEN && c->connect && n == UV_EOF) {
                        client_ended(c);
                } else if (c->state == ST_HEAD && c->head_len > 0 && n == UV_EOF) {
                        POL_REASON(msg, sizeof(msg), PROXY_MALFORMED, "the connection ended inside the request head");
                        egr_conn_cut(c, "malformed", msg);
                } else if (c->state != ST_OPEN || c->connect) {
                        egr_conn_close(c);
                } else {
                        c->client_eof = true; /* a request sent whole: its reply still comes */
                        (void)uv_read_stop(s);
                }
                return;
        }
        if (n == 0)
                return;
        if (c->state != ST_HEAD) {
                c->last_ms = now_ms();
                to_up(c, b->base, (size_t)n);
                if (c->state == ST_OPEN && !c->connect && !egr_body_wanted(c))
                        (void)uv_read_stop(s);
                return;
        }
        c->head_len += (size_t)n;
        int r = egr_head_parse(c, &c->head_end);
        if (r == 1) {
                (void)uv_read_stop(s); /* nothing more is read until the decision */
                egr_head_done(c);
        }
}

static void on_tick(uv_timer_t *t)
{
        struct egr_conn *c = t->data;
        const struct egr_limits *l = &c->run->limits;
        uint64_t now = now_ms();
        char msg[600];
        const char *op = c->op[0] ? c->op : "request";
        if (c->state == ST_HEAD && now - c->t0_ms >= (uint64_t)l->head_s * 1000) {
                POL_REASON(msg, sizeof(msg), PROXY_HEAD_TIMEOUT, l->head_s);
                egr_conn_refuse(c, "408 Request Timeout", "head_timeout", msg);
        } else if (c->state != ST_HEAD && now - c->last_ms >= (uint64_t)l->idle_s * 1000) {
                POL_REASON(msg, sizeof(msg), PROXY_IDLE, op, l->idle_s);
                egr_conn_cut(c, "idle", msg);
        } else if (now - c->t0_ms >= (uint64_t)l->lifetime_s * 1000) {
                POL_REASON(msg, sizeof(msg), PROXY_LIFETIME, op, l->lifetime_s);
                egr_conn_cut(c, "lifetime", msg);
        }
}

/* E3 */
static void on_connection(uv_stream_t *listener, int status)
{
        struct egr_run *run = listener->data;
        char msg[600];
        if (status < 0 || run->closing)
                return;
        struct egr_conn *c = calloc(1, sizeof(*c));
        if (!c)
                return;
        c->run = run;
        run->n_alive++;
        if (uv_pipe_init(egr_d.loop, &c->client, 0) < 0) {
                free(c);
                run->n_alive--;
                return;
        }
        c->client.data = c;
        c->refs = 1;
        (void)uv_timer_init(egr_d.loop, &c->timer); /* cannot fail on Linux */
        c->timer.data = c;
        c->refs++;
        c->t0_ms = c->last_ms = now_ms();
        LIST_PREPEND(run->conns, c);
        run->n_conns++;
        if (uv_accept(listener, (uv_stream_t *)&c->client) < 0) {
                egr_conn_close(c);
                return;
        }
        (void)uv_timer_start(&c->timer, on_tick, 250, 250);
        if (run->n_conns > run->limits.conns) {
                POL_REASON(msg, sizeof(msg), PROXY_CONN_CAP, run->limits.conns);
                egr_conn_refuse(c, "429 Too Many Requests", "conn_cap", msg);
                return;
        }
        if (uv_read_start((uv_stream_t *)&c->client, alloc_head, on_client_read) < 0)
                egr_conn_close(c);
}

int egr_proxy_listen(struct egr_run *run, struct anvil_err *err)
{
        run->listener.data = run;
        int e = uv_listen((uv_stream_t *)&run->listener, 64, on_connection);
        if (e < 0)
                return anvil_err_set(err, -e, "Failed to listen on %s: %s", run->path, uv_strerror(e));
        return 0;
}

static void on_listener_closed(uv_handle_t *h)
{
        struct egr_run *run = h->data;
        run->listener_closed = true;
        if (run->n_alive == 0)
                egr_ctl_run_gone(run);
}

/* E4 */
void egr_proxy_close_run(struct egr_run *run)
{
        char msg[600];
        if (run->closing)
                return;
        run->closing = true;
        (void)unlink(run->path); /* no new client finds it */
        uv_close((uv_handle_t *)&run->listener, on_listener_closed);
        while (run->conns) {
                struct egr_conn *c = run->conns;
                POL_REASON(msg, sizeof(msg), PROXY_RUN_CLOSED, c->op[0] ? c->op : "request");
                egr_conn_cut(c, "run_closed", msg); /* removes c from the list */
        }
}
