/* The proxied connections of anvil-egress (unprivileged; egress.h). One connection, one
 * request: its head is read whole (bounded in size and time), parsed by http-parser, checked
 * against the run's rules, its host resolved here (getaddrinfo on libuv's thread pool) and
 * every address checked; the connection is made to the address checked, never to the name
 * again (no second resolution, no DNS rebinding window). Then
 *   CONNECT host:port  -> "200 Connection established" and bytes both ways, opaque;
 *   GET http://host/.. -> the request rewritten to origin form, "Connection: close", its body
 *                         (Content-Length only) and nothing after it; the reply back as is.
 * A second request on the same connection is never read: a redirect, or any other host, is a
 * new connection, checked anew. Every decision is one event (egr_ctl_event): blocked with its
 * catalog message, or allowed with the bytes each way at the end. Any error closes the
 * connection: the client sees it end, never a path around the check.
 *
 * Lifetime: a connection owns up to three handles (the client, the upstream, a timer) and a
 * getaddrinfo request; it is freed when all have closed or called back (conn_unref). */
#include "egress/egress.h"

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
#include "lib/utf8.h"

enum conn_state { ST_HEAD, ST_RESOLVING, ST_CONNECTING, ST_OPEN, ST_FINISHING, ST_CLOSING };

struct hdr {
        const char *f, *v;
        size_t fl, vl;
};

struct egr_conn {
        struct egr_conn *next, **pprev;
        struct egr_run *run;
        enum conn_state state;
        unsigned refs;
        uv_pipe_t client;
        uv_tcp_t up;
        bool up_inited;
        uv_timer_t timer;
        uv_getaddrinfo_t gai;
        struct addrinfo *ai, *ai_next;
        uint64_t t0_ms, last_ms;
        char head[EGR_HEAD_MAX];
        size_t head_len; /* bytes held in head */
        size_t head_end; /* where the head ends in it, once whole */
        http_parser parser;
        struct hdr hdrs[EGR_HEADERS_MAX];
        size_t n_hdrs;
        bool hdr_overflow;
        const char *url;
        size_t url_len;
        bool connect;   /* CONNECT, else an absolute http:// request */
        uint64_t body_left; /* a forwarded request's body still to send */
        char op[300];   /* "CONNECT host:443", for every message */
        struct egr_host host;
        uint16_t port;
        char addr_text[INET6_ADDRSTRLEN + 8];
        uint64_t out, in; /* bytes client->up, up->client (after the head) */
        bool client_eof, up_eof, client_paused, up_paused, allowed;
        bool cut; /* a cut's event was sent already */
        bool gai_pending;
        bool reply_started; /* a forwarded request's reply head was sent on */
};

static void conn_close(struct egr_conn *c);

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

static void on_handle_closed(uv_handle_t *h) { conn_unref(h->data); }

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
        egr_ctl_event(c->run, "allowed", "allowed", c->op, msg, c->addr_text, c->out, c->in);
}

static void conn_close(struct egr_conn *c)
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
                conn_close(c);
        } else if (c->state != ST_CLOSING) {
                resume_reads(c);
        }
        conn_unref(c);
}

static int conn_write(struct egr_conn *c, uv_stream_t *to, const void *data, size_t len)
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
        conn_close(c);
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
                conn_close(c);
                return;
        }
        r->c = c;
        c->refs++;
        c->state = ST_FINISHING; /* still counted until on_flushed closes it */
        c->up_eof = c->client_eof = true;
}

/* Sends the refusal (an HTTP reply whose body is the message), records it, and ends. */
static void conn_refuse(struct egr_conn *c, const char *status, const char *reason, const char *msg)
{
        char reply[1024];
        int n = snprintf(reply, sizeof(reply),
                         "HTTP/1.1 %s\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n"
                         "X-Anvil-Refused: %s\r\nContent-Length: %zu\r\n\r\n%s\n",
                         status, reason, strlen(msg) + 1, msg);
        c->run->n_blocked++;
        c->cut = true;
        egr_ctl_event(c->run, "blocked", reason, c->op[0] ? c->op : NULL, msg, c->addr_text[0] ? c->addr_text : NULL,
                      0, 0);
        if (n > 0 && (size_t)n < sizeof(reply) && conn_write(c, (uv_stream_t *)&c->client, reply, (size_t)n) == 0)
                conn_finish(c);
        else
                conn_close(c);
}

/* Cuts an open connection (bytes, idle, lifetime, the run closed): its event, then the close,
 * at once (what was queued is dropped: the bound is the bound). */
static void conn_cut(struct egr_conn *c, const char *reason, const char *msg)
{
        if (c->state == ST_CLOSING)
                return;
        if (!c->cut) {
                c->cut = true;
                c->run->n_blocked++;
                egr_ctl_event(c->run, "blocked", reason, c->op[0] ? c->op : NULL, msg,
                              c->addr_text[0] ? c->addr_text : NULL, c->out, c->in);
        }
        conn_close(c);
}

/* ---- the request head ---- */

static int on_url(http_parser *p, const char *at, size_t len)
{
        struct egr_conn *c = p->data;
        if (!c->url)
                c->url = at;
        c->url_len = (size_t)(at + len - c->url);
        return 0;
}

static int on_hdr_field(http_parser *p, const char *at, size_t len)
{
        struct egr_conn *c = p->data;
        if (c->n_hdrs == EGR_HEADERS_MAX) {
                c->hdr_overflow = true;
                return 0;
        }
        c->hdrs[c->n_hdrs++] = (struct hdr){ .f = at, .fl = len };
        return 0;
}

static int on_hdr_value(http_parser *p, const char *at, size_t len)
{
        struct egr_conn *c = p->data;
        if (c->n_hdrs > 0 && !c->hdr_overflow) {
                c->hdrs[c->n_hdrs - 1].v = at;
                c->hdrs[c->n_hdrs - 1].vl = len;
        }
        return 0;
}

/* The head is whole: parsing stops here (the body, if any, is forwarded as bytes). */
static int on_headers_done(http_parser *p)
{
        http_parser_pause(p, 1);
        return 0;
}

static const http_parser_settings head_settings = {
        .on_url = on_url,
        .on_header_field = on_hdr_field,
        .on_header_value = on_hdr_value,
        .on_headers_complete = on_headers_done,
};

/* "what" as shown in a message: printable ASCII, cut to fit. */
static void shown(char *out, size_t size, const char *s, size_t len)
{
        size_t j = 0;
        for (size_t i = 0; i < len && j + 1 < size; i++)
                out[j++] = (s[i] >= 0x20 && s[i] < 0x7f) ? s[i] : '?';
        out[j] = '\0';
}

static void decide(struct egr_conn *c);

/* Parses the head held so far, from its start (a head is at most EGR_HEAD_MAX bytes: parsing it
 * again as it grows is cheap, and no parser state crosses reads). 1: whole, 0: not yet, <0: bad
 * (refused already). head_end: where the body (or a tunnel's first bytes) begins. */
static int head_parse(struct egr_conn *c, size_t *head_end)
{
        char msg[512];
        http_parser_init(&c->parser, HTTP_REQUEST);
        c->parser.data = c;
        c->n_hdrs = 0;
        c->hdr_overflow = false;
        c->url = NULL;
        c->url_len = 0;
        size_t n = http_parser_execute(&c->parser, &head_settings, c->head, c->head_len);
        enum http_errno e = HTTP_PARSER_ERRNO(&c->parser);
        if (e == HPE_PAUSED) {
                /* paused in on_headers_complete, at the head's last LF (http_parser.c
                 * s_headers_almost_done) */
                if (n >= c->head_len || c->head[n] != '\n')
                        goto bad_end;
                *head_end = n + 1;
                return 1;
        }
        if (e == HPE_OK && n == c->head_len) {
                if (c->head_len == sizeof(c->head)) {
                        POL_REASON(msg, sizeof(msg), PROXY_HEAD_TOO_LARGE, (unsigned)EGR_HEAD_MAX);
                        conn_refuse(c, "431 Request Header Fields Too Large", "head_too_large", msg);
                        return -EMSGSIZE;
                }
                return 0;
        }
        POL_REASON(msg, sizeof(msg), PROXY_MALFORMED, http_errno_description(e));
        conn_refuse(c, "400 Bad Request", "malformed", msg);
        return -EINVAL;
bad_end:
        POL_REASON(msg, sizeof(msg), PROXY_MALFORMED, "the head's end was not found");
        conn_refuse(c, "400 Bad Request", "malformed", msg);
        return -EINVAL;
}

static bool hdr_is(const struct hdr *h, const char *name)
{
        return h->fl == strlen(name) && strncasecmp(h->f, name, h->fl) == 0;
}

/* The URL's host and port, into c->host, c->port and c->op; 0, or <0 when refused already. */
static int target_parse(struct egr_conn *c)
{
        char msg[600], what[300];
        struct http_parser_url u;
        const char *method = http_method_str((enum http_method)c->parser.method);
        http_parser_url_init(&u);
        shown(what, 200, c->url ? c->url : "", c->url ? c->url_len : 0);
        (void)snprintf(c->op, sizeof(c->op), "%.20s %.200s", method, what);
        if (!c->url || http_parser_parse_url(c->url, c->url_len, c->connect, &u) != 0) {
                POL_REASON(msg, sizeof(msg), PROXY_MALFORMED, "the request's target is not a URL");
                conn_refuse(c, "400 Bad Request", "malformed", msg);
                return -EINVAL;
        }
        if (!c->connect) {
                bool http = (u.field_set & (1 << UF_SCHEMA)) && u.field_data[UF_SCHEMA].len == 4 &&
                            strncasecmp(c->url + u.field_data[UF_SCHEMA].off, "http", 4) == 0;
                if (!http || !(u.field_set & (1 << UF_HOST))) {
                        POL_REASON(msg, sizeof(msg), PROXY_NOT_HTTP, c->op);
                        conn_refuse(c, "400 Bad Request", "not_http", msg);
                        return -EINVAL;
                }
        }
        const char *h = c->url + u.field_data[UF_HOST].off;
        size_t hl = u.field_data[UF_HOST].len;
        bool bracketed = h > c->url && h[-1] == '[';
        c->port = (u.field_set & (1 << UF_PORT)) ? u.port : 80;
        shown(what, sizeof(what) - 8, h, hl);
        (void)snprintf(c->op, sizeof(c->op), bracketed ? "%.20s [%.260s]:%u" : "%.20s %.260s:%u", method, what,
                       c->port);
        if (c->port == 0) {
                POL_REASON(msg, sizeof(msg), PROXY_PORT_NOT_APPROVED, c->op);
                conn_refuse(c, "403 Forbidden", "port_not_approved", msg);
                return -EPERM;
        }
        switch (egr_host_parse(h, hl, bracketed, &c->host)) {
        case EGR_HOST_NAME:
        case EGR_HOST_IP:
                return 0;
        case EGR_HOST_IP_ODD:
                POL_REASON(msg, sizeof(msg), PROXY_IP_LITERAL, c->op);
                conn_refuse(c, "403 Forbidden", "ip_literal", msg);
                return -EPERM;
        default:
                POL_REASON(msg, sizeof(msg), PROXY_MALFORMED, "the host is not a DNS name nor an address");
                conn_refuse(c, "400 Bad Request", "malformed", msg);
                return -EINVAL;
        }
}

/* The head is whole: what it asks, and whether the run allows it. */
static void head_done(struct egr_conn *c)
{
        char msg[600];
        c->connect = c->parser.method == HTTP_CONNECT;
        if (c->hdr_overflow) {
                POL_REASON(msg, sizeof(msg), PROXY_MALFORMED, "more than 64 header lines");
                conn_refuse(c, "431 Request Header Fields Too Large", "malformed", msg);
                return;
        }
        if (target_parse(c) < 0)
                return;
        if (!c->connect) {
                if (c->parser.flags & F_CHUNKED) {
                        POL_REASON(msg, sizeof(msg), PROXY_MALFORMED, "a chunked request body: send its Content-Length");
                        conn_refuse(c, "411 Length Required", "malformed", msg);
                        return;
                }
                c->body_left = c->parser.content_length == ULLONG_MAX ? 0 : c->parser.content_length;
        }
        enum egr_match m = egr_rules_match(c->run->rules, c->run->n_rules, &c->host, c->port);
        if (m != EGR_MATCH && c->host.kind == EGR_HOST_IP) {
                POL_REASON(msg, sizeof(msg), PROXY_IP_LITERAL, c->op);
                conn_refuse(c, "403 Forbidden", "ip_literal", msg);
                return;
        }
        if (m == EGR_MATCH_HOST_NOT_APPROVED) {
                POL_REASON(msg, sizeof(msg), PROXY_HOST_NOT_APPROVED, c->op);
                conn_refuse(c, "403 Forbidden", "host_not_approved", msg);
                return;
        }
        if (m == EGR_MATCH_PORT_NOT_APPROVED) {
                POL_REASON(msg, sizeof(msg), PROXY_PORT_NOT_APPROVED, c->op);
                conn_refuse(c, "403 Forbidden", "port_not_approved", msg);
                return;
        }
        decide(c);
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
        conn_refuse(c, "502 Bad Gateway", "connect", msg);
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
                conn_refuse(c, "502 Bad Gateway", "resolve", msg);
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
                        conn_refuse(c, "403 Forbidden", "address_range", msg);
                } else {
                        POL_REASON(msg, sizeof(msg), PROXY_RESOLVE, c->op, "no IPv4 or IPv6 address");
                        conn_refuse(c, "502 Bad Gateway", "resolve", msg);
                }
        }
        conn_unref(c);
}

static void decide(struct egr_conn *c)
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
                conn_refuse(c, "502 Bad Gateway", "resolve", msg);
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
        conn_cut(c, "bytes_cap", msg);
        return true;
}

static void on_client_read(uv_stream_t *s, ssize_t n, const uv_buf_t *b);
static void on_up_read(uv_stream_t *s, ssize_t n, const uv_buf_t *b);

/* Bytes from the client to the upstream: a request's body up to its length, or a tunnel's. */
static void to_up(struct egr_conn *c, const char *data, size_t n)
{
        if (!c->connect) {
                if (n > c->body_left)
                        n = (size_t)c->body_left; /* anything after the one request is dropped */
                c->body_left -= n;
        }
        if (n == 0 || over_bytes(c, n))
                return;
        c->out += n;
        if (conn_write(c, (uv_stream_t *)&c->up, data, n) < 0) {
                conn_close(c);
                return;
        }
        if (uv_stream_get_write_queue_size((uv_stream_t *)&c->up) > EGR_PENDING_MAX) {
                (void)uv_read_stop((uv_stream_t *)&c->client);
                c->client_paused = true;
        }
}

static void client_reads(struct egr_conn *c)
{
        bool want = !c->client_eof && (c->connect || c->body_left > 0);
        if (want && uv_read_start((uv_stream_t *)&c->client, alloc_relay, on_client_read) < 0)
                conn_close(c);
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
                        conn_close(c);
        }
}

/* A forwarded request's reply head, rewritten as it goes to the client: its status line and
 * headers, but "Connection: close" for its Connection, Keep-Alive and Proxy-Connection (the
 * proxy serves one request a connection: a client that kept it for the next would wait for a
 * reply that never comes). 1: sent, 0: not whole yet, <0: refused (the connection cut). */
static int reply_head(struct egr_conn *c)
{
        char msg[600], out[EGR_HEAD_MAX + 64];
        http_parser_init(&c->parser, HTTP_RESPONSE);
        c->parser.data = c;
        c->n_hdrs = 0;
        c->hdr_overflow = false;
        size_t n = http_parser_execute(&c->parser, &head_settings, c->head, c->head_len);
        enum http_errno e = HTTP_PARSER_ERRNO(&c->parser);
        if (e == HPE_OK && n == c->head_len && c->head_len < sizeof(c->head))
                return 0;
        const char *nl = memchr(c->head, '\n', c->head_len);
        if (e != HPE_PAUSED || n >= c->head_len || c->head[n] != '\n' || c->hdr_overflow || !nl) {
                POL_REASON(msg, sizeof(msg), PROXY_MALFORMED,
                           e == HPE_PAUSED || e == HPE_OK ? "the server's reply head is over 16384 bytes or 64 lines"
                                                          : "the server's reply is not HTTP");
                conn_cut(c, "malformed", msg);
                return -EBADMSG;
        }
        size_t len = (size_t)(nl - c->head) + 1;
        memcpy(out, c->head, len);
        for (size_t i = 0; i < c->n_hdrs; i++) {
                const struct hdr *h = &c->hdrs[i];
                if (hdr_is(h, "connection") || hdr_is(h, "keep-alive") || hdr_is(h, "proxy-connection"))
                        continue;
                len += (size_t)snprintf(out + len, sizeof(out) - len, "%.*s: %.*s\r\n", (int)h->fl, h->f, (int)h->vl,
                                        h->v ? h->v : "");
        }
        len += (size_t)snprintf(out + len, sizeof(out) - len, "Connection: close\r\n\r\n");
        if (len >= sizeof(out) || conn_write(c, (uv_stream_t *)&c->client, out, len) < 0) {
                conn_close(c);
                return -EIO;
        }
        c->reply_started = true;
        if (n + 1 < c->head_len && conn_write(c, (uv_stream_t *)&c->client, c->head + n + 1, c->head_len - n - 1) < 0) {
                conn_close(c);
                return -EIO;
        }
        return 1;
}

static void on_up_read(uv_stream_t *s, ssize_t n, const uv_buf_t *b)
{
        struct egr_conn *c = s->data;
        char msg[600];
        if (c->state != ST_OPEN)
                return;
        if (n == UV_EOF && !c->connect && !c->reply_started) {
                POL_REASON(msg, sizeof(msg), PROXY_MALFORMED, "the server ended the connection before its reply head");
                conn_cut(c, "malformed", msg);
                return;
        }
        if (n == UV_EOF) {
                conn_finish(c); /* the reply is whole: it goes out, then the close */
                return;
        }
        if (n < 0) {
                conn_close(c);
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
                if (reply_head(c) != 1 || skip == (size_t)n)
                        return;
        }
        if (conn_write(c, (uv_stream_t *)&c->client, b->base + skip, (size_t)n - skip) < 0) {
                conn_close(c);
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
                if (conn_write(c, (uv_stream_t *)&c->client, established, sizeof(established) - 1) < 0) {
                        conn_close(c);
                        return;
                }
        } else {
                char req[EGR_HEAD_MAX + 512];
                size_t n = 0;
                struct http_parser_url u;
                const char *method = http_method_str((enum http_method)c->parser.method);
                http_parser_url_init(&u);
                (void)http_parser_parse_url(c->url, c->url_len, 0, &u);
                const char *path = "/";
                size_t pl = 1;
                if (u.field_set & (1 << UF_PATH)) {
                        path = c->url + u.field_data[UF_PATH].off;
                        /* the path and the query after it, never the fragment */
                        pl = (u.field_set & (1 << UF_QUERY)) ? (size_t)(u.field_data[UF_QUERY].off +
                                                                        u.field_data[UF_QUERY].len -
                                                                        u.field_data[UF_PATH].off)
                                                             : u.field_data[UF_PATH].len;
                }
                n += (size_t)snprintf(req + n, sizeof(req) - n, "%s %.*s HTTP/1.1\r\n", method, (int)pl, path);
                for (size_t i = 0; i < c->n_hdrs; i++) {
                        const struct hdr *h = &c->hdrs[i];
                        if (hdr_is(h, "host") || hdr_is(h, "connection") || hdr_is(h, "proxy-connection") ||
                            hdr_is(h, "keep-alive") || hdr_is(h, "proxy-authorization") || hdr_is(h, "te") ||
                            hdr_is(h, "upgrade"))
                                continue;
                        n += (size_t)snprintf(req + n, sizeof(req) - n, "%.*s: %.*s\r\n", (int)h->fl, h->f, (int)h->vl,
                                              h->v ? h->v : "");
                }
                bool v6 = c->host.kind == EGR_HOST_IP && c->host.addr.ss_family == AF_INET6;
                n += (size_t)snprintf(req + n, sizeof(req) - n,
                                      c->port == 80 ? (v6 ? "Host: [%s]\r\n" : "Host: %s\r\n")
                                                    : (v6 ? "Host: [%s]:%u\r\n" : "Host: %s:%u\r\n"),
                                      c->host.name, c->port);
                n += (size_t)snprintf(req + n, sizeof(req) - n, "Connection: close\r\n\r\n");
                if (n >= sizeof(req) || over_bytes(c, n))
                        return (void)(n >= sizeof(req) ? conn_close(c) : (void)0);
                c->out += n;
                if (conn_write(c, (uv_stream_t *)&c->up, req, n) < 0) {
                        conn_close(c);
                        return;
                }
        }
        if (head_end < c->head_len)
                to_up(c, c->head + head_end, c->head_len - head_end);
        if (c->state != ST_OPEN)
                return;
        c->head_len = 0; /* the request is sent: the buffer holds the reply's head now */
        if (uv_read_start((uv_stream_t *)&c->up, alloc_relay, on_up_read) < 0) {
                conn_close(c);
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
                        conn_refuse(c, "502 Bad Gateway", "connect", msg);
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
                        conn_cut(c, "malformed", msg);
                } else if (c->state != ST_OPEN || c->connect) {
                        conn_close(c);
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
                if (c->state == ST_OPEN && !c->connect && c->body_left == 0)
                        (void)uv_read_stop(s);
                return;
        }
        c->head_len += (size_t)n;
        int r = head_parse(c, &c->head_end);
        if (r == 1) {
                (void)uv_read_stop(s); /* nothing more is read until the decision */
                head_done(c);
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
                conn_refuse(c, "408 Request Timeout", "head_timeout", msg);
        } else if (c->state != ST_HEAD && now - c->last_ms >= (uint64_t)l->idle_s * 1000) {
                POL_REASON(msg, sizeof(msg), PROXY_IDLE, op, l->idle_s);
                conn_cut(c, "idle", msg);
        } else if (now - c->t0_ms >= (uint64_t)l->lifetime_s * 1000) {
                POL_REASON(msg, sizeof(msg), PROXY_LIFETIME, op, l->lifetime_s);
                conn_cut(c, "lifetime", msg);
        }
}

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
                conn_close(c);
                return;
        }
        (void)uv_timer_start(&c->timer, on_tick, 250, 250);
        if (run->n_conns > run->limits.conns) {
                POL_REASON(msg, sizeof(msg), PROXY_CONN_CAP, run->limits.conns);
                conn_refuse(c, "429 Too Many Requests", "conn_cap", msg);
                return;
        }
        if (uv_read_start((uv_stream_t *)&c->client, alloc_head, on_client_read) < 0)
                conn_close(c);
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
                conn_cut(c, "run_closed", msg); /* removes c from the list */
        }
}
